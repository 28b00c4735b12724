//! `docdexd libs …` and `docdexd crate …`: library docs from the command line. `libs fetch`
//! goes through the daemon when one serves this home (it holds the index writer), else runs
//! in this process; the crate tools run in this process (the docs cache is shared safely).

use std::path::PathBuf;

use clap::Subcommand;
use tokio::sync::mpsc;

use crate::actors::repo_manager::CloseAll;
use crate::actors::tool_dispatcher::crates::{
    CrateExamplesParams, CrateItemParams, CrateModulesParams, CrateParams, CrateSearchParams, CrateVersionsParams,
};
use crate::actors::tool_dispatcher::indexing::Status;
use crate::actors::tool_dispatcher::libs::LibsFetch;
use crate::cli::message;
use crate::cli::output::{print_out, to_json};
use crate::cli::progress::{embed_with_progress, finish_progress_printer, index_with_progress, spawn_progress_printer};
use crate::config::LoadedConfig;
use crate::daemon::client::{self, DaemonClient};
use crate::protocol::{ErrorCode, LibsFetchRequest, LibsFetchSummary, LibsProgress, Result, SearchMode};

#[derive(Debug, Subcommand)]
pub enum LibsAction {
    /// Detect the repo's dependencies (Cargo, npm, Python manifests and lockfiles), get each
    /// library's docs at the locked version into the machine-wide cache, and index them
    /// with the repo (search them with `search --source library` or `--lib NAME`).
    Fetch {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
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
            let actors = crate::actors::system::start_actors(loaded, None);
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
    // Failed libraries are not in `libraries` (what was ingested), but they were asked for.
    let asked = s.libraries.len() + s.failed.len();
    out.push_str(&format!(
        "{asked} {} ({} fetched, {} from cache, {} failed), {} chunks written, {} waiting for embeddings, in {:.1} s\n",
        if asked == 1 { "library" } else { "libraries" },
        s.fetched,
        s.from_cache,
        s.failed.len(),
        s.chunks_written,
        s.chunks_pending,
        s.seconds
    ));
    out
}

/// Which crate (shared by the `crate` subcommands).
#[derive(Debug, clap::Args)]
pub struct CrateArgs {
    /// The crate's name on crates.io.
    pub name: String,
    /// A version (default: the one --repo locks, else the newest release).
    #[arg(long)]
    pub version: Option<String>,
    /// A repo whose Cargo.lock fixes the version.
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

impl CrateArgs {
    /// The crate tools' common parameters, as the flags give them.
    fn params(&self) -> CrateParams {
        CrateParams {
            crate_name: self.name.clone(),
            version: self.version.clone(),
            repo: self.repo.as_deref().map(client::absolute),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CrateAction {
    /// Name, version, description, item counts by kind, top modules.
    Summary {
        #[command(flatten)]
        krate: CrateArgs,
    },
    /// Search the crate's items (names, signatures, docs; by meaning too once embedded).
    Search {
        #[command(flatten)]
        krate: CrateArgs,
        /// fn, method, struct, enum, trait, macro, mod, type, const, static or union.
        #[arg(long)]
        kind: Option<String>,
        /// Items to list (default 10, at most 50).
        #[arg(long)]
        limit: Option<u64>,
        /// lexical, dense or hybrid (default: hybrid once the items are embedded).
        #[arg(long)]
        mode: Option<SearchMode>,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// An item's full docs: by path (`tokio::spawn`), re-export or close match.
    #[command(visible_alias = "doc")]
    Item {
        #[command(flatten)]
        krate: CrateArgs,
        /// The item's path (`serde::de::Deserialize`); or give it alone as the crate
        /// (`crate item serde::Deserialize`), whose first segment names the crate.
        path: Option<String>,
    },
    /// The crate's modules with their item counts.
    #[command(visible_alias = "tree")]
    Modules {
        #[command(flatten)]
        krate: CrateArgs,
    },
    /// Whole code examples from the docs (of one item with --item) and `examples/`.
    Examples {
        #[command(flatten)]
        krate: CrateArgs,
        #[arg(long)]
        item: Option<String>,
        /// Only examples mentioning every word of this.
        #[arg(long)]
        query: Option<String>,
        /// Examples to show (default 5, at most 50).
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Every release, newest first, with yanked flags (from cargo's registry index).
    Versions {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

/// Runs a crate tool in this process (the cache is shared with any daemon, safely).
pub async fn run_crate(loaded: &LoadedConfig, action: CrateAction) -> Result<i32> {
    let actors = crate::actors::system::start_actors(loaded, None);
    let dispatcher = &actors.dispatcher;
    let text = match action {
        CrateAction::Summary { krate } => {
            let s = dispatcher.send(message(krate.params())?).await??;
            if krate.json {
                to_json(&s)?
            } else {
                let kinds: Vec<String> = s.kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
                let modules: Vec<String> = s.top_modules.iter().map(|m| format!("{} ({})", m.path, m.items)).collect();
                let notes: String = s.notes.iter().map(|note| format!("note: {note}\n")).collect();
                format!(
                    "{} {} ({}, docs from {})\n{}\nitems: {} ({})\ntop modules: {}\n{notes}",
                    s.name,
                    s.version,
                    s.resolved_by,
                    s.origin,
                    s.description,
                    s.items,
                    kinds.join(", "),
                    modules.join(", ")
                )
            }
        }
        CrateAction::Search { krate, kind, limit, mode, query } => {
            let CrateParams { crate_name, version, repo } = krate.params();
            let search = CrateSearchParams {
                crate_name,
                query: query.join(" "),
                kind,
                mode: mode.map(|m| m.as_str().to_string()),
                limit,
                version,
                repo,
            };
            let r = dispatcher.send(message(search)?).await??;
            if krate.json {
                to_json(&r)?
            } else {
                let mut out = String::new();
                if let Some(notice) = &r.notice {
                    out.push_str(&format!("note: {notice}\n"));
                }
                for (n, hit) in r.hits.iter().enumerate() {
                    out.push_str(&format!(
                        "{}. {} ({}) {:.3}\n   {}\n",
                        n + 1,
                        hit.path,
                        hit.kind,
                        hit.score,
                        hit.summary
                    ));
                }
                out.push_str(&format!("{} hits in {} {} ({})\n", r.hits.len(), r.name, r.version, r.mode));
                out
            }
        }
        CrateAction::Item { mut krate, path } => {
            let path = match path {
                Some(path) => path,
                None => match krate.name.split_once("::") {
                    Some((name, _)) => {
                        let path = krate.name.clone();
                        krate.name = name.to_string();
                        path
                    }
                    None => {
                        return Err(crate::protocol::DocdexError::invalid("name an item of the crate").with_hint(
                            format!("`docdexd crate doc {0} {0}::Item` or `docdexd crate doc {0}::Item`", krate.name),
                        ))
                    }
                },
            };
            let CrateParams { crate_name, version, repo } = krate.params();
            let doc = dispatcher.send(message(CrateItemParams { crate_name, path, version, repo })?).await??;
            if krate.json {
                to_json(&doc)?
            } else {
                let via = doc.requested.as_deref().map(|r| format!(" (asked for {r})")).unwrap_or_default();
                format!("{} {}{via}\n\n```rust\n{}\n```\n\n{}\n", doc.kind, doc.path, doc.signature, doc.docs)
            }
        }
        CrateAction::Modules { krate } => {
            let tree = dispatcher.send(message(CrateModulesParams(krate.params()))?).await??;
            if krate.json {
                to_json(&tree)?
            } else {
                tree.modules
                    .iter()
                    .map(|m| format!("{}{} ({})\n", "  ".repeat(m.depth as usize), m.path, m.items))
                    .collect()
            }
        }
        CrateAction::Examples { krate, item, query, limit } => {
            let CrateParams { crate_name, version, repo } = krate.params();
            let params = CrateExamplesParams { crate_name, item, query, limit, version, repo };
            let examples = dispatcher.send(message(params)?).await??;
            if krate.json {
                to_json(&examples)?
            } else {
                let mut out = String::new();
                for e in &examples.examples {
                    let title = if e.title.is_empty() { String::new() } else { format!(" — {}", e.title) };
                    out.push_str(&format!("// {}{title}\n```{}\n{}\n```\n\n", e.source, e.language, e.code));
                }
                if examples.more > 0 {
                    out.push_str(&format!("({} more: raise --limit)\n", examples.more));
                }
                out
            }
        }
        CrateAction::Versions { name, json } => {
            let versions = dispatcher.send(message(CrateVersionsParams { crate_name: name })?).await??;
            if json {
                to_json(&versions)?
            } else {
                let mut out = format!("{} (latest {})\n", versions.name, versions.latest);
                for v in &versions.versions {
                    out.push_str(&format!("{}{}\n", v.version, if v.yanked { " (yanked)" } else { "" }));
                }
                out
            }
        }
    };
    actors.repo_manager.send(CloseAll).await?;
    print_out(&text)?;
    Ok(0)
}
