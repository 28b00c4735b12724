//! `docdex-bench bench-impact`: change impact on a large repository. A copy of the repo is
//! committed to a scratch git repo, indexed and (with the model installed) embedded; each
//! run edits one line inside a function of `files` different files (a comment appended), asks `GET /v1/impact/diff` over HTTP, and
//! restores the files. Reports the p50/p95 of those requests (the git diff, both sides'
//! parse and the walk to dependents and tests included) and what they found; and of two
//! more moments of an agent's edit: the same diff asked again, and asked once the index has
//! read the edit (as the watcher would), when the edit is held and the base is not.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::code::Picks;
use crate::search::percentile;
use docdex::config::LoadedConfig;
use docdex::protocol::{DocdexError, Result};

#[derive(Debug, Serialize)]
struct ImpactBenchReport {
    repo: String,
    files_per_diff: usize,
    runs: usize,
    /// The first request: the graph built and every use resolved.
    first_ms: f64,
    p50_ms: f64,
    p95_ms: f64,
    max_ms: f64,
    /// The same diff asked again at once.
    again_p50_ms: f64,
    again_p95_ms: f64,
    /// The diff asked after the index has read the edited files.
    indexed_p50_ms: f64,
    indexed_p95_ms: f64,
    mean_changed_symbols: f64,
    mean_dependents: f64,
    mean_tests: f64,
}

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let out = std::process::Command::new("git")
        .args(["-c", "user.email=bench@example.com", "-c", "user.name=bench", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()?;
    if !out.status.success() {
        return Err(DocdexError::internal(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr))));
    }
    Ok(())
}

/// A line comment in the file's language.
fn comment(language: &str) -> &'static str {
    match language {
        "python" | "ruby" | "bash" | "elixir" => "  # bench",
        "lua" | "haskell" => "  -- bench",
        _ => "  // bench",
    }
}

pub async fn run(loaded: &LoadedConfig, repo: &Path, runs: usize, files: usize, json: bool) -> Result<i32> {
    let source = std::fs::canonicalize(repo)?;
    let scratch = tempfile::tempdir()?;
    let work = scratch.path().join("repo");
    let copied = std::process::Command::new("cp").arg("-a").arg(&source).arg(&work).status()?;
    if !copied.success() {
        return Err(DocdexError::internal(format!("cannot copy {}", source.display())));
    }
    let _ = std::fs::remove_dir_all(work.join(".git"));
    git(&work, &["init", "-q"])?;
    git(&work, &["add", "-A"])?;
    git(&work, &["commit", "-qm", "base"])?;

    let mut config = loaded.clone();
    config.config.core.global_state_dir = Some(scratch.path().join("state"));
    config.config.watcher.enabled = false;
    let actors = docdex::actors::system::start_actors(&config, Some(work.clone()));
    docdex::cli::progress::index_with_progress(&actors, work.clone()).await?;
    // A daemon that serves a repo has embedded it long before an agent edits it: with the
    // model installed, the whole repo is embedded first, or the timed requests would share
    // the two cores with minutes of embedding every chunk (the first re-index starts it).
    if config.config.embedding.enabled {
        let embedded = docdex::cli::progress::embed_with_progress(&actors, work.clone()).await?;
        eprintln!("embedded before timing: {} chunks in {:.0} s", embedded.embedded, embedded.seconds);
    }
    let (server, addr) = crate::search::serve_loopback(&actors, &work, loaded)?;
    let server_handle = server.handle();
    let server_task = actix::spawn(server);
    let client = crate::search::loopback_client();
    let url = format!("http://{addr}/v1/impact/diff");

    // Functions with a body line to edit, by file.
    let scan = docdex::ingest::scan_repo(&work, (&loaded.config.index).into());
    let mut candidates: Vec<(String, u32, &'static str)> = Vec::new();
    for file in &scan.files {
        let language = docdex::ingest::Language::detect(Path::new(&file.rel_path));
        let Ok(text) = std::fs::read_to_string(work.join(&file.rel_path)) else { continue };
        let language = language.with_text(Path::new(&file.rel_path), &text);
        let Some(code) = docdex::code::extract(language, &text) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        let body = code.symbols.iter().find(|s| {
            s.kind.is_callable()
                && s.end_line > s.line + 1
                && lines.get(s.line as usize).is_some_and(|l| l.trim().ends_with(';') || l.trim().ends_with(')'))
        });
        if let Some(s) = body {
            candidates.push((file.rel_path.clone(), s.line + 1, comment(language.name())));
        }
    }
    if candidates.len() < files {
        return Err(DocdexError::invalid(format!(
            "{} has {} files with functions to edit",
            source.display(),
            candidates.len()
        )));
    }
    let mut picks = Picks(0x1a2b_3c4d_5e6f_7081);
    let (mut samples, mut again, mut indexed) = (Vec::new(), Vec::new(), Vec::new());
    let (mut changed, mut dependents, mut tests) = (0usize, 0usize, 0usize);
    // The first request builds the graph and resolves every use: reported apart.
    let started = Instant::now();
    let _ = client.get(&url).send().await;
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    for _ in 0..runs {
        let mut chosen: Vec<usize> = Vec::new();
        while chosen.len() < files {
            let i = picks.next(candidates.len());
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        let mut originals = Vec::new();
        for &i in &chosen {
            let (path, line, mark) = &candidates[i];
            let file = work.join(path);
            let text = std::fs::read_to_string(&file)?;
            let edited: Vec<String> = text
                .lines()
                .enumerate()
                .map(|(n, l)| if n + 1 == *line as usize { format!("{l}{mark}") } else { l.to_string() })
                .collect();
            std::fs::write(&file, edited.join("\n") + "\n")?;
            originals.push((file, text));
        }
        let (ms, body) = ask(&client, &url).await?;
        samples.push(ms);
        changed += body["changed_symbols"].as_array().map_or(0, Vec::len);
        dependents += body["dependents_total"].as_u64().unwrap_or(0) as usize;
        tests += body["tests_total"].as_u64().unwrap_or(0) as usize;
        let (ms, again_body) = ask(&client, &url).await?;
        again.push(ms);
        let paths: Vec<String> = chosen.iter().map(|&i| candidates[i].0.clone()).collect();
        reindex(&actors, &work, &paths).await?;
        let (ms, indexed_body) = ask(&client, &url).await?;
        indexed.push(ms);
        for later in [&again_body, &indexed_body] {
            if later["changed_symbols"] != body["changed_symbols"] || later["tests_total"] != body["tests_total"] {
                let which = if std::ptr::eq(later, &again_body) { "asked again" } else { "once indexed" };
                return Err(DocdexError::internal(format!(
                    "the same diff answered otherwise {which}: {} tests then {}, {} then {}",
                    body["tests_total"], later["tests_total"], body["changed_symbols"], later["changed_symbols"]
                )));
            }
        }
        for (file, text) in originals {
            std::fs::write(file, text)?;
        }
        // Back to the base for the next run's first request.
        reindex(&actors, &work, &paths).await?;
        // The restored files are unchanged but their times are new: without a refresh of
        // git's index (which any `git status` does) every later diff would hash every file
        // an earlier run touched, and the runs would measure the benchmark's own residue.
        git(&work, &["update-index", "-q", "--refresh"])?;
    }
    server_handle.stop(true).await;
    let _ = server_task.await;
    actors.repo_manager.send(docdex::actors::repo_manager::CloseAll).await?;
    for sorted in [&mut samples, &mut again, &mut indexed] {
        sorted.sort_by(f64::total_cmp);
    }
    let n = runs.max(1) as f64;
    let report = ImpactBenchReport {
        repo: source.display().to_string(),
        files_per_diff: files,
        runs,
        first_ms,
        p50_ms: percentile(&samples, 0.5),
        p95_ms: percentile(&samples, 0.95),
        max_ms: samples.last().copied().unwrap_or(0.0),
        again_p50_ms: percentile(&again, 0.5),
        again_p95_ms: percentile(&again, 0.95),
        indexed_p50_ms: percentile(&indexed, 0.5),
        indexed_p95_ms: percentile(&indexed, 0.95),
        mean_changed_symbols: changed as f64 / n,
        mean_dependents: dependents as f64 / n,
        mean_tests: tests as f64 / n,
    };
    if json {
        docdex::cli::output::print_out(&docdex::cli::output::to_json(&report)?)?;
    } else {
        docdex::cli::output::print_out(&format!(
            "{}\n  first request (graph built, every use resolved) {:.0} ms\n  {}-file diffs, {} runs: GET /v1/impact/diff p50 {:.1} ms  p95 {:.1} ms  max {:.1} ms\n  the same diff asked again: p50 {:.1} ms  p95 {:.1} ms\n  asked once the index has read the edit: p50 {:.1} ms  p95 {:.1} ms\n  per diff: {:.1} changed definitions, {:.1} dependents, {:.1} tests\n",
            report.repo,
            report.first_ms,
            files,
            runs,
            report.p50_ms,
            report.p95_ms,
            report.max_ms,
            report.again_p50_ms,
            report.again_p95_ms,
            report.indexed_p50_ms,
            report.indexed_p95_ms,
            report.mean_changed_symbols,
            report.mean_dependents,
            report.mean_tests
        ))?;
    }
    Ok(0)
}

/// One timed `GET` of the diff's impact, and its answer.
async fn ask(client: &reqwest::Client, url: &str) -> Result<(f64, serde_json::Value)> {
    let started = Instant::now();
    let response = client.get(url).send().await.map_err(|e| DocdexError::internal(format!("impact: {e}")))?;
    let status = response.status();
    let body: serde_json::Value = response.json().await.map_err(|e| DocdexError::internal(e.to_string()))?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if !status.is_success() {
        return Err(DocdexError::internal(format!("impact: HTTP {status}: {body}")));
    }
    Ok((ms, body))
}

/// The index reads `paths` again, as the watcher does after an edit.
async fn reindex(actors: &docdex::actors::system::Actors, work: &Path, paths: &[String]) -> Result<()> {
    let (progress, _) = tokio::sync::mpsc::unbounded_channel();
    let run = docdex::actors::repo_supervisor::RunIndex {
        repo: work.to_path_buf(),
        progress,
        changed_opt: Some(paths.to_vec()),
    };
    actors.dispatcher.send(run).await??;
    Ok(())
}
