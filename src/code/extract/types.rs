//! What source text says about types: the type an annotation or a declaration names, and
//! a member's object as a qualifier the graph can follow (a call chain without arguments).
//! Text in, text out: the graph reads signatures with the same functions.

use crate::ingest::Language;

/// The type an annotation names when a value of it has that type's members: `Command`,
/// `Optional[Command]`, `Command | None`, `"Command"`, `t.Optional[core.Command]`,
/// `&mut Parser<'a>`, `Arc<Mutex<Pool>>` → `Pool`. A collection (`list[Cart]`, `Vec<Cart>`)
/// names itself: its members are not its elements'. `None` when nothing capitalised is named.
pub(crate) fn annotated_type(text: &str) -> Option<String> {
    /// Types whose values stand for their argument's (a pointer, an optional, a lock).
    const TRANSPARENT: &[&str] = &[
        "Optional",
        "Option",
        "Union",
        "Box",
        "Arc",
        "Rc",
        "Weak",
        "RefCell",
        "Mutex",
        "RwLock",
        "Pin",
        "Cow",
        "Ref",
        "RefMut",
        "MutexGuard",
        "RwLockReadGuard",
        "RwLockWriteGuard",
        "ManuallyDrop",
        "Lazy",
        "LazyLock",
        "LazyCell",
        "Final",
        "ClassVar",
        "Annotated",
        "Readonly",
        "Type",
        "NotRequired",
        "Required",
    ];
    let mut text = text.trim().trim_start_matches(':').trim();
    for _ in 0..6 {
        text = text.trim().trim_matches(['"', '\'']).trim();
        // `A | None`: the one alternative that is not `None`.
        let alternatives: Vec<&str> =
            top_level_split(text, '|').into_iter().map(str::trim).filter(|a| *a != "None" && *a != "null").collect();
        if alternatives.len() != 1 {
            return None;
        }
        text = alternatives[0];
        let head = base_type_name(text);
        let open = text.find(['[', '<']);
        let name = head.rsplit(['.', ':']).next().unwrap_or(&head);
        // A wrapper stands for its argument; without one it is a name of the repo's own
        // (python-box's `class ConfigBox(Box)`).
        if let Some(open) = open.filter(|_| TRANSPARENT.contains(&name)) {
            let inner = &text[open + 1..];
            let inner = inner.strip_suffix([']', '>']).unwrap_or(inner);
            // `Cow<'_, Template>`: a lifetime is no argument of the value's.
            text = top_level_split(inner, ',').into_iter().find(|a| !a.trim_start().starts_with('\''))?;
            continue;
        }
        // `_OptionParser` is a class too.
        let capitalised = name.trim_start_matches('_').chars().next().is_some_and(char::is_uppercase)
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        return (capitalised && name != "Self").then(|| name.to_string());
    }
    None
}

/// The type a declaration in `language` states (`annotated_type`; in Go `go_type`; in Rust
/// `rust_type`).
pub(crate) fn stated_type(text: &str, language: Language) -> Option<String> {
    match language {
        Language::Go => go_type(text),
        Language::Rust => rust_type(text),
        _ => annotated_type(text),
    }
}

/// `annotated_type` as Rust code uses a value: a `Result<Template, Error>` stands for the
/// `Template` a `?` or an `unwrap()` takes out of it (a TypeScript `Result` may be a class of
/// the repo's own, with its own members).
pub(crate) fn rust_type(text: &str) -> Option<String> {
    annotated_type(rust_value_text(text))
}

/// The type a Rust `Result` holds as written (`Self` in `Result<Self, Error>`), or `text`.
pub(crate) fn rust_value_text(text: &str) -> &str {
    let head = base_type_name(text);
    match text.find('<') {
        Some(open) if head.rsplit(':').next() == Some("Result") => bracketed(&text[open + 1..], true).trim(),
        _ => text,
    }
}

/// The type of the elements a value of type `text` yields when walked or passed to a
/// callback: `impl Iterator<Item = &Arg>`, `Vec<Arg>`, `&[Arg]`, `Option<Arg>`,
/// `list[Cart]`, `Iterator[Cart]`, `Cart[]`, `Array<Cart>`, Go's `[]Segment`. `None` for a
/// map (it yields pairs), a tuple, and what names no single element type.
pub(crate) fn element_type(text: &str, go: bool) -> Option<String> {
    const MAPS: &[&str] =
        &["HashMap", "BTreeMap", "IndexMap", "dict", "Dict", "Mapping", "MutableMapping", "Map", "Record"];
    let mut text = text.trim();
    while let Some(rest) = ["&", "mut ", "impl ", "dyn "].iter().find_map(|p| text.strip_prefix(p)) {
        text = rest.trim_start();
    }
    if go {
        return go_type(text.strip_prefix("[]")?);
    }
    // An `Option` of a collection, walked, is the collection taken out of it first (`if let
    // Some(lits) = self.literals() { lits.iter() … }` over an `Option<&[Literal]>`): an
    // `Option` stands for its value, as `annotated_type` reads it.
    if let Some(open) = text.find('<').filter(|&open| base_type_name(&text[..open]).ends_with("Option")) {
        let inner = bracketed(&text[open + 1..], false).trim();
        let bare = inner.trim_start_matches(['&', ' ']).trim_start_matches("mut ");
        let collection = bare.starts_with('[')
            || bare.find('<').is_some_and(|o| COLLECTIONS.contains(&base_type_name(&bare[..o]).as_str()));
        if collection {
            return element_type(inner, go);
        }
    }
    let item = text.find("Item =").or_else(|| text.find("Item="));
    let element = if let Some(at) = item {
        // `impl Iterator<Item = &Arg> + '_`, `Box<dyn Iterator<Item = X>>`.
        let rest = text[at + 4..].trim_start().strip_prefix('=')?;
        bracketed(rest, true)
    } else if let Some(inner) = text.strip_prefix('[') {
        // `[Arg]`, `[Arg; 4]`.
        inner.split([';', ']']).next()?
    } else if let Some(of) = text.strip_suffix("[]") {
        of
    } else {
        let open = text.find(['<', '['])?;
        let head = base_type_name(&text[..open]);
        if MAPS.contains(&head.rsplit(['.', ':']).next().unwrap_or(&head)) {
            return None;
        }
        let arguments: Vec<&str> = top_level_split(bracketed(&text[open + 1..], false), ',')
            .into_iter()
            .map(str::trim)
            .filter(|a| !a.starts_with('\'') && !a.is_empty())
            .collect();
        if arguments.len() != 1 {
            return None;
        }
        arguments[0]
    };
    if element.trim_start().starts_with('(') {
        return None;
    }
    annotated_type(element)
}

/// Std collections whose elements `ELEMENT_ACCESSORS` hand out (a map's values).
const COLLECTIONS: &[&str] = &[
    "Vec",
    "VecDeque",
    "LinkedList",
    "BinaryHeap",
    "SmallVec",
    "ArrayVec",
    "BTreeSet",
    "HashSet",
    "IndexSet",
    "HashMap",
    "BTreeMap",
    "IndexMap",
];

/// A collection's methods that hand out one of its elements (a map's value), by position,
/// key or end: `deque.front()`, `v.get(i)`, `helpers.get(name)`, `stack.pop()`.
const ELEMENT_ACCESSORS: &[&str] = &[
    "get",
    "get_mut",
    "first",
    "last",
    "first_mut",
    "last_mut",
    "front",
    "back",
    "front_mut",
    "back_mut",
    "pop",
    "pop_front",
    "pop_back",
    "remove",
    "swap_remove",
    "peek",
    "peek_mut",
];

pub(crate) fn is_element_accessor(method: &str) -> bool {
    ELEMENT_ACCESSORS.contains(&method)
}

/// The type of the element an `ELEMENT_ACCESSORS` method hands out of a Rust value of type
/// `text`, when `text` is a std collection, a slice or an array: `&VecDeque<BlockContext<'rc>>`
/// → `BlockContext`, `HashMap<String, Arc<dyn HelperDef>>` → `HelperDef` (a map's value).
pub(crate) fn accessed_type(text: &str) -> Option<String> {
    let head = base_type_name(text);
    let head = head.rsplit(':').next().unwrap_or(&head);
    let trimmed = text.trim().trim_start_matches(['&', '*']).trim_start_matches("mut ").trim_start();
    if trimmed.starts_with('[') {
        return element_type(trimmed, false);
    }
    if !COLLECTIONS.contains(&head) {
        return None;
    }
    if !head.ends_with("Map") {
        return element_type(text, false);
    }
    let open = text.find('<')?;
    let arguments = top_level_split(bracketed(&text[open + 1..], false), ',');
    annotated_type(arguments.last()?)
}

/// A Rust call chain (`chain_text`'s) without the calls that hand on the value they are called
/// on, unwrapped or as it is: `get_template()?.render()`, `parse().unwrap().name()`,
/// `blocks.get().or_else().cloned()` are `get_template().render()`, `parse().name()`,
/// `blocks.get()` (an `Option` or a `Result` stands for its value).
pub(super) fn without_unwraps(chain: &str) -> String {
    const HANDED_ON: &[&str] = &[
        ".unwrap()",
        ".expect()",
        ".unwrap_or_default()",
        ".unwrap_or()",
        ".unwrap_or_else()",
        ".unwrap_unchecked()",
        ".or()",
        ".or_else()",
        ".ok()",
        ".cloned()",
        ".copied()",
        ".clone()",
        ".to_owned()",
        ".as_ref()",
        ".as_mut()",
        ".as_deref()",
        ".as_deref_mut()",
        ".borrow()",
        ".borrow_mut()",
    ];
    // Arguments are emptied already, so each call matches whole (`.or()` is no part of
    // `.or_insert()`).
    let mut out = chain.replace("?.", ".");
    for call in HANDED_ON {
        while let Some(at) = out.find(call) {
            out.replace_range(at..at + call.len(), "");
        }
    }
    out.trim_end_matches('?').to_string()
}

/// The start of `text` (just inside an opening bracket) up to the bracket that closes it, or
/// with `first` only its first argument (up to a `,` at its level).
fn bracketed(text: &str, first: bool) -> &str {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' if depth == 0 => return &text[..i],
            '>' | ']' | ')' => depth -= 1,
            ',' if depth == 0 && first => return &text[..i],
            _ => {}
        }
    }
    text
}

/// A Go type's name as its values' members are found: `*ast.List` → `List`, and unexported
/// types too (`*parser` → `parser`: Go's case is visibility, not kind). `None` for the
/// predeclared types and for composite ones (`[]T`, `map[K]V`, `func(…)`, `chan T`), whose
/// members are not their elements'.
pub(crate) fn go_type(text: &str) -> Option<String> {
    const PREDECLARED: &[&str] = &[
        "bool",
        "byte",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "any",
        "comparable",
        "map",
        "chan",
        "func",
        "interface",
        "struct",
    ];
    let head = base_type_name(text);
    let name = head.rsplit('.').next()?;
    let ident = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    (ident && !PREDECLARED.contains(&name)).then(|| name.to_string())
}

/// The field named in `self.items` / `this.items` (one plain name after the receiver).
pub(crate) fn own_field_path(text: &str) -> Option<&str> {
    let field = text.strip_prefix("self.").or_else(|| text.strip_prefix("this."))?;
    is_word(field).then_some(field)
}

/// One name, no path or call: letters, digits and `_`.
pub(super) fn is_word(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// A call chain without the adapters that pass its elements on unchanged:
/// `cmd.get_arguments().filter().rev()` walks what `cmd.get_arguments()` yields.
pub(super) fn without_adapters(chain: &str) -> &str {
    const SAME_ELEMENTS: &[&str] = &[
        "iter",
        "into_iter",
        "iter_mut",
        "filter",
        "rev",
        "skip",
        "take",
        "cloned",
        "copied",
        "peekable",
        "by_ref",
        "step_by",
        "inspect",
        "fuse",
        "chain",
        "skip_while",
        "take_while",
        "as_ref",
        "as_deref",
    ];
    let mut chain = chain;
    while let Some(rest) = chain.strip_suffix("()") {
        match rest.rsplit_once('.') {
            Some((before, method)) if SAME_ELEMENTS.contains(&method) => chain = before,
            _ => break,
        }
    }
    chain
}

/// The text of a member's object as a qualifier: a call chain without its arguments
/// (`Arg::new("x")\n    .short('f')` → `Arg::new().short()`, which the graph follows from
/// return type to return type), at most 80 characters.
pub(super) fn qualifier_text(text: &str) -> String {
    // `a.b(x)` and `Tree::<[f64; 2]>` alike: without arguments of either kind.
    let text = if text.contains('(') || text.contains("::<") {
        chain_text(text).unwrap_or_else(|| text.to_string())
    } else {
        text.to_string()
    };
    text.chars().take(80).collect()
}

/// A call chain with every argument list emptied, generic arguments and whitespace dropped:
/// `a.b(x, "y").c::<T>(z)` → `a.b().c()`. `None` when brackets or quotes do not balance.
pub(super) fn chain_text(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len().min(128));
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' => {
                skip_group(&mut chars, '(', ')')?;
                out.push_str("()");
            }
            ':' if out.ends_with(':') && chars.peek() == Some(&'<') => {
                out.pop();
                chars.next();
                skip_group(&mut chars, '<', '>')?;
            }
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    Some(out)
}

/// Consumes `chars` up to the `close` matching an `open` already read; `None` if none does.
/// Quoted strings inside are skipped whole (a `)` in one closes nothing).
fn skip_group(chars: &mut std::iter::Peekable<std::str::Chars>, open: char, close: char) -> Option<()> {
    let mut depth = 1;
    while let Some(c) = chars.next() {
        match c {
            '"' => loop {
                match chars.next()? {
                    '\\' => {
                        chars.next();
                    }
                    '"' => break,
                    _ => {}
                }
            },
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return Some(());
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` split at `sep` outside brackets.
pub(crate) fn top_level_split(text: &str, sep: char) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '[' | '<' | '(' | '{' => depth += 1,
            ']' | '>' | ')' | '}' => depth -= 1,
            _ if c == sep && depth == 0 => {
                out.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// `Vec<T>` → `Vec`, `*Cart` → `Cart`, `&'a mut Foo<'a>` → `Foo`, `a::b::C` stays.
pub(crate) fn base_type_name(text: &str) -> String {
    let mut text = text.trim();
    loop {
        text = text.trim_start_matches(['&', '*', '(']).trim_start();
        if let Some(rest) = ["mut ", "const ", "dyn ", "impl "].iter().find_map(|p| text.strip_prefix(p)) {
            text = rest;
        } else if text.starts_with('\'') {
            // A lifetime: `&'a mut Foo`.
            match text.find(char::is_whitespace) {
                Some(i) => text = &text[i..],
                None => return String::new(),
            }
        } else {
            break;
        }
    }
    let cut = text.find(['<', '[', '(', ' ', '{']).unwrap_or(text.len());
    text[..cut].trim_end_matches(['*', '&']).to_string()
}
