//! The team store: several daemons, each with a home of its own, over one PostgreSQL. A
//! repo indexed through one answers the same through the others, also on a machine without
//! its checkout; one writer at a time. (These run on PostgreSQL whatever the suite's backend.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{fresh_database, hold_writer_lock, postgres_url, Home, Server};

const QUERIES: [&str; 5] = [
    "advisory lock held by the writer",
    "BM25 statistics pooled across several indexes",
    "least recently used embedding cache entries pruned",
    "how are memories stored and recalled",
    "RepoStore",
];

/// A repo of real code: a copy of docdex's own index module.
fn code_repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/index");
    copy_dir(&src, &repo.path().join("src/index"));
    repo
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The hits of a search through a daemon, as (path, lines, score rounded) to compare.
fn hits(server: &Server, repo: &Path, query: &str, mode: &str) -> Vec<HitRow> {
    let body: Value = server
        .blocking_client()
        .get(server.url("/v1/search"))
        .query(&[("repo", repo.to_str().unwrap()), ("q", query), ("mode", mode), ("limit", "10")])
        .send()
        .unwrap()
        .json()
        .unwrap();
    hit_rows(&body, mode)
}

type HitRow = (String, u64, u64, String);

/// A search response's hits as (path, lines, score rounded), to compare.
fn hit_rows(body: &Value, mode: &str) -> Vec<HitRow> {
    assert_eq!(body["mode"], mode, "{body}");
    body["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|hit| {
            (
                hit["path"].as_str().unwrap().to_string(),
                hit["line_start"].as_u64().unwrap(),
                hit["line_end"].as_u64().unwrap(),
                format!("{:.4}", hit["score"].as_f64().unwrap()),
            )
        })
        .collect()
}

/// `GET /v1/status` of a repo through a daemon.
fn status_of(server: &Server, repo: &Path) -> Value {
    server
        .blocking_client()
        .get(server.url("/v1/status"))
        .query(&[("repo", repo.to_str().unwrap())])
        .send()
        .unwrap()
        .json()
        .unwrap()
}

fn wait_embedded(server: &Server, repo: &Path) -> Value {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let status = status_of(server, repo);
        if status["embeddings"]["pending"] == 0 && status["embeddings"]["embedded"].as_u64() > Some(0) {
            return status;
        }
        assert!(Instant::now() < deadline, "never embedded: {status}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_repo_indexed_through_one_daemon_answers_alike_through_another_also_without_its_checkout() {
    let url = fresh_database(&postgres_url());
    let repo = code_repo();
    let first = Home::on_store(&url).model();
    let second = Home::on_store(&url).model();
    let writer = Server::start(&first, &["--repo", repo.path().to_str().unwrap()]);
    let status = wait_embedded(&writer, repo.path());
    assert!(status["chunks"].as_u64().unwrap() > 50, "{status}");

    let reader = Server::start(&second, &[]);
    let mut expected = Vec::new();
    for mode in ["lexical", "hybrid"] {
        for query in QUERIES {
            let through_writer = hits(&writer, repo.path(), query, mode);
            assert!(!through_writer.is_empty(), "{mode} {query}");
            assert_eq!(hits(&reader, repo.path(), query, mode), through_writer, "{mode} {query}");
            expected.push((mode, query, through_writer));
        }
    }
    // The second home keeps no index of its own: a cache of the store's files.
    let state = crate::common::repo_state_dir(&second, repo.path());
    assert!(!state.join("index").exists() && !state.join("meta.lmdb").exists(), "{}", state.display());

    // The checkout moves away; a daemon that never saw it answers from the store alone, by
    // the path the repo was indexed at.
    drop(reader);
    drop(writer);
    let original: PathBuf = std::fs::canonicalize(repo.path()).unwrap();
    let moved = original.with_file_name(format!("{}-moved", original.file_name().unwrap().to_string_lossy()));
    std::fs::rename(&original, &moved).unwrap();
    let third = Home::on_store(&url).model();
    let front_end = Server::start(&third, &[]);
    for (mode, query, want) in &expected {
        assert_eq!(&hits(&front_end, &original, query, mode), want, "without the checkout: {mode} {query}");
    }
    let memory = status_of(&front_end, &original);
    assert_eq!(memory["chunks"], status["chunks"], "{memory}");
    std::fs::rename(&moved, &original).unwrap();
}

#[test]
fn a_commit_through_one_daemon_is_seen_by_the_others_next_search() {
    let url = fresh_database(&postgres_url());
    let repo = crate::common::sample_repo();
    let first = Home::on_store(&url);
    let second = Home::on_store(&url);
    // A reader that does not watch: the commit must come from the first home alone (a
    // watching daemon on the same checkout would index the change itself, and the first
    // home's run would then wait for it; that is the watcher test below).
    std::fs::write(second.dir.path().join("config.toml"), "[watcher]\nenabled = false\n").unwrap();
    first.index(repo.path());
    let reader = Server::start(&second, &[]);
    assert!(hits(&reader, repo.path(), "zanzibarquux", "lexical").is_empty());
    crate::common::write(repo.path(), "src/new.rs", "/// zanzibarquux lives here.\npub fn zanzibarquux() {}\n");
    // The reader's mount refreshes the repo once; the first home waits for that writer.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = first.run(&["index", "--repo", repo.path().to_str().unwrap(), "--json"]);
        if out.status.success() {
            break;
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("being written by another") && Instant::now() < deadline, "{stderr}");
        std::thread::sleep(Duration::from_millis(300));
    }
    let found = hits(&reader, repo.path(), "zanzibarquux", "lexical");
    assert_eq!(found.first().map(|h| h.0.as_str()), Some("src/new.rs"), "{found:?}");
}

#[test]
fn a_second_writer_on_another_home_is_told_and_a_dead_writers_lock_is_released() {
    let url = fresh_database(&postgres_url());
    let repo = crate::common::sample_repo();
    let first = Home::on_store(&url);
    let second = Home::on_store(&url);
    first.index(repo.path());
    // A writer holds the repo (another daemon's index run).
    let lock = hold_writer_lock(&first, repo.path());
    let out = second.run(&["index", "--repo", repo.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("index_locked") || stderr.contains("being written by another"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    drop(lock);
    // A writer killed mid-run: its connection goes, and the database releases its lock.
    for _ in 0..3 {
        crate::common::write(repo.path(), "src/churn.rs", &format!("pub fn churn_{}() {{}}\n", rand_suffix()));
        let mut child = first.cmd().args(["index", "--repo", repo.path().to_str().unwrap()]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(150));
        let _ = child.kill();
        let _ = child.wait();
    }
    let summary = second.index(repo.path());
    assert_eq!(summary["files_scanned"], 5, "{summary}");
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

#[test]
fn check_reports_the_store_its_extension_and_schema_or_why_it_cannot() {
    let url = fresh_database(&postgres_url());
    let home = Home::on_store(&url);
    let report = |home: &Home| -> Value {
        let out = home.run(&["check", "--json"]);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["checks"].as_array().unwrap().iter().find(|c| c["name"] == "store").cloned().unwrap()
    };
    // A new database: reachable, no schema yet.
    let fresh = report(&home);
    assert!(fresh["detail"].as_str().unwrap().contains("PostgreSQL 18"), "{fresh}");
    // After a first index, the schema and the repo are there.
    home.index(crate::common::sample_repo().path());
    let used = report(&home);
    assert_eq!(used["status"], "ok", "{used}");
    let detail = used["detail"].as_str().unwrap();
    assert!(detail.contains("pgvector 0.8") && detail.contains("schema 1") && detail.contains("1 repos"), "{used}");
    // A server that is not there: a failure that says so and how to fix it, without the password.
    let nowhere = Home::on_store("postgres://someone:hunter2@127.0.0.1:9/docdex");
    let failed = report(&nowhere);
    assert_eq!(failed["status"], "fail", "{failed}");
    let text = failed.to_string();
    assert!(text.contains("cannot be reached") && text.contains("hint") && !text.contains("hunter2"), "{failed}");
}

/// Search hits through the CLI, as (path, lines, score rounded).
fn cli_hits(home: &Home, repo: &Path, query: &str, mode: &str) -> Vec<HitRow> {
    let out = home.run(&["search", "--repo", repo.to_str().unwrap(), "--json", "--mode", mode, "--limit", "10", query]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    hit_rows(&serde_json::from_slice(&out.stdout).unwrap(), mode)
}

#[test]
fn store_copy_moves_an_embedded_repo_with_its_vectors_and_memory_without_re_embedding() {
    let url = fresh_database(&postgres_url());
    let repo = code_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let embedded = Home::embedded().model();
    let summary = embedded.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["embeddings"]["pending"], 0, "{summary}");
    let note =
        embedded.json(&["memory", "save", "--repo", repo_arg, "--json", "the index writer lock is a database lock"]);
    let before: Vec<_> = ["lexical", "hybrid"]
        .iter()
        .flat_map(|mode| QUERIES.iter().map(move |q| (*mode, *q)))
        .map(|(mode, query)| (mode, query, cli_hits(&embedded, repo.path(), query, mode)))
        .collect();

    let copied = embedded.json(&["store", "copy", "--to", &url, "--json"]);
    let repos = copied["repos"].as_array().unwrap();
    assert_eq!(repos.len(), 1, "{copied}");
    assert_eq!(repos[0]["chunk_vectors"], summary["chunks_total"], "{copied}");
    assert_eq!(repos[0]["static_vectors"], summary["chunks_total"], "{copied}");
    assert_eq!(repos[0]["memory_vectors"], 1, "{copied}");
    assert!(!copied.to_string().contains("hunter2"));

    // Another home on the store: the same answers, no embedding done (the model is not even
    // there), the note recalled.
    let team = Home::on_store(&url);
    let status = team.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["embeddings"]["pending"], 0, "{status}");
    assert_eq!(status["chunks"], summary["chunks_total"], "{status}");
    for (mode, query, want) in &before {
        if *mode == "lexical" {
            assert_eq!(&cli_hits(&team, repo.path(), query, mode), want, "{mode} {query}");
        }
    }
    let team_with_model = Home::on_store(&url).model();
    for (mode, query, want) in &before {
        let got = cli_hits(&team_with_model, repo.path(), query, mode);
        // Dense candidates come from another index (HNSW, not arroy's trees): the first
        // answer is the same, the rest may be ordered a little differently.
        assert_eq!(got.first().map(|h| &h.0), want.first().map(|h| &h.0), "{mode} {query}: {got:?} vs {want:?}");
    }
    let recalled = team.json(&["memory", "recall", "--repo", repo_arg, "--json", "database lock"]);
    assert!(recalled.to_string().contains(note["text"].as_str().unwrap()), "{recalled}");

    // Copying again replaces, it does not add.
    let again = embedded.json(&["store", "copy", "--to", &url, "--repo", repo_arg, "--json"]);
    assert_eq!(again["repos"][0]["chunk_vectors"], summary["chunks_total"]);
    let status = team.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["chunks"], summary["chunks_total"], "{status}");
}

#[test]
fn a_watcher_whose_repo_another_writer_holds_indexes_the_change_once_it_is_free() {
    let url = fresh_database(&postgres_url());
    let repo = crate::common::sample_repo();
    let home = Home::on_store(&url);
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    assert!(!hits(&server, repo.path(), "WorkerPool", "lexical").is_empty());
    // Another daemon's index run holds the repo while a file is saved here.
    let lock = hold_writer_lock(&home, repo.path());
    crate::common::write(
        repo.path(),
        "src/late.rs",
        "/// Arrives while another writer runs.\npub fn zanzibarlate() {}\n",
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(hits(&server, repo.path(), "zanzibarlate", "lexical").is_empty(), "indexed through a held lock");
    drop(lock);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = hits(&server, repo.path(), "zanzibarlate", "lexical");
        if found.first().is_some_and(|hit| hit.0 == "src/late.rs") {
            break;
        }
        assert!(Instant::now() < deadline, "the change waited and was never indexed: {found:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_daemon_on_a_store_it_cannot_reach_does_not_start_and_says_why() {
    let home = Home::on_store("postgres://someone:hunter2@127.0.0.1:9/docdex");
    let out = home.cmd().args(["daemon", "--bind", "127.0.0.1:0"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot be reached") && stderr.contains("hint:") && !stderr.contains("hunter2"),
        "{stderr}"
    );
}
