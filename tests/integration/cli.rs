//! CLI behaviour: exit codes, JSON shape, errors with hints, `check`.

use crate::common::{hit_paths, sample_repo, Home};

#[test]
fn search_json_shape_and_exit_codes() {
    let repo = sample_repo();
    let home = Home::new();
    home.index(repo.path());
    let response = home.search(repo.path(), "render_quarterly_report");
    for key in ["query", "took_ms", "top_score", "hits"] {
        assert!(response.get(key).is_some(), "missing {key} in {response}");
    }
    let hit = &response["hits"][0];
    assert_eq!(hit["path"], "scripts/report.py");
    assert_eq!((hit["line_start"].as_u64(), hit["line_end"].as_u64()), (Some(1), Some(3)));
    assert_eq!(hit["language"], "python");
    assert_eq!(hit["source"], "repo");
    assert_eq!(hit["heading"], "render_quarterly_report");
    assert!(hit["snippet"].as_str().unwrap().contains("def render_quarterly_report"));
    let confidence = response["top_score"].as_f64().unwrap();
    assert!(confidence > 0.0 && confidence <= 1.0, "{response}");
    // No model in this home: the search ran lexically and says what is missing, rather
    // than promising embeddings that will never come.
    assert_eq!(response["mode"], "lexical");
    let notice = response["notice"].as_str().unwrap_or_default();
    assert!(notice.contains("semantic search unavailable") && notice.contains("models install"), "{response}");

    // Markdown hits carry their heading path.
    let md = home.search(repo.path(), "zanzibar scope");
    assert_eq!(md["hits"][0]["heading"], "Guide > Auth > OAuth");

    // Identifier parts match: camelCase split.
    assert_eq!(
        hit_paths(&home.search(repo.path(), "oauth scopes verify")).first().map(String::as_str),
        Some("web/auth.ts")
    );

    let none = home.run(&["search", "--repo", repo.path().to_str().unwrap(), "xylophonequartz"]);
    assert_eq!(none.status.code(), Some(1));
    let human = home.run(&["search", "--repo", repo.path().to_str().unwrap(), "WorkerPool"]);
    assert_eq!(human.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&human.stdout).contains("src/pool.rs:"));
}

#[test]
fn unknown_and_unindexed_repos_are_clear_errors() {
    let home = Home::new();
    let missing = home.run(&["search", "--repo", "/definitely/not/here", "x"]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("does not exist") && stderr.contains("hint:"), "{stderr}");

    let never = tempfile::tempdir().unwrap();
    let out = home.run(&["search", "--repo", never.path().to_str().unwrap(), "x"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not indexed") && stderr.contains("docdexd index --repo"), "{stderr}");

    let status = home.run(&["status", "--repo", never.path().to_str().unwrap()]);
    assert_eq!(status.status.code(), Some(2));

    let bad_limit = home.run(&["search", "--repo", never.path().to_str().unwrap(), "--limit", "0", "x"]);
    assert_eq!(bad_limit.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_limit.stderr).contains("limit must be between 1 and"));

    // An argument the command line itself refuses: with --json, the error object on stdout.
    let not_a_number = home.run(&["map", "--repo", never.path().to_str().unwrap(), "--budget-tokens", "abc", "--json"]);
    assert_eq!(not_a_number.status.code(), Some(2));
    let error: serde_json::Value = serde_json::from_slice(&not_a_number.stdout).unwrap();
    assert_eq!(error["error"]["code"], "invalid_request", "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("--budget-tokens"), "{error}");
    let plain = home.run(&["map", "--repo", never.path().to_str().unwrap(), "--budget-tokens", "abc"]);
    assert_eq!(plain.status.code(), Some(2));
    assert!(plain.stdout.is_empty() && String::from_utf8_lossy(&plain.stderr).contains("--budget-tokens"));
}

#[test]
fn config_is_created_with_defaults_and_unknown_keys_warned() {
    let home = Home::with_config("[search]\nmax_repo_hits = 3\nmax_rpeo_hits = 4\n");
    let repo = sample_repo();
    let out = home.run(&["index", "--repo", repo.path().to_str().unwrap()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("search.max_rpeo_hits"));

    let fresh = Home::new();
    // The first command of a fresh home writes the config; check says so on its first line
    // and fails only with a FAIL line to show for it.
    let checked = fresh.run(&["check"]);
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(report.starts_with("ok    config"), "{report}");
    match checked.status.code() {
        Some(0) => assert!(!report.contains("FAIL"), "{report}"),
        Some(1) => assert!(report.contains("FAIL"), "{report}"),
        other => panic!("check exited with {other:?}: {report}"),
    }
    let written = std::fs::read_to_string(fresh.dir.path().join("config.toml")).unwrap();
    // Every setting is shown at its default but commented out, so a later version's
    // defaults reach this home.
    assert!(written.contains("[search]") && written.contains("\n# web_trigger_threshold = 0.7\n"), "{written}");
    assert!(!report.contains("expand_embedding"), "{report}");

    // A file an older version wrote holds that version's defaults; check points out the one
    // that changed since.
    let old = Home::with_config("[search]\nexpand_embedding = false\n");
    let report = String::from_utf8_lossy(&old.run(&["check"]).stdout).to_string();
    assert!(report.contains("warn  config") && report.contains("expand_embedding = false"), "{report}");

    let broken = Home::with_config("[search]\nmax_repo_hits = \"ten\"\n");
    let out = broken.run(&["status", "--repo", "."]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("max_repo_hits") && stderr.contains("hint:"), "{stderr}");
}

#[test]
fn check_passes_and_fails_with_a_hint_on_an_unwritable_state_dir() {
    let home = Home::new();
    let ok = home.cmd().arg("check").env("DOCDEX_HTTP_BIND_ADDR", "127.0.0.1:0").output().unwrap();
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert_eq!(ok.status.code(), Some(0), "{stdout}");
    for check in ["config", "state dir", "registry", "bind"] {
        assert!(stdout.lines().any(|l| l.starts_with("ok") && l.contains(check)), "{check} not ok in {stdout}");
    }

    // A regular file where the state dir should be: unwritable even for root.
    let blocker = home.dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let failed = home
        .cmd()
        .arg("check")
        .env("DOCDEX_HTTP_BIND_ADDR", "127.0.0.1:0")
        .env("DOCDEX_STATE_DIR", blocker.join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert_eq!(failed.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  state dir"), "{stdout}");
    assert!(stdout.contains("hint: fix its permissions"), "{stdout}");

    // A busy bind address fails too.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = listener.local_addr().unwrap().to_string();
    let failed = home.cmd().arg("check").env("DOCDEX_HTTP_BIND_ADDR", &busy).output().unwrap();
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert_eq!(failed.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  bind"), "{stdout}");
}

#[test]
fn bench_scores_judged_questions_beside_the_whole_file_yardstick() {
    let repo = crate::common::repo_with(&[
        ("src/time/sleep.rs", "/// Waits until the timer fires.\npub fn sleep_until(deadline: Instant) {}\n"),
        ("src/io/copy.rs", "/// Copies all bytes from a reader into a writer.\npub async fn copy() {}\n"),
        ("README.md", "# Demo\n\nA small crate.\n"),
    ]);
    let questions = tempfile::tempdir().unwrap();
    let file = questions.path().join("demo-questions.tsv");
    // The first shares no exact word with its file: only stemming ("timers" → timer) finds it.
    std::fs::write(
        &file,
        "# judged questions\ntimers firing\tsrc/time/sleep.rs\tplain\ncopies bytes from a reader\tsrc/io/copy.rs\tplain\n",
    )
    .unwrap();
    let home = Home::new();
    let report = home.bench_json(&[
        "bench",
        "--repo",
        repo.path().to_str().unwrap(),
        "--lexical-only",
        "--index-runs",
        "1",
        "--queries",
        "5",
        "--questions",
        file.to_str().unwrap(),
        "--json",
    ]);
    let questions = &report["questions"];
    let success = |mode: &str| {
        questions["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["split"] == "demo-questions" && s["mode"] == mode && s["kind"] == "all")
            .unwrap_or_else(|| panic!("no {mode} summary: {questions}"))["success_at_5"]
            .as_f64()
    };
    assert_eq!(success("file-bm25"), Some(0.5), "{questions}");
    assert_eq!(success("lexical"), Some(1.0), "{questions}");
    let ranks = |i: usize| &questions["questions"][i]["ranks"];
    assert_eq!(ranks(0)["file-bm25"], serde_json::Value::Null, "{questions}");
    assert_eq!(ranks(0)["lexical"], 1, "{questions}");
    assert_eq!(ranks(1)["file-bm25"], 1, "{questions}");
    // Misses are docdex's own: the yardstick's miss is not listed.
    assert_eq!(questions["misses"].as_array().map(Vec::len), Some(0), "{questions}");
}

#[test]
fn eval_scores_a_small_trec_collection() {
    let dataset = tempfile::tempdir().unwrap();
    let docs = [
        ("D1", "dielectric constant of liquids measured with microwaves"),
        ("D2", "waveguide fed microwave antenna radiation patterns"),
        ("D3", "digital computer design of band pass filters"),
        ("D4", "coding systems for information transfer over noisy channels"),
    ];
    let corpus: String =
        docs.iter().map(|(no, text)| format!("<DOC>\n<DOCNO>{no}</DOCNO>\n{text}\n</DOC>\n")).collect();
    std::fs::create_dir_all(dataset.path().join("corpus")).unwrap();
    std::fs::write(dataset.path().join("corpus/docs.trec"), corpus).unwrap();
    std::fs::write(
        dataset.path().join("topics.trec"),
        "<top>\n<num>1</num><title>\nDIELECTRIC CONSTANT OF LIQUIDS\n</title>\n</top>\n<top>\n<num>2</num><title>\nBAND PASS FILTER DESIGN\n</title>\n</top>\n<top>\n<num>3</num><title>\nUNJUDGED TOPIC\n</title>\n</top>\n",
    )
    .unwrap();
    std::fs::write(dataset.path().join("qrels"), "1 0 D1 1\n2 0 D3 1\n2 0 D4 0\n").unwrap();

    let home = Home::new();
    let report = home.bench_json(&["eval", "--dataset", dataset.path().to_str().unwrap(), "--json"]);
    assert_eq!(report["documents"], 4);
    assert_eq!(report["topics"], 2, "the unjudged topic is not scored");
    let lexical = &report["modes"][0];
    assert_eq!(lexical["mode"], "lexical");
    for metric in ["map", "ndcg_at_10", "recall_at_100", "mrr_at_10"] {
        assert_eq!(lexical[metric].as_f64(), Some(1.0), "{metric}: {report}");
    }

    let not_trec = home.bench_cmd().args(["eval", "--dataset", home.dir.path().to_str().unwrap()]).output().unwrap();
    assert_eq!(not_trec.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_trec.stderr).contains("is not a TREC collection"));
}

#[test]
fn a_tampered_onnx_runtime_is_never_loaded() {
    // A copy of the installed model whose runtime library has one byte more.
    let models = tempfile::tempdir().unwrap();
    let installed = crate::common::models_dir();
    for sub in ["all-MiniLM-L6-v2-int8", "onnxruntime"] {
        std::fs::create_dir_all(models.path().join(sub)).unwrap();
        for entry in std::fs::read_dir(installed.join(sub)).unwrap().flatten() {
            std::fs::copy(entry.path(), models.path().join(sub).join(entry.file_name())).unwrap();
        }
    }
    let lib = models.path().join("onnxruntime/libonnxruntime.so.1.31.1");
    let mut bytes = std::fs::read(&lib).unwrap();
    bytes.push(0);
    std::fs::write(&lib, bytes).unwrap();

    let home = Home::new();
    let run = |args: &[&str]| home.cmd().env("DOCDEX_MODELS_DIR", models.path()).args(args).output().unwrap();
    let check = run(&["check"]);
    let report = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{report}");
    assert!(report.contains("FAIL  model") && report.contains("pinned checksum"), "{report}");
    let repo = sample_repo();
    let repo_arg = repo.path().to_str().unwrap();
    assert_eq!(run(&["index", "--repo", repo_arg]).status.code(), Some(0));
    let out = run(&["search", "--repo", repo_arg, "--mode", "dense", "--json", "worker pool"]);
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(response["mode"], "lexical", "{response}");
    assert!(response["notice"].as_str().unwrap().contains("pinned checksum"), "{response}");
}

#[test]
fn get_and_multi_get_read_files_and_chunks() {
    let repo = sample_repo();
    let home = Home::new();
    home.index(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let found = home.search(repo.path(), "render_quarterly_report");
    let chunk_id = found["hits"][0]["chunk_id"].as_u64().unwrap().to_string();
    let chunk = home.json(&["get", "--repo", repo_arg, "--chunk-id", &chunk_id, "--json"]);
    assert_eq!(chunk["path"], "scripts/report.py");
    assert!(chunk["text"].as_str().unwrap().contains("def render_quarterly_report"), "{chunk}");
    let file = home.json(&["get", "--repo", repo_arg, "--line-start", "2", "--json", "src/pool.rs"]);
    assert_eq!((file["line_start"].as_u64(), file["total_lines"].as_u64()), (Some(2), Some(11)), "{file}");
    // `open` is the same command; a symbol gives its definition's lines.
    let method = home.json(&["open", "--repo", repo_arg, "--symbol", "run_detached", "--json"]);
    assert_eq!((method["path"].as_str(), method["line_start"].as_u64()), (Some("src/pool.rs"), Some(8)), "{method}");
    assert_eq!(method["line_end"].as_u64(), Some(10), "{method}");
    let neither = home.run(&["get", "--repo", repo_arg]);
    assert_eq!(neither.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&neither.stderr).contains("give path"),
        "{}",
        String::from_utf8_lossy(&neither.stderr)
    );
    let many = home.json(&["multi-get", "--repo", repo_arg, "--glob", "**/*.{py,ts}", "--json"]);
    let paths: Vec<&str> = many["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths.len(), 2, "{many}");
    let listed = home.json(&["multi-get", "--repo", repo_arg, "--json", "src/pool.rs", "src/missing.rs"]);
    assert_eq!(listed["files"][0]["path"], "src/pool.rs");
    assert_eq!(listed["missing"][0]["path"], "src/missing.rs", "{listed}");
    let gone = home.run(&["get", "--repo", repo_arg, "--chunk-id", "999999"]);
    assert_eq!(gone.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("no chunk 999999"));
}

/// `setup` writes every agent's file in its format, keeps the servers already there, backs
/// the old file up, changes nothing on a second run, and `--check` sees it.
#[test]
fn setup_configures_every_agent_and_keeps_what_is_there() {
    let fake_home = tempfile::tempdir().unwrap();
    let home = Home::new();
    let run = |args: &[&str]| home.cmd().env("HOME", fake_home.path()).args(args).output().unwrap();
    let other_json = r#"{"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}"#;
    let existing = [
        (".claude.json", other_json.to_string()),
        (".cursor/mcp.json", other_json.to_string()),
        (
            ".config/Code/User/mcp.json",
            r#"{"servers": {"other": {"type": "stdio", "command": "other-server"}}}"#.to_string(),
        ),
        (
            ".codex/config.toml",
            "# my codex settings\nmodel = \"o4\"\n\n[mcp_servers.other]\ncommand = \"other-server\"\n".to_string(),
        ),
        (".gemini/settings.json", other_json.to_string()),
        (".config/Claude/claude_desktop_config.json", other_json.to_string()),
    ];
    for (path, text) in &existing {
        crate::common::write(fake_home.path(), path, text);
    }
    let out = run(&["setup"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.matches("written").count(), 7, "{stdout}");

    let json = |path: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(fake_home.path().join(path)).unwrap()).unwrap()
    };
    for path in [
        ".claude.json",
        ".cursor/mcp.json",
        ".gemini/settings.json",
        ".config/Claude/claude_desktop_config.json",
        ".codeium/windsurf/mcp_config.json",
    ] {
        let config = json(path);
        let docdex = &config["mcpServers"]["docdex"];
        assert_eq!(docdex["args"][0], "mcp", "{path}: {config}");
        assert!(docdex["command"].as_str().unwrap().ends_with("docdexd"), "{path}: {config}");
        // The session the client starts must use this (non-default) home.
        assert_eq!(docdex["env"]["DOCDEX_HOME"], home.dir.path().to_str().unwrap(), "{path}: {config}");
        if path != ".codeium/windsurf/mcp_config.json" {
            assert_eq!(config["mcpServers"]["other"]["command"], "other-server", "{path} lost a server");
        }
    }
    assert_eq!(json(".claude.json")["theme"], "dark");
    let vscode = json(".config/Code/User/mcp.json");
    assert_eq!(
        (vscode["servers"]["docdex"]["type"].as_str(), vscode["servers"]["other"]["command"].as_str()),
        (Some("stdio"), Some("other-server"))
    );
    let codex = std::fs::read_to_string(fake_home.path().join(".codex/config.toml")).unwrap();
    let parsed: toml::Value = toml::from_str(&codex).unwrap();
    assert_eq!(parsed["mcp_servers"]["docdex"]["args"][0].as_str(), Some("mcp"), "{codex}");
    assert_eq!(parsed["mcp_servers"]["docdex"]["env"]["DOCDEX_HOME"].as_str(), home.dir.path().to_str(), "{codex}");
    assert_eq!(parsed["mcp_servers"]["other"]["command"].as_str(), Some("other-server"));
    assert!(codex.starts_with("# my codex settings"), "comments kept: {codex}");
    let backups =
        |dir: &std::path::Path| -> usize { walk_names(dir).iter().filter(|n| n.contains(".docdex-backup-")).count() };
    assert_eq!(backups(fake_home.path()), 6, "one backup per file that existed");

    // Idempotent: nothing written, nothing backed up.
    let again = run(&["setup"]);
    assert_eq!(String::from_utf8_lossy(&again.stdout).matches("already set").count(), 7);
    assert_eq!(backups(fake_home.path()), 6);
    let check = run(&["setup", "--check"]);
    assert_eq!(String::from_utf8_lossy(&check.stdout).matches(" configured").count(), 7);

    // --http --dry-run shows the HTTP form with the token and writes nothing.
    let before = std::fs::read_to_string(fake_home.path().join(".cursor/mcp.json")).unwrap();
    let dry = run(&["setup", "--agent", "cursor", "--http", "--dry-run"]);
    let shown = String::from_utf8_lossy(&dry.stdout);
    let token = std::fs::read_to_string(home.dir.path().join("token")).unwrap();
    assert!(shown.contains("/v1/mcp") && shown.contains(&format!("Bearer {}", token.trim())), "{shown}");
    assert_eq!(std::fs::read_to_string(fake_home.path().join(".cursor/mcp.json")).unwrap(), before);

    // A project file with --repo; a broken file is left alone with a clear error.
    let repo = crate::common::sample_repo();
    let out = run(&["setup", "--agent", "claude-code", "--repo", repo.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let project: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(
        project["mcpServers"]["docdex"]["args"][2],
        std::fs::canonicalize(repo.path()).unwrap().to_str().unwrap()
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("token"), "no token, no warning");
    // The HTTP form in a project file (teams commit it) names the token, never holds it:
    // VS Code through a password input, Claude Code through an environment variable; the
    // user is told where the value is.
    let http = run(&["setup", "--agent", "vscode", "--http", "--repo", repo.path().to_str().unwrap()]);
    assert_eq!(http.status.code(), Some(0), "{}", String::from_utf8_lossy(&http.stderr));
    let stderr = String::from_utf8_lossy(&http.stderr);
    assert!(stderr.contains("asks for it once") && stderr.contains("token"), "{stderr}");
    let vscode_text = std::fs::read_to_string(repo.path().join(".vscode/mcp.json")).unwrap();
    assert!(!vscode_text.contains(token.trim()), "the token's value is not in the project file: {vscode_text}");
    let vscode: serde_json::Value = serde_json::from_str(&vscode_text).unwrap();
    assert_eq!(vscode["servers"]["docdex"]["headers"]["Authorization"], "Bearer ${input:docdex-token}");
    assert_eq!(vscode["inputs"][0]["id"], "docdex-token");
    assert_eq!(vscode["inputs"][0]["password"], true);
    let again = run(&["setup", "--agent", "vscode", "--http", "--repo", repo.path().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("already set"), "the input is declared once");
    let claude = run(&["setup", "--agent", "claude-code", "--http", "--repo", repo.path().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&claude.stderr).contains("set DOCDEX_AUTH_TOKEN"));
    let project_text = std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap();
    assert!(!project_text.contains(token.trim()), "{project_text}");
    assert!(project_text.contains("Bearer ${DOCDEX_AUTH_TOKEN}"), "{project_text}");
    crate::common::write(fake_home.path(), ".gemini/settings.json", "{ not json");
    let broken = run(&["setup", "--agent", "gemini"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&broken.stdout).contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(fake_home.path().join(".gemini/settings.json")).unwrap(), "{ not json");
    let unknown = run(&["setup", "--agent", "emacs"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("claude-code, cursor"));
}

fn walk_names(dir: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.path().is_dir() {
            names.extend(walk_names(&entry.path()));
        } else {
            names.push(entry.file_name().to_string_lossy().to_string());
        }
    }
    names
}

/// A fresh home and everything in it are private to the user: folders 0700, files 0600
/// (the index holds the repo's text; the config may hold a token).
#[test]
fn a_fresh_home_and_what_it_holds_are_private() {
    let scratch = tempfile::tempdir().unwrap();
    let fresh = scratch.path().join("fresh-home");
    let home = Home::new();
    let repo = crate::common::repo_with(&[("src/lib.rs", "pub fn private_text() {}\n")]);
    let out = home
        .cmd()
        .env("DOCDEX_HOME", &fresh)
        .args(["index", "--repo", repo.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![fresh.clone()];
    let mut seen = 0;
    while let Some(path) = stack.pop() {
        let mode = std::fs::symlink_metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{} is mode {:o}", path.display(), mode & 0o777);
        seen += 1;
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    assert!(seen > 5, "only {seen} entries under the home");
}

/// A reader that goes away (`docdexd check | true`) and a request refused before any work
/// (`search --source bogus`) end the command with its exit code, never a panic (101).
#[test]
fn a_closed_pipe_or_an_early_refusal_never_panics() {
    let home = Home::new();
    for _ in 0..3 {
        let mut child = home
            .cmd()
            .arg("check")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{:?}: {stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let repo = crate::common::repo_with(&[("src/lib.rs", "pub fn a() {}\n")]);
    let out = home.run(&["search", "--repo", repo.path().to_str().unwrap(), "--source", "bogus", "x"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown source") && !stderr.contains("panicked"), "{stderr}");
}

/// `--repo` defaults to the current directory and says what it is in `--help`.
#[test]
fn the_repo_defaults_to_the_current_directory() {
    let home = Home::new();
    let repo = crate::common::repo_with(&[("src/lib.rs", "pub fn here_by_default() {}\n")]);
    let out = home.cmd().current_dir(repo.path()).args(["index", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let search = home.cmd().current_dir(repo.path()).args(["search", "--json", "here_by_default"]).output().unwrap();
    let body: serde_json::Value = serde_json::from_slice(&search.stdout).unwrap();
    assert_eq!(crate::common::hit_paths(&body).first().map(String::as_str), Some("src/lib.rs"), "{body}");
    let help = String::from_utf8_lossy(&home.run(&["search", "--help"]).stdout).to_string();
    assert!(help.contains("--repo <REPO>") && help.contains("root folder"), "{help}");
}

/// `--json` answers in JSON on failure too, `check --json` is one object, and `check` says
/// when the web tier is on but its discovery endpoint cannot be reached.
#[test]
fn json_errors_check_json_and_an_unreachable_web_tier() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let home = Home::with_config(&format!("[web]\nddg_base_url = \"http://{closed}/html/\"\n"));
    let missing = std::env::temp_dir().join("docdex-no-such-repo");
    let out = home.run(&["search", "--repo", missing.to_str().unwrap(), "--json", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let error: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["error"]["code"], "repo_not_found", "{error}");

    let out = home.run(&["check", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let web = report["checks"].as_array().unwrap().iter().find(|c| c["name"] == "web").unwrap().clone();
    assert_eq!(web["status"], "warn", "{report}");
    assert!(web["detail"].as_str().unwrap().contains("cannot be reached"), "{report}");
    assert!(web["hint"].as_str().unwrap().contains("enabled = false"), "{report}");
    assert_eq!(report["ok"], out.status.code() == Some(0), "{report}");
}

/// `files` lists the indexed files from the shell, as MCP's `docdex_files` and
/// `GET /v1/files` do, with one default for all three.
#[test]
fn files_lists_the_indexed_files_on_every_surface() {
    let home = Home::new();
    let repo = crate::common::repo_with(&[
        ("src/lib.rs", "pub fn a() {}\n"),
        ("src/util.rs", "pub fn b() {}\n"),
        ("README.md", "# Readme\n\nText.\n"),
    ]);
    home.index(repo.path());
    let listed = home.json(&["files", "--repo", repo.path().to_str().unwrap(), "--glob", "src/*.rs", "--json"]);
    let paths: Vec<&str> = listed["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["src/lib.rs", "src/util.rs"], "{listed}");
    let out = home.run(&["files", "--repo", repo.path().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("README.md  (markdown"), "{out:?}");

    let server = crate::common::Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let body: serde_json::Value =
        server.blocking_client().get(server.url("/v1/files?glob=*.md")).send().unwrap().json().unwrap();
    assert_eq!(body["files"][0]["path"], "README.md", "{body}");
    assert_eq!(body["total"], 1, "{body}");
}

/// `get --json` gives the file's lines as they are; the text output numbers them.
#[test]
fn get_json_gives_the_lines_as_they_are() {
    let home = Home::new();
    let repo = crate::common::repo_with(&[("src/lib.rs", "pub fn a() {}\npub fn b() {}\n")]);
    home.index(repo.path());
    let path = repo.path().to_str().unwrap();
    let file = home.json(&["get", "--repo", path, "--json", "src/lib.rs"]);
    assert_eq!(file["text"], "pub fn a() {}\npub fn b() {}", "{file}");
    let out = home.run(&["get", "--repo", path, "--line-start", "2", "src/lib.rs"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2 | pub fn b() {}\n");
}
