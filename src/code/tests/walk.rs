//! How change impact walks from a definition to its tests: through helpers, variables and
//! constructors, overloads, mixins and subclasses' test classes, instances made, a library
//! base's calls, overrides, and a name taken away.

use super::super::CodeGraph;
use super::resolution::{daemon_walk_limits, python_graph};
use super::traits::rust_graph;

/// Tests reach a changed method through what pytest runs: a helper module in `tests/` is no
/// test file (its callers are), a module-level variable built from a function leads on to the
/// variable's users, and a class built by a test runs its `__init__` and what that calls.
#[test]
fn tests_reach_a_change_through_helpers_variables_and_constructors() {
    use crate::code::dependents::{walk, Seed};
    let graph = python_graph(&[
        (
            "pkg/core.py",
            "\
def encoding():
    return 'utf-8'

_cached = make_cached(encoding)

def echo(text):
    return _cached()

class Option:
    def __init__(self, flag):
        self.flag = self.is_flag(flag)

    def is_flag(self, flag):
        return bool(flag)
",
        ),
        ("tests/helpers.py", "from pkg.core import echo\n\ndef shout(text):\n    return echo(text.upper())\n"),
        ("tests/test_echo.py", "from tests.helpers import shout\n\ndef test_shout():\n    assert shout('a')\n"),
        ("tests/test_option.py", "from pkg.core import Option\n\ndef test_option():\n    assert Option(1).flag\n"),
    ]);
    let limits = daemon_walk_limits();
    let tests_of = |name: &str| -> Vec<String> {
        let changed = graph.lookup(name)[0];
        let seeds = [Seed {
            symbol_opt: Some(changed),
            name: String::new(),
            label: name.into(),
            instances_only: false,
            declared_only: false,
            needs_operation: 0,
            key: None,
        }];
        let mut found: Vec<String> =
            walk(&graph, &seeds, limits).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
        found.sort();
        found.dedup();
        found
    };
    assert_eq!(tests_of("encoding"), vec!["tests/test_echo.py"]);
    assert_eq!(tests_of("Option.is_flag"), vec!["tests/test_option.py"]);
}

/// `@overload` signatures and then the body: a use means the first declaration (as for a
/// property), so a change inside the body, or inside a function nested in it, still reaches
/// the tests that call it.
#[test]
fn a_change_in_an_overloaded_functions_body_reaches_its_callers_tests() {
    use crate::code::dependents::{walk, Seed};
    let prompt = "\
from typing import overload

@overload
def prompt(text: str) -> str: ...

@overload
def prompt(text: int) -> int: ...

def prompt(text):
    def ask(t):
        return input(t)
    return ask(text)
";
    let graph = python_graph(&[
        ("pkg/prompt.py", prompt),
        ("tests/test_prompt.py", "from pkg.prompt import prompt\n\ndef test_prompt():\n    assert prompt('x')\n"),
    ]);
    for name in ["prompt", "ask"] {
        let body = *graph.lookup(name).iter().max().unwrap();
        let seeds = [Seed {
            symbol_opt: Some(body),
            name: String::new(),
            label: name.into(),
            instances_only: false,
            declared_only: false,
            needs_operation: 0,
            key: None,
        }];
        let walked = walk(&graph, &seeds, daemon_walk_limits());
        let mut tests: Vec<&str> = walked.tests.iter().map(|t| graph.path(t.file)).collect();
        tests.dedup();
        assert_eq!(tests, vec!["tests/test_prompt.py"], "from {name}");
    }
}

/// A unittest mixin's test method, written in a helper module, runs in each test module's
/// class that derives from the mixin: those are the tests a change to what it calls reaches.
#[test]
fn a_mixins_test_method_is_a_test_of_the_classes_that_derive_from_it() {
    use crate::code::dependents::{walk, Seed};
    let graph = python_graph(&[
        ("cache.py", "def evict(items):\n    return items[1:]\n"),
        (
            "tests/__init__.py",
            "from cache import evict\n\nclass CacheTestMixin:\n    def test_evict(self):\n        assert evict([1, 2]) == [2]\n",
        ),
        (
            "tests/test_lru.py",
            "import unittest\nfrom tests import CacheTestMixin\n\nclass LRUTest(unittest.TestCase, CacheTestMixin):\n    pass\n",
        ),
        ("tests/test_other.py", "import unittest\n\nclass OtherTest(unittest.TestCase):\n    pass\n"),
    ]);
    let changed = graph.lookup("evict")[0];
    let seeds = [Seed {
        symbol_opt: Some(changed),
        name: String::new(),
        label: "evict".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let limits = daemon_walk_limits();
    let found = walk(&graph, &seeds, limits);
    let tests: Vec<(&str, &str)> = found
        .tests
        .iter()
        .map(|t| (graph.path(t.file), graph.symbol((t.file, t.symbol_opt.unwrap())).name.as_str()))
        .collect();
    assert_eq!(tests, vec![("tests/test_lru.py", "LRUTest")]);
}

/// A mixin of `test_*` methods in a test module itself (cachetools' `DecoratorTestMixin` in
/// `tests/test_cached.py`) is no class pytest collects: its tests run as those of the
/// module's classes that derive from it and from `unittest.TestCase`, which are listed
/// instead (a runner given `DecoratorTestMixin::test_decorator` finds nothing). A class named
/// `Test*` is collected by its name (one named `…TestCase`, or deriving from the repo's own plain
/// `QuantityTestCase` as pint's `_TestBasic` does, only by a base that is unittest's);
/// another mixin on the way runs nothing by itself. A function local to a test (`test_local`)
/// is given to the runner as the test that holds it.
#[test]
fn a_test_mixin_in_a_test_module_runs_as_its_collected_subclasses() {
    use crate::code::dependents::{walk, Seed};
    let graph = python_graph(&[
        ("cache.py", "def evict(items):\n    return items[1:]\n"),
        (
            "tests/test_cached.py",
            "import unittest\nfrom cache import evict\n\n\
             class DecoratorTestMixin:\n    def test_evict(self):\n        assert evict([1, 2]) == [2]\n\n\
             class MoreMixin(DecoratorTestMixin):\n    pass\n\n\
             class CacheWrapperTest(unittest.TestCase, MoreMixin):\n    pass\n\n\
             class TestPlain:\n    def test_plain(self):\n        def test_local(x):\n            return evict(x)\n        assert test_local([3]) == []\n\n\
             class AbstractCacheTestCase(object):\n    def test_abstract(self):\n        assert evict([4]) == []\n\n\
             class QuantityTestCase:\n    pass\n\n\
             class _TestBasic(QuantityTestCase):\n    def test_basic(self):\n        assert evict([5]) == []\n\n\
             class TestBasicFloat(_TestBasic):\n    pass\n\n\
             class TestCase(unittest.TestCase):\n    pass\n\n\
             class OwnBaseMixin:\n    def test_own(self):\n        assert evict([6]) == []\n\n\
             class Checks(TestCase, OwnBaseMixin):\n    pass\n",
        ),
    ]);
    let changed = graph.lookup("evict")[0];
    let seeds = [Seed::plain(Some(changed), "evict", "evict")];
    let found = walk(&graph, &seeds, daemon_walk_limits());
    let listed = |t: &&crate::code::dependents::Reached| !graph.is_local(t.file, t.symbol_opt.unwrap());
    let mut tests: Vec<(&str, &str)> = found
        .tests
        .iter()
        .filter(listed)
        .map(|t| (graph.path(t.file), graph.symbol((t.file, t.symbol_opt.unwrap())).qualified_name.as_str()))
        .collect();
    tests.sort();
    assert_eq!(
        tests,
        vec![
            ("tests/test_cached.py", "CacheWrapperTest"),
            ("tests/test_cached.py", "Checks"),
            ("tests/test_cached.py", "TestBasicFloat"),
        ]
    );
    // What a runner is given: the local function as the test that holds it, no mixin's test.
    let mut names: Vec<String> =
        found.tests.iter().map(|t| graph.test_name(t.file, t.symbol_opt.unwrap() as usize)).collect();
    names.sort();
    names.dedup();
    assert_eq!(names, ["", "TestPlain.test_plain"]);
    assert!(graph.pytest_collects("CacheWrapperTest") && graph.pytest_collects("TestPlain"));
    assert!(!graph.pytest_collects("DecoratorTestMixin") && !graph.pytest_collects("MoreMixin"));
    assert!(!graph.pytest_collects("AbstractCacheTestCase") && !graph.pytest_collects("_TestBasic"));
}

/// A test class's test method runs again in each test module's class that derives from that
/// very class (itsdangerous' `TestTimestampSigner(TestSigner)`), unless the subclass writes its
/// own; a namesake class in another module (two `class TestCore`) is another class.
#[test]
fn a_test_class_s_test_runs_in_the_test_modules_of_its_subclasses() {
    use crate::code::dependents::{walk, Seed};
    let graph = python_graph(&[
        ("signer.py", "def sign(value):\n    return value + '.sig'\n"),
        (
            "tests/test_signer.py",
            "from signer import sign\n\nclass TestCore:\n    def test_sign(self):\n        assert sign('a') == 'a.sig'\n",
        ),
        (
            "tests/test_timed.py",
            "from tests.test_signer import TestCore\n\nclass TestTimed(TestCore):\n    def test_age(self):\n        pass\n",
        ),
        (
            "tests/test_override.py",
            "from tests.test_signer import TestCore\n\nclass TestOwn(TestCore):\n    def test_sign(self):\n        pass\n",
        ),
        ("tests/test_core.py", "class TestCore:\n    def test_other(self):\n        pass\n"),
        ("tests/test_namesake.py", "from tests.test_core import TestCore\n\nclass TestMore(TestCore):\n    pass\n"),
    ]);
    let seeds = [Seed::plain(Some(graph.lookup("sign")[0]), "", "sign")];
    let found = walk(&graph, &seeds, daemon_walk_limits());
    let mut tests: Vec<(&str, &str)> = found
        .tests
        .iter()
        .map(|t| (graph.path(t.file), t.symbol_opt.map_or("", |i| graph.symbol((t.file, i)).qualified_name.as_str())))
        .collect();
    tests.sort();
    assert_eq!(tests, vec![("tests/test_signer.py", "TestCore.test_sign"), ("tests/test_timed.py", "TestTimed")]);
}

/// A special method's type leads on only where an instance is made: a call of the class, or
/// a subclass's header and then its calls; a test that only names the class (`isinstance`,
/// a class attribute) does not run `__repr__`.
#[test]
fn a_type_seeded_for_its_instances_leads_only_to_where_instances_are_made() {
    use crate::code::dependents::{walk, Seed};
    let graph = python_graph(&[
        (
            "pkg/money.py",
            "class Money:\n    def __repr__(self):\n        return 'Money()'\n\nclass Euro(Money):\n    pass\n",
        ),
        ("tests/test_make.py", "from pkg.money import Money\n\ndef test_make():\n    assert repr(Money())\n"),
        ("tests/test_euro.py", "from pkg.money import Euro\n\ndef test_euro():\n    assert Euro()\n"),
        (
            "tests/test_named.py",
            "from pkg.money import Money\n\ndef test_named():\n    assert isinstance(1, Money) is False\n",
        ),
    ]);
    let money = graph.lookup("Money")[0];
    let tests_of = |instances_only: bool| -> Vec<String> {
        let seeds = [Seed {
            symbol_opt: Some(money),
            name: String::new(),
            label: "Money (__repr__)".into(),
            instances_only,
            declared_only: false,
            needs_operation: 0,
            key: None,
        }];
        let mut found: Vec<String> =
            walk(&graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
        found.sort();
        found.dedup();
        found
    };
    assert_eq!(tests_of(true), vec!["tests/test_euro.py", "tests/test_make.py"]);
    assert_eq!(tests_of(false), vec!["tests/test_euro.py", "tests/test_make.py", "tests/test_named.py"]);
}

/// A Python method marked `@override` of a class whose base the repo does not define runs
/// where the library's base calls it, on an instance: cloup's `Command.format_help` under
/// click's `--help`. A change to what it calls reaches the tests that make a `Command`, not
/// those that only name the class. Without the mark, the library's base may still call it
/// (html.parser's `feed` calls a parser's `handle_starttag`): so too, but not a method of an
/// exception's, which code calls by name.
#[test]
fn a_method_a_librarys_base_may_call_runs_where_its_class_is_instantiated() {
    use crate::code::dependents::{type_seeds, walk, Seed};
    let commands = "import click\nfrom typing import override\n\n\
                    class Command(click.Command):\n    @override\n    def format_help(self, ctx, formatter):\n        \
                    self.format_aliases(formatter)\n\n    def format_aliases(self, formatter):\n        pass\n\n\
                    class Plain(click.Command):\n    def format_help(self, ctx, formatter):\n        \
                    self.format_usage_line(formatter)\n\n    def format_usage_line(self, formatter):\n        pass\n\n\
                    class Failed(RuntimeError):\n    def describe(self):\n        return 'failed'\n";
    let graph = python_graph(&[
        ("pkg/commands.py", commands),
        (
            "tests/test_help.py",
            "from click.testing import CliRunner\nfrom pkg.commands import Command, Plain\n\n\
             def test_help():\n    assert CliRunner().invoke(Command('x'), ['--help'])\n\n\
             def test_plain():\n    assert CliRunner().invoke(Plain('x'), ['--help'])\n\n\
             def test_failed():\n    assert Failed()\n",
        ),
        ("tests/test_named.py", "from pkg.commands import Command\n\ndef test_named():\n    assert Command\n"),
    ]);
    let tests_of = |name: &str| -> Vec<String> {
        let changed = graph.lookup(name)[0];
        let seeds = vec![Seed {
            symbol_opt: Some(changed),
            name: String::new(),
            label: name.into(),
            instances_only: false,
            declared_only: false,
            needs_operation: 0,
            key: None,
        }];
        let all: Vec<Seed> = seeds.iter().cloned().chain(type_seeds(&graph, &seeds)).collect();
        let walked = walk(&graph, &all, daemon_walk_limits());
        let name = |t: &crate::code::dependents::Reached| {
            t.symbol_opt.map(|i| graph.symbol((t.file, i)).qualified_name.clone())
        };
        walked.tests.iter().filter_map(name).collect()
    };
    assert_eq!(tests_of("Command.format_aliases"), vec!["test_help"]);
    assert_eq!(tests_of("Command.format_help"), vec!["test_help"]);
    assert_eq!(tests_of("Plain.format_usage_line"), vec!["test_plain"]);
    assert_eq!(tests_of("Plain.format_help"), vec!["test_plain"]);
    assert_eq!(tests_of("Failed.describe"), Vec::<String>::new());
}

/// An override of a base's method runs where the base's code calls it on an instance of the
/// subclass: its type leads on from the instances a declaration or a test makes (a test's
/// `String()`), not from one a function of the library makes as it goes, nor from the base's
/// other subclasses. (A schema's field `name = String()` is reached, but not yet the schema's
/// users: a field's value does not lead on to its class.)
#[test]
fn an_override_leads_on_from_the_instances_declarations_and_tests_make() {
    use crate::code::dependents::{owning_type, walk, Seed};
    let graph = python_graph(&[
        (
            "pkg/fields.py",
            "class Field:\n    def serialize(self, value):\n        return self._serialize(value)\n\n    def _serialize(self, value):\n        return value\n\n\nclass String(Field):\n    def _serialize(self, value):\n        return str(value)\n\n\nclass Number(Field):\n    def _serialize(self, value):\n        return value\n\n\ndef field_for(kind):\n    return String()\n",
        ),
        ("pkg/schema.py", "from pkg.fields import String\n\nclass UserSchema:\n    name = String()\n"),
        ("tests/test_schema.py", "from pkg.schema import UserSchema\n\ndef test_dump():\n    assert UserSchema()\n"),
        ("tests/test_string.py", "from pkg.fields import String\n\ndef test_string():\n    assert String().serialize(1)\n"),
        ("tests/test_number.py", "from pkg.fields import Number\n\ndef test_number():\n    assert Number().serialize(1)\n"),
        ("tests/test_factory.py", "from pkg.fields import field_for\n\ndef test_factory():\n    assert field_for('s')\n"),
    ]);
    let string_serialize = graph
        .lookup("_serialize")
        .into_iter()
        .find(|&r| graph.symbol(r).container == "String")
        .expect("String._serialize");
    assert!(graph.overrides_a_base_method(string_serialize));
    let field_serialize =
        graph.lookup("_serialize").into_iter().find(|&r| graph.symbol(r).container == "Field").unwrap();
    assert!(!graph.overrides_a_base_method(field_serialize), "the base's own method overrides nothing");
    let seeds = [Seed {
        symbol_opt: owning_type(&graph, string_serialize),
        name: String::new(),
        label: "String (_serialize)".into(),
        instances_only: true,
        declared_only: true,
        needs_operation: 0,
        key: None,
    }];
    let mut found: Vec<String> =
        walk(&graph, &seeds, daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    found.sort();
    found.dedup();
    assert_eq!(found, vec!["tests/test_string.py"]);
    let reached: Vec<String> = walk(&graph, &seeds, daemon_walk_limits())
        .dependents
        .iter()
        .filter_map(|r| r.symbol_opt.map(|i| graph.code(r.file).symbols[i as usize].qualified_name.clone()))
        .collect();
    assert!(reached.contains(&"UserSchema.name".to_string()), "{reached:?}");
    assert!(!reached.contains(&"field_for".to_string()), "{reached:?}");
}

/// A name a diff takes away breaks every module that imports it at its top level, and every
/// module importing those, up to the test files, which fail at collection: not a module that
/// imports it inside a function (that import runs only when the function does).
#[test]
fn a_name_taken_away_breaks_the_tests_that_import_its_importers() {
    use crate::code::dependents::{broken_imports, Seed};
    let graph = python_graph(&[
        ("pkg/__init__.py", ""),
        ("pkg/util.py", "def foo():\n    return 1\n\ndef bar():\n    return 2\n"),
        ("pkg/api.py", "from pkg.util import foo\n\ndef api():\n    return 3\n"),
        ("pkg/wrap.py", "from pkg.api import api\n\ndef wrapped():\n    return api()\n"),
        ("pkg/lazy.py", "def later():\n    from pkg.util import foo\n    return foo()\n"),
        ("tests/test_api.py", "from pkg.api import api\n\ndef test_api():\n    assert api() == 3\n"),
        ("tests/test_deep.py", "import os\nfrom pkg.wrap import wrapped\n\ndef test_deep():\n    assert wrapped()\n"),
        ("tests/test_lazy.py", "from pkg.lazy import later\n\ndef test_later():\n    assert later()\n"),
        ("tests/test_bar.py", "from pkg.util import bar\n\ndef test_bar():\n    assert bar() == 2\n"),
    ]);
    // What taking `pkg/util.py`'s `foo` away breaks.
    let broken_by_foo = |graph: &CodeGraph| {
        let foo = graph.lookup("foo").into_iter().find(|&r| graph.path(r.0) == "pkg/util.py").unwrap();
        broken_imports(graph, &[Seed::plain(Some(foo), "foo", "foo")], daemon_walk_limits())
    };
    let broken = broken_by_foo(&graph);
    let found: Vec<(&str, u32, Vec<String>)> =
        broken.iter().map(|r| (graph.path(r.file), r.line, r.via.clone())).collect();
    assert_eq!(
        found,
        vec![
            ("tests/test_api.py", 1, vec!["pkg/api.py".to_string(), "foo".to_string()]),
            ("tests/test_deep.py", 2, vec!["pkg/wrap.py".to_string(), "pkg/api.py".to_string(), "foo".to_string()]),
        ]
    );
    assert!(broken_imports(&graph, &[], daemon_walk_limits()).is_empty());
    // A package that re-exports it from its `__init__.py`: every module of the package fails
    // to import, and the tests importing any of them.
    let graph = python_graph(&[
        ("pkg/__init__.py", "from .util import foo\n"),
        ("pkg/util.py", "def foo():\n    return 1\n\ndef bar():\n    return 2\n"),
        ("pkg/sub/more.py", "def more():\n    return 4\n"),
        ("other/mod.py", "def other():\n    return 5\n"),
        ("tests/test_bar.py", "from pkg.util import bar\n\ndef test_bar():\n    assert bar() == 2\n"),
        ("tests/test_more.py", "from pkg.sub.more import more\n\ndef test_more():\n    assert more()\n"),
        ("tests/test_other.py", "from other.mod import other\n\ndef test_other():\n    assert other()\n"),
    ]);
    let broken = broken_by_foo(&graph);
    let mut files: Vec<&str> = broken.iter().map(|r| graph.path(r.file)).collect();
    files.sort();
    assert_eq!(files, vec!["tests/test_bar.py", "tests/test_more.py"]);
}

/// A runner is given only names it finds: a Rust test file's helper that a walk ends at
/// (semver's `assert_match_all`, which its `#[test]`s call) and a macro that writes tests
/// (bytes' `buf_tests!`, whose tests the modules that call it name) stand for their file's
/// tests (""); a `#[test]` function is named.
#[test]
fn a_rust_test_file_s_helper_and_test_macro_are_given_as_their_file() {
    let files = [
        ("src/lib.rs", "pub fn matches(v: u32) -> bool {\n    v > 1\n}\n"),
        (
            "tests/req.rs",
            "use semver::matches;\n\n\
             fn assert_match_all(vs: &[u32]) {\n    for v in vs {\n        assert!(matches(*v));\n    }\n}\n\n\
             #[test]\nfn test_basic() {\n    assert_match_all(&[2, 3]);\n}\n\n\
             #[test]\nfn test_direct() {\n    assert!(matches(5));\n}\n\n\
             macro_rules! buf_tests {\n    () => {\n        #[test]\n        fn two() {\n            assert!(matches(2));\n        }\n    };\n}\n\n\
             mod slices {\n    use super::*;\n    buf_tests!();\n}\n",
        ),
    ];
    let graph = rust_graph(&files);
    let name = |n: &str| {
        let r = graph.lookup(n).into_iter().find(|r| graph.path(r.0) == "tests/req.rs").unwrap();
        graph.test_name(r.0, r.1 as usize)
    };
    assert_eq!(name("test_direct"), "test_direct");
    assert_eq!(name("assert_match_all"), "");
    assert_eq!(name("buf_tests"), "");
}
