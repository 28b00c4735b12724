//! Python code that runs at import, before any test: what a change to it reaches, and what
//! it does not.

use super::super::extract;
use super::resolution::{daemon_walk_limits, python_graph};
use crate::code::dependents::{walk, Seed};
use crate::code::{CodeGraph, SymbolKind};
use crate::ingest::Language;

/// The test files the walk lists for the function or method `name` (qualified) of `path`.
pub(super) fn tests_of(graph: &CodeGraph, path: &str, name: &str) -> Vec<String> {
    let mut target = graph.defined_in(path, name, SymbolKind::Function);
    target.extend(graph.defined_in(path, name, SymbolKind::Method));
    assert!(!target.is_empty(), "{name} is a function or method of {path}");
    let seeds = [Seed {
        symbol_opt: Some(target[0]),
        name: name.into(),
        label: name.into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let mut found: Vec<String> =
        walk(graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    found.sort();
    found.dedup();
    found
}

#[test]
fn the_script_guard_is_found_either_way_round() {
    let text = "import sys\n\ndef main():\n    pass\n\nif __name__ == '__main__':\n    main()\n    sys.exit(0)\n";
    assert_eq!(extract(Language::Python, text).unwrap().main_block, Some((6, 8)));
    let text = "def main():\n    pass\n\nif \"__main__\" == __name__:\n    main()\n";
    assert_eq!(extract(Language::Python, text).unwrap().main_block, Some((4, 5)));
    // Any other `if`, or one inside a function, is no script guard.
    let text = "def f():\n    if __name__ == '__main__':\n        g()\n\nif DEBUG:\n    g()\n";
    assert_eq!(extract(Language::Python, text).unwrap().main_block, None);
}

/// `PATTERN = compile_pattern()` runs as the module is imported: a test that reads `PATTERN`
/// does not run `compile_pattern`, one that calls it does. A function stored at import to run
/// later (`HANDLER = make_handler()` returns `handle`) still runs in the test that calls it.
#[test]
fn a_value_computed_at_import_runs_in_no_test() {
    let graph = python_graph(&[
        (
            "pkg/rules.py",
            "def compile_pattern():\n    return 'a+'\n\nPATTERN = compile_pattern()\n\n\
             def matches(text):\n    return PATTERN in text\n\n\
             def make_handler():\n    def handle(x):\n        return x\n    return handle\n\n\
             HANDLER = make_handler()\n\n\
             def run(x):\n    return HANDLER(x)\n",
        ),
        ("tests/test_matches.py", "from pkg.rules import matches\n\ndef test_matches():\n    assert matches('aa')\n"),
        (
            "tests/test_compile.py",
            "from pkg.rules import compile_pattern\n\ndef test_compile():\n    assert compile_pattern()\n",
        ),
        ("tests/test_run.py", "from pkg.rules import run\n\ndef test_run():\n    assert run(1) == 1\n"),
    ]);
    assert_eq!(tests_of(&graph, "pkg/rules.py", "compile_pattern"), vec!["tests/test_compile.py"]);
    assert_eq!(tests_of(&graph, "pkg/rules.py", "make_handler"), Vec::<String>::new());
    let handle = graph.lookup("handle");
    assert_eq!(handle.len(), 1, "the inner function is a definition");
    let seeds = [Seed {
        symbol_opt: Some(handle[0]),
        name: "handle".into(),
        label: "make_handler.handle".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let tests: Vec<String> =
        walk(&graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    assert!(tests.contains(&"tests/test_run.py".to_string()), "{tests:?}");
}

/// A test module's own import-time calls count (a broken `make_app()` fails its tests), but
/// not what its `if __name__ == "__main__":` block calls (`main()`, a script's entry written
/// beside the tests): a test run never runs it.
#[test]
fn a_test_modules_script_guard_runs_in_no_test() {
    let graph = python_graph(&[
        ("pkg/app.py", "def make_app():\n    return {}\n"),
        (
            "tests/test_app.py",
            "from pkg.app import make_app\n\nAPP = make_app()\n\ndef test_app():\n    assert APP == {}\n",
        ),
        (
            "tests/test_script.py",
            "from pkg import app\n\ndef main():\n    app.make_app()\n\nif __name__ == '__main__':\n    main()\n",
        ),
    ]);
    assert_eq!(tests_of(&graph, "pkg/app.py", "make_app"), vec!["tests/test_app.py"]);
}
