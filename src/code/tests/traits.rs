//! Rust's dispatch through traits in the graph and the impact walk: which `impl` a call runs
//! is known from the types the code states (a type parameter's bound, the receiver's type),
//! and a trait's method that the language calls (`Display::fmt`, `PartialEq::eq`) runs where
//! its type is used.

use std::collections::HashMap;

use super::resolution::{daemon_walk_limits, keyed_test_files};
use crate::code::dependents::{macro_seeds, type_seeds, walk, Seed};
use crate::code::graph::SymbolRef;
use crate::code::{extract, CodeGraph};
use crate::ingest::Language;

/// A crate named `semver` of these files.
pub(super) fn rust_graph(files: &[(&str, &str)]) -> CodeGraph {
    let files = files.iter().map(|(path, text)| (path.to_string(), extract(Language::Rust, text).unwrap())).collect();
    let configs = HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"semver\"\n".to_string())]);
    CodeGraph::build(files, &configs)
}

/// The test files a walk from the definition named `name` (its `container`'s) reaches,
/// with the seeds a diff would add.
fn tests_reached(graph: &CodeGraph, container: &str, name: &str) -> Vec<String> {
    let target = graph
        .lookup(name)
        .into_iter()
        .find(|&r| graph.symbol(r).container == container)
        .unwrap_or_else(|| panic!("{container}::{name}"));
    tests_from(graph, target)
}

/// The tests a walk from `target` reaches, with the seeds a diff adds (what a macro's calls
/// define, the types the language runs a method on), as `path::name`.
fn tests_from(graph: &CodeGraph, target: SymbolRef) -> Vec<String> {
    let name = graph.symbol(target).name.clone();
    let mut seeds = vec![Seed {
        symbol_opt: Some(target),
        name: name.clone(),
        label: name,
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let more = macro_seeds(graph, &seeds);
    seeds.extend(more);
    let more = type_seeds(graph, &seeds);
    seeds.extend(more);
    let mut found: Vec<String> = walk(graph, &seeds, daemon_walk_limits())
        .tests
        .iter()
        .map(|t| format!("{}::{}", graph.path(t.file), graph.code(t.file).symbols[t.symbol_opt.unwrap() as usize].name))
        .collect();
    found.sort();
    found.dedup();
    found
}

const VISITOR: &str = "pub trait Visitor {\n    fn visit_post(&mut self, node: &Node);\n}\n\npub struct Node;\n\npub fn visit<V: Visitor>(node: &Node, mut visitor: V) {\n    visitor.visit_post(node);\n}\n";

const TRANSLATE: &str = "use crate::visitor::{visit, Node, Visitor};\n\npub struct Translator;\n\nstruct TranslatorI {\n    depth: u32,\n}\n\nimpl Visitor for TranslatorI {\n    fn visit_post(&mut self, node: &Node) {\n        self.push(node);\n    }\n}\n\nimpl TranslatorI {\n    fn push(&mut self, _node: &Node) {\n        self.depth += 1;\n    }\n}\n\nimpl Translator {\n    pub fn translate(&self, node: &Node) {\n        visit(node, TranslatorI { depth: 0 });\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    fn t(node: &Node) {\n        Translator.translate(node)\n    }\n\n    #[test]\n    fn translates() {\n        t(&Node);\n    }\n}\n";

const PRINT: &str = "use crate::visitor::{visit, Node, Visitor};\n\nstruct Writer;\n\nimpl Visitor for Writer {\n    fn visit_post(&mut self, _node: &Node) {}\n}\n\npub fn print(node: &Node) {\n    visit(node, Writer);\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn prints() {\n        super::print(&super::Node);\n    }\n}\n";

/// A method of `impl Visitor for TranslatorI` runs where a `V: Visitor`'s `visit_post` is
/// called, and that call runs it only on the paths that build a `TranslatorI`: the
/// translator's tests, not the printer's, whose `visit` runs another visitor. A helper in a
/// test module (`fn t`) is its file's test; the extractor notes the trait and the marker.
#[test]
fn a_trait_implementation_is_reached_where_its_trait_is_called_on_a_value_the_path_builds() {
    let graph = rust_graph(&[
        ("src/lib.rs", "mod print;\nmod translate;\nmod visitor;\n"),
        ("src/visitor.rs", VISITOR),
        ("src/translate.rs", TRANSLATE),
        ("src/print.rs", PRINT),
    ]);
    let visit_post =
        graph.lookup("visit_post").into_iter().find(|&r| graph.symbol(r).container == "TranslatorI").unwrap();
    assert_eq!(graph.symbol(visit_post).implements, "Visitor");
    let declared = graph.trait_method(visit_post).expect("the trait's own declaration");
    assert_eq!(graph.symbol(declared).qualified_name, "Visitor::visit_post");
    // `visitor: V` with `V: Visitor`: the call is the trait's method.
    let callers: Vec<String> = graph.references(declared, 0.5).into_iter().map(|r| r.path).collect();
    assert_eq!(callers, vec!["src/visitor.rs"]);
    let translates = graph.lookup("translates")[0];
    assert!(graph.symbol(translates).test_marked);
    assert!(!graph.symbol(graph.lookup("t")[0]).test_marked);
    // (A test module's helper ends the path: its file is the test file.)
    assert_eq!(tests_reached(&graph, "TranslatorI", "push"), vec!["src/translate.rs::t"]);
    assert_eq!(tests_reached(&graph, "Writer", "visit_post"), vec!["src/print.rs::prints"]);
}

/// `Version::parse` after the type is imported is the type's member, even where the type's
/// file also declares `mod parse`; a helper in a file without tests (an integration test's
/// `mod util;`) leads on to the tests that call it, and a `Display` implementation (a trait
/// the repo does not declare) runs wherever a value of its type is formatted (`.to_string()`).
#[test]
fn a_types_member_a_test_helper_and_a_language_trait_lead_to_the_tests() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "mod parse;\n\npub struct Version {\n    pub major: u64,\n}\n\nimpl Version {\n    pub fn parse(text: &str) -> Version {\n        Version { major: text.len() as u64 }\n    }\n}\n\nimpl std::fmt::Display for Version {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n        write!(f, \"{}\", self.major)\n    }\n}\n",
        ),
        ("src/parse.rs", "pub fn digits(text: &str) -> usize {\n    text.len()\n}\n"),
        (
            "tests/util/mod.rs",
            "use semver::Version;\n\npub fn version(text: &str) -> Version {\n    Version::parse(text)\n}\n",
        ),
        (
            "tests/test_version.rs",
            "mod util;\nuse crate::util::*;\n\n#[test]\nfn parses() {\n    assert_eq!(version(\"1\").to_string(), \"1\");\n}\n",
        ),
        ("tests/test_other.rs", "#[test]\nfn unrelated() {\n    assert_eq!(1, 1);\n}\n"),
    ]);
    let parse = graph.lookup("parse").into_iter().find(|&r| graph.symbol(r).container == "Version").unwrap();
    let callers: Vec<String> = graph.references(parse, 0.5).into_iter().map(|r| r.path).collect();
    assert_eq!(callers, vec!["tests/util/mod.rs"]);
    assert_eq!(tests_reached(&graph, "Version", "parse"), vec!["tests/test_version.rs::parses"]);
    let fmt = graph.lookup("fmt").into_iter().find(|&r| graph.symbol(r).container == "Version").unwrap();
    assert_eq!(graph.symbol(fmt).implements, "Display");
    assert!(graph.trait_method(fmt).is_none());
    assert_eq!(tests_reached(&graph, "Version", "fmt"), vec!["tests/test_version.rs::parses"]);
}

const FORWARD: &str = "pub trait Buf {\n    fn remaining(&self) -> usize;\n    fn get_u8(&mut self) -> u8;\n}\n\nmacro_rules! forward_buf {\n    () => {\n        fn remaining(&self) -> usize {\n            (**self).remaining()\n        }\n\n        fn get_u8(&mut self) -> u8 {\n            (**self).get_u8()\n        }\n    };\n}\n\nimpl<T: Buf + ?Sized> Buf for Box<T> {\n    forward_buf!();\n}\n\npub fn first<B: Buf>(mut buf: B) -> u8 {\n    buf.get_u8()\n}\n\npub fn left<B: Buf>(buf: B) -> usize {\n    buf.remaining()\n}\n\npub fn guess() -> u8 {\n    let mut buf = &b\"x\"[..];\n    buf.get_u8()\n}\n";

/// A function written out in a `macro_rules!` body (`fn get_u8` in a macro that forwards a
/// trait's methods) is a definition where its lines are, and each call of the macro inside an
/// `impl Buf for …` defines it for that type: a change to its lines reaches the callers of
/// what the calls define (through the trait), not the callers of the macro's other functions.
#[test]
fn a_function_a_macro_body_spells_out_is_changed_where_its_lines_are_and_runs_where_the_calls_define_it() {
    let graph = rust_graph(&[
        ("src/lib.rs", "pub mod buf;\n"),
        ("src/buf.rs", FORWARD),
        ("tests/get.rs", "use semver::buf::first;\n\n#[test]\nfn reads_first() {\n    first(Box::new(0));\n}\n"),
        ("tests/left.rs", "use semver::buf::left;\n\n#[test]\nfn counts_left() {\n    left(Box::new(0));\n}\n"),
    ]);
    // The line `(**self).get_u8()` is inside the template's `get_u8`.
    let file = crate::change::git::FileDiff {
        path: "src/buf.rs".into(),
        old_path: "src/buf.rs".into(),
        change: crate::change::git::FileChange::Modified,
        hunks: vec![crate::change::git::Hunk { old_start: 13, old_count: 1, new_start: 13, new_count: 1 }],
        removed: Vec::new(),
        old_oid: String::new(),
        binary: false,
    };
    let edited = FORWARD.replace("(**self).get_u8()", "(**self).get_u8() // read");
    let changed = crate::change::changed_symbols(Language::Rust, &file, FORWARD, &edited);
    let names: Vec<&str> = changed.iter().map(|c| c.symbol.qualified_name.as_str()).collect();
    assert_eq!(names, vec!["forward_buf::get_u8"]);
    let template = graph.defined_in("src/buf.rs", "forward_buf::get_u8", crate::code::SymbolKind::Function)[0];
    // Not a definition any call names: `buf.get_u8()` is the trait's.
    assert!(graph.lookup("get_u8").iter().all(|&r| r != template));
    let instances = graph.macro_instances(template);
    assert_eq!(instances.len(), 1);
    assert_eq!(graph.symbol(instances[0]).implements, "Buf");
    // A call on a value of unknown type is a guess by name, which the trait's method
    // answers for its implementations rather than splitting it with them.
    let declared = graph.trait_method(instances[0]).unwrap();
    let guessed: Vec<(u32, String)> = graph
        .references(declared, 0.0)
        .into_iter()
        .filter(|r| r.resolution == "name_only")
        .map(|r| (r.line, r.path))
        .collect();
    // Line 13 is the template's own `(**self).get_u8()`: the forwarder calls the inner
    // value's, a value of a type the template cannot know.
    assert_eq!(guessed, vec![(13, "src/buf.rs".to_string()), (32, "src/buf.rs".to_string())]);
    assert!(graph.references(instances[0], 0.0).is_empty());
    let tests = tests_from(&graph, template);
    assert_eq!(tests, vec!["tests/get.rs::reads_first"]);
}

const IMPLS: &str = "pub trait Num {\n    fn checked_add_ext(&mut self, x: u8) -> bool;\n}\n\nmacro_rules! impl_num {\n    ($ty:ty) => {\n        impl Num for $ty {\n            fn checked_add_ext(&mut self, x: u8) -> bool {\n                self.checked_add(x as $ty).is_none()\n            }\n        }\n    };\n}\n\nimpl_num! { u8 u16 }\n\npub fn parse<T: Num>(mut n: T) -> bool {\n    n.checked_add_ext(1)\n}\n\npub struct Big;\n\nmacro_rules! shifts {\n    ($($rhs:ty),+) => {$(\n        impl Shr<$rhs> for &Big {\n            type Output = Big;\n\n            fn shr(self, rhs: $rhs) -> Big {\n                Big\n            }\n        }\n    )*};\n}\n\nshifts! { u8, u16 }\n\npub fn other() -> u8 {\n    0\n}\n";

/// A function a `macro_rules!` body writes in an `impl` block of its own (`impl Num for $ty {
/// fn checked_add_ext … }`, ron's and num-bigint's way of implementing a trait for many types)
/// is a method of that trait for the type each call passes in, wherever the call is: a change
/// to its lines reaches the callers of the trait's method, or, for a trait the language calls
/// (`Shr` for `>>`), wherever the type is used.
#[test]
fn a_method_a_macro_body_implements_a_trait_with_runs_through_the_trait() {
    let graph = rust_graph(&[
        ("src/lib.rs", "pub mod num;\n"),
        ("src/num.rs", IMPLS),
        ("tests/parse.rs", "use semver::num::parse;\n\n#[test]\nfn parses() {\n    parse(0u8);\n}\n"),
        ("tests/shift.rs", "use semver::num::Big;\n\n#[test]\nfn shifts() {\n    let _ = &Big >> 1u8;\n}\n"),
        ("tests/other.rs", "use semver::num::other;\n\n#[test]\nfn others() {\n    other();\n}\n"),
    ]);
    let add = graph.defined_in("src/num.rs", "impl_num::checked_add_ext", crate::code::SymbolKind::Function)[0];
    let instances = graph.macro_instances(add);
    assert_eq!(instances.len(), 1);
    let instance = graph.symbol(instances[0]);
    assert_eq!((instance.container.as_str(), instance.implements.as_str()), ("u8", "Num"));
    let declared = graph.trait_method(instances[0]).unwrap();
    assert_eq!(graph.symbol(declared).container, "Num");
    assert_eq!(tests_from(&graph, add), vec!["tests/parse.rs::parses"]);

    let shr = graph.defined_in("src/num.rs", "shifts::shr", crate::code::SymbolKind::Function)[0];
    let instance = graph.symbol(graph.macro_instances(shr)[0]);
    assert_eq!((instance.container.as_str(), instance.implements.as_str()), ("Big", "Shr"));
    assert_eq!(tests_from(&graph, shr), vec!["tests/shift.rs::shifts"]);
}

const EDGES: &str = "pub trait EdgeRef {\n    fn source(&self) -> usize;\n}\n\npub trait IntoEdges {\n    type Edges: Iterator<Item = Self::EdgeRef>;\n    type EdgeRef: EdgeRef;\n    fn edges(self) -> Self::Edges;\n}\n\npub struct Graph;\npub struct EdgeReference;\npub struct Edges;\n\nimpl Iterator for Edges {\n    type Item = EdgeReference;\n    fn next(&mut self) -> Option<EdgeReference> {\n        Some(EdgeReference)\n    }\n}\n\nimpl EdgeRef for EdgeReference {\n    fn source(&self) -> usize {\n        0\n    }\n}\n\nimpl IntoEdges for &Graph {\n    type Edges = Edges;\n    type EdgeRef = EdgeReference;\n    fn edges(self) -> Edges {\n        Edges\n    }\n}\n\npub struct Other;\npub struct OtherRef;\n\nimpl EdgeRef for OtherRef {\n    fn source(&self) -> usize {\n        1\n    }\n}\n\nimpl IntoEdges for &Other {\n    type Edges = std::vec::IntoIter<OtherRef>;\n    type EdgeRef = OtherRef;\n    fn edges(self) -> Self::Edges {\n        vec![OtherRef].into_iter()\n    }\n}\n\npub struct A;\npub struct B;\npub struct C;\npub struct D;\nimpl EdgeRef for A {\n    fn source(&self) -> usize {\n        2\n    }\n}\nimpl EdgeRef for B {\n    fn source(&self) -> usize {\n        3\n    }\n}\nimpl EdgeRef for C {\n    fn source(&self) -> usize {\n        4\n    }\n}\nimpl EdgeRef for D {\n    fn source(&self) -> usize {\n        5\n    }\n}\n\npub enum Element {\n    Edge { source: usize },\n}\n\npub fn sources<G: IntoEdges>(g: G) -> usize {\n    let mut n = 0;\n    for e in g.edges() {\n        n += e.source();\n    }\n    n\n}\n";

/// `e.source()` on an edge of a type parameter's associated type (`G::EdgeRef` through `for e
/// in g.edges()`, petgraph's algorithms) names a method six `impl EdgeRef for …` blocks define:
/// the trait's declaration stands for them all in the guess by name, one candidate rather
/// than seven (and never a field). From an implementation, the walk waits for its type to be
/// named, and a type an `impl` block states as an associated type (`type EdgeRef =
/// EdgeReference` in `impl IntoEdges for &Graph`) is made wherever the implementing type is:
/// the test that builds a `Graph` runs `EdgeReference::source`, the one that builds an `Other`
/// does not.
#[test]
fn a_guess_by_name_means_a_trait_method_and_an_associated_type_is_made_where_its_impl_type_is() {
    let graph = rust_graph(&[
        ("src/lib.rs", "pub mod edges;\n"),
        ("src/edges.rs", EDGES),
        ("tests/graph.rs", "use semver::edges::{sources, Graph};\n\n#[test]\nfn counts() {\n    sources(&Graph);\n}\n"),
        (
            "tests/other.rs",
            "use semver::edges::{sources, Other};\n\n#[test]\nfn counts_other() {\n    sources(&Other);\n}\n",
        ),
    ]);
    let declared = graph.defined_in("src/edges.rs", "EdgeRef::source", crate::code::SymbolKind::Method)[0];
    let guessed: Vec<u32> =
        graph.references(declared, 0.0).into_iter().filter(|r| r.resolution == "name_only").map(|r| r.line).collect();
    assert_eq!(guessed, vec![EDGES.lines().position(|l| l.contains("e.source()")).unwrap() as u32 + 1]);
    assert_eq!(tests_reached(&graph, "EdgeReference", "source"), vec!["tests/graph.rs::counts"]);
    assert_eq!(tests_reached(&graph, "OtherRef", "source"), vec!["tests/other.rs::counts_other"]);
}

/// A language trait's method met on the way leads on wherever its type is used only when the
/// language calls it on values: `PartialEq::eq` does; `Debug::fmt` runs where a value is printed
/// with `{:?}`, and a conversion (`Default::default`, `AsRef::as_ref`) where it is called by
/// name. A test that only names the type (`assert_send::<Request>()`) runs none of them.
#[test]
fn debug_and_conversions_on_the_way_run_where_called_not_where_the_type_is_named() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "pub struct Method(u8);\n\nimpl Method {\n    pub fn code(&self) -> u8 {\n        self.0\n    }\n\n    pub fn label(&self) -> u8 {\n        self.0 + 1\n    }\n}\n\n\
             pub struct Request {\n    method: Method,\n}\n\n\
             impl Default for Request {\n    fn default() -> Request {\n        Request { method: Method(0) }.checked()\n    }\n}\n\n\
             impl std::fmt::Debug for Request {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n        write!(f, \"{}\", self.method.label())\n    }\n}\n\n\
             impl PartialEq for Request {\n    fn eq(&self, other: &Request) -> bool {\n        self.method.code() == other.method.code()\n    }\n}\n\n\
             impl Request {\n    fn checked(self) -> Request {\n        self\n    }\n}\n",
        ),
        (
            "tests/send.rs",
            "use semver::Request;\n\nfn assert_send<T: Send>() {}\n\n#[test]\nfn request_is_send() {\n    assert_send::<Request>();\n}\n",
        ),
        (
            "tests/made.rs",
            "use semver::Request;\n\n#[test]\nfn made_by_default() {\n    let r = Request::default();\n    drop(r);\n}\n",
        ),
    ]);
    // `code` runs under `eq` (wherever a `Request` value is: not in `assert_send::<Request>()`,
    // which makes none); `label` only under `fmt`, which neither test prints.
    assert_eq!(tests_reached(&graph, "Method", "code"), ["tests/made.rs::made_by_default"]);
    assert!(tests_reached(&graph, "Method", "label").is_empty());
    // `checked` runs under `default`, which only `Request::default()` calls; so does a change
    // to `default` itself.
    assert_eq!(tests_reached(&graph, "Request", "checked"), ["tests/made.rs::made_by_default"]);
    assert_eq!(tests_reached(&graph, "Request", "default"), ["tests/made.rs::made_by_default"]);
    // A change to `Debug::fmt` itself runs where a value is printed, which neither test does;
    // a change to `eq` runs wherever a value of the type is.
    assert!(tests_reached(&graph, "Request", "fmt").is_empty());
    assert_eq!(tests_reached(&graph, "Request", "eq"), ["tests/made.rs::made_by_default"]);
}

/// `Display::fmt` runs where a value is formatted with `{}` or `.to_string()`, `Debug::fmt`
/// where one is with `{:?}` (not wherever the type is used, nor in `assert_eq!`, which prints
/// only on failure).
#[test]
fn display_and_debug_run_where_a_value_is_formatted_so() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "pub struct Version {\n    pub major: u64,\n}\n\nimpl std::fmt::Display for Version {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n        write!(f, \"{}\", self.major)\n    }\n}\n\npub struct Request(pub u8);\n\nimpl std::fmt::Debug for Request {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n        write!(f, \"Request\")\n    }\n}\n",
        ),
        (
            "tests/shown.rs",
            "use semver::Version;\n\n#[test]\nfn shown() {\n    assert_eq!(Version { major: 1 }.to_string(), \"1\");\n}\n",
        ),
        (
            "tests/made.rs",
            "use semver::{Request, Version};\n\n#[test]\nfn made() {\n    let v = Version { major: 1 };\n    let r = Request(0);\n    assert_eq!(v.major, u64::from(r.0) + 1);\n}\n",
        ),
        (
            "tests/printed.rs",
            "use semver::Request;\n\n#[test]\nfn printed() {\n    println!(\"{:?}\", Request(1));\n}\n",
        ),
    ]);
    assert_eq!(tests_reached(&graph, "Version", "fmt"), ["tests/shown.rs::shown"]);
    assert_eq!(tests_reached(&graph, "Request", "fmt"), ["tests/printed.rs::printed"]);
}

/// A serde data format's method for one shape of value runs where a value of that shape is
/// (de)serialized: `Serializer::serialize_struct_variant` in a test file that derives
/// `Serialize` for an enum with a variant of named fields, not in one that serializes only a
/// struct; `serialize_str` (any shape) wherever the format's type is used.
#[test]
fn a_serde_formats_shape_method_runs_where_a_value_of_that_shape_is_serialized() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "pub struct Writer {\n    pub out: String,\n}\n\n\
             impl serde::Serializer for &mut Writer {\n    \
             fn serialize_str(self, v: &str) -> Result<(), Error> {\n        self.out.push_str(v);\n        Ok(())\n    }\n    \
             fn serialize_struct_variant(self, name: &str) -> Result<(), Error> {\n        self.out.push_str(name);\n        Ok(())\n    }\n}\n\n\
             pub fn to_string<T: serde::Serialize>(value: &T) -> String {\n    let mut w = Writer { out: String::new() };\n    value.serialize(&mut w);\n    w.out\n}\n",
        ),
        (
            "tests/variants.rs",
            "use serde::Serialize;\n\n#[derive(Serialize)]\nenum Shape {\n    Circle { r: f64 },\n    Dot,\n}\n\n\
             #[test]\nfn variant() {\n    semver::to_string(&Shape::Circle { r: 1.0 });\n}\n",
        ),
        (
            "tests/structs.rs",
            "use serde::Serialize;\n\n#[derive(Serialize)]\nstruct Point {\n    x: i32,\n}\n\n\
             #[test]\nfn point() {\n    semver::to_string(&Point { x: 1 });\n}\n",
        ),
    ]);
    assert_eq!(tests_reached(&graph, "Writer", "serialize_struct_variant"), ["tests/variants.rs::variant"]);
    assert_eq!(
        tests_reached(&graph, "Writer", "serialize_str"),
        ["tests/structs.rs::point", "tests/variants.rs::variant"]
    );
    let shapes = |path: &str| graph.code(graph.file_index(path).unwrap()).operations_in(None);
    assert_eq!(shapes("tests/variants.rs"), crate::code::SERDE_STRUCT_VARIANT | crate::code::SERDE_UNIT_VARIANT);
    assert_eq!(shapes("tests/structs.rs"), crate::code::SERDE_STRUCT);
}

/// A type parameter bound by a trait has its supertraits' methods: `key.find(map)` for
/// `K: AsHeaderName` where `trait AsHeaderName: Sealed` runs an implementation of
/// `Sealed::find`, so a change to one reaches the tests that call through the bound.
#[test]
fn a_bounds_supertrait_method_runs_its_implementations() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "pub trait Sealed {\n    fn find(&self, map: &Map) -> usize;\n}\n\n\
             pub trait AsName: Sealed {}\n\n\
             pub struct Map;\n\n\
             pub struct Name;\n\n\
             impl Sealed for Name {\n    fn find(&self, _map: &Map) -> usize {\n        1\n    }\n}\n\n\
             impl AsName for Name {}\n\n\
             impl Map {\n    pub fn get<K: AsName>(&self, key: K) -> usize {\n        key.find(self)\n    }\n}\n",
        ),
        ("tests/get.rs", "use semver::{Map, Name};\n\n#[test]\nfn gets() {\n    Map.get(Name);\n}\n"),
        ("tests/other.rs", "#[test]\nfn unrelated() {\n    assert_eq!(1, 1);\n}\n"),
    ]);
    assert_eq!(tests_reached(&graph, "Name", "find"), ["tests/get.rs::gets"]);
}

const POINT: &str = "pub trait Point: Copy {\n    fn generate(f: impl FnMut(usize) -> f64) -> Self;\n    fn nth(&self, i: usize) -> f64;\n}\n\npub trait PointExt: Point {\n    fn new() -> Self {\n        Self::generate(|_| 0.0)\n    }\n}\n\nimpl<T> PointExt for T where T: Point {}\n\nimpl<const N: usize> Point for [f64; N] {\n    fn generate(mut f: impl FnMut(usize) -> f64) -> Self {\n        core::array::from_fn(|i| f(i))\n    }\n    fn nth(&self, i: usize) -> f64 {\n        self[i]\n    }\n}\n";

const TREE: &str = "use crate::point::{Point, PointExt};\n\npub trait Params {\n    type Strategy: InsertionStrategy;\n}\n\npub trait InsertionStrategy {\n    fn insert<P: Point>(tree: &mut Tree<P>, p: P);\n}\n\npub struct Plain;\n\nimpl InsertionStrategy for Plain {\n    fn insert<P: Point>(tree: &mut Tree<P>, p: P) {\n        place(tree, p);\n    }\n}\n\nfn place<P: Point>(tree: &mut Tree<P>, p: P) {\n    tree.points.push(p);\n}\n\npub struct Defaults;\n\nimpl Params for Defaults {\n    type Strategy = Plain;\n}\n\npub struct Tree<P> {\n    points: Vec<P>,\n}\n\nimpl<P: Point> Tree<P> {\n    pub fn origin() -> P {\n        P::new()\n    }\n\n    pub fn add<Q: Params>(&mut self, p: P) {\n        Q::Strategy::insert(self, p);\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn origin_is_zero() {\n        let origin: [f64; 2] = Tree::origin();\n        assert_eq!(origin.nth(0), 0.0);\n    }\n\n    #[test]\n    fn adds() {\n        let mut tree = Tree { points: Vec::new() };\n        tree.add::<Defaults>([1.0, 2.0]);\n    }\n}\n";

/// Generic code calls through type parameters: `P::new()` where `P: Point` is the extension
/// trait's `new` (`trait PointExt: Point`, implemented for every `Point`); `Q::Strategy::insert`
/// is `InsertionStrategy`'s, whose one implementation in the repo runs there with no type on the
/// path naming it; an `impl Point for [f64; N]` (a type of no name) is still `Point`'s.
#[test]
fn calls_through_a_type_parameter_reach_the_traits_and_their_implementations() {
    let graph =
        rust_graph(&[("src/lib.rs", "mod point;\nmod tree;\n"), ("src/point.rs", POINT), ("src/tree.rs", TREE)]);
    let generate = graph.lookup("generate").into_iter().find(|&r| graph.symbol(r).container == "[f64; N]").unwrap();
    assert_eq!(graph.symbol(generate).implements, "Point");
    assert_eq!(tests_reached(&graph, "[f64; N]", "generate"), vec!["src/tree.rs::origin_is_zero"]);
    assert_eq!(tests_reached(&graph, "PointExt", "new"), vec!["src/tree.rs::origin_is_zero"]);
    assert_eq!(tests_reached(&graph, "", "place"), vec!["src/tree.rs::adds"]);
}

/// A value of a type alias has the target's methods: heapless writes `DequeInner<T, S>` once,
/// over a storage parameter, and its tests hold a `Deque<i32, 4>` (`pub type Deque<T, const
/// N: usize> = DequeInner<T, OwnedStorage<T, N>>`) whose `pop_front` is `DequeInner`'s.
#[test]
fn a_method_called_on_a_type_aliass_value_is_the_targets() {
    let deque = "pub struct DequeInner<T, S> {\n    buffer: S,\n    len: usize,\n    item: Option<T>,\n}\n\n\
                 pub struct OwnedStorage<T, const N: usize>([Option<T>; N]);\n\n\
                 pub type Deque<T, const N: usize> = DequeInner<T, OwnedStorage<T, N>>;\n\n\
                 impl<T, const N: usize> Deque<T, N> {\n    pub fn new() -> Self {\n        todo!()\n    }\n}\n\n\
                 impl<T, S> DequeInner<T, S> {\n    pub fn pop_front(&mut self) -> Option<T> {\n        self.len -= 1;\n        self.item.take()\n    }\n}\n\n\
                 #[cfg(test)]\nmod tests {\n    use super::Deque;\n\n    #[test]\n    fn pops() {\n        let mut v: Deque<i32, 4> = Deque::new();\n        v.pop_front();\n    }\n}\n";
    let graph = rust_graph(&[("src/lib.rs", "pub mod deque;\n"), ("src/deque.rs", deque)]);
    assert_eq!(tests_reached(&graph, "DequeInner", "pop_front"), ["src/deque.rs::pops"]);
}

/// A type the crate re-exports under another name (`pub use registry::Registry as
/// Handlebars`) has its own name's members where a test uses the other: `Handlebars::new()`
/// and a value made by it lead to `Registry`'s methods.
#[test]
fn a_type_reexported_under_another_name_has_its_own_members() {
    let graph = rust_graph(&[
        ("src/lib.rs", "mod registry;\n\npub use self::registry::Registry as Handlebars;\n"),
        (
            "src/registry.rs",
            "pub struct Registry;\n\nimpl Registry {\n    pub fn new() -> Registry {\n        Registry\n    }\n\n    pub fn render(&self) -> String {\n        String::new()\n    }\n}\n",
        ),
        (
            "tests/render.rs",
            "use semver::Handlebars;\n\n#[test]\nfn renders() {\n    let hbs = Handlebars::new();\n    hbs.render();\n}\n\n#[test]\nfn other() {\n    assert!(true);\n}\n",
        ),
    ]);
    assert_eq!(tests_reached(&graph, "Registry", "new"), vec!["tests/render.rs::renders"]);
    assert_eq!(tests_reached(&graph, "Registry", "render"), vec!["tests/render.rs::renders"]);
}

/// A `macro_rules!` body's path from `$crate` names the crate's own item wherever the macro
/// is expanded: a change to it reaches the tests that call the macro, and nothing else in the
/// template is read as a use.
#[test]
fn a_macro_reaches_what_its_crate_paths_name() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "#[macro_use]\nmod macros;\n\npub mod __private {\n    pub fn format_err() {}\n\n    pub fn other() {}\n}\n",
        ),
        (
            "src/macros.rs",
            "#[macro_export]\nmacro_rules! anyhow {\n    ($msg:literal) => {\n        $crate::__private::format_err($msg)\n    };\n    ($e:expr) => {\n        other($e)\n    };\n}\n",
        ),
        (
            "tests/test_macros.rs",
            "use semver::anyhow;\n\n#[test]\nfn makes() {\n    let _ = anyhow!(\"x\");\n}\n\n#[test]\nfn unrelated() {\n    assert!(true);\n}\n",
        ),
    ]);
    assert_eq!(tests_reached(&graph, "__private", "format_err"), vec!["tests/test_macros.rs::makes"]);
    assert!(tests_reached(&graph, "__private", "other").is_empty());
}

/// A function named through a path with generic arguments (`bulk_load::load::<_, P>` handed
/// on as a value, `Tree::<u8>::origin()`) is a use of it.
#[test]
fn a_path_with_generic_arguments_names_its_item() {
    let graph = rust_graph(&[
        ("src/lib.rs", "mod algorithm;\nmod tree;\n"),
        ("src/algorithm/mod.rs", "pub mod bulk_load;\n"),
        ("src/algorithm/bulk_load/mod.rs", "mod load;\n\npub use self::load::load;\n"),
        ("src/algorithm/bulk_load/load.rs", "pub fn load<T, P>(elements: Vec<T>) -> usize {\n    elements.len()\n}\n"),
        (
            "src/tree.rs",
            "use crate::algorithm::bulk_load;\n\npub struct Tree<T>(T);\n\nimpl<T> Tree<T> {\n    pub fn origin() -> usize {\n        0\n    }\n\n    pub fn bulk(elements: Vec<T>) -> usize {\n        Self::with(elements, bulk_load::load::<_, u8>)\n    }\n\n    fn with(elements: Vec<T>, f: fn(Vec<T>) -> usize) -> usize {\n        f(elements)\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn bulk() {\n        Tree::<u8>::bulk(vec![1]);\n    }\n\n    #[test]\n    fn origin() {\n        Tree::<[f64; 2]>::origin();\n    }\n}\n",
        ),
    ]);
    assert_eq!(tests_reached(&graph, "", "load"), vec!["src/tree.rs::bulk"]);
    assert_eq!(tests_reached(&graph, "Tree", "origin"), vec!["src/tree.rs::origin"]);
}

/// A value whose type is a type parameter has its bound's members, the extension trait's
/// too: a field `lower: P` and a method's `P` result in `impl<P> Aabb<P> where P: Point`
/// (rstar's `self.lower.all_component_wise(…)`, `self.min_point(p).length_2()`); a `static`
/// has the type it states (`TYPE_ID.get_or_init(…)`, ron's `static TYPE_ID: OnceBox<TypeId>`).
#[test]
fn a_value_of_a_bounded_type_parameter_or_a_typed_static_has_its_types_members() {
    let point = "pub trait Point: Copy {\n    fn nth(&self, i: usize) -> f64;\n}\n\n\
                 pub trait PointExt: Point {\n    fn all_component_wise(&self, other: &Self) -> bool {\n        self.nth(0) <= other.nth(0)\n    }\n\n    fn length_2(&self) -> f64 {\n        self.nth(0) * self.nth(0)\n    }\n}\n\n\
                 impl<T> PointExt for T where T: Point {}\n";
    let aabb = "use crate::point::{Point, PointExt};\n\n\
                pub struct Aabb<P>\nwhere\n    P: Point,\n{\n    lower: P,\n}\n\n\
                impl<P> Aabb<P>\nwhere\n    P: Point,\n{\n    pub fn contains(&self, p: &P) -> bool {\n        self.lower.all_component_wise(p)\n    }\n\n    fn min_point(&self) -> P {\n        self.lower\n    }\n\n    pub fn distance_2(&self) -> f64 {\n        self.min_point().length_2()\n    }\n}\n";
    let cell = "pub struct OnceBox<T>(Option<T>);\n\n\
                impl<T> OnceBox<T> {\n    pub const fn new() -> Self {\n        OnceBox(None)\n    }\n\n    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> T {\n        f()\n    }\n}\n\n\
                pub fn type_id() -> u8 {\n    static TYPE_ID: OnceBox<u8> = OnceBox::new();\n    TYPE_ID.get_or_init(|| 1)\n}\n";
    let tests = "use semver::{type_id, Aabb};\n\n\
                 #[test]\nfn contains() {\n    let b: Aabb<[f64; 2]> = todo!();\n    b.contains(&[0.0, 0.0]);\n}\n\n\
                 #[test]\nfn distance() {\n    let b: Aabb<[f64; 2]> = todo!();\n    b.distance_2();\n}\n\n\
                 #[test]\nfn types() {\n    type_id();\n}\n";
    let graph = rust_graph(&[
        ("src/lib.rs", "mod aabb;\nmod cell;\nmod point;\n\npub use aabb::Aabb;\npub use cell::type_id;\n"),
        ("src/point.rs", point),
        ("src/aabb.rs", aabb),
        ("src/cell.rs", cell),
        ("tests/aabb.rs", tests),
    ]);
    assert_eq!(tests_reached(&graph, "PointExt", "all_component_wise"), vec!["tests/aabb.rs::contains"]);
    assert_eq!(tests_reached(&graph, "PointExt", "length_2"), vec!["tests/aabb.rs::distance"]);
    assert_eq!(tests_reached(&graph, "OnceBox", "get_or_init"), vec!["tests/aabb.rs::types"]);
}

/// Two modules that each define a type of one name hold two types: `self.identifier()` in
/// one's `impl` is its own method, not the other's (ron's `de::Deserializer` beside
/// `de::id::Deserializer`), and so is `d.identifier()` on a value of the file's own type; a
/// change to the other reaches only the tests that reach it.
#[test]
fn self_in_a_type_is_not_another_modules_type_of_the_same_name() {
    let graph = rust_graph(&[
        ("src/lib.rs", "pub mod de;\npub mod id;\n"),
        (
            "src/de.rs",
            "pub struct Deserializer;\n\nimpl Deserializer {\n    pub fn any(&self) -> u8 {\n        self.identifier()\n    }\n\n    fn identifier(&self) -> u8 {\n        1\n    }\n}\n",
        ),
        (
            "src/id.rs",
            "pub struct Deserializer;\n\nimpl Deserializer {\n    pub fn key(&self) -> u8 {\n        self.identifier()\n    }\n\n    fn identifier(&self) -> u8 {\n        2\n    }\n}\n\npub fn peek(d: &Deserializer) -> u8 {\n    d.identifier()\n}\n",
        ),
        (
            "tests/de.rs",
            "#[test]\nfn any() {\n    semver::de::Deserializer.any();\n}\n\n#[test]\nfn key() {\n    semver::id::Deserializer.key();\n}\n\n#[test]\nfn peek() {\n    semver::id::peek(&semver::id::Deserializer);\n}\n",
        ),
    ]);
    let in_file = |path: &str| {
        let r = graph
            .lookup("identifier")
            .into_iter()
            .find(|&r| graph.path(r.0) == path)
            .unwrap_or_else(|| panic!("{path}"));
        tests_from(&graph, r)
    };
    assert_eq!(in_file("src/de.rs"), vec!["tests/de.rs::any"]);
    assert_eq!(in_file("src/id.rs"), vec!["tests/de.rs::key", "tests/de.rs::peek"]);
}

/// A trait's implementation registered by a constructor (handlebars' `Registry::new` →
/// `setup_builtins` → `register_helper("each", Box::new(EACH_HELPER))`, a static of the
/// implementing type) runs through the trait wherever a test made that registry: the test
/// names the type through the constructor, two calls away.
#[test]
fn an_implementation_a_constructor_registers_runs_where_the_registry_is_made() {
    let lib = "pub trait HelperDef {\n    fn call(&self) -> u8;\n}\n\n\
               pub struct EachHelper;\n\n\
               impl HelperDef for EachHelper {\n    fn call(&self) -> u8 {\n        update()\n    }\n}\n\n\
               fn update() -> u8 {\n    1\n}\n\n\
               pub struct IfHelper;\n\n\
               impl HelperDef for IfHelper {\n    fn call(&self) -> u8 {\n        2\n    }\n}\n\n\
               pub static EACH_HELPER: EachHelper = EachHelper;\n\n\
               pub struct Registry {\n    helpers: Vec<Box<dyn HelperDef>>,\n}\n\n\
               impl Registry {\n    pub fn new() -> Registry {\n        let mut r = Registry { helpers: Vec::new() };\n        r.setup();\n        r\n    }\n\n    \
               fn setup(&mut self) {\n        self.helpers.push(Box::new(EACH_HELPER));\n    }\n\n    \
               pub fn render(&self) -> u8 {\n        self.helpers.first().unwrap().call()\n    }\n}\n";
    let tests = "use semver::{HelperDef, IfHelper, Registry};\n\n\
                 #[test]\nfn renders() {\n    let r = Registry::new();\n    r.render();\n}\n\n\
                 #[test]\nfn other() {\n    IfHelper.call();\n}\n";
    let graph = rust_graph(&[("src/lib.rs", lib), ("tests/render.rs", tests)]);
    assert_eq!(tests_reached(&graph, "", "update"), vec!["tests/render.rs::renders"]);
}

/// `std::error::Error`'s `source` runs where an error's chain is read, not wherever the error
/// is made, also under a `use … as …` alias; serde's `de::Error::custom`, written
/// `impl … Error for` too, runs in serde's code on every failure, so wherever its type is used.
#[test]
fn an_errors_source_runs_where_the_chain_is_read() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "use std::error::Error as StdError;\n\n\
             pub struct Failure {\n    inner: std::io::Error,\n}\n\n\
             impl Failure {\n    pub fn new() -> Failure {\n        Failure { inner: std::io::Error::other(\"x\") }\n    }\n\n    fn inner_error(&self) -> &std::io::Error {\n        &self.inner\n    }\n\n    fn made_up(text: &str) -> Failure {\n        Failure::new()\n    }\n}\n\n\
             impl StdError for Failure {\n    fn source(&self) -> Option<&(dyn StdError + 'static)> {\n        Some(self.inner_error())\n    }\n}\n\n\
             impl serde::de::Error for Failure {\n    fn custom<T: std::fmt::Display>(message: T) -> Failure {\n        Failure::made_up(\"custom\")\n    }\n}\n",
        ),
        ("tests/made.rs", "use semver::Failure;\n\n#[test]\nfn made() {\n    drop(Failure::new());\n}\n"),
        (
            "tests/chain.rs",
            "use std::error::Error;\nuse semver::Failure;\n\n#[test]\nfn reads_the_chain() {\n    assert!(Failure::new().source().is_some());\n}\n",
        ),
    ]);
    let source = graph.lookup("source").into_iter().find(|&r| graph.symbol(r).container == "Failure").unwrap();
    assert_eq!(graph.symbol(source).implements, "StdError");
    assert_eq!(tests_reached(&graph, "Failure", "inner_error"), ["tests/chain.rs::reads_the_chain"]);
    assert_eq!(tests_reached(&graph, "Failure", "made_up"), ["tests/chain.rs::reads_the_chain", "tests/made.rs::made"]);
}

/// Code that runs only when something fails (the argument of `Err(…)`, a `map_err` closure)
/// leads only to the tests that make something fail: those that ask for the error
/// (`is_err()`), call a helper of the tests that does (`unwrap_err()`), or are marked
/// `#[should_panic]`; code on the way to success leads to every test.
#[test]
fn code_that_runs_on_failure_leads_to_the_tests_that_fail() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "pub struct Version {\n    pub major: u64,\n}\n\n\
             #[derive(Debug)]\npub struct Error {\n    at: usize,\n}\n\n\
             impl Error {\n    fn located(at: usize) -> Error {\n        Error { at }\n    }\n}\n\n\
             fn build(major: u64) -> Version {\n    Version { major }\n}\n\n\
             pub fn parse(text: &str) -> Result<Version, Error> {\n    if text.is_empty() {\n        return Err(Error::located(0));\n    }\n    let major = text.parse::<u64>().map_err(|_| Error::located(1))?;\n    Ok(build(major))\n}\n",
        ),
        ("tests/parses.rs", "#[test]\nfn parses() {\n    assert_eq!(semver::parse(\"1\").unwrap().major, 1);\n}\n"),
        ("tests/errors.rs", "#[test]\nfn rejects_empty() {\n    assert!(semver::parse(\"\").is_err());\n}\n"),
        ("tests/util/mod.rs", "pub fn version_err(text: &str) -> semver::Error {\n    semver::parse(text).unwrap_err()\n}\n"),
        (
            "tests/helper.rs",
            "mod util;\nuse crate::util::*;\n\n#[test]\nfn rejects_letters() {\n    drop(version_err(\"x\"));\n}\n",
        ),
        ("tests/panics.rs", "#[test]\n#[should_panic]\nfn panics() {\n    semver::parse(\"\").unwrap();\n}\n"),
    ]);
    let failing = ["tests/errors.rs::rejects_empty", "tests/helper.rs::rejects_letters", "tests/panics.rs::panics"];
    assert_eq!(tests_reached(&graph, "Error", "located"), failing);
    assert_eq!(
        tests_reached(&graph, "", "build"),
        [
            "tests/errors.rs::rejects_empty",
            "tests/helper.rs::rejects_letters",
            "tests/panics.rs::panics",
            "tests/parses.rs::parses"
        ]
    );
}

/// A type named only as a type argument of a call that runs nothing (`assert_send::<T>()`
/// of an empty function, `size_of::<T>()`) makes no value: a method the language runs on its
/// values (`Ord::cmp`) does not run there; named in a call that makes one (`parse::<T>()`),
/// it does.
#[test]
fn a_type_named_only_to_be_checked_runs_none_of_its_methods() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "#[derive(PartialEq, Eq)]\npub struct Version {\n    pub major: u64,\n}\n\n\
             impl Ord for Version {\n    fn cmp(&self, other: &Self) -> std::cmp::Ordering {\n        self.major.cmp(&other.major)\n    }\n}\n\n\
             impl PartialOrd for Version {\n    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {\n        Some(self.cmp(other))\n    }\n}\n\n\
             impl std::str::FromStr for Version {\n    type Err = ();\n    fn from_str(text: &str) -> Result<Version, ()> {\n        Ok(Version { major: text.len() as u64 })\n    }\n}\n",
        ),
        (
            "tests/test_autotrait.rs",
            "fn assert_send_sync<T: Send + Sync>() {}\n\n#[test]\nfn test() {\n    assert_send_sync::<semver::Version>();\n    assert_eq!(std::mem::size_of::<semver::Version>(), 8);\n}\n",
        ),
        (
            "tests/test_order.rs",
            "#[test]\nfn orders() {\n    let a = \"1\".parse::<semver::Version>().unwrap();\n    let b = \"22\".parse::<semver::Version>().unwrap();\n    assert!(a < b);\n}\n",
        ),
    ]);
    assert_eq!(tests_reached(&graph, "Version", "cmp"), ["tests/test_order.rs::orders"]);
}

/// A method of another crate's trait that the repo calls by name (num-integer's `Roots::cbrt`)
/// runs where a value of its type meets a call of that name, not wherever a value of the type
/// is made (as `PartialEq::eq`, which the language runs, does): a test file that builds the
/// type but never writes `cbrt` runs neither `cbrt` nor what only `cbrt` calls.
#[test]
fn another_crates_trait_method_called_by_name_runs_where_a_test_names_it() {
    let lib = "use num_integer::Roots;\n\npub struct Big(pub u64);\n\n\
               impl Big {\n    fn root(&self) -> u64 {\n        self.0\n    }\n}\n\n\
               impl Roots for Big {\n    fn cbrt(&self) -> Big {\n        Big(self.root())\n    }\n}\n\n\
               impl PartialEq for Big {\n    fn eq(&self, other: &Big) -> bool {\n        self.0 == other.0\n    }\n}\n";
    let roots =
        "use num_integer::Roots;\nuse semver::Big;\n\n#[test]\nfn cube() {\n    let b: Big = Big(8);\n    assert!(b.cbrt() == Big(2));\n}\n";
    let made = "use semver::Big;\n\n#[test]\nfn made() {\n    assert!(Big(1) == Big(1));\n}\n";
    let graph = rust_graph(&[("src/lib.rs", lib), ("tests/roots.rs", roots), ("tests/made.rs", made)]);
    let texts = HashMap::from([("tests/roots.rs", roots), ("tests/made.rs", made)]);
    let run = |name: &str| -> Vec<String> {
        let target = graph.lookup(name).into_iter().find(|&r| graph.symbol(r).container == "Big").unwrap();
        let mut seeds = vec![Seed {
            symbol_opt: Some(target),
            name: name.to_string(),
            label: name.to_string(),
            instances_only: false,
            declared_only: false,
            needs_operation: 0,
            key: None,
        }];
        let more = type_seeds(&graph, &seeds);
        seeds.extend(more);
        keyed_test_files(&graph, &seeds, &texts)
    };
    let cbrt = graph.lookup("cbrt")[0];
    assert!(graph.trait_method(cbrt).is_none(), "`Roots` is another crate's");
    assert_eq!(run("cbrt"), ["tests/roots.rs"]);
    assert_eq!(run("root"), ["tests/roots.rs"]);
    assert_eq!(run("eq"), ["tests/made.rs", "tests/roots.rs"]);
}

/// A `macro_rules!` macro is in scope below the module that defines it: a call in a module
/// whose enclosing module defines the name means that one, not another module's namesake;
/// a call with no enclosing definition may mean any of the crate's (`#[macro_use]`).
#[test]
fn a_macro_call_means_the_enclosing_module_s_macro_of_that_name() {
    let check = |body: &str| format!("macro_rules! check {{\n    () => {{ {body} }};\n}}\n");
    let graph = rust_graph(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("src/a.rs", &format!("{}\npub fn in_a() {{\n    check!();\n}}\n", check("1"))),
        ("src/b/mod.rs", &format!("{}\nmod inner;\n", check("2"))),
        ("src/b/inner.rs", "pub fn in_b() {\n    check!();\n}\n"),
        ("src/c.rs", "pub fn in_c() {\n    check!();\n}\n"),
    ]);
    let callers = |path: &str| -> Vec<String> {
        let m = graph.lookup("check").into_iter().find(|&r| graph.path(r.0) == path).unwrap();
        let mut files: Vec<String> = graph.uses(m, 0.5).iter().map(|u| graph.path(u.file).to_string()).collect();
        files.sort();
        files
    };
    assert_eq!(callers("src/b/mod.rs"), vec!["src/b/inner.rs", "src/c.rs"]);
    assert_eq!(callers("src/a.rs"), vec!["src/a.rs", "src/c.rs"]);
}

/// A trait's provided method is a method of every type that implements the trait: chrono's
/// `offset.from_utc_datetime(…)` on a `FixedOffset`, whose `impl TimeZone` leaves that method
/// to the trait's default body, whose result's methods (`with_ordinal`) a test then calls.
#[test]
fn a_traits_provided_method_is_a_member_of_the_types_implementing_it() {
    let graph = rust_graph(&[
        ("src/lib.rs", "pub mod offset;\npub mod datetime;\n"),
        (
            "src/offset.rs",
            "use crate::datetime::DateTime;\n\npub trait TimeZone: Sized + Clone {\n    fn offset(&self) -> i32;\n\n    fn from_utc_datetime(&self, utc: i64) -> DateTime<Self> {\n        DateTime::from_parts(utc, self.clone())\n    }\n}\n\n#[derive(Clone)]\npub struct FixedOffset {\n    secs: i32,\n}\n\nimpl FixedOffset {\n    pub fn west_opt(secs: i32) -> Option<FixedOffset> {\n        Some(FixedOffset { secs: -secs })\n    }\n}\n\nimpl TimeZone for FixedOffset {\n    fn offset(&self) -> i32 {\n        self.secs\n    }\n}\n",
        ),
        (
            "src/datetime.rs",
            "use crate::offset::TimeZone;\n\npub struct DateTime<Tz> {\n    utc: i64,\n    tz: Tz,\n}\n\nimpl<Tz: TimeZone> DateTime<Tz> {\n    pub fn from_parts(utc: i64, tz: Tz) -> Self {\n        DateTime { utc, tz }\n    }\n\n    pub fn with_ordinal(&self, ordinal: u32) -> Option<i64> {\n        Some(self.utc + ordinal as i64)\n    }\n}\n",
        ),
        (
            "tests/setters.rs",
            "use semver::offset::{FixedOffset, TimeZone};\n\n#[test]\nfn setters() {\n    let offset = FixedOffset::west_opt(7200).unwrap();\n    let beyond = offset.from_utc_datetime(5);\n    assert_eq!(beyond.with_ordinal(3), Some(8));\n}\n",
        ),
    ]);
    assert_eq!(tests_reached(&graph, "TimeZone", "from_utc_datetime"), ["tests/setters.rs::setters"]);
    assert_eq!(tests_reached(&graph, "DateTime", "with_ordinal"), ["tests/setters.rs::setters"]);
}

/// An operator trait's method runs where a test file applies the operator (`a % b`, also in
/// `assert_eq!`'s arguments), `Index::index` where it indexes (`a[i]`), `FromStr::from_str`
/// where it parses: not wherever a value of the type is made.
#[test]
fn an_operator_index_or_parse_trait_runs_where_a_test_applies_it() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "pub struct Big(pub u64);\n\nimpl std::ops::Rem for Big {\n    type Output = Big;\n    fn rem(self, other: Big) -> Big {\n        Big(self.0 % other.0)\n    }\n}\n\nimpl std::ops::Index<usize> for Big {\n    type Output = u64;\n    fn index(&self, _i: usize) -> &u64 {\n        &self.0\n    }\n}\n\nimpl std::str::FromStr for Big {\n    type Err = ();\n    fn from_str(s: &str) -> Result<Big, ()> {\n        Ok(Big(s.len() as u64))\n    }\n}\n",
        ),
        (
            "tests/rem.rs",
            "use semver::Big;\n\n#[test]\nfn rem() {\n    assert_eq!((Big(7) % Big(4)).0, 3);\n}\n",
        ),
        (
            "tests/index.rs",
            "use semver::Big;\n\n#[test]\nfn index() {\n    let b = Big(7);\n    assert_eq!(b[0], 7);\n}\n",
        ),
        (
            "tests/parse.rs",
            "use semver::Big;\n\n#[test]\nfn parse() {\n    let b: Big = \"abc\".parse::<Big>().unwrap();\n    assert_eq!(b.0, 3);\n}\n",
        ),
        ("tests/made.rs", "use semver::Big;\n\n#[test]\nfn made() {\n    assert_eq!(Big(1).0, 1);\n}\n"),
    ]);
    assert_eq!(tests_reached(&graph, "Big", "rem"), ["tests/rem.rs::rem"]);
    assert_eq!(tests_reached(&graph, "Big", "index"), ["tests/index.rs::index"]);
    assert_eq!(tests_reached(&graph, "Big", "from_str"), ["tests/parse.rs::parse"]);
}

/// anyhow's `chain.rs` implements `Iterator` for `Chain` beside `pub(crate) use
/// crate::Chain;` and a `struct Chain` of its own for another `cfg`: the trait's method runs
/// where the imported type is used (`e.chain()` in a test), not only where the local one is.
#[test]
fn a_trait_impl_beside_an_imported_type_of_its_name_runs_for_the_imported_one() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "mod chain;\n\npub struct Chain {\n    left: u32,\n}\n\npub struct Error;\n\nimpl Error {\n    pub fn chain(&self) -> Chain {\n        Chain { left: 3 }\n    }\n}\n",
        ),
        (
            "src/chain.rs",
            "#[cfg(feature = \"std\")]\npub(crate) use crate::Chain;\n\n#[cfg(not(feature = \"std\"))]\npub(crate) struct Chain {\n    left: u32,\n}\n\nimpl Iterator for Chain {\n    type Item = u32;\n\n    fn next(&mut self) -> Option<u32> {\n        self.left.checked_sub(1)\n    }\n}\n",
        ),
        ("tests/chain.rs", "#[test]\nfn counts() {\n    let e = semver::Error;\n    assert_eq!(e.chain().count(), 3);\n}\n"),
    ]);
    assert_eq!(tests_reached(&graph, "Chain", "next"), ["tests/chain.rs::counts"]);
}

/// bincode's shape: `impl Decode for u16` (a type the repo does not define) runs through the
/// trait's dispatch in a generic `decode_from`, which every test calls through a helper in
/// `tests/utils.rs` that each test file brings in with `mod utils;` (an integration test file
/// is a crate root: its `mod` is the file beside it). A test runs `u16::decode` only where its
/// file names `u16` (`2u16` too); a type the repo makes a default (`type Small = u8`) is run
/// unnamed. `#[path = "…"] mod issue_1;` resolves to the file it names.
#[test]
fn a_traits_method_for_a_foreign_type_runs_where_a_test_names_that_type() {
    let lib = "pub trait Decode: Sized {\n    fn decode(r: &mut Reader) -> Self;\n}\n\n\
               pub struct Reader(pub Vec<u8>);\n\npub type Small = u8;\n\n\
               impl Decode for u16 {\n    fn decode(r: &mut Reader) -> Self {\n        r.0.len() as u16\n    }\n}\n\n\
               impl Decode for u8 {\n    fn decode(r: &mut Reader) -> Self {\n        r.0.len() as u8\n    }\n}\n\n\
               impl Decode for bool {\n    fn decode(r: &mut Reader) -> Self {\n        r.0.is_empty()\n    }\n}\n\n\
               pub fn decode_from<T: Decode>(bytes: Vec<u8>) -> T {\n    T::decode(&mut Reader(bytes))\n}\n";
    let utils = "pub fn the_same<T: semver::Decode>(bytes: Vec<u8>) -> T {\n    semver::decode_from(bytes)\n}\n";
    let numbers =
        "mod utils;\n\nuse utils::the_same;\n\n#[test]\nfn numbers() {\n    assert_eq!(the_same(vec![1, 2]), 2u16);\n}\n";
    let flags =
        "mod utils;\n\nuse utils::the_same;\n\n#[test]\nfn flags() {\n    assert!(the_same::<bool>(vec![]));\n}\n";
    let small = "mod utils;\n\n#[test]\nfn small() {\n    let s: semver::Small = utils::the_same(vec![1]);\n    assert_eq!(s, 1);\n}\n";
    let issues = "#[path = \"issues/issue_1.rs\"]\nmod issue_1;\n";
    let issue_1 = "#[test]\nfn issue_1() {\n    assert!(!semver::decode_from::<bool>(vec![0]));\n}\n";
    let graph = rust_graph(&[
        ("src/lib.rs", lib),
        ("tests/utils.rs", utils),
        ("tests/numbers.rs", numbers),
        ("tests/flags.rs", flags),
        ("tests/small.rs", small),
        ("tests/issues.rs", issues),
        ("tests/issues/issue_1.rs", issue_1),
    ]);
    let texts = HashMap::from([
        ("tests/utils.rs", utils),
        ("tests/numbers.rs", numbers),
        ("tests/flags.rs", flags),
        ("tests/small.rs", small),
        ("tests/issues/issue_1.rs", issue_1),
    ]);
    let path_of = |f: u32| graph.path(f).to_string();
    let utils_file = graph.lookup("the_same")[0].0;
    let mut importers: Vec<String> = graph.importers(utils_file, 0.5).into_iter().map(|(f, _)| path_of(f)).collect();
    importers.sort();
    assert_eq!(importers, ["tests/flags.rs", "tests/numbers.rs", "tests/small.rs"]);
    let issue_file = graph.lookup("issue_1").into_iter().find(|r| graph.symbol(*r).kind.is_callable()).unwrap().0;
    let importers: Vec<String> = graph.importers(issue_file, 0.5).into_iter().map(|(f, _)| path_of(f)).collect();
    assert_eq!(importers, ["tests/issues.rs"]);
    let run = |container: &str| -> Vec<String> {
        let target = graph.lookup("decode").into_iter().find(|&r| graph.symbol(r).container == container).unwrap();
        let seeds = vec![Seed::plain(Some(target), "decode", "decode")];
        keyed_test_files(&graph, &seeds, &texts)
    };
    assert_eq!(run("u16"), ["tests/numbers.rs"]);
    assert_eq!(run("bool"), ["tests/flags.rs", "tests/issues/issue_1.rs"]);
    assert_eq!(run("u8"), ["tests/flags.rs", "tests/issues/issue_1.rs", "tests/numbers.rs", "tests/small.rs"]);
}

/// Every implementation of a trait's method that calls the method again (bincode's
/// `Option<T>::decode` calling `T::decode`) dispatches through the same calls: a walk pays for
/// them once, so a budget that holds one round of them still reaches the test behind the
/// generic function called last.
#[test]
fn a_traits_dispatch_is_paid_for_once_in_a_walk() {
    let mut lib = String::from(
        "pub trait Decode: Sized {\n    fn decode(bytes: &[u8]) -> Self;\n}\n\n\
         impl Decode for u16 {\n    fn decode(bytes: &[u8]) -> Self {\n        bytes.len() as u16\n    }\n}\n\n",
    );
    for i in 0..10 {
        lib.push_str(&format!(
            "pub struct Wrap{i}<T>(T);\n\nimpl<T: Decode> Decode for Wrap{i}<T> {{\n    fn decode(bytes: &[u8]) -> Self {{\n        Wrap{i}(T::decode(bytes))\n    }}\n}}\n\n"
        ));
    }
    lib.push_str("pub fn decode_from<T: Decode>(bytes: &[u8]) -> T {\n    T::decode(bytes)\n}\n");
    let test = "#[test]\nfn numbers() {\n    assert_eq!(semver::decode_from::<u16>(&[1, 2]), 2u16);\n}\n";
    let graph = rust_graph(&[("src/lib.rs", &lib), ("tests/numbers.rs", test)]);
    let target = graph.lookup("decode").into_iter().find(|&r| graph.symbol(r).container == "u16").unwrap();
    let seeds = vec![Seed::plain(Some(target), "decode", "decode")];
    // One round of `T::decode`'s eleven calls, and a little more; ten rounds do not fit.
    let limits = crate::code::dependents::WalkLimits { max_work: 40, ..daemon_walk_limits() };
    let walk = walk(&graph, &seeds, limits);
    let files: Vec<&str> = walk.tests.iter().map(|r| graph.path(r.file)).collect();
    assert_eq!(files, ["tests/numbers.rs"]);
    assert!(!walk.truncated);
}

/// A Rust call never means a module: `mod optimize;` beside `use crate::optimize::optimize;`
/// in lib.rs, `optimize(…)` calls the function the module defines (fancy-regex), as it does in
/// a file that imports it the same way; nor a field of that name (`RegexOptions::optimize`).
#[test]
fn a_rust_call_is_no_module_of_its_name() {
    let graph = rust_graph(&[
        (
            "src/lib.rs",
            "mod optimize;\nmod set;\n\nuse crate::optimize::optimize;\n\npub struct Options {\n    optimize: bool,\n}\n\n\
             pub fn build(o: &Options) -> u32 {\n    if o.optimize { optimize(1) } else { 0 }\n}\n",
        ),
        ("src/optimize.rs", "pub fn optimize(x: u32) -> u32 {\n    x + 1\n}\n"),
        ("src/set.rs", "use crate::optimize::optimize;\n\npub fn again() -> u32 {\n    optimize(2)\n}\n"),
    ]);
    let calls: Vec<(String, u32)> = graph
        .references(
            graph
                .lookup("optimize")
                .into_iter()
                .find(|&r| graph.symbol(r).kind == crate::code::SymbolKind::Function)
                .unwrap(),
            0.5,
        )
        .into_iter()
        .filter(|r| r.kind == "call")
        .map(|r| (r.path, r.line))
        .collect();
    assert_eq!(calls, vec![("src/lib.rs".to_string(), 11), ("src/set.rs".to_string(), 4)]);
}

/// A name a struct pattern binds to a field (`Expr::Literal { ref val, .. }`, `Pair { left, ..
/// }`) is of the type the field's declaration states: `val.as_bytes()` on a `String` is no call
/// of the crate's `Input::as_bytes`, and `left.pick()` is `Leaf::pick`, not `Tree::pick`.
#[test]
fn a_struct_patterns_field_is_of_its_declared_type() {
    let graph = rust_graph(&[(
        "src/lib.rs",
        "pub trait Input {\n    fn as_bytes(&self) -> &[u8];\n}\n\n\
         impl Input for str {\n    fn as_bytes(&self) -> &[u8] {\n        str::as_bytes(self)\n    }\n}\n\n\
         pub struct Leaf;\n\nimpl Leaf {\n    pub fn pick(&self) -> u8 {\n        1\n    }\n}\n\n\
         pub struct Tree;\n\nimpl Tree {\n    pub fn pick(&self) -> u8 {\n        2\n    }\n}\n\n\
         pub struct Pair {\n    left: Leaf,\n    right: Tree,\n}\n\n\
         pub enum Expr {\n    Literal {\n        val: String,\n        casei: bool,\n    },\n    Empty,\n}\n\n\
         pub fn bytes(e: &Expr) -> usize {\n    match *e {\n        Expr::Literal { ref val, casei } => val.as_bytes().len() + usize::from(casei),\n        Expr::Empty => 0,\n    }\n}\n\n\
         pub fn first(p: &Pair) -> u8 {\n    let Pair { left, right: _ } = p;\n    left.pick()\n}\n",
    )]);
    let lines = |container: &str, name: &str| -> Vec<u32> {
        let target =
            graph.lookup(name).into_iter().find(|&r| graph.symbol(r).container == container).expect("the definition");
        graph.references(target, 0.0).into_iter().filter(|r| r.kind == "call").map(|r| r.line).collect()
    };
    assert_eq!(lines("Input", "as_bytes"), Vec::<u32>::new());
    assert_eq!(lines("Leaf", "pick"), vec![49]);
    assert_eq!(lines("Tree", "pick"), Vec::<u32>::new());
}
