//! Library docs: which libraries a repo uses (`detect`), getting each one's docs at the
//! locked version through its ecosystem's own client or what is already on disk (`rust`,
//! `npm`, `python`), and the machine-wide cache they are kept in, once per version.
//!
//! Cache layout: `<state>/cache/libs/<ecosystem>/<name>/<version>/` holds `library.json`
//! (what the entry is) and `docs/` (the text that gets indexed: READMEs, generated API
//! pages, type declarations); Rust entries also keep `items.json` (every public item with
//! its docs and signature, and the re-export aliases) for the crate tools. An entry is built
//! in a temporary directory next to it and renamed into place whole, so a failure or a kill
//! mid-fetch leaves either no entry or a complete one, never half of one.

pub mod crates;
pub mod detect;
pub mod npm;
pub mod python;
pub mod registry;
pub mod rust;
pub mod rust_items;
pub mod rust_source;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::LibsConfig;
use crate::protocol::{DocdexError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ecosystem {
    Cargo,
    Npm,
    Python,
}

impl Ecosystem {
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Cargo => "cargo",
            Ecosystem::Npm => "npm",
            Ecosystem::Python => "python",
        }
    }
}

/// A library at a version, as a repo's manifests name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependency {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
    /// Named by a manifest (not only pulled in by another library).
    pub direct: bool,
}

impl Dependency {
    pub fn new(ecosystem: Ecosystem, name: &str, version: &str, direct: bool) -> Dependency {
        Dependency { ecosystem, name: name.to_string(), version: version.to_string(), direct }
    }

    /// `cargo/serde`: one library in a repo's index, whatever its version.
    pub fn key(&self) -> String {
        format!("{}/{}", self.ecosystem.as_str(), self.name)
    }
}

/// What a cache entry holds (`library.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryManifest {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
    /// One paragraph (the package's summary or the crate docs' first one).
    pub description: String,
    /// Where the docs came from: `rustdoc`, `docs.rs`, `crate-source`, `node_modules`,
    /// `npm-pack`, `site-packages`, `pip-download`.
    pub origin: String,
    pub fetched_at: u64,
    /// Files under `docs/`, relative, `/`-separated.
    pub docs: Vec<String>,
    /// Public items found (Rust: rustdoc items; Python: documented definitions; npm: 0).
    pub items: u64,
    /// What was left out or fell back, for the summary.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A cache entry being built: docs are added, then `finish` moves it into place.
pub struct EntryBuilder {
    tmp: tempfile::TempDir,
    final_dir: PathBuf,
    docs: Vec<String>,
    bytes: u64,
    max_files: usize,
    max_bytes: u64,
    pub notes: Vec<String>,
    truncated: bool,
}

impl EntryBuilder {
    pub fn new(cache_root: &Path, dep: &Dependency, config: &LibsConfig) -> Result<EntryBuilder> {
        let final_dir = entry_dir(cache_root, dep);
        let parent = final_dir.parent().expect("entry dirs have parents");
        std::fs::create_dir_all(parent).map_err(|err| state_error(parent, err))?;
        // Next to the final place: the rename that publishes it stays on one file system.
        let tmp =
            tempfile::Builder::new().prefix(".partial-").tempdir_in(parent).map_err(|err| state_error(parent, err))?;
        std::fs::create_dir_all(tmp.path().join("docs"))?;
        Ok(EntryBuilder {
            tmp,
            final_dir,
            docs: Vec::new(),
            bytes: 0,
            max_files: config.max_files_per_library.max(1),
            max_bytes: config.max_bytes_per_library.max(1024),
            notes: Vec::new(),
            truncated: false,
        })
    }

    /// Adds a doc file (a path relative to `docs/`); false once the bounds are reached.
    pub fn add_doc(&mut self, relative: &str, text: &str) -> Result<bool> {
        if self.docs.len() >= self.max_files || self.bytes + text.len() as u64 > self.max_bytes {
            if !self.truncated {
                self.truncated = true;
                self.notes.push(format!(
                    "docs cut at {} files / {} bytes (`[libs] max_files_per_library`, `max_bytes_per_library`)",
                    self.docs.len(),
                    self.bytes
                ));
            }
            return Ok(false);
        }
        let relative = sanitize_relative(relative);
        let path = self.tmp.path().join("docs").join(&relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
        self.bytes += text.len() as u64;
        self.docs.push(relative);
        Ok(true)
    }

    /// Writes another file of the entry (next to `library.json`).
    pub fn add_file(&self, name: &str, bytes: &[u8]) -> Result<()> {
        Ok(std::fs::write(self.tmp.path().join(name), bytes)?)
    }

    pub fn doc_count(&self) -> usize {
        self.docs.len()
    }

    /// Publishes the entry. Another process that published the same version meanwhile
    /// wins (its entry is as good as ours).
    pub fn finish(mut self, dep: &Dependency, description: &str, origin: &str, items: u64) -> Result<CachedLibrary> {
        let mut notes = std::mem::take(&mut self.notes);
        notes.dedup();
        let manifest = LibraryManifest {
            ecosystem: dep.ecosystem,
            name: dep.name.clone(),
            version: dep.version.clone(),
            description: first_paragraph(description, 1000),
            origin: origin.to_string(),
            fetched_at: crate::protocol::time::unix_now(),
            docs: std::mem::take(&mut self.docs),
            items,
            notes,
        };
        std::fs::write(self.tmp.path().join(MANIFEST_FILE), serde_json::to_vec_pretty(&manifest)?)?;
        let tmp = self.tmp.keep();
        match std::fs::rename(&tmp, &self.final_dir) {
            Ok(()) => {}
            Err(_) if self.final_dir.join(MANIFEST_FILE).exists() => {
                let _ = std::fs::remove_dir_all(&tmp);
            }
            Err(err) => {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(state_error(&self.final_dir, err));
            }
        }
        read_entry(&self.final_dir).ok_or_else(|| {
            DocdexError::internal(format!(
                "the cache entry {} is unreadable after writing it",
                self.final_dir.display()
            ))
        })
    }
}

fn state_error(path: &Path, err: std::io::Error) -> DocdexError {
    DocdexError::new(crate::protocol::ErrorCode::StateUnwritable, format!("cannot write {}: {err}", path.display()))
        .with_hint("make the state directory writable or set DOCDEX_HOME / core.global_state_dir")
}

pub const MANIFEST_FILE: &str = "library.json";

/// `a/../b` and absolute paths from archives stay inside the entry.
fn sanitize_relative(path: &str) -> String {
    path.replace('\\', "/")
        .split('/')
        .filter(|part| !part.is_empty() && *part != "." && *part != "..")
        .collect::<Vec<_>>()
        .join("/")
}

/// A complete cache entry.
#[derive(Debug, Clone)]
pub struct CachedLibrary {
    pub dir: PathBuf,
    pub manifest: LibraryManifest,
}

impl CachedLibrary {
    pub fn doc_path(&self, relative: &str) -> PathBuf {
        self.dir.join("docs").join(relative)
    }
}

pub fn cache_root(state_dir: &Path) -> PathBuf {
    state_dir.join("cache").join("libs")
}

/// Names are used as directory names: scoped npm names (`@scope/pkg`) become `@scope+pkg`.
pub fn entry_dir(cache_root: &Path, dep: &Dependency) -> PathBuf {
    let safe = |s: &str| sanitize_relative(s).replace('/', "+");
    cache_root.join(dep.ecosystem.as_str()).join(safe(&dep.name)).join(safe(&dep.version))
}

/// The entry at `dir`, if it is complete.
pub fn read_entry(dir: &Path) -> Option<CachedLibrary> {
    let manifest: LibraryManifest = serde_json::from_slice(&std::fs::read(dir.join(MANIFEST_FILE)).ok()?).ok()?;
    Some(CachedLibrary { dir: dir.to_path_buf(), manifest })
}

/// Up to `max` characters of the first non-heading paragraph of `text`.
pub fn first_paragraph(text: &str, max: usize) -> String {
    let paragraph = text
        .split("\n\n")
        .map(str::trim)
        .find(|p| {
            !p.is_empty() && !p.starts_with('#') && !p.starts_with("[!") && !p.starts_with("<") && !p.starts_with('[')
        })
        .unwrap_or("");
    let flat = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// Runs a command with a deadline; on failure, the error carries the last lines it printed.
pub async fn run_command(mut command: tokio::process::Command, what: &str, timeout: Duration) -> Result<String> {
    command.kill_on_drop(true).stdin(std::process::Stdio::null());
    let output = match tokio::time::timeout(timeout, command.output()).await {
        Err(_) => {
            return Err(DocdexError::new(
                crate::protocol::ErrorCode::Timeout,
                format!("{what} took longer than {} s", timeout.as_secs()),
            )
            .with_hint("raise `[libs] timeout_secs` or fetch this library alone"))
        }
        Ok(Err(err)) => {
            return Err(DocdexError::new(
                crate::protocol::ErrorCode::LibraryUnavailable,
                format!("cannot run {what}: {err}"),
            )
            .with_hint("install the ecosystem's client (cargo, npm or pip) and make sure it is on PATH"))
        }
        Ok(Ok(output)) => output,
    };
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).to_string());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    // The tool's own error line and what follows it say what went wrong; the last lines are
    // often only context ("required by package …").
    let first_error = lines.iter().position(|l| {
        let l = l.trim_start().to_ascii_lowercase();
        l.starts_with("error") || l.starts_with("npm err")
    });
    let tail = match first_error {
        Some(at) => lines[at..(at + 3).min(lines.len())].join(" | "),
        None => lines[lines.len().saturating_sub(3)..].join(" | "),
    };
    Err(DocdexError::new(
        crate::protocol::ErrorCode::LibraryUnavailable,
        format!("{what} failed ({}): {tail}", output.status),
    ))
}

/// Gets one library's docs into the cache (or finds them there).
pub async fn ensure_cached(
    repo_root: &Path,
    cache_root: &Path,
    dep: &Dependency,
    config: &LibsConfig,
) -> Result<(CachedLibrary, bool)> {
    check_grammar(dep)?;
    if let Some(entry) = read_entry(&entry_dir(cache_root, dep)) {
        return Ok((entry, true));
    }
    let deadline = Duration::from_secs(config.timeout_secs.max(1));
    let fetch = async {
        match dep.ecosystem {
            Ecosystem::Cargo => rust::fetch(cache_root, dep, config, deadline).await,
            Ecosystem::Npm => npm::fetch(repo_root, cache_root, dep, config, deadline).await,
            Ecosystem::Python => python::fetch(repo_root, cache_root, dep, config, deadline).await,
        }
    };
    match tokio::time::timeout(deadline, fetch).await {
        Ok(result) => result.map(|entry| (entry, false)),
        Err(_) => Err(DocdexError::new(
            crate::protocol::ErrorCode::Timeout,
            format!("fetching {}@{} took longer than {} s", dep.name, dep.version, deadline.as_secs()),
        )
        .with_hint("raise `[libs] timeout_secs`")),
    }
}

/// Refuses a library name or version outside its grammar before it touches a path or a
/// generated manifest: the version is pasted into cargo's registry folder name and into a
/// `Cargo.toml`, so `1.0.0/../../x` or a quote must never get that far. Names and versions
/// come from requests and from lockfiles, which a repo's author controls.
pub fn check_grammar(dep: &Dependency) -> Result<()> {
    let version_ok = !dep.version.is_empty()
        && dep.version.len() <= 100
        && !dep.version.contains("..")
        && dep.version.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && dep.version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '!' | '_'));
    if !version_ok {
        return Err(DocdexError::invalid(format!("`{}` is not a version of {}", dep.version, dep.name))
            .with_hint("pass an exact version such as 1.0.219 (letters, digits and . - + only)"));
    }
    let name_ok = |name: &str| {
        !name.is_empty()
            && name.len() <= 214
            && !name.contains("..")
            && name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    let valid = match (dep.ecosystem, dep.name.strip_prefix('@')) {
        // npm's scoped names: `@scope/name`.
        (Ecosystem::Npm, Some(scoped)) => {
            scoped.split_once('/').is_some_and(|(scope, name)| name_ok(scope) && name_ok(name))
        }
        (Ecosystem::Cargo, _) => name_ok(&dep.name) && !dep.name.contains('.'),
        _ => name_ok(&dep.name),
    };
    if !valid {
        return Err(DocdexError::invalid(format!("`{}` is not a {} package name", dep.name, dep.ecosystem.as_str())));
    }
    Ok(())
}

/// Entries whose build was interrupted (a kill mid-fetch) are removed by the next fetch of
/// the same library's parent directory; they are never read as entries.
pub fn remove_stale_partials(cache_root: &Path, dep: &Dependency) {
    let Some(parent) = entry_dir(cache_root, dep).parent().map(Path::to_path_buf) else { return };
    for entry in std::fs::read_dir(&parent).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(24 * 3600));
        // A partial another process is building right now is young; only old ones go.
        if name.starts_with(".partial-") && old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Files under `dir` (recursively, skipping `skip_dirs` names), sorted, bounded.
pub fn walk_files(dir: &Path, skip_dirs: &[&str], max: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else { continue };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
        for entry in entries {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !skip_dirs.contains(&name.as_str()) && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if kind.is_file() {
                out.push(path);
                if out.len() >= max {
                    out.sort();
                    return out;
                }
            }
        }
    }
    out.sort();
    out
}

/// The README of a package directory, if there is one (`README.md`, `README`, `readme.rst`...).
pub fn find_readme(dir: &Path) -> Option<(String, String)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.to_ascii_lowercase().starts_with("readme"))
        .collect();
    names.sort_by_key(|n| (!n.to_ascii_lowercase().ends_with(".md"), n.clone()));
    let name = names.into_iter().next()?;
    let text = std::fs::read_to_string(dir.join(&name)).ok()?;
    Some((name, text))
}

/// Extracts the members of a `.tar.gz` (npm tarballs, sdists, `.crate` files) for which
/// `wanted` returns a destination name, bounded in count and bytes.
pub fn extract_tar_gz(
    archive: &Path,
    mut wanted: impl FnMut(&str) -> Option<String>,
    max_files: usize,
    max_bytes: u64,
) -> Result<Vec<(String, String)>> {
    let file = std::fs::File::open(archive)?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = Vec::new();
    let mut bytes = 0u64;
    for entry in tar.entries().map_err(|err| DocdexError::internal(format!("unreadable archive: {err}")))? {
        let mut entry = entry.map_err(|err| DocdexError::internal(format!("unreadable archive: {err}")))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map(|p| p.to_string_lossy().replace('\\', "/")).unwrap_or_default();
        let Some(name) = wanted(&path) else { continue };
        let size = entry.header().size().unwrap_or(0);
        if out.len() >= max_files || bytes + size > max_bytes {
            break;
        }
        let mut text = String::new();
        if std::io::Read::read_to_string(&mut entry, &mut text).is_ok() {
            bytes += size;
            out.push((name, text));
        }
    }
    Ok(out)
}

/// The path a library's doc file has in a repo's index: `cargo:serde@1.0.219/README.md`.
/// The ecosystem prefix keeps it apart from every repo-relative path.
pub fn library_doc_path(ecosystem: Ecosystem, name: &str, version: &str, relative: &str) -> String {
    format!("{}:{name}@{version}/{relative}", ecosystem.as_str())
}

/// Splits a library doc path into (ecosystem, name, version, relative path).
pub fn parse_library_doc_path(path: &str) -> Option<(Ecosystem, &str, &str, &str)> {
    let (ecosystem, rest) = path.split_once(':')?;
    let ecosystem = match ecosystem {
        "cargo" => Ecosystem::Cargo,
        "npm" => Ecosystem::Npm,
        "python" => Ecosystem::Python,
        _ => return None,
    };
    // Scoped npm names hold a `/` (`@types/node@20.1.0/…`): the version follows the last
    // `@` before the relative path starts.
    let at = rest.char_indices().skip(1).find(|&(_, c)| c == '@').map(|(i, _)| i)?;
    let (name, tail) = (&rest[..at], &rest[at + 1..]);
    let (version, relative) = tail.split_once('/')?;
    Some((ecosystem, name, version, relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_versions_outside_their_grammar_are_refused_before_any_path_is_built() {
        let ok = |eco, name: &str, version: &str| check_grammar(&Dependency::new(eco, name, version, true)).is_ok();
        assert!(ok(Ecosystem::Cargo, "serde", "1.0.219"));
        assert!(ok(Ecosystem::Cargo, "tokio-util", "0.7.0-alpha.1+build.5"));
        assert!(ok(Ecosystem::Npm, "@types/node", "20.1.0"));
        assert!(ok(Ecosystem::Python, "typing_extensions", "4.12.2"));
        assert!(ok(Ecosystem::Python, "zope.interface", "1!2.0.post1"));
        for version in ["1.0.0/../../../../x", "..", "1.0\"", "", "1.0 0", "-1", "../1"] {
            assert!(!ok(Ecosystem::Cargo, "serde", version), "{version:?} passed");
        }
        for name in ["../serde", "ser/de", "serde\"", "", ".hidden", "a..b"] {
            assert!(!ok(Ecosystem::Cargo, name, "1.0.0"), "{name:?} passed");
        }
        assert!(!ok(Ecosystem::Npm, "@types/../node", "1.0.0"));
        let err = check_grammar(&Dependency::new(Ecosystem::Cargo, "serde", "1.0.0/../../x", true)).unwrap_err();
        assert_eq!(err.code, crate::protocol::ErrorCode::InvalidRequest);
    }

    #[test]
    fn library_doc_paths_round_trip_scoped_names_included() {
        let path = library_doc_path(Ecosystem::Npm, "@types/node", "20.1.0", "types/index.d.ts");
        assert_eq!(path, "npm:@types/node@20.1.0/types/index.d.ts");
        assert_eq!(parse_library_doc_path(&path), Some((Ecosystem::Npm, "@types/node", "20.1.0", "types/index.d.ts")));
        assert_eq!(
            parse_library_doc_path("cargo:serde@1.0.219/api/de.md"),
            Some((Ecosystem::Cargo, "serde", "1.0.219", "api/de.md"))
        );
        assert_eq!(parse_library_doc_path("src/main.rs"), None);
        assert_eq!(parse_library_doc_path("c:/x/y"), None);
    }
}
