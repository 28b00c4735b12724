//! One search over several repos, measured against a search of one (`bench-across`):
//! judged questions about some of the repos asked of their repo alone and of all of them
//! (success@5 and MRR@10 side by side, per set and mode), and the latency of both.
//!
//! A question judged on one repo may be answered in another (serde's `Visitor` trait and
//! syn's `Visit`; regex's byte search and memchr's), which its set cannot know. Pooled
//! judgments (`--judgments`, TREC's method: every file a search put in a question's first
//! five, of any repo, graded by an assessor who did not know where the question came from)
//! count those too, and name the questions whose answer lives in one repo only.

use std::collections::{HashMap, HashSet};
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

/// Pooled judgments: per question, the files (`REPO-NAME/PATH`, the repo's folder name)
/// graded as answering it.
#[derive(Debug, Default)]
pub struct Judgments {
    answers: HashMap<String, HashSet<String>>,
}

/// The grade a judged file needs to count as an answer (2: answers; 1: related; 0: not).
const ANSWER_GRADE: u8 = 2;

impl Judgments {
    /// `question<TAB>REPO-NAME/PATH<TAB>grade[<TAB>why]` lines; `#` starts a comment.
    pub fn parse(text: &str) -> std::result::Result<Judgments, String> {
        let mut judgments = Judgments::default();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let (Some(question), Some(file), Some(grade)) = (fields.first(), fields.get(1), fields.get(2)) else {
                return Err(format!("line {}: expected question, file and grade separated by tabs", number + 1));
            };
            let grade: u8 = grade
                .trim()
                .parse()
                .ok()
                .filter(|g| *g <= 2)
                .ok_or_else(|| format!("line {}: the grade `{grade}` is not 0, 1 or 2", number + 1))?;
            if !file.contains('/') {
                return Err(format!("line {}: `{file}` is not REPO-NAME/PATH", number + 1));
            }
            let answers = judgments.answers.entry(question.trim().to_string()).or_default();
            if grade >= ANSWER_GRADE {
                answers.insert(file.trim().to_string());
            }
        }
        Ok(judgments)
    }

    pub fn read(path: &Path) -> Result<Judgments> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| DocdexError::invalid(format!("cannot read {}: {err}", path.display())))?;
        Judgments::parse(&text).map_err(|err| DocdexError::invalid(format!("{}: {err}", path.display())))
    }

    /// The files answering `question` (`REPO-NAME/PATH`): its set's files in `repo_name` and
    /// every file judged to answer it; whether one of them lies in another repo.
    fn answers(&self, question: &Question, repo_name: &str) -> (Vec<String>, bool) {
        let mut files: Vec<String> = question.expected.iter().map(|path| format!("{repo_name}/{path}")).collect();
        let judged = self.answers.get(question.text.trim());
        let elsewhere = judged.is_some_and(|judged| {
            judged.iter().any(|file| file.split_once('/').is_some_and(|(repo, _)| repo != repo_name))
        });
        for file in judged.into_iter().flatten() {
            if !files.contains(file) {
                files.push(file.clone());
            }
        }
        (files, elsewhere)
    }
}

/// A repo's name in judgments: its folder's.
fn repo_name(repo: &str) -> &str {
    repo.trim_end_matches('/').rsplit('/').next().unwrap_or(repo)
}

/// The hits as `REPO-NAME/PATH` (hits that name no repo are `repo`'s).
fn files_of(hits: &[(String, String)], repo: &str) -> Vec<String> {
    hits.iter()
        .map(|(hit_repo, path)| format!("{}/{path}", repo_name(if hit_repo.is_empty() { repo } else { hit_repo })))
        .collect()
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
    /// With `--judgments`: a file of any repo judged to answer counts too.
    #[serde(skip_serializing_if = "Option::is_none")]
    judged: Option<JudgedQuality>,
}

/// Quality under the pooled judgments.
#[derive(Debug, Serialize)]
struct JudgedQuality {
    alone_success_at_5: f64,
    across_success_at_5: f64,
    alone_mrr_at_10: f64,
    across_mrr_at_10: f64,
    /// The questions no file of another repo answers, scored by their set alone.
    one_repo_questions: usize,
    one_repo_alone_success_at_5: f64,
    one_repo_across_success_at_5: f64,
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

/// Every judged question asked of its repo alone and of all the repos, each with a word added
/// (`suffixes`: alone's, across's): the milliseconds of each.
async fn timed_pass(
    client: &reqwest::Client,
    url: &str,
    judged: &[(PathBuf, Vec<Question>)],
    all: &str,
    mode: &str,
    suffixes: [&str; 2],
) -> Result<(Vec<f64>, Vec<f64>)> {
    let (mut alone_ms, mut across_ms) = (Vec::new(), Vec::new());
    for (root, questions) in judged {
        let repo = root.display().to_string();
        for question in questions {
            let alone = format!("{} {}", question.text, suffixes[0]);
            let params = [("q", alone.as_str()), ("mode", mode), ("limit", "10"), ("repo", repo.as_str())];
            alone_ms.push(ask(client, url, &params).await?.1);
            let across = format!("{} {}", question.text, suffixes[1]);
            let params = [("q", across.as_str()), ("mode", mode), ("limit", "10"), ("repos", all)];
            across_ms.push(ask(client, url, &params).await?.1);
        }
    }
    Ok((alone_ms, across_ms))
}

/// What `bench-across` measures and how it reports.
pub struct Options {
    pub repos: Vec<PathBuf>,
    pub sets: Vec<JudgedSet>,
    pub judgments: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub lexical_only: bool,
    /// Print each question found in the first five alone and not across, with the first five
    /// across: what a ranking change across repos has to explain.
    pub misses: bool,
    pub json: bool,
}

pub async fn run(loaded: &LoadedConfig, options: Options) -> Result<i32> {
    let Options { repos, sets, judgments: judgments_opt, state_dir: state_dir_opt, lexical_only, misses, json } =
        options;
    let judgments = judgments_opt.as_deref().map(Judgments::read).transpose()?;
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
    let client = crate::search::loopback_client();
    let url = format!("http://{addr}/v1/search");
    let all = roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(",");
    let modes: &[&str] = if hybrid { &["lexical", "hybrid"] } else { &["lexical"] };
    let mut quality = Vec::new();
    let mut latency = Vec::new();
    for &mode in modes {
        // Unmeasured warm-up: page cache, searchers, the model, and every question's terms
        // once alone and once across (a single cold pass measures first touches: its p95 swung
        // between 1.2x and 3.8x from run to run).
        for root in &roots {
            let repo = root.display().to_string();
            ask(&client, &url, &[("q", "warm up"), ("mode", mode), ("repo", repo.as_str())]).await?;
        }
        timed_pass(&client, &url, &judged, &all, mode, ["again", "again"]).await?;
        // Timed: each question with a word added, another alone than across, so that neither
        // finds its query vector cached (a user's new question is embedded, alone or across).
        let (mut alone_ms, mut across_ms) =
            timed_pass(&client, &url, &judged, &all, mode, ["in one repo", "in all repos"]).await?;
        for (root, questions) in &judged {
            let repo = root.display().to_string();
            let (mut alone, mut across) = (Vec::new(), Vec::new());
            let (mut judged_alone, mut judged_across) = (Vec::new(), Vec::new());
            let (mut one_repo_alone, mut one_repo_across) = (Vec::new(), Vec::new());
            for question in questions {
                let base = [("q", question.text.as_str()), ("mode", mode), ("limit", "10")];
                let (alone_hits, _) = ask(&client, &url, &[&base[..], &[("repo", repo.as_str())]].concat()).await?;
                alone.push(score(&paths_in(&alone_hits, &repo), &question.expected));
                let (across_hits, _) = ask(&client, &url, &[&base[..], &[("repos", all.as_str())]].concat()).await?;
                across.push(score(&paths_in(&across_hits, &repo), &question.expected));
                if let Some(judgments) = &judgments {
                    let (answers, elsewhere) = judgments.answers(question, repo_name(&repo));
                    judged_alone.push(score(&files_of(&alone_hits, &repo), &answers));
                    judged_across.push(score(&files_of(&across_hits, &repo), &answers));
                    if !elsewhere {
                        one_repo_alone.push(alone.last().cloned().expect("just pushed"));
                        one_repo_across.push(across.last().cloned().expect("just pushed"));
                    }
                }
                // Judged by the pooled judgments when there are some, by the set otherwise.
                let (alone_answer, across_answer) = match (judged_alone.last(), judged_across.last()) {
                    (Some(a), Some(b)) => (a, b),
                    _ => (alone.last().expect("just pushed"), across.last().expect("just pushed")),
                };
                let in_five = |rank: Option<usize>| rank.is_some_and(|r| r <= 5);
                if misses && in_five(alone_answer.rank) && !in_five(across_answer.rank) {
                    eprintln!("miss [{mode}] {}: {}", repo_name(&repo), question.text);
                    for (i, file) in files_of(&across_hits, &repo).iter().take(5).enumerate() {
                        eprintln!("    {}. {file}", i + 1);
                    }
                }
            }
            let set = questions.first().map(|q| q.split.clone()).unwrap_or_default();
            let judged = judgments.as_ref().map(|_| {
                let alone = summarize(&set, mode, "all", judged_alone.iter());
                let across = summarize(&set, mode, "all", judged_across.iter());
                let one_alone = summarize(&set, mode, "all", one_repo_alone.iter());
                let one_across = summarize(&set, mode, "all", one_repo_across.iter());
                JudgedQuality {
                    alone_success_at_5: alone.success_at_5,
                    across_success_at_5: across.success_at_5,
                    alone_mrr_at_10: alone.mrr_at_10,
                    across_mrr_at_10: across.mrr_at_10,
                    one_repo_questions: one_repo_alone.len(),
                    one_repo_alone_success_at_5: one_alone.success_at_5,
                    one_repo_across_success_at_5: one_across.success_at_5,
                }
            });
            let alone = summarize(&set, mode, "all", alone.iter());
            let across = summarize(&set, mode, "all", across.iter());
            quality.push(Quality {
                judged,
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
    if report.quality.iter().any(|q| q.judged.is_some()) {
        println!("\nwith the pooled judgments (a file of any repo judged to answer counts):");
        println!(
            "  {:<28} {:<8} {:>12} {:>12}   {:>4} {:>6} {:>6}",
            "set", "mode", "alone", "across", "one", "alone", "across"
        );
        for q in &report.quality {
            let Some(j) = &q.judged else { continue };
            println!(
                "  {:<28} {:<8} {:>5.3}/{:<6.3} {:>5.3}/{:<6.3}   {:>4} {:>6.3} {:>6.3}",
                q.set,
                q.mode,
                j.alone_success_at_5,
                j.alone_mrr_at_10,
                j.across_success_at_5,
                j.across_mrr_at_10,
                j.one_repo_questions,
                j.one_repo_alone_success_at_5,
                j.one_repo_across_success_at_5
            );
        }
        println!("  (one: the questions no file of another repo answers; success@5 on their set's files)");
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
