//! A second parse after a syntax error: where a grammar cannot read one construct and the
//! rest of the top-level item that holds it would be lost as loose tokens, that rest (and
//! what the error's recovery made of the lines after it) is parsed again from its next
//! top-level line and its walk absorbed into the first.

use tree_sitter::Tree;

use super::{parse_part, Walker};

/// How much of a file its parses after syntax errors may read again, in all, as a multiple of
/// its length: each parse costs about its text's length, so this bounds the time a file's
/// errors add, however many small ones it holds.
const RESYNC_BUDGET: usize = 16;

/// Parts parsed again within parts, at most: each level is a call with a walker of its own on
/// the stack, and garbage input can nest tiny parts without end.
const MAX_RESYNC_DEPTH: usize = 16;

/// Where to parse again after a syntax error swallowed top-level items, from byte `from` on:
/// the first line inside a top-level node with an error, after its first line, that opens a
/// top-level item (`top_level_line`: inside an item such lines are indented), and the end of
/// that node, where the error's reach ends. A grammar that cannot read one construct
/// (tree-sitter-typescript and generic call signatures followed by a plain one) otherwise
/// leaves the rest of the item as loose tokens, and every definition in it is lost; an error
/// that stays inside one item (indented) needs no second parse.
fn resync_point(tree: &Tree, text: &str, from: usize) -> Option<(usize, usize)> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    if root.is_error() {
        if from > 0 {
            return None;
        }
        // Nothing of the file parsed as a whole (tree-sitter-bash and an extglob such as
        // `*.@(sig|asc)`; tree-sitter-kotlin-ng and a `when` branch's guard, `is A if ok ->`):
        // its pieces are the root's children; parse again from the first top-level line
        // after the first piece that went wrong. A piece went wrong when it holds an error
        // or is a loose token (`class`, `(`, a name), where the grammar gave up on the rest:
        // every whole item is a named node with children, and a comment a named leaf.
        let loose = |c: &tree_sitter::Node| !c.is_named() || (c.child_count() == 0 && !c.kind().contains("comment"));
        let bad = root.children(&mut cursor).find(|c| c.has_error() || loose(c))?;
        let start = bad.start_byte().min(text.len());
        let at = start + text[start..].find('\n')? + 1;
        return top_level_line(text, at, text.len()).map(|at| (at, text.len()));
    }
    for node in root.children(&mut cursor).filter(|c| c.has_error() && c.start_byte() >= from) {
        let (start, end) = (node.start_byte(), node.end_byte().min(text.len()));
        let Some(first_end) = text.get(start..end).and_then(|t| t.find('\n')) else { continue };
        let mut line = start + first_end + 1;
        while let Some(at) = top_level_line(text, line, end) {
            if !in_literal(tree, at) {
                return Some((at, damage_end(node, text)));
            }
            line = at + text[at..end].find('\n').map_or(end - at, |i| i + 1);
        }
    }
    None
}

/// Whether byte `at` lies in a raw string literal: its lines begin at column 0
/// (snapbox's `str![[r#"\nOk(\n"#]]` in winnow's tests, whose `str!` tree-sitter-rust reads
/// as the type `str`, an error) and open no item; parsed again from there, the rest of the
/// test was walked as loose code outside it, its uses no test's.
///
/// Only a raw string (Rust, Go, C++), whose lines are text by design: a recovery can read code
/// as an ordinary string's content (tree-sitter-kotlin-ng and `"Value($holder)"` in
/// kotlinx-coroutines' `Channel.kt`, a string of 100 lines, no error in it), and those lines
/// are the ones to parse again.
fn in_literal(tree: &Tree, at: usize) -> bool {
    let mut node = tree.root_node().descendant_for_byte_range(at, at);
    let mut outermost = None;
    while let Some(n) = node {
        if n.kind().contains("string") {
            outermost = Some(n);
        }
        node = n.parent();
    }
    outermost.is_some_and(|n| n.kind() == "raw_string_literal" && !n.has_error())
}

/// Where what a syntax error in top-level `node` did ends: at the first top-level node after
/// it that opens a top-level line (`top_level_line`) with as many `{` as `}` before it since
/// the error's node began, which the parser began afresh. The nodes between, begun mid-line
/// or as errors, are its recovery's pieces (fmt's `color.h`: `FMT_BEGIN_EXPORT` makes one
/// error of the lines before `enum class color : uint32_t {` and a declaration of the enum's
/// rest and the next 280 lines); a node at column 0 with a brace still open is inside a
/// block the error hid (a C++ `namespace {`, whose items stand at column 0): its end is not
/// the error's. The text's braces are counted as they stand, in comments and strings too:
/// a miscount only moves the end later, to the file's end at worst, as every parse again
/// used to reach.
fn damage_end(node: tree_sitter::Node, text: &str) -> usize {
    let mut next = node.next_sibling();
    let (mut depth, mut counted) = (0i64, node.start_byte().min(text.len()));
    while let Some(sibling) = next {
        let start = sibling.start_byte().min(text.len()).max(counted);
        depth +=
            text.as_bytes()[counted..start].iter().map(|&b| i64::from(b == b'{') - i64::from(b == b'}')).sum::<i64>();
        counted = start;
        if depth != 0 {
            next = sibling.next_sibling();
            continue;
        }
        // Bytes, not `str` slicing: a node may begin where a rewritten input
        // (`Language::parse_input`) is not on a character's boundary in the text.
        let line_end = text.as_bytes()[start..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| start + i);
        let at_line_start = start == 0 || text.as_bytes()[start - 1] == b'\n';
        if !sibling.is_error() && at_line_start && top_level_line(text, start, line_end) == Some(start) {
            return start;
        }
        next = sibling.next_sibling();
    }
    text.len()
}

/// The first line in `text[at..end]` (`at` at a line's start) that begins at column 0 with
/// a letter, `_`, `@`, or `#` and a letter or `[`: `#` opens a preprocessor line (`#define`)
/// or a Rust attribute (`#[test]`), not a comment (`# …`, `#!`), from which a parse would
/// fail where the last one did.
fn top_level_line(text: &str, mut at: usize, end: usize) -> Option<usize> {
    for line in text.get(at..end)?.split_inclusive('\n') {
        let directive =
            line.strip_prefix('#').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '['));
        if line.starts_with(|c: char| c.is_ascii_alphabetic() || matches!(c, '_' | '@')) || directive {
            return Some(at);
        }
        at += line.len();
    }
    None
}

impl<'a> Walker<'a> {
    /// Walks a whole file's `tree`, parsing again what syntax errors lost.
    pub(super) fn walk_file(&mut self, tree: &Tree, text: &str) {
        let mut budget = RESYNC_BUDGET * text.len();
        self.walk_resyncing(tree, text, &mut budget, 0);
    }

    /// Walks `tree` of `text` (this walker's source); the part of a top-level item that a
    /// syntax error lost (`resync_point`) is parsed again on its own and walked in its place,
    /// then the walk goes on after the error's reach (`damage_end`). Only what an error
    /// swallowed is parsed again, and incrementally (`parse_part`): C and C++ headers hold
    /// many errors (an unknown macro each), and a fresh parse of the whole rest of the file
    /// after each one cost up to 16 parses of the file (abseil's `time.h`: 229 ms, and the
    /// budget spent before its last 43 definitions). `budget`: the bytes left to parse
    /// again, over every level (`RESYNC_BUDGET`).
    fn walk_resyncing(&mut self, tree: &Tree, text: &str, budget: &mut usize, depth: usize) {
        let (mut from, mut rows_to_from) = (0, 0);
        loop {
            let resync = if depth < MAX_RESYNC_DEPTH { resync_point(tree, text, from) } else { None }
                .filter(|(at, end)| end - at <= *budget);
            self.window = (from, resync.map_or(usize::MAX, |(at, _)| at));
            self.walk(tree.root_node());
            let Some((at, end)) = resync else { return };
            *budget -= end - at;
            let part = &text[at..end];
            if let Some(part_tree) = parse_part(self.language, tree, text, at, end) {
                let base = self.out.symbols.len() as u32;
                let mut sub =
                    Walker::new(self.language, self.spec, part.as_bytes(), Vec::new(), 0, self.symbol_base + base);
                sub.macro_rules = self.macro_rules.clone();
                sub.walk_resyncing(&part_tree, part, budget, depth + 1);
                self.renames.append(&mut sub.renames);
                let row_offset = rows_to_from + text[from..at].matches('\n').count() as u32;
                self.absorb(sub.out, |line, _| *line += row_offset);
            }
            if end >= text.len() {
                return;
            }
            rows_to_from += text[from..end].matches('\n').count() as u32;
            from = end;
        }
    }
}
