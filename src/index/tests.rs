use tantivy::schema::{Schema, STORED, STRING};

use super::rank::*;
use super::schema::*;
use super::*;

fn ranking(chunks: &[(u32, u32)], weight: f32) -> Ranking {
    Ranking {
        candidates: chunks
            .iter()
            .map(|&(doc, _)| Candidate { address: DocAddress::new(0, doc), score: 1.0, doc_opt: None, flags: 0 })
            .collect(),
        files: chunks.iter().map(|&(_, file)| file).collect(),
        weight,
    }
}

/// A run holding the writer is live, not interrupted: status asks the lock.
#[test]
fn an_index_held_by_a_writer_is_being_written() {
    let dir = tempfile::tempdir().unwrap();
    let index = RepoIndex::open(dir.path(), "fp", dir.path()).unwrap();
    assert!(!index.being_written());
    let writer = index.writer(15_000_000).unwrap();
    assert!(index.being_written());
    drop(writer);
    assert!(!index.being_written());
}

#[test]
fn code_facts_this_binary_cannot_read_are_refused_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let index = RepoIndex::open(dir.path(), "code", dir.path()).unwrap();
    let store = &index.store;
    let mut wtxn = store.write_txn().unwrap();
    store.put_code_fingerprint(&mut wtxn, &crate::code::grammar_fingerprint()).unwrap();
    let good = crate::code::extract(crate::ingest::Language::Rust, "pub fn a() {}\n").unwrap();
    store.put_code(&mut wtxn, "a.rs", &good).unwrap();
    wtxn.commit().unwrap();
    assert_eq!(index.code_graph().unwrap().symbol_count(), 1);
    // An entry of another layout under the same fingerprint (a development build).
    let mut wtxn = store.write_txn().unwrap();
    store.put_code_bytes(&mut wtxn, "b.rs", &[0xff, 0xff, 0xff]).unwrap();
    store.bump_code_generation(&mut wtxn).unwrap();
    wtxn.commit().unwrap();
    let err = index.code_graph().err().expect("a partial graph was answered");
    assert_eq!(err.code, ErrorCode::StaleIndex, "{err:?}");
    // The next run reads every file again.
    assert_eq!(store.code_fingerprint(&store.read_txn().unwrap()).unwrap(), None);
}

#[test]
fn a_code_graph_is_rebuilt_as_a_run_ends_only_when_a_request_asked_for_it_lately() {
    let dir = tempfile::tempdir().unwrap();
    let index = RepoIndex::open(dir.path(), "code", dir.path()).unwrap();
    // What an index run leaves: the file's facts, a new code generation.
    let run = |text: &str| {
        let store = &index.store;
        let mut wtxn = store.write_txn().unwrap();
        store.put_code_fingerprint(&mut wtxn, &crate::code::grammar_fingerprint()).unwrap();
        let code = crate::code::extract(crate::ingest::Language::Rust, text).unwrap();
        store.put_code(&mut wtxn, "a.rs", &code).unwrap();
        store.bump_code_generation(&mut wtxn).unwrap();
        wtxn.commit().unwrap();
        index.refresh_code_graph();
    };
    let cached = || index.code_cache.lock().unwrap().as_ref().map(|(_, graph)| graph.symbol_count());
    run("pub fn a() {}\n");
    assert_eq!(cached(), None, "nobody asked: no graph built");
    assert_eq!(index.code_graph().unwrap().symbol_count(), 1);
    run("pub fn a() {}\npub fn b() {}\n");
    assert_eq!(cached(), Some(2), "asked a moment ago: rebuilt as the run ended");
    let Some(long_ago) = std::time::Instant::now().checked_sub(CODE_GRAPH_IN_USE * 2) else { return };
    *index.code_asked.lock().unwrap() = Some(long_ago);
    run("pub fn a() {}\npub fn b() {}\npub fn c() {}\n");
    assert_eq!(cached(), Some(2), "asked long ago: left for the next question to build");
    assert_eq!(index.code_graph().unwrap().symbol_count(), 3);
}

#[test]
fn fusion_ranks_files_the_two_rankings_both_found_above_a_chunk_they_share() {
    // Files A = 0, B = 1, C = 2; chunks a1 = 10, a2 = 11, b1 = 20, c1 = 30, c2 = 31.
    // Chunk-level RRF would put b1 (found by both, 2nd and 3rd) first; as files, A
    // (1st lexically, 2nd by meaning) and C (3rd and 1st) come before B.
    let lexical = [(10, 0), (20, 1), (30, 2)];
    let dense = [(31, 2), (11, 0), (20, 1)];
    let params = SearchParams::new(10, 2);
    let docs = |fused: Vec<RankedCandidate>| fused.iter().map(|c| c.address.doc_id).collect::<Vec<_>>();
    let fused = fuse(ranking(&lexical, 1.0), ranking(&dense, 1.0), params, &HashMap::new());
    let a_score = 1.0 / (3.0 + 1.0) + 1.0 / (3.0 + 2.0);
    assert!((fused[0].score - a_score).abs() < 1e-6, "a hit's score is its file's");
    assert_eq!(fused[0].explain.lexical.map(|r| r.rank), Some(1));
    // A file's second chunk waits `repeat_hit_delay` files; here there are fewer files.
    assert_eq!(docs(fused), vec![10, 31, 20, 11, 30]);
    let one_per_file = SearchParams::new(10, 1);
    assert_eq!(
        docs(fuse(ranking(&lexical, 1.0), ranking(&dense, 1.0), one_per_file, &HashMap::new())),
        vec![10, 31, 20]
    );
    // Weights still count: with the dense ranking ignored, the lexical order stands.
    assert_eq!(
        docs(fuse(ranking(&lexical, 1.0), ranking(&dense, 0.0), one_per_file, &HashMap::new())),
        vec![10, 20, 30]
    );
    // A file whose name names half the question's words gains half the best file's score:
    // B (0.2 + 0.167, + 0.225) passes A (0.25 + 0.2) and C (0.167 + 0.25).
    let b_named = HashMap::from([(1, 0.5)]);
    assert_eq!(docs(fuse(ranking(&lexical, 1.0), ranking(&dense, 1.0), one_per_file, &b_named)), vec![20, 10, 31]);
}

#[test]
fn an_index_with_another_layout_is_emptied_for_a_rebuild_keeping_memories() {
    let state = tempfile::tempdir().unwrap();
    let root = state.path();
    {
        // An index as an older docdex might have left it: another schema, a file record,
        // a pending embedding and a memory.
        let mut builder = Schema::builder();
        builder.add_text_field("path", STRING | STORED);
        std::fs::create_dir_all(state.path().join("index")).unwrap();
        Index::create_in_dir(state.path().join("index"), builder.build()).unwrap();
        let store = RepoStore::open(&state.path().join("meta.lmdb")).unwrap();
        let mut wtxn = store.write_txn().unwrap();
        let record = FileRecord {
            content_hash: "h".into(),
            size: 1,
            mtime_ns: 1,
            chunks: 1,
            language: "rust".into(),
            chunk_ids: vec![7],
            problem: None,
        };
        store.put_file(&mut wtxn, "src/lib.rs", &record).unwrap();
        store.put_pending(&mut wtxn, 7).unwrap();
        let state_record = IndexRunState { last_completed: Some(1), next_chunk_id: 8, ..IndexRunState::default() };
        store.put_run_state(&mut wtxn, &state_record).unwrap();
        store.add_memory(&mut wtxn, "remember this", serde_json::json!({}), 1, None).unwrap();
        wtxn.commit().unwrap();
    }
    let index = RepoIndex::open(root, "fp", state.path()).unwrap();
    let rtxn = index.store.read_txn().unwrap();
    assert!(index.store.all_files(&rtxn).unwrap().is_empty());
    assert_eq!(index.store.pending_count(&rtxn).unwrap(), 0);
    let run = index.store.run_state(&rtxn).unwrap();
    assert!(!run.indexed(), "a rebuilt index must read as never indexed: {run:?}");
    assert_eq!(run.next_chunk_id, 8);
    assert_eq!(index.store.all_memories(&rtxn).unwrap().len(), 1);
    assert_eq!(index.num_chunks(), 0);
    drop(rtxn);
    // The new index takes documents.
    let writer = index.writer(15_000_000).unwrap();
    drop(writer);
}

/// A run killed between writing a segment's delete file and committing it leaves the
/// file (listed as managed); the next run reaching the same opstamp must not fail on it.
/// Repos in one team store with the same files, words and vectors but a marker each:
/// every search of one (lexical, dense, hybrid, a filter, a path restriction), every
/// chunk read and every memory answers from that repo only.
#[test]
fn repos_in_one_store_never_answer_with_each_others_rows() {
    let pool = crate::postgres::tests::test_pool();
    let backend = StoreBackend::Postgres(Arc::clone(&pool));
    let params = crate::ingest::ChunkParams { max_lines: 40, target_lines: 20, max_chars: 4000 };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let scratch = tempfile::tempdir().unwrap();
    // Close to one another: every chunk is a dense candidate of every query.
    let vector = |seed: usize| -> Vec<f32> {
        (0..models::EMBEDDING_DIMS)
            .map(|i| ((i * 31) % 17) as f32 / 17.0 - 0.5 + ((i * 7 + seed * 13) % 5) as f32 * 0.01)
            .collect()
    };
    let repos: Vec<RepoIndex> = (0..4)
        .map(|r| {
            let root = PathBuf::from(format!("/leak-test/{nanos}/repo{r}"));
            let index =
                RepoIndex::open_in(&root, &format!("leak-{nanos}-{r}"), &scratch.path().join(r.to_string()), &backend)
                    .unwrap();
            let mut writer = index.writer(15_000_000).unwrap();
            for file in 0..3u32 {
                let text =
                    format!("/// Retries the shared socket. Marker{r}only.\npub fn shared_retry_{file}() {{}}\n");
                let chunks = crate::ingest::chunk_file(crate::ingest::Language::Rust, &text, params);
                index.replace_file(&writer, &format!("src/f{file}.rs"), "rust", &chunks, &[file]).unwrap();
            }
            writer.commit().unwrap();
            let mut txn = index.store.write_txn().unwrap();
            for file in 0..3u32 {
                index.store.put_vector(&mut txn, file, &vector(file as usize)).unwrap();
            }
            index
                .store
                .add_memory(&mut txn, &format!("note of repo {r}"), serde_json::Value::Null, 0, Some(&vector(9)))
                .unwrap();
            txn.commit().unwrap();
            index
        })
        .collect();
    for (r, index) in repos.iter().enumerate() {
        index.reload().unwrap();
        let marker = format!("Marker{r}only");
        let mut seen = 0;
        use crate::protocol::SearchMode;
        for mode in [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid] {
            let outcome = index
                .search_with("shared socket retry", Some(&vector(1)), mode, SearchParams::new(20, 5), false)
                .unwrap();
            assert_eq!(outcome.hits.len(), 3, "{mode:?}: the repo's three chunks, no more");
            for hit in outcome.hits {
                let chunk = index.chunk(hit.chunk_id.unwrap()).unwrap().unwrap();
                assert!(chunk.text.contains(&marker), "repo {r} {mode:?} answered with {}", chunk.text);
                seen += 1;
            }
        }
        assert_eq!(seen, 9);
        let paths = index.search_paths("shared", &["src/f1.rs".to_string()], SearchParams::new(20, 5)).unwrap();
        assert_eq!(paths.hits.len(), 1);
        let rtxn = index.store.read_txn().unwrap();
        let notes = index.store.all_memories(&rtxn).unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].text, format!("note of repo {r}"));
        assert_eq!(index.store.memory_similarities(&rtxn, &vector(9)).unwrap().len(), 1);
        assert_eq!(index.store.vector_count(&rtxn).unwrap(), 3);
        assert_eq!(index.live_chunks().unwrap().len(), 3);
    }
}

#[test]
fn a_delete_file_a_killed_run_left_behind_does_not_block_the_next_run() {
    let params = crate::ingest::ChunkParams { max_lines: 40, target_lines: 20, max_chars: 4000 };
    let chunk = |text: &str| crate::ingest::chunk_file(crate::ingest::Language::Rust, text, params);
    let first_run = |state: &Path| {
        let index = RepoIndex::open(state, "fp", state).unwrap();
        let mut writer = index.writer(15_000_000).unwrap();
        index.replace_file(&writer, "src/lib.rs", "rust", &chunk("pub fn one() {}\n"), &[0]).unwrap();
        index.replace_file(&writer, "src/other.rs", "rust", &chunk("pub fn other() {}\n"), &[1]).unwrap();
        writer.commit().unwrap();
    };
    let second_run = |state: &Path| {
        let index = RepoIndex::open(state, "fp", state).unwrap();
        let mut writer = index.writer(15_000_000).unwrap();
        index.replace_file(&writer, "src/lib.rs", "rust", &chunk("pub fn two() {}\n"), &[2]).unwrap();
        writer.commit().map(|_| ())
    };
    let names = |state: &Path, suffix: &str| -> Vec<String> {
        std::fs::read_dir(state.join("index"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(suffix))
            .collect()
    };
    // Where the second run's delete file goes: `<segment>.<opstamp>.del`.
    let scratch = tempfile::tempdir().unwrap();
    first_run(scratch.path());
    second_run(scratch.path()).unwrap();
    let del = names(scratch.path(), ".del").pop().expect("the second run deletes in the first segment");
    let opstamp = del.split('.').nth(1).unwrap().to_string();
    // The same runs on another index, with that file already there and managed.
    let state = tempfile::tempdir().unwrap();
    first_run(state.path());
    let segment = names(state.path(), ".idx").pop().unwrap().trim_end_matches(".idx").to_string();
    let orphan = format!("{segment}.{opstamp}.del");
    std::fs::write(state.path().join("index").join(&orphan), b"left by a killed run").unwrap();
    let managed_path = state.path().join("index/.managed.json");
    let mut managed: Vec<String> = serde_json::from_slice(&std::fs::read(&managed_path).unwrap()).unwrap();
    managed.push(orphan);
    std::fs::write(&managed_path, serde_json::to_vec(&managed).unwrap()).unwrap();
    second_run(state.path()).expect("the next run commits");
}

#[test]
fn an_index_of_another_analyzer_format_is_rebuilt() {
    let state = tempfile::tempdir().unwrap();
    {
        let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
        let mut writer = index.writer(15_000_000).unwrap();
        let chunk = crate::ingest::chunk_file(
            crate::ingest::Language::Rust,
            "pub fn old_chunk() {}\n",
            crate::ingest::ChunkParams { max_lines: 40, target_lines: 20, max_chars: 4000 },
        );
        index.replace_file(&writer, "src/lib.rs", "rust", &chunk, &[0]).unwrap();
        writer.commit().unwrap();
        let mut wtxn = index.store.write_txn().unwrap();
        // Completed by a docdex from before format versions (0).
        let old = IndexRunState { last_completed: Some(1), next_chunk_id: 1, ..IndexRunState::default() };
        index.store.put_run_state(&mut wtxn, &old).unwrap();
        wtxn.commit().unwrap();
    }
    let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
    assert_eq!(index.num_chunks(), 0, "the old chunks are gone");
    let run = index.store.run_state(&index.store.read_txn().unwrap()).unwrap();
    assert!(!run.indexed(), "{run:?}");
    assert_eq!(run.next_chunk_id, 1, "ids keep growing");
    assert!(run.rebuild_reason.as_deref().is_some_and(|why| why.contains("format 0")), "{run:?}");
    // Completed by this docdex: kept as is.
    let mut wtxn = index.store.write_txn().unwrap();
    let current = IndexRunState { last_completed: Some(2), format_version: INDEX_FORMAT_VERSION, ..run };
    index.store.put_run_state(&mut wtxn, &current).unwrap();
    wtxn.commit().unwrap();
    drop(index);
    let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
    assert!(index.store.run_state(&index.store.read_txn().unwrap()).unwrap().indexed());
}

#[test]
fn a_file_s_second_hit_moves_down_by_the_repeat_delay() {
    let state = tempfile::tempdir().unwrap();
    let index = RepoIndex::open(state.path(), "fp", state.path()).unwrap();
    let mut writer = index.writer(15_000_000).unwrap();
    let params = crate::ingest::ChunkParams { max_lines: 6, target_lines: 3, max_chars: 4000 };
    let files = [
        ("src/strong.rs", "/// Frobnicate the widget.\npub fn frobnicate_widget() {}\n\n\n\n\n/// Frobnicate a widget twice.\npub fn frobnicate_widget_twice() {}\n"),
        ("src/weak.rs", "/// Frobnicate.\npub fn frobnicate() {}\n"),
    ];
    for (i, (path, text)) in files.iter().enumerate() {
        let chunks = crate::ingest::chunk_file(crate::ingest::Language::Rust, text, params);
        let ids: Vec<u32> = (0..chunks.len() as u32).map(|n| 10 * i as u32 + n).collect();
        index.replace_file(&writer, path, "rust", &chunks, &ids).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let paths = |delay: usize| -> Vec<String> {
        let params = SearchParams { repeat_hit_delay: delay, ..SearchParams::new(3, 2) };
        index.search("frobnicate widget", params).unwrap().hits.into_iter().map(|h| h.path).collect()
    };
    assert_eq!(paths(0), ["src/strong.rs", "src/strong.rs", "src/weak.rs"], "ranked order without a delay");
    assert_eq!(paths(10), ["src/strong.rs", "src/weak.rs", "src/strong.rs"], "other files first, then repeats");
    assert_eq!(paths(1), ["src/strong.rs", "src/strong.rs", "src/weak.rs"], "a short delay only swaps close ties");
}

#[test]
fn questions_about_how_something_works_are_told_from_requests_for_an_api() {
    for question in [
        "how does the scheduler decide which task runs next",
        "what happens to queued messages when the receiver is dropped",
        "When a task panics, how is the panic reported to its joiner?",
        "why is the waker cloned",
        "is a woken task run right away",
        "can writers starve readers in the lock",
        "how often does a worker check the global queue",
    ] {
        assert!(asks_how_it_works(question), "{question}");
    }
    for question in [
        "how do I read a file into a string",
        "how can I spawn a task from another thread",
        "how can many readers see the latest value",
        "can I cancel a timer",
        "is there a way to limit concurrency",
        "how many tasks are alive",
        "pause the current task for a while",
        "JoinSet::abort_all",
        "",
    ] {
        assert!(!asks_how_it_works(question), "{question}");
    }
    assert_eq!(internal_prior_for("how does a timer fire"), 1.0);
    assert_eq!(internal_prior_for("make a timer"), INTERNAL_PRIOR);
}

#[test]
fn comment_prose_keeps_the_words_and_drops_markers_code_and_examples() {
    let rust = "/// Sleeps until the deadline.\n///\n/// ```\n/// tokio::time::sleep(d).await;\n/// ```\n#[inline]\npub fn sleep(d: Duration) {\n    // Register with the timer wheel.\n    let x = 1;\n}\n";
    assert_eq!(comment_prose(rust), "Sleeps until the deadline.\n\nRegister with the timer wheel.\n");
    let python =
        "def render(self):\n    \"\"\"Render the table\n    with borders.\n    \"\"\"\n    return x  # the cells\n";
    let prose = comment_prose(python);
    assert!(prose.contains("Render the table") && prose.contains("with borders."), "{prose:?}");
    assert!(!prose.contains("return"), "{prose:?}");
}

#[test]
fn a_qualified_query_names_its_qualifier() {
    assert_eq!(named_qualifier("AsyncReadExt::read_exact"), Some("AsyncReadExt"));
    assert_eq!(named_qualifier("Flask.route()"), Some("Flask"));
    assert_eq!(named_qualifier("Router#route"), Some("Router"));
    assert_eq!(named_qualifier("read_exact"), None);
    assert_eq!(named_qualifier("how read_exact works"), None);
    let (a, b, c) = (DocAddress::new(0, 1), DocAddress::new(0, 2), DocAddress::new(0, 3));
    // Definitions in files 7, 8, 9; the qualifier is defined in 8.
    assert_eq!(held_definitions(&[a, b, c], &[7, 8, 9], &[8]), vec![b]);
    assert_eq!(held_definitions(&[a, b, c], &[7, 8, 9], &[4]), vec![]);
}

#[test]
fn a_file_is_named_after_an_identifier_in_any_case_and_with_separators() {
    let whole = Some(Title::Whole);
    assert_eq!(named_after("railties/lib/rails/application.rb", "Application"), whole);
    assert_eq!(named_after("axum/src/extract/from_request.rs", "FromRequest"), whole);
    assert_eq!(named_after("src/main/java/Router.java", "Router"), whole);
    assert_eq!(named_after("lib/date-utils.d.ts", "dateUtils"), Some(Title::First));
    // A C# partial type's other files, and Kotlin's platform halves, name it by their first part.
    assert_eq!(named_after("src/MessagePackReader.Integers.cs", "MessagePackReader"), Some(Title::First));
    assert_eq!(named_after("src/MessagePackReader.cs", "MessagePackReader"), whole);
    assert_eq!(named_after("jvm/src/Dispatchers.jvm.kt", "Dispatchers"), Some(Title::First));
    assert_eq!(named_after("railties/lib/rails/application/finisher.rb", "Application"), None);
    assert_eq!(named_after("test/application_test.rb", "Application"), None);
}

#[test]
fn every_term_of_a_line_is_one_of_its_words_and_begins_with_letters_the_word_holds() {
    // `Snippets` analyzes only the words that hold a query term's first letters (three, or
    // all but the last of a shorter term), each alone; that is sound while every term the
    // analyzer makes of a line is one it makes of one of the line's words, and starts with
    // letters of that word.
    let mut analyzer = super::analyzer::code_analyzer();
    let texts = [
        include_str!("search.rs"),
        include_str!("analyzer.rs"),
        include_str!("../../README.md"),
        "renderedOutput = Renderer::new(); HTTPServerError größe Ärger naïve CamelCase_snake_case",
    ];
    for text in texts {
        for line in text.lines() {
            let mut of_words = Vec::new();
            for word in line.split(|c: char| !super::analyzer::is_word_char(c)).filter(|w| !w.is_empty()) {
                let lower: String = word.chars().flat_map(char::to_lowercase).collect();
                for term in super::analyzer::analyze(&mut analyzer, word) {
                    let probe = super::search::snippet_probe(&term);
                    assert!(lower.contains(&probe), "word {word:?} makes the term {term:?}");
                    of_words.push(term);
                }
            }
            assert_eq!(super::analyzer::analyze(&mut analyzer, line), of_words, "line {line:?}");
        }
    }
}

#[test]
fn a_snippet_holds_the_lines_of_a_stemmed_identifier_part() {
    let mut analyzer = super::analyzer::code_analyzer();
    let mut body: Vec<String> = (0..12).map(|i| format!("filler line number {i}")).collect();
    body.push("    let renderedOutput = Renderer::with_configuration(settings);".into());
    body.extend((12..24).map(|i| format!("filler line number {i}")));
    let terms = super::search::query_terms(&mut analyzer, "rendering configuration");
    let terms: std::collections::HashSet<&str> = terms.iter().map(String::as_str).collect();
    let mut snippets = super::search::Snippets::new(&terms, &mut analyzer);
    let snippet = snippets.best(&body.join("\n"));
    assert!(snippet.contains("    let renderedOutput"), "{snippet}");
    // A line whose lowercase moves its bytes (`İ` lowercases to two characters) is read as
    // well, and a word met before is answered alike.
    body[12] = "    let İstanbulRenderedOutput = Größe::with_configuration(settings);".into();
    let snippet = snippets.best(&body.join("\n"));
    assert!(snippet.contains("İstanbulRenderedOutput"), "{snippet}");
}
