//! The actors. Each file holds one actor and the messages only it handles; messages shared
//! by several parts live in `crate::protocol`.
//!
//! Spawn order (downstream first): RepoManager, Ingestor, Embedder, MemoryStore, Discovery
//! and Scraper, then the ToolDispatcher that is handed their addresses, together with the
//! WaterfallOrchestrator (which runs tier 1 through the dispatcher). Each repo's Indexer is spawned by the RepoManager when the repo is
//! first opened.

pub mod chat;
pub mod dag_logger;
pub mod discovery;
pub mod embedder;
pub mod indexer;
pub mod ingestor;
pub mod llm_gateway;
pub mod memory_store;
pub mod repo_manager;
pub mod scraper;
pub mod tool_dispatcher;
pub mod waterfall;

use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

pub(crate) fn format_unix(secs: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + std::time::Duration::from_secs(secs)).to_string()
}
