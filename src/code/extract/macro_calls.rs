//! Rust macro calls read as code: an item macro's `{ … }` body parsed like the file around
//! it, an expression macro's arguments parsed as an expression, and the methods a call of a
//! `macro_rules!` macro of this file passes in for its body to call.

use tree_sitter::Node;

use super::parse;
use super::walker::{Frame, Walker, MAX_MACRO_DEPTH, UNTYPED_VALUE};
use crate::code::UseKind;

impl<'a> Walker<'a> {
    /// A `macro_invocation`'s macro, by its last name (`buf_tests` of `crate::buf_tests!`), and
    /// its arguments' token tree.
    pub(super) fn macro_call(&self, node: Node<'a>) -> Option<(&'a str, Node<'a>)> {
        let name = self.text(node.child_by_field_name("macro")?);
        let arguments = node.named_children(&mut node.walk()).find(|c| c.kind() == "token_tree")?;
        Some((name.rsplit("::").next().unwrap_or(name), arguments))
    }

    /// A call of a macro inside another's body (`buf_tests!(number $make_input, …, get_i128,
    /// …)` in `buf_tests`' own): tokens `name`, `!`, then the arguments' tree.
    pub(super) fn template_macro_call(&mut self, arguments: Node) {
        let Some(bang) = arguments.prev_sibling().filter(|b| self.text(*b) == "!") else { return };
        let Some(name) = bang.prev_sibling().filter(|n| n.kind() == "identifier") else { return };
        self.macro_call_uses(self.text(name), arguments);
    }

    /// The methods a call of a `macro_rules!` macro of this file passes in for its body to
    /// call (`MacroRules::called`): calls of them where the call spells them, on a value the
    /// graph cannot type.
    pub(super) fn macro_call_uses(&mut self, macro_name: &str, arguments: Node) {
        let Some(rules) = self.macro_rules.get(macro_name) else { return };
        let called: Vec<(String, (usize, usize))> =
            rules.called(arguments, self.src).into_iter().map(|(n, at)| (n.to_string(), at)).collect();
        for (name, (row, column)) in called {
            self.push_use_at(row as u32 + 1, column as u32 + 1, &name, UNTYPED_VALUE, UseKind::Call);
        }
    }

    /// Rust item macros (`cfg_rt! { pub struct JoinHandle … }`) hide definitions in a token
    /// tree tree-sitter leaves unparsed: a `{ … }` body that parses cleanly as Rust is read
    /// like the file around it.
    pub(super) fn expand_macro(&mut self, node: Node) {
        if self.macro_depth >= MAX_MACRO_DEPTH {
            return;
        }
        let mut cursor = node.walk();
        let Some(tree_node) = node.named_children(&mut cursor).find(|c| c.kind() == "token_tree") else {
            return;
        };
        let (from, to) = (tree_node.start_byte() + 1, tree_node.end_byte().saturating_sub(1));
        if to < from {
            return;
        }
        let Ok(body) = std::str::from_utf8(&self.src[from..to]) else {
            return;
        };
        // `assert_eq!(cart.total(), 180)`, `vec![a.len()]`: an expression macro's arguments,
        // read as a parenthesised expression (the `(` shifts the first line by one column);
        // what does not parse as one (`vec![0; n]`, a DSL) keeps the token reading.
        let (inner, prefix) = match self.src.get(from - 1) {
            Some(b'{') if to > from => (body.to_string(), 0u32),
            Some(b'(' | b'[') => (format!("({body});"), 1u32),
            _ => return,
        };
        let expression = prefix > 0;
        // An argument list that cannot be an expression (`f(&str): Send & Sync`, `x => y`,
        // `0; n`) is not parsed: the parser's recovery from the error costs more than the rest
        // of the file (tokio's `tests/async_send_sync.rs`, 300 such calls: 32 ms of 35).
        if expression && !may_be_expression(body) {
            return;
        }
        // The file's own parser (thread-local): its tree is already built, and a parser made
        // per macro cost more than parsing a short argument list.
        let Some(tree) = parse(self.language, &inner) else {
            return;
        };
        if tree.root_node().has_error() {
            return;
        }
        let outer_frame = Frame {
            end: usize::MAX,
            symbol: self.enclosing_symbol(),
            container: self.container().map(str::to_string),
            locals: self.frames.iter().rev().find_map(|f| f.locals.clone()),
        };
        let base = self.out.symbols.len() as u32;
        let mut sub = Walker::new(
            self.language,
            self.spec,
            inner.as_bytes(),
            vec![outer_frame],
            self.macro_depth + 1,
            self.symbol_base + base,
        );
        sub.local_types = self.local_types.clone();
        sub.macro_rules = self.macro_rules.clone();
        sub.generic_bounds = self.generic_bounds.iter().map(|(_, p, t)| (usize::MAX, p.clone(), t.clone())).collect();
        sub.walk(tree.root_node());
        // Positions inside the body are relative to its first byte, just after `{`.
        let start = tree_node.start_position();
        let (row_offset, column_offset) = (start.row as u32, start.column as u32 + 1);
        let shift = |line: &mut u32, column: &mut u32| {
            if *line == 1 {
                *column = (*column + column_offset).saturating_sub(prefix);
            }
            *line += row_offset;
        };
        if expression {
            // Its names are read here; the token tree's walk must not read them again as
            // bare names (`cart.total()` is a call on `cart`, not a read of `total`).
            sub.out.symbols.clear();
            self.expanded = (tree_node.start_byte(), tree_node.end_byte());
        }
        self.absorb(sub.out, shift);
    }
}

/// Whether a macro's argument list may parse as a Rust expression (in parentheses): no `:`,
/// `=>` or `;` outside brackets, strings and characters (a path's `::` is fine).
pub(super) fn may_be_expression(body: &str) -> bool {
    let bytes = body.as_bytes();
    let mut depth = 0i32;
    // Between a closure's pipes, where its parameters' types are (`|x: u8| x + 1`).
    let mut closure_head = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'|' if bytes.get(i + 1) == Some(&b'|') => i += 1,
            b'|' if depth == 0 => closure_head = !closure_head,
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'"' => {
                // To the closing quote, past escapes (a raw string's `#`s end it early: a
                // guess either way only decides whether to parse).
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            // A character (`':'`, `'\''`), not a lifetime.
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += 1;
                }
            }
            b':' if depth == 0 && !closure_head => {
                if bytes.get(i + 1) == Some(&b':') {
                    i += 1;
                } else {
                    return false;
                }
            }
            b';' if depth == 0 => return false,
            b'=' if depth == 0 && bytes.get(i + 1) == Some(&b'>') => return false,
            _ => {}
        }
        i += 1;
    }
    true
}
