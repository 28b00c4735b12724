//! Walking, ignore rules, incremental re-indexing and recovery from a kill mid-run.

use crate::common::{hit_paths, repo_with, sample_repo, write, Home};

#[test]
fn ignore_rules_binary_and_large_files_are_honoured() {
    let repo = repo_with(&[
        ("keep.rs", "fn kept_item() {}\n"),
        (".gitignore", "ignored.rs\nbuild/\n"),
        ("ignored.rs", "fn ignored_by_root_gitignore() {}\n"),
        ("build/out.rs", "fn ignored_build_output() {}\n"),
        ("sub/.gitignore", "*.log\n"),
        ("sub/app.log", "nested_ignored_log_line\n"),
        ("sub/app.rs", "fn nested_kept() {}\n"),
        (".docdexignore", "private/\n"),
        ("private/notes.md", "# secret_plans\n"),
        (".git/info/exclude", "excluded.rs\n"),
        ("excluded.rs", "fn excluded_by_git_info() {}\n"),
        (".hidden/config.rs", "fn hidden_dir() {}\n"),
        ("big.txt", &"bulky_token ".repeat(300)),
    ]);
    std::fs::write(repo.path().join("blob.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();

    let scanned: Vec<String> = docdex::ingest::scan_repo(repo.path(), docdex::ingest::SizeLimits::uniform(1 << 20))
        .files
        .into_iter()
        .map(|f| f.rel_path)
        .collect();
    assert_eq!(scanned, ["big.txt", "blob.bin", "keep.rs", "sub/app.rs"]);

    let home = Home::with_config("[index]\nmax_file_size_bytes = 2000\n");
    let summary = home.index(repo.path());
    // big.txt is over the cap (left out by the walk); blob.bin is read and found binary.
    assert_eq!(summary["files_scanned"], 3, "{summary}");
    assert_eq!(summary["files_indexed"], 2);
    assert_eq!(summary["files_skipped"], 2);
    for ignored in [
        "ignored_by_root_gitignore",
        "ignored_build_output",
        "nested_ignored_log_line",
        "secret_plans",
        "excluded_by_git_info",
        "bulky_token",
    ] {
        assert!(hits_containing(&home, repo.path(), ignored).is_empty(), "{ignored} was indexed");
    }
    assert_eq!(top_path(&home, repo.path(), "nested_kept"), "sub/app.rs");
}

#[test]
fn reindex_reads_only_changes_and_drops_deleted_files() {
    let repo = sample_repo();
    let home = Home::new();
    let first = home.index(repo.path());
    assert_eq!(first["files_indexed"], 4, "{first}");
    let chunks_before = first["chunks_total"].as_u64().unwrap();

    // Nothing changed: nothing is re-read.
    let again = home.index(repo.path());
    assert_eq!((again["files_indexed"].as_u64(), again["files_unchanged"].as_u64()), (Some(0), Some(4)), "{again}");
    assert_eq!(again["chunks_total"].as_u64(), Some(chunks_before));

    write(repo.path(), "scripts/report.py", "def render_annual_summary(rows):\n    return rows\n");
    write(repo.path(), "src/new_module.rs", "pub fn freshly_added_function() {}\n");
    std::fs::remove_file(repo.path().join("web/auth.ts")).unwrap();
    let third = home.index(repo.path());
    assert_eq!(third["files_indexed"], 2, "{third}");
    assert_eq!(third["files_deleted"], 1);
    assert_eq!(third["files_unchanged"], 2);

    assert_eq!(top_path(&home, repo.path(), "render_annual_summary"), "scripts/report.py");
    assert_eq!(top_path(&home, repo.path(), "freshly_added_function"), "src/new_module.rs");
    assert!(hit_paths(&home.search(repo.path(), "quarterly")).is_empty());
    assert!(!hit_paths(&home.search(repo.path(), "verifyOauthScopes")).contains(&"web/auth.ts".to_string()));

    // A touched file with the same content is recognised by its hash and not re-chunked.
    let content = std::fs::read_to_string(repo.path().join("src/pool.rs")).unwrap();
    std::fs::write(repo.path().join("src/pool.rs"), format!("{content}\n")).unwrap();
    std::fs::write(repo.path().join("src/pool.rs"), content).unwrap();
    let fourth = home.index(repo.path());
    assert_eq!(fourth["files_indexed"], 0, "{fourth}");
    let status = home.json(&["status", "--repo", repo.path().to_str().unwrap(), "--json"]);
    assert_eq!(status["files"], 4);
    assert_eq!(status["chunks"], fourth["chunks_total"]);
}

fn top_path(home: &Home, repo: &std::path::Path, query: &str) -> String {
    hit_paths(&home.search(repo, query)).into_iter().next().unwrap_or_default()
}

/// Paths of the hits whose snippet contains `needle` verbatim.
fn hits_containing(home: &Home, repo: &std::path::Path, needle: &str) -> Vec<String> {
    let response = home.search(repo, needle);
    response["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["snippet"].as_str().unwrap().contains(needle))
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
}

fn many_file_repo() -> tempfile::TempDir {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (format!("src/m{i:02}.rs"), format!("/// Module {i}.\npub fn unique_fn_{i:02}() -> u32 {{\n    {i}\n}}\n"))
        })
        .collect();
    crate::common::repo_with_owned(&files)
}

#[test]
fn a_kill_mid_index_is_finished_by_the_next_run() {
    let repo = many_file_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::with_config("[index]\nbatch_max_files = 8\n");

    // Killed right after the second batch reached the full-text index, before its file
    // records were written: the worst moment.
    let killed = home
        .cmd()
        .args(["index", "--repo", repo_arg])
        .env(docdex::actors::indexer::FAULT_ABORT_AFTER_COMMITS_ENV, "2")
        .output()
        .unwrap();
    assert!(!killed.status.success(), "the fault hook did not fire");

    let status = home.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["interrupted"], true, "{status}");
    assert_eq!(status["indexed"], false);
    let refused = home.run(&["search", "--repo", repo_arg, "unique_fn_00"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("did not finish") && stderr.contains("docdexd index --repo"), "{stderr}");

    let resumed = home.index(repo.path());
    // The first batch was fully recorded and is skipped; the second is redone.
    assert_eq!(resumed["files_unchanged"], 8, "{resumed}");
    assert_eq!(resumed["files_indexed"], 32);

    let fresh_home = Home::new();
    let fresh = fresh_home.index(repo.path());
    assert_eq!(resumed["chunks_total"], fresh["chunks_total"]);
    for i in [0, 9, 15, 39] {
        let name = format!("unique_fn_{i:02}");
        // Exactly one chunk holds the name: no duplicates from the redone batch.
        assert_eq!(hits_containing(&home, repo.path(), &name), [format!("src/m{i:02}.rs")], "{name}");
    }
    let status = home.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!((status["interrupted"].as_bool(), status["indexed"].as_bool()), (Some(false), Some(true)));
    assert_eq!(status["files"], 40);
}

#[test]
fn a_kill_during_a_refresh_keeps_the_old_index_searchable() {
    let repo = many_file_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::with_config("[index]\nbatch_max_files = 8\n");
    home.index(repo.path());
    for i in 0..40 {
        write(repo.path(), &format!("src/m{i:02}.rs"), &format!("pub fn renamed_fn_{i:02}() {{}}\n"));
    }
    let killed = home
        .cmd()
        .args(["index", "--repo", repo_arg])
        .env(docdex::actors::indexer::FAULT_ABORT_AFTER_COMMITS_ENV, "1")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    // Still searchable (the previous run completed); the status says the refresh broke off.
    assert_eq!(hits_containing(&home, repo.path(), "unique_fn_39"), ["src/m39.rs"]);
    assert_eq!(home.json(&["status", "--repo", repo_arg, "--json"])["interrupted"], true);

    let resumed = home.index(repo.path());
    // The committed batch's records were never updated, so it is re-read with the rest.
    assert_eq!(resumed["files_indexed"], 40, "{resumed}");
    assert_eq!(resumed["chunks_total"], 40);
    assert!(hits_containing(&home, repo.path(), "unique_fn_39").is_empty());
    assert_eq!(hits_containing(&home, repo.path(), "renamed_fn_03"), ["src/m03.rs"]);
    assert!(hits_containing(&home, repo.path(), "unique_fn_03").is_empty());
}

/// Chunk ids in the index and the stored high-water mark, read with docdex's own library.
fn chunk_ids_and_mark(home: &Home, repo: &std::path::Path) -> (Vec<u64>, u32) {
    let index = home.open_index(repo);
    let mut ids: Vec<u64> = crate::common::live_chunks(&index).into_iter().map(|(_, id)| u64::from(id)).collect();
    ids.sort_unstable();
    let mark = index.store.run_state(&index.store.read_txn().unwrap()).unwrap().next_chunk_id;
    (ids, mark)
}

#[test]
fn a_kill_between_the_index_commit_and_the_records_never_reuses_chunk_ids() {
    let repo = many_file_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::with_config("[index]\nbatch_max_files = 8\n");
    // Killed right after the first batch reached Tantivy, before its records reached LMDB.
    let killed = home
        .cmd()
        .args(["index", "--repo", repo_arg])
        .env(docdex::actors::indexer::FAULT_ABORT_AFTER_COMMITS_ENV, "1")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    let (ids, mark) = chunk_ids_and_mark(&home, repo.path());
    assert!(!ids.is_empty());
    assert!(u64::from(mark) > *ids.last().unwrap(), "the mark {mark} must be above every committed id {ids:?}");

    // The next run finishes the job: every chunk once, every id once.
    let summary = home.index(repo.path());
    assert_eq!(summary["chunks_total"], 40, "{summary}");
    let (ids, _) = chunk_ids_and_mark(&home, repo.path());
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "duplicate chunk ids: {ids:?}");
    assert_eq!(ids.len(), 40);
}

#[test]
fn a_chunker_panic_on_one_file_costs_that_file_only() {
    let repo = sample_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::new();
    let out = home
        .cmd()
        .args(["index", "--repo", repo_arg, "--json"])
        .env(docdex::actors::ingestor::FAULT_PANIC_ON_FILE_ENV, "report.py")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["files_skipped"], 1, "{summary}");
    assert_eq!(summary["files_indexed"], 3, "{summary}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("injected chunker fault"));
    assert_eq!(hits_containing(&home, repo.path(), "WorkerPool"), ["src/pool.rs"]);
    // Not recorded, so the next run (without the bug) indexes it.
    let again = home.index(repo.path());
    assert_eq!(again["files_indexed"], 1, "{again}");
    assert_eq!(hits_containing(&home, repo.path(), "render_quarterly_report"), ["scripts/report.py"]);
}

#[test]
fn a_full_metadata_store_is_a_clear_error_and_loses_nothing_committed() {
    let files: Vec<(String, String)> = (0..400)
        .map(|i| {
            let body = format!("/// Helper number {i} of the ledger: it reconciles entry {i} with the journal.\npub fn ledger_entry_{i:03}() -> u32 {{\n    {i}\n}}\n");
            (format!("src/l{i:03}.rs"), body)
        })
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let repo = repo_with(&refs);
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::with_config("[index]\nlmdb_map_bytes = 1048576\n").model();
    let out = home.run(&["index", "--repo", repo_arg, "--wait"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("metadata store is full") && stderr.contains("lmdb_map_bytes"), "{stderr}");
    // With room, the next run completes what was left; nothing is missing or doubled.
    std::fs::write(home.dir.path().join("config.toml"), "[index]\nlmdb_map_bytes = 268435456\n").unwrap();
    let summary = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["chunks_total"], 400, "{summary}");
    assert_eq!(summary["embeddings"]["pending"], 0, "{summary}");
    assert_eq!(hits_containing(&home, repo.path(), "ledger_entry_399"), ["src/l399.rs"]);
    // Status reports the sizes involved.
    let status = home.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["metadata_limit_bytes"], 268435456u64, "{status}");
    assert!(status["metadata_size_bytes"].as_u64().unwrap() > 0, "{status}");
    assert_eq!(status["embedding_cache_entries"], 400, "{status}");
}

/// A real full disk: the state directory on a small tmpfs (mounted in a private user and
/// mount namespace, no privileges needed), filled up between two index runs. The failing run
/// says the disk is full, the committed index still answers, and with space freed the next
/// run completes.
#[test]
fn a_full_disk_is_a_clear_error_and_loses_nothing_committed() {
    let repo = repo_with(&[("src/first.rs", "pub fn committed_before_full() {}\n")]);
    let home = Home::new();
    let state = home.dir.path().join("state");
    let out_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let script = r#"
set -u
mount -t tmpfs -o size=8m tmpfs "$STATE" || exit 90
"$BIN" index --repo "$REPO" --json > "$OUT/1.json" 2> "$OUT/1.err"; echo $? > "$OUT/1.code"
dd if=/dev/zero of="$STATE/filler" bs=64k 2> /dev/null
for i in $(seq 1 60); do printf 'pub fn added_after_full_%s() {}\n' "$i" > "$REPO/src/added_$i.rs"; done
"$BIN" index --repo "$REPO" --json > "$OUT/2.json" 2> "$OUT/2.err"; echo $? > "$OUT/2.code"
"$BIN" search --repo "$REPO" --json committed_before_full > "$OUT/3.json" 2> "$OUT/3.err"
rm "$STATE/filler"
"$BIN" index --repo "$REPO" --json > "$OUT/4.json" 2> "$OUT/4.err"; echo $? > "$OUT/4.code"
"$BIN" search --repo "$REPO" --json added_after_full_60 > "$OUT/5.json" 2> "$OUT/5.err"
"#;
    // The same environment as every docdexd the tests run, around `unshare`.
    let mut cmd = std::process::Command::new("unshare");
    for (key, value) in home.cmd().get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let status = cmd
        .args(["-Urm", "sh", "-c", script])
        .env("DOCDEX_STATE_DIR", &state)
        .env("STATE", &state)
        .env("BIN", env!("CARGO_BIN_EXE_docdexd"))
        .env("REPO", repo.path())
        .env("OUT", out_dir.path())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "the test needs `unshare -Urm` (user namespaces) to mount a small tmpfs");
    let read = |name: &str| std::fs::read_to_string(out_dir.path().join(name)).unwrap_or_default();
    assert_eq!(read("1.code").trim(), "0", "{}", read("1.err"));
    assert_eq!(read("2.code").trim(), "2", "the run on a full disk must fail: {}", read("2.json"));
    assert!(read("2.err").contains("disk is full"), "{}", read("2.err"));
    let before: serde_json::Value = serde_json::from_str(&read("3.json")).unwrap();
    assert_eq!(before["hits"][0]["path"], "src/first.rs", "{before} {}", read("3.err"));
    assert_eq!(read("4.code").trim(), "0", "{}", read("4.err"));
    let after: serde_json::Value = serde_json::from_str(&read("4.json")).unwrap();
    assert_eq!(after["chunks_total"], 61, "{after}");
    let added: serde_json::Value = serde_json::from_str(&read("5.json")).unwrap();
    assert_eq!(added["hits"][0]["path"], "src/added_60.rs", "{added}");
}

/// Another process holding the repo's index writer (here: this test, holding its lock) is
/// `index_locked` with a hint, and the index stays usable.
#[test]
fn a_second_writer_is_index_locked_with_a_hint() {
    let repo = sample_repo();
    let home = Home::new();
    home.index(repo.path());
    let lock = crate::common::hold_writer_lock(&home, repo.path());
    let out = home.run(&["index", "--repo", repo.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("being written by another docdexd process") && stderr.contains("hint:"), "{stderr}");
    // Searches still answer from the committed index meanwhile.
    assert_eq!(hits_containing(&home, repo.path(), "WorkerPool").first().map(String::as_str), Some("src/pool.rs"));
    drop(lock);
    assert_eq!(home.index(repo.path())["files_scanned"], 4);
}

/// A file swapped between a regular file and a link to a secret outside the repo while the
/// repo re-indexes over and over: the secret's text never reaches the index. A FIFO swapped in
/// is skipped at once (the run neither hangs nor blocks later runs).
#[test]
fn a_file_racing_a_link_out_or_a_fifo_never_reaches_the_index() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("id_rsa"), "-----BEGIN zanzibarsecretkey-----\n").unwrap();
    let repo = repo_with(&[("src/lib.rs", "pub fn ordinary() {}\n"), ("notes.md", "# Notes\n\nharmless text\n")]);
    let home = Home::new();
    home.index(repo.path());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (root, stop) = (repo.path().to_path_buf(), std::sync::Arc::clone(&stop));
        let secret = outside.path().join("id_rsa");
        std::thread::spawn(move || {
            let (file, tmp_file, tmp_link) = (root.join("notes.md"), root.join("notes.tmp"), root.join("link.tmp"));
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // New text each time, so every run sees a change to read.
                std::fs::write(&tmp_file, format!("# Notes\n\nharmless text {n}\n")).unwrap();
                std::fs::rename(&tmp_file, &file).unwrap();
                let _ = std::fs::remove_file(&tmp_link);
                std::os::unix::fs::symlink(&secret, &tmp_link).unwrap();
                std::fs::rename(&tmp_link, &file).unwrap();
                n += 1;
            }
        })
    };
    let started = std::time::Instant::now();
    let mut runs = 0;
    while started.elapsed() < crate::common::race_duration() {
        let out = home.run(&["index", "--repo", repo.path().to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        runs += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(runs >= 3, "only {runs} index runs raced the flips");
    // Exit code 1: nothing found.
    let search = home.run(&["search", "--repo", repo.path().to_str().unwrap(), "--json", "zanzibarsecretkey"]);
    assert_eq!(search.status.code(), Some(1), "the secret was indexed: {}", String::from_utf8_lossy(&search.stdout));

    // A FIFO where a file was: the run skips it at once.
    std::fs::remove_file(repo.path().join("notes.md")).unwrap();
    let fifo = std::ffi::CString::new(repo.path().join("notes.md").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::write(repo.path().join("src/lib.rs"), "pub fn ordinary_changed() {}\n").unwrap();
    let mut child = home.cmd().args(["index", "--repo", repo.path().to_str().unwrap()]).spawn().unwrap();
    let waited = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if waited.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("an index run with a FIFO in the repo hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success());
    assert_eq!(top_path(&home, repo.path(), "ordinary_changed"), "src/lib.rs");
}
