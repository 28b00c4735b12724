//! Context packs: the best sections of a repo (and its memory and libraries) for a question,
//! fitted to a token budget.

use serde::{Deserialize, Serialize};

/// One section of a pack: a note, or a range of lines of a file or a library's doc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackSection {
    /// `memory` for a note; else the file's path (a library doc's or web page's as search
    /// hits give it).
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    /// Where the section sits: the enclosing item or the headings above it (`a > b`).
    pub heading_path: String,
    /// memory, repo, library or web.
    pub kind: String,
    pub text: String,
    pub tokens: usize,
    /// The section was cut (at a line end) to fit the budget.
    #[serde(default)]
    pub truncated: bool,
}

/// A pack: sections in their order (memory, the repo's code and docs, libraries, web), none
/// repeated, within `budget_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackResponse {
    pub query: String,
    pub budget_tokens: usize,
    /// What the sections hold, in all.
    pub tokens: usize,
    /// What the files they come from hold, whole (a note or a library section counts as
    /// itself).
    pub raw_tokens: usize,
    /// Distinct files (and notes) the sections come from.
    pub files: usize,
    /// "3,950 tokens from 41,200 in 9 files: 90 % saved".
    pub summary: String,
    /// Counted by the LLM server's tokenizer (else estimated at one token per 3
    /// characters, which over-counts).
    pub exact: bool,
    pub sections: Vec<PackSection>,
}
