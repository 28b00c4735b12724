//! Tests against a real PostgreSQL with pgvector: `DOCDEX_TEST_STORE_URL`, or the server
//! `scripts/postgres.sh` starts (and prints the URL of) when the variable is unset.

use std::sync::{Arc, OnceLock};

use super::*;

/// The test server's URL (its `docdex_test` database). Starting it is part of the test: a
/// machine without it fails here, with the script's message, rather than skipping.
pub(crate) fn test_store_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("DOCDEX_TEST_STORE_URL") {
            if !url.is_empty() {
                return url;
            }
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/postgres.sh");
        let out = std::process::Command::new("bash").arg(script).output().expect("run scripts/postgres.sh");
        assert!(out.status.success(), "scripts/postgres.sh failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("a URL").trim().to_string()
    })
    .clone()
}

/// A database of its own (created empty), for tests of the schema itself.
pub(crate) fn fresh_database(name: &str) -> String {
    let url = test_store_url();
    let mut admin = PgPool::connect(&url).unwrap().client().unwrap();
    let database = format!("docdex_t_{name}_{}", std::process::id());
    admin.batch(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).unwrap();
    admin.batch(&format!("CREATE DATABASE {database}")).unwrap();
    let (base, _) = url.rsplit_once('/').expect("a database in the URL");
    format!("{base}/{database}")
}

/// The shared test database, migrated.
pub(crate) fn test_pool() -> Arc<PgPool> {
    static POOL: OnceLock<Arc<PgPool>> = OnceLock::new();
    Arc::clone(POOL.get_or_init(|| PgPool::open(&test_store_url()).unwrap()))
}

#[test]
fn an_empty_database_is_migrated_once_and_reports_its_schema() {
    let url = fresh_database("migrate");
    let before = PgPool::connect(&url).unwrap().info().unwrap();
    assert_eq!(before.schema_version, 0);
    // Daemons starting together: each migrates or finds the work done.
    let opened: Vec<_> = (0..3)
        .map(|_| {
            std::thread::spawn({
                let url = url.clone();
                move || PgPool::open(&url).map(|_| ())
            })
        })
        .collect();
    for handle in opened {
        handle.join().unwrap().unwrap();
    }
    let info = PgPool::open(&url).unwrap().info().unwrap();
    assert_eq!(info.schema_version, SCHEMA_VERSION);
    assert!(info.vector_version.is_some(), "pgvector installed by the first migration");
    assert!(info.server_version.starts_with(char::is_numeric), "{}", info.server_version);
    assert_eq!(info.repos, 0);
}

#[test]
fn a_schema_newer_than_this_binary_is_refused_untouched() {
    let url = fresh_database("newer");
    let pool = PgPool::open(&url).unwrap();
    let newer = SCHEMA_VERSION + 1;
    pool.client().unwrap().query("UPDATE docdex_schema SET version = $1", &[&newer]).unwrap();
    let err = PgPool::open(&url).err().expect("refused");
    assert_eq!(err.code, ErrorCode::StoreUnavailable);
    assert!(err.message.contains("newer"), "{}", err.message);
    assert_eq!(pool.info().unwrap().schema_version, newer, "left as it was");
}

#[test]
fn an_unreachable_store_and_a_malformed_url_are_clear_errors() {
    // Port 9 (discard): nothing listens there.
    let err = PgPool::connect("postgres://nobody:secret@127.0.0.1:9/docdex").err().expect("unreachable");
    assert_eq!(err.code, ErrorCode::StoreUnavailable);
    assert!(!err.message.contains("secret"), "the password is not printed: {}", err.message);
    assert!(err.hint.is_some());
    let err = PgPool::connect("postgres://[::1").err().expect("malformed");
    assert_eq!(err.code, ErrorCode::ConfigInvalid);
}

#[test]
fn a_repo_has_one_id_and_one_writer_across_connections() {
    let pool = test_pool();
    let fingerprint = format!("lock-test-{}", std::process::id());
    let id = pool.repo_id(&fingerprint, "/somewhere").unwrap();
    assert_eq!(pool.repo_id(&fingerprint, "/somewhere").unwrap(), id, "registered once");
    // A second pool stands for another daemon.
    let other = PgPool::open(&test_store_url()).unwrap();
    let held = pool.try_writer_lock(id).unwrap().expect("free at first");
    assert!(other.try_writer_lock(id).unwrap().is_none(), "held by the first");
    drop(held);
    let again = other.try_writer_lock(id).unwrap().expect("released on drop");
    // A writer whose connection dies (a killed daemon) loses the lock on the server.
    let pid: i32 = other
        .client()
        .unwrap()
        .query(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid::int = $1 AND objid::int = $2 AND granted",
            &[&WRITER_LOCK_CLASS, &lock_key(id).unwrap()],
        )
        .unwrap()[0]
        .get(0);
    let mut admin = pool.client().unwrap();
    admin.query("SELECT pg_terminate_backend($1)", &[&pid]).unwrap();
    let mut taken = None;
    for _ in 0..50 {
        taken = pool.try_writer_lock(id).unwrap();
        if taken.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(taken.is_some(), "the dead session's lock was released by the server");
    drop(again);
}
