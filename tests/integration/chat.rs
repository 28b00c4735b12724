//! Grounded chat end to end: the real `docdexd` against a real llama.cpp server (SmolLM2-135M,
//! one thread, from PyPI; `scripts/llm_server.py`), driven by the official `openai` Python
//! client and by curl; the Ollama provider against a stub speaking Ollama's API.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{python, repo_with, Home, Server};
use crate::fakeweb::{article, ddg_results, FakeWeb, Reply};
use crate::ollama_stub::OllamaStub;

/// A llama.cpp server for one test, killed on drop.
struct LlmServer {
    child: Child,
    base_url: String,
}

impl LlmServer {
    fn start(args: &[&str]) -> LlmServer {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/llm_server.py");
        let mut child = Command::new(python())
            .arg(script)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let Some(base_url) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            panic!("the LLM server did not start (run ./scripts/test.sh to install it): {line:?}");
        };
        LlmServer { base_url: base_url.to_string(), child }
    }

    fn metric(&self, name: &str) -> f64 {
        let text = reqwest::blocking::get(format!("{}/metrics", self.base_url)).unwrap().text().unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /metrics"))
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const MEMORY_NOTE: &str = "WorkerPool jobs must never block the async runtime; long jobs go to run_detached.";

fn chat_repo() -> tempfile::TempDir {
    repo_with(&[
        (
            "src/pool.rs",
            "/// A pool of worker threads for blocking jobs.\npub struct WorkerPool {\n    size: usize,\n}\n\nimpl WorkerPool {\n    /// Runs a closure on a worker without stalling the caller.\n    pub fn run_detached(&self, job: impl FnOnce()) {\n        job();\n    }\n}\n",
        ),
        (
            "docs/colors.md",
            "# Palette\n\nTeal buttons, amber warnings, slate backgrounds.\n",
        ),
    ])
}

/// A home whose chat goes to `llm_base` (OpenAI-compatible) with the web tier off.
fn chat_home(llm_base: &str, llm_extra: &str) -> Home {
    Home::with_config(&format!(
        "[web]\nenabled = false\n\n[llm]\nprovider = \"openai\"\nbase_url = \"{llm_base}\"\ndefault_model = \"\"\n{llm_extra}\n"
    ))
}

/// Indexes (with embeddings) and saves the memory note.
fn prepare(home: &Home, repo: &Path) {
    home.json(&["index", "--repo", repo.to_str().unwrap(), "--wait", "--json"]);
    home.json(&["memory", "save", "--repo", repo.to_str().unwrap(), "--json", MEMORY_NOTE]);
}

fn curl(args: &[&str]) -> (String, u16) {
    let out = Command::new("curl").args(["-sS", "-w", "\n%{http_code}"]).args(args).output().unwrap();
    assert!(out.status.success(), "curl failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (body.to_string(), code.trim().parse().unwrap())
}

fn dag_json(home: &Home, repo: &Path, session: &str) -> Value {
    home.json(&["dag", "view", "--repo", repo.to_str().unwrap(), "--format", "json", session])
}

#[test]
fn openai_client_and_curl_chat_through_docdex_grounded_in_repo_and_memory() {
    let llm = LlmServer::start(&["--n-predict", "64"]);
    let repo = chat_repo();
    let home = chat_home(&llm.base_url, "max_answer_tokens = 32");
    prepare(&home, repo.path());
    let server = Server::start(&home, &[]);
    // A docdex whose LLM is not there (port 9: nothing listens), same repo.
    let dead_home = chat_home("http://127.0.0.1:9", "retries = 0");
    dead_home.index(repo.path());
    let dead = Server::start(&dead_home, &[]);

    // The official OpenAI client: models, plain and streamed chat, errors.
    let out = Command::new(python())
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/llm/openai_client.py"))
        .args([server.base_url.as_str(), repo.path().to_str().unwrap(), "--dead", dead.base_url.as_str()])
        .args(["--token", server.token().unwrap(), "--dead-token", dead.token().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the openai client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // curl: SSE frames, repo chosen by header, `[DONE]` last.
    let body = json!({
        "messages": [{"role": "user", "content": "What does run_detached do?"}],
        "stream": true,
        "max_tokens": 16,
    })
    .to_string();
    let url = server.url("/v1/chat/completions");
    let repo_header = format!("X-Docdex-Repo: {}", repo.path().display());
    let auth = format!("Authorization: Bearer {}", server.token().unwrap());
    let dead_auth = format!("Authorization: Bearer {}", dead.token().unwrap());
    let (sse, status) =
        curl(&["-N", "-H", &auth, "-H", "content-type: application/json", "-H", &repo_header, "-d", &body, &url]);
    assert_eq!(status, 200, "{sse}");
    let frames: Vec<&str> = sse.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
    assert_eq!(frames.last(), Some(&"[DONE]"), "{sse}");
    let chunks: Vec<Value> = frames[..frames.len() - 1].iter().map(|f| serde_json::from_str(f).unwrap()).collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk"));
    let text: String = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
    assert!(!text.trim().is_empty(), "{sse}");
    let last = chunks.last().unwrap();
    assert!(last["choices"][0]["finish_reason"].is_string(), "{last}");
    let session = last["docdex"]["session_id"].as_str().unwrap().to_string();
    assert!(last["docdex"]["sources"].as_array().unwrap().iter().any(|s| s["path"] == "src/pool.rs"), "{last}");

    // Malformed requests and an unreachable LLM answer in OpenAI's error shape.
    let (bad, status) = curl(&["-H", &auth, "-H", "content-type: application/json", "-d", "{\"messages\": 3}", &url]);
    assert_eq!(status, 400);
    let bad: Value = serde_json::from_str(&bad).unwrap();
    assert_eq!(bad["error"]["type"], "invalid_request_error");
    assert_eq!(bad["error"]["code"], "invalid_request");
    let dead_url = dead.url("/v1/chat/completions");
    let (down, status) =
        curl(&["-H", &dead_auth, "-H", "content-type: application/json", "-H", &repo_header, "-d", &body, &dead_url]);
    assert_eq!(status, 503, "{down}");
    let down: Value = serde_json::from_str(&down).unwrap();
    assert_eq!(down["error"]["code"], "llm_unavailable");
    let message = down["error"]["message"].as_str().unwrap();
    assert!(message.contains("http://127.0.0.1:9") && message.contains("llama-server"), "{message}");

    // The session's DAG: recorded, and rendered as text, DOT and JSON (CLI and HTTP).
    let view = dag_json(&home, repo.path(), &session);
    let kinds: Vec<&str> = view["nodes"].as_array().unwrap().iter().map(|n| n["kind"].as_str().unwrap()).collect();
    for kind in ["UserRequest", "Thought", "ToolCall", "Observation", "Decision"] {
        assert!(kinds.contains(&kind), "{kind} missing: {kinds:?}");
    }
    let nodes = view["nodes"].as_array().unwrap();
    assert!(
        nodes.iter().skip(1).all(|n| !n["parents"].as_array().unwrap().is_empty()),
        "every node but the request has a parent"
    );
    assert!(nodes.last().unwrap()["summary"].as_str().unwrap().starts_with("answer:"), "{view}");
    let repo_arg = repo.path().to_str().unwrap();
    let text = home.run(&["dag", "view", "--repo", repo_arg, &session]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("UserRequest") && text.contains("gate: ") && text.contains("context:"), "{text}");
    let dot = home.run(&["dag", "view", "--repo", repo_arg, "--format", "dot", &session]);
    let dot = String::from_utf8_lossy(&dot.stdout);
    assert!(dot.starts_with("digraph") && dot.contains("n1 -> n2;"), "{dot}");
    let list = home.json(&["dag", "list", "--repo", repo_arg, "--json"]);
    assert!(list["sessions"].as_array().unwrap().len() >= 3, "{list}");
    let http_dot = server
        .blocking_client()
        .get(server.url(&format!("/v1/dag/{session}?repo={repo_arg}&format=dot")))
        .send()
        .unwrap();
    assert_eq!(http_dot.status().as_u16(), 200);
    assert!(http_dot.text().unwrap().starts_with("digraph"));
    let missing = server
        .blocking_client()
        .get(server.url(&format!("/v1/dag/20200101T000000Z-000000?repo={repo_arg}")))
        .send()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);

    // The CLI chat (through the running daemon) streams the answer and lists its sources;
    // web-rag records a session too.
    let chats = |server: &Server| -> u64 {
        let status: Value = server.blocking_client().get(server.url("/v1/status")).send().unwrap().json().unwrap();
        status["actors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["actor"] == "chat")
            .and_then(|a| a["handled"].as_u64())
            .unwrap_or(0)
    };
    let chats_before = chats(&server);
    let out = home.run(&["chat", "--repo", repo_arg, "--query", "How does WorkerPool run jobs?", "--max-tokens", "16"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("sources:") && stdout.contains("repo src/pool.rs:") && stdout.contains("memory #1"),
        "{stdout}"
    );
    // Without --query, a conversation on stdin: the second question goes with the first turn.
    let mut repl = home
        .cmd()
        .args(["chat", "--repo", repo_arg, "--max-tokens", "8"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    repl.stdin.take().unwrap().write_all(b"What is WorkerPool?\nAnd run_detached?\n").unwrap();
    let out = repl.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.matches("sources:").count(), 2, "{stdout}");
    assert_eq!(chats(&server) - chats_before, 3, "the CLI's turns went through the daemon");
    let list = home.json(&["dag", "list", "--repo", repo_arg, "--json"]);
    let latest = list["sessions"][0]["id"].as_str().unwrap();
    let second = dag_json(&home, repo.path(), latest);
    assert_eq!(second["session"]["title"], "And run_detached?");
    assert_eq!(second["nodes"][0]["data"]["turns"], 3, "{second}");
    let rag = home.json(&["web-rag", "--repo", repo_arg, "--json", "WorkerPool"]);
    let rag_session = rag["session_id"].as_str().unwrap();
    assert_eq!(dag_json(&home, repo.path(), rag_session)["session"]["kind"], "web_rag");
    let json =
        home.json(&["chat", "--repo", repo_arg, "--query", "What is WorkerPool?", "--max-tokens", "8", "--json"]);
    assert!(json["docdex"]["sources"].as_array().is_some_and(|s| !s.is_empty()), "{json}");
    assert!(json["docdex"]["session_id"].as_str().is_some(), "{json}");
    // The dead daemon's LLM error reaches the CLI as it would locally: exit 2, message, hint.
    let failed = dead_home.run(&["chat", "--repo", repo_arg, "--query", "anything"]);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("127.0.0.1:9") && stderr.contains("hint:"), "{stderr}");
}

/// Reads an HTTP response head and then `data:` frames until `want` content chunks came.
fn read_content_chunks(stream: &mut TcpStream, want: usize) -> usize {
    let mut buffer = Vec::new();
    let mut byte = [0u8; 1024];
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let n = stream.read(&mut byte).unwrap();
        assert!(n > 0, "the stream ended early: {}", String::from_utf8_lossy(&buffer));
        buffer.extend_from_slice(&byte[..n]);
        let seen = String::from_utf8_lossy(&buffer).matches("\"content\":\"").count();
        if seen >= want {
            return seen;
        }
        assert!(Instant::now() < deadline, "no tokens arrived");
    }
}

#[test]
fn a_client_disconnect_mid_stream_stops_generation_upstream() {
    // Without an end-of-sequence stop, an uncancelled answer runs to all 800 tokens.
    let llm = LlmServer::start(&["--n-predict", "800", "--ignore-eos"]);
    let repo = chat_repo();
    let home = chat_home(&llm.base_url, "max_answer_tokens = 800");
    prepare(&home, repo.path());
    let server = Server::start(&home, &[]);
    let before = llm.metric("llamacpp:tokens_predicted_total");

    let body = json!({
        "messages": [{"role": "user", "content": "Tell me everything about WorkerPool."}],
        "stream": true,
        "max_tokens": 800,
        "docdex": {"repo_path": repo.path()},
    })
    .to_string();
    let addr = server.base_url.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        server.token().unwrap(),
        body.len()
    )
    .unwrap();
    read_content_chunks(&mut stream, 3);
    drop(stream);

    // Wait until the server has no request in progress (bounded, so a bug fails instead of hanging).
    let deadline = Instant::now() + Duration::from_secs(60);
    while llm.metric("llamacpp:requests_processing") > 0.0 {
        assert!(Instant::now() < deadline, "the LLM server still generates a minute after the client left");
        std::thread::sleep(Duration::from_millis(100));
    }
    let generated = llm.metric("llamacpp:tokens_predicted_total") - before;
    assert!(generated < 400.0, "generation went on after the disconnect: {generated} of 800 tokens");

    // The DAG says so.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = home.json(&["dag", "list", "--repo", repo.path().to_str().unwrap(), "--json"]);
        let session = list["sessions"][0]["id"].as_str().unwrap().to_string();
        let view = dag_json(&home, repo.path(), &session);
        let last = view["nodes"].as_array().unwrap().last().unwrap()["summary"].as_str().unwrap().to_string();
        if last.starts_with("cancelled") {
            break;
        }
        assert!(Instant::now() < deadline, "no cancellation recorded: {last}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn budget_overflow_drops_web_before_repo_and_keeps_memory() {
    let llm = LlmServer::start(&["--n-predict", "16"]);
    // Three long files about the same thing: more repo text than the evidence share holds.
    let long = |topic: &str| {
        let mut text = format!("//! {topic}: how WorkerPool schedules jobs.\n");
        for i in 0..40 {
            text.push_str(&format!("/// WorkerPool step {i} for {topic}: jobs are queued, picked by an idle worker and run.\npub fn {topic}_step_{i}() {{}}\n"));
        }
        text
    };
    let repo = repo_with(&[
        ("src/pool.rs", &long("pool")),
        ("src/queue.rs", &long("queue")),
        ("src/worker.rs", &long("worker")),
    ]);
    let web = FakeWeb::start(1, |path, web| {
        let base = web.base(0);
        if path.starts_with("/html/") {
            let a = format!("{base}/articles/pools");
            let b = format!("{base}/articles/queues");
            return Reply::html(ddg_results(&[
                ("Worker pools explained", &a, "How worker pools schedule jobs."),
                ("Job queues", &b, "Queues in front of worker pools."),
            ]));
        }
        let paragraph = "A worker pool keeps a fixed set of threads; jobs wait in a queue until an idle worker picks them up and runs them to completion.";
        Reply::html(article("Worker pools", &[paragraph; 6], "pool.execute(job);"))
    });
    let home = Home::with_config(&format!(
        "[web]\nddg_base_url = \"{}/html/\"\nallow_private_addresses = true\nengine = \"http\"\nmax_pages = 2\n\n[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\ndefault_model = \"\"\nmax_answer_tokens = 16\ncontext_window = 1200\n",
        web.base(0),
        llm.base_url
    ))
    .model();
    prepare(&home, repo.path());
    let server = Server::start(&home, &[]);
    let response = server
        .blocking_client()
        .post(server.url("/v1/chat/completions"))
        .json(&json!({
            "messages": [{"role": "user", "content": "How does WorkerPool schedule jobs?"}],
            "docdex": {"repo_path": repo.path(), "force_web": true},
        }))
        .timeout(Duration::from_secs(180))
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().unwrap();
    let dx = &body["docdex"];
    assert_eq!(dx["gate"]["decision"], "web", "{dx}");
    let dropped = dx["budget"]["dropped"].as_array().unwrap();
    let dropped_kinds: Vec<&str> = dropped.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    let kept_kinds: Vec<&str> = dx["sources"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert!(dropped_kinds.contains(&"web"), "web is dropped first: {dropped_kinds:?} (kept {kept_kinds:?})");
    assert!(!dropped_kinds.contains(&"memory") && kept_kinds.contains(&"memory"), "memory stays: {dx}");
    if dropped_kinds.contains(&"repo") {
        assert!(!kept_kinds.contains(&"web"), "a repo snippet dropped while web stays: {dx}");
    }
    assert!(kept_kinds.contains(&"repo"), "{dx}");
    assert!(dropped
        .iter()
        .all(|d| d["tokens"].as_u64().unwrap() > 0 && d["reason"].as_str().unwrap().contains("share")));
    // The drops are logged in the session's DAG with their source and size.
    let session = dx["session_id"].as_str().unwrap();
    let view = dag_json(&home, repo.path(), session);
    let decision = view["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["summary"].as_str().unwrap().starts_with("context:"))
        .unwrap()
        .clone();
    assert_eq!(decision["data"]["dropped"].as_array().unwrap().len(), dropped.len(), "{decision}");
    assert_eq!(decision["data"]["dropped"][0]["label"], dropped[0]["label"]);
}

#[test]
fn the_ollama_provider_speaks_ollamas_api() {
    let stub = OllamaStub::start(&["phi3.5:3.8b"], 2048, &["Workers ", "run ", "jobs ", "[2]."]);
    let repo = chat_repo();
    let home = Home::with_config(&format!(
        "[web]\nenabled = false\n\n[llm]\nprovider = \"ollama\"\nbase_url = \"{}\"\ndefault_model = \"phi3.5:3.8b\"\nmax_answer_tokens = 1000\n",
        stub.base_url()
    ));
    prepare(&home, repo.path());
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let client = server.blocking_client();
    let ask = |extra: Value| {
        let mut body = json!({ "messages": [{"role": "user", "content": "How does WorkerPool run jobs?"}] });
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        client.post(server.url("/v1/chat/completions")).json(&body).send().unwrap()
    };

    let plain: Value = ask(json!({})).json().unwrap();
    assert_eq!(plain["choices"][0]["message"]["content"], "Workers run jobs [2].", "{plain}");
    assert_eq!(plain["choices"][0]["finish_reason"], "stop");
    assert_eq!(plain["usage"]["prompt_tokens"], 321);
    assert_eq!(plain["usage"]["completion_tokens"], 4);
    assert_eq!(plain["docdex"]["budget"]["token_count"], "estimate");
    assert_eq!(plain["docdex"]["budget"]["context_window"], 2048);
    let sent = stub.bodies("/api/chat").pop().unwrap();
    assert_eq!(sent["model"], "phi3.5:3.8b");
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["options"]["num_ctx"], 2048, "the window /api/show reported");
    assert_eq!(sent["options"]["num_predict"], 409, "20% of 2048 caps the answer");
    assert_eq!(sent["messages"][0]["role"], "system");
    assert!(sent["messages"][0]["content"].as_str().unwrap().contains("run_detached"), "{sent}");
    assert_eq!(sent["messages"][1]["content"], "How does WorkerPool run jobs?");

    let sse = ask(json!({ "stream": true })).text().unwrap();
    let pieces: Vec<String> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|f| *f != "[DONE]")
        .filter_map(|f| {
            serde_json::from_str::<Value>(f).ok()?["choices"][0]["delta"]["content"].as_str().map(String::from)
        })
        .filter(|p| !p.is_empty())
        .collect();
    assert_eq!(pieces, vec!["Workers ", "run ", "jobs ", "[2]."]);
    assert!(sse.trim_end().ends_with("data: [DONE]"));

    let models: Value = client.get(server.url("/v1/models")).send().unwrap().json().unwrap();
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], "phi3.5:3.8b");

    let missing = ask(json!({ "model": "llama3.1:70b" }));
    assert_eq!(missing.status().as_u16(), 503);
    let missing: Value = missing.json().unwrap();
    assert_eq!(missing["error"]["code"], "llm_unavailable");
    assert!(missing["error"]["message"].as_str().unwrap().contains("ollama pull"), "{missing}");
}

#[test]
fn llm_list_and_setup_follow_simulated_hardware_and_installed_models() {
    let stub = OllamaStub::start(&["llama3.2:1b"], 131072, &[]);
    let home = Home::with_config(&format!(
        "# my settings\n[llm]\n# the provider\nprovider = \"ollama\"\nbase_url = \"{}\"\ndefault_model = \"qwen2.5:0.5b\"\n",
        stub.base_url()
    ));
    let advice = |args: &[&str]| {
        let mut all = vec!["llm-list", "--json"];
        all.extend_from_slice(args);
        home.json(&all)["advice"].clone()
    };
    let small = advice(&["--ram-gb", "6"]);
    assert_eq!(small["tier"]["name"], "ultra-light");
    assert_eq!(small["recommended"], "llama3.2:1b", "the installed ultra-light model wins: {small}");
    assert_eq!(small["hardware"]["simulated"], true);
    let installed = small["models"].as_array().unwrap().iter().find(|m| m["name"] == "llama3.2:1b").unwrap().clone();
    assert_eq!(installed["installed"], true);
    assert_eq!(advice(&["--ram-gb", "12"])["tier"]["name"], "light");
    let default = advice(&["--ram-gb", "16"]);
    assert_eq!(
        (default["tier"]["name"].as_str(), default["recommended"].as_str()),
        (Some("default"), Some("phi3.5:3.8b"))
    );
    let big = advice(&["--ram-gb", "64", "--vram-gb", "24"]);
    assert_eq!(big["tier"]["name"], "large");
    assert_eq!(big["recommended"], "phi3.5:3.8b", "the 70B is suggested only when present: {big}");
    assert!(big["notes"].to_string().contains("llama3.1:70b"));
    assert_eq!(advice(&["--ram-gb", "64"])["tier"]["name"], "default", "no GPU, no large tier");

    // The server down: advice still comes, with installed unknown.
    let offline = Home::with_config("[llm]\nbase_url = \"http://127.0.0.1:9\"\nretries = 0\n");
    let out = offline.json(&["llm-list", "--json", "--ram-gb", "16"]);
    assert!(out["server_error"].as_str().unwrap().contains("cannot reach"), "{out}");
    assert!(out["advice"]["models"][0]["installed"].is_null());
    // `check` reports the LLM server: down is a warning with the fix, up names the model.
    let checked = offline.run(&["check"]);
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(
        report.contains("warn  llm") && report.contains("http://127.0.0.1:9") && report.contains("ollama serve"),
        "{report}"
    );
    let report = String::from_utf8_lossy(&home.run(&["check"]).stdout).to_string();
    assert!(report.contains("does not have qwen2.5:0.5b (it has: llama3.2:1b)"), "{report}");

    // llm-setup: shows, and writes only with --yes, keeping the file's comments.
    let config_path = home.dir.path().join("config.toml");
    let out = home.run(&["llm-setup", "--ram-gb", "16"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ollama pull phi3.5:3.8b") && text.contains("--yes"), "{text}");
    assert!(std::fs::read_to_string(&config_path).unwrap().contains("default_model = \"qwen2.5:0.5b\""));
    let out = home.run(&["llm-setup", "--ram-gb", "16", "--yes"]);
    assert_eq!(out.status.code(), Some(0));
    let config = std::fs::read_to_string(&config_path).unwrap();
    assert!(config.contains("default_model = \"phi3.5:3.8b\"") && config.contains("# the provider"), "{config}");
    // Nothing was pulled: the stub only ever saw the model list.
    assert!(stub.requests.lock().unwrap().iter().all(|(path, _)| path == "/api/tags"));
}

/// `--diff`: the change's code and what directly uses it come first among the sources, after
/// memory and before the rest of the repo, and say they came from the diff.
#[test]
fn chat_with_a_diff_puts_its_code_before_the_rest_of_the_repo() {
    let llm = LlmServer::start(&["--n-predict", "16"]);
    let repo = crate::impact::fixture_repo("rust");
    let home = chat_home(&llm.base_url, "max_answer_tokens = 16");
    let repo_arg = repo.path().to_str().unwrap();
    home.json(&["index", "--repo", repo_arg, "--json"]);
    crate::impact::edit(repo.path(), "src/pricing.rs", "total / 10", "total / 20");
    let ask = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["chat", "--repo", repo_arg, "--json", "--query", "How is the tax of a cart computed?"];
        args.extend(extra);
        let answer = home.json(&args);
        answer["docdex"]["sources"].as_array().unwrap().clone()
    };
    let with = ask(&["--diff"]);
    let kinds: Vec<&str> = with.iter().map(|s| s["kind"].as_str().unwrap()).collect();
    let first_repo = kinds.iter().position(|k| *k == "repo").unwrap_or(kinds.len());
    let last_diff = kinds.iter().rposition(|k| *k == "diff").expect("diff sources");
    assert!(last_diff < first_repo, "the diff's sources come before the repo's: {kinds:?}");
    let diff_paths: Vec<&str> =
        with.iter().filter(|s| s["kind"] == "diff").map(|s| s["path"].as_str().unwrap()).collect();
    assert!(diff_paths.contains(&"src/pricing.rs") && diff_paths.contains(&"src/cart.rs"), "{with:?}");
    // Without the diff, nothing is said to come from it.
    let without = ask(&[]);
    assert!(without.iter().all(|s| s["kind"] != "diff"), "{without:?}");
}

/// A pack on tokio's source at several budgets: counted again by the LLM server's own
/// tokenizer, its sections never pass the budget; no two overlap; the savings line says what
/// the numbers are, over the whole files the sections come from.
#[test]
fn a_pack_never_passes_its_budget_by_the_tokenizers_count_and_says_what_it_saves() {
    let llm = LlmServer::start(&["--n-predict", "16"]);
    let home = chat_home(&llm.base_url, "");
    let tokio = crate::common::tokio_source();
    let repo_arg = tokio.to_str().unwrap();
    home.index(&tokio);
    let tokenize = |text: &str| -> usize {
        let body: Value = reqwest::blocking::Client::new()
            .post(format!("{}/tokenize", llm.base_url))
            .json(&serde_json::json!({ "content": text }))
            .send()
            .unwrap()
            .json()
            .unwrap();
        body["tokens"].as_array().unwrap().len()
    };
    let question = "how does the scheduler steal work from another worker's queue";
    let mut previous = 0;
    for budget in [200usize, 1500, 6000] {
        let pack = home.json(&["pack", "--repo", repo_arg, "--budget", &budget.to_string(), "--json", question]);
        assert_eq!(pack["exact"], true, "{pack}");
        let sections = pack["sections"].as_array().unwrap();
        assert!(!sections.is_empty(), "budget {budget}: {pack}");
        let mut total = 0;
        for s in sections {
            let counted = tokenize(s["text"].as_str().unwrap());
            assert_eq!(counted as u64, s["tokens"].as_u64().unwrap(), "{s}");
            total += counted;
        }
        assert!(total <= budget, "budget {budget}: {total} tokens");
        assert_eq!(pack["tokens"].as_u64().unwrap() as usize, total);
        assert!(total * 2 >= previous.min(budget), "a bigger budget holds at least as much: {total} after {previous}");
        previous = total;
        // None repeated: no two sections of a file overlap.
        for (i, a) in sections.iter().enumerate() {
            for b in &sections[i + 1..] {
                let overlap = a["path"] == b["path"]
                    && a["start_line"].as_u64() <= b["end_line"].as_u64()
                    && b["start_line"].as_u64() <= a["end_line"].as_u64();
                assert!(!overlap, "{a} overlaps {b}");
            }
        }
        // The savings line: the whole files, counted by the same tokenizer.
        let mut paths: Vec<&str> = sections.iter().map(|s| s["path"].as_str().unwrap()).collect();
        paths.sort();
        paths.dedup();
        let raw: usize = paths.iter().map(|p| tokenize(&std::fs::read_to_string(tokio.join(p)).unwrap())).sum();
        assert_eq!(pack["raw_tokens"].as_u64().unwrap() as usize, raw, "{pack}");
        assert_eq!(pack["files"].as_u64().unwrap() as usize, paths.len());
        let saved = 100 - (total * 100).div_ceil(raw);
        let summary = pack["summary"].as_str().unwrap();
        let noun = if paths.len() == 1 { "file" } else { "files" };
        assert!(summary.ends_with(&format!("in {} {noun}: {saved} % saved", paths.len())), "{summary}");
    }
    // A budget outside its bounds is refused with its bounds.
    let out = home.run(&["pack", "--repo", repo_arg, "--budget", "0", question]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("budget_tokens must be between 1 and"));
}
