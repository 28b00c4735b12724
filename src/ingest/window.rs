//! Line spans and the size limits every chunker shares: the code chunker (`code.rs`) and the
//! document chunker (`chunk.rs`) both cut spans, and fall back to windows of lines.

/// Size limits for chunking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkParams {
    pub max_lines: usize,
    pub target_lines: usize,
    /// Chunks above this many characters are split further (minified or generated code).
    pub max_chars: usize,
}

impl Default for ChunkParams {
    fn default() -> Self {
        ChunkParams { max_lines: 120, target_lines: 40, max_chars: 12_000 }
    }
}

/// A line range plus what it is about, before its text is cut out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// 0-based, inclusive.
    pub start: usize,
    /// 0-based, inclusive.
    pub end: usize,
    pub heading: String,
    pub symbols: Vec<String>,
}

/// Splits `[start, end]` into windows of at most `max_lines`, cutting after a blank line in
/// the last third of a window when there is one, so paragraphs and functions stay whole.
pub(crate) fn window_spans(
    lines: &[&str],
    start: usize,
    end: usize,
    max_lines: usize,
    heading: &str,
    symbols: &[String],
) -> Vec<Span> {
    let max_lines = max_lines.max(1);
    let mut spans = Vec::new();
    let mut cursor = start;
    while cursor <= end {
        let hard_end = (cursor + max_lines - 1).min(end);
        let mut cut = hard_end;
        if hard_end < end {
            let earliest = cursor + (max_lines * 2) / 3;
            if let Some(blank) = (earliest..=hard_end).rev().find(|&i| lines[i].trim().is_empty()) {
                cut = blank;
            }
        }
        spans.push(Span { start: cursor, end: cut, heading: heading.to_string(), symbols: symbols.to_vec() });
        cursor = cut + 1;
    }
    spans
}
