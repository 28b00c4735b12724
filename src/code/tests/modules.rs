//! Which module a require or an import names: a file's `module.exports` function, a package
//! folder's entry, a dotted path through a package to its submodule.

use std::collections::HashMap;

use super::super::{extract, CodeGraph, SymbolKind};
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

    // Required under another name than its file's: the call is still the module's function.
    let ts = |text: &str| extract(Language::TypeScript, text).unwrap();
    let files = HashMap::from([
        ("lib/default_stream.js".to_string(), js("module.exports = function () {\n  return 1;\n};\n")),
        // Its types beside it, which the `require` resolves to first.
        (
            "lib/default_stream.d.ts".to_string(),
            ts("declare function defaultStream(): number;\n\nexport = defaultStream;\n"),
        ),
        ("lib/helpers.js".to_string(), js("function helper() {\n  return 2;\n}\nmodule.exports = { helper: helper };\n")),
        (
            "index.js".to_string(),
            js("var createDefaultStream = require('./lib/default_stream');\nvar tools = require('./lib/helpers');\n\
                function harness() {\n  tools.helper();\n  return createDefaultStream();\n}\nmodule.exports = harness;\n"),
        ),
    ]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let target = graph.lookup("default_stream")[0];
    let lines: Vec<(String, u32)> = graph.references(target, 0.5).into_iter().map(|r| (r.path, r.line)).collect();
    assert_eq!(lines, [("index.js".to_string(), 1), ("index.js".to_string(), 5)]);
    // A module that exports no function: its members are what the name reaches.
    let helper = graph.lookup("helper")[0];
    assert!(graph.references(helper, 0.5).iter().any(|r| r.path == "index.js" && r.line == 4));
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

/// The lines of the sure uses of `name` in `path` outside the import statements (those name
/// the definition whatever the file calls it).
fn sure_use_lines(graph: &CodeGraph, name: &str, path: &str) -> Vec<(String, u32)> {
    let target = graph.lookup(name).into_iter().find(|&r| graph.path(r.0) == path).expect(name);
    let mut found: Vec<(String, u32)> =
        graph.references(target, 0.5).into_iter().filter(|r| r.kind != "import").map(|r| (r.path, r.line)).collect();
    found.sort();
    found
}

/// A name imported under an alias (`import { foo as bar }`, `from m import foo as bar`,
/// `use m::foo as bar`) is the definition it names, and so is a name imported from a file that
/// re-exports it under another (`export { foo as baz } from`, a package's `from .a import foo
/// as baz`, `pub use a::foo as baz`), bare or as a member of the module (`d.baz()`); so is a
/// wrapper's call of the function it wraps under another name.
#[test]
fn a_name_imported_under_an_alias_is_the_definition_it_names() {
    let ts = |text: &str| extract(Language::TypeScript, text).unwrap();
    let graph = CodeGraph::build(
        HashMap::from([
            ("a.ts".to_string(), ts("export function foo(x: number): number {\n  return x + 1;\n}\n")),
            ("b.ts".to_string(), ts("import { foo as bar } from \"./a\";\nexport function use(): number {\n  return bar(3);\n}\n")),
            ("d.ts".to_string(), ts("export { foo as baz } from \"./a\";\n")),
            ("e.test.ts".to_string(), ts("import { baz } from \"./d\";\ntest(\"baz\", () => {\n  baz(1);\n});\n")),
            ("h.test.ts".to_string(), ts("import * as d from \"./d\";\ntest(\"h\", () => {\n  d.baz(2);\n});\n")),
            (
                "w.ts".to_string(),
                ts("import { foo as inner } from \"./a\";\nexport function foo(x: number): number {\n  return inner(x) * 2;\n}\n"),
            ),
        ]),
        &HashMap::new(),
    );
    // The wrapper's `inner(x)` calls the `foo` it wraps, not itself.
    assert_eq!(
        sure_use_lines(&graph, "foo", "a.ts"),
        [("b.ts".to_string(), 3), ("e.test.ts".to_string(), 3), ("h.test.ts".to_string(), 3), ("w.ts".to_string(), 3)]
    );
    assert!(sure_use_lines(&graph, "foo", "w.ts").is_empty());

    // Two modules' `create`, exported by an index as `string` and `number`: each name is its
    // own module's.
    let graph = CodeGraph::build(
        HashMap::from([
            ("string.ts".to_string(), ts("export function create() {\n  return 1;\n}\n")),
            ("number.ts".to_string(), ts("export function create() {\n  return 2;\n}\n")),
            (
                "index.ts".to_string(),
                ts("import { create as stringCreate } from \"./string\";\nimport { create as numberCreate } from \"./number\";\nexport { stringCreate as string, numberCreate as number };\n"),
            ),
            ("s.test.ts".to_string(), ts("import { string } from \"./index\";\ntest(\"s\", () => {\n  string();\n});\n")),
        ]),
        &HashMap::new(),
    );
    let calls = |path: &str| -> Vec<(String, u32)> {
        sure_use_lines(&graph, "create", path).into_iter().filter(|(p, _)| p != "index.ts").collect()
    };
    assert_eq!(calls("string.ts"), [("s.test.ts".to_string(), 3)]);
    assert!(calls("number.ts").is_empty());

    let graph = python_graph(&[
        ("pkg/__init__.py", "from pkg.a import foo as baz\n"),
        ("pkg/a.py", "def foo(x):\n    return x + 1\n"),
        ("pkg/b.py", "from pkg.a import foo as bar\n\n\ndef use():\n    return bar(3)\n"),
        ("tests/test_d.py", "from pkg import baz\n\n\ndef test_baz():\n    assert baz(1) == 2\n"),
    ]);
    assert_eq!(
        sure_use_lines(&graph, "foo", "pkg/a.py"),
        [("pkg/b.py".to_string(), 5), ("tests/test_d.py".to_string(), 5)]
    );

    let rust = |text: &str| extract(Language::Rust, text).unwrap();
    let configs =
        HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"shop\"\nversion = \"0.1.0\"\n".to_string())]);
    let graph = CodeGraph::build(
        HashMap::from([
            ("src/lib.rs".to_string(), rust("pub mod a;\npub mod b;\npub use a::foo as baz;\n")),
            ("src/a.rs".to_string(), rust("pub fn foo(x: u32) -> u32 {\n    x + 1\n}\n")),
            ("src/b.rs".to_string(), rust("use crate::a::foo as bar;\n\npub fn use_it() -> u32 {\n    bar(3)\n}\n")),
            (
                "tests/baz.rs".to_string(),
                rust("use shop::baz;\n\n#[test]\nfn bazzes() {\n    assert_eq!(baz(1), 2);\n}\n"),
            ),
        ]),
        &configs,
    );
    assert_eq!(
        sure_use_lines(&graph, "foo", "src/a.rs"),
        [("src/b.rs".to_string(), 4), ("tests/baz.rs".to_string(), 5)]
    );
}

/// A TypeScript class's `constructor` is a constructor: it runs where the class is built
/// (`new StringSchema()`, directly or in a factory), and a call of what an aliased factory
/// returns (`string().min(1)`, `create` exported as `string`, its overload signature stating
/// the type; or no type, but every `return` builds one class) is a call of that type's method.
#[test]
fn a_typescript_constructor_runs_where_its_class_is_built_and_a_factory_types_its_result() {
    let ts = |text: &str| extract(Language::TypeScript, text).unwrap();
    let graph = CodeGraph::build(
        HashMap::from([
            (
                "string.ts".to_string(),
                ts("export class StringSchema {\n  constructor() {\n    this.x = 1;\n  }\n  min(n: number): StringSchema {\n    return this;\n  }\n}\nexport function create(): StringSchema;\nexport function create() {\n  return new StringSchema();\n}\n"),
            ),
            (
                "index.ts".to_string(),
                ts("import { create as stringCreate } from \"./string\";\nexport { stringCreate as string };\n"),
            ),
            ("min.test.ts".to_string(), ts("import { string } from \"./index\";\ntest(\"min\", () => {\n  string().min(1);\n});\n")),
            (
                "new.test.ts".to_string(),
                ts("import { StringSchema } from \"./string\";\ntest(\"new\", () => {\n  new StringSchema();\n});\n"),
            ),
            ("other.test.ts".to_string(), ts("test(\"other\", () => {\n  expect(1).toBe(1);\n});\n")),
            (
                "array.ts".to_string(),
                ts("export class ArraySchema {\n  min(n: number) {\n    return this;\n  }\n}\nexport const create = () => {\n  if (Math.random() > 2) {\n    return new ArraySchema();\n  }\n  return new ArraySchema();\n};\n"),
            ),
            ("array.test.ts".to_string(), ts("import { create } from \"./array\";\ntest(\"min\", () => {\n  create().min(1);\n});\n")),
        ]),
        &HashMap::new(),
    );
    let constructor = graph.lookup("StringSchema.constructor")[0];
    assert_eq!(graph.symbol(constructor).kind, SymbolKind::Constructor);
    let tests_of = |name: &str| tests_reaching(&graph, name);
    assert_eq!(tests_of("StringSchema.constructor"), ["min.test.ts", "new.test.ts"]);
    assert_eq!(tests_of("StringSchema.min"), ["min.test.ts"]);
    // A factory that states no type but returns `new ArraySchema()` on every path.
    assert_eq!(tests_of("ArraySchema.min"), ["array.test.ts"]);
}

/// The test files a change to definition `name` (its first by that qualified name) reaches,
/// as the daemon's walk finds them (with the seeds of its type).
pub(super) fn tests_reaching(graph: &CodeGraph, name: &str) -> Vec<String> {
    use crate::code::dependents::{type_seeds, walk, Seed};
    let changed = graph.lookup(name)[0];
    let mut seeds = vec![Seed {
        symbol_opt: Some(changed),
        name: String::new(),
        label: name.into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let more = type_seeds(graph, &seeds);
    seeds.extend(more);
    let limits = super::resolution::daemon_walk_limits();
    let mut found: Vec<String> =
        walk(graph, &seeds, limits).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    found.sort();
    found.dedup();
    found
}

/// A definition local to a function runs once the function has, though nothing may name it:
/// a proxy's trap (`get` of the handler `wrap` hands to `new Proxy`) and what it calls are
/// covered by the tests that call `wrap`, not by the others.
#[test]
fn a_method_of_an_object_a_function_builds_runs_where_the_function_does() {
    let ts = |text: &str| extract(Language::TypeScript, text).unwrap();
    let graph = CodeGraph::build(
        HashMap::from([
            (
                "proxy.ts".to_string(),
                ts("export function keyOf(key: string) {\n  return key.trim();\n}\nexport function wrap(target: object) {\n  return new Proxy(target, {\n    get(t: any, key: string) {\n      return keyOf(key);\n    },\n  });\n}\nexport function other() {\n  return 1;\n}\n"),
            ),
            ("wrap.test.ts".to_string(), ts("import { wrap } from \"./proxy\";\ntest(\"wrap\", () => {\n  wrap({}).x;\n});\n")),
            ("other.test.ts".to_string(), ts("import { other } from \"./proxy\";\ntest(\"other\", () => {\n  other();\n});\n")),
        ]),
        &HashMap::new(),
    );
    assert_eq!(tests_reaching(&graph, "get"), ["wrap.test.ts"]);
    assert_eq!(tests_reaching(&graph, "keyOf"), ["wrap.test.ts"]);
    assert_eq!(tests_reaching(&graph, "other"), ["other.test.ts"]);
}

/// A method of an object a module-level variable holds runs where the variable is used (a
/// registry indexed by data: `rules[action](…)`); a function nothing calls by its name, mixed
/// into a class (`Object.assign(Wrapper.prototype, api)`), runs where its name is called on
/// an object of unknown type (`wrap(x).attr()`); one that shares a built-in's name (`push`)
/// is not guessed so.
#[test]
fn a_registry_method_and_a_mixed_in_function_run_where_they_are_reached() {
    let ts = |text: &str| extract(Language::TypeScript, text).unwrap();
    let graph = CodeGraph::build(
        HashMap::from([
            (
                "rules.ts".to_string(),
                ts("export const rules: Record<string, Function> = {\n  exists(next: any) {\n    return next;\n  },\n};\nexport function apply(action: string, next: any) {\n  return rules[action](next);\n}\n"),
            ),
            (
                "api.ts".to_string(),
                ts("export function attr(this: any, name: string) {\n  return name;\n}\nexport function push(this: any, x: any) {\n  return x;\n}\n"),
            ),
            (
                "wrapper.ts".to_string(),
                ts("import * as api from \"./api\";\nexport class Wrapper {}\nObject.assign(Wrapper.prototype, api);\nexport function wrap(x: any): any {\n  return new Wrapper();\n}\n"),
            ),
            ("apply.test.ts".to_string(), ts("import { apply } from \"./rules\";\ntest(\"apply\", () => {\n  apply(\"exists\", 1);\n});\n")),
            ("attr.test.ts".to_string(), ts("import { wrap } from \"./wrapper\";\ntest(\"attr\", () => {\n  wrap(1).attr(\"a\");\n});\n")),
            ("push.test.ts".to_string(), ts("test(\"push\", () => {\n  const a: any = [];\n  a.push(1);\n});\n")),
        ]),
        &HashMap::new(),
    );
    assert_eq!(tests_reaching(&graph, "exists"), ["apply.test.ts"]);
    assert_eq!(tests_reaching(&graph, "attr"), ["attr.test.ts"]);
    assert!(tests_reaching(&graph, "push").is_empty());
}

/// A file beside the tests that the runner does not run is a helper, not a test: yup's
/// `test/helpers.ts` (its vitest config excludes it) leads on to the test files that call it,
/// and a fixture module under `test/` that vitest's default pattern does not take (loaded by
/// a test at run time, by no name) is no test of its own.
#[test]
fn a_file_the_test_runner_does_not_run_is_a_helper_not_a_test() {
    let ts = |text: &str| extract(Language::TypeScript, text).unwrap();
    let files = HashMap::from([
        ("src/parse.ts".to_string(), ts("export function parse(s: string) {\n  return s;\n}\n")),
        (
            "test/helpers.ts".to_string(),
            ts("import { parse } from '../src/parse';\nexport function check(s: string) {\n  return parse(s);\n}\n"),
        ),
        (
            "test/string.test.ts".to_string(),
            ts("import { check } from './helpers';\ntest('parses', () => {\n  check('a');\n});\n"),
        ),
        (
            "test/fixtures/valid.ts".to_string(),
            ts("import { parse } from '../../src/parse';\nexport const output = parse('b');\n"),
        ),
    ]);
    let vitest = r#"{"devDependencies": {"vitest": "^3.2.0"}}"#;
    let graph = CodeGraph::build(files.clone(), &HashMap::from([("package.json".to_string(), vitest.to_string())]));
    assert_eq!(tests_reaching(&graph, "parse"), ["test/string.test.ts"]);

    // A package with no runner the graph knows: every file under `test/` is a test.
    let graph = CodeGraph::build(files, &HashMap::from([("package.json".to_string(), "{}".to_string())]));
    assert_eq!(tests_reaching(&graph, "parse"), ["test/fixtures/valid.ts", "test/helpers.ts"]);
}

/// A Go `init` stores a function built from others in a package variable, which code called
/// later runs: a change in one of those functions reaches the tests that call that code. A
/// benchmark is not a test `go test` runs, and a file for another platform is not built.
#[test]
fn what_a_go_init_stores_runs_where_the_variable_is_used() {
    let go = |text: &str| extract(Language::Go, text).unwrap();
    let files = HashMap::from([
        (
            "plan.go".to_string(),
            go("package calc\n\nvar planTop func(s string) int\n\n\
                func init() {\n\tplanTop = makePlanner(leaf)\n}\n\n\
                func makePlanner(next func(string) int) func(string) int {\n\
                \treturn func(s string) int { return next(s) }\n}\n\n\
                func leaf(s string) int {\n\treturn len(s)\n}\n\n\
                func Eval(s string) int {\n\treturn planTop(s)\n}\n"),
        ),
        (
            "calc_test.go".to_string(),
            go("package calc\n\nimport \"testing\"\n\nfunc TestEval(t *testing.T) {\n\tEval(\"x\")\n}\n"),
        ),
        (
            "bench_test.go".to_string(),
            go("package calc\n\nimport \"testing\"\n\nfunc BenchmarkEval(b *testing.B) {\n\tEval(\"y\")\n}\n"),
        ),
        (
            "calc_windows_test.go".to_string(),
            go("package calc\n\nimport \"testing\"\n\nfunc TestEvalWindows(t *testing.T) {\n\tEval(\"z\")\n}\n"),
        ),
    ]);
    let configs = HashMap::from([("go.mod".to_string(), "module example.com/calc\n\ngo 1.19\n".to_string())]);
    let graph = CodeGraph::build(files, &configs);
    assert_eq!(tests_reaching(&graph, "leaf"), ["calc_test.go", "calc_windows_test.go"]);
    assert_eq!(tests_reaching(&graph, "makePlanner"), ["calc_test.go", "calc_windows_test.go"]);
    // The Windows file's test is reached, and left out where `go test` does not build it.
    let mut run = crate::code::default_run::DefaultRun::new(std::path::Path::new("."));
    let windows = graph.file_index("calc_windows_test.go").unwrap();
    assert_eq!(run.runs(&graph, windows, None), cfg!(target_os = "windows"));
    assert!(run.runs(&graph, graph.file_index("calc_test.go").unwrap(), None));
}

/// A Go type implements an interface by having its methods, not by saying so: a call through
/// the interface (`bp.Open(…)` over a `[]BlockParser`, `m.Convert(…)` on what a constructor
/// returns as the interface) runs the type's method, so a change in it reaches the tests that
/// make those calls, and not a test that calls neither.
#[test]
fn a_go_method_runs_where_an_interface_its_type_satisfies_is_called() {
    let go = |text: &str| extract(Language::Go, text).unwrap();
    let files = HashMap::from([
        (
            "parser/parser.go".to_string(),
            go("package parser\n\n\
                type BlockParser interface {\n\tOpen(s string) string\n\tClose()\n}\n\n\
                type Parser struct {\n\tparsers []BlockParser\n\tbyChar [256][]BlockParser\n}\n\n\
                func NewParser() *Parser {\n\treturn &Parser{parsers: []BlockParser{NewQuote()}}\n}\n\n\
                func (p *Parser) Parse(s string) string {\n\tvar bps []BlockParser\n\tbps = p.parsers\n\tout := \"\"\n\
                \tif len(s) > 1 {\n\t\tbps = p.byChar[s[0]]\n\t}\n\
                \tfor _, bp := range bps {\n\t\tout += bp.Open(s)\n\t}\n\treturn out\n}\n"),
        ),
        (
            "parser/quote.go".to_string(),
            go("package parser\n\n\
                type quoteParser struct{}\n\n\
                func NewQuote() BlockParser {\n\treturn &quoteParser{}\n}\n\n\
                func (q *quoteParser) Open(s string) string {\n\treturn quoted(s)\n}\n\n\
                func (q *quoteParser) Close() {}\n\n\
                func quoted(s string) string {\n\treturn s\n}\n"),
        ),
        (
            "markdown.go".to_string(),
            go("package markdown\n\nimport \"example.com/md/parser\"\n\n\
                type Markdown interface {\n\tConvert(s string) string\n}\n\n\
                type markdown struct {\n\tp *parser.Parser\n}\n\n\
                func New() Markdown {\n\treturn &markdown{p: parser.NewParser()}\n}\n\n\
                func (m *markdown) Convert(s string) string {\n\treturn m.p.Parse(s)\n}\n"),
        ),
        (
            "markdown_test.go".to_string(),
            go("package markdown\n\nimport \"testing\"\n\n\
                func TestConvert(t *testing.T) {\n\tm := New()\n\tm.Convert(\"x\")\n}\n"),
        ),
        (
            "parser/parser_test.go".to_string(),
            go("package parser\n\nimport \"testing\"\n\n\
                func TestParse(t *testing.T) {\n\tp := NewParser()\n\tp.Parse(\"x\")\n}\n"),
        ),
        (
            "parser/other_test.go".to_string(),
            go("package parser\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {}\n"),
        ),
    ]);
    let configs = HashMap::from([("go.mod".to_string(), "module example.com/md\n\ngo 1.19\n".to_string())]);
    let graph = CodeGraph::build(files, &configs);
    assert_eq!(tests_reaching(&graph, "quoted"), ["markdown_test.go", "parser/parser_test.go"]);
    // `bps` is a `[]BlockParser` for all of its life, whatever it is set to.
    let open: Vec<String> = sure_uses(&graph, "Open", "parser/parser.go")
        .into_iter()
        .map(|(path, line, how)| format!("{path}:{line} {how}"))
        .collect();
    assert_eq!(open, ["parser/parser.go:25 qualified_path"]);
}

/// A path through two dispatches waits for the first one's type until it is made: a block
/// parser only an extension adds (held in package variables, made by the extension's method)
/// runs in the test that adds the extension, not in one that converts through the interface
/// without it (the second dispatch, `Markdown.Convert`, needs only a `markdown`).
#[test]
fn a_path_through_two_dispatches_waits_for_the_first_ones_type() {
    let go = |text: &str| extract(Language::Go, text).unwrap();
    let files = HashMap::from([
        (
            "parser/parser.go".to_string(),
            go("package parser\n\n\
                type BlockParser interface {\n\tOpen(s string) string\n}\n\n\
                type Parser struct {\n\tParsers []BlockParser\n}\n\n\
                func NewParser() *Parser {\n\treturn &Parser{}\n}\n\n\
                func (p *Parser) Parse(s string) string {\n\tout := \"\"\n\
                \tfor _, bp := range p.Parsers {\n\t\tout += bp.Open(s)\n\t}\n\treturn out\n}\n"),
        ),
        (
            "parser/fence.go".to_string(),
            go("package parser\n\n\
                type fenceParser struct{}\n\n\
                var defaultFence = &fenceParser{}\n\n\
                func (f *fenceParser) Open(s string) string {\n\treturn fenced(s)\n}\n\n\
                func fenced(s string) string {\n\treturn s\n}\n\n\
                type fenceExtension struct{}\n\n\
                func (e *fenceExtension) Extend(p *Parser) {\n\tp.Parsers = append(p.Parsers, defaultFence)\n}\n\n\
                var Fence = &fenceExtension{}\n"),
        ),
        (
            "markdown.go".to_string(),
            go("package markdown\n\nimport \"example.com/md/parser\"\n\n\
                type Markdown interface {\n\tConvert(s string) string\n}\n\n\
                type markdown struct {\n\tp *parser.Parser\n}\n\n\
                func New(p *parser.Parser) Markdown {\n\treturn &markdown{p: p}\n}\n\n\
                func (m *markdown) Convert(s string) string {\n\treturn m.p.Parse(s)\n}\n"),
        ),
        (
            "markdown_test.go".to_string(),
            go("package markdown\n\nimport (\n\t\"testing\"\n\t\"example.com/md/parser\"\n)\n\n\
                func TestConvert(t *testing.T) {\n\tm := New(parser.NewParser())\n\tm.Convert(\"x\")\n}\n"),
        ),
        (
            "fence_test.go".to_string(),
            go("package markdown\n\nimport (\n\t\"testing\"\n\t\"example.com/md/parser\"\n)\n\n\
                func TestFence(t *testing.T) {\n\tp := parser.NewParser()\n\tparser.Fence.Extend(p)\n\tNew(p).Convert(\"x\")\n}\n"),
        ),
    ]);
    let configs = HashMap::from([("go.mod".to_string(), "module example.com/md\n\ngo 1.19\n".to_string())]);
    let graph = CodeGraph::build(files, &configs);
    assert_eq!(tests_reaching(&graph, "fenced"), ["fence_test.go"]);
}

/// A test that runs a script in a child process (`spawn(process.execPath, [path.join(__dirname,
/// 'fixtures', 'run.js')])`) runs what the script does at its top level: a change to a function
/// the script calls reaches the spawning test, not the script's own file alone.
#[test]
fn a_script_a_test_spawns_runs_for_that_test() {
    let js = |text: &str| extract(Language::JavaScript, text).unwrap();
    let files = HashMap::from([
        ("lib/index.js".to_string(), js("function greet() {\n  return 1;\n}\nmodule.exports = greet;\n")),
        ("test/fixtures/run.js".to_string(), js("var greet = require('../../lib');\ngreet();\n")),
        (
            "test/spawn.js".to_string(),
            js("var test = require('tape');\nvar path = require('path');\nvar spawn = require('child_process').spawn;\n\n\
                test('runs', function (t) {\n  spawn(process.execPath, [path.join(__dirname, 'fixtures', 'run.js')]);\n  t.end();\n});\n"),
        ),
        ("test/other.js".to_string(), js("var test = require('tape');\n\ntest('other', function (t) {\n  t.end();\n});\n")),
    ]);
    let configs = HashMap::from([(
        "package.json".to_string(),
        "{\"name\": \"x\", \"scripts\": {\"test\": \"tape test/*.js\"}}".to_string(),
    )]);
    let graph = CodeGraph::build(files, &configs);
    assert_eq!(tests_reaching(&graph, "greet"), ["test/spawn.js"]);
}

#[test]
fn a_command_a_test_runs_by_a_path_it_builds_runs_for_that_test() {
    let js = |text: &str| extract(Language::JavaScript, text).unwrap();
    let head = "var test = require('tape');\nvar path = require('path');\nvar cp = require('child_process');\n";
    let files = HashMap::from([
        ("lib/index.js".to_string(), js("function greet() {\n  return 1;\n}\nmodule.exports = greet;\n")),
        // The package's command: a script without an extension, read as its `#!` line says.
        ("bin/cli".to_string(), js("#!/usr/bin/env node\nvar greet = require('../lib');\ngreet();\n")),
        (
            // A command line in a variable, the working folder an option.
            "test/line.js".to_string(),
            js(&format!("{head}var bin = 'node ' + path.join(__dirname, '../bin/cli');\n\
                test('a', function (t) {{\n  cp.exec(bin + ' --flag', {{ cwd: path.join(__dirname, 'fixtures') }}, t.end);\n}});\n")),
        ),
        (
            // A path by `+`, in a helper's variable.
            "test/helper.js".to_string(),
            js(&format!("{head}function run(args) {{\n  var bin = __dirname + '/../bin/cli';\n  \
                return cp.spawn(process.execPath, [bin].concat(args));\n}}\ntest('b', function (t) {{\n  run([]);\n  t.end();\n}});\n")),
        ),
        (
            // From the working folder: the package's root.
            "test/cwd.js".to_string(),
            js(&format!("{head}var cli = path.join(process.cwd(), 'bin/cli');\n\
                test('c', function (t) {{\n  cp.execFile(process.execPath, [cli]);\n  t.end();\n}});\n")),
        ),
        (
            // A folder and a script that is not there run nothing of the repo's.
            "test/none.js".to_string(),
            js(&format!("{head}test('d', function (t) {{\n  cp.exec('node ' + path.join(__dirname, 'missing.js'), \
                {{ cwd: path.join(__dirname, '../bin') }});\n  t.end();\n}});\n")),
        ),
    ]);
    let configs = HashMap::from([(
        "package.json".to_string(),
        "{\"name\": \"x\", \"bin\": \"bin/cli\", \"scripts\": {\"test\": \"tape test/*.js\"}}".to_string(),
    )]);
    let graph = CodeGraph::build(files, &configs);
    assert_eq!(tests_reaching(&graph, "greet"), ["test/cwd.js", "test/helper.js", "test/line.js"]);
}

/// A Rust path through a re-export ends at the first module that defines the name: ron's
/// `pub use de::Deserializer` is `de`'s struct, not the `Deserializer` of the private
/// submodule that `de`'s `mod id;` declares. And a name a file imports from another crate is
/// that crate's: `serializer.serialize_u8(v)` with `S: Serializer` after `use
/// serde::Serializer` is no call of the repo's own `struct Serializer`'s method.
#[test]
fn a_reexport_ends_at_its_definition_and_another_crates_name_is_not_the_repos() {
    let rust = |text: &str| extract(Language::Rust, text).unwrap();
    let configs =
        HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"ron\"\nversion = \"0.1.0\"\n".to_string())]);
    let graph = CodeGraph::build(
        HashMap::from([
            ("src/lib.rs".to_string(), rust("pub mod de;\npub mod ser;\npub mod number;\npub use de::Deserializer;\n")),
            (
                "src/de/mod.rs".to_string(),
                rust("mod id;\n\npub struct Deserializer {\n    pub depth: u32,\n}\n\nimpl Deserializer {\n    pub fn from_str(s: &str) -> Self {\n        Deserializer { depth: s.len() as u32 }\n    }\n}\n"),
            ),
            (
                "src/de/id.rs".to_string(),
                rust("pub struct Deserializer {\n    pub map_as_struct: bool,\n}\n\nimpl Deserializer {\n    pub fn from_str(s: &str) -> Self {\n        Deserializer { map_as_struct: s.is_empty() }\n    }\n}\n"),
            ),
            (
                "src/ser.rs".to_string(),
                rust("pub struct Serializer;\n\nimpl Serializer {\n    pub fn serialize_u8(self, v: u8) -> u8 {\n        v\n    }\n}\n"),
            ),
            (
                "src/number.rs".to_string(),
                rust("use serde::Serializer;\n\npub fn write<S: Serializer>(serializer: S, v: u8) {\n    serializer.serialize_u8(v);\n}\n"),
            ),
            (
                "tests/de.rs".to_string(),
                rust("#[test]\nfn reads() {\n    let de = ron::Deserializer::from_str(\"x\");\n    assert_eq!(de.depth, 1);\n}\n"),
            ),
        ]),
        &configs,
    );
    let users = |name: &str, path: &str| -> Vec<String> {
        let target = graph.lookup(name).into_iter().find(|&r| graph.path(r.0) == path).expect(name);
        graph.references(target, 0.0).into_iter().map(|r| format!("{}:{}", r.path, r.line)).collect()
    };
    assert!(users("Deserializer", "src/de/mod.rs").contains(&"tests/de.rs:3".to_string()));
    assert!(!users("Deserializer", "src/de/id.rs").contains(&"tests/de.rs:3".to_string()));
    assert_eq!(users("serialize_u8", "src/ser.rs"), Vec::<String>::new());
}

/// Three ways a Rust value's type was lost, each found in a crate's tests that called the
/// repo's methods: a name a glob brings in under an alias (`use handlebars::*` with `pub use
/// registry::Registry as Handlebars`), a type alias whose parameter has a default (`type
/// Vec<T, LenT = usize> = VecInner<T>`, read as an alias of `usize`), and a local built in an
/// `unsafe` block (`let hole = unsafe { Hole::new(…) }`).
#[test]
fn a_glob_alias_a_defaulted_alias_and_an_unsafe_block_keep_the_type() {
    let rust = |text: &str| extract(Language::Rust, text).unwrap();
    let configs =
        HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"hb\"\nversion = \"0.1.0\"\n".to_string())]);
    let graph = CodeGraph::build(
        HashMap::from([
            ("src/lib.rs".to_string(), rust("pub mod registry;\npub mod vec;\npub use self::registry::Registry as Handlebars;\n")),
            (
                "src/registry.rs".to_string(),
                rust("pub struct Registry;\n\nimpl Registry {\n    pub fn new() -> Self {\n        Registry\n    }\n\n    pub fn render(&self) -> u8 {\n        1\n    }\n}\n"),
            ),
            (
                "src/vec.rs".to_string(),
                rust("pub struct VecInner<T> {\n    items: Option<T>,\n}\n\npub type Vec<T, LenT = usize> = VecInner<T>;\n\nimpl<T> VecInner<T> {\n    pub fn new() -> Self {\n        VecInner { items: None }\n    }\n\n    pub fn pop(&mut self) -> Option<T> {\n        self.items.take()\n    }\n}\n\nstruct Hole;\n\nimpl Hole {\n    unsafe fn new() -> Self {\n        Hole\n    }\n\n    unsafe fn get(&self) -> u8 {\n        0\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::{Hole, Vec};\n\n    #[test]\n    fn pops() {\n        let mut v: Vec<u8> = Vec::new();\n        assert_eq!(v.pop(), None);\n        let hole = unsafe { Hole::new() };\n        assert_eq!(unsafe { hole.get() }, 0);\n    }\n}\n"),
            ),
            (
                "tests/render.rs".to_string(),
                rust("use hb::*;\n\n#[test]\nfn renders() {\n    let r = Handlebars::new();\n    assert_eq!(r.render(), 1);\n}\n"),
            ),
        ]),
        &configs,
    );
    let users = |name: &str, path: &str| -> Vec<String> {
        let target = graph.lookup(name).into_iter().find(|&r| graph.path(r.0) == path).expect(name);
        graph.references(target, 0.5).into_iter().map(|r| format!("{}:{}", r.path, r.line)).collect()
    };
    assert!(users("render", "src/registry.rs").contains(&"tests/render.rs:6".to_string()));
    assert!(users("pop", "src/vec.rs").contains(&"src/vec.rs:36".to_string()));
    assert!(users("get", "src/vec.rs").contains(&"src/vec.rs:38".to_string()));
}

/// A glob of a module that re-exports through globs of its own: pathfinding's integration
/// tests `use pathfinding::prelude::*;`, where `prelude` is an inline module of
/// `pub use crate::directed::dijkstra::*;` lines; their `dijkstra(…)` is the function, imported.
#[test]
fn a_glob_of_a_module_of_globs_imports_what_they_bring() {
    let rust = |text: &str| extract(Language::Rust, text).unwrap();
    let configs =
        HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"pf\"\nversion = \"0.1.0\"\n".to_string())]);
    let graph = CodeGraph::build(
        HashMap::from([
            (
                "src/lib.rs".to_string(),
                rust("pub mod directed;\n\npub mod prelude {\n    pub use crate::directed::dijkstra::*;\n}\n"),
            ),
            ("src/directed/mod.rs".to_string(), rust("pub mod dijkstra;\n")),
            ("src/directed/dijkstra.rs".to_string(), rust("pub fn dijkstra(n: u8) -> u8 {\n    n\n}\n")),
            (
                "tests/gps.rs".to_string(),
                rust("use pf::prelude::*;\n\n#[test]\nfn gps() {\n    assert_eq!(dijkstra(1), 1);\n}\n"),
            ),
        ]),
        &configs,
    );
    let function = graph
        .lookup("dijkstra")
        .into_iter()
        .find(|&r| graph.symbol(r).kind == crate::code::SymbolKind::Function)
        .unwrap();
    let uses: Vec<(String, u32, String)> =
        graph.references(function, 0.5).into_iter().map(|r| (r.path, r.line, r.resolution)).collect();
    assert_eq!(uses, [("tests/gps.rs".to_string(), 5, "import".to_string())]);
}

/// Inside an inline module (`mod tests { use super::*; }`), `super` is the file's own module:
/// the glob imports nothing from the module above the file (whose own globs would otherwise
/// reach the test), and `super::super::x` is one level up from the file.
#[test]
fn super_inside_an_inline_module_stays_in_the_file() {
    let text = "use super::Up;\n\npub fn parse() {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::Sibling;\n\n    #[test]\n    fn parses() {\n        parse();\n    }\n}\n";
    let code = extract(Language::Rust, text).unwrap();
    let specs: Vec<&str> = code.imports.iter().map(|i| i.spec.as_str()).collect();
    assert_eq!(specs, ["super::Up", "self", "super::Sibling"]);
}
