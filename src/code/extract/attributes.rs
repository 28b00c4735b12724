//! Rust attributes above an item: test markers, `#[path]`, and the gates that decide whether
//! the default test run builds or runs it (`#[cfg]`, `#[cfg_attr(…, ignore)]`, rustversion's
//! selectors).

use tree_sitter::Node;

/// Whether a Rust attribute (`[test]`, `[tokio::test(flavor = "multi_thread")]`,
/// `[rstest]`, without its `#`) is a test marker: the test harness runs the function. `cfg(test)`
/// is not one (it only compiles the item for tests).
pub(super) fn is_test_attribute(attribute: &str) -> bool {
    let path = attribute.trim_start_matches('[').split(['(', ']', ' ']).next().unwrap_or("");
    let last = path.rsplit("::").next().unwrap_or(path);
    last == "test" || last.starts_with("test_") || matches!(last, "rstest" | "quickcheck")
}

/// Whether a Rust function carries a test marker among the attributes right before it:
/// `#[test]`, `#[tokio::test]`, `#[test_case(…)]`, `#[rstest]`, `#[quickcheck]` (`#[cfg(test)]`
/// is not one: it only compiles the item for tests).
pub(super) fn has_test_attribute(node: Node, src: &[u8]) -> bool {
    attributes(node, src).any(|a| is_test_attribute(a.trim_start_matches('#')))
}

/// The attributes written above an item (`#[test]`, `#[cfg(unix)]`), nearest first, comments
/// between them skipped.
pub(crate) fn attributes<'t, 's: 't>(node: Node<'t>, src: &'s [u8]) -> impl Iterator<Item = &'s str> + 't {
    std::iter::successors(node.prev_sibling(), |s| s.prev_sibling())
        .take_while(|s| matches!(s.kind(), "attribute_item" | "line_comment" | "block_comment"))
        .filter(|s| s.kind() == "attribute_item")
        .map(move |s| s.utf8_text(src).unwrap_or(""))
}

/// An attribute's path: `ignore` for `#[ignore = "slow"]`, `tokio::test` for
/// `#[tokio::test(flavor = "multi_thread")]`.
pub(super) fn attribute_path(attribute: &str) -> &str {
    let inner = attribute.trim_start_matches('#').trim_start_matches('!').trim_start_matches('[');
    inner.split(['(', ']', '=', ' ']).next().unwrap_or("").trim()
}

/// The file a `#[path = "…"]` attribute names.
pub(crate) fn path_attribute(attribute: &str) -> Option<&str> {
    let value = inner(attribute)?.strip_prefix("path")?.trim_start().strip_prefix('=')?.trim();
    value.strip_prefix('"')?.strip_suffix('"')
}

/// The predicate of a `#[cfg(…)]` or `#![cfg(…)]` attribute (not `cfg_attr`).
pub(super) fn cfg_predicate(attribute: &str) -> Option<&str> {
    arguments(inner(attribute)?.strip_prefix("cfg")?)
}

/// The gate an attribute puts on an item, as a `cfg` predicate the default run evaluates: a
/// `#[cfg(P)]`'s `P`; `not(P)` for `#[cfg_attr(P, ignore)]`, which skips the test where `P`
/// holds; and rustversion's `#[rustversion::nightly]`, `#[rustversion::since(1.82)]` and
/// `#[rustversion::attr(not(nightly), ignore)]` (dtolnay's crates gate their nightly-only
/// and compile-fail tests so) in the same terms, the toolchain's channel as `rust_channel`.
pub(super) fn gate(attribute: &str) -> Option<String> {
    if let Some(cfg) = cfg_predicate(attribute) {
        return Some(cfg.to_string());
    }
    let inner = inner(attribute)?;
    if let Some(args) = inner.strip_prefix("cfg_attr").and_then(arguments) {
        let parts = split_top(args);
        let (predicate, attrs) = parts.split_first()?;
        return ignores(attrs).then(|| format!("not({predicate})"));
    }
    let selector = inner.strip_prefix("rustversion::")?;
    if let Some(args) = selector.strip_prefix("attr").and_then(arguments) {
        let parts = split_top(args);
        let (selector, attrs) = parts.split_first()?;
        return ignores(attrs).then(|| format!("not({})", toolchain_cfg(selector)));
    }
    Some(toolchain_cfg(selector))
}

/// Whether attributes written inside a `cfg_attr` (`ignore`, `ignore = "slow"`) skip the test.
fn ignores(attrs: &[&str]) -> bool {
    attrs.iter().any(|a| a.split(['=', '(', ' ']).next() == Some("ignore"))
}

/// A rustversion selector as a `cfg` predicate: the channel (`stable`, `beta`, `nightly`) as
/// `rust_channel = "…"`; `since(1.82)` true and `before(1.82)` false (the toolchain that runs
/// the tests is recent); a pinned release or date (`stable(1.34)`, `nightly(2025-01-01)`)
/// unknown; `not`, `any`, `all` as in `cfg`.
fn toolchain_cfg(selector: &str) -> String {
    let selector = selector.trim();
    let (name, args) = match selector.split_once('(') {
        Some((name, _)) => (name.trim(), arguments(&selector[name.len()..])),
        None => (selector, None),
    };
    match (name, args) {
        ("stable" | "beta" | "nightly", None) => format!("rust_channel = \"{name}\""),
        ("since", Some(_)) => "true".to_string(),
        ("before", Some(_)) => "false".to_string(),
        ("not" | "any" | "all", Some(args)) => {
            let inner: Vec<String> = split_top(args).iter().map(|s| toolchain_cfg(s)).collect();
            format!("{name}({})", inner.join(", "))
        }
        _ => "rust_channel = \"unknown\"".to_string(),
    }
}

/// `cfg(unix)` for `#[cfg(unix)]` and `#![cfg(unix)]`.
fn inner(attribute: &str) -> Option<&str> {
    let inner = attribute.trim_start_matches('#').trim_start_matches('!').trim();
    Some(inner.strip_prefix('[')?.strip_suffix(']')?.trim())
}

/// What the parentheses after a name hold: `a, b` for `(a, b)`.
fn arguments(rest: &str) -> Option<&str> {
    Some(rest.trim_start().strip_prefix('(')?.strip_suffix(')')?.trim())
}

/// `a, f(b, c), d` split at the commas outside parentheses and strings, each part trimmed.
fn split_top(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut quoted, mut start) = (Vec::new(), 0usize, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth = depth.saturating_sub(1),
            ',' if !quoted && depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::gate;

    #[test]
    fn each_gate_is_a_cfg_predicate() {
        assert_eq!(gate("#[cfg(unix)]").as_deref(), Some("unix"));
        assert_eq!(gate("#[cfg_attr(miri, ignore = \"slow\")]").as_deref(), Some("not(miri)"));
        assert_eq!(gate("#[cfg_attr(not(feature = \"a,b\"), ignore)]").as_deref(), Some("not(not(feature = \"a,b\"))"));
        assert_eq!(gate("#[cfg_attr(feature = \"x\", derive(Debug))]"), None);
        assert_eq!(gate("#[rustversion::nightly]").as_deref(), Some("rust_channel = \"nightly\""));
        assert_eq!(gate("#[rustversion::not(nightly)]").as_deref(), Some("not(rust_channel = \"nightly\")"));
        assert_eq!(gate("#[rustversion::since(1.82)]").as_deref(), Some("true"));
        assert_eq!(
            gate("#[rustversion::any(before(1.40), beta)]").as_deref(),
            Some("any(false, rust_channel = \"beta\")")
        );
        assert_eq!(gate("#[rustversion::stable(1.34)]").as_deref(), Some("rust_channel = \"unknown\""));
        assert_eq!(
            gate("#[rustversion::attr(not(nightly), ignore = \"requires nightly\")]").as_deref(),
            Some("not(not(rust_channel = \"nightly\"))")
        );
        assert_eq!(gate("#[rustversion::attr(nightly, feature(test))]"), None);
        assert_eq!(gate("#[test]"), None);
    }
}
