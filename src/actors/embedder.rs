//! Embedder: turns text into normalised 384-d vectors with all-MiniLM-L6-v2 (int8 ONNX)
//! through fastembed, ONNX Runtime loaded dynamically from the installed library.
//!
//! A sync actor started with two threads sharing one model instance (loaded on first use, a
//! slot in `EmbedderShared`): background indexing sends one batch at a time, so a query is
//! never queued behind an indexing run, only behind the one batch the model is running. A
//! missing or broken model is a reported state, never a panic: the daemon stays lexical-only
//! and says why.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::{Actor, Handler, Message, SyncContext};
use fastembed::{InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};

use crate::index::models::{ModelPaths, EMBEDDING_DIMS};
use crate::index::static_model::StaticModel;
use crate::index::ChunkVectors;
use crate::protocol::{DocdexError, ErrorCode, Result};

/// Token lengths are padded up to a multiple of this.
const PAD_TO_MULTIPLE_OF: usize = 16;
/// Distinct queries whose vectors are remembered.
const QUERY_CACHE_ENTRIES: usize = 2048;

/// How the embedder is set up.
#[derive(Debug, Clone)]
pub struct EmbedderSettings {
    pub enabled: bool,
    pub paths: ModelPaths,
    pub batch_size: usize,
    pub max_tokens: usize,
    pub threads: usize,
    /// Static vectors for every chunk (`index::static_model`).
    pub static_vectors: bool,
    /// The model's vectors for every chunk (false: static vectors only).
    pub model_vectors: bool,
}

/// Recent query vectors, shared by the embedder threads.
#[derive(Default)]
pub struct QueryCache {
    vectors: HashMap<String, Arc<Vec<f32>>>,
    order: VecDeque<String>,
}

impl QueryCache {
    fn get(&self, query: &str) -> Option<Arc<Vec<f32>>> {
        self.vectors.get(query).cloned()
    }

    fn put(&mut self, query: String, vector: Arc<Vec<f32>>) {
        if self.vectors.len() >= QUERY_CACHE_ENTRIES {
            if let Some(oldest) = self.order.pop_front() {
                self.vectors.remove(&oldest);
            }
        }
        if self.vectors.insert(query.clone(), vector).is_none() {
            self.order.push_back(query);
        }
    }
}

enum ModelState {
    NotLoaded,
    Ready(Box<EmbeddingModel>),
    Failed(String),
}

/// A loaded model: normalised embeddings for a batch of texts.
pub struct EmbeddingModel {
    model: TextEmbedding,
    batch_size: usize,
}

impl EmbeddingModel {
    /// Loads the model, or explains why it cannot be loaded (never panics).
    pub fn load(settings: &EmbedderSettings) -> std::result::Result<EmbeddingModel, String> {
        Ok(EmbeddingModel { model: load_model(settings)?, batch_size: settings.batch_size.max(1) })
    }

    /// One unit-length 384-d vector per text.
    pub fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let vectors = self
            .model
            .embed(texts, Some(self.batch_size))
            .map_err(|err| DocdexError::internal(format!("embedding failed: {err}")))?;
        let vectors: Vec<Vec<f32>> = vectors.into_iter().map(normalise).collect();
        if let Some(bad) = vectors.iter().find(|v| v.len() != EMBEDDING_DIMS) {
            return Err(unavailable(&format!(
                "the model returned {} dimensions, expected {EMBEDDING_DIMS}",
                bad.len()
            )));
        }
        Ok(vectors)
    }
}

pub struct Embedder {
    settings: EmbedderSettings,
    shared: Arc<EmbedderShared>,
    /// This thread's model slot in `shared.slots`.
    slot: usize,
}

/// What the embedder threads share: the query cache, and each thread's model in a slot that
/// the daemon's idle timer can empty (`unload_idle`) without a message reaching the thread.
pub struct EmbedderShared {
    query_cache: Mutex<QueryCache>,
    slots: Vec<Mutex<ModelSlot>>,
    /// The static vectors, one instance for every thread (read-only once loaded).
    static_slot: Mutex<StaticSlot>,
    next_slot: AtomicUsize,
    /// A model loaded once in this process: an unloaded one will load again.
    ever_loaded: std::sync::atomic::AtomicBool,
}

struct ModelSlot {
    state: ModelState,
    last_used: Instant,
}

struct StaticSlot {
    state: Option<std::result::Result<Arc<StaticModel>, String>>,
    last_used: Instant,
}

impl EmbedderShared {
    /// Room for `threads` embedder threads.
    pub fn new(threads: usize) -> Arc<EmbedderShared> {
        let slots = (0..threads.max(1))
            .map(|_| Mutex::new(ModelSlot { state: ModelState::NotLoaded, last_used: Instant::now() }));
        Arc::new(EmbedderShared {
            query_cache: Mutex::new(QueryCache::default()),
            slots: slots.collect(),
            static_slot: Mutex::new(StaticSlot { state: None, last_used: Instant::now() }),
            next_slot: AtomicUsize::new(0),
            ever_loaded: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Drops every model unused for `idle` (a failed load too, so a model installed since
    /// is found), and hands the freed memory back to the system. Returns how many went.
    /// A slot in use right now is skipped: it is not idle.
    pub fn unload_idle(&self, idle: Duration) -> usize {
        let mut unloaded = 0;
        for slot in &self.slots {
            let Ok(mut slot) = slot.try_lock() else { continue };
            if !matches!(slot.state, ModelState::NotLoaded) && slot.last_used.elapsed() >= idle {
                slot.state = ModelState::NotLoaded;
                unloaded += 1;
            }
        }
        if let Ok(mut slot) = self.static_slot.try_lock() {
            if slot.state.is_some() && slot.last_used.elapsed() >= idle {
                slot.state = None;
                unloaded += 1;
            }
        }
        if unloaded > 0 {
            if let Ok(mut cache) = self.query_cache.lock() {
                *cache = QueryCache::default();
            }
            super::release_free_memory();
        }
        unloaded
    }

    /// Drops the models after a pass over many chunks, so their working memory goes back to
    /// the system: ONNX Runtime keeps the memory of its largest batches for the life of the
    /// model (~80 MiB more than a fresh load after embedding a repo), and the static vectors
    /// (23 MiB) are not asked once the model's cover the repo. The next query loads what it
    /// needs again (a fraction of a second, once). A slot in use is left alone.
    pub fn release_batch_memory(&self) -> bool {
        let mut released = false;
        for slot in &self.slots {
            let Ok(mut slot) = slot.try_lock() else { continue };
            if matches!(slot.state, ModelState::Ready(_)) {
                slot.state = ModelState::NotLoaded;
                released = true;
            }
        }
        // Only a loaded one: a failure stays known rather than being retried by the next query.
        if let Ok(mut slot) = self.static_slot.try_lock() {
            if matches!(slot.state, Some(Ok(_))) {
                slot.state = None;
                released = true;
            }
        }
        if released {
            super::release_free_memory();
        }
        released
    }

    /// Model instances loaded now.
    pub fn loaded_models(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| slot.lock().map(|s| matches!(s.state, ModelState::Ready(_))).unwrap_or(false))
            .count()
    }
}

/// Loads the model, or explains why it cannot be loaded.
fn load_model(settings: &EmbedderSettings) -> std::result::Result<TextEmbedding, String> {
    if !settings.enabled {
        return Err("semantic search is disabled (embedding.enabled = false)".into());
    }
    if let Some(missing) = settings.paths.missing() {
        return Err(format!("{} is missing; run `docdexd models install`", missing.display()));
    }
    let environment = crate::index::models::runtime(&settings.paths)?;
    let dir = &settings.paths.model_dir;
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|err| format!("cannot read {name}: {err}"));
    let tokenizer_files = TokenizerFiles {
        tokenizer_file: read("tokenizer.json")?,
        config_file: read("config.json")?,
        special_tokens_map_file: read("special_tokens_map.json")?,
        tokenizer_config_file: read("tokenizer_config.json")?,
    };
    let model = UserDefinedEmbeddingModel::new(read("model.onnx")?, tokenizer_files).with_pooling(Pooling::Mean);
    let options = InitOptionsUserDefined::new()
        .with_environment(environment)
        .with_max_length(settings.max_tokens)
        .with_intra_threads(settings.threads.max(1))
        // ONNX Runtime's pool threads busy-wait after each run by default: on a small machine
        // that steals the core the HTTP and repo threads need next (measured: one hybrid
        // search in five waited ~3.5 ms before reaching the index).
        .with_session_config("session.intra_op.allow_spinning", "0");
    // A broken library or model must not take the daemon down with it.
    let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        TextEmbedding::try_new_from_user_defined(model, options)
    }));
    match loaded {
        Ok(Ok(mut model)) => {
            // Pad batches to a multiple of 16 tokens: ONNX Runtime keeps an allocation plan per
            // input shape, and sixteen lengths (up to 256) bound them, while a short query is
            // padded to 16 tokens, not 64 (which made query embedding several times slower).
            if let Some(padding) = model.tokenizer.get_padding_mut() {
                padding.pad_to_multiple_of = Some(PAD_TO_MULTIPLE_OF);
            }
            Ok(model)
        }
        Ok(Err(err)) => Err(format!("cannot load the embedding model from {}: {err}", dir.display())),
        Err(_) => Err(format!("loading the embedding model from {} crashed", dir.display())),
    }
}

/// Loads the model once and embeds a sentence: what `check` and `models install` report.
pub fn probe(settings: &EmbedderSettings) -> std::result::Result<String, String> {
    let mut model = EmbeddingModel::load(settings)?;
    model.embed(&["docdex model check".to_string()]).map_err(|err| err.message)?;
    Ok(format!(
        "{} loads ({EMBEDDING_DIMS} dimensions) from {}",
        crate::index::models::MODEL_NAME,
        settings.paths.model_dir.display()
    ))
}

fn normalise(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > f32::EPSILON {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

fn unavailable(reason: &str) -> DocdexError {
    DocdexError::new(ErrorCode::ModelUnavailable, format!("embedding model unavailable: {reason}"))
        .with_hint("run `docdexd models install`, then `docdexd check`")
}

impl Embedder {
    /// One embedder thread; each takes the next free model slot of `shared`.
    pub fn new(settings: EmbedderSettings, shared: Arc<EmbedderShared>) -> Embedder {
        let slot = shared.next_slot.fetch_add(1, Ordering::Relaxed) % shared.slots.len();
        Embedder { settings, shared, slot }
    }

    /// Runs `work` with this thread's model, loading it first if needed.
    fn with_model<T>(&mut self, work: impl FnOnce(&mut EmbeddingModel) -> Result<T>) -> Result<T> {
        let mut slot = self.shared.slots[self.slot].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.last_used = Instant::now();
        if matches!(slot.state, ModelState::NotLoaded) {
            slot.state = match EmbeddingModel::load(&self.settings) {
                Ok(model) => {
                    self.shared.ever_loaded.store(true, Ordering::Relaxed);
                    // Loading folds the model's constants into float weights; the allocator
                    // keeps the ~100 MiB that took unless told to give it back.
                    super::release_free_memory();
                    ModelState::Ready(Box::new(model))
                }
                Err(reason) => {
                    tracing::warn!(reason = %reason, "semantic search unavailable");
                    ModelState::Failed(reason)
                }
            };
        }
        let result = match &mut slot.state {
            ModelState::Ready(model) => work(model),
            ModelState::Failed(reason) => Err(unavailable(reason)),
            ModelState::NotLoaded => Err(unavailable("not loaded")),
        };
        // Idle counts from the end of the work: a long batch must not make the model look
        // idle the moment it is done.
        slot.last_used = Instant::now();
        result
    }

    fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.with_model(|model| model.embed(texts))
    }
}

impl Actor for Embedder {
    type Context = SyncContext<Self>;
}

/// Embeds passages (chunks) for the index.
#[derive(Message)]
#[rtype(result = "Result<Vec<Vec<f32>>>")]
pub struct EmbedTexts(pub Vec<String>);

/// Embeds chunks with the static vectors.
#[derive(Message)]
#[rtype(result = "Result<Vec<Vec<f32>>>")]
pub struct EmbedStaticTexts(pub Vec<String>);

/// Embeds a search query as the chunks it is compared with were, through the query cache.
#[derive(Message)]
#[rtype(result = "Result<Arc<Vec<f32>>>")]
pub struct EmbedQuery {
    pub text: String,
    pub vectors: ChunkVectors,
}

impl EmbedQuery {
    /// A query compared with the model's vectors.
    pub fn model(text: String) -> EmbedQuery {
        EmbedQuery { text, vectors: ChunkVectors::Model }
    }
}

/// Loads the model if needed and reports whether it works.
#[derive(Message)]
#[rtype(result = "ModelInfo")]
pub struct ProbeModel;

/// Whether the model loads, and why not.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub available: bool,
    pub detail: String,
}

impl Handler<EmbedTexts> for Embedder {
    type Result = Result<Vec<Vec<f32>>>;

    fn handle(&mut self, EmbedTexts(texts): EmbedTexts, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the embedder", || self.embed(&texts))
    }
}

impl Handler<EmbedQuery> for Embedder {
    type Result = Result<Arc<Vec<f32>>>;

    fn handle(&mut self, query: EmbedQuery, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the embedder", || self.embed_query(query))
    }
}

impl Handler<EmbedStaticTexts> for Embedder {
    type Result = Result<Vec<Vec<f32>>>;

    fn handle(&mut self, EmbedStaticTexts(texts): EmbedStaticTexts, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the embedder", || Ok(self.static_model()?.embed(&texts)))
    }
}

impl Embedder {
    /// The static vectors, loaded (or distilled) on first use.
    fn static_model(&mut self) -> Result<Arc<StaticModel>> {
        let mut slot = self.shared.static_slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.last_used = Instant::now();
        let settings = &self.settings;
        let loaded = slot.state.get_or_insert_with(|| {
            if !settings.enabled || !settings.static_vectors {
                return Err("static vectors are off (embedding.static_vectors = false)".into());
            }
            let mut log = |line: &str| tracing::info!("{line}");
            StaticModel::load_or_distill(&settings.paths, settings.threads, &mut log)
                .map(Arc::new)
                .inspect_err(|reason| tracing::warn!(reason = %reason, "static vectors unavailable"))
        });
        loaded.clone().map_err(|reason| unavailable(&reason))
    }

    fn embed_query(&mut self, EmbedQuery { text, vectors }: EmbedQuery) -> Result<Arc<Vec<f32>>> {
        let key = format!("{}\u{0}{}", vectors.name(), text.trim());
        let cached =
            self.shared.query_cache.lock().map_err(|_| DocdexError::internal("query cache poisoned"))?.get(&key);
        if let Some(hit) = cached {
            return Ok(hit);
        }
        let texts = [text.trim().to_string()];
        let vector = Arc::new(match vectors {
            ChunkVectors::Model => self.embed(&texts)?.remove(0),
            ChunkVectors::Static => self.static_model()?.embed(&texts).remove(0),
        });
        self.shared
            .query_cache
            .lock()
            .map_err(|_| DocdexError::internal("query cache poisoned"))?
            .put(key, Arc::clone(&vector));
        Ok(vector)
    }
}

impl Handler<ProbeModel> for Embedder {
    type Result = actix::MessageResult<ProbeModel>;

    fn handle(&mut self, _: ProbeModel, _: &mut SyncContext<Self>) -> Self::Result {
        // What the slots know answers without loading a model (a status poll must not keep
        // an idle model in memory); only a model never tried is loaded to find out.
        let known = self.shared.slots.iter().find_map(|slot| match &slot.try_lock().ok()?.state {
            ModelState::Ready(_) => Some(Ok(())),
            ModelState::Failed(reason) => Some(Err(unavailable(reason))),
            ModelState::NotLoaded => None,
        });
        let tried = self.shared.ever_loaded.load(Ordering::Relaxed);
        let result = match known {
            Some(result) => result,
            None if tried => match self.settings.paths.missing() {
                Some(missing) => {
                    Err(unavailable(&format!("{} is missing; run `docdexd models install`", missing.display())))
                }
                None => Ok(()),
            },
            None => self.with_model(|_| Ok(())),
        };
        let info = match result {
            Ok(()) => ModelInfo {
                available: true,
                detail: format!(
                    "{} from {}",
                    crate::index::models::MODEL_NAME,
                    self.settings.paths.model_dir.display()
                ),
            },
            Err(err) => ModelInfo { available: false, detail: err.message },
        };
        actix::MessageResult(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_cache_evicts_the_oldest() {
        let mut cache = QueryCache::default();
        for i in 0..QUERY_CACHE_ENTRIES + 1 {
            cache.put(format!("q{i}"), Arc::new(vec![i as f32]));
        }
        assert!(cache.get("q0").is_none());
        assert_eq!(cache.get("q1").map(|v| v[0]), Some(1.0));
        assert_eq!(cache.vectors.len(), QUERY_CACHE_ENTRIES);
    }

    #[test]
    fn a_missing_model_is_a_reason_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let settings = EmbedderSettings {
            enabled: true,
            paths: ModelPaths::under(dir.path()),
            batch_size: 16,
            max_tokens: 256,
            threads: 1,
            static_vectors: true,
            model_vectors: true,
        };
        let reason = load_model(&settings).err().unwrap();
        assert!(reason.contains("docdexd models install"), "{reason}");
        assert_eq!(normalise(vec![3.0, 4.0]), vec![0.6, 0.8]);
    }
}
