//! Crash safety under SIGKILL at random points of indexing and background embedding: after
//! the next complete run the index holds every chunk once, every vector belongs to the text
//! it is stored for (checked by re-embedding), and memory ids are unique.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::common::{live_chunks, models_dir, write, Home, Server};

const FILES: usize = 36;
const TOPICS: [&str; 6] = ["parsing", "caching", "retries", "logging", "sockets", "hashing"];

fn content(i: usize, generation: usize) -> String {
    let topic = TOPICS[(i + generation) % TOPICS.len()];
    format!(
        "/// Module {i}, revision {generation}: helpers for {topic} in the worker number {i}.\npub fn item_{i:02}_rev_{generation}() -> u32 {{\n    {}\n}}\n",
        i * 1000 + generation
    )
}

#[test]
fn fifty_random_kills_lose_nothing_and_confuse_no_vector() {
    let repo = tempfile::tempdir().unwrap();
    for i in 0..FILES {
        write(repo.path(), &format!("src/m{i:02}.rs"), &content(i, 0));
    }
    let repo_arg = repo.path().to_str().unwrap();
    let home = Home::with_config("[index]\nbatch_max_files = 3\n\n[embedding]\nbatch_size = 4\n").model();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut memory_ids = Vec::new();
    for trial in 1..=50 {
        // Every trial changes a few files, so each run has indexing and embedding to do.
        for _ in 0..3 {
            let i = (next() % FILES as u64) as usize;
            write(repo.path(), &format!("src/m{i:02}.rs"), &content(i, trial));
        }
        let mut child = home.cmd().args(["index", "--repo", repo_arg, "--wait"]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(next() % 1800));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        if trial % 5 == 0 {
            let out = home.run(&["memory", "save", "--repo", repo_arg, "--json", &format!("note from trial {trial}")]);
            if out.status.success() {
                let saved: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                memory_ids.push(saved["id"].as_u64().unwrap());
            }
        }
    }
    let summary = home.json(&["index", "--repo", repo_arg, "--wait", "--json"]);
    assert_eq!(summary["embeddings"]["pending"], 0, "{summary}");
    assert_consistent(&home, repo.path());

    // Memory ids were never handed out twice.
    assert!(memory_ids.len() >= 5, "{memory_ids:?}");
    assert_eq!(memory_ids.iter().collect::<HashSet<_>>().len(), memory_ids.len(), "{memory_ids:?}");
}

/// After the final complete run: every file indexed once with its current text, every chunk
/// id once, records and index agreeing, and every chunk's vector the vector of its own text
/// (re-embedded and compared), none left over.
fn assert_consistent(home: &Home, repo: &std::path::Path) {
    // Every file once, every chunk id once.
    let index = home.open_index(repo);
    let mut by_path: HashMap<String, Vec<u32>> = HashMap::new();
    for (path, id) in live_chunks(&index) {
        by_path.entry(path).or_default().push(id);
    }
    assert_eq!(by_path.len(), FILES, "every file indexed: {:?}", by_path.keys());
    assert!(by_path.values().all(|ids| ids.len() == 1), "one chunk per file: {by_path:?}");
    let ids: Vec<u32> = by_path.values().flatten().copied().collect();
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "duplicate chunk ids");
    // The index holds each file's current text.
    let rtxn = index.store.read_txn().unwrap();
    for (path, ids) in &by_path {
        let on_disk = std::fs::read_to_string(repo.join(path)).unwrap();
        let record = index.store.file(&rtxn, path).unwrap().unwrap();
        assert_eq!(record.chunk_ids, *ids, "{path}: records and index agree");
        let input = index.embedding_inputs(ids).unwrap().remove(0).1.unwrap();
        assert!(input.contains(on_disk.lines().next().unwrap()), "{path} is stale: {input}");
    }

    // Every chunk has a vector, and it is the vector of that chunk's text.
    let vectors: HashMap<u32, Vec<f32>> = index.store.all_vectors(&rtxn).unwrap().into_iter().collect();
    assert_eq!(index.store.pending_count(&rtxn).unwrap(), 0);
    let settings = docdex::actors::embedder::EmbedderSettings {
        enabled: true,
        paths: docdex::index::models::ModelPaths::under(&models_dir()),
        batch_size: 8,
        max_tokens: 256,
        threads: 1,
        static_vectors: true,
        model_vectors: true,
    };
    let mut model = docdex::actors::embedder::EmbeddingModel::load(&settings).unwrap();
    let inputs = index.embedding_inputs(&ids).unwrap();
    let texts: Vec<String> = inputs.iter().map(|(_, t)| t.clone().unwrap()).collect();
    let fresh = model.embed(&texts).unwrap();
    for ((id, _), vector) in inputs.iter().zip(&fresh) {
        let stored = vectors.get(id).unwrap_or_else(|| panic!("chunk {id} has no vector"));
        let cosine: f32 = stored.iter().zip(vector).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.999, "chunk {id}'s vector belongs to other text (cosine {cosine})");
    }
    assert_eq!(vectors.len(), ids.len(), "no vectors of chunks that are gone");

    // The same of the static vectors.
    let statics: HashMap<u32, Vec<f32>> =
        index.store.all_vectors_of(&rtxn, docdex::index::ChunkVectors::Static).unwrap().into_iter().collect();
    assert_eq!(index.store.static_pending_count(&rtxn).unwrap(), 0);
    let static_model =
        docdex::index::static_model::StaticModel::load_or_distill(&settings.paths, 1, &mut |_| {}).unwrap();
    for ((id, _), vector) in inputs.iter().zip(static_model.embed(&texts)) {
        let stored = statics.get(id).unwrap_or_else(|| panic!("chunk {id} has no static vector"));
        let cosine: f32 = stored.iter().zip(&vector).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.999, "chunk {id}'s static vector belongs to other text (cosine {cosine})");
    }
    assert_eq!(statics.len(), ids.len(), "no static vectors of chunks that are gone");
}

/// The daemon killed (SIGKILL) at random points while its watcher and mount re-index and it
/// embeds in the background, 20 times: the index ends as a clean run leaves it.
#[test]
fn twenty_daemon_kills_during_indexing_and_embedding_lose_nothing() {
    let repo = tempfile::tempdir().unwrap();
    for i in 0..FILES {
        write(repo.path(), &format!("src/m{i:02}.rs"), &content(i, 0));
    }
    let home = Home::with_config(
        "[index]\nbatch_max_files = 3\n\n[embedding]\nbatch_size = 4\n\n[watcher]\ndebounce_ms = 100\n",
    )
    .model();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mount = serde_json::json!({ "repo_path": repo.path() });
    for trial in 1..=20 {
        for _ in 0..3 {
            let i = (next() % FILES as u64) as usize;
            write(repo.path(), &format!("src/m{i:02}.rs"), &content(i, trial));
        }
        let server = Server::start(&home, &[]);
        let response = server.blocking_client().post(server.url("/v1/initialize")).json(&mount).send().unwrap();
        assert_eq!(response.status().as_u16(), 200);
        // A change while it runs: the watcher queues another run behind this one.
        std::thread::sleep(Duration::from_millis(next() % 400));
        let i = (next() % FILES as u64) as usize;
        write(repo.path(), &format!("src/m{i:02}.rs"), &content(i, trial + 100));
        std::thread::sleep(Duration::from_millis(next() % 1500));
        drop(server); // SIGKILL
    }
    // The next daemon finishes the job: index run and embeddings.
    let server = Server::start(&home, &[]);
    let wait = serde_json::json!({ "repo_path": repo.path(), "wait": true });
    let response = server.blocking_client().post(server.url("/v1/initialize")).json(&wait).send().unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let status_url = server.url(&format!("/v1/status?repo={}", repo.path().display()));
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let status: serde_json::Value = server.blocking_client().get(&status_url).send().unwrap().json().unwrap();
        let repos: serde_json::Value =
            server.blocking_client().get(server.url("/v1/repos")).send().unwrap().json().unwrap();
        let idle = repos[0]["state"] == "ready";
        if idle && status["embeddings"]["pending"] == 0 && status["embeddings"]["embedded"] == FILES as u64 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "embeddings never caught up: {status}");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(server);
    assert_consistent(&home, repo.path());
}
