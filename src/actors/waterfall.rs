//! WaterfallOrchestrator: answers from the repo first and goes to the web only when it should.
//!
//! Tier 1 is the repo's own search (through the dispatcher, so it is the very search every
//! surface gets). The gate compares its calibrated confidence (`top_score`, 0–1) with
//! `[search] web_trigger_threshold`; below it, or when the caller forces it, tier 2 runs:
//! discovery → fetch (Scraper: cache, per-domain delay, guarded browser) → extract → ingest
//! the pages into this repo's index (so later searches find them locally; another repo never
//! sees them) → rank the fetched pages' chunks against the question → merge after the local
//! hits. A web tier that fails leaves the local answer intact and says why.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use actix::{Actor, Addr, Context, Handler, Message, Recipient, ResponseFuture};
use futures_util::future::join_all;

use super::discovery::{Discover, Discovery};
use super::indexer::IngestWebPages;
use super::repo_manager::{OpenRepo, RepoManager};
use super::scraper::{FetchPage, Scraper};
use crate::config::Config;
use crate::index::{SearchParams, WebPageDoc};
use crate::ingest::{chunk_file, ChunkParams, Language};
use crate::protocol::{
    DocdexError, Gate, Result, SearchHit, SearchRequest, SearchResponse, TierReport, WaterfallResponse, WebPage,
    WebPageReport, WebTierReport,
};

/// Discovery results asked for per page fetched: blocked, failing and duplicate pages leave
/// room to fall back on the next ones.
const DISCOVERY_PER_PAGE: usize = 2;

/// Tier 1: the repo's own search, exactly as every surface runs it. The orchestrator sends
/// it to whoever started it (the dispatcher), so it depends on no part above it.
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct LocalSearch(pub SearchRequest);

pub struct WaterfallOrchestrator {
    local_search: Recipient<LocalSearch>,
    repo_manager: Addr<RepoManager>,
    discovery: Addr<Discovery>,
    scraper: Addr<Scraper>,
    config: Arc<Config>,
}

impl WaterfallOrchestrator {
    pub fn new(
        local_search: Recipient<LocalSearch>,
        repo_manager: Addr<RepoManager>,
        discovery: Addr<Discovery>,
        scraper: Addr<Scraper>,
        config: Arc<Config>,
    ) -> WaterfallOrchestrator {
        WaterfallOrchestrator { local_search, repo_manager, discovery, scraper, config }
    }
}

impl Actor for WaterfallOrchestrator {
    type Context = Context<Self>;
}

/// Runs the waterfall for a search on `repo` (already resolved by the dispatcher).
#[derive(Message)]
#[rtype(result = "Result<WaterfallResponse>")]
pub struct RunWaterfall {
    pub repo: PathBuf,
    pub search: SearchRequest,
    pub force_web: bool,
}

/// The gate: web when forced or when the local confidence is below the threshold; a disabled
/// web tier turns an unforced escalation into `web_disabled` (a forced one is an error).
pub fn decide(top_score: f32, threshold: f32, forced: bool, web_enabled: bool) -> Result<Gate> {
    let wants_web = forced || top_score < threshold;
    if forced && !web_enabled {
        return Err(DocdexError::web_disabled());
    }
    let decision = match (wants_web, web_enabled) {
        (false, _) => "local",
        (true, true) => "web",
        (true, false) => "web_disabled",
    };
    Ok(Gate { top_score, threshold, forced, decision: decision.into() })
}

impl Handler<RunWaterfall> for WaterfallOrchestrator {
    type Result = ResponseFuture<Result<WaterfallResponse>>;

    fn handle(&mut self, msg: RunWaterfall, _: &mut Context<Self>) -> Self::Result {
        let local_search = self.local_search.clone();
        let repo_manager = self.repo_manager.clone();
        let discovery = self.discovery.clone();
        let scraper = self.scraper.clone();
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            let started = Instant::now();
            let web_enabled = config.web.enabled;
            if msg.force_web && !web_enabled {
                return Err(DocdexError::web_disabled());
            }
            let mut search = msg.search.clone();
            search.repo_opt = Some(msg.repo.clone());
            let local: SearchResponse = local_search.send(LocalSearch(search)).await??;
            let threshold = config.search.web_trigger_threshold;
            let gate = decide(local.top_score, threshold, msg.force_web, web_enabled)?;
            let mut tiers = vec![TierReport {
                tier: "local".into(),
                reason: "the repo is always searched first".into(),
                took_ms: local.took_ms,
                hits: local.hits.len(),
            }];
            let mut notice = local.notice.clone();
            let mut hits = local.hits.clone();
            let mut web_report = None;
            match gate.decision.as_str() {
                "local" => {}
                "web_disabled" => {
                    tracing::info!(
                        query = %msg.search.query,
                        top_score = local.top_score,
                        threshold,
                        "local confidence is below the web threshold, but the web tier is disabled"
                    );
                }
                _ => {
                    let reason = if msg.force_web {
                        "forced by the caller".to_string()
                    } else {
                        format!("local confidence {:.2} is below the threshold {:.2}", local.top_score, threshold)
                    };
                    let tier_started = Instant::now();
                    let outcome = web_tier(&msg, &config, &repo_manager, &discovery, &scraper).await;
                    let (report, web_hits) = match outcome {
                        Ok(done) => done,
                        Err(failed) => {
                            notice = Some(format!("the web tier failed: {}", failed.message));
                            (
                                WebTierReport {
                                    discovered: 0,
                                    discovery_from_cache: false,
                                    pages: Vec::new(),
                                    ingested_chunks: 0,
                                    error: Some(failed),
                                },
                                Vec::new(),
                            )
                        }
                    };
                    let added = merge(&mut hits, web_hits, config.search.max_web_hits);
                    tiers.push(TierReport {
                        tier: "web".into(),
                        reason,
                        took_ms: tier_started.elapsed().as_secs_f64() * 1000.0,
                        hits: added,
                    });
                    web_report = Some(report);
                }
            }
            Ok(WaterfallResponse {
                query: msg.search.query,
                took_ms: started.elapsed().as_secs_f64() * 1000.0,
                top_score: local.top_score,
                mode: local.mode,
                tiers,
                gate,
                web: web_report,
                notice,
                session_id: None,
                hits,
            })
        })
    }
}

/// Appends web hits after the local ones, skipping chunks tier 1 already returned (a page
/// ingested earlier is found locally too). Returns how many were added.
fn merge(hits: &mut Vec<SearchHit>, web_hits: Vec<SearchHit>, max_web_hits: usize) -> usize {
    let seen: HashSet<(String, u64)> = hits.iter().map(|h| (h.path.clone(), h.line_start)).collect();
    let before = hits.len();
    hits.extend(web_hits.into_iter().filter(|h| !seen.contains(&(h.path.clone(), h.line_start))).take(max_web_hits));
    hits.len() - before
}

/// Discovery, fetches, ingestion and ranking of the fetched pages.
async fn web_tier(
    msg: &RunWaterfall,
    config: &Config,
    repo_manager: &Addr<RepoManager>,
    discovery: &Addr<Discovery>,
    scraper: &Addr<Scraper>,
) -> Result<(WebTierReport, Vec<SearchHit>)> {
    let max_pages = config.web.max_pages.max(1);
    let found = discovery
        .send(Discover { query: msg.search.query.clone(), limit: max_pages * DISCOVERY_PER_PAGE, refresh: false })
        .await??;
    // Fetch the first `max_pages`; a failure is replaced by the next result, in a second round.
    let mut pages: Vec<WebPage> = Vec::new();
    let mut reports: Vec<WebPageReport> = Vec::new();
    let mut candidates = found.results.iter();
    while pages.len() < max_pages {
        let round: Vec<_> = candidates.by_ref().take(max_pages - pages.len()).collect();
        if round.is_empty() {
            break;
        }
        let fetched =
            join_all(round.iter().map(|r| scraper.send(FetchPage { url: r.url.clone(), refresh: false }))).await;
        for (result, outcome) in round.iter().zip(fetched) {
            match outcome.map_err(DocdexError::from).and_then(|r| r) {
                Ok(page) => {
                    reports.push(WebPageReport {
                        url: page.url.clone(),
                        title: Some(page.title.clone()),
                        engine: Some(page.engine.clone()),
                        from_cache: page.from_cache,
                        error: None,
                    });
                    pages.push(page);
                }
                Err(err) => {
                    tracing::warn!(url = %result.url, error = %err.message, "web page skipped");
                    reports.push(WebPageReport {
                        url: result.url.clone(),
                        title: Some(result.title.clone()),
                        engine: None,
                        from_cache: false,
                        error: Some(err.message),
                    });
                }
            }
        }
    }
    let handle = repo_manager.send(OpenRepo { path: msg.repo.clone(), create: false }).await??;
    let params = ChunkParams::default();
    let docs: Vec<(WebPageDoc, String, Vec<crate::ingest::Chunk>)> = pages
        .iter()
        .filter(|p| !p.text.trim().is_empty())
        .map(|p| {
            let doc = WebPageDoc { url: p.url.clone(), title: p.title.clone(), fetched_at: p.fetched_at_unix };
            (doc, p.content_hash.clone(), chunk_file(Language::Markdown, &p.text, params))
        })
        .collect();
    let urls: Vec<String> = docs.iter().map(|(doc, _, _)| doc.url.clone()).collect();
    let ingested_chunks = {
        // No index run of this repo shares the writer meanwhile.
        let _one_writer = handle.index_run.lock().await;
        handle.indexer.send(IngestWebPages { pages: docs }).await??
    };
    let index = Arc::clone(&handle.index);
    let query = msg.search.query.clone();
    let params = SearchParams {
        repeat_hit_delay: config.search.repeat_hit_delay,
        concept_weight: config.search.lexical_concept_weight(),
        ..SearchParams::new(config.search.max_web_hits.max(1), config.search.max_hits_per_file)
    };
    let ranked = tokio::task::spawn_blocking(move || index.search_paths(&query, &urls, params)).await??;
    let report = WebTierReport {
        discovered: found.results.len(),
        discovery_from_cache: found.from_cache,
        pages: reports,
        ingested_chunks,
        error: None,
    };
    Ok((report, ranked.hits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorCode;

    #[test]
    fn the_gate_escalates_below_the_threshold_or_when_forced() {
        assert_eq!(decide(0.9, 0.7, false, true).unwrap().decision, "local");
        assert_eq!(decide(0.7, 0.7, false, true).unwrap().decision, "local");
        assert_eq!(decide(0.3, 0.7, false, true).unwrap().decision, "web");
        assert_eq!(decide(0.9, 0.7, true, true).unwrap().decision, "web");
        assert_eq!(decide(0.3, 0.7, false, false).unwrap().decision, "web_disabled");
        assert_eq!(decide(0.9, 0.7, false, false).unwrap().decision, "local");
        assert_eq!(decide(0.9, 0.7, true, false).unwrap_err().code, ErrorCode::WebDisabled);
    }
}
