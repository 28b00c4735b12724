//! Which reached tests are listed: those that ask for a failure, and a base class's tests run
//! again in its subclasses' test modules.

use std::collections::{HashMap, HashSet};

use crate::code::graph::{CodeGraph, SymbolRef};
use crate::code::{SymbolKind, UseKind};

use super::Reached;

/// Whether a test makes something fail (`FileCode::expects_failure`): it asks for an error
/// itself, or calls a helper of the tests that does (`helpers`, by name).
pub(super) fn expects_failure(graph: &CodeGraph, test: &Reached, helpers: &HashSet<&str>) -> bool {
    let Some(i) = test.symbol_opt else { return false };
    let code = graph.code(test.file);
    code.expects_failure.contains(&i)
        || code.occurrences.iter().any(|o| {
            o.enclosing == Some(i)
                && o.kind == UseKind::Call
                && helpers.contains(code.strings[o.name as usize].as_str())
        })
}

/// The names of the tests' helpers that ask for an error (`version_err` in a `tests/util`
/// module): functions of test files or modules, not tests themselves, in `expects_failure`.
pub(super) fn failure_helpers(graph: &CodeGraph) -> HashSet<&str> {
    (0..graph.file_count() as u32)
        .filter(|&f| graph.is_test_file(f) || graph.is_test_module(f))
        .flat_map(|f| {
            let code = graph.code(f);
            code.expects_failure.iter().map(move |&i| &code.symbols[i as usize]).filter(|s| !s.test_marked)
        })
        .map(|s| s.name.as_str())
        .collect()
}

/// How sure a test class's test must be of reaching a change to be listed in the test modules
/// of the classes that derive from it (`inherited_tests`).
const INHERITED_TEST_MIN_CONFIDENCE: f32 = 0.3;

/// A unittest-style test method written in a mixin or base class outside the test modules
/// (`tests/__init__.py`'s `class CacheTestMixin: def test_size(self)`) runs as a test of every
/// class in a test module that derives from it: those classes, one entry per file. So does a
/// test class's own test method in another test module's subclass (itsdangerous'
/// `class TestTimestampSigner(FreezeMixin, TestSigner)` runs `TestSigner`'s tests again), unless
/// the subclass writes its own (a subclass of this very class, `CodeGraph::subclasses_of`).
/// A test method of a class pytest does not collect is listed as its subclasses' only
/// (`uncollected_test`). `subclasses` caches each class's subclasses (by file and name for a test class's, by name
/// for a mixin's).
pub(super) fn inherited_tests(
    graph: &CodeGraph,
    r: &Reached,
    subclasses: &mut HashMap<(Option<u32>, String), Vec<SymbolRef>>,
) -> Vec<Reached> {
    let Some(i) = r.symbol_opt else { return Vec::new() };
    let code = graph.code(r.file);
    let s = &code.symbols[i as usize];
    if code.language != "python" || !s.name.starts_with("test") || !s.kind.is_callable() || s.container.is_empty() {
        return Vec::new();
    }
    // A test class pytest does not collect (a mixin of `test_*` methods in a test module,
    // cachetools' `DecoratorTestMixin`) runs its tests only as its subclasses', in its own
    // module too.
    let uncollected = r.test && !graph.pytest_collects(&s.container);
    // A subclass often sets its test up otherwise (another machine class, another fixture):
    // only a test that surely reaches the change is taken to reach it in a subclass.
    if r.test && !uncollected && r.confidence < INHERITED_TEST_MIN_CONFIDENCE {
        return Vec::new();
    }
    let found = if r.test {
        // A test class's subclasses: only those that derive from this very class.
        let Some(&class) = graph.defined_in(graph.path(r.file), &s.container, SymbolKind::Class).first() else {
            return Vec::new();
        };
        subclasses.entry((Some(r.file), s.container.clone())).or_insert_with(|| graph.subclasses_of(class))
    } else {
        subclasses.entry((None, s.container.clone())).or_insert_with(|| graph.subclasses(&s.container))
    };
    let mut seen = std::collections::HashSet::new();
    found
        .iter()
        .copied()
        .filter(|&(f, _)| graph.is_test_module(f) && (!r.test || uncollected || f != r.file))
        // Another mixin on the way runs nothing by itself either.
        .filter(|&(f, j)| graph.pytest_collects(&graph.symbol((f, j)).qualified_name))
        .filter(|&(f, j)| {
            // An override of the same name is a test of its own.
            let class = &graph.symbol((f, j)).qualified_name;
            !graph.code(f).symbols.iter().any(|m| m.name == s.name && &m.container == class)
        })
        .filter(|&(f, _)| seen.insert(f))
        .map(|(f, j)| {
            let class = graph.symbol((f, j));
            let mut via = vec![class.qualified_name.clone(), s.qualified_name.clone()];
            via.extend(r.via.iter().cloned());
            Reached {
                file: f,
                symbol_opt: Some(j),
                line: class.line,
                depth: r.depth,
                via,
                test: true,
                by_import: false,
                ..*r
            }
        })
        .collect()
}

/// Whether `r` is a Python test method of a class pytest does not collect (`CodeGraph::
/// pytest_collects`): no runner finds it by its own name (`tests/test_cached.py::
/// DecoratorTestMixin::test_decorator` is "not found"); it runs as its subclasses' tests
/// (`inherited_tests`).
pub(super) fn uncollected_test(graph: &CodeGraph, r: &Reached) -> bool {
    let Some(i) = r.symbol_opt.filter(|_| r.test) else { return false };
    let code = graph.code(r.file);
    let s = &code.symbols[i as usize];
    // A method a runner is given by its own name (a helper such as `setUp` is given as its
    // file, which runs whatever pytest collects there).
    code.language == "python"
        && s.kind.is_callable()
        && s.name.starts_with("test")
        && !s.container.is_empty()
        && !graph.defined_in(graph.path(r.file), &s.container, SymbolKind::Class).is_empty()
        && !graph.pytest_collects(&s.container)
}
