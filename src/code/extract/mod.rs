//! One pass over a file's syntax tree: definitions with their containers, uses of names that
//! are not bound locally, and import statements.

mod attributes;
mod bindings;
mod definitions;
mod describe;
mod dispatch;
mod guards;
mod macro_calls;
mod macros;
mod operations;
mod outcomes;
mod resync;
mod returns;
pub(super) use attributes::{attributes, path_attribute};
pub use returns::PASSED_CLASS;
mod shapes;
mod spawns;
mod types;
mod walker;

use std::collections::HashMap;

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use super::spec::spec;
use super::{FileCode, Occurrence, Symbol, SymbolKind, UseKind, Visibility};
use crate::ingest::Language;
use operations::merge_operations;
use outcomes::note_definitions_expecting_failure;
use types::qualifier_text;
pub(crate) use types::{
    accessed_type, annotated_type, base_type_name, element_type, go_type, is_element_accessor, own_field_path,
    rust_type, rust_value_text, stated_type, top_level_split,
};
use walker::{is_ident_like, is_keyword_like, span_of, Frame, Walker};

/// Longest name kept: longer "names" are generated code or parse debris.
const MAX_NAME: usize = 160;
/// Longest signature kept, in characters.
const MAX_SIGNATURE: usize = 200;

/// Parses `text` and reads its code facts; `None` for languages without a grammar.
pub fn extract(language: Language, text: &str) -> Option<FileCode> {
    let tree = parse(language, text)?;
    extract_tree(language, &tree, text)
}

/// The name of a JavaScript module's `module.exports = function (…)` in the file at `path`:
/// what its importers call it (`const parse = require('./parse')`), the file's stem, or its
/// folder's name for an `index.js`. The graph and a diff's sides read facts through this, so
/// an importer's `parse(…)` resolves to it.
pub fn name_default_export(code: &mut FileCode, path: &str) {
    const UNNAMED: &str = "module.exports";
    if code.language != "javascript" || !code.symbols.iter().any(|s| s.name == UNNAMED) {
        return;
    }
    let path = std::path::Path::new(path);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let name = match stem {
        "index" => path.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or(""),
        _ => stem,
    };
    // A stem that is no identifier (`date-utils`) is camel-cased as its importers write it.
    let mut words = name.split(['-', '.', ' ']).filter(|w| !w.is_empty());
    let mut name: String = words.next().unwrap_or("").to_string();
    for word in words {
        let mut chars = word.chars();
        name.extend(chars.next().map(|c| c.to_ascii_uppercase()));
        name.push_str(chars.as_str());
    }
    let identifier = name.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if !identifier {
        return;
    }
    for symbol in &mut code.symbols {
        if symbol.name == UNNAMED && symbol.container.is_empty() {
            symbol.name = name.clone();
            symbol.qualified_name = name.clone();
        } else if symbol.container == UNNAMED || symbol.container.starts_with("module.exports.") {
            symbol.container = format!("{name}{}", &symbol.container[UNNAMED.len()..]);
            symbol.qualified_name = format!("{}.{}", symbol.container, symbol.name);
        }
    }
}

/// The struct a Zig file is, named after it: every Zig file is a struct, and one with fields
/// of its own (`Config.zig`: `enable_snippets: bool = true,` at the top level) is a type its
/// importers name by the file (`const Config = @import("Config.zig");`). Such a file gets a
/// symbol of its stem spanning the file, and its top-level fields become the struct's. A query
/// of the type's name then finds the file that is it. Named where a file's facts are read
/// (`code::chunks_and_code` at an index run, a diff's sides), so the stored facts hold it;
/// naming them again changes nothing.
pub fn name_file_struct(code: &mut FileCode, path: &str) {
    if code.language != "zig" {
        return;
    }
    let stem = std::path::Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let identifier = stem.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && stem.chars().all(|c| c.is_alphanumeric() || c == '_');
    let top_field = |s: &Symbol| s.kind == SymbolKind::Field && s.container.is_empty();
    if !identifier || !code.symbols.iter().any(top_field) {
        return;
    }
    let end_line = code.symbols.iter().map(|s| s.end_line).max().unwrap_or(1);
    for symbol in code.symbols.iter_mut().filter(|s| top_field(s)) {
        symbol.container = stem.to_string();
        symbol.qualified_name = format!("{stem}.{}", symbol.name);
    }
    code.symbols.insert(
        0,
        Symbol {
            name: stem.to_string(),
            qualified_name: stem.to_string(),
            kind: SymbolKind::Struct,
            line: 1,
            end_line,
            column: 1,
            signature: format!("struct {stem} (the file {})", path.rsplit('/').next().unwrap_or(path)),
            doc: String::new(),
            container: String::new(),
            visibility: Visibility::Public,
            implements: String::new(),
            test_marked: false,
        },
    );
}

thread_local! {
    /// One parser per thread, reused.
    static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(Parser::new());
}

/// A full parse of `text`.
pub fn parse(language: Language, text: &str) -> Option<Tree> {
    parse_with(language, &language.parse_input(text.as_bytes()), None)
}

/// A parse of `text[at..end]` (both at a line's start, or `end` the text's), `tree` being
/// `text`'s: the tree a full parse of the part gives, built incrementally from `tree` with
/// the bytes around the part taken away, so the parser reuses what it can of `tree`'s nodes
/// in it (a node an error's recovery built is not reused: tree-sitter marks it fragile).
pub(crate) fn parse_part(language: Language, tree: &Tree, text: &str, at: usize, end: usize) -> Option<Tree> {
    let part = text.get(at..end)?.as_bytes();
    // A rewritten input (`Language::parse_input`) may differ from the whole text's within the
    // part: the old nodes would not be the new input's.
    let input = language.parse_input(part);
    if matches!(input, std::borrow::Cow::Owned(_)) {
        return parse_with(language, &input, None);
    }
    let point = |byte: usize| {
        let before = &text[..byte];
        let row = before.matches('\n').count();
        Point::new(row, byte - before.rfind('\n').map_or(0, |i| i + 1))
    };
    let mut old = tree.clone();
    if end < text.len() {
        let (from, to) = (point(end), point(text.len()));
        old.edit(&InputEdit {
            start_byte: end,
            old_end_byte: text.len(),
            new_end_byte: end,
            start_position: from,
            old_end_position: to,
            new_end_position: from,
        });
    }
    old.edit(&InputEdit {
        start_byte: 0,
        old_end_byte: at,
        new_end_byte: 0,
        start_position: Point::new(0, 0),
        old_end_position: point(at),
        new_end_position: Point::new(0, 0),
    });
    parse_with(language, &input, Some(&old))
}

/// Parses `input`, already what the grammar is given (`Language::parse_input`).
fn parse_with(language: Language, input: &[u8], old: Option<&Tree>) -> Option<Tree> {
    let grammar = language.grammar()?;
    PARSER.with(|parser| {
        let mut parser = parser.try_borrow_mut().ok()?;
        parser.set_language(&grammar).ok()?;
        parser.parse(input, old)
    })
}

/// Reads the code facts of an already parsed text.
pub fn extract_tree(language: Language, tree: &Tree, text: &str) -> Option<FileCode> {
    let spec = spec(language)?;
    let mut walker = Walker::new(language, spec, text.as_bytes(), Vec::new(), 0, 0);
    walker.walk_file(tree, text);
    walker.keep_type_only_calls();
    walker.expand_prefixed_attributes();
    apply_renames(&mut walker.out, &walker.renames);
    walker.out.renames = std::mem::take(&mut walker.renames);
    note_definitions_expecting_failure(&mut walker.out);
    merge_operations(&mut walker.out);
    walker.out.passed.sort_unstable();
    walker.out.passed.dedup();
    walker.out.passed_by_place.sort_unstable();
    walker.out.passed_by_place.dedup();
    walker.out.written.sort_unstable();
    walker.out.compared.sort_unstable();
    let root = tree.root_node();
    let mut cursor = root.walk();
    let file_gate = |node: Node| -> Option<String> {
        let text = node.utf8_text(text.as_bytes()).ok()?;
        match language {
            // `#![cfg(feature = "serde")]` atop a file (an integration test's, a module's).
            Language::Rust if node.kind() == "inner_attribute_item" => {
                attributes::cfg_predicate(text).map(str::to_string)
            }
            // `//go:build integration` above the package clause.
            Language::Go if node.kind() == "comment" => text.strip_prefix("//go:build ").map(|c| c.trim().to_string()),
            _ => None,
        }
    };
    for child in root.children(&mut cursor) {
        if language == Language::Go && child.kind() == "package_clause" {
            break;
        }
        if language == Language::Python && child.kind() == "if_statement" && names_main(child, text) {
            walker.out.main_block = Some((child.start_position().row as u32 + 1, child.end_position().row as u32 + 1));
        }
        if let Some(cfg) = file_gate(child) {
            walker.out.gates.push(crate::code::Gate { symbol: None, cfg });
        }
    }
    Some(walker.out)
}

/// Whether a Python `if` is the script guard, `if __name__ == "__main__":` (either way round,
/// either quotes).
fn names_main(node: Node, text: &str) -> bool {
    let Some(condition) = node.child_by_field_name("condition") else { return false };
    let written: String = condition
        .utf8_text(text.as_bytes())
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\'' { '"' } else { c })
        .collect();
    written == "__name__==\"__main__\"" || written == "\"__main__\"==__name__"
}

/// Reads a use of a name the file imports under an alias as a use of the name the import's
/// target defines (`import { foo as bar }`; `bar(3)` calls `foo`): the graph finds a
/// definition's uses by its name, and `bar` is not it. A file that defines the original name
/// itself (a wrapper around the import, `def foo(): return _foo()`) keeps its uses as
/// written: the rewritten name would resolve to its own definition.
fn apply_renames(code: &mut FileCode, renames: &[(String, String)]) {
    // Two names for two modules' `create` (`create as stringCreate`, `create as numberCreate`)
    // would both become `create`, which then means either: the graph links those
    // (`CodeGraph::link_aliases`).
    let twice = |original: &str| renames.iter().filter(|(_, o)| o == original).count() > 1;
    let bare: HashMap<&str, &str> = renames
        .iter()
        .filter(|(_, original)| !code.symbols.iter().any(|s| s.name == *original) && !twice(original))
        .map(|(bound, original)| (bound.as_str(), original.as_str()))
        .collect();
    if bare.is_empty() {
        return;
    }
    // What each string becomes as a bare name and as a qualifier's head (`Bar.create()`,
    // `bar::x`); occurrences share them.
    let as_name: Vec<Option<String>> =
        code.strings.iter().map(|s| bare.get(s.as_str()).map(|original| original.to_string())).collect();
    let as_qualifier: Vec<Option<String>> = code
        .strings
        .iter()
        .map(|s| {
            let head_len = s.find(['.', ':', '(', '[', '<']).unwrap_or(s.len());
            bare.get(&s[..head_len]).map(|original| format!("{original}{}", &s[head_len..]))
        })
        .collect();
    let mut index: HashMap<String, u32> = code.strings.iter().enumerate().map(|(i, s)| (s.clone(), i as u32)).collect();
    for occurrence in &mut code.occurrences {
        let (slot, table) = if occurrence.qualifier == 0 {
            (&mut occurrence.name, &as_name)
        } else {
            (&mut occurrence.qualifier, &as_qualifier)
        };
        let Some(text) = table.get(*slot as usize).cloned().flatten() else { continue };
        *slot = *index.entry(text.clone()).or_insert_with(|| {
            code.strings.push(text);
            code.strings.len() as u32 - 1
        });
    }
}

#[cfg(test)]
mod tests {
    use super::macro_calls::may_be_expression;

    #[test]
    fn an_argument_list_that_cannot_be_an_expression_is_not_parsed() {
        for body in [
            "cart.total(), 180",
            "x, \"a: {}; b => c\", y",
            "format!(\"{x:?}\")",
            "Point { x: 1, y: 2 }, p",
            "v.iter().map(|x: &u8| x + 1).count()",
            "|x: u8| x == b':'",
            "c == ':' || c == '\\''",
            "a || b, <Vec<u8>>::new(), std::mem::take(&mut v)",
            "foo::<'a>(x)",
        ] {
            assert!(may_be_expression(body), "{body}");
        }
        for body in ["tokio::fs::canonicalize(&str): Send & Sync & !Unpin", "0; n", "x => y", "a: 1"] {
            assert!(!may_be_expression(body), "{body}");
        }
    }
}
