//! `docdex-bench bench-documents`: converting documents to indexed text. Every document under
//! a folder (HTML, PDF, DOCX, under the index's size limits) is read, converted and chunked
//! `runs` times; reported per format: files, those that cannot be converted, pages (PDF), MB,
//! and the median run's pages/s, MB/s and chunks. What the index run spends on documents
//! beyond this is the same as for any file (Tantivy, embeddings).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use docdex::config::LoadedConfig;
use docdex::ingest::{chunk_document, scan_repo, ChunkParams, Language, SizeLimits};
use docdex::protocol::Result;

#[derive(Debug, Default, Serialize)]
struct FormatReport {
    files: usize,
    /// Files that cannot be converted (encrypted, corrupt), with why.
    failed: Vec<String>,
    pages: usize,
    bytes: u64,
    chunks: usize,
    /// The median run's conversion and chunking time.
    seconds: f64,
    pages_per_sec: f64,
    mb_per_sec: f64,
}

#[derive(Debug, Serialize)]
struct DocumentsBenchReport {
    dir: String,
    runs: usize,
    formats: BTreeMap<String, FormatReport>,
}

pub fn run(loaded: &LoadedConfig, dir: &Path, runs: usize, json: bool) -> Result<i32> {
    let root = std::fs::canonicalize(dir)?;
    let limits = SizeLimits::from(&loaded.config.index);
    let params = ChunkParams {
        max_lines: loaded.config.index.max_chunk_lines,
        target_lines: loaded.config.index.target_chunk_lines,
        ..ChunkParams::default()
    };
    let mut formats: BTreeMap<String, FormatReport> = BTreeMap::new();
    let mut times: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let documents: Vec<(Language, String, Vec<u8>)> = scan_repo(&root, limits)
        .files
        .into_iter()
        .filter_map(|file| {
            let language = Language::detect(Path::new(&file.rel_path));
            let bytes = language.is_document().then(|| std::fs::read(&file.abs_path).ok()).flatten()?;
            Some((language, file.rel_path, bytes))
        })
        .collect();
    for run in 0..runs.max(1) {
        let mut run_times: BTreeMap<String, f64> = BTreeMap::new();
        for (language, path, bytes) in &documents {
            let started = Instant::now();
            let converted = docdex::document::convert(*language, path, bytes);
            let chunks = converted.as_ref().map(|document| chunk_document(document, params).len()).unwrap_or(0);
            *run_times.entry(language.name().to_string()).or_default() += started.elapsed().as_secs_f64();
            if run > 0 {
                continue;
            }
            let report = formats.entry(language.name().to_string()).or_default();
            report.files += 1;
            report.bytes += bytes.len() as u64;
            match converted {
                Ok(document) => {
                    report.pages += document.page_starts.len();
                    report.chunks += chunks;
                }
                Err(reason) => report.failed.push(format!("{path}: {reason}")),
            }
        }
        for (format, seconds) in run_times {
            times.entry(format).or_default().push(seconds);
        }
    }
    for (format, report) in &mut formats {
        let mut samples = times.remove(format).unwrap_or_default();
        samples.sort_by(f64::total_cmp);
        report.seconds = crate::search::percentile(&samples, 0.5);
        let per_sec = |n: f64| if report.seconds > 0.0 { n / report.seconds } else { 0.0 };
        report.pages_per_sec = per_sec(report.pages as f64);
        report.mb_per_sec = per_sec(report.bytes as f64 / 1e6);
    }
    let report = DocumentsBenchReport { dir: root.display().to_string(), runs, formats };
    let text = if json {
        docdex::cli::output::to_json(&report)?
    } else {
        let mut text = format!("{} ({} runs, median)\n", report.dir, report.runs);
        for (format, f) in &report.formats {
            let pages = if f.pages > 0 {
                format!(", {} pages, {:.0} pages/s", f.pages, f.pages_per_sec)
            } else {
                String::new()
            };
            text.push_str(&format!(
                "  {format}: {} files ({} failed), {:.1} MB in {:.3} s: {:.1} MB/s{pages}, {} chunks\n",
                f.files,
                f.failed.len(),
                f.bytes as f64 / 1e6,
                f.seconds,
                f.mb_per_sec,
                f.chunks
            ));
            for failed in &f.failed {
                text.push_str(&format!("    skipped {failed}\n"));
            }
        }
        text
    };
    docdex::cli::output::print_out(&text)?;
    Ok(0)
}
