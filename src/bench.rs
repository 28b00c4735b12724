//! `docdexd bench`: indexing throughput and HTTP search latency on a real repository.
//!
//! Uses a throwaway state directory so the user's state is untouched. Queries are derived
//! from the repo itself (file names and their folders, as a developer would type them) plus
//! a fixed set of natural-language questions, so any repo can be measured.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::cli::{human_bytes, index_with_progress};
use crate::config::LoadedConfig;
use crate::http::{self, HttpState};
use crate::protocol::{DocdexError, Result};

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
    repo: String,
    files: u64,
    chunks: u64,
    source_bytes: u64,
    index_seconds: f64,
    index_mb_per_s: f64,
    index_size_bytes: u64,
    queries: usize,
    http_p50_ms: f64,
    http_p95_ms: f64,
    http_p99_ms: f64,
    server_p50_ms: f64,
    server_p95_ms: f64,
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
    let scan = crate::ingest::scan_repo(repo, max_file_size);
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

pub async fn run(loaded: &LoadedConfig, repo: &Path, query_count: usize, json: bool) -> Result<i32> {
    let scratch = tempfile::tempdir()?;
    let mut bench_config = loaded.clone();
    bench_config.config.core.global_state_dir = Some(scratch.path().to_path_buf());
    let actors = crate::start_actors(&bench_config, Some(repo.to_path_buf()));

    let summary = index_with_progress(&actors, repo.to_path_buf()).await?;
    let status = actors.dispatcher.send(crate::actors::tool_dispatcher::Status(Some(repo.to_path_buf()))).await??;

    let state = HttpState {
        dispatcher: actors.dispatcher.clone(),
        default_repo_opt: Some(std::fs::canonicalize(repo)?),
        default_limit: 10,
        auth_token_opt: None,
    };
    let (server, addr) = http::start(state, "127.0.0.1:0".parse().expect("literal address"), 2)?;
    let server_handle = server.handle();
    let server_task = actix::spawn(server);

    let client = reqwest::Client::new();
    let url = format!("http://{addr}/v1/search");
    let queries = queries_for(repo, loaded.config.index.max_file_size_bytes, query_count);
    let mut client_ms = Vec::with_capacity(queries.len());
    let mut server_ms = Vec::with_capacity(queries.len());
    // The first pass warms the page cache and the searcher; the second is measured.
    for measured in [false, true] {
        for query in &queries {
            let started = Instant::now();
            let response = client
                .get(&url)
                .query(&[("q", query.as_str()), ("limit", "10")])
                .send()
                .await
                .map_err(|err| DocdexError::internal(format!("bench request failed: {err}")))?;
            let body: serde_json::Value = response
                .json()
                .await
                .map_err(|err| DocdexError::internal(format!("bench response unreadable: {err}")))?;
            if measured {
                client_ms.push(started.elapsed().as_secs_f64() * 1000.0);
                server_ms.push(body["took_ms"].as_f64().unwrap_or(0.0));
            }
        }
    }
    server_handle.stop(true).await;
    if let Err(err) = server_task.await {
        tracing::debug!(error = %err, "bench server task");
    }
    client_ms.sort_by(f64::total_cmp);
    server_ms.sort_by(f64::total_cmp);

    let report = BenchReport {
        repo: summary.repo.clone(),
        files: summary.files_scanned,
        chunks: summary.chunks_total,
        source_bytes: summary.bytes_indexed,
        index_seconds: summary.seconds,
        index_mb_per_s: summary.bytes_indexed as f64 / 1e6 / summary.seconds.max(1e-9),
        index_size_bytes: status.index_size_bytes,
        queries: client_ms.len(),
        http_p50_ms: percentile(&client_ms, 0.50),
        http_p95_ms: percentile(&client_ms, 0.95),
        http_p99_ms: percentile(&client_ms, 0.99),
        server_p50_ms: percentile(&server_ms, 0.50),
        server_p95_ms: percentile(&server_ms, 0.95),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("repo            {}", report.repo);
        println!(
            "corpus          {} files, {} chunks, {}",
            report.files,
            report.chunks,
            human_bytes(report.source_bytes)
        );
        println!(
            "index           {:.2} s, {:.1} MB/s, {} on disk",
            report.index_seconds,
            report.index_mb_per_s,
            human_bytes(report.index_size_bytes)
        );
        println!(
            "search (HTTP)   {} queries: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
            report.queries, report.http_p50_ms, report.http_p95_ms, report.http_p99_ms
        );
        println!("search (server) p50 {:.2} ms, p95 {:.2} ms", report.server_p50_ms, report.server_p95_ms);
    }
    actors.repo_manager.send(crate::actors::repo_manager::CloseAll).await?;
    Ok(0)
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
