//! The collection tools: add (register a folder by name and index it; a daemon watches it
//! from then on), remove, list; and mounting every collection when a daemon starts. A
//! collection is searched like a repo (`collection=NAME`, see `search`).

use std::path::{Path, PathBuf};

use actix::{AsyncContext, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::indexing::{IndexRepo, Status};
use super::params::{Caller, Tool};
use super::repos::Mount;
use super::ToolDispatcher;
use crate::actors::repo_supervisor::UnmountRepo;
use crate::index::collections::{check_name, Collections};
use crate::protocol::{Collection, CollectionList, CollectionStatus, DocdexError, ErrorCode, Result};

/// `POST /v1/collections`, MCP `docdex_collection_add`, `docdexd collection add NAME PATH`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionAddParams {
    /// The collection's name: letters, digits, `-`, `_`, `.` (e.g. "notes").
    pub name: String,
    /// The folder, e.g. "/home/me/notes": inside the folders the daemon serves, like a repo.
    pub path: PathBuf,
}

/// `DELETE /v1/collections/NAME`, MCP `docdex_collection_remove`, `docdexd collection remove NAME`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionRemoveParams {
    /// The collection's name.
    pub name: String,
}

/// `GET /v1/collections`, MCP `docdex_collection_list`, `docdexd collection list`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionListParams {}

#[derive(Message)]
#[rtype(result = "Result<CollectionStatus>")]
pub struct CollectionAdd {
    pub name: String,
    pub path: PathBuf,
}

#[derive(Message)]
#[rtype(result = "Result<Collection>")]
pub struct CollectionRemove {
    pub name: String,
}

#[derive(Message)]
#[rtype(result = "Result<CollectionList>")]
pub struct ListCollections;

/// A starting daemon mounts (and so watches) every collection; one that cannot be mounted
/// (its folder moved away) is logged and left registered.
#[derive(Message)]
#[rtype(result = "()")]
pub struct MountCollections;

impl Tool for CollectionAddParams {
    type Message = CollectionAdd;
    type Output = CollectionStatus;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        None
    }

    fn local_paths(&self) -> Vec<&Path> {
        vec![&self.path]
    }

    fn into_message(self, _: Option<PathBuf>, _: &Caller) -> Result<CollectionAdd> {
        check_name(&self.name)?;
        Ok(CollectionAdd { name: self.name, path: self.path })
    }
}

impl Tool for CollectionRemoveParams {
    type Message = CollectionRemove;
    type Output = Collection;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        None
    }

    fn into_message(self, _: Option<PathBuf>, _: &Caller) -> Result<CollectionRemove> {
        Ok(CollectionRemove { name: self.name })
    }
}

impl Tool for CollectionListParams {
    type Message = ListCollections;
    type Output = CollectionList;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        None
    }

    fn into_message(self, _: Option<PathBuf>, _: &Caller) -> Result<ListCollections> {
        Ok(ListCollections)
    }
}

impl ToolDispatcher {
    pub(super) fn collections(&self) -> Collections {
        Collections::at(&self.state_dir)
    }
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await?
}

impl Handler<CollectionAdd> for ToolDispatcher {
    type Result = ResponseFuture<Result<CollectionStatus>>;

    fn handle(&mut self, msg: CollectionAdd, ctx: &mut Context<Self>) -> Self::Result {
        // Allowlisted like a repo: a daemon registers only folders it may serve.
        let checked = self.checked_repo(Some(msg.path.clone()));
        let collections = self.collections();
        let me = ctx.address();
        Box::pin(async move {
            let path = checked?;
            if !path.is_dir() {
                return Err(DocdexError::new(
                    ErrorCode::RepoNotFound,
                    format!("{} is not a folder", msg.path.display()),
                ));
            }
            let name = msg.name.clone();
            let registered = path.clone();
            let collection = blocking(move || collections.add(&name, &registered)).await?;
            // The first index run, in the foreground; in a daemon it also mounts the folder,
            // which is watched from then on, and embeds in the background.
            let summary = me.send(IndexRepo { repo_opt: Some(path), wait: false }).await??;
            Ok(CollectionStatus {
                name: collection.name,
                path: collection.path,
                indexed: true,
                files: summary.files_scanned,
                chunks: summary.chunks_total,
                problem: None,
            })
        })
    }
}

impl Handler<CollectionRemove> for ToolDispatcher {
    type Result = ResponseFuture<Result<Collection>>;

    fn handle(&mut self, msg: CollectionRemove, _: &mut Context<Self>) -> Self::Result {
        let collections = self.collections();
        let supervisor_opt = self.supervisor_opt.clone();
        Box::pin(async move {
            let removed = blocking(move || collections.remove(&msg.name)).await?;
            if let Some(supervisor) = supervisor_opt {
                // No longer watched; its index stays in the state dir (adding it again
                // reuses it).
                supervisor.send(UnmountRepo { repo: PathBuf::from(&removed.path) }).await?;
            }
            Ok(removed)
        })
    }
}

impl Handler<ListCollections> for ToolDispatcher {
    type Result = ResponseFuture<Result<CollectionList>>;

    fn handle(&mut self, _: ListCollections, ctx: &mut Context<Self>) -> Self::Result {
        let collections = self.collections();
        let me = ctx.address();
        Box::pin(async move {
            let mut listed = Vec::new();
            for Collection { name, path } in blocking(move || collections.list()).await? {
                let mut status =
                    CollectionStatus { name, path: path.clone(), indexed: false, files: 0, chunks: 0, problem: None };
                if !Path::new(&path).is_dir() {
                    status.problem = Some("the folder is gone (moved or deleted)".into());
                } else {
                    match me.send(Status(Some(PathBuf::from(&path)))).await? {
                        Ok(repo) => {
                            (status.indexed, status.files, status.chunks) = (repo.indexed, repo.files, repo.chunks)
                        }
                        Err(err) => status.problem = Some(err.message),
                    }
                }
                listed.push(status);
            }
            Ok(CollectionList { collections: listed })
        })
    }
}

impl Handler<MountCollections> for ToolDispatcher {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: MountCollections, ctx: &mut Context<Self>) -> Self::Result {
        let collections = self.collections();
        let me = ctx.address();
        Box::pin(async move {
            let listed = match blocking(move || collections.list()).await {
                Ok(listed) => listed,
                Err(err) => return tracing::warn!(error = %err, "the collections cannot be read"),
            };
            for collection in listed {
                let mounted = me.send(Mount { repo: PathBuf::from(&collection.path), wait: false }).await;
                if let Err(err) = mounted.map_err(DocdexError::from).and_then(|r| r.map(|_| ())) {
                    tracing::warn!(collection = %collection.name, path = %collection.path, error = %err,
                        "collection not mounted (not watched until it is searched)");
                }
            }
        })
    }
}
