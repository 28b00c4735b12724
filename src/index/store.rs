//! The repo's LMDB environment (through heed): per-file records with content hashes, and the
//! index-run state. One struct owns the env and every typed database; getters take a read
//! transaction, writers a write transaction the caller commits.

use std::collections::HashMap;
use std::path::Path;

use heed::types::{SerdeJson, Str};
use heed::{Database, Env, EnvOpenOptions, RoTxn, RwTxn, WithoutTls};
use serde::{Deserialize, Serialize};

use crate::protocol::Result;

const FILES_DB: &str = "files";
const META_DB: &str = "meta";
const RUN_STATE_KEY: &str = "index_run";
/// The map is a ceiling on the file's size, not an allocation; 4 GiB leaves room for the
/// vectors and memory that later live in the same environment.
const MAP_SIZE: usize = 4 << 30;

/// What the index knows about one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub content_hash: String,
    pub size: u64,
    pub mtime_ns: u64,
    pub chunks: u32,
    pub language: String,
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
}

impl RepoStore {
    pub fn open(dir: &Path) -> Result<RepoStore> {
        std::fs::create_dir_all(dir)?;
        // SAFETY: the environment is opened once per process per repo (the RepoManager keeps
        // one handle) and the file is never truncated or modified outside LMDB.
        let env = unsafe { EnvOpenOptions::new().read_txn_without_tls().map_size(MAP_SIZE).max_dbs(16).open(dir)? };
        let wtxn = env.write_txn()?;
        let (files, meta) = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                let files = opener.create_database(wtxn, Some(FILES_DB))?;
                let meta = opener.create_database(wtxn, Some(META_DB))?;
                Ok(heed::CommitOrAbort::<_, ()>::Commit((files, meta)))
            })?
            .unwrap_commit();
        Ok(RepoStore { env, files, meta })
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
        Ok(self.files.get(rtxn, path)?)
    }

    pub fn put_file(&self, wtxn: &mut RwTxn, path: &str, record: &FileRecord) -> Result<()> {
        Ok(self.files.put(wtxn, path, record)?)
    }

    pub fn delete_file(&self, wtxn: &mut RwTxn, path: &str) -> Result<()> {
        self.files.delete(wtxn, path)?;
        Ok(())
    }

    pub fn run_state(&self, rtxn: &RoTxn<WithoutTls>) -> Result<IndexRunState> {
        Ok(self.meta.get(rtxn, RUN_STATE_KEY)?.unwrap_or_default())
    }

    pub fn put_run_state(&self, wtxn: &mut RwTxn, state: &IndexRunState) -> Result<()> {
        Ok(self.meta.put(wtxn, RUN_STATE_KEY, state)?)
    }
}
