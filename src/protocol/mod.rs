//! Typed requests and responses shared by the CLI, HTTP and MCP surfaces.
//!
//! Architecture invariant: only `src/http` and `src/mcp` know about transports; they and the
//! CLI serialize exactly these types, so every surface returns the same JSON.

pub mod chat;
pub mod code;
pub mod crates;
pub mod error;
pub mod impact;
pub mod libs;
pub mod pack;
pub mod time;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crates::{
    CodeExample, CrateExamples, CrateRef, CrateSearchResponse, CrateSummary, CrateVersion, CrateVersions, ItemDoc,
    ItemHit, ModuleCount, ModuleNode, ModuleTree,
};
pub use error::{DocdexError, ErrorCode, Result};
pub use libs::{LibraryFailure, LibraryInfo, LibsFetchRequest, LibsFetchSummary, LibsProgress, UnresolvedDependency};

/// Where a search hit came from: the repo's own files, the docs of a library it depends on
/// (`libs fetch`), or a web page the repo's waterfall fetched and ingested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HitSource {
    Repo,
    Web,
    Library,
    /// Code a diff changed, or code that uses it (a search or chat given `diff`).
    Diff,
}

impl HitSource {
    pub fn as_str(self) -> &'static str {
        match self {
            HitSource::Repo => "repo",
            HitSource::Web => "web",
            HitSource::Library => "library",
            HitSource::Diff => "diff",
        }
    }
}

impl std::str::FromStr for HitSource {
    type Err = DocdexError;

    fn from_str(text: &str) -> Result<HitSource> {
        match text.trim().to_ascii_lowercase().as_str() {
            "repo" => Ok(HitSource::Repo),
            "library" | "lib" | "libs" => Ok(HitSource::Library),
            "web" => Ok(HitSource::Web),
            other => Err(DocdexError::invalid(format!("unknown source `{other}`"))
                .with_hint("use one of repo, library, web, all")),
        }
    }
}

/// `all` (or nothing) means every source.
pub fn parse_source_filter(text: &str) -> Result<Option<HitSource>> {
    if text.trim().eq_ignore_ascii_case("all") || text.trim().is_empty() {
        Ok(None)
    } else {
        text.parse().map(Some)
    }
}

/// How a search ranks chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// BM25 over the code-aware analyzer.
    Lexical,
    /// Nearest neighbours of the query embedding.
    Dense,
    /// Both, fused with Reciprocal Rank Fusion.
    Hybrid,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Lexical => "lexical",
            SearchMode::Dense => "dense",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

impl std::str::FromStr for SearchMode {
    type Err = DocdexError;

    fn from_str(text: &str) -> Result<SearchMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "lexical" => Ok(SearchMode::Lexical),
            "dense" => Ok(SearchMode::Dense),
            "hybrid" => Ok(SearchMode::Hybrid),
            other => Err(DocdexError::invalid(format!("unknown mode `{other}` (lexical, dense or hybrid)"))
                .with_hint("use one of lexical, dense, hybrid")),
        }
    }
}

/// A search over one repo's index.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The repo to search; `None` means the dispatcher's default repo.
    pub repo_opt: Option<PathBuf>,
    pub query: String,
    pub limit: usize,
    /// `None` means hybrid when the repo has vectors and the model loads, else lexical.
    pub mode_opt: Option<SearchMode>,
    /// Annotate hits with the rank and score each ranking gave them.
    pub explain: bool,
    /// Only hits from this source (`None`: repo, libraries and ingested web pages).
    pub source_opt: Option<HitSource>,
    /// Only hits from this library's docs.
    pub lib_opt: Option<String>,
}

/// A collection: a folder registered by name, indexed and searched like a repo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collection {
    pub name: String,
    /// The folder, canonical.
    pub path: String,
}

/// `GET /v1/collections`: each collection with what its index holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectionList {
    pub collections: Vec<CollectionStatus>,
}

/// A collection and its index (`POST /v1/collections` answers one after its first index run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectionStatus {
    pub name: String,
    pub path: String,
    pub indexed: bool,
    pub files: u64,
    pub chunks: u64,
    /// Why the folder cannot be read now (moved, deleted), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Most repos one search covers (`repos`, a group).
pub const MAX_SEARCH_REPOS: usize = 64;
/// The group of every repo a daemon serves (`group=all`).
pub const GROUP_ALL: &str = "all";

/// Upper bound for `limit`, so one request cannot ask for the whole index.
pub const MAX_SEARCH_LIMIT: usize = 200;
/// Longest query, in characters: questions are sentences, not documents.
pub const MAX_QUERY_CHARS: usize = 2000;
/// Largest memory note and its metadata (serialized), in bytes.
pub const MAX_MEMORY_TEXT_BYTES: usize = 64 * 1024;
pub const MAX_MEMORY_METADATA_BYTES: usize = 16 * 1024;

/// Refuses a query over `MAX_QUERY_CHARS`, on every tool that takes one (search, memory
/// recall, web search): a 400 KB "query" is a document, and costs every stage it reaches.
pub fn check_query_length(query: &str) -> Result<()> {
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(DocdexError::new(
            ErrorCode::TooLarge,
            format!("the query is {chars} characters, over the {MAX_QUERY_CHARS}-character limit"),
        )
        .with_hint("search with the key words or identifiers, not a whole document"));
    }
    Ok(())
}

impl SearchRequest {
    /// Checks the request before it reaches any actor.
    pub fn validate(&self) -> Result<()> {
        if self.query.trim().is_empty() {
            return Err(DocdexError::invalid("query must not be empty")
                .with_hint("pass the words to search for, e.g. `docdexd search --repo . spawn_blocking`"));
        }
        check_query_length(&self.query)?;
        if self.limit == 0 || self.limit > MAX_SEARCH_LIMIT {
            return Err(DocdexError::invalid(format!(
                "limit must be between 1 and {MAX_SEARCH_LIMIT}, got {}",
                self.limit
            )));
        }
        Ok(())
    }
}

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// Path relative to the repo root, with `/` separators.
    pub path: String,
    /// First line of the chunk (1-based, inclusive).
    pub line_start: u64,
    /// Last line of the chunk (1-based, inclusive).
    pub line_end: u64,
    /// BM25 score of the chunk, field boosts included.
    pub score: f32,
    /// A few lines of the chunk around the best-matching lines, with their line numbers.
    pub snippet: String,
    /// Heading path for documents ("Setup > Linux"), enclosing item for code ("impl Foo > bar").
    pub heading: String,
    /// Document hits (Markdown, text, HTML, PDF, DOCX): the path of headings the hit lies
    /// under, as in a pack's sections; absent for code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading_path: Option<String>,
    /// PDF hits: the page (1-based) the hit starts on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    pub language: String,
    pub source: HitSource,
    /// Library hits: the library's name and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Web hits: the page's URL (also in `path`), title and when it was fetched (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<String>,
    /// With `explain`: where each ranking placed this chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<HitExplain>,
    /// The chunk's id, for `docdex_get` (valid until its file is re-indexed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_id: Option<u32>,
    /// A search over several repos: the root of the repo this hit is from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

impl SearchHit {
    /// Where the hit is, as the text surfaces print it: `path:12-40`, with its repo before
    /// it in a search of several repos and its page after it in a PDF.
    pub fn location(&self) -> String {
        let repo = self.repo.as_deref().map(|r| format!("{r} :: ")).unwrap_or_default();
        let page = self.page.map(|p| format!(" (page {p})")).unwrap_or_default();
        format!("{repo}{}:{}-{}{page}", self.path, self.line_start, self.line_end)
    }

    /// Whether the two hits share a line of the same file.
    pub fn overlaps(&self, other: &SearchHit) -> bool {
        self.path == other.path && self.line_start <= other.line_end && other.line_start <= self.line_end
    }
}

/// One chunk in full (`docdex_get` by chunk id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkContent {
    pub chunk_id: u32,
    pub path: String,
    pub line_start: u64,
    pub line_end: u64,
    pub heading: String,
    pub language: String,
    pub source: HitSource,
    pub text: String,
}

/// Several files at once (`docdex_multi_get`): each as `open` reads it (at most
/// `MAX_OPEN_LINES` lines), and the ones that could not be read with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiGetResponse {
    /// Files asked for (the list, or the glob's matches before the limit).
    pub total: u64,
    pub files: Vec<FileContent>,
    pub missing: Vec<MissingFile>,
    /// Where the next page of files starts (`offset`), when `limit` left some out.
    pub next_offset: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingFile {
    pub path: String,
    pub error: String,
}

/// Most files one `multi_get` reads.
pub const MAX_MULTI_GET: usize = 50;

/// Rank (1-based) and score of a hit in one ranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankedBy {
    pub rank: usize,
    pub score: f32,
}

/// Per-source ranks of a hit; a source that did not return the chunk is absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HitExplain {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<RankedBy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense: Option<RankedBy>,
}

impl HitExplain {
    /// `lexical#1, dense#4`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(l) = self.lexical {
            parts.push(format!("lexical#{} ({:.2})", l.rank, l.score));
        }
        if let Some(d) = self.dense {
            parts.push(format!("dense#{} ({:.3})", d.rank, d.score));
        }
        parts.join(", ")
    }
}

/// The answer to a search; identical on the CLI (`--json`) and over HTTP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    pub query: String,
    pub took_ms: f64,
    /// Confidence in the best hit, calibrated to 0–1 in every mode so the waterfall can
    /// compare it with `web_trigger_threshold`: lexical maps the best BM25 score through
    /// `1 - exp(-score / 19)`; dense maps the best cosine similarity through
    /// `1 - exp(-cos / 0.365)`; hybrid is the larger of the two. 0 when there is no hit.
    /// (Constants measured with `docdexd eval-gate`; see `index::LEXICAL_CONFIDENCE_SCALE`.)
    pub top_score: f32,
    /// The mode actually used (a dense or hybrid request without a model runs lexical).
    pub mode: SearchMode,
    /// Why the mode differs from the request, or what is still missing (embeddings pending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Programming terms the question's plain phrases added to the search ("pause for a
    /// while" adds `sleep`, `delay`); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expanded: Vec<String>,
    pub hits: Vec<SearchHit>,
}

/// Index (or incrementally refresh) a repo.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRequest {
    pub repo: PathBuf,
}

/// What an index run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexSummary {
    pub repo: String,
    pub fingerprint: String,
    /// Files the walk found that pass the ignore rules.
    pub files_scanned: u64,
    /// Files whose content changed (or were new) and were re-chunked.
    pub files_indexed: u64,
    pub files_unchanged: u64,
    pub files_deleted: u64,
    /// Files left out: binary, over the size cap, or unreadable.
    pub files_skipped: u64,
    pub chunks_written: u64,
    pub chunks_total: u64,
    /// Bytes of source read and indexed in this run.
    pub bytes_indexed: u64,
    pub seconds: f64,
    /// With `index --wait`: the embedding job that followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbedSummary>,
}

/// Progress of a running index job, reported to whoever started it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexProgress {
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub chunks_written: u64,
}

/// Progress of embedding a repo's pending chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedProgress {
    /// Chunks embedded by this job so far.
    pub embedded: u64,
    /// Chunks still waiting.
    pub pending: u64,
    /// Which vectors: `static-mean` (a first pass computing the repo's mean static vector,
    /// which the static vectors are centred on), `static` (seconds for a whole repo) or
    /// `model`.
    #[serde(default = "model_vectors_name")]
    pub vectors: String,
}

/// `EmbedProgress::vectors` of the first static pass, which computes the repo's mean.
pub const STATIC_MEAN_PASS: &str = "static-mean";

fn model_vectors_name() -> String {
    "model".into()
}

/// What an embedding job did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedSummary {
    /// Chunks embedded by this job.
    pub embedded: u64,
    /// Chunks with a vector now.
    pub vectors: u64,
    /// Chunks still waiting (non-zero only if the job stopped early).
    pub pending: u64,
    /// Chunks with a static vector now, and how long this job took to give every chunk
    /// one (its first part).
    #[serde(default)]
    pub static_vectors: u64,
    #[serde(default)]
    pub static_seconds: f64,
    pub seconds: f64,
    /// Why nothing was embedded (model unavailable), when that is the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// What is indexed for a repo, and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepoStatus {
    pub repo: String,
    pub fingerprint: String,
    pub state_dir: String,
    /// True once at least one index run has completed.
    pub indexed: bool,
    /// True when the last run started but never finished (killed or failed); the next
    /// `index` finishes the job.
    pub interrupted: bool,
    /// A run is writing the index now (this daemon's or another process's).
    #[serde(default)]
    pub indexing: bool,
    pub last_index_started: Option<String>,
    pub last_index_completed: Option<String>,
    pub files: u64,
    pub chunks: u64,
    pub bytes: u64,
    /// Everything under the repo's state directory (Tantivy index and LMDB file).
    pub index_size_bytes: u64,
    /// The LMDB file alone (records, vectors, memory, DAGs, embedding cache), and the
    /// ceiling it may grow to (`[index] lmdb_map_bytes`).
    #[serde(default)]
    pub metadata_size_bytes: u64,
    #[serde(default)]
    pub metadata_limit_bytes: u64,
    /// Vectors in the embedding cache.
    #[serde(default)]
    pub embedding_cache_entries: u64,
    pub embeddings: EmbeddingStatus,
    /// Libraries whose docs are indexed with the repo (`libs fetch`): `ecosystem:name@version`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub libraries: Vec<String>,
    #[serde(default)]
    pub code: CodeStatus,
    #[serde(default)]
    pub documents: DocumentStatus,
}

/// A repo's documents (HTML, PDF, DOCX): how many of each format are indexed, and those that
/// could not be converted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocumentStatus {
    /// Documents per format with their text indexed.
    pub formats: std::collections::BTreeMap<String, u64>,
    /// Documents left out, each with why (an encrypted PDF, a corrupt DOCX); indexed again
    /// when they change.
    pub skipped: Vec<SkippedDocument>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedDocument {
    pub path: String,
    pub reason: String,
}

/// A repo's code intelligence: which languages were read for symbols, which source files had
/// no grammar (chunked by line windows, no symbols), and whether the symbols are current.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeStatus {
    /// Files per language read for symbols, references and imports.
    pub languages: std::collections::BTreeMap<String, u64>,
    /// Files per source language without a grammar here.
    pub without_grammar: std::collections::BTreeMap<String, u64>,
    /// The symbols were built by this binary's grammars (false: the next index run rebuilds
    /// them, and the symbol endpoints answer `stale_index` until then).
    pub symbols_current: bool,
}

/// A repo mounted in the daemon (`GET /v1/repos`, `/v1/status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MountedRepo {
    pub repo: String,
    /// `indexing`, `ready`, `released` (handles closed while idle; reopened on use) or
    /// `failed` (the last index run failed: `last_error`).
    pub state: String,
    /// A complete index exists: searches answer (from it, while a refresh runs).
    pub searchable: bool,
    /// The running index run's progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexing: Option<IndexProgress>,
    pub runs_completed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Index handles are open now.
    pub open: bool,
    pub watching: bool,
    /// File system changes that started (or joined) a re-index.
    pub changes_seen: u64,
    pub mounted_secs: u64,
    pub idle_secs: u64,
}

/// One actor's load, as the daemon counts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActorLoad {
    pub actor: String,
    /// Requests queued or running now.
    pub in_flight: u64,
    pub handled: u64,
    pub failed: u64,
}

/// The daemon's own state (`GET /v1/status` without a repo, `docdexd status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonStatus {
    pub version: String,
    pub pid: u32,
    pub uptime_secs: u64,
    /// Resident memory of the daemon process.
    pub rss_bytes: u64,
    /// Embedding model instances loaded now (unloaded when idle).
    pub models_loaded: u64,
    pub repos: Vec<MountedRepo>,
    pub actors: Vec<ActorLoad>,
}

/// Progress of a repo's embeddings, and whether the model is usable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingStatus {
    /// Chunks in the index.
    pub total: u64,
    /// Chunks still waiting for a vector.
    pub pending: u64,
    /// Chunks with a vector of the model.
    pub embedded: u64,
    /// Chunks with a static vector (`[embedding] static_vectors`), and chunks waiting for one.
    #[serde(default)]
    pub static_vectors: u64,
    #[serde(default)]
    pub static_pending: u64,
    /// The vectors dense search compares with now: `model` once 90 % of the chunks have the model's,
    /// `static` before, `none` when no chunk has a vector.
    #[serde(default)]
    pub dense_vectors: String,
    pub model: String,
    pub model_available: bool,
    /// Why the model is unavailable, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// Answer of `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub version: String,
    pub default_repo: Option<String>,
}

/// A remembered note, as every surface returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryItem {
    pub id: u64,
    pub text: String,
    pub metadata: serde_json::Value,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// Similarity to the query (recall only): cosine in dense mode, share of query words in
    /// lexical mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
}

/// Answer of a memory recall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecallResponse {
    pub query: String,
    /// `dense` or `lexical` (fallback without the model).
    pub mode: SearchMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    pub items: Vec<MemoryItem>,
}

/// A repo's notes, newest first (`memory list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryList {
    /// Notes the repo holds, before the limit.
    pub total: u64,
    pub items: Vec<MemoryItem>,
}

/// Answer of a memory deletion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryDeleted {
    pub id: u64,
    pub deleted: bool,
}

/// Upper bound for memory recall `k`.
pub const MAX_MEMORY_RECALL: usize = 100;

/// What `get` read: lines of a file (by path or by a symbol's span), or one chunk; each
/// keeps its own shape on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum GetResult {
    File(FileContent),
    Chunk(ChunkContent),
}

/// Lines of an indexed file, numbered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileContent {
    pub path: String,
    /// First line returned (1-based).
    pub line_start: u64,
    /// Last line returned (inclusive).
    pub line_end: u64,
    pub total_lines: u64,
    /// True when the range was cut to the size bound.
    pub truncated: bool,
    /// The lines themselves (a program's copy; `numbered` is the reader's).
    pub text: String,
}

impl FileContent {
    /// The lines with their numbers in a gutter (`"  12 | text"`), as a model or a person
    /// reads them.
    pub fn numbered(&self) -> String {
        if self.line_end < self.line_start {
            return String::new();
        }
        let width = self.line_end.to_string().len();
        // Exactly the range's lines: a blank last line counts, a trailing break adds none.
        let count = (self.line_end - self.line_start + 1) as usize;
        self.text
            .split('\n')
            .chain(std::iter::repeat(""))
            .take(count)
            .zip(self.line_start..)
            .map(|(line, n)| format!("{n:>width$} | {line}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Most lines `open` returns at once.
pub const MAX_OPEN_LINES: u64 = 400;

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub language: String,
    pub chunks: u32,
    pub size: u64,
}

/// Indexed files, optionally filtered by a glob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileList {
    /// Files matching, before the limit.
    pub total: u64,
    pub truncated: bool,
    pub files: Vec<FileEntry>,
}

/// One DuckDuckGo result: the real target URL (decoded from the `/l/?uddg=` redirect).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebResult {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// Answer of a web discovery (`web-search`, `POST /v1/web/search`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebSearchResponse {
    pub query: String,
    pub took_ms: f64,
    /// Served from the discovery cache, without a request.
    pub from_cache: bool,
    /// `primary` or `proxy` (the fallback endpoint after a challenge page); `cache` when cached.
    pub endpoint: String,
    /// Results dropped because their domain is blocklisted.
    pub blocked: usize,
    pub results: Vec<WebResult>,
}

/// A fetched page, cleaned to text (headings as Markdown `#` lines, code in fences).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebPage {
    /// The URL asked for, normalised (no fragment).
    pub url: String,
    /// Where the page ended up after redirects.
    pub final_url: String,
    pub title: String,
    pub text: String,
    /// RFC 3339, UTC.
    pub fetched_at: String,
    /// Unix seconds of `fetched_at` (the cache's clock).
    pub fetched_at_unix: u64,
    /// SHA-256 of `text`.
    pub content_hash: String,
    /// `chromium` or `http`.
    pub engine: String,
    /// Served from the web cache, without a request.
    pub from_cache: bool,
    /// `readability`; `fallback` when readability found no article; `plain` for a page
    /// nested too deep to walk (its words without structure) or one fetched as plain text.
    pub extractor: String,
}

/// Answer of `web-fetch` / `POST /v1/web/fetch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebFetchResponse {
    pub took_ms: f64,
    pub page: WebPage,
}

/// A waterfall run: tier 1 (the repo), tier 2 (the web) when the gate says so.
#[derive(Debug, Clone, PartialEq)]
pub struct WaterfallRequest {
    pub search: SearchRequest,
    /// Escalate to the web whatever the local confidence.
    pub force_web: bool,
}

/// Why the waterfall did (not) go to the web.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    /// The local search's calibrated confidence (0-1).
    pub top_score: f32,
    pub threshold: f32,
    pub forced: bool,
    /// `local` (confident enough), `web` (escalated) or `web_disabled` (would have escalated).
    pub decision: String,
}

/// One tier that ran, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TierReport {
    /// `local` or `web`.
    pub tier: String,
    pub reason: String,
    pub took_ms: f64,
    /// Hits this tier contributed to the merged answer.
    pub hits: usize,
}

/// A page the web tier fetched (or failed to).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebPageReport {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    pub from_cache: bool,
    /// Why the page is missing, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What the web tier did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebTierReport {
    pub discovered: usize,
    pub discovery_from_cache: bool,
    pub pages: Vec<WebPageReport>,
    /// Chunks of the fetched pages added to this repo's index (unchanged pages add none).
    pub ingested_chunks: u64,
    /// Why the web tier gave nothing, when it failed (the local answer stands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<DocdexError>,
}

/// The merged answer: local hits first, then web hits (`source: "web"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaterfallResponse {
    pub query: String,
    pub took_ms: f64,
    /// Tier 1's confidence (as in a plain search).
    pub top_score: f32,
    /// Tier 1's mode.
    pub mode: SearchMode,
    pub tiers: Vec<TierReport>,
    pub gate: Gate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<WebTierReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The reasoning session recorded for this run (`docdexd dag view`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub hits: Vec<SearchHit>,
}

/// A grounded chat turn: the conversation so far (the last message is the user's question).
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub repo_opt: Option<PathBuf>,
    pub messages: Vec<chat::ChatMessage>,
    /// `None` (or `docdex`) means `[llm] default_model`.
    pub model_opt: Option<String>,
    /// Capped by `[llm] max_answer_tokens` and by the answer's share of the window.
    pub max_tokens_opt: Option<usize>,
    pub temperature_opt: Option<f32>,
    /// Escalate to the web whatever the local confidence.
    pub force_web: bool,
    /// Put this diff's changed code and its direct dependents in the context, after memory
    /// and before the rest of the repo.
    pub diff_opt: Option<impact::DiffBase>,
}

/// One numbered source of a grounded answer (the `[n]` the answer cites).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatSource {
    pub n: usize,
    pub kind: chat::SnippetKind,
    /// `src/pool.rs:1-12`, `memory #3` or the page's URL.
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_start: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_end: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_id: Option<u64>,
}

/// How a chat answer was grounded: the session, the sources, the budget and what was sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatContext {
    pub session_id: String,
    pub repo: String,
    pub model: String,
    pub provider: String,
    pub sources: Vec<ChatSource>,
    pub budget: chat::BudgetReport,
    /// The waterfall gate's decision for the repo search.
    pub gate: Gate,
    /// Time to recall memory, search (and go to the web) and fit the prompt.
    pub assembly_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The messages sent to the model (returned on request: `docdex.debug`).
    pub prompt: Vec<chat::ChatMessage>,
}
