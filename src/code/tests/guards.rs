//! Rust code that runs only once something turned it on: a test reaches it only where it
//! also runs what turns it on.

use std::collections::HashMap;

use super::resolution::daemon_walk_limits;
use crate::code::dependents::{add_implied_seeds, drop_tests_a_guard_keeps_off, walk, Seed};
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
    add_implied_seeds(graph, &mut seeds);
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

const NESTED: &str = "pub struct Config {
    compact: bool,
}

impl Config {
    pub fn new() -> Config {
        Config { compact: false }
    }

    pub fn compacted(mut self, on: bool) -> Config {
        self.compact = on;
        self
    }
}

pub struct Out {
    config: Config,
    range: Option<u8>,
}

impl Out {
    pub fn new(config: Config) -> Out {
        Out { config, range: None }
    }

    fn compact(&self) -> bool {
        self.config.compact
    }

    fn ranged(&mut self) {
        self.range = Some(1);
    }

    pub fn start(&mut self) {
        if self.compact() {
            self.ranged();
        }
    }

    pub fn field(&mut self) {
        if let Some(r) = self.range {
            number(r);
        }
    }
}

fn number(_r: u8) {}
";

/// ron's `self.range` is filled only by `Compound::new_range`, called under `if
/// self.compact_ranges()`, a flag's reader (named after the flag) that a config's builder
/// turns on: code under `if let Some(r) = self.range` runs in the tests that turn that flag
/// on, the guard on the way to what turns the first one on met as well.
#[test]
fn a_guard_on_the_way_to_what_turns_a_guard_on_counts_too() {
    let test = |body: &str| {
        format!("use semver::{{Config, Out}};\n\n#[test]\nfn t() {{\n    {body}\n    o.start();\n    o.field();\n}}\n")
    };
    let files = [
        ("src/lib.rs".to_string(), NESTED.to_string()),
        ("tests/plain.rs".to_string(), test("let mut o = Out::new(Config::new());")),
        ("tests/compact.rs".to_string(), test("let mut o = Out::new(Config::new().compacted(true));")),
    ];
    let files = files.into_iter().map(|(path, text)| (path, extract(Language::Rust, &text).unwrap())).collect();
    let configs = HashMap::from([("Cargo.toml".to_string(), "[package]\nname = \"semver\"\n".to_string())]);
    let graph = CodeGraph::build(files, &configs);
    assert_eq!(test_files_reaching(&graph, "field"), ["tests/compact.rs", "tests/plain.rs"]);
    assert_eq!(test_files_reaching(&graph, "number"), ["tests/compact.rs"]);
}
