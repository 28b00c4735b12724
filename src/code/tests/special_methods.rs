//! Python's special methods reach the tests that run them: calling an instance (`__call__`),
//! formatting a value, applying an operator, iterating or entering one, a metaclass's call.

use super::dispatch::{python_test_files_of, test_files_reached};
use super::resolution::python_graph;

/// A callable class and a factory whose return annotation names it.
const MARKDOWN_PY: &str = "class Markdown:\n\
                           \x20   def __call__(self, s):\n\
                           \x20       return s\n\
                           \n\
                           def create_markdown() -> Markdown:\n\
                           \x20   return Markdown()\n";

/// Calling an instance runs its class's `__call__`: `md = create_markdown(); md(text)` by the
/// factory's return annotation, `v = Equal(1); v(x)` by the class; a callable of unknown type
/// (`processor = getattr(self, name)`) is no guess at every `__call__`.
#[test]
fn calling_an_instance_uses_its_class_call_method() {
    let graph = python_graph(&[
        ("md.py", MARKDOWN_PY),
        ("other.py", "class Other:\n    def __call__(self, s):\n        return s\n"),
        (
            "tests/test_md.py",
            "from md import create_markdown, Markdown\n\
             \n\
             def test_render():\n\
             \x20   md = create_markdown()\n\
             \x20   assert md('x') == 'x'\n\
             \n\
             def test_direct():\n\
             \x20   m = Markdown()\n\
             \x20   m('y')\n\
             \n\
             def test_unknown(thing):\n\
             \x20   f = thing.get()\n\
             \x20   f('z')\n",
        ),
    ]);
    let target = graph.lookup("__call__").into_iter().find(|&r| graph.path(r.0) == "md.py").unwrap();
    let mut lines: Vec<u32> = graph.references(target, 0.5).into_iter().map(|r| r.line).collect();
    lines.sort();
    assert_eq!(lines, [5, 9]);
    let other = graph.lookup("__call__").into_iter().find(|&r| graph.path(r.0) == "other.py").unwrap();
    assert!(test_files_reached(&graph, other).is_empty());
}

/// An instance kept at module level, in a class attribute or in `self.x` is called through
/// that name as a local one is: each call is a use of its class's `__call__`.
#[test]
fn calling_an_instance_kept_in_a_module_name_or_an_attribute_uses_its_call_method() {
    let graph = python_graph(&[
        ("md.py", MARKDOWN_PY),
        (
            "app.py",
            "from typing import Optional\n\
             from md import Markdown\n\
             \n\
             class App:\n\
             \x20   def __init__(self, md: Optional[Markdown] = None, other: 'Markdown' = None):\n\
             \x20       self.md = md\n\
             \x20       self.typed: Markdown = other\n\
             \n\
             \x20   def render(self, text):\n\
             \x20       return self.md(text) + self.typed(text)\n",
        ),
        (
            "tests/test_md.py",
            "from md import create_markdown, Markdown\n\
             \n\
             md = create_markdown()\n\
             \n\
             def test_module():\n\
             \x20   assert md('x') == 'x'\n\
             \n\
             class TestMarkdown:\n\
             \x20   markdown = Markdown()\n\
             \n\
             \x20   def setup_method(self):\n\
             \x20       self.other = create_markdown()\n\
             \n\
             \x20   def test_attribute(self):\n\
             \x20       assert self.markdown('y') == 'y'\n\
             \x20       assert self.other('z') == 'z'\n",
        ),
    ]);
    let target = graph.lookup("__call__").into_iter().find(|&r| graph.path(r.0) == "md.py").unwrap();
    let mut lines: Vec<u32> = graph.references(target, 0.5).into_iter().map(|r| r.line).collect();
    lines.sort();
    assert_eq!(lines, [6, 10, 10, 15, 16]);
}

/// A class's `__repr__` runs where a value is formatted with it (`repr(x)`, `%r`, `!r`), and,
/// where `str()` falls back to it (no `__str__`, no exception), where one is printed
/// (`f'{x}'`, `str(x)`, `%s`): not in every test that makes one. An exception's `str()` shows
/// its arguments, not its `__repr__`.
#[test]
fn a_repr_runs_in_the_tests_that_format_the_value() {
    let graph = python_graph(&[
        (
            "fsm/event.py",
            "class Event:\n    def __repr__(self):\n        return 'Event'\n\n\
             class Failure(Exception):\n    def __repr__(self):\n        return 'Failure'\n\n\
             def make():\n    return Event()\n\n\
             def fail():\n    return Failure()\n",
        ),
        ("tests/test_repr.py", "from fsm.event import make\n\ndef test_repr():\n    assert repr(make()) == 'Event'\n"),
        ("tests/test_print.py", "from fsm.event import make\n\ndef test_print():\n    assert f'{make()}'\n"),
        ("tests/test_log.py", "from fsm.event import make\n\ndef test_log():\n    assert 'got %r' % (make(),)\n"),
        ("tests/test_make.py", "from fsm.event import make\n\ndef test_make():\n    assert make() is not None\n"),
        ("tests/test_fail.py", "from fsm.event import fail\n\ndef test_fail():\n    assert f'{fail()}' == ''\n"),
        (
            "tests/test_fail_repr.py",
            "from fsm.event import fail\n\ndef test_fail_repr():\n    assert '{!r}'.format(fail())\n",
        ),
    ]);
    let formats_of = |path: &str| graph.code(graph.file_index(path).unwrap()).operations_in(Some(0));
    assert_eq!(formats_of("tests/test_fail.py"), crate::code::FORMATS_STR);
    assert_eq!(formats_of("tests/test_fail_repr.py"), crate::code::FORMATS_REPR | crate::code::FORMATS_STR);
    assert_eq!(formats_of("tests/test_make.py"), 0);
    assert_eq!(
        super::modules::tests_reaching(&graph, "Event.__repr__"),
        ["tests/test_log.py", "tests/test_print.py", "tests/test_repr.py"]
    );
    assert_eq!(super::modules::tests_reaching(&graph, "Failure.__repr__"), ["tests/test_fail_repr.py"]);
}

/// An operator's special method (`__sub__`), a copy's (`__deepcopy__`) and an item deletion's
/// (`__delitem__`) run where a test file applies the operator, copies or deletes (in the test
/// or in a helper beside it), not in every test that makes a value; a unary minus is no
/// subtraction.
#[test]
fn an_operator_s_method_runs_in_the_tests_that_apply_the_operator() {
    let graph = python_graph(&[
        (
            "shop/money.py",
            "class Money:\n    def __init__(self, cents):\n        self.cents = cents\n\n    \
             def __sub__(self, other):\n        return Money(self.cents - other.cents)\n\n    \
             def __deepcopy__(self, memo):\n        return Money(self.cents)\n\n    \
             def __delitem__(self, key):\n        pass\n",
        ),
        (
            "tests/test_sub.py",
            "from shop.money import Money\n\ndef test_sub():\n    assert (Money(3) - Money(1)).cents\n",
        ),
        (
            "tests/test_helper.py",
            "from shop.money import Money\n\ndef diff(a, b):\n    return a - b\n\n\
             def test_diff():\n    assert diff(Money(2), Money(1))\n",
        ),
        (
            "tests/test_copy.py",
            "import copy\nfrom shop.money import Money\n\ndef test_copy():\n    assert copy.deepcopy(Money(3))\n",
        ),
        ("tests/test_del.py", "from shop.money import Money\n\ndef test_del():\n    m = Money(1)\n    del m['x']\n"),
        ("tests/test_make.py", "from shop.money import Money\n\ndef test_make():\n    assert Money(-3).cents\n"),
    ]);
    let operations_of = |path: &str| graph.code(graph.file_index(path).unwrap()).operations_in(Some(0));
    assert_eq!(operations_of("tests/test_sub.py"), crate::code::SUBTRACTS);
    assert_eq!(operations_of("tests/test_make.py"), crate::code::SIGNS);
    assert_eq!(operations_of("tests/test_del.py"), crate::code::DELETES_ITEM);
    assert_eq!(super::modules::tests_reaching(&graph, "Money.__sub__"), ["tests/test_helper.py", "tests/test_sub.py"]);
    assert_eq!(super::modules::tests_reaching(&graph, "Money.__deepcopy__"), ["tests/test_copy.py"]);
    assert_eq!(super::modules::tests_reaching(&graph, "Money.__delitem__"), ["tests/test_del.py"]);
}

/// A `for` loop over a value whose class the walker knows (`self.buffer = Buffer()`) runs the
/// class's `__iter__` and `__next__`, a `with` its `__enter__` and `__exit__`: what they call
/// is reached from the statement's function, and so from its tests.
#[test]
fn a_for_loop_or_a_with_over_an_instance_runs_its_class_s_protocol() {
    let graph = python_graph(&[
        (
            "shop/buffer.py",
            "class Buffer:\n    def __init__(self):\n        self.items = []\n\n    \
             def _take(self):\n        return self.items.pop()\n\n    \
             def __iter__(self):\n        return self\n\n    \
             def __next__(self):\n        if not self.items:\n            raise StopIteration\n        \
             return self._take()\n\n\
             class Conn:\n    def __init__(self):\n        self.buffer = Buffer()\n\n    \
             def receive(self):\n        for item in self.buffer:\n            print(item)\n\n\
             class Lock:\n    def _acquire(self):\n        pass\n\n    \
             def __enter__(self):\n        self._acquire()\n\n    def __exit__(self, *exc):\n        pass\n\n\
             guard = Lock()\n\n\
             def locked(f):\n    with guard:\n        return f()\n",
        ),
        ("tests/test_conn.py", "from shop.buffer import Conn\n\ndef test_receive():\n    Conn().receive()\n"),
        ("tests/test_other.py", "from shop.buffer import Conn\n\ndef test_make():\n    assert Conn()\n"),
        ("tests/test_lock.py", "from shop.buffer import locked\n\ndef test_locked():\n    assert locked(int) == 0\n"),
    ]);
    assert_eq!(super::modules::tests_reaching(&graph, "Buffer._take"), ["tests/test_conn.py"]);
    assert_eq!(super::modules::tests_reaching(&graph, "Lock._acquire"), ["tests/test_lock.py"]);
}

/// A view whose class offers nothing but iteration (petl's `StackView`: `__init__`,
/// `__iter__`) is read where it is made: what its `__iter__` calls runs in the tests that
/// build it through a factory and hand it to a helper that iterates, though no code names its
/// class's protocol. Not a class with public methods of its own (a dict-like `Entry`), whose
/// instances are used for those.
#[test]
fn a_view_made_to_be_iterated_runs_its_iteration_where_it_is_made() {
    let graph = python_graph(&[
        (
            "etl/views.py",
            "def iterstack(sources):\n    for s in sources:\n        yield from s\n\n\
             class StackView:\n    def __init__(self, sources):\n        self.sources = sources\n\n    \
             def __iter__(self):\n        return iterstack(self.sources)\n\n\
             def stack(*sources):\n    return StackView(sources)\n\n\
             def iterkeys(entry):\n    return iter(entry.fields)\n\n\
             class Entry:\n    def __init__(self, fields):\n        self.fields = fields\n\n    \
             def keys(self):\n        return list(self.fields)\n\n    \
             def __iter__(self):\n        return iterkeys(self)\n\n\
             def entry(*fields):\n    return Entry(fields)\n",
        ),
        ("etl/helpers.py", "def ieq(expect, actual):\n    assert list(expect) == list(actual)\n"),
        (
            "tests/test_stack.py",
            "from etl.views import stack\nfrom etl.helpers import ieq\n\n\
             def test_stack():\n    ieq([1, 2], stack([1], [2]))\n",
        ),
        ("tests/test_entry.py", "from etl.views import entry\n\ndef test_keys():\n    assert entry('a').keys()\n"),
    ]);
    assert_eq!(super::modules::tests_reaching(&graph, "iterstack"), ["tests/test_stack.py"]);
    assert!(super::modules::tests_reaching(&graph, "iterkeys").is_empty());
}

/// A Python class's `__call__` runs where a class attribute holding an instance of it, or of
/// a subclass that keeps it, is called: wtforms' `a = StringField()` in a form, rendered as
/// `form.a()`, runs `Field.__call__`.
#[test]
fn a_call_of_a_class_attribute_runs_the_held_instance_s_call() {
    let fields = "def render(field):\n    return field\n\n\nclass Field:\n    def __call__(self, **kw):\n        \
                  return render(self)\n\n\nclass StringField(Field):\n    pass\n";
    let called = "from pkg.fields import StringField\n\n\nclass F:\n    a = StringField()\n\n\n\
                  def test_render():\n    form = F()\n    assert form.a()\n";
    let made = "from pkg.fields import StringField\n\n\ndef test_make():\n    assert StringField()\n";
    let files = [("pkg/fields.py", fields), ("tests/test_render.py", called), ("tests/test_make.py", made)];
    assert_eq!(python_test_files_of(&files, "render"), ["tests/test_render.py"]);
}

/// A metaclass's `__call__` runs where a class it makes (or a subclass of one) is called
/// (pint's `RegistryMeta.__call__` runs `obj._after_init()` on each registry a test makes).
#[test]
fn a_metaclass_call_runs_where_its_classes_are_made() {
    let graph = python_graph(&[
        (
            "pkg/meta.py",
            "class RegistryMeta(type):\n    def __call__(cls, *args, **kwargs):\n        \
             obj = super().__call__(*args, **kwargs)\n        obj._after_init()\n        return obj\n",
        ),
        (
            "pkg/plain.py",
            "from pkg.meta import RegistryMeta\n\n\ndef build_cache():\n    return {}\n\n\n\
             class PlainRegistry(metaclass=RegistryMeta):\n    def _after_init(self):\n        \
             self.cache = build_cache()\n",
        ),
        (
            "pkg/group.py",
            "from pkg.plain import PlainRegistry\n\n\nclass GroupRegistry(PlainRegistry):\n    \
             def _after_init(self):\n        super()._after_init()\n        self.groups = []\n",
        ),
        ("pkg/registry.py", "from pkg.group import GroupRegistry\n\n\nclass UnitRegistry(GroupRegistry):\n    pass\n"),
        (
            "tests/test_units.py",
            "from pkg.registry import UnitRegistry\n\n\ndef test_units():\n    assert UnitRegistry().cache == {}\n",
        ),
        ("tests/test_other.py", "def test_other():\n    assert True\n"),
    ]);
    let changed = graph.lookup("build_cache")[0];
    assert_eq!(test_files_reached(&graph, changed), ["tests/test_units.py"]);
}
