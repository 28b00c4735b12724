//! ToolDispatcher: the one entry point that the CLI, HTTP and MCP call with typed requests.
//! It resolves the repo, routes to the actors and returns typed responses or typed errors;
//! transports only parse and render. A router: each tool module in this folder (`search`,
//! `indexing`, `web`, `chat`, `memory`, `files`, `repos`, `crates`, `libs`) declares its
//! messages and their handlers; this file holds the dispatcher's state and the repo
//! resolution every tool shares.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::{Actor, Addr, AsyncContext, Context, ResponseFuture};
use tokio::sync::watch;

use super::chat::{ChatOrchestrator, ChatParts, ChatTools};
use super::dag_logger::DagLogger;
use super::discovery::Discovery;
use super::embedder::{Embedder, EmbedderShared};
use super::ingestor::Ingestor;
use super::llm_gateway::LlmGateway;
use super::memory_store::MemoryStore;
use super::repo_manager::{OpenRepo, RepoHandle, RepoManager};
use super::repo_supervisor::{MountRepo, MountState, RepoSupervisor, SupervisorSettings};
use super::scraper::Scraper;
use super::waterfall::WaterfallOrchestrator;
use crate::actors::tool_dispatcher::metrics::Metrics;
use crate::config::Config;
use crate::protocol::{DocdexError, ErrorCode, Result};

pub mod across;
pub mod chat;
pub mod code;
pub mod collections;
pub mod crates;
pub mod files;
pub mod impact;
pub mod indexing;
pub(crate) mod jobs;
pub mod libs;
pub(crate) mod libs_fetch;
pub mod memory;
pub(crate) mod metrics;
pub mod pack;
pub mod params;
pub mod repos;
pub mod run_tests;
pub mod search;
pub mod web;

/// Background embedding: the repos whose pending chunks are being embedded (and whether
/// more arrived meanwhile), the flag a shutdown raises so they stop between batches, and
/// the model they share (released when the last job ends).
#[derive(Clone)]
struct EmbeddingJobs {
    running: Arc<Mutex<HashMap<String, bool>>>,
    stopping: Arc<std::sync::atomic::AtomicBool>,
    model: Arc<EmbedderShared>,
    /// The dispatcher's load counters: the jobs' model batches wait for requests to pause.
    metrics: Arc<Metrics>,
}

pub struct ToolDispatcher {
    repo_manager: Addr<RepoManager>,
    ingestor: Addr<Ingestor>,
    embedder: Addr<Embedder>,
    memory: Addr<MemoryStore>,
    web: WebActors,
    chat: ChatActors,
    config: Arc<Config>,
    default_repo_opt: Option<PathBuf>,
    repo_policy: crate::ingest::repo_policy::RepoPolicy,
    embedding_jobs: EmbeddingJobs,
    /// The daemon's mounted repos (`None` for one-shot CLI commands, which index in the
    /// foreground).
    supervisor_opt: Option<Addr<RepoSupervisor>>,
    embedder_shared: Arc<EmbedderShared>,
    metrics: Arc<Metrics>,
    started: Instant,
    /// The machine-wide library docs cache (`<state>/cache/libs`).
    libs_cache_root: PathBuf,
    /// The state directory (collections are registered there).
    state_dir: PathBuf,
    crate_cache: Addr<super::crate_cache::CrateCache>,
}

/// The web tier's actors, as the dispatcher reaches them.
#[derive(Clone)]
pub struct WebActors {
    pub discovery: Addr<Discovery>,
    pub scraper: Addr<Scraper>,
    pub waterfall: Addr<WaterfallOrchestrator>,
}

/// Grounded chat's actors, as the dispatcher reaches them.
#[derive(Clone)]
pub struct ChatActors {
    pub gateway: Addr<LlmGateway>,
    pub dag: Addr<DagLogger>,
    pub orchestrator: Addr<ChatOrchestrator>,
}

/// What the dispatcher is made of; the waterfall is created with the dispatcher's own
/// address (it runs tier 1 through it), see `ToolDispatcher::start_with`.
pub struct DispatcherParts {
    pub repo_manager: Addr<RepoManager>,
    pub ingestor: Addr<Ingestor>,
    pub embedder: Addr<Embedder>,
    pub memory: Addr<MemoryStore>,
    pub discovery: Addr<Discovery>,
    pub scraper: Addr<Scraper>,
    pub gateway: Addr<LlmGateway>,
    pub dag: Addr<DagLogger>,
    pub config: Arc<Config>,
    pub default_repo_opt: Option<PathBuf>,
    pub repo_policy: crate::ingest::repo_policy::RepoPolicy,
    pub embedder_shared: Arc<EmbedderShared>,
    /// Daemons mount repos (index run, watcher, idle release); one-shot commands do not.
    pub supervisor_settings_opt: Option<SupervisorSettings>,
    /// The state directory (the library docs cache lives under it).
    pub state_dir: PathBuf,
    pub crate_cache: Addr<super::crate_cache::CrateCache>,
}

impl ToolDispatcher {
    /// Starts the dispatcher, and the WaterfallOrchestrator and ChatOrchestrator that call
    /// back into it.
    pub fn start_with(parts: DispatcherParts) -> (Addr<ToolDispatcher>, WebActors, ChatActors) {
        let mut web_opt = None;
        let mut chat_opt = None;
        let dispatcher = ToolDispatcher::create(|ctx| {
            let waterfall = WaterfallOrchestrator::new(
                ctx.address().recipient(),
                parts.repo_manager.clone(),
                parts.discovery.clone(),
                parts.scraper.clone(),
                Arc::clone(&parts.config),
            )
            .start();
            let orchestrator = ChatOrchestrator::new(ChatParts {
                tools: ChatTools {
                    recall: ctx.address().recipient(),
                    read: ctx.address().recipient(),
                    diff: ctx.address().recipient(),
                },
                waterfall: waterfall.clone(),
                repo_manager: parts.repo_manager.clone(),
                gateway: parts.gateway.clone(),
                dag: parts.dag.clone(),
                config: Arc::clone(&parts.config),
            })
            .start();
            let web = WebActors { discovery: parts.discovery, scraper: parts.scraper, waterfall };
            web_opt = Some(web.clone());
            let chat = ChatActors { gateway: parts.gateway, dag: parts.dag, orchestrator };
            chat_opt = Some(chat.clone());
            let metrics: Arc<Metrics> = Arc::default();
            let supervisor_opt = parts.supervisor_settings_opt.map(|settings| {
                RepoSupervisor::new(
                    ctx.address().recipient(),
                    parts.repo_manager.clone(),
                    Arc::clone(&parts.embedder_shared),
                    settings,
                )
                .start()
            });
            ToolDispatcher {
                repo_manager: parts.repo_manager,
                ingestor: parts.ingestor,
                embedder: parts.embedder,
                memory: parts.memory,
                web,
                chat,
                config: parts.config,
                default_repo_opt: parts.default_repo_opt,
                repo_policy: parts.repo_policy,
                embedding_jobs: EmbeddingJobs {
                    running: Arc::default(),
                    stopping: Arc::default(),
                    model: Arc::clone(&parts.embedder_shared),
                    metrics: Arc::clone(&metrics),
                },
                supervisor_opt,
                embedder_shared: parts.embedder_shared,
                metrics,
                started: Instant::now(),
                libs_cache_root: crate::libs::cache_root(&parts.state_dir),
                state_dir: parts.state_dir.clone(),
                crate_cache: parts.crate_cache,
            }
        });
        (dispatcher, web_opt.expect("set by create"), chat_opt.expect("set by create"))
    }

    /// The repo a request names (or the default), if this dispatcher may serve it. In a
    /// daemon the repo is mounted on the way, and a request that arrives during its first
    /// index run waits for it (bounded) rather than finding it unindexed.
    fn resolve_repo(&self, repo_opt: Option<PathBuf>) -> RepoFuture {
        self.resolve_repo_with(repo_opt, true)
    }

    fn resolve_repo_with(&self, repo_opt: Option<PathBuf>, wait: bool) -> RepoFuture {
        let checked = self.checked_repo(repo_opt);
        let supervisor_opt = self.supervisor_opt.clone();
        let wait_opt = wait.then(|| Duration::from_secs(self.config.core.first_index_wait_secs));
        Box::pin(async move {
            // Resolved once and checked as resolved; the handler opens this very path (and the
            // repo manager checks again what it resolves to then, so a link swapped in between
            // is judged by where it leads).
            let repo = checked?;
            if let Some(supervisor) = supervisor_opt {
                if repo.is_dir() {
                    let state = supervisor.send(MountRepo { repo: repo.clone(), start_run: true }).await??;
                    if let Some(wait) = wait_opt {
                        wait_for_first_index(state, wait, &repo).await?;
                    }
                }
            }
            Ok(repo)
        })
    }

    fn checked_repo(&self, repo_opt: Option<PathBuf>) -> Result<PathBuf> {
        let repo = repo_opt.or_else(|| self.default_repo_opt.clone()).ok_or_else(|| {
            DocdexError::invalid("no repo given and the daemon has no default repo")
                .with_hint("pass `--repo <path>` (CLI), `repo` (HTTP query or body, MCP tools), or for chat `docdex.repo` or an X-Docdex-Repo header")
        })?;
        // Unknown paths allowed by the policy are left to the handler's `repo_not_found`.
        self.repo_policy.resolve(&repo)
    }
}

/// Counts a request against `actor` in the daemon's load counters.
fn tracked<T: 'static>(
    metrics: &Arc<Metrics>,
    actor: &'static str,
    work: impl std::future::Future<Output = Result<T>> + 'static,
) -> ResponseFuture<Result<T>> {
    let metrics = Arc::clone(metrics);
    Box::pin(async move { metrics.track(actor, work).await })
}

/// A repo path, once checked (and in a daemon, mounted).
type RepoFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<PathBuf>>>>;

/// Waits until a mounted repo has a complete index (or its run ended without one), at most
/// `wait`; past that, `indexing_in_progress` with the progress so far.
async fn wait_for_first_index(mut state: watch::Receiver<MountState>, wait: Duration, repo: &Path) -> Result<()> {
    let settled = |s: &MountState| s.searchable || !s.running;
    if tokio::time::timeout(wait, state.wait_for(settled)).await.is_ok() {
        return Ok(());
    }
    let progress = match &state.borrow().progress_opt {
        Some(p) if p.files_total > 0 => {
            format!(": {} of {} files read, {} chunks written so far", p.files_done, p.files_total, p.chunks_written)
        }
        _ => ": scanning the repo".into(),
    };
    Err(DocdexError::new(
        ErrorCode::IndexingInProgress,
        format!("the first index of {} is still running after {} s{progress}", repo.display(), wait.as_secs()),
    )
    .with_hint("retry shortly; `docdexd status` or GET /v1/repos shows the progress"))
}

impl Actor for ToolDispatcher {
    type Context = Context<Self>;
}

/// Opens an indexed repo for reading; a repo whose first index never completed is an error.
async fn open_indexed(repo_manager: &Addr<RepoManager>, path: PathBuf) -> Result<Arc<RepoHandle>> {
    let handle = repo_manager.send(OpenRepo { path, create: false }).await??;
    let index = Arc::clone(&handle.index);
    let state =
        tokio::task::spawn_blocking(move || index.store.read_txn().and_then(|t| index.store.run_state(&t))).await??;
    if !state.indexed() {
        let path = handle.meta.canonical_path.clone();
        let err = DocdexError::repo_not_indexed(&path);
        return Err(if state.interrupted() {
            DocdexError { message: format!("the first index of {path} did not finish"), ..err }
        } else if let Some(why) = state.rebuild_reason {
            // An upgrade emptied it: same code, but the user should know nothing was lost.
            DocdexError { message: format!("the index of {path} was emptied for a rebuild ({why})"), ..err }
                .with_hint(format!("run `docdexd index --repo {path}`: unchanged chunks reuse their embeddings"))
        } else {
            err
        });
    }
    Ok(handle)
}

/// The vectors a repo's chunks have, and the chunks waiting for them.
async fn vector_counts(handle: &RepoHandle) -> Result<crate::index::VectorCounts> {
    let index = Arc::clone(&handle.index);
    tokio::task::spawn_blocking(move || index.store.vector_counts(&index.store.read_txn()?)).await?
}

/// `vector_counts` of several repos, read on one blocking thread.
async fn vector_counts_of(handles: &[Arc<RepoHandle>]) -> Result<Vec<crate::index::VectorCounts>> {
    let indexes: Vec<Arc<crate::index::RepoIndex>> = handles.iter().map(|h| Arc::clone(&h.index)).collect();
    tokio::task::spawn_blocking(move || {
        indexes.iter().map(|index| index.store.vector_counts(&index.store.read_txn()?)).collect()
    })
    .await?
}
