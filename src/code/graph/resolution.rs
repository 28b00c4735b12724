//! One use resolved to the definitions it may mean, the way a reader would: through
//! `self`/`this` to the enclosing type, a qualified path to its module or type, a name the
//! file imports to the imported file, a definition in the same file or package; only then by
//! name alone, never certain and given up on for names defined in many places.

use std::collections::HashSet;

use super::signatures::{constructed_type, declared_type, held_type, rust_parameters};
use super::{
    implicit_members, names_a_type, split_qualifier, Candidate, CodeGraph, NameCounts, Resolution, SymbolRef,
    MAX_DISPATCHED_CANDIDATES, MAX_NAME_ONLY_CANDIDATES, MAX_REEXPORT_HOPS,
};
use crate::code::{builtins, ImportSpec, Occurrence, Symbol, SymbolKind, UseKind};

/// Calls of a chain followed from return type to return type (`Arg::new().short().long()`).
const MAX_CHAIN_CALLS: u32 = 6;

impl CodeGraph {
    /// Whether a call found only modules: `mod load;` beside `pub use self::load::load;`,
    /// where a call of `bulk_load::load` means the function the module file re-exports (a
    /// path's other segments may well be the module).
    fn only_modules(&self, occ: &Occurrence, found: &[Candidate]) -> bool {
        occ.kind == UseKind::Call && found.iter().all(|c| self.symbol(c.symbol).kind == SymbolKind::Module)
    }

    /// The name a type defines itself with, for the name file `f` knows it by.
    pub(super) fn own_type_name<'n>(&'n self, f: u32, name: &'n str) -> &'n str {
        self.type_aliases[f as usize].get(name).map_or(name, String::as_str)
    }

    pub(super) fn enclosing_container(&self, f: u32, occ: &Occurrence) -> Option<&str> {
        let s = &self.codes[f as usize].symbols[occ.enclosing? as usize];
        if s.kind.is_container() {
            Some(&s.qualified_name)
        } else {
            Some(&s.container)
        }
    }

    pub(super) fn resolve_qualified(&self, f: u32, occ: &Occurrence, all: &[SymbolRef]) -> Vec<Candidate> {
        let qualifier = self.codes[f as usize].qualifier_of(occ);
        let parts = split_qualifier(qualifier);
        let written = parts.last().copied().unwrap_or("");
        // A type imported under another name has its own name's members.
        let last = if parts.len() == 1 { self.own_type_name(f, written) } else { written };
        let first = parts.first().copied().unwrap_or("");
        let lang = self.codes[f as usize].language.as_str();
        let cand = |symbol, resolution, confidence| Candidate { symbol, resolution, confidence };
        // `self.x`, `this.x`, `Self::x`, `@x`: a member of the enclosing type.
        if matches!(last, "self" | "this" | "Self" | "static" | "parent" | "cls") || qualifier == "@" {
            if let Some(container) = self.enclosing_container(f, occ).filter(|c| !c.is_empty()) {
                let container_last = split_qualifier(container).last().copied().unwrap_or("");
                let found: Vec<Candidate> = all
                    .iter()
                    .filter(|&&r| {
                        let s = self.symbol(r);
                        s.container == container || split_qualifier(&s.container).last() == Some(&container_last)
                    })
                    .filter(|&&r| !self.of_another_type(f, r, container_last))
                    // In Rust `self.x` is a field and `self.x()` a method, even when both exist.
                    .filter(|&&r| lang != "rust" || self.symbol(r).kind.is_callable() == (occ.kind == UseKind::Call))
                    .map(|&r| {
                        let confidence = if r.0 == f { 0.95 } else { 0.85 };
                        cand(r, Resolution::QualifiedPath, confidence)
                    })
                    .collect();
                if !found.is_empty() {
                    return found;
                }
                // One its bases define (`self.process()` in `class Form(BaseForm)`): was a
                // name-only guess among every `process` of the repo (measured in
                // docs/impact-log.md, "A twelfth held-out split").
                let inherited = self.typed_candidates(container_last, all);
                if !inherited.is_empty() {
                    return inherited;
                }
            }
        }
        // `super().x` (Python), `super.x` (JavaScript, TypeScript, Java): a base's member.
        if names_super(lang, qualifier) {
            let inherited = self.base_candidates(f, occ, all);
            if !inherited.is_empty() {
                return inherited;
            }
        }
        // The result of a call (`self.make_parser(ctx).parse_args()`, or a local bound to
        // one): of the type the callee's return annotation names.
        if qualifier.ends_with(')') || qualifier.ends_with("[]") {
            let found = self
                .qualifier_type(f, occ, qualifier, MAX_CHAIN_CALLS)
                .map(|ty| self.value_candidates(f, occ, &ty, all));
            if let Some(found) = found.filter(|found| !found.is_empty()) {
                return found;
            }
        }
        // `ht.name.expand_as_name()` where `ht: &HelperTemplate` (the extractor writes the
        // local's type in its place): a member of the type the field's declaration states.
        if let [ty, field] = parts.as_slice() {
            if names_a_type(ty) {
                if let Some(stated) = self.field_type(self.own_type_name(f, ty), field) {
                    let found = self.value_candidates(f, occ, &stated, all);
                    if !found.is_empty() {
                        return found;
                    }
                }
            }
        }
        // A Rust path through modules: `crate::io::read`, `super::x`, `tokio::sync::Mutex`.
        // A path that ends in a type (`Version::parse`, after `use semver::Version`) names the
        // type's member, not an item of the file the type comes from (semver's `lib.rs` has
        // `mod parse` too): modules are snake_case, types UpperCamelCase.
        if lang == "rust" && !last.starts_with(char::is_uppercase) {
            // `super::x` in a file's inline `mod tests { … }` is the file's own `x`.
            let inline = self.inline_module_depth(f, occ);
            let (qualifier, parts) = match parts.split_first() {
                Some((&"super", rest)) if inline > 0 && rest.is_empty() => ("self".to_string(), vec!["self"]),
                Some((&"super", rest)) if inline > 0 => (format!("self::{}", rest.join("::")), {
                    let mut p = vec!["self"];
                    p.extend(rest.iter().copied());
                    p
                }),
                _ => (qualifier.to_string(), parts.clone()),
            };
            let files = self.rust_module_files(f, &qualifier, &parts);
            let found: Vec<Candidate> = all
                .iter()
                .filter(|r| files.contains(&r.0) && self.symbol(**r).container.is_empty())
                .map(|&r| cand(r, Resolution::QualifiedPath, 0.95))
                .collect();
            if !found.is_empty() && !self.only_modules(occ, &found) {
                return found;
            }
            // Re-exported by that module (`pub use blocking::spawn_blocking;`).
            let onward = self.reexports(&files, self.codes[f as usize].name_of(occ));
            let reexported: Vec<Candidate> = all
                .iter()
                .filter(|r| onward.contains(&r.0) && self.symbol(**r).container.is_empty())
                .map(|&r| cand(r, Resolution::QualifiedPath, 0.85))
                .collect();
            if !reexported.is_empty() {
                return reexported;
            }
            if !found.is_empty() {
                return found;
            }
        }
        // `Type::member`, `Class.member`, `Module.fn`: by the container's name; the type is
        // looked for through the file's imports first. A Rust name the file imports from
        // another crate is that crate's (`value_members`): no member by container name.
        let foreign = lang == "rust" && parts.len() == 1 && self.foreign_name(f, written);
        let by_container: Vec<SymbolRef> = if foreign {
            Vec::new()
        } else {
            all.iter()
                .copied()
                .filter(|&r| {
                    let s = self.symbol(r);
                    !s.container.is_empty() && split_qualifier(&s.container).last() == Some(&last)
                })
                .collect()
        };
        let narrowed: Vec<SymbolRef> = if by_container.is_empty() {
            Vec::new()
        } else {
            let mut visible = self.visible_files(f, written);
            // The files that define the type an alias names (the impls beside it there).
            visible.extend(self.aliased_names[f as usize].get(written).into_iter().flatten().map(|r| r.0));
            by_container.iter().copied().filter(|r| r.0 == f || visible.contains(&r.0)).collect()
        };
        // A container of that name only in files this one cannot see is a guess, and a variable
        // this file declares at its top level under the name is what it means: its declaration
        // decides, below (immer's `const immer = new Immer()`, then `immer.produce`, beside
        // tests that assign `immer.produce = function…` to an `immer` of their own).
        if !narrowed.is_empty() {
            return narrowed.into_iter().map(|r| cand(r, Resolution::QualifiedPath, 0.95)).collect();
        }
        // (Looked for only when there is such a container: this runs for every qualified use.)
        let declared_here = || parts.len() == 1 && self.top_level_variable(f, last).is_some();
        if !by_container.is_empty() && !declared_here() {
            let confidence = (0.9 / by_container.len() as f32).max(0.3);
            return by_container.into_iter().map(|r| cand(r, Resolution::QualifiedPath, confidence)).collect();
        }
        // A value of a type the code states (`cli: Group`, `cli.main()`) whose member its
        // base type defines (`class Group(Command)`).
        if names_a_type(last) && parts.len() == 1 {
            let found = self.value_candidates(f, occ, last, all);
            if !found.is_empty() {
                return found;
            }
            // A Rust trait's extension (`trait PointExt: Point` with `impl<T: Point> PointExt
            // for T`): `P::new()` where `P: Point` is the extension's `new`.
            if lang == "rust" && self.is_trait(last) {
                let found: Vec<Candidate> = self
                    .extension_members(last, all)
                    .into_iter()
                    .map(|r| cand(r, Resolution::QualifiedPath, 0.85))
                    .collect();
                if !found.is_empty() {
                    return found;
                }
            }
        }
        // `alias.fn` where the alias is an imported module (Python, Go, JS namespaces, Lua).
        if let Some(bound) = self.bindings[f as usize].get(first).filter(|_| !qualifier.ends_with(')')) {
            // `sqlparse.cli.main` after `import sqlparse`: the module the whole path names.
            let targets: HashSet<u32> =
                self.module_path_files(f, &parts).unwrap_or_else(|| bound.iter().copied().collect());
            // What a module exports: its top-level definitions, not its classes' members.
            let found: Vec<Candidate> = all
                .iter()
                .filter(|r| targets.contains(&r.0) && self.is_top_level(**r))
                .map(|&r| cand(r, Resolution::Import, 0.9))
                .collect();
            if !found.is_empty() && !self.only_modules(occ, &found) {
                return found;
            }
            // `registry.get()` after `from . import registry`, where the module holds an
            // instance at its top level (`registry = Registry()`): the class's members.
            if let [variable] = parts.as_slice() {
                let held = targets.iter().find_map(|&t| {
                    let declared = self.top_level_variable(t, variable)?;
                    held_type(&declared.signature, variable)
                });
                if let Some(ty) = held {
                    let typed = self.value_candidates(f, occ, &ty, all);
                    if !typed.is_empty() {
                        return typed;
                    }
                }
            }
            // A package that re-exports the name (`from .client import Client` in
            // `__init__.py`, `export * from "./a"`).
            let onward = self.reexports(&targets, self.codes[f as usize].name_of(occ));
            if !targets.is_empty() {
                let reexported: Vec<Candidate> = all
                    .iter()
                    .filter(|r| onward.contains(&r.0) && self.is_top_level(**r))
                    .map(|&r| cand(r, Resolution::Import, 0.85))
                    .collect();
                return if reexported.is_empty() { found } else { reexported };
            }
            // The alias names something outside the repo.
            return Vec::new();
        }
        // `Params::Strategy::insert(self, t)`: a Rust path through an associated type of a
        // generic type parameter (a head no name the repo defines or the file imports, nor the
        // prelude's) calls a method of a trait bounding it: the repo's traits' declarations of
        // that name (their implementations are reached through the dispatch). (A parameter
        // alone, `P::new()`, is its bound's, `P: Point`, as the extraction writes it; a head
        // alone may also be a local's type written as a path, `socket2::SockAddr`.)
        if lang == "rust" && occ.kind == UseKind::Call && parts.len() > 1 && self.names_type_parameter(f, first) {
            let name = self.codes[f as usize].name_of(occ);
            let declared: Vec<SymbolRef> =
                all.iter().copied().filter(|&r| self.symbol(r).name == name && self.declared_in_trait(r)).collect();
            if !declared.is_empty() && declared.len() <= MAX_TRAIT_CANDIDATES {
                let confidence = 0.8 / declared.len() as f32;
                return declared.into_iter().map(|r| cand(r, Resolution::QualifiedPath, confidence)).collect();
            }
        }
        // A path (`Vec::new`) or a type (`List.of`) outside the repo means nothing here; nor
        // does a module of Rust's standard library (`fmt` in `std::fmt::Result`).
        let standard = lang == "rust" && matches!(qualifier, "std" | "core" | "alloc");
        if qualifier.contains("::") || last.starts_with(char::is_uppercase) || standard {
            return Vec::new();
        }
        // `value.method()` on a value of unknown type: members by name only.
        let mut members: Vec<SymbolRef> =
            all.iter().copied().filter(|&r| !self.symbol(r).container.is_empty()).collect();
        // `items.add()` where `items` is a field or variable this file declares: its
        // declaration names its type, and a member of another type is not meant.
        // (`self.hir.translate()` in `impl Parser`: `Parser`'s own `hir` field, not another
        // type's field of that name in the same file.)
        // Of a class's declarations of one field (`soup: BeautifulSoup` in the body beside
        // `self.soup = soup` in a method), the one that states its type.
        let own_field = match parts.as_slice() {
            [receiver, field] if matches!(*receiver, "self" | "this") => {
                self.enclosing_container(f, occ).and_then(|c| {
                    let mut declared =
                        self.codes[f as usize].symbols.iter().filter(|s| s.name == *field && s.container == c);
                    let first = declared.clone().next();
                    declared.find(|s| declared_type(&s.signature, field).is_some()).or(first)
                })
            }
            _ => None,
        };
        if let Some(declared) = own_field.or_else(|| self.declaration_in_file(f, last)) {
            // The type it states, when it states one (`data_: Map<K, Value<V>>` is a `Map`:
            // its `set` is not `Value.set`); else any type its declaration names.
            let stated = declared_type(&declared.signature, last);
            // `lower: P` in `struct AABB<P> where P: Point`: the bound's members.
            if let Some(ty) = stated.as_deref().filter(|ty| self.bounded(f, occ, ty) != *ty) {
                return self.value_candidates(f, occ, ty, all);
            }
            // `self.web = WebApplicationServer(…)` in a `setUp`: the class it builds, whose
            // members include its bases' (`create_token_response` is `TokenEndpoint`'s), which
            // the words of the declaration below do not reach.
            if let Some(built) = stated.is_none().then(|| constructed_type(&declared.signature)).flatten() {
                let found = self.value_candidates(f, occ, built, all);
                if !found.is_empty() {
                    return found;
                }
            }
            let words: HashSet<&str> = declared.signature.split(|c: char| !c.is_alphanumeric() && c != '_').collect();
            members.retain(|&r| {
                let container = &self.symbol(r).container;
                split_qualifier(container).last().is_some_and(|c| match &stated {
                    Some(ty) => c == ty,
                    None => words.contains(c),
                })
            });
            let confidence = 0.7 / members.len().max(1) as f32;
            return members.into_iter().map(|r| cand(r, Resolution::QualifiedPath, confidence)).collect();
        }
        // A value called (`f(x)`, recorded as its `__call__`) may be any function: its class's
        // `__call__` is meant only where the value's type is known.
        if members.is_empty()
            || members.len() > MAX_DISPATCHED_CANDIDATES
            || self.codes[f as usize].name_of(occ) == "__call__"
        {
            return Vec::new();
        }
        // `env.update(…)` is most likely a dict's, not the repo's one `update`.
        members.retain(|&r| !self.shares_builtin_name(r));
        // A Rust method call (`edge.source()`) is never a field's, nor an associated
        // function's without a `self` (handlebars' `p.value()` is not the constructor
        // `BlockParamHolder::value(v)`), nor a method's that takes another number of
        // arguments (ron's `config.struct_names(true)` is the builder's setter, not the getter
        // `struct_names(&self)`).
        if lang == "rust" && occ.kind == UseKind::Call {
            members.retain(|&r| {
                let s = self.symbol(r);
                s.kind.is_callable()
                    && match rust_parameters(&s.signature, &s.name) {
                        Some((false, _)) => false,
                        Some((true, count)) => occ.arguments.is_none_or(|n| usize::from(n) == count),
                        None => true,
                    }
            });
        }
        // A Rust trait's method (a Go interface's) stands for its implementations among the
        // candidates: which one runs is the dispatch, which the walk follows from each
        // implementation to the trait's method (else every `impl Buf for …` would split the
        // guess). Counted after: petgraph's eight `impl EdgeRef for …` blocks are one
        // candidate, `EdgeRef::source`, for an `edge.source()` on an edge of a type
        // parameter's associated type (beside the one inherent `Edge::source`).
        let all = members.clone();
        members.retain(|&r| !self.dispatched_through(r).iter().any(|d| all.contains(d)));
        if members.is_empty() || members.len() > MAX_NAME_ONLY_CANDIDATES {
            return Vec::new();
        }
        let confidence = 0.4 / members.len() as f32;
        members.into_iter().map(|r| cand(r, Resolution::NameOnly, confidence)).collect()
    }

    /// Whether `name`, the head of a Rust path in file `f`, is a generic type parameter as
    /// far as the repo can tell: a type's name that nothing in the repo defines, the file does
    /// not import, and the prelude does not hold.
    fn names_type_parameter(&self, f: u32, name: &str) -> bool {
        names_a_type(name)
            && name != "Self"
            && !builtins::is_prelude_type("rust", name)
            && !self.bindings[f as usize].contains_key(name)
            && !self.defs_by_name.contains_key(name)
    }

    /// Whether member `r`, of a type named `ty`, belongs to another type than the `ty` file `f`
    /// means: both files define a type of that name (ron's `de::id::Deserializer` beside
    /// `de::Deserializer`). A file that only `impl`s a type defined elsewhere shares it.
    pub(super) fn of_another_type(&self, f: u32, r: SymbolRef, ty: &str) -> bool {
        r.0 != f && self.defines_type(r.0, ty) && self.defines_type(f, ty)
    }

    /// Whether `name` in file `f` can only be another crate's: imported from outside the repo,
    /// bound to none of the repo's files by another import, not defined in `f`.
    pub(super) fn foreign_name(&self, f: u32, name: &str) -> bool {
        self.imported_from_outside(f, name)
            && self.bindings[f as usize].get(name).is_none_or(|files| files.is_empty())
            && !self.defines_type(f, name)
    }

    /// Whether file `f` defines a type (not a module) named `name`.
    fn defines_type(&self, f: u32, name: &str) -> bool {
        self.defs_by_name.get(name).is_some_and(|defs| {
            defs.iter().any(|&d| {
                d.0 == f && {
                    let s = self.symbol(d);
                    s.kind.is_container() && s.kind != SymbolKind::Module
                }
            })
        })
    }

    /// Whether `name` is a trait the repo declares.
    pub(super) fn is_trait(&self, name: &str) -> bool {
        self.defs_by_name.get(name).is_some_and(|defs| defs.iter().any(|&d| self.symbol(d).kind == SymbolKind::Trait))
    }

    /// Whether a definition is a method its trait declares (`fn source(&self)` in `trait
    /// EdgeRef`), not an implementation of one.
    pub(super) fn declared_in_trait(&self, r: SymbolRef) -> bool {
        let s = self.symbol(r);
        s.implements.is_empty() && split_qualifier(&s.container).last().is_some_and(|c| self.is_trait(c))
    }

    /// Whether a definition is reachable by its bare name from another file: top level, or
    /// directly in a namespace, package or module.
    pub(super) fn is_top_level(&self, r: SymbolRef) -> bool {
        self.namespace_level[r.0 as usize][r.1 as usize]
    }

    /// The files a Rust path names as modules, from file `f`: `crate::a::b`, `super::x`, a
    /// workspace crate, or a module the file imports (`use crate::task;` … `task::spawn`).
    /// How many inline modules (`mod tests { … }`, written in file `f`) a use sits in.
    fn inline_module_depth(&self, f: u32, occ: &Occurrence) -> usize {
        let code = &self.codes[f as usize];
        let Some(e) = occ.enclosing else { return 0 };
        let s = &code.symbols[e as usize];
        let path = if s.kind == SymbolKind::Module { s.qualified_name.as_str() } else { s.container.as_str() };
        let mut depth = 0;
        let mut prefix = String::new();
        for segment in path.split("::") {
            prefix = if prefix.is_empty() { segment.to_string() } else { format!("{prefix}::{segment}") };
            if code
                .symbols
                .iter()
                .any(|m| m.kind == SymbolKind::Module && m.qualified_name == prefix && m.end_line > m.line)
            {
                depth += 1;
            }
        }
        depth
    }

    pub(super) fn rust_module_files(&self, f: u32, qualifier: &str, parts: &[&str]) -> HashSet<u32> {
        let from = &self.paths[f as usize];
        let first = parts.first().copied().unwrap_or("");
        let mut starts: Vec<(String, String)> = vec![(from.clone(), qualifier.to_string())];
        if let Some(bound) = self.bindings[f as usize].get(first) {
            let rest = parts[1..].join("::");
            for &t in bound {
                let spec = if rest.is_empty() { "self".to_string() } else { format!("self::{rest}") };
                starts.push((self.paths[t as usize].clone(), spec));
            }
        }
        starts
            .into_iter()
            .flat_map(|(from, spec)| {
                let spec = ImportSpec { spec, line: 0, names: Vec::new(), file_like: false };
                self.resolver.resolve(&from, "rust", &spec)
            })
            .filter_map(|t| self.file_index(&t.file))
            .collect()
    }

    /// Files a name is re-exported from, following `files`' imports of it by name and their
    /// whole-module and glob imports, up to `MAX_REEXPORT_HOPS` on (`pub use` chains through
    /// `lib.rs` and `mod.rs`, `__init__.py` that import from submodules). A file that defines
    /// the name itself ends its chain: its own definition is the one it exports (ron's
    /// `pub use de::Deserializer` is `de`'s struct, not the private `de::id::Deserializer`
    /// that `de`'s `mod id;` leads on to).
    pub(super) fn reexports(&self, files: &HashSet<u32>, name: &str) -> HashSet<u32> {
        let mut out: HashSet<u32> = HashSet::new();
        let mut frontier: Vec<u32> = files.iter().copied().collect();
        let defines = |file: u32| {
            self.defs_by_name
                .get(name)
                .is_some_and(|defs| defs.iter().any(|&r| r.0 == file && self.symbol(r).container.is_empty()))
        };
        for _ in 0..MAX_REEXPORT_HOPS {
            let mut next = Vec::new();
            for t in frontier {
                let onward =
                    self.bindings[t as usize].get(name).into_iter().flatten().chain(&self.open_imports[t as usize]);
                for &file in onward {
                    if out.insert(file) && !defines(file) {
                        next.push(file);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        out
    }

    /// The files a dotted module path names from file `f`, part by part: `sqlparse.cli` after
    /// `import sqlparse` is the package's `cli` submodule, whether its `__init__.py` imports it
    /// or not (a test that imports the package reaches its submodules that way). None when the
    /// first part is not an import or a later part names no module.
    pub(super) fn module_path_files(&self, f: u32, parts: &[&str]) -> Option<HashSet<u32>> {
        let (first, rest) = parts.split_first()?;
        let mut files: HashSet<u32> = self.bindings[f as usize].get(*first)?.iter().copied().collect();
        for part in rest {
            let mut next: HashSet<u32> = HashSet::new();
            for &t in &files {
                let path = &self.paths[t as usize];
                let beside = path.strip_suffix("__init__.py").into_iter().flat_map(|dir| {
                    [format!("{dir}{part}.py"), format!("{dir}{part}/__init__.py")]
                        .into_iter()
                        .filter_map(|p| self.file_index(&p))
                });
                let submodules: Vec<u32> = beside.collect();
                if submodules.is_empty() {
                    // Bound by name in that module (`from .core import api`).
                    next.extend(self.bindings[t as usize].get(*part).into_iter().flatten());
                } else {
                    next.extend(submodules);
                }
            }
            if next.is_empty() {
                return None;
            }
            files = next;
        }
        Some(files)
    }

    /// A field, property, variable or constant named `name` declared in file `f`.
    pub(super) fn declaration_in_file(&self, f: u32, name: &str) -> Option<&Symbol> {
        self.codes[f as usize].symbols.iter().find(|s| {
            s.name == name
                && matches!(
                    s.kind,
                    SymbolKind::Field | SymbolKind::Property | SymbolKind::Variable | SymbolKind::Constant
                )
        })
    }

    /// Files whose top-level definitions `name` can mean in file `f` through its imports.
    pub(super) fn visible_files(&self, f: u32, name: &str) -> HashSet<u32> {
        let mut out: HashSet<u32> = HashSet::new();
        if let Some(targets) = self.bindings[f as usize].get(name) {
            out.extend(targets);
        }
        out.extend(&self.open_imports[f as usize]);
        out.extend(&self.package_mates[f as usize]);
        out
    }

    pub(super) fn resolve_bare(&self, f: u32, occ: &Occurrence, all: &[SymbolRef]) -> Vec<Candidate> {
        let code = &self.codes[f as usize];
        let lang = code.language.as_str();
        let name = code.name_of(occ);
        let cand = |symbol, resolution, confidence| Candidate { symbol, resolution, confidence };
        // Languages where a bare name inside a method may be a member of its type.
        let implicit_members = implicit_members(lang);
        let container = self.enclosing_container(f, occ).unwrap_or("");
        let container_last = split_qualifier(container).last().copied().unwrap_or("");
        // A Python class body is a scope of its own: a name there may be a member defined in it
        // (`status = property(_get_status, _set_status)`, `__str__ = __repr__`, the getter
        // in `@plain.setter`), unlike a method's body, where members are reached through `self`.
        let scope = occ.enclosing.map_or("", |e| code.symbols[e as usize].qualified_name.as_str());
        let class_body = lang == "python"
            && !container_last.is_empty()
            && occ.enclosing.is_some_and(|e| !code.symbols[e as usize].kind.is_callable());
        let same_file: Vec<SymbolRef> = all
            .iter()
            .copied()
            .filter(|&r| r.0 == f)
            .filter(|&r| {
                let s = self.symbol(r);
                s.container.is_empty()
                    || s.kind.is_container()
                    // A function's own helper (`def _attach_init` inside a method).
                    || self.local_to[f as usize][r.1 as usize].is_some()
                    || s.kind == SymbolKind::EnumMember
                    || (implicit_members
                        && !container_last.is_empty()
                        && split_qualifier(&s.container).last() == Some(&container_last))
                    || (lang == "rust" && s.kind == SymbolKind::Field)
                    // An item of the Rust module the use is in, or of one around it (a test
                    // module's helper `fn check`, its `use super::*`).
                    || (lang == "rust" && self.is_top_level(r) && within_module(scope, &s.container))
                    // Run top to bottom: only what the body has defined so far.
                    || (class_body && s.container == container && s.line < occ.line)
                    || matches!(lang, "elixir" | "haskell" | "lua" | "c")
            })
            // A Rust call never runs a module (`mod optimize;` beside the imported function
            // `optimize`: modules and functions have namespaces of their own) nor a field.
            .filter(|&r| {
                !(lang == "rust"
                    && occ.kind == UseKind::Call
                    && matches!(self.symbol(r).kind, SymbolKind::Module | SymbolKind::Field))
            })
            .collect();
        // Rust's `macro_rules!` macros are in scope across their crate (`#[macro_use]`).
        if lang == "rust" && occ.kind == UseKind::Call && same_file.is_empty() {
            let mut macros: Vec<SymbolRef> = all
                .iter()
                .copied()
                .filter(|&r| {
                    self.symbol(r).kind == SymbolKind::Macro && self.crate_of[r.0 as usize] == self.crate_of[f as usize]
                })
                .collect();
            // A macro is in scope below the module that defines it: where an enclosing
            // module defines the name, a namesake in another module (each test module's own
            // `macro_rules! check`) is not the one meant.
            let path = self.paths[f as usize].as_str();
            if macros.iter().any(|r| encloses_module(&self.paths[r.0 as usize], path)) {
                macros.retain(|r| encloses_module(&self.paths[r.0 as usize], path));
            }
            if !macros.is_empty() {
                return macros.into_iter().map(|r| cand(r, Resolution::SamePackage, 0.85)).collect();
            }
            // One of a crate the file imports from (`#[macro_use] extern crate pest;` or `use
            // pest::…` in an integration test): its exported macros are in scope.
            let own = self.crate_of[f as usize];
            let imported: HashSet<u32> = self.imports[f as usize]
                .iter()
                .map(|&(t, _, _)| self.crate_of[t as usize])
                .filter(|&c| c != own && c != u32::MAX)
                .collect();
            let exported: Vec<Candidate> = all
                .iter()
                .filter(|&&r| {
                    self.symbol(r).kind == SymbolKind::Macro
                        && imported.contains(&self.crate_of[r.0 as usize])
                        && self.is_top_level(r)
                })
                .map(|&r| cand(r, Resolution::Import, 0.85))
                .collect();
            if !exported.is_empty() {
                return exported;
            }
        }
        // A definition local to a function is seen only inside it (`def decorator` in each of
        // a file's decorator factories), and the nearest one hides the others.
        let same_file: Vec<SymbolRef> = same_file
            .into_iter()
            .filter(|&r| {
                self.local_to[f as usize][r.1 as usize].is_none_or(|g| {
                    let g = &code.symbols[g as usize];
                    g.line <= occ.line && occ.line <= g.end_line
                })
            })
            .collect();
        if !same_file.is_empty() {
            let found: Vec<Candidate> = same_file
                .into_iter()
                .map(|r| {
                    let s = self.symbol(r);
                    let inside = occ.enclosing.is_some_and(|e| {
                        let outer = &code.symbols[e as usize];
                        e != r.1 && outer.line <= s.line && s.end_line <= outer.end_line
                    });
                    if inside {
                        cand(r, Resolution::LocalScope, 1.0)
                    } else {
                        cand(r, Resolution::SameFile, 0.95)
                    }
                })
                .collect();
            let innermost = found
                .iter()
                .filter(|c| c.resolution == Resolution::LocalScope)
                .map(|c| self.symbol(c.symbol).line)
                .max();
            return match innermost {
                Some(line) => found
                    .into_iter()
                    .filter(|c| c.resolution == Resolution::LocalScope && self.symbol(c.symbol).line == line)
                    .collect(),
                None => found,
            };
        }
        // pytest passes fixtures by name from the `conftest.py` files above the test.
        if lang == "python" {
            let fixtures: Vec<Candidate> = all
                .iter()
                .filter(|&&r| self.is_top_level(r) && self.symbol(r).kind.is_callable())
                .filter(|&&r| self.conftest_above(f, r.0))
                .map(|&r| cand(r, Resolution::SamePackage, 0.85))
                .collect();
            if !fixtures.is_empty() {
                return fixtures;
            }
        }
        // A member of the enclosing type declared in another file (a C++ class's header, a
        // partial class): an implicit `this`.
        if implicit_members && !container_last.is_empty() {
            let visible = self.visible_files(f, name);
            let found: Vec<Candidate> = all
                .iter()
                .filter(|r| visible.contains(&r.0))
                .filter(|&&r| split_qualifier(&self.symbol(r).container).last() == Some(&container_last))
                .map(|&r| cand(r, Resolution::QualifiedPath, 0.9))
                .collect();
            if !found.is_empty() {
                return found;
            }
        }
        if let Some(targets) = self.bindings[f as usize].get(name) {
            if targets.is_empty() {
                // Imported from outside the repo.
                return Vec::new();
            }
            let targets: HashSet<u32> = targets.iter().copied().collect();
            let found: Vec<Candidate> = all
                .iter()
                .filter(|r| targets.contains(&r.0) && (self.is_top_level(**r) || self.symbol(**r).kind.is_container()))
                .map(|&r| cand(r, Resolution::Import, if occ.kind == UseKind::Import { 0.95 } else { 0.9 }))
                .collect();
            if !found.is_empty() {
                return found;
            }
            // A re-export: the name is defined further along the target's own imports.
            let onward = self.reexports(&targets, name);
            let found: Vec<Candidate> = all
                .iter()
                .filter(|r| onward.contains(&r.0) && (self.is_top_level(**r) || self.symbol(**r).kind.is_container()))
                .map(|&r| cand(r, Resolution::Import, 0.8))
                .collect();
            return found;
        }
        let mates: HashSet<u32> = self.package_mates[f as usize].iter().copied().collect();
        let found: Vec<Candidate> = all
            .iter()
            .filter(|r| mates.contains(&r.0))
            .filter(|&&r| self.is_top_level(r) || implicit_members)
            .map(|&r| cand(r, Resolution::SamePackage, 0.85))
            .collect();
        if !found.is_empty() {
            return found;
        }
        // The top-level definitions in files a glob opens.
        let opened = |files: &HashSet<u32>, confidence: f32| -> Vec<Candidate> {
            all.iter()
                .filter(|r| files.contains(&r.0) && self.is_top_level(**r))
                .map(|&r| cand(r, Resolution::Import, confidence))
                .collect()
        };
        let open: HashSet<u32> = self.open_imports[f as usize].iter().copied().collect();
        let found = opened(&open, 0.8);
        if !found.is_empty() {
            return found;
        }
        // A name a glob's module re-exports through a glob of its own (`use pathfinding::prelude::*`,
        // where `prelude` is `pub use crate::directed::dijkstra::*;`).
        if !open.is_empty() {
            let found = opened(&self.reexports(&open, name), 0.75);
            if !found.is_empty() {
                return found;
            }
        }
        // By name alone: never certain, and not at all for names defined in many places or
        // for members, which a bare name cannot reach.
        let top: Vec<SymbolRef> = all
            .iter()
            .copied()
            .filter(|&r| self.is_top_level(r) || self.symbol(r).kind.is_container() || implicit_members)
            .collect();
        if top.is_empty() || top.len() > MAX_NAME_ONLY_CANDIDATES {
            return Vec::new();
        }
        // Where every name must be imported or defined, a bare name found only elsewhere is
        // most likely something else (a builtin, a local the extraction missed).
        let strict = matches!(
            lang,
            "python"
                | "rust"
                | "typescript"
                | "tsx"
                | "javascript"
                | "go"
                | "java"
                | "kotlin"
                | "scala"
                | "csharp"
                | "haskell"
                | "elixir"
        );
        let base = if strict { 0.2 } else { 0.45 };
        let confidence = base / top.len() as f32;
        top.into_iter().map(|r| cand(r, Resolution::NameOnly, confidence)).collect()
    }

    /// How many definitions of `name` a bare use and a member use could match by name alone
    /// (an upper bound: implicit members counted as reachable).
    /// Whether file `c` is a `conftest.py` whose fixtures pytest hands the tests of file `f`:
    /// in `f`'s folder or one above it.
    pub(super) fn conftest_above(&self, f: u32, c: u32) -> bool {
        let dir = self.paths[f as usize].rsplit_once('/').map_or("", |(d, _)| d);
        let path = &self.paths[c as usize];
        let (conftest_dir, file) = path.rsplit_once('/').unwrap_or(("", path));
        file == "conftest.py"
            && (conftest_dir.is_empty() || dir == conftest_dir || dir.starts_with(&format!("{conftest_dir}/")))
    }

    pub(super) fn name_counts(&self, name: &str) -> NameCounts {
        let all = self.defs_by_name.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let members = all.iter().filter(|&&r| !self.symbol(r).container.is_empty()).count();
        let top_level = all.iter().filter(|&&r| self.is_top_level(r) || self.symbol(r).kind.is_container()).count();
        NameCounts { all: all.len(), top_level, members }
    }

    /// Whether the use `o` of file `f` can resolve to `target` at all: the same file, a file
    /// that can see the target's (imports, includes, package), a qualifier naming its type or
    /// module. Checked before the full resolution, so a name defined in thousands of places
    /// (`new`) costs its uses near the target, not all of them times all its definitions.
    pub(super) fn may_mean(&self, f: u32, occ: &Occurrence, target: SymbolRef, counts: NameCounts) -> bool {
        let target_file = target.0;
        let code = &self.codes[f as usize];
        if let Some(definitions) = self.aliases[f as usize].get(&(occ.qualifier, occ.name)) {
            return definitions.contains(&target);
        }
        if code.language == "rust" && self.symbol(target).kind == SymbolKind::Macro {
            return true;
        }
        // A pytest fixture is named by any test below its conftest.py.
        let target_path = &self.paths[target_file as usize];
        if code.language == "python" && (target_path == "conftest.py" || target_path.ends_with("/conftest.py")) {
            return true;
        }
        let name_only_possible = if occ.qualifier == 0 {
            let reachable = if implicit_members(&code.language) { counts.all } else { counts.top_level };
            reachable <= MAX_NAME_ONLY_CANDIDATES
        } else {
            // A trait's method stands for its implementations in a guess by name (see
            // `candidates`): more definitions than a guess takes may still leave few.
            counts.members <= MAX_DISPATCHED_CANDIDATES
        };
        if f == target_file || name_only_possible {
            return true;
        }
        let sees = |file: u32| {
            self.open_imports[file as usize].contains(&target_file)
                || self.package_mates[file as usize].contains(&target_file)
        };
        let qualifier = code.qualifier_of(occ);
        if qualifier.is_empty() {
            let name = code.name_of(occ);
            return match self.bindings[f as usize].get(name) {
                // Imported by name: from the target's file, or re-exported on the way.
                Some(targets) => {
                    targets.contains(&target_file)
                        || self.reexports(&targets.iter().copied().collect(), name).contains(&target_file)
                }
                // Or through a glob's module's own globs (`resolve_bare`).
                None => {
                    let open = &self.open_imports[f as usize];
                    sees(f)
                        || (!open.is_empty()
                            && self.reexports(&open.iter().copied().collect(), name).contains(&target_file))
                }
            };
        }
        let parts = split_qualifier(qualifier);
        let (first, last) = (parts.first().copied().unwrap_or(""), parts.last().copied().unwrap_or(""));
        let container = self.symbol(target).container.as_str();
        split_qualifier(container).last() == Some(&last)
            || matches!(last, "self" | "this" | "Self" | "static" | "parent" | "cls")
            || names_super(&code.language, qualifier)
            || qualifier == "@"
            || qualifier.contains("::")
            // A call's result of a type that has the member.
            || ((qualifier.ends_with(')') || qualifier.ends_with("[]"))
                && self
                    .qualifier_type(f, occ, qualifier, MAX_CHAIN_CALLS)
                    .is_some_and(|ty| !self.value_members(f, occ, &ty, &[target]).is_empty()))
            // A value of a type whose base defines the member.
            || (parts.len() == 1
                && names_a_type(last)
                && !self.typed_members(last, &[target]).is_empty())
            // A Rust trait whose extension defines it (`P::new()`, `P: Point`, `PointExt::new`).
            || (code.language == "rust" && parts.len() == 1 && self.is_trait(last))
            // A Rust path from the crate's root, a parent, or a crate: `crate::io`.
            || (code.language == "rust" && (matches!(first, "crate" | "super") || self.resolver.is_crate_name(first)))
            || self.bindings[f as usize].get(first).is_some_and(|t| {
                t.contains(&target_file)
                    || self.reexports(&t.iter().copied().collect(), code.name_of(occ)).contains(&target_file)
                    || code.language == "rust"
            })
            || (parts.len() > 1
                && self.module_path_files(f, &parts).is_some_and(|t| {
                    t.contains(&target_file) || self.reexports(&t, code.name_of(occ)).contains(&target_file)
                }))
            || self.declaration_in_file(f, last).is_some()
    }
}

/// Most trait declarations one generic call may mean (`Q::Strategy::insert` where several
/// traits declare `insert`); more, and it means none of them surely enough to follow.
const MAX_TRAIT_CANDIDATES: usize = 4;

/// Whether a member access's qualifier is the base class's: Python's `super()` (or
/// `super(Form, self)`), `super` in JavaScript, TypeScript and Java (not Rust's `super::`, a
/// module).
fn names_super(language: &str, qualifier: &str) -> bool {
    match language {
        "python" => qualifier.starts_with("super(") && qualifier.ends_with(')'),
        "javascript" | "typescript" | "java" => qualifier == "super",
        _ => false,
    }
}

/// Whether Rust file `outer` is the module file of a module that holds file `inner`: the
/// crate root (`lib.rs`, `main.rs`) or a `mod.rs` over its folder, `a.rs` over `a/`.
fn encloses_module(outer: &str, inner: &str) -> bool {
    let (dir, file) = outer.rsplit_once('/').unwrap_or(("", outer));
    let folder = match file {
        "lib.rs" | "main.rs" | "mod.rs" => dir.to_string(),
        _ => match file.strip_suffix(".rs") {
            Some(stem) if dir.is_empty() => stem.to_string(),
            Some(stem) => format!("{dir}/{stem}"),
            None => return false,
        },
    };
    folder.is_empty() || inner.starts_with(&format!("{folder}/"))
}

/// Whether a use inside the item `scope` (a qualified name) lies in module `module` or in
/// one of its submodules.
fn within_module(scope: &str, module: &str) -> bool {
    scope.strip_prefix(module).is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}
