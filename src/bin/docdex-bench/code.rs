//! `docdex-bench bench-code`: code intelligence on a repository. Extraction throughput
//! (symbols/s and MB/s of source, one thread, parse included), the graph's build time and
//! the process's peak memory, the whole index run, and the p50/p95 of symbols, references,
//! callers and impact queries over HTTP against the repo's index.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::search::percentile;
use docdex::config::LoadedConfig;
use docdex::ingest::Language;
use docdex::protocol::Result;

#[derive(Debug, Serialize)]
struct Latency {
    requests: usize,
    p50_ms: f64,
    p95_ms: f64,
    max_ms: f64,
}

#[derive(Debug, Serialize)]
struct CodeBenchReport {
    repo: String,
    source_files: usize,
    source_mib: f64,
    symbols: usize,
    uses: usize,
    imports: usize,
    extract_seconds: f64,
    /// Of which tree-sitter's parse.
    parse_seconds: f64,
    symbols_per_second: f64,
    mb_per_second: f64,
    /// The same files over every core (`threads`), as the index run spreads them.
    threads: usize,
    parallel_seconds: f64,
    parallel_symbols_per_second: f64,
    /// Tree-sitter's parse alone over the same cores: the most symbols/s any extraction that
    /// parses every file (as references need) can reach on this machine.
    parallel_parse_seconds: f64,
    parse_ceiling_symbols_per_second: f64,
    /// The same files parsed as the lexical run did before code intelligence: Rust without the
    /// insides of function bodies (`ingest::skeleton`), over the same cores. What a full parse
    /// costs beyond it is the least an index run that reads references adds.
    parallel_skeleton_parse_seconds: f64,
    /// A generated file of small documented functions and types, the shape other tools'
    /// parser benchmarks measure: symbols/s on one thread.
    dense_symbols: usize,
    dense_symbols_per_second: f64,
    graph_build_ms: f64,
    peak_rss_mib: f64,
    index_run_seconds: f64,
    symbols_query: Latency,
    references_query: Latency,
    callers_query: Latency,
    impact_query: Latency,
    languages: Vec<(String, usize)>,
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// A deterministic pseudo-random sequence (xorshift), so runs ask the same questions.
pub struct Picks(pub u64);

impl Picks {
    pub fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below.max(1) as u64) as usize
    }
}

async fn time_gets(client: &reqwest::Client, base: &str, paths: &[String]) -> Result<Latency> {
    let mut samples = Vec::with_capacity(paths.len());
    for path in paths {
        let started = Instant::now();
        let response = client
            .get(format!("{base}{path}"))
            .send()
            .await
            .map_err(|e| docdex::protocol::DocdexError::internal(format!("GET {path}: {e}")))?;
        let status = response.status();
        let _ = response.bytes().await;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        if !status.is_success() && status.as_u16() != 404 {
            return Err(docdex::protocol::DocdexError::internal(format!("GET {path}: HTTP {status}")));
        }
    }
    samples.sort_by(f64::total_cmp);
    Ok(Latency {
        requests: samples.len(),
        p50_ms: percentile(&samples, 0.5),
        p95_ms: percentile(&samples, 0.95),
        max_ms: samples.last().copied().unwrap_or(0.0),
    })
}

fn query_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub async fn run(loaded: &LoadedConfig, repo: &Path, queries: usize, json: bool) -> Result<i32> {
    let repo = std::fs::canonicalize(repo)?;
    // Extraction alone, one thread, as the index run does it per file.
    let scan = docdex::ingest::scan_repo(&repo, (&loaded.config.index).into());
    let mut files = std::collections::HashMap::new();
    let (mut bytes, mut seconds, mut symbols, mut uses, mut imports) = (0usize, 0f64, 0usize, 0usize, 0usize);
    let mut parse_seconds = 0f64;
    let mut parser = tree_sitter::Parser::new();
    // Kept for the pass over every core below.
    let mut texts: Vec<(Language, String)> = Vec::new();
    for file in &scan.files {
        let language = Language::detect(Path::new(&file.rel_path));
        if language.grammar().is_none() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(repo.join(&file.rel_path)) else {
            continue;
        };
        let language = language.with_text(Path::new(&file.rel_path), &text);
        // The parse alone, to tell it from the walk over the tree.
        if let Some(grammar) = language.grammar() {
            let started = Instant::now();
            if parser.set_language(&grammar).is_ok() {
                let _ = parser.parse(&text, None);
            }
            parse_seconds += started.elapsed().as_secs_f64();
        }
        let started = Instant::now();
        let code = docdex::code::extract(language, &text);
        seconds += started.elapsed().as_secs_f64();
        bytes += text.len();
        texts.push((language, text));
        if let Some(code) = code {
            symbols += code.symbols.len();
            uses += code.occurrences.len();
            imports += code.imports.len();
            files.insert(file.rel_path.clone(), code);
        }
    }
    let source_files = files.len();
    let (threads, parallel_seconds) = in_parallel(&texts, |language, text| {
        std::hint::black_box(docdex::code::extract(language, text));
    });
    let (_, parallel_parse_seconds) = in_parallel(&texts, |language, text| {
        let mut parser = tree_sitter::Parser::new();
        if let Some(grammar) = language.grammar() {
            if parser.set_language(&grammar).is_ok() {
                std::hint::black_box(parser.parse(text, None));
            }
        }
    });
    let (_, parallel_skeleton_parse_seconds) = in_parallel(&texts, skeleton_parse);
    let (dense_symbols, dense_symbols_per_second) = dense_code_rate();
    let started = Instant::now();
    let graph = docdex::code::CodeGraph::build(files, &std::collections::HashMap::new());
    let graph_build_ms = started.elapsed().as_secs_f64() * 1000.0;
    let languages = graph.languages();

    // The whole index run (chunks, symbols, Tantivy, LMDB) into a scratch state directory,
    // then the queries over HTTP against it.
    let scratch = tempfile::tempdir()?;
    let mut config = loaded.clone();
    config.config.core.global_state_dir = Some(scratch.path().to_path_buf());
    let actors = docdex::actors::system::start_actors(&config, Some(repo.clone()));
    let summary = docdex::cli::progress::index_with_progress(&actors, repo.clone()).await?;
    let (server, addr) = crate::search::serve_loopback(&actors, &repo, loaded)?;
    let server_handle = server.handle();
    let server_task = actix::spawn(server);
    let base = format!("http://{addr}");
    let client = crate::search::loopback_client();

    // Questions drawn from the repo's own definitions and files.
    let all: Vec<_> = graph.all_symbols().collect();
    let mut picks = Picks(0x5eed_c0de_1234_5678);
    let mut symbol_paths = Vec::new();
    let mut reference_paths = Vec::new();
    let mut caller_paths = Vec::new();
    let mut impact_paths = Vec::new();
    for _ in 0..queries {
        let r = all[picks.next(all.len())];
        let info = graph.info(r);
        let name = query_escape(&info.name);
        symbol_paths.push(format!("/v1/symbols?name={name}"));
        let at = format!("name={name}&path={}&line={}", query_escape(&info.path), info.line);
        reference_paths.push(format!("/v1/references?{at}"));
        caller_paths.push(format!("/v1/callers?{at}"));
        let file = graph.path(picks.next(graph.file_count()) as u32);
        impact_paths.push(format!("/v1/graph/impact?file={}", query_escape(file)));
    }
    // The first request builds the graph: not measured.
    time_gets(&client, &base, &symbol_paths[..1]).await?;
    let symbols_query = time_gets(&client, &base, &symbol_paths).await?;
    let references_query = time_gets(&client, &base, &reference_paths).await?;
    let callers_query = time_gets(&client, &base, &caller_paths).await?;
    let impact_query = time_gets(&client, &base, &impact_paths).await?;
    server_handle.stop(true).await;
    let _ = server_task.await;
    actors.repo_manager.send(docdex::actors::repo_manager::CloseAll).await?;

    let report = CodeBenchReport {
        repo: repo.display().to_string(),
        source_files,
        source_mib: bytes as f64 / (1024.0 * 1024.0),
        symbols,
        uses,
        imports,
        extract_seconds: seconds,
        parse_seconds,
        symbols_per_second: symbols as f64 / seconds.max(1e-9),
        mb_per_second: bytes as f64 / 1e6 / seconds.max(1e-9),
        threads,
        parallel_seconds,
        parallel_symbols_per_second: symbols as f64 / parallel_seconds.max(1e-9),
        parallel_parse_seconds,
        parallel_skeleton_parse_seconds,
        parse_ceiling_symbols_per_second: symbols as f64 / parallel_parse_seconds.max(1e-9),
        dense_symbols,
        dense_symbols_per_second,
        graph_build_ms,
        peak_rss_mib: peak_rss_mib(),
        index_run_seconds: summary.seconds,
        symbols_query,
        references_query,
        callers_query,
        impact_query,
        languages,
    };
    if json {
        docdex::cli::output::print_out(&docdex::cli::output::to_json(&report)?)?;
    } else {
        let line = |name: &str, l: &Latency| {
            format!(
                "  {name:<11} p50 {:.2} ms  p95 {:.2} ms  max {:.2} ms  ({} requests)\n",
                l.p50_ms, l.p95_ms, l.max_ms, l.requests
            )
        };
        let mut out = format!(
            "{}\n  {} source files, {:.1} MiB: {} symbols, {} uses, {} imports\n  extraction: {:.2} s on one thread ({:.2} s of it parsing) = {:.0} symbols/s, {:.1} MB/s\n  on {} threads: {:.2} s = {:.0} symbols/s (tree-sitter's parse alone: {:.2} s = {:.0} symbols/s; the lexical run's skeleton parse: {:.2} s)\n  dense generated code ({} symbols), one thread: {:.0} symbols/s\n  graph build: {:.0} ms; peak RSS {:.0} MiB\n  index run (chunks + symbols): {:.2} s\n",
            report.repo,
            report.source_files,
            report.source_mib,
            report.symbols,
            report.uses,
            report.imports,
            report.extract_seconds,
            report.parse_seconds,
            report.symbols_per_second,
            report.mb_per_second,
            report.threads,
            report.parallel_seconds,
            report.parallel_symbols_per_second,
            report.parallel_parse_seconds,
            report.parse_ceiling_symbols_per_second,
            report.parallel_skeleton_parse_seconds,
            report.dense_symbols,
            report.dense_symbols_per_second,
            report.graph_build_ms,
            report.peak_rss_mib,
            report.index_run_seconds
        );
        out.push_str(&line("symbols", &report.symbols_query));
        out.push_str(&line("references", &report.references_query));
        out.push_str(&line("callers", &report.callers_query));
        out.push_str(&line("impact", &report.impact_query));
        docdex::cli::output::print_out(&out)?;
    }
    Ok(0)
}

/// Parses `text` as the lexical run did before code intelligence: Rust without the insides of
/// function bodies and whole-line comments, other languages in full.
fn skeleton_parse(language: Language, text: &str) {
    use docdex::ingest::skeleton;
    let mut parser = tree_sitter::Parser::new();
    let Some(grammar) = language.grammar() else { return };
    if parser.set_language(&grammar).is_err() {
        return;
    }
    if language == Language::Rust {
        let source = text.as_bytes();
        let bodies = skeleton::rust_fn_body_interiors(source);
        let comments = skeleton::comment_lines(source, &bodies);
        let holes = skeleton::merge_holes(&bodies, &comments);
        if !holes.is_empty() {
            let _ = parser.set_included_ranges(&skeleton::ranges_around(source, &holes));
        }
    }
    std::hint::black_box(parser.parse(text, None));
}

/// Runs `work` on every text on as many threads as the machine has cores, each taking the
/// next file; returns the thread count and the wall time.
fn in_parallel(texts: &[(Language, String)], work: impl Fn(Language, &str) + Sync) -> (usize, f64) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((language, text)) = texts.get(i) else { break };
                work(*language, text);
            });
        }
    });
    (threads, started.elapsed().as_secs_f64())
}

/// Symbols/s on a generated Rust file dense in definitions: 400 documented functions and
/// 80 types with a field and two methods each (best of three runs).
fn dense_code_rate() -> (usize, f64) {
    let mut text = String::from("//! Generated for the extraction benchmark.\n\n");
    for i in 0..400 {
        text.push_str(&format!(
            "/// Adds {i} to a value.\npub fn add_{i}(value: u64, scale: u64) -> u64 {{\n    let total = value * scale;\n    total + {i}\n}}\n\n"
        ));
    }
    for i in 0..80 {
        text.push_str(&format!(
            "/// Record {i}.\npub struct Record{i} {{\n    count: u64,\n}}\n\nimpl Record{i} {{\n    pub fn new(count: u64) -> Self {{\n        Self {{ count }}\n    }}\n\n    pub fn doubled(&self) -> u64 {{\n        add_{i}(self.count, 2)\n    }}\n}}\n\n"
        ));
    }
    let mut best = f64::MAX;
    let mut symbols = 0;
    for _ in 0..3 {
        let started = Instant::now();
        let code = docdex::code::extract(Language::Rust, &text);
        best = best.min(started.elapsed().as_secs_f64());
        symbols = code.map_or(0, |c| c.symbols.len());
    }
    (symbols, symbols as f64 / best.max(1e-9))
}
