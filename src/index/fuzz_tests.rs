//! Property-based fuzzing of the two parsers that take arbitrary input: the chunker (every
//! file a walk finds, in every language) and the query path (every search string). Neither
//! may panic or overflow the stack, and the chunker's output must stay well-formed. Cases are
//! bounded so the whole module runs in well under a minute; set `PROPTEST_CASES` to fuzz
//! longer.

use proptest::prelude::*;

use crate::index::{RepoIndex, SearchParams};
use crate::ingest::{chunk_file, ChunkParams, Language};
use crate::protocol::SearchMode;

/// Every chunking path: the tree-sitter grammars, Markdown, plain text and line windows.
const LANGUAGES: [Language; 22] = {
    let mut all = [Language::Text; 22];
    let mut i = 0;
    while i < crate::ingest::lang::CODE_LANGUAGES.len() {
        all[i] = crate::ingest::lang::CODE_LANGUAGES[i];
        i += 1;
    }
    all[20] = Language::Markdown;
    all
};

fn config() -> ProptestConfig {
    // `PROPTEST_CASES` overrides; the default keeps CI to seconds.
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(96);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Fragments that stress the parsers: unbalanced delimiters, macro invocations and item
/// macros, comment and string openers, headings, fences, multi-byte and control characters.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("fn f() {".to_string()),
        Just("}".to_string()),
        Just("macro_rules! m { ($($t:tt)*) => { m!($($t)*) } }".to_string()),
        Just("m! {".to_string()),
        Just("impl T for S {".to_string()),
        Just("/* ".to_string()),
        Just("*/".to_string()),
        Just("// ".to_string()),
        Just("\"".to_string()),
        Just("r#\"".to_string()),
        Just("'".to_string()),
        Just("def f(:\n    ".to_string()),
        Just("class C {".to_string()),
        Just("func (r *R) M() {".to_string()),
        Just("defmodule A do\n  def f(x), do: x\n".to_string()),
        Just("<?php namespace A\\B; use C\\D;".to_string()),
        Just("#include \"a.h\"\n".to_string()),
        Just("module M where\nimport A.B (c)\n".to_string()),
        Just("const x = @import(\"a.zig\");".to_string()),
        Just("local m = require(\"a.b\")\n".to_string()),
        Just("import a.b.{C, D => E}\n".to_string()),
        Just("# heading".to_string()),
        Just("```".to_string()),
        Just("\n".to_string()),
        Just("\t\r\n".to_string()),
        Just("é😀\u{200b}".to_string()),
        Just("\0".to_string()),
        "[a-z_]{1,12}".prop_map(|s| s),
        any::<String>(),
    ]
}

fn document() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..120).prop_map(|parts| parts.concat())
}

/// Nested item macros and blocks far deeper than any real file: the chunker's walks into
/// them are depth-bounded.
fn deeply_nested() -> impl Strategy<Value = String> {
    (1usize..400, prop_oneof![Just("m! {\n"), Just("mod a {\n"), Just("fn f() {\n"), Just("{"), Just("(")]).prop_map(
        |(depth, opener)| {
            let closer = if opener.contains('(') { ")" } else { "}\n" };
            format!("{}pub fn leaf() {{}}\n{}", opener.repeat(depth), closer.repeat(depth))
        },
    )
}

fn params() -> impl Strategy<Value = ChunkParams> {
    (2usize..160, 1usize..60, 40usize..20_000).prop_map(|(max_lines, target, max_chars)| ChunkParams {
        max_lines,
        target_lines: target.min(max_lines),
        max_chars,
    })
}

/// What every chunking must satisfy, whatever the input.
fn check_chunks(language: Language, text: &str, params: ChunkParams) {
    let chunks = chunk_file(language, text, params);
    let lines = text.lines().count() as u64;
    for chunk in &chunks {
        assert!(chunk.line_start >= 1 && chunk.line_start <= chunk.line_end, "{chunk:?}");
        assert!(chunk.line_end <= lines, "{chunk:?} past {lines} lines");
        assert!(!chunk.text.trim().is_empty());
    }
    // The code facts of the same text: spans inside the text, uses inside their lines, and a
    // graph built from them answers without panicking.
    if let Some(code) = crate::code::extract(language, text) {
        let last = lines.max(1) as u32 + 1;
        for symbol in &code.symbols {
            assert!(symbol.line >= 1 && symbol.line <= symbol.end_line && symbol.end_line <= last, "{symbol:?}");
        }
        for occurrence in &code.occurrences {
            assert!(occurrence.line >= 1 && occurrence.line <= last, "{occurrence:?}");
            assert!(occurrence.enclosing.is_none_or(|e| (e as usize) < code.symbols.len()), "{occurrence:?}");
        }
        let files = std::collections::HashMap::from([("f".to_string(), code)]);
        let graph = crate::code::CodeGraph::build(files, &std::collections::HashMap::new());
        for r in graph.all_symbols().collect::<Vec<_>>() {
            graph.references(r, 0.0);
            graph.callers(r, 0.0);
            graph.callees(r, 0.0);
        }
        graph.impact("f", 3, 0, 10);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_chunker_takes_any_text_in_any_language(text in document(), params in params(), lang in 0..LANGUAGES.len()) {
        check_chunks(LANGUAGES[lang], &text, params);
    }

    #[test]
    fn the_chunker_takes_any_bytes_read_lossily(bytes in prop::collection::vec(any::<u8>(), 0..4096), lang in 0..LANGUAGES.len()) {
        check_chunks(LANGUAGES[lang], &String::from_utf8_lossy(&bytes), ChunkParams::default());
    }

    #[test]
    fn deep_nesting_neither_panics_nor_overflows(text in deeply_nested(), lang in 0..6usize) {
        check_chunks(LANGUAGES[lang], &text, ChunkParams::default());
    }
}

/// A small real index (Tantivy + LMDB on disk) to run fuzzed queries against.
fn query_index() -> &'static (tempfile::TempDir, RepoIndex) {
    static INDEX: std::sync::OnceLock<(tempfile::TempDir, RepoIndex)> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let index = RepoIndex::open(dir.path(), "fuzz", dir.path()).unwrap();
        let mut writer = index.writer(15_000_000).unwrap();
        let files = [
            (
                "src/lib.rs",
                Language::Rust,
                "/// Spawns a blocking task.\npub fn spawn_blocking() {}\n\npub struct JoinSet;\n",
            ),
            ("README.md", Language::Markdown, "# Usage\n\nRun the daemon, then search.\n"),
        ];
        let mut next_id = 0u32;
        for (path, language, text) in files {
            let chunks = chunk_file(language, text, ChunkParams::default());
            let ids: Vec<u32> = (next_id..next_id + chunks.len() as u32).collect();
            next_id += chunks.len() as u32;
            index.replace_file(&writer, path, language.name(), &chunks, &ids).unwrap();
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        (dir, index)
    })
}

/// Query text an agent might send, including query-syntax characters a parser could choke on.
fn query() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("spawn_blocking".to_string()),
        Just("JoinSet::new()".to_string()),
        Just("\"unbalanced".to_string()),
        Just("field:value".to_string()),
        Just("a AND OR NOT".to_string()),
        Just("+-&&||!(){}[]^~*?:\\/".to_string()),
        Just("*".to_string()),
        Just(" ".to_string()),
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_query_text_searches_without_panicking(text in query(), limit in 0usize..50, mode in 0..3usize) {
        let (_, index) = query_index();
        let vector = vec![0.05f32; 384];
        let mode = [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid][mode];
        let outcome = index
            .search_with(&text, Some(&vector), mode, SearchParams::new(limit, 3), true)
            .expect("a search of any text succeeds");
        prop_assert!(outcome.hits.len() <= limit.max(1));
        prop_assert!(outcome.top_score.is_finite());
    }
}
