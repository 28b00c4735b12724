//! What a value's type is and what a type holds: a receiver's type from its declaration, a
//! field, a call's return type or a chain of calls; a type's members, its bases and
//! embedded types, its subclasses; and the uses a method's dispatch adds (a base's method
//! called on a subclass, an override called through its base). Resolution asks these.

use std::collections::{HashMap, HashSet};

use super::signatures::{
    alias_target, base_names, call_start, declared_text, declared_type, held_type, is_embedded_field,
    names_an_exception, parenthesized, passed_class, return_text, return_type, self_as, variant_field_type,
};
use super::{names_a_type, split_qualifier, Candidate, CodeGraph, Resolution, SymbolRef, Use, DISPATCH_CONFIDENCE};
use crate::code::{Occurrence, SymbolKind, UseKind};

impl CodeGraph {
    /// Of `all`, the members of type `ty`: its own, else those of its nearest bases that have
    /// any (`class Group(Command)`, `class A extends B`).
    ///
    /// A Python class whose `__getattr__` hands what it lacks on to a value of its own
    /// (`FileCode::delegates`) has that value's type's members too.
    pub(super) fn typed_members(&self, ty: &str, all: &[SymbolRef]) -> Vec<SymbolRef> {
        let mut ty = ty.to_string();
        for _ in 0..=MAX_DELEGATIONS {
            let found = self.find_in_type_and_bases(&ty, |t| {
                let found: Vec<SymbolRef> = all.iter().copied().filter(|&r| self.is_member_of(r, t)).collect();
                (!found.is_empty()).then_some(found)
            });
            if let Some(found) = found.or_else(|| self.provided_members(&ty, all)) {
                return found;
            }
            match self.delegate_type(&ty) {
                Some(delegate) => ty = delegate,
                None => break,
            }
        }
        Vec::new()
    }

    /// Of `all`, the provided methods a Rust type has from the traits it implements (or its
    /// alias's target does) and their supertraits: `offset.from_utc_datetime(…)` for a
    /// `FixedOffset`, whose `impl TimeZone` leaves that method to the trait's default body.
    fn provided_members(&self, ty: &str, all: &[SymbolRef]) -> Option<Vec<SymbolRef>> {
        if self.implemented_traits.is_empty() {
            return None;
        }
        let target = self.defs_by_name.get(ty).into_iter().flatten().find_map(|&r| alias_target(self.symbol(r)));
        let traits = [Some(ty), target.as_deref()]
            .into_iter()
            .flatten()
            .flat_map(|t| self.implemented_traits.get(t).into_iter().flatten());
        let mut found: Vec<SymbolRef> = Vec::new();
        for name in traits {
            let members = self.find_in_type_and_bases(name, |t| {
                let found: Vec<SymbolRef> = all.iter().copied().filter(|&r| self.is_member_of(r, t)).collect();
                (!found.is_empty()).then_some(found)
            });
            found.extend(members.into_iter().flatten().filter(|&r| self.declared_in_trait(r)));
        }
        found.sort_unstable();
        found.dedup();
        (!found.is_empty()).then_some(found)
    }

    /// The type of the value the `__getattr__` of type `ty` (or of its nearest base with one)
    /// hands unknown attributes on to: a call's return type (`self.table(…)` where `def
    /// table(self, name) -> Table`) or a field's type (`self._timer = _Timer(timer)`).
    fn delegate_type(&self, ty: &str) -> Option<String> {
        let getattrs = self.defs_by_name.get("__getattr__")?;
        // Typing the value looks members up again (`table` of the class that lacks `count`):
        // those lookups hand nothing on, or a class lacking the value's member would loop.
        if DELEGATING.with(|d| d.replace(true)) {
            return None;
        }
        let found = self.delegate_type_of(ty, getattrs);
        DELEGATING.with(|d| d.set(false));
        found
    }

    fn delegate_type_of(&self, ty: &str, getattrs: &[SymbolRef]) -> Option<String> {
        let getattr =
            self.find_in_type_and_bases(ty, |t| getattrs.iter().copied().find(|&r| self.is_member_of(r, t)))?;
        let code = self.code(getattr.0);
        let (_, delegate) = code.delegates.iter().find(|(i, _)| *i == getattr.1)?;
        let symbol = self.symbol(getattr);
        let inside = Occurrence {
            name: 0,
            line: symbol.line,
            column: symbol.column,
            kind: UseKind::Read,
            qualifier: 0,
            enclosing: Some(getattr.1),
            arguments: None,
        };
        if delegate.ends_with(')') {
            return self.qualifier_type(getattr.0, &inside, delegate, 1);
        }
        let field = crate::code::extract::own_field_path(delegate)?;
        let signature = &self.symbol(self.own_field(getattr.0, &inside, field)?).signature;
        held_type(signature, field)
    }

    /// The first answer `visit` gives for type `ty`, then for its bases (and a Go struct's
    /// embedded types), nearest first, at most `MAX_BASES` of them.
    fn find_in_type_and_bases<T>(&self, ty: &str, mut visit: impl FnMut(&str) -> Option<T>) -> Option<T> {
        let mut types = vec![ty.to_string()];
        let mut seen: HashSet<String> = HashSet::new();
        let mut i = 0;
        while i < types.len() && i < MAX_BASES {
            let t = types[i].clone();
            i += 1;
            if !seen.insert(t.clone()) {
                continue;
            }
            if let Some(found) = visit(&t) {
                return Some(found);
            }
            for &r in self.defs_by_name.get(&t).into_iter().flatten() {
                let s = self.symbol(r);
                if s.kind.is_container() {
                    types.extend(base_names(&s.signature));
                    types.extend(self.embedded_types(r));
                    types.extend(alias_target(s));
                }
            }
        }
        None
    }

    /// Whether pytest collects the Python class `class` (a qualified name) as a test class: its
    /// name starts with `Test` (`python_classes`' default), or a base up its chain is
    /// unittest's `TestCase`: a class whose name ends so that the repo does not define, or
    /// defines over one of that name (`unittest.TestCase`, `IsolatedAsyncioTestCase`, a
    /// `class TestCase(unittest.TestCase)` of the repo's). A mixin of `test_*` methods is not
    /// collected (its tests run as those of the classes that derive from it), nor is pint's
    /// `_TestBasic`, whose bases end at the repo's own plain `QuantityTestCase`.
    pub fn pytest_collects(&self, class: &str) -> bool {
        let last = |t: &str| t.rsplit('.').next().unwrap_or(t).to_string();
        let own = last(class);
        // Its own name says nothing (pyasn1's `AbstractStringTestCase(object)` is a mixin).
        // A class named so that the repo does not define, or defines over one of that name
        // (`class TestCase(unittest.TestCase)`: bases are read without their module).
        let outside = |name: &str| match self.defs_by_name.get(name) {
            None => true,
            Some(defs) => defs.iter().any(|&r| base_names(&self.symbol(r).signature).iter().any(|b| last(b) == name)),
        };
        let unittest = |t: &str| {
            let name = last(t);
            (name != own && name.ends_with("TestCase") && outside(&name)).then_some(())
        };
        own.starts_with("Test") || self.find_in_type_and_bases(&own, unittest).is_some()
    }

    /// The types a Go struct embeds (`struct { ast.BaseInline; … }`): their members are the
    /// struct's own, as a base class's are.
    pub(super) fn embedded_types(&self, r: SymbolRef) -> Vec<String> {
        let code = self.code(r.0);
        if code.language != "go" {
            return Vec::new();
        }
        let owner = &self.symbol(r).qualified_name;
        code.symbols
            .iter()
            .filter(|s| s.kind == SymbolKind::Field && s.container == *owner && is_embedded_field(s))
            .map(|s| s.name.clone())
            .collect()
    }

    /// The members named so of the bases of the class around occurrence `occ`
    /// (`super().__init__()`), nearest first, as `typed_candidates`.
    pub(super) fn base_candidates(&self, f: u32, occ: &Occurrence, all: &[SymbolRef]) -> Vec<Candidate> {
        let Some(container) = self.enclosing_container(f, occ).filter(|c| !c.is_empty()) else {
            return Vec::new();
        };
        let bases: Vec<String> = self.codes[f as usize]
            .symbols
            .iter()
            .filter(|s| s.kind.is_container() && s.qualified_name == container)
            .flat_map(|s| base_names(&s.signature))
            .collect();
        let mut found: Vec<SymbolRef> = Vec::new();
        for base in bases {
            for r in self.typed_members(&base, all) {
                if !found.contains(&r) {
                    found.push(r);
                }
            }
        }
        sure_candidates(found)
    }

    /// `typed_members` as candidates: the code says the type, so they are sure, shared
    /// among them.
    pub(super) fn typed_candidates(&self, ty: &str, all: &[SymbolRef]) -> Vec<Candidate> {
        sure_candidates(self.typed_members(ty, all))
    }

    /// `value_members` as candidates, sure as `typed_candidates`.
    pub(super) fn value_candidates(&self, f: u32, occ: &Occurrence, ty: &str, all: &[SymbolRef]) -> Vec<Candidate> {
        sure_candidates(self.value_members(f, occ, ty, all))
    }

    /// `ty` as the type of a value at `occ` in file `f`: a Rust type parameter in scope there
    /// (`P` in `impl<P> AABB<P> where P: Point`) stands for the trait bounding it, the same
    /// parameter as in the item that declared the field or the method returning it.
    pub(super) fn bounded<'s>(&'s self, f: u32, occ: &Occurrence, ty: &'s str) -> &'s str {
        self.codes[f as usize]
            .bounds
            .iter()
            .filter(|b| b.param == ty && b.line <= occ.line && occ.line <= b.end_line)
            .max_by_key(|b| b.line)
            .map_or(ty, |b| b.bound.as_str())
    }

    /// Of `all`, the members a value of type `ty` has at `occ`: `typed_members` of the type
    /// or of its bound (`bounded`); for a Rust trait without such a member, its extensions'
    /// (`trait PointExt: Point` with `impl<T: Point> PointExt for T`).
    pub(super) fn value_members(&self, f: u32, occ: &Occurrence, ty: &str, all: &[SymbolRef]) -> Vec<SymbolRef> {
        let ty = self.bounded(f, occ, ty);
        // A Rust type or bound the file imports from another crate is that crate's, whatever
        // the repo names its own types: `serializer.serialize_u8(v)` with `S: Serializer`
        // after `use serde::Serializer` runs the serializer the caller passes, not ron's
        // `struct Serializer` (what runs a language or serde trait's method is found from
        // where its implementing type is made).
        if self.codes[f as usize].language == "rust" && self.foreign_name(f, ty) {
            return Vec::new();
        }
        let mut found = self.typed_members(ty, all);
        found.retain(|&r| !self.of_another_type(f, r, ty));
        if !found.is_empty() || self.codes[f as usize].language != "rust" || !self.is_trait(ty) {
            return found;
        }
        self.extension_members(ty, all)
    }

    /// Of `all`, the members of the traits that extend trait `name` (its subtraits: `trait
    /// PointExt: Point`, whose blanket `impl` gives every `Point` its methods).
    pub(super) fn extension_members(&self, name: &str, all: &[SymbolRef]) -> Vec<SymbolRef> {
        let extensions: HashSet<String> = self
            .subclasses(name)
            .into_iter()
            .filter(|&t| self.symbol(t).kind == SymbolKind::Trait)
            .map(|t| self.symbol(t).name.clone())
            .collect();
        all.iter()
            .copied()
            .filter(|&r| split_qualifier(&self.symbol(r).container).last().is_some_and(|c| extensions.contains(*c)))
            .collect()
    }

    /// The type the field `field` of type `ty` (or of a base) states, when every such
    /// declaration states the same one: `name: Parameter` in `struct HelperTemplate`.
    pub(super) fn field_type(&self, ty: &str, field: &str) -> Option<String> {
        let fields: Vec<SymbolRef> = self
            .typed_members(ty, self.defs_by_name.get(field)?)
            .into_iter()
            .filter(|&r| self.symbol(r).kind == SymbolKind::Field)
            .collect();
        let mut stated = fields.iter().map(|&r| {
            let text = self.field_text(r, field)?;
            match self.code(r.0).language.as_str() {
                "go" => crate::code::extract::go_type(text),
                "rust" => crate::code::extract::rust_type(text),
                _ => crate::code::extract::annotated_type(text),
            }
        });
        let first = stated.next()??;
        stated.all(|other| other.as_deref() == Some(first.as_str())).then_some(first)
    }

    /// The type the declaration of field `r` (named `field`) states, as written.
    fn field_text(&self, r: SymbolRef, field: &str) -> Option<&str> {
        let signature = &self.symbol(r).signature;
        // A Go field states its type after its name, without a `:`.
        match self.code(r.0).language.as_str() {
            "go" => signature.strip_prefix(field).map(str::trim),
            _ => declared_text(signature, field),
        }
    }

    /// The classes that name `class` (a qualified name; matched by its last part) among
    /// their bases, directly or through others, at most `MAX_BASES` levels down.
    pub fn subclasses(&self, class: &str) -> Vec<SymbolRef> {
        let name = split_qualifier(class).last().copied().unwrap_or(class).to_string();
        self.descendants(name, None)
    }

    /// The classes that derive from the class `class`, directly or through others, at most
    /// `MAX_BASES` levels down, where each base named is that class: defined in the same file,
    /// or in a file that uses it (imports it). Two test modules' `class TestTransitions` are
    /// two classes.
    /// The Python classes that name `meta` as their metaclass (`class Registry(Base,
    /// metaclass=RegistryMeta)`).
    pub fn classes_of_metaclass(&self, meta: SymbolRef) -> Vec<SymbolRef> {
        let name = &self.symbol(meta).name;
        let written = format!("metaclass={name}");
        self.all_symbols()
            .filter(|&r| {
                let s = self.symbol(r);
                s.kind.is_container()
                    && s.signature.contains("metaclass")
                    && self.code(r.0).language == "python"
                    && s.signature.replace(' ', "").contains(&written)
            })
            .collect()
    }

    pub fn subclasses_of(&self, class: SymbolRef) -> Vec<SymbolRef> {
        self.descendants(self.symbol(class).name.clone(), Some(class))
    }

    /// The classes below the class named `name`: any class of that name, or only the class
    /// `root_opt` and, level by level, only classes a subclass's file can see.
    fn descendants(&self, name: String, root_opt: Option<SymbolRef>) -> Vec<SymbolRef> {
        let classes: Vec<SymbolRef> = self.all_symbols().filter(|&r| self.symbol(r).kind.is_container()).collect();
        let mut found: Vec<SymbolRef> = Vec::new();
        let mut wanted: Vec<(String, Option<SymbolRef>)> = vec![(name, root_opt)];
        let mut i = 0;
        while i < wanted.len() && i < MAX_BASES {
            let (name, base_opt) = wanted[i].clone();
            i += 1;
            let users: std::collections::HashSet<u32> =
                base_opt.map(|base| self.uses(base, 0.5).iter().map(|u| u.file).collect()).unwrap_or_default();
            for &r in &classes {
                let sees = base_opt.is_none_or(|base| r.0 == base.0 || users.contains(&r.0));
                if Some(r) != root_opt
                    && !found.contains(&r)
                    && sees
                    && base_names(&self.symbol(r).signature).contains(&name)
                {
                    found.push(r);
                    wanted.push((self.symbol(r).name.clone(), root_opt.map(|_| r)));
                }
            }
        }
        found
    }

    /// Whether a member whose name a built-in type has too (`update`, `get`, `clear`) may be
    /// what a call on a value of unknown type means: only when its class derives, itself or
    /// through its bases, from a built-in kind of value (`class Cache(MutableMapping)`, whose
    /// `clear` is a mapping's); a `ProgressBar.update` is not what `env.update(…)` means.
    pub fn shares_builtin_name(&self, member: SymbolRef) -> bool {
        let s = self.symbol(member);
        let language = self.codes[member.0 as usize].language.as_str();
        if !crate::code::builtins::is_builtin_member(language, &s.name) {
            return false;
        }
        // A method a Rust trait of the repo declares is called on values of its implementors,
        // often generic ones the code does not name (winnow's `Parser::take`, `and_then`).
        if language == "rust" && self.declared_in_trait(member) {
            return false;
        }
        let Some(&class) = split_qualifier(&s.container).last() else { return true };
        // The class itself is the first type visited: only its bases say what it is.
        let builtin_kind = self.find_in_type_and_bases(class, |t| {
            (t != class && crate::code::builtins::is_builtin_base(language, t)).then_some(())
        });
        builtin_kind.is_none()
    }

    /// Whether a method overrides one of its class's bases' (by the names the repo defines):
    /// what the base's code calls on `self` may run it.
    pub fn overrides_a_base_method(&self, member: SymbolRef) -> bool {
        let s = self.symbol(member);
        let Some(&class) = split_qualifier(&s.container).last().filter(|_| s.kind.is_callable()) else {
            return false;
        };
        let same_name = self.defs_by_name.get(&s.name).map(Vec::as_slice).unwrap_or(&[]);
        let in_a_base = self.find_in_type_and_bases(class, |t| {
            (t != class && same_name.iter().any(|&d| d != member && self.is_member_of(d, t))).then_some(())
        });
        in_a_base.is_some()
    }

    /// The bases' methods (the repo's) that a Python method overrides, nearest first: a call
    /// of any of them on a value the code types as that base may run the override (pint's
    /// `self._register_definition_adders()` in the root registry's `__init__` runs the
    /// systems registry's, two bases down, whose own base overrides it too).
    pub fn overridden_methods(&self, member: SymbolRef) -> Vec<SymbolRef> {
        let s = self.symbol(member);
        if self.code(member.0).language != "python" || !s.kind.is_callable() || s.name.starts_with("__") {
            return Vec::new();
        }
        let Some(&class) = split_qualifier(&s.container).last() else { return Vec::new() };
        let same_name = self.defs_by_name.get(&s.name).map(Vec::as_slice).unwrap_or(&[]);
        let mut found = Vec::new();
        self.find_in_type_and_bases(class, |t| {
            if t != class {
                found.extend(same_name.iter().copied().filter(|&d| d != member && self.is_member_of(d, t)));
            }
            None::<()>
        });
        found.dedup();
        found
    }

    /// The types a Rust type alias or a defaulted type parameter of the repo stands for (`u32`
    /// of `type DefaultIx = u32;`, `Ix = u32`): code uses them without naming them.
    pub fn rust_defaulted_types(&self) -> &HashSet<String> {
        self.defaulted_types.get_or_init(|| {
            let mut out = HashSet::new();
            for code in self.codes.iter().filter(|c| c.language == "rust") {
                for s in code.symbols.iter().filter(|s| s.kind == SymbolKind::Type || s.kind.is_container()) {
                    for (at, _) in s.signature.match_indices('=') {
                        let after = s.signature[at + 1..].trim_start();
                        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                        if !name.is_empty() {
                            out.insert(name);
                        }
                    }
                }
            }
            out
        })
    }

    /// Python module-level variables and class attributes that hold an instance of `class`
    /// (`html: Markdown = create_markdown(…)`, `app = Bottle()`, a form's `a = StringField()`):
    /// a call of one, from any module (`mistune.html(text)`, `form.a()`), runs the class's
    /// `__call__`.
    pub fn variables_holding(&self, class: SymbolRef) -> &[SymbolRef] {
        let by_class = self.held_instances.get_or_init(|| {
            let mut by_class: HashMap<String, Vec<SymbolRef>> = HashMap::new();
            for (f, code) in self.codes.iter().enumerate().filter(|(_, c)| c.language == "python") {
                for (i, s) in code.symbols.iter().enumerate() {
                    // A module's variable, or a class body's attribute (`a = StringField()`).
                    let held = match s.container.is_empty() {
                        true => matches!(s.kind, SymbolKind::Variable | SymbolKind::Constant),
                        false => matches!(s.kind, SymbolKind::Variable | SymbolKind::Field),
                    };
                    if !held {
                        continue;
                    }
                    let held = held_type(&s.signature, &s.name);
                    if let Some(held) = held {
                        by_class.entry(held).or_default().push((f as u32, i as u32));
                    }
                }
            }
            by_class
        });
        by_class.get(&self.symbol(class).name).map(Vec::as_slice).unwrap_or_default()
    }

    /// Whether a Python method's class, or a base of it the repo defines, derives from a class
    /// the repo does not define and the language does not build in (`class
    /// BeautifulSoupHTMLParser(HTMLParser)`, html.parser's): that base's code may call the
    /// method on `self` (`handle_starttag` as it parses), which no name in the repo shows.
    /// Not an exception's (its methods are called by name) nor one of the typing and
    /// enumeration bases, which call no method of their subclasses' own.
    pub fn extends_an_outside_class(&self, member: SymbolRef) -> bool {
        const CALL_NOTHING: &[&str] = &[
            "ABC",
            "Enum",
            "Flag",
            "Generic",
            "IntEnum",
            "IntFlag",
            "NamedTuple",
            "Protocol",
            "StrEnum",
            "TestCase",
            "TypedDict",
            "object",
            "type",
        ];
        let s = self.symbol(member);
        if self.codes[member.0 as usize].language != "python" || !s.kind.is_callable() {
            return false;
        }
        let Some(&class) = split_qualifier(&s.container).last() else { return false };
        let calls_its_subclasses = |t: &str| {
            !names_an_exception(t) && !CALL_NOTHING.contains(&t) && !crate::code::builtins::is_builtin_base("python", t)
        };
        let outside = self.find_in_type_and_bases(class, |t| {
            let classes: Vec<SymbolRef> = self
                .defs_by_name
                .get(t)
                .map(|defs| defs.iter().copied().filter(|&r| self.symbol(r).kind.is_container()).collect())
                .unwrap_or_default();
            // A base no file of the repo defines (a name from a star import, a built-in).
            if t != class && classes.is_empty() {
                return calls_its_subclasses(t).then_some(());
            }
            // A base written as the library's (`click.Command`, `HTMLParser` imported from
            // html.parser), though the repo has a class of that name too (cloup's `Command`).
            classes
                .iter()
                .any(|&r| {
                    let written = parenthesized(&self.symbol(r).signature).unwrap_or("");
                    written.split(',').map(str::trim).filter(|b| !b.contains('=')).any(|b| {
                        let head = b.split('.').next().unwrap_or(b);
                        let last = b.split('[').next().unwrap_or(b).rsplit('.').next().unwrap_or(b);
                        self.imported_from_outside(r.0, head) && calls_its_subclasses(last)
                    })
                })
                .then_some(())
        });
        outside.is_some()
    }

    /// Whether `str()` of a Python class's value runs its `__repr__`: neither it nor a base
    /// defines `__str__`, and it is no exception (`BaseException.__str__` shows the arguments).
    pub fn str_falls_back_to_repr(&self, class: SymbolRef) -> bool {
        let strs = self.defs_by_name.get("__str__").map(Vec::as_slice).unwrap_or(&[]);
        let own_str = self.find_in_type_and_bases(&self.symbol(class).name, |t| {
            (names_an_exception(t) || strs.iter().any(|&r| self.is_member_of(r, t))).then_some(())
        });
        own_str.is_none()
    }

    /// The set-up methods that run before a Python test method (`setUp`, `setup_method`, …),
    /// its class's own and its bases': what they build, the test has (transitions'
    /// `self.machine_cls = Machine` in `setUp`, then `self.machine_cls(…)` in each test).
    pub fn set_ups(&self, method: SymbolRef) -> Vec<SymbolRef> {
        const SET_UPS: &[&str] = &["setUp", "asyncSetUp", "setUpClass", "setup_method", "setup_class", "setup"];
        let s = self.symbol(method);
        let Some(&class) = split_qualifier(&s.container).last() else { return Vec::new() };
        if self.code(method.0).language != "python" || !s.kind.is_callable() || SET_UPS.contains(&s.name.as_str()) {
            return Vec::new();
        }
        let named: Vec<SymbolRef> =
            SET_UPS.iter().flat_map(|n| self.defs_by_name.get(*n).into_iter().flatten().copied()).collect();
        if named.is_empty() {
            return Vec::new();
        }
        let mut found = Vec::new();
        self.find_in_type_and_bases(class, |t| {
            found.extend(named.iter().copied().filter(|&r| self.is_member_of(r, t)));
            None::<()>
        });
        found
    }

    /// Places where `target`'s class or one of its bases calls a member of `self` named only
    /// at run time (`getattr(self, name)` in `BaseRenderer._get_method`): the template a
    /// subclass fills in with its own methods (`HTMLRenderer.text`), any of which such a place
    /// may run. `named`: something names the method directly.
    pub(super) fn dispatch_uses(&self, target: SymbolRef, confidence: f32, named: bool) -> Vec<Use> {
        let s = self.symbol(target);
        if s.container.is_empty() || !s.kind.is_callable() {
            return Vec::new();
        }
        // A class a test file defines runs in that test, which uses it directly; its methods
        // reached through the library's dispatch would lead on to every user of the library.
        let (path, language) = (&self.paths[target.0 as usize], &self.codes[target.0 as usize].language);
        if crate::code::test_files::is_test_file(path, language) {
            return Vec::new();
        }
        // `*` (any name) and `*visit_` (a name with that prefix: `getattr(self, f"visit_{kind}")`).
        let places: Vec<(u32, u32)> = self
            .dispatch_names
            .iter()
            .filter(|d| s.name.starts_with(&d[crate::code::DISPATCH_NAME.len()..]))
            .flat_map(|d| self.uses_by_name.get(d).into_iter().flatten().copied())
            .collect();
        if places.is_empty() {
            return Vec::new();
        }
        // The class itself when nothing names the method (a handler only found by name, like
        // a checker's `FUNCTIONDEF`; one called by name is not what a dispatch is there for),
        // then its bases as the class's file sees them: a test's own `class
        // Validator(Schema)` is not the `Validator` that `validate.py`'s `class
        // Equal(Validator)` derives from.
        let own = split_qualifier(&s.container).last().map(|c| c.to_string()).filter(|_| !named);
        let mut bases: Vec<String> = own.into_iter().collect();
        let mut classes: Vec<SymbolRef> = self.codes[target.0 as usize]
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind.is_container() && c.qualified_name == s.container)
            .map(|(i, _)| (target.0, i as u32))
            .collect();
        let mut i = 0;
        while i < classes.len() && i < MAX_BASES {
            let r = classes[i];
            i += 1;
            for base in base_names(&self.symbol(r).signature) {
                let named: Vec<SymbolRef> = self
                    .defs_by_name
                    .get(&base)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&d| self.symbol(d).kind.is_container() && !classes.contains(&d))
                    .collect();
                let visible = self.visible_files(r.0, &base);
                let seen: Vec<SymbolRef> =
                    named.iter().copied().filter(|d| d.0 == r.0 || visible.contains(&d.0)).collect();
                classes.extend(if seen.is_empty() { named } else { seen });
                bases.push(base);
            }
        }
        places
            .into_iter()
            .filter_map(|(f, o)| {
                let occ = &self.codes[f as usize].occurrences[o as usize];
                let container = self.enclosing_container(f, occ)?;
                let last = *split_qualifier(container).last()?;
                bases.iter().any(|b| b == last).then(|| Use::at(f, o, occ, confidence, Resolution::QualifiedPath))
            })
            .collect()
    }

    /// Where a class's method that nothing in the repo names may run: wherever the class is
    /// used. Code outside the repo calls it on the class's instances: a framework's visitor
    /// (`this.visit(cst)` finds `expr` by the node's name), a base class's template method
    /// (`Thread.start` runs `run`, `JSONEncoder.encode` runs `default`), a callback named by
    /// a string. JavaScript/TypeScript classes (cel-js' `CelVisitor` over chevrotain's base:
    /// its first held-out run 0.219 → 0.781 recall; typed-binary's schemas, called through an
    /// interface the code does not type: 0.629 → 0.868). Not Python's: `getattr` dispatch has
    /// its own rule, and there a method whose common name resolves to nothing led to every
    /// user of its class (tune precision 0.570 → 0.474, blind11 wtforms 0.291 → 0.235). Not a
    /// constructor, nor a test file's class (its test uses it).
    pub(super) fn unnamed_method_uses(&self, target: SymbolRef, min_confidence: f32) -> Vec<Use> {
        let s = self.symbol(target);
        let (path, language) = (&self.paths[target.0 as usize], self.codes[target.0 as usize].language.as_str());
        if !matches!(language, "javascript" | "typescript" | "tsx")
            || s.container.is_empty()
            || !matches!(s.kind, SymbolKind::Method | SymbolKind::Function)
            || crate::code::test_files::is_test_file(path, language)
        {
            return Vec::new();
        }
        let Some(class) = self.codes[target.0 as usize]
            .symbols
            .iter()
            .position(|c| c.kind == SymbolKind::Class && c.qualified_name == s.container)
        else {
            return Vec::new();
        };
        let class = (target.0, class as u32);
        let name = split_qualifier(&s.container).last().copied().unwrap_or_default();
        self.uses(class, min_confidence)
            .iter()
            // The class's own code naming it (`return new Visitor()` in a method) is not a use
            // from outside.
            .filter(|u| {
                u.file != class.0 || u.enclosing.is_none_or(|e| e != class.1 && !self.is_member_of((u.file, e), name))
            })
            .map(|u| Use { confidence: u.confidence * DISPATCH_CONFIDENCE, ..*u })
            .filter(|u| u.confidence >= min_confidence)
            .collect()
    }

    /// Whether a definition is a member of a type named `ty` (by its container's last part).
    fn is_member_of(&self, r: SymbolRef, ty: &str) -> bool {
        split_qualifier(&self.symbol(r).container).last() == Some(&ty)
    }

    /// The type of what a qualifier ending in a call stands for: the call's result
    /// (`cmd.get_arguments()`), or with `[]` one of the elements it yields
    /// (`cmd.get_arguments()[]`: the type of `arg` in `for arg in cmd.get_arguments()`).
    pub(super) fn qualifier_type(&self, f: u32, occ: &Occurrence, qualifier: &str, depth: u32) -> Option<String> {
        let Some(walked) = qualifier.strip_suffix("[]") else {
            return self.call_type(f, occ, qualifier, depth, false);
        };
        // `for item in &self.items` where `items: Vec<Item>`: by the field's stated type.
        if let Some(field) = crate::code::extract::own_field_path(walked) {
            let def = self.own_field(f, occ, field)?;
            let go = self.code(def.0).language == "go";
            return crate::code::extract::element_type(self.field_text(def, field)?, go);
        }
        self.call_type(f, occ, walked, depth, true)
    }

    /// The field `name` of the type whose member holds `occ` (`self.name`), when that type
    /// declares exactly one.
    pub(super) fn own_field(&self, f: u32, occ: &Occurrence, name: &str) -> Option<SymbolRef> {
        let container = self.enclosing_container(f, occ)?;
        let named = self.defs_by_name.get(name)?;
        let fields: Vec<SymbolRef> = self
            .typed_members(split_qualifier(container).last()?, named)
            .into_iter()
            .filter(|&r| self.symbol(r).kind == SymbolKind::Field)
            .collect();
        match fields.as_slice() {
            [one] => Some(*one),
            // A field declared twice (in the class body and in `__init__`): the declaration
            // that states its type, when only one does.
            several => {
                let mut typed = several.iter().filter(|&&r| declared_type(&self.symbol(r).signature, name).is_some());
                typed.next().filter(|_| typed.next().is_none()).copied()
            }
        }
    }

    /// The type a call returns, by its callee's return annotation (`def make_parser(self) ->
    /// _OptionParser`, `fn new() -> Self`, `make(): Parser`) or, for a class, the class:
    /// `qualifier` is the call's text (`self.make_parser(ctx)`, `Parser::new()`). `None` when
    /// the callee is not found or its definitions disagree. With `element`, the type of the
    /// elements the result yields (`impl Iterator<Item = &Arg>`: `Arg`).
    fn call_type(&self, f: u32, occ: &Occurrence, qualifier: &str, depth: u32, element: bool) -> Option<String> {
        if !qualifier.ends_with(')') {
            return None;
        }
        let callee = &qualifier[..call_start(qualifier)?];
        let (receiver, name) = match callee.rfind(['.', ':']) {
            Some(i) => (callee[..i].trim_end_matches(':'), &callee[i + 1..]),
            None => ("", callee),
        };
        // `self.blocks.front()` where `blocks: VecDeque<BlockContext>`: the element it hands
        // out (an `Option`'s value, so also what a callback on it is given).
        if self.codes[f as usize].language == "rust" && crate::code::extract::is_element_accessor(name) {
            let field = crate::code::extract::own_field_path(receiver);
            let accessed = field.and_then(|field| {
                crate::code::extract::accessed_type(self.field_text(self.own_field(f, occ, field)?, field)?)
            });
            if accessed.is_some() {
                return accessed;
            }
        }
        // `string().min(5)` where `string` is `create` imported under another name.
        let aliased = receiver.is_empty().then(|| self.aliased_names[f as usize].get(name)).flatten();
        let defs = match aliased {
            Some(definitions) => definitions,
            None => self.defs_by_name.get(name)?,
        };
        let receiver_parts = split_qualifier(receiver);
        let receiver_last = receiver_parts.last().copied().unwrap_or("");
        let receiver_last =
            if receiver_parts.len() == 1 { self.own_type_name(f, receiver_last) } else { receiver_last };
        let candidates: Vec<SymbolRef> = if aliased.is_some() {
            defs.clone()
        } else if receiver.is_empty() {
            // A pytest fixture's value (`db()` for a test's `db` parameter) comes from a
            // `conftest.py` above the test too.
            let visible = self.visible_files(f, name);
            let python = self.codes[f as usize].language == "python";
            let top_level: Vec<SymbolRef> = defs
                .iter()
                .copied()
                .filter(|&r| r.0 == f || visible.contains(&r.0) || (python && self.conftest_above(f, r.0)))
                .filter(|&r| self.is_top_level(r))
                .collect();
            // A test class's own fixture (`@pytest.fixture def db(self)`) gives a test method's
            // `db` parameter: a bare call in a method never means a method otherwise, so
            // this is tried only when no function of the name is in scope.
            match self.enclosing_container(f, occ) {
                Some(container) if python && top_level.is_empty() => {
                    self.typed_members(split_qualifier(container).last()?, defs)
                }
                _ => top_level,
            }
        } else if matches!(receiver, "self" | "cls" | "this" | "Self") {
            let container = self.enclosing_container(f, occ)?;
            self.typed_members(split_qualifier(container).last()?, defs)
        } else if (receiver.ends_with(')') || receiver.ends_with("[]")) && depth > 0 {
            self.value_members(f, occ, &self.qualifier_type(f, occ, receiver, depth - 1)?, defs)
        } else if names_a_type(receiver_last) {
            self.value_members(f, occ, receiver_last, defs)
        } else if let Some(field) = crate::code::extract::own_field_path(receiver) {
            // `self.args.args()`: a method of the type the field's declaration states.
            let ty = declared_type(&self.symbol(self.own_field(f, occ, field)?).signature, field)?;
            self.value_members(f, occ, &ty, defs)
        } else if let Some(files) = self.bindings[f as usize].get(receiver) {
            // `gast.NewString(…)`, `core.make()`: a function of an imported module.
            defs.iter().copied().filter(|&r| files.contains(&r.0) && self.is_top_level(r)).collect()
        } else {
            return None;
        };
        // `Ast::Group(#0)`: what a pattern bound to the variant's first field (the extractor's
        // `note_variant_fields`), of the type its declaration states (`Group(Box<Group>)`).
        if let Some(field) = qualifier[callee.len()..].strip_prefix("(#").and_then(|r| r.strip_suffix(')')) {
            let Ok(index) = field.parse::<usize>() else {
                // `Expr::Literal(#val)`, `Point(#x)`: a named field of a struct variant or a
                // struct, declared inside its braces.
                return self.named_field_type(&candidates, field);
            };
            let variant = candidates.iter().find(|&&r| self.symbol(r).kind == SymbolKind::EnumMember)?;
            return variant_field_type(&self.symbol(*variant).signature, index);
        }
        // A call means a method or a type, not a field of the same name (`long` beside
        // `fn long(self, …) -> Self`).
        let called: Vec<SymbolRef> =
            candidates.into_iter().filter(|&r| self.symbol(r).kind != SymbolKind::Field).collect();
        let mut found: Option<String> = None;
        for &r in &called {
            let s = self.symbol(r);
            let language = &self.code(r.0).language;
            // An overload set (TypeScript's signatures, then a body that states no type): the
            // signatures say what it returns.
            let overloaded =
                || called.iter().any(|&o| o != r && o.0 == r.0 && self.symbol(o).qualified_name == s.qualified_name);
            // A body that builds and returns one class (`return new ArraySchema(…)`): that class.
            let built = || self.code(r.0).returns.iter().find(|(i, _)| *i == r.1).map(|(_, class)| class.clone());
            // A pytest fixture that yields (`-> Iterator[Client]`) gives what it yields.
            let stated = return_type(&s.signature, language).filter(|_| language != "python" || built().is_none());
            if !element && !s.kind.is_container() && stated.is_none() {
                // `make(Clean)` of a `make` that builds the class passed at that place.
                let built = || {
                    let class = built()?;
                    match class.strip_prefix(crate::code::extract::PASSED_CLASS) {
                        Some(at) => passed_class(qualifier, at.parse().ok()?).map(str::to_string),
                        None => Some(class),
                    }
                };
                if let Some(class) = built() {
                    if found.as_ref().is_some_and(|t| *t != class) {
                        return None;
                    }
                    found = Some(class);
                    continue;
                }
                if overloaded() {
                    continue;
                }
            }
            let ty = if element {
                // `impl Iterator<Item = Self>`: the type the method belongs to.
                let own = split_qualifier(&s.container).last().copied().unwrap_or("Self");
                let elements = self_as(return_text(&s.signature, language)?, own);
                crate::code::extract::element_type(&elements, language == "go")?
            } else if s.kind.is_container() {
                s.name.clone()
            } else {
                return_type(&s.signature, language)?
            };
            let ty = if ty == "Self" && !s.kind.is_container() {
                split_qualifier(&s.container).last()?.to_string()
            } else {
                ty
            };
            if found.as_ref().is_some_and(|t| *t != ty) {
                return None;
            }
            found = Some(ty);
        }
        found
    }
}

/// Base types followed from a typed receiver to the type that defines a member, at most.
const MAX_BASES: usize = 16;
/// Most `__getattr__` hand-ons followed from one type (`typed_members`).
const MAX_DELEGATIONS: usize = 2;

thread_local! {
    /// Whether this thread is typing a `__getattr__`'s value (`CodeGraph::delegate_type`).
    static DELEGATING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl CodeGraph {
    /// The type the declaration of field `field` states, of the struct variant or the struct
    /// among `candidates` (a variant's fields are the enum's members, inside its lines).
    fn named_field_type(&self, candidates: &[SymbolRef], field: &str) -> Option<String> {
        candidates.iter().find_map(|&r| {
            let owner = self.symbol(r);
            let (container, lines) = match owner.kind {
                SymbolKind::EnumMember => (owner.container.as_str(), owner.line..=owner.end_line),
                kind if kind.is_container() => (owner.qualified_name.as_str(), owner.line..=owner.end_line),
                _ => return None,
            };
            let declared = self.code(r.0).symbols.iter().find(|s| {
                s.name == field
                    && s.container == container
                    && matches!(s.kind, SymbolKind::Field | SymbolKind::EnumMember)
                    && lines.contains(&s.line)
                    && s.line != owner.line
            })?;
            declared_type(&declared.signature, field)
        })
    }
}

/// Members the code says the type of, as candidates: sure, shared among them.
fn sure_candidates(found: Vec<SymbolRef>) -> Vec<Candidate> {
    let confidence = 0.85 / found.len().max(1) as f32;
    found.into_iter().map(|symbol| Candidate { symbol, resolution: Resolution::QualifiedPath, confidence }).collect()
}
