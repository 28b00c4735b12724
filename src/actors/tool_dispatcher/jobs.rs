//! Long-running jobs the dispatcher drives through the actors: an index run (walk, chunk,
//! write in batches) and the background embedding of pending chunks.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use actix::Addr;
use tokio::sync::mpsc::UnboundedSender;

use crate::actors::embedder::{EmbedStaticTexts, EmbedTexts, Embedder, ProbeModel};
use crate::actors::indexer::{
    AddFiles, BeginIndexRun, CommitBatch, FinishIndexRun, PendingEmbeddings, PendingStaticEmbeddings, PutStaticMean,
    StaticMeanNeeded, StoreEmbeddings, StoreStaticEmbeddings,
};
use crate::actors::ingestor::{ChunkFiles, IngestedFile, Ingestor, ScanRepo};
use crate::actors::repo_manager::RepoHandle;
use crate::actors::tool_dispatcher::metrics::Metrics;
use crate::config::{Config, EmbeddingConfig};
use crate::index::static_model::MeanVector;
use crate::index::FileRecord;
use crate::ingest::{ChunkParams, ScannedFile};
use crate::protocol::{EmbedProgress, IndexProgress, IndexSummary, Result};

/// Files per chunking request: small, so the Tantivy thread gets its first documents a few
/// milliseconds into a run (32 files delayed that by ~30 ms, the same on every run), yet
/// large enough that messaging costs nothing.
const CHUNK_GROUP_FILES: usize = 8;

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

/// An index run: the whole repo is walked, or with `only_opt` only the paths a watcher saw
/// change (files, or folders whose content is re-listed); files the walk does not find are
/// deleted, among all known ones or among those changed paths.
pub async fn run_index(
    handle: &RepoHandle,
    ingestor: &Addr<Ingestor>,
    config: &Config,
    progress_opt: Option<UnboundedSender<IndexProgress>>,
    only_opt: Option<Vec<String>>,
) -> Result<IndexSummary> {
    let started = Instant::now();
    let root = handle.index.root.clone();
    let start = handle.indexer.send(BeginIndexRun).await??;
    // Code facts from other grammars: every file is read again, the whole repo walked.
    let rebuild_code = !start.code_current;
    if rebuild_code && !start.known.is_empty() {
        tracing::info!(repo = %root.display(), "symbols were built by other grammars: reading every file again");
    }
    let only_opt = if rebuild_code { None } else { only_opt };
    let full_walk = only_opt.is_none();
    let known = start.known;
    let changed_opt = only_opt.clone();
    let scan = ingestor.send(ScanRepo { root: root.clone(), limits: (&config.index).into(), only_opt }).await?;
    tracing::debug!(
        files = scan.files.len(),
        changed_paths = changed_opt.as_ref().map(Vec::len),
        since_start_ms = started.elapsed().as_millis() as u64,
        "repo scanned"
    );
    for err in &scan.walk_errors {
        tracing::warn!(error = %err, "skipped an entry while walking the repo");
    }
    let scanned_paths: std::collections::HashSet<&str> = scan.files.iter().map(|f| f.rel_path.as_str()).collect();
    let in_scope = |path: &str| match &changed_opt {
        None => true,
        Some(changed) => changed.iter().any(|c| {
            c.is_empty() || path == c || (path.starts_with(c.as_str()) && path.as_bytes().get(c.len()) == Some(&b'/'))
        }),
    };
    let deleted: Vec<String> =
        known.keys().filter(|p| in_scope(p) && !scanned_paths.contains(p.as_str())).cloned().collect();
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
        scan.files.into_iter().partition(|f| rebuild_code || needs_read(f, known.get(&f.rel_path)));
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
    // chunk in parallel) and handed to the Indexer as it comes back. The next batch is queued
    // before the current one's results are awaited, so the Ingestor threads never wait for the
    // Indexer or a commit; at most two batches are in memory.
    // Reads are checked against the root as it resolved when the repo was opened (and the
    // policy checked it), not as it resolves now: a root swapped for a link since cannot lead
    // reads outside (`ingest::open`).
    let canonical_root = PathBuf::from(&handle.meta.canonical_path);
    let batches = plan_batches(to_read, config.index.batch_max_files, config.index.batch_max_bytes as u64);
    let queue_batch = |batch: &[ScannedFile]| {
        batch
            .chunks(CHUNK_GROUP_FILES)
            .map(|group| {
                let known_hashes: HashMap<String, String> = group
                    .iter()
                    .filter(|_| !rebuild_code)
                    .filter_map(|f| known.get(&f.rel_path).map(|r| (f.rel_path.clone(), r.content_hash.clone())))
                    .collect();
                ingestor.send(ChunkFiles {
                    root: canonical_root.clone(),
                    limits: (&config.index).into(),
                    files: group.to_vec(),
                    known_hashes,
                    params,
                })
            })
            .collect::<Vec<_>>()
    };
    let mut queued = batches.first().map(|b| queue_batch(b));
    for (n, batch) in batches.iter().enumerate() {
        let requests = queued.take().unwrap_or_default();
        queued = batches.get(n + 1).map(|b| queue_batch(b));
        for request in requests {
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
        let commit_started = Instant::now();
        handle.indexer.send(CommitBatch).await??;
        tracing::debug!(
            batch = n,
            commit_ms = commit_started.elapsed().as_millis() as u64,
            since_start_ms = started.elapsed().as_millis() as u64,
            "batch committed"
        );
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
    let finish_started = Instant::now();
    let state = handle
        .indexer
        .send(FinishIndexRun { deleted, bytes_total, code_complete: full_walk || !rebuild_code })
        .await??;
    tracing::debug!(finish_ms = finish_started.elapsed().as_millis() as u64, "index run finished");
    summary.chunks_total = state.chunks;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// What an embedding job stored.
#[derive(Debug, Clone, Copy, Default)]
pub struct Embedded {
    /// Chunks given the model's vector.
    pub model: u64,
    /// Chunks given a static vector, and how long that took (the first part of the job).
    pub static_vectors: u64,
    pub static_seconds: f64,
}

/// How long the background embedding waits for interactive requests to pause before each
/// of the model's batches (`Metrics::until_quiet`), and the longest it waits. An agent asks
/// in bursts (an edit, then impact, search, the tests); the chunks keep their static vectors
/// meanwhile. On tokio, ten-file diffs asked while the bench's edits were embedded took p95
/// 61 ms against 33 ms with no model.
const YIELD_QUIET: Duration = Duration::from_millis(250);
const YIELD_LONGEST: Duration = Duration::from_secs(30);

/// Embeds a repo's pending chunks until none are left (or the model fails), reporting
/// progress: static vectors first, then (with `[embedding] model_vectors`) the model's,
/// giving chunks saved meanwhile their static vectors between the model's batches. Work in
/// the background passes `yield_to`: each of the model's batches waits for its requests to
/// pause.
pub async fn embed_pending(
    handle: &RepoHandle,
    embedder: &Addr<Embedder>,
    settings: &EmbeddingConfig,
    progress_opt: Option<&UnboundedSender<EmbedProgress>>,
    stop_opt: Option<&std::sync::atomic::AtomicBool>,
    yield_to: Option<&Metrics>,
) -> Result<Embedded> {
    let started = Instant::now();
    let static_vectors = static_pass(handle, embedder, settings, progress_opt, stop_opt).await;
    let mut embedded = Embedded { model: 0, static_vectors, static_seconds: started.elapsed().as_secs_f64() };
    if settings.model_vectors && embedder.send(ProbeModel).await?.available {
        embedded.model = embed_model_pending(handle, embedder, settings, progress_opt, stop_opt, yield_to).await?;
    }
    // Without the model the static vectors are what there is (the pending entries wait).
    Ok(embedded)
}

/// Chunks given their static vectors per store (a few milliseconds of tokenizing each).
const STATIC_PER_STORE: usize = 512;

/// `embed_static_pending` when static vectors are on. They are a bridge: a failure is logged
/// and the model's vectors still come. Returns how many it stored.
async fn static_pass(
    handle: &RepoHandle,
    embedder: &Addr<Embedder>,
    settings: &EmbeddingConfig,
    progress_opt: Option<&UnboundedSender<EmbedProgress>>,
    stop_opt: Option<&std::sync::atomic::AtomicBool>,
) -> u64 {
    if !settings.static_vectors {
        return 0;
    }
    embed_static_pending(handle, embedder, progress_opt, stop_opt).await.unwrap_or_else(|err| {
        tracing::warn!(repo = %handle.meta.canonical_path, error = %err.message, "static vectors stopped");
        0
    })
}

/// Gives every chunk waiting for one its static vector: seconds for a whole repo, so hybrid
/// search covers all of it long before the model is through. Returns how many it stored.
/// Static vectors that are off or cannot load leave the chunks waiting, quietly.
async fn embed_static_pending(
    handle: &RepoHandle,
    embedder: &Addr<Embedder>,
    progress_opt: Option<&UnboundedSender<EmbedProgress>>,
    stop_opt: Option<&std::sync::atomic::AtomicBool>,
) -> Result<u64> {
    if let Some(chunks) = handle.indexer.send(StaticMeanNeeded).await?? {
        match static_mean(handle, embedder, chunks, progress_opt, stop_opt).await? {
            Some(mean) => handle.indexer.send(PutStaticMean(mean)).await??,
            None => return Ok(0),
        }
    }
    let mut embedded = 0u64;
    loop {
        if stop_opt.is_some_and(|stop| stop.load(std::sync::atomic::Ordering::SeqCst)) {
            return Ok(embedded);
        }
        let batch = handle.indexer.send(PendingStaticEmbeddings { max: STATIC_PER_STORE, from: 0 }).await??;
        if batch.is_empty() {
            return Ok(embedded);
        }
        let texts: Vec<String> = batch.iter().map(|(_, text)| text.clone()).collect();
        let vectors = match embedder.send(EmbedStaticTexts(texts)).await? {
            Ok(vectors) => vectors,
            Err(err) if err.code == crate::protocol::ErrorCode::ModelUnavailable => return Ok(embedded),
            Err(err) => return Err(err),
        };
        let count = batch.len() as u64;
        let items = batch.into_iter().map(|(id, _)| id).zip(vectors).collect();
        let pending = handle.indexer.send(StoreStaticEmbeddings { items }).await??;
        embedded += count;
        if let Some(tx) = progress_opt {
            let _ = tx.send(EmbedProgress { embedded, pending, vectors: "static".into() });
        }
    }
}

/// The mean static vector of every chunk waiting for one (every chunk of the repo, when
/// `StaticMeanNeeded` said so): a first pass over them that stores nothing, so the second
/// stores each vector centred (`static_model::centre`). `None` when stopped, or when the
/// static vectors cannot load.
async fn static_mean(
    handle: &RepoHandle,
    embedder: &Addr<Embedder>,
    chunks: u64,
    progress_opt: Option<&UnboundedSender<EmbedProgress>>,
    stop_opt: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Option<Vec<f32>>> {
    let started = Instant::now();
    let mut mean = MeanVector::default();
    let mut from = 0u32;
    loop {
        if stop_opt.is_some_and(|stop| stop.load(std::sync::atomic::Ordering::SeqCst)) {
            return Ok(None);
        }
        let batch = handle.indexer.send(PendingStaticEmbeddings { max: STATIC_PER_STORE, from }).await??;
        let Some(&(last, _)) = batch.last() else { break };
        let texts: Vec<String> = batch.into_iter().map(|(_, text)| text).collect();
        match embedder.send(EmbedStaticTexts(texts)).await? {
            Ok(vectors) => vectors.iter().for_each(|vector| mean.add(vector)),
            Err(err) if err.code == crate::protocol::ErrorCode::ModelUnavailable => return Ok(None),
            Err(err) => return Err(err),
        }
        if let Some(tx) = progress_opt {
            // Minutes on a very large repo: said, as the passes after it are.
            let embedded = mean.count() as u64;
            let pending = chunks.saturating_sub(embedded);
            let _ = tx.send(EmbedProgress { embedded, pending, vectors: crate::protocol::STATIC_MEAN_PASS.into() });
        }
        match last.checked_add(1) {
            Some(next) => from = next,
            None => break,
        }
    }
    tracing::info!(
        repo = %handle.meta.canonical_path,
        chunks = mean.count(),
        ms = started.elapsed().as_millis() as u64,
        "mean static vector computed"
    );
    Ok((mean.count() > 0).then(|| mean.mean()))
}

/// Gives every chunk waiting for one the model's vector (and, with static vectors on, any
/// chunk saved meanwhile its static vector first, between batches: the model's pass over a
/// large repo takes minutes). Returns how many got the model's.
async fn embed_model_pending(
    handle: &RepoHandle,
    embedder: &Addr<Embedder>,
    settings: &EmbeddingConfig,
    progress_opt: Option<&UnboundedSender<EmbedProgress>>,
    stop_opt: Option<&std::sync::atomic::AtomicBool>,
    yield_to: Option<&Metrics>,
) -> Result<u64> {
    let mut embedded = 0u64;
    // A few inference batches per store: the ANN rebuild after each store is not free.
    let per_store = settings.batch_size.max(1) * 4;
    let stopped = || stop_opt.is_some_and(|stop| stop.load(std::sync::atomic::Ordering::SeqCst));
    loop {
        if stopped() {
            // What was stored stays; the rest is still pending for the next start.
            return Ok(embedded);
        }
        static_pass(handle, embedder, settings, None, stop_opt).await;
        if let Some(metrics) = yield_to {
            metrics.until_quiet(YIELD_QUIET, YIELD_LONGEST).await;
            if stopped() {
                return Ok(embedded);
            }
        }
        let mut batch = handle.indexer.send(PendingEmbeddings { max: per_store }).await??;
        if batch.is_empty() {
            return Ok(embedded);
        }
        // Inference pads each batch to its longest text: similar lengths together waste less.
        batch.sort_by_key(|(_, text)| text.len());
        let texts: Vec<String> = batch.iter().map(|(_, text)| text.clone()).collect();
        let inference = Instant::now();
        let vectors = embedder.send(EmbedTexts(texts)).await??;
        let inference_ms = inference.elapsed().as_millis() as u64;
        let count = batch.len() as u64;
        let items = batch.into_iter().zip(vectors).map(|((id, text), vector)| (id, text, vector)).collect();
        let store = Instant::now();
        let pending = handle.indexer.send(StoreEmbeddings { items }).await??;
        tracing::debug!(
            chunks = count,
            inference_ms,
            store_ms = store.elapsed().as_millis() as u64,
            pending,
            "embedded a batch"
        );
        embedded += count;
        if let Some(tx) = progress_opt {
            // Nobody listening any more is fine: the work goes on.
            let _ = tx.send(EmbedProgress { embedded, pending, vectors: "model".into() });
        }
    }
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
        let record = FileRecord {
            content_hash: "h".into(),
            size: 10,
            mtime_ns: 1,
            chunks: 1,
            language: "rust".into(),
            chunk_ids: vec![0],
            problem: None,
        };
        assert!(!needs_read(&file("a", 10), Some(&record)));
        assert!(needs_read(&file("a", 11), Some(&record)));
        assert!(needs_read(&file("a", 10), None));
    }
}
