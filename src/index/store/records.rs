//! The records a repo's store keeps, as JSON values: files, web pages, libraries, the
//! index-run state, memories.

use serde::{Deserialize, Serialize};

/// What the index knows about one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub content_hash: String,
    pub size: u64,
    pub mtime_ns: u64,
    pub chunks: u32,
    pub language: String,
    /// Ids of the file's chunks: their vectors and pending embeddings go when the file does.
    #[serde(default)]
    pub chunk_ids: Vec<u32>,
    /// Why a document has no chunks: it could not be converted (an encrypted PDF, a corrupt
    /// DOCX). Listed by `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A web page this repo's waterfall fetched and ingested (its chunks live in the same
/// Tantivy index, with `source = web` and the URL as their path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebPageRecord {
    pub content_hash: String,
    pub title: String,
    /// Unix seconds.
    pub fetched_at: u64,
    pub chunk_ids: Vec<u32>,
}

/// A library whose docs are ingested into this repo (`libs fetch`): its chunks live in the
/// same Tantivy index with `source = library`, under paths `<ecosystem>:<name>@<version>/…`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryRecord {
    pub ecosystem: String,
    pub name: String,
    pub version: String,
    /// The cache entry's `library.json` hash: the same version re-fetched differently is
    /// re-ingested.
    pub content_hash: String,
    pub paths: Vec<String>,
    pub chunk_ids: Vec<u32>,
    /// Unix seconds.
    pub ingested_at: u64,
}

/// Bookkeeping of index runs: a run that started after the last completion was interrupted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRunState {
    /// Unix seconds.
    pub last_started: Option<u64>,
    pub last_completed: Option<u64>,
    /// Set when a run starts and cleared when it completes: still set with no run active means
    /// the last run was killed or failed.
    #[serde(default)]
    pub in_progress: bool,
    pub files: u64,
    pub chunks: u64,
    pub bytes: u64,
    /// Next chunk id to hand out (ids are never reused while they can be referenced).
    #[serde(default)]
    pub next_chunk_id: u32,
    /// `index::INDEX_FORMAT_VERSION` of the docdex that completed the last run (0: before
    /// versions were kept): another version means the analyzer or chunker changed.
    #[serde(default)]
    pub format_version: u32,
    /// Why the index was emptied for a rebuild (written by another docdex version), until
    /// the next run completes: a search in between says so instead of "not indexed".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild_reason: Option<String>,
}

impl IndexRunState {
    pub fn interrupted(&self) -> bool {
        self.in_progress
    }

    pub fn indexed(&self) -> bool {
        self.last_completed.is_some()
    }
}

/// One remembered note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub id: u64,
    pub text: String,
    pub metadata: serde_json::Value,
    /// Unix milliseconds.
    pub created_at_ms: u64,
    /// Whether its vector is stored (false when saved without the model).
    pub embedded: bool,
}
