//! Which module a require or an import names: a file's `module.exports` function, a package
//! folder's entry, a dotted path through a package to its submodule.

use std::collections::HashMap;

use super::super::{extract, CodeGraph};
use super::resolution::{python_graph, sure_uses};
use crate::ingest::Language;

/// A CommonJS module's `module.exports = function (…)` is named for its file (its folder's
/// for an `index.js`), as its importers call it: `parse(…)` after `require('./parse')`.
#[test]
fn a_module_exports_function_is_named_for_its_file_and_its_importers_calls_reach_it() {
    let js = |text: &str| extract(Language::JavaScript, text).unwrap();
    let files = HashMap::from([
        ("lib/parse.js".to_string(), js("module.exports = function (str, opts) {\n  return str;\n};\n")),
        ("lib/date-utils.js".to_string(), js("module.exports = function () {\n  return 1;\n};\n")),
        ("lib/index.js".to_string(), js("var parse = require('./parse');\nmodule.exports = { parse: parse };\n")),
        ("test/parse.js".to_string(), js("var parse = require('../lib/parse');\nparse('a=b');\n")),
    ]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let named = |path: &str| -> Vec<String> {
        let f = graph.file_index(path).unwrap();
        graph.code(f).symbols.iter().map(|s| format!("{} {}", s.kind.name(), s.qualified_name)).collect()
    };
    assert_eq!(named("lib/parse.js"), ["function parse"]);
    assert_eq!(named("lib/date-utils.js"), ["function dateUtils"]);
    let target = graph.lookup("parse").into_iter().find(|r| graph.path(r.0) == "lib/parse.js").unwrap();
    let mut paths: Vec<String> = graph.references(target, 0.5).into_iter().map(|r| r.path).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths, ["lib/index.js", "test/parse.js"]);
}

/// A package's own tests require it by its folder (`require('../')`): its `package.json`'s
/// entry, and a member of what the entry re-exports reaches the definition.
#[test]
fn a_package_folder_required_by_its_tests_is_its_entry() {
    let js = |text: &str| extract(Language::JavaScript, text).unwrap();
    let files = HashMap::from([
        ("lib/parse.js".to_string(), js("module.exports = function (str) {\n  return str;\n};\n")),
        ("lib/index.js".to_string(), js("var parse = require('./parse');\nmodule.exports = { parse: parse };\n")),
        ("test/parse.js".to_string(), js("var qs = require('../');\nqs.parse('a=b');\n")),
    ]);
    let configs =
        HashMap::from([("package.json".to_string(), r#"{"name": "qs", "main": "lib/index.js"}"#.to_string())]);
    let graph = CodeGraph::build(files, &configs);
    let index = graph.impact("lib/index.js", 1, 0, 10).unwrap();
    let importers: Vec<&str> = index.imported_by.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(importers, ["test/parse.js"]);
    let target = graph.lookup("parse").into_iter().find(|r| graph.path(r.0) == "lib/parse.js").unwrap();
    let tests: Vec<(String, u32)> = graph
        .references(target, 0.5)
        .into_iter()
        .filter(|r| r.path.starts_with("test/"))
        .map(|r| (r.path, r.line))
        .collect();
    assert_eq!(tests, [("test/parse.js".to_string(), 2)]);
}

/// `pkg.cli.main()` after `import pkg` reaches the package's `cli` submodule, whether the
/// package's `__init__.py` imports it or not; a name that is no submodule reaches nothing.
#[test]
fn a_dotted_module_path_through_a_package_reaches_its_submodule() {
    let graph = python_graph(&[
        ("pkg/__init__.py", "from pkg import cli\n"),
        ("pkg/cli.py", "def main(args=None):\n    return 0\n"),
        ("pkg/engine/__init__.py", ""),
        ("pkg/engine/run.py", "def start():\n    return 1\n"),
        (
            "tests/test_cli.py",
            "import pkg\n\ndef test_main():\n    pkg.cli.main([])\n    pkg.engine.run.start()\n    pkg.nothing.main()\n",
        ),
    ]);
    assert_eq!(sure_uses(&graph, "main", "pkg/cli.py"), [("tests/test_cli.py".to_string(), 4, "import".to_string())]);
    assert_eq!(
        sure_uses(&graph, "start", "pkg/engine/run.py"),
        [("tests/test_cli.py".to_string(), 5, "import".to_string())]
    );
}

/// A file's importers come in pages: `offset` where one starts, `next_offset` where the next
/// does, the total beside them.
#[test]
fn a_files_importers_come_in_pages() {
    let importer = "from pkg import core\n\ncore.run()\n";
    let graph = python_graph(&[
        ("pkg/__init__.py", ""),
        ("pkg/core.py", "def run():\n    pass\n"),
        ("a.py", importer),
        ("b.py", importer),
        ("c.py", importer),
    ]);
    let first = graph.impact("pkg/core.py", 1, 0, 2).unwrap();
    assert_eq!((first.imported_by.len(), first.imported_by_total, first.next_offset), (2, 3, Some(2)));
    assert!(first.truncated);
    let second = graph.impact("pkg/core.py", 1, 2, 2).unwrap();
    assert_eq!((second.imported_by.len(), second.next_offset, second.truncated), (1, None, false));
    let mut all: Vec<String> = first.imported_by.iter().chain(&second.imported_by).map(|e| e.path.clone()).collect();
    all.sort();
    assert_eq!(all, ["a.py", "b.py", "c.py"]);
}
