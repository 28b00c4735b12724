//! The dispatcher's Rust crate docs tools: each resolves the crate's version (asked for,
//! locked by the repo, or the newest release), gets its docs into the cache on demand, and
//! answers from the loaded crate (`CrateCache`).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Addr, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{self, Caller, Tool};
use super::{tracked, ToolDispatcher};
use crate::actors::crate_cache::{CrateCache, LoadCrate};
use crate::actors::embedder::{EmbedQuery, EmbedTexts, Embedder};
use crate::config::LibsConfig;
use crate::libs::crates::{fuse, normalize_kind, CrateDocs};
use crate::libs::{ensure_cached, registry, remove_stale_partials, Dependency, Ecosystem};
use crate::protocol::SearchMode;
use crate::protocol::{
    CrateExamples, CrateRef, CrateSearchResponse, CrateSummary, CrateVersions, DocdexError, ItemDoc, ModuleTree, Result,
};

/// Items of a crate embedded per request to the model.
const EMBED_BATCH: usize = 64;
/// Most hits and examples one call returns.
pub const MAX_CRATE_RESULTS: usize = 50;
/// Items a crate search gives when the caller names no limit (every surface).
pub const DEFAULT_CRATE_SEARCH: usize = 10;
/// Examples a call gives when the caller names no limit (every surface): each is a whole
/// code block.
pub const DEFAULT_CRATE_EXAMPLES: usize = 5;

// ---- Parameters, as every surface takes them (see `params`). On HTTP the crate's name is
// in the path (`/v1/crates/{name}/…`).

/// The crate a call is about, at the version asked for or the one `repo` locks.
fn crate_ref(name: String, version: Option<String>, repo_opt: Option<PathBuf>) -> CrateRef {
    CrateRef { name, version_opt: params::text(version), repo_opt }
}

/// `…/summary`, MCP `docdex_crate_summary`, `docdex crate summary`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateParams {
    /// The crate's name on crates.io, e.g. "serde".
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// A version, e.g. "1.0.219" (default: the version the repo's Cargo.lock locks, else the
    /// newest release).
    #[serde(default)]
    pub version: Option<String>,
    /// Repository root whose Cargo.lock fixes the version (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for CrateParams {
    type Message = CrateSummaryQuery;
    type Output = CrateSummary;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<CrateSummaryQuery> {
        Ok(CrateSummaryQuery(crate_ref(self.crate_name, self.version, repo_opt)))
    }
}

/// `…/modules`, MCP `docdex_crate_modules`, `docdex crate modules`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct CrateModulesParams(pub CrateParams);

impl Tool for CrateModulesParams {
    type Message = ModuleTreeQuery;
    type Output = ModuleTree;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        self.0.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<ModuleTreeQuery> {
        Ok(ModuleTreeQuery(crate_ref(self.0.crate_name, self.0.version, repo_opt)))
    }
}

/// `…/search`, MCP `docdex_crate_search`, `docdex crate search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateSearchParams {
    /// The crate's name on crates.io, e.g. "tokio".
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// What to find, in words or names, e.g. "spawn a blocking task". `q` is taken too.
    #[serde(alias = "q")]
    pub query: String,
    /// Only this kind of item.
    #[serde(default)]
    #[schemars(extend("enum" = ["fn", "method", "struct", "enum", "trait", "macro", "mod", "type", "const", "static", "union"]))]
    pub kind: Option<String>,
    /// lexical, dense or hybrid (default: hybrid once the items are embedded).
    #[serde(default)]
    #[schemars(extend("enum" = ["lexical", "dense", "hybrid"]))]
    pub mode: Option<String>,
    /// Items to return, 1-50 (default 10).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u64>,
    /// A version (default: the one the repo locks, else the newest).
    #[serde(default)]
    pub version: Option<String>,
    /// Repository root whose Cargo.lock fixes the version.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for CrateSearchParams {
    type Message = CrateSearch;
    type Output = CrateSearchResponse;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<CrateSearch> {
        Ok(CrateSearch {
            crate_ref: crate_ref(self.crate_name, self.version, repo_opt),
            query: self.query,
            kind_opt: params::text(self.kind),
            limit: params::bounded("limit", self.limit, DEFAULT_CRATE_SEARCH, MAX_CRATE_RESULTS)?,
            mode_opt: params::text(self.mode).as_deref().map(str::parse::<SearchMode>).transpose()?,
        })
    }
}

/// `…/item`, MCP `docdex_crate_item`, `docdex crate item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateItemParams {
    /// The crate's name on crates.io, e.g. "serde".
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// The item's path, e.g. "serde::Deserialize" or "tokio::sync::Mutex::lock" (re-exports
    /// and bare names work; close misses get suggestions).
    #[serde(alias = "item_path")]
    pub path: String,
    /// A version (default: the one the repo locks, else the newest).
    #[serde(default)]
    pub version: Option<String>,
    /// Repository root whose Cargo.lock fixes the version.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for CrateItemParams {
    type Message = ItemDocQuery;
    type Output = ItemDoc;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<ItemDocQuery> {
        let path = params::text(Some(self.path))
            .ok_or_else(|| DocdexError::invalid("`path` is required").with_hint("e.g. path=tokio::spawn"))?;
        Ok(ItemDocQuery { crate_ref: crate_ref(self.crate_name, self.version, repo_opt), path })
    }
}

/// `…/examples`, MCP `docdex_crate_examples`, `docdex crate examples`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateExamplesParams {
    /// The crate's name on crates.io, e.g. "tokio".
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// Only the examples in this item's docs (and its methods'), e.g. "tokio::select".
    #[serde(default)]
    pub item: Option<String>,
    /// Only examples mentioning every word of this. `q` is taken too.
    #[serde(default, alias = "q")]
    pub query: Option<String>,
    /// Examples to return, 1-50 (default 5).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u64>,
    /// A version (default: the one the repo locks, else the newest).
    #[serde(default)]
    pub version: Option<String>,
    /// Repository root whose Cargo.lock fixes the version.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for CrateExamplesParams {
    type Message = CrateExamplesQuery;
    type Output = CrateExamples;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<CrateExamplesQuery> {
        Ok(CrateExamplesQuery {
            crate_ref: crate_ref(self.crate_name, self.version, repo_opt),
            item_opt: params::text(self.item),
            query_opt: params::text(self.query),
            limit: params::bounded("limit", self.limit, DEFAULT_CRATE_EXAMPLES, MAX_CRATE_RESULTS)?,
        })
    }
}

/// `…/versions`, MCP `docdex_crate_versions`, `docdex crate versions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateVersionsParams {
    /// The crate's name on crates.io, e.g. "serde".
    #[serde(alias = "crate")]
    pub crate_name: String,
}

impl Tool for CrateVersionsParams {
    type Message = CrateVersionsQuery;
    type Output = CrateVersions;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        None
    }

    fn into_message(self, _: Option<PathBuf>, _: &Caller) -> Result<CrateVersionsQuery> {
        Ok(CrateVersionsQuery(self.crate_name))
    }
}

/// What opening a crate needs, taken from the dispatcher.
#[derive(Clone)]
struct CrateOpener {
    cache_root: PathBuf,
    config: LibsConfig,
    crate_cache: Addr<CrateCache>,
    default_repo_opt: Option<PathBuf>,
    repo_policy: crate::ingest::repo_policy::RepoPolicy,
}

impl ToolDispatcher {
    fn crate_opener(&self) -> CrateOpener {
        CrateOpener {
            cache_root: self.libs_cache_root.clone(),
            config: self.config.libs.clone(),
            crate_cache: self.crate_cache.clone(),
            default_repo_opt: self.default_repo_opt.clone(),
            repo_policy: self.repo_policy.clone(),
        }
    }
}

impl CrateOpener {
    fn build_dir(&self) -> PathBuf {
        self.cache_root.join("cargo").join(".build")
    }

    fn deadline(&self) -> Duration {
        Duration::from_secs(self.config.timeout_secs.max(1))
    }

    /// The crate's version and how it was chosen.
    async fn resolve(&self, crate_ref: &CrateRef) -> Result<(String, &'static str)> {
        let name = crate_ref.name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(DocdexError::invalid(format!("`{name}` is not a crate name"))
                .with_hint("pass a crates.io name, e.g. serde or tokio"));
        }
        if let Some(version) = crate_ref.version_opt.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            return Ok((version.to_string(), "requested"));
        }
        if let Some(repo) = crate_ref.repo_opt.clone().or_else(|| self.default_repo_opt.clone()) {
            // Its lockfile is read: the repo must be one this process may serve.
            self.repo_policy.check(&repo)?;
            let name = name.to_string();
            let locked = tokio::task::spawn_blocking(move || registry::locked_version(&repo, &name)).await?;
            if let Some(version) = locked {
                return Ok((version, "locked"));
            }
        }
        let versions = registry::versions(name, &self.build_dir(), self.deadline()).await?;
        Ok((versions.latest, "latest"))
    }

    /// The loaded crate (fetched into the cache first if needed) and how its version was chosen.
    async fn open(&self, crate_ref: &CrateRef) -> Result<(Arc<CrateDocs>, &'static str)> {
        let (version, resolved_by) = self.resolve(crate_ref).await?;
        let dep = Dependency::new(Ecosystem::Cargo, crate_ref.name.trim(), &version, false);
        remove_stale_partials(&self.cache_root, &dep);
        let (entry, _) = ensure_cached(&self.cache_root, &self.cache_root, &dep, &self.config)
            .await
            .map_err(|err| err.or_disk_full(&self.cache_root))?;
        let docs = self.crate_cache.send(LoadCrate(entry)).await??;
        Ok((docs, resolved_by))
    }
}

/// `crate_summary`: name, version, description, item counts by kind, top modules.
#[derive(Message)]
#[rtype(result = "Result<CrateSummary>")]
pub struct CrateSummaryQuery(pub CrateRef);

impl Handler<CrateSummaryQuery> for ToolDispatcher {
    type Result = ResponseFuture<Result<CrateSummary>>;

    fn handle(&mut self, CrateSummaryQuery(crate_ref): CrateSummaryQuery, _: &mut Context<Self>) -> Self::Result {
        let opener = self.crate_opener();
        tracked(&self.metrics, "crates", async move {
            let (docs, resolved_by) = opener.open(&crate_ref).await?;
            Ok(docs.summary(resolved_by))
        })
    }
}

/// `crate_search`: items ranked by BM25 and, once the items are embedded, by meaning too.
#[derive(Message)]
#[rtype(result = "Result<CrateSearchResponse>")]
pub struct CrateSearch {
    pub crate_ref: CrateRef,
    pub query: String,
    pub kind_opt: Option<String>,
    pub limit: usize,
    /// `None`: hybrid once the items are embedded, else lexical.
    pub mode_opt: Option<SearchMode>,
}

impl Handler<CrateSearch> for ToolDispatcher {
    type Result = ResponseFuture<Result<CrateSearchResponse>>;

    fn handle(&mut self, msg: CrateSearch, _: &mut Context<Self>) -> Self::Result {
        let opener = self.crate_opener();
        let embedder = self.embedder.clone();
        let embedding = self.config.embedding.enabled;
        // One-shot commands end with the request: they embed before answering.
        let in_background = self.supervisor_opt.is_some();
        tracked(&self.metrics, "crates", async move {
            if msg.query.trim().is_empty() {
                return Err(DocdexError::invalid("query must not be empty").with_hint("e.g. \"spawn a task\""));
            }
            if !(1..=MAX_CRATE_RESULTS).contains(&msg.limit) {
                return Err(DocdexError::invalid(format!("limit must be between 1 and {MAX_CRATE_RESULTS}")));
            }
            let kind_opt = msg.kind_opt.as_deref().map(normalize_kind).transpose()?.flatten();
            let (docs, _) = opener.open(&msg.crate_ref).await?;
            let depth = (msg.limit * 3).max(50);
            let mut notice = None;
            let embedding = embedding && msg.mode_opt != Some(SearchMode::Lexical);
            if embedding && !docs.has_vectors() {
                if in_background {
                    // A daemon answers now and embeds the items on the side, once.
                    if !docs.embedding.swap(true, Ordering::SeqCst) {
                        let (docs, embedder) = (Arc::clone(&docs), embedder.clone());
                        actix::spawn(async move {
                            if let Err(err) = embed_items(&docs, &embedder).await {
                                tracing::warn!(crate_name = docs.name(), error = %err.message, "cannot embed the crate's items");
                            }
                            docs.embedding.store(false, Ordering::SeqCst);
                        });
                    }
                    notice = Some(format!(
                        "the {} items of {} {} are being embedded (once per version); ranked by words until then",
                        docs.docs.items.len(),
                        docs.name(),
                        docs.version()
                    ));
                } else if let Err(err) = embed_items(&docs, &embedder).await {
                    notice = Some(format!("{}; searched lexically", err.message));
                }
            }
            let vector_opt = if embedding && docs.has_vectors() {
                match embedder.send(EmbedQuery::model(msg.query.clone())).await {
                    Ok(Ok(vector)) => Some(vector.as_ref().clone()),
                    Ok(Err(err)) => {
                        notice = Some(format!("{}; searched lexically", err.message));
                        None
                    }
                    Err(err) => {
                        notice = Some(format!("the embedding worker is not answering ({err}); searched lexically"));
                        None
                    }
                }
            } else {
                None
            };
            let (query, kind) = (msg.query.clone(), kind_opt.clone());
            let ranked_docs = Arc::clone(&docs);
            let wanted = msg.mode_opt;
            let (mode, ranked) = tokio::task::spawn_blocking(move || {
                let lexical = ranked_docs.search_lexical(&query, kind.as_deref(), depth);
                match (wanted, vector_opt.and_then(|v| ranked_docs.search_dense(&v, kind.as_deref(), depth))) {
                    (Some(SearchMode::Dense), Some(dense)) => {
                        (SearchMode::Dense, dense.into_iter().take(msg.limit).collect())
                    }
                    (_, Some(dense)) => (SearchMode::Hybrid, fuse(&lexical, &dense, msg.limit)),
                    (_, None) => (SearchMode::Lexical, lexical.into_iter().take(msg.limit).collect()),
                }
            })
            .await?;
            if wanted.is_some_and(|w| w != mode) && notice.is_none() {
                notice = Some(format!(
                    "{} search is not available here; searched {}",
                    wanted.map(|w| w.as_str()).unwrap_or(""),
                    mode.as_str()
                ));
            }
            Ok(CrateSearchResponse {
                name: docs.name().to_string(),
                version: docs.version().to_string(),
                query: msg.query,
                mode: mode.as_str().to_string(),
                hits: ranked.into_iter().map(|(i, score)| docs.hit(i, score)).collect(),
                notice,
            })
        })
    }
}

/// Embeds a crate's items and keeps the vectors in its cache entry (once per crate
/// version on this machine).
async fn embed_items(docs: &Arc<CrateDocs>, embedder: &Addr<Embedder>) -> Result<()> {
    let started = Instant::now();
    let inputs = docs.embedding_inputs();
    let mut vectors = Vec::with_capacity(inputs.len());
    for batch in inputs.chunks(EMBED_BATCH) {
        vectors.extend(embedder.send(EmbedTexts(batch.to_vec())).await??);
    }
    let docs_for_store = Arc::clone(docs);
    tokio::task::spawn_blocking(move || docs_for_store.store_vectors(vectors)).await??;
    tracing::info!(
        crate_name = docs.name(),
        items = inputs.len(),
        seconds = started.elapsed().as_secs_f64(),
        "embedded a crate's items"
    );
    Ok(())
}

/// `item_doc`: an item's full docs, by path, re-export or close match.
#[derive(Message)]
#[rtype(result = "Result<ItemDoc>")]
pub struct ItemDocQuery {
    pub crate_ref: CrateRef,
    pub path: String,
}

impl Handler<ItemDocQuery> for ToolDispatcher {
    type Result = ResponseFuture<Result<ItemDoc>>;

    fn handle(&mut self, msg: ItemDocQuery, _: &mut Context<Self>) -> Self::Result {
        let opener = self.crate_opener();
        tracked(&self.metrics, "crates", async move {
            let (docs, _) = opener.open(&msg.crate_ref).await?;
            docs.item_doc(&msg.path)
        })
    }
}

/// `module_tree`: the crate's modules with item counts.
#[derive(Message)]
#[rtype(result = "Result<ModuleTree>")]
pub struct ModuleTreeQuery(pub CrateRef);

impl Handler<ModuleTreeQuery> for ToolDispatcher {
    type Result = ResponseFuture<Result<ModuleTree>>;

    fn handle(&mut self, ModuleTreeQuery(crate_ref): ModuleTreeQuery, _: &mut Context<Self>) -> Self::Result {
        let opener = self.crate_opener();
        tracked(&self.metrics, "crates", async move { Ok(opener.open(&crate_ref).await?.0.module_tree()) })
    }
}

/// `crate_examples`: whole code blocks from the docs and whole example programs.
#[derive(Message)]
#[rtype(result = "Result<CrateExamples>")]
pub struct CrateExamplesQuery {
    pub crate_ref: CrateRef,
    pub item_opt: Option<String>,
    pub query_opt: Option<String>,
    pub limit: usize,
}

impl Handler<CrateExamplesQuery> for ToolDispatcher {
    type Result = ResponseFuture<Result<CrateExamples>>;

    fn handle(&mut self, msg: CrateExamplesQuery, _: &mut Context<Self>) -> Self::Result {
        let opener = self.crate_opener();
        tracked(&self.metrics, "crates", async move {
            if !(1..=MAX_CRATE_RESULTS).contains(&msg.limit) {
                return Err(DocdexError::invalid(format!("limit must be between 1 and {MAX_CRATE_RESULTS}")));
            }
            let (docs, _) = opener.open(&msg.crate_ref).await?;
            docs.examples(msg.item_opt.as_deref(), msg.query_opt.as_deref(), msg.limit)
        })
    }
}

/// `crate_versions`: every release, newest first, with yanked flags.
#[derive(Message)]
#[rtype(result = "Result<CrateVersions>")]
pub struct CrateVersionsQuery(pub String);

impl Handler<CrateVersionsQuery> for ToolDispatcher {
    type Result = ResponseFuture<Result<CrateVersions>>;

    fn handle(&mut self, CrateVersionsQuery(name): CrateVersionsQuery, _: &mut Context<Self>) -> Self::Result {
        let opener = self.crate_opener();
        tracked(&self.metrics, "crates", async move {
            let name = name.trim().to_string();
            if name.is_empty() {
                return Err(DocdexError::invalid("a crate name is required"));
            }
            registry::versions(&name, &opener.build_dir(), opener.deadline()).await
        })
    }
}
