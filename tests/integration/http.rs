//! The HTTP API end to end over loopback against a real `docdexd daemon`.

use crate::common::{get, hit_paths, sample_repo, Home, Server};

#[tokio::test]
async fn search_over_http_matches_the_cli() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);

    let (status, health) = get(&server.url("/healthz"), server.token()).await;
    assert_eq!(status, 200);
    assert_eq!(health["status"], "ok");

    let (status, body) = get(&server.url("/v1/search?q=WorkerPool%20run_detached&limit=5"), server.token()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(hit_paths(&body).first().map(String::as_str), Some("src/pool.rs"));
    // Measured, not a placeholder: a real search over HTTP takes some time, and not seconds.
    let took_ms = body["took_ms"].as_f64().unwrap();
    assert!(took_ms > 0.0 && took_ms < 10_000.0, "{took_ms}");

    let (_, status_body) =
        get(&server.url(&format!("/v1/status?repo={}", repo.path().display())), server.token()).await;
    assert_eq!(status_body["indexed"], true);
    assert_eq!(status_body["files"], 4);

    // get / multi-get: the same dispatcher as MCP's docdex_get and docdex_multi_get.
    let chunk_id = body["hits"][0]["chunk_id"].as_u64().unwrap();
    let (status, chunk) = get(&server.url(&format!("/v1/get?chunk_id={chunk_id}")), server.token()).await;
    assert_eq!((status, chunk["path"].as_str()), (200, Some("src/pool.rs")), "{chunk}");
    let (status, file) = get(&server.url("/v1/get?path=src/pool.rs&line_start=2&line_end=3"), server.token()).await;
    assert_eq!((status, file["line_end"].as_u64()), (200, Some(3)), "{file}");
    // By symbol, qualified: the method's own lines, from the code graph.
    let (status, method) = get(&server.url("/v1/get?symbol=WorkerPool::run_detached"), server.token()).await;
    assert_eq!((status, method["path"].as_str(), method["line_start"].as_u64()), (200, Some("src/pool.rs"), Some(8)));
    assert!(method["text"].as_str().unwrap().starts_with("    pub fn run_detached"), "{method}");
    let (status, both) = get(&server.url("/v1/get?chunk_id=1&path=src/pool.rs"), server.token()).await;
    assert_eq!(status, 400, "{both}");
    let many: serde_json::Value = server
        .client()
        .post(server.url("/v1/multi-get"))
        .json(&serde_json::json!({"glob": "src/*.rs"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(many["files"][0]["path"], "src/pool.rs", "{many}");

    // The CLI, reading the same state, gives the same hits.
    let cli = home.search(repo.path(), "WorkerPool run_detached");
    assert_eq!(hit_paths(&cli)[..1], hit_paths(&body)[..1]);
    assert_eq!(cli["hits"][0]["snippet"], body["hits"][0]["snippet"]);
}

#[tokio::test]
async fn malformed_requests_get_documented_errors() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);

    let no_such = format!("/v1/search?q=x&repo={}", std::env::temp_dir().join("docdex-no-such-repo").display());
    let cases = [
        ("/v1/search", 400, "invalid_request"),
        ("/v1/search?q=", 400, "invalid_request"),
        ("/v1/search?q=x&limit=abc", 400, "invalid_request"),
        ("/v1/search?q=x&limit=0", 400, "invalid_request"),
        ("/v1/search?q=x&limit=100000", 400, "invalid_request"),
        (no_such.as_str(), 404, "repo_not_found"),
        // Outside the roots, a path that does not exist is refused like one that does: the
        // answer does not tell which paths exist there.
        ("/v1/search?q=x&repo=/no/such/repo", 403, "path_refused"),
        ("/v1/search?q=x&repo=/etc/passwd", 403, "path_refused"),
        ("/v1/nope", 404, "not_found"),
    ];
    for (path, want_status, want_code) in cases {
        let (status, body) = get(&server.url(path), server.token()).await;
        assert_eq!(status, want_status, "{path}: {body}");
        assert_eq!(body["error"]["code"], want_code, "{path}: {body}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
    }
    // A directory never indexed is mounted by the request and indexed before it answers:
    // an empty result from a real index, never a "not indexed" the daemon could have fixed.
    let unindexed = crate::common::repo_with(&[("notes.md", "# Notes\n\nThe quarterly zeppelin review.\n")]);
    let url = server.url(&format!("/v1/search?q=zeppelin&repo={}", unindexed.path().display()));
    let (status, body) = get(&url, server.token()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["hits"][0]["path"], "notes.md", "{body}");
}

#[tokio::test]
async fn auth_token_is_enforced_when_set() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap(), "--auth-token", "s3cret"]);
    for path in ["/healthz", "/v1/search?q=WorkerPool"] {
        let (status, body) = get(&server.url(path), None).await;
        assert_eq!(status, 401, "{path}");
        assert_eq!(body["error"]["code"], "unauthorized");
        let (status, _) = get(&server.url(path), Some("wrong")).await;
        assert_eq!(status, 401, "{path}");
        let (status, _) = get(&server.url(path), Some("s3cret")).await;
        assert_eq!(status, 200, "{path}");
    }
    // The token given on the command line is not in the process list.
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", server.child.id())).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(cmdline.contains("daemon") && !cmdline.contains("s3cret"), "{cmdline}");
}

#[test]
fn non_loopback_bind_requires_expose_and_a_token() {
    let home = Home::new();
    let out = home.run(&["serve", "--bind", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--expose"));
    // Only when the token is turned off does --expose lack one.
    let tokenless = Home::with_config("[server]\nrequire_token = false\n");
    let out = tokenless.run(&["serve", "--bind", "0.0.0.0:0", "--expose"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without an auth token"));
    // An empty token is refused, not read as "none given".
    let out = home.run(&["serve", "--auth-token", ""]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("auth token"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A raw request, so Host and Origin can be whatever an attacker's page would send.
async fn raw(base_url: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base_url.trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, response)
}

#[tokio::test]
async fn only_local_clients_with_the_token_get_in() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    // A token is generated on first run, 0600, and required by default.
    let token_file = home.dir.path().join("token");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&token_file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let token = server.token().unwrap().to_string();
    assert_eq!(token.len(), 64);
    let bearer = format!("Bearer {token}");
    let (status, body) = raw(&server.base_url, "GET", "/v1/search?q=WorkerPool", &[], "").await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("$DOCDEX_HOME/token"), "{body}");
    let (status, _) = raw(&server.base_url, "GET", "/v1/search?q=WorkerPool", &[("Authorization", &bearer)], "").await;
    assert_eq!(status, 200);
    // State-changing routes too.
    let json_only = [("Content-Type", "application/json")];
    for (method, path) in [("POST", "/v1/index"), ("POST", "/v1/memory"), ("DELETE", "/v1/memory/1")] {
        let (status, body) = raw(&server.base_url, method, path, &json_only, "{\"text\": \"x\"}").await;
        assert_eq!(status, 401, "{method} {path}: {body}");
    }

    // DNS rebinding: the attacker's domain resolved to 127.0.0.1, sent as Host. REST and MCP.
    for path in ["/v1/search?q=WorkerPool", "/healthz", "/v1/mcp"] {
        let (status, body) = raw(
            &server.base_url,
            "GET",
            path,
            &[("Host", "rebind.attacker.example:3210"), ("Authorization", &bearer)],
            "",
        )
        .await;
        assert_eq!(status, 403, "{path}: {body}");
        assert!(body.contains("\"forbidden\""), "{body}");
    }
    // A page elsewhere calling through the user's browser (with a stolen token even).
    let (status, body) = raw(
        &server.base_url,
        "POST",
        "/v1/memory",
        &[("Origin", "https://evil.example"), ("Authorization", &bearer), ("Content-Type", "application/json")],
        "{\"text\": \"planted\"}",
    )
    .await;
    assert_eq!(status, 403, "{body}");
    // A cross-site form can only send form or text bodies: refused before anything runs.
    for content_type in ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"] {
        let headers = [("Authorization", bearer.as_str()), ("Content-Type", content_type)];
        let (status, body) = raw(&server.base_url, "POST", "/v1/index", &headers, "a=b").await;
        assert_eq!(status, 415, "{content_type}: {body}");
    }
    let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
    let (status, body) = raw(&server.base_url, "POST", "/v1/index", &headers, "{}").await;
    assert_eq!(status, 200, "{body}");
    // A local tool page on a loopback origin is fine.
    let headers = [("Authorization", bearer.as_str()), ("Origin", "http://localhost:5173")];
    assert_eq!(raw(&server.base_url, "GET", "/healthz", &headers, "").await.0, 200);

    // Sizes are bounded, and the limit is in the message.
    let long_query = format!("/v1/search?q={}", "a".repeat(2500));
    let (status, body) = get(&server.url(&long_query), Some(&token)).await;
    assert_eq!((status, body["error"]["code"].as_str()), (413, Some("too_large")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("2000-character limit"));
    let client = server.client();
    let note = serde_json::json!({ "text": "x".repeat(100_000) });
    let response = client.post(server.url("/v1/memory")).json(&note).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 413);
    let big_body = serde_json::json!({ "text": "y".repeat(2 << 20) });
    let response = client.post(server.url("/v1/memory")).json(&big_body).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 413);
    let body: serde_json::Value = response.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("1048576-byte limit"), "{body}");
}

#[tokio::test]
async fn the_token_can_be_turned_off_on_loopback_and_exposed_mcp_answers_with_it() {
    let repo = sample_repo();
    let open = Home::with_config("[server]\nrequire_token = false\n");
    let server = Server::start(&open, &["--repo", repo.path().to_str().unwrap()]);
    assert!(server.token().is_none());
    assert_eq!(get(&server.url("/v1/search?q=WorkerPool"), None).await.0, 200);
    drop(server);

    // Exposed on all interfaces: remote clients reach REST and MCP by whatever name, with
    // the token (the MCP transport used to refuse every non-loopback Host).
    let home = Home::new();
    let exposed = Server::start(&home, &["--repo", repo.path().to_str().unwrap(), "--bind", "0.0.0.0:0", "--expose"]);
    let port = exposed.base_url.rsplit(':').next().unwrap().to_string();
    let local = format!("http://127.0.0.1:{port}");
    let bearer = format!("Bearer {}", exposed.token().unwrap());
    let host = format!("devbox.lan:{port}");
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let headers = [
        ("Host", host.as_str()),
        ("Authorization", bearer.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, body) = raw(&local, "POST", "/v1/mcp", &headers, initialize).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("serverInfo"), "{body}");
    let (status, _) = raw(&local, "GET", "/v1/search?q=WorkerPool", &headers[..2], "").await;
    assert_eq!(status, 200);
    let (status, _) = raw(&local, "POST", "/v1/mcp", &[headers[0], headers[2], headers[3]], initialize).await;
    assert_eq!(status, 401, "no token, no MCP");
}

#[tokio::test]
async fn a_daemon_serves_only_allowed_repo_roots() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    for path in ["/v1/search?q=passwd&repo=/etc", "/v1/search?q=x&repo=/", "/v1/status?repo=/etc"] {
        let (status, body) = get(&server.url(path), server.token()).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert_eq!(body["error"]["code"], "path_refused");
        assert!(body["error"]["hint"].as_str().unwrap().contains("allowed_roots"), "{body}");
    }
    let response = server
        .client()
        .post(server.url("/v1/index?repo=/etc"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    // Nothing of /etc was indexed.
    let registry = home.dir.path().join("state/repos");
    assert_eq!(std::fs::read_dir(registry).unwrap().count(), 1, "only the sample repo has state");
    // The one-shot CLI indexes what the user names, but never the filesystem root.
    let out = home.run(&["index", "--repo", "/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("filesystem root"));
}

/// Inputs that used to slip through or fail the wrong way: each a clear 4xx now.
#[tokio::test]
async fn edge_inputs_get_clear_refusals() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let client = server.client();
    let token = server.token().unwrap_or_default().to_string();

    // A Host with text after a bracketed loopback address is not loopback.
    let (status, _) = raw(
        &server.base_url,
        "GET",
        "/healthz",
        &[("Host", "[::1]evil.example"), ("Authorization", &format!("Bearer {token}"))],
        "",
    )
    .await;
    assert_eq!(status, 403);

    // An empty path is a 400 on get, and one missing file among several in multi-get.
    let (status, body) = get(&server.url("/v1/get?path="), server.token()).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_request")), "{body}");
    let many: serde_json::Value = client
        .post(server.url("/v1/multi-get"))
        .json(&serde_json::json!({"paths": ["", "src/pool.rs"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(many["files"].as_array().map(Vec::len), Some(1), "{many}");
    assert_eq!(many["missing"][0]["path"], "", "{many}");

    // Queries over the 2,000-character limit, on every tool that takes one.
    let long = "x".repeat(400_000);
    let recall =
        client.post(server.url("/v1/memory/recall")).json(&serde_json::json!({"query": long})).send().await.unwrap();
    assert_eq!(recall.status().as_u16(), 413, "memory recall");
    let web = client.post(server.url("/v1/web/search")).json(&serde_json::json!({"query": long})).send().await.unwrap();
    assert_eq!(web.status().as_u16(), 413, "web search");

    // A chat's X-Docdex-Repo that is not ASCII text is refused, not ignored.
    let chat = client
        .post(server.url("/v1/chat/completions"))
        .header("X-Docdex-Repo", reqwest::header::HeaderValue::from_bytes(b"/tmp/caf\xc3\xa9").unwrap())
        .json(&serde_json::json!({"messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(chat.status().as_u16(), 400);
    let body: serde_json::Value = chat.json().await.unwrap();
    assert!(body.to_string().contains("X-Docdex-Repo"), "{body}");
}

/// One local client with 64 slow requests in flight (the model list of an LLM server that
/// never answers) still gets `/healthz` and its searches answered; only a 65th slow one waits.
#[test]
fn health_and_search_answer_while_one_client_has_64_slow_requests() {
    let repo = sample_repo();
    // An "LLM server" that accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let llm = listener.local_addr().unwrap();
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let held = std::sync::Arc::clone(&held);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                held.lock().unwrap().push(stream);
            }
        });
    }
    let home = Home::with_config(&format!("[llm]\nprovider = \"openai\"\nbase_url = \"http://{llm}\"\n"));
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let client = server.blocking_client();
    let slow: Vec<_> = (0..64)
        .map(|_| {
            let (client, url) = (client.clone(), server.url("/v1/models"));
            std::thread::spawn(move || client.get(url).send().map(|r| r.status().as_u16()))
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while held.lock().unwrap().len() < 64 {
        assert!(std::time::Instant::now() < deadline, "only {} slow calls reached the LLM", held.lock().unwrap().len());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(client.get(server.url("/healthz")).send().unwrap().status().as_u16(), 200);
    let search = client.get(server.url("/v1/search?q=WorkerPool&limit=3")).send().unwrap();
    assert_eq!(search.status().as_u16(), 200);
    let one_more = client.get(server.url("/v1/models")).send().unwrap();
    assert_eq!(one_more.status().as_u16(), 429);
    drop(server);
    for call in slow {
        let _ = call.join();
    }
}

/// `initialize` in a loop: past the session cap a clear 429, and 3,000 attempts cost the
/// daemon at most 100 MB (each kept session holds ~80 KB until it expires).
#[test]
fn mcp_sessions_are_capped() {
    let home = Home::new();
    let mut server = Server::start(&home, &[]);
    // Each refusal is logged: drain the log, or a full pipe would stall the daemon.
    let mut log = server.child.stderr.take().unwrap();
    std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
    let client = server.blocking_client();
    let rss_mib = |pid: u32| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        kib / 1024.0
    };
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "loop", "version": "1"}}
    });
    let before = rss_mib(server.child.id());
    let (mut opened, mut refused, mut message) = (0, 0, String::new());
    for _ in 0..3000 {
        let response = client
            .post(server.url("/v1/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
            .unwrap();
        // Read to the end, as a client does: the answer is a short event stream.
        let status = response.status().as_u16();
        let body = response.text().unwrap();
        match status {
            200 => opened += 1,
            429 => {
                refused += 1;
                message = body;
            }
            other => panic!("initialize answered {other}: {body}"),
        }
    }
    let grown = rss_mib(server.child.id()) - before;
    assert_eq!(opened, 256, "{refused} refused");
    assert!(message.contains("MCP sessions are open") && message.contains("Mcp-Session-Id"), "{message}");
    assert!(grown <= 100.0, "3,000 initialize calls grew the daemon by {grown:.0} MiB");
    // The daemon still answers everything else.
    assert_eq!(client.get(server.url("/healthz")).send().unwrap().status().as_u16(), 200);
}

/// Every endpoint refuses a misspelt and an unknown parameter with a 400 that names it (and
/// the right one when it is close); `repo_path` and `project_root` are taken for `repo`,
/// `query` for `q`, `k` for `limit`.
#[test]
fn every_endpoint_refuses_unknown_parameters_and_names_the_right_one() {
    let repo = sample_repo();
    let home = Home::with_config("[web]\nenabled = false\n");
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let client = server.blocking_client();
    let get = |path: &str| {
        let response = client.get(server.url(path)).send().unwrap();
        (response.status().as_u16(), response.json::<serde_json::Value>().unwrap())
    };
    let post = |path: &str, body: serde_json::Value| {
        let response = client.post(server.url(path)).json(&body).send().unwrap();
        (response.status().as_u16(), response.json::<serde_json::Value>().unwrap())
    };
    let gets = [
        ("/healthz", None),
        ("/v1/search?q=x&", Some(("limt=3", "limit"))),
        ("/v1/status?", Some(("rpo=.", "repo"))),
        ("/v1/repos", None),
        ("/v1/files?", Some(("glbo=*.rs", "glob"))),
        ("/v1/memory?", Some(("limt=2", "limit"))),
        ("/v1/get?path=src/pool.rs&", Some(("line_strat=2", "line_start"))),
        ("/v1/dag?", Some(("repoo=.", "repo"))),
        ("/v1/models", None),
        ("/v1/crates/serde/summary?", Some(("versoin=1.0.0", "version"))),
        ("/v1/crates/serde/versions", None),
        ("/v1/symbols?name=WorkerPool&", Some(("kidn=struct", "kind"))),
        ("/v1/references?name=WorkerPool&", Some(("lien=1", "line"))),
        ("/v1/callers?name=run_detached&", Some(("min_confidnece=0", "min_confidence"))),
        ("/v1/callees?name=run_detached&", Some(("ofset=0", "offset"))),
        ("/v1/graph/impact?file=src/pool.rs&", Some(("dpeth=2", "depth"))),
        ("/v1/ast/search?kind=struct&", Some(("langauge=rust", "language"))),
        ("/v1/impact/diff?", Some(("stagde=true", "staged"))),
        ("/v1/repo-map?", Some(("budget_token=100", "budget_tokens"))),
    ];
    for (path, misspelt) in gets {
        let sep = if path.contains('?') { "" } else { "?" };
        let (status, body) = get(&format!("{path}{sep}bogus=1"));
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("unknown parameter \"bogus\""), "{path}: {body}");
        if let Some((param, right)) = misspelt {
            let (status, body) = get(&format!("{path}{param}"));
            assert_eq!(status, 400, "{path}{param}: {body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains(&format!("did you mean \"{right}\"")), "{path}{param}: {body}");
        }
    }
    let posts = [
        ("/v1/memory", serde_json::json!({"text": "a note"}), "txet", "text"),
        ("/v1/memory/recall", serde_json::json!({"query": "note"}), "limti", "limit"),
        ("/v1/multi-get", serde_json::json!({"glob": "src/*.rs"}), "glbo", "glob"),
        ("/v1/initialize", serde_json::json!({"repo": repo.path()}), "wiat", "wait"),
        ("/v1/libs/fetch", serde_json::json!({}), "lisb", "libs"),
        ("/v1/web/search", serde_json::json!({"query": "x"}), "limmit", "limit"),
        ("/v1/web/fetch", serde_json::json!({"url": "http://example.com"}), "refrsh", "refresh"),
        ("/v1/ast/query", serde_json::json!({"language": "rust", "query": "(identifier) @i"}), "limt", "limit"),
        ("/v1/run-tests", serde_json::json!({}), "targte", "target"),
    ];
    for (path, base, misspelt, right) in posts {
        for (extra, wanted) in
            [(misspelt, format!("did you mean \"{right}\"")), ("bogus", "unknown parameter \"bogus\"".to_string())]
        {
            let mut body = base.clone();
            body[extra] = serde_json::json!(1);
            let (status, answer) = post(path, body);
            assert_eq!(status, 400, "{path} {extra}: {answer}");
            assert!(answer["error"]["message"].as_str().unwrap().contains(&wanted), "{path} {extra}: {answer}");
        }
    }
    // A parameter sent where the route does not read it is refused, not ignored.
    let (status, body) = post("/v1/pack?budget_tokens=5", serde_json::json!({"query": "pool"}));
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("from the JSON body"), "{body}");
    let response = client.delete(server.url("/v1/memory/1")).json(&serde_json::json!({"x": 1})).send().unwrap();
    let (status, body) = (response.status().as_u16(), response.json::<serde_json::Value>().unwrap());
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("from the query string"), "{body}");
    // A relative repo path would name the daemon's working directory: refused over HTTP.
    for path in ["/v1/search?q=pool&repo=src", "/v1/search?q=pool&repos=src,docs", "/v1/symbols?name=WorkerPool&repo=."]
    {
        let (status, body) = get(path);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("relative path"), "{path}: {body}");
    }
    let (status, body) = post("/v1/collections", serde_json::json!({"name": "notes", "path": "notes"}));
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("relative path"), "{body}");
    // A key given twice is refused, not settled by whichever came last.
    let response = client
        .post(server.url("/v1/pack"))
        .header("content-type", "application/json")
        .body(r#"{"query": "pool", "budget_tokens": 500, "budget_tokens": 5}"#)
        .send()
        .unwrap();
    let (status, body) = (response.status().as_u16(), response.json::<serde_json::Value>().unwrap());
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("`budget_tokens` is given twice"), "{body}");
    // Lines are 1-based: a line 0 is refused, not read as the first.
    for path in ["/v1/references?name=WorkerPool&path=src/pool.rs&line=0", "/v1/get?path=src/pool.rs&line_start=0"] {
        let (status, body) = get(path);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("1-based"), "{path}: {body}");
    }
    // A route that names its direction does not answer the other one.
    let (status, body) = get("/v1/callees?name=run_detached&direction=callers");
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["hint"].as_str().unwrap().contains("/v1/callers"), "{body}");
    // A page of a list of paths says where the next one starts; a path asked twice is read once.
    let (status, body) =
        post("/v1/multi-get", serde_json::json!({"paths": ["src/pool.rs", "src/pool.rs", "README.md"], "limit": 1}));
    assert_eq!((status, body["total"].as_u64(), body["next_offset"].as_u64()), (200, Some(2), Some(1)), "{body}");
    // The old names still work.
    let (status, body) = get(&format!("/v1/search?query=WorkerPool&repo_path={}", repo.path().display()));
    assert_eq!(status, 200, "{body}");
    let (status, body) = get(&format!("/v1/status?project_root={}", repo.path().display()));
    assert_eq!((status, body["indexed"].as_bool()), (200, Some(true)), "{body}");
    let (status, body) = post("/v1/memory/recall", serde_json::json!({"query": "note", "k": 2}));
    assert_eq!(status, 200, "{body}");
}

/// A parameter given without a value is refused by name, never read as "not given" (every
/// repo, HEAD, the default limit); a route asked with the wrong method says so; git's own
/// folder is never served as a repo.
#[test]
fn an_empty_parameter_and_a_git_folder_are_refused() {
    let repo = sample_repo();
    let git = repo.path().join(".git");
    std::fs::create_dir_all(git.join("objects")).unwrap();
    std::fs::write(git.join("config"), "[remote \"origin\"]\n\turl = https://user:secret@example.com/x.git\n").unwrap();
    let home = Home::with_config("[web]\nenabled = false\n");
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let client = server.blocking_client();
    let get = |path: &str| {
        let response = client.get(server.url(path)).send().unwrap();
        (response.status().as_u16(), response.text().unwrap())
    };
    for (query, name) in [
        ("/v1/search?q=pool&repos=", "repos"),
        ("/v1/search?q=pool&diff=", "diff"),
        ("/v1/search?q=pool&limit=", "limit"),
        ("/v1/search?q=pool&group=%20", "group"),
        ("/v1/impact/diff?base=", "base"),
    ] {
        let (status, body) = get(query);
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.contains(&format!("`{name}` is empty")), "{query}: {body}");
    }
    assert_eq!(get("/v1/search?q=pool").0, 200);
    // A route asked with a method it does not take is a 405 that says so; a path no route
    // has, a 404.
    let (status, body) = get("/v1/run-tests");
    assert_eq!(status, 405, "{body}");
    assert!(body.contains("method_not_allowed") && body.contains("does not take GET"), "{body}");
    let deleted = client.delete(server.url("/v1/search?q=pool")).send().unwrap().status().as_u16();
    assert_eq!(deleted, 405);
    assert_eq!(get("/v1/no-such-route").0, 404);
    let git_arg = git.to_str().unwrap().replace('/', "%2F");
    for path in [format!("/v1/files?repo={git_arg}"), format!("/v1/search?q=secret&repo={git_arg}")] {
        let (status, body) = get(&path);
        assert_eq!(status, 403, "{path}: {body}");
        assert!(body.contains(".git directory") && !body.contains("secret@"), "{path}: {body}");
    }
}
