//! The chat types every surface shares: messages as providers take them, and the report of
//! how the context budget was spent (what went in, what was dropped and why).

use serde::{Deserialize, Serialize};

/// One chat message as every provider takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: &str, content: impl Into<String>) -> ChatMessage {
        ChatMessage { role: role.into(), content: content.into() }
    }
}

/// Where a snippet came from, in priority order (earlier = more important).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnippetKind {
    Memory,
    /// Code a diff changed and one hop of its dependents (a chat given `diff`).
    Diff,
    Repo,
    Library,
    Web,
}

impl SnippetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SnippetKind::Memory => "memory",
            SnippetKind::Diff => "diff",
            SnippetKind::Repo => "repo",
            SnippetKind::Library => "library",
            SnippetKind::Web => "web",
        }
    }
}

/// A snippet left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub kind: SnippetKind,
    pub label: String,
    pub tokens: usize,
    pub reason: String,
}

/// The budget's shares in tokens, and what went in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetReport {
    pub context_window: usize,
    /// `exact` (the model's tokenizer) or `estimate` (`estimate_tokens`).
    pub token_count: String,
    pub answer_tokens: usize,
    pub system_tokens: usize,
    pub memory_share: usize,
    pub evidence_share: usize,
    pub memory_tokens: usize,
    pub evidence_tokens: usize,
    pub dropped: Vec<Dropped>,
}
