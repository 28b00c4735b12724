//! Splitting a file into search units: code at item boundaries (see `code.rs`), Markdown by
//! headings with the heading path, plain text by paragraphs, anything else by line windows
//! that prefer blank-line boundaries.

use super::code::chunk_code;
use super::lang::Language;
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
    /// SHA-256 of `text`: lets later stages (embeddings) skip unchanged chunks.
    pub content_hash: String,
    /// Code of a file that documents no public item (see `surface.rs`).
    pub internal: bool,
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
        Language::Markdown => markdown_spans(&lines, params),
        Language::Text => window_spans(&lines, 0, lines.len() - 1, params.target_lines, "", &[]),
        _ => chunk_code(language, text, &lines, params, tree_opt)
            .unwrap_or_else(|| window_spans(&lines, 0, lines.len() - 1, params.target_lines, "", &[])),
    };
    spans
        .into_iter()
        .flat_map(|span| enforce_max_chars(&lines, span, params.max_chars))
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
                internal: false,
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

/// Markdown sections: each heading starts a section that runs to the next heading; the
/// section carries the path of headings above it. Headings inside code fences are text.
fn markdown_spans(lines: &[&str], params: ChunkParams) -> Vec<Span> {
    // (line index, level, title) of every heading.
    let mut headings: Vec<(usize, usize, String)> = Vec::new();
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
                headings.push((i, level, title));
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
                    headings.push((i, level, line.trim().to_string()));
                    i += 2;
                    continue;
                }
            }
        }
        i += 1;
    }

    let mut spans = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let preamble_end = headings.first().map(|h| h.0).unwrap_or(lines.len());
    if preamble_end > 0 {
        spans.extend(window_spans(lines, 0, preamble_end - 1, params.max_lines, "", &[]));
    }
    for (n, (line, level, title)) in headings.iter().enumerate() {
        while stack.last().is_some_and(|(l, _)| l >= level) {
            stack.pop();
        }
        stack.push((*level, title.clone()));
        let end = headings.get(n + 1).map(|h| h.0).unwrap_or(lines.len()) - 1;
        let body_start = lines[*line..=end]
            .iter()
            .skip(1)
            .position(|l| !l.trim().is_empty() && !l.trim().chars().all(|c| c == '=' || c == '-'));
        let has_children = headings.get(n + 1).is_some_and(|(_, next_level, _)| next_level > level);
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
