//! The chat tools: a grounded answer (handed to the ChatOrchestrator), the configured LLM's
//! models, and the reasoning sessions of a repo.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::{Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{self, Caller, Tool};
use super::{open_indexed, tracked, ToolDispatcher};
use crate::actors::chat::{ChatStart, RunChat};
use crate::actors::llm_gateway::ListModels;
use crate::protocol::{ChatRequest, DocdexError, ErrorCode, Result};

/// Starts a grounded chat answer (`/v1/chat/completions`, `docdexd chat`).
#[derive(Message)]
#[rtype(result = "Result<ChatStart>")]
pub struct Chat(pub ChatRequest);

/// The LLM server's models (`/v1/models`, `llm-list`).
#[derive(Message)]
#[rtype(result = "Result<Vec<crate::llm::ModelEntry>>")]
pub struct LlmModels;

/// A repo's reasoning sessions, newest first.
#[derive(Message)]
#[rtype(result = "Result<crate::index::dag::DagList>")]
pub struct DagSessions {
    pub repo_opt: Option<PathBuf>,
}

/// `GET /v1/dag`, `docdex dag list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DagListParams {
    /// Repository root (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for DagListParams {
    type Message = DagSessions;
    type Output = crate::index::dag::DagList;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<DagSessions> {
        Ok(DagSessions { repo_opt })
    }
}

/// `GET /v1/dag/{session}`, `docdex dag view` (the session is in the path on HTTP).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DagViewParams {
    /// The session's id, as the list gives it.
    pub session: String,
    /// `json` (default), `text` or `dot` (Graphviz): how the HTTP API renders it.
    #[serde(default)]
    #[schemars(extend("enum" = ["json", "text", "dot"]))]
    pub format: Option<String>,
    /// Repository root (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl DagViewParams {
    /// The rendering asked for, checked.
    pub fn format(&self) -> Result<&str> {
        match params::text(self.format.clone()).as_deref() {
            None | Some("json") => Ok("json"),
            Some("text") => Ok("text"),
            Some("dot") => Ok("dot"),
            Some(other) => Err(DocdexError::invalid(format!("`format` must be json, text or dot, got `{other}`"))),
        }
    }
}

impl Tool for DagViewParams {
    type Message = DagGet;
    type Output = crate::index::dag::DagView;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<DagGet> {
        self.format()?;
        Ok(DagGet { repo_opt, session: self.session })
    }
}

/// One reasoning session with its nodes.
#[derive(Message)]
#[rtype(result = "Result<crate::index::dag::DagView>")]
pub struct DagGet {
    pub repo_opt: Option<PathBuf>,
    pub session: String,
}

impl Handler<Chat> for ToolDispatcher {
    type Result = ResponseFuture<Result<ChatStart>>;

    fn handle(&mut self, Chat(request): Chat, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(request.repo_opt.clone());
        let orchestrator = self.chat.orchestrator.clone();
        let repo_manager = self.repo_manager.clone();
        tracked(&self.metrics, "chat", async move {
            // Checked here so an unknown or unindexed repo is the usual error, first.
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let repo = PathBuf::from(&handle.meta.canonical_path);
            orchestrator.send(RunChat { repo, request }).await?
        })
    }
}

impl Handler<LlmModels> for ToolDispatcher {
    type Result = ResponseFuture<Result<Vec<crate::llm::ModelEntry>>>;

    fn handle(&mut self, _: LlmModels, _: &mut Context<Self>) -> Self::Result {
        let gateway = self.chat.gateway.clone();
        Box::pin(async move { gateway.send(ListModels).await? })
    }
}

impl Handler<DagSessions> for ToolDispatcher {
    type Result = ResponseFuture<Result<crate::index::dag::DagList>>;

    fn handle(&mut self, msg: DagSessions, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move {
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            let mut sessions = tokio::task::spawn_blocking(move || {
                let rtxn = index.store.read_txn()?;
                index.store.dag_sessions(&rtxn)
            })
            .await??;
            sessions.sort_by(|a, b| b.id.cmp(&a.id));
            Ok(crate::index::dag::DagList { repo: handle.meta.canonical_path.clone(), sessions })
        })
    }
}

impl Handler<DagGet> for ToolDispatcher {
    type Result = ResponseFuture<Result<crate::index::dag::DagView>>;

    fn handle(&mut self, msg: DagGet, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move {
            if !crate::index::dag::valid_session_id(&msg.session) {
                return Err(DocdexError::invalid(format!("`{}` is not a session id", msg.session))
                    .with_hint("session ids look like 20261123T210501123Z-3fa9c2; `docdexd dag list` shows them"));
            }
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            let id = msg.session.clone();
            let view = tokio::task::spawn_blocking(move || {
                let rtxn = index.store.read_txn()?;
                index.store.dag_view(&rtxn, &id)
            })
            .await??;
            view.ok_or_else(|| {
                DocdexError::new(ErrorCode::NotFound, format!("no session {} in this repo", msg.session))
                    .with_hint("`docdexd dag list --repo <path>` lists the repo's sessions")
            })
        })
    }
}
