//! Rust code that runs only once something turned it on: under `if let Some(r) = self.range`
//! (a field the repo leaves `None` until one constructor sets it), `if !self.dev_mode {
//! return … }`, or `if name == RAW_VALUE_TOKEN` (a constant only one caller passes). A test
//! runs such code only where it also runs what turns it on (`CodeGraph::guard_enablers`).

use tree_sitter::Node;

use super::{span_of, Walker};
use crate::code::{GuardTest, TOP_LEVEL};

/// `Option`'s methods that hand on what the field holds, or whether it holds something.
const HANDS_ON: &[&str] = &["as_ref", "as_mut", "as_deref", "as_deref_mut", "take", "clone", "cloned", "copied"];

/// `Option`'s methods that fill the field (`self.cache.get_or_insert_with(…)`).
const FILLS: &[&str] = &["replace", "insert", "get_or_insert", "get_or_insert_with"];

impl<'a> Walker<'a> {
    /// Notes the code a Rust `if` (or a `let … else`) runs only when a field is on or a value
    /// is a constant (`FileCode::guarded`): the body of `if let Some(r) = self.range`, `if
    /// self.dev_mode`, `if self.x.is_some()`, `if self.compact_ranges()` (a flag's reader),
    /// `if name == RAW_VALUE_TOKEN` (one side of an
    /// `&&` is enough); the rest of the block after an `if` that ends by leaving (`if !self.dev_mode { …; return … }`), `if
    /// self.x.is_none() { return … }` or `let Some(r) = self.range else { return … };`.
    pub(super) fn note_rust_guard(&mut self, node: Node) {
        if node.kind() == "let_declaration" {
            let (Some(pattern), Some(value), Some(_)) = (
                node.child_by_field_name("pattern"),
                node.child_by_field_name("value"),
                node.child_by_field_name("alternative"),
            ) else {
                return;
            };
            if let (true, Some(field)) = (self.is_some_pattern(pattern), self.held_field(value)) {
                self.guard_rest_of_block(node, field, GuardTest::Field);
            }
            return;
        }
        let Some(condition) = node.child_by_field_name("condition") else { return };
        if let Some((word, test)) = self.rust_condition(condition, true) {
            if let Some(body) = node.child_by_field_name("consequence") {
                self.out.guarded.push((span_of(body), word, test));
            }
            return;
        }
        let exits = node.child_by_field_name("consequence").is_some_and(ends_by_leaving);
        if !exits || node.child_by_field_name("alternative").is_some() {
            return;
        }
        if let Some((word, test)) = self.rust_condition(condition, false) {
            let statement = node.parent().filter(|p| p.kind() == "expression_statement").unwrap_or(node);
            self.guard_rest_of_block(statement, word, test);
        }
    }

    /// Guards what follows `statement` in its block.
    fn guard_rest_of_block(&mut self, statement: Node, word: String, test: GuardTest) {
        let Some(block) = statement.parent().filter(|b| b.kind() == "block") else { return };
        let (from, to) = (statement.end_position(), block.end_position());
        let span = [from.row as u32 + 1, from.column as u32 + 1, to.row as u32 + 1, to.column as u32 + 1];
        self.out.guarded.push((span, word, test));
    }

    /// The word a condition holds true of when the field is on (`on`: `self.f`, `self.f.is_some()`,
    /// `let Some(_) = self.f`, `x == CONSTANT`, either side of an `&&`) or off (`!on`: `!self.f`,
    /// `self.f.is_none()`), and what it tests of it.
    fn rust_condition(&mut self, condition: Node, on: bool) -> Option<(String, GuardTest)> {
        match condition.kind() {
            "parenthesized_expression" => self.rust_condition(condition.named_child(0)?, on),
            "let_condition" if on => {
                let pattern = condition.child_by_field_name("pattern")?;
                let value = condition.child_by_field_name("value")?;
                self.is_some_pattern(pattern).then(|| self.held_field(value)).flatten().map(|f| (f, GuardTest::Field))
            }
            "let_chain" if on => {
                let mut cursor = condition.walk();
                let parts: Vec<Node> = condition.named_children(&mut cursor).collect();
                parts.into_iter().find_map(|part| self.rust_condition(part, true))
            }
            "field_expression" if on => self.field_name(condition).map(|f| (f, GuardTest::Field)),
            "unary_expression" if !on => {
                let negated = condition.child(0).is_some_and(|c| c.kind() == "!");
                let operand = condition.named_child(0)?;
                if !negated {
                    return None;
                }
                match operand.kind() {
                    "field_expression" => self.field_name(operand).map(|f| (f, GuardTest::Field)),
                    "call_expression" => self.flag_reader(operand).map(|f| (f, GuardTest::Field)),
                    _ => None,
                }
            }
            "call_expression" => {
                let function = condition.child_by_field_name("function")?;
                if function.kind() != "field_expression" {
                    return None;
                }
                let asked = self.text(function.child_by_field_name("field")?);
                let wanted = if on { "is_some" } else { "is_none" };
                let receiver = function.child_by_field_name("value")?;
                if asked == wanted && receiver.kind() == "field_expression" {
                    return self.field_name(receiver).map(|f| (f, GuardTest::Field));
                }
                on.then(|| self.flag_reader(condition)).flatten().map(|f| (f, GuardTest::Field))
            }
            "binary_expression" if on => {
                let operator = condition.child_by_field_name("operator").map(|o| self.text(o))?;
                let left = condition.child_by_field_name("left")?;
                let right = condition.child_by_field_name("right")?;
                match operator {
                    "&&" => self.rust_condition(left, true).or_else(|| self.rust_condition(right, true)),
                    "==" => {
                        let constant = match (self.constant_name(left), self.constant_name(right)) {
                            (Some(c), None) => c,
                            (None, Some(c)) => c,
                            _ => return None,
                        };
                        let at = constant.start_position();
                        self.out.compared.push((at.row as u32 + 1, at.column as u32 + 1));
                        Some((self.text(constant).to_string(), GuardTest::Constant))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The field a value reads, through a reference or a method that hands it on (`&self.f`,
    /// `self.f.as_ref()`).
    fn held_field(&self, value: Node) -> Option<String> {
        match value.kind() {
            "field_expression" => self.field_name(value),
            "reference_expression" => self.held_field(value.child_by_field_name("value")?),
            "call_expression" => {
                let function = value.child_by_field_name("function")?;
                let method = function.child_by_field_name("field").filter(|_| function.kind() == "field_expression")?;
                if !HANDS_ON.contains(&self.text(method)) {
                    return None;
                }
                self.held_field(function.child_by_field_name("value")?)
            }
            _ => None,
        }
    }

    /// The flag a method call without arguments reads, by the method's name: ron's
    /// `self.compact_ranges()` returns its config's `compact_ranges` (a bool accessor is
    /// named after its field; the graph asks for a field of that name a literal leaves off).
    fn flag_reader(&self, call: Node) -> Option<String> {
        let function = call.child_by_field_name("function").filter(|f| f.kind() == "field_expression")?;
        let arguments = call.child_by_field_name("arguments")?;
        if arguments.named_child_count() != 0 {
            return None;
        }
        let method = self.text(function.child_by_field_name("field")?);
        (!matches!(method, "is_some" | "is_none")).then(|| method.to_string())
    }

    /// A named field's name (`self.range`; not a tuple's `.0`).
    fn field_name(&self, field_expression: Node) -> Option<String> {
        let field = field_expression.child_by_field_name("field")?;
        (field.kind() == "field_identifier").then(|| self.text(field).to_string())
    }

    /// Notes a Rust field's value (`FileCode::field_values`): a struct literal's `range: None`
    /// or `range` (shorthand), an assignment `self.dev_mode = enable`, a call that fills an
    /// `Option` field (`self.cache.get_or_insert_with(…)`).
    pub(super) fn note_field_value(&mut self, node: Node) {
        let enclosing = self.enclosing_symbol().unwrap_or(TOP_LEVEL);
        let (field, value) = match node.kind() {
            "field_initializer" => {
                let (Some(field), Some(value)) = (node.child_by_field_name("field"), node.child_by_field_name("value"))
                else {
                    return;
                };
                if field.kind() != "field_identifier" {
                    return;
                }
                (self.text(field).to_string(), Some(value))
            }
            "shorthand_field_initializer" => {
                let Some(name) = node.named_child(0) else { return };
                (self.text(name).to_string(), None)
            }
            "assignment_expression" => {
                let (Some(left), Some(right)) = (node.child_by_field_name("left"), node.child_by_field_name("right"))
                else {
                    return;
                };
                let Some(field) = (left.kind() == "field_expression").then(|| self.field_name(left)).flatten() else {
                    return;
                };
                (field, Some(right))
            }
            "call_expression" => {
                let Some(function) = node.child_by_field_name("function").filter(|f| f.kind() == "field_expression")
                else {
                    return;
                };
                let fills = function.child_by_field_name("field").is_some_and(|m| FILLS.contains(&self.text(m)));
                let receiver = function.child_by_field_name("value").filter(|r| r.kind() == "field_expression");
                let Some(field) = receiver.filter(|_| fills).and_then(|r| self.field_name(r)) else { return };
                (field, None)
            }
            _ => return,
        };
        let off = value.is_some_and(|v| matches!(self.text(v), "None" | "false"));
        self.out.field_values.push((field, off, enclosing));
    }

    /// `Some(…)` as a pattern.
    fn is_some_pattern(&self, pattern: Node) -> bool {
        pattern.kind() == "tuple_struct_pattern"
            && pattern.child_by_field_name("type").is_some_and(|t| self.text(t) == "Some")
    }

    /// The name of a constant a comparison names (`RAW_VALUE_TOKEN`, `raw::RAW_VALUE_TOKEN`):
    /// upper case, a letter among its characters, two at least.
    fn constant_name<'t>(&self, operand: Node<'t>) -> Option<Node<'t>> {
        let name = match operand.kind() {
            "identifier" => operand,
            "scoped_identifier" => operand.child_by_field_name("name")?,
            _ => return None,
        };
        let text = self.text(name);
        let constant = text.len() >= 2
            && text.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            && text.chars().any(|c| c.is_ascii_uppercase());
        constant.then_some(name)
    }
}

/// Whether a block always leaves: its last statement is `return …`, `continue` or `break` (the
/// code after the `if` then runs only when its condition is false).
fn ends_by_leaving(block: Node) -> bool {
    let mut cursor = block.walk();
    let last = block.named_children(&mut cursor).filter(|c| !c.kind().contains("comment")).last();
    let expression = last.and_then(|l| if l.kind() == "expression_statement" { l.named_child(0) } else { Some(l) });
    expression.is_some_and(|e| matches!(e.kind(), "return_expression" | "continue_expression" | "break_expression"))
}
