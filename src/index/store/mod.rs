//! What a repo stores besides its text index: per-file records with content hashes, the
//! index-run state, pending embeddings, the embedding cache, chunk and memory vectors,
//! memories, DAGs, code facts. One API over two backends: LMDB through heed with arroy
//! vectors (`lmdb.rs`, the default, on local disk) or PostgreSQL with pgvector (`pg.rs`, the
//! team store). Records are the same bytes in both, in named spaces of ordered keys;
//! getters take a transaction, writers a write transaction the caller commits.

mod lmdb;
mod pg;
mod records;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::code::FileCode;
use crate::index::dag::{DagNode, DagSession, DagView};
use crate::postgres::PgPool;
use crate::protocol::{DocdexError, Result};
pub use records::{FileRecord, IndexRunState, LibraryRecord, MemoryRecord, WebPageRecord};

/// `code_meta` key: the grammars that built the stored code facts (`code::grammar_fingerprint`).
const CODE_FINGERPRINT_KEY: &str = "grammars";
/// `counters` key: bumped with every change to the code facts, so a cached graph knows it is old.
const CODE_GENERATION: &str = "code_generation";
/// The next memory id: never reused, even after the newest note is deleted.
const NEXT_MEMORY_ID: &str = "next_memory_id";
/// Set once every chunk of the repo was queued for a static vector (chunks from before
/// static vectors existed, or from while they were off, have none).
const STATIC_QUEUED_ALL: &str = "static_queued_all";
const RUN_STATE_KEY: &str = "index_run";
/// `meta` key: the mean of the repo's static chunk vectors, which the stored ones are centred
/// on (`static_model::centre`), as little-endian f32.
const STATIC_MEAN_KEY: &str = "static_mean";

/// LMDB's largest key (its default build); the same bound holds on both backends, so a repo
/// moves between them whole.
const MAX_KEY_BYTES: usize = 511;

/// A named space of ordered keys: an LMDB database, or a `space` of `docdex_records`.
/// Keys sort as bytes in both (integers big-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Space {
    /// Path → `FileRecord` (JSON).
    Files,
    /// `index_run` → `IndexRunState` (JSON).
    Meta,
    /// Chunk id (u32) → nothing: chunks without a vector yet.
    Pending,
    /// SHA-256 of an embedding input → last use (u64 LE) and the vector (f32 LE): unchanged
    /// chunks are never embedded twice, across files and re-indexes.
    EmbedCache,
    /// Memory id (u64) → `MemoryRecord` (JSON). Ids grow; newest last.
    Memories,
    /// URL → `WebPageRecord` (JSON): web pages ingested into this repo.
    WebPages,
    /// `<ecosystem>/<name>` → `LibraryRecord` (JSON).
    Libraries,
    /// Session id → `DagSession`; and `<session>/<node id, 8 digits>` → `DagNode` (JSON).
    DagSessions,
    DagNodes,
    /// Name → u64: monotonic counters (ids that must never be handed out twice).
    Counters,
    /// Path → `code::FileCode` encoded; written in the same transaction as the file's record.
    Code,
    /// Name → text.
    CodeMeta,
    /// Chunk id (u32 BE) → nothing: chunks waiting for their static vector.
    StaticPending,
}

impl Space {
    pub(crate) const ALL: [Space; 13] = [
        Space::Files,
        Space::Meta,
        Space::Pending,
        Space::EmbedCache,
        Space::Memories,
        Space::WebPages,
        Space::Libraries,
        Space::DagSessions,
        Space::DagNodes,
        Space::Counters,
        Space::Code,
        Space::CodeMeta,
        Space::StaticPending,
    ];

    /// The LMDB database's name (the layout every embedded store already has).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Space::Files => "files",
            Space::Meta => "meta",
            Space::Pending => "embedding_pending",
            Space::EmbedCache => "embedding_cache",
            Space::Memories => "memories",
            Space::WebPages => "web_pages",
            Space::Libraries => "libraries",
            Space::DagSessions => "dag_sessions",
            Space::DagNodes => "dag_nodes",
            Space::Counters => "counters",
            Space::Code => "code",
            Space::CodeMeta => "code_meta",
            Space::StaticPending => "static_pending",
        }
    }

    /// The `space` column's value in PostgreSQL: fixed forever (rows are written with it).
    pub(crate) fn id(self) -> i16 {
        match self {
            Space::Files => 1,
            Space::Meta => 2,
            Space::Pending => 3,
            Space::EmbedCache => 4,
            Space::Memories => 5,
            Space::WebPages => 6,
            Space::Libraries => 7,
            Space::DagSessions => 8,
            Space::DagNodes => 9,
            Space::Counters => 10,
            Space::Code => 11,
            Space::CodeMeta => 12,
            Space::StaticPending => 13,
        }
    }
}

/// Which vectors: a repo's chunks by the model or by the static vectors, or its memories
/// (an arroy index each; `kind` in PostgreSQL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VectorKind {
    Chunks,
    Memories,
    StaticChunks,
}

impl VectorKind {
    const ALL: [VectorKind; 3] = [VectorKind::Chunks, VectorKind::Memories, VectorKind::StaticChunks];

    fn id(self) -> u16 {
        match self {
            VectorKind::Chunks => 0,
            VectorKind::Memories => 1,
            VectorKind::StaticChunks => 2,
        }
    }
}

/// Which of a chunk's two vectors: the embedding model's, or the static one distilled from it
/// (`index::static_model`), which every chunk has seconds after its index run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChunkVectors {
    #[default]
    Model,
    Static,
}

/// Up to `max` chunk ids (u32 big-endian keys) of `space`, from `from` on, in id order.
fn chunk_ids_in(txn: &StoreTxn, space: Space, from: u32, max: usize) -> Result<Vec<u32>> {
    Ok(txn
        .inner
        .scan(space, &from.to_be_bytes(), &[], max)?
        .into_iter()
        .filter_map(|(key, _)| key.as_slice().try_into().ok().map(u32::from_be_bytes))
        .collect())
}

/// A repo's chunk vectors of each kind, and the chunks waiting for one (summed over repos
/// for a search of several).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VectorCounts {
    pub model: u64,
    pub pending: u64,
    pub static_vectors: u64,
    pub static_pending: u64,
}

impl std::ops::Add for VectorCounts {
    type Output = VectorCounts;

    fn add(self, other: VectorCounts) -> VectorCounts {
        VectorCounts {
            model: self.model + other.model,
            pending: self.pending + other.pending,
            static_vectors: self.static_vectors + other.static_vectors,
            static_pending: self.static_pending + other.static_pending,
        }
    }
}

impl VectorCounts {
    /// The vectors a dense search compares with: the model's once they cover nine chunks in
    /// ten (the better ranking; the few a save has just changed wait for the model seconds
    /// without switching the whole ranking back to static vectors), else whichever covers
    /// more of the repo (the static ones, seconds after an index run), `None` when no chunk
    /// has a vector. Kinds switched off (`[embedding] static_vectors`, `model_vectors`) are
    /// not chosen while the other has vectors.
    pub fn for_search(self, static_on: bool, model_on: bool) -> Option<ChunkVectors> {
        let static_vectors = if static_on { self.static_vectors } else { 0 };
        if !model_on && static_vectors > 0 {
            return Some(ChunkVectors::Static);
        }
        if self.model > 0 && self.pending * 10 <= self.model + self.pending {
            Some(ChunkVectors::Model)
        } else if static_vectors > 0 && static_vectors >= self.model {
            Some(ChunkVectors::Static)
        } else if self.model > 0 {
            Some(ChunkVectors::Model)
        } else {
            None
        }
    }
}

/// The vectors a search of several repos compares with: one kind for all (the query is
/// embedded once): the kind each would choose when they agree, else the static vectors when
/// every repo with vectors has them, else the model's.
pub fn vectors_for_search_across(repos: &[VectorCounts], static_on: bool, model_on: bool) -> Option<ChunkVectors> {
    let chosen: Vec<ChunkVectors> = repos.iter().filter_map(|c| c.for_search(static_on, model_on)).collect();
    let first = *chosen.first()?;
    if chosen.iter().all(|&kind| kind == first) {
        return Some(first);
    }
    let with_vectors = repos.iter().filter(|c| c.for_search(static_on, model_on).is_some());
    if static_on && with_vectors.clone().all(|c| c.static_vectors > 0) {
        Some(ChunkVectors::Static)
    } else {
        Some(ChunkVectors::Model)
    }
}

impl ChunkVectors {
    fn kind(self) -> VectorKind {
        match self {
            ChunkVectors::Model => VectorKind::Chunks,
            ChunkVectors::Static => VectorKind::StaticChunks,
        }
    }

    /// The name `status` and notices use.
    pub fn name(self) -> &'static str {
        match self {
            ChunkVectors::Model => "model",
            ChunkVectors::Static => "static",
        }
    }
}

/// Keys and values as the records hold them.
type Entry = (Vec<u8>, Vec<u8>);

/// Which backend a store is.
enum Backend {
    // Boxed: its handle per space makes it far larger than the other.
    Lmdb(Box<lmdb::LmdbStore>),
    Postgres(pg::PgStore),
}

/// A repo's records and vectors (see the module comment).
pub struct RepoStore {
    backend: Backend,
}

/// A transaction: a read sees one snapshot; a write is the repo's only writer until it
/// commits (LMDB's writer lock, or a database lock per repo in PostgreSQL) and commits all
/// or nothing. Dropped uncommitted, it is aborted.
pub struct StoreTxn<'s> {
    inner: Box<dyn Txn + 's>,
}

impl StoreTxn<'_> {
    pub fn commit(self) -> Result<()> {
        self.inner.commit()
    }

    fn write(&mut self) -> Result<&mut dyn TxnWrite> {
        self.inner.write().ok_or_else(|| DocdexError::internal("a write through a read transaction"))
    }
}

/// What both backends' transactions read: records by space and key, and vectors.
trait Txn {
    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Entries with keys from `from` on, in key order, at most `max`; only those starting
    /// with `prefix` (which may be empty).
    fn scan(&self, space: Space, from: &[u8], prefix: &[u8], max: usize) -> Result<Vec<Entry>>;
    fn len(&self, space: Space) -> Result<u64>;
    fn last(&self, space: Space) -> Result<Option<Entry>>;
    /// Vectors that searches find.
    fn vector_count(&self, kind: VectorKind) -> Result<u64>;
    fn all_vectors(&self, kind: VectorKind) -> Result<Vec<(u32, Vec<f32>)>>;
    /// The `count` nearest items as (item, cosine similarity), best first; `search_k` is
    /// arroy's (nodes inspected; 0 its default), the HNSW search takes its own.
    fn nearest(&self, kind: VectorKind, vector: &[f32], count: usize, search_k: usize) -> Result<Vec<(u32, f32)>>;
    /// The writing half; `None` for a read transaction.
    fn write(&mut self) -> Option<&mut dyn TxnWrite>;
    fn commit(self: Box<Self>) -> Result<()>;
}

/// What a write transaction adds.
trait TxnWrite {
    fn put(&mut self, space: Space, key: &[u8], value: &[u8]) -> Result<()>;
    fn delete(&mut self, space: Space, key: &[u8]) -> Result<bool>;
    fn clear(&mut self, space: Space) -> Result<()>;
    fn put_vector(&mut self, kind: VectorKind, item: u32, vector: &[f32]) -> Result<()>;
    fn delete_vector(&mut self, kind: VectorKind, item: u32) -> Result<()>;
    fn clear_vectors(&mut self, kind: VectorKind) -> Result<()>;
    /// Makes added and removed vectors searchable (arroy builds its trees; an HNSW index is
    /// current at commit, so there it is nothing).
    fn build_vectors(&mut self, kind: VectorKind) -> Result<()>;
}

fn decode_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    Ok(serde_json::from_slice(bytes)?)
}

fn encode_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    Ok(serde_json::to_vec(value)?)
}

fn u64_of(bytes: &[u8]) -> u64 {
    bytes.try_into().map(u64::from_be_bytes).unwrap_or(0)
}

/// A key LMDB cannot hold (empty, or over 511 bytes): no such record can exist.
fn unkeyable(key: &str) -> bool {
    key.is_empty() || key.len() > MAX_KEY_BYTES
}

impl RepoStore {
    /// The embedded store under `dir` (LMDB), created if needed.
    pub fn open(dir: &Path) -> Result<RepoStore> {
        RepoStore::open_with(dir, crate::config::DEFAULT_MAP_BYTES)
    }

    pub fn open_with(dir: &Path, map_bytes: usize) -> Result<RepoStore> {
        Ok(RepoStore { backend: Backend::Lmdb(Box::new(lmdb::LmdbStore::open(dir, map_bytes)?)) })
    }

    /// The team store's rows of one repo (PostgreSQL; the schema is migrated by `PgPool`).
    pub fn open_postgres(pool: Arc<PgPool>, repo_id: i64) -> RepoStore {
        RepoStore { backend: Backend::Postgres(pg::PgStore::new(pool, repo_id)) }
    }

    /// Whether this is the team store.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    pub fn read_txn(&self) -> Result<StoreTxn<'_>> {
        let inner: Box<dyn Txn + '_> = match &self.backend {
            Backend::Lmdb(store) => Box::new(store.read_txn()?),
            Backend::Postgres(store) => Box::new(store.begin(false)?),
        };
        Ok(StoreTxn { inner })
    }

    pub fn write_txn(&self) -> Result<StoreTxn<'_>> {
        let inner: Box<dyn Txn + '_> = match &self.backend {
            Backend::Lmdb(store) => Box::new(store.write_txn()?),
            Backend::Postgres(store) => Box::new(store.begin(true)?),
        };
        Ok(StoreTxn { inner })
    }

    fn all(&self, txn: &StoreTxn, space: Space) -> Result<Vec<Entry>> {
        txn.inner.scan(space, &[], &[], usize::MAX)
    }
}

/// What a copy between stores moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CopiedRecords {
    pub records: u64,
    pub chunk_vectors: u64,
    pub memory_vectors: u64,
    pub static_vectors: u64,
}

impl RepoStore {
    /// Replaces everything `target` holds with this store's records and vectors, in one
    /// write transaction of the target (all or nothing there), from one snapshot of this
    /// one. The vectors are copied, never recomputed.
    pub fn copy_into(&self, target: &RepoStore) -> Result<CopiedRecords> {
        let source = self.read_txn()?;
        let mut txn = target.write_txn()?;
        let mut copied = CopiedRecords::default();
        for space in Space::ALL {
            txn.write()?.clear(space)?;
            for (key, value) in self.all(&source, space)? {
                txn.write()?.put(space, &key, &value)?;
                copied.records += 1;
            }
        }
        for kind in VectorKind::ALL {
            txn.write()?.clear_vectors(kind)?;
            let vectors = source.inner.all_vectors(kind)?;
            for (item, vector) in &vectors {
                txn.write()?.put_vector(kind, *item, vector)?;
            }
            txn.write()?.build_vectors(kind)?;
            match kind {
                VectorKind::Chunks => copied.chunk_vectors = vectors.len() as u64,
                VectorKind::Memories => copied.memory_vectors = vectors.len() as u64,
                VectorKind::StaticChunks => copied.static_vectors = vectors.len() as u64,
            }
        }
        txn.commit()?;
        Ok(copied)
    }
}

// The records, typed.

impl RepoStore {
    /// Every file's code facts, and how many entries did not decode (written in another
    /// format under the same fingerprint: the caller must not answer from a partial graph).
    pub fn all_code(&self, txn: &StoreTxn) -> Result<(HashMap<String, FileCode>, usize)> {
        let mut out = HashMap::new();
        let mut undecodable = 0;
        for (path, bytes) in self.all(txn, Space::Code)? {
            match FileCode::decode(&bytes) {
                Some(code) => {
                    out.insert(String::from_utf8_lossy(&path).into_owned(), code);
                }
                None => undecodable += 1,
            }
        }
        Ok((out, undecodable))
    }

    /// Stores raw bytes as a file's code facts (tests: an entry of another layout).
    #[cfg(test)]
    pub(crate) fn put_code_bytes(&self, txn: &mut StoreTxn, path: &str, bytes: &[u8]) -> Result<()> {
        txn.write()?.put(Space::Code, path.as_bytes(), bytes)
    }

    /// Forgets which grammars built the code facts: the next index run reads every file again.
    pub fn forget_code_fingerprint(&self, txn: &mut StoreTxn) -> Result<()> {
        txn.write()?.delete(Space::CodeMeta, CODE_FINGERPRINT_KEY.as_bytes())?;
        Ok(())
    }

    pub fn put_code(&self, txn: &mut StoreTxn, path: &str, code: &FileCode) -> Result<()> {
        // A path LMDB cannot key is a file without code facts, not a failed run.
        if unkeyable(path) {
            return Ok(());
        }
        txn.write()?.put(Space::Code, path.as_bytes(), &code.encode())
    }

    pub fn delete_code(&self, txn: &mut StoreTxn, path: &str) -> Result<bool> {
        if unkeyable(path) {
            return Ok(false);
        }
        txn.write()?.delete(Space::Code, path.as_bytes())
    }

    pub fn code_fingerprint(&self, txn: &StoreTxn) -> Result<Option<String>> {
        Ok(txn
            .inner
            .get(Space::CodeMeta, CODE_FINGERPRINT_KEY.as_bytes())?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }

    pub fn put_code_fingerprint(&self, txn: &mut StoreTxn, fingerprint: &str) -> Result<()> {
        txn.write()?.put(Space::CodeMeta, CODE_FINGERPRINT_KEY.as_bytes(), fingerprint.as_bytes())
    }

    fn counter(&self, txn: &StoreTxn, name: &str) -> Result<Option<u64>> {
        Ok(txn.inner.get(Space::Counters, name.as_bytes())?.map(|bytes| u64_of(&bytes)))
    }

    fn put_counter(&self, txn: &mut StoreTxn, name: &str, value: u64) -> Result<()> {
        txn.write()?.put(Space::Counters, name.as_bytes(), &value.to_be_bytes())
    }

    pub fn code_generation(&self, txn: &StoreTxn) -> Result<u64> {
        Ok(self.counter(txn, CODE_GENERATION)?.unwrap_or(0))
    }

    pub fn bump_code_generation(&self, txn: &mut StoreTxn) -> Result<()> {
        let next = self.code_generation(txn)? + 1;
        self.put_counter(txn, CODE_GENERATION, next)
    }

    pub fn all_files(&self, txn: &StoreTxn) -> Result<HashMap<String, FileRecord>> {
        self.all(txn, Space::Files)?
            .into_iter()
            .map(|(path, bytes)| Ok((String::from_utf8_lossy(&path).into_owned(), decode_json(&bytes)?)))
            .collect()
    }

    pub fn file(&self, txn: &StoreTxn, path: &str) -> Result<Option<FileRecord>> {
        // LMDB refuses empty keys and keys over 511 bytes (MDB_BAD_VALSIZE): no such file can
        // be in the store, so asking for one is an answer, not an error.
        if unkeyable(path) {
            return Ok(None);
        }
        txn.inner.get(Space::Files, path.as_bytes())?.map(|bytes| decode_json(&bytes)).transpose()
    }

    pub fn put_file(&self, txn: &mut StoreTxn, path: &str, record: &FileRecord) -> Result<()> {
        txn.write()?.put(Space::Files, path.as_bytes(), &encode_json(record)?)
    }

    pub fn delete_file(&self, txn: &mut StoreTxn, path: &str) -> Result<()> {
        if !unkeyable(path) {
            txn.write()?.delete(Space::Files, path.as_bytes())?;
        }
        Ok(())
    }

    pub fn web_page(&self, txn: &StoreTxn, url: &str) -> Result<Option<WebPageRecord>> {
        if unkeyable(url) {
            return Ok(None);
        }
        txn.inner.get(Space::WebPages, url.as_bytes())?.map(|bytes| decode_json(&bytes)).transpose()
    }

    pub fn put_web_page(&self, txn: &mut StoreTxn, url: &str, record: &WebPageRecord) -> Result<()> {
        txn.write()?.put(Space::WebPages, url.as_bytes(), &encode_json(record)?)
    }

    pub fn web_page_count(&self, txn: &StoreTxn) -> Result<u64> {
        txn.inner.len(Space::WebPages)
    }

    pub fn library(&self, txn: &StoreTxn, key: &str) -> Result<Option<LibraryRecord>> {
        if unkeyable(key) {
            return Ok(None);
        }
        txn.inner.get(Space::Libraries, key.as_bytes())?.map(|bytes| decode_json(&bytes)).transpose()
    }

    pub fn all_libraries(&self, txn: &StoreTxn) -> Result<Vec<(String, LibraryRecord)>> {
        self.all(txn, Space::Libraries)?
            .into_iter()
            .map(|(key, bytes)| Ok((String::from_utf8_lossy(&key).into_owned(), decode_json(&bytes)?)))
            .collect()
    }

    pub fn put_library(&self, txn: &mut StoreTxn, key: &str, record: &LibraryRecord) -> Result<()> {
        txn.write()?.put(Space::Libraries, key.as_bytes(), &encode_json(record)?)
    }

    pub fn delete_library(&self, txn: &mut StoreTxn, key: &str) -> Result<()> {
        if !unkeyable(key) {
            txn.write()?.delete(Space::Libraries, key.as_bytes())?;
        }
        Ok(())
    }

    pub fn run_state(&self, txn: &StoreTxn) -> Result<IndexRunState> {
        Ok(txn
            .inner
            .get(Space::Meta, RUN_STATE_KEY.as_bytes())?
            .map(|bytes| decode_json(&bytes))
            .transpose()?
            .unwrap_or_default())
    }

    pub fn put_run_state(&self, txn: &mut StoreTxn, state: &IndexRunState) -> Result<()> {
        txn.write()?.put(Space::Meta, RUN_STATE_KEY.as_bytes(), &encode_json(state)?)
    }

    pub fn pending_count(&self, txn: &StoreTxn) -> Result<u64> {
        txn.inner.len(Space::Pending)
    }

    /// Up to `max` chunk ids waiting for a vector, from `from` on, in id order.
    pub fn pending_ids(&self, txn: &StoreTxn, from: u32, max: usize) -> Result<Vec<u32>> {
        chunk_ids_in(txn, Space::Pending, from, max)
    }

    pub fn is_pending(&self, txn: &StoreTxn, chunk_id: u32) -> Result<bool> {
        Ok(txn.inner.get(Space::Pending, &chunk_id.to_be_bytes())?.is_some())
    }

    /// Marks a chunk as waiting for its vectors, the model's and the static one. Its text is
    /// read back from the index when it is embedded (older states stored it here; it is
    /// ignored).
    pub fn put_pending(&self, txn: &mut StoreTxn, chunk_id: u32) -> Result<()> {
        txn.write()?.put(Space::Pending, &chunk_id.to_be_bytes(), b"")?;
        txn.write()?.put(Space::StaticPending, &chunk_id.to_be_bytes(), b"")
    }

    /// Chunks waiting for their static vector.
    pub fn static_pending_count(&self, txn: &StoreTxn) -> Result<u64> {
        txn.inner.len(Space::StaticPending)
    }

    /// Up to `max` chunk ids waiting for a static vector, from `from` on, in id order.
    pub fn static_pending_ids(&self, txn: &StoreTxn, from: u32, max: usize) -> Result<Vec<u32>> {
        chunk_ids_in(txn, Space::StaticPending, from, max)
    }

    pub fn is_static_pending(&self, txn: &StoreTxn, chunk_id: u32) -> Result<bool> {
        Ok(txn.inner.get(Space::StaticPending, &chunk_id.to_be_bytes())?.is_some())
    }

    /// How many of the repo's chunks have each kind of vector, and how many wait for one.
    pub fn vector_counts(&self, txn: &StoreTxn) -> Result<VectorCounts> {
        Ok(VectorCounts {
            model: self.vector_count_of(txn, ChunkVectors::Model)?,
            pending: self.pending_count(txn)?,
            static_vectors: self.vector_count_of(txn, ChunkVectors::Static)?,
            static_pending: self.static_pending_count(txn)?,
        })
    }

    /// Queues `chunk_ids` (every live chunk) for a static vector, once per repo: chunks from
    /// before static vectors existed get them too. Returns whether it queued them now.
    pub fn queue_all_static_once(&self, txn: &mut StoreTxn, chunk_ids: &[u32]) -> Result<bool> {
        if self.counter(txn, STATIC_QUEUED_ALL)?.is_some() {
            return Ok(false);
        }
        self.queue_static(txn, chunk_ids)?;
        self.put_counter(txn, STATIC_QUEUED_ALL, 1)?;
        Ok(true)
    }

    /// Queues `chunk_ids` for a static vector (again, for those that have one).
    pub fn queue_static(&self, txn: &mut StoreTxn, chunk_ids: &[u32]) -> Result<()> {
        for id in chunk_ids {
            txn.write()?.put(Space::StaticPending, &id.to_be_bytes(), b"")?;
        }
        Ok(())
    }

    /// The mean the repo's static vectors are centred on; `None` before it is computed.
    pub fn static_mean(&self, txn: &StoreTxn) -> Result<Option<Vec<f32>>> {
        Ok(txn.inner.get(Space::Meta, STATIC_MEAN_KEY.as_bytes())?.map(|bytes| floats_of(&bytes)))
    }

    pub fn put_static_mean(&self, txn: &mut StoreTxn, mean: &[f32]) -> Result<()> {
        txn.write()?.put(Space::Meta, STATIC_MEAN_KEY.as_bytes(), &float_bytes(mean))
    }

    /// Whether `queue_all_static_once` has run.
    pub fn queued_all_static(&self, txn: &StoreTxn) -> Result<bool> {
        Ok(self.counter(txn, STATIC_QUEUED_ALL)?.is_some())
    }

    /// Stores a chunk's static vector and clears its static pending entry.
    pub fn put_static_vector(&self, txn: &mut StoreTxn, chunk_id: u32, vector: &[f32]) -> Result<()> {
        txn.write()?.put_vector(VectorKind::StaticChunks, chunk_id, vector)?;
        txn.write()?.delete(Space::StaticPending, &chunk_id.to_be_bytes())?;
        Ok(())
    }

    /// The cached vector for an embedding input, and when it was last used (unix seconds).
    pub fn cached_embedding(&self, txn: &StoreTxn, input_hash: &str) -> Result<Option<(Vec<f32>, u64)>> {
        Ok(txn.inner.get(Space::EmbedCache, input_hash.as_bytes())?.map(|bytes| decode_cached(&bytes)))
    }

    /// Vectors kept in the embedding cache (keyed by input hash; reused when a text returns).
    pub fn embedding_cache_entries(&self, txn: &StoreTxn) -> Result<u64> {
        txn.inner.len(Space::EmbedCache)
    }

    /// Caches a vector, stamped as used now.
    pub fn cache_embedding(&self, txn: &mut StoreTxn, input_hash: &str, vector: &[f32]) -> Result<()> {
        self.cache_embedding_at(txn, input_hash, vector, crate::protocol::time::unix_now())
    }

    /// Caches a vector stamped as last used at `used_at` (unix seconds).
    pub fn cache_embedding_at(&self, txn: &mut StoreTxn, input_hash: &str, vector: &[f32], used_at: u64) -> Result<()> {
        let mut bytes = Vec::with_capacity(8 + vector.len() * 4);
        bytes.extend_from_slice(&used_at.to_le_bytes());
        bytes.extend(float_bytes(vector));
        txn.write()?.put(Space::EmbedCache, input_hash.as_bytes(), &bytes)
    }

    /// Keeps the embedding cache to `max_entries`: above it, the least recently used entries
    /// go until a tenth of the room is free again (so pruning, a full scan, stays rare).
    /// Returns how many were removed.
    pub fn prune_embedding_cache(&self, txn: &mut StoreTxn, max_entries: u64) -> Result<u64> {
        let len = txn.inner.len(Space::EmbedCache)?;
        if len <= max_entries {
            return Ok(0);
        }
        let keep = max_entries - max_entries / 10;
        let mut stamps: Vec<(u64, Vec<u8>)> =
            self.all(txn, Space::EmbedCache)?.into_iter().map(|(key, bytes)| (decode_cached(&bytes).1, key)).collect();
        stamps.sort_unstable();
        let remove = len.saturating_sub(keep) as usize;
        for (_, key) in &stamps[..remove.min(stamps.len())] {
            txn.write()?.delete(Space::EmbedCache, key)?;
        }
        Ok(remove as u64)
    }

    /// Stores a chunk's vector and clears its pending entry, in the caller's transaction.
    pub fn put_vector(&self, txn: &mut StoreTxn, chunk_id: u32, vector: &[f32]) -> Result<()> {
        txn.write()?.put_vector(VectorKind::Chunks, chunk_id, vector)?;
        txn.write()?.delete(Space::Pending, &chunk_id.to_be_bytes())?;
        Ok(())
    }

    /// Forgets a chunk: its vectors and its pending entries.
    pub fn delete_chunk(&self, txn: &mut StoreTxn, chunk_id: u32) -> Result<()> {
        for kind in [VectorKind::Chunks, VectorKind::StaticChunks] {
            txn.write()?.delete_vector(kind, chunk_id)?;
        }
        txn.write()?.delete(Space::Pending, &chunk_id.to_be_bytes())?;
        txn.write()?.delete(Space::StaticPending, &chunk_id.to_be_bytes())?;
        Ok(())
    }

    /// Forgets every file and chunk (records, pending embeddings, chunk vectors) so the next
    /// run indexes from scratch. Memories and the embedding cache stay: re-indexed chunks get
    /// their vectors back from the cache without running the model.
    pub fn forget_chunks(&self, txn: &mut StoreTxn) -> Result<()> {
        for space in [
            Space::Files,
            Space::Code,
            Space::CodeMeta,
            Space::WebPages,
            Space::Libraries,
            Space::Pending,
            Space::StaticPending,
        ] {
            txn.write()?.clear(space)?;
        }
        self.bump_code_generation(txn)?;
        txn.write()?.clear_vectors(VectorKind::Chunks)?;
        txn.write()?.clear_vectors(VectorKind::StaticChunks)?;
        // The next run's chunks make a mean of their own.
        txn.write()?.delete(Space::Meta, STATIC_MEAN_KEY.as_bytes())?;
        let state = self.run_state(txn)?;
        // Chunk ids keep growing: nothing may confuse a new chunk with a forgotten one.
        let fresh = IndexRunState { next_chunk_id: state.next_chunk_id, ..IndexRunState::default() };
        self.put_run_state(txn, &fresh)
    }

    /// Makes the chunk vectors written or deleted since searchable, of both kinds (a
    /// deletion leaves an arroy index unreadable until it is built again; building an
    /// unchanged one costs nothing).
    pub fn build_vectors(&self, txn: &mut StoreTxn) -> Result<()> {
        txn.write()?.build_vectors(VectorKind::Chunks)?;
        txn.write()?.build_vectors(VectorKind::StaticChunks)
    }

    /// Makes the static vectors written since searchable.
    pub fn build_static_vectors(&self, txn: &mut StoreTxn) -> Result<()> {
        txn.write()?.build_vectors(VectorKind::StaticChunks)
    }

    /// Number of chunks with a searchable vector of the model.
    pub fn vector_count(&self, txn: &StoreTxn) -> Result<u64> {
        self.vector_count_of(txn, ChunkVectors::Model)
    }

    /// Number of chunks with a searchable vector of `which`.
    pub fn vector_count_of(&self, txn: &StoreTxn, which: ChunkVectors) -> Result<u64> {
        txn.inner.vector_count(which.kind())
    }

    /// Every stored chunk vector (for exact-search recall checks and copies, not for serving).
    pub fn all_vectors(&self, txn: &StoreTxn) -> Result<Vec<(u32, Vec<f32>)>> {
        self.all_vectors_of(txn, ChunkVectors::Model)
    }

    /// Every stored chunk vector of `which`.
    pub fn all_vectors_of(&self, txn: &StoreTxn, which: ChunkVectors) -> Result<Vec<(u32, Vec<f32>)>> {
        txn.inner.all_vectors(which.kind())
    }

    /// The `count` chunks closest to `vector` as (chunk id, cosine similarity), best first.
    /// `search_k` trades speed for recall on the embedded store (arroy inspects that many
    /// nodes).
    pub fn nearest_chunks(
        &self,
        txn: &StoreTxn,
        vector: &[f32],
        count: usize,
        search_k: usize,
    ) -> Result<Vec<(u32, f32)>> {
        self.nearest_chunks_of(txn, ChunkVectors::Model, vector, count, search_k)
    }

    /// `nearest_chunks` among the vectors of `which` (the query embedded the same way).
    pub fn nearest_chunks_of(
        &self,
        txn: &StoreTxn,
        which: ChunkVectors,
        vector: &[f32],
        count: usize,
        search_k: usize,
    ) -> Result<Vec<(u32, f32)>> {
        txn.inner.nearest(which.kind(), vector, count, search_k)
    }
}

impl RepoStore {
    /// Stores a memory (and its vector when there is one) with the next id.
    pub fn add_memory(
        &self,
        txn: &mut StoreTxn,
        text: &str,
        metadata: serde_json::Value,
        created_at_ms: u64,
        vector_opt: Option<&[f32]>,
    ) -> Result<MemoryRecord> {
        // The counter, or (stores from before it existed) one past the newest note.
        let after_last = txn.inner.last(Space::Memories)?.map(|(id, _)| u64_of(&id) + 1).unwrap_or(1);
        let id = self.counter(txn, NEXT_MEMORY_ID)?.unwrap_or(1).max(after_last);
        self.put_counter(txn, NEXT_MEMORY_ID, id + 1)?;
        let record =
            MemoryRecord { id, text: text.to_string(), metadata, created_at_ms, embedded: vector_opt.is_some() };
        txn.write()?.put(Space::Memories, &id.to_be_bytes(), &encode_json(&record)?)?;
        if let Some(vector) = vector_opt {
            self.put_memory_vector(txn, id, vector)?;
            self.build_memory_vectors(txn)?;
        }
        Ok(record)
    }

    /// Makes memory vectors searchable; call once after `put_memory_vector`s.
    pub fn build_memory_vectors(&self, txn: &mut StoreTxn) -> Result<()> {
        txn.write()?.build_vectors(VectorKind::Memories)
    }

    fn memory(&self, txn: &StoreTxn, id: u64) -> Result<Option<MemoryRecord>> {
        txn.inner.get(Space::Memories, &id.to_be_bytes())?.map(|bytes| decode_json(&bytes)).transpose()
    }

    /// Adds a vector to a memory saved without one (searchable after `build_memory_vectors`).
    pub fn put_memory_vector(&self, txn: &mut StoreTxn, id: u64, vector: &[f32]) -> Result<()> {
        let item = u32::try_from(id).map_err(|_| DocdexError::internal("memory ids exhausted"))?;
        txn.write()?.put_vector(VectorKind::Memories, item, vector)?;
        if let Some(mut record) = self.memory(txn, id)? {
            record.embedded = true;
            txn.write()?.put(Space::Memories, &id.to_be_bytes(), &encode_json(&record)?)?;
        }
        Ok(())
    }

    /// Removes a memory and its vector; false when there was none.
    pub fn delete_memory(&self, txn: &mut StoreTxn, id: u64) -> Result<bool> {
        let Some(record) = self.memory(txn, id)? else { return Ok(false) };
        txn.write()?.delete(Space::Memories, &id.to_be_bytes())?;
        if record.embedded {
            if let Ok(item) = u32::try_from(id) {
                txn.write()?.delete_vector(VectorKind::Memories, item)?;
                self.build_memory_vectors(txn)?;
            }
        }
        Ok(true)
    }

    pub fn all_memories(&self, txn: &StoreTxn) -> Result<Vec<MemoryRecord>> {
        self.all(txn, Space::Memories)?.into_iter().map(|(_, bytes)| decode_json(&bytes)).collect()
    }

    /// Cosine similarity of every embedded memory to `vector` (memories are few: exact).
    pub fn memory_similarities(&self, txn: &StoreTxn, vector: &[f32]) -> Result<HashMap<u64, f32>> {
        let count = txn.inner.vector_count(VectorKind::Memories)? as usize;
        if count == 0 {
            return Ok(HashMap::new());
        }
        let found = txn.inner.nearest(VectorKind::Memories, vector, count, 0)?;
        Ok(found.into_iter().map(|(id, similarity)| (u64::from(id), similarity)).collect())
    }
}

impl RepoStore {
    /// Appends nodes to a session (created on its first node); the header's node count is
    /// the highest id written.
    pub fn append_dag(&self, txn: &mut StoreTxn, session: &DagSession, nodes: &[DagNode]) -> Result<()> {
        let mut header: DagSession = match txn.inner.get(Space::DagSessions, session.id.as_bytes())? {
            Some(bytes) => decode_json(&bytes)?,
            None => session.clone(),
        };
        for node in nodes {
            let key = format!("{}/{:08}", session.id, node.id);
            txn.write()?.put(Space::DagNodes, key.as_bytes(), &encode_json(node)?)?;
            header.nodes = header.nodes.max(node.id);
        }
        txn.write()?.put(Space::DagSessions, session.id.as_bytes(), &encode_json(&header)?)
    }

    pub fn dag_sessions(&self, txn: &StoreTxn) -> Result<Vec<DagSession>> {
        self.all(txn, Space::DagSessions)?.into_iter().map(|(_, bytes)| decode_json(&bytes)).collect()
    }

    /// A session and its nodes in id order; `None` when there is no such session.
    pub fn dag_view(&self, txn: &StoreTxn, id: &str) -> Result<Option<DagView>> {
        if unkeyable(id) {
            return Ok(None);
        }
        let Some(bytes) = txn.inner.get(Space::DagSessions, id.as_bytes())? else { return Ok(None) };
        let session = decode_json(&bytes)?;
        let prefix = format!("{id}/");
        let nodes = txn
            .inner
            .scan(Space::DagNodes, prefix.as_bytes(), prefix.as_bytes(), usize::MAX)?
            .into_iter()
            .map(|(_, bytes)| decode_json(&bytes))
            .collect::<Result<Vec<DagNode>>>()?;
        Ok(Some(DagView { session, nodes }))
    }
}

/// A cache entry: the last-use stamp, then the vector (entries from before stamps hold the
/// vector alone and count as never used).
fn decode_cached(bytes: &[u8]) -> (Vec<f32>, u64) {
    let (used_at, floats) = if bytes.len() == crate::index::models::EMBEDDING_DIMS * 4 {
        (0, bytes)
    } else if bytes.len() >= 8 {
        (u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")), &bytes[8..])
    } else {
        (0, &[][..])
    };
    (floats_of(floats), used_at)
}

/// A vector as the records keep it (the embedding cache, the static mean): little-endian f32.
fn float_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn floats_of(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}
