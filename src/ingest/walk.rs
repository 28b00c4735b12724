//! Walking a repo under its ignore rules.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The first-party ignore file, same syntax as `.gitignore`.
pub const DOCDEX_IGNORE_FILE: &str = ".docdexignore";

/// The largest file the index reads, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimits {
    /// Source and prose (`[index] max_file_size_bytes`).
    pub text: u64,
    /// Documents: PDF, DOCX, HTML (`[index] max_document_bytes`).
    pub document: u64,
}

impl SizeLimits {
    /// One limit for every file.
    pub fn uniform(bytes: u64) -> SizeLimits {
        SizeLimits { text: bytes, document: bytes }
    }

    /// The limit of the file at `rel_path`.
    pub fn of(&self, rel_path: &str) -> u64 {
        if super::Language::detect(Path::new(rel_path)).is_document() {
            self.document
        } else {
            self.text
        }
    }
}

impl From<&crate::config::IndexConfig> for SizeLimits {
    fn from(config: &crate::config::IndexConfig) -> SizeLimits {
        SizeLimits { text: config.max_file_size_bytes, document: config.max_document_bytes }
    }
}

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
pub fn scan_repo(root: &Path, limits: SizeLimits) -> ScanResult {
    collect(root, walker(root).build(), limits)
}

/// Lists the indexable files among `changed` (paths relative to `root`: files, or folders
/// whose whole content is wanted), under exactly the rules of `scan_repo`: the walk starts at
/// the root but descends only into the folders on the way to a changed path, so its cost
/// follows the change (a few folder listings), not the size of the repo.
pub fn scan_paths(root: &Path, changed: &[String], limits: SizeLimits) -> ScanResult {
    let targets: Vec<PathBuf> = changed.iter().map(|rel| root.join(rel)).collect();
    let mut builder = walker(root);
    builder.filter_entry(move |entry| {
        let path = entry.path();
        targets.iter().any(|target| target.starts_with(path) || path.starts_with(target))
    });
    collect(root, builder.build(), limits)
}

/// The walk both scans share: ignore files honoured, hidden entries and symlinks skipped.
fn walker(root: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(DOCDEX_IGNORE_FILE);
    builder
}

fn collect(root: &Path, walker: ignore::Walk, limits: SizeLimits) -> ScanResult {
    let mut result = ScanResult::default();
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
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel_path = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if metadata.len() > limits.of(&rel_path) {
            result.too_large += 1;
            continue;
        }
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

/// Reads a file the walk found (`rel` under the canonical `root`) as UTF-8 text, classifying
/// binaries (a NUL in the first 8 KiB, or bytes that are not UTF-8). A leading BOM is dropped
/// so line numbers and hashes match editors. The read goes through a checked handle
/// (`open.rs`): a file swapped since the walk for a link out, a FIFO or something over
/// `max_bytes` is unreadable, not read.
pub fn read_text_file(root: &Path, rel: &str, max_bytes: u64) -> FileRead {
    let bytes = match super::open::read_inside(root, rel, max_bytes) {
        Ok(bytes) => bytes,
        Err(super::open::Refused::Io(err)) => return FileRead::Unreadable(format!("{rel}: {err}")),
        Err(refused) => return FileRead::Unreadable(format!("{rel} is not read: {refused}")),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        dir
    }

    fn paths(result: &ScanResult) -> Vec<&str> {
        result.files.iter().map(|f| f.rel_path.as_str()).collect()
    }

    #[test]
    fn a_scan_of_changed_paths_finds_what_a_full_scan_finds_there_and_nothing_else() {
        let dir = repo(&[
            ("src/a.rs", "a"),
            ("src/b.rs", "b"),
            ("src/gen/.gitignore", "*.rs\n"),
            ("src/gen/out.rs", "generated"),
            ("src/gen/keep.md", "kept"),
            ("docs/guide/intro.md", "intro"),
            ("docs/guide/more.md", "more"),
            (".hidden/x.rs", "hidden"),
            ("big.txt", "0123456789"),
            (".gitignore", "target/\n"),
            ("target/debug/x.rs", "built"),
        ]);
        let root = dir.path();
        let full = scan_repo(root, SizeLimits::uniform(5));
        let changed: Vec<String> = [
            "src/a.rs",
            "src/gen/out.rs",
            "src/gen/keep.md",
            "docs/guide",
            ".hidden/x.rs",
            "target/debug/x.rs",
            "big.txt",
            "src/gone.rs",
        ]
        .map(String::from)
        .to_vec();
        let some = scan_paths(root, &changed, SizeLimits::uniform(5));
        // Exactly the full scan's files that lie on a changed path: a nested ignore file, the
        // root's ignore file, hidden folders and the size cap rule out the same ones.
        let expected: Vec<&ScannedFile> = full
            .files
            .iter()
            .filter(|f| changed.iter().any(|c| f.rel_path == *c || f.rel_path.starts_with(&format!("{c}/"))))
            .collect();
        assert_eq!(some.files.iter().collect::<Vec<_>>(), expected);
        assert_eq!(paths(&some), ["docs/guide/intro.md", "docs/guide/more.md", "src/a.rs", "src/gen/keep.md"]);
        assert_eq!(some.too_large, 1, "big.txt is over the cap in both scans");
        assert!(!paths(&full).contains(&"src/gen/out.rs") && paths(&full).contains(&"src/b.rs"));
    }

    #[test]
    fn a_changed_root_is_the_whole_repo() {
        let dir = repo(&[("a.rs", "a"), ("src/b.rs", "b")]);
        let full = scan_repo(dir.path(), SizeLimits::uniform(1 << 20));
        assert_eq!(scan_paths(dir.path(), &[String::new()], SizeLimits::uniform(1 << 20)).files, full.files);
    }
}
