//! A repo's full-text index (Tantivy, under `index/`) and metadata store (LMDB, under
//! `meta.lmdb/`), with the search and write primitives the actors use.
//!
//! Crash consistency: a batch is committed to Tantivy first, then its file records (content
//! hashes) to LMDB. A kill between the two leaves files whose records are stale, so the next
//! run re-indexes them (delete by path, then add): no duplicates, nothing lost.

pub mod analyzer;
pub mod store;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::directory::error::LockError;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, TantivyError, Term};

use crate::ingest::Chunk;
use crate::protocol::{DocdexError, ErrorCode, HitSource, Result, SearchHit};
use analyzer::{analyze, code_analyzer, CODE_ANALYZER};
pub use store::{FileRecord, IndexRunState, RepoStore};

/// Field boosts: a query word that names an item or a heading says more than one in a body.
const BOOST_SYMBOLS: f32 = 2.5;
const BOOST_HEADING: f32 = 1.5;
const BOOST_PATH: f32 = 1.0;
const BOOST_BODY: f32 = 1.0;
/// Share of the non-best fields' scores a term keeps (BM25F-like, without double counting).
const DISMAX_TIE_BREAKER: f32 = 0.3;
/// Score multiplier for tests, benches and examples: they mention every API they exercise,
/// but the definition or the guide is usually the better answer.
const SECONDARY_PATH_PRIOR: f32 = 0.6;
/// Multi-word queries favour chunks that contain more of the words: BM25 alone lets one
/// frequent word outweigh several rare ones.
const COVERAGE_EXPONENT: f32 = 2.0;
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
    language: Field,
    line_start: Field,
    line_end: Field,
    chunk_hash: Field,
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
        path: builder.add_text_field("path", STRING | STORED),
        path_text: builder.add_text_field("path_text", text.clone()),
        heading: builder.add_text_field("heading", stored_text.clone()),
        symbols: builder.add_text_field("symbols", text),
        body: builder.add_text_field("body", stored_text),
        language: builder.add_text_field("language", STRING | STORED),
        line_start: builder.add_u64_field("line_start", NumericOptions::default().set_stored()),
        line_end: builder.add_u64_field("line_end", NumericOptions::default().set_stored()),
        chunk_hash: builder.add_text_field("chunk_hash", STRING | STORED),
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
        let index_dir = state_dir.join("index");
        std::fs::create_dir_all(&index_dir)?;
        let (schema, fields) = build_schema();
        let directory = MmapDirectory::open(&index_dir)
            .map_err(|err| DocdexError::internal(format!("cannot open index at {}: {err}", index_dir.display())))?;
        let index =
            Index::open_or_create(directory, schema).map_err(|err| {
                DocdexError::internal(format!("index at {} is unreadable: {err}", index_dir.display())).with_hint(
                    format!("delete {} and run `docdexd index --repo {}`", state_dir.display(), root.display()),
                )
            })?;
        index.tokenizers().register(CODE_ANALYZER, code_analyzer());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::OnCommitWithDelay).try_into()?;
        let store = RepoStore::open(&state_dir.join("meta.lmdb"))?;
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
            .with_hint("wait for it to finish, or stop the other `docdexd serve`/`index` process"),
            other => other.into(),
        })
    }

    /// Replaces a file's chunks (delete by path, then add), uncommitted.
    pub fn replace_file(&self, writer: &IndexWriter, path: &str, language: &str, chunks: &[Chunk]) -> Result<()> {
        let f = self.fields;
        writer.delete_term(Term::from_field_text(f.path, path));
        for chunk in chunks {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, path);
            doc.add_text(f.path_text, path);
            doc.add_text(f.heading, &chunk.heading);
            doc.add_text(f.symbols, chunk.symbols.join(" "));
            doc.add_text(f.body, &chunk.text);
            doc.add_text(f.language, language);
            doc.add_u64(f.line_start, chunk.line_start);
            doc.add_u64(f.line_end, chunk.line_end);
            doc.add_text(f.chunk_hash, &chunk.content_hash);
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

    pub fn num_chunks(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Bytes on disk of the Tantivy index and the LMDB store.
    pub fn size_on_disk(&self) -> u64 {
        dir_size(&self.state_dir)
    }

    /// BM25 search over body, symbols, headings and path, collapsing near-duplicates.
    pub fn search(&self, query_text: &str, params: SearchParams) -> Result<SearchOutcome> {
        let mut analyzer = self.analyzer.clone();
        let mut terms: Vec<String> = Vec::new();
        for term in analyze(&mut analyzer, query_text) {
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
        if terms.is_empty() {
            return Ok(SearchOutcome::default());
        }
        let f = self.fields;
        let weighted =
            [(f.symbols, BOOST_SYMBOLS), (f.heading, BOOST_HEADING), (f.path_text, BOOST_PATH), (f.body, BOOST_BODY)];
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|term| {
                let per_field: Vec<Box<dyn Query>> = weighted
                    .iter()
                    .map(|&(field, boost)| {
                        let q = TermQuery::new(Term::from_field_text(field, term), IndexRecordOption::WithFreqs);
                        Box::new(BoostQuery::new(Box::new(q), boost)) as Box<dyn Query>
                    })
                    .collect();
                (
                    Occur::Should,
                    Box::new(DisjunctionMaxQuery::with_tie_breaker(per_field, DISMAX_TIE_BREAKER)) as Box<dyn Query>,
                )
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        // Over-fetch so that collapsing per file and rescoring still fill the page; the slack is
        // bounded so deep result lists (evaluation runs) do not load thousands of extra docs.
        let fetch = params.limit + params.limit.min(50) * (params.max_hits_per_file.max(1) + 2) + 10;
        let top = searcher.search(&query, &TopDocs::with_limit(fetch).order_by_score())?;
        let mut ranked: Vec<(f32, TantivyDocument)> = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let path = doc.get_first(f.path).and_then(|v| v.as_str()).unwrap_or("");
            let coverage = if terms.len() > 1 {
                let mut text = String::from(path);
                for field in [f.heading, f.body] {
                    text.push('\n');
                    text.push_str(doc.get_first(field).and_then(|v| v.as_str()).unwrap_or(""));
                }
                let present: HashSet<String> = analyze(&mut analyzer, &text).into_iter().collect();
                terms.iter().filter(|t| present.contains(*t)).count() as f32 / terms.len() as f32
            } else {
                1.0
            };
            ranked.push((score * path_prior(path) * coverage.powf(COVERAGE_EXPONENT), doc));
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));

        let query_terms: HashSet<&str> = terms.iter().map(String::as_str).collect();
        let mut per_file: HashMap<String, usize> = HashMap::new();
        let mut seen_hashes: HashSet<String> = HashSet::new();
        let mut hits = Vec::new();
        for (score, doc) in ranked {
            if hits.len() >= params.limit {
                break;
            }
            let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let path = text_of(f.path);
            let hash = text_of(f.chunk_hash);
            // The same text twice (vendored copies, generated twins) is one answer.
            if !seen_hashes.insert(hash) {
                continue;
            }
            let count = per_file.entry(path.clone()).or_default();
            if *count >= params.max_hits_per_file.max(1) {
                continue;
            }
            *count += 1;
            let body = text_of(f.body);
            hits.push(SearchHit {
                path,
                line_start: doc.get_first(f.line_start).and_then(|v| v.as_u64()).unwrap_or(0),
                line_end: doc.get_first(f.line_end).and_then(|v| v.as_u64()).unwrap_or(0),
                score,
                snippet: best_snippet(&body, &query_terms, &mut analyzer),
                heading: text_of(f.heading),
                language: text_of(f.language),
                source: HitSource::Repo,
            });
        }
        let top_score = hits.first().map(|h| h.score).unwrap_or(0.0);
        Ok(SearchOutcome { hits, top_score })
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
    let secondary_file = stem.starts_with("test_")
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
