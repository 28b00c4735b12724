//! A Tantivy `Directory` whose truth is PostgreSQL: the team store keeps each repo's index
//! files as rows (`docdex_index_files`, in parts), and every daemon reads them through a
//! local cache. Lexical ranking stays Tantivy's BM25 over docdex's analyzer, the same on
//! both backends, and a daemon with no checkout of a repo searches it from the store alone.
//!
//! Why this holds together: Tantivy never rewrites a file it has written. Segment files are
//! written once (`open_write`, uploaded whole when the writer terminates) and named by
//! segment id, so a cached copy is never stale; only `meta.json` and `.managed.json` change,
//! through `atomic_write`, which replaces their rows in one transaction. `meta.json` is the
//! commit point: it is written after every file it names is in the store. A reader loads
//! `meta.json` from the store and fetches the segment files it lacks. The writer lock is a
//! database lock (it dies with a killed writer's connection).

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    AntiCallToken, Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite, WatchCallback,
    WatchHandle, WritePtr, INDEX_WRITER_LOCK,
};

use crate::postgres::{PgClient, PgPool};
use crate::protocol::{DocdexError, Result};

/// Bytes per row of a file: well under PostgreSQL's 1 GB value limit, and small enough that
/// an upload or download holds little in memory.
const PART_BYTES: usize = 8 << 20;

#[derive(Clone)]
pub(crate) struct PgDirectory {
    pool: Arc<PgPool>,
    repo_id: i64,
    /// The local cache: files fetched or written here, mapped by Tantivy as on disk.
    cache: MmapDirectory,
    cache_path: PathBuf,
    /// Serialises fetches, so two threads do not download one file twice.
    fetching: Arc<Mutex<()>>,
}

impl std::fmt::Debug for PgDirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PgDirectory(repo {} at {}, cache {})",
            self.repo_id,
            self.pool.display_url(),
            self.cache_path.display()
        )
    }
}

fn io_error(err: DocdexError) -> io::Error {
    io::Error::other(err.message)
}

fn name_of(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl PgDirectory {
    pub(crate) fn open(pool: Arc<PgPool>, repo_id: i64, cache_path: &Path) -> Result<PgDirectory> {
        std::fs::create_dir_all(cache_path)?;
        let cache = MmapDirectory::open(cache_path).map_err(|err| {
            DocdexError::internal(format!("cannot open the index cache at {}: {err}", cache_path.display()))
        })?;
        Ok(PgDirectory { pool, repo_id, cache, cache_path: cache_path.to_path_buf(), fetching: Arc::default() })
    }

    fn client(&self) -> io::Result<PgClient> {
        self.pool.client().map_err(io_error)
    }

    /// A fingerprint of the stored `meta.json` (`None` before the first commit): a reader
    /// compares it to the one it loaded to know whether another daemon committed since.
    pub(crate) fn meta_version(&self) -> Result<Option<String>> {
        let mut client = self.pool.client()?;
        let rows = client.run(
            "SELECT md5(string_agg(data, ''::bytea ORDER BY part)) FROM docdex_index_files
             WHERE repo_id = $1 AND name = 'meta.json'",
            &[&self.repo_id],
        )?;
        Ok(rows.first().and_then(|row| row.get::<_, Option<String>>(0)))
    }

    /// Removes every file of the index, stored and cached (a rebuild).
    pub(crate) fn wipe(&self) -> Result<()> {
        let mut client = self.pool.client()?;
        client.run("DELETE FROM docdex_index_files WHERE repo_id = $1", &[&self.repo_id])?;
        super::remove_all_but_locks(&self.cache_path)
    }

    /// The stored bytes of a file, or `None` when the store has no such file.
    fn download(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let mut client = self.client()?;
        let rows = client
            .run(
                "SELECT data FROM docdex_index_files WHERE repo_id = $1 AND name = $2 ORDER BY part",
                &[&self.repo_id, &name],
            )
            .map_err(io_error)?;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut data = Vec::new();
        for row in rows {
            data.extend_from_slice(row.get::<_, &[u8]>(0));
        }
        Ok(Some(data))
    }

    /// Replaces a file's rows with `reader`'s bytes, in one transaction.
    fn upload(&self, name: &str, reader: &mut dyn Read) -> io::Result<()> {
        let mut client = self.client()?;
        client.batch("BEGIN").map_err(io_error)?;
        let written = self.write_parts(&mut client, name, reader);
        match written.and_then(|()| client.batch("COMMIT").map_err(io_error)) {
            Ok(()) => Ok(()),
            Err(err) => {
                if client.batch("ROLLBACK").is_err() {
                    client.discard();
                }
                Err(err)
            }
        }
    }

    fn write_parts(&self, client: &mut PgClient, name: &str, reader: &mut dyn Read) -> io::Result<()> {
        client
            .run("DELETE FROM docdex_index_files WHERE repo_id = $1 AND name = $2", &[&self.repo_id, &name])
            .map_err(io_error)?;
        let mut part: i32 = 0;
        let mut buffer = vec![0u8; PART_BYTES];
        loop {
            let mut filled = 0;
            while filled < PART_BYTES {
                let n = reader.read(&mut buffer[filled..])?;
                if n == 0 {
                    break;
                }
                filled += n;
            }
            // An empty file is one empty part: it exists.
            if filled > 0 || part == 0 {
                client
                    .run(
                        "INSERT INTO docdex_index_files (repo_id, name, part, data) VALUES ($1, $2, $3, $4)",
                        &[&self.repo_id, &name, &part, &&buffer[..filled]],
                    )
                    .map_err(io_error)?;
            }
            if filled < PART_BYTES {
                return Ok(());
            }
            part += 1;
        }
    }

    /// Stores a file under `name` from a local path (a copy from an embedded index).
    pub(crate) fn upload_file(&self, name: &str, path: &Path) -> Result<()> {
        let mut file = std::fs::File::open(path)?;
        Ok(self.upload(name, &mut file)?)
    }

    /// Brings a stored file into the cache; false when the store has none.
    fn fetch(&self, path: &Path) -> io::Result<bool> {
        let _one_at_a_time = self.fetching.lock().unwrap_or_else(|e| e.into_inner());
        let local = self.cache_path.join(path);
        if local.exists() {
            return Ok(true);
        }
        let Some(data) = self.download(&name_of(path))? else { return Ok(false) };
        let mut temp = tempfile::NamedTempFile::new_in(&self.cache_path)?;
        temp.write_all(&data)?;
        temp.persist(&local).map_err(|err| err.error)?;
        Ok(true)
    }
}

impl Directory for PgDirectory {
    fn get_file_handle(&self, path: &Path) -> std::result::Result<Arc<dyn FileHandle>, OpenReadError> {
        if !self.cache_path.join(path).exists()
            && !self.fetch(path).map_err(|err| OpenReadError::wrap_io_error(err, path.to_path_buf()))?
        {
            return Err(OpenReadError::FileDoesNotExist(path.to_path_buf()));
        }
        self.cache.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> std::result::Result<(), DeleteError> {
        let wrap = |err: io::Error| DeleteError::IoError { io_error: Arc::new(err), filepath: path.to_path_buf() };
        let mut client = self.client().map_err(wrap)?;
        client
            .run("DELETE FROM docdex_index_files WHERE repo_id = $1 AND name = $2", &[&self.repo_id, &name_of(path)])
            .map_err(|err| wrap(io_error(err)))?;
        match self.cache.delete(path) {
            Ok(()) | Err(DeleteError::FileDoesNotExist(_)) => Ok(()),
            Err(err) => Err(err),
        }
    }

    fn exists(&self, path: &Path) -> std::result::Result<bool, OpenReadError> {
        if self.cache_path.join(path).exists() {
            return Ok(true);
        }
        let wrap = |err: io::Error| OpenReadError::wrap_io_error(err, path.to_path_buf());
        let mut client = self.client().map_err(wrap)?;
        let rows = client
            .run(
                "SELECT 1 FROM docdex_index_files WHERE repo_id = $1 AND name = $2 LIMIT 1",
                &[&self.repo_id, &name_of(path)],
            )
            .map_err(|err| wrap(io_error(err)))?;
        Ok(!rows.is_empty())
    }

    fn open_write(&self, path: &Path) -> std::result::Result<WritePtr, OpenWriteError> {
        let local = self.cache.open_write(path)?;
        Ok(BufWriter::new(Box::new(UploadOnTerminate { local, path: path.to_path_buf(), directory: self.clone() })))
    }

    fn atomic_read(&self, path: &Path) -> std::result::Result<Vec<u8>, OpenReadError> {
        self.download(&name_of(path))
            .map_err(|err| OpenReadError::wrap_io_error(err, path.to_path_buf()))?
            .ok_or_else(|| OpenReadError::FileDoesNotExist(path.to_path_buf()))
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.upload(&name_of(path), &mut &data[..])
    }

    fn sync_directory(&self) -> io::Result<()> {
        // Each upload is committed: nothing is pending on this side.
        Ok(())
    }

    fn acquire_lock(&self, lock: &Lock) -> std::result::Result<DirectoryLock, LockError> {
        if lock.filepath != INDEX_WRITER_LOCK.filepath {
            // The meta lock guards this process's own readers and garbage collection.
            return self.cache.acquire_lock(lock);
        }
        match self.pool.try_writer_lock(self.repo_id) {
            Ok(Some(held)) => Ok(DirectoryLock::from(Box::new(Mutex::new(held)))),
            Ok(None) => Err(LockError::LockBusy),
            Err(err) => Err(LockError::wrap_io_error(io_error(err))),
        }
    }

    fn watch(&self, _callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        // Commits by other daemons are seen by asking the store (`meta_version`), not by a
        // file watch.
        Ok(WatchHandle::empty())
    }
}

/// A file written to the cache, uploaded to the store when Tantivy terminates it.
struct UploadOnTerminate {
    local: WritePtr,
    path: PathBuf,
    directory: PgDirectory,
}

impl Write for UploadOnTerminate {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.local.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.local.flush()
    }
}

impl TerminatingWrite for UploadOnTerminate {
    fn terminate_ref(&mut self, token: AntiCallToken) -> io::Result<()> {
        self.local.terminate_ref(token)?;
        let mut file = std::fs::File::open(self.directory.cache_path.join(&self.path))?;
        self.directory.upload(&name_of(&self.path), &mut file)
    }
}
