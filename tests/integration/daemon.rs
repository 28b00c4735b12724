//! One daemon for many repos: the singleton lock, the CLI as a client, mounting (HTTP and MCP
//! roots), the watcher, the first search during the first index run, idle release, and a
//! panicking repo actor. Real daemon processes, real HTTP over loopback.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{hit_paths, repo_with, sample_repo, tokio_source, write, Home, Server};

/// Polls `probe` until it returns Some, for at most `limit`.
fn eventually<T>(limit: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn get_json(server: &Server, path: &str) -> (u16, Value) {
    let response = server.blocking_client().get(server.url(path)).send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

fn post_json(server: &Server, path: &str, body: Value) -> (u16, Value) {
    let response = server.blocking_client().post(server.url(path)).json(&body).send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

fn search(server: &Server, repo: &Path, query: &str) -> (u16, Value) {
    let query = query.replace(' ', "%20");
    get_json(server, &format!("/v1/search?repo={}&q={query}&mode=lexical&limit=10", repo.display()))
}

fn mounted<'a>(repos: &'a Value, repo: &Path) -> Option<&'a Value> {
    let canonical = std::fs::canonicalize(repo).unwrap().display().to_string();
    repos.as_array()?.iter().find(|r| r["repo"] == canonical)
}

#[test]
fn one_daemon_per_home_and_a_killed_daemons_lock_is_taken_over() {
    let home = Home::new();
    let mut first = Server::start(&home, &[]);
    let second = home.run(&["daemon", "--bind", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("already running") && stderr.contains(&first.base_url), "{stderr}");
    assert!(stderr.contains(&format!("pid {}", first.child.id())), "{stderr}");
    assert!(stderr.contains(&format!("`kill {}`", first.child.id())), "how to stop it: {stderr}");
    // Asked for another repo: the running daemon can serve it, and the error says how.
    let other_repo = repo_with(&[("src/lib.rs", "pub fn other() {}\n")]);
    let other = home.run(&["daemon", "--bind", "127.0.0.1:0", "--repo", other_repo.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`docdexd index --repo") && stderr.contains("allowed roots"), "{stderr}");

    // SIGKILL leaves the lock file behind; the kernel has dropped the lock itself.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert!(home.dir.path().join("daemon.lock").exists());
    let third = Server::start(&home, &[]);
    let (status, body) = get_json(&third, "/v1/status");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["pid"], third.child.id());

    // `check` on the daemon's own address knows it is the daemon, not a conflict.
    let addr = third.base_url.trim_start_matches("http://").to_string();
    let checked = home.cmd().arg("check").env("DOCDEX_HTTP_BIND_ADDR", &addr).output().unwrap();
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(report.contains(&format!("{addr} is served by this home's daemon (pid {})", third.child.id())), "{report}");
    assert!(!report.contains("FAIL  bind"), "{report}");
    assert!(report.contains(&format!("ok    daemon     {} (pid {})", third.base_url, third.child.id())), "{report}");
}

#[test]
fn cli_commands_go_through_the_running_daemon() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &[]);
    let path = repo.path().to_str().unwrap();

    // The daemon holds the index writer; a local run would be refused with index_locked.
    let summary = home.json(&["index", "--repo", path, "--json"]);
    assert_eq!(summary["files_scanned"], 4, "{summary}");
    let (_, repos) = get_json(&server, "/v1/repos");
    let entry = mounted(&repos, repo.path()).unwrap_or_else(|| panic!("not mounted by the CLI's index: {repos}"));
    assert_eq!(entry["watching"], true);

    let found = home.search(repo.path(), "WorkerPool run_detached");
    assert_eq!(hit_paths(&found).first().map(String::as_str), Some("src/pool.rs"));
    let saved = home.json(&["memory", "save", "--repo", path, "--json", "pools are sized from the config"]);
    let recalled = home.json(&["memory", "recall", "--repo", path, "--json", "pool size"]);
    assert_eq!(recalled["items"][0]["id"], saved["id"]);
    let id = saved["id"].to_string();
    let deleted = home.run(&["memory", "delete", "--repo", path, &id]);
    assert!(deleted.status.success(), "{}", String::from_utf8_lossy(&deleted.stderr));
    let recalled = home.run(&["memory", "recall", "--repo", path, "--json", "pool size"]);
    let recalled: Value = serde_json::from_slice(&recalled.stdout).unwrap();
    assert_eq!(recalled["items"], serde_json::json!([]), "{recalled}");
    let status = home.json(&["status", "--repo", path, "--json"]);
    assert_eq!(status["indexed"], true);

    // The daemon counted all of it, and `status` without --repo describes the daemon.
    let daemon = home.json(&["status", "--json"]);
    let load = |actor: &str| {
        daemon["actors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["actor"] == actor)
            .map(|a| a["handled"].as_u64().unwrap())
    };
    assert!(load("search").unwrap_or(0) >= 1, "{daemon}");
    assert!(load("memory_store").unwrap_or(0) >= 2, "{daemon}");
    assert!(daemon["rss_bytes"].as_u64().unwrap() > 1 << 20, "{daemon}");
    assert_eq!(mounted(&daemon["repos"], repo.path()).unwrap()["searchable"], true);
    let text = home.run(&["status"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("1 mounted"), "{}", String::from_utf8_lossy(&text.stdout));

    // Errors keep their exit code: an unknown repo is still exit 2 with the same message.
    let no_such = std::env::temp_dir().join("docdex-no-such-repo");
    let missing = home.run(&["search", "--repo", no_such.to_str().unwrap(), "x"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("does not exist"));

    // No warning while the daemon's settings are the file's; one after the file is edited.
    assert!(!String::from_utf8_lossy(&text.stderr).contains("changed after the daemon started"));
    std::thread::sleep(Duration::from_millis(1100));
    let config = home.dir.path().join("config.toml");
    std::fs::write(&config, std::fs::read_to_string(&config).unwrap() + "\n").unwrap();
    let after_edit = home.run(&["status"]);
    let stderr = String::from_utf8_lossy(&after_edit.stderr);
    assert!(stderr.contains("changed after the daemon started") && stderr.contains("restart it"), "{stderr}");

    // Without a daemon the same commands run locally again.
    drop(server);
    let local = home.search(repo.path(), "WorkerPool run_detached");
    assert_eq!(hit_paths(&local), hit_paths(&found));
    let no_daemon = home.run(&["status"]);
    assert_eq!(no_daemon.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_daemon.stderr).contains("no docdex daemon is running"));
}

#[test]
fn mcp_workspace_roots_mount_and_bind_the_default_repo_over_http() {
    let repo = repo_with(&[(
        "src/quota.rs",
        "/// Refills the bucket once per interval.\npub fn refill_token_bucket(capacity: u32) -> u32 {\n    capacity\n}\n",
    )]);
    let home = Home::new();
    // The daemon's own --repo is only a fallback: a client's roots name its workspace.
    let other = repo_with(&[("src/other.rs", "/// Unrelated.\npub fn unrelated_helper() {}\n")]);
    let server = Server::start(&home, &["--repo", other.path().to_str().unwrap()]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/roots_client.py");
    // The first SDK finds the repo never indexed: the roots mount it and the search waits
    // for its first run. The second binds the mounted repo.
    for python in crate::common::mcp_pythons() {
        let mut cmd = Command::new(&python);
        cmd.arg(script).arg(server.url("/v1/mcp")).arg(repo.path()).arg("refill_token_bucket");
        if let Some(token) = server.token() {
            cmd.args(["--token", token]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}: {}", python.display(), String::from_utf8_lossy(&out.stderr));
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["hits"][0]["path"], "src/quota.rs", "{result}");
    }
    let (_, repos) = get_json(&server, "/v1/repos");
    assert!(mounted(&repos, repo.path()).is_some(), "{repos}");
}

#[test]
fn the_watcher_reindexes_edits_new_files_deletes_renames_and_ignore_changes() {
    let repo = repo_with(&[("src/alpha.rs", "pub fn zebra_original() {}\n"), (".gitignore", "build/\n")]);
    let home = Home::with_config("[watcher]\ndebounce_ms = 200\n");
    let server = Server::start(&home, &[]);
    let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repo.path(), "wait": true}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["searchable"], true, "{body}");
    let paths_for = |query: &str| {
        let (status, body) = search(&server, repo.path(), query);
        assert_eq!(status, 200, "{body}");
        hit_paths(&body)
    };
    // Each query's words occur in one file only (identifier parts are words too).
    let wait_for = |query: &str, expected: &[&str], what: &str| {
        eventually(Duration::from_secs(30), what, || {
            let paths = paths_for(query);
            (paths == expected).then_some(())
        })
    };
    wait_for("zebra_original", &["src/alpha.rs"], "the first index");

    write(repo.path(), "src/alpha.rs", "pub fn quokka_edited() {}\n");
    wait_for("quokka_edited", &["src/alpha.rs"], "an edit");
    assert!(paths_for("zebra_original").is_empty());

    write(repo.path(), "src/beta.rs", "pub fn walrus_created() {}\n");
    wait_for("walrus_created", &["src/beta.rs"], "a new file");

    std::fs::rename(repo.path().join("src/beta.rs"), repo.path().join("src/gamma.rs")).unwrap();
    wait_for("walrus_created", &["src/gamma.rs"], "a rename");

    std::fs::remove_file(repo.path().join("src/alpha.rs")).unwrap();
    wait_for("quokka_edited", &[], "a delete");

    // Ignored places do not get indexed; a new ignore rule takes a file out.
    write(repo.path(), "build/out.rs", "pub fn ocelot_artifact() {}\n");
    write(repo.path(), ".gitignore", "build/\nsrc/gamma.rs\n");
    wait_for("walrus_created", &[], "a .gitignore change");
    assert!(paths_for("ocelot_artifact").is_empty());

    // A burst (a branch checkout) coalesces: forty files, far fewer runs.
    let (_, before) = get_json(&server, "/v1/repos");
    let runs_before = mounted(&before, repo.path()).unwrap()["runs_completed"].as_u64().unwrap();
    for n in 0..40 {
        write(repo.path(), &format!("src/burst_{n}.rs"), &format!("pub fn burst_item_{n}() {{}}\n"));
    }
    eventually(Duration::from_secs(30), "the burst", || {
        (paths_for("burst_item_39").first().map(String::as_str) == Some("src/burst_39.rs")).then_some(())
    });
    let (_, after) = get_json(&server, "/v1/repos");
    let runs = mounted(&after, repo.path()).unwrap()["runs_completed"].as_u64().unwrap() - runs_before;
    assert!(runs <= 3, "40 writes took {runs} index runs");
}

/// Watcher runs read only the paths that changed (a folder stands for all it holds), under
/// the same rules as a full walk.
#[test]
fn the_watcher_follows_folder_moves_deletes_and_nested_ignore_rules() {
    let repo = repo_with(&[
        ("pkg/one/lib.rs", "pub fn heron_in_folder() {}\n"),
        ("pkg/one/gen/.gitignore", "*.rs\n"),
        ("README.md", "# Readme\n"),
    ]);
    let home = Home::with_config("[watcher]\ndebounce_ms = 200\n");
    let server = Server::start(&home, &[]);
    let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repo.path(), "wait": true}));
    assert_eq!(status, 200, "{body}");
    let paths_for = |query: &str| {
        let (status, body) = search(&server, repo.path(), query);
        assert_eq!(status, 200, "{body}");
        hit_paths(&body)
    };
    let wait_for = |query: &str, expected: &[&str], what: &str| {
        eventually(Duration::from_secs(30), what, || (paths_for(query) == expected).then_some(()))
    };
    wait_for("heron_in_folder", &["pkg/one/lib.rs"], "the first index");

    // A nested ignore file rules out what is written under it, as a full walk would.
    write(repo.path(), "pkg/one/gen/skip.rs", "pub fn ibis_generated() {}\n");
    write(repo.path(), "pkg/one/note.md", "# Note\n\nThe kestrel_marker note.\n");
    wait_for("kestrel_marker", &["pkg/one/note.md"], "a new file beside an ignored one");
    assert!(paths_for("ibis_generated").is_empty());

    // A folder moved: its files are found under the new path and no longer under the old.
    std::fs::rename(repo.path().join("pkg/one"), repo.path().join("pkg/two")).unwrap();
    wait_for("heron_in_folder", &["pkg/two/lib.rs"], "a folder rename");
    wait_for("kestrel_marker", &["pkg/two/note.md"], "a folder rename");

    // A folder deleted: its files leave the index.
    std::fs::remove_dir_all(repo.path().join("pkg/two")).unwrap();
    wait_for("heron_in_folder", &[], "a folder delete");
    wait_for("kestrel_marker", &[], "a folder delete");
}

#[test]
fn the_first_search_waits_for_the_first_index_run() {
    // Big enough that its first index run takes a while: a copy of tokio's source.
    let repo = tempfile::tempdir().unwrap();
    let status = Command::new("cp").arg("-r").arg(tokio_source().join("src")).arg(repo.path()).status().unwrap();
    assert!(status.success());

    // Told not to wait: a clear indexing_in_progress with the progress, never repo_not_indexed.
    let impatient = Home::with_config("[core]\nfirst_index_wait_secs = 0\n");
    let server = Server::start(&impatient, &[]);
    let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repo.path()}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "indexing", "{body}");
    let (status, body) = search(&server, repo.path(), "spawn_blocking");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "indexing_in_progress", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("files read") || message.contains("scanning"), "{message}");
    drop(server);

    // The default: the search is held until the run completes, then answers.
    let home = Home::new();
    let server = Server::start(&home, &[]);
    let (_, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repo.path()}));
    assert_eq!(body["state"], "indexing", "{body}");
    assert_eq!(body["runs_completed"], 0);
    let (status, body) = search(&server, repo.path(), "spawn_blocking");
    assert_eq!(status, 200, "{body}");
    assert!(hit_paths(&body).iter().any(|p| p.contains("blocking")), "{body}");
}

#[test]
fn idle_repos_and_the_model_are_released_and_come_back_on_use() {
    let repo = sample_repo();
    let home = Home::with_config("[core]\nrepo_idle_secs = 1\n\n[embedding]\nidle_unload_secs = 1\n").model();
    home.json(&["index", "--repo", repo.path().to_str().unwrap(), "--wait", "--json"]);
    let server = Server::start(&home, &[]);
    let hybrid = format!("/v1/search?repo={}&q=WorkerPool&mode=hybrid", repo.path().display());
    let (status, body) = get_json(&server, &hybrid);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["mode"], "hybrid", "{body}");
    let (_, daemon) = get_json(&server, "/v1/status");
    assert!(daemon["models_loaded"].as_u64().unwrap() >= 1, "{daemon}");

    let released = eventually(Duration::from_secs(30), "idle release", || {
        let (_, daemon) = get_json(&server, "/v1/status");
        let entry = mounted(&daemon["repos"], repo.path())?.clone();
        (entry["state"] == "released" && daemon["models_loaded"] == 0).then_some(entry)
    });
    assert_eq!(released["open"], false);

    // Reopened transparently, model and all.
    let (status, body) = get_json(&server, &hybrid);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["mode"].as_str(), hit_paths(&body).first().map(String::as_str)),
        (Some("hybrid"), Some("src/pool.rs"))
    );
    let (_, repos) = get_json(&server, "/v1/repos");
    assert_eq!(mounted(&repos, repo.path()).unwrap()["open"], true);
}

#[test]
fn the_model_is_released_after_its_batches_and_loads_again_for_a_query() {
    let repo = sample_repo();
    let home = Home::with_model();
    let server = Server::start(&home, &[]);
    let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repo.path(), "wait": true}));
    assert_eq!(status, 200, "{body}");
    // The background job embeds every chunk with the model, then hands its memory back.
    let repo_status = format!("/v1/status?repo={}", repo.path().display());
    eventually(Duration::from_secs(120), "embedded, model released", || {
        let (_, status) = get_json(&server, &repo_status);
        let (_, daemon) = get_json(&server, "/v1/status");
        let embedded = status["embeddings"]["pending"] == 0 && status["embeddings"]["embedded"].as_u64() > Some(0);
        (embedded && daemon["models_loaded"] == 0).then_some(())
    });
    let hybrid = format!("/v1/search?repo={}&q=WorkerPool&mode=hybrid", repo.path().display());
    let (status, body) = get_json(&server, &hybrid);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["mode"], "hybrid", "{body}");
    assert_eq!(hit_paths(&body).first().map(String::as_str), Some("src/pool.rs"), "{body}");
    let (_, daemon) = get_json(&server, "/v1/status");
    assert_eq!(daemon["models_loaded"], 1, "{daemon}");
}

#[test]
fn a_panicking_repo_actor_leaves_other_repos_alone() {
    let healthy = sample_repo();
    let doomed = repo_with(&[("src/doomed.rs", "pub fn doomed_fn() {}\n")]);
    let marker = doomed.path().file_name().unwrap().to_str().unwrap().to_string();
    let home = Home::new();
    let server = Server::start_with_env(&home, &[], &[(docdex::actors::indexer::FAULT_PANIC_INDEXER_ENV, &marker)]);
    let index = |repo: &Path| {
        let response = server
            .blocking_client()
            .post(server.url(&format!("/v1/index?repo={}", repo.display())))
            .json(&json!({}))
            .send()
            .unwrap();
        (response.status().as_u16(), response.json::<Value>().unwrap())
    };
    assert_eq!(index(healthy.path()).0, 200);
    let (status, body) = index(doomed.path());
    assert_eq!(status, 500, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("fault injected"), "{body}");

    // The other repo, and the daemon, carry on.
    let (status, body) = search(&server, healthy.path(), "WorkerPool");
    assert_eq!((status, hit_paths(&body).first().map(String::as_str)), (200, Some("src/pool.rs")), "{body}");
    // The failed repo's actor starts over clean: its next run completes.
    let (status, body) = index(doomed.path());
    assert_eq!(status, 200, "{body}");
    let (status, body) = search(&server, doomed.path(), "doomed_fn");
    assert_eq!((status, hit_paths(&body).first().map(String::as_str)), (200, Some("src/doomed.rs")), "{body}");
}

/// Eight repos in one daemon, many clients at once: searches, memory writes and re-indexes
/// (explicit and through the watcher). Every repo's files share their names and words with
/// the others but one: a hit or a note from the wrong repo would carry the wrong word.
#[test]
fn eight_repos_under_concurrent_load_never_mix() {
    const WORDS: [&str; 8] = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "heron"];
    let file = |word: &str, i: usize, rev: usize| {
        format!("/// Shared helper number {i} for the {word} team, revision {rev}.\npub fn shared_helper_{i}() -> &'static str {{\n    \"{word}\"\n}}\n")
    };
    let repos: Vec<tempfile::TempDir> = WORDS
        .iter()
        .map(|word| {
            let files: Vec<(String, String)> = (0..25).map(|i| (format!("src/h{i:02}.rs"), file(word, i, 0))).collect();
            let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
            repo_with(&refs)
        })
        .collect();
    let home = Home::with_config("[watcher]\ndebounce_ms = 100\n\n[server]\nmax_requests_per_client = 256\n");
    let server = Server::start(&home, &[]);
    for repo in &repos {
        let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repo.path(), "wait": true}));
        assert_eq!(status, 200, "{body}");
    }
    let (_, listed) = get_json(&server, "/v1/repos");
    assert_eq!(listed.as_array().unwrap().len(), WORDS.len());

    let latencies = std::sync::Mutex::new(Vec::new());
    let mixed = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        // 16 search clients, each across all repos.
        for client in 0..16 {
            let (server, repos, latencies, mixed) = (&server, &repos, &latencies, &mixed);
            scope.spawn(move || {
                let http = server.blocking_client();
                for n in 0..40 {
                    let r = (client * 7 + n) % WORDS.len();
                    let url = server.url(&format!(
                        "/v1/search?repo={}&q=shared%20helper%20team&mode=lexical&limit=10",
                        repos[r].path().display()
                    ));
                    let started = Instant::now();
                    let body: Value = http.get(url).send().unwrap().json().unwrap();
                    latencies.lock().unwrap().push(started.elapsed().as_secs_f64() * 1000.0);
                    let hits = body["hits"].as_array().unwrap_or_else(|| panic!("{body}"));
                    assert!(!hits.is_empty(), "{body}");
                    for hit in hits {
                        let snippet = hit["snippet"].as_str().unwrap();
                        if WORDS.iter().enumerate().any(|(w, word)| w != r && snippet.contains(word)) {
                            mixed.lock().unwrap().push(format!("{} in search of {}", snippet, WORDS[r]));
                        }
                    }
                }
            });
        }
        // 4 memory writers and readers.
        for writer in 0..4 {
            let (server, repos, mixed) = (&server, &repos, &mixed);
            scope.spawn(move || {
                let http = server.blocking_client();
                for n in 0..20 {
                    let r = (writer * 3 + n) % WORDS.len();
                    let repo = repos[r].path();
                    let note = json!({"repo": repo, "text": format!("memo about {} from writer {writer}", WORDS[r])});
                    let saved = http.post(server.url("/v1/memory")).json(&note).send().unwrap();
                    assert_eq!(saved.status().as_u16(), 200);
                    let recall = json!({"repo": repo, "query": "memo about writer", "k": 20});
                    let body: Value =
                        http.post(server.url("/v1/memory/recall")).json(&recall).send().unwrap().json().unwrap();
                    for item in body["items"].as_array().unwrap() {
                        let text = item["text"].as_str().unwrap();
                        if !text.contains(WORDS[r]) {
                            mixed.lock().unwrap().push(format!("note {text} in repo {}", WORDS[r]));
                        }
                    }
                }
            });
        }
        // 2 re-indexers: edits picked up by the watcher, and explicit index requests.
        for indexer in 0..2 {
            let (server, repos) = (&server, &repos);
            scope.spawn(move || {
                let http = server.blocking_client();
                for n in 0..10 {
                    let r = (indexer * 4 + n) % WORDS.len();
                    write(repos[r].path(), &format!("src/h{:02}.rs", n % 25), &file(WORDS[r], n % 25, n + 1));
                    let url = server.url(&format!("/v1/index?repo={}", repos[r].path().display()));
                    let response = http.post(url).json(&json!({})).send().unwrap();
                    assert_eq!(response.status().as_u16(), 200);
                }
            });
        }
    });
    let mixed = mixed.into_inner().unwrap();
    assert!(mixed.is_empty(), "{} results from the wrong repo, e.g. {:?}", mixed.len(), &mixed[..mixed.len().min(3)]);
    let mut latencies = latencies.into_inner().unwrap();
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    eprintln!(
        "load: {} searches over {} repos with 16 search clients, 4 memory clients, 2 re-indexers: p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms",
        latencies.len(),
        WORDS.len(),
        at(0.50),
        at(0.95),
        at(0.99)
    );
    assert_eq!(latencies.len(), 16 * 40);
}

/// `[core] max_mounted_repos` bounds the mounts: the least recently used idle repo makes
/// room (and is mounted again when a request names it).
#[test]
fn mounted_repos_are_bounded_least_recently_used_first() {
    let repos: Vec<tempfile::TempDir> =
        (0..3).map(|i| repo_with(&[(&format!("src/m{i}.rs"), &format!("pub fn module_{i}() {{}}\n"))])).collect();
    let home = Home::with_config("[core]\nmax_mounted_repos = 2\n");
    let server = Server::start(&home, &[]);
    for repo in &repos[..2] {
        let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repo.path(), "wait": true}));
        assert_eq!(status, 200, "{body}");
    }
    // The first is used again: the second is now the least recently used.
    assert_eq!(search(&server, repos[0].path(), "module_0").0, 200);
    let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": repos[2].path(), "wait": true}));
    assert_eq!(status, 200, "{body}");
    let (_, listed) = get_json(&server, "/v1/repos");
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    assert!(mounted(&listed, repos[0].path()).is_some() && mounted(&listed, repos[2].path()).is_some(), "{listed}");
    assert!(mounted(&listed, repos[1].path()).is_none(), "{listed}");
    // Unmounted is not forgotten: its index answers, and it is mounted again.
    let (status, body) = search(&server, repos[1].path(), "module_1");
    assert_eq!((status, hit_paths(&body).first().map(String::as_str)), (200, Some("src/m1.rs")), "{body}");
}

/// A repo of 600 one-chunk files: embedding it takes a few seconds on two cores.
fn ledger_repo() -> tempfile::TempDir {
    let files: Vec<(String, String)> = (0..600)
        .map(|i| {
            let text = format!(
                "/// Helper number {i}: converts the {i}th record of a ledger into a summary line.\npub fn ledger_line_{i}(amount: u64) -> String {{\n    format!(\"{i}: {{amount}}\")\n}}\n"
            );
            (format!("src/ledger_{i}.rs"), text)
        })
        .collect();
    crate::common::repo_with_owned(&files)
}

#[test]
fn index_wait_through_the_daemon_shows_its_progress() {
    let repo = ledger_repo();
    let home = Home::with_model();
    let _server = Server::start(&home, &[]);
    let out = home.run(&["index", "--repo", repo.path().to_str().unwrap(), "--wait"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The run answers only at its end; meanwhile the daemon's status is shown as it moves.
    assert!(stderr.contains("embedding: ") && stderr.contains(" of 600 chunks embedded"), "{stderr}");
    let status = home.json(&["status", "--repo", repo.path().to_str().unwrap(), "--json"]);
    assert_eq!(status["embeddings"]["pending"], 0, "{status}");
}

#[test]
fn sigterm_during_background_embedding_stops_cleanly_and_keeps_the_vectors() {
    let repo = ledger_repo();
    let path = repo.path().to_str().unwrap();
    let home = Home::with_model();
    let mut server = Server::start(&home, &["--repo", path]);
    let status_path = format!("/v1/status?repo={path}");
    let seen = eventually(Duration::from_secs(60), "background embedding to start", || {
        let (_, status) = get_json(&server, &status_path);
        status["embeddings"]["embedded"].as_u64().filter(|n| *n > 0)
    });
    // SAFETY: SIGTERM to the daemon this test started.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let exit = eventually(Duration::from_secs(30), "the daemon to stop", || server.child.try_wait().unwrap());
    let mut stderr = String::new();
    std::io::Read::read_to_string(server.child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(exit.success(), "{exit:?}: {stderr}");
    // The batch in flight finished before the process went: no inference torn down mid-run.
    assert!(stderr.contains("shutting down") && !stderr.contains("onnxruntime"), "{stderr}");
    let status = home.json(&["status", "--repo", path, "--json"]);
    let embedded = status["embeddings"]["embedded"].as_u64().unwrap();
    assert!(embedded >= seen, "vectors lost: {seen} seen, {embedded} kept");
    assert_eq!(embedded + status["embeddings"]["pending"].as_u64().unwrap(), 600, "{status}");
}

/// A path under the home that flips between absent and a link to a directory outside the
/// allowed roots, while a client mounts it as fast as it can: nothing outside is mounted,
/// watched or served. The path is resolved once and checked as resolved, and the repo
/// manager checks again where the path leads when it opens it.
#[test]
fn a_path_racing_a_link_out_never_mounts_or_serves_what_is_outside() {
    let scratch = tempfile::tempdir().unwrap();
    let fake_home = scratch.path().join("home");
    let projects = fake_home.join("projects");
    std::fs::create_dir_all(&projects).unwrap();
    let outside = scratch.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("id_rsa"), "-----BEGIN quetzalsecretkey-----\n").unwrap();
    let outside = std::fs::canonicalize(&outside).unwrap();
    let home = Home::new();
    let envs = [("HOME", fake_home.to_str().unwrap()), ("DOCDEX_ALLOWED_ROOTS", projects.to_str().unwrap())];
    let server = Server::start_with_env(&home, &[], &envs);

    let race = fake_home.join("race");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (race, outside, stop) = (race.clone(), outside.clone(), std::sync::Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::os::unix::fs::symlink(&outside, &race);
                let _ = std::fs::remove_file(&race);
            }
        })
    };
    let started = Instant::now();
    let (mut answers, mut mounted_outside) = (0, Vec::new());
    while started.elapsed() < crate::common::race_duration() {
        let (status, body) = post_json(&server, "/v1/initialize", json!({"repo_path": race, "wait": false}));
        answers += 1;
        if status == 200 && body["repo"].as_str().is_some_and(|r| r.starts_with(outside.to_str().unwrap())) {
            mounted_outside.push(body);
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(answers > 50, "only {answers} requests raced the flips");
    assert!(
        mounted_outside.is_empty(),
        "{} of {answers} answers mounted outside the roots, the first: {}",
        mounted_outside.len(),
        mounted_outside[0]
    );
    let (_, repos) = get_json(&server, "/v1/repos");
    let outside_mounts: Vec<&Value> = repos
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["repo"].as_str().is_some_and(|p| p.starts_with(outside.to_str().unwrap())))
        .collect();
    assert!(outside_mounts.is_empty(), "still mounted: {outside_mounts:?}");
    // With the link in place for good, the outside directory is refused, not served.
    std::os::unix::fs::symlink(&outside, &race).unwrap();
    let (status, body) = search(&server, &race, "quetzalsecretkey");
    assert_eq!(status, 403, "{body}");
    assert!(!body.to_string().contains("BEGIN"), "{body}");
}

/// A repo the daemon does not serve runs in this process, with a note that says what to do
/// (it gets no background embedding); the "config changed after the daemon started" warning
/// is for commands the daemon runs, not this one.
#[test]
fn a_repo_the_daemon_refuses_runs_here_with_what_to_do() {
    let served = tempfile::tempdir().unwrap();
    let home = Home::new();
    let _server = Server::start_with_env(&home, &[], &[("DOCDEX_ALLOWED_ROOTS", served.path().to_str().unwrap())]);
    let repo = repo_with(&[("src/lib.rs", "pub fn elsewhere_marker() {}\n")]);
    std::thread::sleep(Duration::from_millis(1100));
    let config = home.dir.path().join("config.toml");
    std::fs::write(&config, std::fs::read_to_string(&config).unwrap() + "\n").unwrap();
    let out = home.run(&["search", "--repo", repo.path().to_str().unwrap(), "elsewhere_marker"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not serve") && stderr.contains("allowed_roots"), "{stderr}");
    assert!(!stderr.contains("changed after the daemon started"), "{stderr}");
}
