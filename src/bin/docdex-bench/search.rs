//! `docdexd bench`: indexing throughput and HTTP search latency on a real repository.
//!
//! Uses a throwaway state directory so the user's state is untouched. Queries are derived
//! from the repo itself (file names and their folders, as a developer would type them) plus
//! a fixed set of natural-language questions, so any repo can be measured.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use docdex::cli::output::human_bytes;
use docdex::cli::progress::index_with_progress;
use docdex::config::LoadedConfig;
use docdex::http::{self, HttpState};
use docdex::protocol::{DocdexError, Result};

const QUESTIONS: &[&str] = &[
    "how to run a blocking function without stalling the runtime",
    "spawn a task",
    "read a file into a string",
    "parse command line arguments",
    "handle errors and retries",
    "open a tcp connection with timeout",
    "shutdown gracefully",
    "configuration defaults",
    "cancel all tasks",
    "lock a mutex",
];

#[derive(Debug, Serialize)]
struct BenchReport {
    /// `embedded` or `postgres`.
    store: String,
    repo: String,
    files: u64,
    chunks: u64,
    source_bytes: u64,
    /// Median over `index_runs` runs, each from scratch (a shared machine's noise is large).
    index_seconds: f64,
    index_mb_per_s: f64,
    /// Every run's seconds, in order.
    index_runs: Vec<f64>,
    index_size_bytes: u64,
    /// Background embedding of every chunk (absent with --lexical-only or without a model).
    embedding_seconds: Option<f64>,
    /// From the start of the index run to every chunk having a static vector.
    static_vectors_seconds: Option<f64>,
    /// Dense and hybrid were measured on the static vectors (`--static-only`).
    static_only: bool,
    embedding_chunks_per_s: Option<f64>,
    /// Latency of `GET /v1/search` per mode, measured by the client.
    searches: Vec<LatencyReport>,
    /// With `--questions`: success@5, MRR@10, nDCG@10 per split, mode and kind, and misses.
    questions: Option<crate::questions::QuestionsReport>,
    /// Share of the exact 10 nearest chunks that arroy returns for the bench queries, at the
    /// depth and `search_k` the daemon uses.
    dense_recall_at_10: Option<f64>,
    /// Embedding one uncached query through the embedder actor, p50 and p95 (ms): the part of
    /// a hybrid search the model costs.
    query_embedding_ms: Option<(f64, f64)>,
    /// Stored vector writes per second (the store's part of background embedding).
    vector_writes_per_s: Option<f64>,
    /// Peak resident memory of the process (VmHWM).
    peak_rss_bytes: u64,
    notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct LatencyReport {
    mode: String,
    queries: usize,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
    /// Time spent inside the daemon (`took_ms`), p50.
    server_p50_ms: f64,
}

/// Peak resident set size of this process, from /proc (0 where unavailable).
fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

/// The client the benchmarks ask `serve_loopback`'s server with. It drops a connection idle
/// for 2 s, before the server's 5-second keep-alive closes it: a request sent on a connection
/// the server is closing fails ("error sending request"), as one did after an index run's
/// pause between two measured passes.
pub fn loopback_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_idle_timeout(std::time::Duration::from_secs(2))
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// The HTTP API over `actors` on a loopback port, no token, the repo as default: what the
/// benchmarks time their requests against.
pub fn serve_loopback(
    actors: &docdex::actors::system::Actors,
    repo: &Path,
    loaded: &LoadedConfig,
) -> Result<(actix_web::dev::Server, std::net::SocketAddr)> {
    let state = HttpState {
        dispatcher: actors.dispatcher.clone(),
        default_repo_opt: Some(std::fs::canonicalize(repo)?),
        default_limit: 10,
        auth_token_opt: None,
        host_policy: std::sync::Arc::new(http::guard::HostPolicy::new(&[], false)),
        client_slots: http::guard::ClientSlots::new(usize::MAX),
        mcp_budget_tokens: loaded.config.server.mcp_max_result_tokens,
        run_tests_refusal: Some(docdex::protocol::DocdexError::invalid("benchmarks run no tests")),
    };
    Ok(http::start(state, "127.0.0.1:0".parse().expect("literal address"), 2)?)
}

/// Value at quantile `q` (0..=1) of sorted samples, nearest-rank.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn queries_for(repo: &Path, max_file_size: u64, count: usize) -> Vec<String> {
    let scan = docdex::ingest::scan_repo(repo, docdex::ingest::SizeLimits::uniform(max_file_size));
    let mut queries: Vec<String> = QUESTIONS.iter().map(|q| q.to_string()).collect();
    for file in &scan.files {
        let mut parts = file.rel_path.rsplit('/');
        let stem = parts.next().unwrap_or("").split('.').next().unwrap_or("");
        let folder = parts.next().unwrap_or("");
        if !stem.is_empty() && stem != "mod" && stem != "lib" {
            queries.push(if folder.is_empty() { stem.to_string() } else { format!("{folder} {stem}") });
        }
    }
    // Spread the picks over the whole repo, deterministically.
    let step = (queries.len() / count.max(1)).max(1);
    let mut picked: Vec<String> = queries.iter().step_by(step).take(count).cloned().collect();
    while picked.len() < count && !queries.is_empty() {
        picked.push(queries[picked.len() % queries.len()].clone());
    }
    picked
}

/// Recall@10 of the store's nearest-neighbour search against exact search over every vector
/// (1 for a repo small enough to be searched exactly; arroy's trees above that size).
async fn measure_dense_recall(actors: &docdex::actors::system::Actors, repo: &Path, queries: &[String]) -> Result<f64> {
    const K: usize = 10;
    let handle = actors
        .repo_manager
        .send(docdex::actors::repo_manager::OpenRepo { path: repo.to_path_buf(), create: false })
        .await??;
    let mut vectors = Vec::new();
    for query in queries.iter().take(100) {
        vectors.push(actors.embedder.send(docdex::actors::embedder::EmbedQuery::model(query.clone())).await??);
    }
    let index = std::sync::Arc::clone(&handle.index);
    tokio::task::spawn_blocking(move || {
        let rtxn = index.store.read_txn()?;
        let all = index.store.all_vectors(&rtxn)?;
        let (depth, search_k) = docdex::actors::tool_dispatcher::search::dense_depth_and_search_k(K);
        let truths: Vec<std::collections::HashSet<u32>> = vectors
            .iter()
            .map(|query| {
                let mut exact: Vec<(u32, f32)> =
                    all.iter().map(|(id, v)| (*id, v.iter().zip(query.iter()).map(|(a, b)| a * b).sum())).collect();
                exact.sort_by(|a, b| b.1.total_cmp(&a.1));
                exact.iter().take(K).map(|(id, _)| *id).collect()
            })
            .collect();
        let recall_at = |search_k: usize| -> Result<(f64, f64)> {
            let started = Instant::now();
            let mut found = 0usize;
            for (query, truth) in vectors.iter().zip(&truths) {
                let approx = index.store.nearest_chunks(&rtxn, query, depth, search_k)?;
                found += approx.iter().take(K).filter(|(id, _)| truth.contains(id)).count();
            }
            let ms = started.elapsed().as_secs_f64() * 1000.0 / vectors.len().max(1) as f64;
            Ok((found as f64 / (vectors.len().max(1) * K) as f64, ms))
        };
        // The trade-off around the daemon's setting, for the record.
        for factor in [0, depth * 15, depth * 50] {
            let (recall, ms) = recall_at(factor)?;
            eprintln!("dense recall@10 {recall:.3} at search_k {factor} ({ms:.2} ms per query)");
        }
        Ok(recall_at(search_k)?.0)
    })
    .await?
}

/// Times `queries` against `/v1/search` in `mode`, one request at a time.
async fn time_queries(client: &reqwest::Client, url: &str, mode: &str, queries: &[String]) -> Result<LatencyReport> {
    let mut client_ms = Vec::with_capacity(queries.len());
    let mut server_ms = Vec::with_capacity(queries.len());
    for query in queries {
        let started = Instant::now();
        let response = client
            .get(url)
            .query(&[("q", query.as_str()), ("limit", "10"), ("mode", mode)])
            .send()
            .await
            .map_err(|err| DocdexError::internal(format!("bench request failed: {err}")))?;
        let body: serde_json::Value =
            response.json().await.map_err(|err| DocdexError::internal(format!("bench response unreadable: {err}")))?;
        client_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        server_ms.push(body["took_ms"].as_f64().unwrap_or(0.0));
        if body["mode"] != mode {
            return Err(DocdexError::internal(format!(
                "asked for {mode}, the daemon answered {}: {body}",
                body["mode"]
            )));
        }
    }
    client_ms.sort_by(f64::total_cmp);
    server_ms.sort_by(f64::total_cmp);
    Ok(LatencyReport {
        mode: mode.to_string(),
        queries: client_ms.len(),
        p50_ms: percentile(&client_ms, 0.50),
        p95_ms: percentile(&client_ms, 0.95),
        p99_ms: percentile(&client_ms, 0.99),
        server_p50_ms: percentile(&server_ms, 0.50),
    })
}

/// What to measure.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    pub queries: usize,
    pub lexical_only: bool,
    /// Judged question files (one split each) for retrieval quality by mode.
    pub questions: Vec<std::path::PathBuf>,
    /// Index into this state directory and keep it (reruns reuse the index and the
    /// embedding cache) instead of a throwaway one; index runs are then not timed from scratch.
    pub state_dir_opt: Option<std::path::PathBuf>,
    pub json: bool,
    /// Index runs from scratch to time (at least one); the last one is searched.
    pub index_runs: usize,
    /// Also on the team store at this URL, side by side with the embedded one.
    pub store_url_opt: Option<String>,
    /// Static vectors only: the model's are not computed.
    pub static_only: bool,
}

/// Indexes `repo` into a throwaway state directory and returns the run's seconds.
async fn timed_index_run(loaded: &LoadedConfig, repo: &Path) -> Result<f64> {
    let scratch = tempfile::tempdir()?;
    let mut config = loaded.clone();
    config.config.core.global_state_dir = Some(scratch.path().to_path_buf());
    let actors = docdex::actors::system::start_actors(&config, Some(repo.to_path_buf()));
    let summary = index_with_progress(&actors, repo.to_path_buf()).await?;
    actors.repo_manager.send(docdex::actors::repo_manager::CloseAll).await?;
    Ok(summary.seconds)
}

/// Runs the benchmark on the configured store, or with `store_url_opt` on both stores, one
/// after the other, and prints them side by side.
pub async fn run(loaded: &LoadedConfig, repo: &Path, options: BenchOptions) -> Result<i32> {
    let Some(url) = options.store_url_opt.clone() else {
        let report = measure(loaded, repo, &options).await?;
        print_report(&report, options.json)?;
        return Ok(0);
    };
    let mut embedded = loaded.clone();
    embedded.config.store = docdex::config::StoreConfig::default();
    let mut postgres = loaded.clone();
    postgres.config.store.backend = docdex::config::STORE_POSTGRES.into();
    postgres.config.store.url = url;
    let mut reports = Vec::new();
    for (name, config) in [("embedded", &embedded), ("postgres", &postgres)] {
        eprintln!("== {name} store");
        let mut report = measure(config, repo, &options).await?;
        report.store = name.to_string();
        reports.push(report);
    }
    if options.json {
        docdex::outln!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        print_side_by_side(&reports);
    }
    Ok(0)
}

/// The repo's rows in the team store go, so that a run there indexes from scratch as it
/// does in a throwaway state directory.
fn forget_in_store(loaded: &LoadedConfig, repo: &Path) -> Result<()> {
    if loaded.config.store.backend != docdex::config::STORE_POSTGRES {
        return Ok(());
    }
    let pool = docdex::postgres::PgPool::open(&loaded.config.store.url)?;
    let canonical = std::fs::canonicalize(repo)?;
    pool.forget_repo(&docdex::actors::repo_manager::RepoFingerprint::of(&canonical).0)?;
    Ok(())
}

/// Stored vector writes per second: the repo's vectors written again into a scratch repo of
/// the same store, 64 to a transaction (as background embedding commits them).
fn vector_writes_per_s(loaded: &LoadedConfig, index: &docdex::index::RepoIndex) -> Result<f64> {
    let vectors = index.store.all_vectors(&index.store.read_txn()?)?;
    let scratch = tempfile::tempdir()?;
    let (target, pool_opt) = if loaded.config.store.backend == docdex::config::STORE_POSTGRES {
        let pool = docdex::postgres::PgPool::open(&loaded.config.store.url)?;
        let id = pool.repo_id("bench-vector-writes", "/bench-vector-writes")?;
        (docdex::index::RepoStore::open_postgres(pool.clone(), id), Some(pool))
    } else {
        (docdex::index::RepoStore::open(scratch.path())?, None)
    };
    let started = Instant::now();
    for batch in vectors.chunks(64) {
        let mut txn = target.write_txn()?;
        for (id, vector) in batch {
            target.put_vector(&mut txn, *id, vector)?;
        }
        target.build_vectors(&mut txn)?;
        txn.commit()?;
    }
    let rate = vectors.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);
    if let Some(pool) = pool_opt {
        pool.forget_repo("bench-vector-writes")?;
    }
    Ok(rate)
}

async fn measure(loaded: &LoadedConfig, repo: &Path, options: &BenchOptions) -> Result<BenchReport> {
    let BenchOptions {
        queries: query_count,
        lexical_only,
        questions: question_files,
        index_runs,
        state_dir_opt,
        static_only,
        ..
    } = options.clone();
    let mut questions = Vec::new();
    for path in &question_files {
        questions.extend(crate::questions::read_questions(path)?);
    }
    let scratch = tempfile::tempdir()?;
    let mut bench_config = loaded.clone();
    bench_config.config.embedding.model_vectors = !static_only;
    let index_runs = if state_dir_opt.is_some() { 1 } else { index_runs };
    bench_config.config.core.global_state_dir =
        Some(state_dir_opt.clone().unwrap_or_else(|| scratch.path().to_path_buf()));
    let mut notes = Vec::new();

    let mut index_seconds = Vec::new();
    for _ in 1..index_runs.max(1) {
        forget_in_store(loaded, repo)?;
        index_seconds.push(timed_index_run(loaded, repo).await?);
    }
    if state_dir_opt.is_none() {
        forget_in_store(loaded, repo)?;
    }
    let actors = docdex::actors::system::start_actors(&bench_config, Some(repo.to_path_buf()));
    let summary = index_with_progress(&actors, repo.to_path_buf()).await?;
    index_seconds.push(summary.seconds);
    let mut sorted_seconds = index_seconds.clone();
    sorted_seconds.sort_by(f64::total_cmp);
    let median_seconds = sorted_seconds[sorted_seconds.len() / 2];
    let mut embedding_seconds = None;
    let mut embedding_rate = None;
    let mut static_vectors_seconds = None;
    if !lexical_only {
        let embedded = docdex::cli::progress::embed_with_progress(&actors, repo.to_path_buf()).await?;
        if embedded.static_vectors > 0 {
            static_vectors_seconds = Some(summary.seconds + embedded.static_seconds);
        }
        match embedded.notice {
            Some(notice) => notes.push(format!("hybrid not measured: {notice}")),
            None => {
                let count = if static_only { embedded.static_vectors } else { embedded.embedded };
                embedding_seconds = Some(embedded.seconds);
                embedding_rate = Some(count as f64 / embedded.seconds.max(1e-9));
            }
        }
    }
    let status =
        actors.dispatcher.send(docdex::actors::tool_dispatcher::indexing::Status(Some(repo.to_path_buf()))).await??;

    let (server, addr) = serve_loopback(&actors, repo, loaded)?;
    let server_handle = server.handle();
    let server_task = actix::spawn(server);

    let client = loopback_client();
    let url = format!("http://{addr}/v1/search");
    let queries = queries_for(repo, loaded.config.index.max_file_size_bytes, query_count);
    // Warm the page cache, the searcher and the model with queries that are not measured, so
    // every measured hybrid query pays for its own embedding (none is in the query cache).
    let warmup: Vec<String> = (0..20).map(|i| format!("warm up query number {i}")).collect();
    let mut modes = vec!["lexical"];
    if embedding_seconds.is_some() {
        modes.push("hybrid");
    }
    let mut searches = Vec::new();
    for mode in &modes {
        time_queries(&client, &url, mode, &warmup).await?;
        searches.push(time_queries(&client, &url, mode, &queries).await?);
    }
    let model_measured = embedding_seconds.is_some() && !static_only;
    let query_embedding_ms = if model_measured {
        let mut samples = Vec::with_capacity(queries.len());
        for (i, query) in queries.iter().enumerate() {
            // Unseen text, so the query cache cannot answer.
            let text = format!("{query} {i} uncached");
            let started = Instant::now();
            actors.embedder.send(docdex::actors::embedder::EmbedQuery::model(text)).await??;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        samples.sort_by(f64::total_cmp);
        Some((percentile(&samples, 0.5), percentile(&samples, 0.95)))
    } else {
        None
    };
    let dense_recall_at_10 =
        if model_measured { Some(measure_dense_recall(&actors, repo, &queries).await?) } else { None };
    let vector_writes_per_s = if model_measured {
        let handle = actors
            .repo_manager
            .send(docdex::actors::repo_manager::OpenRepo { path: repo.to_path_buf(), create: false })
            .await??;
        let (config, index) = (loaded.clone(), std::sync::Arc::clone(&handle.index));
        Some(tokio::task::spawn_blocking(move || vector_writes_per_s(&config, &index)).await??)
    } else {
        None
    };
    let question_report = if questions.is_empty() {
        None
    } else {
        // Each ranking alone, then their fusion.
        let question_modes: &[&str] =
            if embedding_seconds.is_some() { &["lexical", "dense", "hybrid"] } else { &["lexical"] };
        let baseline = crate::file_bm25::FileBm25::build(repo, loaded.config.index.max_file_size_bytes);
        Some(crate::questions::run(&client, &url, &baseline, question_modes, &questions).await?)
    };
    server_handle.stop(true).await;
    if let Err(err) = server_task.await {
        tracing::debug!(error = %err, "bench server task");
    }

    actors.repo_manager.send(docdex::actors::repo_manager::CloseAll).await?;
    Ok(BenchReport {
        store: loaded.config.store.backend.clone(),
        repo: summary.repo.clone(),
        files: summary.files_scanned,
        chunks: summary.chunks_total,
        source_bytes: summary.bytes_indexed,
        index_seconds: median_seconds,
        index_mb_per_s: summary.bytes_indexed as f64 / 1e6 / median_seconds.max(1e-9),
        index_runs: index_seconds,
        index_size_bytes: status.index_size_bytes,
        embedding_seconds,
        embedding_chunks_per_s: embedding_rate,
        static_vectors_seconds,
        static_only,
        searches,
        questions: question_report,
        dense_recall_at_10,
        query_embedding_ms,
        vector_writes_per_s,
        peak_rss_bytes: peak_rss_bytes(),
        notes,
    })
}

fn print_report(report: &BenchReport, json: bool) -> Result<()> {
    if json {
        docdex::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        docdex::outln!("store           {}", report.store);
        docdex::outln!("repo            {}", report.repo);
        docdex::outln!(
            "corpus          {} files, {} chunks, {}",
            report.files,
            report.chunks,
            human_bytes(report.source_bytes)
        );
        let best = report.index_runs.iter().copied().fold(f64::INFINITY, f64::min);
        docdex::outln!(
            "index           {:.2} s, {:.1} MB/s (median of {} runs; best {:.2} s, {:.1} MB/s), {} on disk",
            report.index_seconds,
            report.index_mb_per_s,
            report.index_runs.len(),
            best,
            report.source_bytes as f64 / 1e6 / best.max(1e-9),
            human_bytes(report.index_size_bytes)
        );
        if let Some(seconds) = report.static_vectors_seconds {
            docdex::outln!("static vectors  every chunk {seconds:.1} s after the index run started");
        }
        if let (Some(seconds), Some(rate)) = (report.embedding_seconds, report.embedding_chunks_per_s) {
            let which = if report.static_only { "static vectors only" } else { "static, then the model" };
            docdex::outln!("embeddings      {seconds:.1} s, {rate:.1} chunks/s ({which})");
        }
        for s in &report.searches {
            docdex::outln!(
                "search {:<8} {} queries over HTTP: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms (server p50 {:.2} ms)",
                s.mode,
                s.queries,
                s.p50_ms,
                s.p95_ms,
                s.p99_ms,
                s.server_p50_ms
            );
        }
        if let Some((p50, p95)) = report.query_embedding_ms {
            docdex::outln!("query embedding p50 {p50:.2} ms, p95 {p95:.2} ms (uncached, through the embedder actor)");
        }
        if let Some(recall) = report.dense_recall_at_10 {
            docdex::outln!("dense recall@10 {recall:.3} (approximate vs exact nearest neighbours)");
        }
        if let Some(rate) = report.vector_writes_per_s {
            docdex::outln!("vector writes   {rate:.0}/s (stored, 64 a transaction)");
        }
        docdex::outln!("peak RSS        {}", human_bytes(report.peak_rss_bytes));
        for note in &report.notes {
            docdex::outln!("note: {note}");
        }
        if let Some(questions) = &report.questions {
            docdex::outln!();
            crate::questions::print(questions);
        }
    }
    Ok(())
}

/// The two stores' figures in two columns.
fn print_side_by_side(reports: &[BenchReport]) {
    let cell = |f: &dyn Fn(&BenchReport) -> String| -> String {
        reports.iter().map(|r| format!("{:>22}", f(r))).collect::<Vec<_>>().join("")
    };
    docdex::outln!("{:<28}{}", "", cell(&|r| r.store.clone()));
    docdex::outln!("{:<28}{}", "repo", cell(&|r| format!("{} chunks", r.chunks)));
    docdex::outln!(
        "{:<28}{}",
        "index (median)",
        cell(&|r| format!("{:.2} s {:.1} MB/s", r.index_seconds, r.index_mb_per_s))
    );
    docdex::outln!("{:<28}{}", "index size", cell(&|r| human_bytes(r.index_size_bytes)));
    docdex::outln!(
        "{:<28}{}",
        "embedding",
        cell(&|r| r.embedding_chunks_per_s.map(|x| format!("{x:.1} chunks/s")).unwrap_or_else(|| "-".into()))
    );
    docdex::outln!(
        "{:<28}{}",
        "vector writes",
        cell(&|r| r.vector_writes_per_s.map(|x| format!("{x:.0}/s")).unwrap_or_else(|| "-".into()))
    );
    for mode in ["lexical", "hybrid"] {
        let of = |r: &BenchReport| r.searches.iter().find(|s| s.mode == mode).map(|s| (s.p50_ms, s.p95_ms));
        docdex::outln!(
            "{:<28}{}",
            format!("{mode} p50 / p95 (HTTP)"),
            cell(&|r| of(r).map(|(a, b)| format!("{a:.2} / {b:.2} ms")).unwrap_or_else(|| "-".into()))
        );
    }
    docdex::outln!(
        "{:<28}{}",
        "dense recall@10 vs exact",
        cell(&|r| r.dense_recall_at_10.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into()))
    );
    for report in reports {
        if let Some(questions) = &report.questions {
            docdex::outln!();
            docdex::outln!("{} store:", report.store);
            crate::questions::print(questions);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&samples, 0.5), 50.0);
        assert_eq!(percentile(&samples, 0.95), 95.0);
        assert_eq!(percentile(&samples, 0.99), 99.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
