//! One search over several repos (`repos`, `group`): each repo resolved and checked as a
//! search of it alone would be (the allowlist, the mount, the first index), then all of
//! them ranked as one (`index::search_indexes`, which makes their scores comparable).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use actix::{Context, Handler, ResponseFuture};

use super::search::{Across, Ranking, SearchAcross};
use super::{open_indexed, tracked, ToolDispatcher};
use crate::actors::repo_manager::{OpenRepos, RepoHandle};
use crate::actors::repo_supervisor::ListMounts;
use crate::protocol::{DocdexError, Result, SearchRequest, SearchResponse, GROUP_ALL};

/// The search of `handles` as one ranking, each hit naming its repo (also when there is one).
async fn run_across(
    ranking: Ranking,
    handles: Vec<Arc<RepoHandle>>,
    request: SearchRequest,
    started: Instant,
) -> Result<SearchResponse> {
    let only_root = match handles.as_slice() {
        [one] => Some(one.index.root.display().to_string()),
        _ => None,
    };
    let mut response = ranking.run(handles, request, started).await?;
    if let Some(root) = only_root {
        response.hits.iter_mut().for_each(|hit| hit.repo = Some(root.clone()));
    }
    Ok(response)
}

impl Handler<SearchAcross> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, SearchAcross { request, across }: SearchAcross, _: &mut Context<Self>) -> Self::Result {
        let ranking = self.ranking();
        let repo_manager = self.repo_manager.clone();
        // Every repo the daemon serves: the mounted ones, which were checked when mounted.
        if across == Across::Group(GROUP_ALL.to_string()) {
            let supervisor_opt = self.supervisor_opt.clone();
            return tracked(&self.metrics, "search", async move {
                request.validate()?;
                let started = Instant::now();
                let supervisor = supervisor_opt.ok_or_else(|| {
                    DocdexError::invalid("`group=all` is every repo a daemon serves, and this is no daemon")
                        .with_hint("start `docdexd daemon`, or name the repos with `repos`")
                })?;
                let open = repo_manager.send(OpenRepos).await?;
                let mounts = supervisor.send(ListMounts { open }).await?;
                let mut handles = Vec::new();
                let mut waiting = Vec::new();
                let opened = futures_util::future::join_all(
                    mounts.iter().map(|mount| open_indexed(&repo_manager, PathBuf::from(&mount.repo))),
                )
                .await;
                for (mount, opened) in mounts.into_iter().zip(opened) {
                    // A repo in its first index has nothing to answer yet: said, not waited for.
                    match opened {
                        Ok(handle) => handles.push(handle),
                        Err(_) if !mount.searchable => waiting.push(mount.repo),
                        Err(err) => return Err(err),
                    }
                }
                if handles.is_empty() {
                    return Err(DocdexError::invalid("the daemon serves no indexed repo yet").with_hint(
                        "mount one with `POST /v1/initialize` (or search it by `repo`); `GET /v1/repos` lists them",
                    ));
                }
                let mut response = run_across(ranking, handles, request, started).await?;
                if !waiting.is_empty() {
                    let note = format!("not searched, still in their first index: {}", waiting.join(", "));
                    response.notice = Some(match response.notice.take() {
                        Some(notice) => format!("{note}; {notice}"),
                        None => note,
                    });
                }
                Ok(response)
            });
        }
        let roots = match across {
            Across::Repos(repos) => Ok(repos),
            Across::Group(name) => self.config.repos.groups.get(&name).cloned().ok_or_else(|| {
                let known: Vec<&str> = self.config.repos.groups.keys().map(String::as_str).collect();
                DocdexError::invalid(format!("no group `{name}`")).with_hint(if known.is_empty() {
                    format!("name groups under [repos.groups] in config.toml; `{GROUP_ALL}` is every served repo")
                } else {
                    format!("groups: {}, and `{GROUP_ALL}` (every served repo)", known.join(", "))
                })
            }),
        };
        // Each repo is checked against the allowlist here, before anything is opened: a
        // search naming one repo it may not reach is refused whole, never answered in part.
        let checked: Result<Vec<PathBuf>> =
            roots.and_then(|roots| roots.into_iter().map(|root| self.checked_repo(Some(root))).collect());
        let resolved = checked.map(|roots| {
            let mut seen = std::collections::HashSet::new();
            let unique = roots.into_iter().filter(|root| seen.insert(root.clone()));
            futures_util::future::try_join_all(unique.map(|root| self.resolve_repo(Some(root))).collect::<Vec<_>>())
        });
        tracked(&self.metrics, "search", async move {
            request.validate()?;
            let started = Instant::now();
            // Opened together: each is an actor's answer and a read of its state.
            let opened = futures_util::future::try_join_all(
                resolved?.await?.into_iter().map(|repo| open_indexed(&repo_manager, repo)),
            )
            .await?;
            let mut handles: Vec<Arc<RepoHandle>> = Vec::new();
            for handle in opened {
                // Two spellings of one repo are searched once.
                if !handles.iter().any(|h| h.index.root == handle.index.root) {
                    handles.push(handle);
                }
            }
            run_across(ranking, handles, request, started).await
        })
    }
}
