//! How a use that names no definition directly still reaches one: a method named by a
//! constant or a prefix `getattr` may run, calling an instance (its `__call__`), a base
//! class's dispatch by name, a class body's aliases; and the tests a walk ends at, in the
//! files pytest is configured to collect.

use std::collections::HashMap;

use super::super::{extract, CodeGraph, FileCode};
use super::resolution::{daemon_walk_limits, keyed_test_files, python_graph, sure_lines};
use crate::ingest::Language;

/// A method named at run time from a constant prefix (`getattr(self, "parse_" + name)`, the
/// dispatch of parsers and visitors) is used where it is named: each method of the class
/// with that prefix, and no other.
#[test]
fn a_method_named_by_a_constant_prefix_is_used_where_getattr_names_it() {
    let graph = python_graph(&[(
        "parser.py",
        "class Parser:\n\
         \x20   rules = ('escape', 'link')\n\
         \n\
         \x20   def __init__(self):\n\
         \x20       self.methods = {n: getattr(self, 'parse_' + n) for n in self.rules}\n\
         \n\
         \x20   def visit(self, node):\n\
         \x20       return getattr(self, f'visit_{node.kind}')(node)\n\
         \n\
         \x20   def render(self, kind):\n\
         \x20       return getattr(self, 'render_%s' % kind)()\n\
         \n\
         \x20   def parse_escape(self, m):\n\
         \x20       return 1\n\
         \n\
         \x20   def parse_link(self, m):\n\
         \x20       return 2\n\
         \n\
         \x20   def visit_text(self, node):\n\
         \x20       return 3\n\
         \n\
         \x20   def render_list(self):\n\
         \x20       return 4\n\
         \n\
         \x20   def helper(self):\n\
         \x20       return getattr(self, 'x' + 'y')\n",
    )]);
    assert_eq!(sure_lines(&graph, "parse_escape"), vec![5]);
    assert_eq!(sure_lines(&graph, "parse_link"), vec![5]);
    assert_eq!(sure_lines(&graph, "visit_text"), vec![8]);
    assert_eq!(sure_lines(&graph, "render_list"), vec![11]);
    assert!(sure_lines(&graph, "helper").is_empty());
    assert!(sure_lines(&graph, "visit").is_empty());
}

/// The prefix of a method name built at run time is read through a local set just before and
/// through `.lower()` or `str.format`: `func_name = f"_process_{kind}"; getattr(self,
/// func_name.lower(), default)`.
#[test]
fn a_prefix_set_in_a_local_or_formatted_names_the_methods_getattr_may_run() {
    let graph = python_graph(&[(
        "reindent.py",
        "class Filter:\n\
         \x20   def _process(self, tlist):\n\
         \x20       func_name = f'_process_{type(tlist).__name__}'\n\
         \x20       func = getattr(self, func_name.lower(), self._default)\n\
         \x20       return func(tlist)\n\
         \n\
         \x20   def _strip(self, tlist):\n\
         \x20       return getattr(self, '_strip_{}'.format(tlist))()\n\
         \n\
         \x20   def _process_case(self, tlist):\n\
         \x20       return 1\n\
         \n\
         \x20   def _strip_list(self):\n\
         \x20       return 2\n\
         \n\
         \x20   def _default(self, tlist):\n\
         \x20       return 3\n",
    )]);
    assert_eq!(sure_lines(&graph, "_process_case"), vec![4]);
    assert_eq!(sure_lines(&graph, "_strip_list"), vec![8]);
}

/// The test files a change of `changed` reaches, as the daemon walks a diff.
pub(super) fn test_files_reached(graph: &CodeGraph, changed: (u32, u32)) -> Vec<String> {
    let seeds = [crate::code::dependents::Seed {
        symbol_opt: Some(changed),
        name: String::new(),
        label: String::new(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let walk = crate::code::dependents::walk(graph, &seeds, daemon_walk_limits());
    let mut found: Vec<String> = walk.tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    found.sort();
    found.dedup();
    found
}

/// pytest's `python_files` says which files hold tests: mock's `test*.py` makes
/// `tests/testmock.py` a test module, whose `test*` methods are the tests a change reaches.
#[test]
fn the_files_pytest_is_configured_to_collect_hold_the_tests() {
    let files = [
        ("mock.py", "def create(spec):\n    return spec\n"),
        (
            "tests/testmock.py",
            "import unittest\nfrom mock import create\n\nclass MockTest(unittest.TestCase):\n    def test_create(self):\n        create(1)\n",
        ),
    ];
    let code = |files: &[(&str, &str)]| -> HashMap<String, FileCode> {
        files.iter().map(|(p, t)| (p.to_string(), extract(Language::Python, t).unwrap())).collect()
    };
    let plain = CodeGraph::build(code(&files), &HashMap::new());
    let create = |graph: &CodeGraph| graph.lookup("create")[0];
    assert!(test_files_reached(&plain, create(&plain)).is_empty());
    let configs = HashMap::from([("setup.cfg".to_string(), "[tool:pytest]\npython_files = test*.py\n".to_string())]);
    let configured = CodeGraph::build(code(&files), &configs);
    assert_eq!(test_files_reached(&configured, create(&configured)), ["tests/testmock.py"]);
}

/// A base class that calls a method of `self` named at run time (`getattr(self, name)`, a
/// renderer's dispatch by token type) may run any method a subclass adds: a change to one
/// reaches the tests that go through the base's dispatch. Not the methods of a class whose
/// base merely has the same name as a test's class, nor a test's own classes.
#[test]
fn a_base_class_dispatch_by_name_may_run_its_subclasses_methods() {
    let graph = python_graph(&[
        (
            "core.py",
            "class BaseRenderer:\n\
             \x20   def _get_method(self, name):\n\
             \x20       return object.__getattribute__(self, name)\n\
             \n\
             \x20   def render_token(self, token):\n\
             \x20       return self._get_method(token['type'])(token)\n",
        ),
        (
            "html.py",
            "from core import BaseRenderer\n\
             \n\
             class HTMLRenderer(BaseRenderer):\n\
             \x20   def text(self, token):\n\
             \x20       return token['raw']\n",
        ),
        (
            "validate.py",
            "class Validator:\n    pass\n\nclass Equal(Validator):\n    def check(self, v):\n        return v\n",
        ),
        (
            "tests/test_render.py",
            "from core import BaseRenderer\n\
             \n\
             class Validator(BaseRenderer):\n\
             \x20   def extra(self, token):\n\
             \x20       return 1\n\
             \n\
             def test_render():\n\
             \x20   assert BaseRenderer().render_token({'type': 'text'})\n",
        ),
    ]);
    let find = |name: &str, path: &str| graph.lookup(name).into_iter().find(|&r| graph.path(r.0) == path).unwrap();
    assert_eq!(test_files_reached(&graph, find("text", "html.py")), ["tests/test_render.py"]);
    assert!(test_files_reached(&graph, find("check", "validate.py")).is_empty());
    // A dispatch is a place that may run the method, not a reference to it.
    assert!(graph.references(find("text", "html.py"), 0.0).is_empty());
}

/// A visitor's base finds `visit_<Kind>` by a constant prefix and its subclasses define them
/// (`ast.NodeVisitor`); a checker finds its own handlers by a name computed at run time
/// (`getattr(self, kind.upper(), default)`): a handler nothing names is reached from the
/// dispatch, a method called by name is not (the dispatch is not what it is there for).
#[test]
fn a_prefix_dispatch_reaches_subclass_methods_and_an_open_one_reaches_unnamed_own_methods() {
    let graph = python_graph(&[
        (
            "visitor.py",
            "class NodeVisitor:\n\
             \x20   def visit(self, node):\n\
             \x20       return getattr(self, f'visit_{type(node).__name__}', None)(node)\n",
        ),
        (
            "codegen.py",
            "from visitor import NodeVisitor\n\
             \n\
             class CodeGenerator(NodeVisitor):\n\
             \x20   def visit_Name(self, node):\n\
             \x20       return node\n\
             \n\
             \x20   def write(self, x):\n\
             \x20       return x\n",
        ),
        (
            "checker.py",
            "class Checker:\n\
             \x20   def handle(self, node):\n\
             \x20       kind = type(node).__name__.upper()\n\
             \x20       return getattr(self, kind, self.unknown)(node)\n\
             \n\
             \x20   def unknown(self, node):\n\
             \x20       return None\n\
             \n\
             \x20   def FUNCTIONDEF(self, node):\n\
             \x20       return 1\n",
        ),
        (
            "tests/test_all.py",
            "from codegen import CodeGenerator\n\
             from checker import Checker\n\
             \n\
             def test_codegen():\n\
             \x20   assert CodeGenerator().visit(1)\n\
             \n\
             def test_checker():\n\
             \x20   assert Checker().handle(1)\n",
        ),
    ]);
    let find = |name: &str, path: &str| graph.lookup(name).into_iter().find(|&r| graph.path(r.0) == path).unwrap();
    assert_eq!(test_files_reached(&graph, find("visit_Name", "codegen.py")), ["tests/test_all.py"]);
    assert!(test_files_reached(&graph, find("write", "codegen.py")).is_empty());
    assert_eq!(test_files_reached(&graph, find("FUNCTIONDEF", "checker.py")), ["tests/test_all.py"]);
    let unknown = find("unknown", "checker.py");
    let dispatched = graph.uses(unknown, 0.0).iter().filter(|u| u.confidence <= 0.5).count();
    assert_eq!(dispatched, 0, "a method named in the code is not also reached through the dispatch");
}

/// A Python class body is a scope: `status = property(_get_status, _set_status)` names the
/// class's own methods, so a change to the setter reaches the tests that set the attribute;
/// and a handler named only by its aliases (`ASSIGN = DELETE = handle_children`) is still the
/// dispatch's, which finds the aliases by name.
#[test]
fn a_class_body_names_its_own_methods_and_an_alias_is_not_a_caller() {
    let graph = python_graph(&[
        (
            "response.py",
            "class Response:\n\
             \x20   def _get_status(self):\n\
             \x20       return self._status\n\
             \n\
             \x20   def _set_status(self, value):\n\
             \x20       self._status = value\n\
             \n\
             \x20   status = property(_get_status, _set_status)\n",
        ),
        (
            "checker.py",
            "class Checker:\n\
             \x20   def handle(self, node):\n\
             \x20       return getattr(self, type(node).__name__.upper())(node)\n\
             \n\
             \x20   def handle_children(self, node):\n\
             \x20       return 1\n\
             \n\
             \x20   ASSIGN = DELETE = handle_children\n",
        ),
        (
            "tests/test_response.py",
            "from response import Response\n\
             \n\
             def test_status():\n\
             \x20   r = Response()\n\
             \x20   r.status = 5\n\
             \x20   assert r.status == 5\n",
        ),
        (
            "tests/test_checker.py",
            "from checker import Checker\n\
             \n\
             def test_checker():\n\
             \x20   assert Checker().handle(1)\n",
        ),
    ]);
    let find = |name: &str| graph.lookup(name)[0];
    assert_eq!(test_files_reached(&graph, find("Response._set_status")), ["tests/test_response.py"]);
    assert_eq!(test_files_reached(&graph, find("Response._get_status")), ["tests/test_response.py"]);
    assert_eq!(test_files_reached(&graph, find("Checker.handle_children")), ["tests/test_checker.py"]);
}

/// A method reached only by a guess at an object's type (`dest.enter(…)`, nothing says what
/// `dest` is), where other classes define the name too, runs in the tests whose path names its
/// class: transitions' `Timeout.enter` runs where a test asks for timeout states, not wherever
/// a machine changes state. The class is named where it is made, or held (a class attribute,
/// `state_cls = State`), or by a caller of that, a few calls away.
#[test]
fn a_method_guessed_by_its_name_runs_where_its_class_is_named() {
    // More states than a name is matched among: `dest.enter(…)` is a guess.
    let mut states = "class State:\n    def enter(self, data):\n        return 1\n".to_string();
    for kind in ["Timeout", "Tags", "Error", "Volatile", "Retry"] {
        states.push_str(&format!("\nclass {kind}(State):\n    def enter(self, data):\n        return 2\n"));
    }
    let graph = python_graph(&[
        ("fsm/states.py", &states),
        (
            "fsm/core.py",
            "from fsm.states import State\n\n\
             class Machine:\n    state_cls = State\n\n    def go(self, dest):\n        return dest.enter(None)\n",
        ),
        ("tests/test_core.py", "from fsm.core import Machine\n\ndef test_go():\n    Machine().go(object())\n"),
        (
            "tests/test_timeout.py",
            "from fsm.core import Machine\nfrom fsm.states import Timeout\n\n\
             def test_timeout():\n    class Timed(Machine):\n        state_cls = Timeout\n    Timed().go(object())\n",
        ),
    ]);
    let tests_of = |name: &str| -> Vec<String> {
        use crate::code::dependents::{walk, Seed};
        let changed = graph.lookup(name)[0];
        let seed = Seed {
            symbol_opt: Some(changed),
            name: String::new(),
            label: name.into(),
            instances_only: false,
            declared_only: false,
            needs_operation: 0,
            key: None,
        };
        let mut files: Vec<String> =
            walk(&graph, &[seed], daemon_walk_limits()).tests.iter().map(|t| graph.path(t.file).to_string()).collect();
        files.sort();
        files.dedup();
        files
    };
    assert_eq!(tests_of("Timeout.enter"), ["tests/test_timeout.py"]);
    // The base's method: its class is held by `Machine`, which both tests use.
    assert_eq!(tests_of("State.enter"), ["tests/test_core.py", "tests/test_timeout.py"]);
}

/// A unittest method has what its class's `setUp` built, or its base class's: a guessed
/// method's class named there is named for every test of the class (transitions' tests keep
/// `self.machine_cls = Machine` from `setUp`).
#[test]
fn a_class_named_in_set_up_is_named_for_each_test_of_the_class() {
    let mut states = "class State:\n    def enter(self, data):\n        return 1\n".to_string();
    for kind in ["Timeout", "Tags", "Error", "Volatile", "Retry"] {
        states.push_str(&format!("\nclass {kind}(State):\n    def enter(self, data):\n        return 2\n"));
    }
    let graph = python_graph(&[
        ("fsm/states.py", &states),
        ("fsm/core.py", "class Machine:\n    def go(self, dest):\n        return dest.enter(None)\n"),
        (
            "tests/test_timed.py",
            "import unittest\nfrom fsm.core import Machine\nfrom fsm.states import Timeout\n\n\
             class TimedCase(unittest.TestCase):\n    def setUp(self):\n        self.state_cls = Timeout\n\n    \
             def test_go(self):\n        Machine().go(self.state_cls())\n",
        ),
        (
            "tests/test_more.py",
            "from fsm.core import Machine\nfrom tests.test_timed import TimedCase\n\n\
             class MoreCase(TimedCase):\n    def test_again(self):\n        Machine().go(self.state_cls())\n",
        ),
        (
            "tests/test_plain.py",
            "import unittest\nfrom fsm.core import Machine\n\n\
             class PlainCase(unittest.TestCase):\n    def setUp(self):\n        self.value = 1\n\n    \
             def test_go(self):\n        Machine().go(object())\n",
        ),
    ]);
    let changed = graph.lookup("Timeout.enter")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_more.py", "tests/test_timed.py"]);
}

/// A field built in `setUp` (`self.web = WebApplicationServer(…)`) has its class's members,
/// and its bases' among them: `self.web.create_token_response(…)` in a test method calls the
/// method the class inherits (oauthlib's pre-configured servers, each a mix of endpoints).
#[test]
fn a_field_built_in_set_up_has_the_members_its_class_inherits() {
    let graph = python_graph(&[
        (
            "auth/endpoints.py",
            "class AuthorizationEndpoint:\n    def create_authorization_response(self, uri):\n        return uri\n\n\
             class TokenEndpoint:\n    def create_token_response(self, uri):\n        return uri\n\n\
             class WebApplicationServer(AuthorizationEndpoint, TokenEndpoint):\n    def __init__(self, validator):\n        \
             self.validator = validator\n",
        ),
        (
            "tests/test_web.py",
            "import unittest\nfrom auth.endpoints import WebApplicationServer\n\n\
             class WebCase(unittest.TestCase):\n    def setUp(self):\n        self.web = WebApplicationServer(None,\n            \
             )\n\n    def test_token(self):\n        self.web.create_token_response('uri')\n",
        ),
        (
            "tests/test_auth.py",
            "import unittest\nfrom auth.endpoints import WebApplicationServer\n\n\
             class AuthCase(unittest.TestCase):\n    def setUp(self):\n        self.web = WebApplicationServer(None)\n\n    \
             def test_auth(self):\n        self.web.create_authorization_response('uri')\n",
        ),
    ]);
    let changed = graph.lookup("TokenEndpoint.create_token_response")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_web.py"]);
    let changed = graph.lookup("AuthorizationEndpoint.create_authorization_response")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_auth.py"]);
}

/// A test helper that builds the class it is given (`def CmdFactory(cls, …): cmd = cls(…);
/// return cmd`, doit's conftest) returns an instance of the class each call passes:
/// `CmdFactory(Clean)._execute()` is `Clean`'s, not `List`'s; a capitalised name is no proof
/// of a class.
#[test]
fn a_factory_of_the_class_passed_returns_an_instance_of_that_class() {
    let graph = python_graph(&[
        (
            "tool/cmds.py",
            "class Cmd:\n    def __init__(self, loader=None):\n        self.loader = loader\n\n\
             class Clean(Cmd):\n    def _execute(self):\n        return 1\n\n\
             class List(Cmd):\n    def _execute(self):\n        return 2\n",
        ),
        (
            "tests/conftest.py",
            "def CmdFactory(cls, outstream=None):\n    cmd = cls(loader=None)\n    if outstream:\n        \
             cmd.outstream = outstream\n    return cmd\n",
        ),
        (
            "tests/test_clean.py",
            "from tool.cmds import Clean\nfrom .conftest import CmdFactory\n\n\
             def test_clean():\n    cmd = CmdFactory(Clean, outstream=1)\n    cmd._execute()\n",
        ),
        (
            "tests/test_list.py",
            "from tool.cmds import List\nfrom .conftest import CmdFactory\n\n\
             def test_list():\n    cmd = CmdFactory(List)\n    cmd._execute()\n",
        ),
    ]);
    let changed = graph.lookup("Clean._execute")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_clean.py"]);
    let changed = graph.lookup("List._execute")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_list.py"]);
}

/// A function a dict holds under a string key (jinja2's `FILTERS = {"wordcount":
/// do_wordcount}`) runs where the key is looked up: a test reached through the table waits
/// for the key, and only a test file that names it runs the function.
#[test]
fn a_function_a_table_holds_under_a_key_runs_where_a_test_names_the_key() {
    use crate::code::dependents::{names_key, Seed};
    let environment = "from .filters import do_wordcount, do_upper\n\n\
                       FILTERS = {\n    \"wordcount\": do_wordcount,\n    \"upper\": do_upper,\n    \"x\": do_upper,\n}\n\n\n\
                       class Environment:\n    def __init__(self):\n        self.filters = dict(FILTERS)\n\n    \
                       def render(self, source):\n        text, name = source.split(\"|\")\n        return self.filters[name](text)\n";
    let filters = "def do_wordcount(s):\n    return len(s.split())\n\n\ndef do_upper(s):\n    return s.upper()\n";
    let counted = "from pkg.environment import Environment\n\n\n\
                   def test_wordcount():\n    assert Environment().render(\"a b|wordcount\") == 2\n";
    let upper = "from pkg.environment import Environment\n\n\n\
                 def test_upper():\n    assert Environment().render(\"a|upper\") == \"A\"\n";
    let graph = python_graph(&[
        ("pkg/environment.py", environment),
        ("pkg/filters.py", filters),
        ("tests/test_wordcount.py", counted),
        ("tests/test_upper.py", upper),
    ]);
    // A key too short to tell apart in a test's text is not noted.
    let code = graph.code(graph.file_index("pkg/environment.py").unwrap());
    assert_eq!(code.keyed.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>(), ["wordcount", "upper"]);
    let texts = HashMap::from([("tests/test_wordcount.py", counted), ("tests/test_upper.py", upper)]);
    let run = |name: &str| -> Vec<String> {
        let target = graph.lookup(name)[0];
        let seed = Seed {
            symbol_opt: Some(target),
            name: name.to_string(),
            label: name.to_string(),
            instances_only: false,
            declared_only: false,
            needs_operation: 0,
            key: None,
        };
        keyed_test_files(&graph, &[seed], &texts)
    };
    assert_eq!(run("do_wordcount"), ["tests/test_wordcount.py"]);
    // `do_upper`'s key is a name the code uses too (`s.upper()`: the table may be a namespace
    // read by that name), and "x" is too short to tell apart: every test.
    assert_eq!(run("do_upper"), ["tests/test_upper.py", "tests/test_wordcount.py"]);
    assert!(names_key("{{ x|wordcount }}", "wordcount"));
    assert!(!names_key("wordcounter", "wordcount"));
}

/// Code under a condition on an attribute the repo's classes leave off (wtforms' `csrf =
/// False`, `locales = False`) runs only in the tests that set it, and they name it: the body
/// of `if meta.csrf:`, and what follows the guard clause `if locales is False: return None`.
/// So does code under a parameter that defaults to `None` which no call outside the tests
/// passes, by keyword or by place.
#[test]
fn code_under_an_attribute_left_off_runs_where_a_test_names_the_attribute() {
    use crate::code::dependents::Seed;
    use crate::code::GuardTest::{self, Asked, Attribute, Parameter};
    // (`translate` also runs under `if self.cache:`, an attribute that is on.)
    let meta = "class DefaultMeta:\n    csrf = False\n    locales = False\n    debug = None\n    cache = True\n\n    \
                def __init__(self, strict=False):\n        self.strict = strict\n        self.filled = None\n\n    \
                def fill(self):\n        self.filled = {}\n\n    \
                def build_csrf(self, form):\n        return object()\n\n    \
                def get_translations(self, form):\n        locales = self.locales\n        if locales is False:\n            \
                return None\n        if self.cache:\n            return translate(locales)\n        return None\n\n\n\
                def translate(locales):\n    return list(locales)\n\n\n\
                def bind(form):\n    return form\n\n\n\
                def wrap(form):\n    return form\n\n\n\
                def trace(form):\n    return form\n\n\n\
                def label(form):\n    return form\n\n\n\
                def check(form):\n    return form\n\n\n\
                def paint(form):\n    return form\n\n\n\
                def stamp(form):\n    return form\n\n\n\
                def show(form, style=None, mark=None):\n    if style is not None:\n        paint(form)\n    \
                if mark is not None:\n        stamp(form)\n\n\n\
                def show_bold(form):\n    show(form, \"bold\")\n\n\n\
                def relay(form, mark=None):\n    show(form, mark=mark)\n\n\n\
                class Verbose(DefaultMeta):\n    debug = True\n";
    // A parameter that defaults to `None` guards like an attribute left off (`prefix`), unless
    // the function assigns it first (`extra`).
    let form = "from pkg.meta import DefaultMeta, bind, check, label, trace, wrap\n\n\n\
                class Form:\n    def __init__(self, meta=None, prefix=None, extra=None):\n        \
                meta = meta or DefaultMeta()\n        \
                self.translations = meta.get_translations(self)\n        bind(self)\n        \
                if meta.csrf:\n            self.token = meta.build_csrf(self)\n        \
                if meta.debug is not None:\n            trace(self)\n        \
                if hasattr(meta, \"getall\"):\n            wrap(self)\n        \
                if prefix is not None:\n            label(self)\n        \
                extra = extra or dict(a=1)\n        if extra:\n            check(self)\n";
    let prefixed = "from pkg.form import Form\n\n\ndef test_prefix():\n    assert Form(prefix=\"p\")\n";
    // `show`'s `style` is passed by place outside the tests (`show_bold`); its `mark` only
    // handed on (`relay`).
    let shown = "from pkg.meta import show\n\n\ndef test_show():\n    assert show(1) is None\n";
    let plain = "from pkg.form import Form\n\n\ndef test_form():\n    assert Form()\n";
    let csrf = "from pkg.form import Form\nfrom pkg.meta import DefaultMeta\n\n\n\
                class Meta(DefaultMeta):\n    csrf = True\n\n\n\
                def test_csrf():\n    assert Form(Meta()).token\n";
    let i18n = "from pkg.form import Form\n\n\n\
                def test_german():\n    assert Form(meta=make(locales=[\"de\"])).translations\n";
    let webob = "from pkg.form import Form\nfrom pkg.meta import DefaultMeta\n\n\n\
                 class Multi(DefaultMeta):\n    def getall(self):\n        return []\n\n\n\
                 def test_webob():\n    assert Form(Multi())\n";
    let files = [
        ("pkg/meta.py", meta),
        ("pkg/form.py", form),
        ("tests/test_form.py", plain),
        ("tests/test_csrf.py", csrf),
        ("tests/test_i18n.py", i18n),
        ("tests/test_webob.py", webob),
        ("tests/test_prefix.py", prefixed),
        ("tests/test_show.py", shown),
    ];
    let graph = python_graph(&files);
    let code = graph.code(graph.file_index("pkg/form.py").unwrap());
    let words: Vec<(&str, GuardTest)> = code.guarded.iter().map(|(_, w, test)| (w.as_str(), *test)).collect();
    assert_eq!(
        words,
        [("csrf", Attribute), ("debug", Attribute), ("getall", Asked), ("prefix", Parameter(1)), ("extra", Attribute)]
    );
    assert!(graph.off_by_default("csrf", Attribute) && graph.off_by_default("locales", Attribute));
    // A class of the code sets it: not left off.
    assert!(!graph.off_by_default("debug", Attribute));
    // An attribute a method sets from a parameter that defaults to `False` is off; one a
    // method fills later (a cache) is on.
    assert!(graph.off_by_default("strict", Attribute) && !graph.off_by_default("filled", Attribute));
    // `hasattr` asks for a name no class of the code defines: only a test's object has it.
    assert!(graph.off_by_default("getall", Asked) && !graph.off_by_default("build_csrf", Asked));
    let texts: HashMap<&str, &str> = files.iter().copied().collect();
    let run = |name: &str| -> Vec<String> {
        let target = graph.lookup(name)[0];
        keyed_test_files(&graph, &[Seed::plain(Some(target), name, name)], &texts)
    };
    assert_eq!(run("build_csrf"), ["tests/test_csrf.py"]);
    assert_eq!(run("translate"), ["tests/test_i18n.py"]);
    assert_eq!(run("wrap"), ["tests/test_webob.py"]);
    assert_eq!(run("label"), ["tests/test_prefix.py"]);
    let every = [
        "tests/test_csrf.py",
        "tests/test_form.py",
        "tests/test_i18n.py",
        "tests/test_prefix.py",
        "tests/test_webob.py",
    ];
    assert_eq!(run("bind"), every);
    assert_eq!(run("trace"), every);
    assert_eq!(run("check"), every);
    assert_eq!(run("paint"), ["tests/test_show.py"]);
    assert!(run("stamp").is_empty());
}

/// A test's parameter is what its pytest fixture gives (`yield db_` after `db_ = TinyDB(…)`
/// in `conftest.py`), so `db.truncate()` is `TinyDB`'s: a name Python's built-in types have
/// too (a file's `truncate`), which no guess reaches. A class whose `__getattr__` hands what
/// it lacks to a value of its own (`getattr(self.table(…), name)`) has that value's members:
/// `db.count(…)` is `Table.count`. A fixture that says what it yields (`-> Iterator[Table]`)
/// gives that.
#[test]
fn a_fixture_s_value_and_a_getattr_hand_on_type_a_test_s_calls() {
    let graph = python_graph(&[
        (
            "tinydb/table.py",
            "class Table:\n\
             \x20   def count(self, cond):\n\
             \x20       return 0\n\
             \n\
             \x20   def truncate(self):\n\
             \x20       pass\n",
        ),
        (
            "tinydb/database.py",
            "from .table import Table\n\
             \n\
             class TinyDB:\n\
             \x20   def table(self, name: str) -> Table:\n\
             \x20       return Table()\n\
             \n\
             \x20   def __getattr__(self, name):\n\
             \x20       \"\"\"Forward unknown attributes to the default table.\"\"\"\n\
             \x20       return getattr(self.table('_default'), name)\n",
        ),
        (
            "tests/conftest.py",
            "import pytest\n\
             from typing import Iterator\n\
             from tinydb.database import TinyDB\n\
             from tinydb.table import Table\n\
             \n\
             @pytest.fixture(params=['memory', 'json'])\n\
             def db(request):\n\
             \x20   if request.param == 'json':\n\
             \x20       db_ = TinyDB()\n\
             \x20   else:\n\
             \x20       db_ = TinyDB()\n\
             \x20   yield db_\n\
             \n\
             @pytest.fixture\n\
             def table() -> Iterator[Table]:\n\
             \x20   yield make_table()\n",
        ),
        (
            "tests/test_tables.py",
            "def test_next_id(db):\n    db.truncate()\n\ndef test_count(db):\n    assert db.count(1) == 0\n\n\
             def test_table(table):\n    table.truncate()\n",
        ),
        ("tests/test_other.py", "def test_file(tmp_path):\n    f = open(tmp_path)\n    f.truncate()\n"),
    ]);
    let uses = |name: &str| {
        let target = graph.lookup(&format!("Table.{name}"))[0];
        let mut found: Vec<(String, u32)> =
            graph.references(target, 0.5).into_iter().map(|r| (r.path, r.line)).collect();
        found.sort();
        found
    };
    assert_eq!(uses("truncate"), [("tests/test_tables.py".to_string(), 2), ("tests/test_tables.py".to_string(), 8)]);
    assert_eq!(uses("count"), [("tests/test_tables.py".to_string(), 5)]);
}

#[test]
fn a_test_class_s_own_fixture_types_its_tests_parameters() {
    let graph = python_graph(&[
        (
            "pkg/store.py",
            "class Store:\n\
             \x20   def flush(self):\n\
             \x20       pass\n",
        ),
        (
            "tests/test_store.py",
            "import pytest\n\
             from pkg.store import Store\n\
             \n\
             class TestStore:\n\
             \x20   @pytest.fixture\n\
             \x20   def store(self):\n\
             \x20       return Store()\n\
             \n\
             \x20   def test_flush(self, store):\n\
             \x20       store.flush()\n",
        ),
        ("tests/test_file.py", "def test_file(tmp_path):\n    f = open(tmp_path)\n    f.flush()\n"),
    ]);
    let target = graph.lookup("Store.flush")[0];
    let found: Vec<(String, u32)> = graph.references(target, 0.5).into_iter().map(|r| (r.path, r.line)).collect();
    assert_eq!(found, [("tests/test_store.py".to_string(), 10)]);
}

/// A method whose body only raises (oauthlib's `RequestValidator.get_original_scopes`, `raise
/// NotImplementedError`) fails wherever it runs: a test that reaches it passes only if it asks
/// for the error (`pytest.raises`, `assertRaises`). The grant's test, which hands the grant a
/// mock, and the server's, which builds a validator a library's base may call, do not run it.
#[test]
fn a_method_that_only_raises_runs_in_the_tests_that_ask_for_the_error() {
    let graph = python_graph(&[
        (
            "auth/validator.py",
            "from somelib import Base\n\n\
             class RequestValidator(Base):\n    def get_scopes(self, token):\n        \"\"\"Subclasses say.\"\"\"\n        \
             raise NotImplementedError('Subclasses must implement this method.')\n\n    \
             def check(self, token):\n        return bool(token)\n",
        ),
        (
            "auth/grant.py",
            "from auth.validator import RequestValidator\n\n\
             class RefreshGrant:\n    def __init__(self, request_validator: RequestValidator):\n        \
             self.request_validator = request_validator\n\n    def validate(self, token):\n        \
             self.request_validator.check(token)\n        return self.request_validator.get_scopes(token)\n",
        ),
        (
            "tests/test_grant.py",
            "import unittest\nfrom unittest import mock\nfrom auth.grant import RefreshGrant\n\n\
             class GrantTest(unittest.TestCase):\n    def test_validate(self):\n        \
             assert RefreshGrant(mock.MagicMock()).validate('t')\n",
        ),
        (
            "tests/test_server.py",
            "from auth.validator import RequestValidator\nfrom auth.grant import RefreshGrant\n\n\
             def test_server_builds():\n    assert RefreshGrant(RequestValidator()).request_validator\n",
        ),
        (
            "tests/test_validator.py",
            "import unittest\nfrom auth.validator import RequestValidator\n\n\
             class ContractTest(unittest.TestCase):\n    def test_contract(self):\n        \
             self.assertRaises(NotImplementedError, RequestValidator().get_scopes, 't')\n",
        ),
    ]);
    let reached = |name: &str| {
        let changed = graph.lookup(name)[0];
        let mut seeds = vec![crate::code::dependents::Seed::plain(Some(changed), "", "")];
        let more = crate::code::dependents::type_seeds(&graph, &seeds);
        seeds.extend(more);
        let walk = crate::code::dependents::walk(&graph, &seeds, daemon_walk_limits());
        let mut found: Vec<String> = walk.tests.iter().map(|t| graph.path(t.file).to_string()).collect();
        found.sort();
        found.dedup();
        found
    };
    assert_eq!(reached("RequestValidator.get_scopes"), ["tests/test_validator.py"]);
    // (A method that may succeed runs where the base may call it: every test that builds one.)
    assert_eq!(
        reached("RequestValidator.check"),
        ["tests/test_grant.py", "tests/test_server.py", "tests/test_validator.py"]
    );
}

/// A Python method that overrides its base's runs where the base's method is called on a value
/// the code types as the base (bs4's `self.builder.feed(…)` on a `TreeBuilder`), along paths
/// that name the subclass, as a Rust trait's implementation does: the HTML builder's test, not
/// the XML builder's.
#[test]
fn an_override_runs_where_its_bases_method_is_called_on_a_path_that_names_its_class() {
    let graph = python_graph(&[
        (
            "pkg/builder.py",
            "class TreeBuilder:\n    def feed(self, markup):\n        return markup\n\n\
             class HTMLTreeBuilder(TreeBuilder):\n    def feed(self, markup):\n        return markup.lower()\n\n\
             class XMLTreeBuilder(TreeBuilder):\n    def feed(self, markup):\n        return markup.upper()\n",
        ),
        (
            "pkg/soup.py",
            "from pkg.builder import TreeBuilder\n\n\
             class Soup:\n    def __init__(self, markup, builder: TreeBuilder):\n        self.builder = builder\n        \
             self.out = self.builder.feed(markup)\n",
        ),
        (
            "tests/test_html.py",
            "from pkg.builder import HTMLTreeBuilder\nfrom pkg.soup import Soup\n\n\
             def test_html():\n    assert Soup('<A>', HTMLTreeBuilder()).out == '<a>'\n",
        ),
        (
            "tests/test_xml.py",
            "from pkg.builder import XMLTreeBuilder\nfrom pkg.soup import Soup\n\n\
             def test_xml():\n    assert Soup('<a>', XMLTreeBuilder()).out == '<A>'\n",
        ),
    ]);
    let changed = graph.lookup("HTMLTreeBuilder.feed")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_html.py"]);
    let changed = graph.lookup("XMLTreeBuilder.feed")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_xml.py"]);
}

/// An override two bases down runs where the root base calls the method on `self` (pint's
/// registry: the root's `__init__` calls `self._register_adders()`, which the group registry
/// overrides, and the system registry overrides again, each calling `super()`): the tests
/// that make the system registry (or a class built on it), not those of the root alone.
#[test]
fn an_override_runs_where_a_base_further_up_calls_the_method_on_self() {
    let graph = python_graph(&[
        (
            "pkg/plain.py",
            "class PlainRegistry:\n    def __init__(self):\n        self.adders = []\n        \
             self._register_adders()\n\n    def _register_adders(self):\n        self.adders.append(1)\n",
        ),
        (
            "pkg/group.py",
            "from pkg.plain import PlainRegistry\n\n\nclass GroupRegistry(PlainRegistry):\n    \
             def _register_adders(self):\n        super()._register_adders()\n        self.adders.append(2)\n",
        ),
        (
            "pkg/system.py",
            "from pkg.group import GroupRegistry\n\n\nclass SystemRegistry(GroupRegistry):\n    \
             def _register_adders(self):\n        super()._register_adders()\n        self.adders.append(3)\n",
        ),
        (
            "pkg/registry.py",
            "from pkg.system import SystemRegistry\n\n\nclass UnitRegistry(SystemRegistry):\n    pass\n",
        ),
        (
            "tests/test_units.py",
            "from pkg.registry import UnitRegistry\n\n\ndef test_units():\n    assert UnitRegistry().adders == [1, 2, 3]\n",
        ),
        (
            "tests/test_plain.py",
            "from pkg.plain import PlainRegistry\n\n\ndef test_plain():\n    assert PlainRegistry().adders == [1]\n",
        ),
    ]);
    let changed = graph.lookup("SystemRegistry._register_adders")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_units.py"]);
}

/// A Python property's setter runs where the attribute is written (`entry.key = key`, or
/// `self.name = name` in `__init__`, wherever the class is made), its getter where it is read:
/// a write runs no getter.
#[test]
fn a_property_s_setter_runs_where_it_is_written_and_its_getter_where_it_is_read() {
    use crate::code::dependents::Seed;
    let model = "class Entry:\n    def __init__(self, key):\n        self._key = key\n\n    \
                 @property\n    def key(self):\n        return self._key\n\n    \
                 @key.setter\n    def key(self, value):\n        self._key = value\n\n\n\
                 class Block:\n    def __init__(self, name):\n        self.name = name\n\n    \
                 @property\n    def name(self):\n        return self._name\n\n    \
                 @name.setter\n    def name(self, value):\n        self._name = value\n\n\n\
                 def rename(entry, key):\n    entry.key = key\n\n\n\
                 def show(entry):\n    return entry.key\n";
    let read = "from pkg.model import Entry, show\n\n\ndef test_read():\n    assert show(Entry(\"a\")) == \"a\"\n";
    let renamed = "from pkg.model import Entry, rename\n\n\ndef test_rename():\n    rename(Entry(\"a\"), \"b\")\n";
    let block = "from pkg.model import Block\n\n\ndef test_block():\n    assert Block(\"x\")\n";
    let files = [
        ("pkg/model.py", model),
        ("tests/test_read.py", read),
        ("tests/test_rename.py", renamed),
        ("tests/test_block.py", block),
    ];
    let graph = python_graph(&files);
    let texts: HashMap<&str, &str> = files.iter().copied().collect();
    let f = graph.file_index("pkg/model.py").unwrap();
    let nth = |name: &str, nth: usize| -> (u32, u32) {
        let code = graph.code(f);
        (f, code.symbols.iter().position(|s| s.name == name).unwrap() as u32 + nth as u32)
    };
    let run = |name: &str, k: usize| -> Vec<String> {
        keyed_test_files(&graph, &[Seed::plain(Some(nth(name, k)), name, name)], &texts)
    };
    assert!(!graph.is_property_setter(nth("key", 0)) && graph.is_property_setter(nth("key", 1)));
    assert_eq!(run("key", 1), ["tests/test_rename.py"]);
    assert_eq!(run("key", 0), ["tests/test_read.py"]);
    assert_eq!(run("name", 2), ["tests/test_block.py"]);
}

/// A Python import inside a test function runs the module's top level, not the class or
/// function it names: a test that only imports `Machine` makes none, so runs nothing its
/// `__init__` calls.
#[test]
fn an_import_inside_a_test_runs_no_method_of_what_it_names() {
    let machine = "def setup(m):\n    return m\n\n\nclass Machine:\n    def __init__(self):\n        setup(self)\n";
    let imports = "def test_imports():\n    from pkg.machine import Machine  # noqa: F401\n";
    let made = "def test_made():\n    from pkg.machine import Machine\n    assert Machine()\n";
    let files = [("pkg/machine.py", machine), ("tests/test_imports.py", imports), ("tests/test_made.py", made)];
    assert_eq!(python_test_files_of(&files, "setup"), ["tests/test_made.py"]);
}

/// The test files of a Python repo (`files`) that a change to the first definition named
/// `name` reaches, those a key waits on kept only where their text names it.
pub(super) fn python_test_files_of(files: &[(&str, &str)], name: &str) -> Vec<String> {
    use crate::code::dependents::Seed;
    let graph = python_graph(files);
    let texts: HashMap<&str, &str> = files.iter().copied().collect();
    let target = graph.lookup(name)[0];
    keyed_test_files(&graph, &[Seed::plain(Some(target), name, name)], &texts)
}

/// A member of a module imported from outside the repo (`pickle.dump(…)` after `import
/// pickle`) is never a guess at the repo's method of that name (parso's `NodeOrLeaf.dump`).
#[test]
fn an_outside_modules_member_is_no_guess_at_the_repos() {
    let graph = python_graph(&[
        ("pkg/tree.py", "class Node:\n    def dump(self):\n        return 'node'\n"),
        ("pkg/cache.py", "import pickle\n\n\ndef save(item, f):\n    pickle.dump(item, f)\n"),
        ("pkg/show.py", "def show(node):\n    return node.dump()\n"),
        // A receiver with no name to it (a parenthesised expression) in a file that imports
        // from outside.
        ("pkg/either.py", "import pickle\n\n\ndef either(a, b):\n    return (a or b).dump()\n"),
        (
            "tests/test_cache.py",
            "import io\nfrom pkg.cache import save\n\n\ndef test_save():\n    save(1, io.BytesIO())\n",
        ),
        (
            "tests/test_show.py",
            "from pkg.show import show\nfrom pkg.tree import Node\n\n\ndef test_show():\n    assert show(Node()) == 'node'\n",
        ),
    ]);
    let changed = graph.lookup("Node.dump")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_show.py"]);
}

/// A value narrowed to an outside class (`isinstance(self, click.Group)`) may be an instance
/// of the repo's subclass, whose override its method call then runs (cloup's `Group` mixes
/// `SectionMixin.format_commands` into `click.Group`).
#[test]
fn a_value_of_an_outside_class_may_run_the_repos_override() {
    let graph = python_graph(&[
        (
            "pkg/sections.py",
            "class SectionMixin:\n    def format_commands(self, ctx):\n        return 'sections'\n",
        ),
        (
            "pkg/commands.py",
            "import click\n\nfrom pkg.sections import SectionMixin\n\n\nclass Command(click.Command):\n    \
             def format_help(self, ctx):\n        if isinstance(self, click.Group):\n            \
             return self.format_commands(ctx)\n        return ''\n\n\n\
             class Group(SectionMixin, Command, click.Group):\n    pass\n",
        ),
        (
            "tests/test_help.py",
            "from pkg.commands import Group\n\n\ndef test_help():\n    assert Group('g').format_help(None) == 'sections'\n",
        ),
    ]);
    let changed = graph.lookup("SectionMixin.format_commands")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_help.py"]);
}
