//! Discovery: finds pages for a question through DuckDuckGo's HTML endpoint.
//!
//! Politeness first: every discovery request of the process, whoever asks, waits its turn at
//! one gate (one request at a time, the next ≥ `min_spacing_ms` after the last was answered,
//! callers served in arrival order); a 429, a 5xx or a challenge page backs off exponentially
//! with jitter and pushes the gate back for everyone. A challenge page switches to the proxy
//! endpoint when one is configured. Results are filtered by the blocklist and cached with the
//! web cache's TTL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, Context, Handler, Message, ResponseFuture};
use url::Url;

use crate::config::WebConfig;
use crate::protocol::time::unix_now;
use crate::protocol::{DocdexError, ErrorCode, Result, WebResult, WebSearchResponse};
use crate::web::cache::{CachedDiscovery, WebCache};
use crate::web::ddg::{self, DdgPage};
use crate::web::limiter::{backoff, FileSpacing, Spacing};
use crate::web::{http_get, safety};

/// Discovery result pages are small; anything larger is not one.
const MAX_RESULT_PAGE_BYTES: usize = 2 * 1024 * 1024;
/// Most results one discovery returns.
pub const MAX_DISCOVERY_RESULTS: usize = 30;

pub struct Discovery {
    shared: Arc<Shared>,
}

struct Shared {
    web: WebConfig,
    cache: WebCache,
    client: reqwest::Client,
    spacing: Spacing,
    /// The same spacing shared with every other process on this home.
    machine_spacing: FileSpacing,
}

impl Discovery {
    pub fn new(web: &WebConfig, state_dir: &std::path::Path) -> Result<Discovery> {
        // The endpoint is the user's choice (tests point it at a local server), so the private
        // address guard applies to result pages, not to the discovery endpoint itself.
        let client = safety::http_client(&web.user_agent, true, Duration::from_secs(web.page_load_timeout_secs))?;
        Ok(Discovery {
            shared: Arc::new(Shared {
                cache: WebCache::new(state_dir, web.cache_ttl_secs),
                client,
                spacing: Spacing::new(Duration::from_millis(web.min_spacing_ms)),
                machine_spacing: FileSpacing::new(
                    state_dir.join("cache/web/discovery.gate"),
                    Duration::from_millis(web.min_spacing_ms),
                ),
                web: web.clone(),
            }),
        })
    }
}

impl Actor for Discovery {
    type Context = Context<Self>;
}

/// Finds up to `limit` pages for a query (cache first unless `refresh`).
#[derive(Message)]
#[rtype(result = "Result<WebSearchResponse>")]
pub struct Discover {
    pub query: String,
    pub limit: usize,
    pub refresh: bool,
}

impl Handler<Discover> for Discovery {
    type Result = ResponseFuture<Result<WebSearchResponse>>;

    fn handle(&mut self, msg: Discover, _: &mut Context<Self>) -> Self::Result {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move { discover(shared, msg).await })
    }
}

async fn discover(shared: Arc<Shared>, msg: Discover) -> Result<WebSearchResponse> {
    let started = Instant::now();
    let query = msg.query.split_whitespace().collect::<Vec<_>>().join(" ");
    if query.is_empty() {
        return Err(DocdexError::invalid("query must not be empty"));
    }
    let limit = msg.limit.clamp(1, MAX_DISCOVERY_RESULTS);
    if !msg.refresh {
        let cache = shared.cache.clone();
        let key = query.clone();
        if let Some(cached) = tokio::task::spawn_blocking(move || cache.discovery(&key, unix_now())).await? {
            return Ok(WebSearchResponse {
                query,
                took_ms: ms(started),
                from_cache: true,
                endpoint: "cache".into(),
                blocked: cached.blocked,
                results: cached.results.into_iter().take(limit).collect(),
            });
        }
    }
    let (endpoint, results) = fetch_results(&shared, &query).await?;
    let total = results.len();
    let results: Vec<WebResult> = results
        .into_iter()
        .filter(|r| {
            Url::parse(&r.url).is_ok_and(|u| !safety::is_blocked(&safety::domain_of(&u), &shared.web.blocklist))
        })
        .collect();
    let blocked = total - results.len();
    let cached = CachedDiscovery {
        query: query.clone(),
        fetched_at_unix: unix_now(),
        endpoint: endpoint.to_string(),
        blocked,
        results: results.clone(),
    };
    let cache = shared.cache.clone();
    if let Err(err) = tokio::task::spawn_blocking(move || cache.put_discovery(&cached)).await? {
        tracing::warn!(error = %err.message, "could not cache discovery results");
    }
    Ok(WebSearchResponse {
        query,
        took_ms: ms(started),
        from_cache: false,
        endpoint: endpoint.to_string(),
        blocked,
        results: results.into_iter().take(limit).collect(),
    })
}

/// Asks the primary endpoint, backing off on refusals; after a challenge page the proxy
/// endpoint (when configured) takes over.
async fn fetch_results(shared: &Shared, query: &str) -> Result<(&'static str, Vec<WebResult>)> {
    let web = &shared.web;
    let base_delay = Duration::from_millis(web.min_spacing_ms);
    let mut endpoint = "primary";
    let mut delay = Duration::ZERO;
    let mut last_problem = String::new();
    for attempt in 0..=web.max_retries {
        let base = match endpoint {
            "proxy" => web.ddg_proxy_base_url.as_deref().unwrap_or(&web.ddg_base_url),
            _ => web.ddg_base_url.as_str(),
        };
        let mut url = Url::parse(base).map_err(|err| {
            DocdexError::new(ErrorCode::ConfigInvalid, format!("bad discovery URL `{base}`: {err}"))
                .with_hint("fix `[web] ddg_base_url` / DOCDEX_DDG_BASE_URL")
        })?;
        url.query_pairs_mut().append_pair("q", query);
        let turn = shared.spacing.wait_turn(delay).await;
        shared.machine_spacing.wait_turn(delay).await;
        tracing::debug!(%url, attempt, "discovery request");
        let outcome = http_get(&shared.client, &url, MAX_RESULT_PAGE_BYTES).await;
        drop(turn);
        let problem = match outcome {
            Err(err) if err.code == ErrorCode::Timeout => err.message,
            // No connection at all (no network, DNS, a firewall) is not a refusal: backing off
            // and asking again would only make every question wait for the same answer.
            Err(err) if err.code == ErrorCode::WebUnavailable => {
                return Err(DocdexError::new(ErrorCode::WebUnavailable, format!("discovery failed: {}", err.message))
                    .with_hint(
                        "this machine cannot reach the discovery endpoint (no network, or a firewall); answers come \
                         from the repo alone: set `[web] enabled = false` (DOCDEX_WEB_ENABLED=0) to skip the web tier",
                    ))
            }
            Err(err) => return Err(err),
            Ok(body) if body.status == 429 || body.status >= 500 => {
                format!("{endpoint} endpoint answered HTTP {}", body.status)
            }
            Ok(body) if body.status == 202 || ddg::is_anomaly(&body.body) => {
                let problem = format!("{endpoint} endpoint answered with a challenge page (HTTP {})", body.status);
                if endpoint == "primary" && web.ddg_proxy_base_url.is_some() {
                    tracing::warn!("{problem}; switching to the proxy endpoint");
                    endpoint = "proxy";
                    last_problem = problem;
                    delay = Duration::ZERO;
                    continue;
                }
                problem
            }
            Ok(body) if !(200..300).contains(&body.status) => {
                return Err(DocdexError::new(
                    ErrorCode::WebUnavailable,
                    format!("discovery failed: {endpoint} endpoint answered HTTP {}", body.status),
                ))
            }
            Ok(body) => match ddg::parse(&body.body, &body.final_url) {
                DdgPage::Results(results) => return Ok((endpoint, results)),
                DdgPage::Anomaly => format!("{endpoint} endpoint answered with a challenge page"),
            },
        };
        tracing::warn!(attempt, problem = %problem, "discovery refused; backing off");
        delay = backoff(base_delay, attempt);
        last_problem = problem;
    }
    let hint = if web.ddg_proxy_base_url.is_none() {
        "DuckDuckGo is refusing requests from this machine for now; try later, or set `[web] ddg_proxy_base_url` / DOCDEX_DDG_PROXY_BASE_URL"
    } else {
        "both discovery endpoints are refusing requests; try later"
    };
    Err(DocdexError::new(
        ErrorCode::WebUnavailable,
        format!("discovery failed after {} attempts: {last_problem}", web.max_retries + 1),
    )
    .with_hint(hint))
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}
