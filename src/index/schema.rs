//! The Tantivy schema of a repo's chunks: its fields and what each indexes (the flags stored
//! with a chunk, which ranking reads, are defined in `rank.rs`).

use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, FAST, STORED, STRING,
};

use super::analyzer::CODE_ANALYZER;

#[derive(Clone, Copy)]
pub(super) struct Fields {
    pub(super) path: Field,
    pub(super) path_text: Field,
    pub(super) heading: Field,
    pub(super) symbols: Field,
    /// The names a chunk defines, each whole and as written (`Serialize`, not `impl
    /// Serialize for T`): a query that is one identifier finds its definitions here.
    pub(super) defines: Field,
    /// The names a chunk re-exports (`Chunk::exported`), each whole: a one-identifier query's
    /// answer where no chunk defines the name.
    pub(super) exports: Field,
    pub(super) body: Field,
    /// The prose of a code chunk's comments, code examples left out.
    pub(super) docs: Field,
    pub(super) language: Field,
    pub(super) line_start: Field,
    pub(super) line_end: Field,
    pub(super) chunk_hash: Field,
    /// Links a chunk to its vector (arroy item id) and pending embedding.
    pub(super) chunk_id: Field,
    /// `repo`, `web` or `library` (indexed: searches filter by it).
    pub(super) source: Field,
    /// Library chunks: the library's name (indexed: `--lib` filters by it) and version.
    pub(super) library: Field,
    pub(super) library_version: Field,
    /// Web chunks: the page title and when it was fetched (unix seconds).
    pub(super) title: Field,
    pub(super) fetched_at: Field,
    /// A PDF chunk's page (1-based); absent elsewhere.
    pub(super) page: Field,
    /// `FLAG_*` bits, a fast field: what ranking needs to know of a chunk without loading it.
    pub(super) flags: Field,
}

/// The words of a code chunk's comments and docstrings, without their markers and without
/// the code examples inside them (which mention every API they use).
pub(super) fn comment_prose(text: &str) -> String {
    let mut prose = String::new();
    let (mut in_docstring, mut in_fence) = (false, false);
    for line in text.lines().map(str::trim) {
        let quotes = line.matches("\"\"\"").count() + line.matches("'''").count();
        let comment = ["///", "//!", "//", "/**", "/*", "*", "#"]
            .iter()
            .find_map(|marker| line.strip_prefix(marker))
            .filter(|_| !line.starts_with("#[") && !line.starts_with("#!["));
        let words = if in_docstring || quotes > 0 { Some(line) } else { comment };
        if quotes % 2 == 1 {
            in_docstring = !in_docstring;
        }
        let Some(words) = words else { continue };
        let words = words.trim();
        if words.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            prose.push_str(words);
            prose.push('\n');
        }
    }
    prose
}

pub(super) fn build_schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    // Frequencies without positions: ranking needs term frequencies, and nothing runs
    // phrase queries, so positions would only cost space and indexing time.
    let indexing =
        TextFieldIndexing::default().set_tokenizer(CODE_ANALYZER).set_index_option(IndexRecordOption::WithFreqs);
    let text = TextOptions::default().set_indexing_options(indexing);
    let stored_text = text.clone().set_stored();
    let fields = Fields {
        // Fast too: the hybrid fusion ranks files, and reads each candidate's file from here.
        path: builder.add_text_field("path", STRING | STORED | FAST),
        path_text: builder.add_text_field("path_text", text.clone()),
        heading: builder.add_text_field("heading", stored_text.clone()),
        symbols: builder.add_text_field("symbols", text.clone()),
        defines: builder.add_text_field("defines", STRING),
        exports: builder.add_text_field("exports", STRING),
        body: builder.add_text_field("body", stored_text),
        docs: builder.add_text_field("docs", text),
        // Stored, not indexed: nothing searches by them, and every indexed field costs a term
        // dictionary per segment (64-hex-digit hashes make a large one).
        language: builder.add_text_field("language", STORED),
        line_start: builder.add_u64_field("line_start", NumericOptions::default().set_stored()),
        line_end: builder.add_u64_field("line_end", NumericOptions::default().set_stored()),
        chunk_hash: builder.add_text_field("chunk_hash", STORED),
        chunk_id: builder.add_u64_field("chunk_id", NumericOptions::default().set_indexed().set_stored()),
        source: builder.add_text_field("source", STRING | STORED),
        library: builder.add_text_field("library", STRING | STORED),
        library_version: builder.add_text_field("library_version", STORED),
        title: builder.add_text_field("title", STORED),
        fetched_at: builder.add_u64_field("fetched_at", NumericOptions::default().set_stored()),
        page: builder.add_u64_field("page", NumericOptions::default().set_stored()),
        flags: builder.add_u64_field("flags", NumericOptions::default().set_fast()),
    };
    (builder.build(), fields)
}
