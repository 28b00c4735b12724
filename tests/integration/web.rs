//! The web tier end to end: the real binary, real Chromium, and a local stand-in for
//! DuckDuckGo and the web (see `fakeweb`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::common::{repo_with, Home, Server};
use crate::fakeweb::{article, ddg_anomaly, ddg_results, min_gap, FakeWeb, Reply};

const NGINX_PARAGRAPHS: [&str; 3] = [
    "A reverse proxy sits in front of your application servers and forwards client requests to them. With nginx you declare the upstream servers once and point a location block at them with proxy_pass.",
    "Set the Host and X-Forwarded-For headers so the application sees the original client, and tune proxy_read_timeout for slow upstreams.",
    "Reload nginx after every change with nginx -s reload; the configuration is checked first and a broken file never replaces a working one.",
];
const NGINX_CODE: &str = "upstream app {\n    server 127.0.0.1:8080;\n}\nserver {\n    listen 80;\n    location / {\n        proxy_pass http://app;\n        proxy_set_header Host $host;\n    }\n}";

/// The stand-in web: DuckDuckGo at `/html/` (a challenge for queries with "challenge", 429
/// twice for queries with "ratelimit"), a proxy endpoint at `/proxy/html/`, articles, a page
/// that never loads, a blocklisted result.
pub(crate) fn standard_web() -> Arc<FakeWeb> {
    FakeWeb::start(2, |path, web| {
        let base = web.base(0);
        let results = || {
            let article1 = format!("{base}/articles/nginx-reverse-proxy");
            let article2 = format!("{base}/articles/upstream-keepalive");
            ddg_results(&[
                (
                    "How to configure nginx as a reverse proxy",
                    &article1,
                    "Forward requests to upstream servers with proxy_pass.",
                ),
                ("Keepalive for nginx upstreams", &article2, "Reuse upstream connections."),
                ("Blocked result", "https://tracker.blocked.example/page", "Should never be returned."),
            ])
        };
        if let Some(query) = path.strip_prefix("/html/") {
            if query.contains("challenge") {
                return Reply::status(202, ddg_anomaly());
            }
            if query.contains("ratelimit") && web.bump("ratelimit") <= 2 {
                return Reply::status(429, "slow down");
            }
            return Reply::html(results());
        }
        if path.starts_with("/proxy/html/") {
            return Reply::html(results());
        }
        match path {
            "/articles/nginx-reverse-proxy" => {
                Reply::html(article("Configuring nginx as a reverse proxy", &NGINX_PARAGRAPHS, NGINX_CODE))
            }
            "/articles/upstream-keepalive" => Reply::html(article(
                "Keepalive connections to upstreams",
                &["Upstream keepalive keeps a pool of idle connections open to each upstream server, which saves a TCP handshake per proxied request under load."],
                "upstream app {\n    server 127.0.0.1:8080;\n    keepalive 16;\n}",
            )),
            "/docs/notes.txt" => Reply {
                status: 200,
                content_type: "text/plain; charset=utf-8",
                body: "Plain notes about proxies.\n".into(),
                delay: Duration::ZERO,
            },
            "/slow" => Reply { delay: Duration::from_secs(40), ..Reply::html("<html><body>late</body></html>") },
            p if p.starts_with("/page/") => Reply::html(article(
                &format!("Page {}", &p[6..]),
                &["Generated page body with enough words to be an article about upstream proxies and their many settings."],
                "location / { proxy_pass http://app; }",
            )),
            _ => Reply::status(404, "<html><body>not found</body></html>"),
        }
    })
}

/// A home whose web tier points at the stand-in (private addresses allowed: it is on loopback).
pub(crate) fn web_home(web: &FakeWeb, extra: &str) -> Home {
    let base = web.base(0);
    let defaults = [
        format!("ddg_base_url = \"{base}/html/\""),
        "allow_private_addresses = true".to_string(),
        "page_load_timeout_secs = 3".to_string(),
        "max_retries = 2".to_string(),
        "blocklist = [\"blocked.example\"]".to_string(),
    ];
    // `extra` overrides a default by naming its key (TOML refuses a key twice).
    let mut toml = String::from("[web]\n");
    for line in defaults {
        let key = line.split(" = ").next().unwrap();
        if !extra.lines().any(|l| l.starts_with(&format!("{key} "))) {
            toml.push_str(&line);
            toml.push('\n');
        }
    }
    toml.push_str(extra);
    Home::with_config(&toml)
}

pub(crate) fn run_json(home: &Home, args: &[&str]) -> (i32, Value, String) {
    let out = home.run(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, stderr)
}

#[test]
fn discovery_decodes_results_drops_ads_duplicates_and_blocked_and_caches() {
    let web = standard_web();
    let home = web_home(&web, "");
    let (code, body, stderr) = run_json(&home, &["web-search", "--json", "nginx reverse proxy"]);
    assert_eq!(code, 0, "{stderr}");
    let urls: Vec<&str> = body["results"].as_array().unwrap().iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        vec![
            format!("{}/articles/nginx-reverse-proxy", web.base(0)),
            format!("{}/articles/upstream-keepalive", web.base(0))
        ],
        "{body}"
    );
    assert_eq!(body["blocked"], 1);
    assert_eq!(body["results"][0]["title"], "How to configure nginx as a reverse proxy");
    assert_eq!(body["results"][0]["snippet"], "Forward requests to upstream servers with proxy_pass.");
    assert_eq!(body["from_cache"], false);
    assert_eq!(web.seen("/html/").len(), 1);

    // The same question again is answered from the cache: no request.
    let (_, again, _) = run_json(&home, &["web-search", "--json", "nginx  reverse proxy"]);
    assert_eq!(again["from_cache"], true);
    assert_eq!(again["results"], body["results"]);
    assert_eq!(web.seen("/html/").len(), 1);
}

#[test]
fn cache_ttl_expiry_refetches() {
    let web = standard_web();
    let home = web_home(&web, "cache_ttl_secs = 1\nengine = \"http\"");
    let url = format!("{}/articles/upstream-keepalive", web.base(0));
    let (code, first, stderr) = run_json(&home, &["web-fetch", "--json", &url]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(first["page"]["from_cache"], false);
    std::thread::sleep(Duration::from_millis(1100));
    let (_, second, _) = run_json(&home, &["web-fetch", "--json", &url]);
    assert_eq!(second["page"]["from_cache"], false, "an expired entry must be fetched again");
    assert_eq!(web.seen("/articles/upstream-keepalive").len(), 2);
}

#[test]
fn chromium_fetch_extracts_the_article_and_the_cache_skips_the_network() {
    let web = standard_web();
    let home = web_home(&web, "");
    let url = format!("{}/articles/nginx-reverse-proxy#setup", web.base(0));
    let (code, body, stderr) = run_json(&home, &["web-fetch", "--json", &url]);
    assert_eq!(code, 0, "{stderr}");
    let page = &body["page"];
    assert_eq!(page["engine"], "chromium", "{body}");
    assert_eq!(page["url"], format!("{}/articles/nginx-reverse-proxy", web.base(0)));
    assert!(page["title"].as_str().unwrap().contains("Configuring nginx as a reverse proxy"));
    let text = page["text"].as_str().unwrap();
    assert!(text.contains("proxy_pass http://app;"), "{text}");
    assert!(text.contains("```"), "code blocks are fenced: {text}");
    assert!(text.contains("## Troubleshooting"), "headings are kept: {text}");
    for furniture in ["cookies", "Popular posts", "Subscribe", "Copyright", "dataLayer", "About the author"] {
        assert!(!text.contains(furniture), "{furniture} left in the text: {text}");
    }
    // Cached: raw HTML and cleaned JSON on disk, and the next fetch skips the network.
    let cache_dir = home.dir.path().join("state/cache/web/pages");
    let names: Vec<String> =
        std::fs::read_dir(&cache_dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect();
    assert!(names.iter().any(|n| n.ends_with(".html")) && names.iter().any(|n| n.ends_with(".json")), "{names:?}");
    let (_, again, _) = run_json(&home, &["web-fetch", "--json", &url]);
    assert_eq!(again["page"]["from_cache"], true);
    assert_eq!(web.seen("/articles/nginx-reverse-proxy").len(), 1);
    assert_no_browser_left(&home);
}

#[test]
fn unsafe_schemes_private_addresses_and_blocked_domains_are_refused() {
    let web = standard_web();
    let strict = Home::with_config("[web]\nengine = \"http\"\nblocklist = [\"blocked.example\"]\n");
    for url in ["file:///etc/passwd", "data:text/html,<b>hi</b>", "chrome://settings", "javascript:alert(1)"] {
        let (code, _, stderr) = run_json(&strict, &["web-fetch", "--json", url]);
        assert_eq!(code, 2, "{url}");
        assert!(stderr.contains("refused") || stderr.contains("not a URL"), "{url}: {stderr}");
    }
    let private = [
        format!("{}/articles/upstream-keepalive", web.base(0)),
        "http://localhost:9/".to_string(),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://[::1]:9/".to_string(),
    ];
    for url in &private {
        let (code, _, stderr) = run_json(&strict, &["web-fetch", "--json", url]);
        assert_eq!(code, 2, "{url}");
        assert!(stderr.contains("private or local address"), "{url}: {stderr}");
    }
    assert!(web.seen("/articles").is_empty(), "nothing may reach a private address");
    let (code, _, stderr) = run_json(&strict, &["web-fetch", "https://docs.blocked.example/x"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("blocklist"), "{stderr}");
}

#[test]
fn a_page_that_never_loads_times_out_and_the_browser_recovers() {
    let web = standard_web();
    let home = web_home(&web, "page_load_timeout_secs = 2");
    let server = Server::start(&home, &[]);
    let client = server.blocking_client();
    let post = |url: String| {
        let response = client.post(server.url("/v1/web/fetch")).json(&serde_json::json!({"url": url})).send().unwrap();
        (response.status().as_u16(), response.json::<Value>().unwrap())
    };
    let started = std::time::Instant::now();
    let (status, body) = post(format!("{}/slow", web.base(0)));
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["error"]["code"], "timeout");
    assert!(started.elapsed() < Duration::from_secs(15), "the timeout must cut the wait: {:?}", started.elapsed());
    // The daemon keeps answering, with a working browser.
    let (status, body) = post(format!("{}/articles/upstream-keepalive", web.base(1)));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["page"]["engine"], "chromium");
    drop(server);
}

#[test]
fn without_chromium_pages_are_fetched_plainly_and_check_warns() {
    let web = standard_web();
    let home = web_home(&web, "chrome_binary_path = \"/nonexistent/chromium\"");
    let url = format!("{}/articles/nginx-reverse-proxy", web.base(0));
    let (code, body, stderr) = run_json(&home, &["web-fetch", "--json", &url]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(body["page"]["engine"], "http");
    assert!(body["page"]["text"].as_str().unwrap().contains("proxy_pass"));
    let plain = run_json(&home, &["web-fetch", "--json", &format!("{}/docs/notes.txt", web.base(0))]);
    assert_eq!(plain.1["page"]["text"], "Plain notes about proxies.\n");
    let check = home.run(&["check"]);
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        report.lines().any(|l| l.starts_with("warn") && l.contains("chromium") && l.contains("plain HTTP")),
        "{report}"
    );
}

#[test]
fn check_reports_chromium_and_cleans_stale_locks() {
    let home = Home::new();
    // A lock left by a docdexd that no longer exists (PID 0 is never a process of ours).
    let locks = home.dir.path().join("state/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let stale = serde_json::json!({"pid": 999999, "pgid": 999999, "start_ticks": 1, "profile_dir": "/nonexistent/chromium-x",
        "owner_pid": 999998, "owner_start_ticks": 1, "started_at_unix": 1});
    std::fs::write(locks.join("chromium-999999.json"), stale.to_string()).unwrap();
    let out = home.run(&["check"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.lines().any(|l| l.starts_with("ok") && l.contains("chromium") && l.contains("launches")),
        "{report}"
    );
    assert!(report.contains("stale browser lock cleaned"), "{report}");
    assert_eq!(std::fs::read_dir(&locks).unwrap().count(), 0, "{report}");
}

#[test]
fn backoff_on_429_then_success() {
    let web = standard_web();
    let home = web_home(&web, "");
    let (code, body, stderr) = run_json(&home, &["web-search", "--json", "ratelimit test"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(body["results"].as_array().unwrap().len(), 2);
    let seen = web.seen("/html/");
    assert_eq!(seen.len(), 3, "two refusals then the answer");
    let gaps: Vec<Duration> = seen.windows(2).map(|w| w[1].at.duration_since(w[0].at)).collect();
    assert!(gaps[0] >= Duration::from_secs(2), "{gaps:?}");
    assert!(gaps[1] >= Duration::from_secs(4), "the second wait doubles: {gaps:?}");
}

#[test]
fn a_challenge_page_switches_to_the_proxy_or_is_a_clear_error() {
    let web = standard_web();
    let with_proxy = web_home(&web, &format!("ddg_proxy_base_url = \"{}/proxy/html/\"", web.base(0)));
    let (code, body, stderr) = run_json(&with_proxy, &["web-search", "--json", "challenge me"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(body["endpoint"], "proxy");
    assert_eq!(body["results"].as_array().unwrap().len(), 2);

    let without = web_home(&web, "max_retries = 1");
    let (code, _, stderr) = run_json(&without, &["web-search", "--json", "challenge again"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("challenge page") && stderr.contains("ddg_proxy_base_url"), "{stderr}");
}

#[test]
fn concurrent_callers_are_spaced_two_seconds_apart_and_one_second_per_domain() {
    let web = standard_web();
    let home = web_home(&web, "engine = \"http\"\nmax_pages = 1");
    let server = Server::start(&home, &[]);
    let base_url = server.base_url.clone();
    let shared_client = server.blocking_client();
    let threads: Vec<_> = (0..3)
        .map(|n| {
            let url = format!("{base_url}/v1/web/search");
            let client = shared_client.clone();
            std::thread::spawn(move || {
                let response =
                    client.post(url).json(&serde_json::json!({"query": format!("spacing query {n}")})).send().unwrap();
                response.status().as_u16()
            })
        })
        .collect();
    for thread in threads {
        assert_eq!(thread.join().unwrap(), 200);
    }
    let discovery = web.seen("/html/");
    assert_eq!(discovery.len(), 3);
    assert!(min_gap(&discovery) >= Duration::from_secs(2), "{discovery:?}");

    // Three pages of one domain, fetched at once: one second apart at the server; another
    // domain is not held up by them.
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let url = format!("{base_url}/v1/web/fetch");
            let page = if n < 3 { format!("{}/page/{n}", web.base(0)) } else { format!("{}/page/other", web.base(1)) };
            let client = shared_client.clone();
            std::thread::spawn(move || {
                client.post(url).json(&serde_json::json!({"url": page})).send().unwrap().status().as_u16()
            })
        })
        .collect();
    for thread in threads {
        assert_eq!(thread.join().unwrap(), 200);
    }
    let same_domain: Vec<_> = web.seen("/page/").into_iter().filter(|s| s.listener == 0).collect();
    assert_eq!(same_domain.len(), 3);
    assert!(min_gap(&same_domain) >= Duration::from_secs(1), "{same_domain:?}");
    let other = web.seen("/page/other");
    assert_eq!(other.len(), 1);
    assert!(other[0].at < same_domain[2].at, "another domain must not wait behind this one");
    drop(server);
}

fn waterfall_repo() -> tempfile::TempDir {
    repo_with(&[
        (
            "src/scheduler.rs",
            "/// Runs queued jobs on a fixed pool of worker threads.\npub struct JobScheduler {\n    workers: usize,\n}\n\nimpl JobScheduler {\n    /// Cancels every queued job and waits for running ones to stop.\n    pub fn cancel_all_jobs(&mut self) {}\n}\n",
        ),
        ("README.md", "# Scheduler\n\nA tiny job scheduler. Use `JobScheduler::cancel_all_jobs` to stop everything.\n"),
    ])
}

#[test]
fn the_waterfall_gate_decides_when_the_web_is_used_and_results_stay_in_their_repo() {
    let web = standard_web();
    let home = web_home(&web, "max_pages = 2\n[search]\nweb_trigger_threshold = 0.3");
    let repo = waterfall_repo();
    let other = waterfall_repo();
    let repo_arg = repo.path().to_str().unwrap();
    home.index(repo.path());
    home.index(other.path());

    // Confident locally: no web.
    let (code, local, stderr) =
        run_json(&home, &["web-research", "--json", "--repo", repo_arg, "JobScheduler cancel_all_jobs"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(local["gate"]["decision"], "local", "{local}");
    assert!(local["gate"]["top_score"].as_f64().unwrap() >= 0.3);
    assert_eq!(local["tiers"].as_array().unwrap().len(), 1);
    assert!(web.seen("/html/").is_empty());

    // Weak locally: discovery, fetch, ingest, merge.
    let (code, escalated, stderr) =
        run_json(&home, &["web-rag", "--json", "--repo", repo_arg, "configure nginx reverse proxy_pass upstream"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(escalated["gate"]["decision"], "web", "{escalated}");
    assert_eq!(escalated["gate"]["forced"], false);
    let tiers: Vec<&str> = escalated["tiers"].as_array().unwrap().iter().map(|t| t["tier"].as_str().unwrap()).collect();
    assert_eq!(tiers, vec!["local", "web"]);
    assert!(escalated["tiers"][1]["reason"].as_str().unwrap().contains("below the threshold"));
    let web_hits: Vec<&Value> = escalated["hits"].as_array().unwrap().iter().filter(|h| h["source"] == "web").collect();
    assert!(!web_hits.is_empty(), "{escalated}");
    let first_web = escalated["hits"].as_array().unwrap().iter().position(|h| h["source"] == "web").unwrap();
    assert!(
        escalated["hits"].as_array().unwrap()[first_web..].iter().all(|h| h["source"] == "web"),
        "local hits come first"
    );
    assert!(web_hits[0]["url"].as_str().unwrap().starts_with(&web.base(0)));
    assert!(web_hits[0]["title"].as_str().is_some() && web_hits[0]["fetched_at"].as_str().is_some());
    assert!(escalated["web"]["ingested_chunks"].as_u64().unwrap() > 0);

    // Forced although confident.
    let (_, forced, _) =
        run_json(&home, &["web-research", "--json", "--force-web", "--repo", repo_arg, "JobScheduler cancel_all_jobs"]);
    assert_eq!(forced["gate"]["decision"], "web");
    assert_eq!(forced["gate"]["forced"], true);

    // The pages are now in this repo's index, and only in this one.
    let found = home.search(repo.path(), "nginx proxy_pass upstream");
    assert!(found["hits"].as_array().unwrap().iter().any(|h| h["source"] == "web"), "{found}");
    let elsewhere = home.search(other.path(), "nginx proxy_pass upstream");
    assert!(elsewhere["hits"].as_array().unwrap().iter().all(|h| h["source"] == "repo"), "{elsewhere}");

    // Over HTTP: force_web on /v1/search runs the waterfall.
    let server = Server::start(&home, &["--repo", repo_arg]);
    let body: Value = server
        .blocking_client()
        .get(server.url("/v1/search?q=nginx%20keepalive&force_web=true"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(body["gate"]["forced"], true, "{body}");
    // web_research=true (waterfall=true, its older name) runs the gated waterfall: a gate
    // decision, not forced.
    for flag in ["web_research", "waterfall"] {
        let url = server.url(&format!("/v1/search?q=JobScheduler%20cancel_all_jobs&{flag}=true"));
        let body: Value = server.blocking_client().get(url).send().unwrap().json().unwrap();
        assert_eq!(body["gate"]["forced"], false, "{flag}: {body}");
    }
    // The CLI goes through the running daemon (which holds the repo's index writer).
    let (code, through, stderr) =
        run_json(&home, &["web-rag", "--json", "--force-web", "--repo", repo_arg, "nginx keepalive"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(through["gate"]["forced"], true, "{through}");
    let (code, _, stderr) = run_json(&home, &["web-search", "--json", "nginx reverse proxy"]);
    assert_eq!(code, 0, "{stderr}");
    let status: Value = server.blocking_client().get(server.url("/v1/status")).send().unwrap().json().unwrap();
    let handled = |actor: &str| {
        status["actors"].as_array().unwrap().iter().find(|a| a["actor"] == actor).and_then(|a| a["handled"].as_u64())
    };
    assert_eq!((handled("waterfall"), handled("discovery")), (Some(4), Some(1)), "{status}");
    drop(server);

    // Web off: forcing is an error, unforced weak queries stay local.
    let off = web_home(&web, "enabled = false");
    off.index(repo.path());
    let (code, _, stderr) = run_json(&off, &["web-rag", "--json", "--force-web", "--repo", repo_arg, "anything"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("web tier is disabled"), "{stderr}");
    let before = web.seen("/html/").len();
    let (_, stayed, _) = run_json(&off, &["web-rag", "--json", "--repo", repo_arg, "configure nginx reverse proxy"]);
    assert_eq!(stayed["gate"]["decision"], "web_disabled", "{stayed}");
    assert_eq!(web.seen("/html/").len(), before);
    assert_no_browser_left(&home);
}

/// No Chromium process started for this home is still running.
pub fn assert_no_browser_left(home: &Home) {
    let marker = home.dir.path().to_string_lossy().to_string();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let left = crate::browser_guard::browsers_of(&marker);
        if left.is_empty() {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "chromium processes left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn one_client_cannot_hold_more_requests_than_its_share() {
    let web = FakeWeb::start(1, |path, _| {
        let page = Reply::html(article(
            "Slow page",
            &["A page that takes its time, about proxies and upstreams and their timeouts."],
            "x",
        ));
        if path == "/slow" {
            Reply { delay: Duration::from_secs(2), ..page }
        } else {
            page
        }
    });
    let home =
        web_home(&web, "engine = \"http\"\npage_load_timeout_secs = 20\n\n[server]\nmax_requests_per_client = 1\n");
    let server = Server::start(&home, &[]);
    let client = server.blocking_client();
    let (fetch_url, slow_url) = (server.url("/v1/web/fetch"), format!("{}/slow", web.base(0)));
    let slow_client = client.clone();
    let slow = std::thread::spawn(move || {
        slow_client.post(fetch_url).json(&serde_json::json!({"url": slow_url})).send().unwrap().status().as_u16()
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while web.seen("/slow").is_empty() {
        assert!(std::time::Instant::now() < deadline, "the slow fetch never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its one web slot is taken: the next web request from the same address waits for
    // nothing; health and local requests have slots of their own.
    let busy = client.post(server.url("/v1/web/fetch")).json(&serde_json::json!({"url": web.base(0)})).send().unwrap();
    assert_eq!(busy.status().as_u16(), 429);
    let body: Value = busy.json().unwrap();
    assert_eq!(body["error"]["code"], "too_many_requests");
    assert!(body["error"]["message"].as_str().unwrap().contains("limit per client"), "{body}");
    assert_eq!(client.get(server.url("/healthz")).send().unwrap().status().as_u16(), 200, "health answers");
    assert_eq!(client.get(server.url("/v1/status")).send().unwrap().status().as_u16(), 200, "local answers");
    assert_eq!(slow.join().unwrap(), 200);
    // On a connection of its own: a pooled one the server is closing (keep-alive's end) can
    // drop the request on a busy machine, which says nothing about the slot.
    let fresh = server.blocking_client();
    let again = fresh.post(server.url("/v1/web/fetch")).json(&serde_json::json!({"url": web.base(0)})).send().unwrap();
    assert_eq!(again.status().as_u16(), 200, "the slot came back");
}

#[test]
fn no_network_fails_discovery_at_once_with_the_way_out() {
    let web = standard_web();
    // A port nobody listens on: the connection is refused, as with no network at all.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let home = web_home(&web, &format!("ddg_base_url = \"http://{closed}/html/\""));
    let (code, _, stderr) = run_json(&home, &["web-search", "--json", "nginx reverse proxy"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot reach the discovery endpoint") && stderr.contains("enabled = false"), "{stderr}");
    // Not retried as a refusal, nor blamed on DuckDuckGo.
    assert!(!stderr.contains("attempts") && !stderr.contains("refusing"), "{stderr}");
}

/// Requests a page makes inside the browser (an image, a script's fetch, a script's
/// navigation) pass the same rules as the page: here a blocked host (the test's second
/// loopback site). Before, only the page's first and final URLs were checked.
#[test]
fn requests_a_page_makes_inside_the_browser_are_checked_too() {
    let web = FakeWeb::start(2, |path, web| {
        let other = web.base(1);
        match path {
            "/lure" => Reply::html(format!(
                "<html><head><title>Lure</title></head><body><article><h1>Lure</h1>\
                 <p>An ordinary article about proxies and upstream servers, long enough to be read as one.</p>\
                 <img src=\"{other}/tracker.png\"><script>fetch(\"{other}/beacon\").catch(() => {{}});</script>\
                 </article></body></html>"
            )),
            _ => Reply::status(404, "<html><body>not found</body></html>"),
        }
    });
    // The second stand-in site, blocked by its address.
    let second_host = url::Url::parse(&web.base(1)).unwrap().host_str().unwrap().to_string();
    let home = web_home(&web, &format!("blocklist = [\"{second_host}\"]"));
    let url = format!("{}/lure", web.base(0));
    let out = home.cmd().env("DOCDEX_LOG", "docdex=info").args(["web-fetch", "--json", &url]).output().unwrap();
    let (code, body, stderr) = (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(body["page"]["engine"], "chromium", "{body}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(web.seen("/tracker.png").is_empty(), "the image was requested: {stderr}");
    assert!(web.seen("/beacon").is_empty(), "the script's fetch was sent");
}

/// Two `web-search` runs at once without a daemon: two processes, one politeness. Their
/// discovery requests reach the server at least 2 s apart, as one process's would.
#[test]
fn two_processes_keep_the_discovery_spacing_between_them() {
    let web = standard_web();
    let home = web_home(&web, "");
    let runs: Vec<_> = ["nginx reverse proxy", "upstream keepalive timeout"]
        .into_iter()
        .map(|query| {
            let mut cmd = home.cmd();
            cmd.args(["web-search", "--json", query]);
            std::thread::spawn(move || cmd.output().unwrap())
        })
        .collect();
    for run in runs {
        let out = run.join().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let discovery = web.seen("/html/");
    assert_eq!(discovery.len(), 2, "{discovery:?}");
    assert!(min_gap(&discovery) >= Duration::from_secs(2), "{discovery:?}");
}

/// Every listening TCP socket's inode (`/proc/net/tcp` and `tcp6`, state 0A).
fn listening_socket_inodes() -> std::collections::HashSet<String> {
    let mut inodes = std::collections::HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(3) == Some(&"0A") {
                if let Some(inode) = fields.get(9) {
                    inodes.insert(inode.to_string());
                }
            }
        }
    }
    inodes
}

/// The socket inodes a process holds open.
fn socket_inodes_of(pid: u32) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().to_string();
            target.strip_prefix("socket:[")?.strip_suffix(']').map(str::to_string)
        })
        .collect()
}

/// The browser takes DevTools commands over a pipe from the daemon alone: while it runs it
/// listens on no port, which any local user could have reached and driven it through (a
/// DevTools port has no authentication). Before, it ran with `--remote-debugging-port`.
#[test]
fn the_browser_listens_on_no_port_another_local_user_could_drive_it_through() {
    let web = standard_web();
    let home = web_home(&web, "");
    let server = Server::start(&home, &[]);
    let client = server.blocking_client();
    let fetched = client
        .post(server.url("/v1/web/fetch"))
        .json(&serde_json::json!({"url": format!("{}/articles/nginx-reverse-proxy", web.base(0))}))
        .send()
        .unwrap();
    assert_eq!(fetched.status().as_u16(), 200);
    let body: Value = fetched.json().unwrap();
    assert_eq!(body["page"]["engine"], "chromium", "{body}");
    // The daemon keeps its browser for the next page: inspect it while it runs.
    let browsers = crate::browser_guard::browsers_of(&home.dir.path().to_string_lossy());
    assert!(!browsers.is_empty(), "the browser should still run");
    let listening = listening_socket_inodes();
    let full_cmdline = |pid: u32| {
        String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()).replace('\0', " ")
    };
    let browsers: Vec<(u32, String)> = browsers.iter().map(|(pid, _)| (*pid, full_cmdline(*pid))).collect();
    for (pid, cmdline) in &browsers {
        assert!(!cmdline.contains("--remote-debugging-port"), "{pid}: {cmdline}");
        let open = socket_inodes_of(*pid);
        let listens: Vec<&String> = open.iter().filter(|inode| listening.contains(*inode)).collect();
        assert!(listens.is_empty(), "chromium process {pid} listens on TCP sockets {listens:?}: {cmdline}");
    }
    assert!(
        browsers.iter().any(|(_, cmdline)| cmdline.contains("--remote-debugging-pipe")),
        "DevTools should be on the pipe: {browsers:#?}"
    );
    // And the browser keeps serving pages (the pipe carries every command).
    let again = client
        .post(server.url("/v1/web/fetch"))
        .json(&serde_json::json!({"url": format!("{}/articles/upstream-keepalive", web.base(1)), "refresh": true}))
        .send()
        .unwrap();
    assert_eq!(again.status().as_u16(), 200);
    drop(server);
    assert_no_browser_left(&home);
}
