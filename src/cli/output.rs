//! How answers look in a terminal (or as JSON): search hits, web results, index summaries
//! and progress lines, and the stdout writer that treats a closed pipe as the end.

use std::io::Write;
use std::time::Instant;

use crate::protocol::{
    DocdexError, EmbedProgress, IndexProgress, IndexSummary, Result, SearchHit, SearchResponse, WaterfallResponse,
    WebFetchResponse, WebSearchResponse,
};

/// `println!` for a command's output: a closed pipe (`docdexd check | head -1`) ends the
/// output, never the process with a panic (`print_out` drops a broken pipe).
#[macro_export]
macro_rules! outln {
    () => {{
        let _ = $crate::cli::output::print_out("\n");
    }};
    ($($arg:tt)*) => {{
        let _ = $crate::cli::output::print_out(&format!("{}\n", format_args!($($arg)*)));
    }};
}

/// Prints to stdout; a closed pipe (`docdexd search … | head`) is not an error.
pub fn print_out(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(()),
    }
}

pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

pub(super) fn render_embed_progress(p: &EmbedProgress, started: Instant) -> String {
    if p.vectors == crate::protocol::STATIC_MEAN_PASS {
        return format!("static vectors: the repo's mean from {} chunks, {} to go", p.embedded, p.pending);
    }
    if p.vectors == "static" {
        return format!("static vectors: {} chunks done, {} to go", p.embedded, p.pending);
    }
    let rate = p.embedded as f64 / started.elapsed().as_secs_f64().max(1e-3);
    format!("embedding: {} chunks embedded, {} to go ({rate:.0} chunks/s)", p.embedded, p.pending)
}

pub(super) fn render_progress(p: &IndexProgress) -> String {
    format!(
        "{}/{} files read, {}, {} chunks written",
        p.files_done,
        p.files_total,
        human_bytes(p.bytes_done),
        p.chunks_written
    )
}

pub(super) fn render_summary(s: &IndexSummary) -> String {
    let mb_per_s = if s.seconds > 0.0 { s.bytes_indexed as f64 / 1e6 / s.seconds } else { 0.0 };
    let embeddings = match &s.embeddings {
        Some(e) => match &e.notice {
            Some(notice) if e.static_vectors > 0 => format!(
                "  embeddings: static vectors for {} chunks after {:.1} s; the model's: {notice}\n",
                e.static_vectors, e.static_seconds
            ),
            Some(notice) => format!("  embeddings: none computed: {notice}\n"),
            None if e.static_vectors > 0 => format!(
                "  embeddings: static vectors for {} chunks after {:.1} s (searchable by meaning from then); \
                 {} computed by the model in {:.1} s; {} chunks have the model's vector\n",
                e.static_vectors, e.static_seconds, e.embedded, e.seconds, e.vectors
            ),
            None => format!(
                "  embeddings: {} computed in {:.1} s; {} chunks searchable by meaning\n",
                e.embedded, e.seconds, e.vectors
            ),
        },
        None => String::new(),
    };
    let lexical = format!(
        "indexed {}\n  files: {} scanned, {} indexed, {} unchanged, {} deleted, {} skipped\n  chunks: {} written, {} in the index\n  bytes: {} read in {:.2} s ({:.1} MB/s)\n",
        s.repo,
        s.files_scanned,
        s.files_indexed,
        s.files_unchanged,
        s.files_deleted,
        s.files_skipped,
        s.chunks_written,
        s.chunks_total,
        human_bytes(s.bytes_indexed),
        s.seconds,
        mb_per_s
    );
    lexical + &embeddings
}

pub(super) fn render_web_search(response: &WebSearchResponse) -> String {
    let mut out = String::new();
    for (n, result) in response.results.iter().enumerate() {
        out.push_str(&format!("{}. {}\n   {}\n", n + 1, result.title, result.url));
        if !result.snippet.is_empty() {
            out.push_str(&format!("   {}\n", result.snippet));
        }
    }
    let source = if response.from_cache { "from cache".to_string() } else { format!("{} endpoint", response.endpoint) };
    out.push_str(&format!(
        "{} results for `{}` in {:.0} ms ({source}{})\n",
        response.results.len(),
        response.query,
        response.took_ms,
        if response.blocked > 0 { format!(", {} blocked", response.blocked) } else { String::new() }
    ));
    out
}

pub(super) fn render_web_fetch(response: &WebFetchResponse) -> String {
    let page = &response.page;
    format!(
        "# {}\n{}\n\n{}\n\n-- {} via {} ({}), fetched {}, {:.0} ms{}\n",
        page.title,
        page.final_url,
        page.text,
        page.url,
        page.engine,
        page.extractor,
        page.fetched_at,
        response.took_ms,
        if page.from_cache { ", from cache" } else { "" }
    )
}

pub(super) fn render_hit(out: &mut String, n: usize, hit: &SearchHit) {
    let heading = if hit.heading.is_empty() { String::new() } else { format!("  [{}]", hit.heading) };
    match &hit.url {
        Some(url) => out.push_str(&format!(
            "{}. [web] {url}  score {:.2}{heading}\n     fetched {}\n",
            n,
            hit.score,
            hit.fetched_at.as_deref().unwrap_or("?")
        )),
        None => out.push_str(&format!("{}. {}  score {:.2}{heading}\n", n, hit.location(), hit.score)),
    }
    if let Some(explain) = &hit.explain {
        out.push_str(&format!("     ({})\n", explain.summary()));
    }
    for line in hit.snippet.lines() {
        out.push_str(&format!("     | {line}\n"));
    }
}

pub(super) fn render_waterfall(response: &WaterfallResponse) -> String {
    let mut out = String::new();
    let gate = &response.gate;
    out.push_str(&format!(
        "gate: {} (local confidence {:.2}, threshold {:.2}{})\n",
        gate.decision,
        gate.top_score,
        gate.threshold,
        if gate.forced { ", forced" } else { "" }
    ));
    for tier in &response.tiers {
        out.push_str(&format!("tier {}: {} hits in {:.0} ms ({})\n", tier.tier, tier.hits, tier.took_ms, tier.reason));
    }
    if let Some(web) = &response.web {
        for page in &web.pages {
            match &page.error {
                Some(err) => out.push_str(&format!("  page {}: failed: {err}\n", page.url)),
                None => {
                    out.push_str(&format!("  page {}{}\n", page.url, if page.from_cache { " (cached)" } else { "" }))
                }
            }
        }
    }
    if let Some(notice) = &response.notice {
        out.push_str(&format!("note: {notice}\n"));
    }
    for (n, hit) in response.hits.iter().enumerate() {
        render_hit(&mut out, n + 1, hit);
    }
    out.push_str(&format!("{} hits in {:.0} ms\n", response.hits.len(), response.took_ms));
    out
}

pub(super) fn render_search(response: &SearchResponse) -> String {
    let mut out = String::new();
    // The notice says why (embeddings still pending, no model), so it matters most when
    // nothing was found.
    if let Some(notice) = &response.notice {
        out.push_str(&format!("note: {notice}\n"));
    }
    if response.hits.is_empty() {
        out.push_str(&format!("no hits for `{}` ({:.1} ms)\n", response.query, response.took_ms));
        return out;
    }
    if !response.expanded.is_empty() {
        out.push_str(&format!("also searched for: {}\n", response.expanded.join(", ")));
    }
    for (n, hit) in response.hits.iter().enumerate() {
        render_hit(&mut out, n + 1, hit);
    }
    out.push_str(&format!(
        "{} hits in {:.1} ms ({} search, confidence {:.2})\n",
        response.hits.len(),
        response.took_ms,
        response.mode.as_str(),
        response.top_score
    ));
    out
}

pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Prints an error and its hint on stderr; returns the exit code its code has.
pub fn report_error(err: &DocdexError) -> i32 {
    eprintln!("error: {}", err.message);
    if let Some(hint) = &err.hint {
        eprintln!("hint: {hint}");
    }
    err.code.exit_code()
}

/// A pack as a reader wants it: each section under its place, then the savings line.
pub(super) fn render_pack(pack: &crate::protocol::pack::PackResponse) -> String {
    let mut out = String::new();
    for s in &pack.sections {
        let place = if s.kind == "memory" {
            s.heading_path.clone()
        } else {
            let heading = if s.heading_path.is_empty() { String::new() } else { format!(" [{}]", s.heading_path) };
            format!("{}:{}-{}{heading}", s.path, s.start_line, s.end_line)
        };
        out.push_str(&format!("==> {place} ({} tokens{})\n", s.tokens, if s.truncated { ", cut to fit" } else { "" }));
        out.push_str(&s.text);
        if !s.text.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    let counted = if pack.exact { "" } else { " (estimated: no tokenizer at the LLM server)" };
    out.push_str(&format!("{}{counted}\n", pack.summary));
    out
}
