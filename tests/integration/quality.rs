//! Retrieval quality on a real corpus: the tokio crate's source.

use crate::common::{hit_paths, tokio_source, Home};

#[test]
fn tokio_questions_find_the_right_files_near_the_top() {
    let tokio = tokio_source();
    let home = Home::new();
    let summary = home.index(&tokio);
    assert!(summary["files_indexed"].as_u64().unwrap() > 300, "{summary}");

    let cases = [
        ("spawn_blocking", "src/task/blocking.rs"),
        ("JoinSet abort_all", "src/task/join_set.rs"),
        ("how to run a blocking function without stalling the runtime", "src/task/blocking.rs"),
        ("Semaphore acquire permits", "src/sync/semaphore.rs"),
        ("broadcast channel lagged receiver", "src/sync/broadcast.rs"),
        ("read a file into a string", "src/fs/read_to_string.rs"),
        ("wait for a child process to exit", "src/process/mod.rs"),
    ];
    for (query, want) in cases {
        let paths = hit_paths(&home.search(&tokio, query));
        let rank = paths.iter().position(|p| p == want);
        assert!(rank.is_some_and(|r| r < 3), "{query}: {want} not in the top 3 of {paths:?}");
    }
}

#[test]
fn documented_public_code_outranks_internal_code_and_changelogs_with_the_same_words() {
    // The API's doc is longer than the internal comment and the changelog repeats a word of
    // the question, so plain BM25 puts the internal file and the changelog first; what the
    // ranking knows about each file must turn the order around.
    let body = "wait until the timer fires then wake the sleeping task";
    let internal = format!("// {body}\npub(crate) fn park_timer() {{}}\n");
    let public = format!("/// {body}\n///\n/// The returned future does no other work.\npub fn sleep_timer() {{}}\n");
    let repo = crate::common::repo_with(&[
        ("src/runtime/park.rs", &internal),
        ("src/time/sleep.rs", &public),
        ("CHANGELOG.md", &format!("# 1.2.0\n\n{body}, the timer, the timer\n")),
        ("docs/guide.md", &format!("# Guide\n\n{body}\n")),
    ]);
    let home = Home::new();
    home.index(repo.path());
    let paths = hit_paths(&home.search(repo.path(), "wait until the timer fires"));
    let rank = |path: &str| paths.iter().position(|p| p == path).unwrap_or(usize::MAX);
    assert!(rank("src/time/sleep.rs") < rank("src/runtime/park.rs"), "{paths:?}");
    assert!(rank("docs/guide.md") < rank("CHANGELOG.md"), "{paths:?}");
    assert!(rank("src/runtime/park.rs") < usize::MAX && rank("CHANGELOG.md") < usize::MAX, "still found: {paths:?}");
}
