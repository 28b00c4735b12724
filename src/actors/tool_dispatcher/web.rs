//! The web tools: discovery, one page's fetch, and the waterfall (the repo first, the web
//! when the gate says so) with its reasoning log.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use actix::{Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::params::{self, Caller, Tool};
use super::{tracked, ToolDispatcher};
use crate::actors::dag_logger::AppendDag;
use crate::actors::discovery::Discover;
use crate::actors::repo_manager::OpenRepo;
use crate::actors::scraper::FetchPage;
use crate::actors::waterfall::RunWaterfall;
use crate::protocol::{DocdexError, Result, WaterfallRequest, WaterfallResponse, WebFetchResponse, WebSearchResponse};

/// Web results a search gives when the caller names no limit (every surface).
pub const DEFAULT_WEB_RESULTS: usize = 10;

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
pub struct WebResearch(pub WaterfallRequest);

/// `POST /v1/web/search`, `docdex web-search`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchParams {
    /// What to look for on the web.
    pub query: String,
    /// Results to return (default 10).
    #[serde(default, deserialize_with = "params::number")]
    pub limit: Option<u64>,
}

impl Tool for WebSearchParams {
    type Message = WebSearch;
    type Output = WebSearchResponse;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        None
    }

    fn into_message(self, _: Option<PathBuf>, _: &Caller) -> Result<WebSearch> {
        let limit = self.limit.map_or(DEFAULT_WEB_RESULTS, |l| l.min(usize::MAX as u64) as usize);
        Ok(WebSearch { query: self.query, limit })
    }
}

/// `POST /v1/web/fetch`, `docdex web-fetch`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchParams {
    /// The page's URL (http or https).
    pub url: String,
    /// Fetch it again even when the cache holds a fresh copy.
    #[serde(default, deserialize_with = "params::flag")]
    pub refresh: Option<bool>,
}

impl Tool for WebFetchParams {
    type Message = WebFetch;
    type Output = WebFetchResponse;
    const NEEDS_REPO: bool = false;

    fn repo(&self) -> Option<&Path> {
        None
    }

    fn into_message(self, _: Option<PathBuf>, _: &Caller) -> Result<WebFetch> {
        Ok(WebFetch { url: self.url, refresh: self.refresh.unwrap_or(false) })
    }
}

impl Handler<WebSearch> for ToolDispatcher {
    type Result = ResponseFuture<Result<WebSearchResponse>>;

    fn handle(&mut self, msg: WebSearch, _: &mut Context<Self>) -> Self::Result {
        let discovery = self.web.discovery.clone();
        let enabled = self.config.web.enabled;
        tracked(&self.metrics, "discovery", async move {
            if !enabled {
                return Err(DocdexError::web_disabled());
            }
            crate::protocol::check_query_length(&msg.query)?;
            if msg.limit == 0 || msg.limit > crate::actors::discovery::MAX_DISCOVERY_RESULTS {
                return Err(DocdexError::invalid(format!(
                    "limit must be between 1 and {}, got {}",
                    crate::actors::discovery::MAX_DISCOVERY_RESULTS,
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

impl Handler<WebResearch> for ToolDispatcher {
    type Result = ResponseFuture<Result<WaterfallResponse>>;

    fn handle(&mut self, WebResearch(request): WebResearch, _: &mut Context<Self>) -> Self::Result {
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
            let mut recorder = crate::index::dag::DagRecorder::new("web_rag", &response.query);
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

fn record_waterfall(recorder: &mut crate::index::dag::DagRecorder, response: &WaterfallResponse, force_web: bool) {
    use crate::index::dag::NodeKind;
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
