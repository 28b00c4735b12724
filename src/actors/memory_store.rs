//! MemoryStore: a repo's long-term memory — notes an agent saves and recalls later — in the
//! repo's LMDB environment, with vectors in their own arroy index. A sync actor: LMDB writes
//! and ANN rebuilds block. Memories never cross repos: every message names the repo's store.
//!
//! It writes only the memory tables; LMDB serializes its write transactions with the
//! Indexer's, which owns everything else in the environment.

use std::collections::HashSet;
use std::sync::Arc;

use actix::{Actor, Handler, Message, SyncContext};

use crate::index::analyzer::{analyze, code_analyzer};
use crate::index::{MemoryRecord, RepoIndex};
use crate::protocol::{DocdexError, ErrorCode, Result};

pub struct MemoryStore;

impl Actor for MemoryStore {
    type Context = SyncContext<Self>;
}

/// Saves a note; the vector is absent when the model is unavailable.
#[derive(Message)]
#[rtype(result = "Result<MemoryRecord>")]
pub struct SaveMemory {
    pub index: Arc<RepoIndex>,
    pub text: String,
    pub metadata: serde_json::Value,
    pub vector_opt: Option<Vec<f32>>,
}

/// Ranks the repo's memories against a query: by vector similarity when a query vector is
/// given, else by the share of query words a memory contains. Newest first among ties.
#[derive(Message)]
#[rtype(result = "Result<Vec<(MemoryRecord, f32)>>")]
pub struct RecallMemory {
    pub index: Arc<RepoIndex>,
    pub query: String,
    pub vector_opt: Option<Vec<f32>>,
    pub limit: usize,
}

/// Memories saved without a vector (model unavailable then), to embed now.
#[derive(Message)]
#[rtype(result = "Result<Vec<(u64, String)>>")]
pub struct UnembeddedMemories {
    pub index: Arc<RepoIndex>,
}

/// Stores vectors for memories saved without one.
#[derive(Message)]
#[rtype(result = "Result<()>")]
pub struct StoreMemoryVectors {
    pub index: Arc<RepoIndex>,
    pub vectors: Vec<(u64, Vec<f32>)>,
}

/// Deletes a memory by id; false when it did not exist.
/// Every note of a repo.
#[derive(Message)]
#[rtype(result = "Result<Vec<MemoryRecord>>")]
pub struct ListMemories {
    pub index: Arc<RepoIndex>,
}

impl Handler<ListMemories> for MemoryStore {
    type Result = Result<Vec<MemoryRecord>>;

    fn handle(&mut self, msg: ListMemories, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the memory store", || {
            let store = &msg.index.store;
            store.all_memories(&store.read_txn()?)
        })
    }
}

#[derive(Message)]
#[rtype(result = "Result<bool>")]
pub struct DeleteMemory {
    pub index: Arc<RepoIndex>,
    pub id: u64,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl Handler<SaveMemory> for MemoryStore {
    type Result = Result<MemoryRecord>;

    fn handle(&mut self, msg: SaveMemory, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the memory store", || {
            if msg.text.trim().is_empty() {
                return Err(DocdexError::invalid("memory text must not be empty"));
            }
            let store = &msg.index.store;
            let mut wtxn = store.write_txn()?;
            let record = store.add_memory(&mut wtxn, &msg.text, msg.metadata, now_ms(), msg.vector_opt.as_deref())?;
            wtxn.commit()?;
            Ok(record)
        })
    }
}

impl Handler<RecallMemory> for MemoryStore {
    type Result = Result<Vec<(MemoryRecord, f32)>>;

    fn handle(&mut self, msg: RecallMemory, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the memory store", || {
            let store = &msg.index.store;
            let rtxn = store.read_txn()?;
            let memories = store.all_memories(&rtxn)?;
            let mut scored: Vec<(MemoryRecord, f32)> = match &msg.vector_opt {
                Some(vector) => {
                    let similarities = store.memory_similarities(&rtxn, vector)?;
                    memories.into_iter().filter_map(|m| similarities.get(&m.id).map(|&s| (m, s))).collect()
                }
                None => {
                    let mut analyzer = code_analyzer();
                    let query: HashSet<String> = analyze(&mut analyzer, &msg.query).into_iter().collect();
                    if query.is_empty() {
                        return Ok(Vec::new());
                    }
                    memories
                        .into_iter()
                        .filter_map(|m| {
                            let terms: HashSet<String> = analyze(&mut analyzer, &m.text).into_iter().collect();
                            let share = query.iter().filter(|t| terms.contains(*t)).count() as f32 / query.len() as f32;
                            (share > 0.0).then_some((m, share))
                        })
                        .collect()
                }
            };
            scored.sort_by(|a, b| {
                b.1.total_cmp(&a.1).then(b.0.created_at_ms.cmp(&a.0.created_at_ms)).then(b.0.id.cmp(&a.0.id))
            });
            scored.truncate(msg.limit);
            Ok(scored)
        })
    }
}

impl Handler<UnembeddedMemories> for MemoryStore {
    type Result = Result<Vec<(u64, String)>>;

    fn handle(&mut self, msg: UnembeddedMemories, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the memory store", || {
            let store = &msg.index.store;
            let rtxn = store.read_txn()?;
            Ok(store.all_memories(&rtxn)?.into_iter().filter(|m| !m.embedded).map(|m| (m.id, m.text)).collect())
        })
    }
}

impl Handler<StoreMemoryVectors> for MemoryStore {
    type Result = Result<()>;

    fn handle(&mut self, msg: StoreMemoryVectors, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the memory store", || {
            let store = &msg.index.store;
            let mut wtxn = store.write_txn()?;
            for (id, vector) in msg.vectors {
                store.put_memory_vector(&mut wtxn, id, &vector)?;
            }
            // One rebuild for the whole set, not one per note.
            store.build_memory_vectors(&mut wtxn)?;
            wtxn.commit()?;
            Ok(())
        })
    }
}

impl Handler<DeleteMemory> for MemoryStore {
    type Result = Result<bool>;

    fn handle(&mut self, msg: DeleteMemory, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the memory store", || {
            let store = &msg.index.store;
            let mut wtxn = store.write_txn()?;
            let deleted = store.delete_memory(&mut wtxn, msg.id)?;
            wtxn.commit()?;
            if deleted {
                Ok(true)
            } else {
                Err(DocdexError::new(ErrorCode::NotFound, format!("no memory with id {}", msg.id))
                    .with_hint("recall memories to see their ids"))
            }
        })
    }
}
