//! Dense and hybrid retrieval with the real ONNX model: embeddings, vectors in LMDB (arroy),
//! the embedding cache, fallbacks without a model, and the modes over CLI and HTTP.

use docdex::actors::embedder::{EmbedderSettings, EmbeddingModel};
use docdex::index::models::ModelPaths;

use crate::common::{get, hit_paths, models_dir, open_store, repo_with, repo_with_owned, write, Home, Server};

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn paraphrases_are_closer_than_unrelated_text() {
    let settings = EmbedderSettings {
        enabled: true,
        paths: ModelPaths::under(&models_dir()),
        batch_size: 16,
        max_tokens: 256,
        threads: 1,
        static_vectors: true,
        model_vectors: true,
    };
    let mut model = EmbeddingModel::load(&settings).unwrap();
    let texts: Vec<String> = [
        "How do I stop a slow task from freezing everything?",
        "Run blocking work on a separate thread so the executor keeps going.",
        "The recipe needs two cups of flour and a pinch of salt.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_related_closer(&model.embed(&texts).unwrap());
}

/// Unit 384-d vectors, the first two texts closer than the first and the third.
fn assert_related_closer(v: &[Vec<f32>]) {
    assert!(v.iter().all(|x| x.len() == 384));
    let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-3, "vectors are unit length, got {norm}");
    let related = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(related > unrelated + 0.1, "related {related} vs unrelated {unrelated}");
}

/// Files that share no words with the questions asked of them.
fn paraphrase_repo() -> tempfile::TempDir {
    repo_with(&[
        (
            "src/throttle.rs",
            "/// Limits how many requests a client may send per minute.\npub fn rate_limit(client_id: u64, per_minute: u32) -> bool {\n    per_minute > 0 && client_id > 0\n}\n",
        ),
        (
            "src/backup.rs",
            "/// Copies the database files to cold storage every night.\npub fn nightly_snapshot(target: &str) {\n    let _ = target;\n}\n",
        ),
        (
            "docs/colors.md",
            "# Palette\n\nThe interface uses teal for primary buttons and amber for warnings.\n",
        ),
    ])
}

#[test]
fn dense_and_hybrid_find_what_lexical_misses() {
    let repo = paraphrase_repo();
    let home = Home::with_model();
    let summary = home.json(&["index", "--repo", repo.path().to_str().unwrap(), "--wait", "--json"]);
    assert_eq!(summary["embeddings"]["embedded"], summary["chunks_total"], "{summary}");
    let question = "cap the number of calls a user can make";
    let run = |mode: &str| {
        let out = home.run(&[
            "search",
            "--repo",
            repo.path().to_str().unwrap(),
            "--json",
            "--explain",
            "--mode",
            mode,
            question,
        ]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let lexical = run("lexical");
    assert!(!hit_paths(&lexical).contains(&"src/throttle.rs".to_string()), "{lexical}");
    let dense = run("dense");
    assert_eq!(dense["mode"], "dense");
    assert_eq!(hit_paths(&dense).first().map(String::as_str), Some("src/throttle.rs"), "{dense}");
    assert!(dense["hits"][0]["explain"]["dense"]["rank"] == 1);
    let hybrid = run("hybrid");
    assert_eq!(hybrid["mode"], "hybrid");
    assert_eq!(hit_paths(&hybrid).first().map(String::as_str), Some("src/throttle.rs"), "{hybrid}");
    let confidence = hybrid["top_score"].as_f64().unwrap();
    assert!(confidence > 0.2 && confidence <= 1.0, "{hybrid}");
    // With vectors present, the default mode is hybrid.
    let auto = home.search(repo.path(), "nightly copy of the data to cold storage");
    assert_eq!(auto["mode"], "hybrid");
    assert_eq!(hit_paths(&auto).first().map(String::as_str), Some("src/backup.rs"), "{auto}");
}

#[test]
fn vectors_survive_a_restart_and_only_changed_chunks_are_re_embedded() {
    let repo = repo_with(&[
        ("docs/a.md", "# Alpha\n\nGlaciers carve valleys over thousands of years.\n\n# Beta\n\nVolcanoes build islands from lava.\n"),
        ("docs/b.md", "# Gamma\n\nCoral reefs grow in warm shallow seas.\n"),
    ]);
    let home = Home::with_model();
    let first = home.json(&["index", "--repo", repo.path().to_str().unwrap(), "--wait", "--json"]);
    assert_eq!(first["chunks_total"], 3, "{first}");
    assert_eq!(first["embeddings"]["embedded"], 3);

    // A new process (a restart) sees the stored vectors.
    let status = home.json(&["status", "--repo", repo.path().to_str().unwrap(), "--json"]);
    assert_eq!(status["embeddings"]["embedded"], 3, "{status}");
    assert_eq!(status["embeddings"]["pending"], 0);
    assert_eq!(status["embeddings"]["model_available"], true);
    let dense = home.run(&[
        "search",
        "--repo",
        repo.path().to_str().unwrap(),
        "--json",
        "--mode",
        "dense",
        "molten rock forming land in the ocean",
    ]);
    let dense: serde_json::Value = serde_json::from_slice(&dense.stdout).unwrap();
    assert_eq!(hit_paths(&dense).first().map(String::as_str), Some("docs/a.md"), "{dense}");
    assert_eq!(dense["hits"][0]["heading"], "Beta");

    // One of a.md's two sections changes: only that chunk is embedded again.
    write(repo.path(), "docs/a.md", "# Alpha\n\nGlaciers carve valleys over thousands of years.\n\n# Beta\n\nDeserts spread where rain no longer falls.\n");
    let second = home.json(&["index", "--repo", repo.path().to_str().unwrap(), "--wait", "--json"]);
    assert_eq!(second["files_indexed"], 1, "{second}");
    assert_eq!(second["embeddings"]["embedded"], 1, "{second}");
    assert_eq!(second["embeddings"]["vectors"], 3);

    // Deleting a file removes its vectors.
    std::fs::remove_file(repo.path().join("docs/b.md")).unwrap();
    let third = home.json(&["index", "--repo", repo.path().to_str().unwrap(), "--wait", "--json"]);
    assert_eq!(third["embeddings"]["embedded"], 0, "{third}");
    assert_eq!(third["embeddings"]["vectors"], 2);
}

#[test]
fn without_a_model_search_is_lexical_and_says_so() {
    let repo = paraphrase_repo();
    let home = Home::with_model();
    let empty_models = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| home.cmd().args(args).env("DOCDEX_MODELS_DIR", empty_models.path()).output().unwrap();
    let repo_arg = repo.path().to_str().unwrap();

    let out = run(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["embeddings"]["embedded"], 0);
    let notice = summary["embeddings"]["notice"].as_str().unwrap();
    assert!(notice.contains("docdexd models install") && notice.contains("lexical-only"), "{notice}");

    let out = run(&["search", "--repo", repo_arg, "--json", "--mode", "hybrid", "rate_limit"]);
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(response["mode"], "lexical", "{response}");
    assert!(response["notice"].as_str().unwrap().contains("embedding model unavailable"), "{response}");
    assert_eq!(hit_paths(&response).first().map(String::as_str), Some("src/throttle.rs"));
    // Found nothing: the text output still says why the search was lexical.
    let out = run(&["search", "--repo", repo_arg, "--mode", "dense", "zyzzyva quux"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("note: ") && text.contains("embedding model unavailable") && text.contains("no hits"),
        "{text}"
    );

    let out = run(&["status", "--repo", repo_arg, "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["embeddings"]["model_available"], false);
    assert_eq!(status["embeddings"]["pending"], status["chunks"]);

    let check = run(&["check"]);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(stdout.contains("warn  model") && stdout.contains("docdexd models install"), "{stdout}");

    // The model arrives: the pending chunks are embedded and dense search works.
    let later = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(later["files_indexed"], 0);
    assert_eq!(later["embeddings"]["embedded"], later["chunks_total"], "{later}");
}

#[tokio::test]
async fn http_search_takes_mode_and_explain() {
    let repo = paraphrase_repo();
    let home = Home::with_model();
    // The README's first command: a daemon on a repo never indexed indexes it, serves, and
    // embeds its chunks in the background, unasked.
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let status_url = server.url(&format!("/v1/status?repo={}", repo.path().display()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let (_, status_body) = get(&status_url, server.token()).await;
        let embeddings = &status_body["embeddings"];
        if embeddings["pending"] == 0 && embeddings["embedded"].as_u64() > Some(0) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the daemon never embedded the repo: {status_body}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let (status, body) = get(
        &server.url("/v1/search?q=cap%20the%20number%20of%20calls%20a%20user%20can%20make&mode=hybrid&explain=true"),
        server.token(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["mode"], "hybrid");
    assert_eq!(body["hits"][0]["path"], "src/throttle.rs");
    assert_eq!(body["hits"][0]["explain"]["dense"]["rank"], 1);
    let (status, body) = get(&server.url("/v1/search?q=x&mode=fuzzy"), server.token()).await;
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains("unknown mode"));
    let (_, status_body) =
        get(&server.url(&format!("/v1/status?repo={}", repo.path().display())), server.token()).await;
    assert_eq!(status_body["embeddings"]["pending"], 0);
}

/// A dense search of a repo with the model but nothing embedded yet says how to embed it,
/// not only "no hits".
#[test]
fn a_dense_search_before_any_embedding_says_how_to_get_one() {
    let repo = paraphrase_repo();
    let home = Home::with_model();
    let repo_arg = repo.path().to_str().unwrap();
    let out = home.run(&["index", "--repo", repo_arg, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = home.run(&["search", "--repo", repo_arg, "--mode", "dense", "--json", "how are requests throttled"]);
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notice = response["notice"].as_str().unwrap_or_default();
    assert!(notice.contains("nothing in this repo is embedded yet") && notice.contains("--wait"), "{response}");
}

#[test]
fn static_vectors_put_related_texts_closer_than_unrelated_ones() {
    let paths = ModelPaths::under(&models_dir());
    let model = docdex::index::static_model::StaticModel::load_or_distill(&paths, 1, &mut |_| {}).unwrap();
    let texts: Vec<String> = [
        "fn rate_limit(client: ClientId) -> bool: limits how many requests a client may send",
        "Throttle the number of requests each client can make per minute.",
        "The recipe needs two cups of flour and a pinch of salt.",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let v = model.embed(&texts);
    assert_related_closer(&v);
    assert!(v[3].iter().all(|&x| x == 0.0), "a text without words has no direction");
}

/// Every chunk has a static vector when `index --wait` returns, dense search uses them while
/// the model's are missing, and the model's take over once every chunk has one.
#[test]
fn static_vectors_answer_until_the_models_cover_every_chunk() {
    let repo = paraphrase_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::with_config("[embedding]\nmodel_vectors = false\n").model();
    let summary = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["embeddings"]["static_vectors"], summary["chunks_total"], "{summary}");
    assert_eq!(summary["embeddings"]["embedded"], 0, "{summary}");
    let status = home.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["embeddings"]["dense_vectors"], "static", "{status}");
    let report = String::from_utf8_lossy(&home.run(&["check"]).stdout).to_string();
    let line = report.lines().find(|l| l.contains("static vectors")).unwrap_or_default();
    assert!(line.starts_with("ok") && line.contains("distilled at"), "{report}");
    assert_eq!(status["embeddings"]["static_pending"], 0, "{status}");

    let dense = |home: &Home| {
        let out = home.run(&[
            "search",
            "--repo",
            repo_arg,
            "--json",
            "--explain",
            "--mode",
            "dense",
            "copy the database to cold storage every night",
        ]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let found = dense(&home);
    assert_eq!(found["mode"], "dense", "{found}");
    assert_eq!(hit_paths(&found).first().map(String::as_str), Some("src/backup.rs"), "{found}");
    assert_eq!(found["hits"][0]["explain"]["dense"]["rank"], 1, "{found}");
    // Static vectors by choice: nothing is waiting, so nothing to say.
    assert!(found["notice"].is_null(), "{found}");

    // The model's vectors on: after the next run every chunk has one, and they answer.
    std::fs::write(home.dir.path().join("config.toml"), "[embedding]\nmodel_vectors = true\n").unwrap();
    let summary = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["embeddings"]["vectors"], summary["chunks_total"], "{summary}");
    let status = home.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["embeddings"]["dense_vectors"], "model", "{status}");
    let found = dense(&home);
    assert_eq!(hit_paths(&found).first().map(String::as_str), Some("src/backup.rs"), "{found}");
}

/// The norm of the mean of unit vectors: near 1 when they share most of their direction.
fn mean_norm(vectors: &[(u32, Vec<f32>)]) -> f32 {
    let mut mean = docdex::index::static_model::MeanVector::default();
    vectors.iter().for_each(|(_, v)| mean.add(v));
    mean.mean().iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// A repo of `MIN_CENTRED_CHUNKS` chunks or more has its static vectors centred on its mean
/// (what all its chunks share taken out); a smaller repo's stay as they are. A file saved
/// later is centred on the same mean, and dense search still finds the paraphrase.
#[test]
fn a_large_repos_static_vectors_are_centred_on_its_mean() {
    use docdex::index::static_model::MIN_CENTRED_CHUNKS;
    use docdex::index::ChunkVectors;

    let handler = |i: usize| {
        (
            format!("src/handlers/h{i}.rs"),
            format!("/// Handles case {i} of the request pipeline.\npub fn handle_{i}(input: &str) -> usize {{\n    input.len() + {i}\n}}\n"),
        )
    };
    let backup = (
        "src/backup.rs".to_string(),
        "/// Copies the database files to cold storage every night.\npub fn nightly_snapshot(target: &str) {\n    let _ = target;\n}\n".to_string(),
    );
    let home = Home::with_config("[embedding]\nmodel_vectors = false\n").model();
    let index = |repo: &std::path::Path| {
        let summary = home.json(&["index", "--repo", repo.to_str().unwrap(), "--wait", "--json"]);
        assert_eq!(summary["embeddings"]["static_vectors"], summary["chunks_total"], "{summary}");
        summary
    };
    let static_vectors = |repo: &std::path::Path| {
        let store = open_store(&home, repo);
        let txn = store.read_txn().unwrap();
        (store.static_mean(&txn).unwrap(), store.all_vectors_of(&txn, ChunkVectors::Static).unwrap())
    };

    let small = repo_with_owned(&(0..20).map(handler).chain([backup.clone()]).collect::<Vec<_>>());
    index(small.path());
    let (mean, vectors) = static_vectors(small.path());
    assert!(mean.is_none(), "21 chunks make no mean");
    assert!(mean_norm(&vectors) > 0.5, "uncentred, the look-alike chunks point one way: {}", mean_norm(&vectors));

    let large = repo_with_owned(&(0..MIN_CENTRED_CHUNKS + 20).map(handler).chain([backup]).collect::<Vec<_>>());
    // The first pass, which computes the mean, says so as the others do.
    let out = home.run(&["index", "--repo", large.path().to_str().unwrap(), "--wait"]);
    let said = String::from_utf8_lossy(&out.stderr);
    let chunks = MIN_CENTRED_CHUNKS + 21;
    assert!(said.contains(&format!("static vectors: the repo's mean from {chunks} chunks, 0 to go")), "{said}");
    let summary = index(large.path());
    let (mean, vectors) = static_vectors(large.path());
    let mean = mean.expect("a large repo's mean is kept");
    assert_eq!(vectors.len() as u64, summary["chunks_total"].as_u64().unwrap(), "{summary}");
    assert!(mean_norm(&vectors) < 0.3, "centred, what they share is gone: {}", mean_norm(&vectors));

    write(
        large.path(),
        "src/restore.rs",
        "/// Brings a snapshot back from cold storage.\npub fn restore(from: &str) {}\n",
    );
    index(large.path());
    let (after, vectors_after) = static_vectors(large.path());
    assert_eq!(after.as_ref(), Some(&mean), "a later run keeps the mean");
    assert_eq!(vectors_after.len(), vectors.len() + 1);

    let out = home.run(&[
        "search",
        "--repo",
        large.path().to_str().unwrap(),
        "--json",
        "--mode",
        "dense",
        "copy the database to cold storage every night",
    ]);
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hit_paths(&found).first().map(String::as_str), Some("src/backup.rs"), "{found}");
}

/// Chunks embedded while static vectors were off get them once they are on, and dense
/// search follows the configuration: model vectors off means the static ones answer.
#[test]
fn chunks_from_before_static_vectors_get_them_and_search_follows_the_configuration() {
    let repo = paraphrase_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::with_config("[embedding]\nstatic_vectors = false\n").model();
    let summary = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["embeddings"]["vectors"], summary["chunks_total"], "{summary}");
    let status = home.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["embeddings"]["static_vectors"], 0, "{status}");
    assert_eq!(status["embeddings"]["dense_vectors"], "model", "{status}");

    std::fs::write(home.dir.path().join("config.toml"), "[embedding]\nmodel_vectors = false\n").unwrap();
    let summary = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["files_indexed"], 0, "nothing changed: {summary}");
    assert_eq!(summary["embeddings"]["static_vectors"], summary["chunks_total"], "{summary}");
    let status = home.json(&["status", "--repo", repo_arg, "--json"]);
    assert_eq!(status["embeddings"]["dense_vectors"], "static", "{status}");
    assert_eq!(status["embeddings"]["static_pending"], 0, "{status}");
}

/// Static vectors need the model only to be distilled: with the model gone since, they still
/// give dense search, and the summary says so rather than "lexical-only".
#[test]
fn static_vectors_answer_when_the_model_itself_is_missing() {
    let models = tempfile::tempdir().unwrap();
    let from = ModelPaths::under(&models_dir());
    let to = ModelPaths::under(models.path());
    std::fs::create_dir_all(&to.model_dir).unwrap();
    // Distilled if this machine has not yet (the first test to need them does it).
    docdex::index::static_model::StaticModel::load_or_distill(&from, 1, &mut |_| {}).unwrap();
    for file in ["tokenizer.json", docdex::index::static_model::STATIC_FILE_NAME] {
        std::fs::copy(from.model_dir.join(file), to.model_dir.join(file)).unwrap();
    }
    let repo = paraphrase_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::new().models_in(models.path());
    let summary = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["embeddings"]["static_vectors"], summary["chunks_total"], "{summary}");
    assert_eq!(summary["embeddings"]["embedded"], 0, "{summary}");
    let notice = summary["embeddings"]["notice"].as_str().unwrap_or_default();
    assert!(notice.contains("model.onnx") && notice.contains("static vectors until then"), "{summary}");
    let out = home.run(&["search", "--repo", repo_arg, "--json", "--mode", "dense", "copy the database every night"]);
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["mode"], "dense", "{found}");
    assert_eq!(hit_paths(&found).first().map(String::as_str), Some("src/backup.rs"), "{found}");
    // The status a person reads says the same, not "lexical-only".
    let out = home.run(&["status", "--repo", repo_arg]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("which dense search uses") && !text.contains("lexical-only"), "{text}");
}
