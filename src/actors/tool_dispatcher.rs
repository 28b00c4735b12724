//! ToolDispatcher: the one entry point that the CLI, HTTP (and later MCP) call with typed
//! requests. It resolves the repo, routes to the actors and returns typed responses or typed
//! errors; transports only parse and render.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use actix::{Actor, Addr, Context, Handler, Message, ResponseFuture};
use tokio::sync::mpsc::UnboundedSender;

use super::format_unix;
use super::indexer::{AbortIndexRun, AddFiles, BeginIndexRun, CommitBatch, FinishIndexRun};
use super::ingestor::{ChunkFiles, IngestedFile, Ingestor, ScanRepo};
use super::repo_manager::{OpenRepo, RepoHandle, RepoManager};
use crate::config::Config;
use crate::index::{FileRecord, SearchParams};
use crate::ingest::{ChunkParams, ScannedFile};
use crate::protocol::{
    DocdexError, IndexProgress, IndexRequest, IndexSummary, RepoStatus, Result, SearchRequest, SearchResponse,
};

/// Files per chunking request: small enough to spread a batch over the Ingestor threads and
/// keep the Indexer fed, large enough that messaging costs nothing.
const CHUNK_GROUP_FILES: usize = 32;

pub struct ToolDispatcher {
    repo_manager: Addr<RepoManager>,
    ingestor: Addr<Ingestor>,
    config: Arc<Config>,
    default_repo_opt: Option<PathBuf>,
}

impl ToolDispatcher {
    pub fn new(
        repo_manager: Addr<RepoManager>,
        ingestor: Addr<Ingestor>,
        config: Arc<Config>,
        default_repo_opt: Option<PathBuf>,
    ) -> ToolDispatcher {
        ToolDispatcher { repo_manager, ingestor, config, default_repo_opt }
    }

    fn resolve_repo(&self, repo_opt: Option<PathBuf>) -> Result<PathBuf> {
        repo_opt.or_else(|| self.default_repo_opt.clone()).ok_or_else(|| {
            DocdexError::invalid("no repo given and the daemon has no default repo")
                .with_hint("pass `repo=<path>` (HTTP) or `--repo <path>` (CLI)")
        })
    }
}

impl Actor for ToolDispatcher {
    type Context = Context<Self>;
}

/// Search a repo.
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct Search(pub SearchRequest);

/// Index or refresh a repo, optionally reporting progress.
#[derive(Message)]
#[rtype(result = "Result<IndexSummary>")]
pub struct Index {
    pub request: IndexRequest,
    pub progress_opt: Option<UnboundedSender<IndexProgress>>,
}

/// What is indexed for a repo; `None` means the default repo.
#[derive(Message)]
#[rtype(result = "Result<RepoStatus>")]
pub struct Status(pub Option<PathBuf>);

/// Opens an indexed repo for reading; a repo whose first index never completed is an error.
async fn open_indexed(repo_manager: &Addr<RepoManager>, path: PathBuf) -> Result<Arc<RepoHandle>> {
    let handle = repo_manager.send(OpenRepo { path, create: false }).await??;
    let index = Arc::clone(&handle.index);
    let state =
        tokio::task::spawn_blocking(move || index.store.read_txn().and_then(|t| index.store.run_state(&t))).await??;
    if !state.indexed() {
        let path = handle.meta.canonical_path.clone();
        let err = DocdexError::repo_not_indexed(&path);
        return Err(if state.interrupted() {
            DocdexError { message: format!("the first index of {path} did not finish"), ..err }
        } else {
            err
        });
    }
    Ok(handle)
}

impl Handler<Search> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, Search(request): Search, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(request.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let max_hits_per_file = self.config.search.max_hits_per_file;
        Box::pin(async move {
            request.validate()?;
            let started = Instant::now();
            let handle = open_indexed(&repo_manager, repo?).await?;
            let params = SearchParams { limit: request.limit, max_hits_per_file };
            let query = request.query.clone();
            let index = Arc::clone(&handle.index);
            let outcome = tokio::task::spawn_blocking(move || index.search(&query, params)).await??;
            Ok(SearchResponse {
                query: request.query,
                took_ms: started.elapsed().as_secs_f64() * 1000.0,
                top_score: outcome.top_score,
                hits: outcome.hits,
            })
        })
    }
}

impl Handler<Status> for ToolDispatcher {
    type Result = ResponseFuture<Result<RepoStatus>>;

    fn handle(&mut self, Status(repo_opt): Status, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(repo_opt);
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move {
            let handle = repo_manager.send(OpenRepo { path: repo?, create: false }).await??;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let state = index.store.run_state(&index.store.read_txn()?)?;
                Ok(RepoStatus {
                    repo: handle.meta.canonical_path.clone(),
                    fingerprint: handle.meta.fingerprint.clone(),
                    state_dir: index.state_dir.display().to_string(),
                    indexed: state.indexed(),
                    interrupted: state.interrupted(),
                    last_index_started: state.last_started.map(format_unix),
                    last_index_completed: state.last_completed.map(format_unix),
                    files: state.files,
                    chunks: index.num_chunks(),
                    bytes: state.bytes,
                    index_size_bytes: index.size_on_disk(),
                })
            })
            .await?
        })
    }
}

impl Handler<Index> for ToolDispatcher {
    type Result = ResponseFuture<Result<IndexSummary>>;

    fn handle(&mut self, msg: Index, _: &mut Context<Self>) -> Self::Result {
        let repo_manager = self.repo_manager.clone();
        let ingestor = self.ingestor.clone();
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            let handle = repo_manager.send(OpenRepo { path: msg.request.repo.clone(), create: true }).await??;
            let result = run_index(&handle, &ingestor, &config, msg.progress_opt).await;
            if result.is_err() {
                // Roll back whatever the failed run left uncommitted and free the writer.
                if let Err(err) = handle.indexer.send(AbortIndexRun).await {
                    tracing::warn!(error = %err, "could not abort the index run");
                }
            }
            result
        })
    }
}

/// Splits the files to (re)read into write batches by count and bytes. Batches bound the
/// memory a run holds and are the unit of progress and of crash recovery.
pub fn plan_batches(files: Vec<ScannedFile>, max_files: usize, max_bytes: u64) -> Vec<Vec<ScannedFile>> {
    let mut batches = Vec::new();
    let mut current: Vec<ScannedFile> = Vec::new();
    let mut bytes = 0u64;
    for file in files {
        if !current.is_empty() && (current.len() >= max_files.max(1) || bytes + file.size > max_bytes) {
            batches.push(std::mem::take(&mut current));
            bytes = 0;
        }
        bytes += file.size;
        current.push(file);
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

/// Whether a file must be re-read: new, or its size or mtime differ from the last run.
fn needs_read(file: &ScannedFile, known: Option<&FileRecord>) -> bool {
    match known {
        Some(record) => record.size != file.size || u128::from(record.mtime_ns) != file.mtime_ns,
        None => true,
    }
}

async fn run_index(
    handle: &RepoHandle,
    ingestor: &Addr<Ingestor>,
    config: &Config,
    progress_opt: Option<UnboundedSender<IndexProgress>>,
) -> Result<IndexSummary> {
    let started = Instant::now();
    let root = handle.index.root.clone();
    let known = handle.indexer.send(BeginIndexRun).await??;
    let scan =
        ingestor.send(ScanRepo { root: root.clone(), max_file_size_bytes: config.index.max_file_size_bytes }).await?;
    for err in &scan.walk_errors {
        tracing::warn!(error = %err, "skipped an entry while walking the repo");
    }
    let scanned_paths: std::collections::HashSet<&str> = scan.files.iter().map(|f| f.rel_path.as_str()).collect();
    let deleted: Vec<String> = known.keys().filter(|p| !scanned_paths.contains(p.as_str())).cloned().collect();
    let bytes_total: u64 = scan.files.iter().map(|f| f.size).sum();
    let mut summary = IndexSummary {
        repo: root.display().to_string(),
        fingerprint: handle.meta.fingerprint.clone(),
        files_scanned: scan.files.len() as u64,
        files_deleted: deleted.len() as u64,
        files_skipped: scan.too_large,
        ..IndexSummary::default()
    };
    let (to_read, untouched): (Vec<ScannedFile>, Vec<ScannedFile>) =
        scan.files.into_iter().partition(|f| needs_read(f, known.get(&f.rel_path)));
    summary.files_unchanged = untouched.len() as u64;
    let params = ChunkParams {
        max_lines: config.index.max_chunk_lines,
        target_lines: config.index.target_chunk_lines,
        ..ChunkParams::default()
    };
    let mut progress =
        IndexProgress { files_done: 0, files_total: to_read.len() as u64, bytes_done: 0, chunks_written: 0 };
    let report = |progress: &IndexProgress| {
        if let Some(tx) = &progress_opt {
            // The receiver may have gone away (client disconnected); indexing goes on.
            let _ = tx.send(progress.clone());
        }
    };
    report(&progress);

    // Pipeline: every group of a batch is queued on the Ingestor pool at once (its threads
    // chunk in parallel) and handed to the Indexer as it comes back; the next batch is queued
    // before the current one commits, so parsing never waits for a commit.
    let batches = plan_batches(to_read, config.index.batch_max_files, config.index.batch_max_bytes as u64);
    let queue_batch = |batch: &[ScannedFile]| {
        batch
            .chunks(CHUNK_GROUP_FILES)
            .map(|group| {
                let known_hashes: HashMap<String, String> = group
                    .iter()
                    .filter_map(|f| known.get(&f.rel_path).map(|r| (f.rel_path.clone(), r.content_hash.clone())))
                    .collect();
                ingestor.send(ChunkFiles { files: group.to_vec(), known_hashes, params })
            })
            .collect::<Vec<_>>()
    };
    let mut queued = batches.first().map(|b| queue_batch(b));
    for (n, batch) in batches.iter().enumerate() {
        for request in queued.take().unwrap_or_default() {
            let ingested = request.await?;
            for file in &ingested {
                match file {
                    IngestedFile::Changed { .. } => summary.files_indexed += 1,
                    IngestedFile::Unchanged { .. } => summary.files_unchanged += 1,
                    IngestedFile::Skipped { path, reason, .. } => {
                        tracing::debug!(path = %path, reason = %reason, "skipped file");
                        summary.files_skipped += 1;
                    }
                }
            }
            summary.chunks_written += handle.indexer.send(AddFiles { files: ingested }).await??;
        }
        queued = batches.get(n + 1).map(|b| queue_batch(b));
        handle.indexer.send(CommitBatch).await??;
        let batch_bytes: u64 = batch.iter().map(|f| f.size).sum();
        summary.bytes_indexed += batch_bytes;
        progress = IndexProgress {
            files_done: progress.files_done + batch.len() as u64,
            bytes_done: progress.bytes_done + batch_bytes,
            chunks_written: summary.chunks_written,
            ..progress
        };
        report(&progress);
    }
    let state = handle.indexer.send(FinishIndexRun { deleted, bytes_total }).await??;
    summary.chunks_total = state.chunks;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: u64) -> ScannedFile {
        ScannedFile { rel_path: name.into(), abs_path: name.into(), size, mtime_ns: 1 }
    }

    #[test]
    fn batches_respect_file_and_byte_limits() {
        let files = vec![file("a", 10), file("b", 10), file("c", 10), file("d", 50), file("e", 1)];
        let batches = plan_batches(files, 2, 25);
        let names: Vec<Vec<&str>> = batches.iter().map(|b| b.iter().map(|f| f.rel_path.as_str()).collect()).collect();
        assert_eq!(names, vec![vec!["a", "b"], vec!["c"], vec!["d"], vec!["e"]]);
        assert!(plan_batches(Vec::new(), 2, 25).is_empty());
    }

    #[test]
    fn unchanged_size_and_mtime_skip_the_read() {
        let record = FileRecord { content_hash: "h".into(), size: 10, mtime_ns: 1, chunks: 1, language: "rust".into() };
        assert!(!needs_read(&file("a", 10), Some(&record)));
        assert!(needs_read(&file("a", 11), Some(&record)));
        assert!(needs_read(&file("a", 10), None));
    }
}
