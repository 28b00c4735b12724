//! The store's tests, each run on both backends: the embedded one (LMDB under a temporary
//! folder) and the team one (a repo of its own in the test PostgreSQL).

use super::*;

/// Runs `test` on a fresh store of each backend.
fn each_backend(test: impl Fn(&RepoStore)) {
    let dir = tempfile::tempdir().unwrap();
    test(&RepoStore::open(dir.path()).unwrap());
    test(&fresh_postgres_store());
}

/// A store of a repo of its own in the test database.
pub(crate) fn fresh_postgres_store() -> RepoStore {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let pool = crate::postgres::tests::test_pool();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let fingerprint = format!("store-test-{}-{nanos}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let repo_id = pool.repo_id(&fingerprint, "/nowhere").unwrap();
    RepoStore::open_postgres(pool, repo_id)
}

#[test]
fn memory_ids_are_never_reused() {
    each_backend(|store| {
        let mut wtxn = store.write_txn().unwrap();
        let ids: Vec<u64> = (0..3)
            .map(|n| store.add_memory(&mut wtxn, &format!("note {n}"), serde_json::Value::Null, 0, None).unwrap().id)
            .collect();
        assert_eq!(ids, vec![1, 2, 3]);
        assert!(store.delete_memory(&mut wtxn, 3).unwrap());
        let next = store.add_memory(&mut wtxn, "after the delete", serde_json::Value::Null, 0, None).unwrap();
        assert_eq!(next.id, 4, "the deleted newest note's id is not handed out again");
        wtxn.commit().unwrap();
        let rtxn = store.read_txn().unwrap();
        let ids: Vec<u64> = store.all_memories(&rtxn).unwrap().iter().map(|m| m.id).collect();
        assert_eq!(ids, vec![1, 2, 4], "committed, in id order");
    });
}

#[test]
fn the_embedding_cache_keeps_the_recently_used_entries() {
    each_backend(|store| {
        let mut wtxn = store.write_txn().unwrap();
        let vector = vec![0.5f32; crate::index::models::EMBEDDING_DIMS];
        for n in 0..100u64 {
            store.cache_embedding_at(&mut wtxn, &format!("h{n}"), &vector, 1_000 + n).unwrap();
        }
        // An entry from before stamps (the vector alone) counts as never used.
        let legacy: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        wtxn.write().unwrap().put(Space::EmbedCache, b"legacy", &legacy).unwrap();
        assert_eq!(store.cached_embedding(&wtxn, "legacy").unwrap(), Some((vector.clone(), 0)));
        // "h3" was used again lately.
        store.cache_embedding_at(&mut wtxn, "h3", &vector, 5_000).unwrap();
        assert_eq!(store.prune_embedding_cache(&mut wtxn, 200).unwrap(), 0, "under the limit nothing goes");
        let removed = store.prune_embedding_cache(&mut wtxn, 50).unwrap();
        assert_eq!(removed, 101 - 45);
        assert_eq!(store.embedding_cache_entries(&wtxn).unwrap(), 45);
        assert!(store.cached_embedding(&wtxn, "legacy").unwrap().is_none());
        assert!(store.cached_embedding(&wtxn, "h0").unwrap().is_none());
        assert_eq!(store.cached_embedding(&wtxn, "h3").unwrap(), Some((vector.clone(), 5_000)));
        assert!(store.cached_embedding(&wtxn, "h99").unwrap().is_some());
        assert!(store.cached_embedding(&wtxn, "h55").unwrap().is_none(), "the 45 newest stay: h56..h99 and h3");
        assert!(store.cached_embedding(&wtxn, "h56").unwrap().is_some());
        wtxn.commit().unwrap();
    });
}

#[test]
fn records_round_trip_in_key_order_and_an_aborted_write_leaves_nothing() {
    each_backend(|store| {
        let record = |hash: &str| FileRecord {
            content_hash: hash.into(),
            size: 3,
            mtime_ns: 7,
            chunks: 1,
            language: "rust".into(),
            chunk_ids: vec![1],
            problem: None,
        };
        let mut wtxn = store.write_txn().unwrap();
        for path in ["src/b.rs", "src/a.rs", "README.md"] {
            store.put_file(&mut wtxn, path, &record(path)).unwrap();
        }
        for id in [9u32, 300, 2, 70_000] {
            store.put_pending(&mut wtxn, id).unwrap();
        }
        let state = IndexRunState { files: 3, next_chunk_id: 12, ..IndexRunState::default() };
        store.put_run_state(&mut wtxn, &state).unwrap();
        wtxn.commit().unwrap();

        // Dropped without a commit: none of it is kept.
        let mut aborted = store.write_txn().unwrap();
        store.put_file(&mut aborted, "src/c.rs", &record("c")).unwrap();
        store.delete_file(&mut aborted, "src/a.rs").unwrap();
        drop(aborted);

        let rtxn = store.read_txn().unwrap();
        let files = store.all_files(&rtxn).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(store.file(&rtxn, "src/a.rs").unwrap(), Some(record("src/a.rs")));
        assert_eq!(store.file(&rtxn, "").unwrap(), None, "an unkeyable path is no file");
        assert_eq!(store.pending_ids(&rtxn, 0, 10).unwrap(), vec![2, 9, 300, 70_000], "integer order");
        assert_eq!(store.pending_ids(&rtxn, 10, 2).unwrap(), vec![300, 70_000]);
        assert_eq!(store.pending_count(&rtxn).unwrap(), 4);
        assert_eq!(store.run_state(&rtxn).unwrap(), state);
        // A write through a read transaction is refused, not lost.
        let mut rtxn = rtxn;
        assert!(store.put_pending(&mut rtxn, 5).is_err());
    });
}

#[test]
fn dag_nodes_are_read_by_their_session_prefix() {
    use crate::index::dag::{DagNode, DagSession, NodeKind};
    each_backend(|store| {
        let session = |id: &str| DagSession {
            id: id.into(),
            kind: "chat".into(),
            started_at: String::new(),
            title: String::new(),
            nodes: 0,
        };
        let node = |id: u32| DagNode {
            id,
            kind: NodeKind::Thought,
            at: String::new(),
            parents: Vec::new(),
            summary: format!("node {id}"),
            data: serde_json::Value::Null,
        };
        let mut wtxn = store.write_txn().unwrap();
        store.append_dag(&mut wtxn, &session("s1"), &[node(1), node(2)]).unwrap();
        store.append_dag(&mut wtxn, &session("s10"), &[node(1)]).unwrap();
        store.append_dag(&mut wtxn, &session("s1"), &[node(3)]).unwrap();
        wtxn.commit().unwrap();
        let rtxn = store.read_txn().unwrap();
        let view = store.dag_view(&rtxn, "s1").unwrap().unwrap();
        assert_eq!(view.nodes.iter().map(|n| n.id).collect::<Vec<_>>(), vec![1, 2, 3], "not s10's");
        assert_eq!(view.session.nodes, 3);
        assert_eq!(store.dag_sessions(&rtxn).unwrap().len(), 2);
        assert!(store.dag_view(&rtxn, "s2").unwrap().is_none());
    });
}

fn vector(seed: u32) -> Vec<f32> {
    // Deterministic, spread over the sphere.
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(12345);
    (0..crate::index::models::EMBEDDING_DIMS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 2000) as f32 / 1000.0 - 1.0
        })
        .collect()
}

fn unreachable(store: &RepoStore, ids: std::ops::Range<u32>, offset: u32) -> usize {
    let rtxn = store.read_txn().unwrap();
    ids.filter(|&id| {
        let found = store.nearest_chunks(&rtxn, &vector(id - offset), 10, 9000).unwrap();
        found.first().map(|f| f.0) != Some(id)
    })
    .count()
}

#[test]
fn a_small_index_finds_the_exact_nearest_vectors() {
    each_backend(|store| {
        let mut wtxn = store.write_txn().unwrap();
        for id in 0..400u32 {
            store.put_vector(&mut wtxn, id, &vector(id)).unwrap();
        }
        store.build_vectors(&mut wtxn).unwrap();
        wtxn.commit().unwrap();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let rtxn = store.read_txn().unwrap();
        for seed in 1000..1020u32 {
            let query = vector(seed);
            let mut exact: Vec<(u32, f32)> = (0..400u32)
                .map(|id| {
                    let item = vector(id);
                    let dot: f32 = item.iter().zip(&query).map(|(a, b)| a * b).sum();
                    (id, dot / (norm(&item) * norm(&query)))
                })
                .collect();
            exact.sort_by(|a, b| b.1.total_cmp(&a.1));
            // The least `search_k` asks arroy's trees for little; the answer is exact anyway.
            let found = store.nearest_chunks(&rtxn, &query, 10, 1).unwrap();
            let ids = |list: &[(u32, f32)]| list.iter().take(10).map(|(id, _)| *id).collect::<Vec<_>>();
            assert_eq!(ids(&found), ids(&exact), "query {seed}");
            for ((_, got), (_, want)) in found.iter().zip(&exact) {
                assert!((got - want).abs() < 1e-4, "query {seed}: cosine {got} against {want}");
            }
        }
    });
}

#[test]
fn every_vector_is_found_after_a_forget_and_reuse() {
    each_backend(|store| {
        for batch in (0..900u32).collect::<Vec<_>>().chunks(32) {
            let mut wtxn = store.write_txn().unwrap();
            for &id in batch {
                store.put_vector(&mut wtxn, id, &vector(id)).unwrap();
            }
            store.build_vectors(&mut wtxn).unwrap();
            wtxn.commit().unwrap();
        }
        assert_eq!(unreachable(store, 0..900, 0), 0, "fresh");
        let mut wtxn = store.write_txn().unwrap();
        store.forget_chunks(&mut wtxn).unwrap();
        wtxn.commit().unwrap();
        assert_eq!(store.vector_count(&store.read_txn().unwrap()).unwrap(), 0);
        for batch in (900..1800u32).collect::<Vec<_>>().chunks(256) {
            let mut wtxn = store.write_txn().unwrap();
            for &id in batch {
                store.put_vector(&mut wtxn, id, &vector(id - 900)).unwrap();
            }
            store.build_vectors(&mut wtxn).unwrap();
            wtxn.commit().unwrap();
        }
        assert_eq!(unreachable(store, 900..1800, 900), 0, "after forget");
        let rtxn = store.read_txn().unwrap();
        assert_eq!(store.vector_count(&rtxn).unwrap(), 900);
        let nearest = store.nearest_chunks(&rtxn, &vector(5), 3, 0).unwrap();
        assert!((nearest[0].1 - 1.0).abs() < 1e-4, "cosine similarity of a vector to itself: {nearest:?}");
    });
}

#[test]
fn memory_vectors_are_apart_from_chunk_vectors() {
    each_backend(|store| {
        let mut wtxn = store.write_txn().unwrap();
        store.put_vector(&mut wtxn, 1, &vector(1)).unwrap();
        store.build_vectors(&mut wtxn).unwrap();
        let note = store.add_memory(&mut wtxn, "a note", serde_json::Value::Null, 0, Some(&vector(2))).unwrap();
        wtxn.commit().unwrap();
        let rtxn = store.read_txn().unwrap();
        let similarities = store.memory_similarities(&rtxn, &vector(2)).unwrap();
        assert_eq!(similarities.len(), 1);
        assert!((similarities[&note.id] - 1.0).abs() < 1e-4);
        assert_eq!(store.vector_count(&rtxn).unwrap(), 1);
        drop(rtxn);
        let mut wtxn = store.write_txn().unwrap();
        assert!(store.delete_memory(&mut wtxn, note.id).unwrap());
        wtxn.commit().unwrap();
        assert!(store.memory_similarities(&store.read_txn().unwrap(), &vector(2)).unwrap().is_empty());
    });
}

#[test]
fn static_vectors_are_apart_from_the_models_and_go_with_their_chunk() {
    each_backend(|store| {
        let mut wtxn = store.write_txn().unwrap();
        for id in [1, 2] {
            store.put_pending(&mut wtxn, id).unwrap();
        }
        store.put_vector(&mut wtxn, 1, &vector(1)).unwrap();
        store.build_vectors(&mut wtxn).unwrap();
        store.put_static_vector(&mut wtxn, 1, &vector(3)).unwrap();
        store.put_static_vector(&mut wtxn, 2, &vector(4)).unwrap();
        store.build_static_vectors(&mut wtxn).unwrap();
        wtxn.commit().unwrap();

        let rtxn = store.read_txn().unwrap();
        let counts = store.vector_counts(&rtxn).unwrap();
        assert_eq!(counts, VectorCounts { model: 1, pending: 1, static_vectors: 2, static_pending: 0 });
        // Chunk 2 waits for the model: the static vectors cover more, so they answer.
        assert_eq!(counts.for_search(true, true), Some(ChunkVectors::Static));
        let nearest = store.nearest_chunks_of(&rtxn, ChunkVectors::Static, &vector(4), 1, 0).unwrap();
        assert_eq!(nearest[0].0, 2);
        assert!((nearest[0].1 - 1.0).abs() < 1e-4, "{nearest:?}");
        let model = store.nearest_chunks(&rtxn, &vector(4), 5, 0).unwrap();
        assert_eq!(model.iter().map(|&(id, _)| id).collect::<Vec<_>>(), [1], "the model's vectors alone");
        drop(rtxn);

        let mut wtxn = store.write_txn().unwrap();
        store.put_vector(&mut wtxn, 2, &vector(2)).unwrap();
        store.build_vectors(&mut wtxn).unwrap();
        wtxn.commit().unwrap();
        let counts = store.vector_counts(&store.read_txn().unwrap()).unwrap();
        assert_eq!(counts.for_search(true, true), Some(ChunkVectors::Model), "every chunk has the model's: {counts:?}");

        let mut wtxn = store.write_txn().unwrap();
        store.delete_chunk(&mut wtxn, 2).unwrap();
        // One build after a deletion serves both kinds (a deleted vector leaves an index
        // unreadable until it is built).
        store.build_vectors(&mut wtxn).unwrap();
        wtxn.commit().unwrap();
        let counts = store.vector_counts(&store.read_txn().unwrap()).unwrap();
        assert_eq!(counts, VectorCounts { model: 1, pending: 0, static_vectors: 1, static_pending: 0 });
    });
}

#[test]
fn the_static_mean_is_kept_until_the_chunks_are_forgotten() {
    each_backend(|store| {
        assert_eq!(store.static_mean(&store.read_txn().unwrap()).unwrap(), None);
        let mut wtxn = store.write_txn().unwrap();
        store.put_static_mean(&mut wtxn, &vector(3)).unwrap();
        wtxn.commit().unwrap();
        assert_eq!(store.static_mean(&store.read_txn().unwrap()).unwrap(), Some(vector(3)));
        // A rebuild's chunks make a mean of their own.
        let mut wtxn = store.write_txn().unwrap();
        store.forget_chunks(&mut wtxn).unwrap();
        wtxn.commit().unwrap();
        assert_eq!(store.static_mean(&store.read_txn().unwrap()).unwrap(), None);
    });
}

#[test]
fn nothing_embedded_searches_nothing_dense() {
    assert_eq!(VectorCounts { pending: 3, static_pending: 3, ..Default::default() }.for_search(true, true), None);
    // Older indexes have no static vectors: the model's answer, complete or not.
    assert_eq!(
        VectorCounts { model: 2, pending: 1, ..Default::default() }.for_search(true, true),
        Some(ChunkVectors::Model)
    );
    // A save changed a few chunks: the model's still answer while they wait.
    let after_a_save = VectorCounts { model: 95, pending: 5, static_vectors: 100, static_pending: 0 };
    assert_eq!(after_a_save.for_search(true, true), Some(ChunkVectors::Model));
    let halfway = VectorCounts { model: 50, pending: 50, static_vectors: 100, static_pending: 0 };
    assert_eq!(halfway.for_search(true, true), Some(ChunkVectors::Static));
}

#[test]
fn switched_off_kinds_are_not_chosen_and_several_repos_share_one_kind() {
    let both = VectorCounts { model: 100, pending: 0, static_vectors: 100, static_pending: 0 };
    assert_eq!(both.for_search(true, false), Some(ChunkVectors::Static), "model_vectors = false");
    let fresh = VectorCounts { model: 0, pending: 100, static_vectors: 100, static_pending: 0 };
    assert_eq!(fresh.for_search(false, true), None, "static_vectors = false: nothing to search yet");
    // An old repo (the model's only) beside a fresh one (static only): the model's, as the
    // old one has no static vectors.
    let old = VectorCounts { model: 100, ..Default::default() };
    assert_eq!(vectors_for_search_across(&[old, fresh], true, true), Some(ChunkVectors::Model));
    // Both have static vectors: those, so that the fresh repo is searched too.
    assert_eq!(vectors_for_search_across(&[both, fresh], true, true), Some(ChunkVectors::Static));
    assert_eq!(vectors_for_search_across(&[both, both], true, true), Some(ChunkVectors::Model));
    assert_eq!(vectors_for_search_across(&[], true, true), None);
}
