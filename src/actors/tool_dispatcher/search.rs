//! The search tool: a repo's lexical, dense or hybrid search, with library docs and the
//! query's concept words, as every surface runs it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use actix::{Addr, AsyncContext, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::params::{self, Caller, Tool};
use super::web::WebResearch;
use super::{open_indexed, tracked, vector_counts_of, ToolDispatcher};
use crate::actors::embedder::{EmbedQuery, Embedder, ModelInfo, ProbeModel};
use crate::actors::repo_manager::RepoHandle;
use crate::actors::waterfall::LocalSearch;
use crate::config::Config;
use crate::index::{
    vectors_for_search_across, ChunkVectors, FusionParams, RepoIndex, SearchFilter, SearchParams as RankParams,
    VectorCounts,
};
use crate::protocol::impact::DiffBase;
use crate::protocol::{
    DocdexError, HitSource, Result, SearchMode, SearchRequest, SearchResponse, WaterfallRequest, WaterfallResponse,
    MAX_SEARCH_LIMIT, MAX_SEARCH_REPOS,
};

/// arroy nodes inspected per neighbour asked for (see `dense_depth_and_search_k`).
const DENSE_SEARCH_K_PER_RESULT: usize = 150;

/// How many neighbours a dense search of `limit` hits asks arroy for, and how many nodes it
/// lets arroy inspect: the same depth as `RepoIndex::search_with` uses.
pub fn dense_depth_and_search_k(limit: usize) -> (usize, usize) {
    let depth = crate::index::candidate_depth(RankParams::new(limit, 2));
    (depth, depth * DENSE_SEARCH_K_PER_RESULT)
}

/// Search a repo.
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct Search(pub SearchRequest);

impl Handler<Search> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, Search(request): Search, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(request.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let ranking = self.ranking();
        tracked(&self.metrics, "search", async move {
            request.validate()?;
            let started = Instant::now();
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            if let Some(library) = request.lib_opt.as_deref().filter(|l| !l.trim().is_empty()) {
                super::libs::check_library_indexed(&handle, library).await?;
            }
            ranking.run(vec![handle], request, started).await
        })
    }
}

/// What a search needs besides its repos: the embedder and the ranking settings.
pub(super) struct Ranking {
    embedder: Addr<Embedder>,
    config: Arc<Config>,
}

impl ToolDispatcher {
    pub(super) fn ranking(&self) -> Ranking {
        Ranking { embedder: self.embedder.clone(), config: Arc::clone(&self.config) }
    }
}

impl Ranking {
    /// Searches the repos of `handles` as one ranking (see `index::search_indexes`).
    pub(super) async fn run(
        self,
        handles: Vec<Arc<RepoHandle>>,
        request: SearchRequest,
        started: Instant,
    ) -> Result<SearchResponse> {
        let Ranking { embedder, config } = self;
        let search = &config.search;
        let fusion = FusionParams {
            k: search.fusion_k,
            lexical_weight: search.rrf_lexical_weight,
            dense_weight: search.rrf_dense_weight,
        };
        let embedding_query = crate::index::concepts::embedding_query(search, &request.query);
        let expanded = crate::index::concepts::expansion(search, &request.query);
        // A lexical search compares no vectors: it need not count them.
        let per_repo =
            if request.mode_opt == Some(SearchMode::Lexical) { Vec::new() } else { vector_counts_of(&handles).await? };
        let counts = per_repo.iter().fold(VectorCounts::default(), |sum, &c| sum + c);
        let (static_on, model_on) = (config.embedding.static_vectors, config.embedding.model_vectors);
        let dense_vectors_opt = vectors_for_search_across(&per_repo, static_on, model_on);
        let mut notice_opt = None;
        // Auto mode embeds the query only when there is something to compare it with.
        let wants_vector = match request.mode_opt {
            Some(SearchMode::Lexical) => false,
            Some(_) => true,
            None => dense_vectors_opt.is_some(),
        };
        let dense_vectors = dense_vectors_opt.unwrap_or_default();
        let vector_opt = if wants_vector {
            // Any embedder failure, a dead worker included, degrades to lexical search.
            match embedder.send(EmbedQuery { text: embedding_query, vectors: dense_vectors }).await {
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
        let which = match handles.as_slice() {
            [one] => one.index.root.display().to_string(),
            _ => "<repo>".to_string(),
        };
        let VectorCounts { model: vectors, pending, static_vectors, static_pending } = counts;
        let waiting = pending.max(static_pending);
        if mode != SearchMode::Lexical && dense_vectors_opt.is_none() && waiting > 0 {
            // Nothing to compare the query with: say how to get there, not just "no hits".
            notice_opt = Some(format!(
                "nothing in this repo is embedded yet ({waiting} chunks waiting), so a dense search finds \
                 nothing: embed them with `docdexd index --repo {which} --wait` (a running daemon does it on \
                 its own), or search lexically meanwhile"
            ));
        } else if mode != SearchMode::Lexical && dense_vectors == ChunkVectors::Static && pending > 0 && model_on {
            notice_opt = Some(format!(
                "dense results use the static vectors ({static_vectors} chunks) while {pending} chunks wait for \
                 the model's"
            ));
        } else if mode != SearchMode::Lexical && dense_vectors == ChunkVectors::Static && static_pending > 0 {
            notice_opt = Some(format!(
                "{static_pending} chunks are still waiting for static vectors; dense results cover the \
                 {static_vectors} done so far"
            ));
        } else if mode != SearchMode::Lexical && dense_vectors == ChunkVectors::Model && pending > 0 {
            notice_opt = Some(format!(
                "{pending} chunks are still waiting for embeddings; dense results cover the {vectors} embedded so far"
            ));
        } else if request.mode_opt.is_none() && dense_vectors_opt.is_none() && waiting > 0 {
            // Waiting for a model that is not there would be a false promise: say what
            // is missing instead.
            notice_opt = Some(match embedder.send(ProbeModel).await {
                Ok(ModelInfo { available: true, .. }) => {
                    format!("{waiting} chunks are waiting for embeddings; searched lexically")
                }
                Ok(ModelInfo { detail, .. }) => {
                    format!("semantic search unavailable: {detail}; searched lexically")
                }
                Err(err) => format!("the embedding worker is not answering ({err}); searched lexically"),
            });
        }
        let (_, dense_search_k) = dense_depth_and_search_k(request.limit);
        let params = RankParams {
            limit: request.limit,
            max_hits_per_file: search.max_hits_per_file,
            fusion,
            dense_search_k,
            concept_weight: search.lexical_concept_weight(),
            repeat_hit_delay: search.repeat_hit_delay,
            definitions_first: search.definitions_first,
            path_match_weight: search.path_match_weight,
            file_evidence_weight: search.file_evidence_weight,
            dense_vectors,
        };
        let query = request.query.clone();
        let explain = request.explain;
        let filter = SearchFilter {
            source_opt: request.source_opt,
            library_opt: request.lib_opt.clone().filter(|l| !l.trim().is_empty()),
        };
        let outcome = tokio::task::spawn_blocking(move || {
            let indexes: Vec<&RepoIndex> = handles.iter().map(|h| &*h.index).collect();
            let vector_opt = vector_opt.as_deref().map(|v| v.as_slice());
            crate::index::search_indexes(&indexes, &query, vector_opt, mode, params, explain, &filter)
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
    }
}

/// The waterfall's tier 1 is this very search.
impl Handler<LocalSearch> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, LocalSearch(request): LocalSearch, ctx: &mut Context<Self>) -> Self::Result {
        <Self as Handler<Search>>::handle(self, Search(request), ctx)
    }
}

// ---- Parameters, as every surface takes them (see `params`).

/// `GET /v1/search`, MCP `docdex_search` (and with `web_research`, the web research call).
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchToolParams {
    /// Identifiers, words or a question. `q` is taken too.
    #[serde(alias = "q")]
    pub query: String,
    /// Hits to return, 1-200 (default: `[search] max_repo_hits`).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// lexical, dense or hybrid (default: hybrid when embeddings exist).
    #[serde(default)]
    #[schemars(extend("enum" = ["lexical", "dense", "hybrid"]))]
    pub mode: Option<String>,
    /// Add each ranking's rank and score to every hit.
    #[serde(default, deserialize_with = "params::flag")]
    pub explain: Option<bool>,
    /// Where hits may come from: the repo's files, the docs of its libraries (see
    /// docdex_libs_fetch), ingested web pages, or all (default).
    #[serde(default)]
    #[schemars(extend("enum" = ["repo", "library", "web", "all"]))]
    pub source: Option<String>,
    /// Only hits from this library's docs, e.g. "serde".
    #[serde(default)]
    pub lib: Option<String>,
    /// Put a diff's code first: "working" (the working tree against HEAD), "staged", or a
    /// revision. Its changed definitions and what directly uses them come back as hits with
    /// source "diff", before the repo's.
    #[serde(default)]
    pub diff: Option<String>,
    /// Web research (HTTP): the web when the repo's answer is weak. `waterfall` is taken too.
    /// MCP has docdex_web_research for it.
    #[serde(default, alias = "waterfall", deserialize_with = "params::flag")]
    #[schemars(skip)]
    pub web_research: Option<bool>,
    /// Web research whatever the repo's answer (HTTP).
    #[serde(default, deserialize_with = "params::flag")]
    #[schemars(skip)]
    pub force_web: Option<bool>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
    /// Search several repos as one ranking, each hit naming its repo: their roots, as a list
    /// or comma-separated (at most 64).
    #[serde(default, deserialize_with = "params::list", serialize_with = "params::joined")]
    pub repos: Option<Vec<String>>,
    /// Search a named group of repos (`[repos.groups]` in config.toml) as one ranking, each hit
    /// naming its repo; "all" is every repo the daemon serves.
    #[serde(default)]
    pub group: Option<String>,
    /// Search a collection (a folder registered with docdex_collection_add) by its name; with
    /// `repo` or `repos`, beside them as one ranking.
    #[serde(default)]
    pub collection: Option<String>,
}

impl SearchToolParams {
    /// Whether this search asks for web research (`web_research` or `force_web`).
    pub fn asks_web_research(&self) -> bool {
        self.web_research == Some(true) || self.force_web == Some(true)
    }

    fn page(self, repo_opt: Option<PathBuf>) -> Result<SearchPage> {
        let collection_opt = params::text(self.collection.clone());
        let mut across_opt = Across::of(self.repos.clone(), self.group.clone())?;
        if across_opt.is_some() && self.repo.is_some() {
            return Err(DocdexError::invalid("`repo` names one repo; `repos` and `group` name several")
                .with_hint("give one of them (add the repo to `repos`)"));
        }
        let repo_opt = match (&collection_opt, &across_opt, self.repo.clone()) {
            (Some(_), Some(Across::Group(_)), _) => {
                return Err(DocdexError::invalid(
                    "`collection` goes alone or with `repo` or `repos`, not with `group`",
                )
                .with_hint("list the group's repos in `repos`"));
            }
            // A collection beside the repo named: both as one ranking.
            (Some(_), None, Some(repo)) => {
                across_opt = Some(Across::Repos(vec![repo]));
                None
            }
            // The collection instead of the default repo (a repo beside `repos` was refused).
            (Some(_), _, _) => None,
            (None, _, _) => repo_opt,
        };
        let lib_or_diff = params::text(self.lib.clone()).is_some() || params::text(self.diff.clone()).is_some();
        if across_opt.is_some() && lib_or_diff {
            return Err(DocdexError::invalid("`lib` and `diff` go with a search of one repo")
                .with_hint("drop `repos`/`group`/`collection`, or search without `lib` and `diff`"));
        }
        let limit_opt = self.limit.map(|l| params::bounded("limit", Some(l), 0, MAX_SEARCH_LIMIT)).transpose()?;
        let mode_opt = params::text(self.mode).as_deref().map(str::parse::<SearchMode>).transpose()?;
        let source_opt = crate::protocol::parse_source_filter(self.source.as_deref().unwrap_or(""))?;
        let diff_opt = params::text(self.diff).as_deref().map(|d| DiffBase::parse(Some(d), false)).transpose()?;
        Ok(SearchPage {
            repo_opt,
            query: self.query,
            limit_opt,
            offset: offset_within(self.offset)?,
            mode_opt,
            explain: self.explain.unwrap_or(false),
            source_opt,
            lib_opt: params::text(self.lib),
            diff_opt,
            across_opt,
            collection_opt,
        })
    }

    /// The web research this search asks for.
    pub fn web_research(self, repo_opt: Option<PathBuf>) -> Result<WebResearchPage> {
        let force_web = self.force_web == Some(true);
        let search = self.page(repo_opt)?;
        if search.across_opt.is_some() || search.collection_opt.is_some() {
            return Err(DocdexError::invalid(
                "web research starts from one repo, not from `repos`, `group` or `collection`",
            )
            .with_hint("research with `repo`, or search the repos without web research"));
        }
        if search.diff_opt.is_some() {
            return Err(DocdexError::invalid("`diff` goes with a repo search, not with web research")
                .with_hint("search with diff, or research the web without it"));
        }
        Ok(WebResearchPage { search, force_web })
    }
}

impl Tool for SearchToolParams {
    type Message = SearchPage;
    type Output = SearchResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn local_paths(&self) -> Vec<&Path> {
        self.repo.as_deref().into_iter().chain(self.repos.iter().flatten().map(Path::new)).collect()
    }

    fn needs_repo(&self) -> bool {
        self.repos.as_ref().is_none_or(Vec::is_empty) && self.group.is_none() && self.collection.is_none()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<SearchPage> {
        if self.asks_web_research() {
            return Err(DocdexError::invalid("web research is a call of its own")
                .with_hint("MCP: docdex_web_research; HTTP: GET /v1/search?web_research=true"));
        }
        self.page(repo_opt)
    }
}

/// MCP `docdex_web_research`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebResearchParams {
    /// The question, in words.
    pub query: String,
    /// Go to the web even when the repo answers confidently (default false).
    #[serde(default, deserialize_with = "params::flag")]
    pub force_web: Option<bool>,
    /// Local hits to return, 1-200 (default: `[search] max_repo_hits`); web hits follow, up to
    /// `[search] max_web_hits`.
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for WebResearchParams {
    type Message = WebResearchPage;
    type Output = WaterfallResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<WebResearchPage> {
        let limit_opt = self.limit.map(|l| params::bounded("limit", Some(l), 0, MAX_SEARCH_LIMIT)).transpose()?;
        let search = SearchPage {
            repo_opt,
            query: self.query,
            limit_opt,
            offset: offset_within(self.offset)?,
            mode_opt: None,
            explain: false,
            source_opt: None,
            lib_opt: None,
            diff_opt: None,
            across_opt: None,
            collection_opt: None,
        };
        Ok(WebResearchPage { search, force_web: self.force_web == Some(true) })
    }
}

/// An `offset` into a ranking of at most `MAX_SEARCH_LIMIT` hits.
fn offset_within(offset: Option<u64>) -> Result<usize> {
    match offset {
        Some(n) if n >= MAX_SEARCH_LIMIT as u64 => {
            Err(DocdexError::invalid(format!("offset must be between 0 and {}, got {n}", MAX_SEARCH_LIMIT - 1)))
        }
        other => Ok(params::offset(other)),
    }
}

/// A search that puts a diff's code first: its changed definitions and their direct
/// dependents (`source` diff, at most half the hits), then the repo's hits outside them
/// (answered in `impact`, which reads the diff).
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct DiffSearch {
    pub request: SearchRequest,
    pub base: DiffBase,
}

/// A search of the repos `across` names, as one ranking; each hit names its repo (declared
/// with the search, answered in `across`).
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct SearchAcross {
    pub request: SearchRequest,
    pub across: Across,
}

/// A search as the surfaces ask for it: a page of the ranking from `offset`, with a diff's
/// code first when `diff_opt` names one.
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct SearchPage {
    pub repo_opt: Option<PathBuf>,
    pub query: String,
    /// `None`: `[search] max_repo_hits`.
    pub limit_opt: Option<usize>,
    pub offset: usize,
    pub mode_opt: Option<SearchMode>,
    pub explain: bool,
    pub source_opt: Option<HitSource>,
    pub lib_opt: Option<String>,
    pub diff_opt: Option<DiffBase>,
    /// Several repos instead of `repo_opt` (answered in `across`).
    pub across_opt: Option<Across>,
    /// A collection by name: searched instead of `repo_opt`, or beside `across_opt`'s repos.
    pub collection_opt: Option<String>,
}

/// The repos a search over several covers, as asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Across {
    Repos(Vec<PathBuf>),
    /// A group of `[repos.groups]`, or `all`.
    Group(String),
}

impl Across {
    fn of(repos_opt: Option<Vec<String>>, group_opt: Option<String>) -> Result<Option<Across>> {
        let repos: Vec<PathBuf> = repos_opt.unwrap_or_default().into_iter().map(PathBuf::from).collect();
        match (repos.is_empty(), params::text(group_opt)) {
            (true, None) => Ok(None),
            (false, Some(_)) => Err(DocdexError::invalid("give `repos` or `group`, not both")),
            (true, Some(group)) => Ok(Some(Across::Group(group))),
            (false, None) if repos.len() > MAX_SEARCH_REPOS => Err(DocdexError::invalid(format!(
                "repos names {} repos: a search covers at most {MAX_SEARCH_REPOS}",
                repos.len()
            ))),
            (false, None) => Ok(Some(Across::Repos(repos))),
        }
    }
}

impl SearchPage {
    /// The ranking's request: the hits up to the end of this page.
    fn request(&self, default_limit: usize) -> SearchRequest {
        let limit = self.limit_opt.unwrap_or(default_limit);
        SearchRequest {
            repo_opt: self.repo_opt.clone(),
            query: self.query.clone(),
            limit: self.offset.saturating_add(limit).min(MAX_SEARCH_LIMIT),
            mode_opt: self.mode_opt,
            explain: self.explain,
            source_opt: self.source_opt,
            lib_opt: self.lib_opt.clone(),
        }
    }
}

impl Handler<SearchPage> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, mut msg: SearchPage, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        let default_limit = self.config.search.max_repo_hits;
        let collections = self.collections();
        Box::pin(async move {
            // The registry is a file: read on the blocking pool, not on the actor's thread.
            let collection = match msg.collection_opt.take() {
                Some(name) => Some(tokio::task::spawn_blocking(move || collections.path_of(&name)).await??),
                None => None,
            };
            match (collection, &mut msg.across_opt) {
                (Some(path), Some(Across::Repos(repos))) => repos.push(path),
                (Some(path), _) => msg.repo_opt = Some(path),
                (None, _) => {}
            }
            let request = msg.request(default_limit);
            let mut response = match (msg.diff_opt, msg.across_opt) {
                (_, Some(across)) => me.send(SearchAcross { request, across }).await??,
                (Some(base), None) => me.send(DiffSearch { request, base }).await??,
                (None, None) => me.send(Search(request)).await??,
            };
            response.hits.drain(..msg.offset.min(response.hits.len()));
            Ok(response)
        })
    }
}

/// Web research as the surfaces ask for it: the repo's hits, then the web's when the gate
/// says so (or `force_web`); the merged list paged from `offset`.
#[derive(Message)]
#[rtype(result = "Result<WaterfallResponse>")]
pub struct WebResearchPage {
    pub search: SearchPage,
    pub force_web: bool,
}

impl Handler<WebResearchPage> for ToolDispatcher {
    type Result = ResponseFuture<Result<WaterfallResponse>>;

    fn handle(&mut self, msg: WebResearchPage, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        // The local hits asked for: web hits follow them, so a page counts over both.
        let mut request = msg.search.request(self.config.search.max_repo_hits);
        request.limit = msg.search.limit_opt.unwrap_or(self.config.search.max_repo_hits);
        Box::pin(async move {
            let mut response =
                me.send(WebResearch(WaterfallRequest { search: request, force_web: msg.force_web })).await??;
            response.hits.drain(..msg.search.offset.min(response.hits.len()));
            Ok(response)
        })
    }
}
