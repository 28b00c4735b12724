//! How a definition is described: its header and signature, its first doc line and its
//! visibility, read from the source around the node.

use std::borrow::Cow;

use tree_sitter::Node;

use super::{Walker, MAX_SIGNATURE};
use crate::code::spec::{DOC_COMMENT, DOC_OTHER};
use crate::code::{SymbolKind, Visibility};
use crate::ingest::lang::is_directive;
use crate::ingest::Language;

impl<'a> Walker<'a> {
    /// The first line of a node.
    pub(super) fn header(&self, node: Node) -> &'a str {
        self.text(node).lines().next().unwrap_or("")
    }

    /// The declaration up to its body, whitespace collapsed.
    pub(super) fn signature(&self, node: Node) -> String {
        let body = node
            .child_by_field_name("body")
            .or_else(|| {
                let mut cursor = node.walk();
                let found = node.named_children(&mut cursor).find(|c| {
                    let k = c.kind();
                    matches!(
                        k,
                        "do_block" | "block" | "class_body" | "declaration_list" | "function_body" | "template_body"
                    )
                });
                found
            })
            .filter(|b| b.start_byte() > node.start_byte());
        // A Rust tuple variant's fields are its signature (`Group(Box<Group>)`): what a
        // pattern binds from it has their types.
        let fields_are_signature = self.language == Language::Rust
            && node.kind() == "enum_variant"
            && body.is_some_and(|b| b.kind() == "ordered_field_declaration_list");
        let end = match body {
            Some(b) if !fields_are_signature => b.start_byte(),
            _ => node.end_byte(),
        };
        let text = std::str::from_utf8(&self.src[node.start_byte()..end]).unwrap_or("");
        // Ruby and Elixir bodies start after the comments under the header.
        let first_line_only = body.is_none() || matches!(self.language, Language::Ruby | Language::Elixir);
        let text = if first_line_only { text.lines().next().unwrap_or("") } else { text };
        let text = if self.language == Language::CSharp { first_branch(text) } else { Cow::Borrowed(text) };
        let mut out = String::new();
        for word in text.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
            if out.len() > MAX_SIGNATURE * 4 {
                break;
            }
        }
        let out = out.trim_end_matches(['{', ':', '=']).trim_end().to_string();
        if out.chars().count() > MAX_SIGNATURE {
            let cut: String = out.chars().take(MAX_SIGNATURE).collect();
            format!("{cut}…")
        } else {
            out
        }
    }

    /// The first line of the comment right above a definition, or of a Python docstring.
    pub(super) fn doc(&self, node: Node) -> String {
        if self.language == Language::Python {
            let docstring = node
                .child_by_field_name("body")
                .and_then(|b| b.named_child(0))
                .filter(|s| s.kind() == "expression_statement")
                .and_then(|s| s.named_child(0))
                .filter(|s| s.kind() == "string");
            if let Some(s) = docstring {
                return first_doc_line(self.text(s));
            }
        }
        // Comments sit before the node, or before the wrapper it is in (`export`, decorators).
        let mut anchor = node;
        for _ in 0..3 {
            let level = self.level_of(anchor);
            let mut prev = level.run.iter().rev().peekable();
            while prev.next_if(|p| !p.comment).is_some() {}
            let mut block: Vec<&Prior> = Vec::new();
            let mut next_row = anchor.start_position().row;
            while let Some(p) = prev.next_if(|p| p.comment) {
                if p.end_row + 1 < next_row {
                    break;
                }
                next_row = p.start_row;
                block.push(p);
            }
            if !block.is_empty() {
                let text: Vec<&str> =
                    block.iter().rev().map(|p| std::str::from_utf8(&self.src[p.start..p.end]).unwrap_or("")).collect();
                return first_doc_line(&text.join("\n"));
            }
            match anchor.parent() {
                Some(parent)
                    if matches!(
                        parent.kind(),
                        "export_statement" | "decorated_definition" | "template_declaration"
                    ) =>
                {
                    anchor = parent
                }
                // The first item of a body the grammar starts at that item (Ruby's
                // `body_statement`): the comment is the body's sibling.
                Some(parent)
                    if !level.named_before
                        && parent.start_byte() == anchor.start_byte()
                        && parent.parent().is_some() =>
                {
                    anchor = parent
                }
                _ => break,
            }
        }
        String::new()
    }

    /// What came before `node` among its siblings: kept by the walk for the node it is on
    /// and its ancestors; read from the parent for any other node.
    fn level_of(&self, node: Node) -> Level {
        if let Some(level) = self.levels.iter().rev().find(|l| l.id == node.id()) {
            return level.clone();
        }
        let mut level = Level::default();
        if let Some(parent) = node.parent() {
            let mut cursor = parent.walk();
            for child in parent.children(&mut cursor).take_while(|c| c.id() != node.id()) {
                level.passed(child, self.doc_roles);
            }
        }
        level
    }

    pub(super) fn visibility(&self, node: Node, kind: SymbolKind, qualified_name: &str) -> Visibility {
        let name = qualified_name.rsplit(['.', ':']).next().unwrap_or(qualified_name);
        if kind == SymbolKind::EnumMember || self.container_kind() == Some(SymbolKind::Interface) {
            return Visibility::Public;
        }
        // `private $items = []`: the modifiers are on the declaration around the element.
        let owner = if node.kind().ends_with("_element") || node.kind().ends_with("declarator") {
            node.parent().unwrap_or(node)
        } else {
            node
        };
        let header = self.header(owner);
        let words = |w: &str| header.split(|c: char| !c.is_alphanumeric() && c != '_').any(|x| x == w);
        let written = || {
            if words("private") || words("fileprivate") {
                Some(Visibility::Private)
            } else if words("protected") {
                Some(Visibility::Protected)
            } else if words("internal") {
                Some(Visibility::Internal)
            } else if words("public") || words("open") {
                Some(Visibility::Public)
            } else {
                None
            }
        };
        match self.language {
            Language::Rust => {
                let mut cursor = node.walk();
                let vis = node.named_children(&mut cursor).find(|c| c.kind() == "visibility_modifier");
                match vis.map(|v| self.text(v)) {
                    Some("pub") => Visibility::Public,
                    Some(_) => Visibility::Internal,
                    None if kind == SymbolKind::EnumMember => Visibility::Public,
                    None => Visibility::Private,
                }
            }
            Language::Python => {
                if name.starts_with("__") && name.ends_with("__") {
                    Visibility::Public
                } else if name.starts_with('_') {
                    Visibility::Private
                } else {
                    Visibility::Public
                }
            }
            Language::Go => {
                if name.chars().next().is_some_and(|c| c.is_uppercase()) {
                    Visibility::Public
                } else {
                    Visibility::Private
                }
            }
            Language::TypeScript | Language::Tsx | Language::JavaScript => {
                if name.starts_with('#') {
                    return Visibility::Private;
                }
                if let Some(v) = written() {
                    return v;
                }
                let mut up = node.parent();
                for _ in 0..3 {
                    match up {
                        Some(p) if p.kind() == "export_statement" => return Visibility::Public,
                        Some(p) if matches!(p.kind(), "class_body" | "object_type" | "interface_body") => {
                            return Visibility::Public
                        }
                        Some(p) => up = p.parent(),
                        None => break,
                    }
                }
                Visibility::Private
            }
            Language::Java => written().unwrap_or(Visibility::Internal),
            Language::CSharp => {
                written().unwrap_or(if kind.is_container() { Visibility::Internal } else { Visibility::Private })
            }
            Language::Kotlin | Language::Scala | Language::Php | Language::Swift | Language::Cpp => written()
                .unwrap_or(if self.language == Language::Swift { Visibility::Internal } else { Visibility::Public }),
            Language::C => {
                if words("static") {
                    Visibility::Private
                } else {
                    Visibility::Public
                }
            }
            Language::Zig => {
                if header.trim_start().starts_with("pub ") {
                    Visibility::Public
                } else {
                    Visibility::Private
                }
            }
            Language::Lua => {
                if header.trim_start().starts_with("local ") {
                    Visibility::Private
                } else {
                    Visibility::Public
                }
            }
            _ => Visibility::Public,
        }
    }
}

/// The first non-empty line of a comment or docstring, markers removed.
fn first_doc_line(text: &str) -> String {
    for line in text.lines() {
        let line = line
            .trim()
            .trim_start_matches("r\"\"\"")
            .trim_start_matches("\"\"\"")
            .trim_start_matches("'''")
            .trim_start_matches("///")
            .trim_start_matches("//!")
            .trim_start_matches("//")
            .trim_start_matches("/**")
            .trim_start_matches("/*")
            .trim_start_matches("-- |")
            .trim_start_matches("--")
            .trim_start_matches('*')
            .trim_start_matches('#')
            .trim_start_matches(';')
            .trim_end_matches("*/")
            .trim_end_matches("\"\"\"")
            .trim_end_matches("'''")
            .trim();
        let line = line.trim_start_matches("<summary>").trim_end_matches("</summary>").trim();
        if !line.is_empty() {
            return line.chars().take(MAX_SIGNATURE).collect();
        }
    }
    String::new()
}

/// One depth of the walk (see `Walker::levels`).
#[derive(Debug, Clone, Default)]
pub(super) struct Level {
    /// The node the walk is on at this depth.
    pub id: usize,
    /// Whether a named sibling came before it.
    pub named_before: bool,
    /// The comments and attributes right before it, in order.
    pub run: Vec<Prior>,
}

/// A comment (or an attribute, decorator or annotation) before a node.
#[derive(Debug, Clone)]
pub(super) struct Prior {
    pub comment: bool,
    pub start_row: usize,
    pub end_row: usize,
    pub start: usize,
    pub end: usize,
}

impl Level {
    /// The walk moves past `node` to its next sibling (`doc_roles`: the language's
    /// `spec::doc_roles`).
    pub fn passed(&mut self, node: Node, doc_roles: &[u8]) {
        if !node.is_named() {
            return;
        }
        self.named_before = true;
        let role = doc_roles.get(node.kind_id() as usize).copied().unwrap_or(DOC_OTHER);
        if role == DOC_OTHER {
            self.run.clear();
        } else {
            self.run.push(Prior {
                comment: role == DOC_COMMENT,
                start_row: node.start_position().row,
                end_row: node.end_position().row,
                start: node.start_byte(),
                end: node.end_byte(),
            });
        }
    }
}

/// A C# declaration's text as the parse read it: a type's modifiers chosen by the preprocessor
/// (`#if` / `internal` / `#else` / `public` / `#endif`, `Language::parse_input`) are their first
/// branch's, so the lines from an `#else` or `#elif` to the `#endif` and every directive go.
fn first_branch(text: &str) -> Cow<'_, str> {
    if !text.contains('#') {
        return Cow::Borrowed(text);
    }
    let directive = |line: &str, name: &str| is_directive(line.as_bytes(), name);
    let mut out = String::with_capacity(text.len());
    let mut other_branch = false;
    for line in text.split_inclusive('\n') {
        if directive(line, "else") || directive(line, "elif") {
            other_branch = true;
        } else if directive(line, "endif") {
            other_branch = false;
        } else if !other_branch && !line.trim_start().starts_with('#') {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}
