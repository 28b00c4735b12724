//! `docdexd libs …`: library docs from the command line, through the daemon when one
//! serves this home (it holds the index writer), else in this process.

use std::path::PathBuf;

use clap::Subcommand;
use tokio::sync::mpsc;

use crate::actors::repo_manager::CloseAll;
use crate::actors::tool_dispatcher::{LibsFetch, Status};
use crate::cli::{
    embed_with_progress, finish_progress_printer, index_with_progress, print_out, spawn_progress_printer, to_json,
};
use crate::client::{self, DaemonClient};
use crate::config::LoadedConfig;
use crate::protocol::{ErrorCode, LibsFetchRequest, LibsFetchSummary, LibsProgress, Result};

#[derive(Debug, Subcommand)]
pub enum LibsAction {
    /// Detect the repo's dependencies (Cargo, npm, Python manifests and lockfiles), get each
    /// library's docs at the locked version into the machine-wide cache, and index them
    /// with the repo (search them with `search --source library` or `--lib NAME`).
    Fetch {
        #[arg(long)]
        repo: PathBuf,
        /// Transitive dependencies too (default: those the manifests name).
        #[arg(long)]
        all: bool,
        /// Only this library (repeatable); others indexed before are kept.
        #[arg(long = "lib")]
        libs: Vec<String>,
        /// Also embed the new chunks before exiting (otherwise a running daemon does it).
        #[arg(long)]
        wait: bool,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run_libs(loaded: &LoadedConfig, action: LibsAction) -> Result<i32> {
    let LibsAction::Fetch { repo, all, libs, wait, json } = action;
    let repo = client::absolute(&repo);
    let request = LibsFetchRequest { repo_opt: Some(repo.clone()), all, names: libs };
    let through_daemon = match DaemonClient::find(loaded)? {
        Some(daemon) => match daemon.libs_fetch(&request).await {
            Err(err) if err.code == ErrorCode::PathRefused => None,
            result => Some(result?),
        },
        None => None,
    };
    let summary = match through_daemon {
        Some(summary) => summary,
        None => {
            let actors = crate::start_actors(loaded, None);
            // Library hits are searched with the repo's own: an unindexed repo is indexed
            // first, so `search` works right after.
            let indexed = match actors.dispatcher.send(Status(Some(repo.clone()))).await? {
                Ok(status) => status.indexed,
                Err(err) if err.code == ErrorCode::RepoNotIndexed => false,
                Err(err) => return Err(err),
            };
            if !indexed {
                index_with_progress(&actors, repo.clone()).await?;
            }
            let (tx, rx) = mpsc::unbounded_channel::<LibsProgress>();
            let printer = spawn_progress_printer(rx, render_progress);
            let fetch = LibsFetch { request, progress_opt: Some(tx), embed_in_background: false };
            let result = actors.dispatcher.send(fetch).await?;
            finish_progress_printer(printer).await;
            let summary = result?;
            if wait && summary.chunks_pending > 0 {
                embed_with_progress(&actors, repo).await?;
            }
            actors.repo_manager.send(CloseAll).await?;
            summary
        }
    };
    print_out(&if json { to_json(&summary)? } else { render_summary(&summary) })?;
    // Some libraries failing is a partial success; nothing at all is a failure.
    Ok(if summary.libraries.is_empty() && !summary.failed.is_empty() { 1 } else { 0 })
}

fn render_progress(p: &LibsProgress) -> String {
    format!("libs: {}/{} {} {}", p.done, p.total, p.library, p.outcome)
}

fn render_summary(s: &LibsFetchSummary) -> String {
    let mut out = format!(
        "libraries of {}\n  read: {}\n",
        s.repo,
        if s.manifests.is_empty() { "no manifests found".to_string() } else { s.manifests.join(", ") }
    );
    for lib in &s.libraries {
        out.push_str(&format!(
            "  {} {}@{}: {} docs, {} items, from {}{}{}\n",
            lib.ecosystem,
            lib.name,
            lib.version,
            lib.docs,
            lib.items,
            lib.origin,
            if lib.from_cache { " (cached)" } else { "" },
            if lib.chunks_written > 0 { format!(", {} chunks indexed", lib.chunks_written) } else { String::new() },
        ));
        for note in &lib.notes {
            out.push_str(&format!("      note: {note}\n"));
        }
    }
    for failure in &s.failed {
        let version = if failure.version.is_empty() { String::new() } else { format!("@{}", failure.version) };
        out.push_str(&format!("  FAILED {}{version}: {}\n", failure.name, failure.reason));
    }
    for dep in &s.unresolved {
        out.push_str(&format!("  unresolved {} {}: {}\n", dep.ecosystem, dep.name, dep.requirement));
    }
    if !s.removed.is_empty() {
        out.push_str(&format!("  removed from the index: {}\n", s.removed.join(", ")));
    }
    out.push_str(&format!(
        "{} libraries ({} fetched, {} from cache, {} failed), {} chunks written, {} waiting for embeddings, in {:.1} s\n",
        s.libraries.len(),
        s.fetched,
        s.from_cache,
        s.failed.len(),
        s.chunks_written,
        s.chunks_pending,
        s.seconds
    ));
    out
}
