//! How uses resolve to what they mean (types the code states, scopes, redeclarations, a
//! language's own typing) and how change impact walks from a definition to its tests, on
//! small repos written out in each test.

use std::collections::HashMap;

use super::super::{extract, CodeGraph};
use crate::ingest::Language;

/// The walk's bounds as the daemon sets them for a diff (dependents 2 hops, tests 8).
pub(in crate::code) fn daemon_walk_limits() -> crate::code::dependents::WalkLimits {
    crate::code::dependents::WalkLimits {
        depth: 2,
        test_depth: 8,
        min_confidence: 0.5,
        test_min_confidence: 0.15,
        max_visited: 1000,
        max_work: 2000,
        member_guess: 0.2,
    }
}

/// The test files a walk from `seeds` (`daemon_walk_limits`) reaches and keeps, as the daemon
/// does, where each names the key its test waits for (`texts`: the test files' text by path);
/// sorted, each once.
pub(in crate::code) fn keyed_test_files(
    graph: &CodeGraph,
    seeds: &[crate::code::dependents::Seed],
    texts: &HashMap<&str, &str>,
) -> Vec<String> {
    use crate::code::dependents::{names_key, required_key, walk};
    let mut files: Vec<String> = walk(graph, seeds, daemon_walk_limits())
        .tests
        .iter()
        .filter(|r| required_key(graph, r).is_none_or(|key| names_key(texts[graph.path(r.file)], &key)))
        .map(|r| graph.path(r.file).to_string())
        .collect();
    files.sort();
    files.dedup();
    files
}

/// A Python repo's files by path, extracted, as one graph.
pub(super) fn python_graph(files: &[(&str, &str)]) -> CodeGraph {
    let files = files.iter().map(|(path, text)| (path.to_string(), extract(Language::Python, text).unwrap())).collect();
    CodeGraph::build(files, &HashMap::new())
}

/// A repo of one file in `language` at `path`, as one graph.
pub(super) fn one_file_graph(language: Language, path: &str, text: &str) -> CodeGraph {
    CodeGraph::build(HashMap::from([(path.to_string(), extract(language, text).unwrap())]), &HashMap::new())
}

/// The lines of the sure uses (confidence 0.5 and up) of the first definition named `name`.
pub(super) fn sure_lines(graph: &CodeGraph, name: &str) -> Vec<u32> {
    let target = graph.lookup(name)[0];
    graph.references(target, 0.5).into_iter().map(|r| r.line).collect()
}

/// The lines (with their resolution) of the sure uses of the definition `name` in `path`.
pub(super) fn sure_uses(graph: &CodeGraph, name: &str, path: &str) -> Vec<(String, u32, String)> {
    let target = graph.lookup(name).into_iter().find(|&r| graph.path(r.0) == path).expect(name);
    let mut found: Vec<(String, u32, String)> =
        graph.references(target, 0.5).into_iter().map(|r| (r.path, r.line, r.resolution)).collect();
    found.sort();
    found
}

/// What the code states about a value's type is read as a type checker reads it: a
/// parameter's annotation (through `Optional`, `| None` and quotes, and on to the base class
/// that defines the member), and the return annotation of the call a local was bound to or a
/// member is called on. `parse_args` and `main` are defined by two classes each, so without
/// the types the calls resolve by name alone, never surely.
#[test]
fn a_receiver_of_a_stated_type_resolves_to_that_types_member() {
    let core = "\
class Parser:
    def parse_args(self, args):
        return args

class Command:
    def make_parser(self) -> \"Parser\":
        return Parser()

    def parse_args(self, args):
        parser = self.make_parser()
        return parser.parse_args(args)

    def parse_chained(self, args):
        return self.make_parser().parse_args(args)

    def main(self):
        with self.make_context() as ctx:
            return ctx

    def make_context(self):
        return 1

class Group(Command):
    pass

class Other:
    def main(self):
        pass
";
    let testing = "\
from core import Command, Group

def invoke(cli: Command, args):
    return cli.main()

def invoke_group(group: \"Optional[Group]\", other: Group | None):
    group.main()
    other.main()
";
    let graph = python_graph(&[("core.py", core), ("testing.py", testing)]);
    let qualified = |line| ("core.py".to_string(), line, "qualified_path".to_string());
    assert_eq!(sure_uses(&graph, "Parser.parse_args", "core.py"), vec![qualified(11), qualified(14)]);
    // The call before `as` in a `with` is a use, not a name the statement binds.
    assert_eq!(sure_uses(&graph, "Command.make_context", "core.py"), vec![qualified(17)]);
    let from_testing = |line| ("testing.py".to_string(), line, "qualified_path".to_string());
    assert_eq!(sure_uses(&graph, "Command.main", "core.py"), vec![from_testing(4), from_testing(7), from_testing(8)]);
    assert!(sure_uses(&graph, "Other.main", "core.py").is_empty());
}

/// `getattr(parent, "meta", {})` reads `parent.meta`: an attribute named by a string constant
/// is a use of the member, resolved through the receiver like a dotted one; a string that is
/// not a name, or a call that is not one of the attribute built-ins, is not.
#[test]
fn an_attribute_named_by_a_string_constant_is_a_member_use() {
    let core = "\
class Context:
    def __init__(self, parent: \"Context\"):
        self._meta = getattr(parent, \"meta\", {})
        if hasattr(parent, 'close'):
            setattr(parent, \"meta\", None)
        print(parent, \"meta\")
        getattr(parent, \"not a name\")

    @property
    def meta(self):
        return self._meta

    def close(self):
        pass

class Other:
    def meta(self):
        pass

    def close(self):
        pass
";
    let graph = python_graph(&[("core.py", core)]);
    let qualified = |line| ("core.py".to_string(), line, "qualified_path".to_string());
    assert_eq!(sure_uses(&graph, "Context.meta", "core.py"), vec![qualified(3), qualified(5)]);
    assert_eq!(sure_uses(&graph, "Context.close", "core.py"), vec![qualified(4)]);
    assert!(sure_uses(&graph, "Other.meta", "core.py").is_empty());
}

/// A function defined inside another is seen only there, and hides a same-named one outside:
/// each decorator factory's `return decorator` means its own.
#[test]
fn a_function_nested_in_another_is_local_to_it() {
    let text = "\
def command(name):
    def decorator(f):
        return f
    return decorator

def option(name):
    def decorator(f):
        return f
    return decorator

class Builder:
    def add_init(self):
        def _attach_init(cls):
            return cls
        self.hooks.append(_attach_init)

x = decorator
";
    let graph = python_graph(&[("deco.py", text)]);
    let decorators = graph.lookup("decorator");
    assert_eq!(decorators.len(), 2);
    for (def, use_line) in decorators.into_iter().zip([4, 9]) {
        let uses: Vec<u32> = graph.references(def, 0.0).into_iter().map(|r| r.line).collect();
        assert_eq!(uses, vec![use_line], "{:?}", graph.symbol(def));
    }
    assert_eq!(sure_uses(&graph, "_attach_init", "deco.py"), vec![("deco.py".into(), 15, "local_scope".into())]);
}

/// Writing through a name (`method.__name__ = …`, `registry[key] = …`) binds nothing: the
/// name is used, and a nested function set up that way before it is returned is still the
/// one returned; a module-level class assigned an attribute in a function is still called.
#[test]
fn a_write_through_a_name_is_a_use_and_binds_nothing() {
    let text = "\
class Registry:
    pass

def make_operator(name):
    def method(self, other):
        return other
    method.__name__ = name
    return method

def register(key, value):
    Registry.items[key] = value
    return Registry()
";
    let graph = python_graph(&[("ops.py", text)]);
    let local = |line| ("ops.py".to_string(), line, "local_scope".to_string());
    assert_eq!(sure_uses(&graph, "method", "ops.py"), vec![local(7), local(8)]);
    let same_file = |line| ("ops.py".to_string(), line, "same_file".to_string());
    assert_eq!(sure_uses(&graph, "Registry", "ops.py"), vec![same_file(11), same_file(12)]);
}

/// A TypeScript function's overload signatures and its implementation, and a property's get
/// and set accessors, are one symbol each: a use means all of them surely (not a third or a
/// half each, below the default floor), and each one's references list the others as
/// declarations, as the TypeScript language service answers.
#[test]
fn overloads_and_accessors_are_one_symbol_with_their_declarations_among_its_references() {
    let api = "\
export function values<T>(map: Map<string, T>): T[]
export function values<T>(set: Set<T>): T[]
export function values(thing: any): any[] {
    return []
}

export class Reaction {
    get isDisposed() {
        return false
    }
    set isDisposed(value: boolean) {
    }
}
";
    let user = "\
import { values, Reaction } from \"./api\"

export function run(r: Reaction) {
    if (!r.isDisposed) {
        return values(new Map())
    }
}
";
    let files = [("src/api.ts", api), ("src/user.ts", user)]
        .iter()
        .map(|(path, text)| (path.to_string(), extract(Language::TypeScript, text).unwrap()))
        .collect();
    let graph = CodeGraph::build(files, &HashMap::new());
    let refs = |name: &str, line: u32| -> Vec<(String, u32, String)> {
        let target = graph.lookup(name).into_iter().find(|&r| graph.symbol(r).line == line).expect(name);
        let mut found: Vec<(String, u32, String)> =
            graph.references(target, 0.5).into_iter().map(|r| (r.path, r.line, r.kind)).collect();
        found.sort();
        found
    };
    let at = |path: &str, line, kind: &str| (path.to_string(), line, kind.to_string());
    assert_eq!(
        refs("values", 2),
        vec![
            at("src/api.ts", 1, "declaration"),
            at("src/api.ts", 3, "declaration"),
            at("src/user.ts", 1, "import"),
            at("src/user.ts", 5, "call")
        ]
    );
    assert_eq!(refs("Reaction.isDisposed", 8), vec![at("src/api.ts", 11, "declaration"), at("src/user.ts", 4, "read")]);
    assert_eq!(refs("Reaction.isDisposed", 11), vec![at("src/api.ts", 8, "declaration"), at("src/user.ts", 4, "read")]);
}

/// A Python property's getter and setter are one attribute: `text.plain` means the getter,
/// the first definition (as a Python language server answers), not each accessor in turn;
/// a change to the setter still reaches the tests that write the attribute through them.
#[test]
fn a_propertys_uses_mean_its_first_definition_and_its_setter_reaches_the_writes() {
    use crate::code::dependents::{walk, Seed};
    let text = "\
class Text:
    @property
    def plain(self):
        return self._text

    @plain.setter
    def plain(self, value):
        self._text = value

def render(text: Text):
    return text.plain

def reset(text: Text):
    text.plain = None
";
    let graph = python_graph(&[
        ("pkg/text.py", text),
        ("tests/test_text.py", "from pkg.text import render\n\ndef test_render():\n    assert render(None)\n"),
        ("tests/test_reset.py", "from pkg.text import reset\n\ndef test_reset():\n    assert reset(None)\n"),
    ]);
    let defs = graph.lookup("Text.plain");
    assert_eq!(defs.len(), 2);
    let (getter, setter) = (defs[0].min(defs[1]), defs[0].max(defs[1]));
    let lines = |r| graph.references(r, 0.5).into_iter().map(|r| r.line).collect::<Vec<_>>();
    // Each accessor's references list the other's declaration; the uses are the getter's,
    // `@plain.setter` (line 6, the class body's `plain` so far) among them.
    assert_eq!(lines(getter), vec![6, 7, 11, 14]);
    assert_eq!(lines(setter), vec![3]);
    let seeds = [Seed {
        symbol_opt: Some(setter),
        name: String::new(),
        label: "Text.plain".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let mut tests: Vec<String> =
        walk(&graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    tests.dedup();
    assert_eq!(tests, vec!["tests/test_reset.py"]);
}
/// `env.update(…)` on a value of unknown type is a dict's, not the repo's one `update`: it is
/// neither matched by name alone nor guessed by change impact; a call on a typed receiver
/// still resolves, and so does one that may be a mapping's when the repo's class is a mapping.
#[test]
fn a_built_in_types_method_name_on_an_unknown_receiver_is_not_the_repos() {
    use crate::code::dependents::{walk, Seed};
    let bar = "\
class ProgressBar:
    def update(self, n):
        self.pos = n

def make_env(env, overrides):
    env.update(overrides)
    return env

def advance(bar: ProgressBar):
    bar.update(1)

class Cache(collections.abc.MutableMapping):
    def clear(self):
        pass

class LRUCache(Cache):
    def popitem(self):
        pass

def evict(cache):
    cache.popitem()
    cache.clear()

class Headers(dict):
    def setdefault(self, key, value):
        pass

def fill(headers):
    headers.setdefault('a', 1)
";
    let graph = python_graph(&[
        ("pkg/bar.py", bar),
        ("tests/test_env.py", "from pkg.bar import make_env\n\ndef test_env():\n    assert make_env({}, {})\n"),
        ("tests/test_bar.py", "from pkg.bar import advance\n\ndef test_advance():\n    advance(None)\n"),
    ]);
    let update = graph.lookup("ProgressBar.update")[0];
    let lines: Vec<u32> = graph.references(update, 0.0).into_iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![10]);
    let seeds = [Seed {
        symbol_opt: Some(update),
        name: String::new(),
        label: "update".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let mut tests: Vec<&str> =
        walk(&graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file)).collect();
    tests.dedup();
    assert_eq!(tests, vec!["tests/test_bar.py"]);
    // A mapping's own `clear` and `popitem` are what a call on an unknown value may mean, and
    // so is the `setdefault` of a class deriving from a lowercase built-in (`dict`).
    for (name, line) in [("Cache.clear", 22), ("LRUCache.popitem", 21), ("Headers.setdefault", 29)] {
        let lines: Vec<u32> = graph.references(graph.lookup(name)[0], 0.0).into_iter().map(|r| r.line).collect();
        assert!(lines.contains(&line), "{name}: {lines:?}");
    }
}

/// Rust too: `successors(n).into_iter().map(…)` on a value the code does not type is an
/// iterator's `map`, not the one `Matrix::map` of the crate (pathfinding); a `matrix.map(…)`
/// on a typed value still is, and so is a method the crate's own trait declares (winnow's
/// `Parser::take`), called on generic values.
#[test]
fn a_std_method_name_on_an_untyped_rust_receiver_is_not_the_crates() {
    let text = "\
pub struct Matrix { rows: usize }

impl Matrix {
    pub fn map(self, f: fn(usize) -> usize) -> Matrix {
        Matrix { rows: f(self.rows) }
    }
}

pub trait Parser {
    fn take(&mut self) -> usize {
        0
    }
}

pub fn successors(n: usize) -> Vec<usize> {
    vec![n + 1]
}

pub fn step(n: usize) -> Vec<usize> {
    successors(n).into_iter().map(|n| n * 2).collect()
}

pub fn grow(m: Matrix) -> Matrix {
    m.map(|r| r + 1)
}

pub fn first<P: Parser>(mut p: P) -> usize {
    p.take()
}
";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", text);
    let lines =
        |name: &str| -> Vec<u32> { graph.references(graph.lookup(name)[0], 0.0).into_iter().map(|r| r.line).collect() };
    assert_eq!(lines("Matrix::map"), vec![24]);
    assert_eq!(lines("Parser::take"), vec![28]);
}

/// A method call on a value of unknown type (`p.value()`) runs a method, never an associated
/// function without `self` of the same name (handlebars' `BlockParamHolder::value(v)`, a
/// constructor), which only a path (`BlockParamHolder::value(…)`) calls.
#[test]
fn a_method_call_is_no_associated_function_without_self() {
    let text = "\
pub enum Holder { Value(u32) }

impl Holder {
    pub fn value(v: u32) -> Holder {
        Holder::Value(v)
    }
}

pub struct Param { v: u32 }

impl Param {
    pub fn pick<'a, F: Fn(u32) -> u32>(&'a self, f: F) -> u32 {
        f(self.v)
    }
}

pub fn truthy(params: &[Param]) -> bool {
    params.iter().all(|p| p.value() > 0)
}

pub fn make() -> Holder {
    Holder::value(1)
}

pub fn read(params: &[Param]) -> u32 {
    params[0].v + params.iter().map(|p| p.pick(|x| x)).sum::<u32>()
}

pub struct Config { dense: bool }

impl Config {
    pub fn compact(mut self, on: bool) -> Self {
        self.dense = on;
        self
    }
}

pub struct Options { config: Config }

impl Options {
    pub fn compact(&self) -> bool {
        self.config.dense
    }
}

pub fn setup(c: Vec<Config>) -> Vec<Config> {
    c.into_iter().map(|c| c.compact(true)).collect()
}

pub fn ask(o: &[Options]) -> bool {
    o.iter().any(|o| o.compact())
}
";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", text);
    let lines =
        |name: &str| -> Vec<u32> { graph.references(graph.lookup(name)[0], 0.0).into_iter().map(|r| r.line).collect() };
    assert_eq!(lines("Holder::value"), vec![22]);
    assert_eq!(lines("Param::pick"), vec![26]);
    // A builder's setter and a getter of the same name: the call's arguments say which.
    assert_eq!(lines("Config::compact"), vec![47]);
    assert_eq!(lines("Options::compact"), vec![51]);
}

/// `self.process()` in a subclass that does not define `process` is its base's, as a reader
/// (and Python) finds it; `super().__init__()` is the base's constructor, not a name-only guess
/// among every `__init__` of the repo. So is TypeScript's `this.x()` and `super.x()`.
#[test]
fn a_member_reached_through_self_or_super_is_the_base_classs() {
    let graph = python_graph(&[
        (
            "pkg/form.py",
            "class BaseForm:\n    def __init__(self, fields):\n        self.fields = fields\n\n    \
             def process(self, data=None):\n        return data\n\n\n\
             class Form(BaseForm):\n    def __init__(self, data=None):\n        super().__init__([])\n        \
             self.process(data)\n",
        ),
        ("pkg/field.py", "class Field:\n    def __init__(self):\n        pass\n\n    def process(self, data):\n        return data\n"),
    ]);
    let uses = |name: &str| -> Vec<(String, u32, String)> {
        let target = graph.defined_in("pkg/form.py", name, crate::code::SymbolKind::Method)[0];
        graph.references(target, 0.5).into_iter().map(|r| (r.path, r.line, r.resolution)).collect()
    };
    assert_eq!(uses("BaseForm.process"), vec![("pkg/form.py".to_string(), 12, "qualified_path".to_string())]);
    assert_eq!(uses("BaseForm.__init__"), vec![("pkg/form.py".to_string(), 11, "qualified_path".to_string())]);
    let field = graph.defined_in("pkg/field.py", "Field.process", crate::code::SymbolKind::Method)[0];
    assert!(graph.references(field, 0.5).is_empty());

    let ts = one_file_graph(
        Language::TypeScript,
        "src/schema.ts",
        "class Base {\n  check(v: number) { return v > 0; }\n}\n\n\
         class Num extends Base {\n  check(v: number) { return super.check(v); }\n  run(v: number) { return this.check(v); }\n}\n\n\
         class Str extends Base {\n  run(v: number) { return this.check(v); }\n}\n",
    );
    let base_check = ts.defined_in("src/schema.ts", "Base.check", crate::code::SymbolKind::Method)[0];
    let mut lines: Vec<u32> = ts.references(base_check, 0.5).into_iter().map(|r| r.line).collect();
    lines.sort();
    assert_eq!(lines, vec![6, 11]);
}

/// A member of a field the class builds from a class (`self.decoder = Decoder()`) is that
/// class's, even one from outside the repo: no guess that it is the repo's `size`; a field
/// assigned from a parameter (`self.meta = meta`) is of unknown type, and guessed.
#[test]
fn a_field_built_from_a_class_is_no_object_of_unknown_type() {
    let graph = python_graph(&[
        (
            "pkg/conn.py",
            "from hpack import Decoder\n\n\nclass Conn:\n    def __init__(self, meta):\n        \
             self.decoder = Decoder()\n        self.meta = meta\n\n    def ack(self):\n        \
             self.decoder.size = 1\n        return self.meta.size\n",
        ),
        ("pkg/settings.py", "class Settings:\n    @property\n    def size(self):\n        return 1\n"),
    ]);
    let lines: Vec<u32> = graph.unresolved_member_uses("size", "python", 0.2).iter().map(|u| u.line).collect();
    assert_eq!(lines, vec![11]);
}

/// A field assigned from a parameter whose annotation states its type (`self.soup = soup`
/// for `soup: Soup`) holds that type, whether the class body declares the field too (after
/// the method, as beautifulsoup's parser does) or not: `self.soup.handle_data(…)` is
/// `Soup.handle_data`, not a guess among every `handle_data`.
#[test]
fn a_field_assigned_from_an_annotated_parameter_has_its_type() {
    let graph = python_graph(&[
        (
            "pkg/soup.py",
            "class Soup:\n    def handle_data(self, data):\n        return data\n\n\n\
             class Other:\n    def handle_data(self, data):\n        return data\n",
        ),
        (
            "pkg/parser.py",
            "from pkg.soup import Soup\n\n\nclass Parser:\n    def __init__(self, soup: Soup):\n        \
             self.soup = soup\n\n    soup: Soup\n\n    def feed(self, data):\n        \
             self.soup.handle_data(data)\n\n\nclass Bare:\n    def __init__(self, soup: Soup):\n        \
             self.soup = soup\n\n    def feed(self, data):\n        self.soup.handle_data(data)\n",
        ),
    ]);
    let soup = graph.defined_in("pkg/soup.py", "Soup.handle_data", crate::code::SymbolKind::Method)[0];
    let lines: Vec<u32> = graph.references(soup, 0.5).into_iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![11, 19]);
    let other = graph.defined_in("pkg/soup.py", "Other.handle_data", crate::code::SymbolKind::Method)[0];
    assert!(graph.references(other, 0.0).is_empty());
}

/// A destructured local (`let [, host = "", path = ""] = …`, `const { a, b: c } = opts`, a
/// parameter `{ d }`) is bound in its function: no use of it is a definition elsewhere of that
/// name (ufo's `parseURL` read its `path` as a test file's constant).
#[test]
fn destructured_locals_are_bound() {
    let graph = one_file_graph(
        Language::TypeScript,
        "src/parse.ts",
        "export const path = 1;\nexport const c = 2;\nexport const d = 3;\nexport const key = 4;\n\n\
         export function parse(input: string, { d }: { d: number }) {\n  let [, host = \"\", path = \"\"] = input.split(\"/\");\n  \
         const { a, key: c } = JSON.parse(input);\n  return host + path + a + c + d;\n}\n\n\
         export function other() {\n  return key;\n}\n",
    );
    for (name, used_at) in [("path", vec![]), ("c", vec![]), ("d", vec![]), ("key", vec![13])] {
        let target = graph.defined_in("src/parse.ts", name, crate::code::SymbolKind::Constant);
        assert_eq!(target.len(), 1, "{name}");
        let lines: Vec<u32> = graph.references(target[0], 0.0).into_iter().map(|r| r.line).collect();
        assert_eq!(lines, used_at, "{name}");
    }
}

/// A property's `@size.setter` in the class body redefines the property when the class is
/// built; an instance does not read the getter by it: a test that only makes a `Box` does not
/// run the getter, one that reads `box.size` does.
#[test]
fn a_property_setter_decorator_is_no_read_of_the_getter() {
    use crate::code::dependents::{walk, Seed};
    let graph = python_graph(&[
        (
            "pkg/box.py",
            "class Box:\n    def __init__(self):\n        self._size = 1\n\n    @property\n    def size(self):\n        \
             return self._size\n\n    @size.setter\n    def size(self, value):\n        self._size = value\n",
        ),
        ("tests/test_make.py", "from pkg.box import Box\n\ndef test_make():\n    assert Box()\n"),
        ("tests/test_read.py", "from pkg.box import Box\n\ndef test_read():\n    assert Box().size == 1\n"),
    ]);
    let getter = graph.defined_in("pkg/box.py", "Box.size", crate::code::SymbolKind::Method);
    assert!(!getter.is_empty(), "the getter is a method");
    let seeds = [Seed {
        symbol_opt: Some(getter[0]),
        name: "size".into(),
        label: "Box.size".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let mut found: Vec<String> =
        walk(&graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    found.sort();
    found.dedup();
    assert_eq!(found, vec!["tests/test_read.py"]);
}

/// In a repo of two languages a name means a definition only in code that can call it: a Go
/// test's `r.pick()` is not the Python method `pick`'s use, nor guessed as one; a
/// TypeScript file's call of a JavaScript function is.
#[test]
fn a_name_in_another_language_is_no_use_unless_that_language_can_call_it() {
    let files = HashMap::from([
        (
            "strings.py".to_string(),
            extract(
                Language::Python,
                "class StringType:\n    def pick(self):\n        return 1\n\ndef render():\n    return 2\n",
            )
            .unwrap(),
        ),
        (
            "runner_test.go".to_string(),
            extract(Language::Go, "package main\n\nfunc TestRun(t *testing.T) {\n\tr.pick()\n\trender()\n}\n").unwrap(),
        ),
        ("lib.js".to_string(), extract(Language::JavaScript, "export function shout(x) {\n  return x\n}\n").unwrap()),
        ("main.ts".to_string(), extract(Language::TypeScript, "shout('a')\n").unwrap()),
    ]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let uses_in = |name: &str| -> Vec<String> {
        let target = graph.lookup(name)[0];
        let mut paths: Vec<String> = graph.references(target, 0.0).into_iter().map(|r| r.path).collect();
        paths.dedup();
        paths
    };
    assert_eq!(uses_in("render"), Vec::<String>::new());
    assert_eq!(uses_in("shout"), vec!["main.ts"]);
    let guessed = graph.unresolved_member_uses("pick", "python", 0.2);
    assert!(guessed.is_empty(), "a Go call guessed as the Python method: {guessed:?}");
    assert_eq!(graph.unresolved_member_uses("pick", "go", 0.2).len(), 1);
}

/// A class of the repo's named like a wrapper type (`Box`, `Type`, `Final`) is a base like
/// any other: python-box's `class ConfigBox(Box)` overrides `Box._flush_pending_parent`,
/// which `Box.__setitem__` calls on `self`.
#[test]
fn a_base_named_like_a_wrapper_type_is_a_base() {
    use crate::code::dependents::{type_seeds, walk, Seed};
    let graph = python_graph(&[
        ("pkg/box.py", "class Box(dict):\n    def put(self, k, v):\n        self._flush()\n\n    def _flush(self):\n        return 1\n"),
        ("pkg/config_box.py", "from pkg.box import Box\n\n\nclass ConfigBox(Box):\n    def _flush(self):\n        return 2\n"),
        ("tests/test_config.py", "from pkg.config_box import ConfigBox\n\ndef test_put():\n    ConfigBox().put('a', 1)\n"),
        ("tests/test_box.py", "from pkg.box import Box\n\ndef test_box():\n    Box().put('a', 1)\n"),
    ]);
    let flush = graph.lookup("_flush").into_iter().find(|&r| graph.symbol(r).container == "ConfigBox").unwrap();
    assert!(graph.overrides_a_base_method(flush));
    let mut seeds = vec![Seed {
        symbol_opt: Some(flush),
        name: "_flush".into(),
        label: "ConfigBox._flush".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let more = type_seeds(&graph, &seeds);
    seeds.extend(more);
    let found: Vec<&str> =
        walk(&graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file)).collect();
    assert_eq!(found, vec!["tests/test_config.py"]);
}

/// An `isinstance` test types a name as a type checker narrows it: in the body of `if
/// isinstance(block, Entry):`, and after `if not isinstance(node, Duplicate): return`, so
/// `block.key` is `Entry.key` and `node.key` is `Duplicate.key`, not either by name.
#[test]
fn an_isinstance_test_narrows_a_name_to_its_class() {
    let model = "class Entry:\n    @property\n    def key(self):\n        return 1\n\n\n\
                 class Duplicate:\n    @property\n    def key(self):\n        return 2\n";
    let library = "from pkg.model import Entry, Duplicate\n\n\n\
                   def add(block):\n    if isinstance(block, Entry):\n        return block.key\n    return None\n\n\n\
                   def check(node):\n    if not isinstance(node, Duplicate):\n        return None\n    return node.key\n";
    let graph = python_graph(&[("pkg/model.py", model), ("pkg/library.py", library)]);
    let lines = |name: &str| -> Vec<u32> {
        sure_uses(&graph, name, "pkg/model.py")
            .into_iter()
            .filter(|(p, ..)| p == "pkg/library.py")
            .map(|(_, l, _)| l)
            .collect()
    };
    assert_eq!(lines("Entry.key"), [6]);
    assert_eq!(lines("Duplicate.key"), [13]);
}

/// A module-level instance imported from another module (`from . import registry`, even
/// inside a function) has its class's members: `registry.get()` is `Registry.get`, though
/// `get` is a dict's name too and another class has a `lookup`.
#[test]
fn an_imported_module_level_instance_has_its_class_members() {
    let graph = python_graph(&[
        (
            "pkg/reg.py",
            "class Registry:\n    def get(self):\n        return 1\n\n    def lookup(self):\n        return 2\n",
        ),
        ("pkg/other.py", "class Other:\n    def lookup(self):\n        return 3\n"),
        ("pkg/__init__.py", "from .reg import Registry\n\nregistry = Registry()\n"),
        ("pkg/use.py", "from pkg import registry\n\n\ndef first():\n    return registry.lookup()\n"),
        (
            "pkg/late.py",
            "class Late:\n    def __new__(cls):\n        from . import registry\n\n        return registry.get()\n",
        ),
    ]);
    let refs = |name: &str| -> Vec<(String, u32)> {
        graph.references(graph.lookup(name)[0], 0.5).into_iter().map(|r| (r.path, r.line)).collect()
    };
    assert_eq!(refs("Registry.lookup"), vec![("pkg/use.py".to_string(), 5)]);
    assert_eq!(refs("Registry.get"), vec![("pkg/late.py".to_string(), 5)]);
}
