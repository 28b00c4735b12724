//! Reading a repo's file through a handle that is checked, never through a path that is
//! trusted. A walk sees a regular file; by the time it is read, the path may be a link to
//! `~/.ssh/id_rsa`, a FIFO or a file grown to gigabytes. So the file is opened first (without
//! blocking, so a FIFO cannot hang a run), and then, on the open file, where the handle really
//! points (it must lie inside the repo), its type (regular) and its size (the limit) are
//! checked, and at most the limit is read. Whatever the timing of a swap, what is read is a
//! regular file inside the repo, within the limit.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Why a file was not read.
#[derive(Debug)]
pub enum Refused {
    /// The path resolves outside the repo (a symbolic link out, `..`).
    Outside,
    /// Not a regular file (a directory, a FIFO, a device, a socket).
    NotRegular,
    /// Over the size limit (the size it has).
    TooLarge(u64),
    /// It cannot be opened or read.
    Io(std::io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Outside => write!(f, "it resolves outside the repo (a symbolic link?)"),
            Refused::NotRegular => write!(f, "it is not a regular file"),
            Refused::TooLarge(size) => write!(f, "it is {size} bytes, over the limit"),
            Refused::Io(err) => write!(f, "{err}"),
        }
    }
}

/// Reads `rel` (relative to `root`, which must be canonical) if it is a regular file inside
/// `root` of at most `max_bytes`, checked on the open handle.
pub fn read_inside(root: &Path, rel: &str, max_bytes: u64) -> Result<Vec<u8>, Refused> {
    let rel_path = Path::new(rel);
    if rel.is_empty() || rel_path.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(Refused::Outside);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(root.join(rel_path))
        .map_err(Refused::Io)?;
    match opened_path(&file) {
        Some(real) if real.starts_with(root) => {}
        Some(_) => return Err(Refused::Outside),
        // Without /proc, the path is resolved again: still refuses links out, with a window.
        None => match std::fs::canonicalize(root.join(rel_path)) {
            Ok(real) if real.starts_with(root) => {}
            _ => return Err(Refused::Outside),
        },
    }
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.file_type().is_file() {
        return Err(Refused::NotRegular);
    }
    if meta.len() > max_bytes {
        return Err(Refused::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(Refused::Io)?;
    // A file that grew after the check is cut at the limit, not read whole.
    if bytes.len() as u64 > max_bytes {
        return Err(Refused::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Where an open handle really points (Linux: /proc/self/fd); `None` elsewhere.
fn opened_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn canonical(dir: &tempfile::TempDir) -> PathBuf {
        std::fs::canonicalize(dir.path()).unwrap()
    }

    #[test]
    fn reads_regular_files_inside_and_refuses_links_out_dirs_fifos_and_oversized_files() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "SECRET").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = canonical(&dir);
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}").unwrap();
        assert_eq!(read_inside(&root, "src/a.rs", 100).unwrap(), b"fn a() {}");
        // A link that stays inside is read; one that leaves, or `..`, is not.
        std::os::unix::fs::symlink(root.join("src/a.rs"), root.join("alias.rs")).unwrap();
        assert!(read_inside(&root, "alias.rs", 100).is_ok());
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("key")).unwrap();
        assert!(matches!(read_inside(&root, "key", 100), Err(Refused::Outside)));
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        assert!(matches!(read_inside(&root, "out/secret", 100), Err(Refused::Outside)));
        assert!(matches!(read_inside(&root, "../x", 100), Err(Refused::Outside)));
        assert!(matches!(read_inside(&root, "", 100), Err(Refused::Outside)));
        assert!(matches!(read_inside(&root, "src", 100), Err(Refused::NotRegular)));
        assert!(matches!(read_inside(&root, "src/a.rs", 3), Err(Refused::TooLarge(9))));
        // A FIFO is refused at once: opening it does not wait for a writer.
        let fifo = root.join("pipe");
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        assert!(matches!(read_inside(&root, "pipe", 100), Err(Refused::NotRegular)));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// A file flipped between a regular file and a link to a secret outside the repo, as fast
    /// as a second thread can, never yields the secret.
    #[test]
    fn a_file_flipping_to_a_link_out_never_yields_what_is_outside() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = canonical(&dir);
        let target = outside.path().join("id_rsa");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flipper = {
            let (root, stop) = (root.clone(), std::sync::Arc::clone(&stop));
            std::thread::spawn(move || {
                let (file, tmp_file, tmp_link) = (root.join("notes.txt"), root.join(".f"), root.join(".l"));
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::fs::write(&tmp_file, "harmless").unwrap();
                    std::fs::rename(&tmp_file, &file).unwrap();
                    let _ = std::fs::remove_file(&tmp_link);
                    std::os::unix::fs::symlink(&target, &tmp_link).unwrap();
                    std::fs::rename(&tmp_link, &file).unwrap();
                }
            })
        };
        let (mut read, mut refused) = (0, 0);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(2) {
            match read_inside(&root, "notes.txt", 1 << 20) {
                Ok(bytes) => {
                    assert_eq!(bytes, b"harmless");
                    read += 1;
                }
                Err(_) => refused += 1,
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        flipper.join().unwrap();
        assert!(read > 0 && refused > 0, "the race did not happen: {read} reads, {refused} refusals");
    }
}
