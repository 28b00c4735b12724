//! The keys a path waits for: a dict entry's, a guard's, a foreign type's name a test must write.

use crate::code::graph::{CodeGraph, SymbolRef};
use crate::code::GuardTest;

use super::{MustName, Reached};

/// Whether two paths wait for the same dict key (`Reached::key`), by its text.
pub(super) fn same_key(graph: &CodeGraph, a: Option<MustName>, b: Option<MustName>) -> bool {
    let text = |k: Option<MustName>| k.and_then(|k| k.text(graph));
    match (a, b) {
        (None, None) => true,
        (Some(_), Some(_)) => text(a) == text(b),
        _ => false,
    }
}

/// The key a test reached through a dict entry must name (`Reached::key`), if any. Not a
/// Rust guard's: a test runs its code where it runs what turns it on (`required_enablers`).
pub fn required_key(graph: &CodeGraph, r: &Reached) -> Option<String> {
    let key = r.key?;
    if matches!(key.guard(graph), Some((_, GuardTest::Field | GuardTest::Constant))) {
        return None;
    }
    key.text(graph).map(str::to_string)
}

/// For a test reached through code a Rust guard keeps off (`GuardTest::Field`,
/// `GuardTest::Constant`): the guard's word and what turns it on
/// (`CodeGraph::guard_enablers`). The test runs that code only if it runs one of those too
/// (`tests_reaching`).
pub fn required_enablers<'g>(graph: &'g CodeGraph, r: &Reached) -> Option<(&'g str, &'g [SymbolRef])> {
    let (word, test) = r.key?.guard(graph)?;
    graph.guard_enablers(word, test).map(|on| (word, on))
}

/// The name of the type a Rust trait method is implemented for, when the repo does not define
/// it and it is a plain name (`u16`, `Option`; not `[T; N]`, nor a one-letter type parameter of
/// a blanket `impl<T> … for T`).
pub(super) fn foreign_self_type(graph: &CodeGraph, member: SymbolRef) -> Option<&str> {
    if graph.code(member.0).language != "rust" || graph.member_type(member).is_some() {
        return None;
    }
    let container = graph.symbol(member).container.as_str();
    let name = container.rsplit("::").next().unwrap_or(container);
    let plain = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    let parameter = name.len() <= 2 && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    (plain && !parameter).then_some(name)
}

/// Whether a test file's text names `key` as a whole word (`{{ x|wordcount }}`,
/// `env.filters["wordcount"]`).
pub fn names_key(text: &str, key: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    // Rust's number types are named by a literal's suffix too (`5u16`, `1_i64`).
    let suffix = matches!(
        key,
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "f32"
            | "f64"
    );
    text.match_indices(key).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + key.len()..].chars().next();
        let before_ok = !before.is_some_and(word) || (suffix && before.is_some_and(|c| c.is_ascii_digit() || c == '_'));
        before_ok && !after.is_some_and(word)
    })
}
