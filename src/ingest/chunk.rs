//! Splitting a file into search units: code at item boundaries (see `code.rs`), Markdown by
//! headings with the heading path, documents (HTML, PDF, DOCX, converted to text by
//! `crate::document`) by their headings and pages, plain text by paragraphs, anything else by
//! line windows that prefer blank-line boundaries.

use super::code::chunk_code;
use super::lang::Language;
use super::licence;
use super::sha256_hex;
use super::window::{window_spans, ChunkParams, Span};

/// One search unit of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// 1-based, inclusive.
    pub line_start: u64,
    /// 1-based, inclusive.
    pub line_end: u64,
    pub text: String,
    /// Heading path for documents ("Setup > Linux"); enclosing item and item names for code.
    pub heading: String,
    /// Names of the items the chunk defines (functions, types, …); boosted in search.
    pub symbols: Vec<String>,
    /// Further names defined on the chunk's lines that the code facts find and the chunker
    /// does not (`add_definitions`): looked up by a query of one identifier, not scored as
    /// text (as `symbols` they would weigh on every question in words).
    pub defined: Vec<String>,
    /// Names the chunk makes public from elsewhere (`pub use axum_core::extract::FromRequest`,
    /// `export { parse } from './parse'`; `add_exports`): where a query of one of them is
    /// answered when the repo defines it nowhere.
    pub exported: Vec<String>,
    /// SHA-256 of `text`: lets later stages (embeddings) skip unchanged chunks.
    pub content_hash: String,
    /// Code of a file that documents no public item (see `surface.rs`).
    pub internal: bool,
    /// A PDF's chunks: the page (1-based) the chunk starts on.
    pub page: Option<u32>,
}

/// A document converted to text: what `chunk_document` cuts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentText {
    /// The document's text; its lines are the lines hits and `get` report.
    pub text: String,
    /// Its headings in line order.
    pub headings: Vec<Heading>,
    /// The 0-based line each page starts on, in order (PDF); empty for a document without pages.
    pub page_starts: Vec<usize>,
}

/// A heading of a document: 0-based line, level (1 is the top) and title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub line: usize,
    pub level: usize,
    pub title: String,
}

/// Fewer visible characters than this make a piece of a section cut at a page break part of
/// the piece before it.
const MIN_PAGE_PIECE_CHARS: usize = 48;

/// Chunks a converted document: sections by its headings, each with its heading path, cut
/// where a page starts so each chunk has one page.
pub fn chunk_document(document: &DocumentText, params: ChunkParams) -> Vec<Chunk> {
    let lines: Vec<&str> = document.text.lines().collect();
    if lines.is_empty() {
        return Vec::new();
    }
    // A page's running header or number before its next heading ("Chapter 2: Usage 7") is
    // too little to stand alone: it stays with the section's piece on the page before.
    let tiny = |start: usize, end: usize| {
        lines[start..=end].iter().map(|l| l.chars().filter(|c| !c.is_whitespace()).count()).sum::<usize>()
            < MIN_PAGE_PIECE_CHARS
    };
    let mut spans: Vec<Span> = Vec::new();
    for span in heading_spans(&lines, &document.headings, params) {
        let first = spans.len();
        let mut start = span.start;
        let breaks = document.page_starts.iter().copied().filter(|&p| p > span.start && p <= span.end);
        for end in breaks.map(|p| p - 1).chain([span.end]) {
            if end < start {
                continue;
            }
            let follows_a_piece = spans.len() > first;
            match spans.last_mut() {
                Some(before) if follows_a_piece && tiny(start, end) => before.end = end,
                _ => spans.push(Span { start, end, ..span.clone() }),
            }
            start = end + 1;
        }
    }
    let page_of = |line: usize| {
        let pages_started = document.page_starts.partition_point(|&p| p <= line);
        (!document.page_starts.is_empty()).then_some(pages_started.max(1) as u32)
    };
    chunks_of(&lines, spans, params, page_of)
}

/// Chunks one file's text according to its language.
pub fn chunk_file(language: Language, text: &str, params: ChunkParams) -> Vec<Chunk> {
    chunk_file_parsed(language, text, params, None)
}

/// `chunk_file` with the text's full tree-sitter parse, when the caller has one (the index
/// run parses each source file once, for its chunks and its code facts).
pub fn chunk_file_parsed(
    language: Language,
    text: &str,
    params: ChunkParams,
    tree_opt: Option<&tree_sitter::Tree>,
) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let spans = match language {
        // A document's `text` here is its converted text (`chunk_document` also has its pages).
        Language::Markdown | Language::Html | Language::Pdf | Language::Docx => {
            heading_spans(&lines, &markdown_headings(&lines), params)
        }
        Language::Text => window_spans(&lines, 0, lines.len() - 1, params.target_lines, "", &[]),
        _ => chunk_code(language, text, &lines, params, tree_opt)
            .unwrap_or_else(|| window_spans(&lines, 0, lines.len() - 1, params.target_lines, "", &[])),
    };
    chunks_of(&lines, after_licence(spans, licence::header_lines(language, &lines)), params, |_| None)
}

/// The spans without the file's first `header` lines (its licence notice, `licence.rs`): a
/// span within them is dropped, one across their end starts after it.
fn after_licence(spans: Vec<Span>, header: usize) -> Vec<Span> {
    if header == 0 {
        return spans;
    }
    spans
        .into_iter()
        .filter(|span| span.end >= header)
        .map(|span| Span { start: span.start.max(header), ..span })
        .collect()
}

/// The chunks of spans: each cut to the size limit, blank ones dropped.
fn chunks_of(
    lines: &[&str],
    spans: Vec<Span>,
    params: ChunkParams,
    page_of: impl Fn(usize) -> Option<u32>,
) -> Vec<Chunk> {
    spans
        .into_iter()
        .flat_map(|span| enforce_max_chars(lines, span, params.max_chars))
        .filter_map(|span| {
            let text = lines[span.start..=span.end].join("\n");
            if text.trim().is_empty() {
                return None;
            }
            Some(Chunk {
                line_start: span.start as u64 + 1,
                line_end: span.end as u64 + 1,
                content_hash: sha256_hex(text.as_bytes()),
                text,
                heading: span.heading,
                symbols: span.symbols,
                defined: Vec::new(),
                exported: Vec::new(),
                internal: false,
                page: page_of(span.start),
            })
        })
        .collect()
}

fn enforce_max_chars(lines: &[&str], span: Span, max_chars: usize) -> Vec<Span> {
    let chars: usize = lines[span.start..=span.end].iter().map(|l| l.len() + 1).sum();
    if chars <= max_chars || span.start == span.end {
        return vec![span];
    }
    let len = span.end - span.start + 1;
    let pieces = chars.div_ceil(max_chars);
    let per_piece = len.div_ceil(pieces).max(1);
    window_spans(lines, span.start, span.end, per_piece, &span.heading, &span.symbols)
}

/// A Markdown heading found on a line: (level, title).
fn atx_heading(line: &str) -> Option<(usize, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim_end().to_string();
    Some((level, title))
}

fn fence_marker(line: &str) -> Option<&'static str> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("```") {
        Some("```")
    } else if trimmed.starts_with("~~~") {
        Some("~~~")
    } else {
        None
    }
}

/// Adds to each chunk's `defined` the names defined on its lines (`definitions`: a 1-based
/// line and a name) that it does not name yet. The chunker names what it cuts at; the code facts know
/// every language's definitions (a C function's name sits in its declarator, a Haskell
/// equation has no item node), and a query naming one looks it up by the chunk's names.
pub fn add_definitions<'a>(chunks: &mut [Chunk], definitions: impl IntoIterator<Item = (u64, &'a str)>) {
    for (line, name) in definitions {
        let Some(chunk) = chunk_at(chunks, line) else { continue };
        if !chunk.symbols.iter().chain(&chunk.defined).any(|s| s == name) {
            chunk.defined.push(name.to_string());
        }
    }
}

/// Puts each re-exported name (with the 1-based line of its statement) into `exported` of
/// the chunk holding that line.
pub fn add_exports<'a>(chunks: &mut [Chunk], exports: impl IntoIterator<Item = (u64, &'a str)>) {
    for (line, name) in exports {
        let Some(chunk) = chunk_at(chunks, line) else { continue };
        if !chunk.exported.iter().any(|s| s == name) {
            chunk.exported.push(name.to_string());
        }
    }
}

/// The chunk holding 1-based `line`: chunks are in line order and do not overlap, so it is
/// the last one starting at or before it, if it reaches that far.
fn chunk_at(chunks: &mut [Chunk], line: u64) -> Option<&mut Chunk> {
    let at = chunks.partition_point(|c| c.line_start <= line);
    at.checked_sub(1).and_then(|i| chunks.get_mut(i)).filter(|c| line <= c.line_end)
}

/// The headings of Markdown text (ATX and setext); headings inside code fences are text.
pub fn markdown_headings(lines: &[&str]) -> Vec<Heading> {
    let mut headings = Vec::new();
    let mut fence: Option<&'static str> = None;
    let mut i = 0;
    // YAML front matter is metadata, not a thematic break or a setext heading.
    if lines.first().is_some_and(|l| l.trim() == "---") {
        if let Some(close) = lines.iter().skip(1).position(|l| l.trim() == "---" || l.trim() == "...") {
            i = close + 2;
        }
    }
    let first_content_line = i;
    while i < lines.len() {
        let line = lines[i];
        if let Some(marker) = fence_marker(line) {
            fence = match fence {
                Some(open) if open == marker => None,
                Some(open) => Some(open),
                None => Some(marker),
            };
        } else if fence.is_none() {
            if let Some((level, title)) = atx_heading(line) {
                headings.push(Heading { line: i, level, title });
            } else if i + 1 < lines.len()
                && !line.trim().is_empty()
                && (i == first_content_line || lines[i - 1].trim().is_empty())
            {
                let underline = lines[i + 1].trim();
                let level = if !underline.is_empty() && underline.chars().all(|c| c == '=') {
                    1
                } else if underline.len() >= 2 && underline.chars().all(|c| c == '-') {
                    2
                } else {
                    0
                };
                if level > 0 {
                    headings.push(Heading { line: i, level, title: line.trim().to_string() });
                    i += 2;
                    continue;
                }
            }
        }
        i += 1;
    }
    headings
}

/// Sections of text by its headings: each heading starts a section that runs to the next
/// heading, and the section carries the path of headings above it.
fn heading_spans(lines: &[&str], headings: &[Heading], params: ChunkParams) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let preamble_end = headings.first().map(|h| h.line).unwrap_or(lines.len());
    if preamble_end > 0 {
        spans.extend(window_spans(lines, 0, preamble_end - 1, params.max_lines, "", &[]));
    }
    for (n, Heading { line, level, title }) in headings.iter().enumerate() {
        while stack.last().is_some_and(|(l, _)| l >= level) {
            stack.pop();
        }
        stack.push((*level, title.clone()));
        let end = headings.get(n + 1).map(|h| h.line).unwrap_or(lines.len()) - 1;
        if end < *line || *line >= lines.len() {
            // Two headings on one line (an outline's chapter and its first section): the
            // first lives on in the second's path.
            continue;
        }
        let body_start = lines[*line..=end]
            .iter()
            .skip(1)
            .position(|l| !l.trim().is_empty() && !l.trim().chars().all(|c| c == '=' || c == '-'));
        let has_children = headings.get(n + 1).is_some_and(|next| next.level > *level);
        if body_start.is_none() && has_children {
            // A heading with no text of its own: its title lives on in its children's paths.
            // One without children either (a file that is only a title) is its own chunk.
            continue;
        }
        let path = stack.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" > ");
        spans.extend(window_spans(lines, *line, end, params.max_lines, &path, &[]));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_sections_carry_heading_paths() {
        let doc = "Intro line\n\n# Setup\n\nGeneral.\n\n## Linux\n\n### Packages\n\napt-get install x\n\n```sh\n# not a heading\n```\n\n## macOS\n\nbrew install x\n\n# Usage\nRun it.\n";
        let chunks = chunk_file(Language::Markdown, doc, ChunkParams::default());
        let headings: Vec<&str> = chunks.iter().map(|c| c.heading.as_str()).collect();
        assert_eq!(headings, vec!["", "Setup", "Setup > Linux > Packages", "Setup > macOS", "Usage"]);
        let packages = &chunks[2];
        assert_eq!((packages.line_start, packages.line_end), (9, 16));
        assert!(packages.text.contains("# not a heading"));
    }

    #[test]
    fn a_heading_without_text_or_children_is_kept() {
        let chunks = chunk_file(Language::Markdown, "# Only a heading\n", ChunkParams::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].heading, "Only a heading");
        let chunks = chunk_file(Language::Markdown, "# Top\n## Empty\n## Full\ntext\n", ChunkParams::default());
        let headings: Vec<&str> = chunks.iter().map(|c| c.heading.as_str()).collect();
        assert_eq!(headings, vec!["Top > Empty", "Top > Full"]);
    }

    #[test]
    fn setext_headings_and_front_matter() {
        let doc = "---\ntitle: x\n---\nTitle\n=====\n\nBody one.\n\nSub\n---\n\nBody two.\n";
        let chunks = chunk_file(Language::Markdown, doc, ChunkParams::default());
        let headings: Vec<&str> = chunks.iter().map(|c| c.heading.as_str()).collect();
        assert_eq!(headings, vec!["", "Title", "Title > Sub"]);
    }

    #[test]
    fn document_chunks_follow_headings_and_break_at_pages() {
        let long = "a line of body text that is long enough to stand alone";
        let text = format!("Cover\n\nChapter 1\nIntro text\nmore intro\n\nSection 1.1\nbody a\n{long}\n{long}\n7\n");
        let document = DocumentText {
            text,
            headings: vec![
                Heading { line: 2, level: 1, title: "Chapter 1".into() },
                Heading { line: 6, level: 2, title: "Section 1.1".into() },
                // On the same line as its parent: nothing of its own, kept in no path.
                Heading { line: 6, level: 3, title: "Twin".into() },
            ],
            // Page 4 holds only its number: too little to stand alone.
            page_starts: vec![0, 2, 8, 10],
        };
        let chunks = chunk_document(&document, ChunkParams::default());
        let got: Vec<(u64, u64, &str, Option<u32>)> =
            chunks.iter().map(|c| (c.line_start, c.line_end, c.heading.as_str(), c.page)).collect();
        assert_eq!(
            got,
            vec![
                (1, 2, "", Some(1)),
                (3, 6, "Chapter 1", Some(2)),
                (7, 8, "Chapter 1 > Section 1.1 > Twin", Some(2)),
                (9, 11, "Chapter 1 > Section 1.1 > Twin", Some(3)),
            ]
        );
        // Without pages, no page.
        let plain = DocumentText { page_starts: Vec::new(), ..document };
        assert!(chunk_document(&plain, ChunkParams::default()).iter().all(|c| c.page.is_none()));
    }

    #[test]
    fn text_splits_at_paragraphs_within_the_target() {
        let para = "word ".repeat(10);
        let doc = (0..30).map(|i| if i % 4 == 3 { String::new() } else { para.clone() }).collect::<Vec<_>>().join("\n");
        let params = ChunkParams { target_lines: 10, ..ChunkParams::default() };
        let chunks = chunk_file(Language::Text, &doc, params);
        assert!(chunks.len() >= 3);
        for chunk in &chunks {
            assert!(chunk.line_end - chunk.line_start < 10);
        }
        // Every non-blank line is in exactly one chunk.
        let covered: u64 = chunks.iter().map(|c| c.text.lines().filter(|l| !l.is_empty()).count() as u64).sum();
        assert_eq!(covered, doc.lines().filter(|l| !l.is_empty()).count() as u64);
    }

    #[test]
    fn huge_lines_are_split_by_characters() {
        let doc = (0..10).map(|_| "x".repeat(5000)).collect::<Vec<_>>().join("\n");
        let chunks = chunk_file(Language::OtherCode("json"), &doc, ChunkParams::default());
        assert!(chunks.len() >= 4, "{}", chunks.len());
        assert!(chunks.iter().all(|c| c.text.len() <= 12_000));
    }
}
