//! The daemon's repo tools: mounting a repo, the mounted repos, and the daemon's status.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::{Addr, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{self, Caller, Tool};
use super::ToolDispatcher;
use crate::actors::repo_manager::{OpenRepos, RepoManager};
use crate::actors::repo_supervisor::{ListMounts, RepoSupervisor};
use crate::protocol::{DaemonStatus, DocdexError, MountedRepo, Result};

/// Mounts a repo in the daemon (`POST /v1/initialize`, MCP workspace roots): its index run
/// and watcher start; with `wait`, answers once it is searchable (bounded like a search).
#[derive(Message)]
#[rtype(result = "Result<MountedRepo>")]
pub struct Mount {
    pub repo: PathBuf,
    pub wait: bool,
}

/// `POST /v1/initialize`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MountParams {
    /// The repository's root folder. `repo_path` and `project_root` are taken too.
    #[serde(alias = "repo_path", alias = "project_root")]
    pub repo: PathBuf,
    /// Answer once the repo is searchable (bounded by `[core] first_index_wait_secs`).
    #[serde(default, deserialize_with = "params::flag")]
    pub wait: Option<bool>,
}

impl Tool for MountParams {
    type Message = Mount;
    type Output = MountedRepo;

    fn repo(&self) -> Option<&Path> {
        Some(&self.repo)
    }

    fn into_message(self, _: Option<PathBuf>, _: &Caller) -> Result<Mount> {
        Ok(Mount { repo: self.repo, wait: self.wait.unwrap_or(false) })
    }
}

/// The daemon's mounted repos (`GET /v1/repos`).
#[derive(Message)]
#[rtype(result = "Result<Vec<MountedRepo>>")]
pub struct Repos;

/// The daemon's own state (`GET /v1/status` without a repo).
#[derive(Message)]
#[rtype(result = "Result<DaemonStatus>")]
pub struct DaemonState;

/// The mounted repos with which of them have open handles.
async fn mounted_repos(
    supervisor: &Addr<RepoSupervisor>,
    repo_manager: &Addr<RepoManager>,
) -> Result<Vec<MountedRepo>> {
    let open = repo_manager.send(OpenRepos).await?;
    Ok(supervisor.send(ListMounts { open }).await?)
}

fn not_a_daemon() -> DocdexError {
    DocdexError::invalid("this process does not mount repos (a one-shot command)")
        .with_hint("start the daemon with `docdexd daemon`")
}

impl Handler<Mount> for ToolDispatcher {
    type Result = ResponseFuture<Result<MountedRepo>>;

    fn handle(&mut self, msg: Mount, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo_with(Some(msg.repo.clone()), msg.wait);
        let supervisor_opt = self.supervisor_opt.clone();
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move {
            let supervisor = supervisor_opt.ok_or_else(not_a_daemon)?;
            // Resolved and checked once (`resolve_repo_with`): the path mounted is this one.
            let canonical = repo.await?;
            if !canonical.is_dir() {
                return Err(DocdexError::repo_not_found(&canonical.display().to_string(), "is not a directory"));
            }
            let shown = canonical.display().to_string();
            mounted_repos(&supervisor, &repo_manager)
                .await?
                .into_iter()
                .find(|mounted| mounted.repo == shown)
                .ok_or_else(|| DocdexError::internal(format!("{shown} was mounted and is gone again")))
        })
    }
}

impl Handler<Repos> for ToolDispatcher {
    type Result = ResponseFuture<Result<Vec<MountedRepo>>>;

    fn handle(&mut self, _: Repos, _: &mut Context<Self>) -> Self::Result {
        let supervisor_opt = self.supervisor_opt.clone();
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move { mounted_repos(&supervisor_opt.ok_or_else(not_a_daemon)?, &repo_manager).await })
    }
}

impl Handler<DaemonState> for ToolDispatcher {
    type Result = ResponseFuture<Result<DaemonStatus>>;

    fn handle(&mut self, _: DaemonState, _: &mut Context<Self>) -> Self::Result {
        let supervisor_opt = self.supervisor_opt.clone();
        let repo_manager = self.repo_manager.clone();
        let metrics = Arc::clone(&self.metrics);
        let embedder = Arc::clone(&self.embedder_shared);
        let uptime_secs = self.started.elapsed().as_secs();
        Box::pin(async move {
            let repos = match &supervisor_opt {
                Some(supervisor) => mounted_repos(supervisor, &repo_manager).await?,
                None => Vec::new(),
            };
            Ok(DaemonStatus {
                version: env!("CARGO_PKG_VERSION").into(),
                pid: std::process::id(),
                uptime_secs,
                rss_bytes: crate::actors::tool_dispatcher::metrics::resident_bytes(),
                models_loaded: embedder.loaded_models() as u64,
                repos,
                actors: metrics.snapshot(),
            })
        })
    }
}
