//! Walking a repo under its ignore rules.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The first-party ignore file, same syntax as `.gitignore`.
pub const DOCDEX_IGNORE_FILE: &str = ".docdexignore";

/// A file the walk found that passes the ignore rules and the size cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedFile {
    /// Relative to the repo root, `/`-separated: the key used everywhere else.
    pub rel_path: String,
    pub abs_path: PathBuf,
    pub size: u64,
    pub mtime_ns: u128,
}

#[derive(Debug, Default)]
pub struct ScanResult {
    pub files: Vec<ScannedFile>,
    /// Files over the size cap.
    pub too_large: u64,
    /// Entries the walker could not read (permissions, broken links).
    pub walk_errors: Vec<String>,
}

/// Lists indexable files under `root`, honouring `.gitignore` (nested ones too, even outside a
/// git checkout), `.git/info/exclude`, global git excludes and `.docdexignore`. Hidden files
/// and folders are skipped; symlinks are not followed. Sorted by path so runs are repeatable.
pub fn scan_repo(root: &Path, max_file_size_bytes: u64) -> ScanResult {
    let mut result = ScanResult::default();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(DOCDEX_IGNORE_FILE)
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                result.walk_errors.push(err.to_string());
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let metadata = match entry.metadata() {
            Ok(metadata) => metadata,
            Err(err) => {
                result.walk_errors.push(err.to_string());
                continue;
            }
        };
        if metadata.len() > max_file_size_bytes {
            result.too_large += 1;
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel_path = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        let mtime_ns =
            metadata.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_nanos()).unwrap_or(0);
        result.files.push(ScannedFile {
            rel_path,
            abs_path: entry.path().to_path_buf(),
            size: metadata.len(),
            mtime_ns,
        });
    }
    result.files.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    result
}

/// The outcome of reading one file for indexing.
#[derive(Debug)]
pub enum FileRead {
    Text(String),
    /// NUL bytes or invalid UTF-8: not text we can index.
    Binary,
    Unreadable(String),
}

/// Reads a file as UTF-8 text, classifying binaries (a NUL in the first 8 KiB, or bytes that
/// are not UTF-8). A leading BOM is dropped so line numbers and hashes match editors.
pub fn read_text_file(path: &Path) -> FileRead {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) => return FileRead::Unreadable(format!("{}: {err}", path.display())),
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return FileRead::Binary;
    }
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..3);
            }
            FileRead::Text(text)
        }
        Err(_) => FileRead::Binary,
    }
}
