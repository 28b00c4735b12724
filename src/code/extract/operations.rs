//! What code does to a value that runs a special method of its type, rather than a call of
//! the method's name: formatting (`__repr__`, `__str__`; Rust's `Debug::fmt`, `Display::fmt`),
//! operators and comparisons (`__sub__`, `__lt__`), `del x[k]`
//! (`__delitem__`), copying and pickling (`__deepcopy__`, `__getstate__`), and the shapes of
//! value a Rust file (de)serializes. A test runs such a method only where it does so
//! (`FileCode::operations`).

use tree_sitter::Node;

use super::attributes::attributes;
use super::Walker;
use crate::code::{
    FileCode, ADDS, BIT_AND, BIT_OR, BIT_XOR, COPIES, DELETES_ITEM, DIVIDES, FORMATS_REPR, FORMATS_STR, INDEXES,
    INVERTS, MODULO, MULTIPLIES, NOT_EQUAL, ORDERS, PARSES, POWERS, ROUNDS, SERDE_NEWTYPE_STRUCT,
    SERDE_NEWTYPE_VARIANT, SERDE_STRUCT, SERDE_STRUCT_VARIANT, SERDE_TUPLE_STRUCT, SERDE_TUPLE_VARIANT,
    SERDE_UNIT_STRUCT, SERDE_UNIT_VARIANT, SHIFTS, SIGNS, SUBTRACTS, TOP_LEVEL,
};

/// Sorts `operations` by definition and merges each definition's entries into one.
pub(super) fn merge_operations(code: &mut FileCode) {
    code.operations.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(code.operations.len());
    for (index, bits) in code.operations.drain(..) {
        match merged.last_mut() {
            Some((last, all)) if *last == index => *all |= bits,
            _ => merged.push((index, bits)),
        }
    }
    code.operations = merged;
}

/// What a Rust format string's placeholders run: `{}`, `{name}`, `{:>8}` a value's `Display`
/// (`FORMATS_STR`); `{:?}`, `{:#?}` its `Debug` (`FORMATS_REPR`); `{:x}` and the other
/// traits neither (`{{` is a brace).
fn placeholder_bits(template: &str) -> u32 {
    let mut bits = 0;
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if let Some(escaped) = rest.strip_prefix('{') {
            rest = escaped;
            continue;
        }
        let Some(close) = rest.find('}') else { break };
        let spec = rest[..close].split_once(':').map_or("", |(_, spec)| spec);
        bits |= match spec.chars().last() {
            Some('?') => FORMATS_REPR,
            Some('x' | 'X' | 'o' | 'b' | 'e' | 'E' | 'p') => 0,
            _ => FORMATS_STR,
        };
        rest = &rest[close + 1..];
    }
    bits
}

/// What a Python call of a function or method by this name does to its arguments or receiver
/// that runs a special method: formats it, copies or pickles it (`copy`, `deepcopy`,
/// `pickle.dumps`), deletes an item (`MutableMapping`'s `pop`, `popitem`, `clear`), orders
/// (`sorted`, `max`, `bisect`, `heapq`), adds (`sum`), raises to a power or rounds.
fn python_call_operations(name: &str) -> u32 {
    match name {
        "repr" | "ascii" | "pformat" | "pprint" | "saferepr" => FORMATS_REPR,
        "str" | "print" | "format" => FORMATS_STR,
        "copy" | "deepcopy" | "dumps" | "loads" | "dump" | "load" => COPIES,
        "pop" | "popitem" | "clear" | "remove" => DELETES_ITEM,
        "sorted" | "sort" | "max" | "min" | "nlargest" | "nsmallest" | "heappush" | "heappop" | "heapify"
        | "heappushpop" | "heapreplace" | "insort" | "insort_left" | "insort_right" | "bisect" | "bisect_left"
        | "bisect_right" => ORDERS,
        "sum" => ADDS,
        "pow" => POWERS,
        "abs" | "round" | "floor" | "ceil" | "trunc" | "divmod" => ROUNDS,
        _ => 0,
    }
}

/// What a Python operator runs (binary, or `unary`; an augmented assignment's without its
/// `=`: `-=` falls back to `__sub__`).
fn python_operator_operations(operator: &str, unary: bool) -> u32 {
    match operator {
        "+" | "-" if unary => SIGNS,
        "~" => INVERTS,
        "+" => ADDS,
        "-" => SUBTRACTS,
        "*" | "@" => MULTIPLIES,
        "/" | "//" => DIVIDES,
        "%" => MODULO,
        "**" => POWERS,
        "<<" | ">>" => SHIFTS,
        "&" => BIT_AND,
        "|" => BIT_OR,
        "^" => BIT_XOR,
        _ => 0,
    }
}

impl<'a> Walker<'a> {
    /// Notes what a Python or Rust node does to a value that runs one of its type's special
    /// methods (`FileCode::operations`). Python: a call of `repr`, `ascii`, `pformat`, `pprint`
    /// or `saferepr`, a `%r` or a `!r` conversion run `__repr__`; a call of `str`, `print`,
    /// `format` or a string's `.format`, an f-string's value, a `%s`, and `match=` (pytest
    /// matches the error's text) run `__str__`; an operator, a comparison, `del x[k]` and the
    /// calls of `python_call_operations` run the rest.
    pub(super) fn note_operations(&mut self, node: Node) {
        let mut bits = 0u32;
        match node.kind() {
            "call" => {
                let name = node.child_by_field_name("function").and_then(|f| match f.kind() {
                    "identifier" => Some(self.text(f)),
                    "attribute" => f.child_by_field_name("attribute").map(|a| self.text(a)),
                    _ => None,
                });
                bits |= name.map_or(0, python_call_operations);
                let matches_text = node.child_by_field_name("arguments").is_some_and(|arguments| {
                    arguments.named_children(&mut arguments.walk()).any(|a| {
                        a.kind() == "keyword_argument"
                            && a.child_by_field_name("name").is_some_and(|n| self.text(n) == "match")
                    })
                });
                if matches_text {
                    bits |= FORMATS_STR;
                }
            }
            // Rust: a format macro's string (`{}` runs `Display::fmt`, `{:?}` `Debug::fmt`),
            // `dbg!`, and `.to_string()` (`ToString` for every `Display`). Not `assert!`'s or
            // `panic!`'s: they format only on failure.
            "macro_invocation" => {
                let name = node.child_by_field_name("macro").map_or("", |m| self.text(m));
                match name.rsplit("::").next().unwrap_or(name) {
                    "dbg" => bits |= FORMATS_REPR,
                    "format" | "format_args" | "write" | "writeln" | "print" | "println" | "eprint" | "eprintln" => {
                        let mut cursor = node.walk();
                        let arguments = node.named_children(&mut cursor).find(|c| c.kind() == "token_tree");
                        let template = arguments.and_then(|a| {
                            let mut cursor = a.walk();
                            let first = a.named_children(&mut cursor).find(|c| c.kind() == "string_literal");
                            first
                        });
                        bits |= template.map_or(0, |t| placeholder_bits(self.text(t)));
                    }
                    _ => {}
                }
            }
            "call_expression" => {
                // `s.parse::<Version>()`: the method under its turbofish.
                let function = node.child_by_field_name("function").map(|f| match f.kind() {
                    "generic_function" => f.child_by_field_name("function").unwrap_or(f),
                    _ => f,
                });
                let method =
                    function.filter(|f| f.kind() == "field_expression").and_then(|f| f.child_by_field_name("field"));
                match method.map(|m| self.text(m)) {
                    Some("to_string") => bits |= FORMATS_STR,
                    Some("parse") => bits |= PARSES,
                    _ => {}
                }
            }
            // Rust: an operator (`a % b`, `a %= b`; a comparison runs no `ops` trait), `-a`,
            // `!a`, `a[i]`.
            "binary_expression" | "compound_assignment_expr" => {
                let operator = node.child_by_field_name("operator").map_or("", |o| o.kind());
                let binary = if operator.len() > 1 { operator.strip_suffix('=').unwrap_or(operator) } else { operator };
                bits |= python_operator_operations(binary, false);
            }
            "unary_expression" => {
                bits |= match node.child(0).map_or("", |o| o.kind()) {
                    "-" => SIGNS,
                    "!" => INVERTS,
                    _ => 0,
                };
            }
            "index_expression" => bits |= INDEXES,
            "string" => {
                let text = self.text(node);
                if text.contains("%r") || text.contains("!r") {
                    bits |= FORMATS_REPR;
                }
                let interpolated = node.named_children(&mut node.walk()).any(|c| c.kind() == "interpolation");
                if text.contains("%s") || interpolated {
                    bits |= FORMATS_STR;
                }
            }
            "binary_operator" | "augmented_assignment" | "unary_operator" => {
                let operator = node.child_by_field_name("operator").map_or("", |o| o.kind());
                let unary = node.kind() == "unary_operator";
                bits |= python_operator_operations(operator.strip_suffix('=').unwrap_or(operator), unary);
            }
            "comparison_operator" => {
                let mut cursor = node.walk();
                for operator in node.children_by_field_name("operators", &mut cursor) {
                    bits |= match operator.kind() {
                        "<" | "<=" | ">" | ">=" => ORDERS,
                        "!=" | "<>" => NOT_EQUAL,
                        _ => 0,
                    };
                }
            }
            // `del x[k]`, `del a[0], b[1]`.
            "delete_statement" => {
                let target = node.named_child(0);
                let mut cursor = node.walk();
                let targets: Vec<Node> = match target {
                    Some(list) if list.kind() == "expression_list" => list.named_children(&mut cursor).collect(),
                    other => other.into_iter().collect(),
                };
                if targets.iter().any(|t| t.kind() == "subscript") {
                    bits |= DELETES_ITEM;
                }
            }
            _ => {}
        }
        if bits != 0 {
            let index = self.enclosing_symbol().unwrap_or(TOP_LEVEL);
            self.out.operations.push((index, bits));
        }
    }

    /// Notes the shapes of a Rust struct or enum that derives serde's `Serialize` or
    /// `Deserialize` (also under `cfg_attr`) in the file's own entry of `operations`
    /// (`SERDE_SHAPES`): a data format's `serialize_struct_variant` runs where a value of an
    /// enum with a struct variant is serialized, and the tests that do so declare the enum.
    pub(super) fn note_serde_shape(&mut self, item: Node) {
        let derives = attributes(item, self.src)
            .any(|a| a.contains("derive") && (a.contains("Serialize") || a.contains("Deserialize")));
        if !derives {
            return;
        }
        // A body of named fields, of unnamed ones (one: a newtype), or none.
        let shape = |body: Option<Node>, named: u32, newtype: u32, tuple: u32, unit: u32| match body {
            Some(b) if b.kind() == "field_declaration_list" => named,
            Some(b) if b.kind() == "ordered_field_declaration_list" => {
                if b.children_by_field_name("type", &mut b.walk()).count() == 1 {
                    newtype
                } else {
                    tuple
                }
            }
            _ => unit,
        };
        let bits = match item.kind() {
            "struct_item" => shape(
                item.child_by_field_name("body"),
                SERDE_STRUCT,
                SERDE_NEWTYPE_STRUCT,
                SERDE_TUPLE_STRUCT,
                SERDE_UNIT_STRUCT,
            ),
            _ => item.child_by_field_name("body").map_or(0, |variants| {
                let mut cursor = variants.walk();
                let each = variants.named_children(&mut cursor).filter(|v| v.kind() == "enum_variant");
                each.map(|v| {
                    shape(
                        v.child_by_field_name("body"),
                        SERDE_STRUCT_VARIANT,
                        SERDE_NEWTYPE_VARIANT,
                        SERDE_TUPLE_VARIANT,
                        SERDE_UNIT_VARIANT,
                    )
                })
                .fold(0, |all, bits| all | bits)
            }),
        };
        if bits != 0 {
            self.out.operations.push((TOP_LEVEL, bits));
        }
    }
}
