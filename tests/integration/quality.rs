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

#[test]
fn plain_words_questions_reach_the_api_through_programming_terms() {
    // None of these questions shares a word with the file that answers it; the concept list,
    // when turned on, adds `sleep`, `interval`, `select` (lexical search, so the embedding
    // model plays no part). With expansion off, the default, the same questions miss.
    let tokio = tokio_source();
    let cases = [
        ("pause the current task for a while", "src/time/sleep.rs"),
        ("run a job again every few seconds", "src/time/interval.rs"),
        ("wait on several operations and take whichever finishes first", "src/macros/select.rs"),
    ];
    let rank_of = |home: &Home, query: &str, want: &str| {
        let out = home.run(&["search", "--repo", tokio.to_str().unwrap(), "--json", "--mode", "lexical", query]);
        let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let paths = hit_paths(&response);
        (paths.iter().position(|p| p == want), response)
    };
    let home = Home::with_config("[search]\nexpand_concepts = true\n");
    home.index(&tokio);
    for (query, want) in cases {
        let (rank, response) = rank_of(&home, query, want);
        assert!(rank.is_some_and(|r| r < 5), "{query}: {want} not in the top 5: {response}");
    }
    // The response says what was added, so an agent can tell why a hit shares no word.
    let (_, response) = rank_of(&home, cases[0].0, cases[0].1);
    assert!(response["expanded"].as_array().unwrap().iter().any(|w| w == "sleep"), "{response}");
    // Off by default.
    let off = Home::new();
    off.index(&tokio);
    let missed = cases.iter().filter(|(query, want)| rank_of(&off, query, want).0.is_none_or(|r| r >= 5)).count();
    assert!(rank_of(&off, cases[0].0, cases[0].1).1.get("expanded").is_none());
    assert!(missed >= 2, "expansion off should miss most of these, missed {missed}");
}

#[test]
fn a_question_s_verb_finds_the_type_named_after_its_doer() {
    // "spinning" and `Spinner` share no Snowball stem; the analyzer folds the agent noun onto
    // its verb. Without that, the bar's file says "progress" three times and wins.
    let repo = crate::common::repo_with(&[
        ("src/spinner.rs", "/// Shows progress while work runs.\npub struct Spinner {\n    frames: Vec<char>,\n}\n"),
        ("src/bar.rs", "/// Shows progress as a progress bar, with the progress in percent.\npub struct Bar {}\n"),
    ]);
    let home = Home::new();
    home.index(repo.path());
    let out = home.run(&[
        "search",
        "--repo",
        repo.path().to_str().unwrap(),
        "--json",
        "--mode",
        "lexical",
        "spinning progress",
    ]);
    let paths = hit_paths(&serde_json::from_slice(&out.stdout).unwrap());
    assert_eq!(paths.first().map(String::as_str), Some("src/spinner.rs"), "{paths:?}");
}

#[test]
fn a_qualified_name_finds_the_definition_its_qualifier_holds() {
    // `read_exact` is defined twice; the file named after it says it (and the trait's name)
    // more often, in a shorter file. `AsyncReadExt::read_exact` means the trait's.
    let read_exact = "/// The future that `AsyncReadExt::read_exact` returns: `read_exact` keeps reading until the\n/// buffer is full. AsyncReadExt::read_exact is the way to call it.\npub struct ReadExact;\n\n/// Builds the read_exact future for AsyncReadExt.\npub(crate) fn read_exact() -> ReadExact {\n    ReadExact\n}\n";
    let helpers: String = (0..12)
        .map(|i| format!("    /// Helper number {i} for readers: fills, skips or peeks bytes.\n    fn helper_{i}(&mut self) {{}}\n\n"))
        .collect();
    let the_trait = format!(
        "/// Reading helpers for every reader.\npub trait AsyncReadExt {{\n{helpers}    /// Fills the whole buffer.\n    fn read_exact(&mut self) {{}}\n}}\n"
    );
    let repo = crate::common::repo_with(&[
        ("src/io/read_exact.rs", read_exact),
        ("src/io/async_read_ext.rs", &the_trait),
        ("src/io/other.rs", "/// Unrelated.\npub fn write_all() {}\n"),
    ]);
    let home = Home::new();
    home.index(repo.path());
    let first = |query: &str| hit_paths(&home.search(repo.path(), query)).first().cloned().unwrap_or_default();
    assert_eq!(first("AsyncReadExt::read_exact"), "src/io/async_read_ext.rs");
    assert_eq!(first("AsyncReadExt.read_exact"), "src/io/async_read_ext.rs");
    // A qualifier that holds no definition of the name leaves them all first.
    let bare = hit_paths(&home.search(repo.path(), "Unknown::read_exact"));
    assert!(bare[..2].contains(&"src/io/read_exact.rs".to_string()), "{bare:?}");
    assert!(bare[..2].contains(&"src/io/async_read_ext.rs".to_string()), "{bare:?}");
}
