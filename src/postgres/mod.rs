//! The team store's connection to PostgreSQL: a small pool of synchronous clients, the
//! schema docdex creates and migrates itself, each repo's id, and the database locks that
//! make one writer per repo across every daemon sharing the server.
//!
//! Synchronous on purpose: the store is called where LMDB is, from sync actors' threads and
//! tokio's blocking pool. The connections are tokio-postgres's, driven by a small runtime
//! the pool owns; a query is awaited on the calling thread (`futures_executor::block_on`),
//! which needs no runtime of its own, so a call from inside another runtime (a benchmark's
//! `main`, an actix thread) works too.

mod schema;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::HashMap;

use futures_executor::block_on;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Row, Statement};

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
pub fn db_error(err: tokio_postgres::Error) -> DocdexError {
    if err.is_closed() {
        return DocdexError::new(ErrorCode::StoreUnavailable, format!("the store's connection closed: {err}"))
            .with_hint("check that PostgreSQL runs; the next request reconnects");
    }
    if let Some(db) = err.as_db_error() {
        if db.code() == &tokio_postgres::error::SqlState::DISK_FULL {
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
    config: tokio_postgres::Config,
    idle: Mutex<Vec<Conn>>,
    /// Drives the connections' sockets (one thread); `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for PgPool {
    fn drop(&mut self) {
        // Dropped on an async thread, a runtime would block it: let it go in the background.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
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

impl PgClient {
    fn conn(&mut self) -> &mut Conn {
        self.conn.as_mut().expect("present until dropped")
    }

    /// Runs one of docdex's own statements, prepared once on this connection.
    pub fn run(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let conn = self.conn();
        let statement = match conn.statements.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = block_on(conn.client.prepare(sql)).map_err(db_error)?;
                conn.statements.insert(sql, statement.clone());
                statement
            }
        };
        block_on(conn.client.query(&statement, params)).map_err(db_error)
    }

    /// Runs a statement prepared for this call only (checks and tests).
    pub fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        block_on(self.conn().client.query(sql, params)).map_err(db_error)
    }

    /// Runs statements without parameters (transaction control, the schema).
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        block_on(self.conn().client.batch_execute(sql)).map_err(db_error)
    }

    pub fn is_closed(&mut self) -> bool {
        self.conn().client.is_closed()
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
        let mut config: tokio_postgres::Config = url.parse().map_err(|err| {
            DocdexError::new(ErrorCode::ConfigInvalid, format!("the store URL {} is not valid: {err}", redact(url)))
                .with_hint("write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("docdexd");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("docdex-store")
            .enable_all()
            .build()
            .map_err(|err| DocdexError::internal(format!("cannot start the store's runtime: {err}")))?;
        let pool =
            Arc::new(PgPool { url: url.to_string(), config, idle: Mutex::new(Vec::new()), runtime: Some(runtime) });
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
                let client =
                    self.connect_one().map_err(|err| unavailable(&self.url, format!("cannot be reached: {err}")))?;
                let mut client =
                    PgClient { conn: Some(Conn { client, statements: HashMap::new() }), pool: Arc::clone(self) };
                // A repo's vectors are a slice of its partition's HNSW index: the filtered
                // scan goes on until it has the rows asked for, in distance order (pgvector
                // 0.8), from a candidate list as long as a search's depth.
                client.batch("SET hnsw.iterative_scan = strict_order; SET hnsw.ef_search = 200")?;
                return Ok(client);
            }
        };
        Ok(PgClient { conn: Some(conn), pool: Arc::clone(self) })
    }

    /// A new connection, its socket driven on the pool's runtime.
    fn connect_one(&self) -> std::result::Result<Client, tokio_postgres::Error> {
        let runtime = self.runtime.as_ref().expect("present until dropped");
        let config = self.config.clone();
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            match config.connect(NoTls).await {
                Ok((client, connection)) => {
                    let _ = sender.send(Ok(client));
                    // Ends when the client is dropped or the server goes away.
                    let _ = connection.await;
                }
                Err(err) => {
                    let _ = sender.send(Err(err));
                }
            }
        });
        receiver.recv().unwrap_or_else(|_| unreachable!("the task sends before it ends"))
    }

    /// The server's version, the vector extension and the schema docdex finds there.
    pub fn info(self: &Arc<Self>) -> Result<StoreInfo> {
        let mut client = self.client()?;
        let server_version: String = client.query("SHOW server_version", &[])?[0].get(0);
        let vector_version: Option<String> = client
            .query("SELECT extversion FROM pg_extension WHERE extname = 'vector'", &[])?
            .first()
            .map(|row| row.get(0));
        let schema_version = schema::current_version(&mut client)?;
        let repos =
            if schema_version > 0 { client.query("SELECT count(*) FROM docdex_repos", &[])?[0].get(0) } else { 0 };
        Ok(StoreInfo { server_version, vector_version, schema_version, repos })
    }

    /// The id of the repo with this fingerprint, registering it (with its root, for the
    /// record) on first use. Every row of a repo carries this id, and every query is scoped
    /// by it.
    pub fn repo_id(self: &Arc<Self>, fingerprint: &str, root: &str) -> Result<i64> {
        let mut client = self.client()?;
        let rows = client.run(
            "INSERT INTO docdex_repos (fingerprint, root) VALUES ($1, $2)
             ON CONFLICT (fingerprint) DO UPDATE SET fingerprint = EXCLUDED.fingerprint
             RETURNING id",
            &[&fingerprint, &root],
        )?;
        Ok(rows[0].get(0))
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

    /// Removes a repo and every row it has (records, vectors, index files).
    pub fn forget_repo(self: &Arc<Self>, fingerprint: &str) -> Result<bool> {
        let mut client = self.client()?;
        Ok(!client.run("DELETE FROM docdex_repos WHERE fingerprint = $1 RETURNING 1", &[&fingerprint])?.is_empty())
    }

    /// Takes the repo's writer lock without waiting: `None` when another session (this
    /// daemon's or any other's) holds it. The lock lives as long as the returned guard's
    /// connection: a killed writer's lock goes with its connection, released by the server.
    pub fn try_writer_lock(self: &Arc<Self>, repo_id: i64) -> Result<Option<PgLock>> {
        let mut client = self.client()?;
        let key = lock_key(repo_id)?;
        let taken: bool = client.run("SELECT pg_try_advisory_lock($1, $2)", &[&WRITER_LOCK_CLASS, &key])?[0].get(0);
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
            if client.run("SELECT pg_advisory_unlock($1, $2)", &[&WRITER_LOCK_CLASS, &self.key]).is_err() {
                // The connection is unusable: closing it releases the lock on the server.
                client.discard();
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
