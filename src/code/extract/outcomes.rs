//! Code whose running tells the walk little: what runs only on failure (`Err(…)`'s argument,
//! a test that asks for an error) and type arguments that make no value (`size_of::<T>()`).

use tree_sitter::Node;

use super::attributes::attributes;
use super::{span_of, Walker};
use crate::code::{
    FileCode, FORMATS_REPR, FORMATS_STR, SERDE_NEWTYPE_STRUCT, SERDE_NEWTYPE_VARIANT, SERDE_STRUCT,
    SERDE_STRUCT_VARIANT, SERDE_TUPLE_STRUCT, SERDE_TUPLE_VARIANT, SERDE_UNIT_STRUCT, SERDE_UNIT_VARIANT, TOP_LEVEL,
};

/// Adds to `expects_failure` the Rust definitions that ask for an error: a function whose body
/// calls `is_err()`, `unwrap_err()` or `expect_err(…)` (a test, or a test's helper such as
/// `fn version_err(t) -> Error { Version::parse(t).unwrap_err() }`), and a test that reads
/// `r.err()` or matches `Err(_)` (those marked `#[should_panic]` are noted where they are
/// defined).
pub(super) fn note_definitions_expecting_failure(code: &mut FileCode) {
    if code.language != "rust" {
        return;
    }
    let asks = |name: &str, test: bool| {
        matches!(name, "is_err" | "unwrap_err" | "expect_err") || (test && matches!(name, "err" | "Err"))
    };
    for occurrence in &code.occurrences {
        let Some(e) = occurrence.enclosing else { continue };
        let definition = &code.symbols[e as usize];
        if definition.kind.is_callable()
            && asks(&code.strings[occurrence.name as usize], definition.test_marked)
            && !code.expects_failure.contains(&e)
        {
            code.expects_failure.push(e);
        }
    }
    code.expects_failure.sort_unstable();
}

/// Whether a Rust function takes nothing and does nothing: `fn assert_send<T: Send>() {}`,
/// a check the compiler makes of its type arguments.
pub(super) fn does_nothing(function: Node) -> bool {
    let empty = |field: &str| function.child_by_field_name(field).is_some_and(|n| n.named_child_count() == 0);
    empty("parameters") && empty("body")
}

/// Sorts `formats` by definition and merges each definition's entries into one.
pub(super) fn merge_formats(code: &mut FileCode) {
    code.formats.sort_unstable();
    let mut merged: Vec<(u32, u16)> = Vec::with_capacity(code.formats.len());
    for (index, bits) in code.formats.drain(..) {
        match merged.last_mut() {
            Some((last, all)) if *last == index => *all |= bits,
            _ => merged.push((index, bits)),
        }
    }
    code.formats = merged;
}

/// What a Rust format string's placeholders run: `{}`, `{name}`, `{:>8}` a value's `Display`
/// (`FORMATS_STR`); `{:?}`, `{:#?}` its `Debug` (`FORMATS_REPR`); `{:x}` and the other
/// traits neither (`{{` is a brace).
fn placeholder_bits(template: &str) -> u16 {
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

/// Characters a dict key has at least to count as one a test names (`note_keyed_value`): `"a"`
/// or `"id"` turn up in any test's text.
const MIN_KEY_LEN: usize = 3;

impl<'a> Walker<'a> {
    /// Notes what a Python call or string formats a value with (`FileCode::formats`): a
    /// call of `repr`, `ascii`, `pformat`, `pprint` or `saferepr`, a `%r` or a `!r`
    /// conversion run `__repr__`; a call of `str`, `print`, `format` or a string's `.format`,
    /// an f-string's value, a `%s`, and `match=` (pytest matches the error's text) run
    /// `__str__`.
    pub(super) fn note_formatting(&mut self, node: Node) {
        let mut bits = 0u16;
        match node.kind() {
            "call" => {
                let name = node.child_by_field_name("function").and_then(|f| match f.kind() {
                    "identifier" => Some(self.text(f)),
                    "attribute" => f.child_by_field_name("attribute").map(|a| self.text(a)),
                    _ => None,
                });
                bits |= match name {
                    Some("repr" | "ascii" | "pformat" | "pprint" | "saferepr") => FORMATS_REPR,
                    Some("str" | "print" | "format") => FORMATS_STR,
                    _ => 0,
                };
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
                let method = node
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "field_expression")
                    .and_then(|f| f.child_by_field_name("field"));
                if method.is_some_and(|m| self.text(m) == "to_string") {
                    bits |= FORMATS_STR;
                }
            }
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
            _ => {}
        }
        if bits != 0 {
            let index = self.enclosing_symbol().unwrap_or(TOP_LEVEL);
            self.out.formats.push((index, bits));
        }
    }

    /// Notes a Python dict entry of a plain string key and a name as its value
    /// (`"wordcount": do_wordcount`, `"json": codecs.JsonCodec`) in `FileCode::keyed`. Only a
    /// key that reads as a word, long enough to be told apart where a test names it.
    pub(super) fn note_keyed_value(&mut self, pair: Node) {
        let (Some(key), Some(value)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) else {
            return;
        };
        if key.kind() != "string" || !matches!(value.kind(), "identifier" | "attribute") {
            return;
        }
        // `"name"`, not an f-string with a value in it nor a concatenation.
        let parts: Vec<Node> = key
            .named_children(&mut key.walk())
            .filter(|c| !matches!(c.kind(), "string_start" | "string_end"))
            .collect();
        let [part] = parts.as_slice() else { return };
        if part.kind() != "string_content" {
            return;
        }
        let content = self.text(*part);
        let word = content.len() >= MIN_KEY_LEN
            && content.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-')
            && content.chars().any(char::is_alphabetic);
        if word {
            self.out.keyed.push((span_of(value), content.to_string()));
        }
    }

    /// Notes the shapes of a Rust struct or enum that derives serde's `Serialize` or
    /// `Deserialize` (also under `cfg_attr`) in the file's own entry of `formats`
    /// (`SERDE_SHAPES`): a data format's `serialize_struct_variant` runs where a value of an
    /// enum with a struct variant is serialized, and the tests that do so declare the enum.
    pub(super) fn note_serde_shape(&mut self, item: Node) {
        let derives = attributes(item, self.src)
            .any(|a| a.contains("derive") && (a.contains("Serialize") || a.contains("Deserialize")));
        if !derives {
            return;
        }
        // A body of named fields, of unnamed ones (one: a newtype), or none.
        let shape = |body: Option<Node>, named: u16, newtype: u16, tuple: u16, unit: u16| match body {
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
            self.out.formats.push((TOP_LEVEL, bits));
        }
    }

    /// Notes the code of a Rust call that runs only on failure: `Err(…)`'s argument, the
    /// closure of `r.map_err(…)` and `o.ok_or_else(…)`.
    pub(super) fn note_failure_branch(&mut self, call: Node) {
        let Some(function) = call.child_by_field_name("function") else { return };
        let failing = match function.kind() {
            "identifier" => self.text(function) == "Err",
            "field_expression" => function
                .child_by_field_name("field")
                .is_some_and(|field| matches!(self.text(field), "map_err" | "ok_or_else")),
            _ => false,
        };
        if let Some(arguments) = call.child_by_field_name("arguments").filter(|_| failing) {
            self.out.failure_spans.push(span_of(arguments));
        }
    }

    /// Notes a Rust call given type arguments and no values (`size_of::<T>()`,
    /// `assert_send::<T>()`): whether its type arguments make nothing is known once the
    /// file's functions are (`keep_type_only_calls`).
    pub(super) fn note_type_argument_call(&mut self, call: Node) {
        let Some(function) = call.child_by_field_name("function").filter(|f| f.kind() == "generic_function") else {
            return;
        };
        let no_values = call.child_by_field_name("arguments").is_some_and(|a| a.named_child_count() == 0);
        let (Some(callee), Some(types)) =
            (function.child_by_field_name("function"), function.child_by_field_name("type_arguments"))
        else {
            return;
        };
        if !no_values {
            return;
        }
        let path = self.text(callee);
        let name = path.rsplit("::").next().unwrap_or("").trim();
        // The standard library's functions of a type alone, which run none of its code.
        let std_type_only =
            matches!(name, "size_of" | "align_of" | "type_name" | "needs_drop") || path.ends_with("TypeId::of");
        if std_type_only {
            self.out.type_only_spans.push(span_of(types));
        } else {
            self.type_argument_calls.push((name.to_string(), span_of(types)));
        }
    }

    /// Keeps the type arguments of the calls to the file's functions that do nothing.
    pub(super) fn keep_type_only_calls(&mut self) {
        for (name, span) in std::mem::take(&mut self.type_argument_calls) {
            if self.empty_functions.contains(&name) {
                self.out.type_only_spans.push(span);
            }
        }
    }
}
