//! Members named by strings in Python: `getattr(obj, "name")` and its kin as a use of that
//! member, and `getattr(self, "parse_" + kind)` (the dispatch of parsers and visitors) as a
//! use of every member with that prefix.

use tree_sitter::Node;

use super::{qualifier_text, Occurrence, UseKind, Walker, MAX_NAME};

impl<'a> Walker<'a> {
    /// `getattr(parent, "meta", {})`, `hasattr(obj, "close")`, `setattr(ctx, "obj", v)`: an
    /// attribute named by a string constant is a member use like `parent.meta`.
    pub(super) fn python_attribute_by_string(&mut self, call: Node) {
        let function = call.child_by_field_name("function").map(|f| self.text(f)).unwrap_or_default();
        let gets = matches!(function, "getattr" | "object.__getattribute__");
        if !gets && !matches!(function, "hasattr" | "setattr" | "delattr") {
            return;
        }
        let Some(arguments) = call.child_by_field_name("arguments") else { return };
        let (Some(object), Some(attribute)) = (arguments.named_child(0), arguments.named_child(1)) else { return };
        if matches!(self.text(object), "self" | "cls") {
            if let Some(prefix) = self.attribute_prefix(attribute) {
                let pos = attribute.start_position();
                let at = (pos.row as u32 + 1, pos.column as u32 + 1);
                // The class's own methods with the prefix, here; its subclasses', through the
                // graph (`ast.NodeVisitor`'s `visit_` methods are all in subclasses).
                let dispatch = format!("{}{prefix}", crate::code::DISPATCH_NAME);
                self.record_use(attribute, &dispatch, "self".to_string());
                self.prefixed_attributes.push((prefix, at.0, at.1, self.enclosing_symbol()));
                return;
            }
            // A name known only at run time: a dispatch to whichever method it names.
            if gets && !matches!(attribute.kind(), "string" | "concatenated_string") {
                self.record_use(attribute, crate::code::DISPATCH_NAME, "self".to_string());
                return;
            }
        }
        if attribute.kind() != "string" || attribute.named_child_count() != 3 {
            return;
        }
        let Some(content) = attribute.named_child(1).filter(|c| c.kind() == "string_content") else { return };
        let name = self.text(content);
        let identifier = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !identifier || name.len() > MAX_NAME || object.kind() == "string" {
            return;
        }
        let qualifier = qualifier_text(self.text(object));
        self.record_use(content, name, qualifier);
    }

    /// The constant start of an attribute name built at run time, the dispatch idiom of
    /// visitors and parsers: `"parse_" + name`, `f"visit_{kind}"`, `"render_%s" % kind`.
    fn attribute_prefix(&self, attribute: Node) -> Option<String> {
        self.attribute_prefix_at(attribute, 0)
    }

    fn attribute_prefix_at(&self, attribute: Node, depth: u32) -> Option<String> {
        if depth > 2 {
            return None;
        }
        let head = match attribute.kind() {
            // `name.lower()`, `"_process_{}".format(kind)`.
            "call" => {
                let function = attribute.child_by_field_name("function").filter(|f| f.kind() == "attribute")?;
                let object = function.child_by_field_name("object")?;
                let method = self.text(function.child_by_field_name("attribute")?);
                return match method {
                    "lower" | "casefold" => self.attribute_prefix_at(object, depth + 1).map(|p| p.to_lowercase()),
                    "format" if object.kind() == "string" => {
                        let content = object.named_child(1).filter(|c| c.kind() == "string_content")?;
                        let text = self.text(content);
                        let brace = text.find('{')?;
                        identifier_prefix(&text[..brace])
                    }
                    _ => None,
                };
            }
            // A local the function set just before: `func_name = f"_stripws_{kind}"`.
            "identifier" => {
                let name = self.text(attribute);
                let function = std::iter::successors(attribute.parent(), |n| n.parent())
                    .find(|n| n.kind() == "function_definition")?;
                let value = self.assigned_value(function.child_by_field_name("body")?, name, attribute.start_byte())?;
                return self.attribute_prefix_at(value, depth + 1);
            }
            "binary_operator" => {
                let operator = attribute.child_by_field_name("operator").map(|o| self.text(o));
                if !matches!(operator, Some("+" | "%")) {
                    return None;
                }
                attribute.child_by_field_name("left").filter(|l| l.kind() == "string")?
            }
            "string" => attribute,
            _ => return None,
        };
        // A string whose first part is constant text and whose next is an interpolation
        // (`f"visit_{kind}"`), or, with `%`, a `%s` right after the text.
        let content = head.named_child(1).filter(|c| c.kind() == "string_content")?;
        let text = self.text(content);
        let prefix = match attribute.kind() {
            "string" => {
                head.named_child(2).filter(|c| c.kind() == "interpolation")?;
                text
            }
            _ if text.ends_with("%s") => &text[..text.len() - 2],
            _ if self.text(attribute.child_by_field_name("operator")?) == "+" && head.named_child_count() == 3 => text,
            _ => return None,
        };
        identifier_prefix(prefix)
    }

    /// The value of the last plain assignment `name = value` in `body` before byte `before`,
    /// nested blocks included but not nested functions.
    fn assigned_value<'t>(&self, body: Node<'t>, name: &str, before: usize) -> Option<Node<'t>> {
        let mut found = None;
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            if node.start_byte() >= before || matches!(node.kind(), "function_definition" | "class_definition") {
                continue;
            }
            if node.kind() == "assignment" {
                let left = node.child_by_field_name("left").filter(|l| l.kind() == "identifier");
                if left.is_some_and(|l| self.text(l) == name) {
                    if let Some(right) = node.child_by_field_name("right") {
                        if found.is_none_or(|f: Node| f.start_byte() < right.start_byte()) {
                            found = Some(right);
                        }
                    }
                }
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        found
    }

    /// Each `getattr(self, "parse_" + name)` as a use of every member of the enclosing class
    /// whose name has that prefix (`parse_escape`, `parse_link`, …): which one runs is decided
    /// at run time, any of them may.
    pub(super) fn expand_prefixed_attributes(&mut self) {
        for (prefix, line, column, enclosing) in std::mem::take(&mut self.prefixed_attributes) {
            let Some(container) = enclosing.and_then(|e| self.out.symbols.get(e as usize)).map(|s| s.container.clone())
            else {
                continue;
            };
            if container.is_empty() {
                continue;
            }
            let names: Vec<String> = self
                .out
                .symbols
                .iter()
                .filter(|s| s.container == container && s.kind.is_callable() && s.name.starts_with(&prefix))
                .map(|s| s.name.clone())
                .collect();
            let qualifier = self.intern("self");
            for name in names {
                let name = self.intern(&name);
                self.out.occurrences.push(Occurrence {
                    name,
                    line,
                    column,
                    kind: UseKind::Read,
                    qualifier,
                    enclosing,
                    arguments: None,
                });
            }
        }
    }
}

/// `prefix` when it can start a member's name (`parse_`, `_process_`).
fn identifier_prefix(prefix: &str) -> Option<String> {
    let identifier = prefix.len() >= 2
        && prefix.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && prefix.chars().all(|c| c.is_alphanumeric() || c == '_');
    identifier.then(|| prefix.to_string())
}
