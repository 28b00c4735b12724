//! The memory tools: a repo's notes saved, recalled (dense when the model is there, else
//! lexical) and deleted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::{Addr, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::params::{self, Caller, Tool};
use super::{open_indexed, tracked, ToolDispatcher};
use crate::actors::chat::RecallNotes;
use crate::actors::embedder::{EmbedQuery, EmbedTexts, Embedder};
use crate::actors::memory_store::{
    DeleteMemory, ListMemories, MemoryStore, RecallMemory, SaveMemory, StoreMemoryVectors, UnembeddedMemories,
};
use crate::protocol::{
    DocdexError, ErrorCode, MemoryDeleted, MemoryItem, MemoryList, MemoryRecallResponse, Result, SearchMode,
    MAX_MEMORY_METADATA_BYTES, MAX_MEMORY_RECALL, MAX_MEMORY_TEXT_BYTES,
};

/// Notes a recall gives when the caller names no limit (every surface).
pub const DEFAULT_RECALL: usize = 5;
/// Notes a list gives when the caller names no limit, and the most it gives.
pub const DEFAULT_LIST: usize = 50;
pub const MAX_LIST: usize = 1000;

// ---- Parameters, as every surface takes them (see `params`).

/// `POST /v1/memory`, MCP `docdex_memory_save`, `docdex memory save`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySaveParams {
    /// The note to remember.
    pub text: String,
    /// Optional JSON object stored with it, e.g. {"topic": "auth"}.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub metadata: Option<serde_json::Value>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for MemorySaveParams {
    type Message = MemorySave;
    type Output = MemoryItem;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<MemorySave> {
        Ok(MemorySave { repo_opt, text: self.text, metadata: self.metadata.unwrap_or(serde_json::Value::Null) })
    }
}

/// `POST /v1/memory/recall`, MCP `docdex_memory_recall`, `docdex memory recall`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryRecallParams {
    /// What to recall.
    pub query: String,
    /// Memories to return, 1-100 (default 5). `k` is taken too.
    #[serde(default, alias = "k", deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for MemoryRecallParams {
    type Message = MemoryRecall;
    type Output = MemoryRecallResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<MemoryRecall> {
        let k = params::bounded("limit", self.limit, DEFAULT_RECALL, MAX_MEMORY_RECALL)?;
        Ok(MemoryRecall { repo_opt, query: self.query, k, offset: params::offset(self.offset) })
    }
}

/// `GET /v1/memory`, `docdex memory list`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryListParams {
    /// Notes to list, newest first, 1-1000 (default 50).
    #[serde(default, deserialize_with = "params::number")]
    pub limit: Option<u64>,
    /// Repository root (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for MemoryListParams {
    type Message = MemoryListing;
    type Output = MemoryList;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<MemoryListing> {
        Ok(MemoryListing { repo_opt, limit: params::bounded("limit", self.limit, DEFAULT_LIST, MAX_LIST)? })
    }
}

/// Saves a note to a repo's memory.
#[derive(Message)]
#[rtype(result = "Result<MemoryItem>")]
pub struct MemorySave {
    pub repo_opt: Option<PathBuf>,
    pub text: String,
    pub metadata: serde_json::Value,
}

/// Recalls the `k` memories closest to a query.
#[derive(Message)]
#[rtype(result = "Result<MemoryRecallResponse>")]
pub struct MemoryRecall {
    pub repo_opt: Option<PathBuf>,
    pub query: String,
    pub k: usize,
    /// Notes skipped first (the next page of the same ranking).
    pub offset: usize,
}

/// A repo's notes, newest first.
#[derive(Message)]
#[rtype(result = "Result<MemoryList>")]
pub struct MemoryListing {
    pub repo_opt: Option<PathBuf>,
    pub limit: usize,
}

impl Handler<MemoryListing> for ToolDispatcher {
    type Result = ResponseFuture<Result<MemoryList>>;

    fn handle(&mut self, msg: MemoryListing, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        let memory = self.memory.clone();
        tracked(&self.metrics, "memory_store", async move {
            if msg.limit == 0 || msg.limit > MAX_LIST {
                return Err(DocdexError::invalid(format!("limit must be between 1 and {MAX_LIST}, got {}", msg.limit)));
            }
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let mut notes = memory.send(ListMemories { index: Arc::clone(&handle.index) }).await??;
            notes.sort_by(|a, b| b.created_at_ms.cmp(&a.created_at_ms).then(b.id.cmp(&a.id)));
            let total = notes.len() as u64;
            let items = notes.into_iter().take(msg.limit).map(|record| memory_item(record, None)).collect();
            Ok(MemoryList { total, items })
        })
    }
}

/// `DELETE /v1/memory/{id}`, `docdex memory delete` (the id is in the path on HTTP).
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryDeleteParams {
    /// The note's id, as save and recall give it.
    #[serde(deserialize_with = "params::required_number")]
    pub id: u64,
    /// Repository root (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for MemoryDeleteParams {
    type Message = MemoryDelete;
    type Output = MemoryDeleted;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<MemoryDelete> {
        Ok(MemoryDelete { repo_opt, id: self.id })
    }
}

/// Deletes a memory by id.
#[derive(Message)]
#[rtype(result = "Result<MemoryDeleted>")]
pub struct MemoryDelete {
    pub repo_opt: Option<PathBuf>,
    pub id: u64,
}

/// Embeds the notes saved while the model was missing.
async fn backfill_memory_vectors(
    embedder: &Addr<Embedder>,
    memory: &Addr<MemoryStore>,
    index: &Arc<crate::index::RepoIndex>,
) -> Result<()> {
    let missing = memory.send(UnembeddedMemories { index: Arc::clone(index) }).await??;
    if missing.is_empty() {
        return Ok(());
    }
    let (ids, texts): (Vec<u64>, Vec<String>) = missing.into_iter().unzip();
    let vectors = embedder.send(EmbedTexts(texts)).await??;
    let vectors = ids.into_iter().zip(vectors).collect();
    memory.send(StoreMemoryVectors { index: Arc::clone(index), vectors }).await?
}

fn memory_item(record: crate::index::MemoryRecord, score: Option<f32>) -> MemoryItem {
    let created = std::time::UNIX_EPOCH + std::time::Duration::from_millis(record.created_at_ms);
    MemoryItem {
        id: record.id,
        text: record.text,
        metadata: record.metadata,
        created_at: humantime::format_rfc3339_millis(created).to_string(),
        score,
    }
}

impl Handler<MemorySave> for ToolDispatcher {
    type Result = ResponseFuture<Result<MemoryItem>>;

    fn handle(&mut self, msg: MemorySave, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let memory = self.memory.clone();
        tracked(&self.metrics, "memory_store", async move {
            if msg.text.trim().is_empty() {
                return Err(DocdexError::invalid("memory text must not be empty"));
            }
            if !msg.metadata.is_object() && !msg.metadata.is_null() {
                return Err(DocdexError::invalid("memory metadata must be a JSON object"));
            }
            let text_bytes = msg.text.len();
            if text_bytes > MAX_MEMORY_TEXT_BYTES {
                return Err(DocdexError::new(
                    ErrorCode::TooLarge,
                    format!("the note is {text_bytes} bytes, over the {MAX_MEMORY_TEXT_BYTES}-byte limit"),
                )
                .with_hint("save a summary and keep the document in the repo"));
            }
            let metadata_bytes = serde_json::to_string(&msg.metadata)?.len();
            if metadata_bytes > MAX_MEMORY_METADATA_BYTES {
                return Err(DocdexError::new(
                    ErrorCode::TooLarge,
                    format!("the metadata is {metadata_bytes} bytes, over the {MAX_MEMORY_METADATA_BYTES}-byte limit"),
                ));
            }
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            // Without the model the note is kept and embedded at a later recall.
            let vector_opt = embedder
                .send(EmbedTexts(vec![msg.text.clone()]))
                .await
                .ok()
                .and_then(|r| r.ok())
                .and_then(|mut v| v.pop());
            let metadata = if msg.metadata.is_null() { serde_json::json!({}) } else { msg.metadata };
            let record = memory
                .send(SaveMemory { index: Arc::clone(&handle.index), text: msg.text, metadata, vector_opt })
                .await??;
            Ok(memory_item(record, None))
        })
    }
}

impl Handler<MemoryRecall> for ToolDispatcher {
    type Result = ResponseFuture<Result<MemoryRecallResponse>>;

    fn handle(&mut self, msg: MemoryRecall, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let memory = self.memory.clone();
        tracked(&self.metrics, "memory_store", async move {
            if msg.query.trim().is_empty() {
                return Err(DocdexError::invalid("query must not be empty"));
            }
            crate::protocol::check_query_length(&msg.query)?;
            if msg.k == 0 || msg.k > MAX_MEMORY_RECALL {
                return Err(DocdexError::invalid(format!(
                    "k must be between 1 and {MAX_MEMORY_RECALL}, got {}",
                    msg.k
                )));
            }
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            let embedded = match embedder.send(EmbedQuery::model(msg.query.clone())).await {
                Ok(Ok(vector)) => {
                    // Notes saved while the model was missing get their vectors now; if that
                    // fails, recall falls back to words rather than failing.
                    match backfill_memory_vectors(&embedder, &memory, &index).await {
                        Ok(()) => Ok(vector),
                        Err(err) => Err(format!("notes without vectors could not be embedded ({})", err.message)),
                    }
                }
                Ok(Err(err)) => Err(err.message),
                Err(err) => Err(format!("the embedding worker is not answering ({err})")),
            };
            let (vector_opt, notice) = match embedded {
                Ok(vector) => (Some(vector.as_ref().clone()), None),
                Err(why) => (None, Some(format!("{why}; recalled by matching words"))),
            };
            let mode = if vector_opt.is_some() { SearchMode::Dense } else { SearchMode::Lexical };
            let limit = msg.offset.saturating_add(msg.k).min(MAX_MEMORY_RECALL);
            let mut found = memory.send(RecallMemory { index, query: msg.query.clone(), vector_opt, limit }).await??;
            found.drain(..msg.offset.min(found.len()));
            Ok(MemoryRecallResponse {
                query: msg.query,
                mode,
                notice,
                // A note sharing no word with the question (lexical 0), or as far from it as
                // unrelated text is (cosine under the floor dense search hits use), is not
                // recalled by it: it answered every recall with notes scoring 0.00.
                items: found
                    .into_iter()
                    .filter(|(_, score)| match mode {
                        SearchMode::Dense => *score >= crate::index::rank::DENSE_MIN_SIMILARITY,
                        _ => *score > 0.0,
                    })
                    .map(|(record, score)| memory_item(record, Some(score)))
                    .collect(),
            })
        })
    }
}

impl Handler<MemoryDelete> for ToolDispatcher {
    type Result = ResponseFuture<Result<MemoryDeleted>>;

    fn handle(&mut self, msg: MemoryDelete, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        let memory = self.memory.clone();
        tracked(&self.metrics, "memory_store", async move {
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let deleted = memory.send(DeleteMemory { index: Arc::clone(&handle.index), id: msg.id }).await??;
            Ok(MemoryDeleted { id: msg.id, deleted })
        })
    }
}

/// Chat's memory share is this very recall.
impl Handler<RecallNotes> for ToolDispatcher {
    type Result = ResponseFuture<Result<MemoryRecallResponse>>;

    fn handle(&mut self, msg: RecallNotes, ctx: &mut Context<Self>) -> Self::Result {
        let recall = MemoryRecall { repo_opt: Some(msg.repo), query: msg.query, k: msg.k, offset: 0 };
        <Self as Handler<MemoryRecall>>::handle(self, recall, ctx)
    }
}
