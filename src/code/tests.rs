//! Extraction and resolution on the fixture repos (`tests/fixtures/code/<language>`), one
//! small project per language, each with a file that imports and calls another.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{extract, CodeGraph, FileCode};
use crate::ingest::Language;

fn fixture_root(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/code").join(name)
}

/// Reads a fixture repo the way an index run does: every file with a grammar is extracted,
/// the resolution configs are read.
pub(crate) fn load(name: &str) -> CodeGraph {
    let root = fixture_root(name);
    let mut files = HashMap::new();
    let mut configs = HashMap::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&path).unwrap();
            if super::is_resolution_config(&rel) {
                configs.insert(rel.clone(), text.clone());
            }
            if let Some(code) = extract(Language::detect(&path), &text) {
                files.insert(rel, code);
            }
        }
    }
    CodeGraph::build(files, &configs)
}

#[test]
#[ignore = "prints what the fixtures yield, for writing expectations"]
fn dump() {
    let only = std::env::var("DUMP").unwrap_or_default();
    for lang in std::fs::read_dir(fixture_root("")).unwrap() {
        let name = lang.unwrap().file_name().to_string_lossy().to_string();
        if !only.is_empty() && only != name {
            continue;
        }
        let graph = load(&name);
        println!("==== {name}");
        for r in graph.all_symbols() {
            let s = graph.info(r);
            println!(
                "  {}:{}-{} {} {} [{}] c={:?} v={} sig={:?} doc={:?}",
                s.path,
                s.line,
                s.end_line,
                s.kind,
                s.name,
                s.qualified_name,
                s.container,
                s.visibility,
                s.signature,
                s.doc
            );
        }
        for f in 0..graph.file_count() as u32 {
            let path = graph.path(f).to_string();
            let impact = graph.impact(&path, 1, 100).unwrap();
            let imports: Vec<String> = impact.imports.iter().map(|e| format!("{}({})", e.path, e.confidence)).collect();
            let unresolved: Vec<String> = impact.unresolved.iter().map(|u| u.spec.clone()).collect();
            println!("  IMPORTS {path} -> {imports:?} unresolved {unresolved:?}");
        }
        for r in graph.all_symbols() {
            let refs = graph.references(r, 0.0);
            if refs.is_empty() {
                continue;
            }
            let s = graph.info(r);
            let list: Vec<String> = refs
                .iter()
                .map(|x| format!("{}:{} {} {} {}", x.path, x.line, x.kind, x.resolution, x.confidence))
                .collect();
            println!("  REFS {} ({}:{}) <- {list:?}", s.qualified_name, s.path, s.line);
        }
    }
}

#[test]
fn file_code_round_trips_through_its_encoding() {
    let code = extract(Language::Rust, "pub fn a() { b(); }\nfn b() {}\n").unwrap();
    let back = FileCode::decode(&code.encode()).unwrap();
    assert_eq!(back, code);
}
