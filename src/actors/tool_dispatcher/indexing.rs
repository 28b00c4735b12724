//! The index tools: an index run (walk, chunk, write) and the background embedding of what
//! it wrote, with the repo status that reports both.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Addr, AsyncContext, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;

use super::jobs::{embed_pending, run_index};
use super::params::{self, Caller, Tool};
use super::{open_indexed, vector_counts, EmbeddingJobs, ToolDispatcher};
use crate::actors::embedder::{Embedder, ModelInfo, ProbeModel};
use crate::actors::indexer::AbortIndexRun;
use crate::actors::repo_manager::{OpenRepo, RepoHandle};
use crate::actors::repo_supervisor::RunIndex;
use crate::actors::repo_supervisor::{MountRepo, RunEnded, RunStarted};
use crate::config::EmbeddingConfig;
use crate::index::models::MODEL_NAME;
use crate::protocol::time::format_unix;
use crate::protocol::{
    DocdexError, EmbedProgress, EmbedSummary, EmbeddingStatus, IndexProgress, IndexRequest, IndexSummary, RepoStatus,
    Result,
};

/// Index or refresh a repo, optionally reporting progress. With `embed_in_background`, the
/// new chunks' embeddings are computed after the lexical index is ready, without waiting.
#[derive(Message)]
#[rtype(result = "Result<IndexSummary>")]
pub struct Index {
    pub request: IndexRequest,
    pub progress_opt: Option<UnboundedSender<IndexProgress>>,
    pub embed_in_background: bool,
}

/// Embeds the repo's pending chunks and waits until none are left.
#[derive(Message)]
#[rtype(result = "Result<EmbedSummary>")]
pub struct EmbedPending {
    pub repo: PathBuf,
    pub progress_opt: Option<UnboundedSender<EmbedProgress>>,
}

/// Starts embedding a repo's pending chunks in the background (no answer).
#[derive(Message)]
#[rtype(result = "()")]
pub struct EmbedInBackground {
    pub repo: PathBuf,
}

/// Stops background embedding before the process exits: no new job starts, running ones
/// end after their batch in flight, waited for (at most ten seconds). An inference still
/// running when the process exits is torn down under ONNX Runtime's feet.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopBackgroundWork;

/// What is indexed for a repo; `None` means the default repo.
#[derive(Message)]
#[rtype(result = "Result<RepoStatus>")]
pub struct Status(pub Option<PathBuf>);

impl Handler<Status> for ToolDispatcher {
    type Result = ResponseFuture<Result<RepoStatus>>;

    fn handle(&mut self, Status(repo_opt): Status, _: &mut Context<Self>) -> Self::Result {
        // Status never waits for an index run: it is how one watches its progress.
        let repo = self.resolve_repo_with(repo_opt, false);
        let create = self.supervisor_opt.is_some();
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let map_bytes = self.config.index.lmdb_map_bytes;
        let (static_on, model_on) = (self.config.embedding.static_vectors, self.config.embedding.model_vectors);
        Box::pin(async move {
            let handle = repo_manager.send(OpenRepo { path: repo.await?, create }).await??;
            let ModelInfo { available, detail } = embedder.send(ProbeModel).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let rtxn = index.store.read_txn()?;
                let state = index.store.run_state(&rtxn)?;
                // Asked only of a run marked in progress: is it still writing, or was it killed?
                let live = state.interrupted() && index.being_written();
                let chunks = index.num_chunks();
                let counts = index.store.vector_counts(&rtxn)?;
                let mut code = crate::protocol::CodeStatus {
                    symbols_current: index.store.code_fingerprint(&rtxn)?.as_deref()
                        == Some(crate::code::grammar_fingerprint().as_str()),
                    ..Default::default()
                };
                let mut documents = crate::protocol::DocumentStatus::default();
                let mut files: Vec<_> = index.store.all_files(&rtxn)?.into_iter().collect();
                files.sort_by(|a, b| a.0.cmp(&b.0));
                for (path, record) in files {
                    if let Some(reason) = record.problem {
                        documents.skipped.push(crate::protocol::SkippedDocument { path, reason });
                        continue;
                    }
                    if crate::ingest::Language::detect(std::path::Path::new(&path)).is_document() {
                        *documents.formats.entry(record.language).or_default() += 1;
                        continue;
                    }
                    match crate::ingest::Language::from_name(&record.language) {
                        Some(_) => *code.languages.entry(record.language).or_default() += 1,
                        // Data and prose (toml, json, markdown, text) are not missing a grammar.
                        None if is_source_without_grammar(&record.language) => {
                            *code.without_grammar.entry(record.language).or_default() += 1
                        }
                        None => {}
                    }
                }
                Ok(RepoStatus {
                    repo: handle.meta.canonical_path.clone(),
                    fingerprint: handle.meta.fingerprint.clone(),
                    state_dir: index.state_dir.display().to_string(),
                    indexed: state.indexed(),
                    interrupted: state.interrupted() && !live,
                    indexing: live,
                    last_index_started: state.last_started.map(format_unix),
                    last_index_completed: state.last_completed.map(format_unix),
                    files: state.files,
                    chunks,
                    bytes: state.bytes,
                    index_size_bytes: index.size_on_disk(),
                    metadata_size_bytes: std::fs::metadata(index.state_dir.join("meta.lmdb/data.mdb"))
                        .map(|m| m.len())
                        .unwrap_or(0),
                    metadata_limit_bytes: map_bytes as u64,
                    embedding_cache_entries: index.store.embedding_cache_entries(&rtxn)?,
                    embeddings: EmbeddingStatus {
                        total: chunks,
                        pending: counts.pending,
                        embedded: counts.model,
                        static_vectors: counts.static_vectors,
                        static_pending: counts.static_pending,
                        dense_vectors: counts.for_search(static_on, model_on).map_or("none", |v| v.name()).to_string(),
                        model: MODEL_NAME.to_string(),
                        model_available: available,
                        notice: (!available).then_some(detail),
                    },
                    libraries: index
                        .store
                        .all_libraries(&rtxn)?
                        .into_iter()
                        .map(|(_, lib)| format!("{}:{}@{}", lib.ecosystem, lib.name, lib.version))
                        .collect(),
                    code,
                    documents,
                })
            })
            .await?
        })
    }
}

// ---- Parameters, as every surface takes them (see `params`).

/// `GET /v1/status?repo=`, MCP `docdex_status`, `docdex status`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for StatusParams {
    type Message = Status;
    type Output = RepoStatus;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<Status> {
        Ok(Status(repo_opt))
    }
}

/// `POST /v1/index`, MCP `docdex_index`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexParams {
    /// Also embed the new chunks before answering (default: they are embedded in the
    /// background after the answer).
    #[serde(default, deserialize_with = "params::flag")]
    pub wait: Option<bool>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for IndexParams {
    type Message = IndexRepo;
    type Output = IndexSummary;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<IndexRepo> {
        Ok(IndexRepo { repo_opt, wait: self.wait.unwrap_or(false) })
    }
}

/// An index run someone asked for without watching its progress; with `wait`, the new
/// chunks are embedded before the answer (which then says so in `embeddings`).
#[derive(Message)]
#[rtype(result = "Result<IndexSummary>")]
pub struct IndexRepo {
    pub repo_opt: Option<PathBuf>,
    pub wait: bool,
}

impl Handler<IndexRepo> for ToolDispatcher {
    type Result = ResponseFuture<Result<IndexSummary>>;

    fn handle(&mut self, msg: IndexRepo, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        let repo = msg.repo_opt.or_else(|| self.default_repo_opt.clone());
        Box::pin(async move {
            let repo = repo
                .ok_or_else(|| DocdexError::invalid("`repo` is required").with_hint("the repository's root folder"))?;
            let request = IndexRequest { repo: repo.clone() };
            let mut summary = me.send(Index { request, progress_opt: None, embed_in_background: !msg.wait }).await??;
            if msg.wait {
                summary.embeddings = Some(me.send(EmbedPending { repo, progress_opt: None }).await??);
            }
            Ok(summary)
        })
    }
}

impl Handler<Index> for ToolDispatcher {
    type Result = ResponseFuture<Result<IndexSummary>>;

    fn handle(&mut self, msg: Index, _: &mut Context<Self>) -> Self::Result {
        self.index_run(msg, false, None)
    }
}

/// The RepoSupervisor's own index runs (a mount, a watcher's change): it tracks them itself.
impl Handler<RunIndex> for ToolDispatcher {
    type Result = ResponseFuture<Result<IndexSummary>>;

    fn handle(&mut self, msg: RunIndex, _: &mut Context<Self>) -> Self::Result {
        let index = Index {
            request: IndexRequest { repo: msg.repo },
            progress_opt: Some(msg.progress),
            embed_in_background: true,
        };
        self.index_run(index, true, msg.changed_opt)
    }
}

impl ToolDispatcher {
    /// An index run. In a daemon, a run someone asked for mounts the repo (so it is watched
    /// from now on) without starting a second run, and tells the supervisor it runs, so a
    /// search arriving meanwhile waits for it like for any first run.
    fn index_run(
        &mut self,
        msg: Index,
        supervised: bool,
        only_opt: Option<Vec<String>>,
    ) -> ResponseFuture<Result<IndexSummary>> {
        let repo_manager = self.repo_manager.clone();
        let ingestor = self.ingestor.clone();
        let embedder = self.embedder.clone();
        let config = Arc::clone(&self.config);
        let jobs = self.embedding_jobs.clone();
        let allowed = self.checked_repo(Some(msg.request.repo.clone()));
        let supervisor_opt = self.supervisor_opt.clone().filter(|_| !supervised);
        let metrics = Arc::clone(&self.metrics);
        Box::pin(async move {
            allowed?;
            let handle = repo_manager.send(OpenRepo { path: msg.request.repo.clone(), create: true }).await??;
            let canonical = PathBuf::from(&handle.meta.canonical_path);
            if let Some(supervisor) = &supervisor_opt {
                supervisor.send(MountRepo { repo: canonical.clone(), start_run: false }).await??;
                supervisor.do_send(RunStarted { repo: canonical.clone() });
            }
            let result = {
                let _one_run_at_a_time = handle.index_run.lock().await;
                metrics.track("indexer", run_index(&handle, &ingestor, &config, msg.progress_opt, only_opt)).await
            };
            let result = result.map_err(|err| err.or_disk_full(&handle.index.state_dir));
            if result.is_err() {
                // Roll back whatever the failed run left uncommitted and free the writer.
                if let Err(err) = handle.indexer.send(AbortIndexRun).await {
                    tracing::warn!(error = %err, "could not abort the index run");
                }
            } else if msg.embed_in_background && config.embedding.enabled {
                start_background_embedding(handle, embedder, config.embedding.clone(), jobs);
            }
            if let Some(supervisor) = &supervisor_opt {
                let outcome = result.as_ref().map(|_| ()).map_err(|err| err.message.clone());
                supervisor.do_send(RunEnded { repo: canonical, outcome });
            }
            result
        })
    }
}

/// Embeds pending chunks on the side; a second request while one runs makes it go round
/// once more instead of starting a rival job.
pub(super) fn start_background_embedding(
    handle: Arc<RepoHandle>,
    embedder: Addr<Embedder>,
    settings: EmbeddingConfig,
    jobs: EmbeddingJobs,
) {
    let key = handle.meta.fingerprint.clone();
    if jobs.stopping.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    {
        let Ok(mut running) = jobs.running.lock() else { return };
        if let Some(again) = running.get_mut(&key) {
            *again = true;
            return;
        }
        running.insert(key.clone(), false);
    }
    actix::spawn(async move {
        let mut model_used = false;
        loop {
            let started = Instant::now();
            match embed_pending(&handle, &embedder, &settings, None, Some(&jobs.stopping), Some(&jobs.metrics)).await {
                Ok(done) if done.model == 0 && done.static_vectors == 0 => {}
                Ok(done) => {
                    model_used |= done.model > 0;
                    tracing::info!(
                    repo = %handle.meta.canonical_path,
                    chunks = done.model,
                    static_vectors = done.static_vectors,
                    static_seconds = done.static_seconds,
                    seconds = started.elapsed().as_secs_f64(),
                    "embedded pending chunks"
                    )
                }
                Err(err) => {
                    tracing::warn!(repo = %handle.meta.canonical_path, error = %err.message, "embedding stopped")
                }
            }
            let Ok(mut running) = jobs.running.lock() else { return };
            if running.get(&key).copied() == Some(true) && !jobs.stopping.load(std::sync::atomic::Ordering::SeqCst) {
                running.insert(key.clone(), false);
                continue;
            }
            running.remove(&key);
            // The last job of a busy spell hands the model's batch memory back.
            if model_used && running.is_empty() && jobs.model.release_batch_memory() {
                tracing::info!("embedding model released after its batches; queries load it again");
            }
            return;
        }
    });
}

impl Handler<EmbedPending> for ToolDispatcher {
    type Result = ResponseFuture<Result<EmbedSummary>>;

    fn handle(&mut self, msg: EmbedPending, _: &mut Context<Self>) -> Self::Result {
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let settings = self.config.embedding.clone();
        Box::pin(async move {
            let handle = open_indexed(&repo_manager, msg.repo).await?;
            let started = Instant::now();
            let done = embed_pending(&handle, &embedder, &settings, msg.progress_opt.as_ref(), None, None).await?;
            let counts = vector_counts(&handle).await?;
            // The model is asked about only when its vectors are wanted (asking loads it).
            let notice = if settings.model_vectors {
                match embedder.send(ProbeModel).await? {
                    ModelInfo { available: true, .. } => None,
                    ModelInfo { detail, .. } if counts.static_vectors > 0 => {
                        Some(format!("{detail}; dense search uses the static vectors until then"))
                    }
                    ModelInfo { detail, .. } => Some(format!("{detail}; the index is lexical-only until then")),
                }
            } else {
                None
            };
            Ok(EmbedSummary {
                embedded: done.model,
                vectors: counts.model,
                pending: counts.pending,
                static_vectors: counts.static_vectors,
                static_seconds: done.static_seconds,
                seconds: started.elapsed().as_secs_f64(),
                notice,
            })
        })
    }
}

impl Handler<StopBackgroundWork> for ToolDispatcher {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: StopBackgroundWork, _: &mut Context<Self>) -> Self::Result {
        let jobs = self.embedding_jobs.clone();
        jobs.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            while jobs.running.lock().is_ok_and(|running| !running.is_empty()) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    }
}

impl Handler<EmbedInBackground> for ToolDispatcher {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, msg: EmbedInBackground, _: &mut Context<Self>) -> Self::Result {
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let settings = self.config.embedding.clone();
        let enabled = settings.enabled;
        let jobs = self.embedding_jobs.clone();
        Box::pin(async move {
            if !enabled {
                return;
            }
            match open_indexed(&repo_manager, msg.repo).await {
                Ok(handle) => start_background_embedding(handle, embedder, settings, jobs),
                Err(err) => tracing::warn!(error = %err.message, "cannot embed in the background"),
            }
        })
    }
}

/// Languages docdex recognises as source code but has no grammar for.
fn is_source_without_grammar(language: &str) -> bool {
    matches!(language, "shell" | "sql" | "make" | "css" | "html")
}
