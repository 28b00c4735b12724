//! Typed requests and responses shared by the CLI, HTTP and (later) MCP surfaces.
//!
//! Architecture invariant: only `src/http` and `src/mcp` know about transports; they and the
//! CLI serialize exactly these types, so every surface returns the same JSON.

pub mod error;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use error::{DocdexError, ErrorCode, Result};

/// Where a search hit came from. Only `repo` exists today; libraries and the web come later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HitSource {
    Repo,
}

/// A search over one repo's index.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The repo to search; `None` means the dispatcher's default repo.
    pub repo_opt: Option<PathBuf>,
    pub query: String,
    pub limit: usize,
}

/// Upper bound for `limit`, so one request cannot ask for the whole index.
pub const MAX_SEARCH_LIMIT: usize = 200;

impl SearchRequest {
    /// Checks the request before it reaches any actor.
    pub fn validate(&self) -> Result<()> {
        if self.query.trim().is_empty() {
            return Err(DocdexError::invalid("query must not be empty")
                .with_hint("pass the words to search for, e.g. `docdexd search --repo . spawn_blocking`"));
        }
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
    pub language: String,
    pub source: HitSource,
}

/// The answer to a search; identical on the CLI (`--json`) and over HTTP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    pub query: String,
    pub took_ms: f64,
    /// Score of the best hit (0 when there is none): the raw BM25 score, which a later
    /// confidence gate compares against `web_trigger_threshold` after calibration.
    pub top_score: f32,
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
}

/// Progress of a running index job, reported to whoever started it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexProgress {
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub chunks_written: u64,
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
    pub last_index_started: Option<String>,
    pub last_index_completed: Option<String>,
    pub files: u64,
    pub chunks: u64,
    pub bytes: u64,
    pub index_size_bytes: u64,
}

/// Answer of `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub version: String,
    pub default_repo: Option<String>,
}
