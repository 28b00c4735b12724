//! One search over several repos, measured against a search of one (`bench-across`):
//! judged questions about some of the repos asked of their repo alone and of all of them
//! (success@5 and MRR@10 side by side, per set and mode), and the latency of both.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::questions::{read_questions, score, summarize, Question};
use crate::search::{percentile, serve_loopback};
use docdex::cli::progress::{embed_with_progress, index_with_progress};
use docdex::config::LoadedConfig;
use docdex::protocol::{DocdexError, Result};

/// A judged set and the repo its questions are about.
#[derive(Debug, Clone)]
pub struct JudgedSet {
    pub repo: PathBuf,
    pub questions: PathBuf,
}

/// `REPO=FILE`.
pub fn parse_set(text: &str) -> std::result::Result<JudgedSet, String> {
    let (repo, questions) = text.split_once('=').ok_or_else(|| format!("`{text}` is not REPO=QUESTIONS"))?;
    Ok(JudgedSet { repo: PathBuf::from(repo), questions: PathBuf::from(questions) })
}

#[derive(Debug, Serialize)]
struct Quality {
    set: String,
    mode: String,
    questions: usize,
    alone_success_at_5: f64,
    across_success_at_5: f64,
    alone_mrr_at_10: f64,
    across_mrr_at_10: f64,
}

#[derive(Debug, Serialize)]
struct Latency {
    mode: String,
    requests: usize,
    alone_p50_ms: f64,
    alone_p95_ms: f64,
    across_p50_ms: f64,
    across_p95_ms: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    repos: Vec<RepoSize>,
    quality: Vec<Quality>,
    latency: Vec<Latency>,
    notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct RepoSize {
    repo: String,
    files: u64,
    chunks: u64,
}

/// One search: the hits' (repo, path), and the client-side milliseconds.
async fn ask(client: &reqwest::Client, url: &str, params: &[(&str, &str)]) -> Result<(Vec<(String, String)>, f64)> {
    let started = Instant::now();
    let response = client
        .get(url)
        .query(params)
        .send()
        .await
        .map_err(|err| DocdexError::internal(format!("bench request failed: {err}")))?;
    let body: serde_json::Value =
        response.json().await.map_err(|err| DocdexError::internal(format!("bench response unreadable: {err}")))?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let hits = body["hits"].as_array().ok_or_else(|| DocdexError::internal(format!("not a search answer: {body}")))?;
    let hits = hits
        .iter()
        .map(|h| (h["repo"].as_str().unwrap_or("").to_string(), h["path"].as_str().unwrap_or("").to_string()))
        .collect();
    Ok((hits, ms))
}

/// The paths of the hits of `repo` (every hit when they name none), each other repo's hit
/// kept in place as a miss.
fn paths_in(hits: &[(String, String)], repo: &str) -> Vec<String> {
    hits.iter()
        .map(|(hit_repo, path)| if hit_repo.is_empty() || hit_repo == repo { path.clone() } else { String::new() })
        .collect()
}

pub async fn run(
    loaded: &LoadedConfig,
    repos: Vec<PathBuf>,
    sets: Vec<JudgedSet>,
    state_dir_opt: Option<PathBuf>,
    lexical_only: bool,
    json: bool,
) -> Result<i32> {
    let canonical = |p: &Path| -> Result<PathBuf> {
        std::fs::canonicalize(p).map_err(|err| DocdexError::invalid(format!("{}: {err}", p.display())))
    };
    let mut roots: Vec<PathBuf> = repos.iter().map(|r| canonical(r)).collect::<Result<_>>()?;
    let mut judged: Vec<(PathBuf, Vec<Question>)> = Vec::new();
    for set in &sets {
        let root = canonical(&set.repo)?;
        if !roots.contains(&root) {
            roots.push(root.clone());
        }
        judged.push((root, read_questions(&set.questions)?));
    }
    if roots.len() < 2 {
        return Err(DocdexError::invalid("name at least two repos (--repos, and the repos of --set)"));
    }
    let scratch = tempfile::tempdir()?;
    let mut config = loaded.clone();
    config.config.core.global_state_dir = Some(state_dir_opt.unwrap_or_else(|| scratch.path().to_path_buf()));
    let actors = docdex::actors::system::start_actors(&config, Some(roots[0].clone()));
    let mut notes = Vec::new();
    let mut sizes = Vec::new();
    let mut hybrid = !lexical_only;
    for root in &roots {
        let summary = index_with_progress(&actors, root.clone()).await?;
        sizes.push(RepoSize { repo: summary.repo.clone(), files: summary.files_scanned, chunks: summary.chunks_total });
        if hybrid {
            if let Some(notice) = embed_with_progress(&actors, root.clone()).await?.notice {
                notes.push(format!("hybrid not measured: {notice}"));
                hybrid = false;
            }
        }
    }
    let (server, addr) = serve_loopback(&actors, &roots[0], loaded)?;
    let server_handle = server.handle();
    let server_task = actix::spawn(server);
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/v1/search");
    let all = roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(",");
    let modes: &[&str] = if hybrid { &["lexical", "hybrid"] } else { &["lexical"] };
    let mut quality = Vec::new();
    let mut latency = Vec::new();
    for &mode in modes {
        // Unmeasured warm-up: page cache, searchers, the model.
        for root in &roots {
            let repo = root.display().to_string();
            ask(&client, &url, &[("q", "warm up"), ("mode", mode), ("repo", repo.as_str())]).await?;
        }
        let (mut alone_ms, mut across_ms) = (Vec::new(), Vec::new());
        for (root, questions) in &judged {
            let repo = root.display().to_string();
            let (mut alone, mut across) = (Vec::new(), Vec::new());
            for question in questions {
                let base = [("q", question.text.as_str()), ("mode", mode), ("limit", "10")];
                let (hits, ms) = ask(&client, &url, &[&base[..], &[("repo", repo.as_str())]].concat()).await?;
                alone_ms.push(ms);
                alone.push(score(&paths_in(&hits, &repo), &question.expected));
                let (hits, ms) = ask(&client, &url, &[&base[..], &[("repos", all.as_str())]].concat()).await?;
                across_ms.push(ms);
                across.push(score(&paths_in(&hits, &repo), &question.expected));
            }
            let set = questions.first().map(|q| q.split.clone()).unwrap_or_default();
            let alone = summarize(&set, mode, "all", alone.iter());
            let across = summarize(&set, mode, "all", across.iter());
            quality.push(Quality {
                set,
                mode: mode.to_string(),
                questions: questions.len(),
                alone_success_at_5: alone.success_at_5,
                across_success_at_5: across.success_at_5,
                alone_mrr_at_10: alone.mrr_at_10,
                across_mrr_at_10: across.mrr_at_10,
            });
        }
        alone_ms.sort_by(f64::total_cmp);
        across_ms.sort_by(f64::total_cmp);
        latency.push(Latency {
            mode: mode.to_string(),
            requests: alone_ms.len(),
            alone_p50_ms: percentile(&alone_ms, 0.5),
            alone_p95_ms: percentile(&alone_ms, 0.95),
            across_p50_ms: percentile(&across_ms, 0.5),
            across_p95_ms: percentile(&across_ms, 0.95),
        });
    }
    server_handle.stop(true).await;
    if let Err(err) = server_task.await {
        tracing::debug!(error = %err, "bench server task");
    }
    let report = Report { repos: sizes, quality, latency, notes };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    println!("{} repos searched as one:", report.repos.len());
    for size in &report.repos {
        println!("  {:>6} chunks {:>5} files  {}", size.chunks, size.files, size.repo);
    }
    println!("\nsuccess@5 / MRR@10, each question asked of its repo alone and of all {}:", report.repos.len());
    println!("  {:<28} {:<8} {:>4}  {:>12} {:>12}", "set", "mode", "n", "alone", "across");
    for q in &report.quality {
        println!(
            "  {:<28} {:<8} {:>4}  {:>5.3}/{:<6.3} {:>5.3}/{:<6.3}",
            q.set,
            q.mode,
            q.questions,
            q.alone_success_at_5,
            q.alone_mrr_at_10,
            q.across_success_at_5,
            q.across_mrr_at_10
        );
    }
    println!("\nlatency over HTTP (ms), the same questions:");
    for l in &report.latency {
        println!(
            "  {:<8} alone p50 {:.1} p95 {:.1} | across p50 {:.1} p95 {:.1} ({:.2}x at p95, {} requests each)",
            l.mode,
            l.alone_p50_ms,
            l.alone_p95_ms,
            l.across_p50_ms,
            l.across_p95_ms,
            l.across_p95_ms / l.alone_p95_ms.max(1e-9),
            l.requests
        );
    }
    for note in &report.notes {
        println!("note: {note}");
    }
    Ok(0)
}
