//! The team store: a repo's records and vectors as rows of PostgreSQL, every statement
//! scoped by the repo's id. A write transaction holds the repo's records lock (an advisory
//! lock released at commit, abort or a lost connection), so writes to one repo are serial
//! across every daemon, as LMDB's are within one; a read transaction is a snapshot.

use std::cell::RefCell;
use std::sync::Arc;

use pgvector::Vector;

use super::{Entry, Space, Txn, TxnWrite, VectorKind};
use crate::postgres::{lock_key, PgClient, PgPool, RECORDS_LOCK_CLASS};
use crate::protocol::Result;

pub(super) struct PgStore {
    pool: Arc<PgPool>,
    repo_id: i64,
}

impl PgStore {
    pub(super) fn new(pool: Arc<PgPool>, repo_id: i64) -> PgStore {
        PgStore { pool, repo_id }
    }

    pub(super) fn begin(&self, write: bool) -> Result<PgTxn> {
        let mut client = self.pool.client()?;
        if write {
            client.batch("BEGIN")?;
            client.run("SELECT pg_advisory_xact_lock($1, $2)", &[&RECORDS_LOCK_CLASS, &lock_key(self.repo_id)?])?;
        } else {
            client.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        }
        Ok(PgTxn { client: RefCell::new(Some(client)), repo_id: self.repo_id, write })
    }
}

/// An open transaction on a pooled connection; rolled back when dropped uncommitted.
pub(super) struct PgTxn {
    /// `None` once committed. A `RefCell`: reads take `&self`, and a query needs the
    /// connection mutably.
    client: RefCell<Option<PgClient>>,
    repo_id: i64,
    write: bool,
}

impl Drop for PgTxn {
    fn drop(&mut self) {
        if let Some(mut client) = self.client.get_mut().take() {
            if client.batch("ROLLBACK").is_err() {
                client.discard();
            }
        }
    }
}

/// The most vectors a repo may have for its dense searches to be exact. Measured (384
/// dimensions, `bench-store-scale`, hybrid p50 of one repo): exact 7.1 ms at 10,000 vectors
/// and 15.8 ms at 20,000, HNSW 5.8 ms at 20,000; below this, exact costs little more and
/// misses nothing. Low in unit tests, so that their repos of a few hundred vectors go
/// through the HNSW index too.
#[cfg(not(test))]
const EXACT_MAX: i64 = 10_000;
#[cfg(test)]
const EXACT_MAX: i64 = 500;

/// A count or an id as a database integer (the database's types are signed).
fn int(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl PgTxn {
    fn run(
        &self,
        sql: &'static str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>> {
        let mut slot = self.client.borrow_mut();
        let client = slot.as_mut().ok_or_else(|| crate::protocol::DocdexError::internal("a finished transaction"))?;
        client.run(sql, params)
    }

    fn kind(kind: VectorKind) -> i16 {
        kind.id() as i16
    }
}

impl Txn for PgTxn {
    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let rows = self.run(
            "SELECT value FROM docdex_records WHERE repo_id = $1 AND space = $2 AND key = $3",
            &[&self.repo_id, &space.id(), &key],
        )?;
        Ok(rows.first().map(|row| row.get(0)))
    }

    fn scan(&self, space: Space, from: &[u8], prefix: &[u8], max: usize) -> Result<Vec<Entry>> {
        let rows = self.run(
            "SELECT key, value FROM docdex_records
             WHERE repo_id = $1 AND space = $2 AND key >= $3 AND substring(key FROM 1 FOR length($4::bytea)) = $4::bytea
             ORDER BY key LIMIT $5",
            &[&self.repo_id, &space.id(), &from, &prefix, &int(max)],
        )?;
        Ok(rows.into_iter().map(|row| (row.get(0), row.get(1))).collect())
    }

    fn len(&self, space: Space) -> Result<u64> {
        let rows = self.run(
            "SELECT count(*) FROM docdex_records WHERE repo_id = $1 AND space = $2",
            &[&self.repo_id, &space.id()],
        )?;
        Ok(rows.first().map_or(0, |row| row.get::<_, i64>(0) as u64))
    }

    fn last(&self, space: Space) -> Result<Option<Entry>> {
        let rows = self.run(
            "SELECT key, value FROM docdex_records WHERE repo_id = $1 AND space = $2 ORDER BY key DESC LIMIT 1",
            &[&self.repo_id, &space.id()],
        )?;
        Ok(rows.first().map(|row| (row.get(0), row.get(1))))
    }

    fn vector_count(&self, kind: VectorKind) -> Result<u64> {
        let rows = self.run(
            "SELECT count(*) FROM docdex_vectors WHERE repo_id = $1 AND kind = $2",
            &[&self.repo_id, &PgTxn::kind(kind)],
        )?;
        Ok(rows.first().map_or(0, |row| row.get::<_, i64>(0) as u64))
    }

    fn all_vectors(&self, kind: VectorKind) -> Result<Vec<(u32, Vec<f32>)>> {
        let rows = self.run(
            "SELECT item, embedding FROM docdex_vectors WHERE repo_id = $1 AND kind = $2 ORDER BY item",
            &[&self.repo_id, &PgTxn::kind(kind)],
        )?;
        Ok(rows.into_iter().map(|row| (row.get::<_, i64>(0) as u32, row.get::<_, Vector>(1).to_vec())).collect())
    }

    fn nearest(&self, kind: VectorKind, vector: &[f32], count: usize, _search_k: usize) -> Result<Vec<(u32, f32)>> {
        let query = Vector::from(vector.to_vec());
        // A repo of up to EXACT_MAX vectors is searched exactly (its rows by the primary key,
        // each distance computed: a few ms, recall 1); a larger one through its partition's
        // HNSW index, scanned on until it has `count` of this repo's rows.
        let bounded = self.run(
            "SELECT count(*) FROM (SELECT 1 FROM docdex_vectors WHERE repo_id = $1 AND kind = $2 LIMIT $3) AS bounded",
            &[&self.repo_id, &PgTxn::kind(kind), &(EXACT_MAX + 1)],
        )?;
        let size: i64 = bounded.first().map_or(0, |row| row.get(0));
        let rows = if size <= EXACT_MAX {
            // `+ 0`: the expression is not the index's, so the planner cannot pick the HNSW scan.
            self.run(
                "SELECT item, embedding <=> $3 FROM docdex_vectors WHERE repo_id = $1 AND kind = $2
                 ORDER BY (embedding <=> $3) + 0 LIMIT $4",
                &[&self.repo_id, &PgTxn::kind(kind), &query, &int(count)],
            )?
        } else {
            self.run(
                "SELECT item, embedding <=> $3 FROM docdex_vectors WHERE repo_id = $1 AND kind = $2
                 ORDER BY embedding <=> $3 LIMIT $4",
                &[&self.repo_id, &PgTxn::kind(kind), &query, &int(count)],
            )?
        };
        // pgvector's cosine distance is 1 - cos.
        Ok(rows.into_iter().map(|row| (row.get::<_, i64>(0) as u32, 1.0 - row.get::<_, f64>(1) as f32)).collect())
    }

    fn write(&mut self) -> Option<&mut dyn TxnWrite> {
        if self.write {
            Some(self)
        } else {
            None
        }
    }

    fn commit(self: Box<Self>) -> Result<()> {
        let mut this = self;
        if let Some(mut client) = this.client.get_mut().take() {
            if let Err(err) = client.batch("COMMIT") {
                client.discard();
                return Err(err);
            }
        }
        Ok(())
    }
}

impl TxnWrite for PgTxn {
    fn put(&mut self, space: Space, key: &[u8], value: &[u8]) -> Result<()> {
        self.run(
            "INSERT INTO docdex_records (repo_id, space, key, value) VALUES ($1, $2, $3, $4)
             ON CONFLICT (repo_id, space, key) DO UPDATE SET value = EXCLUDED.value",
            &[&self.repo_id, &space.id(), &key, &value],
        )?;
        Ok(())
    }

    fn delete(&mut self, space: Space, key: &[u8]) -> Result<bool> {
        let rows = self.run(
            "DELETE FROM docdex_records WHERE repo_id = $1 AND space = $2 AND key = $3 RETURNING 1",
            &[&self.repo_id, &space.id(), &key],
        )?;
        Ok(!rows.is_empty())
    }

    fn clear(&mut self, space: Space) -> Result<()> {
        self.run("DELETE FROM docdex_records WHERE repo_id = $1 AND space = $2", &[&self.repo_id, &space.id()])?;
        Ok(())
    }

    fn put_vector(&mut self, kind: VectorKind, item: u32, vector: &[f32]) -> Result<()> {
        let embedding = Vector::from(vector.to_vec());
        self.run(
            "INSERT INTO docdex_vectors (repo_id, kind, item, embedding) VALUES ($1, $2, $3, $4)
             ON CONFLICT (repo_id, kind, item) DO UPDATE SET embedding = EXCLUDED.embedding",
            &[&self.repo_id, &PgTxn::kind(kind), &i64::from(item), &embedding],
        )?;
        Ok(())
    }

    fn delete_vector(&mut self, kind: VectorKind, item: u32) -> Result<()> {
        self.run(
            "DELETE FROM docdex_vectors WHERE repo_id = $1 AND kind = $2 AND item = $3",
            &[&self.repo_id, &PgTxn::kind(kind), &i64::from(item)],
        )?;
        Ok(())
    }

    fn clear_vectors(&mut self, kind: VectorKind) -> Result<()> {
        self.run("DELETE FROM docdex_vectors WHERE repo_id = $1 AND kind = $2", &[&self.repo_id, &PgTxn::kind(kind)])?;
        Ok(())
    }

    fn build_vectors(&mut self, _kind: VectorKind) -> Result<()> {
        Ok(())
    }
}
