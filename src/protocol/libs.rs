//! Library docs requests and answers (`libs fetch`), shared by the CLI, HTTP and MCP.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Fetch the docs of a repo's dependencies and ingest them into its index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LibsFetchRequest {
    pub repo_opt: Option<PathBuf>,
    /// Transitive dependencies too (default: only those the manifests name).
    pub all: bool,
    /// Only these libraries (by name); empty: every detected one. Libraries ingested before
    /// and not named are kept.
    pub names: Vec<String>,
}

/// One library of a `libs fetch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryInfo {
    /// `cargo`, `npm` or `python`.
    pub ecosystem: String,
    pub name: String,
    pub version: String,
    /// Named by a manifest of the repo (not only pulled in by another library).
    pub direct: bool,
    /// Where the docs came from: `rustdoc`, `crate-source`, `node_modules`, `npm-pack`,
    /// `site-packages`, `pip-download`.
    pub origin: String,
    /// Found in the machine-wide cache (no fetch).
    pub from_cache: bool,
    /// Doc files indexed.
    pub docs: u64,
    /// Public items documented (Rust items, Python definitions).
    pub items: u64,
    /// Chunks written into the repo's index by this run (0 when unchanged since last time).
    pub chunks_written: u64,
    /// What was left out or fell back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A library whose docs could not be had, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryFailure {
    pub ecosystem: String,
    pub name: String,
    pub version: String,
    pub reason: String,
}

/// A dependency whose version no lockfile or install fixes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnresolvedDependency {
    pub ecosystem: String,
    pub name: String,
    /// The requirement the manifest states (`^1.2`, `>=2`, …).
    pub requirement: String,
}

/// What a `libs fetch` did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LibsFetchSummary {
    pub repo: String,
    /// The manifests and lockfiles read, relative to the repo.
    pub manifests: Vec<String>,
    /// Libraries fetched into the cache by this run.
    pub fetched: u64,
    /// Libraries the cache already held.
    pub from_cache: u64,
    /// Libraries whose docs are in the repo's index now.
    pub libraries: Vec<LibraryInfo>,
    pub failed: Vec<LibraryFailure>,
    pub unresolved: Vec<UnresolvedDependency>,
    /// Libraries taken out of the index: no longer dependencies (or now at another version).
    pub removed: Vec<String>,
    pub chunks_written: u64,
    /// Chunks waiting for embeddings after the run (embedded in the background, or with
    /// `--wait`).
    pub chunks_pending: u64,
    pub seconds: f64,
}

/// Progress of a running `libs fetch`: one line per library settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibsProgress {
    pub done: u64,
    pub total: u64,
    /// `name@version`.
    pub library: String,
    /// `fetched`, `cached` or `failed: <reason>`.
    pub outcome: String,
}
