//! What a function binds locally (parameters, assignments, patterns, comprehensions) and
//! the types the code states for those names, for the uses read through them.

use tree_sitter::Node;

use super::types::{accessed_type, chain_text, is_word, without_adapters, without_unwraps};
use super::{base_type_name, go_type, is_keyword_like, own_field_path, stated_type, Walker};
use crate::ingest::Language;

impl<'a> Walker<'a> {
    pub(super) fn bind(&mut self, name: &str) {
        if let Some(locals) = self.frames.iter_mut().rev().find_map(|f| f.locals.as_mut()) {
            locals.insert(name.to_string());
        }
    }

    /// Records the type of a local bound to a constructed value: `target` a plain name,
    /// `binding`'s value a constructor call, struct or composite literal, or `new`.
    pub(super) fn note_local_type(&mut self, binding: Node, target: Node) {
        let target = match target.kind() {
            "expression_list" if target.named_child_count() == 1 => target.named_child(0),
            // `n, err := parse(…)`: the value beside the error is the first result.
            "expression_list" if self.language == Language::Go => target.named_child(0),
            // `let mut p = Parser::new()`.
            "mut_pattern" => target.named_child(0),
            _ => Some(target),
        };
        let Some(target) = target.filter(|t| t.kind() == "identifier") else { return };
        // A Go variable keeps the type it was declared with: after `var bps []BlockParser`,
        // `bps = p.blockParsers[c]` holds `BlockParser`s still.
        if self.language == Language::Go
            && binding.kind() == "assignment_statement"
            && self.local_types.contains_key(self.text(target))
        {
            return;
        }
        // `let p: Parser = …`, `x: Parser = …`, `const p: Parser = …`: the stated type wins.
        let stated_text = binding.child_by_field_name("type").map(|t| self.text(t));
        if let Some(stated) = stated_text {
            if let Some(ty) = self.note_go_slice(target, stated).or_else(|| stated_type(stated, self.language)) {
                return self.note_stated_type(target, ty, stated);
            }
        }
        let value = ["value", "right", "init"].iter().find_map(|f| binding.child_by_field_name(f));
        let value = match value {
            Some(v) if v.kind() == "expression_list" && v.named_child_count() == 1 => v.named_child(0),
            other => other,
        };
        // `lines := node.Lines()` where `node` is a `*Paragraph`: what `Paragraph.Lines` returns.
        let called = |v: Node| {
            let c = self.called(v)?;
            let typed = self.typed_qualifier(c.clone(), v.start_byte());
            // `x.clone()` of an untyped `x` says nothing.
            (!is_word(&typed) || typed != c).then_some(typed)
        };
        if let Some(ty) = value.and_then(|v| self.indexed_element(v)) {
            return self.note_type(target, ty);
        }
        // `cmd = CmdFactory(Clean, …)` may call a function that builds the class passed (a
        // capitalised name is no proof of a class): kept as the call, which the graph types
        // either way (a class's call is the class).
        let call = value.and_then(called);
        let passing = call.clone().filter(|c| self.language == Language::Python && !c.ends_with("()"));
        let Some(ty) = passing.or_else(|| value.and_then(|v| self.constructed_type(v))).or(call) else {
            self.local_types.remove(self.text(target));
            return;
        };
        self.note_type(target, ty);
    }

    /// The names a Rust pattern binds to an enum variant's fields (`Ast::Group(ref g)`,
    /// `&Kind::Pair(a, b)`) are of those fields' types: noted as `Ast::Group(#0)`, which the
    /// graph reads as the variant's first field (`Group(Box<Group>)`: a `Group`).
    pub(super) fn note_variant_fields(&mut self, pattern: Node) {
        if self.language != Language::Rust {
            return;
        }
        let mut stack = vec![(pattern, 0)];
        while let Some((node, depth)) = stack.pop() {
            match node.kind() {
                "match_pattern" | "reference_pattern" | "ref_pattern" | "tuple_pattern" | "mut_pattern"
                    if depth < 4 =>
                {
                    stack.extend(node.named_children(&mut node.walk()).map(|c| (c, depth + 1)));
                }
                "tuple_struct_pattern" => {
                    let Some(path) = node.child_by_field_name("type") else { continue };
                    if path.kind() == "identifier" && matches!(self.text(path), "Some" | "Ok") {
                        self.note_held_value(&variant_fields(node, path), pattern);
                        continue;
                    }
                    if path.kind() != "scoped_identifier" {
                        continue;
                    }
                    let path_text = self.text(path);
                    let parts: Vec<&str> = path_text.split("::").collect();
                    let capitalised = |s: &&str| s.chars().next().is_some_and(char::is_uppercase);
                    if parts.len() < 2 || !parts[parts.len() - 2..].iter().all(capitalised) {
                        continue;
                    }
                    for (i, field) in variant_fields(node, path).into_iter().enumerate() {
                        // Past `..` the places are not known.
                        if field.kind() == "remaining_field_pattern" {
                            break;
                        }
                        if let Some(name) = bound_name(field) {
                            self.note_type(name, format!("{path_text}(#{i})"));
                        }
                    }
                }
                // `Expr::Literal { ref val, .. }`, `Point { x: px, y }`: a name bound to a
                // field is of the type the field's declaration states, noted as
                // `Expr::Literal(#val)`.
                "struct_pattern" => {
                    let Some(path) = node.child_by_field_name("type") else { continue };
                    let path_text = self.text(path);
                    let last = path_text.rsplit("::").next().unwrap_or(path_text);
                    if !last.starts_with(char::is_uppercase) {
                        continue;
                    }
                    let mut cursor = node.walk();
                    let fields: Vec<Node> =
                        node.named_children(&mut cursor).filter(|c| c.kind() == "field_pattern").collect();
                    for field in fields {
                        let Some(name) = field.child_by_field_name("name") else { continue };
                        let bound = match field.child_by_field_name("pattern") {
                            Some(pattern) => bound_name(pattern),
                            None => Some(name),
                        };
                        if let Some(bound) = bound {
                            let ty = format!("{path_text}(#{})", self.text(name));
                            self.note_type(bound, ty);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The name `Some(x)` or `Ok(x)` binds (in an `if let`, a `let … else`, a `match` arm's
    /// top-level pattern) is of what the matched value holds: `if let Some(g) = self.find()`
    /// gives `g` the type `find` returns (the graph reads through the `Option`), `Some(ref g)`
    /// over `self.group` the field's.
    fn note_held_value(&mut self, fields: &[Node], pattern: Node) {
        let [field] = fields else { return };
        let Some(name) = bound_name(*field) else { return };
        // The matched value: a `let`'s, or the `match`'s around the arm.
        let holder = pattern.parent();
        let value = match holder.map(|h| h.kind()) {
            Some("let_condition" | "let_declaration") => holder.and_then(|h| h.child_by_field_name("value")),
            Some("match_arm") => holder
                .and_then(|arm| arm.parent())
                .and_then(|block| block.parent())
                .filter(|m| m.kind() == "match_expression")
                .and_then(|m| m.child_by_field_name("value")),
            _ => None,
        };
        let Some(value) = value else { return };
        let value = match value.kind() {
            "reference_expression" | "unary_expression" => value.named_child(0).unwrap_or(value),
            _ => value,
        };
        let text = self.text(value);
        let held = if own_field_path(text).is_some() {
            Some(text.to_string())
        } else {
            self.called(value).map(|c| self.typed_qualifier(c, value.start_byte()))
        };
        if let Some(held) = held.filter(|h| h.ends_with(')') || own_field_path(h).is_some()) {
            self.note_type(name, held);
        }
    }

    /// What a Rust index expression hands out: `self.ranges[a]` an element of the field
    /// (`ranges: Vec<I>`), `self.items()[0]` of the call's result, `blocks[i]` of a local
    /// stated `Vec<Block>`. Written as `for` loops note what they walk (`self.ranges[]`).
    fn indexed_element(&self, value: Node) -> Option<String> {
        let value = match value.kind() {
            "reference_expression" => {
                value.named_child(u32::try_from(value.named_child_count().checked_sub(1)?).ok()?)?
            }
            _ => value,
        };
        if self.language != Language::Rust || value.kind() != "index_expression" {
            return None;
        }
        let object = value.named_child(0)?;
        let text = self.text(object);
        if is_word(text) {
            let (element, _) = self.local_elements.get(text)?;
            return Some(element.clone());
        }
        if own_field_path(text).is_none() && !text.ends_with(')') {
            return None;
        }
        let typed = self.typed_qualifier(text.to_string(), object.start_byte());
        Some(if is_word(&typed) { typed } else { format!("{typed}[]") })
    }

    /// A loop variable or a callback's first parameter holds an element of what is walked:
    /// `for arg in cmd.get_arguments()`, `cmd.get_arguments().filter(|arg| …)`, `for c in
    /// self.commands():`. Noted as the walked call with `[]`, which the graph reads as an
    /// element of the call's result (by its return annotation).
    pub(super) fn note_element_type(&mut self, binding: Node) {
        let (target, walked) = match (self.language, binding.kind()) {
            (Language::Rust, "for_expression") => {
                (binding.child_by_field_name("pattern"), binding.child_by_field_name("value"))
            }
            (Language::Python, "for_statement" | "for_in_clause") => {
                (binding.child_by_field_name("left"), binding.child_by_field_name("right"))
            }
            (Language::Rust, "closure_parameters") => {
                let (target, receiver) = (binding.named_child(0), self.callback_receiver(binding));
                // `blk.and_then(|blk| …)` on an `Option<BlockContext>` local: the value itself.
                let local = receiver.map(|r| self.text(r)).and_then(|r| self.local_types.get(r));
                let value = local.filter(|(ty, end)| is_word(ty) && ty != "self" && binding.start_byte() < *end);
                let named = target.filter(|t| t.kind() == "identifier");
                if let (Some(target), Some((ty, _)), true) = (named, value, self.calls_with_value(binding)) {
                    return self.note_type(target, ty.clone());
                }
                (target, receiver)
            }
            // `for _, item := range p.items`: the second name is the element.
            (Language::Go, "range_clause") => {
                let left = binding.child_by_field_name("left").filter(|l| l.named_child_count() == 2);
                (left.and_then(|l| l.named_child(1)), binding.child_by_field_name("right"))
            }
            // `for (const item of this.items)` (not `in`, which walks keys).
            (Language::TypeScript | Language::Tsx | Language::JavaScript, "for_in_statement") => {
                let left = binding.child_by_field_name("left");
                let right = binding.child_by_field_name("right");
                let between = match (left, right) {
                    (Some(l), Some(r)) => self.src.get(l.end_byte()..r.start_byte()).unwrap_or_default(),
                    _ => &[],
                };
                if !String::from_utf8_lossy(between).split_whitespace().any(|w| w == "of") {
                    // A key, a string: nothing of what is walked.
                    if let Some(key) = left {
                        self.local_types.remove(self.text(key));
                    }
                    return;
                }
                (left, right)
            }
            // `items.forEach(item => …)`, `items.map((item) => …)`.
            (Language::TypeScript | Language::Tsx | Language::JavaScript, "arrow_function") => {
                let first = binding.child_by_field_name("parameter").or_else(|| {
                    let params = binding.child_by_field_name("parameters")?;
                    let first = params.named_child(0)?;
                    first.child_by_field_name("pattern").or(Some(first))
                });
                (first, self.callback_receiver(binding))
            }
            _ => return,
        };
        // `for (i, t) in items.iter().enumerate()`, `for i, t in enumerate(items):`: the
        // second name is the element of what `enumerate` numbers.
        let pair =
            target.filter(|t| matches!(t.kind(), "tuple_pattern" | "pattern_list") && t.named_child_count() == 2);
        let (target, walked, numbered) = match pair {
            Some(pair) => match walked.and_then(|w| self.enumerated(w)) {
                Some((walked, text)) => (pair.named_child(1), Some(walked), text),
                None => {
                    // Names bound again to what cannot be typed lose the types they had.
                    for name in (0..2).filter_map(|i| pair.named_child(i)) {
                        self.local_types.remove(self.text(name));
                    }
                    return;
                }
            },
            None => (target, walked, None),
        };
        let Some(target) = target.filter(|t| t.kind() == "identifier") else { return };
        // `for _, bp := range bps` over a Go local declared `[]BlockParser`.
        let slice = walked.filter(|w| self.go_slices.contains(self.text(*w)));
        if let Some((ty, _)) = slice.and_then(|w| self.local_types.get(self.text(w))).cloned() {
            return self.note_type(target, ty);
        }
        let walked = walked.and_then(|w| {
            let text = numbered.clone().or_else(|| chain_text(self.text(w)));
            text.map(|t| (t, w.start_byte()))
        });
        // A call's result, or a field of the value itself (`&self.items`, `this.items`).
        let walks = |t: &str| t.ends_with(')') || own_field_path(t).is_some();
        let walked = walked.map(|(t, at)| {
            // `&mut self.items` without its spaces.
            let t = t.trim_start_matches(['&', '*']);
            let t = if t.starts_with("mutself.") { &t[3..] } else { t };
            let t = without_adapters(t);
            // A Go method's receiver is its `self`: `range p.items`.
            let receiver = t
                .split_once('.')
                .filter(|(head, _)| self.local_types.get(*head).is_some_and(|(ty, end)| ty == "self" && at < *end));
            match receiver {
                Some((_, field)) => (format!("self.{field}"), at),
                None => (t.to_string(), at),
            }
        });
        // `for b in &blocks`, `blocks.iter().map(|b| …)` over a local `Vec<Block>`: its element.
        let element = walked.as_ref().filter(|(t, at)| self.local_types.get(t).is_some_and(|(_, end)| at < end));
        let element = element.and_then(|(t, _)| self.local_elements.get(t)).filter(|(_, map)| !map);
        if let Some((element, _)) = element.cloned() {
            return self.note_type(target, element);
        }
        // A local bound to what is walked: `let iter = self.elements.iter(); for t in iter`.
        let walked = walked.map(|(t, at)| {
            let typed = self.typed_qualifier(t.clone(), at);
            if typed != t && is_word(&t) {
                (without_adapters(&typed).to_string(), at)
            } else {
                (t, at)
            }
        });
        let Some((text, at)) = walked.filter(|(t, _)| walks(t)) else {
            // A name bound again to what cannot be typed loses the type it had.
            self.local_types.remove(self.text(target));
            return;
        };
        let text = self.typed_qualifier(text, at);
        // `deque.front().and_then(|blk| …)`: what an element access hands out is the value.
        if is_word(&text) {
            return self.note_type(target, text);
        }
        self.note_type(target, format!("{text}[]"));
    }

    /// Whether a Rust closure is passed to a method an `Option` or a `Result` calls with its
    /// value (`and_then`, `is_some_and`, `map_or`), not one an iterator calls per element.
    fn calls_with_value(&self, callback: Node) -> bool {
        const WITH_VALUE: &[&str] = &["and_then", "is_some_and", "is_ok_and", "is_none_or", "map_or", "map_or_else"];
        let call =
            callback.parent().and_then(|c| c.parent()).filter(|a| a.kind() == "arguments").and_then(|a| a.parent());
        let method = call
            .and_then(|c| c.child_by_field_name("function"))
            .filter(|f| f.kind() == "field_expression")
            .and_then(|f| f.child_by_field_name("field"));
        method.is_some_and(|m| WITH_VALUE.contains(&self.text(m)))
    }

    /// What `walked` numbers when it is an `enumerate`: the chain before Rust's
    /// `.enumerate()` (its node and text), or Python's `enumerate(…)`'s first argument.
    fn enumerated(&self, walked: Node<'a>) -> Option<(Node<'a>, Option<String>)> {
        match self.language {
            Language::Rust => {
                let text = chain_text(self.text(walked))?;
                let before = text.strip_suffix(".enumerate()")?;
                Some((walked, Some(before.to_string())))
            }
            Language::Python => {
                let function = walked.child_by_field_name("function").filter(|_| walked.kind() == "call")?;
                if self.text(function) != "enumerate" {
                    return None;
                }
                let first = walked.child_by_field_name("arguments")?.named_child(0)?;
                (first.kind() != "keyword_argument").then_some((first, None))
            }
            _ => None,
        }
    }

    /// A Python comprehension's `for` clauses bind before its element expression, which the
    /// source writes first: `c` in `c.total() for c in self.carts()` is the loop's.
    pub(super) fn bind_comprehension(&mut self, node: Node) {
        if !self.in_function() {
            return;
        }
        let mut cursor = node.walk();
        let clauses: Vec<Node> = node.named_children(&mut cursor).filter(|c| c.kind() == "for_in_clause").collect();
        for clause in clauses {
            if let Some(target) = clause.child_by_field_name("left") {
                self.bind_pattern(target);
                self.note_element_type(clause);
            }
        }
    }

    /// The object whose elements a Rust closure is called with: `x` in `x.filter(|a| …)`,
    /// `x.map(…)`, `x.any(…)`, `opt.is_some_and(…)`.
    fn callback_receiver(&self, callback: Node<'a>) -> Option<Node<'a>> {
        const PER_ELEMENT: &[&str] = &[
            "filter",
            "map",
            "any",
            "all",
            "find",
            "for_each",
            "position",
            "filter_map",
            "flat_map",
            "take_while",
            "skip_while",
            "inspect",
            "max_by_key",
            "min_by_key",
            "find_map",
            "try_for_each",
            "map_while",
            "partition",
            "is_some_and",
            "is_ok_and",
            "and_then",
            "retain",
            "sort_by_key",
            "forEach",
            "some",
            "every",
            "findIndex",
            "findLast",
            "flatMap",
        ];
        // A Rust closure's parameters sit in the closure; a JS arrow function is the callback.
        let closure = if callback.kind() == "closure_parameters" { callback.parent()? } else { callback };
        let call = closure.parent().filter(|a| a.kind() == "arguments")?.parent()?;
        let callee = call.child_by_field_name("function")?;
        let (object, method) = match callee.kind() {
            "field_expression" => (callee.child_by_field_name("value")?, callee.child_by_field_name("field")?),
            "member_expression" => (callee.child_by_field_name("object")?, callee.child_by_field_name("property")?),
            _ => return None,
        };
        PER_ELEMENT.contains(&self.text(method)).then_some(object)
    }

    /// Python: the type a module-level name, a class attribute or `self.x` holds, from an
    /// assignment whose value builds or returns one (`held_types`).
    pub(super) fn note_held_type(&mut self, assignment: Node) {
        let (Some(target), Some(value)) =
            (assignment.child_by_field_name("left"), assignment.child_by_field_name("right"))
        else {
            return;
        };
        let key = match (target.kind(), self.in_function(), self.container()) {
            ("identifier", false, None) => self.text(target).to_string(),
            ("identifier", false, Some(class)) => format!("{class}.{}", self.text(target)),
            ("attribute", true, Some(class)) => {
                let object = target.child_by_field_name("object").map(|o| self.text(o));
                let Some(attribute) = target.child_by_field_name("attribute").filter(|_| object == Some("self")) else {
                    return;
                };
                format!("{class}.{}", self.text(attribute))
            }
            _ => return,
        };
        // `self.block: BlockParser = block`, `self.renderer = renderer` where the parameter
        // says `renderer: Optional[BaseRenderer]`, `self.md = Markdown()`.
        let stated = assignment.child_by_field_name("type").and_then(|t| stated_type(self.text(t), self.language));
        let ty = stated
            .or_else(|| self.parameter_type(value))
            .or_else(|| self.constructed_type(value))
            .or_else(|| self.called(value));
        match ty {
            Some(ty) => self.held_types.insert(key, ty),
            None => self.held_types.remove(&key),
        };
    }

    /// Python: the type the enclosing function's signature states for the parameter that
    /// `value` names (`renderer: Optional[BaseRenderer] = None`: `BaseRenderer`).
    fn parameter_type(&self, value: Node) -> Option<String> {
        stated_type(self.parameter_annotation(value)?, self.language)
    }

    /// Python: the parameters of the function a name (`value`) is written in, and the name;
    /// none at a class's or a module's level.
    pub(super) fn enclosing_parameters<'t>(&self, value: Node<'t>) -> Option<(Node<'t>, &'a str)> {
        if value.kind() != "identifier" {
            return None;
        }
        let function = std::iter::successors(value.parent(), |n| n.parent())
            .find(|n| matches!(n.kind(), "function_definition" | "class_definition"))
            .filter(|n| n.kind() == "function_definition")?;
        Some((function.child_by_field_name("parameters")?, self.text(value)))
    }

    /// Python: the name a parameter binds (`x`, `x: int`, `x=1`, `x: int = 1`, `*args`,
    /// `**kwargs`); `None` for `*` and `/`.
    pub(super) fn parameter_name<'t>(&self, parameter: Node<'t>) -> Option<Node<'t>> {
        match parameter.kind() {
            "identifier" => Some(parameter),
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => parameter.named_child(0),
            "default_parameter" | "typed_default_parameter" => parameter.child_by_field_name("name"),
            _ => None,
        }
    }

    /// Python: the default value of the enclosing function's parameter that `value` names
    /// (`False` for `strict` of `def __init__(self, strict=False)`).
    pub(super) fn parameter_default<'t>(&self, value: Node<'t>) -> Option<Node<'t>> {
        let (parameters, name) = self.enclosing_parameters(value)?;
        let mut cursor = parameters.walk();
        let found = parameters.named_children(&mut cursor).find(|p| {
            matches!(p.kind(), "default_parameter" | "typed_default_parameter")
                && p.child_by_field_name("name").is_some_and(|n| self.text(n) == name)
        });
        found?.child_by_field_name("value")
    }

    /// Python: the annotation, as written, of the enclosing function's parameter that `value`
    /// names (`Optional[BaseRenderer]`), if it has one.
    pub(super) fn parameter_annotation(&self, value: Node) -> Option<&'a str> {
        let (parameters, name) = self.enclosing_parameters(value)?;
        let mut cursor = parameters.walk();
        let found = parameters.named_children(&mut cursor).find_map(|p| {
            let named = self.parameter_name(p);
            named.filter(|n| self.text(*n) == name).and_then(|_| p.child_by_field_name("type"))
        });
        Some(self.text(found?))
    }

    /// Go: notes whether `name` is declared (`stated`) as a slice or an array, whose elements
    /// a `range` walks; for one, the elements' type (`[]*ast.Node`, `[4]Segment`).
    fn note_go_slice(&mut self, name: Node, stated: &str) -> Option<String> {
        if self.language != Language::Go {
            return None;
        }
        let element = stated.trim_start().strip_prefix('[').and_then(|rest| Some(rest.split_once(']')?.1));
        match element {
            Some(_) => self.go_slices.insert(self.text(name).to_string()),
            None => self.go_slices.remove(self.text(name)),
        };
        go_type(element?)
    }

    /// Rust: a `static` or `const` holds a value of the type it states, in the function that
    /// declares it or, at a module's level, in the rest of the file: `static TYPE_ID:
    /// OnceBox<TypeId>` makes `TYPE_ID.get_or_init(…)` a member of `OnceBox`.
    pub(super) fn note_item_type(&mut self, item: Node) {
        let (Some(name), Some(stated)) = (item.child_by_field_name("name"), item.child_by_field_name("type")) else {
            return;
        };
        if let Some(ty) = stated_type(self.text(stated), self.language) {
            self.note_stated_type(name, ty, self.text(stated));
        }
    }

    /// `name` (an identifier) holds a value of type `ty` until its function's body ends.
    pub(super) fn note_type(&mut self, name: Node, ty: String) {
        self.note_named_type(self.text(name).to_string(), ty);
    }

    /// `note_type` by the name's text.
    pub(super) fn note_named_type(&mut self, name: String, ty: String) {
        let end = self.frames.iter().rev().find(|f| f.locals.is_some()).map_or(usize::MAX, |f| f.end);
        self.local_elements.remove(&name);
        self.local_types.insert(name, (ty, end));
    }

    /// `note_type` for a type as the code states it (`stated`, its text), with what a std
    /// collection of that type hands out (`accessed_type`) in Rust.
    fn note_stated_type(&mut self, name: Node, ty: String, stated: &str) {
        self.note_type(name, ty);
        if let Some(element) = accessed_type(stated).filter(|_| self.language == Language::Rust) {
            let map = base_type_name(stated).ends_with("Map");
            self.local_elements.insert(self.text(name).to_string(), (element, map));
        }
    }

    /// The type a value expression builds, when it says so: `Cart(…)`, `Cart::new(…)`,
    /// `Cart.of(…)`, `Cart { … }`, `&Cart{…}`, `new Cart(…)`; in Rust an enum's variant
    /// (`ast::RepetitionRange::Bounded(…)`, `Kind::Empty`), and the first branch's value of an
    /// `if`, a `match` or a block (`let range = if … { Range::Bounded(…) } else { … }`).
    pub(super) fn constructed_type(&self, value: Node) -> Option<String> {
        let mut value = value;
        for _ in 0..4 {
            match value.kind() {
                "reference_expression"
                | "unary_expression"
                | "await_expression"
                | "parenthesized_expression"
                | "try_expression" => {
                    value = value.named_child(u32::try_from(value.named_child_count().checked_sub(1)?).ok()?)?;
                }
                "if_expression" if self.language == Language::Rust => {
                    value = block_value(value.child_by_field_name("consequence")?)?;
                }
                "block" if self.language == Language::Rust => value = block_value(value)?,
                // `unsafe { Hole::new(…) }`: the value of its block.
                "unsafe_block" => value = block_value(value.named_child(0)?)?,
                "match_expression" if self.language == Language::Rust => {
                    let body = value.child_by_field_name("body")?;
                    let arm = body.named_children(&mut body.walk()).find(|c| c.kind() == "match_arm")?;
                    value = arm.child_by_field_name("value")?;
                }
                _ => break,
            }
        }
        let capitalised = |s: &str| {
            s.chars().next().is_some_and(char::is_uppercase) && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        };
        let kind = value.kind();
        if self.language == Language::Go {
            // `&parser{…}`, `node.(*ast.List)`: the type is written as one, whatever its case.
            let ty = match kind {
                "composite_literal" | "type_assertion_expression" => value.child_by_field_name("type")?,
                _ => return None,
            };
            return go_type(self.text(ty));
        }
        // `Kind::Empty`, `ast::Kind::Tuple(…)`, `Kind::Struct { … }`: a variant (or an
        // associated constant) under its type, both capitalised; a module's path is not.
        let variant_of = |path: &'a str| -> Option<&'a str> {
            let parts: Vec<&str> = path.split("::").map(str::trim).collect();
            match parts.as_slice() {
                [.., ty, variant] if capitalised(ty) && capitalised(variant) => Some(*ty),
                _ => None,
            }
        };
        if self.language == Language::Rust {
            let path = match kind {
                "struct_expression" => value.child_by_field_name("name"),
                "call_expression" => value.child_by_field_name("function"),
                "scoped_identifier" => Some(value),
                _ => None,
            };
            if let Some(ty) = path.and_then(|p| variant_of(self.text(p))) {
                return Some(ty.to_string());
            }
        }
        let text = if kind == "struct_expression" || kind == "composite_literal" {
            let name = value.child_by_field_name("name").or_else(|| value.child_by_field_name("type"))?;
            self.text(name)
        } else if kind == "new_expression" || kind == "object_creation_expression" {
            let name = value.child_by_field_name("constructor").or_else(|| value.child_by_field_name("type"))?;
            self.text(name)
        } else if kind == "call" || kind == "call_expression" {
            let callee = self.text(value.child_by_field_name("function")?);
            let parts: Vec<&str> = callee.split(['.', ':']).filter(|p| !p.is_empty()).collect();
            let found = match parts.as_slice() {
                [.., last] if capitalised(last) => *last,
                // `Cart::new()`, `Cart.of()`: a type's own function.
                [.., ty, _] if capitalised(ty) => *ty,
                _ => return None,
            };
            found
        } else {
            return None;
        };
        let last = text.rsplit(['.', ':']).next().unwrap_or(text);
        let last = last.split('<').next().unwrap_or(last);
        capitalised(last).then(|| last.to_string())
    }

    /// A call's callee with `()` (`self.make_parser()` for `self.make_parser(ctx)`): a local
    /// bound to it is of the type the callee's return annotation names, which only the graph
    /// can look up (the callee may be in another file).
    fn called(&self, value: Node) -> Option<String> {
        // `unsafe { make(…) }`: the call its block ends with.
        let value = match value.kind() {
            "unsafe_block" => block_value(value.named_child(0)?)?,
            _ => value,
        };
        // `Template::compile(s)?`: the value the call's `Result` holds.
        let value = match value.kind() {
            "try_expression" => value.named_child(0)?,
            _ => value,
        };
        if !matches!(value.kind(), "call" | "call_expression") {
            return None;
        }
        let callee = chain_text(self.text(value.child_by_field_name("function")?))?;
        let plain = callee.len() <= 80
            && callee.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '(' | ')'));
        if !plain {
            return None;
        }
        if self.language == Language::Python {
            return Some(format!("{callee}({})", self.passed_classes(value)));
        }
        let called = format!("{callee}()");
        if self.language != Language::Rust {
            return Some(called);
        }
        // `Parser::new(s).unwrap()`: `Parser::new()`; `x.clone()` leaves a name, typed by the
        // caller or of no use.
        let handed = without_unwraps(&called);
        (handed.ends_with(')') || is_word(&handed)).then_some(handed)
    }

    /// The leading positional arguments of a Python call when each is a plain name and one is
    /// capitalised (`make(Clean, out=…)` → `Clean`), else nothing: a function that builds
    /// the class passed to it (`returns::PASSED_CLASS`) returns an instance of that one.
    fn passed_classes(&self, call: Node) -> String {
        let Some(arguments) = call.child_by_field_name("arguments") else { return String::new() };
        let names: Vec<&str> = arguments
            .named_children(&mut arguments.walk())
            .take(4)
            .map_while(|a| (a.kind() == "identifier").then(|| self.text(a)))
            .collect();
        if names.iter().any(|n| n.starts_with(char::is_uppercase)) {
            names.join(",")
        } else {
            String::new()
        }
    }

    /// Binds every identifier under `node` (a pattern), except in type positions.
    pub(super) fn bind_pattern(&mut self, node: Node) {
        let mut stack = vec![node];
        let mut names = Vec::new();
        while let Some(n) = stack.pop() {
            let kind = n.kind();
            if kind.contains("type") && n.id() != node.id() {
                continue;
            }
            // `f.__name__ = …`, `table[k] = …`: a write through a name is a use of it, and
            // binds nothing (a nested function's returned later all the same).
            if ASSIGNED_THROUGH.contains(&kind) {
                continue;
            }
            // `{ key: local }` binds the local; the key is a property's name, not a use of one.
            if kind == "pair_pattern" {
                if let Some(key) = n.child_by_field_name("key") {
                    self.def_names.insert(key.id());
                }
                stack.extend(n.child_by_field_name("value"));
                continue;
            }
            if self.spec.idents.contains(&kind)
                || matches!(kind, "identifier" | "simple_identifier" | "shorthand_property_identifier_pattern")
            {
                names.push(self.text(n).to_string());
                self.def_names.insert(n.id());
                continue;
            }
            // A default value or an initialiser is a use, not a binding.
            let mut cursor = n.walk();
            for (i, child) in n.children(&mut cursor).enumerate() {
                let field = n.field_name_for_child(i as u32);
                // So is a match guard (`Some(x) if ready(x)`).
                if matches!(
                    field,
                    Some("value" | "default_value" | "right" | "type" | "body" | "default" | "condition")
                ) {
                    continue;
                }
                if child.is_named() {
                    stack.push(child);
                }
            }
        }
        for name in names {
            self.bind(&name);
        }
    }

    /// Binds the names a parameter list declares (not the types, not default values).
    pub(super) fn bind_params(&mut self, params: Node) {
        if matches!(self.language, Language::C | Language::Cpp) {
            // `declarator` of a function: find its parameter list.
            let mut node = params;
            for _ in 0..8 {
                if let Some(list) = node.child_by_field_name("parameters") {
                    let mut cursor = list.walk();
                    let decls: Vec<Node> = list.named_children(&mut cursor).collect();
                    for decl in decls {
                        if let Some(d) = decl.child_by_field_name("declarator") {
                            self.bind_pattern(d);
                        }
                    }
                    return;
                }
                match node.child_by_field_name("declarator") {
                    Some(next) => node = next,
                    None => return,
                }
            }
            return;
        }
        let mut cursor = params.walk();
        let children: Vec<Node> = params.named_children(&mut cursor).collect();
        if children.is_empty() && self.spec.idents.contains(&params.kind()) {
            self.bind_pattern(params);
        }
        for child in children {
            let target = child
                .child_by_field_name("pattern")
                .or_else(|| child.child_by_field_name("name"))
                .or_else(|| child.child_by_field_name("left"))
                .unwrap_or(child);
            self.bind_pattern(target);
            self.note_param_type(child, target);
        }
    }

    /// Records the type a parameter's annotation names (`cli: Command`, `p: &mut Parser`,
    /// `(c: Cart)`), so `cli.main()` is a member of `Command`, as a type checker reads it.
    fn note_param_type(&mut self, param: Node, target: Node) {
        let stated = param.child_by_field_name("type").map(|t| self.text(t));
        let slice =
            stated.filter(|_| self.spec.idents.contains(&target.kind())).and_then(|t| self.note_go_slice(target, t));
        let Some(ty) = slice.or_else(|| stated.and_then(|t| stated_type(t, self.language))) else {
            return;
        };
        // `visitor: V` where `V: Visitor`: a value used through the trait.
        let ty = self.bound_of(&ty, param.start_byte()).map(str::to_string).unwrap_or(ty);
        let ident = if self.spec.idents.contains(&target.kind()) {
            Some(target)
        } else {
            // Python's `typed_parameter` holds its name unlabelled.
            target.named_child(0).filter(|n| self.spec.idents.contains(&n.kind()))
        };
        let Some(ident) = ident.filter(|i| !is_keyword_like(self.text(*i))) else { return };
        match stated {
            Some(stated) => self.note_stated_type(ident, ty, stated),
            None => self.note_type(ident, ty),
        }
    }
}

/// Targets of an assignment that write through a name (a member, an element) and bind none.
const ASSIGNED_THROUGH: &[&str] = &[
    "attribute",
    "subscript",
    "member_expression",
    "subscript_expression",
    "field_expression",
    "index_expression",
    "selector_expression",
    "element_reference",
    "dot_index_expression",
    "bracket_index_expression",
    // Ruby's `obj.name = …`.
    "call",
];

/// A Rust block's value: its last expression, when no `;` ends it.
fn block_value(block: Node) -> Option<Node> {
    let mut cursor = block.walk();
    let last = block.named_children(&mut cursor).filter(|c| !c.kind().ends_with("comment")).last()?;
    // A block-like expression last in a block (`if … { … } else { … }`) is read as a statement
    // without its `;`, which still gives the block's value.
    if last.kind() == "expression_statement" {
        let expression = last.named_child(0)?;
        return (expression.end_byte() == last.end_byte()).then_some(expression);
    }
    let statement = last.kind().ends_with("_statement") || last.kind().ends_with("_declaration");
    (!statement && !last.kind().ends_with("_item")).then_some(last)
}

/// The name a Rust pattern's field binds: `x`, `ref x`, `mut x`.
fn bound_name(field: Node) -> Option<Node> {
    match field.kind() {
        "identifier" => Some(field),
        "ref_pattern" | "mut_pattern" => field.named_children(&mut field.walk()).find(|c| c.kind() == "identifier"),
        _ => None,
    }
}

/// The field patterns of a Rust tuple-struct pattern, in order, without its path (`path`).
fn variant_fields<'t>(variant: Node<'t>, path: Node) -> Vec<Node<'t>> {
    let mut cursor = variant.walk();
    variant.named_children(&mut cursor).filter(|c| c.id() != path.id()).collect()
}
