//! Items a `macro_rules!` macro defines under a name its call passes in. Tests are often
//! written so: `t!(parses_empty: "" => "")` with a rule `($t:ident : $s:expr => $r:expr) =>
//! { #[test] fn $t() { … } }` defines the function `parses_empty`, and a language server,
//! which expands the call, lists it where the call names it. Here the call is matched against
//! the rules of the macros defined earlier in the same file (Rust's textual scope), without
//! expanding anything: only the names bound to `$x:ident` that the rule's body puts after
//! `fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `mod` or `union` become
//! definitions, at the call's token. A function the body spells out by name (`fn remaining`
//! in a macro that forwards a trait's methods, called in each `impl Buf for …`) is defined at
//! every call too, and is a definition of its own inside the macro, where its lines are: a
//! change to those lines is a change to what each call defines.

use tree_sitter::Node;

use crate::code::SymbolKind;
use crate::ingest::code::last_row;

/// Rules a call may match before it is given up on (each is matched once, greedily).
const MAX_RULES: usize = 32;
/// Tokens of a call looked at, at most (a table-driven macro can take thousands).
const MAX_CALL_TOKENS: usize = 20_000;

/// The rules of one `macro_rules!` macro that define named items.
#[derive(Debug, Clone, Default)]
pub(super) struct MacroRules {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone)]
struct Rule {
    matcher: Vec<Pattern>,
    /// Each metavariable the body defines an item with, the item's kind, and whether a test
    /// marker (`#[test]`) is on it.
    defines: Vec<(String, SymbolKind, bool)>,
    /// The functions the body defines under a name it spells out, at its top level.
    literals: Vec<Literal>,
    /// Each metavariable the body calls as a method (`buf.$method()`): the name a call passes
    /// for it is called wherever the call is expanded.
    calls: Vec<String>,
}

/// A function a rule's body defines by a name it spells out (`fn remaining(&self) … { … }`),
/// and where it is written: the byte, row and column of its `fn`, and the row its body ends
/// on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Literal {
    pub(super) name: String,
    pub(super) start_byte: usize,
    pub(super) start: (usize, usize),
    pub(super) end_row: usize,
    /// A test marker is on it (`#[test] fn parses()`): what each call defines is a test.
    pub(super) test: bool,
    /// For a function inside an `impl` block of the body (`impl Num for $ty { fn
    /// checked_add_ext … }`): the trait it implements (its name, without path or generics;
    /// empty for an inherent `impl`) and the type, as written (a metavariable such as `$ty`
    /// is resolved at each call).
    pub(super) implementation: Option<(String, String)>,
}

/// One element of a rule's matcher.
#[derive(Debug, Clone)]
enum Pattern {
    /// A token that must be there as written.
    Token(String),
    /// A delimited group: its delimiter and what it holds.
    Group(u8, Vec<Pattern>),
    /// `$name:fragment`.
    Bind(String, Fragment),
    /// `$( … ) sep op`: what repeats, the separator, and `*`, `+` or `?`.
    Repeat(Vec<Pattern>, Option<String>, u8),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fragment {
    Ident,
    Lifetime,
    Literal,
    Tt,
    Block,
    Vis,
    /// expr, ty, path, pat, stmt, item, meta…: tokens up to what follows in the matcher.
    Phrase,
}

/// A token of a call, with where it starts (0-based row and column).
#[derive(Debug)]
enum Input<'s> {
    Token(&'s str, (usize, usize)),
    Group(u8, Vec<Input<'s>>),
}

/// The name bound to an `ident` metavariable, and where the call spells it.
pub(super) struct Bound<'s> {
    pub(super) name: &'s str,
    pub(super) position: (usize, usize),
    pub(super) kind: SymbolKind,
    /// A test marker is on it in the rule's body (`#[test] fn $t()`).
    pub(super) test: bool,
}

impl MacroRules {
    /// The defining rules of a `macro_definition` node; empty when none defines a named item.
    pub(super) fn read(definition: Node, src: &[u8]) -> MacroRules {
        let mut rules = Vec::new();
        let mut cursor = definition.walk();
        for rule in definition.named_children(&mut cursor).filter(|n| n.kind() == "macro_rule") {
            let (Some(left), Some(right)) = (rule.child_by_field_name("left"), rule.child_by_field_name("right"))
            else {
                continue;
            };
            let matcher = group_patterns(left, src);
            let mut defines = Vec::new();
            body_definitions(right, src, false, &mut defines);
            // Only a name the call passes in (`$t:ident`) is placed at the call.
            defines.retain(|(var, _, _)| binds_ident(&matcher, var));
            let literals = body_literals(right, src);
            let mut calls = Vec::new();
            body_calls(right, src, &mut calls);
            calls.retain(|var| binds_ident(&matcher, var));
            rules.push(Rule { matcher, defines, literals, calls });
        }
        // A call is matched against every rule in order (the first that matches is the one
        // expanded), so the rules that define or call nothing stay: they can match first.
        if rules.iter().all(|r| r.defines.is_empty() && r.literals.is_empty() && r.calls.is_empty()) {
            rules.clear();
        }
        MacroRules { rules }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The functions the rules' bodies spell out by name, each where it is written (a macro
    /// that implements `Pow` for a type four ways writes `fn pow` four times: a change to any
    /// is a change to what its calls define).
    pub(super) fn literals(&self) -> impl Iterator<Item = &Literal> {
        self.rules.iter().flat_map(|r| &r.literals)
    }

    /// The items a call (the `token_tree` of a `macro_invocation`) defines through the first
    /// rule it matches: those it names, and the functions the rule's body names, each with
    /// the type its `impl` block is for where the body writes one (a metavariable replaced
    /// by the first name the call passes for it: `u8` for `$ty` in `impl_num!(u8)`).
    pub(super) fn definitions<'s>(
        &self,
        call: Node,
        src: &'s [u8],
    ) -> (Vec<Bound<'s>>, Vec<(&Literal, Option<String>)>) {
        if let Some((rule, binds)) = self.matched(call, src) {
            let literals = rule
                .literals
                .iter()
                .map(|l| {
                    let ty = l.implementation.as_ref().map(|(_, ty)| match ty.strip_prefix('$') {
                        Some(var) => binds.iter().find(|(v, _, _)| *v == var).map_or("", |b| b.1).to_string(),
                        None => ty.clone(),
                    });
                    (l, ty)
                })
                .collect();
            let bound = binds
                .into_iter()
                .filter(|(_, name, _)| is_ident(name))
                .filter_map(|(var, name, position)| {
                    let (_, kind, test) = rule.defines.iter().find(|(v, _, _)| v == var)?;
                    Some(Bound { name, position, kind: *kind, test: *test })
                })
                .collect();
            return (bound, literals);
        }
        (Vec::new(), Vec::new())
    }

    /// The methods a call (a `token_tree`, also one inside another macro's body, where a
    /// metavariable of that body stands for a name) makes its expansion call: the names it
    /// passes for the metavariables the matched rule's body calls as methods, each where the
    /// call spells it (0-based row and column).
    pub(super) fn called<'s>(&self, call: Node, src: &'s [u8]) -> Vec<(&'s str, (usize, usize))> {
        let Some((rule, binds)) = self.matched(call, src) else { return Vec::new() };
        binds
            .into_iter()
            .filter(|(var, name, _)| is_ident(name) && rule.calls.iter().any(|c| c == var))
            .map(|(_, name, position)| (name, position))
            .collect()
    }

    /// The first rule a call matches (the one expanded), with what it binds.
    fn matched<'s>(&self, call: Node, src: &'s [u8]) -> Option<(&Rule, Binds<'_, 's>)> {
        let mut budget = MAX_CALL_TOKENS;
        let input = group_input(call, src, &mut budget)?;
        for rule in self.rules.iter().take(MAX_RULES) {
            let mut binds = Vec::new();
            if match_all(&rule.matcher, &input, &mut binds) {
                return Some((rule, binds));
            }
        }
        None
    }
}

/// The functions a rule's body (its `token_tree`) defines by a name it spells out: `fn` and an
/// identifier, up to the end of the braces that follow, at its top level or in an `impl`
/// block there (also inside a repetition: `$( impl Shr<$rhs> for BigUint { fn shr … } )*`).
fn body_literals(body: Node, src: &[u8]) -> Vec<Literal> {
    let mut out = Vec::new();
    group_literals(&inside(body).1, src, None, &mut out);
    out
}

/// The literal functions among a group's `children`; `implementation` is the `impl` block's
/// trait and type when the group is one's body.
fn group_literals(children: &[Node], src: &[u8], implementation: Option<&(String, String)>, out: &mut Vec<Literal>) {
    // Where the last `impl` keyword at this level is, while its header is being read.
    let mut impl_at: Option<usize> = None;
    for (i, child) in children.iter().enumerate() {
        match child.kind() {
            "token_repetition" if implementation.is_none() => {
                group_literals(&repeated(*child), src, None, out);
                impl_at = None;
                continue;
            }
            "token_tree" => {
                if let Some(at) = impl_at.take().filter(|_| inside(*child).0 == b'{' && implementation.is_none()) {
                    let header = impl_header(&children[at + 1..i], src);
                    group_literals(&inside(*child).1, src, Some(&header), out);
                }
                continue;
            }
            _ => {}
        }
        match text(*child, src) {
            "impl" if implementation.is_none() => impl_at = Some(i),
            ";" => impl_at = None,
            "fn" => {
                let Some(name) = children.get(i + 1).filter(|n| n.kind() == "identifier") else { continue };
                // The body: the first `{…}` group after the name, unless a `;` ends the item first.
                let end = children[i + 2..]
                    .iter()
                    .take_while(|n| text(**n, src) != ";")
                    .find(|n| n.kind() == "token_tree" && inside(**n).0 == b'{');
                let Some(end) = end else { continue };
                let start = child.start_position();
                out.push(Literal {
                    name: text(*name, src).to_string(),
                    start_byte: child.start_byte(),
                    start: (start.row, start.column),
                    end_row: last_row(*end),
                    test: marked_as_test(&children[..i], src),
                    implementation: implementation.cloned(),
                });
            }
            _ => {}
        }
    }
}

/// The trait and the type of an `impl` header's tokens (after `impl`, up to its body):
/// `Shr<$rhs> for &BigUint` → (`Shr`, `BigUint`); `<T> Product<T> for $res where …` →
/// (`Product`, `$res`); `Parser` → (``, `Parser`).
fn impl_header(tokens: &[Node], src: &[u8]) -> (String, String) {
    let mut words: Vec<&str> = tokens.iter().map(|t| text(*t, src)).collect();
    // The impl's own generics: `impl<T> …`.
    // How a token moves the depth of angle brackets (`>>` closes two).
    let angles = |w: &str| w.matches('<').count() as i32 - w.matches('>').count() as i32;
    if words.first() == Some(&"<") {
        let mut depth = 0;
        let close = words.iter().position(|w| {
            depth += angles(w);
            depth <= 0
        });
        words.drain(..close.map_or(words.len(), |c| c + 1));
    }
    if let Some(w) = words.iter().position(|w| *w == "where") {
        words.truncate(w);
    }
    let mut depth = 0;
    let for_at = words.iter().position(|w| {
        depth += angles(w);
        depth == 0 && *w == "for"
    });
    let name = |ws: &[&str]| {
        let mut joined = String::new();
        for (k, w) in ws.iter().enumerate() {
            // A space only between two words (`mut BigUint`, `dyn Trait`), as written.
            if k > 0 && spaced(ws[k - 1]) && spaced(w) {
                joined.push(' ');
            }
            joined.push_str(w);
        }
        let base = super::types::base_type_name(&joined);
        base.rsplit("::").next().unwrap_or_default().to_string()
    };
    match for_at {
        Some(f) => (name(&words[..f]), name(&words[f + 1..])),
        None => (String::new(), name(&words)),
    }
}

/// Whether a token is written apart from a neighbour of its kind: a name, keyword or
/// metavariable (`$ty`), or a lifetime.
fn spaced(token: &str) -> bool {
    token.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == '\'')
}

fn text<'s>(node: Node, src: &'s [u8]) -> &'s str {
    node.utf8_text(src).unwrap_or("")
}

/// The children of a group node between its delimiters, and the delimiter.
fn inside(group: Node) -> (u8, Vec<Node>) {
    let mut cursor = group.walk();
    let children: Vec<Node> = group.children(&mut cursor).collect();
    let delimiter = children.first().and_then(|c| c.kind().bytes().next()).unwrap_or(b'(');
    // A comment in a call (`set_tclass_v6(96) // why`) or a rule is no token of it.
    let inner = if children.len() >= 2 { children[1..children.len() - 1].to_vec() } else { Vec::new() };
    (delimiter, inner.into_iter().filter(|c| !c.kind().contains("comment")).collect())
}

/// What a repetition in a rule's body repeats: the tokens of `$( … ) sep op` between its
/// parentheses.
fn repeated(repetition: Node) -> Vec<Node> {
    let mut cursor = repetition.walk();
    let all: Vec<Node> = repetition.children(&mut cursor).collect();
    let close = all.iter().rposition(|c| c.kind() == ")").unwrap_or(all.len());
    all.get(2..close).map(<[Node]>::to_vec).unwrap_or_default()
}

fn group_patterns(group: Node, src: &[u8]) -> Vec<Pattern> {
    inside(group).1.into_iter().filter_map(|n| pattern(n, src)).collect()
}

fn pattern(node: Node, src: &[u8]) -> Option<Pattern> {
    Some(match node.kind() {
        "token_tree_pattern" => {
            let (delimiter, _) = inside(node);
            Pattern::Group(delimiter, group_patterns(node, src))
        }
        "token_binding_pattern" => {
            let name = text(node.child_by_field_name("name")?, src).trim_start_matches('$').to_string();
            let fragment = match text(node.child_by_field_name("type")?, src) {
                "ident" => Fragment::Ident,
                "lifetime" => Fragment::Lifetime,
                "literal" => Fragment::Literal,
                "tt" => Fragment::Tt,
                "block" => Fragment::Block,
                "vis" => Fragment::Vis,
                _ => Fragment::Phrase,
            };
            Pattern::Bind(name, fragment)
        }
        "token_repetition_pattern" => {
            // `$` `(` … `)` [separator] op
            let mut cursor = node.walk();
            let children: Vec<Node> = node.children(&mut cursor).collect();
            let close = children.iter().rposition(|c| c.kind() == ")")?;
            let inner = children.get(2..close)?.iter().filter_map(|n| pattern(*n, src)).collect();
            let after: Vec<&str> = children[close + 1..].iter().map(|c| text(*c, src)).collect();
            let (separator, op) = match after.as_slice() {
                [op] => (None, *op),
                [separator, op] => (Some(separator.to_string()), *op),
                _ => return None,
            };
            Pattern::Repeat(inner, separator, op.bytes().next()?)
        }
        _ => Pattern::Token(text(node, src).to_string()),
    })
}

/// Whether `var` is bound as an `ident` anywhere in the matcher.
fn binds_ident(patterns: &[Pattern], var: &str) -> bool {
    patterns.iter().any(|p| match p {
        Pattern::Bind(name, Fragment::Ident) => name == var,
        Pattern::Group(_, inner) | Pattern::Repeat(inner, _, _) => binds_ident(inner, var),
        _ => false,
    })
}

/// The metavariables a rule's body names an item with (`fn $name`), and the item's kind
/// (a function inside an `impl` or `trait` block of the body is a method).
fn body_definitions(group: Node, src: &[u8], in_impl: bool, out: &mut Vec<(String, SymbolKind, bool)>) {
    let children = match group.kind() {
        "token_tree" => inside(group).1,
        _ => repeated(group),
    };
    let mut impl_seen = false;
    for (i, child) in children.iter().enumerate() {
        match child.kind() {
            "token_tree" | "token_repetition" => {
                let braces = child.kind() == "token_tree" && inside(*child).0 == b'{';
                body_definitions(*child, src, in_impl || (impl_seen && braces), out);
                if braces {
                    impl_seen = false;
                }
            }
            "metavariable" if i > 0 => {
                let kind = match text(children[i - 1], src) {
                    "fn" if in_impl => SymbolKind::Method,
                    "fn" => SymbolKind::Function,
                    "struct" | "union" => SymbolKind::Struct,
                    "enum" => SymbolKind::Enum,
                    "trait" => SymbolKind::Trait,
                    "type" => SymbolKind::Type,
                    "const" | "static" => SymbolKind::Constant,
                    "mod" => SymbolKind::Module,
                    _ => continue,
                };
                let var = text(*child, src).trim_start_matches('$').to_string();
                let test = kind == SymbolKind::Function && marked_as_test(&children[..i - 1], src);
                if !out.iter().any(|(v, _, _)| *v == var) {
                    out.push((var, kind, test));
                }
            }
            _ => {
                let token = text(*child, src);
                if token == "impl" || token == "trait" {
                    impl_seen = true;
                } else if token == ";" {
                    impl_seen = false;
                }
            }
        }
    }
}

/// The metavariables a rule's body calls as methods: `.`, `$method`, then `(…)`.
fn body_calls(group: Node, src: &[u8], out: &mut Vec<String>) {
    let children = match group.kind() {
        "token_tree" => inside(group).1,
        _ => repeated(group),
    };
    for (i, child) in children.iter().enumerate() {
        match child.kind() {
            "token_tree" | "token_repetition" => body_calls(*child, src, out),
            "metavariable" if i > 0 && text(children[i - 1], src) == "." => {
                let arguments = children.get(i + 1).filter(|n| n.kind() == "token_tree" && inside(**n).0 == b'(');
                let var = text(*child, src).trim_start_matches('$');
                if arguments.is_some() && !out.iter().any(|v| v == var) {
                    out.push(var.to_string());
                }
            }
            _ => {}
        }
    }
}

/// Whether the tokens before an item's keyword end in its attributes and qualifiers, one of
/// them a test marker: `#[test]`, `#[tokio::test]`, `#[rstest] pub async`.
fn marked_as_test(before: &[Node], src: &[u8]) -> bool {
    let mut j = before.len();
    while j > 0 {
        let token = text(before[j - 1], src);
        if matches!(token, "pub" | "async" | "unsafe" | "const" | "extern") || token.starts_with('(') {
            j -= 1;
        } else if token.starts_with('[') && j >= 2 && text(before[j - 2], src) == "#" {
            if super::attributes::is_test_attribute(token) {
                return true;
            }
            j -= 2;
        } else {
            return false;
        }
    }
    false
}

/// A call's tokens, groups nested; `None` past the budget.
fn group_input<'s>(group: Node, src: &'s [u8], budget: &mut usize) -> Option<Vec<Input<'s>>> {
    let (_, children) = inside(group);
    let mut out = Vec::with_capacity(children.len());
    for child in children {
        *budget = budget.checked_sub(1)?;
        if child.kind() == "token_tree" {
            let (delimiter, _) = inside(child);
            out.push(Input::Group(delimiter, group_input(child, src, budget)?));
        } else {
            let start = child.start_position();
            out.push(Input::Token(text(child, src), (start.row, start.column)));
        }
    }
    Some(out)
}

type Binds<'p, 's> = Vec<(&'p str, &'s str, (usize, usize))>;

/// Whether `patterns` match all of `input`.
fn match_all<'p, 's>(patterns: &'p [Pattern], input: &[Input<'s>], binds: &mut Binds<'p, 's>) -> bool {
    match_prefix(patterns, input, 0, None, binds) == Some(input.len())
}

fn is_ident(token: &str) -> bool {
    token != "_"
        && token.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && token.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Matches `patterns` at `input[at..]`; the position after them. `stop` is the token that
/// ends a phrase fragment when nothing after it in `patterns` says (a repetition's separator,
/// or what follows the repetition).
fn match_prefix<'p, 's>(
    patterns: &'p [Pattern],
    input: &[Input<'s>],
    mut at: usize,
    stop: Option<&str>,
    binds: &mut Binds<'p, 's>,
) -> Option<usize> {
    for (i, pattern) in patterns.iter().enumerate() {
        match pattern {
            Pattern::Token(token) => match input.get(at) {
                Some(Input::Token(t, _)) if t == token => at += 1,
                _ => return None,
            },
            Pattern::Group(delimiter, inner) => {
                let mut inside = Vec::new();
                match input.get(at) {
                    Some(Input::Group(d, items)) if d == delimiter && match_all(inner, items, &mut inside) => {
                        binds.extend(inside);
                        at += 1;
                    }
                    _ => return None,
                }
            }
            Pattern::Bind(name, fragment) => {
                let next = input.get(at);
                match fragment {
                    Fragment::Ident => match next {
                        // In another macro's body, its metavariable (`$make_input`) stands
                        // for the name it will be.
                        Some(Input::Token(t, position)) if is_ident(t.strip_prefix('$').unwrap_or(t)) => {
                            binds.push((name, t, *position));
                            at += 1;
                        }
                        _ => return None,
                    },
                    Fragment::Lifetime => match next {
                        Some(Input::Token(t, _)) if t.starts_with('\'') => at += 1,
                        _ => return None,
                    },
                    Fragment::Literal => match next {
                        Some(Input::Token("-", _)) => at += 2,
                        Some(Input::Token(t, _))
                            if t.starts_with(|c: char| c.is_ascii_digit() || c == '"' || c == '\'' || c == 'b')
                                && !is_ident(t)
                                || matches!(*t, "true" | "false") =>
                        {
                            at += 1
                        }
                        _ => return None,
                    },
                    Fragment::Tt => {
                        next?;
                        at += 1;
                    }
                    Fragment::Block => match next {
                        Some(Input::Group(b'{', _)) => at += 1,
                        _ => return None,
                    },
                    Fragment::Vis => {
                        if matches!(next, Some(Input::Token("pub", _))) {
                            at += 1;
                            if matches!(input.get(at), Some(Input::Group(b'(', _))) {
                                at += 1;
                            }
                        }
                    }
                    Fragment::Phrase => {
                        // Up to the next token the matcher spells (outside `<…>`), at least one.
                        let until = match patterns.get(i + 1) {
                            Some(Pattern::Token(t)) => Some(t.as_str()),
                            Some(_) => return None,
                            None => stop,
                        };
                        let start = at;
                        let mut angles = 0i32;
                        while let Some(item) = input.get(at) {
                            if let Input::Token(t, _) = item {
                                if angles == 0 && at > start && Some(*t) == until {
                                    break;
                                }
                                match *t {
                                    "<" => angles += 1,
                                    ">" => angles -= 1,
                                    ">>" => angles -= 2,
                                    _ => {}
                                }
                            }
                            at += 1;
                        }
                        if at == start {
                            return None;
                        }
                        // Its first name stands for it where a rule's body names a type with
                        // it (`impl Num for $ty`): `BigUint` of `&BigUint`, `u8`.
                        let first = input[start..at].iter().find_map(|item| match item {
                            Input::Token(t, position) if is_ident(t) && !matches!(*t, "mut" | "dyn" | "const") => {
                                Some((*t, *position))
                            }
                            _ => None,
                        });
                        if let Some((t, position)) = first {
                            binds.push((name, t, position));
                        }
                    }
                }
            }
            Pattern::Repeat(inner, separator, op) => {
                let after = match patterns.get(i + 1) {
                    Some(Pattern::Token(t)) => Some(t.as_str()),
                    _ => stop,
                };
                let inner_stop = separator.as_deref().or(after);
                let mut count = 0;
                loop {
                    if *op == b'?' && count == 1 {
                        break;
                    }
                    let mut attempt = Vec::new();
                    let from = if count > 0 {
                        match (separator, input.get(at)) {
                            (Some(s), Some(Input::Token(t, _))) if t == s => at + 1,
                            (Some(_), _) => break,
                            (None, _) => at,
                        }
                    } else {
                        at
                    };
                    match match_prefix(inner, input, from, inner_stop, &mut attempt) {
                        Some(end) if end > from => {
                            binds.extend(attempt);
                            at = end;
                            count += 1;
                        }
                        _ => break,
                    }
                }
                if *op == b'+' && count == 0 {
                    return None;
                }
            }
        }
    }
    Some(at)
}
