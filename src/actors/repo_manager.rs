//! RepoManager: canonicalises and fingerprints repo paths, keeps the registry of known repos
//! and lazily opens each repo's state (index, store, Indexer actor).
//!
//! A sync actor with one thread: opening LMDB and Tantivy blocks, and handling one message at
//! a time guarantees a repo is opened once per process (LMDB forbids opening an environment
//! twice in one process).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use actix::{Actor, Addr, Handler, Message, SyncArbiter, SyncContext};
use serde::{Deserialize, Serialize};

use super::indexer::{Indexer, IndexerSettings};
use crate::index::{RepoIndex, StoreBackend};
use crate::ingest::repo_policy::RepoPolicy;
use crate::ingest::sha256_hex;
use crate::protocol::time::unix_now;
use crate::protocol::{DocdexError, ErrorCode, Result};

pub const REPO_META_FILE: &str = "repo_meta.json";

/// SHA-256 of a repo's canonical path: the name of its state directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RepoFingerprint(pub String);

impl RepoFingerprint {
    pub fn of(canonical_path: &Path) -> RepoFingerprint {
        RepoFingerprint(sha256_hex(canonical_path.to_string_lossy().as_bytes()))
    }
}

/// `repo_meta.json` in each repo's state directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoMeta {
    pub fingerprint: String,
    pub canonical_path: String,
    /// Unix seconds.
    pub created_at: u64,
    pub last_seen_at: u64,
}

/// An open repo: its index and its Indexer.
pub struct RepoHandle {
    pub meta: RepoMeta,
    pub index: Arc<RepoIndex>,
    pub indexer: Addr<Indexer>,
    /// Held for the length of an index run: a second request (an MCP `docdex_index` while the
    /// startup refresh runs) waits and then runs incrementally, instead of interleaving.
    pub index_run: tokio::sync::Mutex<()>,
    /// When a request last opened the repo (unix milliseconds): idle release goes by it.
    pub last_used_ms: std::sync::atomic::AtomicU64,
}

pub struct RepoManager {
    /// Which repos may be opened: checked on the resolved path of every open.
    policy: RepoPolicy,
    repos_dir: PathBuf,
    indexer_settings: IndexerSettings,
    lmdb_map_bytes: usize,
    store: crate::config::StoreConfig,
    /// The team store's connections, made on the first open (a store that is down at start
    /// is an error per request until it is back, not a daemon that cannot start).
    pool_opt: Option<Arc<crate::postgres::PgPool>>,
    open: HashMap<RepoFingerprint, Arc<RepoHandle>>,
}

impl RepoManager {
    pub fn new(
        state_dir: &Path,
        policy: RepoPolicy,
        indexer_settings: IndexerSettings,
        lmdb_map_bytes: usize,
        store: crate::config::StoreConfig,
    ) -> RepoManager {
        RepoManager {
            policy,
            repos_dir: state_dir.join("repos"),
            indexer_settings,
            lmdb_map_bytes,
            store,
            pool_opt: None,
            open: HashMap::new(),
        }
    }

    /// Where repos live, per `[store]`.
    fn backend(&mut self) -> Result<StoreBackend> {
        if self.store.backend != crate::config::STORE_POSTGRES {
            return Ok(StoreBackend::Embedded { lmdb_map_bytes: self.lmdb_map_bytes });
        }
        let pool = match &self.pool_opt {
            Some(pool) => Arc::clone(pool),
            None => {
                let pool = crate::postgres::PgPool::open(&self.store.url)?;
                self.pool_opt = Some(Arc::clone(&pool));
                pool
            }
        };
        Ok(StoreBackend::Postgres(pool))
    }

    /// The team store's connections, when it is the backend.
    fn pool(&mut self) -> Result<Option<Arc<crate::postgres::PgPool>>> {
        match self.backend()? {
            StoreBackend::Postgres(pool) => Ok(Some(pool)),
            StoreBackend::Embedded { .. } => Ok(None),
        }
    }

    /// The repo's resolved root: its canonical path here, or, on the team store, the root
    /// it was indexed at when it has no checkout on this machine (answered from the store).
    fn resolve_root(&mut self, path: &Path) -> Result<PathBuf> {
        let shown = path.display().to_string();
        match std::fs::canonicalize(path) {
            Ok(canonical) if canonical.is_dir() => Ok(canonical),
            Ok(_) => Err(DocdexError::repo_not_found(&shown, "is not a directory")),
            Err(_) => {
                let root = shown.trim_end_matches('/');
                match self.pool()? {
                    Some(pool) if pool.repo_by_root(root)?.is_some() => Ok(PathBuf::from(root)),
                    _ => Err(DocdexError::repo_not_found(&shown, "does not exist")),
                }
            }
        }
    }

    fn open_repo(&mut self, msg: OpenRepo) -> Result<Arc<RepoHandle>> {
        let canonical = self.resolve_root(&msg.path)?;
        self.policy.check_resolved(&msg.path, &canonical)?;
        let fingerprint = RepoFingerprint::of(&canonical);
        if let Some(handle) = self.open.get(&fingerprint) {
            handle.last_used_ms.store(unix_now_ms(), Ordering::Relaxed);
            return Ok(Arc::clone(handle));
        }
        let state_dir = self.repos_dir.join(&fingerprint.0);
        let meta_path = state_dir.join(REPO_META_FILE);
        // On the team store a repo another daemon indexed is known here too.
        let known =
            meta_path.exists() || self.pool()?.map(|pool| pool.has_repo(&fingerprint.0)).transpose()? == Some(true);
        if !msg.create && !known {
            return Err(DocdexError::repo_not_indexed(&canonical.display().to_string()));
        }
        std::fs::create_dir_all(&state_dir).map_err(|err| {
            DocdexError::new(ErrorCode::StateUnwritable, format!("cannot create {}: {err}", state_dir.display()))
                .with_hint("make the state directory writable or set DOCDEX_HOME / core.global_state_dir")
        })?;
        let now = unix_now();
        let existing = read_meta(&meta_path);
        let created_at = existing.as_ref().map(|m| m.created_at).unwrap_or(now);
        let meta = RepoMeta {
            fingerprint: fingerprint.0.clone(),
            canonical_path: canonical.display().to_string(),
            created_at,
            last_seen_at: now,
        };
        // Written only when something changed (or `last_seen_at` is an hour old): two
        // processes opening a repo do not rewrite the file each time.
        let stale = existing.as_ref().is_none_or(|old| {
            old.fingerprint != meta.fingerprint
                || old.canonical_path != meta.canonical_path
                || now.saturating_sub(old.last_seen_at) > 3600
        });
        if stale {
            write_json_atomic(&meta_path, &meta)?;
        }
        // A released repo's environment closes when its last user lets go (an Indexer
        // thread finishing its shutdown); LMDB must not be opened twice meanwhile.
        if let Some(closing) = std::fs::canonicalize(state_dir.join("meta.lmdb")).ok().and_then(heed::env_closing_event)
        {
            if !closing.wait_timeout(std::time::Duration::from_secs(30)) {
                return Err(DocdexError::new(
                    ErrorCode::Internal,
                    format!("the index of {} is still being closed", canonical.display()),
                )
                .with_hint("retry in a moment"));
            }
        }
        let backend = self.backend()?;
        let index = Arc::new(RepoIndex::open_in(&canonical, &fingerprint.0, &state_dir, &backend)?);
        let for_indexer = Arc::clone(&index);
        let settings = self.indexer_settings;
        let indexer = SyncArbiter::start(1, move || Indexer::new(Arc::clone(&for_indexer), settings));
        let handle = Arc::new(RepoHandle {
            meta,
            index,
            indexer,
            index_run: tokio::sync::Mutex::new(()),
            last_used_ms: unix_now_ms().into(),
        });
        self.open.insert(fingerprint, Arc::clone(&handle));
        Ok(handle)
    }
}

impl Actor for RepoManager {
    type Context = SyncContext<Self>;
}

/// Opens a repo's state; with `create: false` a repo that was never indexed is an error.
#[derive(Message)]
#[rtype(result = "Result<Arc<RepoHandle>>")]
pub struct OpenRepo {
    pub path: PathBuf,
    pub create: bool,
}

/// Lists every repo with state on disk (the registry is derived from the state directories,
/// so it cannot drift from them).
#[derive(Message)]
#[rtype(result = "Result<Vec<RepoMeta>>")]
pub struct ListRepos;

/// Drops every open handle (index readers, LMDB environments, Indexers).
#[derive(Message)]
#[rtype(result = "()")]
pub struct CloseAll;

impl Handler<OpenRepo> for RepoManager {
    type Result = Result<Arc<RepoHandle>>;

    fn handle(&mut self, msg: OpenRepo, _: &mut SyncContext<Self>) -> Self::Result {
        self.open_repo(msg)
    }
}

impl Handler<ListRepos> for RepoManager {
    type Result = Result<Vec<RepoMeta>>;

    fn handle(&mut self, _: ListRepos, _: &mut SyncContext<Self>) -> Self::Result {
        list_registry(&self.repos_dir).map(|entries| entries.into_iter().filter_map(|e| e.meta_opt).collect())
    }
}

/// Releases repos nobody used for `idle` and nobody holds now (no search, run or embedding in
/// flight): their index readers, LMDB environment and Indexer thread go, and the next request
/// reopens them. Returns the released repos' paths.
#[derive(Message)]
#[rtype(result = "Vec<String>")]
pub struct ReleaseIdle {
    pub idle: std::time::Duration,
}

/// Releases one repo now if nobody holds it (an unmount); false when it is in use.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct Release {
    pub canonical_path: PathBuf,
}

/// Paths of the repos open now.
#[derive(Message)]
#[rtype(result = "Vec<String>")]
pub struct OpenRepos;

impl RepoManager {
    /// Drops the handle when this map holds the only reference to it.
    fn release_if_unused(&mut self, fingerprint: &RepoFingerprint) -> bool {
        let unused = self.open.get(fingerprint).is_some_and(|handle| Arc::strong_count(handle) == 1);
        if unused {
            self.open.remove(fingerprint);
        }
        unused
    }
}

impl Handler<ReleaseIdle> for RepoManager {
    type Result = actix::MessageResult<ReleaseIdle>;

    fn handle(&mut self, msg: ReleaseIdle, _: &mut SyncContext<Self>) -> Self::Result {
        let cutoff = unix_now_ms().saturating_sub(msg.idle.as_millis() as u64);
        let idle: Vec<(RepoFingerprint, String)> = self
            .open
            .iter()
            .filter(|(_, handle)| handle.last_used_ms.load(Ordering::Relaxed) <= cutoff)
            .map(|(fingerprint, handle)| (fingerprint.clone(), handle.meta.canonical_path.clone()))
            .collect();
        let released = idle.into_iter().filter(|(fp, _)| self.release_if_unused(fp)).map(|(_, path)| path).collect();
        actix::MessageResult(released)
    }
}

impl Handler<Release> for RepoManager {
    type Result = bool;

    fn handle(&mut self, msg: Release, _: &mut SyncContext<Self>) -> bool {
        let fingerprint = RepoFingerprint::of(&msg.canonical_path);
        !self.open.contains_key(&fingerprint) || self.release_if_unused(&fingerprint)
    }
}

impl Handler<OpenRepos> for RepoManager {
    type Result = actix::MessageResult<OpenRepos>;

    fn handle(&mut self, _: OpenRepos, _: &mut SyncContext<Self>) -> Self::Result {
        actix::MessageResult(self.open.values().map(|h| h.meta.canonical_path.clone()).collect())
    }
}

fn unix_now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl Handler<CloseAll> for RepoManager {
    type Result = ();

    fn handle(&mut self, _: CloseAll, _: &mut SyncContext<Self>) {
        self.open.clear();
    }
}

/// One state directory and what its `repo_meta.json` says (None when missing or corrupt).
pub struct RegistryEntry {
    pub dir: PathBuf,
    pub meta_opt: Option<RepoMeta>,
}

/// Reads every state directory under `repos_dir` (none yet is an empty registry).
pub fn list_registry(repos_dir: &Path) -> Result<Vec<RegistryEntry>> {
    let entries = match std::fs::read_dir(repos_dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err.into()),
    };
    let mut out: Vec<RegistryEntry> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| RegistryEntry { meta_opt: read_meta(&e.path().join(REPO_META_FILE)), dir: e.path() })
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(out)
}

fn read_meta(path: &Path) -> Option<RepoMeta> {
    std::fs::read(path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok())
}

/// Write to a temp file and rename, so a kill never leaves half a JSON file.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    // A name of its own per writer: two processes never write one temp file.
    let tmp = path.with_extension(format!("json.{}.{:08x}.tmp", std::process::id(), rand::random::<u32>()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(value)?)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
