//! `docdexd bench-daemon`: what a user of the daemon feels, measured on a real `docdexd
//! daemon` process in a throwaway home over a copy of a repo: resident memory at start,
//! after hybrid searches and after the idle release; save-to-searchable latency through the
//! watcher (a file written → its text found by a search).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use crate::search::percentile;
use docdex::config::LoadedConfig;
use docdex::protocol::{DocdexError, Result};

/// Questions for the hybrid searches that load the model.
const QUERIES: [&str; 5] = [
    "how are errors reported to the caller",
    "configuration file parsing",
    "retry with backoff",
    "spawn a background task",
    "read a file line by line",
];

#[derive(Debug, Serialize)]
struct DaemonBenchReport {
    repo: String,
    files: u64,
    chunks: u64,
    first_index_secs: f64,
    embedding_secs: f64,
    rss_start_mib: f64,
    rss_after_hybrid_mib: f64,
    /// Of which heap (the model's working memory, caches) and mapped files (index pages).
    rss_after_hybrid_anon_mib: f64,
    rss_after_hybrid_file_mib: f64,
    rss_after_idle_mib: f64,
    rss_after_idle_anon_mib: f64,
    rss_after_idle_file_mib: f64,
    idle_release_secs: f64,
    hybrid_search_p50_ms: f64,
    save_to_searchable_runs: usize,
    save_to_searchable_p50_ms: f64,
    save_to_searchable_p95_ms: f64,
    save_to_searchable_max_ms: f64,
    debounce_ms: u64,
}

struct DaemonProcess {
    child: Child,
    base_url: String,
    token: String,
    http: reqwest::blocking::Client,
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl DaemonProcess {
    fn get(&self, path: &str) -> Result<Value> {
        let response = self.http.get(format!("{}{path}", self.base_url)).bearer_auth(&self.token).send();
        response.and_then(|r| r.json()).map_err(|err| DocdexError::internal(format!("GET {path}: {err}")))
    }

    fn post(&self, path: &str, body: Value) -> Result<Value> {
        let response = self.http.post(format!("{}{path}", self.base_url)).bearer_auth(&self.token).json(&body).send();
        response.and_then(|r| r.json()).map_err(|err| DocdexError::internal(format!("POST {path}: {err}")))
    }

    fn rss_mib(&self) -> f64 {
        self.status_mib("VmRSS:")
    }

    /// One memory line of the daemon's `/proc/PID/status`, in MiB.
    fn status_mib(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        kib / 1024.0
    }
}

/// Copies a repo's files (not `.git` or `target`) so the benchmark can write into it.
fn copy_repo(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)?.flatten() {
        let name = entry.file_name();
        if name == ".git" || name == "target" || name == "node_modules" {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_repo(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

fn wait_until(limit: Duration, what: &str, mut probe: impl FnMut() -> Result<bool>) -> Result<f64> {
    let started = Instant::now();
    while !probe()? {
        if started.elapsed() > limit {
            return Err(DocdexError::internal(format!("gave up waiting for {what} after {} s", limit.as_secs())));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(started.elapsed().as_secs_f64())
}

pub fn run(loaded: &LoadedConfig, repo: &Path, runs: usize, lexical_only: bool, json_out: bool) -> Result<i32> {
    let scratch = tempfile::tempdir()?;
    let home = scratch.path().join("home");
    let copy = scratch.path().join("repo");
    eprintln!("copying {} ...", repo.display());
    copy_repo(repo, &copy)?;
    std::fs::create_dir_all(&home)?;
    let idle_secs = 3;
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[core]\nrepo_idle_secs = {idle_secs}\n\n[embedding]\nidle_unload_secs = {idle_secs}\nenabled = {}\n",
            !lexical_only
        ),
    )?;
    // The daemon under test is the `docdexd` built beside this binary.
    let exe = std::env::current_exe()?.with_file_name("docdexd");
    if !exe.is_file() {
        return Err(DocdexError::internal(format!("{} is missing", exe.display()))
            .with_hint("build both binaries first: cargo build --release"));
    }
    let mut child = Command::new(exe)
        .args(["daemon", "--bind", "127.0.0.1:0"])
        .env("DOCDEX_HOME", &home)
        .env("DOCDEX_MODELS_DIR", loaded.models_dir())
        .env("DOCDEX_ALLOWED_ROOTS", scratch.path())
        .env_remove("DOCDEX_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line)?;
    let Some(base_url) = line.trim().strip_prefix("docdexd listening on ").map(str::to_string) else {
        let _ = child.kill();
        return Err(DocdexError::internal(format!("the daemon did not start: {line}")));
    };
    let token = std::fs::read_to_string(home.join("token"))?.trim().to_string();
    let http = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()
        .map_err(|err| DocdexError::internal(err.to_string()))?;
    let daemon = DaemonProcess { child, base_url, token, http };
    std::thread::sleep(Duration::from_secs(1));
    let rss_start_mib = daemon.rss_mib();

    eprintln!("indexing the copy ...");
    let started = Instant::now();
    let mounted = daemon.post("/v1/initialize", json!({ "repo_path": copy, "wait": true }))?;
    if mounted.get("error").is_some() {
        return Err(DocdexError::internal(format!("mount failed: {mounted}")));
    }
    let first_index_secs = started.elapsed().as_secs_f64();
    let status_path = format!("/v1/status?repo={}", copy.display());
    let embedding_secs = if lexical_only {
        0.0
    } else {
        eprintln!("embedding ...");
        wait_until(Duration::from_secs(3600), "the embeddings", || {
            let status = daemon.get(&status_path)?;
            Ok(status["embeddings"]["pending"] == 0 && status["embeddings"]["embedded"].as_u64().unwrap_or(0) > 0)
        })?
    };
    let status = daemon.get(&status_path)?;

    let mut hybrid_ms = Vec::new();
    for query in QUERIES.iter().cycle().take(if lexical_only { 0 } else { 20 }) {
        let started = Instant::now();
        let path = format!("/v1/search?repo={}&mode=hybrid&q={}", copy.display(), query.replace(' ', "%20"));
        daemon.get(&path)?;
        hybrid_ms.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    hybrid_ms.sort_by(f64::total_cmp);
    let rss_after_hybrid_mib = daemon.rss_mib();
    let (rss_after_hybrid_anon_mib, rss_after_hybrid_file_mib) =
        (daemon.status_mib("RssAnon:"), daemon.status_mib("RssFile:"));

    eprintln!("save-to-searchable, {runs} runs ...");
    let mut save_ms = Vec::new();
    for run in 0..runs {
        let token = format!("benchprobe{run}zq");
        let file = copy.join(format!("docdex_bench_probe_{run}.md"));
        let started = Instant::now();
        std::fs::write(&file, format!("# Probe\n\nThe {token} marker.\n"))?;
        let search = format!("/v1/search?repo={}&mode=lexical&q={token}", copy.display());
        wait_until(Duration::from_secs(60), "the saved file in the index", || {
            let body = daemon.get(&search)?;
            Ok(body["hits"].as_array().is_some_and(|h| !h.is_empty()))
        })?;
        save_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        std::fs::remove_file(&file)?;
        // Let the delete's run go by, so runs do not overlap.
        std::thread::sleep(Duration::from_millis(1500));
    }
    save_ms.sort_by(f64::total_cmp);

    eprintln!("waiting for the idle release ({idle_secs} s) ...");
    let idle_release_secs = wait_until(Duration::from_secs(120), "the idle release", || {
        let state = daemon.get("/v1/status")?;
        let released = state["repos"].as_array().is_some_and(|r| r.iter().all(|r| r["open"] == false));
        Ok(released && (lexical_only || state["models_loaded"] == 0))
    })?;
    std::thread::sleep(Duration::from_secs(1));
    let rss_after_idle_mib = daemon.rss_mib();
    let (rss_after_idle_anon_mib, rss_after_idle_file_mib) =
        (daemon.status_mib("RssAnon:"), daemon.status_mib("RssFile:"));

    let report = DaemonBenchReport {
        repo: repo.display().to_string(),
        files: status["files"].as_u64().unwrap_or(0),
        chunks: status["chunks"].as_u64().unwrap_or(0),
        first_index_secs,
        embedding_secs,
        rss_start_mib,
        rss_after_hybrid_mib,
        rss_after_hybrid_anon_mib,
        rss_after_hybrid_file_mib,
        rss_after_idle_mib,
        rss_after_idle_anon_mib,
        rss_after_idle_file_mib,
        idle_release_secs,
        hybrid_search_p50_ms: percentile(&hybrid_ms, 0.5),
        save_to_searchable_runs: save_ms.len(),
        save_to_searchable_p50_ms: percentile(&save_ms, 0.5),
        save_to_searchable_p95_ms: percentile(&save_ms, 0.95),
        save_to_searchable_max_ms: save_ms.last().copied().unwrap_or(0.0),
        debounce_ms: docdex::config::WatcherConfig::default().debounce_ms,
    };
    drop(daemon);
    if json_out {
        docdex::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        docdex::outln!(
            "repo {} ({} files, {} chunks): first index {:.1} s, embeddings {:.1} s\n\
             resident memory: {:.0} MiB at start, {:.0} MiB after hybrid searches ({:.0} heap, {:.0} mapped files), {:.0} MiB after the idle release ({:.0} heap, {:.0} mapped files; {:.1} s)\n\
             hybrid search p50 {:.1} ms\n\
             save to searchable (watcher, {} ms debounce): p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms over {} runs",
            report.repo,
            report.files,
            report.chunks,
            report.first_index_secs,
            report.embedding_secs,
            report.rss_start_mib,
            report.rss_after_hybrid_mib,
            report.rss_after_hybrid_anon_mib,
            report.rss_after_hybrid_file_mib,
            report.rss_after_idle_mib,
            report.rss_after_idle_anon_mib,
            report.rss_after_idle_file_mib,
            report.idle_release_secs,
            report.hybrid_search_p50_ms,
            report.debounce_ms,
            report.save_to_searchable_p50_ms,
            report.save_to_searchable_p95_ms,
            report.save_to_searchable_max_ms,
            report.save_to_searchable_runs,
        );
    }
    Ok(0)
}
