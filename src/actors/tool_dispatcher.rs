//! ToolDispatcher: the one entry point that the CLI, HTTP (and later MCP) call with typed
//! requests. It resolves the repo, routes to the actors and returns typed responses or typed
//! errors; transports only parse and render.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::{Actor, Addr, AsyncContext, Context, Handler, Message, ResponseFuture};
use tokio::sync::mpsc::UnboundedSender;

use super::chat::{ChatOrchestrator, ChatParts, ChatStart, RunChat};
use super::dag_logger::{AppendDag, DagLogger};
use super::discovery::{Discover, Discovery};
use super::embedder::{EmbedQuery, EmbedTexts, Embedder, EmbedderShared, ModelInfo, ProbeModel};
use super::format_unix;
use super::indexer::AbortIndexRun;
use super::ingestor::Ingestor;
use super::llm_gateway::{ListModels, LlmGateway};
use super::memory_store::{
    DeleteMemory, MemoryStore, RecallMemory, SaveMemory, StoreMemoryVectors, UnembeddedMemories,
};
use super::repo_manager::{OpenRepo, OpenRepos, RepoHandle, RepoManager};
use super::repo_supervisor::{
    ListMounts, MountRepo, MountState, RepoSupervisor, RunEnded, RunStarted, SupervisorSettings,
};
use super::scraper::{FetchPage, Scraper};
use super::waterfall::{RunWaterfall, WaterfallOrchestrator};
use crate::config::Config;
use crate::index::{FusionParams, SearchFilter, SearchParams};
use crate::jobs::{embed_pending, run_index};
use crate::metrics::Metrics;
use crate::models::MODEL_NAME;
use crate::protocol::{
    ChatRequest, ChunkContent, DaemonStatus, DocdexError, EmbedProgress, EmbedSummary, EmbeddingStatus, ErrorCode,
    FileContent, FileEntry, FileList, IndexProgress, IndexRequest, IndexSummary, MemoryDeleted, MemoryItem,
    MemoryRecallResponse, MissingFile, MountedRepo, MultiGetResponse, RepoStatus, Result, SearchMode, SearchRequest,
    SearchResponse, WaterfallRequest, WaterfallResponse, WebFetchResponse, WebSearchResponse,
    MAX_MEMORY_METADATA_BYTES, MAX_MEMORY_RECALL, MAX_MEMORY_TEXT_BYTES, MAX_MULTI_GET, MAX_OPEN_LINES,
};
use tokio::sync::watch;

mod crates;
mod libs;
pub use crates::{
    CrateExamplesQuery, CrateSearch, CrateSummaryQuery, CrateVersionsQuery, ItemDocQuery, ModuleTreeQuery,
};
pub use libs::LibsFetch;

/// arroy nodes inspected per neighbour asked for (see `dense_depth_and_search_k`).
const DENSE_SEARCH_K_PER_RESULT: usize = 150;

/// How many neighbours a dense search of `limit` hits asks arroy for, and how many nodes it
/// lets arroy inspect: the same depth as `RepoIndex::search_with` uses.
pub fn dense_depth_and_search_k(limit: usize) -> (usize, usize) {
    let depth = crate::index::candidate_depth(SearchParams::new(limit, 2));
    (depth, depth * DENSE_SEARCH_K_PER_RESULT)
}

/// Background embedding: the repos whose pending chunks are being embedded (and whether
/// more arrived meanwhile), and the flag a shutdown raises so they stop between batches.
#[derive(Clone, Default)]
struct EmbeddingJobs {
    running: Arc<Mutex<HashMap<String, bool>>>,
    stopping: Arc<std::sync::atomic::AtomicBool>,
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
    repo_policy: crate::repo_policy::RepoPolicy,
    embedding_jobs: EmbeddingJobs,
    /// The daemon's mounted repos (`None` for one-shot CLI commands, which index in the
    /// foreground).
    supervisor_opt: Option<Addr<RepoSupervisor>>,
    embedder_shared: Arc<EmbedderShared>,
    metrics: Arc<Metrics>,
    started: Instant,
    /// The machine-wide library docs cache (`<state>/cache/libs`).
    libs_cache_root: PathBuf,
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
    pub repo_policy: crate::repo_policy::RepoPolicy,
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
                ctx.address(),
                parts.repo_manager.clone(),
                parts.discovery.clone(),
                parts.scraper.clone(),
                Arc::clone(&parts.config),
            )
            .start();
            let orchestrator = ChatOrchestrator::new(ChatParts {
                dispatcher: ctx.address(),
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
            let supervisor_opt = parts.supervisor_settings_opt.map(|settings| {
                RepoSupervisor::new(
                    ctx.address(),
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
                embedding_jobs: Default::default(),
                supervisor_opt,
                embedder_shared: parts.embedder_shared,
                metrics: Arc::default(),
                started: Instant::now(),
                libs_cache_root: crate::libs::cache_root(&parts.state_dir),
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
            let repo = checked?;
            if let Some(supervisor) = supervisor_opt {
                // Unknown paths are left to the handler's own error.
                if let Ok(canonical) = std::fs::canonicalize(&repo) {
                    if canonical.is_dir() {
                        let state = supervisor.send(MountRepo { repo: canonical.clone(), start_run: true }).await??;
                        if let Some(wait) = wait_opt {
                            wait_for_first_index(state, wait, &canonical).await?;
                        }
                    }
                }
            }
            Ok(repo)
        })
    }

    fn checked_repo(&self, repo_opt: Option<PathBuf>) -> Result<PathBuf> {
        let repo = repo_opt.or_else(|| self.default_repo_opt.clone()).ok_or_else(|| {
            DocdexError::invalid("no repo given and the daemon has no default repo")
                .with_hint("pass `repo=<path>` (HTTP), `--repo <path>` (CLI), or for chat `docdex.repo_path` or an X-Docdex-Repo header")
        })?;
        self.repo_policy.check(&repo)?;
        Ok(repo)
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

/// Search a repo.
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct Search(pub SearchRequest);

/// Index or refresh a repo, optionally reporting progress. With `embed_in_background`, the
/// new chunks' embeddings are computed after the lexical index is ready, without waiting.
#[derive(Message)]
#[rtype(result = "Result<IndexSummary>")]
pub struct Index {
    pub request: IndexRequest,
    pub progress_opt: Option<UnboundedSender<IndexProgress>>,
    pub embed_in_background: bool,
}

/// Embeds the repo's pending chunks and waits until none are left.
#[derive(Message)]
#[rtype(result = "Result<EmbedSummary>")]
pub struct EmbedPending {
    pub repo: PathBuf,
    pub progress_opt: Option<UnboundedSender<EmbedProgress>>,
}

/// Starts embedding a repo's pending chunks in the background (no answer).
#[derive(Message)]
#[rtype(result = "()")]
pub struct EmbedInBackground {
    pub repo: PathBuf,
}

/// Stops background embedding before the process exits: no new job starts, running ones
/// end after their batch in flight, waited for (at most ten seconds). An inference still
/// running when the process exits is torn down under ONNX Runtime's feet.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopBackgroundWork;

/// What is indexed for a repo; `None` means the default repo.
#[derive(Message)]
#[rtype(result = "Result<RepoStatus>")]
pub struct Status(pub Option<PathBuf>);

/// Discovers web pages for a query (`web-search`).
#[derive(Message)]
#[rtype(result = "Result<WebSearchResponse>")]
pub struct WebSearch {
    pub query: String,
    pub limit: usize,
}

/// Fetches one page (`web-fetch`), from the cache when fresh unless `refresh`.
#[derive(Message)]
#[rtype(result = "Result<WebFetchResponse>")]
pub struct WebFetch {
    pub url: String,
    pub refresh: bool,
}

/// Runs the waterfall for a search (`web-rag`, `force_web` searches, `docdex_web_research`).
#[derive(Message)]
#[rtype(result = "Result<WaterfallResponse>")]
pub struct WebRag(pub WaterfallRequest);

impl Handler<WebSearch> for ToolDispatcher {
    type Result = ResponseFuture<Result<WebSearchResponse>>;

    fn handle(&mut self, msg: WebSearch, _: &mut Context<Self>) -> Self::Result {
        let discovery = self.web.discovery.clone();
        let enabled = self.config.web.enabled;
        tracked(&self.metrics, "discovery", async move {
            if !enabled {
                return Err(DocdexError::web_disabled());
            }
            if msg.limit == 0 || msg.limit > super::discovery::MAX_DISCOVERY_RESULTS {
                return Err(DocdexError::invalid(format!(
                    "limit must be between 1 and {}, got {}",
                    super::discovery::MAX_DISCOVERY_RESULTS,
                    msg.limit
                )));
            }
            discovery.send(Discover { query: msg.query, limit: msg.limit, refresh: false }).await?
        })
    }
}

impl Handler<WebFetch> for ToolDispatcher {
    type Result = ResponseFuture<Result<WebFetchResponse>>;

    fn handle(&mut self, msg: WebFetch, _: &mut Context<Self>) -> Self::Result {
        let scraper = self.web.scraper.clone();
        let enabled = self.config.web.enabled;
        tracked(&self.metrics, "scraper", async move {
            if !enabled {
                return Err(DocdexError::web_disabled());
            }
            let started = Instant::now();
            let page = scraper.send(FetchPage { url: msg.url, refresh: msg.refresh }).await??;
            Ok(WebFetchResponse { took_ms: started.elapsed().as_secs_f64() * 1000.0, page })
        })
    }
}

impl Handler<WebRag> for ToolDispatcher {
    type Result = ResponseFuture<Result<WaterfallResponse>>;

    fn handle(&mut self, WebRag(request): WebRag, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(request.search.repo_opt.clone());
        let waterfall = self.web.waterfall.clone();
        let repo_manager = self.repo_manager.clone();
        let dag = self.chat.dag.clone();
        tracked(&self.metrics, "waterfall", async move {
            request.search.validate()?;
            let repo = repo.await?;
            let mut response = waterfall
                .send(RunWaterfall { repo: repo.clone(), search: request.search, force_web: request.force_web })
                .await??;
            // The session's reasoning DAG, from what the waterfall did.
            let mut recorder = crate::dag::DagRecorder::new("web_rag", &response.query);
            record_waterfall(&mut recorder, &response, request.force_web);
            let handle = repo_manager.send(OpenRepo { path: repo, create: false }).await??;
            let nodes = recorder.take();
            let append = AppendDag { index: Arc::clone(&handle.index), session: recorder.session.clone(), nodes };
            if let Err(err) = dag.send(append).await? {
                tracing::warn!(error = %err.message, "could not record the reasoning DAG");
            }
            response.session_id = Some(recorder.session.id);
            Ok(response)
        })
    }
}

fn record_waterfall(recorder: &mut crate::dag::DagRecorder, response: &WaterfallResponse, force_web: bool) {
    use crate::dag::NodeKind;
    use serde_json::json;
    let root = recorder.add(NodeKind::UserRequest, &[], response.query.clone(), json!({ "force_web": force_web }));
    let local = response.tiers.iter().find(|t| t.tier == "local");
    let call = recorder.add(NodeKind::ToolCall, &[root], "search (local tier)", json!(null));
    let obs = recorder.add(
        NodeKind::Observation,
        &[call],
        format!("{} local hits, top score {:.2}", local.map(|t| t.hits).unwrap_or(0), response.top_score),
        json!({ "took_ms": local.map(|t| t.took_ms) }),
    );
    let gate = recorder.add(
        NodeKind::Decision,
        &[obs],
        format!(
            "gate: {} (confidence {:.2}, threshold {:.2})",
            response.gate.decision, response.gate.top_score, response.gate.threshold
        ),
        json!(response.gate),
    );
    if let Some(web) = &response.web {
        let call = recorder.add(NodeKind::ToolCall, &[gate], "web: discover, fetch, ingest", json!(null));
        let pages: Vec<&str> = web.pages.iter().map(|p| p.url.as_str()).collect();
        let summary = match &web.error {
            Some(err) => format!("web failed: {}", err.message),
            None => format!("{} pages fetched, {} chunks ingested", web.pages.len(), web.ingested_chunks),
        };
        recorder.add(NodeKind::Observation, &[call], summary, json!({ "pages": pages, "discovered": web.discovered }));
    }
}

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
#[rtype(result = "Result<crate::dag::DagList>")]
pub struct DagSessions {
    pub repo_opt: Option<PathBuf>,
}

/// One reasoning session with its nodes.
#[derive(Message)]
#[rtype(result = "Result<crate::dag::DagView>")]
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
    type Result = ResponseFuture<Result<crate::dag::DagList>>;

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
            Ok(crate::dag::DagList { repo: handle.meta.canonical_path.clone(), sessions })
        })
    }
}

impl Handler<DagGet> for ToolDispatcher {
    type Result = ResponseFuture<Result<crate::dag::DagView>>;

    fn handle(&mut self, msg: DagGet, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move {
            if !crate::dag::valid_session_id(&msg.session) {
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

/// (vectors built, chunks pending) of a repo.
async fn vector_counts(handle: &RepoHandle) -> Result<(u64, u64)> {
    let index = Arc::clone(&handle.index);
    tokio::task::spawn_blocking(move || {
        let rtxn = index.store.read_txn()?;
        Ok((index.store.vector_count(&rtxn)?, index.store.pending_count(&rtxn)?))
    })
    .await?
}

impl Handler<Search> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, Search(request): Search, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(request.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let search = &self.config.search;
        let fusion = FusionParams {
            k: search.fusion_k,
            lexical_weight: search.rrf_lexical_weight,
            dense_weight: search.rrf_dense_weight,
        };
        let max_hits_per_file = search.max_hits_per_file;
        let repeat_hit_delay = search.repeat_hit_delay;
        let concept_weight = search.lexical_concept_weight();
        let embedding_query = search.embedding_query(&request.query);
        let expanded = search.concept_words(&request.query);
        tracked(&self.metrics, "search", async move {
            request.validate()?;
            let started = Instant::now();
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            if let Some(library) = request.lib_opt.as_deref().filter(|l| !l.trim().is_empty()) {
                libs::check_library_indexed(&handle, library).await?;
            }
            let (vectors, pending) = vector_counts(&handle).await?;
            let mut notice_opt = None;
            // Auto mode embeds the query only when there is something to compare it with.
            let wants_vector = match request.mode_opt {
                Some(SearchMode::Lexical) => false,
                Some(_) => true,
                None => vectors > 0,
            };
            let vector_opt = if wants_vector {
                // Any embedder failure, a dead worker included, degrades to lexical search.
                match embedder.send(EmbedQuery(embedding_query)).await {
                    Ok(Ok(vector)) => Some(vector),
                    Ok(Err(err)) => {
                        notice_opt = Some(format!("{}; searched lexically", err.message));
                        None
                    }
                    Err(err) => {
                        notice_opt = Some(format!("the embedding worker is not answering ({err}); searched lexically"));
                        None
                    }
                }
            } else {
                None
            };
            let mode = match (request.mode_opt, &vector_opt) {
                (_, None) => SearchMode::Lexical,
                (Some(mode), Some(_)) => mode,
                (None, Some(_)) => SearchMode::Hybrid,
            };
            if mode != SearchMode::Lexical && pending > 0 {
                notice_opt = Some(format!(
                    "{pending} chunks are still waiting for embeddings; dense results cover the {vectors} embedded so far"
                ));
            } else if request.mode_opt.is_none() && vectors == 0 && pending > 0 {
                // Waiting for a model that is not there would be a false promise: say what
                // is missing instead.
                notice_opt = Some(match embedder.send(ProbeModel).await {
                    Ok(ModelInfo { available: true, .. }) => {
                        format!("{pending} chunks are waiting for embeddings; searched lexically")
                    }
                    Ok(ModelInfo { detail, .. }) => {
                        format!("semantic search unavailable: {detail}; searched lexically")
                    }
                    Err(err) => format!("the embedding worker is not answering ({err}); searched lexically"),
                });
            }
            let (_, dense_search_k) = dense_depth_and_search_k(request.limit);
            let params = SearchParams {
                limit: request.limit,
                max_hits_per_file,
                fusion,
                dense_search_k,
                concept_weight,
                repeat_hit_delay,
            };
            let query = request.query.clone();
            let explain = request.explain;
            let filter = SearchFilter {
                source_opt: request.source_opt,
                library_opt: request.lib_opt.clone().filter(|l| !l.trim().is_empty()),
            };
            let index = Arc::clone(&handle.index);
            let outcome = tokio::task::spawn_blocking(move || {
                let vector_opt = vector_opt.as_deref().map(|v| v.as_slice());
                index.search_filtered(&query, vector_opt, mode, params, explain, &filter)
            })
            .await??;
            Ok(SearchResponse {
                query: request.query,
                took_ms: started.elapsed().as_secs_f64() * 1000.0,
                top_score: outcome.top_score,
                mode,
                notice: notice_opt,
                expanded,
                hits: outcome.hits,
            })
        })
    }
}

impl Handler<Status> for ToolDispatcher {
    type Result = ResponseFuture<Result<RepoStatus>>;

    fn handle(&mut self, Status(repo_opt): Status, _: &mut Context<Self>) -> Self::Result {
        // Status never waits for an index run: it is how one watches its progress.
        let repo = self.resolve_repo_with(repo_opt, false);
        let create = self.supervisor_opt.is_some();
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let map_bytes = self.config.index.lmdb_map_bytes;
        Box::pin(async move {
            let handle = repo_manager.send(OpenRepo { path: repo.await?, create }).await??;
            let ModelInfo { available, detail } = embedder.send(ProbeModel).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let rtxn = index.store.read_txn()?;
                let state = index.store.run_state(&rtxn)?;
                let chunks = index.num_chunks();
                let pending = index.store.pending_count(&rtxn)?;
                let embedded = index.store.vector_count(&rtxn)?;
                Ok(RepoStatus {
                    repo: handle.meta.canonical_path.clone(),
                    fingerprint: handle.meta.fingerprint.clone(),
                    state_dir: index.state_dir.display().to_string(),
                    indexed: state.indexed(),
                    interrupted: state.interrupted(),
                    last_index_started: state.last_started.map(format_unix),
                    last_index_completed: state.last_completed.map(format_unix),
                    files: state.files,
                    chunks,
                    bytes: state.bytes,
                    index_size_bytes: index.size_on_disk(),
                    metadata_size_bytes: std::fs::metadata(index.state_dir.join("meta.lmdb/data.mdb"))
                        .map(|m| m.len())
                        .unwrap_or(0),
                    metadata_limit_bytes: map_bytes as u64,
                    embedding_cache_entries: index.store.embedding_cache_entries(&rtxn)?,
                    embeddings: EmbeddingStatus {
                        total: chunks,
                        pending,
                        embedded,
                        model: MODEL_NAME.to_string(),
                        model_available: available,
                        notice: (!available).then_some(detail),
                    },
                    libraries: index
                        .store
                        .all_libraries(&rtxn)?
                        .into_iter()
                        .map(|(_, lib)| format!("{}:{}@{}", lib.ecosystem, lib.name, lib.version))
                        .collect(),
                })
            })
            .await?
        })
    }
}

impl Handler<Index> for ToolDispatcher {
    type Result = ResponseFuture<Result<IndexSummary>>;

    fn handle(&mut self, msg: Index, _: &mut Context<Self>) -> Self::Result {
        self.index_run(msg, false)
    }
}

/// The RepoSupervisor's own index runs (a mount, a watcher's change): it tracks them itself.
#[derive(Message)]
#[rtype(result = "Result<IndexSummary>")]
pub struct SupervisedIndex(pub Index);

impl Handler<SupervisedIndex> for ToolDispatcher {
    type Result = ResponseFuture<Result<IndexSummary>>;

    fn handle(&mut self, SupervisedIndex(msg): SupervisedIndex, _: &mut Context<Self>) -> Self::Result {
        self.index_run(msg, true)
    }
}

impl ToolDispatcher {
    /// An index run. In a daemon, a run someone asked for mounts the repo (so it is watched
    /// from now on) without starting a second run, and tells the supervisor it runs, so a
    /// search arriving meanwhile waits for it like for any first run.
    fn index_run(&mut self, msg: Index, supervised: bool) -> ResponseFuture<Result<IndexSummary>> {
        let repo_manager = self.repo_manager.clone();
        let ingestor = self.ingestor.clone();
        let embedder = self.embedder.clone();
        let config = Arc::clone(&self.config);
        let jobs = self.embedding_jobs.clone();
        let allowed = self.checked_repo(Some(msg.request.repo.clone()));
        let supervisor_opt = self.supervisor_opt.clone().filter(|_| !supervised);
        let metrics = Arc::clone(&self.metrics);
        Box::pin(async move {
            allowed?;
            let handle = repo_manager.send(OpenRepo { path: msg.request.repo.clone(), create: true }).await??;
            let canonical = PathBuf::from(&handle.meta.canonical_path);
            if let Some(supervisor) = &supervisor_opt {
                supervisor.send(MountRepo { repo: canonical.clone(), start_run: false }).await??;
                supervisor.do_send(RunStarted { repo: canonical.clone() });
            }
            let result = {
                let _one_run_at_a_time = handle.index_run.lock().await;
                metrics.track("indexer", run_index(&handle, &ingestor, &config, msg.progress_opt)).await
            };
            let result = result.map_err(|err| err.or_disk_full(&handle.index.state_dir));
            if result.is_err() {
                // Roll back whatever the failed run left uncommitted and free the writer.
                if let Err(err) = handle.indexer.send(AbortIndexRun).await {
                    tracing::warn!(error = %err, "could not abort the index run");
                }
            } else if msg.embed_in_background && config.embedding.enabled {
                start_background_embedding(handle, embedder, config.embedding.batch_size, jobs);
            }
            if let Some(supervisor) = &supervisor_opt {
                let outcome = result.as_ref().map(|_| ()).map_err(|err| err.message.clone());
                supervisor.do_send(RunEnded { repo: canonical, outcome });
            }
            result
        })
    }
}

/// Embeds pending chunks on the side; a second request while one runs makes it go round
/// once more instead of starting a rival job.
fn start_background_embedding(
    handle: Arc<RepoHandle>,
    embedder: Addr<Embedder>,
    batch_size: usize,
    jobs: EmbeddingJobs,
) {
    let key = handle.meta.fingerprint.clone();
    if jobs.stopping.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    {
        let Ok(mut running) = jobs.running.lock() else { return };
        if let Some(again) = running.get_mut(&key) {
            *again = true;
            return;
        }
        running.insert(key.clone(), false);
    }
    actix::spawn(async move {
        loop {
            let started = Instant::now();
            match embed_pending(&handle, &embedder, batch_size, None, Some(&jobs.stopping)).await {
                Ok(0) => {}
                Ok(count) => tracing::info!(
                    repo = %handle.meta.canonical_path,
                    chunks = count,
                    seconds = started.elapsed().as_secs_f64(),
                    "embedded pending chunks"
                ),
                Err(err) => {
                    tracing::warn!(repo = %handle.meta.canonical_path, error = %err.message, "embedding stopped")
                }
            }
            let Ok(mut running) = jobs.running.lock() else { return };
            if running.get(&key).copied() == Some(true) && !jobs.stopping.load(std::sync::atomic::Ordering::SeqCst) {
                running.insert(key.clone(), false);
                continue;
            }
            running.remove(&key);
            return;
        }
    });
}

impl Handler<EmbedPending> for ToolDispatcher {
    type Result = ResponseFuture<Result<EmbedSummary>>;

    fn handle(&mut self, msg: EmbedPending, _: &mut Context<Self>) -> Self::Result {
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let batch_size = self.config.embedding.batch_size;
        Box::pin(async move {
            let handle = open_indexed(&repo_manager, msg.repo).await?;
            let started = Instant::now();
            let ModelInfo { available, detail } = embedder.send(ProbeModel).await?;
            let embedded = if available {
                embed_pending(&handle, &embedder, batch_size, msg.progress_opt.as_ref(), None).await?
            } else {
                0
            };
            let (vectors, pending) = vector_counts(&handle).await?;
            let notice = (!available).then(|| format!("{detail}; the index is lexical-only until then"));
            Ok(EmbedSummary { embedded, vectors, pending, seconds: started.elapsed().as_secs_f64(), notice })
        })
    }
}

impl Handler<StopBackgroundWork> for ToolDispatcher {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: StopBackgroundWork, _: &mut Context<Self>) -> Self::Result {
        let jobs = self.embedding_jobs.clone();
        jobs.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            while jobs.running.lock().is_ok_and(|running| !running.is_empty()) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    }
}

impl Handler<EmbedInBackground> for ToolDispatcher {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, msg: EmbedInBackground, _: &mut Context<Self>) -> Self::Result {
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let batch_size = self.config.embedding.batch_size;
        let enabled = self.config.embedding.enabled;
        let jobs = self.embedding_jobs.clone();
        Box::pin(async move {
            if !enabled {
                return;
            }
            match open_indexed(&repo_manager, msg.repo).await {
                Ok(handle) => start_background_embedding(handle, embedder, batch_size, jobs),
                Err(err) => tracing::warn!(error = %err.message, "cannot embed in the background"),
            }
        })
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
}

/// Deletes a memory by id.
#[derive(Message)]
#[rtype(result = "Result<MemoryDeleted>")]
pub struct MemoryDelete {
    pub repo_opt: Option<PathBuf>,
    pub id: u64,
}

/// Reads lines of an indexed file.
#[derive(Message)]
#[rtype(result = "Result<FileContent>")]
pub struct OpenFile {
    pub repo_opt: Option<PathBuf>,
    pub path: String,
    pub start_opt: Option<u64>,
    pub end_opt: Option<u64>,
}

/// Lists indexed files, optionally matching a glob.
#[derive(Message)]
#[rtype(result = "Result<FileList>")]
pub struct ListFiles {
    pub repo_opt: Option<PathBuf>,
    pub glob_opt: Option<String>,
    pub limit: usize,
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
            if msg.k == 0 || msg.k > MAX_MEMORY_RECALL {
                return Err(DocdexError::invalid(format!(
                    "k must be between 1 and {MAX_MEMORY_RECALL}, got {}",
                    msg.k
                )));
            }
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            let embedded = match embedder.send(EmbedQuery(msg.query.clone())).await {
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
            let found =
                memory.send(RecallMemory { index, query: msg.query.clone(), vector_opt, limit: msg.k }).await??;
            Ok(MemoryRecallResponse {
                query: msg.query,
                mode,
                notice,
                items: found.into_iter().map(|(record, score)| memory_item(record, Some(score))).collect(),
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

impl Handler<OpenFile> for ToolDispatcher {
    type Result = ResponseFuture<Result<FileContent>>;

    fn handle(&mut self, msg: OpenFile, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let max_open_bytes = self.config.core.max_open_bytes;
        tracked(&self.metrics, "open", async move {
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || read_file_lines(&index, &msg, max_open_bytes)).await?
        })
    }
}

/// Only indexed files can be opened: no reading outside the repo or past its ignore rules.
/// The file is opened first and the opened handle is checked (its real path inside the
/// repo, a regular file, at most `max_open_bytes`), so a symbolic link swapped in after
/// indexing cannot redirect the read.
fn read_file_lines(index: &crate::index::RepoIndex, msg: &OpenFile, max_open_bytes: u64) -> Result<FileContent> {
    let rel = msg.path.trim_start_matches("./").to_string();
    if index.store.file(&index.store.read_txn()?, &rel)?.is_none() {
        return Err(DocdexError::new(ErrorCode::NotFound, format!("{rel} is not an indexed file of this repo"))
            .with_hint("use a path relative to the repo root, as search results and `files` give it"));
    }
    let text = read_inside(&index.root, &rel, max_open_bytes)?;
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len() as u64;
    let start = msg.start_opt.unwrap_or(1).max(1);
    if start > total.max(1) {
        return Err(DocdexError::invalid(format!("{rel} has {total} lines; line_start {start} is past the end")));
    }
    let wanted_end = msg.end_opt.unwrap_or(total).min(total);
    if msg.end_opt.is_some_and(|end| end < start) {
        return Err(DocdexError::invalid("line_end must not be before line_start"));
    }
    let end = wanted_end.min(start + MAX_OPEN_LINES - 1);
    let width = end.to_string().len();
    let body =
        (start..=end).map(|n| format!("{n:>width$} | {}", lines[(n - 1) as usize])).collect::<Vec<_>>().join("\n");
    Ok(FileContent {
        path: rel,
        line_start: start,
        line_end: end,
        total_lines: total,
        truncated: end < wanted_end,
        text: body,
    })
}

/// Reads `rel` under `root` through one handle whose resolved path must stay inside `root`.
pub fn read_inside(root: &std::path::Path, rel: &str, max_bytes: u64) -> Result<String> {
    use std::io::Read;
    let root = std::fs::canonicalize(root)?;
    let file = std::fs::File::open(root.join(rel))
        .map_err(|err| DocdexError::new(ErrorCode::NotFound, format!("cannot read {rel}: {err}")))?;
    let real = opened_path(&file).or_else(|| std::fs::canonicalize(root.join(rel)).ok());
    if !real.as_ref().is_some_and(|p| p.starts_with(&root)) {
        return Err(DocdexError::new(
            ErrorCode::PathRefused,
            format!("{rel} resolves outside the repo (a symbolic link?); docdex does not read it"),
        ));
    }
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(DocdexError::new(ErrorCode::PathRefused, format!("{rel} is not a regular file")));
    }
    if meta.len() > max_bytes {
        return Err(DocdexError::new(
            ErrorCode::TooLarge,
            format!("{rel} is {} bytes, over the {max_bytes}-byte limit for opening files", meta.len()),
        )
        .with_hint("raise [core] max_open_bytes, or read it with line_start/line_end from search results"));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Where an open handle really points (Linux: /proc/self/fd); `None` elsewhere.
fn opened_path(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

impl Handler<ListFiles> for ToolDispatcher {
    type Result = ResponseFuture<Result<FileList>>;

    fn handle(&mut self, msg: ListFiles, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move {
            let matcher = match &msg.glob_opt {
                Some(glob) => Some(
                    globset::Glob::new(glob)
                        .map_err(|err| DocdexError::invalid(format!("bad glob `{glob}`: {err}")))?
                        .compile_matcher(),
                ),
                None => None,
            };
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let files = index.store.all_files(&index.store.read_txn()?)?;
                let mut entries: Vec<FileEntry> = files
                    .into_iter()
                    .filter(|(path, record)| {
                        record.language != "binary" && matcher.as_ref().is_none_or(|m| m.is_match(path))
                    })
                    .map(|(path, record)| FileEntry {
                        path,
                        language: record.language,
                        chunks: record.chunks,
                        size: record.size,
                    })
                    .collect();
                entries.sort_by(|a, b| a.path.cmp(&b.path));
                let total = entries.len() as u64;
                let truncated = entries.len() > msg.limit;
                entries.truncate(msg.limit);
                Ok(FileList { total, truncated, files: entries })
            })
            .await?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_reads_inside_the_repo_and_refuses_links_out_and_oversized_files() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "do not read").unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join("src")).unwrap();
        std::fs::write(repo.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        assert_eq!(read_inside(repo.path(), "src/lib.rs", 1024).unwrap(), "pub fn a() {}\n");
        // A link inside the repo to a file inside it is fine.
        std::os::unix::fs::symlink(repo.path().join("src/lib.rs"), repo.path().join("src/alias.rs")).unwrap();
        assert!(read_inside(repo.path(), "src/alias.rs", 1024).is_ok());
        // A file swapped for a link out of the repo after indexing is refused.
        std::fs::remove_file(repo.path().join("src/lib.rs")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), repo.path().join("src/lib.rs")).unwrap();
        let err = read_inside(repo.path(), "src/lib.rs", 1024).unwrap_err();
        assert_eq!(err.code, ErrorCode::PathRefused, "{err:?}");
        // So is a directory link, and `..`.
        std::os::unix::fs::symlink(outside.path(), repo.path().join("out")).unwrap();
        assert_eq!(read_inside(repo.path(), "out/secret.txt", 1024).unwrap_err().code, ErrorCode::PathRefused);
        let escape = format!("../{}/secret.txt", outside.path().file_name().unwrap().to_string_lossy());
        assert_eq!(read_inside(repo.path(), &escape, 1024).unwrap_err().code, ErrorCode::PathRefused);
        // Not a regular file; over the size limit.
        assert_eq!(read_inside(repo.path(), "src", 1024).unwrap_err().code, ErrorCode::PathRefused);
        std::fs::write(repo.path().join("big.txt"), vec![b'x'; 2048]).unwrap();
        let err = read_inside(repo.path(), "big.txt", 1024).unwrap_err();
        assert_eq!(err.code, ErrorCode::TooLarge);
        assert!(err.message.contains("1024-byte limit"), "{}", err.message);
    }
}

/// Mounts a repo in the daemon (`POST /v1/initialize`, MCP workspace roots): its index run
/// and watcher start; with `wait`, answers once it is searchable (bounded like a search).
#[derive(Message)]
#[rtype(result = "Result<MountedRepo>")]
pub struct Mount {
    pub repo: PathBuf,
    pub wait: bool,
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
            let repo = repo.await?;
            let canonical = std::fs::canonicalize(&repo)
                .ok()
                .filter(|p| p.is_dir())
                .ok_or_else(|| DocdexError::repo_not_found(&repo.display().to_string(), "is not a directory"))?;
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
                rss_bytes: crate::metrics::resident_bytes(),
                models_loaded: embedder.loaded_models() as u64,
                repos,
                actors: metrics.snapshot(),
            })
        })
    }
}

/// One chunk by the id a search hit gave (`docdex_get`).
#[derive(Message)]
#[rtype(result = "Result<ChunkContent>")]
pub struct GetChunk {
    pub repo_opt: Option<PathBuf>,
    pub chunk_id: u32,
}

/// Several files at once, by a list of paths or a glob (`docdex_multi_get`).
#[derive(Message)]
#[rtype(result = "Result<MultiGetResponse>")]
pub struct MultiGet {
    pub repo_opt: Option<PathBuf>,
    pub paths: Vec<String>,
    pub glob_opt: Option<String>,
    /// At most this many files (≤ `MAX_MULTI_GET`).
    pub limit: usize,
}

impl Handler<GetChunk> for ToolDispatcher {
    type Result = ResponseFuture<Result<ChunkContent>>;

    fn handle(&mut self, msg: GetChunk, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        tracked(&self.metrics, "open", async move {
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            let chunk = tokio::task::spawn_blocking(move || index.chunk(msg.chunk_id)).await??;
            chunk.ok_or_else(|| {
                DocdexError::new(ErrorCode::NotFound, format!("no chunk {} in this repo", msg.chunk_id))
                    .with_hint("chunk ids change when their file is re-indexed: search again, or get the file by path")
            })
        })
    }
}

impl Handler<MultiGet> for ToolDispatcher {
    type Result = ResponseFuture<Result<MultiGetResponse>>;

    fn handle(&mut self, msg: MultiGet, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        Box::pin(async move {
            if msg.limit == 0 || msg.limit > MAX_MULTI_GET {
                return Err(DocdexError::invalid(format!(
                    "limit must be between 1 and {MAX_MULTI_GET}, got {}",
                    msg.limit
                )));
            }
            let (total, paths) = match (&msg.glob_opt, msg.paths.is_empty()) {
                (Some(_), true) | (None, true) => {
                    let Some(glob) = msg.glob_opt.clone() else {
                        return Err(DocdexError::invalid("give paths or a glob"));
                    };
                    let list = me
                        .send(ListFiles { repo_opt: msg.repo_opt.clone(), glob_opt: Some(glob), limit: msg.limit })
                        .await??;
                    (list.total, list.files.into_iter().map(|f| f.path).collect::<Vec<_>>())
                }
                (None, false) => (msg.paths.len() as u64, msg.paths.iter().take(msg.limit).cloned().collect()),
                (Some(_), false) => return Err(DocdexError::invalid("give paths or a glob, not both")),
            };
            let mut response = MultiGetResponse { total, files: Vec::new(), missing: Vec::new() };
            for path in paths {
                let open =
                    OpenFile { repo_opt: msg.repo_opt.clone(), path: path.clone(), start_opt: None, end_opt: None };
                match me.send(open).await? {
                    Ok(content) => response.files.push(content),
                    // A wrong path among several is reported, not fatal; a wrong repo is.
                    Err(err)
                        if matches!(err.code, ErrorCode::NotFound | ErrorCode::PathRefused | ErrorCode::TooLarge) =>
                    {
                        response.missing.push(MissingFile { path, error: err.message })
                    }
                    Err(err) => return Err(err),
                }
            }
            Ok(response)
        })
    }
}
