//! The schema docdex keeps in PostgreSQL, as numbered migrations applied in order, each in
//! its own transaction, under an advisory lock so that daemons starting together migrate
//! once. The database records the version it is at; a version newer than this binary's is
//! refused (an older docdexd must not write a layout it does not know).

use super::PgClient;
use crate::protocol::{DocdexError, ErrorCode, Result};

/// Lock class held while migrating (the second key is 0).
const MIGRATION_LOCK_CLASS: i32 = 0x646f_6430;

/// Each migration brings the schema from its index to its index + 1.
///
/// - `docdex_repos`: one row per repo (its fingerprint, the id every other row carries).
/// - `docdex_records`: what LMDB holds for an embedded repo, as the same bytes (file
///   records, run state, pending embeddings, memories, DAGs, code facts), keyed by repo,
///   space (LMDB's database) and key, so both backends sort keys alike.
/// - `docdex_vectors`: chunk, memory and static chunk vectors (`kind` 0, 1 and 2), in 16
///   partitions by repo
///   (hash), each under an HNSW index: a repo's share of the index it searches is a
///   sixteenth of all repos', not one in a thousand (see `index::store::pg`).
/// - `docdex_index_files`: the files of a repo's Tantivy index, in parts (see
///   `index::pg_directory`).
const MIGRATIONS: &[&str] = &["
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE docdex_repos (
        id bigserial PRIMARY KEY,
        fingerprint text NOT NULL UNIQUE,
        root text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE docdex_records (
        repo_id bigint NOT NULL REFERENCES docdex_repos (id) ON DELETE CASCADE,
        space smallint NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (repo_id, space, key)
    );
    CREATE TABLE docdex_vectors (
        repo_id bigint NOT NULL REFERENCES docdex_repos (id) ON DELETE CASCADE,
        kind smallint NOT NULL,
        item bigint NOT NULL,
        embedding vector(384) NOT NULL,
        PRIMARY KEY (repo_id, kind, item)
    ) PARTITION BY HASH (repo_id);
    DO $$ BEGIN
        FOR r IN 0..15 LOOP
            EXECUTE format('CREATE TABLE docdex_vectors_%s PARTITION OF docdex_vectors FOR VALUES WITH (MODULUS 16, REMAINDER %s)', r, r);
        END LOOP;
    END $$;
    CREATE INDEX docdex_vectors_hnsw ON docdex_vectors USING hnsw (embedding vector_cosine_ops);
    CREATE TABLE docdex_index_files (
        repo_id bigint NOT NULL REFERENCES docdex_repos (id) ON DELETE CASCADE,
        name text NOT NULL,
        part integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (repo_id, name, part)
    );
"];

/// The schema version this docdexd writes and reads.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// The version the database is at (0 when docdex has never written to it).
pub(super) fn current_version(client: &mut PgClient) -> Result<i32> {
    let exists: bool = client.query("SELECT to_regclass('docdex_schema') IS NOT NULL", &[])?[0].get(0);
    if !exists {
        return Ok(0);
    }
    let rows = client.query("SELECT version FROM docdex_schema", &[])?;
    Ok(rows.first().map(|r| r.get(0)).unwrap_or(0))
}

/// Applies the migrations the database lacks.
pub(super) fn migrate(client: &mut PgClient) -> Result<()> {
    client.query("SELECT pg_advisory_lock($1, 0)", &[&MIGRATION_LOCK_CLASS])?;
    let outcome = migrate_locked(client);
    let unlock = client.query("SELECT pg_advisory_unlock($1, 0)", &[&MIGRATION_LOCK_CLASS]);
    outcome.and(unlock.map(|_| ()))
}

fn migrate_locked(client: &mut PgClient) -> Result<()> {
    client.batch("CREATE TABLE IF NOT EXISTS docdex_schema (version integer NOT NULL)")?;
    let version = current_version(client)?;
    if version > SCHEMA_VERSION {
        return Err(DocdexError::new(
            ErrorCode::StoreUnavailable,
            format!(
                "the store's schema is version {version}, newer than this docdexd's ({SCHEMA_VERSION}); it is left untouched"
            ),
        )
        .with_hint("upgrade docdexd to the version the other daemons run"));
    }
    for (at, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let next = at as i32 + 1;
        client.batch("BEGIN")?;
        let applied = client.batch(migration).map_err(|mut error| {
            error.message = format!("migration to schema version {next} failed: {}", error.message);
            if error.message.contains("vector") {
                error = error.with_hint("the server needs the pgvector extension (CREATE EXTENSION vector)");
            }
            error
        });
        let recorded = applied
            .and_then(|()| client.query("DELETE FROM docdex_schema", &[]))
            .and_then(|_| client.query("INSERT INTO docdex_schema (version) VALUES ($1)", &[&next]));
        if let Err(err) = recorded {
            let _ = client.batch("ROLLBACK");
            return Err(err);
        }
        client.batch("COMMIT")?;
        tracing::info!(version = next, "store schema migrated");
    }
    Ok(())
}
