//! Rust crate docs tools: requests and answers shared by the CLI, HTTP and MCP.
//!
//! Every answer is a flat, bounded structure (lists of records, no unions, no recursion):
//! the strictest MCP clients reject anything else.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which crate: a name, and a version or a repo whose lockfile fixes it (else the newest
/// release the registry index lists).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrateRef {
    pub name: String,
    pub version_opt: Option<String>,
    pub repo_opt: Option<PathBuf>,
}

/// A module and how many items it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleCount {
    pub path: String,
    /// Items directly in the module (methods counted with their type).
    pub items: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrateSummary {
    pub name: String,
    pub version: String,
    /// How the version was chosen: `requested`, `locked` (the repo's lockfile) or `latest`.
    pub resolved_by: String,
    /// At most 1000 characters.
    pub description: String,
    /// Where the docs came from (`rustdoc`, `crate-source`).
    pub origin: String,
    pub items: u64,
    /// Item counts by kind (`fn`, `struct`, `trait`, `macro`, `method`, …).
    pub kinds: BTreeMap<String, u64>,
    /// The largest modules, most items first (at most 15).
    pub top_modules: Vec<ModuleCount>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One item of a `crate_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemHit {
    pub path: String,
    pub kind: String,
    pub signature: String,
    /// The first paragraph of its docs (at most 300 characters).
    pub summary: String,
    pub score: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrateSearchResponse {
    pub name: String,
    pub version: String,
    pub query: String,
    /// `lexical` or `hybrid`.
    pub mode: String,
    pub hits: Vec<ItemHit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemDoc {
    pub name: String,
    pub version: String,
    /// The canonical path of the item.
    pub path: String,
    /// The path asked for, when it was an alias (a re-export) or a close match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    pub kind: String,
    pub signature: String,
    /// The full docs, Markdown, code blocks whole.
    pub docs: String,
    /// Other public paths of the item (re-exports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Methods (of a type) or items (of a trait or module): paths, at most 100.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
}

/// One module of a `module_tree`, in depth-first order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleNode {
    pub path: String,
    /// 0 for the crate root.
    pub depth: u32,
    /// Items directly in the module, by kind.
    pub kinds: BTreeMap<String, u64>,
    pub items: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleTree {
    pub name: String,
    pub version: String,
    pub modules: Vec<ModuleNode>,
}

/// A whole code block (from an item's docs) or a whole example program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeExample {
    /// The item whose docs hold it, or the file (`examples/echo.rs`).
    pub source: String,
    /// The heading above the block in the docs, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub language: String,
    pub code: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrateExamples {
    pub name: String,
    pub version: String,
    pub examples: Vec<CodeExample>,
    /// Examples matching that were left out by the limit.
    pub more: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrateVersion {
    pub version: String,
    pub yanked: bool,
    /// `rust-version` (MSRV) when the release states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rust_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrateVersions {
    pub name: String,
    /// The newest release that is not yanked (pre-releases only when there is nothing else).
    pub latest: String,
    /// Newest first.
    pub versions: Vec<CrateVersion>,
}
