//! A stand-in for DuckDuckGo and the open web, which tests cannot reach: a small HTTP/1.1
//! server on loopback that serves DuckDuckGo-shaped result pages (the real markup: `result__a`
//! links through `/l/?uddg=` redirects, `result__snippet`, an ad block), its challenge page,
//! and realistic article pages (navigation, sidebars, cookie banners, code blocks), and keeps
//! the time of every request it receives, so rate limits are measured where they matter.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    /// Which listener (index into `FakeWeb::addrs`).
    pub listener: usize,
    pub path: String,
}

/// What to answer.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    /// Wait this long before answering (a slow or hanging page).
    pub delay: Duration,
}

impl Reply {
    pub fn html(body: impl Into<String>) -> Reply {
        Reply { status: 200, content_type: "text/html; charset=utf-8", body: body.into(), delay: Duration::ZERO }
    }

    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply { status, ..Reply::html(body) }
    }
}

type Handler = dyn Fn(&str, &FakeWeb) -> Reply + Send + Sync;

pub struct FakeWeb {
    pub addrs: Vec<SocketAddr>,
    seen: Mutex<Vec<Seen>>,
    /// Counters the handler may use (e.g. "refuse the first two requests").
    pub counters: Mutex<HashMap<String, usize>>,
    handler: Box<Handler>,
    open: AtomicUsize,
}

impl FakeWeb {
    /// Serves on `listeners` loopback addresses (127.0.0.1, 127.0.0.2, ...: distinct domains
    /// for per-domain delays) with `handler(path_and_query, server)`.
    pub fn start(listeners: u8, handler: impl Fn(&str, &FakeWeb) -> Reply + Send + Sync + 'static) -> Arc<FakeWeb> {
        let bound: Vec<TcpListener> =
            (1..=listeners.max(1)).map(|n| TcpListener::bind((Ipv4Addr::new(127, 0, 0, n), 0)).unwrap()).collect();
        let server = Arc::new(FakeWeb {
            addrs: bound.iter().map(|l| l.local_addr().unwrap()).collect(),
            seen: Mutex::new(Vec::new()),
            counters: Mutex::new(HashMap::new()),
            handler: Box::new(handler),
            open: AtomicUsize::new(0),
        });
        for (n, listener) in bound.into_iter().enumerate() {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let server = Arc::clone(&server);
                    std::thread::spawn(move || server.serve(n, stream));
                }
            });
        }
        server
    }

    /// `http://127.0.0.N:port` of listener `n`.
    pub fn base(&self, n: usize) -> String {
        format!("http://{}", self.addrs[n])
    }

    fn serve(&self, listener: usize, mut stream: TcpStream) {
        self.open.fetch_add(1, Ordering::SeqCst);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
        let Some((path, _body)) = read_request(&stream) else { return };
        let at = Instant::now();
        // Browsers ask for a favicon; it is not a page fetch.
        if path != "/favicon.ico" {
            self.seen.lock().unwrap().push(Seen { at, listener, path: path.clone() });
        }
        let reply = if path == "/favicon.ico" { Reply::status(404, "") } else { (self.handler)(&path, self) };
        std::thread::sleep(reply.delay);
        let reason = match reply.status {
            200 => "OK",
            202 => "Accepted",
            404 => "Not Found",
            429 => "Too Many Requests",
            _ => "Status",
        };
        let head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            reply.status,
            reply.content_type,
            reply.body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(reply.body.as_bytes());
        let _ = stream.flush();
        self.open.fetch_sub(1, Ordering::SeqCst);
    }

    /// Requests whose path starts with `prefix`, in arrival order.
    pub fn seen(&self, prefix: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.path.starts_with(prefix)).cloned().collect()
    }

    /// Increments and returns a named counter.
    pub fn bump(&self, name: &str) -> usize {
        let mut counters = self.counters.lock().unwrap();
        let count = counters.entry(name.to_string()).or_default();
        *count += 1;
        *count
    }
}

/// Reads one HTTP/1.1 request: its path (with the query) and body.
pub fn read_request(stream: &TcpStream) -> Option<(String, Vec<u8>)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            content_length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; content_length];
    let _ = reader.read_exact(&mut body);
    Some((request_line.split_whitespace().nth(1).unwrap_or("/").to_string(), body))
}

/// Smallest gap between consecutive requests.
pub fn min_gap(seen: &[Seen]) -> Duration {
    seen.windows(2).map(|w| w[1].at.duration_since(w[0].at)).min().unwrap_or(Duration::MAX)
}

/// A DuckDuckGo HTML result page whose results point at `targets` (title, url, snippet),
/// with an ad block first and a duplicate of the first result last, as the real page has.
pub fn ddg_results(targets: &[(&str, &str, &str)]) -> String {
    let mut html = String::from(
        r#"<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body class="body--html">
<div class="header"><form action="/html/" method="post"><input name="q" type="text"></form></div>
<div class="serp__results"><div id="links" class="results">
<div class="result results_links results_links_deep result--ad result--ad--small">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;ad_provider=bing&amp;u3=https%3A%2F%2Fshop.example%2F">Buy async runtimes today</a></h2>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=shop.example">Sponsored result.</a>
  </div>
</div>
"#,
    );
    let mut all: Vec<(&str, &str, &str)> = targets.to_vec();
    if let Some(first) = targets.first() {
        all.push(*first);
    }
    for (title, url, snippet) in all {
        let encoded: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
        html.push_str(&format!(
            r#"<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg={encoded}&amp;rut=4f1e8a">{title}</a></h2>
    <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg={encoded}">{url}</a></div></div>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg={encoded}">{snippet}</a>
    <div class="clear"></div>
  </div>
</div>
"#
        ));
    }
    html.push_str("</div></div></body></html>");
    html
}

/// DuckDuckGo's bot challenge page.
pub fn ddg_anomaly() -> String {
    r#"<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>
<div class="anomaly-modal__mask"><div class="anomaly-modal__modal" data-testid="anomaly-modal">
<div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
<div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div>
<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=botnet" method="POST"></form>
</div></div></body></html>"#
        .to_string()
}

/// A blog-style article with everything a real page wraps around its content.
pub fn article(title: &str, paragraphs: &[&str], code: &str) -> String {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    format!(
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title} | Field Notes</title>
<script>window.dataLayer = [{{"event": "pageview"}}];</script>
<style>body {{ font-family: sans-serif; }}</style></head>
<body>
<div id="cookie-banner" class="cookie-consent banner">We use cookies to personalise content and ads. <button>Accept all cookies</button> <a href="/privacy">Privacy policy</a></div>
<header class="site-header"><a class="logo" href="/">Field Notes</a>
<nav class="main-nav"><ul><li><a href="/">Home</a></li><li><a href="/archive">Archive</a></li><li><a href="/about">About the author</a></li></ul></nav></header>
<div class="layout">
<aside class="sidebar"><h3>Popular posts</h3><ul><li><a href="/p/1">Ten terminal tricks</a></li><li><a href="/p/2">Why I left vim</a></li></ul>
<div class="newsletter">Subscribe to the newsletter for weekly tips!</div></aside>
<main id="content"><article class="post">
<h1>{title}</h1>
<p class="byline">Posted on March 3 by a field engineer</p>
{body}<h2>Example</h2>
<p>The configuration below is the complete working example used in production.</p>
<pre><code class="language-nginx">{code}</code></pre>
<h2>Troubleshooting</h2>
<p>If requests hang, check the upstream timeouts and the keepalive settings before anything else; most problems come from there.</p>
</article></main></div>
<footer class="site-footer"><p>Copyright 2026 Field Notes. All rights reserved.</p><a href="/rss">RSS</a></footer>
</body></html>"#
    )
}
