//! The dispatcher's library docs requests (`libs fetch`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::{Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::mpsc::UnboundedSender;

use super::indexing::start_background_embedding;
use super::libs_fetch::run_libs_fetch;
use super::params::{self, Caller, Tool};
use super::{tracked, ToolDispatcher};
use crate::actors::repo_manager::{OpenRepo, RepoHandle};
use crate::protocol::{DocdexError, LibsFetchRequest, LibsFetchSummary, LibsProgress, Result};

/// Fetch the docs of a repo's dependencies into the cache and the repo's index. The new
/// chunks are embedded afterwards in the background (when `embed_in_background`).
#[derive(Message)]
#[rtype(result = "Result<LibsFetchSummary>")]
pub struct LibsFetch {
    pub request: LibsFetchRequest,
    pub progress_opt: Option<UnboundedSender<LibsProgress>>,
    pub embed_in_background: bool,
}

/// `POST /v1/libs/fetch`, MCP `docdex_libs_fetch`, `docdex libs fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LibsFetchParams {
    /// Transitive dependencies too (default false: those the manifests name).
    #[serde(default, deserialize_with = "params::flag")]
    pub all: Option<bool>,
    /// Only these libraries, e.g. ["serde", "tokio"] (default: every dependency).
    #[serde(default, deserialize_with = "params::list")]
    pub libs: Option<Vec<String>>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for LibsFetchParams {
    type Message = LibsFetch;
    type Output = LibsFetchSummary;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    /// Answers when the docs are indexed; their embeddings follow in the background.
    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<LibsFetch> {
        let request =
            LibsFetchRequest { repo_opt, all: self.all.unwrap_or(false), names: self.libs.unwrap_or_default() };
        Ok(LibsFetch { request, progress_opt: None, embed_in_background: true })
    }
}

impl Handler<LibsFetch> for ToolDispatcher {
    type Result = ResponseFuture<Result<LibsFetchSummary>>;

    fn handle(&mut self, msg: LibsFetch, _: &mut Context<Self>) -> Self::Result {
        // In a daemon the repo is mounted (and its first index awaited) on the way.
        let repo = self.resolve_repo(msg.request.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let config = Arc::clone(&self.config);
        let jobs = self.embedding_jobs.clone();
        let cache_root = self.libs_cache_root.clone();
        tracked(&self.metrics, "libs", async move {
            let handle = repo_manager.send(OpenRepo { path: repo.await?, create: true }).await??;
            let summary = run_libs_fetch(&handle, &config.libs, &cache_root, &msg.request, msg.progress_opt)
                .await
                .map_err(|err| err.or_disk_full(&cache_root))?;
            if msg.embed_in_background && config.embedding.enabled && summary.chunks_pending > 0 {
                start_background_embedding(handle, embedder, config.embedding.clone(), jobs);
            }
            Ok(summary)
        })
    }
}

/// A search narrowed to a library the repo has no docs of would find nothing, silently: say
/// which libraries there are instead.
pub(super) async fn check_library_indexed(handle: &Arc<RepoHandle>, library: &str) -> Result<()> {
    let index = Arc::clone(&handle.index);
    let names: Vec<String> = tokio::task::spawn_blocking(move || -> Result<Vec<String>> {
        let rtxn = index.store.read_txn()?;
        Ok(index.store.all_libraries(&rtxn)?.into_iter().map(|(_, record)| record.name).collect())
    })
    .await??;
    if names.iter().any(|name| name == library) {
        return Ok(());
    }
    let known = if names.is_empty() {
        "none yet".to_string()
    } else {
        let mut shown: Vec<&str> = names.iter().map(String::as_str).take(30).collect();
        shown.sort_unstable();
        shown.join(", ")
    };
    Err(DocdexError::invalid(format!("no docs of library `{library}` are indexed for this repo (indexed: {known})"))
        .with_hint("run `docdexd libs fetch --repo <path>` (or the docdex_libs_fetch tool) first"))
}
