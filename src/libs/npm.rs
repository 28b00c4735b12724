//! npm packages: the README and the type declarations (`.d.ts`, with their doc comments),
//! from the repo's `node_modules` when the installed version is the locked one, else from
//! the registry's tarball (`npm pack`).

use std::path::Path;
use std::time::Duration;

use super::{
    extract_tar_gz, find_readme, first_paragraph, run_command, walk_files, CachedLibrary, Dependency, EntryBuilder,
};
use crate::config::LibsConfig;
use crate::protocol::{DocdexError, ErrorCode, Result};

fn is_declaration(path: &str) -> bool {
    path.ends_with(".d.ts") || path.ends_with(".d.mts") || path.ends_with(".d.cts")
}

fn is_readme(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.starts_with("readme") && (name.ends_with(".md") || name.ends_with(".markdown") || !name.contains('.'))
}

pub async fn fetch(
    repo_root: &Path,
    cache_root: &Path,
    dep: &Dependency,
    config: &LibsConfig,
    deadline: Duration,
) -> Result<CachedLibrary> {
    let installed = repo_root.join("node_modules").join(&dep.name);
    let installed_version = std::fs::read_to_string(installed.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("version").and_then(|v| v.as_str()).map(str::to_string));
    let mut entry = EntryBuilder::new(cache_root, dep, config)?;
    let mut description = String::new();
    let origin;
    if installed_version.as_deref() == Some(dep.version.as_str()) {
        origin = "node_modules";
        let package: serde_json::Value = std::fs::read_to_string(installed.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        description = package.get("description").and_then(|d| d.as_str()).unwrap_or("").to_string();
        if let Some((_, text)) = find_readme(&installed) {
            entry.add_doc("README.md", &text)?;
        }
        for path in walk_files(&installed, &["node_modules", "test", "tests", "__tests__"], 5000) {
            let relative = path.strip_prefix(&installed).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            if is_declaration(&relative) {
                let Ok(text) = std::fs::read_to_string(&path) else { continue };
                if !entry.add_doc(&format!("types/{relative}"), &text)? {
                    break;
                }
            }
        }
    } else {
        origin = "npm-pack";
        let work = tempfile::tempdir()?;
        let mut command = tokio::process::Command::new(std::env::var_os("DOCDEX_NPM").unwrap_or_else(|| "npm".into()));
        command
            .arg("pack")
            .arg(format!("{}@{}", dep.name, dep.version))
            .arg("--pack-destination")
            .arg(work.path())
            .arg("--json")
            .current_dir(work.path());
        run_command(command, &format!("`npm pack {}@{}`", dep.name, dep.version), deadline).await?;
        let tarball = std::fs::read_dir(work.path())?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "tgz"))
            .ok_or_else(|| {
                DocdexError::new(
                    ErrorCode::LibraryUnavailable,
                    format!("`npm pack {}@{}` wrote no tarball", dep.name, dep.version),
                )
            })?;
        let files = extract_tar_gz(
            &tarball,
            |path| {
                // Tarball members sit under `package/` (some under another top directory).
                let relative = path.split_once('/').map(|(_, rest)| rest).unwrap_or(path);
                if relative.contains("node_modules/") {
                    return None;
                }
                if relative == "package.json"
                    || (is_readme(relative) && !relative.contains('/'))
                    || is_declaration(relative)
                {
                    Some(relative.to_string())
                } else {
                    None
                }
            },
            config.max_files_per_library.max(1) + 2,
            config.max_bytes_per_library,
        )?;
        for (relative, text) in files {
            if relative == "package.json" {
                let package: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                description = package.get("description").and_then(|d| d.as_str()).unwrap_or("").to_string();
            } else if is_readme(&relative) {
                entry.add_doc("README.md", &text)?;
            } else if !entry.add_doc(&format!("types/{relative}"), &text)? {
                break;
            }
        }
    }
    if entry.doc_count() == 0 {
        entry.notes.push("the package has neither a README nor type declarations".into());
    }
    if description.is_empty() {
        let readme = std::fs::read_to_string(installed.join("README.md")).unwrap_or_default();
        description = first_paragraph(&readme, 1000);
    }
    entry.finish(dep, &description, origin, 0)
}
