//! What a definition is to the others: the declaration a Python redefinition or a trait's
//! implementation stands for, the value or variables a definition sets, the methods a call
//! dispatches through, a macro's instances, a member's type.

use super::{macro_template_of, split_qualifier, CodeGraph, Resolution, SymbolRef, Use, HELD_CONFIDENCE};
use crate::code::{SymbolKind, UseKind};

impl CodeGraph {
    /// Whether `r` is a declaration its file may repeat for one symbol: a function, method or
    /// property in a language with overload signatures, get/set accessors or property setters.
    pub(super) fn redeclarable(&self, r: SymbolRef) -> bool {
        let code = &self.codes[r.0 as usize];
        let kind = code.symbols[r.1 as usize].kind;
        matches!(code.language.as_str(), "python" | "typescript" | "tsx" | "javascript")
            && (kind.is_callable() || kind == SymbolKind::Property)
    }

    /// The first definition of a name a Python file or class defines again (`@plain.setter
    /// def plain` → the getter; `@overload def prompt(…)` twice, then the body): the one its
    /// uses resolve to (`merge_redeclarations`).
    pub fn first_definition(&self, definition: SymbolRef) -> Option<SymbolRef> {
        let s = self.symbol(definition);
        let code = &self.codes[definition.0 as usize];
        if code.language != "python" || !self.redeclarable(definition) {
            return None;
        }
        let scope = self.local_to[definition.0 as usize][definition.1 as usize];
        let first = (0..code.symbols.len()).find(|&o| {
            let other = &code.symbols[o];
            other.qualified_name == s.qualified_name
                && other.line < s.line
                && self.local_to[definition.0 as usize][o] == scope
                && self.redeclarable((definition.0, o as u32))
        })?;
        Some((definition.0, first as u32))
    }

    /// Whether a Python definition is a property's setter: `@name.setter` decorates it (a
    /// use of `setter` on its name, in the lines above it).
    pub fn is_property_setter(&self, definition: SymbolRef) -> bool {
        let s = self.symbol(definition);
        let code = &self.codes[definition.0 as usize];
        code.language == "python"
            && code.occurrences.iter().any(|o| {
                o.line < s.line
                    && o.line + 3 >= s.line
                    && code.strings[o.name as usize] == "setter"
                    && code.strings[o.qualifier as usize] == s.name
            })
    }

    /// A JavaScript definition's declaration in the type declaration file beside its file
    /// (`Results.close` in `lib/results.js` → `close` of `declare class Results` in
    /// `lib/results.d.ts`): a TypeScript-aware resolution may take the declaration for the
    /// definition (tape's `results.close()`), but what runs is the JavaScript.
    pub fn declaration_of(&self, definition: SymbolRef) -> Option<SymbolRef> {
        let code = &self.codes[definition.0 as usize];
        if code.language != "javascript" {
            return None;
        }
        let path = &self.paths[definition.0 as usize];
        let declared = [(".js", ".d.ts"), (".mjs", ".d.mts"), (".cjs", ".d.cts")]
            .iter()
            .find_map(|(ext, dts)| path.strip_suffix(ext).map(|stem| format!("{stem}{dts}")))?;
        let f = self.file_index(&declared)?;
        let name = &self.symbol(definition).qualified_name;
        let i = self.codes[f as usize].symbols.iter().position(|d| &d.qualified_name == name)?;
        Some((f, i as u32))
    }

    /// The function whose body holds a definition local to it (a closure, a nested function,
    /// a method of an object literal built there: `createProxy`'s `{ get(…) {…} }` handed to
    /// `new Proxy`), as a use of the definition inside that function: such a definition runs
    /// only once its holder has, often through no name at all (a proxy's traps, a callback
    /// handed to a library). `None` for a member of a class declared inside the function,
    /// whose class's uses say where it runs.
    pub fn holder_use(&self, definition: SymbolRef) -> Option<Use> {
        let holder = self.local_to[definition.0 as usize][definition.1 as usize]?;
        let code = &self.codes[definition.0 as usize];
        let s = &code.symbols[definition.1 as usize];
        let in_type = !s.container.is_empty()
            && code.symbols.iter().any(|o| o.qualified_name == s.container && o.kind.is_container());
        (!in_type).then_some(Use {
            file: definition.0,
            occurrence: u32::MAX,
            enclosing: Some(holder),
            line: s.line,
            kind: crate::code::UseKind::Read,
            confidence: HELD_CONFIDENCE,
            resolution: Resolution::LocalScope,
        })
    }

    /// The variable or constant at a module's level whose value holds a definition (a method
    /// of the object literal `attributeRules = { exists(…) {…} }`), for a definition local to
    /// no function: such a method runs where the object is used (`attributeRules[action](…)`),
    /// by no name of its own.
    pub fn holding_value(&self, definition: SymbolRef) -> Option<SymbolRef> {
        if self.local_to[definition.0 as usize][definition.1 as usize].is_some() {
            return None;
        }
        let code = &self.codes[definition.0 as usize];
        let s = &code.symbols[definition.1 as usize];
        // Only an object literal holds definitions so.
        let script = matches!(code.language.as_str(), "javascript" | "typescript");
        if !script || !s.container.is_empty() || !s.kind.is_callable() {
            return None;
        }
        code.symbols
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o.kind, SymbolKind::Variable | SymbolKind::Constant))
            .filter(|(_, o)| o.line < s.line && o.end_line >= s.end_line)
            .max_by_key(|(_, o)| o.line)
            .map(|(i, _)| (definition.0, i as u32))
    }

    /// The package-level variables a Go `init` function sets or reads (`planTop =
    /// makePlanner(leaf)`): nothing calls `init`, but what it stores in a variable runs where
    /// the variable is used, so the variables' uses are where the functions `init` names
    /// run. Empty for any other definition.
    pub fn init_variables(&self, definition: SymbolRef) -> Vec<SymbolRef> {
        let code = &self.codes[definition.0 as usize];
        let s = &code.symbols[definition.1 as usize];
        if code.language != "go" || s.name != "init" || !s.container.is_empty() || !s.kind.is_callable() {
            return Vec::new();
        }
        let mut out: Vec<SymbolRef> = Vec::new();
        for (o, occ) in code.occurrences.iter().enumerate() {
            if occ.enclosing != Some(definition.1) || occ.kind != UseKind::Read {
                continue;
            }
            let Some(c) = self.resolve_use(definition.0, o as u32).into_iter().next() else { continue };
            let v = self.symbol(c.symbol);
            let package_level = self.local_to[c.symbol.0 as usize][c.symbol.1 as usize].is_none();
            if v.kind == SymbolKind::Variable && v.container.is_empty() && package_level && !out.contains(&c.symbol) {
                out.push(c.symbol);
            }
        }
        out
    }

    /// The declaration in the repo's trait of a method an `impl Trait for Type` block defines
    /// (`TranslatorI::visit_post` → `Visitor::visit_post`): code that holds a `Visitor` calls
    /// the implementation through it. `None` for a trait the repo does not declare
    /// (`fmt::Display`) or a member of no trait.
    pub fn trait_method(&self, member: SymbolRef) -> Option<SymbolRef> {
        let s = self.symbol(member);
        if s.implements.is_empty() {
            return None;
        }
        self.defs_by_name.get(&s.name)?.iter().copied().find(|&d| {
            d != member && {
                let t = self.symbol(d);
                split_qualifier(&t.container).last() == Some(&s.implements.as_str())
                    && self
                        .defs_by_name
                        .get(&s.implements)
                        .is_some_and(|traits| traits.iter().any(|&tr| self.symbol(tr).kind == SymbolKind::Trait))
            }
        })
    }

    /// Whether Rust file `f` imports `name` by name from another crate (`use num_integer::Roots;`):
    /// a path that is not the crate's own (`crate::`, `self::`, `super::`, a workspace crate)
    /// and resolves to no file of the repo. False for a name imported from the repo, or not
    /// imported by name at all (a glob, a path written at the use). In Python, a name bound
    /// by `from html.parser import HTMLParser` or `import click`, from no module of the repo.
    pub fn imported_from_outside(&self, f: u32, name: &str) -> bool {
        let from = &self.paths[f as usize];
        let language = self.codes[f as usize].language.as_str();
        let binds = |import: &&crate::code::ImportSpec| {
            import.names.iter().any(|bound| bound == name)
                || (language == "python" && import.names.is_empty() && import.spec.split('.').next() == Some(name))
        };
        self.codes[f as usize].imports.iter().filter(binds).any(|import| {
            let first = import.spec.split("::").next().unwrap_or("");
            !matches!(first, "" | "crate" | "self" | "super")
                && !import.spec.starts_with('.')
                && self.resolver.resolve(from, language, import).iter().all(|t| self.file_index(&t.file).is_none())
        })
    }

    /// How many definitions implement the trait method `method` (the trait's own declaration
    /// not counted): `impl Trait for …` blocks that define it.
    pub fn implementation_count(&self, method: SymbolRef) -> usize {
        let m = self.symbol(method);
        let Some(&trait_name) = split_qualifier(&m.container).last() else { return 0 };
        self.defs_by_name
            .get(&m.name)
            .map_or(0, |defs| defs.iter().filter(|&&d| d != method && self.symbol(d).implements == trait_name).count())
    }

    /// Whether a method of another type has `member`'s name: a call of the name on an object
    /// of unknown type may be either.
    pub fn has_namesakes(&self, member: SymbolRef) -> bool {
        let s = self.symbol(member);
        self.defs_by_name.get(&s.name).is_some_and(|defs| {
            defs.iter()
                .any(|&d| d != member && self.symbol(d).kind.is_callable() && self.symbol(d).container != s.container)
        })
    }

    /// The methods a call runs `member` through by dispatch: its Rust trait's declaration
    /// (`trait_method`), or the methods of the Go interfaces its type satisfies (`Markdown.Convert`
    /// for `markdown.Convert`).
    pub fn dispatched_through(&self, member: SymbolRef) -> Vec<SymbolRef> {
        match self.trait_method(member) {
            Some(m) => vec![m],
            None => self.interface_methods.get(&member).cloned().unwrap_or_default(),
        }
    }

    /// For a function written in a `macro_rules!` body (`fn get_u8` in `deref_forward_buf`),
    /// the functions the macro's calls define with it (one per `impl Buf for …` that calls
    /// it); empty for any other definition.
    pub fn macro_instances(&self, template: SymbolRef) -> Vec<SymbolRef> {
        let code = self.code(template.0);
        let s = self.symbol(template);
        let Some(m) = macro_template_of(code, s) else { return Vec::new() };
        let mut out = Vec::new();
        for u in self.uses((template.0, m as u32), 0.0).iter() {
            let at = self.code(u.file);
            for (i, d) in at.symbols.iter().enumerate() {
                if d.name == s.name && d.line == u.line && (u.file, i as u32) != template {
                    out.push((u.file, i as u32));
                }
            }
        }
        out
    }

    /// The type that holds a member, in the member's file or, for a Rust `impl` written
    /// apart from its type (`impl fmt::Display for Version` in `display.rs`), wherever the
    /// repo defines a type of that name (the member's own file first).
    pub fn member_type(&self, member: SymbolRef) -> Option<SymbolRef> {
        let s = self.symbol(member);
        let name = *split_qualifier(&s.container).last()?;
        let types = self.defs_by_name.get(name)?;
        let is_type = |&&r: &&SymbolRef| {
            let t = self.symbol(r);
            t.kind.is_container() && t.kind != SymbolKind::Module && t.qualified_name == s.container
        };
        types.iter().filter(is_type).find(|r| r.0 == member.0).or_else(|| types.iter().find(is_type)).copied()
    }

    /// `member_type`, and for a Rust `impl` whose file also imports a type of that name, the
    /// imported one: anyhow's `chain.rs` has `pub(crate) use crate::Chain;` beside a `struct
    /// Chain` for another `cfg`, and which of the two a build compiles is the `cfg`'s question
    /// (the walk leaves out what the default test run does not build).
    pub fn member_types(&self, member: SymbolRef) -> Vec<SymbolRef> {
        let mut out: Vec<SymbolRef> = self.member_type(member).into_iter().collect();
        let f = member.0 as usize;
        let Some(&name) = split_qualifier(&self.symbol(member).container).last() else { return out };
        let Some(bound) = self.bindings[f].get(name).filter(|_| self.codes[f].language == "rust") else {
            return out;
        };
        let files: std::collections::HashSet<u32> = bound.iter().copied().collect();
        let onward = self.reexports(&files, name);
        for &r in self.defs_by_name.get(name).into_iter().flatten() {
            let t = self.symbol(r);
            let imported = files.contains(&r.0) || onward.contains(&r.0);
            if imported && t.kind.is_container() && t.kind != SymbolKind::Module && !out.contains(&r) {
                out.push(r);
            }
        }
        out
    }
}
