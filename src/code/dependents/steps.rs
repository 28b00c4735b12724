//! Which uses of a definition a walk follows, and what each step requires: calls through
//! objects of unknown type, methods held in functions, code that runs only on failure, under
//! a guard or as a module loads.

use crate::code::graph::{CodeGraph, SymbolRef, Use};
use crate::code::{FileCode, SymbolKind, UseKind};

/// Whether the walk goes on from a use: from a definition that is not a test (a test, and a
/// file's top level, end a path).
pub(super) fn leads_on(graph: &CodeGraph, u: &Use) -> bool {
    u.enclosing.is_some_and(|e| !graph.is_test(u.file, e as usize))
}

/// Whether calls through objects of unknown type may mean `target`: a method or field in a
/// language whose code seldom states a receiver's type (Python, JavaScript, Ruby, PHP, Lua).
/// Where types are declared, an unresolved receiver is rarer and the guess measured on none.
pub(super) fn guesses_receivers(graph: &CodeGraph, target: SymbolRef) -> bool {
    use crate::code::SymbolKind::*;
    let s = graph.symbol(target);
    // A special method (`__init__`, `__eq__`) is called by the language, not by its name: an
    // `x.__init__(…)` on an unknown object is some other class's.
    let dunder = s.name.starts_with("__") && s.name.ends_with("__");
    let member = !dunder && matches!(s.kind, Method | Constructor | Field | Property);
    let language = graph.code(target.0).language.as_str();
    // `x.update(…)` is a dict's more often than the repo's one `update` (unless its class is a mapping).
    member && !graph.shares_builtin_name(target) && matches!(language, "python" | "javascript" | "ruby" | "php" | "lua")
}

/// How a definition local to a function is reached beyond its name's resolved uses: where
/// tests call its name on an object of unknown type (`test.onFinish(cb)` on what
/// `createHarness` returns), those calls, at `guess`, since whoever holds the object runs it by
/// name; otherwise the function that holds it, which runs it or hands it to what does (a
/// proxy's `get` trap). `None` for a definition not local to a function.
pub(super) fn held_uses(graph: &CodeGraph, definition: SymbolRef, guess: f32, floor: f32) -> Option<Vec<Use>> {
    let Some(held) = graph.holder_use(definition) else {
        // A method of an object a module-level variable holds: where the variable is used.
        let value = graph.holding_value(definition)?;
        let uses: Vec<Use> = graph
            .uses(value, floor)
            .iter()
            .map(|u| Use { confidence: u.confidence * crate::code::graph::HELD_CONFIDENCE, ..*u })
            .collect();
        return Some(uses);
    };
    let mut all = member_calls(graph, definition, guess, true);
    all.push(held);
    Some(all)
}

/// Whether a JavaScript or TypeScript definition local to a function is named after a method
/// the language's own objects have, which code runs by writing that name (`unshift` of an array
/// a proxy stands for), or is a proxy's `deleteProperty` trap (run by `delete`). Not a trap
/// run by reading, writing, listing or calling (`get`, `set`, `has`, `ownKeys`, `apply`…):
/// those run without the name, and so do `toString`, `toJSON` and `valueOf`.
pub(super) fn runs_where_named(graph: &CodeGraph, definition: SymbolRef) -> bool {
    let language = graph.code(definition.0).language.as_str();
    let name = graph.symbol(definition).name.as_str();
    const RUN_WITHOUT_THE_NAME: &[&str] = &[
        "apply",
        "construct",
        "defineProperty",
        "get",
        "getOwnPropertyDescriptor",
        "getPrototypeOf",
        "has",
        "isExtensible",
        "ownKeys",
        "preventExtensions",
        "set",
        "setPrototypeOf",
        "toJSON",
        "toString",
        "valueOf",
    ];
    // A type of the repo's own declaring a member of that name (superstruct's `Struct.entries`,
    // filled from the options object whose `*entries(…)` this is) makes it the repo's protocol,
    // which its own code runs by that name on the type's values.
    let repo_protocol = || {
        graph
            .lookup(name)
            .into_iter()
            .any(|r| r != definition && !graph.is_local(r.0, r.1) && graph.member_type(r).is_some())
    };
    matches!(language, "javascript" | "typescript")
        && !RUN_WITHOUT_THE_NAME.contains(&name)
        && (name == "deleteProperty" || crate::code::builtins::is_builtin_name(language, name))
        && !repo_protocol()
}

/// The calls that name a definition through an object of unknown type (`$('li').attr(…)`),
/// at `guess`, in test files only or everywhere; none where the name is also a built-in type's
/// member (`x.push(…)` on an unknown object is an array's, not this `push`) or `guess` is 0.
fn member_calls(graph: &CodeGraph, definition: SymbolRef, guess: f32, tests_only: bool) -> Vec<Use> {
    let language = graph.code(definition.0).language.as_str();
    let name = &graph.symbol(definition).name;
    if crate::code::builtins::is_builtin_name(language, name) || guess <= 0.0 {
        return Vec::new();
    }
    graph
        .unresolved_member_uses(name, language, guess)
        .into_iter()
        .filter(|u| u.kind == UseKind::Call)
        .filter(|u| !tests_only || graph.is_test_module(u.file))
        .collect()
}

/// A JavaScript or TypeScript function at a module's top level that nothing calls by its name
/// is often installed as a method: mixed into a class's prototype (`Object.assign(
/// Cheerio.prototype, Attributes)` over `import * as Attributes`), set on one
/// (`Foo.prototype.attr = attr`), or typed as one (`function attr(this: Cheerio)`); the calls
/// that name it through an object of unknown type are its callers then, at `guess`.
pub(super) fn installed_uses(graph: &CodeGraph, definition: SymbolRef, uses: &[Use], guess: f32) -> Option<Vec<Use>> {
    let s = graph.symbol(definition);
    let script = matches!(graph.code(definition.0).language.as_str(), "javascript" | "typescript");
    if !script
        || s.kind != SymbolKind::Function
        || !s.container.is_empty()
        || uses.iter().any(|u| u.kind == UseKind::Call)
    {
        return None;
    }
    Some(member_calls(graph, definition, guess, false)).filter(|calls| !calls.is_empty())
}

/// Whether a Python class is a view made to be iterated: nothing in the repo extends it, and
/// its own methods are special ones and private ones (petl's `StackView`: `__init__`,
/// `__iter__`; `SortView`'s `_iterfrommemcache`). A class with public methods (click's
/// `EchoingStdin.read`, bibtexparser's `Entry.items`) is used for those more often than it is
/// iterated. Measured as a rule for every special method met on the way (impact-log):
/// the base's instances are every subclass's, and most instances are not iterated.
pub(super) fn only_iterated(graph: &CodeGraph, class: SymbolRef) -> bool {
    let name = &graph.symbol(class).qualified_name;
    let mut own = graph.code(class.0).symbols.iter().filter(|m| &m.container == name && m.kind.is_callable());
    graph.subclasses_of(class).is_empty() && own.all(|m| m.name.starts_with('_'))
}

/// Whether a definition is the iteration protocol's `__iter__` or `__next__` (async too), in
/// Python.
pub(super) fn runs_on_instances(graph: &CodeGraph, t: SymbolRef) -> bool {
    graph.code(t.0).language == "python"
        && matches!(graph.symbol(t).name.as_str(), "__iter__" | "__next__" | "__aiter__" | "__anext__")
}

/// Whether a use sits in code that runs only when something fails (`FileCode::failure_spans`).
pub(super) fn on_failure(graph: &CodeGraph, u: &Use) -> bool {
    within(graph, u, |code| &code.failure_spans)
}

/// Whether a use outside the tests runs only when an attribute the repo leaves off is set
/// (`MustName::Guard`).
pub(super) fn guarded(graph: &CodeGraph, u: &Use) -> bool {
    let code = graph.code(u.file);
    !code.guarded.is_empty()
        && !graph.is_test_file(u.file)
        && code.guards_of(u.occurrence).any(|guard| graph.guard_off(u.file, guard))
}

/// Whether a use names a type where no value is made (`FileCode::type_only_spans`).
pub(super) fn makes_no_value(graph: &CodeGraph, u: &Use) -> bool {
    within(graph, u, |code| &code.type_only_spans)
}

/// Whether a use lies in one of its file's `spans`.
fn within(graph: &CodeGraph, u: &Use, spans: fn(&FileCode) -> &Vec<[u32; 4]>) -> bool {
    let code = graph.code(u.file);
    let spans = spans(code);
    let Some(o) = code.occurrences.get(u.occurrence as usize).filter(|_| !spans.is_empty()) else {
        return false;
    };
    let at = (o.line, o.column);
    spans.iter().any(|&[line, column, end_line, end_column]| (line, column) <= at && at < (end_line, end_column))
}

/// Whether use `u` of `target` is a step inside one object's work: a private method
/// (`_parse_array_decl`, a Rust `fn` without `pub`, a Go method named in lower case) called by
/// another private method of its type. (Free steps wider, from any private callable to any
/// caller of its file, or to a private one: Python's read splits, micro R / P, 0.880 / 0.502 →
/// 0.891 / 0.490 and 0.884 / 0.499, Go's more through interface dispatch and tables of
/// functions; this way 0.881 / 0.502.)
pub(super) fn internal_step(graph: &CodeGraph, target: SymbolRef, u: &Use) -> bool {
    let Some(e) = u.enclosing.filter(|_| u.file == target.0 && u.kind == UseKind::Call) else { return false };
    let (callee, caller) = (graph.symbol(target), &graph.code(u.file).symbols[e as usize]);
    let private = |s: &crate::code::Symbol| s.kind.is_callable() && s.visibility == crate::code::Visibility::Private;
    private(callee) && private(caller) && !callee.container.is_empty() && callee.container == caller.container
}

/// Whether a use is a Python class body's `@name.setter` (or `.deleter`, `.getter`) over the
/// property `target` it redefines: the decorator makes a new property of the old one when the
/// class is built, at import; no instance of the class reads the property by it. (h2's
/// `Settings.header_table_size` getter was credited to every test that makes a `Settings`.)
pub(super) fn redecorates(graph: &CodeGraph, target: SymbolRef, u: &Use) -> bool {
    let Some(e) = u.enclosing else { return false };
    let code = graph.code(u.file);
    let class = &code.symbols[e as usize];
    if code.language != "python" || u.kind != UseKind::Read || !class.kind.is_container() || u.file != target.0 {
        return false;
    }
    let name = &graph.symbol(target).name;
    // The next definition of the class after the use is the property redefined under its name.
    code.symbols
        .iter()
        .filter(|s| s.container == class.qualified_name && s.line > u.line)
        .min_by_key(|s| s.line)
        .is_some_and(|s| &s.name == name && s.kind.is_callable())
}

/// The methods of a Python setter's class that assign its attribute on `self` (`self.key =
/// key`), as what runs them: the class where the method is `__init__` (its uses that make an
/// instance: `true`), the method itself otherwise.
pub(super) fn self_writers(graph: &CodeGraph, setter: SymbolRef) -> Vec<(SymbolRef, bool)> {
    let s = graph.symbol(setter);
    let code = graph.code(setter.0);
    let assigned = code
        .symbols
        .iter()
        .filter(|f| f.kind == crate::code::SymbolKind::Field && f.qualified_name == s.qualified_name);
    let mut out = Vec::new();
    for field in assigned {
        let method = code.symbols.iter().enumerate().find(|(_, m)| {
            m.kind.is_callable() && m.container == s.container && m.line <= field.line && field.line <= m.end_line
        });
        let Some((i, method)) = method else { continue };
        let runs = match method.name.as_str() {
            "__init__" => graph.member_type((setter.0, i as u32)).map(|class| (class, true)),
            _ => Some(((setter.0, i as u32), false)),
        };
        if let Some(runs) = runs.filter(|r| !out.contains(r)) {
            out.push(runs);
        }
    }
    out
}

/// Whether a use sits in a declaration (at file level, in a class body, a field's or a
/// constant's value) or in a test, rather than in a function's body.
pub(super) fn declares(graph: &CodeGraph, u: &Use) -> bool {
    let code = graph.code(u.file);
    match u.enclosing {
        None => true,
        Some(e) => !code.symbols[e as usize].kind.is_callable() || graph.is_test(u.file, e as usize),
    }
}

/// Whether use `u` is a call Python makes as a module or class body runs, at import, before
/// any test: at file level, or in the value of a module's or class's variable (not one local
/// to a function). Not in a test module, whose import-time calls (a class built at module
/// level, an app made for its tests) fail its tests when they break, though per-test coverage
/// credits them to none; but there too a script's `if __name__ == "__main__":` block, which
/// no test run runs.
pub(super) fn runs_at_import(graph: &CodeGraph, u: &Use) -> bool {
    let code = graph.code(u.file);
    if code.language != "python" || u.kind != UseKind::Call {
        return false;
    }
    let in_main_block = code.main_block.is_some_and(|(first, last)| (first..=last).contains(&u.line));
    if graph.is_test_module(u.file) {
        return u.enclosing.is_none() && in_main_block;
    }
    graph.runs_as_it_loads(u.file, u.enclosing)
}
