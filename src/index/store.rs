//! The repo's LMDB environment (through heed): per-file records with content hashes, and the
//! index-run state. One struct owns the env and every typed database; getters take a read
//! transaction, writers a write transaction the caller commits.

use std::collections::HashMap;
use std::path::Path;

use arroy::distances::Cosine;
use arroy::{Reader, Writer};
use heed::byteorder::BigEndian;
use heed::types::{Bytes, SerdeJson, Str, U32, U64};
use heed::{Database, Env, EnvOpenOptions, RoTxn, RwTxn, WithoutTls};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::code::FileCode;
use crate::index::dag::{DagNode, DagSession, DagView};
use crate::protocol::Result;

const FILES_DB: &str = "files";
const META_DB: &str = "meta";
const PENDING_DB: &str = "embedding_pending";
const EMBED_CACHE_DB: &str = "embedding_cache";
const VECTORS_DB: &str = "vectors";
const MEMORIES_DB: &str = "memories";
const WEB_PAGES_DB: &str = "web_pages";
const LIBRARIES_DB: &str = "libraries";
const DAG_SESSIONS_DB: &str = "dag_sessions";
const DAG_NODES_DB: &str = "dag_nodes";
const COUNTERS_DB: &str = "counters";
const CODE_DB: &str = "code";
const CODE_META_DB: &str = "code_meta";
/// `code_meta` key: the grammars that built the stored code facts (`code::grammar_fingerprint`).
const CODE_FINGERPRINT_KEY: &str = "grammars";
/// `counters` key: bumped with every change to the code facts, so a cached graph knows it is old.
const CODE_GENERATION: &str = "code_generation";
/// The next memory id: never reused, even after the newest note is deleted.
const NEXT_MEMORY_ID: &str = "next_memory_id";
/// arroy index of memory vectors, beside the chunk vectors in the same database.
const MEMORY_VECTORS_INDEX: u16 = 1;
/// arroy index number of chunk vectors inside the vectors database (memory gets its own).
const CHUNK_VECTORS_INDEX: u16 = 0;
/// Seed of arroy's tree building, so index builds are reproducible.
const ARROY_SEED: u64 = 0x5eed_d0cd;
const RUN_STATE_KEY: &str = "index_run";

/// LMDB's largest key (its default build).
const MAX_KEY_BYTES: usize = 511;

/// What the index knows about one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub content_hash: String,
    pub size: u64,
    pub mtime_ns: u64,
    pub chunks: u32,
    pub language: String,
    /// Ids of the file's chunks: their vectors and pending embeddings go when the file does.
    #[serde(default)]
    pub chunk_ids: Vec<u32>,
    /// Why a document has no chunks: it could not be converted (an encrypted PDF, a corrupt
    /// DOCX). Listed by `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A web page this repo's waterfall fetched and ingested (its chunks live in the same
/// Tantivy index, with `source = web` and the URL as their path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebPageRecord {
    pub content_hash: String,
    pub title: String,
    /// Unix seconds.
    pub fetched_at: u64,
    pub chunk_ids: Vec<u32>,
}

/// A library whose docs are ingested into this repo (`libs fetch`): its chunks live in the
/// same Tantivy index with `source = library`, under paths `<ecosystem>:<name>@<version>/…`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryRecord {
    pub ecosystem: String,
    pub name: String,
    pub version: String,
    /// The cache entry's `library.json` hash: the same version re-fetched differently is
    /// re-ingested.
    pub content_hash: String,
    pub paths: Vec<String>,
    pub chunk_ids: Vec<u32>,
    /// Unix seconds.
    pub ingested_at: u64,
}

/// Bookkeeping of index runs: a run that started after the last completion was interrupted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRunState {
    /// Unix seconds.
    pub last_started: Option<u64>,
    pub last_completed: Option<u64>,
    /// Set when a run starts and cleared when it completes: still set with no run active means
    /// the last run was killed or failed.
    #[serde(default)]
    pub in_progress: bool,
    pub files: u64,
    pub chunks: u64,
    pub bytes: u64,
    /// Next chunk id to hand out (ids are never reused while they can be referenced).
    #[serde(default)]
    pub next_chunk_id: u32,
    /// `index::INDEX_FORMAT_VERSION` of the docdex that completed the last run (0: before
    /// versions were kept): another version means the analyzer or chunker changed.
    #[serde(default)]
    pub format_version: u32,
    /// Why the index was emptied for a rebuild (written by another docdex version), until
    /// the next run completes: a search in between says so instead of "not indexed".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild_reason: Option<String>,
}

impl IndexRunState {
    pub fn interrupted(&self) -> bool {
        self.in_progress
    }

    pub fn indexed(&self) -> bool {
        self.last_completed.is_some()
    }
}

pub struct RepoStore {
    env: Env<WithoutTls>,
    files: Database<'static, Str, SerdeJson<FileRecord>>,
    meta: Database<'static, Str, SerdeJson<IndexRunState>>,
    /// Ids of chunks that have no vector yet (the values are unused).
    pending: Database<'static, U32<BigEndian>, Str>,
    /// SHA-256 of an embedding input → its vector (little-endian f32s): unchanged chunks are
    /// never embedded twice, across files and re-indexes.
    embed_cache: Database<'static, Str, Bytes>,
    vectors: arroy::Database<'static, Cosine>,
    /// The repo's long-term memory: id → item. Ids grow; newest last.
    memories: Database<'static, U64<BigEndian>, SerdeJson<MemoryRecord>>,
    /// Web pages ingested into this repo: URL → record.
    web_pages: Database<'static, Str, SerdeJson<WebPageRecord>>,
    /// Libraries ingested into this repo: `<ecosystem>/<name>` → record.
    libraries: Database<'static, Str, SerdeJson<LibraryRecord>>,
    /// Reasoning DAG: session id → header, and `<session>/<node id, 8 digits>` → node.
    dag_sessions: Database<'static, Str, SerdeJson<DagSession>>,
    dag_nodes: Database<'static, Str, SerdeJson<DagNode>>,
    /// Monotonic counters (ids that must never be handed out twice).
    counters: Database<'static, Str, U64<BigEndian>>,
    /// Code facts (symbols, uses, imports) per file path, `code::FileCode` encoded; written in
    /// the same transaction as the file's record.
    code: Database<'static, Str, Bytes>,
    code_meta: Database<'static, Str, Str>,
}

/// One remembered note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub id: u64,
    pub text: String,
    pub metadata: serde_json::Value,
    /// Unix milliseconds.
    pub created_at_ms: u64,
    /// Whether its vector is stored (false when saved without the model).
    pub embedded: bool,
}

impl RepoStore {
    pub fn open(dir: &Path) -> Result<RepoStore> {
        RepoStore::open_with(dir, crate::config::DEFAULT_MAP_BYTES)
    }

    pub fn open_with(dir: &Path, map_bytes: usize) -> Result<RepoStore> {
        std::fs::create_dir_all(dir)?;
        // SAFETY: the environment is opened once per process per repo (the RepoManager keeps
        // one handle) and the file is never truncated or modified outside LMDB.
        let env = unsafe {
            EnvOpenOptions::new().read_txn_without_tls().map_size(map_bytes.max(1 << 20)).max_dbs(16).open(dir)?
        };
        let wtxn = env.write_txn()?;
        let (
            files,
            meta,
            pending,
            embed_cache,
            vectors,
            memories,
            web_pages,
            libraries,
            dag_sessions,
            dag_nodes,
            (counters, code, code_meta),
        ) = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                let files = opener.create_database(wtxn, Some(FILES_DB))?;
                let meta = opener.create_database(wtxn, Some(META_DB))?;
                let pending = opener.create_database(wtxn, Some(PENDING_DB))?;
                let embed_cache = opener.create_database(wtxn, Some(EMBED_CACHE_DB))?;
                let vectors = opener.create_database(wtxn, Some(VECTORS_DB))?;
                let memories = opener.create_database(wtxn, Some(MEMORIES_DB))?;
                let web_pages = opener.create_database(wtxn, Some(WEB_PAGES_DB))?;
                let libraries = opener.create_database(wtxn, Some(LIBRARIES_DB))?;
                let dag_sessions = opener.create_database(wtxn, Some(DAG_SESSIONS_DB))?;
                let dag_nodes = opener.create_database(wtxn, Some(DAG_NODES_DB))?;
                let counters = opener.create_database(wtxn, Some(COUNTERS_DB))?;
                let code = opener.create_database(wtxn, Some(CODE_DB))?;
                let code_meta = opener.create_database(wtxn, Some(CODE_META_DB))?;
                Ok(heed::CommitOrAbort::<_, ()>::Commit((
                    files,
                    meta,
                    pending,
                    embed_cache,
                    vectors,
                    memories,
                    web_pages,
                    libraries,
                    dag_sessions,
                    dag_nodes,
                    // Tuples of up to 12 commit as one: the newer databases are grouped.
                    (counters, code, code_meta),
                )))
            })?
            .unwrap_commit();
        Ok(RepoStore {
            env,
            files,
            meta,
            pending,
            embed_cache,
            vectors,
            memories,
            web_pages,
            libraries,
            dag_sessions,
            dag_nodes,
            counters,
            code,
            code_meta,
        })
    }

    /// Every file's code facts, and how many entries did not decode (written in another
    /// format under the same fingerprint: the caller must not answer from a partial graph).
    pub fn all_code(&self, rtxn: &RoTxn<WithoutTls>) -> Result<(HashMap<String, FileCode>, usize)> {
        let mut out = HashMap::new();
        let mut undecodable = 0;
        for entry in self.code.iter(rtxn)? {
            let (path, bytes) = entry?;
            match FileCode::decode(bytes) {
                Some(code) => {
                    out.insert(path.to_string(), code);
                }
                None => undecodable += 1,
            }
        }
        Ok((out, undecodable))
    }

    /// Stores raw bytes as a file's code facts (tests: an entry of another layout).
    #[cfg(test)]
    pub(crate) fn put_code_bytes(&self, wtxn: &mut RwTxn, path: &str, bytes: &[u8]) -> Result<()> {
        Ok(self.code.put(wtxn, path, bytes)?)
    }

    /// Forgets which grammars built the code facts: the next index run reads every file again.
    pub fn forget_code_fingerprint(&self, wtxn: &mut RwTxn) -> Result<()> {
        self.code_meta.delete(wtxn, CODE_FINGERPRINT_KEY)?;
        Ok(())
    }

    pub fn put_code(&self, wtxn: &mut RwTxn, path: &str, code: &FileCode) -> Result<()> {
        // A path LMDB cannot key is a file without code facts, not a failed run.
        if path.is_empty() || path.len() > MAX_KEY_BYTES {
            return Ok(());
        }
        self.code.put(wtxn, path, &code.encode())?;
        Ok(())
    }

    pub fn delete_code(&self, wtxn: &mut RwTxn, path: &str) -> Result<bool> {
        if path.is_empty() || path.len() > MAX_KEY_BYTES {
            return Ok(false);
        }
        Ok(self.code.delete(wtxn, path)?)
    }

    pub fn code_fingerprint(&self, rtxn: &RoTxn<WithoutTls>) -> Result<Option<String>> {
        Ok(self.code_meta.get(rtxn, CODE_FINGERPRINT_KEY)?.map(str::to_string))
    }

    pub fn put_code_fingerprint(&self, wtxn: &mut RwTxn, fingerprint: &str) -> Result<()> {
        Ok(self.code_meta.put(wtxn, CODE_FINGERPRINT_KEY, fingerprint)?)
    }

    pub fn code_generation(&self, rtxn: &RoTxn<WithoutTls>) -> Result<u64> {
        Ok(self.counters.get(rtxn, CODE_GENERATION)?.unwrap_or(0))
    }

    pub fn bump_code_generation(&self, wtxn: &mut RwTxn) -> Result<()> {
        let next = self.counters.get(wtxn, CODE_GENERATION)?.unwrap_or(0) + 1;
        Ok(self.counters.put(wtxn, CODE_GENERATION, &next)?)
    }

    pub fn read_txn(&self) -> Result<RoTxn<'_, WithoutTls>> {
        Ok(self.env.read_txn()?)
    }

    pub fn write_txn(&self) -> Result<RwTxn<'_>> {
        Ok(self.env.write_txn()?)
    }

    pub fn all_files(&self, rtxn: &RoTxn<WithoutTls>) -> Result<HashMap<String, FileRecord>> {
        let mut files = HashMap::new();
        for entry in self.files.iter(rtxn)? {
            let (path, record) = entry?;
            files.insert(path.to_string(), record);
        }
        Ok(files)
    }

    pub fn file(&self, rtxn: &RoTxn<WithoutTls>, path: &str) -> Result<Option<FileRecord>> {
        // LMDB refuses empty keys and keys over 511 bytes (MDB_BAD_VALSIZE): no such file can
        // be in the store, so asking for one is an answer, not an error.
        if path.is_empty() || path.len() > MAX_KEY_BYTES {
            return Ok(None);
        }
        Ok(self.files.get(rtxn, path)?)
    }

    pub fn put_file(&self, wtxn: &mut RwTxn, path: &str, record: &FileRecord) -> Result<()> {
        Ok(self.files.put(wtxn, path, record)?)
    }

    pub fn delete_file(&self, wtxn: &mut RwTxn, path: &str) -> Result<()> {
        self.files.delete(wtxn, path)?;
        Ok(())
    }

    pub fn web_page(&self, rtxn: &RoTxn<WithoutTls>, url: &str) -> Result<Option<WebPageRecord>> {
        Ok(self.web_pages.get(rtxn, url)?)
    }

    pub fn put_web_page(&self, wtxn: &mut RwTxn, url: &str, record: &WebPageRecord) -> Result<()> {
        Ok(self.web_pages.put(wtxn, url, record)?)
    }

    pub fn web_page_count(&self, rtxn: &RoTxn<WithoutTls>) -> Result<u64> {
        Ok(self.web_pages.len(rtxn)?)
    }

    pub fn library(&self, rtxn: &RoTxn<WithoutTls>, key: &str) -> Result<Option<LibraryRecord>> {
        Ok(self.libraries.get(rtxn, key)?)
    }

    pub fn all_libraries(&self, rtxn: &RoTxn<WithoutTls>) -> Result<Vec<(String, LibraryRecord)>> {
        let mut out = Vec::new();
        for entry in self.libraries.iter(rtxn)? {
            let (key, record) = entry?;
            out.push((key.to_string(), record));
        }
        Ok(out)
    }

    pub fn put_library(&self, wtxn: &mut RwTxn, key: &str, record: &LibraryRecord) -> Result<()> {
        Ok(self.libraries.put(wtxn, key, record)?)
    }

    pub fn delete_library(&self, wtxn: &mut RwTxn, key: &str) -> Result<()> {
        self.libraries.delete(wtxn, key)?;
        Ok(())
    }

    pub fn run_state(&self, rtxn: &RoTxn<WithoutTls>) -> Result<IndexRunState> {
        Ok(self.meta.get(rtxn, RUN_STATE_KEY)?.unwrap_or_default())
    }

    pub fn put_run_state(&self, wtxn: &mut RwTxn, state: &IndexRunState) -> Result<()> {
        Ok(self.meta.put(wtxn, RUN_STATE_KEY, state)?)
    }

    pub fn pending_count(&self, rtxn: &RoTxn<WithoutTls>) -> Result<u64> {
        Ok(self.pending.len(rtxn)?)
    }

    /// Up to `max` chunk ids waiting for a vector, from `from` on, in id order.
    pub fn pending_ids(&self, rtxn: &RoTxn<WithoutTls>, from: u32, max: usize) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(max);
        for entry in self.pending.range(rtxn, &(from..))?.take(max) {
            out.push(entry?.0);
        }
        Ok(out)
    }

    pub fn is_pending(&self, rtxn: &RoTxn<WithoutTls>, chunk_id: u32) -> Result<bool> {
        Ok(self.pending.get(rtxn, &chunk_id)?.is_some())
    }

    /// Marks a chunk as waiting for a vector. Its text is read back from the index when it is
    /// embedded (older states stored it here; it is ignored).
    pub fn put_pending(&self, wtxn: &mut RwTxn, chunk_id: u32) -> Result<()> {
        self.pending.put(wtxn, &chunk_id, "")?;
        Ok(())
    }

    /// The cached vector for an embedding input, and when it was last used (unix seconds).
    pub fn cached_embedding(&self, rtxn: &RoTxn<WithoutTls>, input_hash: &str) -> Result<Option<(Vec<f32>, u64)>> {
        Ok(self.embed_cache.get(rtxn, input_hash)?.map(decode_cached))
    }

    /// Vectors kept in the embedding cache (keyed by input hash; reused when a text returns).
    pub fn embedding_cache_entries(&self, rtxn: &RoTxn<WithoutTls>) -> Result<u64> {
        Ok(self.embed_cache.len(rtxn)?)
    }

    /// Caches a vector, stamped as used now.
    pub fn cache_embedding(&self, wtxn: &mut RwTxn, input_hash: &str, vector: &[f32]) -> Result<()> {
        self.cache_embedding_at(wtxn, input_hash, vector, crate::protocol::time::unix_now())
    }

    /// Caches a vector stamped as last used at `used_at` (unix seconds).
    pub fn cache_embedding_at(&self, wtxn: &mut RwTxn, input_hash: &str, vector: &[f32], used_at: u64) -> Result<()> {
        let mut bytes = Vec::with_capacity(8 + vector.len() * 4);
        bytes.extend_from_slice(&used_at.to_le_bytes());
        bytes.extend(vector.iter().flat_map(|x| x.to_le_bytes()));
        Ok(self.embed_cache.put(wtxn, input_hash, &bytes)?)
    }

    /// Keeps the embedding cache to `max_entries`: above it, the least recently used entries
    /// go until a tenth of the room is free again (so pruning, a full scan, stays rare).
    /// Returns how many were removed.
    pub fn prune_embedding_cache(&self, wtxn: &mut RwTxn, max_entries: u64) -> Result<u64> {
        let len = self.embed_cache.len(wtxn)?;
        if len <= max_entries {
            return Ok(0);
        }
        let keep = max_entries - max_entries / 10;
        let mut stamps: Vec<(u64, String)> = Vec::with_capacity(len as usize);
        for entry in self.embed_cache.iter(wtxn)? {
            let (key, bytes) = entry?;
            stamps.push((decode_cached(bytes).1, key.to_string()));
        }
        stamps.sort_unstable();
        let remove = len.saturating_sub(keep) as usize;
        for (_, key) in &stamps[..remove.min(stamps.len())] {
            self.embed_cache.delete(wtxn, key)?;
        }
        Ok(remove as u64)
    }

    fn vector_writer(&self) -> Writer<Cosine> {
        Writer::new(self.vectors, CHUNK_VECTORS_INDEX, crate::index::models::EMBEDDING_DIMS)
    }

    /// Stores a chunk's vector and clears its pending entry, in the caller's transaction.
    pub fn put_vector(&self, wtxn: &mut RwTxn, chunk_id: u32, vector: &[f32]) -> Result<()> {
        self.vector_writer().add_item(wtxn, chunk_id, vector).map_err(arroy_error)?;
        self.pending.delete(wtxn, &chunk_id)?;
        Ok(())
    }

    /// Forgets a chunk: its vector and its pending entry.
    pub fn delete_chunk(&self, wtxn: &mut RwTxn, chunk_id: u32) -> Result<()> {
        self.vector_writer().del_item(wtxn, chunk_id).map_err(arroy_error)?;
        self.pending.delete(wtxn, &chunk_id)?;
        Ok(())
    }

    /// Forgets every file and chunk (records, pending embeddings, chunk vectors) so the next
    /// run indexes from scratch. Memories and the embedding cache stay: re-indexed chunks get
    /// their vectors back from the cache without running the model.
    pub fn forget_chunks(&self, wtxn: &mut RwTxn) -> Result<()> {
        self.files.clear(wtxn)?;
        self.code.clear(wtxn)?;
        self.code_meta.clear(wtxn)?;
        self.bump_code_generation(wtxn)?;
        self.web_pages.clear(wtxn)?;
        self.libraries.clear(wtxn)?;
        self.pending.clear(wtxn)?;
        self.vector_writer().clear(wtxn).map_err(arroy_error)?;
        let state = self.run_state(wtxn)?;
        // Chunk ids keep growing: nothing may confuse a new chunk with a forgotten one.
        let fresh = IndexRunState { next_chunk_id: state.next_chunk_id, ..IndexRunState::default() };
        self.put_run_state(wtxn, &fresh)
    }

    /// Rebuilds an arroy index's trees after vectors were added or removed (incremental).
    fn build_index(&self, wtxn: &mut RwTxn, index: u16) -> Result<()> {
        let writer = Writer::<Cosine>::new(self.vectors, index, crate::index::models::EMBEDDING_DIMS);
        if writer.need_build(wtxn).map_err(arroy_error)? {
            let mut rng = rand::rngs::StdRng::seed_from_u64(ARROY_SEED);
            writer.builder(&mut rng).build(wtxn).map_err(arroy_error)?;
        }
        Ok(())
    }

    /// A reader of an arroy index, or `None` while it has nothing built to read.
    fn reader<'t>(&self, rtxn: &'t RoTxn<WithoutTls>, index: u16) -> Result<Option<Reader<'t, Cosine>>> {
        match Reader::<Cosine>::open(rtxn, index, self.vectors) {
            Ok(reader) => Ok(Some(reader)),
            Err(arroy::Error::MissingMetadata(_)) | Err(arroy::Error::NeedBuild(_)) => Ok(None),
            Err(err) => Err(arroy_error(err)),
        }
    }

    /// Rebuilds the chunk vectors' trees so new vectors are searchable.
    pub fn build_vectors(&self, wtxn: &mut RwTxn) -> Result<()> {
        self.build_index(wtxn, CHUNK_VECTORS_INDEX)
    }

    /// Number of chunks with a vector in the built index.
    pub fn vector_count(&self, rtxn: &RoTxn<WithoutTls>) -> Result<u64> {
        Ok(self.reader(rtxn, CHUNK_VECTORS_INDEX)?.map_or(0, |reader| reader.n_items()))
    }

    /// Every stored chunk vector (for exact-search recall checks, not for serving).
    pub fn all_vectors(&self, rtxn: &RoTxn<WithoutTls>) -> Result<Vec<(u32, Vec<f32>)>> {
        let Some(reader) = self.reader(rtxn, CHUNK_VECTORS_INDEX)? else { return Ok(Vec::new()) };
        let mut out = Vec::with_capacity(reader.n_items() as usize);
        for id in reader.item_ids().iter() {
            if let Some(vector) = reader.item_vector(rtxn, id).map_err(arroy_error)? {
                out.push((id, vector));
            }
        }
        Ok(out)
    }

    /// The `count` chunks closest to `vector` as (chunk id, cosine similarity), best first.
    /// `search_k` trades speed for recall (arroy inspects that many nodes).
    pub fn nearest_chunks(
        &self,
        rtxn: &RoTxn<WithoutTls>,
        vector: &[f32],
        count: usize,
        search_k: usize,
    ) -> Result<Vec<(u32, f32)>> {
        let Some(reader) = self.reader(rtxn, CHUNK_VECTORS_INDEX)? else { return Ok(Vec::new()) };
        let mut query = reader.nns(count);
        if let Some(search_k) = std::num::NonZeroUsize::new(search_k) {
            query.search_k(search_k);
        }
        let found = query.by_vector(rtxn, vector).map_err(arroy_error)?;
        Ok(found.into_iter().map(|(id, distance)| (id, cosine_similarity(distance))).collect())
    }
}

impl RepoStore {
    fn memory_writer(&self) -> Writer<Cosine> {
        Writer::new(self.vectors, MEMORY_VECTORS_INDEX, crate::index::models::EMBEDDING_DIMS)
    }

    /// Stores a memory (and its vector when there is one) with the next id.
    pub fn add_memory(
        &self,
        wtxn: &mut RwTxn,
        text: &str,
        metadata: serde_json::Value,
        created_at_ms: u64,
        vector_opt: Option<&[f32]>,
    ) -> Result<MemoryRecord> {
        // The counter, or (stores from before it existed) one past the newest note.
        let after_last = self.memories.last(wtxn)?.map(|(id, _)| id + 1).unwrap_or(1);
        let id = self.counters.get(wtxn, NEXT_MEMORY_ID)?.unwrap_or(1).max(after_last);
        self.counters.put(wtxn, NEXT_MEMORY_ID, &(id + 1))?;
        let record =
            MemoryRecord { id, text: text.to_string(), metadata, created_at_ms, embedded: vector_opt.is_some() };
        self.memories.put(wtxn, &id, &record)?;
        if let Some(vector) = vector_opt {
            self.put_memory_vector(wtxn, id, vector)?;
            self.build_memory_vectors(wtxn)?;
        }
        Ok(record)
    }

    /// Rebuilds the memory vectors' trees; call once after `put_memory_vector`s.
    pub fn build_memory_vectors(&self, wtxn: &mut RwTxn) -> Result<()> {
        self.build_index(wtxn, MEMORY_VECTORS_INDEX)
    }

    /// Adds a vector to a memory saved without one (searchable after `build_memory_vectors`).
    pub fn put_memory_vector(&self, wtxn: &mut RwTxn, id: u64, vector: &[f32]) -> Result<()> {
        let item = u32::try_from(id).map_err(|_| crate::protocol::DocdexError::internal("memory ids exhausted"))?;
        self.memory_writer().add_item(wtxn, item, vector).map_err(arroy_error)?;
        if let Some(mut record) = self.memories.get(wtxn, &id)? {
            record.embedded = true;
            self.memories.put(wtxn, &id, &record)?;
        }
        Ok(())
    }

    /// Removes a memory and its vector; false when there was none.
    pub fn delete_memory(&self, wtxn: &mut RwTxn, id: u64) -> Result<bool> {
        let Some(record) = self.memories.get(wtxn, &id)? else { return Ok(false) };
        self.memories.delete(wtxn, &id)?;
        if record.embedded {
            if let Ok(item) = u32::try_from(id) {
                self.memory_writer().del_item(wtxn, item).map_err(arroy_error)?;
                self.build_memory_vectors(wtxn)?;
            }
        }
        Ok(true)
    }

    pub fn all_memories(&self, rtxn: &RoTxn<WithoutTls>) -> Result<Vec<MemoryRecord>> {
        let mut out = Vec::new();
        for entry in self.memories.iter(rtxn)? {
            out.push(entry?.1);
        }
        Ok(out)
    }

    /// Cosine similarity of every embedded memory to `vector` (memories are few: exact).
    pub fn memory_similarities(&self, rtxn: &RoTxn<WithoutTls>, vector: &[f32]) -> Result<HashMap<u64, f32>> {
        let Some(reader) = self.reader(rtxn, MEMORY_VECTORS_INDEX)? else { return Ok(HashMap::new()) };
        let count = reader.n_items() as usize;
        let found = reader.nns(count.max(1)).by_vector(rtxn, vector).map_err(arroy_error)?;
        Ok(found.into_iter().map(|(id, distance)| (u64::from(id), cosine_similarity(distance))).collect())
    }
}

impl RepoStore {
    /// Appends nodes to a session (created on its first node); the header's node count is
    /// the highest id written.
    pub fn append_dag(&self, wtxn: &mut RwTxn, session: &DagSession, nodes: &[DagNode]) -> Result<()> {
        let mut header = self.dag_sessions.get(wtxn, &session.id)?.unwrap_or_else(|| session.clone());
        for node in nodes {
            self.dag_nodes.put(wtxn, &format!("{}/{:08}", session.id, node.id), node)?;
            header.nodes = header.nodes.max(node.id);
        }
        self.dag_sessions.put(wtxn, &session.id, &header)?;
        Ok(())
    }

    pub fn dag_sessions(&self, rtxn: &RoTxn<WithoutTls>) -> Result<Vec<DagSession>> {
        let mut out = Vec::new();
        for entry in self.dag_sessions.iter(rtxn)? {
            out.push(entry?.1);
        }
        Ok(out)
    }

    /// A session and its nodes in id order; `None` when there is no such session.
    pub fn dag_view(&self, rtxn: &RoTxn<WithoutTls>, id: &str) -> Result<Option<DagView>> {
        let Some(session) = self.dag_sessions.get(rtxn, id)? else { return Ok(None) };
        let mut nodes = Vec::new();
        for entry in self.dag_nodes.prefix_iter(rtxn, &format!("{id}/"))? {
            nodes.push(entry?.1);
        }
        Ok(Some(DagView { session, nodes }))
    }
}

/// arroy's cosine distance is (1 - cos) / 2.
fn cosine_similarity(distance: f32) -> f32 {
    1.0 - 2.0 * distance
}

fn arroy_error(err: arroy::Error) -> crate::protocol::DocdexError {
    match err {
        // A full map or disk is the storage's condition, reported as such.
        arroy::Error::Heed(err) => err.into(),
        arroy::Error::Io(err) => err.into(),
        err => crate::protocol::DocdexError::internal(format!("vector store error: {err}")),
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
    (floats.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(), used_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_ids_are_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let store = RepoStore::open(dir.path()).unwrap();
        let mut wtxn = store.write_txn().unwrap();
        let ids: Vec<u64> = (0..3)
            .map(|n| store.add_memory(&mut wtxn, &format!("note {n}"), serde_json::Value::Null, 0, None).unwrap().id)
            .collect();
        assert_eq!(ids, vec![1, 2, 3]);
        assert!(store.delete_memory(&mut wtxn, 3).unwrap());
        let next = store.add_memory(&mut wtxn, "after the delete", serde_json::Value::Null, 0, None).unwrap();
        assert_eq!(next.id, 4, "the deleted newest note's id is not handed out again");
        wtxn.commit().unwrap();
    }

    #[test]
    fn the_embedding_cache_keeps_the_recently_used_entries() {
        let dir = tempfile::tempdir().unwrap();
        let store = RepoStore::open(dir.path()).unwrap();
        let mut wtxn = store.write_txn().unwrap();
        let vector = vec![0.5f32; crate::index::models::EMBEDDING_DIMS];
        for n in 0..100u64 {
            store.cache_embedding_at(&mut wtxn, &format!("h{n}"), &vector, 1_000 + n).unwrap();
        }
        // An entry from before stamps (the vector alone) counts as never used.
        let legacy: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        store.embed_cache.put(&mut wtxn, "legacy", &legacy).unwrap();
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
    }
}

#[cfg(test)]
mod vector_rebuild_tests {
    use super::*;

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
    fn every_vector_is_found_after_a_forget_and_reuse() {
        let dir = tempfile::tempdir().unwrap();
        let store = RepoStore::open(dir.path()).unwrap();
        for batch in (0..900u32).collect::<Vec<_>>().chunks(32) {
            let mut wtxn = store.write_txn().unwrap();
            for &id in batch {
                store.put_vector(&mut wtxn, id, &vector(id)).unwrap();
            }
            store.build_vectors(&mut wtxn).unwrap();
            wtxn.commit().unwrap();
        }
        assert_eq!(unreachable(&store, 0..900, 0), 0, "fresh");
        let mut wtxn = store.write_txn().unwrap();
        store.forget_chunks(&mut wtxn).unwrap();
        wtxn.commit().unwrap();
        for batch in (900..1800u32).collect::<Vec<_>>().chunks(256) {
            let mut wtxn = store.write_txn().unwrap();
            for &id in batch {
                store.put_vector(&mut wtxn, id, &vector(id - 900)).unwrap();
            }
            store.build_vectors(&mut wtxn).unwrap();
            wtxn.commit().unwrap();
        }
        assert_eq!(unreachable(&store, 900..1800, 900), 0, "after forget");
    }
}
