//! How JavaScript and TypeScript code reaches its tests: a class's method a framework runs by
//! a node's name, a method held under a built-in one's name, fixtures loaded by a computed
//! path, a module's own instance, a package's type declarations.

use std::collections::HashMap;

use super::super::{extract, CodeGraph, FileCode};
use super::dispatch::test_files_reached;
use super::resolution::keyed_test_files;
use crate::ingest::Language;

/// A TypeScript class's method that nothing in the repo calls runs where its class is used:
/// a framework's visitor finds `expr` by a node's name (`this.visit(cst)`, inherited from a
/// base outside the repo), so a change to what `expr` calls reaches the tests of `evaluate`,
/// which makes the visitor. A method called by name keeps its callers only.
#[test]
fn a_typescript_method_nothing_calls_runs_where_its_class_is_used() {
    let ts = |t: &str| extract(Language::TypeScript, t).unwrap();
    let files = HashMap::from([
        ("src/helper.ts".to_string(), ts("export function getResult(a: number) {\n  return a\n}\n")),
        (
            "src/visitor.ts".to_string(),
            ts("import { getResult } from './helper'\n\
                const Base = parser.getBaseCstVisitorConstructor()\n\
                export class Visitor extends Base {\n\
                \x20 expr(ctx: any) {\n\
                \x20   return getResult(this.visit(ctx.lhs))\n\
                \x20 }\n\
                \x20 named(x: number) {\n\
                \x20   return x\n\
                \x20 }\n\
                }\n"),
        ),
        (
            "src/lib.ts".to_string(),
            ts("import { Visitor } from './visitor'\n\
                export function evaluate(cst: any) {\n\
                \x20 const v = new Visitor()\n\
                \x20 return v.visit(cst)\n\
                }\n\
                export function twice(x: number) {\n\
                \x20 return new Visitor().named(x)\n\
                }\n"),
        ),
        (
            "src/spec/eval.spec.ts".to_string(),
            ts("import { evaluate } from '../lib'\nit('adds', () => { evaluate('1 + 1') })\n"),
        ),
        ("src/spec/twice.spec.ts".to_string(), ts("import { twice } from '../lib'\nit('twice', () => { twice(2) })\n")),
    ]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let find = |name: &str| graph.lookup(name)[0];
    assert_eq!(test_files_reached(&graph, find("getResult")), ["src/spec/eval.spec.ts", "src/spec/twice.spec.ts"]);
    assert_eq!(test_files_reached(&graph, find("named")), ["src/spec/twice.spec.ts"]);
}

/// A method local to a function and named after one the language's own objects have runs
/// where code writes that name, not wherever its holder runs: magicast's proxied array has
/// `unshift` and a `deleteProperty` trap, which a test runs by `list.unshift(…)` and `delete
/// list[0]`; a test that only builds the list runs neither. Its `get` trap runs without its name
/// (any read). A name the repo's own type declares (`Struct.entries`, filled from an options
/// object's `*entries`) is the repo's protocol: held as before.
#[test]
fn a_held_method_named_after_a_built_in_one_runs_where_the_name_is_written() {
    use crate::code::dependents::Seed;
    let ts = |t: &str| extract(Language::TypeScript, t).unwrap();
    let list = "export function makeList(items: any[]) {\n\
                \x20 const utils = {\n\
                \x20   unshift(value: any) {\n\
                \x20     items.unshift(value)\n\
                \x20   },\n\
                \x20 }\n\
                \x20 return new Proxy(items, {\n\
                \x20   get(target: any, key: any) {\n\
                \x20     return key in utils ? (utils as any)[key] : target[key]\n\
                \x20   },\n\
                \x20   deleteProperty(target: any, key: any) {\n\
                \x20     return delete target[key]\n\
                \x20   },\n\
                \x20 })\n\
                }\n";
    let structs = "export class Struct {\n\
                   \x20 entries: any\n\
                   \x20 constructor(props: any) {\n\
                   \x20   this.entries = props.entries\n\
                   \x20 }\n\
                   }\n\
                   export function array() {\n\
                   \x20 return new Struct({\n\
                   \x20   *entries(value: any) {\n\
                   \x20     yield value\n\
                   \x20   },\n\
                   \x20 })\n\
                   }\n";
    let built = "import { makeList } from '../src/list'\nit('builds', () => { makeList([1]) })\n";
    let unshifted = "import { makeList } from '../src/list'\nit('unshifts', () => { makeList([1]).unshift(0) })\n";
    let deleted =
        "import { makeList } from '../src/list'\nit('deletes', () => { const l = makeList([1]); delete l[0] })\n";
    let arrays = "import { array } from '../src/structs'\nit('validates', () => { array() })\n";
    let texts: HashMap<&str, &str> = HashMap::from([
        ("test/built.test.ts", built),
        ("test/unshifted.test.ts", unshifted),
        ("test/deleted.test.ts", deleted),
        ("test/arrays.test.ts", arrays),
    ]);
    let mut files: HashMap<String, FileCode> = texts.iter().map(|(path, text)| (path.to_string(), ts(text))).collect();
    files.insert("src/list.ts".to_string(), ts(list));
    files.insert("src/structs.ts".to_string(), ts(structs));
    let graph = CodeGraph::build(files, &HashMap::new());
    // (The options object's `entries`, not the field it fills.)
    let reached = |name: &str, path: &str| {
        let target = graph
            .lookup(name)
            .into_iter()
            .find(|&r| graph.path(r.0) == path && graph.symbol(r).kind.is_callable())
            .expect(name);
        keyed_test_files(&graph, &[Seed::plain(Some(target), name, name)], &texts)
    };
    assert_eq!(reached("unshift", "src/list.ts"), ["test/unshifted.test.ts"]);
    assert_eq!(reached("deleteProperty", "src/list.ts"), ["test/deleted.test.ts"]);
    assert_eq!(reached("get", "src/list.ts"), ["test/built.test.ts", "test/deleted.test.ts", "test/unshifted.test.ts"]);
    assert_eq!(reached("entries", "src/structs.ts"), ["test/arrays.test.ts"]);
}

/// A test file that loads modules by a path it computes runs what they do as they load:
/// superstruct's `test/index.test.ts` imports every fixture under `test/validation/` with
/// `await import(resolve(dir, name))`, and each fixture calls the struct it tests at its top
/// level (`export const Struct = bigint()`). A change to `bigint` reaches that test file; a
/// fixture some file imports by name is that file's, and a test file that loads nothing by a
/// computed path runs none.
#[test]
fn a_test_that_loads_fixtures_by_a_computed_path_runs_what_they_call() {
    let ts = |t: &str| extract(Language::TypeScript, t).unwrap();
    let files = HashMap::from([
        (
            "src/index.ts".to_string(),
            ts("export function bigint() {\n  return 1\n}\nexport function string() {\n  return 2\n}\n"),
        ),
        (
            "test/validation/bigint/valid.ts".to_string(),
            ts("import { bigint } from '../../../src'\nexport const Struct = bigint()\n"),
        ),
        ("test/helpers/shared.ts".to_string(), ts("import { string } from '../../src'\nexport const S = string()\n")),
        (
            "test/index.test.ts".to_string(),
            ts("import { resolve } from 'path'\n\
                describe('validation', async () => {\n\
                \x20 for (const name of names) {\n\
                \x20   const module = await import(resolve(__dirname, 'validation', name))\n\
                \x20   it(name, () => { check(module.Struct) })\n\
                \x20 }\n\
                })\n"),
        ),
        (
            "test/other.test.ts".to_string(),
            ts("import { S } from './helpers/shared'\nimport './plain'\nit('plain', () => { check(S) })\n"),
        ),
    ]);
    let configs = HashMap::from([("package.json".to_string(), r#"{"devDependencies":{"vitest":"^3"}}"#.to_string())]);
    let graph = CodeGraph::build(files, &configs);
    let find = |name: &str| graph.lookup(name)[0];
    assert_eq!(test_files_reached(&graph, find("bigint")), ["test/index.test.ts"]);
    assert_eq!(test_files_reached(&graph, find("string")), ["test/other.test.ts"]);
}

/// A module's own instance is what its name means there, though another file assigns members
/// to a variable of that name: immer's `src/immer.ts` builds `const immer = new Immer()` and
/// exports `immer.produce`, while its tests write `immer.produce = function…` on an `immer`
/// of their own. Those assignments are no definitions the module can see, so `immer.produce`
/// there is `Immer`'s, and a change to it reaches every test that calls the export.
#[test]
fn a_module_s_own_instance_is_what_its_name_means_there() {
    let ts = |t: &str| extract(Language::TypeScript, t).unwrap();
    let js = |t: &str| extract(Language::JavaScript, t).unwrap();
    let files = HashMap::from([
        (
            "src/immerClass.ts".to_string(),
            ts("export class Immer {\n\
                \x20 produce = (base: any, recipe?: any) => {\n\
                \x20   return recipe(base)\n\
                \x20 }\n\
                }\n"),
        ),
        ("src/internal.ts".to_string(), ts("export * from './immerClass'\n")),
        (
            "src/immer.ts".to_string(),
            ts("import { Immer } from './internal'\n\
                const immer = new Immer()\n\
                export const produce = /* @__PURE__ */ immer.produce\n"),
        ),
        (
            "__tests__/base.js".to_string(),
            js("import { Immer } from '../src/immer'\n\
                function patched() {\n\
                \x20 const immer = new Immer()\n\
                \x20 immer.produce = function (...args) {\n\
                \x20   return args\n\
                \x20 }\n\
                \x20 return immer\n\
                }\n\
                it('wraps', () => { patched().produce(1) })\n"),
        ),
        (
            "__tests__/curry.test.ts".to_string(),
            ts("import { produce } from '../src/immer'\nit('curries', () => { produce(1, (x: any) => x) })\n"),
        ),
    ]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let produce = graph.lookup("Immer.produce")[0];
    let uses: Vec<(String, u32)> = graph.references(produce, 0.5).into_iter().map(|r| (r.path, r.line)).collect();
    assert!(uses.contains(&("src/immer.ts".to_string(), 3)), "{uses:?}");
    assert!(test_files_reached(&graph, produce).contains(&"__tests__/curry.test.ts".to_string()));
}

/// A JavaScript package that ships its own type declarations (`lib/results.d.ts` beside
/// `lib/results.js`): a call the declaration's class types (`results.close()` on `new
/// Results()`) resolves to the declaration, and runs the JavaScript beside it.
#[test]
fn a_javascript_method_runs_where_its_type_declaration_is_used() {
    let js = |t: &str| extract(Language::JavaScript, t).unwrap();
    let ts = |t: &str| extract(Language::TypeScript, t).unwrap();
    let files = HashMap::from([
        (
            "lib/results.js".to_string(),
            js("function Results(options) {\n  this.count = 0;\n}\n\nResults.prototype.close = function () {\n  this.count += 1;\n};\n\nmodule.exports = Results;\n"),
        ),
        (
            "lib/results.d.ts".to_string(),
            ts("declare class Results {\n    count: number;\n    close(this: Results): void;\n}\n\nexport = Results;\n"),
        ),
        (
            "index.js".to_string(),
            js("var Results = require('./lib/results');\n\nfunction createHarness() {\n  var results = new Results();\n  return function () { results.close(); };\n}\n\nmodule.exports = createHarness;\n"),
        ),
        (
            "test/close.test.js".to_string(),
            js("var createHarness = require('../index');\ntest('closes', function () {\n  createHarness()();\n});\n"),
        ),
    ]);
    let package = HashMap::from([("package.json".to_string(), "{\"name\": \"harness\"}".to_string())]);
    let graph = CodeGraph::build(files, &package);
    let close = graph
        .lookup("close")
        .into_iter()
        .find(|&r| graph.path(r.0) == "lib/results.js")
        .expect("Results.close in lib/results.js");
    let declared = graph.declaration_of(close).expect("its declaration");
    assert_eq!(graph.path(declared.0), "lib/results.d.ts");
    assert_eq!(test_files_reached(&graph, close), ["test/close.test.js"]);
}
