//! Rust code that runs only once something turned it on: a test reaches it only where it
//! also runs what turns it on.

use std::collections::HashMap;

use super::resolution::daemon_walk_limits;
use crate::code::dependents::{drop_tests_a_guard_keeps_off, macro_seeds, type_seeds, walk, Seed};
use crate::code::graph::CodeGraph;
use crate::code::{extract, Language};

const LIB: &str = "pub const TOKEN: &str = \"$raw\";

pub struct Writer {
    range: Option<u8>,
    pretty: bool,
}

impl Writer {
    pub fn new() -> Writer {
        Writer { range: None, pretty: false }
    }

    pub fn ranged() -> Writer {
        Writer { range: Some(1), pretty: false }
    }

    pub fn set_pretty(&mut self, on: bool) {
        self.pretty = on;
    }

    pub fn write(&self, name: &str) {
        plain();
        if let Some(r) = self.range {
            emit_range(r);
        }
        if name == crate::TOKEN {
            emit_raw();
        }
        if !self.pretty {
            let _ = name;
            return;
        }
        indent();
    }
}

pub fn raw() {
    Writer::new().write(TOKEN)
}

fn plain() {}

fn emit_range(_r: u8) {}

fn emit_raw() {}

fn indent() {}
";

/// A crate of `LIB` and integration tests, each one `#[test]` whose body is given.
fn writer_graph(tests: &[(&str, &str)]) -> CodeGraph {
    let test = |body: &str| format!("use semver::Writer;\n\n#[test]\nfn t() {{\n    {body}\n}}\n");
    let files = std::iter::once(("src/lib.rs".to_string(), LIB.to_string()))
        .chain(tests.iter().map(|(path, body)| (path.to_string(), test(body))))
        .map(|(path, text)| (path, extract(Language::Rust, &text).unwrap()))
        .collect();
    let configs = HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"semver\"\n".to_string())]);
    CodeGraph::build(files, &configs)
}

/// The test files a walk from the function named `name` reaches and keeps, with the seeds a
/// diff adds, as the daemon answers.
fn test_files_reaching(graph: &CodeGraph, name: &str) -> Vec<String> {
    let target = graph.lookup(name)[0];
    let mut seeds = vec![Seed::plain(Some(target), name, name)];
    let more = macro_seeds(graph, &seeds);
    seeds.extend(more);
    let more = type_seeds(graph, &seeds);
    seeds.extend(more);
    let mut tests = walk(graph, &seeds, daemon_walk_limits()).tests;
    drop_tests_a_guard_keeps_off(graph, &mut tests, daemon_walk_limits());
    let mut files: Vec<String> = tests.iter().map(|t| graph.path(t.file).to_string()).collect();
    files.sort();
    files.dedup();
    files
}

/// ron's `if let Some(ref mut range) = self.range` (a field only `Compound::new_range` fills),
/// `if name == RAW_VALUE_TOKEN` (a constant only `RawValue`'s impls pass) and handlebars' `if
/// !self.dev_mode { …; return … }` (a flag only `set_dev_mode` turns on): the code under each
/// runs in the tests that run what turns it on, not in every test that reaches the function.
#[test]
fn code_a_rust_guard_keeps_off_runs_where_what_turns_it_on_runs() {
    let graph = writer_graph(&[
        ("tests/plain.rs", "Writer::new().write(\"x\");"),
        ("tests/ranged.rs", "Writer::ranged().write(\"x\");"),
        ("tests/raw.rs", "semver::raw();"),
        ("tests/pretty.rs", "let mut w = Writer::new();\n    w.set_pretty(true);\n    w.write(\"x\");"),
    ]);
    let all = ["tests/plain.rs", "tests/pretty.rs", "tests/ranged.rs", "tests/raw.rs"];
    assert_eq!(test_files_reaching(&graph, "plain"), all);
    assert_eq!(test_files_reaching(&graph, "emit_range"), ["tests/ranged.rs"]);
    assert_eq!(test_files_reaching(&graph, "emit_raw"), ["tests/raw.rs"]);
    assert_eq!(test_files_reaching(&graph, "indent"), ["tests/pretty.rs"]);
}

/// An edit inside the guarded code of a function (`emit_range(r);` in `write`'s `if let
/// Some(r) = self.range`) runs in the tests that turn the guard on; an edit of the function's
/// other lines, in every test that calls it.
#[test]
fn an_edit_inside_a_rust_guard_runs_where_what_turns_it_on_runs() {
    use crate::code::dependents::{rust_guard_over, MustName};
    let graph = writer_graph(&[
        ("tests/plain.rs", "Writer::new().write(\"x\");"),
        ("tests/ranged.rs", "Writer::ranged().write(\"x\");"),
    ]);
    let write = graph.lookup("write")[0];
    let line = |text: &str| LIB.lines().position(|l| l.trim() == text).unwrap() as u32 + 1;
    let (range_body, plain_call) = (line("emit_range(r);"), line("plain();"));
    assert!(rust_guard_over(&graph, write.0, plain_call, plain_call).is_none());
    let files_for = |key: Option<MustName>| {
        let mut seed = Seed::plain(Some(write), "write", "Writer::write");
        seed.key = key;
        let mut tests = walk(&graph, &[seed], daemon_walk_limits()).tests;
        drop_tests_a_guard_keeps_off(&graph, &mut tests, daemon_walk_limits());
        let mut files: Vec<&str> = tests.iter().map(|t| graph.path(t.file)).collect();
        files.sort();
        files
    };
    assert_eq!(files_for(None), ["tests/plain.rs", "tests/ranged.rs"]);
    let (word, ..) = rust_guard_over(&graph, write.0, range_body, range_body).unwrap();
    assert_eq!(word, "range");
    assert_eq!(files_for(Some(MustName::GuardedLines(write.0, range_body, range_body))), ["tests/ranged.rs"]);
}
