//! Indexer: owns a repo's single Tantivy `IndexWriter` for the length of an index run and is
//! the only writer of the repo's LMDB environment (file records, chunk vectors, pending
//! embeddings). A sync actor, one per repo, so commits (blocking I/O) run on its own thread.

use std::collections::HashMap;
use std::sync::Arc;

use crate::index::StoreTxn;
use actix::{Actor, Handler, Message, SyncContext};
use tantivy::IndexWriter;

use super::ingestor::IngestedFile;
use crate::code::FileCode;
use crate::index::static_model::{centre, MIN_CENTRED_CHUNKS};
use crate::index::{
    ChunkVectors, FileRecord, IndexRunState, LibraryDoc, LibraryRecord, RepoIndex, RepoStore, WebPageDoc, WebPageRecord,
};
use crate::ingest::{sha256_hex, Chunk};
use crate::protocol::time::unix_now;
use crate::protocol::{DocdexError, Result};

/// Test hook: abort the process right after this many Tantivy commits, before the LMDB
/// records of that batch are written: the worst moment for a kill.
pub const FAULT_ABORT_AFTER_COMMITS_ENV: &str = "DOCDEX_FAULT_ABORT_AFTER_COMMITS";
/// Test hook: the first index run of a repo whose path contains this text panics inside its
/// Indexer (once per process), to show a panicking repo actor harms nobody else.
pub const FAULT_PANIC_INDEXER_ENV: &str = "DOCDEX_FAULT_PANIC_INDEXER";

fn fault_panic_once(root: &std::path::Path) {
    static FIRED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let Ok(needle) = std::env::var(FAULT_PANIC_INDEXER_ENV) else { return };
    if !needle.is_empty()
        && root.to_string_lossy().contains(&needle)
        && !FIRED.swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        panic!("fault injected by {FAULT_PANIC_INDEXER_ENV}");
    }
}

/// What an Indexer takes from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct IndexerSettings {
    pub writer_heap_bytes: usize,
    pub cache_max_entries: u64,
}

pub struct Indexer {
    index: Arc<RepoIndex>,
    writer_heap_bytes: usize,
    writer_opt: Option<IndexWriter>,
    /// Record changes waiting for the next commit.
    pending_records: Vec<RecordUpdate>,
    needs_commit: bool,
    /// Next chunk id of the running index run (persisted with each batch's records).
    next_chunk_id: u32,
    commits: u64,
    abort_after_commits_opt: Option<u64>,
    /// `[embedding] cache_max_entries`: the embedding cache is pruned beyond it.
    cache_max_entries: u64,
    /// Whether this run changed a file's code facts so far: a run that changed none (a
    /// Markdown save) leaves the code graph as it is (`RepoIndex::refresh_code_graph`).
    code_changed_in_run: bool,
}

/// A file record change that waits for the commit of the chunks it describes.
enum RecordUpdate {
    /// New content: the record, whose chunk ids are the new chunks to embed, and the file's
    /// code facts (none: it has none any more).
    Put {
        path: String,
        record: FileRecord,
        code: Option<Box<FileCode>>,
    },
    /// Same content, new mtime: the old record's chunks stay.
    Touch {
        path: String,
        record: FileRecord,
    },
    Delete {
        path: String,
    },
}

impl Indexer {
    pub fn new(index: Arc<RepoIndex>, settings: IndexerSettings) -> Indexer {
        let abort_after_commits_opt = std::env::var(FAULT_ABORT_AFTER_COMMITS_ENV).ok().and_then(|v| v.parse().ok());
        Indexer {
            index,
            writer_heap_bytes: settings.writer_heap_bytes,
            cache_max_entries: settings.cache_max_entries,
            code_changed_in_run: false,
            writer_opt: None,
            pending_records: Vec::new(),
            needs_commit: false,
            next_chunk_id: 0,
            commits: 0,
            abort_after_commits_opt,
        }
    }

    fn writer(&mut self) -> Result<&mut IndexWriter> {
        self.writer_opt.as_mut().ok_or_else(|| DocdexError::internal("no index run in progress"))
    }

    /// Hands out `count` fresh chunk ids (persisted with the next batch's records).
    fn allocate_chunk_ids(&mut self, count: usize) -> Result<Vec<u32>> {
        let first = self.next_chunk_id;
        let count = u32::try_from(count).map_err(|_| DocdexError::internal("too many chunks"))?;
        self.next_chunk_id = first
            .checked_add(count)
            .ok_or_else(|| DocdexError::internal("chunk ids exhausted; delete the repo's state and re-index"))?;
        Ok((first..self.next_chunk_id).collect())
    }

    fn commit(&mut self) -> Result<()> {
        self.reserve_chunk_ids()?;
        self.writer()?.commit()?;
        self.needs_commit = false;
        self.index.reload()?;
        self.commits += 1;
        if self.abort_after_commits_opt == Some(self.commits) {
            eprintln!("docdexd: aborting after {} commits ({FAULT_ABORT_AFTER_COMMITS_ENV})", self.commits);
            std::process::abort();
        }
        Ok(())
    }
}

impl Indexer {
    /// Persists the chunk-id high-water mark before a Tantivy commit makes the ids durable:
    /// after a kill between that commit and the records, the next run starts above every id
    /// Tantivy holds, so a vector or pending entry keyed by an id never meets another
    /// chunk's text.
    fn reserve_chunk_ids(&self) -> Result<()> {
        let store = &self.index.store;
        let mut wtxn = store.write_txn()?;
        let mut state = store.run_state(&wtxn)?;
        if state.next_chunk_id < self.next_chunk_id {
            state.next_chunk_id = self.next_chunk_id;
            store.put_run_state(&mut wtxn, &state)?;
            wtxn.commit()?;
        }
        Ok(())
    }

    /// The id to start from: the stored mark, raised above every id in Tantivy (an index
    /// written by a docdex without the reservation, or one restored by hand).
    fn starting_chunk_id(&self, stored: u32) -> Result<u32> {
        let above_index = self.index.max_chunk_id()?.map(|max| max.saturating_add(1)).unwrap_or(0);
        if above_index > stored {
            tracing::warn!(
                stored,
                raised_to = above_index,
                "chunk id mark was below ids in the index (an interrupted run); raised"
            );
        }
        Ok(stored.max(above_index))
    }
}

/// A file's or page's chunks changed: the old chunks' vectors and pending entries go, the
/// new chunks wait for embedding (texts embedded before get their cached vectors then, off
/// the index run's path).
fn replace_chunk_records(store: &RepoStore, wtxn: &mut StoreTxn, old_ids: Vec<u32>, new_ids: &[u32]) -> Result<()> {
    for id in old_ids {
        store.delete_chunk(wtxn, id)?;
    }
    for &id in new_ids {
        store.put_pending(wtxn, id)?;
    }
    Ok(())
}

impl Actor for Indexer {
    type Context = SyncContext<Self>;
}

/// Starts a run: takes the writer, marks the run started, returns the known file records.
#[derive(Message)]
#[rtype(result = "Result<RunStart>")]
pub struct BeginIndexRun;

/// What a run starts from.
pub struct RunStart {
    pub known: HashMap<String, FileRecord>,
    /// Whether the stored code facts were built by this binary's grammars; when not, the run
    /// must read every file again (and walk the whole repo).
    pub code_current: bool,
}

/// Adds files' chunks to the index (uncommitted) and queues their records until the commit.
#[derive(Message)]
#[rtype(result = "Result<u64>")]
pub struct AddFiles {
    pub files: Vec<IngestedFile>,
}

/// Commits what was added since the last commit, then writes the queued file records.
#[derive(Message)]
#[rtype(result = "Result<()>")]
pub struct CommitBatch;

/// Ends a run: removes deleted files, commits, marks the run complete, releases the writer.
#[derive(Message)]
#[rtype(result = "Result<IndexRunState>")]
pub struct FinishIndexRun {
    pub deleted: Vec<String>,
    pub bytes_total: u64,
    /// The run read every file that changed since the last one, or (for a rebuild) every
    /// file: the code facts are now this binary's grammars'.
    pub code_complete: bool,
}

/// Gives up a run after an error: uncommitted changes are rolled back with the writer.
#[derive(Message)]
#[rtype(result = "()")]
pub struct AbortIndexRun;

/// Adds (or replaces) web pages' chunks in this repo's index and commits them: what the repo's
/// waterfall fetched becomes searchable locally. Returns the chunks written. Callers hold the
/// repo's index-run lock, so no index run shares the writer meanwhile.
#[derive(Message)]
#[rtype(result = "Result<u64>")]
pub struct IngestWebPages {
    pub pages: Vec<(WebPageDoc, String, Vec<Chunk>)>,
}

/// One library's docs, chunked, for `IngestLibraries`.
pub struct LibraryIngest {
    /// `<ecosystem>/<name>` (`Dependency::key`).
    pub record_key: String,
    /// The record to store; its paths and chunk ids are filled in here.
    pub record: LibraryRecord,
    pub docs: Vec<(LibraryDoc, Vec<Chunk>)>,
}

/// Replaces libraries' docs in this repo's index (a library's previous version included)
/// and removes the libraries in `remove`, in one commit. Returns the chunks written per
/// library. Callers hold the repo's index-run lock.
#[derive(Message)]
#[rtype(result = "Result<Vec<u64>>")]
pub struct IngestLibraries {
    pub libraries: Vec<LibraryIngest>,
    pub remove: Vec<String>,
}

/// Up to `max` chunks that need the model: (chunk id, text to embed). Pending chunks whose
/// text was embedded before get their cached vector on the way (searchable at once); an
/// empty answer means nothing is pending any more.
#[derive(Message)]
#[rtype(result = "Result<Vec<(u32, String)>>")]
pub struct PendingEmbeddings {
    pub max: usize,
}

/// Up to `max` chunks waiting for a static vector, of ids `from` on: (chunk id, text to
/// embed); empty when none is left.
#[derive(Message)]
#[rtype(result = "Result<Vec<(u32, String)>>")]
pub struct PendingStaticEmbeddings {
    pub max: usize,
    pub from: u32,
}

/// Whether the repo's static vectors need their mean computed before more are stored (see
/// `static_model::centre`): a repo of `MIN_CENTRED_CHUNKS` chunks or more without one. Static
/// vectors stored before it (uncentred) are queued again, so that every chunk is pending and
/// the mean is the whole repo's. Answers how many chunks the mean is to be computed over.
#[derive(Message)]
#[rtype(result = "Result<Option<u64>>")]
pub struct StaticMeanNeeded;

/// Keeps the mean the repo's static vectors are centred on from now on.
#[derive(Message)]
#[rtype(result = "Result<()>")]
pub struct PutStaticMean(pub Vec<f32>);

/// Stores static vectors (chunk id, vector), centred on the repo's mean when it has one, and
/// makes them searchable. Returns how many chunks still wait for one.
#[derive(Message)]
#[rtype(result = "Result<u64>")]
pub struct StoreStaticEmbeddings {
    pub items: Vec<(u32, Vec<f32>)>,
}

/// Stores computed vectors (chunk id, text embedded, vector) and rebuilds the ANN trees so
/// they are searchable at once. Returns how many chunks are still pending.
#[derive(Message)]
#[rtype(result = "Result<u64>")]
pub struct StoreEmbeddings {
    pub items: Vec<(u32, String, Vec<f32>)>,
}

impl Handler<BeginIndexRun> for Indexer {
    type Result = Result<RunStart>;

    fn handle(&mut self, _: BeginIndexRun, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            if self.writer_opt.is_none() {
                self.writer_opt = Some(self.index.writer(self.writer_heap_bytes)?);
            }
            let store = &self.index.store;
            let mut wtxn = store.write_txn()?;
            let mut state = store.run_state(&wtxn)?;
            state.last_started = Some(unix_now());
            state.in_progress = true;
            self.next_chunk_id = self.starting_chunk_id(state.next_chunk_id)?;
            state.next_chunk_id = self.next_chunk_id;
            store.put_run_state(&mut wtxn, &state)?;
            let files = store.all_files(&wtxn)?;
            let fingerprint = crate::code::grammar_fingerprint();
            if files.is_empty() {
                // Nothing stored yet: every fact the run writes is this binary's, so a run
                // killed half-way is resumed incrementally like its chunks.
                store.put_code_fingerprint(&mut wtxn, &fingerprint)?;
            }
            let code_current = store.code_fingerprint(&wtxn)?.as_deref() == Some(fingerprint.as_str());
            wtxn.commit()?;
            Ok(RunStart { known: files, code_current })
        })
    }
}

impl Handler<AddFiles> for Indexer {
    type Result = Result<u64>;

    fn handle(&mut self, msg: AddFiles, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            fault_panic_once(&self.index.root);
            let index = Arc::clone(&self.index);
            let mut chunks_written = 0u64;
            for file in msg.files {
                let update = match file {
                    IngestedFile::Changed { path, mut record, chunks, code } => {
                        let ids = self.allocate_chunk_ids(chunks.len())?;
                        let writer = self
                            .writer_opt
                            .as_ref()
                            .ok_or_else(|| DocdexError::internal("no index run in progress"))?;
                        index.replace_file(writer, &path, &record.language, &chunks, &ids)?;
                        chunks_written += chunks.len() as u64;
                        self.needs_commit = true;
                        record.chunk_ids = ids;
                        RecordUpdate::Put { path, record, code }
                    }
                    IngestedFile::Skipped { path, record_opt, .. } => {
                        // A file that turned binary or unreadable loses its old chunks.
                        let writer = self
                            .writer_opt
                            .as_ref()
                            .ok_or_else(|| DocdexError::internal("no index run in progress"))?;
                        index.delete_file(writer, &path);
                        self.needs_commit = true;
                        match record_opt {
                            Some(record) => RecordUpdate::Put { path, record, code: None },
                            None => RecordUpdate::Delete { path },
                        }
                    }
                    IngestedFile::Unchanged { path, record } => RecordUpdate::Touch { path, record },
                };
                self.pending_records.push(update);
            }
            Ok(chunks_written)
        })
    }
}

impl Handler<CommitBatch> for Indexer {
    type Result = Result<()>;

    fn handle(&mut self, _: CommitBatch, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            if self.needs_commit {
                self.commit()?;
            }
            // Records only after the commit: a kill in between leaves them stale, so the next run
            // re-reads those files instead of trusting chunks that never reached the index.
            let store = &self.index.store;
            let mut wtxn = store.write_txn()?;
            let mut code_changed = false;
            for update in self.pending_records.drain(..) {
                match update {
                    RecordUpdate::Put { path, record, code } => {
                        let old_ids = store.file(&wtxn, &path)?.map(|old| old.chunk_ids).unwrap_or_default();
                        replace_chunk_records(store, &mut wtxn, old_ids, &record.chunk_ids)?;
                        store.put_file(&mut wtxn, &path, &record)?;
                        // In the records' transaction: after a kill, a file's code facts are
                        // those of the content its record describes.
                        code_changed |= match code {
                            Some(code) => {
                                store.put_code(&mut wtxn, &path, &code)?;
                                true
                            }
                            None => store.delete_code(&mut wtxn, &path)?,
                        };
                    }
                    RecordUpdate::Touch { path, mut record } => {
                        if let Some(old) = store.file(&wtxn, &path)? {
                            record.chunks = old.chunks;
                            record.chunk_ids = old.chunk_ids;
                            // An unchanged document that could not be converted still cannot.
                            record.problem = old.problem;
                        }
                        store.put_file(&mut wtxn, &path, &record)?;
                    }
                    RecordUpdate::Delete { path } => {
                        if let Some(old) = store.file(&wtxn, &path)? {
                            for id in old.chunk_ids {
                                store.delete_chunk(&mut wtxn, id)?;
                            }
                        }
                        store.delete_file(&mut wtxn, &path)?;
                        code_changed |= store.delete_code(&mut wtxn, &path)?;
                    }
                }
            }
            if code_changed {
                store.bump_code_generation(&mut wtxn)?;
            }
            self.code_changed_in_run |= code_changed;
            let mut state = store.run_state(&wtxn)?;
            state.next_chunk_id = self.next_chunk_id;
            store.put_run_state(&mut wtxn, &state)?;
            wtxn.commit()?;
            Ok(())
        })
    }
}

impl Handler<FinishIndexRun> for Indexer {
    type Result = Result<IndexRunState>;

    fn handle(&mut self, msg: FinishIndexRun, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            let index = Arc::clone(&self.index);
            {
                let writer = self.writer()?;
                for path in &msg.deleted {
                    index.delete_file(writer, path);
                }
            }
            // Always commit: it also persists deletes queued by earlier batches' replacements.
            self.commit()?;
            let store = &index.store;
            let mut wtxn = store.write_txn()?;
            for path in &msg.deleted {
                if let Some(old) = store.file(&wtxn, path)? {
                    for id in old.chunk_ids {
                        store.delete_chunk(&mut wtxn, id)?;
                    }
                }
                store.delete_file(&mut wtxn, path)?;
                self.code_changed_in_run |= store.delete_code(&mut wtxn, path)?;
            }
            if msg.code_complete {
                store.put_code_fingerprint(&mut wtxn, &crate::code::grammar_fingerprint())?;
            }
            store.bump_code_generation(&mut wtxn)?;
            // Vectors reused from the cache and removed with old chunks become searchable now.
            store.build_vectors(&mut wtxn)?;
            let files = store.all_files(&wtxn)?;
            let mut state = store.run_state(&wtxn)?;
            state.last_completed = Some(unix_now());
            state.in_progress = false;
            state.format_version = crate::index::INDEX_FORMAT_VERSION;
            state.rebuild_reason = None;
            state.files = files.len() as u64;
            state.chunks = index.num_chunks();
            state.bytes = msg.bytes_total;
            state.next_chunk_id = self.next_chunk_id;
            store.put_run_state(&mut wtxn, &state)?;
            wtxn.commit()?;
            // Release the writer's lock so another process (CLI vs daemon) can index later.
            if let Some(writer) = self.writer_opt.take() {
                writer.wait_merging_threads()?;
            }
            if std::mem::take(&mut self.code_changed_in_run) {
                index.refresh_code_graph();
            }
            Ok(state)
        })
    }
}

impl Handler<AbortIndexRun> for Indexer {
    type Result = ();

    fn handle(&mut self, _: AbortIndexRun, _: &mut SyncContext<Self>) {
        self.pending_records.clear();
        self.code_changed_in_run = false;
        if let Some(mut writer) = self.writer_opt.take() {
            if let Err(err) = writer.rollback() {
                tracing::warn!(error = %err, "rollback after a failed index run");
            }
        }
    }
}

impl Handler<IngestWebPages> for Indexer {
    type Result = Result<u64>;

    fn handle(&mut self, msg: IngestWebPages, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            let index = Arc::clone(&self.index);
            let store = &index.store;
            // Pages whose text is unchanged since they were last ingested keep their chunks.
            let pages: Vec<_> = {
                let rtxn = store.read_txn()?;
                let mut fresh = Vec::new();
                for (doc, content_hash, chunks) in msg.pages {
                    if store.web_page(&rtxn, &doc.url)?.is_some_and(|old| old.content_hash == content_hash) {
                        continue;
                    }
                    fresh.push((doc, content_hash, chunks));
                }
                fresh
            };
            if pages.is_empty() {
                return Ok(0);
            }
            self.with_writer(|this| {
                let mut written = 0u64;
                let mut records = Vec::with_capacity(pages.len());
                for (doc, content_hash, chunks) in &pages {
                    let ids = this.allocate_chunk_ids(chunks.len())?;
                    index.replace_web_page(this.writer()?, doc, chunks, &ids)?;
                    written += chunks.len() as u64;
                    records.push((
                        doc.url.clone(),
                        WebPageRecord {
                            content_hash: content_hash.clone(),
                            title: doc.title.clone(),
                            fetched_at: doc.fetched_at,
                            chunk_ids: ids,
                        },
                    ));
                }
                this.commit()?;
                // As for files: records after the commit, so a kill in between only leaves a page
                // that is ingested again next time.
                let mut wtxn = store.write_txn()?;
                for (url, record) in records {
                    let old_ids = store.web_page(&wtxn, &url)?.map(|old| old.chunk_ids).unwrap_or_default();
                    replace_chunk_records(store, &mut wtxn, old_ids, &record.chunk_ids)?;
                    store.put_web_page(&mut wtxn, &url, &record)?;
                }
                this.finish_side_ingest(wtxn)?;
                Ok(written)
            })
        })
    }
}

impl Handler<IngestLibraries> for Indexer {
    type Result = Result<Vec<u64>>;

    fn handle(&mut self, msg: IngestLibraries, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            if msg.libraries.is_empty() && msg.remove.is_empty() {
                return Ok(Vec::new());
            }
            let index = Arc::clone(&self.index);
            let store = &index.store;
            let old: HashMap<String, LibraryRecord> = {
                let rtxn = store.read_txn()?;
                let mut old = HashMap::new();
                for key in msg.libraries.iter().map(|l| &l.record_key).chain(&msg.remove) {
                    if let Some(record) = store.library(&rtxn, key)? {
                        old.insert(key.clone(), record);
                    }
                }
                old
            };
            self.with_writer(|this| {
                // A library's previous version lives under other paths: they go whole.
                for record in old.values() {
                    for path in &record.paths {
                        index.delete_file(this.writer()?, path);
                    }
                }
                let mut written = Vec::with_capacity(msg.libraries.len());
                let mut records = Vec::with_capacity(msg.libraries.len());
                for library in msg.libraries {
                    let mut record = library.record;
                    let mut count = 0u64;
                    for (doc, chunks) in &library.docs {
                        let ids = this.allocate_chunk_ids(chunks.len())?;
                        index.replace_library_doc(this.writer()?, doc, chunks, &ids)?;
                        count += chunks.len() as u64;
                        record.paths.push(doc.path.clone());
                        record.chunk_ids.extend(ids);
                    }
                    written.push(count);
                    records.push((library.record_key, record));
                }
                this.commit()?;
                // Records after the commit, as for files: a kill in between leaves the old
                // record, whose library is then ingested again.
                let mut wtxn = store.write_txn()?;
                for (key, record) in records {
                    let old_ids = old.get(&key).map(|o| o.chunk_ids.clone()).unwrap_or_default();
                    replace_chunk_records(store, &mut wtxn, old_ids, &record.chunk_ids)?;
                    store.put_library(&mut wtxn, &key, &record)?;
                }
                for key in &msg.remove {
                    if let Some(record) = old.get(key) {
                        replace_chunk_records(store, &mut wtxn, record.chunk_ids.clone(), &[])?;
                    }
                    store.delete_library(&mut wtxn, key)?;
                }
                // Removed vectors leave the ANN trees now, not at the next embedding.
                if !msg.remove.is_empty() {
                    store.build_vectors(&mut wtxn)?;
                }
                this.finish_side_ingest(wtxn)?;
                Ok(written)
            })
        })
    }
}

impl Indexer {
    /// Runs `work` with the writer: the index run's when one is open, else one opened (and
    /// released, or rolled back on failure) around it. For ingests outside index runs (web
    /// pages, library docs), whose callers hold the repo's index-run lock.
    fn with_writer<T>(&mut self, work: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let opened_here = self.writer_opt.is_none();
        if opened_here {
            self.writer_opt = Some(self.index.writer(self.writer_heap_bytes)?);
            let store = &self.index.store;
            self.next_chunk_id = self.starting_chunk_id(store.run_state(&store.read_txn()?)?.next_chunk_id)?;
        }
        let result = work(self);
        if opened_here {
            match self.writer_opt.take() {
                Some(mut writer) if result.is_err() => {
                    let _ = writer.rollback();
                }
                Some(writer) => writer.wait_merging_threads()?,
                None => {}
            }
        }
        result
    }

    /// Stores the chunk-id mark and the chunk count after an ingest, and commits.
    fn finish_side_ingest(&self, mut wtxn: StoreTxn) -> Result<()> {
        let store = &self.index.store;
        let mut state = store.run_state(&wtxn)?;
        state.next_chunk_id = self.next_chunk_id;
        state.chunks = self.index.num_chunks();
        store.put_run_state(&mut wtxn, &state)?;
        wtxn.commit()?;
        Ok(())
    }
}

impl Handler<PendingEmbeddings> for Indexer {
    type Result = Result<Vec<(u32, String)>>;

    fn handle(&mut self, msg: PendingEmbeddings, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            // Another process may have committed the chunks just now: an id the index does not
            // know after a reload is really gone.
            self.index.reload()?;
            let store = &self.index.store;
            let max = msg.max.max(1);
            let mut wtxn = store.write_txn()?;
            let mut uncached = Vec::new();
            let mut reused = 0usize;
            let mut from = 0u32;
            while uncached.len() < max {
                let ids = store.pending_ids(&wtxn, from, max - uncached.len())?;
                let Some(&last) = ids.last() else { break };
                for (id, input_opt) in self.index.embedding_inputs(&ids)? {
                    let Some(input) = input_opt else {
                        // The chunk left the index (its file changed again): nothing to embed.
                        store.delete_chunk(&mut wtxn, id)?;
                        continue;
                    };
                    let hash = sha256_hex(input.as_bytes());
                    match store.cached_embedding(&wtxn, &hash)? {
                        Some((vector, used_at)) => {
                            // Re-stamped at most hourly: the stamp orders pruning, and a
                            // rewrite per hit would cost more than it tells.
                            if crate::protocol::time::unix_now().saturating_sub(used_at) > 3600 {
                                store.cache_embedding(&mut wtxn, &hash, &vector)?;
                            }
                            store.put_vector(&mut wtxn, id, &vector)?;
                            reused += 1;
                        }
                        None => uncached.push((id, input)),
                    }
                }
                match last.checked_add(1) {
                    Some(next) => from = next,
                    None => break,
                }
            }
            if reused > 0 {
                store.build_vectors(&mut wtxn)?;
            }
            wtxn.commit()?;
            Ok(uncached)
        })
    }
}

impl Handler<PendingStaticEmbeddings> for Indexer {
    type Result = Result<Vec<(u32, String)>>;

    fn handle(&mut self, msg: PendingStaticEmbeddings, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            self.index.reload()?;
            let store = &self.index.store;
            if !store.queued_all_static(&store.read_txn()?)? {
                // Chunks from before static vectors existed (or from while they were off).
                let ids: Vec<u32> = self.index.live_chunks()?.into_iter().map(|(_, id)| id).collect();
                let mut wtxn = store.write_txn()?;
                if store.queue_all_static_once(&mut wtxn, &ids)? {
                    tracing::info!(chunks = ids.len(), "every chunk queued for a static vector");
                }
                wtxn.commit()?;
            }
            let mut wanted = Vec::new();
            let mut from = msg.from;
            while wanted.is_empty() {
                let ids = store.static_pending_ids(&store.read_txn()?, from, msg.max.max(1))?;
                let Some(&last) = ids.last() else { break };
                let mut gone = Vec::new();
                for (id, input_opt) in self.index.embedding_inputs(&ids)? {
                    match input_opt {
                        Some(input) => wanted.push((id, input)),
                        None => gone.push(id),
                    }
                }
                if !gone.is_empty() {
                    // Chunks that left the index (their file changed again): nothing to embed.
                    let mut wtxn = store.write_txn()?;
                    for id in gone {
                        store.delete_chunk(&mut wtxn, id)?;
                    }
                    store.build_vectors(&mut wtxn)?;
                    wtxn.commit()?;
                }
                match last.checked_add(1) {
                    Some(next) => from = next,
                    None => break,
                }
            }
            Ok(wanted)
        })
    }
}

impl Handler<StoreStaticEmbeddings> for Indexer {
    type Result = Result<u64>;

    fn handle(&mut self, msg: StoreStaticEmbeddings, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            let store = &self.index.store;
            let mut wtxn = store.write_txn()?;
            let mean = store.static_mean(&wtxn)?;
            for (id, mut vector) in msg.items {
                // The chunk may have been replaced while it was being embedded.
                if store.is_static_pending(&wtxn, id)? {
                    if let Some(mean) = &mean {
                        centre(&mut vector, mean);
                    }
                    store.put_static_vector(&mut wtxn, id, &vector)?;
                }
            }
            store.build_static_vectors(&mut wtxn)?;
            let remaining = store.static_pending_count(&wtxn)?;
            wtxn.commit()?;
            Ok(remaining)
        })
    }
}

impl Handler<StaticMeanNeeded> for Indexer {
    type Result = Result<Option<u64>>;

    fn handle(&mut self, _: StaticMeanNeeded, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            self.index.reload()?;
            let store = &self.index.store;
            // Asked before every static pass (between the model's batches too): a small repo
            // is told by the index's count, without reading its chunks.
            if store.static_mean(&store.read_txn()?)?.is_some() || self.index.num_chunks() < MIN_CENTRED_CHUNKS as u64 {
                return Ok(None);
            }
            let ids: Vec<u32> = self.index.live_chunks()?.into_iter().map(|(_, id)| id).collect();
            let mut wtxn = store.write_txn()?;
            if store.vector_count_of(&wtxn, ChunkVectors::Static)? > 0 {
                tracing::info!(chunks = ids.len(), "static vectors queued again, to be centred on the repo's mean");
            }
            store.queue_static(&mut wtxn, &ids)?;
            let pending = store.static_pending_count(&wtxn)?;
            wtxn.commit()?;
            Ok(Some(pending))
        })
    }
}

impl Handler<PutStaticMean> for Indexer {
    type Result = Result<()>;

    fn handle(&mut self, PutStaticMean(mean): PutStaticMean, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            let store = &self.index.store;
            let mut wtxn = store.write_txn()?;
            store.put_static_mean(&mut wtxn, &mean)?;
            wtxn.commit()
        })
    }
}

impl Handler<StoreEmbeddings> for Indexer {
    type Result = Result<u64>;

    fn handle(&mut self, msg: StoreEmbeddings, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the indexer", || {
            let store = &self.index.store;
            let mut wtxn = store.write_txn()?;
            for (id, input, vector) in msg.items {
                store.cache_embedding(&mut wtxn, &sha256_hex(input.as_bytes()), &vector)?;
                // The chunk may have been replaced while it was being embedded.
                if store.is_pending(&wtxn, id)? {
                    store.put_vector(&mut wtxn, id, &vector)?;
                }
            }
            store.build_vectors(&mut wtxn)?;
            let pruned = store.prune_embedding_cache(&mut wtxn, self.cache_max_entries)?;
            if pruned > 0 {
                tracing::info!(pruned, "embedding cache pruned (least recently used first)");
            }
            let remaining = store.pending_count(&wtxn)?;
            wtxn.commit()?;
            Ok(remaining)
        })
    }
}
