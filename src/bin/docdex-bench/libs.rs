//! `docdexd bench-libs`: library docs, measured. `libs fetch` of a repo's direct
//! dependencies and of serde and tokio alone, cold (an empty cache, rustdoc builds from
//! nothing) and warm (everything cached: nothing to do; and into a fresh index); the crate
//! tools' warm latency; and `crate_search` quality on judged API questions
//! (`benches/crate-questions.tsv`), per ranking: lexical, dense and their fusion.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::search::percentile;
use docdex::actors::repo_manager::CloseAll;
use docdex::actors::tool_dispatcher::crates::{CrateSearch, ItemDocQuery};
use docdex::actors::tool_dispatcher::libs::LibsFetch;
use docdex::config::LoadedConfig;
use docdex::protocol::{CrateRef, DocdexError, LibsFetchRequest, LibsFetchSummary, Result, SearchMode};

#[derive(Debug, Serialize)]
struct FetchBench {
    what: String,
    libraries: usize,
    failed: usize,
    chunks: u64,
    /// Empty cache: downloads (when needed), rustdoc builds, extraction, ingest.
    cold_s: f64,
    /// Everything cached and ingested: detection and checks only.
    warm_s: f64,
    /// Cached, into a fresh index (what a second repo with the same dependencies pays).
    warm_fresh_index_s: f64,
}

#[derive(Debug, Serialize)]
struct LatencyBench {
    krate: String,
    version: String,
    items: usize,
    /// The first search of a crate version embeds its items (kept in the cache after).
    first_search_ms: f64,
    search_p50_ms: f64,
    search_p95_ms: f64,
    item_doc_p50_ms: f64,
    item_doc_p95_ms: f64,
}

#[derive(Debug, Serialize)]
struct QualityRow {
    krate: String,
    mode: String,
    questions: usize,
    success_at_5: f64,
    mrr_at_10: f64,
}

#[derive(Debug, Serialize)]
struct Miss {
    mode: String,
    krate: String,
    question: String,
    top: Vec<String>,
}

#[derive(Debug, Serialize)]
struct LibsBenchReport {
    repo: String,
    fetch: Vec<FetchBench>,
    latency: Vec<LatencyBench>,
    quality: Vec<QualityRow>,
    misses: Vec<Miss>,
}

/// A judged question: crate, question, relevant item paths.
struct Question {
    krate: String,
    text: String,
    relevant: Vec<String>,
}

fn read_questions(path: &Path) -> Result<Vec<Question>> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| DocdexError::invalid(format!("cannot read {}: {err}", path.display())))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [krate, question, relevant] = fields[..] else {
            return Err(DocdexError::invalid(format!(
                "{}:{}: expected crate<TAB>question<TAB>paths",
                path.display(),
                n + 1
            )));
        };
        out.push(Question {
            krate: krate.trim().to_string(),
            text: question.trim().to_string(),
            relevant: relevant.split(',').map(|p| p.trim().to_string()).collect(),
        });
    }
    Ok(out)
}

/// A scratch state directory of its own: an empty library cache and no indexes.
fn scratch_config(loaded: &LoadedConfig, dir: &Path) -> LoadedConfig {
    let mut bench = loaded.clone();
    bench.config.core.global_state_dir = Some(dir.join("state"));
    bench
}

async fn fetch(actors: &docdex::actors::system::Actors, request: &LibsFetchRequest) -> Result<(f64, LibsFetchSummary)> {
    let started = Instant::now();
    let msg = LibsFetch { request: request.clone(), progress_opt: None, embed_in_background: false };
    let summary = actors.dispatcher.send(msg).await??;
    Ok((started.elapsed().as_secs_f64(), summary))
}

/// Cold, warm and warm-into-a-fresh-index fetches of `request` in a scratch state.
async fn fetch_bench(loaded: &LoadedConfig, what: &str, request: LibsFetchRequest) -> Result<FetchBench> {
    let scratch = tempfile::tempdir()?;
    let bench = scratch_config(loaded, scratch.path());
    let actors = docdex::actors::system::start_actors(&bench, None);
    let (cold_s, summary) = fetch(&actors, &request).await?;
    eprintln!("bench-libs: {what}: cold {cold_s:.1} s ({} libraries)", summary.libraries.len());
    let (warm_s, _) = fetch(&actors, &request).await?;
    // Another repo with the same manifests (the top-level files copied): cache hits, a
    // fresh index to ingest into.
    let twin = tempfile::tempdir()?;
    if let Some(repo) = &request.repo_opt {
        for entry in std::fs::read_dir(repo)?.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::copy(entry.path(), twin.path().join(entry.file_name()))?;
            }
        }
    }
    let twin_request = LibsFetchRequest { repo_opt: Some(twin.path().to_path_buf()), ..request.clone() };
    let (warm_fresh_index_s, _) = fetch(&actors, &twin_request).await?;
    actors.repo_manager.send(CloseAll).await?;
    Ok(FetchBench {
        what: what.to_string(),
        libraries: summary.libraries.len(),
        failed: summary.failed.len(),
        chunks: summary.chunks_written,
        cold_s,
        warm_s,
        warm_fresh_index_s,
    })
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

fn p(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    percentile(values, q)
}

pub async fn run(
    loaded: &LoadedConfig,
    repo: PathBuf,
    questions_opt: Option<PathBuf>,
    runs: usize,
    json: bool,
) -> Result<i32> {
    let repo = docdex::daemon::client::absolute(&repo);
    let runs = runs.max(1);
    let direct = LibsFetchRequest { repo_opt: Some(repo.clone()), all: false, names: Vec::new() };
    let alone = |name: &str| LibsFetchRequest { repo_opt: Some(repo.clone()), all: false, names: vec![name.into()] };
    let mut fetches = Vec::new();
    for (what, request) in [
        ("serde alone", alone("serde")),
        ("tokio alone", alone("tokio")),
        ("the repo's direct dependencies", direct.clone()),
    ] {
        fetches.push(fetch_bench(loaded, what, request).await?);
    }

    // Latency and quality, in a state where the repo's dependencies are cached.
    let scratch = tempfile::tempdir()?;
    let bench = scratch_config(loaded, scratch.path());
    let actors = docdex::actors::system::start_actors(&bench, None);
    let questions = match &questions_opt {
        Some(path) => read_questions(path)?,
        None => Vec::new(),
    };
    let mut crates: Vec<String> = questions.iter().map(|q| q.krate.clone()).collect();
    crates.extend(["serde".to_string(), "tokio".to_string()]);
    crates.sort();
    crates.dedup();
    let crate_ref = |name: &str| CrateRef { name: name.into(), version_opt: None, repo_opt: Some(repo.clone()) };
    let search = |name: &str, query: &str, mode_opt: Option<SearchMode>, limit: usize| CrateSearch {
        crate_ref: crate_ref(name),
        query: query.into(),
        kind_opt: None,
        limit,
        mode_opt,
    };
    let mut latency = Vec::new();
    for name in &crates {
        // Fetch (cached for later), then the first search, which embeds the items.
        let started = Instant::now();
        let first = actors.dispatcher.send(search(name, "create a new value", None, 10)).await??;
        let first_search_ms = ms(started);
        let queries: Vec<&str> = questions.iter().filter(|q| &q.krate == name).map(|q| q.text.as_str()).collect();
        let queries = if queries.is_empty() { vec!["how to use this crate"] } else { queries };
        let (mut searches, mut docs) = (Vec::new(), Vec::new());
        let mut paths: Vec<String> = Vec::new();
        for round in 0..runs {
            for query in &queries {
                let started = Instant::now();
                let response = actors.dispatcher.send(search(name, query, None, 10)).await??;
                searches.push(ms(started));
                if round == 0 {
                    paths.extend(response.hits.into_iter().take(2).map(|h| h.path));
                }
            }
            for path in &paths {
                let started = Instant::now();
                actors.dispatcher.send(ItemDocQuery { crate_ref: crate_ref(name), path: path.clone() }).await??;
                docs.push(ms(started));
            }
        }
        latency.push(LatencyBench {
            krate: name.clone(),
            version: first.version.clone(),
            items: 0,
            first_search_ms,
            search_p50_ms: p(&mut searches, 0.5),
            search_p95_ms: p(&mut searches, 0.95),
            item_doc_p50_ms: p(&mut docs, 0.5),
            item_doc_p95_ms: p(&mut docs, 0.95),
        });
    }
    for bench in &mut latency {
        let summary = actors
            .dispatcher
            .send(docdex::actors::tool_dispatcher::crates::CrateSummaryQuery(crate_ref(&bench.krate)))
            .await??;
        bench.items = summary.items as usize;
    }

    let mut quality = Vec::new();
    let mut misses = Vec::new();
    for mode in [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid] {
        let mut per_crate: Vec<(String, bool, f64)> = Vec::new();
        for question in &questions {
            let response = actors.dispatcher.send(search(&question.krate, &question.text, Some(mode), 10)).await??;
            if response.mode != mode.as_str() {
                // The model is missing: no dense or hybrid figures to report.
                break;
            }
            let rank = response.hits.iter().position(|h| question.relevant.contains(&h.path));
            let found = rank.is_some_and(|r| r < 5);
            per_crate.push((question.krate.clone(), found, rank.map(|r| 1.0 / (r as f64 + 1.0)).unwrap_or(0.0)));
            if !found {
                misses.push(Miss {
                    mode: mode.as_str().into(),
                    krate: question.krate.clone(),
                    question: question.text.clone(),
                    top: response.hits.iter().take(3).map(|h| h.path.clone()).collect(),
                });
            }
        }
        if per_crate.len() != questions.len() || questions.is_empty() {
            continue;
        }
        let mut groups: Vec<String> = per_crate.iter().map(|(k, _, _)| k.clone()).collect();
        groups.sort();
        groups.dedup();
        groups.push("all".into());
        for group in groups {
            let rows: Vec<&(String, bool, f64)> =
                per_crate.iter().filter(|(k, _, _)| group == "all" || *k == group).collect();
            let n = rows.len() as f64;
            quality.push(QualityRow {
                krate: group,
                mode: mode.as_str().into(),
                questions: rows.len(),
                success_at_5: rows.iter().filter(|r| r.1).count() as f64 / n,
                mrr_at_10: rows.iter().map(|r| r.2).sum::<f64>() / n,
            });
        }
    }
    actors.repo_manager.send(CloseAll).await?;

    let report = LibsBenchReport { repo: repo.display().to_string(), fetch: fetches, latency, quality, misses };
    if json {
        docdex::cli::output::print_out(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        docdex::cli::output::print_out(&render(&report))?;
    }
    Ok(0)
}

fn render(r: &LibsBenchReport) -> String {
    let mut out = format!("libs fetch ({})\n", r.repo);
    for f in &r.fetch {
        out.push_str(&format!(
            "  {:<32} {:>3} libraries ({} failed), {:>6} chunks: cold {:>6.1} s, warm {:>5.2} s, warm into a fresh index {:>5.2} s\n",
            f.what, f.libraries, f.failed, f.chunks, f.cold_s, f.warm_s, f.warm_fresh_index_s
        ));
    }
    out.push_str("crate tools (warm)\n");
    for l in &r.latency {
        out.push_str(&format!(
            "  {} {} ({} items): first search {:.0} ms; crate_search p50 {:.1} ms p95 {:.1} ms; item_doc p50 {:.2} ms p95 {:.2} ms\n",
            l.krate, l.version, l.items, l.first_search_ms, l.search_p50_ms, l.search_p95_ms, l.item_doc_p50_ms, l.item_doc_p95_ms
        ));
    }
    if !r.quality.is_empty() {
        out.push_str("crate_search quality (judged questions)\n");
        for q in &r.quality {
            out.push_str(&format!(
                "  {:<6} {:<8} n={:<3} success@5 {:.2}  MRR@10 {:.3}\n",
                q.krate, q.mode, q.questions, q.success_at_5, q.mrr_at_10
            ));
        }
    }
    for m in &r.misses {
        out.push_str(&format!("  miss [{}] {}: {} -> {}\n", m.mode, m.krate, m.question, m.top.join(", ")));
    }
    out
}
