//! What depends on a set of definitions, and which tests reach them: a breadth-first walk
//! backwards over the graph's resolved uses (a use inside a definition makes that definition
//! a dependent), with each dependent's path back to the change and the product of the
//! confidences along it. Tests are found by each language's conventions, at the end of such
//! paths.

mod broken;
mod keys;
mod makers;
mod seeds;
mod steps;
mod tests_listed;

use std::collections::{HashMap, HashSet};

use super::graph::{CodeGraph, SymbolRef};
use super::{GuardTest, UseKind, SERDE_SHAPES};
pub use broken::broken_imports;
use keys::{foreign_self_type, same_key};
pub use keys::{names_key, required_enablers, required_key};
use makers::{makes_instance, named_outside, names_type};
pub use seeds::{
    add_implied_seeds, drop_tests_a_guard_keeps_off, is_constructor, macro_seeds, owning_type, type_seeds,
};
use seeds::{
    called_by_name, is_debug_impl, language_trait_type, marked_override, named_where_it_runs, owner_if_constructor,
};
use steps::{
    declares, guarded, guesses_receivers, held_uses, installed_uses, internal_step, leads_on, makes_no_value,
    on_failure, only_iterated, redecorates, runs_at_import, runs_on_instances, runs_where_named, self_writers,
};
use tests_listed::{expects_failure, failure_helpers, inherited_tests, uncollected_test};

/// Where a walk starts: a changed definition still in the graph, or a name whose definition
/// is gone (its uses now resolve to nothing).
#[derive(Debug, Clone)]
pub struct Seed {
    pub symbol_opt: Option<SymbolRef>,
    /// The definition's name, for the uses of one that is gone.
    pub name: String,
    /// How the seed is shown at the end of a `via` path.
    pub label: String,
    /// Only the uses that make an instance lead on: calls (`Cart(…)`) and subclasses
    /// (`class Basket(Cart)`). A special method's type is a seed so: `__repr__` runs on an
    /// instance, not where the class is named.
    pub instances_only: bool,
    /// Of those, only instances a declaration or a test makes (a field in a class body,
    /// `String()` in a test), not one a function makes as it goes (`convert_type`'s
    /// `Tuple(…)`): what binds an override to the base code that calls it.
    pub declared_only: bool,
    /// See `Reached::needs_operation`: the class of a special method an operation runs
    /// (`__repr__`, `__sub__`) as a seed.
    pub needs_operation: u32,
    /// See `Reached::key`: another crate's trait method's type as a seed (`MustName::Method`).
    pub key: Option<MustName>,
}

impl Seed {
    /// A seed whose every use leads on (no instance, format or key to wait for).
    pub fn plain(symbol_opt: Option<SymbolRef>, name: &str, label: &str) -> Self {
        Seed {
            symbol_opt,
            name: name.to_string(),
            label: label.to_string(),
            instances_only: false,
            declared_only: false,
            needs_operation: 0,
            key: None,
        }
    }
}

/// A word a test file must name for a path to run there (`Reached::key`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MustName {
    /// A Python dict entry of a string key (`"wordcount": do_wordcount`, `FileCode::keyed`), as
    /// (file, occurrence) of the entry's value: what the table holds runs where the key is
    /// looked up.
    TableKey(u32, u32),
    /// A method of another crate's trait (`Roots::cbrt`), reached through its type: it runs
    /// where code calls it by name, on a value of that type. Also a JavaScript method held in
    /// a function under a built-in method's name (`runs_where_named`), reached through its
    /// holder; a proxy's `deleteProperty` trap is named by `delete`.
    Method(SymbolRef),
    /// A Rust trait method implemented for a type the repo does not define (bincode's `impl
    /// Decode for u16`), reached through the trait's dispatch: a test runs it only where its
    /// file names the type (`5u16`, `Option<u16>`); the word is the type's name.
    ForeignSelf(SymbolRef),
    /// A Python use, as (file, occurrence), under a condition that holds only when an
    /// attribute the repo leaves off is set (`if meta.csrf:`, `FileCode::guarded`): a test runs
    /// it only where the test names the attribute; the word is the attribute's name.
    Guard(u32, u32),
}

impl MustName {
    /// The word itself.
    pub fn text(self, graph: &CodeGraph) -> Option<&str> {
        match self {
            MustName::TableKey(f, o) => graph.code(f).key_of(o),
            // A proxy's `deleteProperty` trap runs where code deletes a property.
            MustName::Method(m) if graph.symbol(m).name == "deleteProperty" => Some("delete"),
            MustName::Method(m) => Some(graph.symbol(m).name.as_str()),
            MustName::ForeignSelf(m) => foreign_self_type(graph, m),
            MustName::Guard(..) => self.guard(graph).map(|(word, _)| word),
        }
    }

    /// A guard's word and what its condition tests of it (`MustName::Guard`).
    fn guard(self, graph: &CodeGraph) -> Option<(&str, GuardTest)> {
        let MustName::Guard(f, o) = self else { return None };
        graph.code(f).guards_of(o).find(|&guard| graph.guard_off(f, guard)).map(|(word, test, _)| (word, test))
    }
}

/// A definition (or a file, for uses outside any definition) the walk reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Reached {
    pub file: u32,
    /// Index of the definition in its file; `None`: a use at file level (an import, a
    /// top-level call, a test framework's callback).
    pub symbol_opt: Option<u32>,
    /// The definition's first line, or the first such use's line at file level.
    pub line: u32,
    pub depth: u32,
    /// The hops that count toward the tests' bound (`WalkLimits::test_depth`): a private
    /// method's call by another private method of its type is a step inside one object's work,
    /// not a hop further from the API a test calls (pycparser's recursive descent:
    /// `_parse_array_decl` is eight private calls below `CParser.parse`). `depth` counts all.
    pub hops: u32,
    /// The product of the uses' confidences along the path.
    pub confidence: f32,
    /// The weakest use on the path.
    pub weakest: f32,
    /// The names from the next hop to the changed definition it leads to.
    pub via: Vec<String>,
    pub test: bool,
    /// At file level: the line is an import's (no other use seen yet).
    pub by_import: bool,
    /// Reached through a trait's method from one implementation of it, and nothing on the
    /// path since names the implementing type: the dispatch may run another implementation.
    pub requires: Option<SymbolRef>,
    /// Reached from a special method an operation runs (a Python `__repr__`, `__sub__`,
    /// `__deepcopy__`; Rust's `Display::fmt`) through its type, and nothing on the path since
    /// does so to a value (`FileCode::operations`): a test here makes the value but never
    /// prints it (subtracts from it, copies it), and runs no such method.
    pub needs_operation: u32,
    /// Reached through a Python dict entry of a string key, or through the type of another
    /// crate's trait method (`MustName`): a test runs it only where its file names the word
    /// (`names_key`; the caller reads the test files). `None` once another path, without a
    /// word or with another, reaches the same place.
    pub key: Option<MustName>,
    /// The path runs in no test: through a call made as a Python module or class body runs, at
    /// import (`PATTERN = compile(…)`, a class attribute's `attr.ib(…)`: what reads the value
    /// does not run the call), or through code the default test run does not build (heapless'
    /// `#[cfg(feature = "serde")] mod de;`, a feature off by default). It still leads to
    /// dependents.
    pub runs_in_no_test: bool,
    /// Every hop of the path is a call of the hop before (the changed code runs whenever the
    /// definition reached runs), not a reference stored to run later (`property(fget, fset)`).
    pub calls_only: bool,
    /// Every path here goes through code that runs only when something fails
    /// (`FileCode::failure_spans`: `Err(…)`'s argument, a `map_err` closure): a test runs it
    /// only when it makes something fail (`FileCode::expects_failure`).
    pub failing: bool,
}

impl Reached {
    /// A test the diff itself changes or adds (definition `index` of `file`, or the file's
    /// code at `line`): it runs to prove the change as surely as anything it reaches.
    pub fn changed_test(file: u32, symbol_opt: Option<u32>, line: u32) -> Self {
        Reached {
            file,
            symbol_opt,
            line,
            depth: 0,
            hops: 0,
            confidence: 1.0,
            weakest: 1.0,
            via: Vec::new(),
            test: true,
            by_import: false,
            requires: None,
            needs_operation: 0,
            key: None,
            runs_in_no_test: false,
            calls_only: true,
            failing: false,
        }
    }
}

/// How far and how sure a walk goes.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    /// Hops for dependents.
    pub depth: u32,
    /// Hops for tests (tests often reach code through helpers and fixtures).
    pub test_depth: u32,
    /// A dependent's every use on its path at least this sure.
    pub min_confidence: f32,
    /// A test's every use on its path at least this sure.
    pub test_min_confidence: f32,
    /// Most definitions visited: a hub's dependents are cut here (and the answer says so).
    pub max_visited: usize,
    /// Most uses followed in all (each definition expanded costs its resolved uses): what
    /// bounds the time of a walk through hubs (`poll`, `new`) once the graph has resolved
    /// every use (`CodeGraph::resolve_all`), and the size of its answer.
    pub max_work: usize,
    /// From a changed method, the confidence of a call through an object of unknown type
    /// that names it (`item.as_string()`) when the name is defined too often to resolve;
    /// 0 follows none.
    pub member_guess: f32,
}

pub struct Walk {
    /// Dependents that are not tests, nearest and surest first.
    pub dependents: Vec<Reached>,
    /// Tests, surest first.
    pub tests: Vec<Reached>,
    /// The walk stopped at `max_visited`.
    pub truncated: bool,
}

/// A definition of the level being expanded, with the path that reached it.
struct Step<'a> {
    node: Option<SymbolRef>,
    instances_only: bool,
    declared_only: bool,
    /// For a seed that is gone: the name its uses still give.
    name: &'a str,
    confidence: f32,
    weakest: f32,
    /// See `Reached::hops`.
    hops: u32,
    via: Vec<String>,
    /// See `Reached::requires`.
    requires: Option<SymbolRef>,
    /// See `Reached::needs_operation`.
    needs_operation: u32,
    /// See `Reached::key`.
    key: Option<MustName>,
    /// See `Reached::runs_in_no_test`.
    runs_in_no_test: bool,
    /// See `Reached::calls_only`.
    calls_only: bool,
    /// See `Reached::failing`.
    failing: bool,
}

/// Walks backwards from `seeds`, as if the default test run built all the code.
pub fn walk(graph: &CodeGraph, seeds: &[Seed], limits: WalkLimits) -> Walk {
    walk_built(graph, seeds, limits, &mut |_, _| true)
}

/// Walks backwards from `seeds`; `builds` says whether the default test run builds a
/// definition (or a file's top level): a path through code it leaves out leads to
/// dependents, not tests.
pub fn walk_built(
    graph: &CodeGraph,
    seeds: &[Seed],
    limits: WalkLimits,
    builds: &mut dyn FnMut(u32, Option<u32>) -> bool,
) -> Walk {
    // The work bound counts uses followed: cheap to count once every use is resolved.
    graph.resolve_all();
    let floor = limits.min_confidence.min(limits.test_min_confidence);
    let levels = limits.depth.max(limits.test_depth);
    // Steps inside one object's work are free (`Reached::hops`): up to as many levels again.
    let max_levels = 2 * levels;
    let mut reached: HashMap<(u32, Option<u32>), Reached> = HashMap::new();
    // The seeds themselves are never their own dependents.
    let seed_keys: Vec<(u32, Option<u32>)> =
        seeds.iter().filter_map(|s| s.symbol_opt.map(|(f, i)| (f, Some(i)))).collect();
    let mut frontier: Vec<Step> = seeds
        .iter()
        .map(|s| Step {
            node: s.symbol_opt,
            instances_only: s.instances_only,
            declared_only: s.declared_only,
            name: s.name.as_str(),
            confidence: 1.0,
            weakest: 1.0,
            hops: 0,
            via: vec![s.label.clone()],
            requires: None,
            needs_operation: s.needs_operation,
            key: s.key,
            runs_in_no_test: s.symbol_opt.is_some_and(|(f, i)| !builds(f, Some(i))),
            calls_only: true,
            // A function that only raises (an abstract base's stub) fails wherever it runs.
            failing: s.symbol_opt.is_some_and(|(f, i)| graph.code(f).always_fails.contains(&i)),
        })
        .collect();
    let mut truncated = false;
    let mut work = 0usize;
    let mut dispatched: HashSet<SymbolRef> = HashSet::new();
    // Per type, the definitions (and files, at file level) that name it.
    let mut named_by: HashMap<SymbolRef, std::collections::HashSet<(u32, Option<u32>)>> = HashMap::new();
    for depth in 1..=max_levels {
        let mut next: HashMap<(u32, Option<u32>), Reached> = HashMap::new();
        // Definitions reached before only where something fails, now by a path that does not
        // fail: walked again, so what they lead to is cleared too (once each).
        let mut cleared: Vec<(u32, Option<u32>)> = Vec::new();
        for Step {
            node,
            instances_only,
            declared_only,
            name,
            confidence,
            weakest,
            hops,
            via,
            requires,
            needs_operation,
            key: table_key,
            runs_in_no_test,
            calls_only,
            failing,
        } in &frontier
        {
            // Where the uses guessed by name (`x.enter(…)` on an object of unknown type) sit in
            // `uses`: on the way up from them, see `guess_type`.
            let mut guessed = 0..0;
            let uses = match node {
                Some(target) if limits.member_guess > 0.0 && guesses_receivers(graph, *target) => {
                    let mut uses = graph.uses(*target, floor).as_ref().clone();
                    let (name, language) = (&graph.symbol(*target).name, &graph.code(target.0).language);
                    let start = uses.len();
                    uses.extend(graph.unresolved_member_uses(name, language, limits.member_guess));
                    guessed = start..uses.len();
                    std::sync::Arc::new(uses)
                }
                Some(target) => graph.uses(*target, floor),
                None => std::sync::Arc::new(graph.dangling_uses(name)),
            };
            // The uses that run this definition itself (not its function's, type's or trait's):
            // where one is a call made at import, the definition runs in no test.
            let direct = uses.len();
            let callable = node.is_some_and(|t| graph.symbol(t).kind.is_callable());
            // A definition local to a function runs once the function has: a proxy's traps,
            // a callback handed to a library, a closure returned. A JavaScript function
            // nothing calls by name may run as a method (mixed into a class's prototype).
            let held = node.and_then(|t| held_uses(graph, t, limits.member_guess, floor));
            // Of those, a method named after one the language's own objects have (a proxied
            // array's `unshift`, a proxy's `deleteProperty` trap) runs where code uses that
            // name (`list.unshift(…)`, `delete obj.key`), not wherever its holder runs: the
            // holder's uses lead on waiting for the name (`MustName::Method`).
            let held_named = node.filter(|&t| held.is_some() && runs_where_named(graph, t));
            let mut held_only = 0..0;
            let installed =
                node.filter(|_| held.is_none()).and_then(|t| installed_uses(graph, t, &uses, limits.member_guess));
            let held = held.or(installed).unwrap_or_default();
            // A constructor runs where its type is built (`Option(…)` names the class, not
            // `__init__`): the type's uses lead on from it.
            // (The seeds' types are seeds of their own.)
            // So does a property's setter where the property is used (its uses name the
            // getter, the first definition).
            let built = node.and_then(|t| owner_if_constructor(graph, t)).filter(|_| depth > 1);
            let same_attribute = node.and_then(|t| graph.first_definition(t));
            let python_node = node.is_some_and(|t| graph.code(t.0).language == "python");
            let runs_by_name = python_node
                && node.is_some_and(|t| {
                    let kind = graph.symbol(t).kind;
                    kind.is_callable() || kind.is_container()
                });
            let setter = same_attribute.is_some() && node.is_some_and(|t| graph.is_property_setter(t));
            // A setter runs where its class's methods assign the attribute on `self` (which
            // the graph holds as the attribute's definitions, not uses): where `__init__`'s
            // class is made, where another such method is called.
            let self_writers: Vec<(SymbolRef, bool)> =
                node.filter(|_| setter).map(|t| self_writers(graph, t)).unwrap_or_default();
            // And a JavaScript definition where its `.d.ts` declaration is used.
            let declaration = node.and_then(|t| graph.declaration_of(t));
            // And a Rust trait's implementation where the trait's method is called (a
            // `V: Visitor`'s `visitor.visit_post()` runs `TranslatorI::visit_post`).
            // Only along paths that build the implementing type somewhere (`translate` makes a
            // `TranslatorI`; the printer's `visit` call runs another visitor).
            // A Go method likewise where a method of an interface its type satisfies is called.
            // And a Python method where its base's method is called (bs4's `self.builder.feed(…)`
            // on a `TreeBuilder` runs `HTMLParserTreeBuilder.feed`), on the same condition.
            let through: Vec<SymbolRef> = node
                .map(|t| {
                    let through = graph.dispatched_through(t);
                    if through.is_empty() {
                        graph.overridden_methods(t)
                    } else {
                        through
                    }
                })
                .unwrap_or_default();
            let trait_uses = match through.as_slice() {
                [] => std::sync::Arc::new(Vec::new()),
                [m] => graph.uses(*m, floor),
                many => std::sync::Arc::new(many.iter().flat_map(|&m| graph.uses(m, floor).as_ref().clone()).collect()),
            };
            // (Not when the trait method has one implementation in the repo: no other can run.)
            let alone = matches!(through.as_slice(), [m] if graph.implementation_count(*m) == 1);
            let implementer = node.filter(|_| !through.is_empty() && !alone).and_then(|t| graph.member_type(t));
            // (When the implementing type is not the repo's, its name is what a test must say.)
            // Not a type the repo makes a default (`type DefaultIx = u32;`, `struct Graph<…, Ix
            // = DefaultIx>`): a test of `Graph::new()` uses it without naming it.
            let foreign_self = node
                .filter(|_| !through.is_empty() && !alone && implementer.is_none())
                .filter(|&t| {
                    foreign_self_type(graph, t).is_some_and(|name| !graph.rust_defaulted_types().contains(name))
                })
                .map(MustName::ForeignSelf);
            // A Python method reached by a guess at the object's type (a call of its name on
            // an object nothing types, among too many definitions to match by name), where
            // other classes define a method of that name (transitions' `Timeout.enter` among
            // the states' `enter`s, all called as `dest.enter(…)`): like a trait's dispatch,
            // the path waits for a place that names its class. (Also for a member matched by
            // name among a few: Python tune 0.915 / 0.618 → 0.905 / 0.616, blind5 0.862 / 0.574
            // → 0.839 / 0.582; click's `result.output` is made by `runner.invoke`, itself
            // reached by a guess.)
            // (Not for a class nothing in the repo names outside its own methods: what makes
            // it is out of sight, a library's factory, and the guess is all there is.)
            // (Asked only where there are guesses: the class's uses are read to answer it.)
            let guess_type = node
                .filter(|&t| !guessed.is_empty() && graph.code(t.0).language == "python" && graph.has_namesakes(t))
                .and_then(|t| graph.member_type(t))
                .filter(|&ty| named_outside(graph, ty));
            // So does a Rust method of a trait the repo does not declare (`PartialEq::eq`,
            // `Drop::drop`, `Clone::clone`): the language runs it where its type is used.
            // Not `Debug::fmt` on the way: what it calls (`Request::fmt` → `self.method()`)
            // runs where a value is printed with `{:?}` or an assertion fails, not wherever the
            // type is named.
            let language_runs = node
                .filter(|&t| depth > 1 && !is_debug_impl(graph, t) && !called_by_name(graph, t))
                .and_then(|t| language_trait_type(graph, t));
            // A Python base calls an `@override` method on an instance: where one is made.
            let overrides = node.is_some_and(|t| marked_override(graph, t));
            // So does a library's base class on a method of its subclass in the repo
            // (html.parser's `feed` runs a parser's `handle_data`), as a seed of it does.
            let outside_base = node
                .filter(|&t| depth > 1 && language_runs.is_none() && graph.extends_an_outside_class(t))
                .and_then(|t| graph.member_type(t));
            // And a Python iterator's `__iter__` (`__next__`) met on the way, of a class that offers
            // nothing but iteration: its instances are made to be read (petl's `StackView.__iter__`
            // runs `iterstack` where a test builds the view with `stack()` and reads it).
            let leaf_special = node
                .filter(|&t| {
                    depth > 1 && language_runs.is_none() && outside_base.is_none() && runs_on_instances(graph, t)
                })
                .and_then(|t| graph.member_type(t))
                .filter(|&class| only_iterated(graph, class));
            let instances_run = language_runs.filter(|_| overrides).or(outside_base);
            let language_runs = language_runs.filter(|_| !overrides);
            // A Go `init` runs at load, called by no one: what it stores in package variables
            // runs where they are used.
            let stored = node.map(|t| graph.init_variables(t)).unwrap_or_default();
            // Another crate's trait method that the repo calls by name (`Roots::cbrt`) runs
            // where its type meets a call of its name: the type's uses lead on waiting for the
            // name (`MustName::Method`), as a seed of that type does.
            let named = node.filter(|&t| language_runs.is_some() && named_where_it_runs(graph, t));
            let mut named_only = 0..0;
            // A Python class's `__call__` runs where a module-level variable holding an
            // instance is called, from any module (`mistune.html(text)`; a call in the
            // variable's own file is recorded as a use of `__call__` already).
            // So does a class attribute holding one, or an instance of a subclass that does
            // not define its own (wtforms' `a = StringField()` in a form, called as
            // `form.a()`, runs `Field.__call__`).
            let holders: Vec<SymbolRef> = node
                .filter(|&t| graph.code(t.0).language == "python" && graph.symbol(t).name == "__call__")
                .and_then(|t| graph.member_type(t))
                .map(|class| {
                    let mut holders = graph.variables_holding(class).to_vec();
                    for sub in graph.subclasses_of(class) {
                        let own = graph
                            .code(sub.0)
                            .symbols
                            .iter()
                            .any(|m| m.name == "__call__" && m.container == graph.symbol(sub).qualified_name);
                        if !own {
                            holders.extend_from_slice(graph.variables_holding(sub));
                        }
                    }
                    // A metaclass's `__call__` runs where a class it makes is called (pint's
                    // `RegistryMeta` runs `_after_init` on every registry a test makes).
                    for made in graph.classes_of_metaclass(class) {
                        holders.push(made);
                        holders.extend(graph.subclasses_of(made));
                    }
                    holders
                })
                .unwrap_or_default();
            let before: Vec<SymbolRef> = built.into_iter().chain(same_attribute).chain(declaration).collect();
            let mut written_by = 0..0;
            let uses = if held.is_empty()
                && self_writers.is_empty()
                && holders.is_empty()
                && before.is_empty()
                && language_runs.is_none()
                && stored.is_empty()
                && instances_run.is_none()
                && leaf_special.is_none()
            {
                uses
            } else {
                let mut all = uses.as_ref().clone();
                let start = all.len();
                all.extend(held);
                if held_named.is_some() {
                    held_only = start..all.len();
                }
                for r in before {
                    all.extend(graph.uses(r, floor).iter().copied());
                }
                for &r in &holders {
                    all.extend(graph.uses(r, floor).iter().filter(|u| u.kind == UseKind::Call).copied());
                }
                if let Some(r) = language_runs {
                    let start = all.len();
                    all.extend(graph.uses(r, floor).iter().copied());
                    if named.is_some() {
                        named_only = start..all.len();
                    }
                }
                for r in stored {
                    all.extend(graph.uses(r, floor).iter().copied());
                }
                // A view is read where a test gets it: made in the test, or returned by a
                // factory (`stack()` returns `StackView(…)`), not one another object keeps.
                if let Some(r) = leaf_special {
                    let class = graph.symbol(r).name.as_str();
                    let handed_out = |u: &&super::graph::Use| {
                        graph.is_test_file(u.file)
                            || u.enclosing.is_some_and(|e| {
                                graph.code(u.file).returns.iter().any(|(i, built)| *i == e && built == class)
                            })
                    };
                    all.extend(
                        graph.uses(r, floor).iter().filter(|u| makes_instance(graph, u)).filter(handed_out).copied(),
                    );
                }
                if let Some(r) = instances_run {
                    all.extend(graph.uses(r, floor).iter().filter(|u| makes_instance(graph, u)).copied());
                }
                let start = all.len();
                for &(r, made) in &self_writers {
                    all.extend(graph.uses(r, floor).iter().filter(|u| !made || makes_instance(graph, u)).copied());
                }
                written_by = start..all.len();
                std::sync::Arc::new(all)
            };
            // Surest first: when the work runs out, what is left is the least sure. A use in a
            // test, or at a file's top level, ends its path, so a definition is cut only when
            // the uses that lead on do not fit: a helper that a thousand tests call
            // (pulldown-cmark's `test_markdown_html`) is still taken, and its tests spend what
            // is left. (Not counting them at all: Rust blind5 micro R / P 0.696 / 0.205 →
            // 0.799 / 0.177, Python tune 0.917 / 0.570 → 0.923 / 0.549; this way 0.773 / 0.209
            // and 0.910 / 0.570.)
            // A trait method's uses are paid for once: each implementation reached on the way
            // (bincode's `Option::decode` from `u16::decode`) dispatches through the same
            // `Decode::decode` calls, which lead to what the first expansion reached already.
            let trait_paid = !through.is_empty() && through.iter().all(|m| dispatched.contains(m));
            let trait_cost = if trait_paid { 0 } else { trait_uses.len() };
            let cost = uses.iter().filter(|u| leads_on(graph, u)).count()
                + if trait_paid { 0 } else { trait_uses.iter().filter(|u| leads_on(graph, u)).count() };
            if work + cost > limits.max_work {
                truncated = true;
                continue;
            }
            work += uses.len() + trait_cost;
            dispatched.extend(through.iter().copied());
            let own = uses.len();
            for (k, &u) in uses.iter().chain(trait_uses.iter()).enumerate() {
                // What the path still waits for: the implementing type, named by a definition.
                // A dispatch met while the path still waits for an earlier one's type keeps
                // waiting for that (goldmark's `strikethroughDelimiterProcessor.OnMatch` under
                // `Markdown.Convert`: a test that builds a `markdown` need not add the
                // strikethrough extension); once it is named, the new dispatch's type is waited for.
                let new_type = if k >= own {
                    implementer
                } else if guessed.contains(&k) {
                    guess_type
                } else {
                    None
                };
                let wanted = match (*requires, new_type) {
                    (earlier, None) => earlier,
                    (Some(earlier), Some(new)) if names_type(graph, &mut named_by, earlier, &u) => Some(new),
                    (earlier, new) => earlier.or(new),
                };
                let requires_now = wanted.filter(|&ty| !names_type(graph, &mut named_by, ty, &u));
                if *instances_only && !makes_instance(graph, &u) {
                    continue;
                }
                if makes_no_value(graph, &u) {
                    continue;
                }
                if *declared_only && !declares(graph, &u) {
                    continue;
                }
                if node.is_some_and(|t| redecorates(graph, t, &u)) {
                    continue;
                }
                // A Python import inside a function runs the module's top level, not the
                // function or class it names: a test that only imports a class (transitions'
                // `test_imports`) runs none of its methods. (A variable's value is the module's
                // top level: toolz's `test_tlz` makes the curried namespace's `curry`s by its
                // first `import tlz.curried`.)
                if runs_by_name
                    && u.kind == UseKind::Import
                    && u.enclosing.is_some_and(|e| graph.code(u.file).symbols[e as usize].kind.is_callable())
                {
                    continue;
                }
                // A Python property's setter runs where the attribute is written, its getter
                // (or a method) where it is read: `entry.key = k` runs no getter.
                let written = if python_node { graph.code(u.file).written_at(u.occurrence) } else { None };
                if if setter { written.is_none() && !written_by.contains(&k) } else { written == Some(false) } {
                    continue;
                }
                let key = (u.file, u.enclosing);
                let calls_now = *calls_only && callable && k < direct && u.kind == UseKind::Call;
                let no_test_now =
                    *runs_in_no_test || (calls_now && runs_at_import(graph, &u)) || !builds(u.file, u.enclosing);
                let failing_now = *failing || on_failure(graph, &u);
                // Only the tests' code counts: a library formats values on its own paths (an
                // error's message, a debug log) more often than on the one that made this value
                // (with a library's `%r`s and `repr`s too: Python blind12 precision 0.527 →
                // 0.513, blind5 recall 0.818 → 0.822).
                let done = if *needs_operation == 0 || !graph.is_test_file(u.file) {
                    0
                } else {
                    // A serde shape is the file's: its tests (de)serialize the types it declares.
                    let code = graph.code(u.file);
                    code.operations_in(u.enclosing) | (code.operations_in(None) & SERDE_SHAPES)
                };
                let needs_now = if done & *needs_operation != 0 { 0 } else { *needs_operation };
                // The first table's key on the path is the one a test must name. Not a key the
                // code names too: the table is then a namespace its code reads by that name
                // (attrs' `{"_is_comparable_to": _is_comparable_to}` made into a class's
                // methods, click's `{"func_name": self.func_name}` for a template).
                let key_now = table_key
                    .or(named.filter(|_| named_only.contains(&k)).map(MustName::Method))
                    .or(held_named.filter(|_| held_only.contains(&k)).map(MustName::Method))
                    .or(foreign_self.filter(|_| k >= own))
                    .or_else(|| {
                        let key = graph.code(u.file).key_of(u.occurrence);
                        key.filter(|key| !graph.names(key)).map(|_| MustName::TableKey(u.file, u.occurrence))
                    })
                    .or_else(|| guarded(graph, &u).then_some(MustName::Guard(u.file, u.occurrence)));
                if let Some(earlier) = reached.get_mut(&key) {
                    // Reached before through another implementation's dispatch; this path
                    // builds the type (the test runs this implementation too).
                    // (Cleared here, what it led to waits still: walked again, as below.)
                    let built_now = earlier.requires.is_some() && requires_now.is_none();
                    if built_now {
                        earlier.requires = None;
                    }
                    if !no_test_now {
                        earlier.runs_in_no_test = false;
                    }
                    // Either cleared, it is walked again, so what it leads to is cleared too.
                    let done_now = earlier.needs_operation != 0 && needs_now == 0;
                    let succeeds_now = earlier.failing && !failing_now;
                    let unkeyed_now = earlier.key.is_some() && !same_key(graph, earlier.key, key_now);
                    if done_now {
                        earlier.needs_operation = 0;
                    }
                    if succeeds_now {
                        earlier.failing = false;
                    }
                    if unkeyed_now {
                        earlier.key = None;
                    }
                    if (done_now || succeeds_now || unkeyed_now || built_now) && !cleared.contains(&key) {
                        cleared.push(key);
                    }
                    continue;
                }
                if seed_keys.contains(&key) || node.is_some_and(|t| key == (t.0, Some(t.1))) {
                    continue;
                }
                let total = confidence * u.confidence;
                let weakest = weakest.min(u.confidence);
                let hops = hops + u32::from(!node.is_some_and(|t| internal_step(graph, t, &u)));
                let code = graph.code(u.file);
                let (line, test) = match u.enclosing {
                    Some(e) => (code.symbols[e as usize].line, graph.is_test(u.file, e as usize)),
                    // Rust runs nothing at file level: an import is not a test.
                    None => (u.line, code.language != "rust" && graph.is_test_module(u.file)),
                };
                match next.get_mut(&key) {
                    Some(r) => {
                        // At file level a use past the imports says where (a test's callback),
                        // an import only that the file names the definition.
                        if r.symbol_opt.is_none() && r.by_import && u.kind != UseKind::Import {
                            (r.line, r.by_import) = (u.line, false);
                        }
                        if total > r.confidence {
                            (r.confidence, r.weakest, r.via) = (total, weakest, via.clone());
                        }
                        if requires_now.is_none() {
                            r.requires = None;
                        }
                        if needs_now == 0 {
                            r.needs_operation = 0;
                        }
                        if !same_key(graph, r.key, key_now) {
                            r.key = None;
                        }
                        if !no_test_now {
                            r.runs_in_no_test = false;
                        }
                        r.calls_only &= calls_now;
                        r.failing &= failing_now;
                        r.hops = r.hops.min(hops);
                    }
                    None => {
                        let by_import = u.kind == UseKind::Import;
                        let reached = Reached {
                            file: u.file,
                            symbol_opt: u.enclosing,
                            line,
                            depth,
                            hops,
                            confidence: total,
                            weakest,
                            via: via.clone(),
                            test,
                            by_import,
                            requires: requires_now,
                            needs_operation: needs_now,
                            key: key_now,
                            runs_in_no_test: no_test_now,
                            calls_only: calls_now,
                            failing: failing_now,
                        };
                        next.insert(key, reached);
                    }
                }
            }
        }
        let mut level: Vec<Reached> = next.into_values().collect();
        level.extend(cleared.iter().filter_map(|key| reached.get(key).cloned()));
        level.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.file.cmp(&b.file)).then(a.line.cmp(&b.line)));
        frontier = Vec::new();
        for r in level {
            if reached.len() >= limits.max_visited {
                truncated = true;
                break;
            }
            // Tests end a path; so do file-level uses (nothing names a file's top level).
            // A value computed at import leads to no test: its path goes on only as far as
            // dependents are listed.
            let ends = r.runs_in_no_test && depth >= limits.depth;
            if !r.test && r.hops < levels && depth < max_levels && !ends {
                if let Some(i) = r.symbol_opt {
                    let s = &graph.code(r.file).symbols[i as usize];
                    let mut via = vec![s.qualified_name.clone()];
                    via.extend(r.via.iter().cloned());
                    frontier.push(Step {
                        node: Some((r.file, i)),
                        instances_only: false,
                        declared_only: false,
                        name: "",
                        confidence: r.confidence,
                        weakest: r.weakest,
                        hops: r.hops,
                        via,
                        requires: r.requires,
                        needs_operation: r.needs_operation,
                        key: r.key,
                        runs_in_no_test: r.runs_in_no_test,
                        calls_only: r.calls_only,
                        failing: r.failing,
                    });
                }
            }
            reached.insert((r.file, r.symbol_opt), r);
        }
        if frontier.is_empty() || truncated {
            break;
        }
    }
    let mut dependents: Vec<Reached> = Vec::new();
    let mut tests: Vec<Reached> = Vec::new();
    let mut subclasses: HashMap<(Option<u32>, String), Vec<SymbolRef>> = HashMap::new();
    let inherited: Vec<Reached> = reached.values().flat_map(|r| inherited_tests(graph, r, &mut subclasses)).collect();
    let helpers = if reached.values().any(|r| r.test && r.failing) { failure_helpers(graph) } else { HashSet::new() };
    for r in reached.into_values().chain(inherited) {
        // A test whose file formats values so (subtracts, copies) may do so to this one (in a
        // helper, a fixture).
        let not_done =
            r.needs_operation != 0 && !graph.code(r.file).operations.iter().any(|&(_, b)| b & r.needs_operation != 0);
        let excluded = r.requires.is_some()
            || not_done
            || r.runs_in_no_test
            || (r.failing && !expects_failure(graph, &r, &helpers))
            || uncollected_test(graph, &r);
        if r.test && excluded {
            // A test of another implementation of the trait, or of a value it never formats,
            // or of a value computed at import, or one that reaches the change only where
            // something fails and fails nothing.
            continue;
        }
        if r.test {
            // Past the bound in calls (only free steps took it there), a path must be as sure
            // as a dependent's: Python read splits 0.884 / 0.499 → 0.884 / 0.501 with free
            // steps between any private definitions of a file.
            let floor = if r.depth > limits.test_depth { limits.min_confidence } else { limits.test_min_confidence };
            if r.hops <= limits.test_depth && r.weakest >= floor {
                tests.push(r);
            }
        } else if r.depth <= limits.depth && r.weakest >= limits.min_confidence {
            dependents.push(r);
        }
    }
    dependents.sort_by(|a, b| {
        a.depth
            .cmp(&b.depth)
            .then(b.confidence.total_cmp(&a.confidence))
            .then(a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    // A test file's import of the change says no more than the tests of that file that use
    // it: a nameless entry beside them.
    let named: HashSet<u32> = tests.iter().filter(|r| r.symbol_opt.is_some()).map(|r| r.file).collect();
    tests.retain(|r| !(r.symbol_opt.is_none() && r.by_import && named.contains(&r.file)));
    tests.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.depth.cmp(&b.depth))
            .then(a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    Walk { dependents, tests, truncated }
}
