//! Code whose running tells the walk little: what runs only on failure (`Err(…)`'s argument,
//! a test that asks for an error) and type arguments that make no value (`size_of::<T>()`).

use tree_sitter::Node;

use super::{span_of, Walker};
use crate::code::{FileCode, GuardTest};

/// Adds to `expects_failure` the Rust definitions that ask for an error: a function whose body
/// calls `is_err()`, `unwrap_err()` or `expect_err(…)` (a test, or a test's helper such as
/// `fn version_err(t) -> Error { Version::parse(t).unwrap_err() }`), and a test that reads
/// `r.err()` or matches `Err(_)` (those marked `#[should_panic]` are noted where they are
/// defined).
pub(super) fn note_definitions_expecting_failure(code: &mut FileCode) {
    let asks: fn(&str, bool) -> bool = match code.language.as_str() {
        "rust" => |name, test| {
            matches!(name, "is_err" | "unwrap_err" | "expect_err") || (test && matches!(name, "err" | "Err"))
        },
        // `pytest.raises(…)`, unittest's `self.assertRaises(…)` (as a call or a `with`).
        "python" => |name, _| {
            matches!(name, "raises" | "assertRaises" | "assertRaisesRegex" | "assertRaisesRegexp" | "failUnlessRaises")
        },
        _ => return,
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

/// Whether a Python function's body, its docstring aside, is one `raise` statement.
pub(super) fn only_raises(function: Node) -> bool {
    let Some(body) = function.child_by_field_name("body") else { return false };
    let mut cursor = body.walk();
    let mut statements = body.named_children(&mut cursor).filter(|s| {
        let docstring = s.kind() == "expression_statement" && s.named_child(0).is_some_and(|e| e.kind() == "string");
        !docstring && s.kind() != "comment"
    });
    matches!((statements.next(), statements.next()), (Some(s), None) if s.kind() == "raise_statement")
}

/// Whether a Rust function takes nothing and does nothing: `fn assert_send<T: Send>() {}`,
/// a check the compiler makes of its type arguments.
pub(super) fn does_nothing(function: Node) -> bool {
    let empty = |field: &str| function.child_by_field_name(field).is_some_and(|n| n.named_child_count() == 0);
    empty("parameters") && empty("body")
}

/// Characters a dict key has at least to count as one a test names (`note_keyed_value`): `"a"`
/// or `"id"` turn up in any test's text.
const MIN_KEY_LEN: usize = 3;

impl<'a> Walker<'a> {
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

    /// Notes the Python code an `if` (or `elif`) runs only when an attribute is set
    /// (`FileCode::guarded`): its body when the condition tests the attribute (`meta.csrf`,
    /// `x.y is not None`, one side of an `and`); the rest of its block when the `if` only
    /// returns or raises (a guard clause) while the attribute is off (`not x.y`, `locales is
    /// False`, `x is None`).
    pub(super) fn note_guard(&mut self, statement: Node) {
        let Some(condition) = statement.child_by_field_name("condition") else { return };
        // `if isinstance(block, Entry):` — `block` is an `Entry` in the body.
        if let (Some((name, class)), Some(body)) =
            (self.instance_test(condition, true), statement.child_by_field_name("consequence"))
        {
            self.narrow(name, class, statement.start_byte(), body.end_byte());
        }
        if let Some((word, test)) = self.tested_attribute(condition, true) {
            if let Some(body) = statement.child_by_field_name("consequence") {
                self.out.guarded.push((span_of(body), word, test));
            }
            return;
        }
        // A guard clause: the whole `if` leaves, and nothing else branches off it.
        let exits = statement.child_by_field_name("consequence").is_some_and(|body| {
            let mut cursor = body.walk();
            let statements: Vec<Node> = body.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect();
            matches!(statements.as_slice(), [only] if matches!(only.kind(), "return_statement" | "raise_statement" | "continue_statement"))
        });
        let alternative = statement.child_by_field_name("alternative").is_some();
        if statement.kind() != "if_statement" || !exits || alternative {
            return;
        }
        // `if not isinstance(node, Call): return` — `node` is a `Call` in the rest of the block.
        if let (Some((name, class)), Some(block)) = (self.instance_test(condition, false), statement.parent()) {
            self.narrow(name, class, statement.end_byte(), block.end_byte());
        }
        let (Some((word, test)), Some(block)) = (self.tested_attribute(condition, false), statement.parent()) else {
            return;
        };
        let (from, to) = (statement.end_position(), block.end_position());
        let span = [from.row as u32 + 1, from.column as u32 + 1, to.row as u32 + 1, to.column as u32 + 1];
        self.out.guarded.push((span, word, test));
    }

    /// The attribute (or name) a condition holds true when it is set (`set`: `x.y`, `x.y is
    /// not None`, `x.y is True`, `hasattr(x, "y")`, either side of an `and`) or when it is off
    /// (`!set`: `not x.y`, `x.y is None`, `x.y is False`, `not hasattr(x, "y")`): its last
    /// part, and what the condition tests of it (`GuardTest`).
    fn tested_attribute(&self, condition: Node, set: bool) -> Option<(String, GuardTest)> {
        let name = |node: Node| -> Option<(String, GuardTest)> {
            match node.kind() {
                "identifier" => {
                    let test = self.passed_parameter(node).map_or(GuardTest::Attribute, GuardTest::Parameter);
                    Some((self.text(node).to_string(), test))
                }
                "attribute" => {
                    node.child_by_field_name("attribute").map(|a| (self.text(a).to_string(), GuardTest::Attribute))
                }
                "call" => self.asked_attribute(node).map(|word| (word, GuardTest::Asked)),
                _ => None,
            }
        };
        match condition.kind() {
            "parenthesized_expression" => self.tested_attribute(condition.named_child(0)?, set),
            "identifier" | "attribute" | "call" if set => name(condition),
            "not_operator" if !set => name(condition.child_by_field_name("argument")?),
            "boolean_operator" if set => {
                let and = condition.child_by_field_name("operator").is_some_and(|o| o.kind() == "and");
                if !and {
                    return None;
                }
                let left = condition.child_by_field_name("left")?;
                let right = condition.child_by_field_name("right")?;
                self.tested_attribute(left, true).or_else(|| self.tested_attribute(right, true))
            }
            "comparison_operator" => {
                // `x is not None`, `x is None`, `x is True`, `x is False`: two operands.
                let mut cursor = condition.walk();
                let operands: Vec<Node> = condition.named_children(&mut cursor).collect();
                let [subject, value] = operands.as_slice() else { return None };
                let operator: String = {
                    let mut cursor = condition.walk();
                    condition
                        .children(&mut cursor)
                        .filter(|c| !c.is_named())
                        .map(|c| c.kind())
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let holds_when_set = match (operator.as_str(), value.kind()) {
                    ("is not", "none") | ("is", "true") | ("is not", "false") => true,
                    ("is", "none") | ("is", "false") | ("is not", "true") => false,
                    _ => return None,
                };
                (holds_when_set == set).then(|| name(*subject)).flatten()
            }
            _ => None,
        }
    }

    /// The place among its function's parameters (`self` and `cls` not counted) of a name in
    /// a condition, when the name is a parameter that defaults to `None` or `False`, comes after
    /// the first (callers pass that one by place) and that nothing assigns before the
    /// condition: the condition holds as the caller passed it (`if datalist is not None:` in
    /// `def __init__(self, label=None, …, datalist=None)`).
    fn passed_parameter(&self, name: Node) -> Option<u32> {
        if !self.parameter_default(name).is_some_and(|value| matches!(value.kind(), "none" | "false")) {
            return None;
        }
        let (parameters, word) = self.enclosing_parameters(name)?;
        let body = parameters.parent()?.child_by_field_name("body")?;
        if self.assigns_before(body, word, name.start_byte()) {
            return None;
        }
        let mut cursor = parameters.walk();
        let mut place = 0;
        for (i, p) in parameters.named_children(&mut cursor).enumerate() {
            // `*`, `*args`: what follows (the parameter, which the function has) is
            // keyword-only, out of any call's places.
            if matches!(p.kind(), "keyword_separator" | "list_splat_pattern") {
                return Some(u32::MAX);
            }
            let Some(named) = self.parameter_name(p) else { continue };
            let text = self.text(named);
            if i == 0 && matches!(text, "self" | "cls") {
                continue;
            }
            if text == word {
                return (place >= 1).then_some(place);
            }
            place += 1;
        }
        None
    }

    /// Whether code in `node` before `before` (a byte) binds `name`: an assignment (augmented
    /// too), a `for` target, a `with … as`, a walrus.
    fn assigns_before(&self, node: Node, name: &str, before: usize) -> bool {
        if node.start_byte() >= before {
            return false;
        }
        let target = match node.kind() {
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                node.child_by_field_name("left")
            }
            "as_pattern" => node.child_by_field_name("alias"),
            "named_expression" => node.child_by_field_name("name"),
            _ => None,
        };
        let binds = |t: Node| {
            let mut stack = vec![t];
            while let Some(n) = stack.pop() {
                if n.kind() == "identifier" && self.text(n) == name {
                    return true;
                }
                if matches!(n.kind(), "pattern_list" | "tuple_pattern" | "list_pattern" | "as_pattern_target") {
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
            }
            false
        };
        if target.is_some_and(binds) {
            return true;
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        children.into_iter().any(|child| self.assigns_before(child, name, before))
    }

    /// Notes the keyword arguments a Python call passes (`FileCode::passed`), with the
    /// callee's name: `("Field", "datalist")` of `Field(…, datalist=…)`. Not where the value is
    /// a parameter of the calling function, handed on (`super().__init__(…,
    /// datalist=datalist)`): it is passed only where that function's own caller passes it.
    pub(super) fn note_passed(&mut self, call: Node) {
        let callee = match call.child_by_field_name("function") {
            Some(f) if f.kind() == "identifier" => f,
            Some(f) if f.kind() == "attribute" => match f.child_by_field_name("attribute") {
                Some(a) => a,
                None => return,
            },
            _ => return,
        };
        let Some(arguments) = call.child_by_field_name("arguments") else { return };
        let mut cursor = arguments.walk();
        let by_place = arguments
            .named_children(&mut cursor)
            .take_while(|a| !matches!(a.kind(), "keyword_argument" | "dictionary_splat"))
            .filter(|a| a.kind() != "comment")
            .count() as u32;
        if by_place > 1 {
            self.out.passed_by_place.push((self.text(callee).to_string(), by_place));
        }
        for argument in arguments.named_children(&mut cursor).filter(|a| a.kind() == "keyword_argument") {
            let (Some(named), Some(value)) =
                (argument.child_by_field_name("name"), argument.child_by_field_name("value"))
            else {
                continue;
            };
            if !self.names_a_parameter(value) {
                self.out.passed.push((self.text(callee).to_string(), self.text(named).to_string()));
            }
        }
    }

    /// Notes the attributes a Python assignment writes (`FileCode::written`): `entry.key = …`,
    /// each of `a.x, b.y = …`, `n.count += 1` (augmented).
    pub(super) fn note_written(&mut self, assignment: Node) {
        let augmented = assignment.kind() == "augmented_assignment";
        let Some(left) = assignment.child_by_field_name("left") else { return };
        let mut stack = vec![left];
        while let Some(target) = stack.pop() {
            match target.kind() {
                "attribute" => {
                    if let Some(name) = target.child_by_field_name("attribute") {
                        let at = name.start_position();
                        self.out.written.push((at.row as u32 + 1, at.column as u32 + 1, augmented));
                    }
                }
                "pattern_list" | "tuple_pattern" | "list_pattern" => {
                    let mut cursor = target.walk();
                    stack.extend(target.named_children(&mut cursor));
                }
                _ => {}
            }
        }
    }

    /// Whether `value` is a bare name of a parameter of the function it is written in.
    fn names_a_parameter(&self, value: Node) -> bool {
        let Some((parameters, name)) = self.enclosing_parameters(value) else { return false };
        let mut cursor = parameters.walk();
        let found = parameters
            .named_children(&mut cursor)
            .any(|p| self.parameter_name(p).is_some_and(|n| self.text(n) == name));
        found
    }

    /// The local name and the class of an `isinstance(name, Class)` test that holds when the
    /// condition does (`holds`: the test, or one side of an `and`) or when it fails (`!holds`:
    /// `not isinstance(…)`). A tuple of classes narrows to none.
    fn instance_test(&self, condition: Node, holds: bool) -> Option<(String, String)> {
        match condition.kind() {
            "parenthesized_expression" => self.instance_test(condition.named_child(0)?, holds),
            "not_operator" if !holds => self.instance_test(condition.child_by_field_name("argument")?, true),
            "boolean_operator" if holds => {
                if condition.child_by_field_name("operator").is_none_or(|o| o.kind() != "and") {
                    return None;
                }
                let left = condition.child_by_field_name("left")?;
                let right = condition.child_by_field_name("right")?;
                self.instance_test(left, true).or_else(|| self.instance_test(right, true))
            }
            "call" if holds => {
                let (name, class) = self.two_arguments(condition, "isinstance")?;
                let plain = name.kind() == "identifier" && matches!(class.kind(), "identifier" | "attribute");
                plain.then(|| (self.text(name).to_string(), self.text(class).to_string()))
            }
            _ => None,
        }
    }

    /// `name` holds a `class` from `from` to `end` (bytes), where nothing typed it before: a
    /// name typed already keeps its type (the narrowing would end it at `end`).
    fn narrow(&mut self, name: String, class: String, from: usize, end: usize) {
        if self.local_types.get(&name).is_some_and(|(_, until)| from < *until) {
            return;
        }
        self.local_types.insert(name, (class, end));
    }

    /// The two arguments of a call of the built-in `function` (`isinstance(x, C)`,
    /// `hasattr(x, "name")`).
    fn two_arguments<'t>(&self, call: Node<'t>, function: &str) -> Option<(Node<'t>, Node<'t>)> {
        let called = call.child_by_field_name("function")?;
        if called.kind() != "identifier" || self.text(called) != function {
            return None;
        }
        let arguments = call.child_by_field_name("arguments")?;
        let mut cursor = arguments.walk();
        let arguments: Vec<Node> = arguments.named_children(&mut cursor).collect();
        match arguments.as_slice() {
            [first, second] => Some((*first, *second)),
            _ => None,
        }
    }

    /// The name `hasattr(x, "name")` asks for.
    fn asked_attribute(&self, call: Node) -> Option<String> {
        let (_, name) = self.two_arguments(call, "hasattr")?;
        let mut cursor = name.walk();
        let parts: Vec<Node> = name.named_children(&mut cursor).filter(|c| c.kind() == "string_content").collect();
        let word = match (name.kind(), parts.as_slice()) {
            ("string", [part]) => self.text(*part),
            _ => return None,
        };
        let plain = !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_');
        plain.then(|| word.to_string())
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
