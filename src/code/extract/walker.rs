//! The walk over one file's syntax tree that `extract_tree` runs: the frames it is inside
//! and what it notes at each node (the other modules here add to `Walker` what each kind of
//! node needs).

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::outcomes::does_nothing;
use super::types::{qualifier_text, without_unwraps};
use super::{describe, macros, types, MAX_NAME};
use crate::code::spec::{doc_roles, roles, Spec, IDENT_ONLY, SKIP, VISIT};
use crate::code::{imports, FileCode, Occurrence, UseKind};
use crate::ingest::Language;

/// The qualifier of a method call on a value a `macro_rules!` body makes (`$make_input(…)`)
/// or is given: a value of a type the extraction cannot know. Not `_`, which a file declares
/// (`let _ = …`), nor anything else a file can name.
pub(super) const UNTYPED_VALUE: &str = "$value";

/// Item macros expanded inside one another, at most.
pub(super) const MAX_MACRO_DEPTH: usize = 3;

/// A definition or scope the walk is inside, until `end` (a byte offset).
pub(super) struct Frame {
    pub(super) end: usize,
    /// The definition, by index in `out.symbols`.
    pub(super) symbol: Option<u32>,
    /// Members inside are named through this (qualified name).
    pub(super) container: Option<String>,
    /// A function body: names bound in it.
    pub(super) locals: Option<HashSet<String>>,
}

pub(super) struct Walker<'a> {
    pub(super) language: Language,
    pub(super) spec: &'static Spec,
    /// What each node kind is to the walk (see `spec::roles`).
    pub(super) roles: &'static [u8],
    /// What each node kind is to a doc lookup (see `spec::doc_roles`).
    pub(super) doc_roles: &'static [u8],
    pub(super) src: &'a [u8],
    pub(super) out: FileCode,
    pub(super) frames: Vec<Frame>,
    /// Identifier nodes that name a definition or an object literal's key (not uses).
    pub(super) def_names: HashSet<usize>,
    /// Identifier nodes that name a callee.
    pub(super) call_names: HashSet<usize>,
    /// Member identifiers and what they were reached through.
    pub(super) qualifiers: HashMap<usize, String>,
    /// The walk is inside an import statement until this byte.
    pub(super) import_end: usize,
    /// Names the file's imports bind under an alias, as (bound, original) (`imports::renames`).
    pub(super) renames: Vec<(String, String)>,
    /// Uses already recorded (line, column): a name read in an expanded macro body is not
    /// recorded again as a bare token of that body.
    pub(super) seen: HashSet<(u32, u32)>,
    /// How deep inside expanded macro bodies this walk is.
    pub(super) macro_depth: usize,
    /// Index in the file's symbols of this walk's first symbol (non-zero in a macro body,
    /// whose symbols are appended to the file's).
    pub(super) symbol_base: u32,
    /// `out.strings` by text.
    pub(super) interned: HashMap<String, u32>,
    /// Inside a `macro_rules!` body until this byte: its tokens are a template, not uses.
    pub(super) template_end: usize,
    /// The byte range of the last expression macro's arguments read as an expression: the
    /// token tree's own names are not read again.
    pub(super) expanded: (usize, usize),
    /// Locals bound to a value of a known type (`cart = Cart(…)`, `let c = Cart::new()`,
    /// `c := Cart{}`, `const c = new Cart()`): name → (type, end of the function's body).
    pub(super) local_types: HashMap<String, (String, usize)>,
    /// Rust: what a local's std collection (its stated type) hands out by `get`, `front`, `pop`
    /// (`accessed_type`), while `local_types` holds the type it was noted with; and whether it
    /// is a map (walked, it yields pairs, not that value).
    pub(super) local_elements: HashMap<String, (String, bool)>,
    /// Go: the locals declared as a slice or an array (`var bps []BlockParser`, a parameter
    /// `items []Segment`), whose type in `local_types` is their elements'.
    pub(super) go_slices: HashSet<String>,
    /// Python: what a module-level name, a class attribute or a `self.x` set in a method holds
    /// when its value says (`md = create_markdown()`, `markdown = Markdown()` in a class body:
    /// `Class.markdown`), for the instance calls through them (`instance_call`).
    pub(super) held_types: HashMap<String, String>,
    /// Per depth of the walk: the node there now, and the comments and attributes right
    /// before it among its siblings (what a doc lookup needs, kept as the walk goes).
    pub(super) levels: Vec<describe::Level>,
    /// The file's `macro_rules!` macros so far that define items under names their calls
    /// pass in, by name.
    pub(super) macro_rules: HashMap<String, macros::MacroRules>,
    /// The bytes whose nodes this walk visits, from and to: before them is an earlier walk's,
    /// after them a part parsed again after an error (see `walk_resyncing`).
    pub(super) window: (usize, usize),
    /// `getattr(self, "parse_" + name)`: the prefix, where, and the enclosing definition; each
    /// becomes a use of the enclosing class's members with that prefix once the file's
    /// definitions are all known (`expand_prefixed_attributes`).
    pub(super) prefixed_attributes: Vec<(String, u32, u32, Option<u32>)>,
    /// Rust `impl Trait for Type` blocks open now: (end byte, the trait's name).
    pub(super) impl_traits: Vec<(usize, String)>,
    /// Rust type parameters in scope with the trait they are bound by (`<V: Visitor>`,
    /// `where I: Interval`): (end byte of the item, parameter, trait). A value of type `V`
    /// is used through the trait's methods, as a type checker reads `visitor.visit_post()`.
    pub(super) generic_bounds: Vec<(usize, String, String)>,
    /// Rust calls given only type arguments (`assert_send::<T>()`): the callee's name and the
    /// span of its type arguments, kept in `type_only_spans` once the walk knows the file's
    /// functions that do nothing (`empty_functions`).
    pub(super) type_argument_calls: Vec<(String, [u32; 4])>,
    /// Rust functions of this file without parameters whose body is empty.
    pub(super) empty_functions: HashSet<String>,
}

impl<'a> Walker<'a> {
    /// A walker over `src`, inside `frames`; `symbol_base`: the index in the file's symbols of
    /// its first one (a walk of part of a file appends to the file's).
    pub(super) fn new(
        language: Language,
        spec: &'static Spec,
        src: &'a [u8],
        frames: Vec<Frame>,
        macro_depth: usize,
        symbol_base: u32,
    ) -> Walker<'a> {
        Walker {
            language,
            spec,
            roles: roles(language),
            doc_roles: doc_roles(language),
            src,
            out: FileCode::new(language.name()),
            interned: HashMap::new(),
            template_end: 0,
            expanded: (0, 0),
            local_types: HashMap::new(),
            local_elements: HashMap::new(),
            go_slices: HashSet::new(),
            held_types: HashMap::new(),
            frames,
            def_names: HashSet::new(),
            call_names: HashSet::new(),
            qualifiers: HashMap::new(),
            import_end: 0,
            renames: Vec::new(),
            seen: HashSet::new(),
            macro_depth,
            symbol_base,
            levels: Vec::new(),
            macro_rules: HashMap::new(),
            window: (0, usize::MAX),
            prefixed_attributes: Vec::new(),
            impl_traits: Vec::new(),
            generic_bounds: Vec::new(),
            type_argument_calls: Vec::new(),
            empty_functions: HashSet::new(),
        }
    }

    /// Appends a walk of part of this file (`out`), its positions moved by `shift` (line,
    /// column); what this walk already recorded at a position wins.
    pub(super) fn absorb(&mut self, mut out: FileCode, shift: impl Fn(&mut u32, &mut u32)) {
        for mut symbol in std::mem::take(&mut out.symbols) {
            let mut end_column = 0;
            shift(&mut symbol.line, &mut symbol.column);
            shift(&mut symbol.end_line, &mut end_column);
            self.seen.insert((symbol.line, symbol.column));
            self.out.symbols.push(symbol);
        }
        for mut occurrence in std::mem::take(&mut out.occurrences) {
            shift(&mut occurrence.line, &mut occurrence.column);
            if self.seen.insert((occurrence.line, occurrence.column)) {
                occurrence.name = self.intern(out.name_of(&occurrence));
                occurrence.qualifier = self.intern(out.qualifier_of(&occurrence));
                self.out.occurrences.push(occurrence);
            }
        }
        // Their symbols' indices already count from this walk's (`symbol_base`).
        self.out.gates.append(&mut out.gates);
        self.out.returns.append(&mut out.returns);
        self.out.delegates.append(&mut out.delegates);
        for mut bound in std::mem::take(&mut out.bounds) {
            let mut column = 0;
            shift(&mut bound.line, &mut column);
            shift(&mut bound.end_line, &mut column);
            self.out.bounds.push(bound);
        }
        for mut import in std::mem::take(&mut out.imports) {
            let mut column = 0;
            shift(&mut import.line, &mut column);
            self.out.imports.push(import);
        }
        let shift_span = |[mut line, mut column, mut end_line, mut end_column]: [u32; 4]| {
            shift(&mut line, &mut column);
            shift(&mut end_line, &mut end_column);
            [line, column, end_line, end_column]
        };
        self.out.failure_spans.extend(out.failure_spans.drain(..).map(shift_span));
        self.out.type_only_spans.extend(out.type_only_spans.drain(..).map(shift_span));
        self.out.expects_failure.append(&mut out.expects_failure);
        self.out.always_fails.append(&mut out.always_fails);
        self.out.module_paths.append(&mut out.module_paths);
        for mut spawn in std::mem::take(&mut out.spawned) {
            shift(&mut spawn.line, &mut 0);
            self.out.spawned.push(spawn);
        }
        for mut load in std::mem::take(&mut out.computed_loads) {
            shift(&mut load.line, &mut 0);
            self.out.computed_loads.push(load);
        }
        self.out.whole_modules.append(&mut out.whole_modules);
        self.out.operations.append(&mut out.operations);
        for (span, key) in std::mem::take(&mut out.keyed) {
            self.out.keyed.push((shift_span(span), key));
        }
        for (span, word, test) in std::mem::take(&mut out.guarded) {
            self.out.guarded.push((shift_span(span), word, test));
        }
        self.out.class_defaults.append(&mut out.class_defaults);
        self.out.field_values.append(&mut out.field_values);
        for (mut line, mut column) in std::mem::take(&mut out.compared) {
            shift(&mut line, &mut column);
            self.out.compared.push((line, column));
        }
        self.out.passed.append(&mut out.passed);
        self.out.passed_by_place.append(&mut out.passed_by_place);
        for (mut line, mut column, augmented) in std::mem::take(&mut out.written) {
            shift(&mut line, &mut column);
            self.out.written.push((line, column, augmented));
        }
        if self.out.package.is_empty() {
            self.out.package = out.package;
        }
    }
}

/// A node's 1-based (line, column, end line, end column).
pub(super) fn span_of(node: Node) -> [u32; 4] {
    let (start, end) = (node.start_position(), node.end_position());
    [start.row as u32 + 1, start.column as u32 + 1, end.row as u32 + 1, end.column as u32 + 1]
}

pub(super) fn is_ident_like(kind: &str) -> bool {
    kind.contains("identifier") || matches!(kind, "name" | "constant" | "word" | "variable" | "alias" | "constructor")
}

impl<'a> Walker<'a> {
    pub(super) fn text(&self, node: Node) -> &'a str {
        node.utf8_text(self.src).unwrap_or("")
    }

    pub(super) fn walk(&mut self, root: Node) {
        let mut cursor = root.walk();
        // The cursor's own depth is counted over its stack at each call: kept here instead.
        let mut depth = 0usize;
        loop {
            let node = cursor.node();
            self.levels.truncate(depth + 1);
            if self.levels.len() <= depth {
                self.levels.resize_with(depth + 1, Default::default);
            }
            self.levels[depth].id = node.id();
            while self.frames.last().is_some_and(|f| node.start_byte() >= f.end) {
                self.frames.pop();
            }
            // Past the window the rest is read from another parse: not visited, not entered.
            // A node that begins before it was an earlier walk's (or is an ancestor of this
            // one's nodes, entered again to reach them).
            let (from, to) = self.window;
            let past = node.start_byte() >= to;
            if !past && node.start_byte() >= from {
                self.visit(node);
            }
            if !past && node.end_byte() > from && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            let mut left = node;
            loop {
                self.levels[depth].passed(left, self.doc_roles);
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                depth -= 1;
                left = cursor.node();
            }
        }
    }

    pub(super) fn in_function(&self) -> bool {
        self.frames.iter().any(|f| f.locals.is_some())
    }

    pub(super) fn is_local(&self, name: &str) -> bool {
        self.frames.iter().rev().filter_map(|f| f.locals.as_ref()).any(|l| l.contains(name))
    }

    pub(super) fn container(&self) -> Option<&str> {
        self.frames.iter().rev().find_map(|f| f.container.as_deref())
    }

    pub(super) fn enclosing_symbol(&self) -> Option<u32> {
        self.frames.iter().rev().find_map(|f| f.symbol)
    }

    pub(super) fn visit(&mut self, node: Node) {
        if !node.is_named() {
            return;
        }
        match self.language {
            Language::Python => match node.kind() {
                "for_statement" | "with_statement" => self.protocol_uses(node),
                "call" => {
                    self.note_operations(node);
                    self.note_passed(node);
                }
                "string"
                | "binary_operator"
                | "augmented_assignment"
                | "unary_operator"
                | "comparison_operator"
                | "delete_statement" => self.note_operations(node),
                _ => {}
            },
            Language::Rust
                if matches!(
                    node.kind(),
                    "macro_invocation"
                        | "call_expression"
                        | "binary_expression"
                        | "compound_assignment_expr"
                        | "unary_expression"
                        | "index_expression"
                ) =>
            {
                self.note_operations(node)
            }
            _ => {}
        }
        // A token tree is no item of its own (skipped below), but one inside a `macro_rules!`
        // body may be a macro call's arguments.
        if self.language == Language::Rust && node.start_byte() < self.template_end && node.kind() == "token_tree" {
            self.template_macro_call(node);
        }
        // An object literal's key (`{ files: [...] }`) names a property of the object being
        // made, not a variable: read as a bare name it would be anything named so anywhere.
        // Noted here, before the key is visited (asking each name for its parent walks down
        // from the root: a tenth of a large file's walk).
        if node.kind() == "pair" {
            if let Some(key) = node.child_by_field_name("key").filter(|k| k.kind() == "property_identifier") {
                self.def_names.insert(key.id());
            }
        }
        match self.roles.get(node.kind_id() as usize).copied().unwrap_or(VISIT) {
            SKIP => return,
            IDENT_ONLY => return self.name_use(node),
            _ => {}
        }
        let kind = node.kind();
        if self.language == Language::Python && (kind.ends_with("comprehension") || kind == "generator_expression") {
            self.bind_comprehension(node);
        }
        if node.start_byte() >= self.import_end {
            if let Some(specs) = imports::import_specs(self.language, node, self.src) {
                self.import_end = node.end_byte();
                self.out.imports.extend(specs);
                self.renames.extend(imports::renames(self.language, node, self.src));
                self.out.whole_modules.extend(imports::whole_module_binding(self.language, node, self.src));
            } else if kind == "export_statement"
                && node.child_by_field_name("source").is_none()
                && node.named_children(&mut node.walk()).any(|c| c.kind() == "export_clause")
            {
                // `export { stringCreate as string }`: what importers call `string`.
                self.renames.extend(imports::renames(self.language, node, self.src));
            }
        }
        self.read_package(node);
        if self.language == Language::Rust && kind == "macro_invocation" {
            let uses_before = self.out.occurrences.len();
            // Before the arguments are read as an expression: `get_i128` in
            // `buf_tests!(number …, get_i128, …)` is a method call, not a read of a name.
            if let Some((name, arguments)) = self.macro_call(node) {
                self.macro_call_uses(name, arguments);
            }
            self.expand_macro(node);
            self.macro_call_definitions(node, uses_before);
        }
        if self.language == Language::Python && kind == "pair" {
            self.note_keyed_value(node);
        }
        if self.language == Language::Python && matches!(kind, "if_statement" | "elif_clause") {
            self.note_guard(node);
        }
        if self.language == Language::Python && matches!(kind, "assignment" | "augmented_assignment") {
            self.note_written(node);
        }
        if self.language == Language::Rust && matches!(kind, "if_expression" | "let_declaration") {
            self.note_rust_guard(node);
        }
        if self.language == Language::Rust
            && matches!(
                kind,
                "field_initializer" | "shorthand_field_initializer" | "assignment_expression" | "call_expression"
            )
        {
            self.note_field_value(node);
        }
        if self.language == Language::Rust && matches!(kind, "struct_item" | "enum_item") {
            self.note_serde_shape(node);
        }
        if self.language == Language::Rust && kind == "call_expression" {
            self.note_failure_branch(node);
            self.note_type_argument_call(node);
        }
        if matches!(self.language, Language::JavaScript | Language::TypeScript | Language::Tsx)
            && kind == "call_expression"
        {
            self.note_spawn(node);
            self.note_computed_load(node);
        }
        if self.language == Language::Rust && kind == "function_item" && does_nothing(node) {
            if let Some(name) = node.child_by_field_name("name") {
                self.empty_functions.insert(self.text(name).to_string());
            }
        }
        if self.language == Language::Rust && kind == "macro_definition" {
            self.template_end = node.end_byte();
            let rules = macros::MacroRules::read(node, self.src);
            if let Some(name) = node.child_by_field_name("name").map(|n| self.text(n)) {
                self.macro_template_definitions(name, &rules);
                if rules.is_empty() {
                    self.macro_rules.remove(name);
                } else {
                    self.macro_rules.insert(name.to_string(), rules);
                }
            }
        }
        if self.language == Language::Elixir && kind == "call" {
            self.elixir_definition(node);
        } else if let Some(&(_, symbol_kind)) = self.spec.defs.iter().find(|(k, _)| *k == kind) {
            self.definition(node, symbol_kind);
            if self.language == Language::Rust && matches!(kind, "static_item" | "const_item") {
                self.note_item_type(node);
            }
        } else if let Some(&(_, field)) = self.spec.impls.iter().find(|(k, _)| *k == kind) {
            self.impl_block(node, field);
        } else if self.language == Language::Python && kind == "assignment" && !self.in_function() {
            self.python_assignment(node);
        } else if self.language == Language::Python && kind == "assignment" {
            self.python_self_attribute(node);
        } else if self.language == Language::Ruby && kind == "assignment" && !self.in_function() {
            self.ruby_constant(node);
        } else if self.language == Language::Ruby && kind == "call" && !self.in_function() {
            self.ruby_accessors(node);
        } else if self.language == Language::Php && kind == "namespace_definition" {
            self.php_namespace(node);
        } else if self.language == Language::Kotlin && kind == "companion_object" {
            self.kotlin_companion(node);
        } else if self.language == Language::Zig && kind == "test_declaration" {
            self.open_function(node, None, None);
        }
        if kind == "arrow_function" && self.in_function() && node.child_by_field_name("parameter").is_none() {
            self.note_element_type(node);
        }
        if let Some(&(_, field)) = self.spec.bindings.iter().find(|(k, _)| *k == kind) {
            if self.in_function() {
                let target = if field.is_empty() { Some(node) } else { node.child_by_field_name(field) };
                if let Some(target) = target {
                    self.bind_pattern(target);
                    self.note_local_type(node, target);
                    self.note_element_type(node);
                    self.note_variant_fields(target);
                }
            }
            if self.language == Language::Python && kind == "assignment" {
                self.note_held_type(node);
            }
        } else if matches!(kind, "variable_declarator" | "short_var_declaration") && self.in_function() {
            if let Some(target) = node.child_by_field_name("name").or_else(|| node.child_by_field_name("left")) {
                self.note_local_type(node, target);
            }
        }
        if let Some(&(_, field)) = self.spec.calls.iter().find(|(k, _)| *k == kind) {
            let callee = if field.is_empty() { node.named_child(0) } else { node.child_by_field_name(field) };
            if let Some(name) = callee.and_then(|c| self.callee_name(c)) {
                self.call_names.insert(name.id());
            }
        }
        for &(member_kind, object_field, member_field) in self.spec.members {
            if member_kind != kind {
                continue;
            }
            let count = node.named_child_count();
            let object =
                if object_field.is_empty() { node.named_child(0) } else { node.child_by_field_name(object_field) };
            let member = if member_field.is_empty() {
                (count >= 2).then(|| node.named_child(count as u32 - 1)).flatten()
            } else {
                node.child_by_field_name(member_field)
            };
            if let (Some(object), Some(member)) = (object, member) {
                let member = self.member_ident(member);
                if object.id() != member.id() {
                    let mut qualifier = qualifier_text(self.text(object));
                    if self.language == Language::Rust {
                        qualifier = without_unwraps(&qualifier);
                    }
                    self.qualifiers.insert(member.id(), qualifier);
                }
            }
        }
        if self.language == Language::Python && kind == "call" {
            self.python_attribute_by_string(node);
        }
        if self.spec.idents.contains(&kind) {
            self.name_use(node);
        }
    }

    /// The identifier a member slot holds (Swift wraps it in `navigation_suffix`).
    pub(super) fn member_ident<'t>(&self, member: Node<'t>) -> Node<'t> {
        if self.spec.idents.contains(&member.kind()) {
            return member;
        }
        let mut cursor = member.walk();
        let found = member.named_children(&mut cursor).filter(|c| self.spec.idents.contains(&c.kind())).last();
        found.unwrap_or(member)
    }

    /// The identifier a callee expression names: `f`, the `f` of `a.f` or `A::f`, the type of
    /// `new A<T>()`.
    pub(super) fn callee_name<'t>(&self, mut node: Node<'t>) -> Option<Node<'t>> {
        for _ in 0..6 {
            let kind = node.kind();
            if self.spec.idents.contains(&kind) {
                return Some(node);
            }
            if let Some(&(_, _, member_field)) = self.spec.members.iter().find(|(k, _, _)| *k == kind) {
                let count = node.named_child_count();
                let member = if member_field.is_empty() {
                    node.named_child((count as u32).checked_sub(1)?)
                } else {
                    node.child_by_field_name(member_field)
                }?;
                node = self.member_ident(member);
                continue;
            }
            node = node
                .child_by_field_name("function")
                .or_else(|| node.child_by_field_name("name"))
                .or_else(|| node.child_by_field_name("type"))
                .or_else(|| node.named_child(0))?;
        }
        None
    }

    pub(super) fn name_use(&mut self, node: Node) {
        if self.def_names.contains(&node.id()) {
            return;
        }
        if node.start_byte() < self.template_end {
            return self.template_path_use(node);
        }
        if (self.expanded.0..self.expanded.1).contains(&node.start_byte()) {
            return;
        }
        let mut name = self.text(node);
        if self.language == Language::Php {
            name = name.trim_start_matches('$');
        }
        if name.is_empty() || name.len() > MAX_NAME || is_keyword_like(name) {
            return;
        }
        let qualifier = self.qualifiers.remove(&node.id()).unwrap_or_default();
        if self.language == Language::Python && self.call_names.contains(&node.id()) {
            self.instance_call(node, name, &qualifier);
        }
        if qualifier.is_empty() && self.is_local(name) {
            return;
        }
        self.record_use(node, name, qualifier);
    }

    /// A `macro_rules!` body is a template whose names mean nothing until it is expanded,
    /// except a path from `$crate` (`$crate::__private::format_err(…)`), which names the
    /// macro's own crate's item wherever it is expanded: a use of it by the macro, so that a
    /// change to it reaches the macro's calls. And a method call (`buf.remaining()`): a name
    /// after `.` and before `(…)` is a method wherever the body lands, called on a value the
    /// graph cannot type (as `x.remaining()` on an untyped `x` outside a macro).
    pub(super) fn template_path_use(&mut self, node: Node) {
        let receiver = node.prev_sibling().filter(|p| self.text(*p) == ".").and_then(|dot| dot.prev_sibling());
        let called = node.next_sibling().is_some_and(|n| n.kind() == "token_tree" && self.text(n).starts_with('('));
        if let Some(receiver) = receiver.filter(|_| called && node.kind() == "identifier") {
            let qualifier = if receiver.kind() == "identifier" { self.text(receiver) } else { UNTYPED_VALUE };
            let name = self.text(node);
            return self.push_use(node, name, qualifier, UseKind::Call);
        }
        let mut parts: Vec<&str> = Vec::new();
        let mut at = node;
        loop {
            let Some(separator) = at.prev_sibling().filter(|p| p.kind() == "::") else { return };
            let Some(before) = separator.prev_sibling() else { return };
            match self.text(before) {
                "$crate" => break,
                part if before.kind() == "identifier" => parts.push(part),
                _ => return,
            }
            at = before;
        }
        parts.push("crate");
        parts.reverse();
        let called = node.next_sibling().is_some_and(|n| n.kind() == "token_tree" && self.text(n).starts_with('('));
        let kind = if called { UseKind::Call } else { UseKind::Read };
        let name = self.text(node);
        self.push_use(node, name, &parts.join("::"), kind);
    }

    /// `md(text)` where `md = create_markdown()` or `md = Markdown()`: calling an instance runs
    /// its class's `__call__`, recorded as a use of it through the local's type, at the
    /// call's arguments (the name's own place holds the use of the name).
    pub(super) fn instance_call(&mut self, node: Node, name: &str, qualifier: &str) {
        let Some(ty) = self.held_type(node, name, qualifier) else { return };
        // The call holds the callee: `md(…)` directly, `self.md(…)` through its attribute.
        let call = node.parent().and_then(|p| if p.kind() == "attribute" { p.parent() } else { Some(p) });
        let Some(arguments) = call.and_then(|call| call.child_by_field_name("arguments")) else { return };
        self.push_use(arguments, "__call__", &ty, UseKind::Call);
    }

    /// The class of the instance a Python name holds at `node` (a local's, a module-level
    /// name's, or `self.name`'s: `local_types`, `held_types`).
    fn held_type(&self, node: Node, name: &str, qualifier: &str) -> Option<String> {
        let local = self.local_types.get(name).filter(|(_, end)| node.start_byte() < *end).map(|(ty, _)| ty);
        let ty = match qualifier {
            "" => local.or_else(|| self.held_types.get(name).filter(|_| !self.is_local(name))),
            "self" => self.container().and_then(|c| self.held_types.get(&format!("{c}.{name}"))),
            _ => None,
        };
        ty.filter(|ty| *ty != "self").cloned()
    }

    /// The class of the instance a Python value holds where the walker knows it: a name
    /// (`held_type`) or `self.name`.
    fn value_class(&self, value: Node) -> Option<String> {
        let (name, qualifier) = match value.kind() {
            "identifier" => (self.text(value), ""),
            "attribute" => {
                let object = value.child_by_field_name("object").map(|o| self.text(o));
                (self.text(value.child_by_field_name("attribute")?), object.unwrap_or_default())
            }
            _ => return None,
        };
        self.held_type(value, name, qualifier)
    }

    /// What the language runs on a Python value whose class the walker knows
    /// (`value_class`), recorded as uses of those special methods through the class at the
    /// statement's own tokens (the value's place holds the use of its name):
    /// - `for frame in self.incoming_buffer:` where `self.incoming_buffer = FrameBuffer()`
    ///   runs `__iter__` (at `for`) and `__next__` (at `in`); `async for` `__aiter__` and
    ///   `__anext__`;
    /// - `with self.lock:` runs `__enter__` (at `with`) and `__exit__` (at `:`), `async with`
    ///   `__aenter__` and `__aexit__` (the first item's value).
    ///
    /// (Not a subscript's `__getitem__` on such a value: Python's judged splits gained 14
    /// right test files and 80 wrong ones with it, a precision below what the answers' own
    /// confidence gives up for as much recall.)
    pub(super) fn protocol_uses(&mut self, node: Node) {
        let mut cursor = node.walk();
        let tokens: Vec<Node> = node.children(&mut cursor).filter(|c| !c.is_named()).collect();
        let token = |kind: &str| tokens.iter().copied().find(|t| t.kind() == kind);
        let asynchronous = token("async").is_some();
        let (value, uses): (Option<Node>, Vec<(Option<Node>, &str)>) = match node.kind() {
            "for_statement" => {
                let (iter, next) = if asynchronous { ("__aiter__", "__anext__") } else { ("__iter__", "__next__") };
                (node.child_by_field_name("right"), vec![(Some(node), iter), (token("in"), next)])
            }
            "with_statement" => {
                let item = node.named_child(0).and_then(|clause| clause.named_child(0));
                let value = item.and_then(|i| i.child_by_field_name("value"));
                // `with open(p) as f:` holds the value in an `as` pattern.
                let value = value.and_then(|v| if v.kind() == "as_pattern" { v.named_child(0) } else { Some(v) });
                let (enter, exit) = if asynchronous { ("__aenter__", "__aexit__") } else { ("__enter__", "__exit__") };
                (value, vec![(Some(node), enter), (token(":"), exit)])
            }
            _ => return,
        };
        let Some(class) = value.and_then(|v| self.value_class(v)) else { return };
        for (at, name) in uses {
            if let Some(at) = at {
                self.push_use(at, name, &class, UseKind::Call);
            }
        }
    }

    /// Records a use of `name` through `qualifier` (empty: a bare name) at `node`'s start.
    pub(super) fn record_use(&mut self, node: Node, name: &str, qualifier: String) {
        let qualifier = self.typed_qualifier(qualifier, node.start_byte());
        let kind = if node.start_byte() < self.import_end {
            UseKind::Import
        } else if self.call_names.contains(&node.id()) {
            UseKind::Call
        } else if self.spec.type_idents.contains(&node.kind()) {
            UseKind::Type
        } else {
            UseKind::Read
        };
        self.push_use(node, name, &qualifier, kind);
    }

    /// One occurrence at `at`'s start, unless one is recorded there already.
    pub(super) fn push_use(&mut self, at: Node, name: &str, qualifier: &str, kind: UseKind) {
        let pos = at.start_position();
        if self.push_use_at(pos.row as u32 + 1, pos.column as u32 + 1, name, qualifier, kind) {
            let arguments = (kind == UseKind::Call).then(|| self.method_call_arguments(at)).flatten();
            if let Some(occurrence) = self.out.occurrences.last_mut() {
                occurrence.arguments = arguments;
            }
        }
    }

    /// One occurrence at (`line`, `column`), 1-based, unless one is recorded there already
    /// (then false).
    pub(super) fn push_use_at(&mut self, line: u32, column: u32, name: &str, qualifier: &str, kind: UseKind) -> bool {
        if !self.seen.insert((line, column)) {
            return false;
        }
        let (name, qualifier) = (self.intern(name), self.intern(qualifier));
        let enclosing = self.enclosing_symbol();
        self.out.occurrences.push(Occurrence { name, line, column, kind, qualifier, enclosing, arguments: None });
        true
    }

    /// The number of arguments of the Rust method call whose method's name is `name_node`
    /// (`p.pick(x, y)`: 2), if it is one.
    fn method_call_arguments(&self, name_node: Node) -> Option<u8> {
        if self.language != Language::Rust {
            return None;
        }
        let access = name_node.parent().filter(|p| p.kind() == "field_expression")?;
        let call = access.parent().filter(|c| c.kind() == "call_expression")?;
        if call.child_by_field_name("function")?.id() != access.id() {
            return None;
        }
        let arguments = call.child_by_field_name("arguments")?;
        let mut cursor = arguments.walk();
        let count = arguments
            .named_children(&mut cursor)
            .filter(|a| !matches!(a.kind(), "line_comment" | "block_comment" | "attribute_item"))
            .count();
        u8::try_from(count).ok()
    }

    /// `qualifier` with its head replaced by the type of the local it names, where that is
    /// known at byte `at`: `cart.total()` where `cart = Cart(…)` is a member of `Cart`;
    /// `cart.items().len()` of what `Cart.items` returns. (Only a call's result:
    /// `adm.values_` is a field the graph cannot type.)
    pub(super) fn typed_qualifier(&self, qualifier: String, at: usize) -> String {
        // `I::create(…)` where `I: Interval`: the trait's associated function.
        if let Some(bound) = self.bound_of(&qualifier, at) {
            return bound.to_string();
        }
        let head_len = qualifier.find(['.', '(']).unwrap_or(qualifier.len());
        // `block_contexts.front()` where `block_contexts: &VecDeque<BlockContext>`: the element.
        if let Some(element) = self.accessed_element(&qualifier, head_len, at) {
            return element;
        }
        let typed_head = head_len == qualifier.len() || qualifier.ends_with(')');
        // `ht.name` where `ht: &HelperTemplate`: `HelperTemplate.name`, a field of a type
        // (in languages whose fields state their types).
        let field_of = |ty: &str| {
            // A tuple's `.0` is no named field.
            let field =
                qualifier[head_len..].strip_prefix('.').filter(|f| !f.starts_with(|c: char| c.is_ascii_digit()));
            matches!(self.language, Language::Rust | Language::Go)
                && field.is_some_and(types::is_word)
                && types::is_word(ty)
                && ty != "self"
        };
        match self.local_types.get(&qualifier[..head_len]) {
            Some((ty, end)) if (typed_head || field_of(ty)) && at < *end => {
                format!("{ty}{}", &qualifier[head_len..])
            }
            _ => qualifier,
        }
    }

    /// `qualifier` with its head's element access (`v.get()`, `deque.front()`) replaced by the
    /// element's type, where the head is a local whose stated type is a std collection.
    pub(super) fn accessed_element(&self, qualifier: &str, head_len: usize, at: usize) -> Option<String> {
        let head = &qualifier[..head_len];
        let (element, _) = self.local_elements.get(head)?;
        let (_, end) = self.local_types.get(head)?;
        let rest = qualifier[head_len..].strip_prefix('.')?;
        let (method, after) = rest.split_once("()")?;
        if at >= *end || !types::is_element_accessor(method) {
            return None;
        }
        Some(format!("{element}{after}"))
    }

    /// The index of `text` in the file's strings, added on first use.
    pub(super) fn intern(&mut self, text: &str) -> u32 {
        if text.is_empty() {
            return 0;
        }
        if let Some(&index) = self.interned.get(text) {
            return index;
        }
        let index = self.out.strings.len() as u32;
        self.out.strings.push(text.to_string());
        self.interned.insert(text.to_string(), index);
        index
    }

    pub(super) fn read_package(&mut self, node: Node) {
        if !self.out.package.is_empty() {
            return;
        }
        let package = match (self.language, node.kind()) {
            (Language::Java, "package_declaration") => node.named_child(0).map(|n| self.text(n)),
            (Language::Kotlin, "package_header") => node.named_child(0).map(|n| self.text(n)),
            (Language::Scala, "package_clause") => node.child_by_field_name("name").map(|n| self.text(n)),
            (Language::CSharp, "namespace_declaration" | "file_scoped_namespace_declaration") => {
                node.child_by_field_name("name").map(|n| self.text(n))
            }
            (Language::Php, "namespace_definition") => node.child_by_field_name("name").map(|n| self.text(n)),
            (Language::Go, "package_clause") => node.named_child(0).map(|n| self.text(n)),
            (Language::Haskell, "header") => node.child_by_field_name("module").map(|n| self.text(n)),
            _ => None,
        };
        if let Some(package) = package {
            self.out.package = package.split_whitespace().collect::<Vec<_>>().join("");
        }
    }

    /// Opens a function's frame and binds its parameters.
    pub(super) fn open_function(&mut self, node: Node, symbol: Option<u32>, container: Option<String>) {
        self.frames.push(Frame { end: node.end_byte(), symbol, container, locals: Some(HashSet::new()) });
        if self.language == Language::Rust {
            self.note_generic_bounds(node);
        }
        let fixtures = if self.language == Language::Python && self.is_pytest_function(node, symbol) {
            self.fixture_uses(node)
        } else {
            Vec::new()
        };
        for field in self.spec.params {
            if let Some(params) = node.child_by_field_name(field) {
                self.bind_params(params);
            }
        }
        // `def test_count(db): db.count(…)`: `db` is what the fixture `db` gives, typed as a
        // call of it is (`db()`, by what the fixture returns or yields).
        for name in fixtures {
            let called = format!("{name}()");
            self.note_named_type(name, called);
        }
        // A Go method's receiver (`func (p *parser) f()`) is its `self`: `p.g()` is a member
        // of the method's own type, whatever case the type's name has.
        if self.language == Language::Go {
            let receiver = node.child_by_field_name("receiver").and_then(|r| r.named_child(0));
            if let Some(name) = receiver.and_then(|d| d.child_by_field_name("name")) {
                self.note_type(name, "self".to_string());
            }
        }
        if self.spec.params.is_empty() || matches!(self.language, Language::Kotlin | Language::Swift) {
            // Grammars without a parameters field: parameter nodes are direct children.
            let mut cursor = node.walk();
            let params: Vec<Node> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind().contains("parameter") || c.kind() == "function_value_parameters")
                .collect();
            for p in params {
                self.bind_params(p);
            }
        }
    }

    /// A pytest test (`test*`) or fixture (`@pytest.fixture`, `@fixture`): its parameters name
    /// fixtures, which pytest passes in by name.
    pub(super) fn is_pytest_function(&self, node: Node, symbol: Option<u32>) -> bool {
        let named_test = symbol.and_then(|i| self.own_symbol(i)).is_some_and(|s| s.name.starts_with("test"));
        let fixture = node.parent().filter(|p| p.kind() == "decorated_definition").is_some_and(|p| {
            let mut cursor = p.walk();
            let decorated =
                p.named_children(&mut cursor).any(|c| c.kind() == "decorator" && self.text(c).contains("fixture"));
            decorated
        });
        named_test || fixture
    }

    /// A pytest function's parameters as uses of the fixtures they name (`self`, `cls` and
    /// parameters with defaults are not fixtures); those that state no type.
    pub(super) fn fixture_uses(&mut self, node: Node) -> Vec<String> {
        let mut untyped = Vec::new();
        let Some(params) = node.child_by_field_name("parameters") else { return untyped };
        let mut cursor = params.walk();
        let names: Vec<Node> = params
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "identifier" || c.kind() == "typed_parameter")
            .collect();
        for param in names {
            let ident = if param.kind() == "identifier" {
                Some(param)
            } else {
                param.named_child(0).filter(|c| c.kind() == "identifier")
            };
            if let Some(ident) = ident.filter(|i| !matches!(self.text(*i), "self" | "cls")) {
                self.name_use(ident);
                if param.kind() == "identifier" {
                    untyped.push(self.text(ident).to_string());
                }
            }
        }
        untyped
    }
}

/// Names that are never a definition's: receivers, literals.
pub(super) fn is_keyword_like(name: &str) -> bool {
    matches!(
        name,
        "self"
            | "Self"
            | "this"
            | "super"
            | "crate"
            | "true"
            | "false"
            | "null"
            | "nil"
            | "None"
            | "True"
            | "False"
            | "undefined"
            | "cls"
            | "_"
    )
}
