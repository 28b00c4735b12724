//! Where a type is made or named: the places a path through a type's members has to pass for
//! the walk to lead on from them (`names_type`), bounded in hops and places.

use std::collections::HashMap;

use super::seeds::is_constructor;
use crate::code::graph::{CodeGraph, SymbolRef};
use crate::code::{SymbolKind, UseKind};

/// How many calls away from a Go type's constructor a place still builds the type.
const MAX_MAKER_HOPS: usize = 3;

/// The same in Go, where a value is more often made through package variables and the types
/// whose methods hold them (an extension's `Extend` → its parser's constructor → the variable
/// holding its delimiter processor).
const MAX_GO_MAKER_HOPS: usize = 8;
/// The surest a use must be to count as calling a constructor.
const MAKER_FLOOR: f32 = 0.5;

/// At most this many places are taken to build one type.
const MAX_MAKER_PLACES: usize = 5_000;

/// Whether the definition a use sits in names type `ty` (builds it, calls its functions,
/// states it), from the type's resolved uses, gathered once per type.
pub(super) fn names_type(
    graph: &CodeGraph,
    named_by: &mut HashMap<SymbolRef, std::collections::HashSet<(u32, Option<u32>)>>,
    ty: SymbolRef,
    u: &crate::code::graph::Use,
) -> bool {
    let places = named_by.entry(ty).or_insert_with(|| {
        let mut places: std::collections::HashSet<(u32, Option<u32>)> =
            graph.uses(ty, 0.0).iter().map(|n| (n.file, n.enclosing)).collect();
        let language = graph.code(ty.0).language.as_str();
        // A Rust value of the type held in a static or a constant of its file (`pub static
        // EACH_HELPER: EachHelper = EachHelper;`, registered by the registry's constructor):
        // where the static is named, the type is.
        if language == "rust" {
            for holder in statics_of_type(graph, ty) {
                places.extend(graph.uses(holder, 0.0).iter().map(|n| (n.file, n.enclosing)));
            }
        }
        // Go builds a type in a constructor that returns it as an interface (`newIntValue`
        // makes the `*intValue` behind `IntVar`'s `Value`), Rust registers one in a
        // constructor (`Registry::new` → `setup_builtins` → `EACH_HELPER`): a place that calls
        // what builds it, up to `MAX_MAKER_HOPS` calls away, builds it too.
        // A Python class or function that names it (`state_cls = State` in `Machine`'s body)
        // makes one where it is used, too.
        if matches!(language, "go" | "rust" | "python") {
            let go = language == "go";
            let python = language == "python";
            // A Go method names its type in its receiver (`func (p *strikethroughProcessor)
            // OnMatch`) without building one: its callers are not makers (they hold a value
            // already, and every caller of an interface's method would build each type).
            let receiver = |m: SymbolRef, of: SymbolRef| go && graph.member_type(m) == Some(of);
            let mut frontier: Vec<SymbolRef> =
                places.iter().filter_map(|&(f, e)| Some((f, e?))).filter(|&m| !receiver(m, ty)).collect();
            let mut types_seen = std::collections::HashSet::from([ty]);
            for _ in 0..if go { MAX_GO_MAKER_HOPS } else { MAX_MAKER_HOPS } {
                let mut next = Vec::new();
                for maker in frontier {
                    let s = graph.symbol(maker);
                    // A Go package variable that holds one (`var defaultListParser =
                    // &listParser{}`) makes it where the variable is used.
                    // A Go type that embeds it (`BaseBlock`'s field `BaseNode`) makes one
                    // wherever it is made.
                    let embedded = go && s.kind == crate::code::SymbolKind::Field;
                    use crate::code::SymbolKind::{Class, Constant, Field, Type, Variable};
                    let python_holder = python && matches!(s.kind, Class | Variable | Field | Constant);
                    // A Rust `impl` block's associated type (`type EdgeRef = EdgeReference<'a,
                    // E, Ix>` in `impl IntoEdgeReferences for &Graph`, `type Item = …` of an
                    // iterator): the trait's methods hand out one wherever the implementing
                    // type is at work, so a place that names that type makes this one.
                    let associated = (language == "rust" && s.kind == Type && !s.container.is_empty())
                        .then(|| graph.member_type(maker))
                        .flatten()
                        .filter(|&t| types_seen.insert(t));
                    let mut add = |n: &crate::code::graph::Use, next: &mut Vec<SymbolRef>| {
                        if places.len() < MAX_MAKER_PLACES && places.insert((n.file, n.enclosing)) {
                            next.extend(n.enclosing.map(|e| (n.file, e)));
                        }
                    };
                    if let Some(t) = associated {
                        for n in graph.uses(t, MAKER_FLOOR).iter() {
                            add(n, &mut next);
                        }
                        continue;
                    }
                    if !(s.kind.is_callable() || (go && s.kind == Variable) || embedded || python_holder) {
                        continue;
                    }
                    for n in graph.uses(maker, MAKER_FLOOR).iter() {
                        add(n, &mut next);
                    }
                    // A Python `__init__` runs where its class is called; a class attribute
                    // (`Meta = DefaultMeta` in `Form`) is there where its class is used.
                    let python_owner = graph
                        .member_type(maker)
                        .filter(|_| python && (is_constructor(s) || matches!(s.kind, Variable | Field | Constant)));
                    if let Some(class) = python_owner.filter(|&t| types_seen.insert(t)) {
                        for n in graph.uses(class, MAKER_FLOOR).iter() {
                            add(n, &mut next);
                        }
                    }
                    // A Go method that makes one runs where its own type's value is at work,
                    // which code reaches by an interface more often than by the method's name
                    // (`emphasisParser.Parse` makes the emphasis delimiter processor): where
                    // that type is made, this one is.
                    // Only an unexported type's: an exported one's uses are everywhere its
                    // package is used (chi's `Mux`), and name no value made.
                    let unexported = |t: SymbolRef| graph.symbol(t).name.starts_with(|c: char| c.is_lowercase());
                    let owner =
                        graph.member_type(maker).filter(|&t| go && (embedded || unexported(t)) && types_seen.insert(t));
                    if let Some(t) = owner {
                        for n in graph.uses(t, MAKER_FLOOR).iter() {
                            if !n.enclosing.is_some_and(|e| receiver((n.file, e), t)) {
                                add(n, &mut next);
                            }
                        }
                    }
                }
                frontier = next;
            }
        }
        places
    });
    if places.contains(&(u.file, u.enclosing)) {
        return true;
    }
    // A unittest method has what its class's `setUp` built.
    u.enclosing.is_some_and(|e| graph.set_ups((u.file, e)).iter().any(|&(f, i)| places.contains(&(f, Some(i)))))
}

/// Whether code other than `ty`'s own members names the type `ty`.
pub(super) fn named_outside(graph: &CodeGraph, ty: SymbolRef) -> bool {
    graph.uses(ty, 0.0).iter().any(|u| u.enclosing.is_none_or(|e| graph.member_type((u.file, e)) != Some(ty)))
}

/// The module-level statics and constants of type `ty`'s file that state `ty` as their type.
fn statics_of_type(graph: &CodeGraph, ty: SymbolRef) -> Vec<SymbolRef> {
    let name = &graph.symbol(ty).name;
    let code = graph.code(ty.0);
    (0..code.symbols.len() as u32)
        .map(|i| (ty.0, i))
        .filter(|&r| {
            let s = graph.symbol(r);
            s.kind == SymbolKind::Constant
                && s.container.is_empty()
                && crate::code::graph::declared_type(&s.signature, &s.name).as_ref() == Some(name)
        })
        .collect()
}

/// Whether a use of a type makes an instance of it: a call (`Cart(…)`, `new Cart()`), or a
/// type that derives from it, named in its header (`class Basket(Cart):`).
pub(super) fn makes_instance(graph: &CodeGraph, u: &crate::code::graph::Use) -> bool {
    if u.kind == UseKind::Call {
        return true;
    }
    u.enclosing.is_some_and(|e| {
        let s = &graph.code(u.file).symbols[e as usize];
        s.kind.is_container() && s.line == u.line
    })
}
