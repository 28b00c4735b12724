//! One daemon per `DOCDEX_HOME`: `$DOCDEX_HOME/daemon.lock` is held with an exclusive file
//! lock for the daemon's life and records its PID and address. The kernel drops the lock when
//! the process dies however it dies, so a lock left by a killed daemon is simply taken over;
//! the file's contents are only trusted while someone holds the lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::protocol::{DocdexError, ErrorCode, Result};

pub const LOCK_FILE: &str = "daemon.lock";

/// What a running daemon publishes in its lock file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonInfo {
    pub pid: u32,
    /// `http://127.0.0.1:3210`
    pub base_url: String,
    /// Unix seconds.
    pub started_at: u64,
}

/// The held lock; dropping it (or the process ending) releases it.
pub struct DaemonLock {
    file: File,
    path: PathBuf,
}

impl DaemonLock {
    /// Takes the home's daemon lock, or says where the running daemon is.
    pub fn acquire(home: &Path) -> Result<DaemonLock> {
        let path = home.join(LOCK_FILE);
        let unwritable = |err: std::io::Error| {
            DocdexError::new(ErrorCode::StateUnwritable, format!("cannot open {}: {err}", path.display()))
                .with_hint("set DOCDEX_HOME to a writable folder")
        };
        std::fs::create_dir_all(home).map_err(unwritable)?;
        let file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(unwritable)?;
        // A client checking for a daemon holds a shared lock for an instant: a lock held by
        // no published daemon is retried for a moment before it counts as a starting one.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(DaemonLock { file, path }),
                Err(TryLockError::WouldBlock) => {
                    if let Some(info) = read_info(&path) {
                        return Err(DaemonRunning::error(home, Some(&info)));
                    }
                    if Instant::now() >= deadline {
                        return Err(DaemonRunning::error(home, None));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::Error(err)) => return Err(unwritable(err)),
            }
        }
    }

    /// Records the daemon's address once it listens.
    pub fn publish(&mut self, base_url: &str) -> Result<()> {
        let info = DaemonInfo {
            pid: std::process::id(),
            base_url: base_url.to_string(),
            started_at: crate::protocol::time::unix_now(),
        };
        let bytes = serde_json::to_vec(&info)?;
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(&bytes)?;
        self.file.sync_data()?;
        Ok(())
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        // Emptied so nobody reads a stopped daemon's address; the lock goes with the handle.
        let _ = self.file.set_len(0);
        tracing::debug!(lock = %self.path.display(), "daemon lock released");
    }
}

struct DaemonRunning;

impl DaemonRunning {
    fn error(home: &Path, info_opt: Option<&DaemonInfo>) -> DocdexError {
        let (running, pid) = match info_opt {
            Some(info) => (format!(" (pid {}, {})", info.pid, info.base_url), info.pid.to_string()),
            None => (" (still starting)".to_string(), "<pid>".to_string()),
        };
        DocdexError::new(
            ErrorCode::DaemonRunning,
            format!("a docdex daemon is already running for {}{running}", home.display()),
        )
        .with_hint(format!(
            "use it (the CLI and `docdexd mcp` go through it), stop it first (Ctrl-C where it runs, or `kill {pid}`: \
             it shuts down cleanly), or set DOCDEX_HOME for another one"
        ))
    }
}

/// The daemon running for `home`, if any: the lock is held and the address published. A
/// daemon that holds the lock but has not published yet is waited for a little.
pub fn running(home: &Path) -> Option<DaemonInfo> {
    let path = home.join(LOCK_FILE);
    let file = File::open(&path).ok()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match file.try_lock_shared() {
            // Nobody holds it: no daemon (a killed one's file is stale).
            Ok(()) => return None,
            Err(TryLockError::Error(_)) => return None,
            Err(TryLockError::WouldBlock) => {}
        }
        if let Some(info) = read_info(&path) {
            return Some(info);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_info(path: &Path) -> Option<DaemonInfo> {
    let mut text = String::new();
    File::open(path).ok()?.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_a_dropped_lock_is_free_again() {
        let home = tempfile::tempdir().unwrap();
        let mut first = DaemonLock::acquire(home.path()).unwrap();
        first.publish("http://127.0.0.1:4242").unwrap();
        let err = DaemonLock::acquire(home.path()).err().unwrap();
        assert_eq!(err.code, ErrorCode::DaemonRunning);
        assert!(err.message.contains("http://127.0.0.1:4242"), "{}", err.message);
        assert_eq!(running(home.path()).map(|i| i.base_url), Some("http://127.0.0.1:4242".into()));
        drop(first);
        assert_eq!(running(home.path()), None);
        DaemonLock::acquire(home.path()).unwrap();
    }
}
