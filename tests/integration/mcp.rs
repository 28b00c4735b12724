//! MCP over stdio and streamable HTTP, driven by the official MCP Python SDK
//! (`tests/mcp/client.py`, installed by scripts/test.sh into target/py).

use std::path::PathBuf;
use std::process::Command;

use crate::common::{repo_with, Home, Server};

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

fn mcp_repo() -> tempfile::TempDir {
    repo_with(&[
        (
            "src/throttle.rs",
            "/// Limits how many requests a client may send per minute.\npub fn rate_limit(client_id: u64, per_minute: u32) -> bool {\n    per_minute > 0 && client_id > 0\n}\n",
        ),
        (
            "src/backup.rs",
            "/// Copies the database files to cold storage every night.\npub fn nightly_snapshot(target: &str) {\n    let _ = target;\n}\n",
        ),
        ("docs/colors.md", "# Palette\n\nTeal buttons, amber warnings.\n"),
    ])
}

/// Runs the checks with the official Python SDK 1.x and 2.x, each on a fresh repo (the checks
/// start by indexing it); `args` are the transport's, the repo and any options follow.
fn run_client(home: &Home, args: &[&str], options: &[&str]) -> Vec<tempfile::TempDir> {
    crate::common::mcp_pythons()
        .into_iter()
        .map(|python| {
            let repo = mcp_repo();
            run_client_with(&python, home, args, repo.path(), options);
            repo
        })
        .collect()
}

fn run_client_with(python: &std::path::Path, home: &Home, args: &[&str], repo: &std::path::Path, options: &[&str]) {
    let out = Command::new(python)
        .arg(client_script())
        .args(args)
        .arg(repo)
        .args(options)
        .env("DOCDEX_HOME", home.dir.path())
        .env("DOCDEX_MODELS_DIR", crate::common::models_dir())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let sdk = python.display();
    assert!(out.status.success(), "MCP client ({sdk}) failed:\n{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains("all MCP checks passed"), "{sdk}: {stderr}");
}

#[test]
fn stdio_relays_to_a_running_daemon_and_passes_the_official_client() {
    let home = Home::with_config("[web]\nenabled = false\n");
    let server = Server::start(&home, &[]);
    let repos = run_client(&home, &["stdio", env!("CARGO_BIN_EXE_docdexd")], &[]);
    // The tool calls were the daemon's: it mounted the repos and counted the searches.
    let http = server.blocking_client();
    let mounted: serde_json::Value = http.get(server.url("/v1/repos")).send().unwrap().json().unwrap();
    for repo in &repos {
        let canonical = std::fs::canonicalize(repo.path()).unwrap().display().to_string();
        assert!(mounted.as_array().unwrap().iter().any(|r| r["repo"] == canonical), "{mounted}");
    }
    let status: serde_json::Value = http.get(server.url("/v1/status")).send().unwrap().json().unwrap();
    let searches =
        status["actors"].as_array().unwrap().iter().find(|a| a["actor"] == "search").unwrap()["handled"].as_u64();
    assert!(searches.unwrap_or(0) >= 3, "{status}");
}

#[test]
fn stdio_server_passes_the_official_client() {
    // The web tier is off: docdex_web_research is exercised without leaving the machine.
    let home = Home::with_config("[web]\nenabled = false\n");
    run_client(&home, &["stdio", env!("CARGO_BIN_EXE_docdexd")], &[]);
}

#[test]
fn http_server_passes_the_official_client_and_requires_the_token() {
    // A daemon per SDK: the checks use the daemon's default repo (its memory included).
    for python in crate::common::mcp_pythons() {
        let repo = mcp_repo();
        let home = Home::with_config("[web]\nenabled = false\n");
        let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap(), "--auth-token", "mcp-secret"]);
        let url = server.url("/v1/mcp");
        run_client_with(&python, &home, &["http", &url], repo.path(), &["--token", "mcp-secret"]);

        // Without the token the MCP endpoint is closed like the rest of the API.
        let status = reqwest::blocking_status(&url);
        assert_eq!(status, 401);
        // A body that is not JSON is answered as JSON-RPC's parse error, and a missing
        // `Accept` as an invalid request, each with the transport's status.
        let (status, body) =
            reqwest::blocking_post(&url, "mcp-secret", "not json", "application/json, text/event-stream");
        assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32700)), "{body}");
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let (status, body) = reqwest::blocking_post(&url, "mcp-secret", initialize, "text/html");
        assert_eq!((status, body["error"]["code"].as_i64()), (406, Some(-32600)), "{body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("text/event-stream"), "{body}");
    }
}

#[test]
fn mcp_config_prints_stdio_and_http_snippets() {
    let repo = mcp_repo();
    let home = Home::new();
    let out = home.run(&["mcp-config", "--repo", repo.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let json_blocks: Vec<serde_json::Value> = text
        .split("\n\n")
        .map(|block| block.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n"))
        .map(|json| serde_json::from_str(&json).unwrap())
        .collect();
    let stdio = &json_blocks[0]["mcpServers"]["docdex"];
    assert!(stdio["command"].as_str().unwrap().ends_with("docdexd"));
    assert_eq!(stdio["args"][0], "mcp");
    assert_eq!(stdio["args"][2], std::fs::canonicalize(repo.path()).unwrap().to_str().unwrap());
    // This home is not the default one, so the editor is told to pass it on.
    assert_eq!(stdio["env"]["DOCDEX_HOME"], home.dir.path().to_str().unwrap());
    // And so is the model's folder set here (without it the session would be lexical only).
    assert_eq!(stdio["env"]["DOCDEX_MODELS_DIR"], home.dir.path().join("no-models").to_str().unwrap());
    assert_eq!(json_blocks[1]["mcpServers"]["docdex"]["url"], "http://127.0.0.1:3210/v1/mcp");
}

mod reqwest {
    /// Status and JSON answer of a POST with the token, `body` and `accept`.
    pub fn blocking_post(url: &str, token: &str, body: &str, accept: &str) -> (u16, serde_json::Value) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let response = ::reqwest::Client::new()
                .post(url)
                .bearer_auth(token)
                .header("content-type", "application/json")
                .header("accept", accept)
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            (response.status().as_u16(), response.json().await.unwrap())
        })
    }

    /// Status of a bare POST (no token) to `url`.
    pub fn blocking_status(url: &str) -> u16 {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            ::reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .body("{}")
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    }
}

/// On a large repo (tokio's source) every result stays within the budget and paging returns
/// everything exactly once: a 200-hit search page by page, the largest file line by line.
#[test]
fn results_fit_the_budget_and_pages_return_everything_once() {
    let repo = tempfile::tempdir().unwrap();
    let copied = Command::new("cp").arg("-r").arg(crate::common::tokio_source().join("src")).arg(repo.path()).status();
    assert!(copied.unwrap().success());
    let home = Home::with_config("[server]\nmcp_max_result_tokens = 2000\n\n[web]\nenabled = false\n");
    let repo_arg = repo.path().to_str().unwrap();
    home.index(repo.path());
    let query = "spawn a task on the runtime";
    let expected = home.run(&["search", "--repo", repo_arg, "--json", "--mode", "lexical", "--limit", "200", query]);
    assert_eq!(expected.status.code(), Some(0));
    // Outside the repo: the server's own index run would index it.
    let scratch = tempfile::tempdir().unwrap();
    let expected_file = scratch.path().join("expected.json");
    std::fs::write(&expected_file, &expected.stdout).unwrap();
    // The file with the most lines.
    let mut largest = (0, String::new());
    let mut dirs = vec![repo.path().join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > largest.0 {
                    largest = (lines, path.strip_prefix(repo.path()).unwrap().display().to_string());
                }
            }
        }
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/budget_client.py");
    for python in crate::common::mcp_pythons() {
        let out = Command::new(&python)
            .arg(&script)
            .args([env!("CARGO_BIN_EXE_docdexd"), repo_arg, "2000", expected_file.to_str().unwrap(), &largest.1])
            .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}\n{}", python.display(), String::from_utf8_lossy(&out.stdout));
        eprintln!("{}: {}", python.display(), String::from_utf8_lossy(&out.stdout));
    }
    // The same over streamable HTTP, against the daemon (same home, same budget).
    let server = Server::start(&home, &[]);
    for python in crate::common::mcp_pythons() {
        let out = Command::new(&python)
            .arg(&script)
            .args([&server.url("/v1/mcp"), repo_arg, "2000", expected_file.to_str().unwrap(), &largest.1])
            .env("DOCDEX_TEST_TOKEN", server.token().unwrap_or_default())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{} over HTTP: {stderr}", python.display());
    }
}

/// A broken configuration or a missing model never breaks the handshake: the session starts,
/// lists its tools, and says what is wrong (instructions, tool errors) with the fix.
#[test]
fn the_handshake_completes_with_a_broken_config_or_no_model() {
    let repo = mcp_repo();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/handshake_client.py");
    let run = |home: &Home, python: &std::path::Path| -> serde_json::Value {
        let out = Command::new(python)
            .arg(&script)
            .args([env!("CARGO_BIN_EXE_docdexd"), repo.path().to_str().unwrap()])
            .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };

    for python in crate::common::mcp_pythons() {
        let broken = Home::with_config("[search]\nmax_repo_hits = \"many\"\n");
        let seen = run(&broken, &python);
        assert!(seen["tools"].as_array().unwrap().len() >= 8, "{seen}");
        let instructions = seen["instructions"].as_str().unwrap();
        assert!(
            instructions.contains("cannot work until this is fixed") && instructions.contains("max_repo_hits"),
            "{seen}"
        );
        assert_eq!(seen["search_error"], true, "{seen}");
        let error = seen["search_text"].as_str().unwrap();
        assert!(
            error.contains("config_invalid") && error.contains("max_repo_hits") && error.contains("hint:"),
            "{seen}"
        );

        // No model: everything works, lexically, and the session is told so.
        let lexical = Home::new();
        let seen = run(&lexical, &python);
        assert!(seen["instructions"].as_str().unwrap().contains("semantic search is off"), "{seen}");
        assert_eq!(seen["search_error"], false, "{seen}");

        // A broken index: the session still starts, and the tool says how to recover.
        let damaged = Home::new();
        damaged.index(repo.path());
        crate::common::damage_index_meta(&damaged, repo.path());
        let seen = run(&damaged, &python);
        assert!(seen["tools"].as_array().unwrap().len() >= 8, "{seen}");
        assert_eq!(seen["search_error"], true, "{seen}");
        let error = seen["search_text"].as_str().unwrap();
        assert!(error.contains("unreadable") && error.contains("hint:"), "{seen}");
    }
}

/// The official TypeScript SDK (`@modelcontextprotocol/sdk` from npm, on Debian's Node), over
/// stdio and streamable HTTP: handshake, tool list, every tool, paging, errors.
#[test]
fn the_official_typescript_sdk_passes_over_stdio_and_http() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/ts_client.mjs");
    let sdk = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/node/node_modules/@modelcontextprotocol/sdk");
    assert!(sdk.exists(), "{} is missing: run ./scripts/test.sh (it installs the TypeScript SDK)", sdk.display());
    let run = |home: &Home, args: &[&str]| {
        let out = Command::new("node")
            .arg(&script)
            .args(args)
            .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))))
            .output()
            .expect("node (Debian's nodejs package) runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.contains("all TypeScript MCP checks passed"), "{args:?}: {stderr}");
    };
    let repo = mcp_repo();
    let home = Home::with_config("[web]\nenabled = false\n");
    run(&home, &["stdio", env!("CARGO_BIN_EXE_docdexd"), repo.path().to_str().unwrap()]);

    let repo = mcp_repo();
    let home = Home::with_config("[web]\nenabled = false\n");
    let server = Server::start(&home, &["--auth-token", "ts-secret"]);
    run(&home, &["http", &server.url("/v1/mcp"), repo.path().to_str().unwrap(), "ts-secret"]);
}

/// Every tool, called by the official SDKs with a misspelt and with an unknown parameter,
/// refuses it by name, suggesting the one it takes.
#[test]
fn every_tool_names_a_misspelt_or_unknown_parameter() {
    let home = Home::with_config("[web]\nenabled = false\n");
    let repo = mcp_repo();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/params_client.py");
    for python in crate::common::mcp_pythons() {
        let out = Command::new(&python)
            .arg(&script)
            .args([env!("CARGO_BIN_EXE_docdexd"), repo.path().to_str().unwrap()])
            .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", python.display());
        assert!(stderr.contains("all parameter checks passed"), "{stderr}");
    }
}

/// A line that is not JSON is answered with JSON-RPC's parse error (id null) instead of
/// silence, and the session goes on: the next request is answered as usual.
#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    use std::io::Write;
    let repo = mcp_repo();
    let home = Home::new();
    let mut child = raw_stdio(&home, repo.path());
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let input = format!("{{\"jsonrpc\": \"2.0\", \"id\": \n{initialize}\n");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let answers: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["error"]["code"], -32700, "{answers:?}");
    assert!(answers[0]["id"].is_null(), "{answers:?}");
    assert_eq!(answers[1]["id"], 1, "{answers:?}");
    assert_eq!(answers[1]["result"]["serverInfo"]["name"], "docdex", "{answers:?}");
}

/// Over stdio, what JSON-RPC or MCP does not take is answered, with the message's id, saying
/// what is wrong: a message over the size limit, one without `"jsonrpc"`, a `tools/call`
/// without a tool, an unknown tool (with the closest name), an unknown method, an argument of
/// the wrong type (named), a call before `initialize`.
#[test]
fn malformed_messages_are_answered_with_their_id_and_what_is_wrong() {
    use std::io::{BufRead, Write};
    let repo = mcp_repo();
    let home = Home::new();
    let mut child = raw_stdio(&home, repo.path());
    let mut stdin = child.stdin.take().unwrap();
    let call =
        |id: u32, params: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#);
    let huge = format!(r#"{{"query":"{}"}}"#, "x".repeat(5 << 20));
    let lines = [
        call(1, r#"{"name":"docdex_search","arguments":{"query":"x"}}"#),
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        call(3, r#"{"name":"docdex_serch","arguments":{}}"#),
        call(4, "{}"),
        r#"{"jsonrpc":"2.0","id":5,"method":"bogus/method"}"#.to_string(),
        r#"{"id":6,"method":"ping"}"#.to_string(),
        call(7, r#"{"name":"docdex_search","arguments":{"query":5}}"#),
        call(8, &format!(r#"{{"name":"docdex_search","arguments":{huge}}}"#)),
    ];
    for line in &lines {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
    let mut answers: std::collections::HashMap<u64, serde_json::Value> = Default::default();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    while answers.len() < 8 {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "the server stopped with {answers:?}");
        let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
        answers.insert(answer["id"].as_u64().expect("every answer has its id"), answer);
    }
    drop(stdin);
    let _ = child.wait();
    let error =
        |id: u64| (answers[&id]["error"]["code"].as_i64().unwrap_or(0), answers[&id]["error"]["message"].to_string());
    let tool_text = |id: u64| answers[&id]["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
    assert!(error(1).1.contains("not initialized"), "{:?}", error(1));
    assert_eq!(answers[&2]["result"]["serverInfo"]["name"], "docdex");
    assert_eq!(error(3).0, -32602);
    assert!(error(3).1.contains("did you mean \\\"docdex_search\\\""), "{:?}", error(3));
    assert_eq!(error(4).0, -32602, "{:?}", error(4));
    assert_eq!(error(5), (-32601, "\"Method not found: bogus/method\"".to_string()));
    assert_eq!(error(6).0, -32600);
    assert!(tool_text(7).contains("\"query\" must be a string"), "{}", tool_text(7));
    assert_eq!(error(8).0, -32600);
    assert!(error(8).1.contains("over the limit"), "{:?}", error(8));
}

/// `docdexd mcp` on `repo`, its stdin and stdout piped for raw JSON-RPC lines.
fn raw_stdio(home: &Home, repo: &std::path::Path) -> std::process::Child {
    home.cmd()
        .args(["mcp", "--repo", repo.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}
