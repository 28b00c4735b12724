//! Skeleton parsing for Rust: tree-sitter skips the insides of function bodies and whole-line
//! comments.
//!
//! Chunking needs items and their line ranges, not the statements of small functions, and
//! statements are most of what a Rust parse works through. A lexical pass finds function
//! bodies; the parser is then given every byte except their insides (the braces stay, so
//! each item keeps its exact line range) and except whole-line `//` comments, which the
//! chunker puts back where the comment nodes would have been. On the tokio sources that
//! cuts the parse time by well over half, and parsing was most of the indexing time. The
//! pass knows comments, strings, raw strings, chars and lifetimes, so braces inside those
//! do not count; whatever it still gets wrong shows up as a parse error, and the caller then
//! parses the whole text.

use tree_sitter::{Point, Range};

/// Byte ranges of the insides of Rust function bodies (between the braces), outermost ones
/// only. A body that defines a nested function is kept whole: its name is a symbol.
pub fn rust_fn_body_interiors(src: &[u8]) -> Vec<(usize, usize)> {
    let mut interiors = Vec::new();
    let mut depth = 0usize;
    // After `fn name`: bracket nesting since then, until the body's `{` or a `;`.
    let mut signature_opt: Option<i32> = None;
    let mut body_opt: Option<OpenBody> = None;
    let mut i = 0;
    while i < src.len() {
        let byte = src[i];
        match byte {
            b'/' if src.get(i + 1) == Some(&b'/') => i = skip_line_comment(src, i),
            b'/' if src.get(i + 1) == Some(&b'*') => i = skip_block_comment(src, i),
            b'"' => i = skip_string(src, i + 1),
            b'\'' => i = skip_char_or_lifetime(src, i),
            b'{' => {
                if signature_opt == Some(0) {
                    signature_opt = None;
                    if body_opt.is_none() {
                        body_opt = Some(OpenBody { depth, start: i + 1, nested_fn: false });
                    }
                }
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if let Some(body) = body_opt.filter(|body| body.depth == depth) {
                    if !body.nested_fn && i > body.start {
                        interiors.push((body.start, i));
                    }
                    body_opt = None;
                }
                i += 1;
            }
            b'(' | b'[' => {
                if let Some(nesting) = signature_opt.as_mut() {
                    *nesting += 1;
                }
                i += 1;
            }
            b')' | b']' => {
                if let Some(nesting) = signature_opt.as_mut() {
                    *nesting -= 1;
                }
                i += 1;
            }
            b';' => {
                // A declaration without a body (trait method, extern fn).
                if signature_opt == Some(0) {
                    signature_opt = None;
                }
                i += 1;
            }
            _ if is_word_byte(byte) => {
                let end = word_end(src, i);
                let word = &src[i..end];
                if matches!(word, b"r" | b"br" | b"cr") {
                    if let Some(after) = skip_raw_string(src, end) {
                        i = after;
                        continue;
                    }
                }
                // `fn name` starts a function; `fn(u8) -> u8` is a pointer type.
                if word == b"fn"
                    && src[end..].iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|&b| is_name_start(b))
                {
                    match body_opt.as_mut() {
                        Some(body) => body.nested_fn = true,
                        None => signature_opt = Some(0),
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    interiors
}

#[derive(Clone, Copy)]
struct OpenBody {
    /// Brace depth outside the body.
    depth: usize,
    /// First byte inside the braces.
    start: usize,
    nested_fn: bool,
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

fn is_name_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte >= 0x80
}

fn word_end(src: &[u8], from: usize) -> usize {
    src[from..].iter().position(|&b| !is_word_byte(b)).map_or(src.len(), |n| from + n)
}

fn skip_line_comment(src: &[u8], from: usize) -> usize {
    src[from..].iter().position(|&b| b == b'\n').map_or(src.len(), |n| from + n)
}

/// Block comments nest in Rust.
fn skip_block_comment(src: &[u8], from: usize) -> usize {
    let mut level = 0usize;
    let mut i = from;
    while i + 1 < src.len() {
        match (src[i], src[i + 1]) {
            (b'/', b'*') => {
                level += 1;
                i += 2;
            }
            (b'*', b'/') => {
                level -= 1;
                i += 2;
                if level == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    src.len()
}

/// From just after the opening quote to just after the closing one.
fn skip_string(src: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    src.len()
}

/// `r"…"`, `r#"…"#` and their byte and C forms, `from` being just after the prefix.
/// `None` when no raw string starts there (`r#ident` is a raw identifier).
fn skip_raw_string(src: &[u8], from: usize) -> Option<usize> {
    let hashes = src[from..].iter().take_while(|&&b| b == b'#').count();
    let mut i = from + hashes;
    if src.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while i < src.len() {
        if src[i] == b'"' && src[i + 1..].iter().take(hashes).filter(|&&b| b == b'#').count() == hashes {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(src.len())
}

/// `'x'`, `'\n'`, `'\u{1F600}'` and `'é'` are chars; `'a` and `'static` are lifetimes or
/// labels, whose name the caller then reads as a word.
fn skip_char_or_lifetime(src: &[u8], from: usize) -> usize {
    let next = from + 1;
    if src.get(next) == Some(&b'\\') {
        // Escaped char: skip the escaped byte, then up to the closing quote on this line.
        let mut i = next + 2;
        while i < src.len() && src[i] != b'\'' && src[i] != b'\n' {
            i += 1;
        }
        return (i + 1).min(src.len());
    }
    // One UTF-8 char, then a quote: a char literal.
    let mut after = next + 1;
    while after < src.len() && src[after] & 0xC0 == 0x80 {
        after += 1;
    }
    if src.get(after) == Some(&b'\'') {
        after + 1
    } else {
        next
    }
}

/// A whole-line `//` comment, left out of a skeleton parse (comments are close to half the
/// bytes of a well documented crate). The chunker treats it like the comment node a full
/// parse would have produced there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommentLine {
    pub start_byte: usize,
    /// Just after the newline (or the end of the text).
    pub end_byte: usize,
    pub row: usize,
}

/// Whole-line comments of `src` outside `holes` (sorted byte ranges left out anyway).
pub fn comment_lines(src: &[u8], holes: &[(usize, usize)]) -> Vec<CommentLine> {
    let mut comments = Vec::new();
    let mut holes = holes.iter().peekable();
    let mut line_start = 0;
    for (row, line) in src.split_inclusive(|&b| b == b'\n').enumerate() {
        let line_end = line_start + line.len();
        while holes.next_if(|&&(_, end)| end <= line_start).is_some() {}
        let in_hole = holes.peek().is_some_and(|&&(start, _)| start <= line_start);
        let is_comment =
            line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'/') && line.trim_ascii_start().starts_with(b"//");
        if is_comment && !in_hole {
            comments.push(CommentLine { start_byte: line_start, end_byte: line_end, row });
        }
        line_start = line_end;
    }
    comments
}

/// `holes` and the comment lines as one sorted list of byte ranges, touching ones joined.
pub fn merge_holes(holes: &[(usize, usize)], comments: &[CommentLine]) -> Vec<(usize, usize)> {
    let mut all: Vec<(usize, usize)> =
        holes.iter().copied().chain(comments.iter().map(|c| (c.start_byte, c.end_byte))).collect();
    all.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(all.len());
    for (start, end) in all {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Tree-sitter ranges covering `src` except `holes` (sorted, non-overlapping byte ranges).
pub fn ranges_around(src: &[u8], holes: &[(usize, usize)]) -> Vec<Range> {
    let mut ranges = Vec::with_capacity(holes.len() + 1);
    let mut cursor = PointCursor::default();
    let mut from = 0;
    for &(hole_start, hole_end) in holes {
        let start_point = cursor.point_at(src, from);
        let end_point = cursor.point_at(src, hole_start);
        ranges.push(Range { start_byte: from, end_byte: hole_start, start_point, end_point });
        from = hole_end;
    }
    let start_point = cursor.point_at(src, from);
    let end_point = cursor.point_at(src, src.len());
    ranges.push(Range { start_byte: from, end_byte: src.len(), start_point, end_point });
    ranges
}

/// Row/column of byte offsets, computed in one forward pass.
#[derive(Default)]
struct PointCursor {
    byte: usize,
    row: usize,
    line_start: usize,
}

impl PointCursor {
    fn point_at(&mut self, src: &[u8], offset: usize) -> Point {
        for (n, &b) in src[self.byte..offset].iter().enumerate() {
            if b == b'\n' {
                self.row += 1;
                self.line_start = self.byte + n + 1;
            }
        }
        self.byte = offset;
        Point { row: self.row, column: offset - self.line_start }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holes(src: &str) -> Vec<&str> {
        rust_fn_body_interiors(src.as_bytes()).into_iter().map(|(a, b)| &src[a..b]).collect()
    }

    #[test]
    fn finds_function_bodies_and_nothing_else() {
        let src = r#"
struct S { f: fn(u8) -> u8 }
trait T { fn decl(&self); fn dflt(&self) -> u8 { 1 } }
impl S {
    pub(crate) async fn run<'a>(&'a self, x: [u8; 2]) -> impl Fn() where Self: 'a { let c = '{'; c }
}
fn outer() { fn inner() {} }
const X: u8 = { 3 };
"#;
        assert_eq!(holes(src), vec![" 1 ", " let c = '{'; c "]);
    }

    #[test]
    fn braces_in_strings_comments_and_chars_do_not_count() {
        let src = r####"fn a() { let s = "}"; /* } /* nested } */ */ // }
    let r = r#"}"#; let b = b'}'; let e = '\''; let u = '\u{7D}'; let l: &'static str = "x"; }
fn b() -> u8 { 2 }"####;
        let got = holes(src);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].ends_with(r#"let l: &'static str = "x"; "#), "{got:?}");
        assert_eq!(got[1], " 2 ");
    }

    #[test]
    fn comment_lines_are_whole_lines_outside_holes() {
        let src = "// a\n  /// b\nfn f() {\n    // inside\n}\nlet x = 1; // trailing\n//! c";
        let holes = rust_fn_body_interiors(src.as_bytes());
        let comments = comment_lines(src.as_bytes(), &holes);
        let got: Vec<(&str, usize)> = comments.iter().map(|c| (&src[c.start_byte..c.end_byte], c.row)).collect();
        assert_eq!(got, vec![("// a\n", 0), ("  /// b\n", 1), ("//! c", 6)]);
        // The first two lines touch: one hole.
        let merged = merge_holes(&holes, &comments);
        assert_eq!(merged.len(), 3);
        assert!(merged.windows(2).all(|w| w[0].1 < w[1].0));
    }

    #[test]
    fn ranges_cover_everything_but_the_holes() {
        let src = b"ab\ncd{xy\nz}e";
        let ranges = ranges_around(src, &[(6, 10)]);
        assert_eq!(ranges.len(), 2);
        assert_eq!((ranges[0].start_byte, ranges[0].end_byte), (0, 6));
        assert_eq!(ranges[0].end_point, Point { row: 1, column: 3 });
        assert_eq!((ranges[1].start_byte, ranges[1].end_byte), (10, 12));
        assert_eq!(ranges[1].start_point, Point { row: 2, column: 1 });
        assert_eq!(ranges[1].end_point, Point { row: 2, column: 3 });
    }
}
