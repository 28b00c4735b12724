//! `docdexd bench-web`: the web tier's latencies, against pages served from loopback by the
//! benchmark itself (DuckDuckGo-shaped results and realistic articles), in a throwaway state
//! directory: Chromium cold start, warm page loads in a running browser, article extraction
//! per page, and `web-rag` end to end with the web cache cold and warm.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::search::percentile;
use docdex::actors::tool_dispatcher::indexing::Index;
use docdex::actors::tool_dispatcher::web::WebResearch;
use docdex::config::LoadedConfig;
use docdex::protocol::{DocdexError, IndexRequest, Result, SearchRequest, WaterfallRequest};
use docdex::web::browser::{find_chromium, BrowserProcess};
use docdex::web::{chromium_fetch, extract, open_tab, reset_tab};

#[derive(Debug, Serialize)]
struct Stat {
    runs: usize,
    p50_ms: f64,
    min_ms: f64,
    max_ms: f64,
}

fn stat(mut ms: Vec<f64>) -> Stat {
    ms.sort_by(f64::total_cmp);
    Stat {
        runs: ms.len(),
        p50_ms: percentile(&ms, 0.5),
        min_ms: ms.first().copied().unwrap_or(0.0),
        max_ms: ms.last().copied().unwrap_or(0.0),
    }
}

#[derive(Debug, Serialize)]
struct WebBenchReport {
    chromium: Option<String>,
    browser_cold_start: Option<Stat>,
    warm_page_load: Option<Stat>,
    extraction_per_page: Stat,
    article_bytes: usize,
    web_rag_cold_cache: Stat,
    web_rag_warm_cache: Stat,
    notes: Vec<String>,
}

/// A long article with the furniture real pages carry.
fn article_html(n: usize) -> String {
    let mut body = String::new();
    for section in 0..12 {
        body.push_str(&format!("<h2>Section {section}: upstream settings</h2>\n"));
        for p in 0..4 {
            body.push_str(&format!(
                "<p>Paragraph {p} of section {section} on page {n}: a reverse proxy forwards requests to upstream servers; keepalive, timeouts and buffering decide how it behaves under load, and each of them has a default worth knowing.</p>\n"
            ));
        }
        body.push_str("<pre><code class=\"language-nginx\">location / {\n    proxy_pass http://app;\n    proxy_read_timeout 30s;\n}</code></pre>\n");
    }
    format!(
        "<!DOCTYPE html><html><head><title>Proxy guide {n}</title><script>var t = 1;</script></head><body>\
         <div class=\"cookie-banner\">We use cookies. <button>Accept</button></div><header><nav><a href=\"/\">Home</a></nav></header>\
         <aside class=\"sidebar\"><h3>Popular</h3><ul><li>Other post</li></ul></aside>\
         <main><article><h1>Proxy guide {n}</h1>{body}</article></main><footer>Copyright</footer></body></html>"
    )
}

/// Serves `/html/` (results linking to three articles) and `/articles/<n>` on loopback.
fn serve_pages() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base = format!("http://{}", listener.local_addr()?);
    let links = base.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let links = links.clone();
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut reader = BufReader::new(stream.try_clone().expect("clone a socket"));
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) <= 2 {
                        break;
                    }
                }
                let path = first.split_whitespace().nth(1).unwrap_or("/");
                let body = if path.starts_with("/html/") {
                    let results: String = (0..3)
                        .map(|n| {
                            let url: String =
                                url::form_urlencoded::byte_serialize(format!("{links}/articles/{n}").as_bytes()).collect();
                            format!("<div class=\"result results_links web-result\"><h2 class=\"result__title\"><a class=\"result__a\" href=\"//duckduckgo.com/l/?uddg={url}\">Proxy guide {n}</a></h2><a class=\"result__snippet\">Guide {n}</a></div>")
                        })
                        .collect();
                    format!("<html><body><div id=\"links\">{results}</div></body></html>")
                } else if let Some(n) = path.strip_prefix("/articles/") {
                    article_html(n.parse().unwrap_or(0))
                } else {
                    String::new()
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
            });
        }
    });
    Ok(base)
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

pub async fn run(loaded: &LoadedConfig, runs: usize, json: bool) -> Result<i32> {
    let runs = runs.max(1);
    let base = serve_pages()?;
    let scratch = tempfile::tempdir()?;
    let mut notes = Vec::new();
    let mut bench_loaded = loaded.clone();
    bench_loaded.config.core.global_state_dir = Some(scratch.path().join("state"));
    let web = &mut bench_loaded.config.web;
    web.enabled = true;
    web.ddg_base_url = format!("{base}/html/");
    web.allow_private_addresses = true;
    web.max_pages = 3;

    // Browser: cold starts, then warm page loads in one running browser.
    let chromium = find_chromium(bench_loaded.config.web.chrome_binary_path.as_deref());
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    if let Some(binary) = &chromium {
        let locks = scratch.path().join("locks");
        let profiles = scratch.path().join("profiles");
        for _ in 0..runs {
            let started = Instant::now();
            // Launched means answering on its DevTools pipe.
            let process = BrowserProcess::launch(binary, &locks, &profiles)?;
            cold.push(ms(started));
            drop(process);
        }
        let process = BrowserProcess::launch(binary, &locks, &profiles)?;
        let client = process.connection.clone();
        let url = url::Url::parse(&format!("{base}/articles/1")).expect("a valid URL");
        // The pages are served from loopback.
        let policy = docdex::web::safety::RequestPolicy::new(true, Vec::new());
        let tab = open_tab(&client, policy).map_err(DocdexError::internal)?;
        // The first load warms the browser's caches of code and fonts; it is not counted.
        let _ = chromium_fetch(&tab, &url, "docdex-bench", Duration::from_secs(15), &Default::default());
        reset_tab(&tab);
        for _ in 0..runs * 2 {
            let started = Instant::now();
            chromium_fetch(&tab, &url, "docdex-bench", Duration::from_secs(15), &Default::default())
                .map_err(DocdexError::internal)?;
            warm.push(ms(started));
            reset_tab(&tab);
        }
    } else {
        notes.push("no chromium found: browser timings skipped, pages fetched over plain HTTP".into());
    }

    // Extraction alone.
    let html = article_html(7);
    let page_url = url::Url::parse("https://bench.example/articles/7").expect("a valid URL");
    let extraction: Vec<f64> = (0..runs * 10)
        .map(|_| {
            let started = Instant::now();
            let article = extract::extract(&html, &page_url);
            std::hint::black_box(article);
            ms(started)
        })
        .collect();

    // web-rag end to end: a fresh web cache each cold run, the same one for warm runs.
    let repo = scratch.path().join("repo");
    std::fs::create_dir_all(repo.join("src"))?;
    std::fs::write(repo.join("src/lib.rs"), "/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 { a + b }\n")?;
    let (mut cold_rag, mut warm_rag) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let mut run_loaded = bench_loaded.clone();
        run_loaded.config.core.global_state_dir = Some(scratch.path().join(format!("state-{run}")));
        let actors = docdex::actors::system::start_actors(&run_loaded, None);
        let request = IndexRequest { repo: repo.clone() };
        actors.dispatcher.send(Index { request, progress_opt: None, embed_in_background: false }).await??;
        let question = || {
            WebResearch(WaterfallRequest {
                search: SearchRequest {
                    source_opt: None,
                    lib_opt: None,
                    repo_opt: Some(repo.clone()),
                    query: format!("reverse proxy upstream keepalive timeouts {run}"),
                    limit: 5,
                    mode_opt: None,
                    explain: false,
                },
                force_web: true,
            })
        };
        let started = Instant::now();
        let answer = actors.dispatcher.send(question()).await??;
        cold_rag.push(ms(started));
        if answer.hits.iter().all(|h| h.url.is_none()) {
            notes.push(format!("cold run {run} returned no web hits: {:?}", answer.notice));
        }
        let started = Instant::now();
        actors.dispatcher.send(question()).await??;
        warm_rag.push(ms(started));
        actors.web.scraper.send(docdex::actors::scraper::CloseBrowser).await?;
    }
    notes.push("web-rag fetches 3 pages of one host: the 1 s per-domain delay is in the cold figure".into());

    let report = WebBenchReport {
        chromium: chromium.map(|p| p.display().to_string()),
        browser_cold_start: (!cold.is_empty()).then(|| stat(cold)),
        warm_page_load: (!warm.is_empty()).then(|| stat(warm)),
        extraction_per_page: stat(extraction),
        article_bytes: html.len(),
        web_rag_cold_cache: stat(cold_rag),
        web_rag_warm_cache: stat(warm_rag),
        notes,
    };
    if json {
        docdex::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let line = |name: &str, s: &Stat| {
            format!(
                "{name:<28} p50 {:>8.1} ms  (min {:.1}, max {:.1}, {} runs)\n",
                s.p50_ms, s.min_ms, s.max_ms, s.runs
            )
        };
        let mut out = format!("chromium: {}\n", report.chromium.as_deref().unwrap_or("not found"));
        if let Some(s) = &report.browser_cold_start {
            out.push_str(&line("browser cold start", s));
        }
        if let Some(s) = &report.warm_page_load {
            out.push_str(&line("warm page load", s));
        }
        out.push_str(&line(
            &format!("extraction ({} KB page)", report.article_bytes / 1024),
            &report.extraction_per_page,
        ));
        out.push_str(&line("web-rag, cache cold", &report.web_rag_cold_cache));
        out.push_str(&line("web-rag, cache warm", &report.web_rag_warm_cache));
        for note in &report.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        let _ = docdex::cli::output::print_out(&out);
    }
    Ok(0)
}
