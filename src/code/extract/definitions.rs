//! Definitions: what a node defines (its name, kind and container), recorded as symbols,
//! with the shapes that need more than the grammar's fields (impl blocks, macro calls,
//! JavaScript members assigned on objects; other languages' own shapes are in `shapes`).

use tree_sitter::Node;

use super::attributes::{attribute_path, attributes, gate, has_test_attribute, path_attribute};
use super::outcomes::only_raises;
use super::{base_type_name, is_ident_like, Frame, Walker, MAX_NAME, MAX_SIGNATURE};
use crate::ingest::code::last_row;
use crate::ingest::Language;

use crate::code::{Bound, Gate, Symbol, SymbolKind, Visibility, PYTHON_GATE};

impl<'a> Walker<'a> {
    /// A definition node: records the symbol and opens its frame.
    pub(super) fn definition(&mut self, node: Node, mut kind: SymbolKind) {
        if !self.is_definition_site(node) {
            return;
        }
        let Some((name_node, name, container_override)) = self.definition_name(node) else {
            // A nameless definition (anonymous class, destructuring) still scopes its body.
            if kind.is_callable() {
                self.open_function(node, None, None);
            } else if matches!(kind, SymbolKind::Variable | SymbolKind::Constant) && self.in_function() {
                // A destructured local (`let [, host = "", path = ""] = …`, `const { a, b:
                // c } = opts`) binds its names as a plain local does: ufo's `parseURL` read
                // its `path` as a test file's constant of that name.
                if let Some(pattern) = node.child_by_field_name("name").filter(|p| p.kind().ends_with("pattern")) {
                    self.bind_pattern(pattern);
                }
            }
            return;
        };
        kind = self.refine_kind(node, kind);
        if kind == SymbolKind::Module && self.language == Language::Swift {
            // A Swift `extension T`: members of T, not a definition.
            self.frames.push(Frame { end: node.end_byte(), symbol: None, container: Some(name), locals: None });
            return;
        }
        // A Rust `const` or `static` in a function body is an item all the same (named in
        // the body only, but defined like any other).
        let rust_item = self.language == Language::Rust && kind == SymbolKind::Constant;
        if matches!(kind, SymbolKind::Variable | SymbolKind::Constant | SymbolKind::Property)
            && self.in_function()
            && !rust_item
        {
            // A local: bound, not a definition another file can mean.
            self.def_names.insert(name_node.id());
            self.bind(&name);
            return;
        }
        if self.language == Language::Haskell {
            if self.in_function() {
                // A `where` or `let` binding: local to the function it helps, as a nested
                // `val` is elsewhere; no other file can name it.
                self.def_names.insert(name_node.id());
                self.bind(&name);
                self.open_function(node, None, None);
                return;
            }
            // A signature and the equations right after it are one definition, spanning them
            // all (a go-to-definition lands on the signature, the body is in the span). An
            // instance's method of the same name elsewhere is a definition of its own.
            let container = self.container().unwrap_or("").to_string();
            let end_line = last_row(node) as u32 + 1;
            if let Some(first) = self.out.symbols.last_mut().filter(|s| s.name == name && s.container == container) {
                first.end_line = first.end_line.max(end_line);
                self.def_names.insert(name_node.id());
                self.open_function(node, None, None);
                return;
            }
        }
        let stated_container = container_override.is_some();
        let container = match container_override {
            // `void Cart::add()` inside `namespace shop`: the class is `shop::Cart`.
            Some(c) if matches!(self.language, Language::Cpp) => match self.container() {
                Some(outer) if !c.starts_with(outer) => format!("{outer}::{c}"),
                _ => c,
            },
            Some(c) => c,
            None => self.container().unwrap_or("").to_string(),
        };
        if stated_container && kind == SymbolKind::Function && matches!(self.language, Language::Cpp | Language::C) {
            let type_name = container.rsplit("::").next().unwrap_or(&container);
            kind =
                if type_name == name || name.starts_with('~') { SymbolKind::Constructor } else { SymbolKind::Method };
        }
        if kind == SymbolKind::Field && self.container_kind() == Some(SymbolKind::Enum) {
            kind = SymbolKind::EnumMember;
        }
        if kind == SymbolKind::Function && !container.is_empty() && (self.container_is_type() || stated_container) {
            kind = SymbolKind::Method;
        }
        if kind == SymbolKind::Method && container.is_empty() && self.language != Language::Ruby {
            kind = SymbolKind::Function;
        }
        let qualified_name =
            if container.is_empty() { name.clone() } else { format!("{container}{}{name}", self.spec.separator) };
        let start = node.start_position();
        let name_pos = name_node.start_position();
        let symbol = Symbol {
            name,
            qualified_name: qualified_name.clone(),
            kind,
            line: start.row as u32 + 1,
            end_line: last_row(node) as u32 + 1,
            column: name_pos.column as u32 + 1,
            signature: self.signature(node),
            doc: self.doc(node),
            container,
            visibility: self.visibility(node, kind, &qualified_name),
            implements: match self.language {
                _ if !kind.is_callable() => String::new(),
                Language::Python
                    if kind == SymbolKind::Method && python_decorators(node, self.src).any(is_override) =>
                {
                    crate::code::OVERRIDE.to_string()
                }
                _ => self.implemented_trait().unwrap_or_default(),
            },
            test_marked: self.language == Language::Rust && kind.is_callable() && has_test_attribute(node, self.src),
        };
        // An embedded Go field's name is its type's, which stays a use of the type.
        let embedded =
            self.language == Language::Go && kind == SymbolKind::Field && node.child_by_field_name("name").is_none();
        if !embedded {
            self.def_names.insert(name_node.id());
        }
        let index = self.symbol_base + self.out.symbols.len() as u32;
        if symbol.test_marked && attributes(node, self.src).any(|a| attribute_path(a) == "should_panic") {
            self.out.expects_failure.push(index);
        }
        if self.language == Language::Python && kind.is_callable() && only_raises(node) {
            self.out.always_fails.push(index);
        }
        if kind.is_callable() && crate::code::graph::return_type(&symbol.signature, self.language.name()).is_none() {
            let built = match self.language {
                Language::TypeScript | Language::Tsx | Language::JavaScript => self.built_and_returned(node),
                // A method's class a call of it does not pass: only a function's parameters.
                Language::Python => self.python_built_and_returned(node, kind == SymbolKind::Function),
                _ => None,
            };
            if let Some(built) = built {
                self.out.returns.push((index, built));
            }
        } else if self.language == Language::Python && python_decorators(node, self.src).any(|d| d.contains("fixture"))
        {
            if let Some(yielded) = super::returns::yielded_type(&symbol.signature) {
                self.out.returns.push((index, yielded));
            }
        }
        if self.language == Language::Python && kind == SymbolKind::Method && symbol.name == "__getattr__" {
            if let Some(delegate) = self.getattr_delegate(node) {
                self.out.delegates.push((index, delegate));
            }
        }
        self.out.symbols.push(symbol);
        if self.language == Language::Rust {
            for cfg in attributes(node, self.src).filter_map(gate) {
                self.out.gates.push(Gate { symbol: Some(index), cfg });
            }
            if kind == SymbolKind::Module {
                if let Some(path) = attributes(node, self.src).find_map(path_attribute) {
                    self.out.module_paths.push((index, path.to_string()));
                }
            }
        }
        // A test the harness skips unless asked (`#[ignore]`, `@pytest.mark.skip`,
        // `@unittest.skip(…)`): never in the default run, a gate that is always false.
        if kind.is_callable() || kind.is_container() {
            let skipped = match self.language {
                Language::Rust => attributes(node, self.src).any(|a| attribute_path(a) == "ignore"),
                Language::Python => python_decorators(node, self.src).any(is_skip_decorator),
                _ => false,
            };
            if skipped {
                self.out.gates.push(Gate { symbol: Some(index), cfg: "false".to_string() });
            }
            // A test skipped on some Pythons (`@skipIf(sys.version_info < (3, 15), …)`): a gate
            // on the version that runs it, which the default run reads off the interpreter.
            if self.language == Language::Python {
                for cfg in python_decorators(node, self.src).filter_map(python_version_gate) {
                    self.out.gates.push(Gate { symbol: Some(index), cfg });
                }
            }
        }
        if node.kind() == "assignment_expression" && node.parent().is_some_and(|p| p.kind() == "assignment_expression")
        {
            // A name inside a chain (`equals` in `T.prototype.equal = T.prototype.equals =
            // strictEqual`): the value is the chain's first name's, where its uses lead.
            return;
        }
        if kind.is_callable() {
            // An assigned function's parameters are on the function, not the assignment.
            let function = match node.kind() {
                "assignment_expression" => self.assigned_function_member(node).map_or(node, |m| m.value),
                _ => node,
            };
            self.open_function(function, Some(index), None);
        } else if kind.is_container() {
            self.frames.push(Frame {
                end: node.end_byte(),
                symbol: Some(index),
                container: Some(qualified_name),
                locals: None,
            });
        } else {
            self.frames.push(Frame { end: node.end_byte(), symbol: Some(index), container: None, locals: None });
        }
    }

    /// The items a call of one of the file's `macro_rules!` macros defines: under names it
    /// passes in, each at the call's token that names it, and the functions the rule's body
    /// spells out, at the call. `uses_before`: the uses recorded before the call's arguments
    /// were read.
    pub(super) fn macro_call_definitions(&mut self, node: Node, uses_before: usize) {
        let Some((macro_name, call)) = self.macro_call(node) else { return };
        let Some(rules) = self.macro_rules.get(macro_name) else { return };
        let (bound, literals) = rules.definitions(call, self.src);
        if bound.is_empty() && literals.is_empty() {
            return;
        }
        // What the call defines: the names it passes in, at their tokens, and the functions
        // the rule's body names, at the call (its macro's name).
        let call_at = (node.start_position().row as u32 + 1, node.start_position().column as u32 + 1);
        let mut items: Vec<MacroItem> = bound
            .into_iter()
            .map(|b| MacroItem {
                name: b.name.to_string(),
                at: (b.position.0 as u32 + 1, b.position.1 as u32 + 1),
                kind: b.kind,
                test: b.test,
                at_token: true,
                implementation: None,
            })
            .collect();
        items.extend(literals.into_iter().map(|(l, ty)| MacroItem {
            name: l.name.clone(),
            at: call_at,
            kind: SymbolKind::Function,
            test: l.test,
            at_token: false,
            implementation: l.implementation.as_ref().map(|(t, _)| (t.clone(), ty.unwrap_or_default())),
        }));
        let container = self.container().unwrap_or("").to_string();
        let in_type = self.container_is_type();
        // In an `impl Trait for Type`, its functions are the type's methods of that trait.
        let implements = if in_type { self.implemented_trait().unwrap_or_default() } else { String::new() };
        let first_line = self.text(node).lines().next().unwrap_or("");
        let signature: String = first_line.trim().chars().take(MAX_SIGNATURE).collect();
        let doc = self.doc(node);
        let end_line = last_row(node) as u32 + 1;
        for MacroItem { name, at: (line, column), mut kind, test, at_token, implementation } in items {
            if kind == SymbolKind::Function && !container.is_empty() && in_type {
                kind = SymbolKind::Method;
            }
            // A method of the body's own `impl` block is its type's, of its trait, wherever
            // the call is (`impl_num! { i8 i16 }` at a module's top level).
            let (container, implements) = match implementation {
                Some((t, ty)) => {
                    kind = SymbolKind::Method;
                    (ty, t)
                }
                None => (container.clone(), implements.clone()),
            };
            let qualified_name =
                if container.is_empty() { name.clone() } else { format!("{container}{}{name}", self.spec.separator) };
            if at_token {
                // An item the call's body holds as written was found by reading the body.
                if self.out.symbols.iter().rev().take(256).any(|s| s.line == line && s.column == column) {
                    continue;
                }
                // The call's token names a definition: not a use of it (nor read as one when
                // the call's arguments were read as an expression).
                self.seen.insert((line, column));
                let mut at = uses_before;
                while at < self.out.occurrences.len() {
                    let o = &self.out.occurrences[at];
                    if (o.line, o.column) == (line, column) {
                        self.out.occurrences.remove(at);
                    } else {
                        at += 1;
                    }
                }
            }
            self.out.symbols.push(Symbol {
                name,
                qualified_name,
                kind,
                line,
                end_line,
                column,
                signature: signature.clone(),
                doc: doc.clone(),
                container,
                visibility: Visibility::Private,
                implements: if kind == SymbolKind::Method { implements } else { String::new() },
                test_marked: test,
            });
        }
    }

    /// The functions a `macro_rules!` body spells out by name (`fn remaining(&self) …`), each
    /// a definition inside the macro `macro_name`, where its lines are.
    pub(super) fn macro_template_definitions(&mut self, macro_name: &str, rules: &super::macros::MacroRules) {
        for literal in rules.literals() {
            let line = literal.start.0 as u32 + 1;
            let rest = self.src.get(literal.start_byte..).unwrap_or_default();
            let first_line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
            let signature: String = String::from_utf8_lossy(first_line).trim().chars().take(MAX_SIGNATURE).collect();
            self.out.symbols.push(Symbol {
                name: literal.name.clone(),
                qualified_name: format!("{macro_name}{}{}", self.spec.separator, literal.name),
                kind: SymbolKind::Function,
                line,
                end_line: literal.end_row as u32 + 1,
                column: literal.start.1 as u32 + 1,
                signature,
                doc: String::new(),
                container: macro_name.to_string(),
                visibility: Visibility::Private,
                implements: String::new(),
                test_marked: false,
            });
        }
    }

    /// Node kinds that define in one place and only name a type in another: C's
    /// `struct cart` without a body, Haskell's `function` type (`a -> b`).
    pub(super) fn is_definition_site(&self, node: Node) -> bool {
        match self.language {
            Language::C | Language::Cpp => {
                !node.kind().ends_with("_specifier") || node.child_by_field_name("body").is_some()
            }
            Language::Haskell => match node.kind() {
                "data_constructor" | "newtype_constructor" => true,
                // A record's field (`data Cart = Cart { items :: [Item] }`), not a field
                // named in a record expression.
                "field" => std::iter::successors(node.parent(), |p| p.parent())
                    .take(4)
                    .any(|p| matches!(p.kind(), "data_constructor" | "newtype_constructor")),
                _ => node.parent().is_some_and(|p| {
                    let k = p.kind();
                    k.ends_with("declarations") || k == "local_binds" || k == "haskell" || k == "where"
                }),
            },
            Language::JavaScript if node.kind() == "assignment_expression" => {
                self.assigned_function_member(node).is_some()
            }
            // A primary constructor's `val`/`var` parameter is a property; the others are
            // parameters.
            Language::Kotlin if node.kind() == "class_parameter" => {
                let head = self.text(node).split(':').next().unwrap_or("");
                head.split_whitespace().any(|w| w == "val" || w == "var")
            }
            _ => true,
        }
    }

    /// Whether the innermost definition that names its members is a type (or an `impl`), not
    /// a module: a function inside it is a method.
    pub(super) fn container_is_type(&self) -> bool {
        self.frames
            .iter()
            .rev()
            .find(|f| f.container.is_some())
            .is_some_and(|f| f.symbol.and_then(|i| self.own_symbol(i)).is_none_or(|s| s.kind != SymbolKind::Module))
    }

    /// The kind of the innermost definition that names its members (a class, an enum…).
    pub(super) fn container_kind(&self) -> Option<SymbolKind> {
        let frame = self.frames.iter().rev().find(|f| f.container.is_some())?;
        frame.symbol.and_then(|i| self.own_symbol(i)).map(|s| s.kind)
    }

    /// A symbol of this walk by its index in the file (`None` for one outside a macro body).
    pub(super) fn own_symbol(&self, index: u32) -> Option<&Symbol> {
        index.checked_sub(self.symbol_base).and_then(|i| self.out.symbols.get(i as usize))
    }

    /// Members of an `impl` block (or a Haskell instance) are named through its type.
    pub(super) fn impl_block(&mut self, node: Node, field: &str) {
        let Some(ty) = node.child_by_field_name(field) else {
            return;
        };
        let mut name = base_type_name(self.text(ty));
        if name.is_empty() && self.language == Language::Rust {
            // `impl<S, const N: usize> Point for [S; N]`, `impl Trait for (A, B)`: a type of no
            // name is named as written, so its methods are still the trait's implementations.
            name = self.text(ty).split_whitespace().collect::<Vec<_>>().join(" ");
        }
        if name.is_empty() {
            return;
        }
        self.frames.push(Frame { end: node.end_byte(), symbol: None, container: Some(name), locals: None });
        if self.language == Language::Rust {
            if let Some(t) = node.child_by_field_name("trait") {
                let name = base_type_name(self.text(t));
                let name = name.rsplit("::").next().unwrap_or(&name).to_string();
                self.impl_traits.retain(|(end, _)| *end > node.start_byte());
                self.impl_traits.push((node.end_byte(), name));
            }
            self.note_generic_bounds(node);
        }
    }

    /// The trait the `impl` block around the definition being made implements, if any.
    pub(super) fn implemented_trait(&self) -> Option<String> {
        let frame = self.frames.iter().rev().find(|f| f.container.is_some())?;
        if frame.symbol.is_some() {
            return None;
        }
        self.impl_traits.iter().rev().find(|(end, _)| *end == frame.end).map(|(_, t)| t.clone())
    }

    /// Notes the trait each type parameter of a Rust item is bound by: `<V: Visitor>`,
    /// `<I: Interval + Clone>`, `where V: Visitor` (the first bound that is a trait of a
    /// name, not a lifetime or `?Sized`).
    pub(super) fn note_generic_bounds(&mut self, node: Node) {
        let end = node.end_byte();
        self.generic_bounds.retain(|(e, _, _)| *e > node.start_byte());
        let mut texts: Vec<String> = Vec::new();
        if let Some(params) = node.child_by_field_name("type_parameters") {
            let text = self.text(params);
            texts.extend(split_top_level(text.trim_start_matches('<').trim_end_matches('>')));
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor).filter(|c| c.kind() == "where_clause") {
            let text = self.text(child).trim_start_matches("where");
            texts.extend(split_top_level(text));
        }
        for text in texts {
            let Some((param, bounds)) = text.split_once(':') else { continue };
            let param = param.trim();
            if !param.chars().all(|c| c.is_alphanumeric() || c == '_') || param.is_empty() {
                continue;
            }
            let bound = bounds.split('+').map(str::trim).find(|b| !b.starts_with('\'') && !b.starts_with('?'));
            let Some(bound) = bound.map(base_type_name).filter(|b| !b.is_empty()) else { continue };
            let bound = bound.rsplit("::").next().unwrap_or(&bound).to_string();
            let (line, end_line) = (node.start_position().row as u32 + 1, node.end_position().row as u32 + 1);
            self.out.bounds.push(Bound { param: param.to_string(), bound: bound.clone(), line, end_line });
            self.generic_bounds.push((end, param.to_string(), bound));
        }
    }

    /// The trait type parameter `name` is bound by at byte `at`, if it is one in scope.
    pub(super) fn bound_of(&self, name: &str, at: usize) -> Option<&str> {
        self.generic_bounds.iter().rev().find(|(end, p, _)| p == name && at < *end).map(|(_, _, t)| t.as_str())
    }

    /// The node naming a definition, its text, and a container the name itself states
    /// (`Cart::add` defined outside its class, `function Cart:add`, a Go receiver).
    pub(super) fn definition_name<'t>(&self, node: Node<'t>) -> Option<(Node<'t>, String, Option<String>)> {
        let kind = node.kind();
        let lang = self.language;
        if (lang, kind) == (Language::Lua, "comment") {
            return self.lua_annotated_class(node);
        }
        let mut container = None;
        let name_node = match (lang, kind) {
            (Language::C | Language::Cpp, "function_definition" | "type_definition" | "field_declaration") => {
                let mut decl = node.child_by_field_name("declarator")?;
                let mut is_function = false;
                for _ in 0..10 {
                    // A function, unless its name is in parentheses: a pointer to one.
                    if decl.kind() == "function_declarator"
                        && decl.child_by_field_name("declarator").is_none_or(|d| d.kind() != "parenthesized_declarator")
                    {
                        is_function = true;
                    }
                    // `(*on_free)` in `void (*on_free)(void *)`: a pointer to a function.
                    let inner = match decl.kind() {
                        "parenthesized_declarator" => decl.named_child(0),
                        _ => decl.child_by_field_name("declarator"),
                    };
                    match inner {
                        Some(inner) if !is_ident_like(decl.kind()) || decl.kind() == "qualified_identifier" => {
                            if decl.kind() == "qualified_identifier" {
                                break;
                            }
                            decl = inner;
                        }
                        _ => break,
                    }
                }
                if kind == "field_declaration" && is_function {
                    // A member function declared here and defined elsewhere: the definition
                    // is the symbol.
                    return None;
                }
                if decl.kind() == "qualified_identifier" {
                    let scope = decl.child_by_field_name("scope").map(|s| self.text(s).to_string());
                    let mut name = decl.child_by_field_name("name")?;
                    while name.kind() == "qualified_identifier" {
                        name = name.child_by_field_name("name")?;
                    }
                    let full = self.text(decl);
                    let scope_text = full.rsplit_once("::").map(|(s, _)| s.to_string()).or(scope);
                    container = scope_text.map(|s| base_type_name(&s));
                    name
                } else {
                    decl
                }
            }
            (Language::Go, "method_declaration") => {
                let receiver = node.child_by_field_name("receiver")?;
                let ty = receiver.named_child(0).and_then(|p| p.child_by_field_name("type"));
                container = ty.map(|t| base_type_name(self.text(t)));
                node.child_by_field_name("name")?
            }
            (Language::Go, "field_declaration") => match node.child_by_field_name("name") {
                Some(name) => name,
                // An embedded field (`ast.BaseInline`, `*Node`) is named by its type.
                None => {
                    let mut ty = node.child_by_field_name("type")?;
                    for _ in 0..4 {
                        ty = match ty.kind() {
                            "pointer_type" => ty.named_child(0)?,
                            "qualified_type" => ty.child_by_field_name("name")?,
                            "generic_type" => ty.child_by_field_name("type")?,
                            _ => break,
                        };
                    }
                    ty
                }
            },
            (Language::Java | Language::CSharp, "field_declaration" | "event_field_declaration") => {
                let decl = node.child_by_field_name("declarator").or_else(|| {
                    let mut cursor = node.walk();
                    let var = node.named_children(&mut cursor).find(|c| c.kind() == "variable_declaration");
                    var.and_then(|v| {
                        let mut c2 = v.walk();
                        let found = v.named_children(&mut c2).find(|c| c.kind() == "variable_declarator");
                        found
                    })
                })?;
                decl.child_by_field_name("name").or_else(|| decl.named_child(0))?
            }
            (Language::Java, "constant_declaration") => {
                node.child_by_field_name("declarator")?.child_by_field_name("name")?
            }
            (Language::Kotlin, "property_declaration") => {
                let mut cursor = node.walk();
                let var = node.named_children(&mut cursor).find(|c| c.kind() == "variable_declaration")?;
                var.named_child(0)?
            }
            (Language::Kotlin, "secondary_constructor") => {
                let mut cursor = node.walk();
                let kw = node.children(&mut cursor).find(|c| c.kind() == "constructor")?;
                kw
            }
            (
                Language::Kotlin,
                "class_declaration" | "object_declaration" | "function_declaration" | "type_alias" | "enum_entry",
            ) => node.child_by_field_name("name").or_else(|| {
                let mut cursor = node.walk();
                let found = node.named_children(&mut cursor).find(|c| c.kind() == "identifier");
                found
            })?,
            (Language::Scala, "val_definition" | "var_definition") => {
                node.child_by_field_name("pattern").filter(|p| p.kind() == "identifier")?
            }
            (Language::Swift, "property_declaration") => {
                let pattern = node.child_by_field_name("name")?;
                pattern.child_by_field_name("bound_identifier").or_else(|| pattern.named_child(0))?
            }
            (Language::Swift, "init_declaration") => {
                let mut cursor = node.walk();
                let kw = node.children(&mut cursor).find(|c| c.kind() == "init")?;
                kw
            }
            (Language::Swift, "class_declaration") => {
                let name = node.child_by_field_name("name")?;
                if name.kind() == "user_type" {
                    // `extension Cart`: the name's identifier.
                    let mut cursor = name.walk();
                    let found = name.named_children(&mut cursor).last();
                    found.unwrap_or(name)
                } else {
                    name
                }
            }
            (Language::Php, "const_element") => node.named_child(0).filter(|n| n.kind() == "name")?,
            (Language::Php, "property_element") => {
                let var = node.child_by_field_name("name").or_else(|| node.named_child(0))?;
                var.named_child(0).unwrap_or(var)
            }
            (Language::Lua, "function_declaration") => {
                let name = node.child_by_field_name("name")?;
                match name.kind() {
                    "dot_index_expression" => {
                        container = name.child_by_field_name("table").map(|t| self.text(t).to_string());
                        name.child_by_field_name("field")?
                    }
                    "method_index_expression" => {
                        container = name.child_by_field_name("table").map(|t| self.text(t).to_string());
                        name.child_by_field_name("method")?
                    }
                    _ => name,
                }
            }
            (Language::Zig, "variable_declaration") => {
                let mut cursor = node.walk();
                let found = node.named_children(&mut cursor).find(|c| c.kind() == "identifier");
                let name = found?;
                // `const std = @import("std");` (or `@import("std").mem`) binds an import,
                // not a definition. Only the value counts: a struct whose body calls
                // `@import(…)` somewhere, or mentions it in a comment, still defines a type.
                let value = node.named_children(&mut cursor).filter(|c| c.kind() != "comment").last();
                if value.is_some_and(|v| self.text(v).trim_start().starts_with("@import(")) {
                    return None;
                }
                name
            }
            (Language::Haskell, "data_constructor") => {
                let inner = node.child_by_field_name("constructor")?;
                inner.child_by_field_name("name").or_else(|| inner.named_child(0))?
            }
            (Language::Haskell, "newtype_constructor") => node.child_by_field_name("name")?,
            (Language::Ruby, "class" | "module") => {
                let name = node.child_by_field_name("name")?;
                if name.kind() == "scope_resolution" {
                    container = name.child_by_field_name("scope").map(|s| self.text(s).to_string());
                    name.child_by_field_name("name")?
                } else {
                    name
                }
            }
            (Language::TypeScript | Language::Tsx | Language::JavaScript, "variable_declarator") => {
                // `const parse = require('./parse')` binds an import, as `import parse from`
                // does: the name means what the module exports, not a variable of this file.
                let value = node.child_by_field_name("value");
                let required = value.is_some_and(|v| {
                    v.kind() == "call_expression"
                        && v.child_by_field_name("function").is_some_and(|f| self.text(f) == "require")
                });
                if required {
                    return None;
                }
                node.child_by_field_name("name").filter(|n| n.kind() == "identifier")?
            }
            (Language::JavaScript, "assignment_expression") => {
                let member = self.assigned_function_member(node)?;
                container = member.container;
                member.name
            }
            _ => {
                let name = node.child_by_field_name("name").or_else(|| {
                    let mut cursor = node.walk();
                    let found = node.named_children(&mut cursor).find(|c| is_ident_like(c.kind()));
                    found
                })?;
                name
            }
        };
        // A C++ specialization (`template <> struct Owner<Doc>`) defines `Owner`.
        let name_node = match name_node.kind() {
            "template_type" if self.language == Language::Cpp => name_node.child_by_field_name("name")?,
            _ => name_node,
        };
        let mut text = self.text(name_node).trim();
        if self.language == Language::Php {
            text = text.trim_start_matches('$');
        }
        // A JavaScript/TypeScript member named by a string (`"first-child"(next) {…}`,
        // `'Content-Type': …`) is called by the string's contents (`pseudos["first-child"]`).
        if matches!(self.language, Language::JavaScript | Language::TypeScript | Language::Tsx)
            && name_node.kind() == "string"
        {
            text = text.get(1..text.len().saturating_sub(1)).unwrap_or_default();
        }
        if text.is_empty() || text.len() > MAX_NAME || text.contains('\n') {
            return None;
        }
        let text = text.split_whitespace().collect::<Vec<_>>().join("");
        Some((name_node, text, container))
    }

    /// A Lua class as the language server's annotations declare it (`---@class LazyFloat`,
    /// `---@class MiniFiles.Config: Base`): Lua has no class syntax, and Neovim's Lua writes
    /// its types so; a query of the name asks for the file that declares it. The comment is
    /// the name's node; a dotted name is a member of its prefix.
    fn lua_annotated_class<'t>(&self, node: Node<'t>) -> Option<(Node<'t>, String, Option<String>)> {
        // `---@class`, or `--- @class` (the language server reads both).
        let rest = self.text(node).strip_prefix("---")?.trim_start().strip_prefix("@class")?;
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        let rest = rest.trim_start();
        let rest = rest.strip_prefix("(exact)").map_or(rest, str::trim_start);
        let token = rest.split(|c: char| c.is_whitespace() || matches!(c, ':' | '<')).next()?;
        let valid = token.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && token.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
            && !token.ends_with('.');
        if !valid || token.len() > MAX_NAME {
            return None;
        }
        match token.rsplit_once('.') {
            Some((container, name)) => Some((node, name.to_string(), Some(container.to_string()))),
            None => Some((node, token.to_string(), None)),
        }
    }

    /// A function or class set on an object in old-style JavaScript, a definition there as a
    /// declaration is elsewhere: `Test.prototype.run = function () {…}` (a method of `Test`),
    /// `lazyLoad.only = …` (a member of `lazyLoad`), `exports.parse = …` and
    /// `module.exports.parse = …` (the module's own), also each name of a chain
    /// (`T.prototype.equal = T.prototype.equals = function …`), and a prototype's or the
    /// module's member set to a function named elsewhere (`T.prototype.is = strictEqual`).
    /// And `module.exports = function …` itself, named `module.exports`. Not one set on `this`
    /// or on a computed member.
    pub(super) fn assigned_function_member<'t>(&self, node: Node<'t>) -> Option<AssignedMember<'t>> {
        let left = node.child_by_field_name("left").filter(|l| l.kind() == "member_expression")?;
        // `module.exports = function (…) {…}`: the module's default export, named for now by
        // what it is set on (`name_default_export` names it for its file).
        let default_export = self.text(left) == "module.exports";
        let name = match default_export {
            true => left,
            false => left.child_by_field_name("property").filter(|p| p.kind() == "property_identifier")?,
        };
        let mut value = node.child_by_field_name("right")?;
        for _ in 0..MAX_ASSIGNMENT_CHAIN {
            if value.kind() != "assignment_expression" {
                break;
            }
            value = value.child_by_field_name("right")?;
        }
        let function = matches!(
            value.kind(),
            "function_expression" | "function" | "arrow_function" | "generator_function" | "class"
        );
        // A function named elsewhere (`Test.prototype.equal = strictEqual`, `exports.stringify =
        // stringifyValue`): the member is that function under another name.
        let alias = value.kind() == "identifier" && self.text(value) != self.text(name);
        if !function && !alias {
            return None;
        }
        if default_export {
            // `module.exports = Test`: `Test` is defined already.
            return function.then_some(AssignedMember { name, container: None, value });
        }
        let object = left.child_by_field_name("object")?;
        let container = match (object.kind(), self.text(object)) {
            (_, "exports" | "module.exports") => None,
            ("identifier", "module" | "this") => return None,
            // `lazyLoad.only = only` could set any value: only a function written there counts.
            ("identifier", owner) if function => Some(owner.to_string()),
            ("member_expression", _) => {
                let owner = object.child_by_field_name("object").filter(|o| o.kind() == "identifier")?;
                let member = object.child_by_field_name("property")?;
                if self.text(member) != "prototype" {
                    return None;
                }
                Some(self.text(owner).to_string())
            }
            _ => return None,
        };
        Some(AssignedMember { name, container, value })
    }

    /// Kinds a node type alone does not tell.
    pub(super) fn refine_kind(&self, node: Node, kind: SymbolKind) -> SymbolKind {
        match (self.language, node.kind()) {
            (Language::Go, "type_spec") => match node.child_by_field_name("type").map(|t| t.kind()) {
                Some("struct_type") => SymbolKind::Struct,
                Some("interface_type") => SymbolKind::Interface,
                _ => SymbolKind::Type,
            },
            (Language::TypeScript | Language::Tsx | Language::JavaScript, "variable_declarator") => {
                match node.child_by_field_name("value").map(|v| v.kind()) {
                    Some("arrow_function" | "function_expression" | "function" | "generator_function") => {
                        SymbolKind::Function
                    }
                    Some("class") => SymbolKind::Class,
                    _ => {
                        let is_const = node.parent().is_some_and(|p| self.text(p).starts_with("const"));
                        if is_const {
                            SymbolKind::Constant
                        } else {
                            SymbolKind::Variable
                        }
                    }
                }
            }
            // A class's `constructor` runs where the class is built (`new Cart(…)`), never by
            // its name: a constructor as other languages' are.
            (Language::TypeScript | Language::Tsx | Language::JavaScript, "method_definition")
                if node.child_by_field_name("name").is_some_and(|n| self.text(n) == "constructor") =>
            {
                SymbolKind::Constructor
            }
            (Language::JavaScript, "assignment_expression") => match self.assigned_function_member(node) {
                Some(member) if member.value.kind() == "class" => SymbolKind::Class,
                _ => kind,
            },
            (Language::Swift, "class_declaration") => {
                let keyword = node.child_by_field_name("declaration_kind").map(|k| self.text(k)).unwrap_or("class");
                match keyword {
                    "struct" => SymbolKind::Struct,
                    "enum" => SymbolKind::Enum,
                    "extension" => SymbolKind::Module,
                    _ => SymbolKind::Class,
                }
            }
            (Language::Kotlin, "class_declaration") => {
                let mut cursor = node.walk();
                let keywords: Vec<&str> = node.children(&mut cursor).map(|c| c.kind()).collect();
                if keywords.contains(&"interface") {
                    SymbolKind::Interface
                } else if self.text(node).trim_start().starts_with("enum") || self.header(node).contains("enum class") {
                    SymbolKind::Enum
                } else {
                    SymbolKind::Class
                }
            }
            (Language::Zig, "variable_declaration") => {
                let mut cursor = node.walk();
                let value = node.named_children(&mut cursor).map(|c| c.kind()).find(|k| k.ends_with("_declaration"));
                match value {
                    Some("struct_declaration") | Some("union_declaration") => SymbolKind::Struct,
                    Some("enum_declaration") => SymbolKind::Enum,
                    Some("opaque_declaration") => SymbolKind::Type,
                    _ if self.text(node).trim_start_matches("pub ").starts_with("var") => SymbolKind::Variable,
                    _ => kind,
                }
            }
            (Language::Rust, "const_item" | "static_item") => kind,
            (Language::Python, "function_definition") if kind == SymbolKind::Function => kind,
            (Language::Scala, "val_definition") => kind,
            (Language::Java, "field_declaration") => {
                let header = self.header(node);
                if header.contains("static") && header.contains("final") {
                    SymbolKind::Constant
                } else {
                    kind
                }
            }
            (Language::Kotlin, "property_declaration") if self.header(node).contains("const ") => SymbolKind::Constant,
            (Language::CSharp, "field_declaration") if self.header(node).contains("const ") => SymbolKind::Constant,
            _ => kind,
        }
    }
}

/// What `assigned_function_member` reads from an assignment.
pub(super) struct AssignedMember<'t> {
    /// The member's name.
    pub name: Node<'t>,
    /// The object's name (`Test` for `Test.prototype.run`), none for the module's own.
    pub container: Option<String>,
    /// The function or class assigned.
    pub value: Node<'t>,
}

/// Names one function is set under at most (`a = b = c = function …`).
const MAX_ASSIGNMENT_CHAIN: usize = 16;

/// `text` split at its commas outside `<…>`, `(…)` and `[…]`.
fn split_top_level(text: &str) -> Vec<String> {
    let (mut depth, mut out, mut current) = (0i32, Vec::new(), String::new());
    for c in text.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out
}

/// The decorators written above a Python definition (`@override`, `@pytest.mark.skip`).
fn python_decorators<'t, 's: 't>(node: Node<'t>, src: &'s [u8]) -> impl Iterator<Item = &'s str> + 't {
    let decorated = node.parent().filter(|p| p.kind() == "decorated_definition");
    let mut children = Vec::new();
    if let Some(p) = decorated {
        let mut cursor = p.walk();
        children.extend(p.named_children(&mut cursor).filter(|c| c.kind() == "decorator"));
    }
    children.into_iter().map(move |c| c.utf8_text(src).unwrap_or(""))
}

/// `@override`, `@typing.override`, `@typing_extensions.override`.
fn is_override(decorator: &str) -> bool {
    let path = decorator.trim_start_matches('@').trim();
    path.rsplit('.').next() == Some("override")
}

/// Whether a Python decorator skips its test whatever happens: `@pytest.mark.skip`,
/// `@pytest.mark.skip(reason=…)`, `@unittest.skip("…")` (not `skipif`, which asks).
fn is_skip_decorator(decorator: &str) -> bool {
    let path = decorator.trim_start_matches('@').split(['(', ' ', '\n']).next().unwrap_or("");
    path.rsplit('.').next() == Some("skip")
        && (path == "skip" || path.contains("mark.") || path.starts_with("unittest."))
}

/// The Python versions a version-conditioned skip decorator lets its test run on, as a gate
/// (`PYTHON_GATE` and a comparison): `python >=3.15` for `@skipIf(version_info < (3, 15), …)`,
/// `python <3.14` for `@pytest.mark.skipif(sys.version_info >= (3, 14), reason=…)`,
/// `python >=3.0` for `@skipUnless(sys.version_info[0] >= 3, …)`; `None` for any other
/// decorator or condition.
fn python_version_gate(decorator: &str) -> Option<String> {
    let text: String = decorator.trim_start_matches('@').chars().filter(|c| !c.is_whitespace()).collect();
    let (path, arguments) = text.split_once('(')?;
    let runs_when_true = match path.rsplit('.').next()? {
        "skipIf" | "skipif" => false,
        "skipUnless" => true,
        _ => return None,
    };
    let condition = arguments.strip_prefix("sys.").unwrap_or(arguments).strip_prefix("version_info")?;
    let (major_only, condition) = match condition.strip_prefix("[0]") {
        Some(rest) => (true, rest),
        None => (false, condition),
    };
    let operator = ["<=", ">=", "<", ">"].into_iter().find(|o| condition.starts_with(o))?;
    let value = &condition[operator.len()..];
    let digits = |s: &str| -> Option<u32> { s.parse().ok() };
    let version = if major_only {
        let end = value.find(|c: char| !c.is_ascii_digit())?;
        (digits(&value[..end])?, 0)
    } else {
        let inside = value.strip_prefix('(')?.split(')').next()?;
        let mut parts = inside.split(',').filter(|p| !p.is_empty());
        let major = digits(parts.next()?)?;
        (major, parts.next().map_or(Some(0), digits)?)
    };
    // The condition that skips (or, for `skipUnless`, that runs), turned into the one that runs.
    let operator = match (runs_when_true, operator) {
        (true, o) => o,
        (false, "<") => ">=",
        (false, "<=") => ">",
        (false, ">") => "<=",
        (false, _) => "<",
    };
    Some(format!("{PYTHON_GATE}{operator}{}.{}", version.0, version.1))
}

/// One item a macro call defines: its name, line and column, kind, whether a test marker is
/// on it, and whether the call spells its name (at `at`) or the macro's body does.
struct MacroItem {
    name: String,
    at: (u32, u32),
    kind: SymbolKind,
    test: bool,
    at_token: bool,
    /// A method the rule's body writes in an `impl` block: its trait (empty for an inherent
    /// `impl`) and its type (empty when the call passes none the body's metavariable names).
    implementation: Option<(String, String)>,
}
