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
