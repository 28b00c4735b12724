//! Code intelligence end to end: the interface over real HTTP and the CLI (the MCP tools in
//! `mcp.rs`), its bounds and errors, the parser-drift 409, and code facts after a kill in
//! the middle of an index run.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{get, write, Home, Server};

/// A repo of two fixture projects (Rust and Python) side by side.
fn code_repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/code");
    for language in ["rust", "python"] {
        copy_dir(&fixtures.join(language), &repo.path().join(language));
    }
    repo
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The test hook that makes a run count as one with other grammars.
const SALT: &str = "DOCDEX_TEST_GRAMMAR_SALT";

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn the_interface_answers_over_http_and_the_cli_with_bounds_and_clear_errors() {
    let repo = code_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::new();
    home.index(repo.path());
    let server = Server::start(&home, &["--repo", repo_arg]);
    let token = server.token();
    let url = |path: &str| server.url(path);

    // Definitions: plain, qualified (both separators), pattern, kind and language filters.
    let (status, body) = get(&url("/v1/symbols?name=Cart&kind=struct"), token).await;
    assert_eq!(status, 200, "{body}");
    let cart = &body["symbols"][0];
    for field in ["name", "qualified_name", "kind", "path", "line", "end_line", "signature", "container", "language"] {
        assert!(cart.get(field).is_some(), "{field} missing: {cart}");
    }
    assert_eq!(
        (cart["path"].as_str(), cart["line"].as_u64(), cart["end_line"].as_u64()),
        (Some("rust/src/cart.rs"), Some(6), Some(8))
    );
    let (_, body) = get(&url("/v1/symbols?name=Cart::add"), token).await;
    assert_eq!(body["symbols"][0]["path"], "rust/src/cart.rs", "{body}");
    let (_, body) = get(&url("/v1/symbols?name=Cart.add&language=python"), token).await;
    assert_eq!(
        (body["symbols"][0]["path"].as_str(), body["symbols"][0]["line"].as_u64()),
        (Some("python/shop/cart.py"), Some(13)),
        "{body}"
    );
    let (_, body) = get(&url("/v1/symbols?name=Cart*"), token).await;
    assert!(body["total"].as_u64().unwrap() >= 2, "{body}");

    // Paging: a page of one says where the next starts; the next page is another entry.
    let (_, first) = get(&url("/v1/symbols?name=*&limit=1"), token).await;
    assert_eq!(first["symbols"].as_array().unwrap().len(), 1);
    let next = first["next_offset"].as_u64().unwrap();
    let (_, second) = get(&url(&format!("/v1/symbols?name=*&limit=1&offset={next}")), token).await;
    assert_ne!(first["symbols"][0], second["symbols"][0]);
    assert!(first["total"].as_u64().unwrap() > 20, "{first}");

    // References, picked by the definition's place; the definition itself is not listed.
    let (status, refs) = get(&url("/v1/references?name=check&path=rust/src/util/strings.rs&line=2"), token).await;
    assert_eq!(status, 200, "{refs}");
    assert_eq!(refs["symbol"]["path"], "rust/src/util/strings.rs");
    let list = refs["references"].as_array().unwrap();
    assert!(
        list.iter().any(|r| r["path"] == "rust/src/cart.rs"
            && r["line"] == 21
            && r["kind"] == "call"
            && r["resolution"] == "import"),
        "{refs}"
    );
    assert!(!list.iter().any(|r| r["path"] == "rust/src/util/strings.rs" && r["line"] == 2), "{refs}");
    for r in list {
        for field in ["path", "line", "column", "kind", "confidence", "resolution"] {
            assert!(r.get(field).is_some(), "{field} missing: {r}");
        }
    }
    // The same name in Python is another definition: picked by its path and line.
    let (_, py) = get(&url("/v1/references?name=check&path=python/shop/helpers.py&line=4"), token).await;
    let py_refs = py["references"].as_array().unwrap();
    assert!(py_refs.iter().all(|r| r["path"].as_str().unwrap().starts_with("python/")), "{py}");
    assert!(py_refs.iter().any(|r| r["path"] == "python/shop/cart.py" && r["line"] == 14), "{py}");
    // A use's place picks the definition it resolves to.
    let (_, by_use) = get(&url("/v1/references?name=check&path=rust/src/cart.rs&line=21"), token).await;
    assert_eq!(by_use["symbol"]["path"], "rust/src/util/strings.rs", "{by_use}");

    // Callers and callees.
    let (_, callers) = get(&url("/v1/callers?name=check&path=rust/src/util/strings.rs&line=2"), token).await;
    let c = &callers["callers"][0];
    assert_eq!(
        (c["name"].as_str(), c["path"].as_str(), c["call_path"].as_str(), c["call_line"].as_u64()),
        (Some("add"), Some("rust/src/cart.rs"), Some("rust/src/cart.rs"), Some(21)),
        "{callers}"
    );
    assert!(c["confidence"].as_f64().unwrap() > 0.5);
    let (_, callees) = get(&url("/v1/callees?name=Cart::add"), token).await;
    let names: Vec<&str> = callees["callees"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"check") && names.contains(&"log"), "{callees}");

    // Impact: edges both ways, unresolved imports listed with their line.
    let (status, impact) = get(&url("/v1/graph/impact?file=python/shop/cart.py"), token).await;
    assert_eq!(status, 200, "{impact}");
    assert_eq!(impact["file"], "python/shop/cart.py");
    let imports: Vec<&str> =
        impact["imports"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(imports, ["python/shop/helpers.py"], "{impact}");
    let importers: Vec<&str> =
        impact["imported_by"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert!(importers.contains(&"python/shop/__init__.py") && importers.contains(&"python/main.py"), "{impact}");
    assert!(impact["unresolved"].as_array().unwrap().is_empty(), "{impact}");
    let (_, deep) = get(&url("/v1/graph/impact?file=python/shop/helpers.py&depth=2"), token).await;
    assert!(
        deep["imported_by"].as_array().unwrap().iter().any(|e| e["path"] == "python/main.py" && e["depth"] == 2),
        "{deep}"
    );
    let (_, rust_impact) = get(&url("/v1/graph/impact?file=rust/src/cart.rs"), token).await;
    let targets: Vec<&str> =
        rust_impact["imports"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert!(targets.contains(&"rust/src/util/strings.rs"), "{rust_impact}");

    // AST search and a structural query.
    let (_, classes) = get(&url("/v1/ast/search?kind=class"), token).await;
    assert!(classes["symbols"].as_array().unwrap().iter().all(|s| s["kind"] == "class"), "{classes}");
    let query = serde_json::json!({"repo": repo_arg, "language": "python", "query": "(function_definition name: (identifier) @name)", "limit": 3});
    let answer: Value =
        server.client().post(url("/v1/ast/query")).json(&query).send().await.unwrap().json().await.unwrap();
    assert_eq!(answer["matches"].as_array().unwrap().len(), 3, "{answer}");
    assert_eq!(answer["truncated"], true, "{answer}");
    assert_eq!(answer["matches"][0]["capture"], "name");

    // Clear 4xx errors: misnamed and unknown parameters, bad values, unknown things.
    for (path, status, needle) in [
        ("/v1/symbols?nmae=Cart", 400, "name"),
        ("/v1/symbols?name=Cart&kind=klass", 400, "kind"),
        ("/v1/symbols?kind=class", 400, "name"),
        ("/v1/symbols?name=Cart&limit=0", 400, "limit"),
        ("/v1/symbols?name=Cart&limit=5000", 400, "limit"),
        ("/v1/references?name=check&line=3", 400, "path"),
        ("/v1/references?name=check&min_confidence=2", 400, "min_confidence"),
        ("/v1/references?name=NoSuchThing", 404, "NoSuchThing"),
        ("/v1/graph/impact?file=nope.py", 404, "nope.py"),
        ("/v1/graph/impact?file=python/main.py&depth=9", 400, "depth"),
        ("/v1/graph/impact", 400, "file"),
    ] {
        let (got, body) = get(&url(path), token).await;
        assert_eq!(got, status, "{path}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(needle)
                || body["error"]["hint"].as_str().unwrap_or("").contains(needle),
            "{path}: {body}"
        );
    }
    let bad = serde_json::json!({"language": "python", "query": "(function_definition nme: (identifier) @n)"});
    let response = server.client().post(url("/v1/ast/query")).json(&bad).send().await.unwrap();
    assert_eq!(response.status(), 400);
    let bad = serde_json::json!({"language": "cobol", "query": "(x)"});
    let response = server.client().post(url("/v1/ast/query")).json(&bad).send().await.unwrap();
    assert_eq!(response.status(), 400);

    // A name that matches nothing says so (exit 1), not a silent exit.
    let out = home.run(&["symbols", "--repo", repo_arg, "NoSuchThing*"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no match"), "{out:?}");
    // The CLI prints the same objects with --json.
    let cli = home.json(&["symbols", "--repo", repo_arg, "--json", "--kind", "struct", "Cart"]);
    let (_, http) = get(&url("/v1/symbols?name=Cart&kind=struct"), token).await;
    assert_eq!(cli, http);
    let cli = home.json(&[
        "refs",
        "--repo",
        repo_arg,
        "--json",
        "--path",
        "rust/src/util/strings.rs",
        "--line",
        "2",
        "check",
    ]);
    assert_eq!(cli["references"], refs["references"]);
    let cli = home.json(&[
        "callers",
        "--repo",
        repo_arg,
        "--json",
        "--path",
        "rust/src/util/strings.rs",
        "--line",
        "2",
        "check",
    ]);
    assert_eq!(cli["callers"], callers["callers"]);
    let cli = home.json(&["impact", "--repo", repo_arg, "--json", "--file", "python/shop/cart.py"]);
    assert_eq!(cli, impact);
    let cli = home.json(&[
        "ast",
        "--repo",
        repo_arg,
        "--json",
        "--language",
        "python",
        "--limit",
        "3",
        "(function_definition name: (identifier) @name)",
    ]);
    assert_eq!(cli["matches"], answer["matches"]);
    let out = home.run(&["refs", "--repo", repo_arg, "NoSuchThing"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no definition named `NoSuchThing`"));
}

#[tokio::test]
async fn symbols_built_by_other_grammars_answer_409_until_the_next_run_rebuilds_them() {
    let repo = code_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::new();
    let salted = |salt: &str| {
        let mut cmd = home.cmd();
        cmd.env(SALT, salt);
        cmd
    };
    let out = salted("a").args(["index", "--repo", repo_arg]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Another binary's grammars: a clear 409 with the fix, from the CLI.
    let out = salted("b").args(["symbols", "--repo", repo_arg, "--json", "Cart"]).output().unwrap();
    assert!(!out.status.success());
    let err: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| serde_json::from_slice(&out.stderr).unwrap());
    assert_eq!(err["error"]["code"], "stale_index", "{err}");
    assert!(err["error"]["hint"].as_str().unwrap().contains("docdexd index --repo"), "{err}");
    // …and over HTTP, from a daemon with those grammars (search still works meanwhile).
    let server = Server::start_with_env(&home, &["--repo", repo_arg], &[(SALT, "b")]);
    let (status, body) =
        get(&server.url(&format!("/v1/symbols?repo={}&name=Cart", enc(repo_arg))), server.token()).await;
    // The daemon starts a rebuild as it mounts the repo: until it ends, the old facts are refused.
    if status == 409 {
        assert_eq!(body["error"]["code"], "stale_index", "{body}");
    } else {
        assert_eq!(status, 200, "{body}");
    }
    // The daemon rebuilds on its own; then the same request answers.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let (status, body) =
            get(&server.url(&format!("/v1/symbols?repo={}&name=Cart", enc(repo_arg))), server.token()).await;
        if status == 200 {
            assert!(body["total"].as_u64().unwrap() >= 2, "{body}");
            break;
        }
        assert_eq!(status, 409, "{body}");
        assert!(std::time::Instant::now() < deadline, "the daemon never rebuilt the symbols: {body}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    drop(server);
    // A CLI run with the first grammars rebuilds them again, and they answer.
    let out = salted("a").args(["index", "--repo", repo_arg]).output().unwrap();
    assert!(out.status.success());
    let out = salted("a").args(["symbols", "--repo", repo_arg, "--json", "Cart"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_kill_between_commits_leaves_code_facts_that_match_the_indexed_files() {
    const FILES: usize = 12;
    let repo = tempfile::tempdir().unwrap();
    let repo_arg = repo.path().to_str().unwrap();
    let source =
        |i: usize, generation: usize| format!("pub fn item_{i:02}_rev_{generation}() -> u32 {{\n    {i}\n}}\n");
    for i in 0..FILES {
        write(repo.path(), &format!("src/m{i:02}.rs"), &source(i, 0));
    }
    let home = Home::with_config("[index]\nbatch_max_files = 2\n");
    home.index(repo.path());
    // Every file changes; the run dies after its second commit, before the records.
    for i in 0..FILES {
        write(repo.path(), &format!("src/m{i:02}.rs"), &source(i, 1));
    }
    let out =
        home.cmd().env("DOCDEX_FAULT_ABORT_AFTER_COMMITS", "2").args(["index", "--repo", repo_arg]).output().unwrap();
    assert!(!out.status.success(), "the run was meant to die");
    // What the store holds now is consistent: each file's facts are one revision's, whole.
    let listed = home.json(&["symbols", "--repo", repo_arg, "--json", "--limit", "100", "item_*"]);
    let names: Vec<String> =
        listed["symbols"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect();
    for i in 0..FILES {
        let revisions = names.iter().filter(|n| n.starts_with(&format!("item_{i:02}_rev_"))).count();
        assert_eq!(revisions, 1, "file {i}: {names:?}");
    }
    // The next run completes, and the facts are exactly the files' current content.
    home.index(repo.path());
    let listed = home.json(&["symbols", "--repo", repo_arg, "--json", "--limit", "100", "item_*"]);
    let mut names: Vec<String> =
        listed["symbols"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect();
    names.sort();
    let expected: Vec<String> = (0..FILES).map(|i| format!("item_{i:02}_rev_1")).collect();
    assert_eq!(names, expected);
    // A deleted file's facts go with it.
    std::fs::remove_file(repo.path().join("src/m00.rs")).unwrap();
    home.index(repo.path());
    let listed = home.json(&["symbols", "--repo", repo_arg, "--json", "--limit", "100", "item_*"]);
    assert_eq!(listed["total"], FILES as u64 - 1, "{listed}");
}

/// The MCP tools with the official Python SDK (1.x and 2.x), over stdio and streamable HTTP.
#[test]
fn the_mcp_tools_pass_the_official_client_over_stdio_and_http() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/code_client.py");
    let home = Home::with_config("[web]\nenabled = false\n");
    let run = |python: &Path, args: &[&str], envs: &[(&str, &str)]| {
        let repo = code_repo();
        let out = std::process::Command::new(python)
            .arg(&script)
            .args(args)
            .arg(repo.path())
            .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))))
            .envs(envs.iter().copied())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{} {args:?}: {stderr}\n{}",
            python.display(),
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(stderr.contains("all code checks passed"), "{stderr}");
    };
    for python in crate::common::mcp_pythons() {
        run(&python, &["stdio", env!("CARGO_BIN_EXE_docdexd")], &[]);
    }
    let server = Server::start(&home, &[]);
    for python in crate::common::mcp_pythons() {
        run(&python, &["http", &server.url("/v1/mcp")], &[("DOCDEX_TEST_TOKEN", server.token().unwrap_or_default())]);
    }
}

/// A save reaches the symbols through the watcher, like it reaches search.
#[tokio::test]
async fn a_saved_file_is_in_the_symbols_and_references_soon_after() {
    let repo = code_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo_arg]);
    let token = server.token();
    // The first index run of the mount.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while get(&server.url("/v1/symbols?name=Cart"), token).await.0 != 200 {
        assert!(std::time::Instant::now() < deadline, "never indexed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    write(
        repo.path(),
        "python/shop/audit.py",
        "from .helpers import check\n\n\ndef audit_cart(cart):\n    return check(cart)\n",
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, body) = get(&server.url("/v1/symbols?name=audit_cart"), token).await;
        if body["total"] == 1 {
            assert_eq!(body["symbols"][0]["path"], "python/shop/audit.py", "{body}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the save never reached the symbols: {body}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (_, refs) = get(&server.url("/v1/references?name=check&path=python/shop/helpers.py&line=4"), token).await;
    assert!(
        refs["references"].as_array().unwrap().iter().any(|r| r["path"] == "python/shop/audit.py" && r["line"] == 5),
        "{refs}"
    );
    // A deleted file's definitions go with it.
    std::fs::remove_file(repo.path().join("python/shop/audit.py")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (status, body) = get(&server.url("/v1/symbols?name=audit_cart"), token).await;
        if status == 200 && body["total"] == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the deletion never reached the symbols: {body}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
