//! What a function hands out, read from its body where no type is stated: the class it
//! builds and returns (JavaScript `return new Lazy(…)`, Python `return Parser(…)` or a
//! fixture's `yield db_`), what a generator's annotation says it yields, and the value a
//! Python `__getattr__` hands unknown attributes on to.

use std::collections::HashMap;

use tree_sitter::Node;

use super::Walker;

/// What a function's entry in `FileCode::returns` starts with when it returns an instance of
/// the class its caller passes, followed by the parameter's place (`#0`).
pub const PASSED_CLASS: char = '#';

impl Walker<'_> {
    /// Python: what a class's `__getattr__` hands every unknown attribute on to, when each of
    /// its `return`s says `getattr(self.…, name)` of one value of its own (`return
    /// getattr(self.table(self.default_table_name), name)`): that value's text.
    pub(super) fn getattr_delegate(&self, node: Node) -> Option<String> {
        let parameters = node.child_by_field_name("parameters")?;
        let attribute = parameters
            .named_children(&mut parameters.walk())
            .filter(|p| p.kind() == "identifier")
            .nth(1)
            .map(|p| self.text(p))?;
        let mut found: Option<&str> = None;
        let mut stack = vec![node.child_by_field_name("body")?];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "function_definition" | "class_definition" | "lambda" => continue,
                "return_statement" => {
                    let call = n.named_child(0).filter(|c| c.kind() == "call")?;
                    let callee = call.child_by_field_name("function")?;
                    let arguments = call.child_by_field_name("arguments")?;
                    let args: Vec<Node> = arguments.named_children(&mut arguments.walk()).collect();
                    let [value, name] = args.as_slice() else { return None };
                    let delegate = self.text(*value);
                    if self.text(callee) != "getattr"
                        || self.text(*name) != attribute
                        || !delegate.starts_with("self.")
                        || found.is_some_and(|f| f != delegate)
                    {
                        return None;
                    }
                    found = Some(delegate);
                }
                _ => stack.extend(n.named_children(&mut n.walk())),
            }
        }
        found.map(str::to_string)
    }

    /// Python: the class a function without a stated return type builds and returns (or
    /// yields: a pytest fixture's value) on every path that hands out a value: `return
    /// Parser(…)`, or a local every assignment of which builds that class (`db_ = TinyDB(…)`
    /// in each branch, then `yield db_`). A function (`plain`, not a method) that builds the
    /// class its caller passes (`def make(cls, …): cmd = cls(…); return cmd`) hands out
    /// `#N`, N its parameter's place (`returns::PASSED_CLASS`): what it returns is the class
    /// each call passes there (`make(Clean)`).
    pub(super) fn python_built_and_returned(&self, node: Node, plain: bool) -> Option<String> {
        let parameters: Vec<&str> = match node.child_by_field_name("parameters") {
            Some(list) if plain => list
                .named_children(&mut list.walk())
                .map_while(|p| match p.kind() {
                    "identifier" => Some(self.text(p)),
                    "default_parameter" | "typed_parameter" | "typed_default_parameter" => {
                        let name = p.child_by_field_name("name").or_else(|| p.named_child(0))?;
                        (name.kind() == "identifier").then(|| self.text(name))
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let built = |value: Node| -> Option<String> {
            self.constructed_type(value).or_else(|| {
                let callee = value.child_by_field_name("function").filter(|_| value.kind() == "call")?;
                let at = parameters.iter().position(|p| *p == self.text(callee))?;
                Some(format!("{PASSED_CLASS}{at}"))
            })
        };
        let mut handed: Vec<Node> = Vec::new();
        let mut assigned: HashMap<&str, Option<String>> = HashMap::new();
        let mut stack = vec![node.child_by_field_name("body")?];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "function_definition" | "class_definition" | "lambda" => continue,
                "return_statement" | "yield" => {
                    if let Some(value) = n.named_child(0) {
                        handed.push(value);
                    }
                }
                "assignment" => {
                    if let (Some(target), Some(value)) = (n.child_by_field_name("left"), n.child_by_field_name("right"))
                    {
                        if target.kind() == "identifier" {
                            let built = built(value);
                            let entry = assigned.entry(self.text(target)).or_insert_with(|| built.clone());
                            if *entry != built {
                                *entry = None;
                            }
                        }
                    }
                }
                _ => {}
            }
            stack.extend(n.named_children(&mut n.walk()));
        }
        let mut found: Option<String> = None;
        for value in handed {
            let class = match value.kind() {
                "identifier" => assigned.get(self.text(value)).cloned().flatten(),
                _ => built(value),
            }?;
            if found.as_ref().is_some_and(|f| *f != class) {
                return None;
            }
            found = Some(class);
        }
        found
    }

    /// The class a JavaScript or TypeScript function returns a new instance of on every
    /// `return` of its own (not those of functions nested in it), or an arrow function's
    /// body is (`() => new Lazy(builder)`); `None` when any return gives something else.
    pub(super) fn built_and_returned(&self, node: Node) -> Option<String> {
        let function = match node.kind() {
            "variable_declarator" | "pair" | "public_field_definition" => node.child_by_field_name("value")?,
            "assignment_expression" => node.child_by_field_name("right")?,
            _ => node,
        };
        let body = function.child_by_field_name("body")?;
        let built = |expression: Node| -> Option<String> {
            let expression = match expression.kind() {
                "parenthesized_expression" => expression.named_child(0)?,
                _ => expression,
            };
            if expression.kind() != "new_expression" {
                return None;
            }
            let class = self.text(expression.child_by_field_name("constructor")?);
            let class = class.rsplit('.').next().unwrap_or(class);
            class.starts_with(char::is_uppercase).then(|| class.to_string())
        };
        if body.kind() != "statement_block" {
            return built(body);
        }
        let mut found: Option<String> = None;
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "function_declaration"
                | "function_expression"
                | "function"
                | "arrow_function"
                | "generator_function_declaration"
                | "method_definition"
                | "class_declaration"
                | "class" => continue,
                "return_statement" => {
                    let class = built(n.named_child(0)?)?;
                    if found.as_ref().is_some_and(|f| *f != class) {
                        return None;
                    }
                    found = Some(class);
                    continue;
                }
                _ => {}
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        found
    }
}

/// What a generator's return annotation says it yields (`-> Iterator[Client]`,
/// `-> Generator[Client, None, None]`): a yielding pytest fixture's value.
pub(super) fn yielded_type(signature: &str) -> Option<String> {
    let stated = signature.rsplit_once("->")?.1.trim().trim_end_matches(':').trim();
    let (head, arguments) = stated.split_once('[')?;
    let generator = matches!(
        head.rsplit('.').next()?,
        "Iterator" | "Iterable" | "Generator" | "AsyncIterator" | "AsyncIterable" | "AsyncGenerator"
    );
    let first = arguments.strip_suffix(']')?.split(',').next()?;
    generator.then(|| super::annotated_type(first.trim())).flatten()
}
