//! Scraper: fetches web pages politely and safely and returns them as clean text.
//!
//! A page is served from the shared web cache when it is fresh; otherwise the fetch waits for
//! its domain's turn (one fetch at a time per domain, the next ≥ `request_delay_ms` after the
//! last one ended) and for a free tab (`[core] max_concurrent_fetches`), loads the page in
//! headless Chromium (plain HTTP when no browser is found, for `engine = "http"`, and for
//! non-HTML files), extracts the article and caches raw HTML and cleaned JSON. The browser is
//! guarded (`web::browser`): started on first use, restarted after a crash, killed after a
//! page timeout, when idle, and when the actor stops.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix::{Actor, AsyncContext, Context, Handler, Message, ResponseFuture};
use tokio::sync::Semaphore;
use url::Url;

use crate::config::{Config, WebConfig};
use crate::ingest::sha256_hex;
use crate::protocol::time::unix_now;
use crate::protocol::{DocdexError, ErrorCode, Result, WebPage};
use crate::web::browser::{find_chromium, sweep_stale_locks, BrowserProcess, LockSweep};
use crate::web::cache::WebCache;
use crate::web::cdp;
use crate::web::limiter::DomainSpacing;
use crate::web::{
    chromium_fetch, extract, http_get, is_plain_text, looks_like_plain_file, open_tab, reset_tab, safety,
};

/// Time the blocking side of a browser fetch gets beyond the page timeout before the browser
/// is considered stuck and killed.
const STUCK_GRACE: Duration = Duration::from_secs(1);
/// How often the idle browser check runs.
const IDLE_CHECK: Duration = Duration::from_secs(5);

pub struct Scraper {
    shared: Arc<Shared>,
}

struct Shared {
    web: WebConfig,
    cache: WebCache,
    client: reqwest::Client,
    domains: DomainSpacing,
    tabs: Semaphore,
    chromium_opt: Option<PathBuf>,
    locks_dir: PathBuf,
    profiles_dir: PathBuf,
    page_timeout: Duration,
    /// Tabs kept open for reuse (the number of concurrent fetches).
    max_tabs: usize,
    browser: Mutex<BrowserSlot>,
}

#[derive(Default)]
struct BrowserSlot {
    process_opt: Option<BrowserProcess>,
    /// Open tabs waiting for the next page: opening one costs about half a second.
    idle_tabs: Vec<cdp::Tab>,
    last_used_opt: Option<Instant>,
    in_flight: usize,
}

impl BrowserSlot {
    /// Drops the tabs, then the process (which kills and reaps it; its pipe closes with it).
    fn close(&mut self) {
        self.idle_tabs.clear();
        self.process_opt = None;
    }
}

impl Scraper {
    pub fn new(config: &Config, state_dir: &std::path::Path) -> Result<Scraper> {
        let web = config.web.clone();
        let page_timeout = Duration::from_secs(web.page_load_timeout_secs);
        let client = safety::http_client(&web.user_agent, web.allow_private_addresses, page_timeout)?;
        let chromium_opt =
            if web.engine == "chromium" { find_chromium(web.chrome_binary_path.as_deref()) } else { None };
        let locks_dir = state_dir.join("locks");
        let sweep = sweep_stale_locks(&locks_dir);
        for cleaned in &sweep.cleaned {
            tracing::warn!(lock = %cleaned, "removed a stale browser lock");
        }
        Ok(Scraper {
            shared: Arc::new(Shared {
                cache: WebCache::new(state_dir, web.cache_ttl_secs),
                client,
                domains: DomainSpacing::new(Duration::from_millis(web.request_delay_ms)),
                tabs: Semaphore::new(config.core.max_concurrent_fetches.max(1)),
                chromium_opt,
                locks_dir,
                profiles_dir: state_dir.join("browser"),
                page_timeout,
                max_tabs: config.core.max_concurrent_fetches.max(1),
                browser: Mutex::new(BrowserSlot::default()),
                web,
            }),
        })
    }
}

impl Shared {
    fn slot(&self) -> MutexGuard<'_, BrowserSlot> {
        // A panic while holding the slot leaves it usable: the browser state is re-checked.
        self.browser.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A connection to a live browser, starting one when none runs (or the last one died).
    fn browser(&self, binary: &std::path::Path) -> Result<cdp::Connection> {
        let mut slot = self.slot();
        if let Some(process) = slot.process_opt.as_mut() {
            if !process.is_alive() {
                tracing::warn!(pid = process.pid(), "chromium died; starting a new one");
                slot.close();
            }
        }
        let process = match slot.process_opt.take() {
            Some(process) => process,
            None => {
                let started = Instant::now();
                let process = BrowserProcess::launch(binary, &self.locks_dir, &self.profiles_dir)?;
                tracing::info!(pid = process.pid(), ms = started.elapsed().as_millis() as u64, "chromium started");
                process
            }
        };
        let connection = process.connection.clone();
        slot.process_opt = Some(process);
        slot.last_used_opt = Some(Instant::now());
        Ok(connection)
    }

    /// An open tab: an idle one from the pool, else a new one.
    fn tab(&self, binary: &std::path::Path) -> Result<cdp::Tab> {
        let browser = self.browser(binary)?;
        if let Some(tab) = self.slot().idle_tabs.pop() {
            return Ok(tab);
        }
        let policy = safety::RequestPolicy::new(self.web.allow_private_addresses, self.web.blocklist.clone());
        open_tab(&browser, policy).map_err(|err| DocdexError::new(ErrorCode::WebUnavailable, err))
    }

    fn kill_browser(&self, why: &str) {
        let mut slot = self.slot();
        if let Some(process) = &slot.process_opt {
            tracing::warn!(pid = process.pid(), why, "killing chromium");
        }
        slot.close();
    }

    /// Loads a page with the browser. A failure of the browser or of its connection (crash,
    /// killed, stale socket) restarts it and tries the page once more; a page that fails on
    /// its own (refused, timed out) is reported as it is.
    fn fetch_with_browser(
        &self,
        binary: &std::path::Path,
        url: &Url,
        navigation_started: &Mutex<Option<Instant>>,
    ) -> Result<(String, String)> {
        let mut last_err = String::new();
        for attempt in 0..2 {
            let tab = match self.tab(binary) {
                Ok(tab) => tab,
                Err(err) if attempt == 0 => {
                    tracing::warn!(error = %err.message, "chromium unusable; starting a new one");
                    self.slot().close();
                    last_err = err.message;
                    continue;
                }
                Err(err) => return Err(err),
            };
            match chromium_fetch(&tab, url, &self.web.user_agent, self.page_timeout, navigation_started) {
                Ok(loaded) => {
                    // Back to the pool, blank, unless the browser changed meanwhile.
                    if reset_tab(&tab) {
                        let mut slot = self.slot();
                        if slot.process_opt.is_some() && slot.idle_tabs.len() < self.max_tabs {
                            slot.idle_tabs.push(tab);
                        } else {
                            tab.close();
                        }
                    }
                    return Ok(loaded);
                }
                Err(err) => {
                    tab.close();
                    if err.contains("timed out") {
                        return Err(DocdexError::new(
                            ErrorCode::Timeout,
                            format!("{url} did not load within {} s", self.page_timeout.as_secs()),
                        ));
                    }
                    if err.contains("net::ERR_") || err.contains("Navigate failed") {
                        return Err(DocdexError::new(ErrorCode::WebUnavailable, format!("cannot load {url}: {err}")));
                    }
                    tracing::warn!(%url, error = %err, attempt, "chromium failed during a fetch; starting a new one");
                    self.slot().close();
                    last_err = err;
                }
            }
        }
        Err(DocdexError::new(ErrorCode::WebUnavailable, format!("cannot load {url}: {last_err}")))
    }

    /// Marks a browser fetch as running (the idle check leaves the browser alone meanwhile).
    fn begin_use(&self) {
        self.slot().in_flight += 1;
    }

    fn end_use(&self) {
        let mut slot = self.slot();
        slot.in_flight = slot.in_flight.saturating_sub(1);
        slot.last_used_opt = Some(Instant::now());
    }
}

impl Actor for Scraper {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let shared = Arc::clone(&self.shared);
        ctx.run_interval(IDLE_CHECK, move |_, _| {
            let idle_for = Duration::from_secs(shared.web.browser_idle_secs);
            let mut slot = shared.slot();
            let idle = slot.in_flight == 0 && slot.last_used_opt.is_some_and(|t| t.elapsed() >= idle_for);
            if idle && slot.process_opt.is_some() {
                tracing::info!("closing the idle browser");
                slot.close();
                slot.last_used_opt = None;
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.shared.slot().close();
    }
}

/// Fetches one page (cache first unless `refresh`).
#[derive(Message)]
#[rtype(result = "Result<WebPage>")]
pub struct FetchPage {
    pub url: String,
    pub refresh: bool,
}

/// Kills the browser now (daemon shutdown).
#[derive(Message)]
#[rtype(result = "()")]
pub struct CloseBrowser;

/// What `check` and `status` report about the web tier.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScraperInfo {
    pub chromium_opt: Option<String>,
    pub browser_pid_opt: Option<u32>,
    pub locks: LockSweep,
}

#[derive(Message)]
#[rtype(result = "ScraperInfo")]
pub struct ScraperStatus;

impl Handler<CloseBrowser> for Scraper {
    type Result = ();

    fn handle(&mut self, _: CloseBrowser, _: &mut Context<Self>) {
        self.shared.slot().close();
    }
}

impl Handler<ScraperStatus> for Scraper {
    type Result = actix::MessageResult<ScraperStatus>;

    fn handle(&mut self, _: ScraperStatus, _: &mut Context<Self>) -> Self::Result {
        let shared = &self.shared;
        let browser_pid_opt = shared.slot().process_opt.as_ref().map(BrowserProcess::pid);
        actix::MessageResult(ScraperInfo {
            chromium_opt: shared.chromium_opt.as_ref().map(|p| p.display().to_string()),
            browser_pid_opt,
            locks: sweep_stale_locks(&shared.locks_dir),
        })
    }
}

impl Handler<FetchPage> for Scraper {
    type Result = ResponseFuture<Result<WebPage>>;

    fn handle(&mut self, msg: FetchPage, _: &mut Context<Self>) -> Self::Result {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move { fetch_page(shared, msg).await })
    }
}

async fn fetch_page(shared: Arc<Shared>, msg: FetchPage) -> Result<WebPage> {
    let url = safety::parse_web_url(&msg.url)?;
    safety::check_blocklist(&url, &shared.web.blocklist)?;
    let key = safety::normalise(&url);
    if !msg.refresh {
        let cache = shared.cache.clone();
        let cached_key = key.clone();
        if let Some(mut page) = tokio::task::spawn_blocking(move || cache.page(&cached_key, unix_now())).await? {
            page.from_cache = true;
            return Ok(page);
        }
    }
    safety::check_address(&url, shared.web.allow_private_addresses).await?;
    // The domain's turn is held until the page has been fetched (or has failed).
    let domain_gate = shared.domains.gate(&safety::domain_of(&url));
    let turn = domain_gate.wait_turn(Duration::ZERO).await;
    let _tab = shared.tabs.acquire().await.map_err(|_| DocdexError::internal("the scraper is shutting down"))?;

    let mut use_browser = shared.chromium_opt.clone().filter(|_| !looks_like_plain_file(&url));
    if let Some(binary) = use_browser.clone() {
        // Start the browser outside the page's time budget (a cold start takes a second or
        // more); one that cannot start leaves the page to plain HTTP.
        let starting = Arc::clone(&shared);
        if let Err(err) = tokio::task::spawn_blocking(move || starting.browser(&binary).map(drop)).await? {
            tracing::warn!(error = %err.message, "chromium cannot start; fetching over plain HTTP");
            shared.slot().close();
            use_browser = None;
        }
    }
    let (final_url, html, engine, plain) = match use_browser {
        Some(binary) => {
            let fetch_shared = Arc::clone(&shared);
            let fetch_url = url.clone();
            let navigation_started = Arc::new(Mutex::new(None));
            let started_flag = Arc::clone(&navigation_started);
            shared.begin_use();
            let mut task = tokio::task::spawn_blocking(move || {
                fetch_shared.fetch_with_browser(&binary, &fetch_url, &started_flag)
            });
            // The watchdog times the page from when it was asked for (opening a tab in a
            // fresh browser is not the page's fault); a browser that never even opens the tab
            // gets twice the budget.
            let hard_deadline = Instant::now() + shared.page_timeout * 2 + STUCK_GRACE;
            let outcome = loop {
                match tokio::time::timeout(Duration::from_millis(100), &mut task).await {
                    Ok(joined) => break Some(joined),
                    Err(_) => {
                        let started = *navigation_started.lock().unwrap_or_else(|p| p.into_inner());
                        let page_late = started.is_some_and(|t| t.elapsed() > shared.page_timeout + STUCK_GRACE);
                        if page_late || Instant::now() > hard_deadline {
                            break None;
                        }
                    }
                }
            };
            shared.end_use();
            match outcome {
                Some(joined) => {
                    let (final_url, html) = joined??;
                    (final_url, html, "chromium", false)
                }
                None => {
                    // The browser stopped answering: kill it, which also unblocks the fetch.
                    shared.kill_browser("page timeout");
                    return Err(DocdexError::new(
                        ErrorCode::Timeout,
                        format!("{url} did not load within {} s", shared.page_timeout.as_secs()),
                    ));
                }
            }
        }
        None => {
            let body = http_get(&shared.client, &url, shared.web.max_response_bytes).await?;
            if !(200..300).contains(&body.status) {
                return Err(DocdexError::new(
                    ErrorCode::WebUnavailable,
                    format!("{url} answered HTTP {}", body.status),
                ));
            }
            let plain =
                is_plain_text(&body.content_type) || (body.content_type.is_empty() && looks_like_plain_file(&url));
            if !plain && !body.content_type.is_empty() && !body.content_type.contains("html") {
                return Err(DocdexError::new(
                    ErrorCode::WebUnavailable,
                    format!("{url} is {}, not a page docdex can read", body.content_type),
                ));
            }
            (body.final_url.to_string(), body.body, "http", plain)
        }
    };
    drop(turn);
    // Redirects may have led somewhere the first check would have refused.
    if let Ok(final_parsed) = Url::parse(&final_url) {
        if final_parsed.as_str() != url.as_str() && final_parsed.scheme() != "about" {
            safety::parse_web_url(final_parsed.as_str())?;
            safety::check_blocklist(&final_parsed, &shared.web.blocklist)?;
            safety::check_address(&final_parsed, shared.web.allow_private_addresses).await?;
        }
    }
    let mut html = html;
    if html.len() > shared.web.max_response_bytes {
        let mut cut = shared.web.max_response_bytes;
        while !html.is_char_boundary(cut) {
            cut -= 1;
        }
        html.truncate(cut);
    }
    let cache = shared.cache.clone();
    let page_url = url.clone();
    tokio::task::spawn_blocking(move || {
        let (title, text, extractor) = if plain {
            let title =
                page_url.path_segments().and_then(|mut s| s.next_back().map(str::to_string)).unwrap_or_default();
            (title, html.clone(), "plain")
        } else {
            let article = extract::extract(&html, &page_url);
            (article.title, article.text, article.extractor)
        };
        let now = unix_now();
        let page = WebPage {
            url: key,
            final_url,
            title,
            content_hash: sha256_hex(text.as_bytes()),
            text,
            fetched_at: crate::protocol::time::format_unix(now),
            fetched_at_unix: now,
            engine: engine.to_string(),
            from_cache: false,
            extractor: extractor.to_string(),
        };
        if let Err(err) = cache.put_page(&page, &html) {
            tracing::warn!(url = %page.url, error = %err.message, "could not cache a page");
        }
        Ok(page)
    })
    .await?
}
