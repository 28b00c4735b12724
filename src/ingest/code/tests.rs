use crate::ingest::{chunk_file, ChunkParams, Language};

thread_local! {
    /// Skeleton parses on this thread that met a syntax error and fell back to a full one.
    pub(super) static SKELETON_FALLBACKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn headings(language: Language, text: &str, params: ChunkParams) -> Vec<(String, u64, u64)> {
    chunk_file(language, text, params).into_iter().map(|c| (c.heading, c.line_start, c.line_end)).collect()
}

fn small() -> ChunkParams {
    ChunkParams { max_lines: 12, target_lines: 8, max_chars: 12_000 }
}

#[test]
fn nested_and_garbage_input_never_panics_or_overflows() {
    use crate::ingest::chunk_file;
    let params = ChunkParams { max_lines: 20, target_lines: 10, max_chars: 4000 };
    // A macro in a macro in a macro, 5000 deep, with an item at the bottom.
    let mut nested_macros = String::new();
    for _ in 0..5000 {
        nested_macros.push_str("m! {\n");
    }
    nested_macros.push_str("pub fn bottom() {}\n");
    for _ in 0..5000 {
        nested_macros.push_str("}\n");
    }
    let chunks = chunk_file(Language::Rust, &nested_macros, params);
    assert!(!chunks.is_empty());
    // Thousands of nested blocks in one long function.
    let deep = format!("fn deep() {{\n{}\n{}\n}}\n", "if x {\n".repeat(3000), "}\n".repeat(3000));
    assert!(!chunk_file(Language::Rust, &deep, params).is_empty());
    // Arbitrary bytes in every language.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..40 {
        let text: String = (0..2000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let alphabet = b"{}()[]<>;:,.fn pub mod impl class def if\n\t\"'/*#!m";
                alphabet[(seed % alphabet.len() as u64) as usize] as char
            })
            .collect();
        for language in [
            Language::Rust,
            Language::Python,
            Language::TypeScript,
            Language::Tsx,
            Language::JavaScript,
            Language::Go,
            Language::Markdown,
        ] {
            let chunks = chunk_file(language, &text, params);
            assert!(chunks.iter().all(|c| c.line_start <= c.line_end), "round {round}");
        }
    }
}

#[test]
fn rust_items_with_doc_comments_and_big_impls() {
    let src = r#"use std::fmt;

/// Adds two numbers.
#[inline]
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub struct Counter {
    value: u64,
}

impl Counter {
    /// Creates a counter.
    pub fn new() -> Self {
        Counter { value: 0 }
    }

    /// Bumps it.
    pub fn bump(&mut self) {
        self.value += 1;
        self.value += 0;
        self.value += 0;
        self.value += 0;
    }
}
"#;
    let got = headings(Language::Rust, src, small());
    assert_eq!(
        got,
        vec![
            ("add".to_string(), 1, 7),
            ("Counter".to_string(), 9, 11),
            ("impl Counter".to_string(), 13, 13),
            ("impl Counter > new".to_string(), 14, 17),
            ("impl Counter > bump".to_string(), 19, 25),
        ]
    );
    let chunks = chunk_file(Language::Rust, src, small());
    assert!(chunks[0].text.starts_with("use std::fmt;"));
    assert!(chunks[0].text.contains("/// Adds two numbers."));
    assert_eq!(chunks[0].symbols, vec!["add".to_string()]);
}

#[test]
fn python_classes_and_decorated_functions() {
    let src = "import os\n\n\n@cache\ndef load(path):\n    return open(path).read()\n\n\nclass Store:\n    \"\"\"A store.\"\"\"\n\n    def get(self, key):\n        return self.data[key]\n\n    def put(self, key, value):\n        self.data[key] = value\n        return None\n";
    let chunks = chunk_file(Language::Python, src, ChunkParams { max_lines: 8, target_lines: 4, max_chars: 12_000 });
    let got: Vec<(&str, u64, u64)> = chunks.iter().map(|c| (c.heading.as_str(), c.line_start, c.line_end)).collect();
    assert_eq!(
        got,
        vec![("", 1, 1), ("load", 4, 6), ("Store", 9, 9), ("class Store > get", 10, 13), ("class Store > put", 15, 17),]
    );
}

#[test]
fn typescript_exports_classes_and_arrow_functions() {
    let src = "import { x } from './x';\n\nexport const double = (n: number): number => n * 2;\n\nexport interface Shape {\n  area(): number;\n}\n\nexport class Circle implements Shape {\n  constructor(private r: number) {}\n\n  area(): number {\n    return Math.PI * this.r * this.r;\n  }\n}\n";
    let chunks =
        chunk_file(Language::TypeScript, src, ChunkParams { max_lines: 40, target_lines: 2, max_chars: 12_000 });
    let names: Vec<Vec<String>> = chunks.iter().map(|c| c.symbols.clone()).collect();
    assert_eq!(names[1], vec!["double".to_string()]);
    assert_eq!(names[2], vec!["Shape".to_string(), "area".to_string()]);
    assert_eq!(names[3], vec!["Circle".to_string(), "constructor".to_string(), "area".to_string()]);
    assert_eq!((chunks[3].line_start, chunks[3].line_end), (9, 15));
}

/// Rust sources to compare skeleton and full parses on: this crate's, tokio's (a
/// dependency, so cargo has fetched it), or every file under `DOCDEX_SKELETON_CORPUS`.
fn rust_corpus() -> Vec<std::path::PathBuf> {
    let mut roots = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")];
    if let Some(corpus) = std::env::var_os("DOCDEX_SKELETON_CORPUS") {
        roots = vec![corpus.into()];
    } else {
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")));
        let registries = cargo_home.map(|h| h.join("registry/src")).and_then(|d| std::fs::read_dir(d).ok());
        for registry in registries.into_iter().flatten().flatten() {
            for krate in std::fs::read_dir(registry.path()).into_iter().flatten().flatten() {
                if krate.file_name().to_string_lossy().starts_with("tokio-1.") {
                    roots.push(krate.path());
                }
            }
        }
    }
    let mut files = Vec::new();
    while let Some(dir) = roots.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                roots.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn skeleton_parse_chunks_rust_exactly_like_a_full_parse() {
    use super::{chunk_code_with, Parse};
    let files = rust_corpus();
    let minimum = if std::env::var_os("DOCDEX_SKELETON_CORPUS").is_some() { 1 } else { 20 };
    assert!(files.len() >= minimum, "too few Rust files to compare: {}", files.len());
    let mut compared = 0;
    SKELETON_FALLBACKS.with(|n| n.set(0));
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        for params in [ChunkParams::default(), small()] {
            let full = chunk_code_with(Language::Rust, &text, &lines, params, Parse::Full);
            let skeleton = chunk_code_with(Language::Rust, &text, &lines, params, Parse::Skeleton);
            if skeleton != full {
                let (skeleton, full) = (skeleton.unwrap_or_default(), full.unwrap_or_default());
                let at = skeleton.iter().zip(&full).position(|(a, b)| a != b).unwrap_or(full.len().min(skeleton.len()));
                panic!(
                    "{} with {params:?}: chunk {at} differs: skeleton {:?}, full {:?}",
                    path.display(),
                    skeleton.get(at),
                    full.get(at)
                );
            }
        }
        compared += 1;
    }
    assert!(compared >= minimum);
    // A fallback to a full parse compares a full parse with itself: the comparison only
    // means something if nearly every file really was parsed as a skeleton.
    let fallbacks = SKELETON_FALLBACKS.with(|n| n.get());
    assert!(fallbacks * 100 <= compared * 2, "{fallbacks} of {} parses fell back to a full parse", compared * 2);
}

#[test]
fn skeleton_parse_survives_what_fools_a_lexical_pass() {
    use super::{chunk_code_with, Parse};
    // Braces and comment markers inside strings, chars and block comments; a block in a
    // signature; raw identifiers; comment-only bodies; a file ending in comments.
    let src = r####"//! Crate docs.
const S: &str = "
// not a comment line
{";
const Q: char = '"';
/* block
// inside a block comment
{ */
pub fn generic<const N: usize>() -> [u8; { N }] where [(); { N }]: Sized { [0; N] }
fn r#fn(r#type: u8) -> u8 { let b = b"}"; let c = '}'; r#type }
pub fn tricky() -> impl Fn() -> u8 { || { 1 } }
impl S {
    // only comments here
    // and here
}
extern "C" {
    // fn hidden();
}
macro_rules! m { ($x:ident) => { fn $x() { /* { */ } }; }
cfg_demo! {
    // leading comment in a macro body
    pub fn in_macro() -> u8 { 2 }
}
// trailing
// comments"####;
    let lines: Vec<&str> = src.lines().collect();
    for params in [ChunkParams::default(), small(), ChunkParams { max_lines: 3, target_lines: 2, max_chars: 12_000 }] {
        let full = chunk_code_with(Language::Rust, src, &lines, params, Parse::Full);
        let skeleton = chunk_code_with(Language::Rust, src, &lines, params, Parse::Skeleton);
        assert_eq!(skeleton, full, "{params:?}");
    }
}

#[test]
fn long_functions_are_still_opened_up_under_a_skeleton_parse() {
    let body: String = (0..10).map(|i| format!("    let v{i} = {i};\n")).collect();
    let src = format!("/// Doc.\npub fn long() {{\n{body}}}\n\nfn short() {{ 1 }}\n");
    let got = headings(Language::Rust, &src, small());
    let expected = [("long", 1, 2), ("pub fn long()", 3, 10), ("pub fn long()", 11, 12), ("short", 15, 15)];
    assert_eq!(got, expected.map(|(h, a, b)| (h.to_string(), a, b)));
}

#[test]
fn unparseable_languages_fall_back_to_windows() {
    let src = (1..=100).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
    let chunks = chunk_file(Language::OtherCode("sql"), &src, ChunkParams::default());
    assert_eq!(chunks.len(), 3);
    assert_eq!((chunks[0].line_start, chunks[2].line_end), (1, 100));
}

/// A long class inside a long module or namespace (Ruby's `module Rack; class Lint`, a C++
/// namespace's class) is opened up in turn: a chunk holding its first line defines its name,
/// as a top-level class's does, so a query naming it finds its definition.
#[test]
fn a_long_class_inside_a_long_container_defines_its_name() {
    let methods = |open: &str, close: &str| (0..8).map(|i| format!("{open}{i}{close}")).collect::<Vec<_>>().join("\n");
    let cases = [
        (
            Language::Ruby,
            format!(
                "module Rack\n  class Lint\n{}\n  end\nend\n",
                methods("    def check_", "(env)\n      env.fetch(:a)\n      env.fetch(:b)\n    end\n")
            ),
        ),
        (
            Language::Php,
            format!(
                "<?php\nnamespace App;\n\nclass Lint\n{{\n{}\n}}\n",
                methods("    public function check", "($env)\n    {\n        return $env;\n    }\n")
            ),
        ),
        (
            Language::Cpp,
            format!(
                "namespace app {{\nclass Lint {{\n public:\n{}\n}};\n}}\n",
                methods("  int check", "(int env) {\n    int a = env;\n    return a;\n  }\n")
            ),
        ),
        (
            Language::CSharp,
            format!(
                "namespace App\n{{\n    public class Lint\n    {{\n{}\n    }}\n}}\n",
                methods("        public int Check", "(int env)\n        {\n            return env;\n        }\n")
            ),
        ),
        (
            Language::Java,
            format!(
                "package app;\n\npublic class Outer {{\n  public static class Lint {{\n{}\n  }}\n}}\n",
                methods("    int check", "(int env) {\n      int a = env;\n      return a;\n    }\n")
            ),
        ),
        (
            Language::Elixir,
            format!(
                "defmodule App do\n  defmodule Lint do\n{}\n  end\nend\n",
                methods("    def check_", "(env) do\n      a = env\n      a\n    end\n")
            ),
        ),
        (
            Language::TypeScript,
            format!(
                "export namespace App {{\n  export class Lint {{\n{}\n  }}\n}}\n",
                methods("    check", "(env: number): number {\n      const a = env;\n      return a;\n    }\n")
            ),
        ),
        (
            Language::Python,
            format!(
                "class Outer:\n    class Lint:\n{}\n",
                methods("        def check_", "(self, env):\n            a = env\n            return a\n")
            ),
        ),
    ];
    let mut missing = Vec::new();
    for (language, src) in &cases {
        let chunks = chunk_file(*language, src, small());
        if !chunks.iter().any(|c| c.symbols.iter().any(|s| s == "Lint")) {
            let got: Vec<_> = chunks.iter().map(|c| (c.line_start, c.line_end, c.symbols.clone())).collect();
            missing.push(format!("{language:?}: {got:?}"));
        }
    }
    assert!(missing.is_empty(), "no chunk defines Lint:\n{}", missing.join("\n"));
}

#[test]
fn a_licence_notice_is_in_no_chunk_and_the_code_after_it_is() {
    let java = "/*\n * Copyright 2008 Google Inc.\n *\n * Licensed under the Apache License, Version 2.0 (the \"License\");\n \
                * you may not use this file except in compliance with the License.\n */\n\npackage com.google.gson;\n\n\
                /**\n * Converts Java objects to and from JSON.\n */\npublic final class Gson {\n  public String toJson(Object src) {\n    \
                return \"\";\n  }\n}\n";
    let chunks = chunk_file(Language::Java, java, ChunkParams::default());
    assert!(chunks.iter().all(|c| c.line_start >= 8 && !c.text.contains("Licensed")), "{chunks:#?}");
    assert_eq!(chunks.first().map(|c| c.line_start), Some(8), "{chunks:#?}");
    assert!(
        chunks.iter().any(|c| c.text.contains("Converts Java objects") && c.text.contains("class Gson")),
        "{chunks:#?}"
    );
    // A file that is its notice and nothing else has nothing to search.
    assert!(chunk_file(Language::Go, "// Copyright 2020 The Authors. All rights reserved.\n", ChunkParams::default())
        .is_empty());
}
