//! `docdexd memory`: save, recall, list and delete a repo's notes, through the daemon when one
//! runs.

use super::args::MemoryAction;
use super::output::{print_out, to_json};
use crate::actors::tool_dispatcher::memory::{
    MemoryDeleteParams, MemoryListParams, MemoryRecallParams, MemorySaveParams,
};
use crate::config::LoadedConfig;
use crate::daemon::client::{self, Backend, Route};
use crate::protocol::{DocdexError, Result};

pub(super) async fn run_memory(loaded: &LoadedConfig, action: MemoryAction) -> Result<i32> {
    let repo = client::absolute(match &action {
        MemoryAction::Save { repo, .. }
        | MemoryAction::Recall { repo, .. }
        | MemoryAction::List { repo, .. }
        | MemoryAction::Delete { repo, .. } => repo,
    });
    let backend = Backend::for_repo(loaded, &repo).await?;
    let code = match action {
        MemoryAction::Save { metadata, json, text, .. } => {
            let metadata = match metadata {
                Some(raw) => serde_json::from_str(&raw)
                    .map_err(|err| DocdexError::invalid(format!("--metadata is not JSON: {err}")))?,
                None => serde_json::Value::Null,
            };
            let params = MemorySaveParams { text: text.join(" "), metadata: Some(metadata), repo: Some(repo) };
            let item = backend.run(params, Route::Post("/v1/memory")).await?;
            print_out(&if json { to_json(&item)? } else { format!("saved memory #{}\n", item.id) })?;
            0
        }
        MemoryAction::Recall { k, json, query, .. } => {
            let params =
                MemoryRecallParams { query: query.join(" "), limit: Some(k as u64), offset: None, repo: Some(repo) };
            let response = backend.run(params, Route::Post("/v1/memory/recall")).await?;
            let text = if json {
                to_json(&response)?
            } else {
                let mut out = String::new();
                if let Some(notice) = &response.notice {
                    out.push_str(&format!("note: {notice}\n"));
                }
                for item in &response.items {
                    out.push_str(&format!(
                        "#{} ({:.2}, {}) {}\n",
                        item.id,
                        item.score.unwrap_or(0.0),
                        item.created_at,
                        item.text
                    ));
                }
                out
            };
            print_out(&text)?;
            if response.items.is_empty() {
                1
            } else {
                0
            }
        }
        MemoryAction::List { limit, json, .. } => {
            let params = MemoryListParams { limit: Some(limit as u64), repo: Some(repo) };
            let list = backend.run(params, Route::Get("/v1/memory")).await?;
            print_out(&if json {
                to_json(&list)?
            } else {
                let mut out: String = list
                    .items
                    .iter()
                    .map(|item| format!("#{} ({}) {}\n", item.id, item.created_at, item.text))
                    .collect();
                if list.total > list.items.len() as u64 {
                    out.push_str(&format!("… {} more (raise --limit)\n", list.total - list.items.len() as u64));
                }
                out
            })?;
            if list.items.is_empty() {
                1
            } else {
                0
            }
        }
        MemoryAction::Delete { json, id, .. } => {
            let deleted = backend.memory_delete(MemoryDeleteParams { id, repo: Some(repo) }).await?;
            print_out(&if json { to_json(&deleted)? } else { format!("deleted memory #{id}\n") })?;
            0
        }
    };
    backend.close().await?;
    Ok(code)
}
