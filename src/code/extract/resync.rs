//! A second parse after a syntax error: where a grammar cannot read one construct and the
//! rest of the file would be lost as loose tokens, the rest is parsed again from the next
//! top-level line and its walk absorbed into the first.

use tree_sitter::Tree;

use super::{parse, Walker};

/// Fresh parses of the rest of a file after a syntax error, at most: each one starts at the
/// next line that opens a top-level statement.
const MAX_RESYNCS: usize = 16;

/// Where to parse again after a syntax error swallowed top-level items: the first line inside
/// a top-level node with an error, after its first line, that opens a top-level item
/// (`top_level_line`: inside an item such lines are indented). A grammar that cannot read one construct (tree-sitter-typescript
/// and generic call signatures followed by a plain one) otherwise leaves the rest of the
/// file as loose tokens, and every definition after it is lost; an error that stays inside
/// one item (indented) needs no second parse.
fn resync_point(tree: &Tree, text: &str) -> Option<usize> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    if root.is_error() {
        // Nothing of the file parsed as a whole (tree-sitter-bash and an extglob such as
        // `*.@(sig|asc)`; tree-sitter-kotlin-ng and a `when` branch's guard, `is A if ok ->`):
        // its pieces are the root's children; parse again from the first top-level line
        // after the first piece that went wrong. A piece went wrong when it holds an error
        // or is a loose token (`class`, `(`, a name), where the grammar gave up on the rest:
        // every whole item is a named node with children, and a comment a named leaf.
        let loose = |c: &tree_sitter::Node| !c.is_named() || (c.child_count() == 0 && !c.kind().contains("comment"));
        let bad = root.children(&mut cursor).find(|c| c.has_error() || loose(c))?;
        let from = bad.start_byte().min(text.len());
        let at = from + text[from..].find('\n')? + 1;
        return top_level_line(text, at, text.len());
    }
    for node in root.children(&mut cursor).filter(|c| c.has_error()) {
        let (start, end) = (node.start_byte(), node.end_byte().min(text.len()));
        let Some(first_end) = text.get(start..end).and_then(|t| t.find('\n')) else { continue };
        if let Some(at) = top_level_line(text, start + first_end + 1, end) {
            return Some(at);
        }
    }
    None
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
    /// Walks `tree` of `text` (this walker's source), and after a syntax error that loses the
    /// rest of the file, parses the rest again from the next top-level line (`resync_point`).
    pub(super) fn walk_resyncing(&mut self, tree: &Tree, text: &str, resyncs: usize) {
        let resync = if resyncs < MAX_RESYNCS { resync_point(tree, text) } else { None };
        self.stop_at = resync.unwrap_or(usize::MAX);
        self.walk(tree.root_node());
        let Some(at) = resync else { return };
        let rest = &text[at..];
        let Some(rest_tree) = parse(self.language, rest) else { return };
        let base = self.out.symbols.len() as u32;
        let mut sub = Walker::new(self.language, self.spec, rest.as_bytes(), Vec::new(), 0, self.symbol_base + base);
        sub.macro_rules = self.macro_rules.clone();
        sub.walk_resyncing(&rest_tree, rest, resyncs + 1);
        self.renames.append(&mut sub.renames);
        let row_offset = text[..at].matches('\n').count() as u32;
        self.absorb(sub.out, |line, _| *line += row_offset);
    }
}
