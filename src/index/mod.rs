//! A repo's full-text index (Tantivy, under `index/`) and metadata store (LMDB, under
//! `meta.lmdb/`), with the search and write primitives the actors use.
//!
//! Crash consistency: a batch is committed to Tantivy first, then its file records (content
//! hashes) to LMDB. A kill between the two leaves files whose records are stale, so the next
//! run re-indexes them (delete by path, then add): no duplicates, nothing lost.

pub mod across;
pub mod analyzer;
pub mod collections;
pub mod concepts;
pub mod dag;
#[cfg(test)]
mod fuzz_tests;
pub mod models;
mod pg_directory;
pub mod rank;
pub mod schema;
pub mod search;
pub mod static_model;
pub mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use analyzer::{code_analyzer, CODE_ANALYZER};
use tantivy::directory::error::LockError;
use tantivy::directory::{Directory, MmapDirectory};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, TantivyError, Term,
};

use self::pg_directory::PgDirectory;
use crate::code::CodeGraph;
use crate::ingest::Chunk;
use crate::protocol::{ChunkContent, DocdexError, ErrorCode, Result, SearchHit};

use self::rank::{chunk_flags, is_identifier, is_prose, FLAG_LIBRARY, FLAG_WEB};
use self::schema::{build_schema, comment_prose, Fields};
use self::search::{hit_source, SOURCE_LIBRARY, SOURCE_REPO, SOURCE_WEB};
pub use across::search_indexes;
pub use rank::{asks_how_it_works, candidate_depth, path_prior, FusionParams};
pub use search::SearchFilter;
pub use store::{
    vectors_for_search_across, ChunkVectors, CopiedRecords, FileRecord, IndexRunState, LibraryRecord, MemoryRecord,
    RepoStore, StoreTxn, VectorCounts, WebPageRecord,
};

/// What the code analyzer, the chunker and the schema produce, as a number: bump it when any
/// of them changes what an index holds, so indexes built before are rebuilt (reported)
/// instead of silently mismatching new queries.
pub const INDEX_FORMAT_VERSION: u32 = 23;

/// A code graph asked for this recently is rebuilt as each index run ends
/// (`RepoIndex::refresh_code_graph`): an agent at work asks every few minutes.
const CODE_GRAPH_IN_USE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Where a repo's index and store live.
#[derive(Clone)]
pub enum StoreBackend {
    /// Tantivy and LMDB under the repo's state directory, with this LMDB map ceiling.
    Embedded { lmdb_map_bytes: usize },
    /// The team store: rows in PostgreSQL, the index files cached under the state directory.
    Postgres(Arc<crate::postgres::PgPool>),
}

impl Default for StoreBackend {
    fn default() -> StoreBackend {
        StoreBackend::Embedded { lmdb_map_bytes: crate::config::DEFAULT_MAP_BYTES }
    }
}

/// Where the index's files are: a folder, or the team store (with a local cache).
enum IndexFiles {
    Local(PathBuf),
    Store(PgDirectory),
}

impl IndexFiles {
    fn directory(&self) -> Result<Box<dyn Directory>> {
        match self {
            IndexFiles::Local(dir) => Ok(Box::new(
                MmapDirectory::open(dir)
                    .map_err(|err| DocdexError::internal(format!("cannot open index at {}: {err}", dir.display())))?,
            )),
            IndexFiles::Store(directory) => Ok(Box::new(directory.clone())),
        }
    }

    fn describe(&self) -> String {
        match self {
            IndexFiles::Local(dir) => dir.display().to_string(),
            IndexFiles::Store(directory) => format!("{directory:?}"),
        }
    }

    /// Removes every file of the index but the lock files.
    fn remove_all(&self) -> Result<()> {
        match self {
            IndexFiles::Store(directory) => directory.wipe(),
            IndexFiles::Local(index_dir) => remove_all_but_locks(index_dir),
        }
    }
}

/// What `copy_repo` moved.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RepoCopy {
    pub index_files: u64,
    pub index_bytes: u64,
    pub chunks: u64,
    #[serde(flatten)]
    pub records: store::CopiedRecords,
}

/// Copies a repo's index and store into another backend's (the team store): the index's
/// files as they are (the same segments, so the same ranking), then every record and
/// vector (nothing is re-embedded). Both writers are held, so nothing changes meanwhile. A
/// copy killed half-way leaves a target whose records do not match its index: the next run
/// re-indexes what they disagree on, as after a killed index run, and a copy again replaces it.
pub fn copy_repo(source: &RepoIndex, target: &RepoIndex) -> Result<RepoCopy> {
    use tantivy::directory::INDEX_WRITER_LOCK;
    let locked = |files: &IndexFiles| {
        files.directory()?.acquire_lock(&INDEX_WRITER_LOCK).map_err(|_| {
            DocdexError::new(
                ErrorCode::IndexLocked,
                format!("{} is being written by another process", files.describe()),
            )
            .with_hint("wait for the index run to finish (or stop the daemon writing it), then copy again")
        })
    };
    let _source_lock = locked(&source.files)?;
    let _target_lock = locked(&target.files)?;
    let IndexFiles::Local(index_dir) = &source.files else {
        return Err(DocdexError::invalid("copies are made from an embedded store"));
    };
    let IndexFiles::Store(directory) = &target.files else {
        return Err(DocdexError::invalid("copies are made into the team store"));
    };
    let mut copy = RepoCopy { chunks: source.num_chunks(), ..RepoCopy::default() };
    let mut names: Vec<String> = std::fs::read_dir(index_dir)?
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| !(name.starts_with(".tantivy-") && name.ends_with(".lock")))
        .collect();
    // meta.json names the segments: it goes last, when every file it names is there.
    names.sort_by_key(|name| (name == "meta.json", name.clone()));
    directory.wipe()?;
    for name in &names {
        let path = index_dir.join(name);
        copy.index_bytes += std::fs::metadata(&path)?.len();
        directory.upload_file(name, &path)?;
        copy.index_files += 1;
    }
    copy.records = source.store.copy_into(&target.store)?;
    target.reload()?;
    Ok(copy)
}

/// Removes every entry of an index folder but Tantivy's lock files (held by a writer).
fn remove_all_but_locks(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with(".tantivy-") && name.ends_with(".lock") {
            continue;
        }
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Empties an index for a rebuild under its writer lock (another process writing it is an
/// error, not a race). Records go first: a kill before the files are removed leaves a state
/// the next open repairs the same way. The run state keeps `reason` until a run completes.
fn wipe_index(store: &RepoStore, files: &IndexFiles, reason: &str) -> Result<()> {
    use tantivy::directory::INDEX_WRITER_LOCK;
    let _lock = files.directory()?.acquire_lock(&INDEX_WRITER_LOCK).map_err(|_| {
        DocdexError::new(
            ErrorCode::IndexLocked,
            format!("{} is being written by another docdexd process", files.describe()),
        )
        .with_hint("stop the other process, then retry: the index needs a rebuild")
    })?;
    let mut wtxn = store.write_txn()?;
    store.forget_chunks(&mut wtxn)?;
    let state = IndexRunState { rebuild_reason: Some(reason.to_string()), ..store.run_state(&wtxn)? };
    store.put_run_state(&mut wtxn, &state)?;
    wtxn.commit()?;
    files.remove_all()
}

/// Ranked hits plus the best score, before the dispatcher adds timing.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    pub hits: Vec<SearchHit>,
    pub top_score: f32,
}

/// Search knobs that come from config rather than from the request.
#[derive(Debug, Clone, Copy)]
pub struct SearchParams {
    pub limit: usize,
    pub max_hits_per_file: usize,
    pub fusion: FusionParams,
    /// Nodes arroy inspects per dense query (0: arroy's default, `n_trees * count`).
    pub dense_search_k: usize,
    /// Weight of the programming terms a plain-words query's phrases add (`concepts.txt`)
    /// relative to the query's own words; 0 turns expansion off.
    pub concept_weight: f32,
    /// Places a file's second and later hits move down (see `render`).
    pub repeat_hit_delay: usize,
    /// A query that is one identifier gets its definitions first (`rank::definitions_first`).
    pub definitions_first: bool,
    /// A plain-words question's candidates in files whose name names its words gain this
    /// share of the best score (`across::raise_named_files`).
    pub path_match_weight: f32,
    /// A plain-words question's files gain for all their candidates, this share of the best
    /// score at most (`across::add_file_evidence`).
    pub file_evidence_weight: f32,
    /// The vectors the dense ranking searches (the query vector is of the same kind).
    pub dense_vectors: ChunkVectors,
}

impl SearchParams {
    pub fn new(limit: usize, max_hits_per_file: usize) -> SearchParams {
        SearchParams {
            limit,
            max_hits_per_file,
            fusion: FusionParams::default(),
            dense_search_k: 0,
            concept_weight: if crate::config::DEFAULT_EXPAND_CONCEPTS {
                crate::config::DEFAULT_CONCEPT_WEIGHT
            } else {
                0.0
            },
            repeat_hit_delay: crate::config::DEFAULT_REPEAT_HIT_DELAY,
            definitions_first: true,
            path_match_weight: crate::config::DEFAULT_PATH_MATCH_WEIGHT,
            file_evidence_weight: crate::config::DEFAULT_FILE_EVIDENCE_WEIGHT,
            dense_vectors: ChunkVectors::Model,
        }
    }
}

/// Largest manifest (`go.mod`, `package.json`, …) import resolution reads.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

pub struct RepoIndex {
    pub root: PathBuf,
    pub fingerprint: String,
    pub state_dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    pub store: RepoStore,
    /// The code graph of the stored code facts, and the code generation it was built at.
    code_cache: std::sync::Mutex<Option<(u64, Arc<CodeGraph>)>>,
    /// When a request last asked for the code graph (`refresh_code_graph`).
    code_asked: std::sync::Mutex<Option<std::time::Instant>>,
    /// Diff sides' facts the graph does not hold (`change::sides`).
    pub side_facts: crate::change::sides::SideFacts,
    files: IndexFiles,
    /// On the team store: the fingerprint of the `meta.json` the reader has loaded.
    loaded_meta: std::sync::Mutex<Option<String>>,
}

/// One doc file of a library as the index stores it.
#[derive(Debug, Clone)]
pub struct LibraryDoc {
    pub name: String,
    pub version: String,
    pub path: String,
    pub language: String,
}

/// What a web page's chunks carry besides their text.
#[derive(Debug, Clone)]
pub struct WebPageDoc {
    pub url: String,
    pub title: String,
    /// Unix seconds.
    pub fetched_at: u64,
}

/// Most of what the embedding model sees of a chunk (it truncates at 256 tokens anyway).
const EMBEDDING_INPUT_CHARS: usize = 2000;

/// The text embedded for a chunk: where it is (path, heading path) and what it says.
/// (Putting a code chunk's comments first, markers and examples stripped, measured no better:
/// tokio paraphrases dense success@5 0.60 either way, hybrid 0.72 -> 0.68.)
pub fn embedding_input(path: &str, heading: &str, text: &str) -> String {
    let mut input = String::with_capacity(EMBEDDING_INPUT_CHARS.min(path.len() + heading.len() + text.len() + 2));
    input.push_str(path);
    if !heading.is_empty() {
        input.push_str(" > ");
        input.push_str(heading);
    }
    input.push('\n');
    input.push_str(text);
    if input.len() > EMBEDDING_INPUT_CHARS {
        let mut cut = EMBEDDING_INPUT_CHARS;
        while !input.is_char_boundary(cut) {
            cut -= 1;
        }
        input.truncate(cut);
    }
    input
}

fn dir_size(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => dir_size(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}

impl RepoIndex {
    /// Opens (creating if needed) the repo's Tantivy index and LMDB store under `state_dir`.
    pub fn open(root: &Path, fingerprint: &str, state_dir: &Path) -> Result<RepoIndex> {
        RepoIndex::open_with(root, fingerprint, state_dir, crate::config::DEFAULT_MAP_BYTES)
    }

    /// Opens with an LMDB map of `map_bytes` (`[index] lmdb_map_bytes`).
    pub fn open_with(root: &Path, fingerprint: &str, state_dir: &Path, map_bytes: usize) -> Result<RepoIndex> {
        RepoIndex::open_in(root, fingerprint, state_dir, &StoreBackend::Embedded { lmdb_map_bytes: map_bytes })
    }

    /// Opens the repo's index and store in `backend`. On the team store, `state_dir` holds
    /// only a cache of the index files.
    pub fn open_in(root: &Path, fingerprint: &str, state_dir: &Path, backend: &StoreBackend) -> Result<RepoIndex> {
        let (schema, fields) = build_schema();
        let (store, files) = match backend {
            StoreBackend::Embedded { lmdb_map_bytes } => {
                let index_dir = state_dir.join("index");
                std::fs::create_dir_all(&index_dir)?;
                (RepoStore::open_with(&state_dir.join("meta.lmdb"), *lmdb_map_bytes)?, IndexFiles::Local(index_dir))
            }
            StoreBackend::Postgres(pool) => {
                let repo_id = pool.repo_id(fingerprint, &root.display().to_string())?;
                let directory = PgDirectory::open(Arc::clone(pool), repo_id, &state_dir.join("index-cache"))?;
                (RepoStore::open_postgres(Arc::clone(pool), repo_id), IndexFiles::Store(directory))
            }
        };
        let unreadable = |err: TantivyError| {
            DocdexError::internal(format!("index at {} is unreadable: {err}", files.describe())).with_hint(format!(
                "delete {} and run `docdexd index --repo {}`",
                state_dir.display(),
                root.display()
            ))
        };
        let rebuild = |why: &str| -> Result<Index> {
            tracing::warn!(repo = %root.display(), "{why}; the index is emptied and the next index run rebuilds it");
            wipe_index(&store, &files, why)?;
            Index::open_or_create(files.directory()?, schema.clone()).map_err(unreadable)
        };
        let index = match Index::open_or_create(files.directory()?, schema.clone()) {
            // Written by a docdex with another index layout.
            Err(TantivyError::SchemaError(_)) => rebuild("the index was written by another docdex version")?,
            Err(err) => return Err(unreadable(err)),
            Ok(index) => {
                let state = store.run_state(&store.read_txn()?)?;
                if state.indexed() && state.format_version != INDEX_FORMAT_VERSION {
                    drop(index);
                    rebuild(&format!(
                        "the index was built by an analyzer/chunker of format {} (this docdex writes {INDEX_FORMAT_VERSION})",
                        state.format_version
                    ))?
                } else {
                    index
                }
            }
        };
        index.tokenizers().register(CODE_ANALYZER, code_analyzer());
        // The team store has no file to watch: a search asks it whether another daemon
        // committed since (`searcher`).
        let policy = match files {
            IndexFiles::Local(_) => ReloadPolicy::OnCommitWithDelay,
            IndexFiles::Store(_) => ReloadPolicy::Manual,
        };
        let reader = index.reader_builder().reload_policy(policy).try_into()?;
        let loaded_meta = match &files {
            IndexFiles::Store(directory) => directory.meta_version()?,
            IndexFiles::Local(_) => None,
        };
        Ok(RepoIndex {
            root: root.to_path_buf(),
            fingerprint: fingerprint.to_string(),
            state_dir: state_dir.to_path_buf(),
            index,
            reader,
            fields,
            analyzer: code_analyzer(),
            store,
            code_cache: std::sync::Mutex::new(None),
            code_asked: std::sync::Mutex::new(None),
            side_facts: Default::default(),
            files,
            loaded_meta: std::sync::Mutex::new(loaded_meta),
        })
    }

    /// A searcher over the latest commit. On the team store another daemon may have
    /// committed: the stored `meta.json` is compared with the one loaded (one short query)
    /// and the reader reloads when they differ. A store that cannot be asked leaves the
    /// searcher as it was (the search itself reports the store's state).
    pub(crate) fn searcher(&self) -> Searcher {
        if let IndexFiles::Store(directory) = &self.files {
            let mut loaded = self.loaded_meta.lock().unwrap_or_else(|e| e.into_inner());
            match directory.meta_version() {
                Ok(current) if current != *loaded => {
                    // A commit that removed files between the two reads: the second reads anew.
                    let reloaded = self.reader.reload().or_else(|_| self.reader.reload());
                    match reloaded {
                        Ok(()) => *loaded = current,
                        Err(err) => tracing::warn!(error = %err, "could not load the store's latest commit"),
                    }
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err.message, "could not ask the store for its latest commit"),
            }
        }
        self.reader.searcher()
    }

    /// The repo's code graph, built from the stored code facts on first use and again after
    /// they change (by this process or another). A store whose facts come from other grammars
    /// is refused: its answers would be those of another parser.
    pub fn code_graph(&self) -> Result<Arc<CodeGraph>> {
        *self.code_asked.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(std::time::Instant::now());
        self.current_code_graph()
    }

    /// `code_graph`, not counted as a request's question.
    fn current_code_graph(&self) -> Result<Arc<CodeGraph>> {
        let rtxn = self.store.read_txn()?;
        let current = crate::code::grammar_fingerprint();
        if self.store.code_fingerprint(&rtxn)?.as_deref() != Some(current.as_str()) {
            return Err(DocdexError::new(
                ErrorCode::StaleIndex,
                format!(
                    "the symbols of {} were built by other grammars than this docdex's (or before it read symbols)",
                    self.root.display()
                ),
            )
            .with_hint(format!(
                "run `docdexd index --repo {}` (a running daemon starts that run on its own)",
                self.root.display()
            )));
        }
        let generation = self.store.code_generation(&rtxn)?;
        let mut cache = self.code_cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((built_at, graph)) = cache.as_ref() {
            // Newer than this transaction's generation: built by a call that began later
            // (an index run's refresh), and not to be replaced by an older one.
            if *built_at >= generation {
                return Ok(Arc::clone(graph));
            }
        }
        let (files, undecodable) = self.store.all_code(&rtxn)?;
        if undecodable > 0 {
            drop(rtxn);
            // Facts this binary cannot read: rebuilt by the next run, never answered from in part.
            let mut wtxn = self.store.write_txn()?;
            self.store.forget_code_fingerprint(&mut wtxn)?;
            wtxn.commit()?;
            return Err(DocdexError::new(
                ErrorCode::StaleIndex,
                format!(
                    "{undecodable} files' symbols in {} are in a format this docdex does not read",
                    self.root.display()
                ),
            )
            .with_hint(format!("run `docdexd index --repo {}`", self.root.display())));
        }
        let records = self.store.all_files(&rtxn)?;
        let mut configs = HashMap::new();
        for path in records.keys().filter(|p| crate::code::is_graph_config(p)) {
            // A manifest that went missing or grew huge just resolves less.
            if let Ok(bytes) = crate::ingest::open::read_inside(&self.root, path, MAX_CONFIG_BYTES) {
                configs.insert(path.clone(), String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        drop(rtxn);
        let mut graph = CodeGraph::build(files, &configs);
        let (files_not_built, not_built) = crate::code::default_run::not_built(&graph, &self.root);
        graph.set_not_built(files_not_built, not_built);
        // Read in the same transaction as the facts: a file's facts are those of the text its
        // record hashes.
        graph.set_content_hashes(|path| records.get(path).map(|r| r.content_hash.clone()));
        let graph = Arc::new(graph);
        // Every use resolved in the background (a change-impact walk waits for it): under a
        // second on tokio, and most often done before anyone asks.
        let background = Arc::clone(&graph);
        let _ = std::thread::Builder::new().name("docdex-resolve".into()).spawn(move || background.resolve_all());
        // The files just re-read are, most often, an edit in progress: their earlier facts
        // are a diff's base side from now on.
        if let Some((_, old)) = cache.as_ref() {
            self.side_facts.keep_replaced(old, &graph);
        }
        *cache = Some((generation, Arc::clone(&graph)));
        Ok(graph)
    }

    /// Builds the code graph again, every use resolved, when one is in use (a request asked
    /// for it in the last `CODE_GRAPH_IN_USE`): an index run calls this as it ends, so that
    /// the next question about the code (a diff's impact, most often, right after an edit the
    /// watcher read) finds it ready instead of waiting for it. A repo nobody asks about code
    /// lately is not rebuilt at every save: its next question builds the graph.
    pub fn refresh_code_graph(&self) {
        let asked = *self.code_asked.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let built = self.code_cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some();
        if !built || asked.is_none_or(|at| at.elapsed() > CODE_GRAPH_IN_USE) {
            return;
        }
        // The run is committed: whatever goes wrong here is the next request's to report.
        let rebuilt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.current_code_graph().map(|graph| graph.resolve_all())
        }));
        match rebuilt {
            Ok(Ok(())) => {}
            Ok(Err(err)) => tracing::debug!(error = %err.message, "the code graph was not rebuilt after the index run"),
            Err(_) => tracing::warn!("building the code graph after the index run panicked"),
        }
    }

    /// The repo's single writer. Another process holding it is a user-facing error.
    pub fn writer(&self, heap_bytes: usize) -> Result<IndexWriter> {
        // One indexing thread: the other core is busy reading and chunking files.
        let writer = self.index.writer_with_num_threads(1, heap_bytes.max(15_000_000)).map_err(|err| match err {
            TantivyError::LockFailure(LockError::LockBusy, _) => DocdexError::new(
                ErrorCode::IndexLocked,
                format!("the index of {} is being written by another docdexd process", self.root.display()),
            )
            .with_hint("wait for it to finish, or stop the other `docdexd daemon`/`index` process"),
            other => other.into(),
        })?;
        // A run killed between writing a segment's delete file and committing it leaves that
        // file behind, and the next run, reaching the same opstamp, cannot create it again
        // (`FileAlreadyExists(<segment>.<opstamp>.del)`). Files the last commit does not name
        // are removed before any write.
        if let Err(err) = writer.garbage_collect_files().wait() {
            tracing::warn!(error = %err, "could not remove files a killed run left in the index");
        }
        Ok(writer)
    }

    /// Replaces a file's chunks (delete by path, then add), uncommitted. `chunk_ids` pairs
    /// with `chunks`.
    pub fn replace_file(
        &self,
        writer: &IndexWriter,
        path: &str,
        language: &str,
        chunks: &[Chunk],
        chunk_ids: &[u32],
    ) -> Result<()> {
        let f = self.fields;
        writer.delete_term(Term::from_field_text(f.path, path));
        for (chunk, &chunk_id) in chunks.iter().zip(chunk_ids) {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, path);
            doc.add_text(f.path_text, path);
            doc.add_text(f.heading, &chunk.heading);
            doc.add_text(f.symbols, chunk.symbols.join(" "));
            for name in chunk.symbols.iter().chain(&chunk.defined).filter(|name| is_identifier(name)) {
                doc.add_text(f.defines, name);
            }
            for name in chunk.exported.iter().filter(|name| is_identifier(name)) {
                doc.add_text(f.exports, name);
            }
            doc.add_text(f.body, &chunk.text);
            if !is_prose(language) {
                doc.add_text(f.docs, comment_prose(&chunk.text));
            }
            doc.add_text(f.language, language);
            doc.add_u64(f.line_start, chunk.line_start);
            doc.add_u64(f.line_end, chunk.line_end);
            if let Some(page) = chunk.page {
                doc.add_u64(f.page, u64::from(page));
            }
            doc.add_text(f.chunk_hash, &chunk.content_hash);
            doc.add_u64(f.chunk_id, u64::from(chunk_id));
            doc.add_text(f.source, SOURCE_REPO);
            doc.add_u64(f.flags, chunk_flags(path, language, chunk.internal));
            writer.add_document(doc)?;
        }
        Ok(())
    }

    /// Replaces a web page's chunks (its URL is their path), uncommitted.
    pub fn replace_web_page(
        &self,
        writer: &IndexWriter,
        page: &WebPageDoc,
        chunks: &[Chunk],
        chunk_ids: &[u32],
    ) -> Result<()> {
        let f = self.fields;
        writer.delete_term(Term::from_field_text(f.path, &page.url));
        for (chunk, &chunk_id) in chunks.iter().zip(chunk_ids) {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, &page.url);
            doc.add_text(f.path_text, &page.url);
            let heading = if chunk.heading.is_empty() {
                page.title.clone()
            } else {
                format!("{} > {}", page.title, chunk.heading)
            };
            doc.add_text(f.heading, &heading);
            doc.add_text(f.symbols, chunk.symbols.join(" "));
            doc.add_text(f.body, &chunk.text);
            doc.add_text(f.language, "markdown");
            doc.add_u64(f.line_start, chunk.line_start);
            doc.add_u64(f.line_end, chunk.line_end);
            doc.add_text(f.chunk_hash, &chunk.content_hash);
            doc.add_u64(f.chunk_id, u64::from(chunk_id));
            doc.add_text(f.source, SOURCE_WEB);
            doc.add_text(f.title, &page.title);
            doc.add_u64(f.fetched_at, page.fetched_at);
            doc.add_u64(f.flags, chunk_flags(&page.url, "markdown", false) | FLAG_WEB);
            writer.add_document(doc)?;
        }
        Ok(())
    }

    /// Replaces one doc file of a library (`path` is `<ecosystem>:<name>@<version>/<file>`),
    /// uncommitted.
    pub fn replace_library_doc(
        &self,
        writer: &IndexWriter,
        library: &LibraryDoc,
        chunks: &[Chunk],
        chunk_ids: &[u32],
    ) -> Result<()> {
        let f = self.fields;
        writer.delete_term(Term::from_field_text(f.path, &library.path));
        for (chunk, &chunk_id) in chunks.iter().zip(chunk_ids) {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, &library.path);
            doc.add_text(f.path_text, &library.path);
            doc.add_text(f.heading, &chunk.heading);
            doc.add_text(f.symbols, chunk.symbols.join(" "));
            doc.add_text(f.body, &chunk.text);
            doc.add_text(f.language, &library.language);
            doc.add_u64(f.line_start, chunk.line_start);
            doc.add_u64(f.line_end, chunk.line_end);
            doc.add_text(f.chunk_hash, &chunk.content_hash);
            doc.add_u64(f.chunk_id, u64::from(chunk_id));
            doc.add_text(f.source, SOURCE_LIBRARY);
            doc.add_text(f.library, &library.name);
            doc.add_text(f.library_version, &library.version);
            // A library's examples are secondary like the repo's; its docs are not internal.
            doc.add_u64(f.flags, chunk_flags(&library.path, &library.language, false) | FLAG_LIBRARY);
            writer.add_document(doc)?;
        }
        Ok(())
    }

    pub fn delete_file(&self, writer: &IndexWriter, path: &str) {
        writer.delete_term(Term::from_field_text(self.fields.path, path));
    }

    /// Makes the last commit visible to searches in this process right away.
    pub fn reload(&self) -> Result<()> {
        // The version first: a commit landing in between is loaded by the next search.
        let version_opt = match &self.files {
            IndexFiles::Store(directory) => Some(directory.meta_version()?),
            IndexFiles::Local(_) => None,
        };
        self.reader.reload()?;
        if let Some(version) = version_opt {
            *self.loaded_meta.lock().unwrap_or_else(|e| e.into_inner()) = version;
        }
        Ok(())
    }

    /// The largest chunk id in the index (deleted documents not yet merged away included,
    /// which only makes it a safer high-water mark): the last term of `chunk_id` in each
    /// segment's term dictionary.
    pub fn max_chunk_id(&self) -> Result<Option<u32>> {
        let searcher = self.searcher();
        let mut max: Option<u64> = None;
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.chunk_id)?;
            let mut terms = inverted.terms().stream()?;
            let mut last: Option<Vec<u8>> = None;
            while terms.advance() {
                last = Some(terms.key().to_vec());
            }
            if let Some(bytes) = last.filter(|b| b.len() == 8) {
                let value = u64::from_be_bytes(bytes.try_into().expect("8 bytes"));
                max = Some(max.map_or(value, |m| m.max(value)));
            }
        }
        Ok(max.map(|v| u32::try_from(v).unwrap_or(u32::MAX)))
    }

    /// Every live chunk's path and id (consistency checks).
    pub fn live_chunks(&self) -> Result<Vec<(String, u32)>> {
        let searcher = self.searcher();
        let mut out = Vec::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            for doc_id in segment.doc_ids_alive() {
                let doc: TantivyDocument = searcher.doc(DocAddress::new(ord as u32, doc_id))?;
                let path = doc.get_first(self.fields.path).and_then(|v| v.as_str()).unwrap_or_default().to_string();
                let id = doc.get_first(self.fields.chunk_id).and_then(|v| v.as_u64()).unwrap_or_default();
                out.push((path, id as u32));
            }
        }
        Ok(out)
    }

    pub fn num_chunks(&self) -> u64 {
        self.searcher().num_docs()
    }

    /// Whether an index run holds the repo's writer now (this process's or another's): a run
    /// marked in progress is live then, not interrupted.
    pub fn being_written(&self) -> bool {
        use tantivy::directory::INDEX_WRITER_LOCK;
        match self.files.directory() {
            Ok(directory) => matches!(directory.acquire_lock(&INDEX_WRITER_LOCK), Err(LockError::LockBusy)),
            Err(_) => false,
        }
    }

    /// Bytes on disk of the Tantivy index and the LMDB store.
    pub fn size_on_disk(&self) -> u64 {
        dir_size(&self.state_dir)
    }

    /// Where a chunk id's document is (live documents only), from the postings of `chunk_id`.
    pub(crate) fn chunk_address(&self, searcher: &Searcher, chunk_id: u32) -> Result<Option<DocAddress>> {
        use tantivy::{DocSet, TERMINATED};
        let term = Term::from_field_u64(self.fields.chunk_id, u64::from(chunk_id));
        for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(self.fields.chunk_id)?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if segment.alive_bitset().is_none_or(|alive| alive.is_alive(doc)) {
                    return Ok(Some(DocAddress::new(segment_ord as u32, doc)));
                }
                doc = postings.advance();
            }
        }
        Ok(None)
    }

    /// The stored document of a chunk, if the index still has it.
    pub(crate) fn chunk_doc(
        &self,
        searcher: &Searcher,
        chunk_id: u32,
    ) -> Result<Option<(DocAddress, TantivyDocument)>> {
        match self.chunk_address(searcher, chunk_id)? {
            Some(address) => Ok(Some((address, searcher.doc(address)?))),
            None => Ok(None),
        }
    }

    /// What to embed for each chunk (see `embedding_input`), read back from the index; `None`
    /// for a chunk the index no longer has.
    pub fn embedding_inputs(&self, chunk_ids: &[u32]) -> Result<Vec<(u32, Option<String>)>> {
        let searcher = self.searcher();
        let f = self.fields;
        chunk_ids
            .iter()
            .map(|&id| {
                let input = self.chunk_doc(&searcher, id)?.map(|(_, doc)| {
                    let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("");
                    embedding_input(text_of(f.path), text_of(f.heading), text_of(f.body))
                });
                Ok((id, input))
            })
            .collect()
    }

    /// One chunk by id (as search hits give it), if the index still has it.
    pub fn chunk(&self, chunk_id: u32) -> Result<Option<ChunkContent>> {
        let searcher = self.searcher();
        let f = self.fields;
        Ok(self.chunk_doc(&searcher, chunk_id)?.map(|(_, doc)| {
            let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let number = |field: Field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            ChunkContent {
                chunk_id,
                path: text_of(f.path),
                line_start: number(f.line_start),
                line_end: number(f.line_end),
                heading: text_of(f.heading),
                language: text_of(f.language),
                source: hit_source(&text_of(f.source)),
                text: text_of(f.body),
            }
        }))
    }
}

#[cfg(test)]
mod tests;
