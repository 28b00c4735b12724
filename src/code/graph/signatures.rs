//! Types read out of a definition's text: a signature's return type, a declared or held
//! type, a constructor's type, a variant's field, a class's bases; and the bracket matching
//! those readings share.

use super::names_a_type;
use crate::code::SymbolKind;

/// The class a call's text (`make(Clean,Other)`, as the extractor keeps a Python call's
/// plain arguments) passes at place `at`, when it names one.
pub(super) fn passed_class(qualifier: &str, at: usize) -> Option<&str> {
    let open = call_start(qualifier)?;
    let arguments = qualifier[open + 1..].strip_suffix(')')?;
    let class = arguments.split(',').nth(at)?.trim();
    names_a_type(class).then_some(class)
}

/// A type's text with each `Self` in it written as `own`.
pub(super) fn self_as(text: &str, own: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("Self") {
        let before = rest[..at].chars().next_back();
        let after = rest[at + 4..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        out.push_str(if word(before) || word(after) { "Self" } else { own });
        rest = &rest[at + 4..];
    }
    out.push_str(rest);
    out
}

/// The type of field `index` of a Rust tuple variant, from its signature (`Group(Box<Group>)`:
/// `Group`).
pub(super) fn variant_field_type(signature: &str, index: usize) -> Option<String> {
    let open = signature.find('(')?;
    let fields = signature[open + 1..].strip_suffix(')')?;
    let field = crate::code::extract::top_level_split(fields, ',').into_iter().nth(index)?;
    crate::code::extract::rust_type(field.trim())
}

/// Where the arguments of the call `qualifier` ends with start: `self.f(a, g(b))` → the
/// index of its last top-level `(`.
pub(super) fn call_start(qualifier: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in qualifier.char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '(' | '[' => {
                depth -= 1;
                if depth == 0 {
                    return (i > 0).then_some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The return annotation of a function's signature as written: what follows its parameter
/// list after `->` or `:` (`def f(self) -> Parser`, `fn new() -> Self`, `make(): Parser`); in
/// Go, what follows it at all (`func (b *Base) Lines() *Segments`, `Peek() (Segment, error)`:
/// the first result, the value beside an error).
pub(super) fn return_text<'s>(signature: &'s str, language: &str) -> Option<&'s str> {
    let go = language == "go";
    // A Go method's receiver list comes before its name, and so does a Rust visibility's
    // path (`pub(crate) fn args(&self)`).
    let params_from = match signature.strip_prefix("func ") {
        Some(rest) if go && rest.starts_with('(') => 5 + closing_paren(rest, 0)? + 1,
        _ if signature.starts_with("pub(") => closing_paren(signature, 3)? + 1,
        _ => 0,
    };
    let open = params_from + signature[params_from..].find('(')?;
    let rest = signature[closing_paren(signature, open)? + 1..].trim_start();
    if go {
        let rest = rest.split('{').next()?.trim();
        if !rest.starts_with('(') {
            return Some(rest);
        }
        // `(n int, err error)` names its results: the type follows the name.
        let first = rest[1..closing_paren(rest, 0)?].split(',').next()?.trim();
        return Some(first.rsplit_once(' ').map_or(first, |(_, ty)| ty));
    }
    let rest = rest.strip_prefix("->").or_else(|| rest.strip_prefix(':'))?;
    Some(rest.split(['{', ';']).next()?.split(" where ").next()?.trim())
}

/// The type a function returns (`return_text`), as the type whose members its result has;
/// `Self` (also `&mut Self`) for the implementing type.
pub(crate) fn return_type(signature: &str, language: &str) -> Option<String> {
    let text = return_text(signature, language)?;
    if language == "go" {
        return crate::code::extract::go_type(text);
    }
    let text = if language == "rust" { crate::code::extract::rust_value_text(text) } else { text };
    if crate::code::extract::base_type_name(text) == "Self" {
        return Some("Self".to_string());
    }
    crate::code::extract::annotated_type(text)
}

/// What a Rust function's signature declares of its parameters: whether the first is a
/// `self` receiver (`&self`, `&'a mut self`, `self: Box<Self>`), and how many follow it.
/// `None` where the signature does not show the whole list (a function a macro call defines,
/// a declaration cut short).
pub(crate) fn rust_parameters(signature: &str, name: &str) -> Option<(bool, usize)> {
    let at = signature.find(&format!("fn {name}"))?;
    let mut rest = &signature[at + 3 + name.len()..];
    if rest.starts_with('<') {
        // `fn get<'a, F: Fn(u8) -> u8>(`: past the generics, an arrow's `>` not closing them.
        rest = &rest[closing_angle(rest)? + 1..];
    }
    let rest = rest.trim_start();
    rest.strip_prefix('(')?;
    let close = closing_paren(rest, 0)?;
    // An arrow's `>` (`f: impl Fn(u8) -> u8`) closes no bracket.
    let list = rest[1..close].replace("->", "  ");
    let params: Vec<&str> = crate::code::extract::top_level_split(&list, ',')
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let takes_self = params.first().is_some_and(|first| {
        let first = first.trim_start_matches('&').trim_start();
        let first = match first.strip_prefix('\'') {
            Some(lifetime) => lifetime.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_').trim_start(),
            None => first,
        };
        let first = first.strip_prefix("mut ").map_or(first, str::trim_start);
        first.strip_prefix("self").is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    });
    Some((takes_self, params.len() - usize::from(takes_self)))
}

/// The index in `text` (which starts with `<`) of the `>` closing it, an arrow's `>` aside.
fn closing_angle(text: &str) -> Option<usize> {
    let (mut depth, mut prev) = (0i32, ' ');
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' if prev != '-' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        prev = c;
    }
    None
}

/// Whether a Go field is an embedded one: its declaration is its type alone, named by it.
pub(crate) fn is_embedded_field(field: &crate::code::Symbol) -> bool {
    let declared = field.signature.trim();
    !declared.contains(char::is_whitespace)
        && crate::code::extract::base_type_name(declared).rsplit('.').next() == Some(field.name.as_str())
}

/// The index in `text` of the `)` closing the `(` at `open`.
fn closing_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The type a field's or variable's declaration states after its name and a `:`
/// (`data_!: Map<K, V>`, `items: Vec<Item>`, `self.parser: Parser = …`), through optionals
/// and pointers (`annotated_type`); `None` when it states none this way.
pub(crate) fn declared_type(signature: &str, name: &str) -> Option<String> {
    crate::code::extract::annotated_type(declared_text(signature, name)?)
}

/// The type a declaration states after its name and a `:`, as written (`Vec<Arg>` for
/// `args: Vec<Arg>,`).
pub(super) fn declared_text<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let at = signature.find(name)? + name.len();
    let rest = signature[at..].trim_start_matches(['!', '?']).trim_start().strip_prefix(':')?;
    Some(rest.split('=').next()?.trim().trim_end_matches([',', ';']))
}

/// The type a field's or variable's declaration states (`registry: Registry = …`), else the
/// class its value builds (`registry = Registry()`).
pub(crate) fn held_type(signature: &str, name: &str) -> Option<String> {
    declared_type(signature, name).or_else(|| constructed_type(signature).map(str::to_string))
}

/// The class a field's declaration builds its value from (`self.decoder = Decoder()`, `this.
/// parser = new Parser(opts)`): the value's type, though the code states none.
pub(super) fn constructed_type(signature: &str) -> Option<&str> {
    let (_, value) = signature.split_once('=')?;
    let value = value.trim_start();
    if value.starts_with('=') {
        return None;
    }
    let value = value.strip_prefix("new ").unwrap_or(value);
    let (callee, _) = value.split_once('(')?;
    let last = callee.rsplit('.').next()?;
    let plain = callee.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    (plain && names_a_type(last)).then_some(last)
}

/// The type an alias names (`pub type Deque<T, const N: usize> = DequeInner<T, Owned<T, N>>`
/// → `DequeInner`, TypeScript's `type Schema = ZodObject<…>`): a value of the alias has the
/// target's members (heapless writes each container once, over a storage parameter, and
/// names the owned one by an alias).
pub(super) fn alias_target(s: &crate::code::Symbol) -> Option<String> {
    if s.kind != SymbolKind::Type {
        return None;
    }
    let target = &s.signature[outside_generics(&s.signature, " = ")? + 3..];
    crate::code::extract::annotated_type(target.trim_end_matches(';')).filter(|t| *t != s.name)
}

/// Where `pattern` first occurs outside angle brackets: the ` = ` of `type Vec<T, LenT =
/// usize> = VecInner<…>` that names the target, not a parameter's default.
fn outside_generics(text: &str, pattern: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 && text[i..].starts_with(pattern) => return Some(i),
            _ => {}
        }
    }
    None
}

/// The bases a class's signature names: `class Group(Command, metaclass=M)`, `class A extends
/// B implements C`, `class A : B, C`.
pub(super) fn base_names(signature: &str) -> Vec<String> {
    // A Rust trait's supertraits (`pub trait AsHeaderName: Sealed`): a type parameter bound by
    // the trait has their methods too (`key.find(map)` for `K: AsHeaderName`).
    let declared = signature.find("trait ").filter(|&i| i == 0 || signature[..i].ends_with(' '));
    if let Some((_, bounds)) = declared.and_then(|i| signature[i..].split_once(':')) {
        let bounds = bounds.split(" where ").next().unwrap_or(bounds);
        // Each bound's name as an `impl` block's trait is read (a lifetime reads as none).
        return bounds
            .split('+')
            .map(crate::code::extract::base_type_name)
            .filter(|b| !b.is_empty() && !b.starts_with('?'))
            .map(|b| b.rsplit("::").next().unwrap_or(&b).to_string())
            .collect();
    }
    let list = if let Some(i) = signature.find(" extends ") {
        signature[i + 9..].replace(" implements ", ",")
    } else if let Some(inside) = parenthesized(signature) {
        inside.to_string()
    } else if let Some((_, after)) = signature.split_once(" : ") {
        after.to_string()
    } else {
        return Vec::new();
    };
    list.split(',')
        .filter(|b| !b.contains('='))
        .filter_map(|b| {
            let b = b.split('{').next().unwrap_or(b).trim();
            // Python's built-in bases are lowercase (`class Headers(dict)`), which an
            // annotation's reading takes for no type.
            crate::code::extract::annotated_type(b)
                .or_else(|| crate::code::builtins::is_builtin_base("python", b).then(|| b.to_string()))
        })
        .collect()
}

/// What a declaration writes between its first `(` and last `)`: a Python class's bases
/// (`class Parser(HTMLParser, Mixin)`), as written.
pub(super) fn parenthesized(signature: &str) -> Option<&str> {
    let (_, rest) = signature.split_once('(')?;
    Some(rest.rsplit_once(')').map_or("", |(inside, _)| inside))
}

/// Whether a Python class's name says it is an exception (`ValueError`, `ParseException`,
/// `DeprecationWarning`): its methods are called by name, and `str()` shows its arguments.
pub(super) fn names_an_exception(name: &str) -> bool {
    ["Error", "Exception", "Warning"].iter().any(|end| name.ends_with(end))
}
