//! The team store's connection to PostgreSQL: a small pool of synchronous clients, the
//! schema docdex creates and migrates itself, each repo's id, and the database locks that
//! make one writer per repo across every daemon sharing the server.
//!
//! Synchronous on purpose: the store is called where LMDB is, from sync actors' threads and
//! tokio's blocking pool, never from an async task.

mod schema;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};

use crate::protocol::{DocdexError, ErrorCode, Result};

pub use schema::SCHEMA_VERSION;

/// Idle connections a pool keeps; more are opened on demand and closed when returned.
const MAX_IDLE: usize = 8;

/// How long connecting may take before the store is reported unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Lock class of a repo's index writer (the first key of a two-key advisory lock; the
/// second is the repo id). Distinct classes keep docdex's locks apart from an application's
/// own advisory locks on the same server.
const WRITER_LOCK_CLASS: i32 = 0x646f_6431; // "dod1"

/// Lock class of a repo's record writes: one write transaction per repo at a time, as LMDB
/// has one writer per environment.
pub(crate) const RECORDS_LOCK_CLASS: i32 = 0x646f_6432;

/// A URL with its password replaced, for messages and logs.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(parsed) => parsed.to_string(),
        Err(_) => "(unparsable URL)".to_string(),
    }
}

fn unavailable(url: &str, what: impl std::fmt::Display) -> DocdexError {
    DocdexError::new(ErrorCode::StoreUnavailable, format!("the store at {} {what}", redact(url))).with_hint(
        "check that PostgreSQL runs and the URL ([store] url or DOCDEX_STORE_URL) names its host, port, user and database",
    )
}

/// A database error as docdex reports it: a lost connection is the store being unavailable;
/// a full disk is the storage's condition; the rest is internal, with the server's message.
pub fn db_error(err: postgres::Error) -> DocdexError {
    if err.is_closed() {
        return DocdexError::new(ErrorCode::StoreUnavailable, format!("the store's connection closed: {err}"))
            .with_hint("check that PostgreSQL runs; the next request reconnects");
    }
    if let Some(db) = err.as_db_error() {
        if db.code() == &postgres::error::SqlState::DISK_FULL {
            return DocdexError::new(ErrorCode::StateUnwritable, format!("the store's disk is full: {}", db.message()))
                .with_hint("free space on the database server");
        }
        return DocdexError::internal(format!("store error: {} ({})", db.message(), db.code().code()));
    }
    DocdexError::internal(format!("store error: {err}"))
}

/// Connections to one PostgreSQL database, shared by every repo a daemon serves there.
pub struct PgPool {
    url: String,
    config: postgres::Config,
    idle: Mutex<Vec<Conn>>,
}

/// A connection and the statements prepared on it (each parsed once per connection, not
/// once per query).
struct Conn {
    client: Client,
    statements: HashMap<&'static str, Statement>,
}

/// A pooled connection: back to the pool when dropped, unless it broke.
pub struct PgClient {
    conn: Option<Conn>,
    pool: Arc<PgPool>,
}

impl std::ops::Deref for PgClient {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.conn.as_ref().expect("present until dropped").client
    }
}

impl std::ops::DerefMut for PgClient {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.conn.as_mut().expect("present until dropped").client
    }
}

impl PgClient {
    /// Runs one of docdex's own statements, prepared once on this connection.
    pub fn run(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let conn = self.conn.as_mut().expect("present until dropped");
        let statement = match conn.statements.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = conn.client.prepare(sql).map_err(db_error)?;
                conn.statements.insert(sql, statement.clone());
                statement
            }
        };
        conn.client.query(&statement, params).map_err(db_error)
    }

    /// Forgets the connection (closing it) instead of pooling it: after an error that may
    /// have left it mid-transaction.
    pub fn discard(mut self) {
        self.conn = None;
    }
}

impl Drop for PgClient {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if conn.client.is_closed() {
                return;
            }
            let mut idle = self.pool.idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < MAX_IDLE {
                idle.push(conn);
            }
        }
    }
}

/// What `docdexd check` reports of a store.
#[derive(Debug, Clone)]
pub struct StoreInfo {
    pub server_version: String,
    /// The `vector` extension's version, when installed.
    pub vector_version: Option<String>,
    /// The schema version the database holds (0: none yet).
    pub schema_version: i32,
    pub repos: i64,
}

impl PgPool {
    /// Connects to `url` and brings its schema to this docdexd's version (creating it on an
    /// empty database). A schema newer than this binary's is refused, not touched.
    pub fn open(url: &str) -> Result<Arc<PgPool>> {
        let pool = PgPool::connect(url)?;
        let mut client = pool.client()?;
        schema::migrate(&mut client).map_err(|err| match err.code {
            ErrorCode::Internal => unavailable(url, format!("could not be prepared: {}", err.message)),
            _ => err,
        })?;
        drop(client);
        Ok(pool)
    }

    /// Connects without touching the schema (`check`, which reports it).
    pub fn connect(url: &str) -> Result<Arc<PgPool>> {
        let mut config: postgres::Config = url.parse().map_err(|err| {
            DocdexError::new(ErrorCode::ConfigInvalid, format!("the store URL {} is not valid: {err}", redact(url)))
                .with_hint("write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("docdexd");
        let pool = Arc::new(PgPool { url: url.to_string(), config, idle: Mutex::new(Vec::new()) });
        // One connection now: a wrong URL is an error at start, not at the first search.
        let client = pool.client()?;
        drop(client);
        Ok(pool)
    }

    /// The URL without its password.
    pub fn display_url(&self) -> String {
        redact(&self.url)
    }

    /// A connection from the pool, or a new one.
    pub fn client(self: &Arc<Self>) -> Result<PgClient> {
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match pooled {
            Some(conn) if !conn.client.is_closed() => conn,
            _ => {
                let mut client = self
                    .config
                    .connect(NoTls)
                    .map_err(|err| unavailable(&self.url, format!("cannot be reached: {err}")))?;
                // A repo's vectors are a slice of one HNSW index: the filtered scan goes on
                // until it has the rows asked for, in distance order (pgvector 0.8).
                client.batch_execute("SET hnsw.iterative_scan = strict_order").map_err(db_error)?;
                Conn { client, statements: HashMap::new() }
            }
        };
        Ok(PgClient { conn: Some(conn), pool: Arc::clone(self) })
    }

    /// The server's version, the vector extension and the schema docdex finds there.
    pub fn info(self: &Arc<Self>) -> Result<StoreInfo> {
        let mut client = self.client()?;
        let server_version: String = client.query_one("SHOW server_version", &[]).map_err(db_error)?.get(0);
        let vector_version: Option<String> = client
            .query_opt("SELECT extversion FROM pg_extension WHERE extname = 'vector'", &[])
            .map_err(db_error)?
            .map(|row| row.get(0));
        let schema_version = schema::current_version(&mut client)?;
        let repos = if schema_version > 0 {
            client.query_one("SELECT count(*) FROM docdex_repos", &[]).map_err(db_error)?.get(0)
        } else {
            0
        };
        Ok(StoreInfo { server_version, vector_version, schema_version, repos })
    }

    /// The id of the repo with this fingerprint, registering it (with its root, for the
    /// record) on first use. Every row of a repo carries this id, and every query is scoped
    /// by it.
    pub fn repo_id(self: &Arc<Self>, fingerprint: &str, root: &str) -> Result<i64> {
        let mut client = self.client()?;
        let row = client
            .query_one(
                "INSERT INTO docdex_repos (fingerprint, root) VALUES ($1, $2)
                 ON CONFLICT (fingerprint) DO UPDATE SET fingerprint = EXCLUDED.fingerprint
                 RETURNING id",
                &[&fingerprint, &root],
            )
            .map_err(db_error)?;
        Ok(row.get(0))
    }

    /// The fingerprint of the repo registered with this root, if any: how a daemon with no
    /// checkout of a repo finds it by the path it was indexed at.
    pub fn repo_by_root(self: &Arc<Self>, root: &str) -> Result<Option<String>> {
        let mut client = self.client()?;
        let rows = client.run("SELECT fingerprint FROM docdex_repos WHERE root = $1 ORDER BY id LIMIT 1", &[&root])?;
        Ok(rows.first().map(|row| row.get(0)))
    }

    /// Whether a repo with this fingerprint is registered (indexed, or being indexed, by
    /// some daemon).
    pub fn has_repo(self: &Arc<Self>, fingerprint: &str) -> Result<bool> {
        let mut client = self.client()?;
        Ok(!client.run("SELECT 1 FROM docdex_repos WHERE fingerprint = $1", &[&fingerprint])?.is_empty())
    }

    /// Takes the repo's writer lock without waiting: `None` when another session (this
    /// daemon's or any other's) holds it. The lock lives as long as the returned guard's
    /// connection: a killed writer's lock goes with its connection, released by the server.
    pub fn try_writer_lock(self: &Arc<Self>, repo_id: i64) -> Result<Option<PgLock>> {
        let mut client = self.client()?;
        let key = lock_key(repo_id)?;
        let taken: bool = client
            .query_one("SELECT pg_try_advisory_lock($1, $2)", &[&WRITER_LOCK_CLASS, &key])
            .map_err(db_error)?
            .get(0);
        Ok(taken.then(|| PgLock { client: Some(client), key }))
    }
}

/// The second key of a repo's advisory locks.
pub(crate) fn lock_key(repo_id: i64) -> Result<i32> {
    i32::try_from(repo_id).map_err(|_| DocdexError::internal(format!("repo id {repo_id} is beyond the lock keys")))
}

/// A held writer lock; released when dropped (or when its connection dies).
pub struct PgLock {
    client: Option<PgClient>,
    key: i32,
}

impl Drop for PgLock {
    fn drop(&mut self) {
        if let Some(mut client) = self.client.take() {
            if client.execute("SELECT pg_advisory_unlock($1, $2)", &[&WRITER_LOCK_CLASS, &self.key]).is_err() {
                // The connection is unusable: closing it releases the lock on the server.
                client.discard();
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
