//! A repo's full-text index (Tantivy, under `index/`) and metadata store (LMDB, under
//! `meta.lmdb/`), with the search and write primitives the actors use.
//!
//! Crash consistency: a batch is committed to Tantivy first, then its file records (content
//! hashes) to LMDB. A kill between the two leaves files whose records are stale, so the next
//! run re-indexes them (delete by path, then add): no duplicates, nothing lost.

pub mod analyzer;
pub mod concepts;
pub mod dag;
pub mod models;
pub mod store;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::directory::error::LockError;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value, FAST, STORED, STRING,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, TantivyError, Term,
};

use crate::ingest::Chunk;
use crate::protocol::{
    ChunkContent, DocdexError, ErrorCode, HitExplain, HitSource, RankedBy, Result, SearchHit, SearchMode,
};
use analyzer::{analyze, code_analyzer, CODE_ANALYZER};
use concepts::{ExpandedConcept, Expansion};
pub use store::{FileRecord, IndexRunState, LibraryRecord, MemoryRecord, RepoStore, WebPageRecord};

/// What the code analyzer, the chunker and the schema produce, as a number: bump it when any
/// of them changes what an index holds, so indexes built before are rebuilt (reported)
/// instead of silently mismatching new queries.
pub const INDEX_FORMAT_VERSION: u32 = 8;

/// Empties an index for a rebuild under its writer lock (another process writing it is an
/// error, not a race). Records go first: a kill before the files are removed leaves a state
/// the next open repairs the same way. The run state keeps `reason` until a run completes.
fn wipe_index(store: &RepoStore, index_dir: &Path, reason: &str) -> Result<()> {
    use tantivy::directory::{Directory, INDEX_WRITER_LOCK};
    let directory = MmapDirectory::open(index_dir)
        .map_err(|err| DocdexError::internal(format!("cannot open index at {}: {err}", index_dir.display())))?;
    let _lock = directory.acquire_lock(&INDEX_WRITER_LOCK).map_err(|_| {
        DocdexError::new(
            ErrorCode::IndexLocked,
            format!("{} is being written by another docdexd process", index_dir.display()),
        )
        .with_hint("stop the other process, then retry: the index needs a rebuild")
    })?;
    let mut wtxn = store.write_txn()?;
    store.forget_chunks(&mut wtxn)?;
    let state = IndexRunState { rebuild_reason: Some(reason.to_string()), ..store.run_state(&wtxn)? };
    store.put_run_state(&mut wtxn, &state)?;
    wtxn.commit()?;
    for entry in std::fs::read_dir(index_dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with(".tantivy-") && name.ends_with(".lock") {
            continue;
        }
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Field boosts: a query word that names an item or a heading says more than one in a body.
const BOOST_SYMBOLS: f32 = 2.5;
const BOOST_HEADING: f32 = 1.5;
const BOOST_PATH: f32 = 1.0;
const BOOST_BODY: f32 = 1.0;
/// A word in a code chunk's comment prose (doc comments, docstrings, notes; code examples
/// left out) weighs more than the same word in its code: the prose says what the code is for
/// in the words a question uses, while code and examples mention every API they touch. 1.6
/// chosen on the tune splits among 1.15 / 1.3 / 1.6 / 2.0 (see ARCHITECTURE.md, Ranking).
const BOOST_DOCS: f32 = 1.6;
/// Share of the non-best fields' scores a term keeps (BM25F-like, without double counting).
const DISMAX_TIE_BREAKER: f32 = 0.3;
/// Score multiplier for tests, benches and examples: they mention every API they exercise,
/// but the definition or the guide is usually the better answer.
const SECONDARY_PATH_PRIOR: f32 = 0.6;
/// Score multiplier for the code of files that define no documented public item (runtime
/// plumbing, private helpers, vendored mocks): they share a question's words ("task",
/// "wait") with the API that answers it but are rarely the answer. Chosen on the tune splits
/// (0.6-0.8 measured alike; tokio paraphrases dense success@5 0.48 -> 0.60, hybrid 0.68 ->
/// 0.72; rich unchanged). Not applied to questions about how something works, whose answer
/// is that plumbing (`asks_how_it_works`; blind tokio behaviour tune split hybrid success@5
/// 0.60 -> 0.75).
const INTERNAL_PRIOR: f32 = 0.75;
/// Multi-word queries favour code chunks that contain more of the words: code repeats its
/// identifiers so often that BM25 alone lets one frequent word (`runtime`) outweigh several
/// rarer ones. Prose is left to plain BM25, which measured better on it (Vaswani MAP 0.289
/// without the factor, 0.275 with it).
const COVERAGE_EXPONENT: f32 = 1.0;
/// Dense neighbours less similar than this are unrelated text (MiniLM puts unrelated pairs
/// near 0): not hits.
const DENSE_MIN_SIMILARITY: f32 = 0.1;

/// Confidence calibration, chosen with `docdexd eval-gate` on the tune split of
/// `benches/gate-questions.tsv` (tokio: questions it answers vs questions it cannot) so that
/// the default `web_trigger_threshold` of 0.7 sits where each ranking separates them best:
/// a best BM25 score of about 23 (`1 - exp(-23 / 19) = 0.70`; with 10, the questions tokio
/// cannot answer scored 0.72-0.92 on common words and the gate missed 9 of 11 on the test
/// split) and a best cosine of about 0.44 (MiniLM puts unrelated questions at 0.18-0.41 and
/// answerable ones at 0.47-0.77). Hybrid takes the larger of the two, so identifier lookups,
/// which embed weakly (`RecvError`: cosine 0.39) but match strongly by name, stay local.
const LEXICAL_CONFIDENCE_SCALE: f32 = 19.0;
const DENSE_CONFIDENCE_SCALE: f32 = 0.365;
/// Lines in a snippet.
const SNIPPET_LINES: usize = 3;
const SNIPPET_LINE_CHARS: usize = 200;

#[derive(Clone, Copy)]
struct Fields {
    path: Field,
    path_text: Field,
    heading: Field,
    symbols: Field,
    body: Field,
    /// The prose of a code chunk's comments, code examples left out.
    docs: Field,
    language: Field,
    line_start: Field,
    line_end: Field,
    chunk_hash: Field,
    /// Links a chunk to its vector (arroy item id) and pending embedding.
    chunk_id: Field,
    /// `repo`, `web` or `library` (indexed: searches filter by it).
    source: Field,
    /// Library chunks: the library's name (indexed: `--lib` filters by it) and version.
    library: Field,
    library_version: Field,
    /// Web chunks: the page title and when it was fetched (unix seconds).
    title: Field,
    fetched_at: Field,
    /// `FLAG_*` bits, a fast field: what ranking needs to know of a chunk without loading it.
    flags: Field,
}

/// Prose (Markdown, text, web pages): ranked by plain BM25, without the coverage factor.
const FLAG_PROSE: u64 = 1;
/// Tests, benches, examples, changelogs (see `path_prior`).
const FLAG_SECONDARY: u64 = 4;
/// Code of a file without documented public items (see `ingest::FileSummary`).
const FLAG_INTERNAL: u64 = 8;
/// A library's docs (`libs fetch`) and a fetched web page: where a chunk came from, read by
/// the dense filter without loading documents.
const FLAG_LIBRARY: u64 = 16;
const FLAG_WEB: u64 = 32;

fn chunk_flags(path: &str, language: &str, internal: bool) -> u64 {
    let mut flags = 0;
    if internal {
        flags |= FLAG_INTERNAL;
    }
    if is_prose(language) {
        flags |= FLAG_PROSE;
    }
    if path_prior(path) < 1.0 {
        flags |= FLAG_SECONDARY;
    }
    flags
}

/// The words of a code chunk's comments and docstrings, without their markers and without
/// the code examples inside them (which mention every API they use).
fn comment_prose(text: &str) -> String {
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

fn build_schema() -> (Schema, Fields) {
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
        flags: builder.add_u64_field("flags", NumericOptions::default().set_fast()),
    };
    (builder.build(), fields)
}

/// Ranked hits plus the best score, before the dispatcher adds timing.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    pub hits: Vec<SearchHit>,
    pub top_score: f32,
}

/// Search knobs that come from config rather than from the request.
#[derive(Debug, Clone, Copy)]
pub struct SearchParams {
    pub limit: usize,
    pub max_hits_per_file: usize,
    pub fusion: FusionParams,
    /// Nodes arroy inspects per dense query (0: arroy's default, `n_trees * count`).
    pub dense_search_k: usize,
    /// Weight of the programming terms a plain-words query's phrases add (`concepts.txt`)
    /// relative to the query's own words; 0 turns expansion off.
    pub concept_weight: f32,
    /// Places a file's second and later hits move down (see `render`).
    pub repeat_hit_delay: usize,
}

impl SearchParams {
    pub fn new(limit: usize, max_hits_per_file: usize) -> SearchParams {
        SearchParams {
            limit,
            max_hits_per_file,
            fusion: FusionParams::default(),
            dense_search_k: 0,
            concept_weight: crate::config::DEFAULT_CONCEPT_WEIGHT,
            repeat_hit_delay: crate::config::DEFAULT_REPEAT_HIT_DELAY,
        }
    }
}

pub struct RepoIndex {
    pub root: PathBuf,
    pub fingerprint: String,
    pub state_dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    pub store: RepoStore,
}

impl RepoIndex {
    /// Opens (creating if needed) the repo's Tantivy index and LMDB store under `state_dir`.
    pub fn open(root: &Path, fingerprint: &str, state_dir: &Path) -> Result<RepoIndex> {
        RepoIndex::open_with(root, fingerprint, state_dir, crate::config::DEFAULT_MAP_BYTES)
    }

    /// Opens with an LMDB map of `map_bytes` (`[index] lmdb_map_bytes`).
    pub fn open_with(root: &Path, fingerprint: &str, state_dir: &Path, map_bytes: usize) -> Result<RepoIndex> {
        let index_dir = state_dir.join("index");
        std::fs::create_dir_all(&index_dir)?;
        let (schema, fields) = build_schema();
        let store = RepoStore::open_with(&state_dir.join("meta.lmdb"), map_bytes)?;
        let unreadable =
            |err: TantivyError| {
                DocdexError::internal(format!("index at {} is unreadable: {err}", index_dir.display())).with_hint(
                    format!("delete {} and run `docdexd index --repo {}`", state_dir.display(), root.display()),
                )
            };
        let open_dir = || {
            MmapDirectory::open(&index_dir)
                .map_err(|err| DocdexError::internal(format!("cannot open index at {}: {err}", index_dir.display())))
        };
        let rebuild = |why: &str| -> Result<Index> {
            tracing::warn!(repo = %root.display(), "{why}; the index is emptied and the next index run rebuilds it");
            wipe_index(&store, &index_dir, why)?;
            Index::open_or_create(open_dir()?, schema.clone()).map_err(unreadable)
        };
        let index = match Index::open_or_create(open_dir()?, schema.clone()) {
            // Written by a docdex with another index layout.
            Err(TantivyError::SchemaError(_)) => rebuild("the index was written by another docdex version")?,
            Err(err) => return Err(unreadable(err)),
            Ok(index) => {
                let state = store.run_state(&store.read_txn()?)?;
                if state.indexed() && state.format_version != INDEX_FORMAT_VERSION {
                    drop(index);
                    rebuild(&format!(
                        "the index was built by an analyzer/chunker of format {} (this docdex writes {INDEX_FORMAT_VERSION})",
                        state.format_version
                    ))?
                } else {
                    index
                }
            }
        };
        index.tokenizers().register(CODE_ANALYZER, code_analyzer());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::OnCommitWithDelay).try_into()?;
        Ok(RepoIndex {
            root: root.to_path_buf(),
            fingerprint: fingerprint.to_string(),
            state_dir: state_dir.to_path_buf(),
            index,
            reader,
            fields,
            analyzer: code_analyzer(),
            store,
        })
    }

    /// The repo's single writer. Another process holding it is a user-facing error.
    pub fn writer(&self, heap_bytes: usize) -> Result<IndexWriter> {
        // One indexing thread: the other core is busy reading and chunking files.
        self.index.writer_with_num_threads(1, heap_bytes.max(15_000_000)).map_err(|err| match err {
            TantivyError::LockFailure(LockError::LockBusy, _) => DocdexError::new(
                ErrorCode::IndexLocked,
                format!("the index of {} is being written by another docdexd process", self.root.display()),
            )
            .with_hint("wait for it to finish, or stop the other `docdexd daemon`/`index` process"),
            other => other.into(),
        })
    }

    /// Replaces a file's chunks (delete by path, then add), uncommitted. `chunk_ids` pairs
    /// with `chunks`.
    pub fn replace_file(
        &self,
        writer: &IndexWriter,
        path: &str,
        language: &str,
        chunks: &[Chunk],
        chunk_ids: &[u32],
    ) -> Result<()> {
        let f = self.fields;
        writer.delete_term(Term::from_field_text(f.path, path));
        for (chunk, &chunk_id) in chunks.iter().zip(chunk_ids) {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, path);
            doc.add_text(f.path_text, path);
            doc.add_text(f.heading, &chunk.heading);
            doc.add_text(f.symbols, chunk.symbols.join(" "));
            doc.add_text(f.body, &chunk.text);
            if !is_prose(language) {
                doc.add_text(f.docs, comment_prose(&chunk.text));
            }
            doc.add_text(f.language, language);
            doc.add_u64(f.line_start, chunk.line_start);
            doc.add_u64(f.line_end, chunk.line_end);
            doc.add_text(f.chunk_hash, &chunk.content_hash);
            doc.add_u64(f.chunk_id, u64::from(chunk_id));
            doc.add_text(f.source, SOURCE_REPO);
            doc.add_u64(f.flags, chunk_flags(path, language, chunk.internal));
            writer.add_document(doc)?;
        }
        Ok(())
    }

    /// Replaces a web page's chunks (its URL is their path), uncommitted.
    pub fn replace_web_page(
        &self,
        writer: &IndexWriter,
        page: &WebPageDoc,
        chunks: &[Chunk],
        chunk_ids: &[u32],
    ) -> Result<()> {
        let f = self.fields;
        writer.delete_term(Term::from_field_text(f.path, &page.url));
        for (chunk, &chunk_id) in chunks.iter().zip(chunk_ids) {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, &page.url);
            doc.add_text(f.path_text, &page.url);
            let heading = if chunk.heading.is_empty() {
                page.title.clone()
            } else {
                format!("{} > {}", page.title, chunk.heading)
            };
            doc.add_text(f.heading, &heading);
            doc.add_text(f.symbols, chunk.symbols.join(" "));
            doc.add_text(f.body, &chunk.text);
            doc.add_text(f.language, "markdown");
            doc.add_u64(f.line_start, chunk.line_start);
            doc.add_u64(f.line_end, chunk.line_end);
            doc.add_text(f.chunk_hash, &chunk.content_hash);
            doc.add_u64(f.chunk_id, u64::from(chunk_id));
            doc.add_text(f.source, SOURCE_WEB);
            doc.add_text(f.title, &page.title);
            doc.add_u64(f.fetched_at, page.fetched_at);
            doc.add_u64(f.flags, chunk_flags(&page.url, "markdown", false) | FLAG_WEB);
            writer.add_document(doc)?;
        }
        Ok(())
    }

    /// Replaces one doc file of a library (`path` is `<ecosystem>:<name>@<version>/<file>`),
    /// uncommitted.
    pub fn replace_library_doc(
        &self,
        writer: &IndexWriter,
        library: &LibraryDoc,
        chunks: &[Chunk],
        chunk_ids: &[u32],
    ) -> Result<()> {
        let f = self.fields;
        writer.delete_term(Term::from_field_text(f.path, &library.path));
        for (chunk, &chunk_id) in chunks.iter().zip(chunk_ids) {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, &library.path);
            doc.add_text(f.path_text, &library.path);
            doc.add_text(f.heading, &chunk.heading);
            doc.add_text(f.symbols, chunk.symbols.join(" "));
            doc.add_text(f.body, &chunk.text);
            doc.add_text(f.language, &library.language);
            doc.add_u64(f.line_start, chunk.line_start);
            doc.add_u64(f.line_end, chunk.line_end);
            doc.add_text(f.chunk_hash, &chunk.content_hash);
            doc.add_u64(f.chunk_id, u64::from(chunk_id));
            doc.add_text(f.source, SOURCE_LIBRARY);
            doc.add_text(f.library, &library.name);
            doc.add_text(f.library_version, &library.version);
            // A library's examples are secondary like the repo's; its docs are not internal.
            doc.add_u64(f.flags, chunk_flags(&library.path, &library.language, false) | FLAG_LIBRARY);
            writer.add_document(doc)?;
        }
        Ok(())
    }

    pub fn delete_file(&self, writer: &IndexWriter, path: &str) {
        writer.delete_term(Term::from_field_text(self.fields.path, path));
    }

    /// Makes the last commit visible to searches in this process right away.
    pub fn reload(&self) -> Result<()> {
        Ok(self.reader.reload()?)
    }

    /// The largest chunk id in the index (deleted documents not yet merged away included,
    /// which only makes it a safer high-water mark): the last term of `chunk_id` in each
    /// segment's term dictionary.
    pub fn max_chunk_id(&self) -> Result<Option<u32>> {
        let searcher = self.reader.searcher();
        let mut max: Option<u64> = None;
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.chunk_id)?;
            let mut terms = inverted.terms().stream()?;
            let mut last: Option<Vec<u8>> = None;
            while terms.advance() {
                last = Some(terms.key().to_vec());
            }
            if let Some(bytes) = last.filter(|b| b.len() == 8) {
                let value = u64::from_be_bytes(bytes.try_into().expect("8 bytes"));
                max = Some(max.map_or(value, |m| m.max(value)));
            }
        }
        Ok(max.map(|v| u32::try_from(v).unwrap_or(u32::MAX)))
    }

    pub fn num_chunks(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Bytes on disk of the Tantivy index and the LMDB store.
    pub fn size_on_disk(&self) -> u64 {
        dir_size(&self.state_dir)
    }

    /// Lexical search restricted to the chunks of the given paths (web pages by URL): how the
    /// waterfall ranks the pages it just fetched against the question.
    pub fn search_paths(&self, query_text: &str, paths: &[String], params: SearchParams) -> Result<SearchOutcome> {
        let searcher = self.reader.searcher();
        let mut analyzer = self.analyzer.clone();
        let terms = query_terms(&mut analyzer, query_text);
        let depth = candidate_depth(params);
        let lexical = self.lexical_candidates_in(
            &searcher,
            &terms,
            &Expansion::default(),
            0.0,
            depth,
            Some(paths),
            &SearchFilter::default(),
            internal_prior_for(query_text),
        )?;
        let top_score = lexical.first().map(|c| lexical_confidence(c.score)).unwrap_or(0.0);
        let ranked = with_ranks(lexical, Source::Lexical);
        let hits = self.render(&searcher, ranked, &terms, &mut analyzer, params, false)?;
        Ok(SearchOutcome { top_score: if hits.is_empty() { 0.0 } else { top_score }, hits })
    }

    /// Lexical search: BM25 over body, symbols, headings and path, collapsing
    /// near-duplicates. (Kept as the one-call API for callers without a query vector.)
    pub fn search(&self, query_text: &str, params: SearchParams) -> Result<SearchOutcome> {
        self.search_with(query_text, None, SearchMode::Lexical, params, false)
    }

    /// Searches in `mode`; `query_vector_opt` is required for dense and hybrid (without it
    /// they return nothing).
    pub fn search_with(
        &self,
        query_text: &str,
        query_vector_opt: Option<&[f32]>,
        mode: SearchMode,
        params: SearchParams,
        explain: bool,
    ) -> Result<SearchOutcome> {
        self.search_filtered(query_text, query_vector_opt, mode, params, explain, &SearchFilter::default())
    }

    /// `search_with` among the chunks `filter` admits (a source, a library).
    pub fn search_filtered(
        &self,
        query_text: &str,
        query_vector_opt: Option<&[f32]>,
        mode: SearchMode,
        params: SearchParams,
        explain: bool,
        filter: &SearchFilter,
    ) -> Result<SearchOutcome> {
        let searcher = self.reader.searcher();
        let mut analyzer = self.analyzer.clone();
        let terms = query_terms(&mut analyzer, query_text);
        let depth = candidate_depth(params);
        let internal_prior = internal_prior_for(query_text);
        let lexical = if mode == SearchMode::Dense {
            Vec::new()
        } else {
            let expansion = if params.concept_weight > 0.0 {
                concepts::expand(query_text, &terms, &mut analyzer)
            } else {
                Expansion::default()
            };
            self.lexical_candidates(
                &searcher,
                &terms,
                &expansion,
                params.concept_weight,
                depth,
                filter,
                internal_prior,
            )?
        };
        let dense = match (mode, query_vector_opt) {
            (SearchMode::Lexical, _) | (_, None) => Vec::new(),
            (_, Some(vector)) => {
                self.dense_candidates(&searcher, vector, depth, params.dense_search_k, filter, internal_prior)?
            }
        };
        let lexical_confidence = lexical.first().map(|c| lexical_confidence(c.score)).unwrap_or(0.0);
        let dense_confidence = dense.first().map(|c| dense_confidence(c.score)).unwrap_or(0.0);
        let (ranked, top_score) = match mode {
            SearchMode::Lexical => (with_ranks(lexical, Source::Lexical), lexical_confidence),
            SearchMode::Dense => (with_ranks(dense, Source::Dense), dense_confidence),
            SearchMode::Hybrid => {
                let addresses: Vec<DocAddress> = lexical.iter().chain(&dense).map(|c| c.address).collect();
                let mut lexical_files = self.files_of(&searcher, &addresses)?;
                let dense_files = lexical_files.split_off(lexical.len());
                let fused = fuse(
                    Ranking { candidates: lexical, files: lexical_files, weight: params.fusion.lexical_weight },
                    Ranking { candidates: dense, files: dense_files, weight: params.fusion.dense_weight },
                    params,
                );
                (fused, lexical_confidence.max(dense_confidence))
            }
        };
        // The fusion already placed each file's later hits.
        let params = if mode == SearchMode::Hybrid { SearchParams { repeat_hit_delay: 0, ..params } } else { params };
        let hits = self.render(&searcher, ranked, &terms, &mut analyzer, params, explain)?;
        let top_score = if hits.is_empty() { 0.0 } else { top_score };
        Ok(SearchOutcome { hits, top_score })
    }

    /// BM25 candidates, rescored by term coverage and path prior.
    #[allow(clippy::too_many_arguments)]
    fn lexical_candidates(
        &self,
        searcher: &Searcher,
        terms: &[String],
        expansion: &Expansion,
        concept_weight: f32,
        depth: usize,
        filter: &SearchFilter,
        internal_prior: f32,
    ) -> Result<Vec<Candidate>> {
        self.lexical_candidates_in(searcher, terms, expansion, concept_weight, depth, None, filter, internal_prior)
    }

    /// BM25 candidates, optionally only among chunks of `paths_opt`. The expansion's
    /// concepts each add the best of their terms at `concept_weight`.
    #[allow(clippy::too_many_arguments)]
    fn lexical_candidates_in(
        &self,
        searcher: &Searcher,
        terms: &[String],
        expansion: &Expansion,
        concept_weight: f32,
        depth: usize,
        paths_opt: Option<&[String]>,
        filter: &SearchFilter,
        internal_prior: f32,
    ) -> Result<Vec<Candidate>> {
        if terms.is_empty() || paths_opt.is_some_and(|p| p.is_empty()) {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let weighted = [
            (f.symbols, BOOST_SYMBOLS),
            (f.heading, BOOST_HEADING),
            (f.path_text, BOOST_PATH),
            (f.body, BOOST_BODY),
            (f.docs, BOOST_DOCS),
        ];
        let term_query = |term: &str| -> Box<dyn Query> {
            let per_field: Vec<Box<dyn Query>> = weighted
                .iter()
                .map(|&(field, boost)| {
                    let q = TermQuery::new(Term::from_field_text(field, term), IndexRecordOption::WithFreqs);
                    Box::new(BoostQuery::new(Box::new(q), boost)) as Box<dyn Query>
                })
                .collect();
            Box::new(DisjunctionMaxQuery::with_tie_breaker(per_field, DISMAX_TIE_BREAKER))
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            terms.iter().map(|term| (Occur::Should, term_query(term))).collect();
        if concept_weight > 0.0 {
            for concept in &expansion.concepts {
                // A concept's terms name one idea: the best of them counts, not their sum.
                let any: Vec<Box<dyn Query>> = concept.terms.iter().map(|t| term_query(t)).collect();
                let best = DisjunctionMaxQuery::with_tie_breaker(any, 0.0);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(best), concept_weight))));
            }
        }
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        if let Some(paths) = paths_opt {
            let allowed: Vec<(Occur, Box<dyn Query>)> = paths
                .iter()
                .map(|p| {
                    let q = TermQuery::new(Term::from_field_text(f.path, p), IndexRecordOption::Basic);
                    (Occur::Should, Box::new(q) as Box<dyn Query>)
                })
                .collect();
            // The path filter must not add to the score: boosted to zero.
            let filter = BoostQuery::new(Box::new(BooleanQuery::new(allowed)), 0.0);
            query = Box::new(BooleanQuery::new(vec![(Occur::Must, query), (Occur::Must, Box::new(filter))]));
        }
        // Source and library filters are terms too (scoring nothing): the candidates are
        // drawn from the admitted chunks only, so a filtered search is as deep as any.
        let mut required: Vec<Term> = Vec::new();
        if let Some(library) = &filter.library_opt {
            required.push(Term::from_field_text(f.library, library));
        } else if let Some(source) = filter.source_opt {
            required.push(Term::from_field_text(f.source, source_name(source)));
        }
        for term in required {
            let only = BoostQuery::new(Box::new(TermQuery::new(term, IndexRecordOption::Basic)), 0.0);
            query = Box::new(BooleanQuery::new(vec![(Occur::Must, query), (Occur::Must, Box::new(only))]));
        }
        let top = searcher.search(&*query, &TopDocs::with_limit(depth).order_by_score())?;
        let addresses: Vec<DocAddress> = top.iter().map(|&(_, address)| address).collect();
        let flags = self.flags_of(searcher, &addresses)?;
        let concepts: &[ExpandedConcept] = if concept_weight > 0.0 { &expansion.concepts } else { &[] };
        let present = if terms.len() > 1 {
            // Concept terms are looked up with the query's own: a chunk that has one counts
            // the words that called for the concept as matched.
            let mut all_terms = terms.to_vec();
            for term in concepts.iter().flat_map(|c| c.terms.iter()) {
                if !all_terms.contains(term) {
                    all_terms.push(term.clone());
                }
            }
            self.terms_present(searcher, &all_terms, &addresses)?
                .into_iter()
                .map(|found| matched_query_terms(terms, &all_terms, concepts, &found))
                .collect()
        } else {
            Vec::new()
        };
        let mut candidates = Vec::with_capacity(top.len());
        for (i, (score, address)) in top.into_iter().enumerate() {
            let coverage = if terms.len() > 1 && flags[i] & FLAG_PROSE == 0 {
                present[i] as f32 / terms.len() as f32
            } else {
                1.0
            };
            let score = score * flags_prior(flags[i], internal_prior) * coverage.powf(COVERAGE_EXPONENT);
            candidates.push(Candidate { address, score, doc_opt: None });
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(candidates)
    }

    /// The file of each address, as an id per distinct path (across segments), read from
    /// the `path` fast field: no stored document is loaded. Each segment's paths are looked
    /// up in one pass over its dictionary, in ordinal order.
    fn files_of(&self, searcher: &Searcher, addresses: &[DocAddress]) -> Result<Vec<u32>> {
        let mut ords_by_segment: HashMap<u32, Vec<(u64, usize)>> = HashMap::new();
        let mut files = vec![u32::MAX; addresses.len()];
        for (i, address) in addresses.iter().enumerate() {
            ords_by_segment.entry(address.segment_ord).or_default().push((u64::from(address.doc_id), i));
        }
        let mut ids: HashMap<Vec<u8>, u32> = HashMap::new();
        for (segment_ord, mut docs) in ords_by_segment {
            let column = searcher
                .segment_reader(segment_ord)
                .fast_fields()
                .str("path")?
                .ok_or_else(|| DocdexError::internal("the index has no path column"))?;
            // Document ids become path ordinals, then the ordinals are read in order.
            for (doc_or_ord, _) in docs.iter_mut() {
                *doc_or_ord = column.ords().first(*doc_or_ord as u32).unwrap_or(u64::MAX);
            }
            docs.sort_unstable();
            let ords: Vec<u64> = docs.iter().map(|&(ord, _)| ord).filter(|&ord| ord != u64::MAX).collect();
            let mut looked_up: Vec<u32> = Vec::with_capacity(ords.len());
            column.dictionary().sorted_ords_to_term_cb(&ords, |path| {
                let next = ids.len() as u32;
                looked_up.push(*ids.entry(path.to_vec()).or_insert(next));
            })?;
            for (&(_, i), &file) in docs.iter().zip(&looked_up) {
                files[i] = file;
            }
        }
        Ok(files)
    }

    /// Each address's `flags` fast field.
    fn flags_of(&self, searcher: &Searcher, addresses: &[DocAddress]) -> Result<Vec<u64>> {
        let mut columns = HashMap::new();
        addresses
            .iter()
            .map(|address| {
                let column =
                    match columns.entry(address.segment_ord) {
                        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                        std::collections::hash_map::Entry::Vacant(e) => {
                            e.insert(searcher.segment_reader(address.segment_ord).fast_fields().u64("flags").map_err(
                                |err| DocdexError::internal(format!("the index has no flags column: {err}")),
                            )?)
                        }
                    };
                Ok(column.first(address.doc_id).unwrap_or(0))
            })
            .collect()
    }

    /// Which of `terms` (by index) each address's chunk contains (in its path, heading,
    /// names or body), read from the postings: no stored document is loaded or re-analyzed.
    fn terms_present(
        &self,
        searcher: &Searcher,
        terms: &[String],
        addresses: &[DocAddress],
    ) -> Result<Vec<HashSet<usize>>> {
        use tantivy::{DocSet, TERMINATED};
        let f = self.fields;
        let mut present: HashMap<DocAddress, HashSet<usize>> = HashMap::new();
        let mut segments: Vec<u32> = addresses.iter().map(|a| a.segment_ord).collect();
        segments.sort_unstable();
        segments.dedup();
        for segment_ord in segments {
            let mut docs: Vec<u32> =
                addresses.iter().filter(|a| a.segment_ord == segment_ord).map(|a| a.doc_id).collect();
            docs.sort_unstable();
            let segment = searcher.segment_reader(segment_ord);
            for field in [f.path_text, f.heading, f.symbols, f.body] {
                let inverted = segment.inverted_index(field)?;
                for (t, term) in terms.iter().enumerate() {
                    let Some(mut postings) =
                        inverted.read_postings(&Term::from_field_text(field, term), IndexRecordOption::Basic)?
                    else {
                        continue;
                    };
                    for &doc in &docs {
                        let mut current = postings.doc();
                        if current < doc {
                            current = postings.seek(doc);
                        }
                        if current == TERMINATED {
                            break;
                        }
                        if current == doc {
                            present.entry(DocAddress::new(segment_ord, doc)).or_default().insert(t);
                        }
                    }
                }
            }
        }
        Ok(addresses.iter().map(|a| present.remove(a).unwrap_or_default()).collect())
    }

    /// Live documents containing `term` (a library's chunks: bounded by one library's docs).
    fn docs_with(&self, searcher: &Searcher, term: Term) -> Result<HashSet<DocAddress>> {
        use tantivy::{DocSet, TERMINATED};
        let mut out = HashSet::new();
        for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(term.field())?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? else { continue };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if segment.alive_bitset().is_none_or(|alive| alive.is_alive(doc)) {
                    out.insert(DocAddress::new(segment_ord as u32, doc));
                }
                doc = postings.advance();
            }
        }
        Ok(out)
    }

    /// Where a chunk id's document is (live documents only), from the postings of `chunk_id`.
    fn chunk_address(&self, searcher: &Searcher, chunk_id: u32) -> Result<Option<DocAddress>> {
        use tantivy::{DocSet, TERMINATED};
        let term = Term::from_field_u64(self.fields.chunk_id, u64::from(chunk_id));
        for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(self.fields.chunk_id)?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if segment.alive_bitset().is_none_or(|alive| alive.is_alive(doc)) {
                    return Ok(Some(DocAddress::new(segment_ord as u32, doc)));
                }
                doc = postings.advance();
            }
        }
        Ok(None)
    }

    /// The stored document of a chunk, if the index still has it.
    fn chunk_doc(&self, searcher: &Searcher, chunk_id: u32) -> Result<Option<(DocAddress, TantivyDocument)>> {
        match self.chunk_address(searcher, chunk_id)? {
            Some(address) => Ok(Some((address, searcher.doc(address)?))),
            None => Ok(None),
        }
    }

    /// What to embed for each chunk (see `embedding_input`), read back from the index; `None`
    /// for a chunk the index no longer has.
    pub fn embedding_inputs(&self, chunk_ids: &[u32]) -> Result<Vec<(u32, Option<String>)>> {
        let searcher = self.reader.searcher();
        let f = self.fields;
        chunk_ids
            .iter()
            .map(|&id| {
                let input = self.chunk_doc(&searcher, id)?.map(|(_, doc)| {
                    let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("");
                    embedding_input(text_of(f.path), text_of(f.heading), text_of(f.body))
                });
                Ok((id, input))
            })
            .collect()
    }

    fn dense_candidates(
        &self,
        searcher: &Searcher,
        vector: &[f32],
        depth: usize,
        search_k: usize,
        filter: &SearchFilter,
        internal_prior: f32,
    ) -> Result<Vec<Candidate>> {
        // A filtered search looks further (the nearest chunks may be of another source), then
        // keeps what the filter admits.
        let (count, search_k) =
            if filter.is_empty() { (depth, search_k) } else { (depth * 4, search_k.saturating_mul(4)) };
        let nearest = {
            let rtxn = self.store.read_txn()?;
            self.store.nearest_chunks(&rtxn, vector, count, search_k)?
        };
        let library_docs = match &filter.library_opt {
            Some(library) => Some(self.docs_with(searcher, Term::from_field_text(self.fields.library, library))?),
            None => None,
        };
        let mut found = Vec::with_capacity(nearest.len());
        for (chunk_id, similarity) in nearest.into_iter().filter(|&(_, s)| s >= DENSE_MIN_SIMILARITY) {
            // A vector whose chunk is gone (deleted since) simply has no doc.
            if let Some(address) = self.chunk_address(searcher, chunk_id)? {
                if library_docs.as_ref().is_none_or(|docs| docs.contains(&address)) {
                    found.push((address, similarity));
                }
            }
        }
        let addresses: Vec<DocAddress> = found.iter().map(|&(address, _)| address).collect();
        let flags = self.flags_of(searcher, &addresses)?;
        let mut candidates = Vec::with_capacity(found.len());
        for ((address, similarity), flags) in found.into_iter().zip(flags) {
            if !filter.admits_flags(flags) {
                continue;
            }
            // Tests and examples rank lower here too (the explain output keeps the plain
            // similarity as the score).
            let rank_key = similarity * flags_prior(flags, internal_prior);
            candidates.push((rank_key, Candidate { address, score: similarity, doc_opt: None }));
        }
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(candidates.into_iter().map(|(_, c)| c).collect())
    }

    /// Turns ranked candidates into hits: at most `max_hits_per_file` per file, identical
    /// texts once, with snippets. A file's n-th hit (n from 0) is placed as if ranked
    /// `n * repeat_hit_delay` places lower, so the first places go to distinct files.
    fn render(
        &self,
        searcher: &Searcher,
        ranked: Vec<RankedCandidate>,
        terms: &[String],
        analyzer: &mut TextAnalyzer,
        params: SearchParams,
        explain: bool,
    ) -> Result<Vec<SearchHit>> {
        let f = self.fields;
        let query_terms: HashSet<&str> = terms.iter().map(String::as_str).collect();
        let mut per_file: HashMap<String, usize> = HashMap::new();
        let mut seen_hashes: HashSet<String> = HashSet::new();
        // Repeat hits waiting for their place, sorted by place (ties in ranked order).
        let mut waiting: std::collections::VecDeque<(usize, SearchHit)> = std::collections::VecDeque::new();
        let mut hits = Vec::new();
        for (position, candidate) in ranked.into_iter().enumerate() {
            while hits.len() < params.limit && waiting.front().is_some_and(|(place, _)| *place <= position) {
                hits.extend(waiting.pop_front().map(|(_, hit)| hit));
            }
            if hits.len() >= params.limit {
                break;
            }
            let doc = match candidate.doc_opt {
                Some(doc) => doc,
                None => searcher.doc(candidate.address)?,
            };
            let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let path = text_of(f.path);
            // The same text twice (vendored copies, generated twins) is one answer.
            if !seen_hashes.insert(text_of(f.chunk_hash)) {
                continue;
            }
            let count = per_file.entry(path.clone()).or_default();
            if *count >= params.max_hits_per_file.max(1) {
                continue;
            }
            let place = position + *count * params.repeat_hit_delay;
            *count += 1;
            let body = text_of(f.body);
            let source = hit_source(&text_of(f.source));
            let is_web = source == HitSource::Web;
            let is_library = source == HitSource::Library;
            let hit = SearchHit {
                path,
                line_start: doc.get_first(f.line_start).and_then(|v| v.as_u64()).unwrap_or(0),
                line_end: doc.get_first(f.line_end).and_then(|v| v.as_u64()).unwrap_or(0),
                score: candidate.score,
                snippet: best_snippet(&body, &query_terms, analyzer),
                heading: text_of(f.heading),
                language: text_of(f.language),
                source,
                library: is_library.then(|| text_of(f.library)),
                version: is_library.then(|| text_of(f.library_version)),
                url: is_web.then(|| text_of(f.path)),
                title: is_web.then(|| text_of(f.title)),
                fetched_at: is_web.then(|| {
                    crate::protocol::time::format_unix(
                        doc.get_first(f.fetched_at).and_then(|v| v.as_u64()).unwrap_or(0),
                    )
                }),
                explain: explain.then_some(candidate.explain),
                chunk_id: doc.get_first(f.chunk_id).and_then(|v| v.as_u64()).map(|id| id as u32),
            };
            if place == position {
                hits.push(hit);
            } else {
                // After the waiting hits of an earlier or equal place: ties keep ranked order.
                let at = waiting.partition_point(|(waiting_place, _)| *waiting_place <= place);
                waiting.insert(at, (place, hit));
            }
        }
        // Fewer distinct files than the limit: the repeats fill the page in their order.
        hits.extend(waiting.into_iter().map(|(_, hit)| hit).take(params.limit.saturating_sub(hits.len())));
        Ok(hits)
    }

    /// One chunk by id (as search hits give it), if the index still has it.
    pub fn chunk(&self, chunk_id: u32) -> Result<Option<ChunkContent>> {
        let searcher = self.reader.searcher();
        let f = self.fields;
        Ok(self.chunk_doc(&searcher, chunk_id)?.map(|(_, doc)| {
            let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let number = |field: Field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            ChunkContent {
                chunk_id,
                path: text_of(f.path),
                line_start: number(f.line_start),
                line_end: number(f.line_end),
                heading: text_of(f.heading),
                language: text_of(f.language),
                source: hit_source(&text_of(f.source)),
                text: text_of(f.body),
            }
        }))
    }
}

const SOURCE_REPO: &str = "repo";
const SOURCE_WEB: &str = "web";
const SOURCE_LIBRARY: &str = "library";

/// One doc file of a library as the index stores it.
#[derive(Debug, Clone)]
pub struct LibraryDoc {
    pub name: String,
    pub version: String,
    pub path: String,
    pub language: String,
}

/// Which chunks a search considers: by where they came from, and one library by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchFilter {
    /// `None`: every source.
    pub source_opt: Option<HitSource>,
    pub library_opt: Option<String>,
}

impl SearchFilter {
    pub fn is_empty(&self) -> bool {
        self.source_opt.is_none() && self.library_opt.is_none()
    }

    /// Whether a chunk with these flags may be returned (the library name is checked
    /// separately, from the postings).
    fn admits_flags(&self, flags: u64) -> bool {
        let source = if flags & FLAG_LIBRARY != 0 {
            HitSource::Library
        } else if flags & FLAG_WEB != 0 {
            HitSource::Web
        } else {
            HitSource::Repo
        };
        let wanted = if self.library_opt.is_some() { Some(HitSource::Library) } else { self.source_opt };
        wanted.is_none_or(|w| w == source)
    }
}

fn source_name(source: HitSource) -> &'static str {
    match source {
        HitSource::Repo => SOURCE_REPO,
        HitSource::Web => SOURCE_WEB,
        HitSource::Library => SOURCE_LIBRARY,
    }
}

fn hit_source(source: &str) -> HitSource {
    match source {
        SOURCE_WEB => HitSource::Web,
        SOURCE_LIBRARY => HitSource::Library,
        _ => HitSource::Repo,
    }
}

/// What a web page's chunks carry besides their text.
#[derive(Debug, Clone)]
pub struct WebPageDoc {
    pub url: String,
    pub title: String,
    /// Unix seconds.
    pub fetched_at: u64,
}

/// Most of what the embedding model sees of a chunk (it truncates at 256 tokens anyway).
const EMBEDDING_INPUT_CHARS: usize = 2000;

/// The text embedded for a chunk: where it is (path, heading path) and what it says.
/// (Putting a code chunk's comments first, markers and examples stripped, measured no better:
/// tokio paraphrases dense success@5 0.60 either way, hybrid 0.72 -> 0.68.)
pub fn embedding_input(path: &str, heading: &str, text: &str) -> String {
    let mut input = String::with_capacity(EMBEDDING_INPUT_CHARS.min(path.len() + heading.len() + text.len() + 2));
    input.push_str(path);
    if !heading.is_empty() {
        input.push_str(" > ");
        input.push_str(heading);
    }
    input.push('\n');
    input.push_str(text);
    if input.len() > EMBEDDING_INPUT_CHARS {
        let mut cut = EMBEDDING_INPUT_CHARS;
        while !input.is_char_boundary(cut) {
            cut -= 1;
        }
        input.truncate(cut);
    }
    input
}

/// Candidates each ranking contributes: deep enough that collapsing per file and fusion
/// still fill the page, bounded so evaluation runs (limit 1000) do not load thousands of
/// extra docs.
pub fn candidate_depth(params: SearchParams) -> usize {
    params.limit + params.limit.min(50) * (params.max_hits_per_file.max(1) + 2) + 10
}

/// How many of the query's own `terms` a chunk matched, given the indices into `all_terms`
/// (the query's terms, then the concepts') it contains: a word that called for a concept
/// counts when the chunk has one of the concept's terms.
fn matched_query_terms(
    terms: &[String],
    all_terms: &[String],
    concepts: &[ExpandedConcept],
    found: &HashSet<usize>,
) -> usize {
    let has = |term: &String| all_terms.iter().position(|t| t == term).is_some_and(|i| found.contains(&i));
    let credited: HashSet<&String> =
        concepts.iter().filter(|c| c.terms.iter().any(has)).flat_map(|c| c.covers.iter()).collect();
    terms.iter().enumerate().filter(|&(i, term)| found.contains(&i) || credited.contains(term)).count()
}

/// Distinct analyzed terms of a query, in order.
fn query_terms(analyzer: &mut TextAnalyzer, query_text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for term in analyze(analyzer, query_text) {
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    terms
}

/// Maps an unbounded lexical score to 0–1: 0.41 at 10, 0.70 at 23, 0.88 at 40.
fn lexical_confidence(score: f32) -> f32 {
    1.0 - (-score / LEXICAL_CONFIDENCE_SCALE).exp()
}

/// Maps a cosine similarity to 0–1: 0.39 at 0.18, 0.70 at 0.44, 0.88 at 0.77.
fn dense_confidence(similarity: f32) -> f32 {
    1.0 - (-similarity.max(0.0) / DENSE_CONFIDENCE_SCALE).exp()
}

/// A chunk found by one ranking.
struct Candidate {
    address: DocAddress,
    score: f32,
    /// Already loaded (lexical rescoring reads the doc), else loaded when rendered.
    doc_opt: Option<TantivyDocument>,
}

/// A candidate in the final order, with how each ranking placed it.
struct RankedCandidate {
    address: DocAddress,
    score: f32,
    doc_opt: Option<TantivyDocument>,
    explain: HitExplain,
}

#[derive(Clone, Copy)]
enum Source {
    Lexical,
    Dense,
}

fn with_ranks(candidates: Vec<Candidate>, source: Source) -> Vec<RankedCandidate> {
    candidates
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let ranked_by = Some(RankedBy { rank: i + 1, score: c.score });
            let explain = match source {
                Source::Lexical => HitExplain { lexical: ranked_by, dense: None },
                Source::Dense => HitExplain { lexical: None, dense: ranked_by },
            };
            RankedCandidate { address: c.address, score: c.score, doc_opt: c.doc_opt, explain }
        })
        .collect()
}

/// Reciprocal Rank Fusion parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionParams {
    pub k: f32,
    pub lexical_weight: f32,
    pub dense_weight: f32,
}

impl Default for FusionParams {
    fn default() -> Self {
        FusionParams { k: 3.0, lexical_weight: 1.0, dense_weight: 1.0 }
    }
}

/// A file in the fusion: its fused score, and its place in the lexical and in the dense
/// order of files (MAX: not found there).
struct FileRank {
    score: f32,
    places: [usize; 2],
}

/// One ranking's candidates, best first, with the file of each.
struct Ranking {
    candidates: Vec<Candidate>,
    files: Vec<u32>,
    weight: f32,
}

/// Hybrid fusion. Files are ranked by RRF over each ranking's order of files (a file's place
/// is where its first chunk appears): the two rankings often find different chunks of the
/// right file, which chunk-level RRF scores as two half-hits and ranks below a chunk both
/// found at middling ranks. Within a file, chunks keep their chunk-level RRF order; a file's
/// n-th chunk is placed `n * repeat_hit_delay` files later, as `render` does for one ranking.
/// A hit's score is its file's fused score.
fn fuse(lexical: Ranking, dense: Ranking, params: SearchParams) -> Vec<RankedCandidate> {
    let k = params.fusion.k;
    let mut by_address: HashMap<DocAddress, (RankedCandidate, u32)> = HashMap::new();
    let mut files: HashMap<u32, FileRank> = HashMap::new();
    for (source, ranking) in [(Source::Lexical, lexical), (Source::Dense, dense)] {
        let mut files_seen: HashSet<u32> = HashSet::new();
        for (i, (candidate, file)) in ranking.candidates.into_iter().zip(ranking.files).enumerate() {
            let rank = i + 1;
            if files_seen.insert(file) {
                let place = files_seen.len();
                let rank_of_file = files.entry(file).or_insert(FileRank { score: 0.0, places: [usize::MAX; 2] });
                rank_of_file.score += ranking.weight / (k + place as f32);
                rank_of_file.places[source as usize] = place;
            }
            let (entry, _) = by_address.entry(candidate.address).or_insert_with(|| {
                let ranked = RankedCandidate {
                    address: candidate.address,
                    score: 0.0,
                    doc_opt: None,
                    explain: HitExplain::default(),
                };
                (ranked, file)
            });
            entry.score += ranking.weight / (k + rank as f32);
            let ranked_by = Some(RankedBy { rank, score: candidate.score });
            match source {
                Source::Lexical => entry.explain.lexical = ranked_by,
                Source::Dense => entry.explain.dense = ranked_by,
            }
            if entry.doc_opt.is_none() {
                entry.doc_opt = candidate.doc_opt;
            }
        }
    }
    // Best file first (of two equal, the one lexical search placed higher: its evidence is
    // the more exact); within a file, best chunk first.
    let mut chunks: Vec<(RankedCandidate, u32)> = by_address.into_values().collect();
    chunks.sort_by(|(a, file_a), (b, file_b)| {
        files[file_b]
            .score
            .total_cmp(&files[file_a].score)
            .then(files[file_a].places.cmp(&files[file_b].places))
            .then(b.score.total_cmp(&a.score))
            .then(a.address.cmp(&b.address))
    });
    let mut file_index: HashMap<u32, (usize, usize)> = HashMap::new();
    let mut placed: Vec<(usize, bool, RankedCandidate)> = Vec::with_capacity(chunks.len());
    for (mut candidate, file) in chunks {
        let files_so_far = file_index.len();
        let (index, count) = file_index.entry(file).or_insert((files_so_far, 0));
        let (index, nth) = (*index, *count);
        *count += 1;
        if nth < params.max_hits_per_file.max(1) {
            candidate.score = files[&file].score;
            placed.push((index + nth * params.repeat_hit_delay, nth == 0, candidate));
        }
    }
    // A repeat placed at a first hit's place goes before it, as in `render`.
    placed.sort_by_key(|&(place, first, _)| (place, first));
    placed.into_iter().map(|(_, _, candidate)| candidate).collect()
}

/// Documents and plain text, as opposed to code.
fn is_prose(language: &str) -> bool {
    matches!(language, "markdown" | "text")
}

/// The path prior of a chunk from its flags.
fn flags_prior(flags: u64, internal_prior: f32) -> f32 {
    let mut prior = 1.0;
    if flags & FLAG_SECONDARY != 0 {
        prior *= SECONDARY_PATH_PRIOR;
    }
    if flags & FLAG_INTERNAL != 0 {
        prior *= internal_prior;
    }
    prior
}

/// The weight of internal code for a question: none lost when it asks how something works.
fn internal_prior_for(query_text: &str) -> f32 {
    if asks_how_it_works(query_text) {
        1.0
    } else {
        INTERNAL_PRIOR
    }
}

/// Whether a question asks how something works ("how does …", "what happens when …",
/// "why …", "can writers starve readers …") rather than for something to use ("how do I …",
/// "read a file", "can I …"): the answer to the first is often the internal code the other
/// kind should rank lower. 137 of the 145 such questions in `benches/` are recognised, and
/// none of the 238 others ("how can …" is a request, whoever the subject: "how can many
/// readers see the latest value").
pub fn asks_how_it_works(query_text: &str) -> bool {
    let words: Vec<String> = query_text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let asker = |w: &str| matches!(w, "i" | "you" | "we");
    let anywhere = (0..words.len()).any(|i| match word(i) {
        "how" => {
            matches!(word(i + 1), "does" | "do" | "is" | "are" | "did" | "was" | "were" | "often")
                && !asker(word(i + 2))
        }
        "what" => matches!(word(i + 1), "happens" | "decides" | "determines" | "causes"),
        "why" => true,
        _ => false,
    });
    anywhere
        || match word(0) {
            "is" | "are" | "does" | "do" | "can" | "could" | "will" | "would" | "did" => {
                !asker(word(1)) && word(1) != "there"
            }
            "when" | "where" => matches!(word(1), "does" | "do" | "is" | "are"),
            _ => false,
        }
}

/// How much a path's hits count: 1 for primary sources and docs, less for test code.
pub fn path_prior(path: &str) -> f32 {
    let lower = path.to_ascii_lowercase();
    let mut components = lower.split('/');
    let file = components.next_back().unwrap_or("");
    let secondary_dir = components.any(|c| {
        matches!(
            c,
            "tests" | "test" | "benches" | "bench" | "examples" | "testdata" | "fixtures" | "__tests__" | "spec"
        )
    });
    let stem = file.split('.').next().unwrap_or("");
    // Release notes name every item that ever changed, in the words of its change.
    let changelog = matches!(stem, "changelog" | "changes" | "history" | "news" | "releases" | "release-notes");
    let secondary_file = changelog
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || file.contains(".test.")
        || file.contains(".spec.");
    if secondary_dir || secondary_file {
        SECONDARY_PATH_PRIOR
    } else {
        1.0
    }
}

/// The few consecutive lines of a chunk that hold the most distinct query terms.
fn best_snippet(body: &str, query_terms: &HashSet<&str>, analyzer: &mut TextAnalyzer) -> String {
    let lines: Vec<&str> = body.lines().collect();
    let line_terms: Vec<HashSet<String>> = lines
        .iter()
        .map(|line| analyze(analyzer, line).into_iter().filter(|t| query_terms.contains(t.as_str())).collect())
        .collect();
    let mut best = (0usize, 0usize);
    for start in 0..lines.len() {
        let end = (start + SNIPPET_LINES).min(lines.len());
        let distinct: HashSet<&String> = line_terms[start..end].iter().flatten().collect();
        let weight = distinct.len() * 4 + line_terms[start..end].iter().map(HashSet::len).sum::<usize>();
        if weight > best.1 {
            best = (start, weight);
        }
    }
    let start = if best.1 == 0 { lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0) } else { best.0 };
    lines[start..(start + SNIPPET_LINES).min(lines.len())]
        .iter()
        .map(|line| {
            let line = line.trim_end();
            if line.chars().count() > SNIPPET_LINE_CHARS {
                let cut: String = line.chars().take(SNIPPET_LINE_CHARS).collect();
                format!("{cut}…")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn dir_size(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => dir_size(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking(chunks: &[(u32, u32)], weight: f32) -> Ranking {
        Ranking {
            candidates: chunks
                .iter()
                .map(|&(doc, _)| Candidate { address: DocAddress::new(0, doc), score: 1.0, doc_opt: None })
                .collect(),
            files: chunks.iter().map(|&(_, file)| file).collect(),
            weight,
        }
    }

    #[test]
    fn fusion_ranks_files_the_two_rankings_both_found_above_a_chunk_they_share() {
        // Files A = 0, B = 1, C = 2; chunks a1 = 10, a2 = 11, b1 = 20, c1 = 30, c2 = 31.
        // Chunk-level RRF would put b1 (found by both, 2nd and 3rd) first; as files, A
        // (1st lexically, 2nd by meaning) and C (3rd and 1st) come before B.
        let lexical = [(10, 0), (20, 1), (30, 2)];
        let dense = [(31, 2), (11, 0), (20, 1)];
        let params = SearchParams::new(10, 2);
        let docs = |fused: Vec<RankedCandidate>| fused.iter().map(|c| c.address.doc_id).collect::<Vec<_>>();
        let fused = fuse(ranking(&lexical, 1.0), ranking(&dense, 1.0), params);
        let a_score = 1.0 / (3.0 + 1.0) + 1.0 / (3.0 + 2.0);
        assert!((fused[0].score - a_score).abs() < 1e-6, "a hit's score is its file's");
        assert_eq!(fused[0].explain.lexical.map(|r| r.rank), Some(1));
        // A file's second chunk waits `repeat_hit_delay` files; here there are fewer files.
        assert_eq!(docs(fused), vec![10, 31, 20, 11, 30]);
        let one_per_file = SearchParams::new(10, 1);
        assert_eq!(docs(fuse(ranking(&lexical, 1.0), ranking(&dense, 1.0), one_per_file)), vec![10, 31, 20]);
        // Weights still count: with the dense ranking ignored, the lexical order stands.
        assert_eq!(docs(fuse(ranking(&lexical, 1.0), ranking(&dense, 0.0), one_per_file)), vec![10, 20, 30]);
    }

    #[test]
    fn an_index_with_another_layout_is_emptied_for_a_rebuild_keeping_memories() {
        let state = tempfile::tempdir().unwrap();
        let root = state.path();
        {
            // An index as an older docdex might have left it: another schema, a file record,
            // a pending embedding and a memory.
            let mut builder = Schema::builder();
            builder.add_text_field("path", STRING | STORED);
            std::fs::create_dir_all(state.path().join("index")).unwrap();
            Index::create_in_dir(state.path().join("index"), builder.build()).unwrap();
            let store = RepoStore::open(&state.path().join("meta.lmdb")).unwrap();
            let mut wtxn = store.write_txn().unwrap();
            let record = FileRecord {
                content_hash: "h".into(),
                size: 1,
                mtime_ns: 1,
                chunks: 1,
                language: "rust".into(),
                chunk_ids: vec![7],
            };
            store.put_file(&mut wtxn, "src/lib.rs", &record).unwrap();
            store.put_pending(&mut wtxn, 7).unwrap();
            let state_record = IndexRunState { last_completed: Some(1), next_chunk_id: 8, ..IndexRunState::default() };
            store.put_run_state(&mut wtxn, &state_record).unwrap();
            store.add_memory(&mut wtxn, "remember this", serde_json::json!({}), 1, None).unwrap();
            wtxn.commit().unwrap();
        }
        let index = RepoIndex::open(root, "fp", state.path()).unwrap();
        let rtxn = index.store.read_txn().unwrap();
        assert!(index.store.all_files(&rtxn).unwrap().is_empty());
        assert_eq!(index.store.pending_count(&rtxn).unwrap(), 0);
        let run = index.store.run_state(&rtxn).unwrap();
        assert!(!run.indexed(), "a rebuilt index must read as never indexed: {run:?}");
        assert_eq!(run.next_chunk_id, 8);
        assert_eq!(index.store.all_memories(&rtxn).unwrap().len(), 1);
        assert_eq!(index.num_chunks(), 0);
        drop(rtxn);
        // The new index takes documents.
        let writer = index.writer(15_000_000).unwrap();
        drop(writer);
    }

    #[test]
    fn an_index_of_another_analyzer_format_is_rebuilt() {
        let state = tempfile::tempdir().unwrap();
        {
            let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
            let mut writer = index.writer(15_000_000).unwrap();
            let chunk = crate::ingest::chunk_file(
                crate::ingest::Language::Rust,
                "pub fn old_chunk() {}\n",
                crate::ingest::ChunkParams { max_lines: 40, target_lines: 20, max_chars: 4000 },
            );
            index.replace_file(&writer, "src/lib.rs", "rust", &chunk, &[0]).unwrap();
            writer.commit().unwrap();
            let mut wtxn = index.store.write_txn().unwrap();
            // Completed by a docdex from before format versions (0).
            let old = IndexRunState { last_completed: Some(1), next_chunk_id: 1, ..IndexRunState::default() };
            index.store.put_run_state(&mut wtxn, &old).unwrap();
            wtxn.commit().unwrap();
        }
        let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
        assert_eq!(index.num_chunks(), 0, "the old chunks are gone");
        let run = index.store.run_state(&index.store.read_txn().unwrap()).unwrap();
        assert!(!run.indexed(), "{run:?}");
        assert_eq!(run.next_chunk_id, 1, "ids keep growing");
        assert!(run.rebuild_reason.as_deref().is_some_and(|why| why.contains("format 0")), "{run:?}");
        // Completed by this docdex: kept as is.
        let mut wtxn = index.store.write_txn().unwrap();
        let current = IndexRunState { last_completed: Some(2), format_version: INDEX_FORMAT_VERSION, ..run };
        index.store.put_run_state(&mut wtxn, &current).unwrap();
        wtxn.commit().unwrap();
        drop(index);
        let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
        assert!(index.store.run_state(&index.store.read_txn().unwrap()).unwrap().indexed());
    }

    #[test]
    fn a_file_s_second_hit_moves_down_by_the_repeat_delay() {
        let state = tempfile::tempdir().unwrap();
        let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
        let mut writer = index.writer(15_000_000).unwrap();
        let params = crate::ingest::ChunkParams { max_lines: 6, target_lines: 3, max_chars: 4000 };
        let files = [
            ("src/strong.rs", "/// Frobnicate the widget.\npub fn frobnicate_widget() {}\n\n\n\n\n/// Frobnicate a widget twice.\npub fn frobnicate_widget_twice() {}\n"),
            ("src/weak.rs", "/// Frobnicate.\npub fn frobnicate() {}\n"),
        ];
        for (i, (path, text)) in files.iter().enumerate() {
            let chunks = crate::ingest::chunk_file(crate::ingest::Language::Rust, text, params);
            let ids: Vec<u32> = (0..chunks.len() as u32).map(|n| 10 * i as u32 + n).collect();
            index.replace_file(&writer, path, "rust", &chunks, &ids).unwrap();
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        let paths = |delay: usize| -> Vec<String> {
            let params = SearchParams { repeat_hit_delay: delay, ..SearchParams::new(3, 2) };
            index.search("frobnicate widget", params).unwrap().hits.into_iter().map(|h| h.path).collect()
        };
        assert_eq!(paths(0), ["src/strong.rs", "src/strong.rs", "src/weak.rs"], "ranked order without a delay");
        assert_eq!(paths(10), ["src/strong.rs", "src/weak.rs", "src/strong.rs"], "other files first, then repeats");
        assert_eq!(paths(1), ["src/strong.rs", "src/strong.rs", "src/weak.rs"], "a short delay only swaps close ties");
    }

    #[test]
    fn questions_about_how_something_works_are_told_from_requests_for_an_api() {
        for question in [
            "how does the scheduler decide which task runs next",
            "what happens to queued messages when the receiver is dropped",
            "When a task panics, how is the panic reported to its joiner?",
            "why is the waker cloned",
            "is a woken task run right away",
            "can writers starve readers in the lock",
            "how often does a worker check the global queue",
        ] {
            assert!(asks_how_it_works(question), "{question}");
        }
        for question in [
            "how do I read a file into a string",
            "how can I spawn a task from another thread",
            "how can many readers see the latest value",
            "can I cancel a timer",
            "is there a way to limit concurrency",
            "how many tasks are alive",
            "pause the current task for a while",
            "JoinSet::abort_all",
            "",
        ] {
            assert!(!asks_how_it_works(question), "{question}");
        }
        assert_eq!(internal_prior_for("how does a timer fire"), 1.0);
        assert_eq!(internal_prior_for("make a timer"), INTERNAL_PRIOR);
    }

    #[test]
    fn comment_prose_keeps_the_words_and_drops_markers_code_and_examples() {
        let rust = "/// Sleeps until the deadline.\n///\n/// ```\n/// tokio::time::sleep(d).await;\n/// ```\n#[inline]\npub fn sleep(d: Duration) {\n    // Register with the timer wheel.\n    let x = 1;\n}\n";
        assert_eq!(comment_prose(rust), "Sleeps until the deadline.\n\nRegister with the timer wheel.\n");
        let python =
            "def render(self):\n    \"\"\"Render the table\n    with borders.\n    \"\"\"\n    return x  # the cells\n";
        let prose = comment_prose(python);
        assert!(prose.contains("Render the table") && prose.contains("with borders."), "{prose:?}");
        assert!(!prose.contains("return"), "{prose:?}");
    }
}
