//! `macro_rules!` macros: the items a call defines, the methods a body calls.

use super::super::{SymbolKind, UseKind};
use crate::ingest::Language;

/// A test written through a `macro_rules!` macro defines the names its calls pass in, as a
/// language server's expansion would list them: at the call's token, each once, with the
/// kind the rule's body gives (a function in an `impl` of the body, or called inside one, is
/// a method); a call no rule matches, or a name the body does not define, defines nothing.
#[test]
fn a_macro_call_defines_the_items_named_in_it() {
    let text = r#"macro_rules! t {
    ($t:ident : $s1:expr => $s2:expr) => {
        #[test]
        fn $t() {
            assert_eq!(convert($s1), $s2)
        }
    };
}

t!(keeps_empty: "" => "");
t!(splits_words: "a b".to_string() => vec!["a", "b"]);
t!("not an ident" => "");

macro_rules! readers {
    ($( fn $name:ident(&mut self) -> $ty:ty; )*) => {
        $( fn $name(&mut self) -> $ty { todo!() } )*
    };
}

macro_rules! uses_only {
    ($x:ident) => { let _ = $x; };
}

struct Reader;
impl Reader {
    readers! {
        fn read_u8(&mut self) -> Result<u8, Error>;
        fn read_i16(&mut self) -> Result<i16, Error>;
    }
}

uses_only!(nothing_defined);

fn helper() {
    const LIMIT: usize = 4;
    let _ = LIMIT;
}

macro_rules! number {
    ($name:ident, $value:expr) => { fn $name() { assert!($value > 0) } };
}
number!(reads_u8, 42u8);

macro_rules! suite {
    () => {
        #[test]
        fn round_trips() {
            assert!(helper_ok())
        }
    };
}

mod on_vec {
    suite!();
}
"#;
    let code = crate::code::extract::extract(Language::Rust, text).unwrap();
    let found = |name: &str| code.symbols.iter().filter(|s| s.name == name).collect::<Vec<_>>();
    for (name, line, kind) in [
        ("keeps_empty", 10, SymbolKind::Function),
        ("splits_words", 11, SymbolKind::Function),
        ("read_u8", 27, SymbolKind::Method),
        ("read_i16", 28, SymbolKind::Method),
        ("LIMIT", 35, SymbolKind::Constant),
        ("reads_u8", 42, SymbolKind::Function),
    ] {
        let symbols = found(name);
        assert_eq!(symbols.len(), 1, "{name}: {symbols:?}");
        assert_eq!((symbols[0].line, symbols[0].kind), (line, kind), "{name}");
    }
    assert_eq!(found("read_u8")[0].container, "Reader");
    assert_eq!(found("keeps_empty")[0].column, 4);
    // `#[test] fn $t()` in the rule: the functions the calls define are tests; `number!`'s are not.
    assert!(found("keeps_empty")[0].test_marked && found("splits_words")[0].test_marked);
    assert!(!found("reads_u8")[0].test_marked);
    // A function the body spells out is defined where its lines are (in the macro, not a
    // test itself) and at each call, a test where the body marks it so.
    let round_trips = found("round_trips");
    let place = |s: &&crate::code::Symbol| (s.line, s.end_line, s.container.clone(), s.test_marked);
    assert_eq!(
        round_trips.iter().map(place).collect::<Vec<_>>(),
        vec![(47, 49, "suite".to_string(), false), (54, 54, "on_vec".to_string(), true)]
    );
    assert!(found("nothing_defined").is_empty());
    // The name at the call is a definition, not a use of itself.
    // (Also when the call's arguments read as an expression: `(reads_u8, 42u8)`.)
    assert!(!code.occurrences.iter().any(|o| ["keeps_empty", "reads_u8"].contains(&code.name_of(o))));
    // The local constant's use in its function resolves to it (same file), not to nothing.
    assert!(code.occurrences.iter().any(|o| code.name_of(o) == "LIMIT" && o.line == 36));
}

/// A `macro_rules!` body that calls a method (`buf.remaining()`), or calls one a call passes
/// in (`buf.$method()`), calls it wherever it is expanded: the literal name is a call in the
/// body, the passed name a call where the call spells it, also a call inside another macro's
/// body (where `$make_input` stands for a name). A name the body only reads is no call.
#[test]
fn a_macro_body_calls_the_methods_it_names_and_is_passed() {
    let text = r#"macro_rules! buf_tests {
    ($make_input:ident) => {
        #[test]
        fn empty() {
            let buf = $make_input(&[]);
            assert_eq!(buf.remaining(), 0);
        }
        buf_tests!(number $make_input, get_u8_ok, u8, get_u8);
    };
    (number $make_input:ident, $ok_name:ident, $number:ty, $method:ident) => {
        #[test]
        fn $ok_name() {
            let mut buf = $make_input(INPUT);
            let _ = buf.$method();
        }
    };
}

macro_rules! reads {
    ($x:ident) => { let _ = $x; };
}

mod on_slice {
    buf_tests!(make_slice);
}
buf_tests!(number make_vec, get_i16_ok, i16, get_i16);
reads!(not_called);
"#;
    let code = crate::code::extract::extract(Language::Rust, text).unwrap();
    let calls = |name: &str| {
        code.occurrences
            .iter()
            .filter(|o| code.name_of(o) == name && o.kind == UseKind::Call)
            .map(|o| (o.line, o.column))
            .collect::<Vec<_>>()
    };
    assert_eq!(calls("remaining"), [(6, 28)], "{:?}", code.occurrences);
    assert_eq!(calls("get_u8"), [(8, 55)], "{:?}", code.occurrences);
    assert_eq!(calls("get_i16"), [(26, 46)], "{:?}", code.occurrences);
    assert_eq!(calls("not_called"), [], "{:?}", code.occurrences);
    // In the body, a use of the macro: what reaches it reaches the macro's calls.
    let in_body = code.occurrences.iter().find(|o| code.name_of(o) == "get_u8").and_then(|o| o.enclosing);
    assert_eq!(in_body.map(|i| code.symbols[i as usize].name.as_str()), Some("buf_tests"));
}

/// An integration test's call of a macro its package's library exports (`#[macro_use] extern
/// crate pest;` … `parses_to! { … }`) means that macro, not a same-named function of a test
/// module (a name-only guess between the two before).
#[test]
fn an_integration_tests_macro_call_means_the_librarys_exported_macro() {
    use std::collections::HashMap;
    let rust = |text: &str| crate::code::extract(Language::Rust, text).unwrap();
    let configs =
        HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"pest\"\nversion = \"0.1.0\"\n".to_string())]);
    let graph = crate::code::CodeGraph::build(
        HashMap::from([
            ("src/lib.rs".to_string(), rust("#[macro_use]\nmod macros;\n\npub fn parse(s: &str) -> usize {\n    s.len()\n}\n")),
            (
                "src/macros.rs".to_string(),
                rust("#[macro_export]\nmacro_rules! parses_to {\n    ($s:expr) => {\n        assert!($crate::parse($s) > 0)\n    };\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn parses_to() {\n        parses_to!(\"a\");\n    }\n}\n"),
            ),
            ("tests/calc.rs".to_string(), rust("#[macro_use]\nextern crate pest;\n\n#[test]\nfn number() {\n    parses_to!(\"12\");\n}\n")),
        ]),
        &configs,
    );
    let target = graph.lookup("parses_to").into_iter().find(|&r| graph.symbol(r).kind == SymbolKind::Macro).unwrap();
    let users: Vec<String> =
        graph.references(target, 0.5).into_iter().map(|r| format!("{}:{}", r.path, r.line)).collect();
    assert!(users.contains(&"tests/calc.rs:6".to_string()), "{users:?}");
}

/// A comment inside a macro call (tokio's `test!(IPv6 tclass_v6, set_tclass_v6(96) // Miri…)`)
/// is no token of it: the call still defines its test, so an edit that adds one is no deletion.
#[test]
fn a_comment_inside_a_macro_call_is_no_token() {
    let text = "macro_rules! test {\n    ($name:ident, $set:ident ( $arg:expr )) => {\n        #[test]\n        fn $name() {\n            // the rule's own comment\n            $set($arg);\n        }\n    };\n}\n\ntest!(\n    tclass_v6,\n    set_tclass_v6(96) // why\n);\n";
    let code = crate::code::extract::extract(Language::Rust, text).unwrap();
    assert!(code.symbols.iter().any(|s| s.name == "tclass_v6" && s.kind == SymbolKind::Function), "{:?}", code.symbols);
}
