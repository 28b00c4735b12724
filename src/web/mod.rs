//! The web tier's plain logic, used by the Discovery, Scraper and WaterfallOrchestrator
//! actors: URL safety, DuckDuckGo's result markup, article extraction, the shared cache,
//! rate limiting and the guarded Chromium process.

pub mod browser;
pub mod cache;
pub mod cdp;
pub mod ddg;
pub mod extract;
pub mod limiter;
pub mod safety;

use std::time::Duration;

use url::Url;

use crate::protocol::{DocdexError, ErrorCode, Result};

/// A response body read over plain HTTP.
pub struct HttpBody {
    pub final_url: Url,
    pub status: u16,
    pub content_type: String,
    pub body: String,
    /// The body was cut at the size cap.
    pub truncated: bool,
}

/// GETs a URL, reading at most `max_bytes` of the body. Any status is returned: callers decide
/// what a 429 or a 202 means.
pub async fn http_get(client: &reqwest::Client, url: &Url, max_bytes: usize) -> Result<HttpBody> {
    let mut response = client.get(url.clone()).send().await.map_err(|err| request_error(url, &err))?;
    let final_url = response.url().clone();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut bytes = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response.chunk().await.map_err(|err| request_error(url, &err))? {
        let room = max_bytes.saturating_sub(bytes.len());
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(HttpBody { final_url, status, content_type, body: String::from_utf8_lossy(&bytes).into_owned(), truncated })
}

fn request_error(url: &Url, err: &reqwest::Error) -> DocdexError {
    if err.is_timeout() {
        return DocdexError::new(ErrorCode::Timeout, format!("{url} did not answer in time"));
    }
    // The resolver refusing private addresses surfaces as a connect error; say so plainly.
    let mut cause = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        cause = format!("{cause}: {inner}");
        source = inner.source();
    }
    if cause.contains("private or local addresses") {
        return DocdexError::new(ErrorCode::UrlRefused, format!("{url}: {cause}"))
            .with_hint("set `[web] allow_private_addresses = true` to fetch from your own network");
    }
    DocdexError::new(ErrorCode::WebUnavailable, format!("cannot fetch {url}: {cause}"))
}

/// Content types read as text without a browser.
pub fn is_plain_text(content_type: &str) -> bool {
    content_type.starts_with("text/plain")
        || content_type.starts_with("text/markdown")
        || content_type.starts_with("text/x-")
        || content_type.contains("json")
}

/// URLs whose extension says they are not HTML pages: fetched without a browser.
pub fn looks_like_plain_file(url: &Url) -> bool {
    let path = url.path().to_ascii_lowercase();
    [".txt", ".md", ".markdown", ".json", ".rst", ".toml", ".yaml", ".yml", ".rs", ".py"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

/// How often a loading page is asked whether it is done.
const READY_POLL: Duration = Duration::from_millis(25);

/// Loads a page in an open tab: navigate, wait until the document has loaded, read the DOM.
/// Returns the final URL and the rendered HTML; the tab is left on `about:blank` for reuse.
/// `navigation_started` is set when the page is asked for, so a watchdog can time the page
/// alone.
///
/// "Loaded" is `document.readyState == "complete"` (the load event: scripts run, the DOM
/// built), polled: waiting for the network to go idle would cost a fixed second per page.
pub fn chromium_fetch(
    tab: &cdp::Tab,
    url: &Url,
    user_agent: &str,
    timeout: Duration,
    navigation_started: &std::sync::Mutex<Option<std::time::Instant>>,
) -> std::result::Result<(String, String), String> {
    let _ = tab.set_user_agent(user_agent);
    if let Ok(mut started) = navigation_started.lock() {
        *started = Some(std::time::Instant::now());
    }
    let deadline = std::time::Instant::now() + timeout;
    tab.navigate(url.as_str(), timeout)?;
    let probe = "document.readyState === 'complete' && location.href !== 'about:blank'";
    loop {
        if tab.evaluate(probe)?.as_bool().unwrap_or(false) {
            break;
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("page load timed out after {} s", timeout.as_secs()));
        }
        std::thread::sleep(READY_POLL);
    }
    tab.content()
}

/// Opens a tab in a running browser. Every request the tab makes is paused and checked
/// against `policy` before Chromium sends it: the page passed the checks before it was asked
/// for, but its subresources, its redirects and its scripts' navigations happen inside the
/// browser, where only this interception sees them.
pub fn open_tab(browser: &cdp::Connection, policy: safety::RequestPolicy) -> std::result::Result<cdp::Tab, String> {
    let guard: cdp::RequestGuard = std::sync::Arc::new(move |url: &str| policy.refusal(url));
    browser.new_tab(Some(guard)).map_err(|err| format!("browser: cannot open a guarded tab: {err}"))
}

/// Leaves a tab blank for the next page (stops whatever the last one still runs).
pub fn reset_tab(tab: &cdp::Tab) -> bool {
    tab.navigate("about:blank", Duration::from_secs(10)).is_ok()
}
