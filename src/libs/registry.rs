//! Crate versions from the registry index cargo keeps (`$CARGO_HOME/registry/index/*/.cache`),
//! refreshed through cargo itself when a crate is not in it yet; and which version of a
//! crate the tools mean (asked for, locked by the repo, or the newest release).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::detect::compare_versions;
use super::rust::{cargo_command, cargo_home};
use super::{run_command, Ecosystem};
use crate::protocol::{CrateVersion, CrateVersions, DocdexError, ErrorCode, Result};

/// The index cache file of `name` in each registry cargo knows (crates.io's first).
fn index_cache_files(name: &str) -> Vec<PathBuf> {
    let name = name.to_ascii_lowercase();
    let prefix = match name.len() {
        1 => "1".to_string(),
        2 => "2".to_string(),
        3 => format!("3/{}", &name[..1]),
        _ => format!("{}/{}", &name[..2], &name[2..4]),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(cargo_home().join("registry").join("index"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|registry| registry.path().join(".cache").join(&prefix).join(&name))
        .filter(|path| path.is_file())
        .collect();
    files.sort_by_key(|p| !p.to_string_lossy().contains("crates.io"));
    files
}

/// Reads cargo's index cache format: a header, then NUL-separated (version, JSON) pairs;
/// only the JSON records are used.
pub fn parse_index_cache(bytes: &[u8]) -> Vec<CrateVersion> {
    let mut out: Vec<CrateVersion> = bytes
        .split(|&b| b == 0)
        .filter(|part| part.first() == Some(&b'{'))
        .filter_map(|part| serde_json::from_slice::<serde_json::Value>(part).ok())
        .filter_map(|record| {
            Some(CrateVersion {
                version: record.get("vers")?.as_str()?.to_string(),
                yanked: record.get("yanked").and_then(|y| y.as_bool()).unwrap_or(false),
                rust_version: record.get("rust_version").and_then(|r| r.as_str()).map(str::to_string),
            })
        })
        .collect();
    out.sort_by(|a, b| compare_versions(&b.version, &a.version));
    out.dedup_by(|a, b| a.version == b.version);
    out
}

/// Asks cargo to resolve `name = "*"` in a throwaway package: it brings the crate's index
/// entry into cargo's cache (needs the registry to be reachable).
async fn refresh(name: &str, build_dir: &Path, deadline: Duration) -> Result<()> {
    std::fs::create_dir_all(build_dir)?;
    let wrapper = tempfile::Builder::new().prefix("versions-").tempdir_in(build_dir)?;
    std::fs::create_dir_all(wrapper.path().join("src"))?;
    std::fs::write(
        wrapper.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"docdex-versions\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n[dependencies]\n{name:?} = \"*\"\n"
        ),
    )?;
    std::fs::write(wrapper.path().join("src").join("lib.rs"), "")?;
    let mut command = cargo_command(build_dir);
    command.arg("generate-lockfile").arg("--manifest-path").arg(wrapper.path().join("Cargo.toml"));
    run_command(command, &format!("`cargo generate-lockfile` for {name}"), deadline).await.map(|_| ())
}

/// Every release of `name`, newest first, with yanked flags.
pub async fn versions(name: &str, build_dir: &Path, deadline: Duration) -> Result<CrateVersions> {
    let read =
        || index_cache_files(name).into_iter().find_map(|f| std::fs::read(f).ok()).map(|b| parse_index_cache(&b));
    let mut versions = read().unwrap_or_default();
    if versions.is_empty() {
        if let Err(err) = refresh(name, build_dir, deadline).await {
            return Err(DocdexError::new(
                ErrorCode::NotFound,
                format!(
                    "crate `{name}` is not in cargo's registry index here, and cargo could not look it up: {}",
                    err.message
                ),
            )
            .with_hint("check the crate's name, and that crates.io (or your registry mirror) is reachable"));
        }
        versions = read().unwrap_or_default();
    }
    let latest = latest(&versions).ok_or_else(|| {
        DocdexError::new(ErrorCode::NotFound, format!("crate `{name}` has no releases in the registry index"))
    })?;
    Ok(CrateVersions { name: name.to_string(), latest, versions })
}

/// The newest release that is not yanked, pre-releases only when there is nothing else.
fn latest(versions: &[CrateVersion]) -> Option<String> {
    let live = || versions.iter().filter(|v| !v.yanked);
    live().find(|v| !v.version.contains('-')).or_else(|| live().next()).map(|v| v.version.clone())
}

/// The version of `name` the repo at `root` locks, if it depends on it at all.
pub fn locked_version(root: &Path, name: &str) -> Option<String> {
    let wanted = name.replace('_', "-");
    super::detect::detect(root, true)
        .deps
        .into_iter()
        .filter(|d| d.ecosystem == Ecosystem::Cargo && d.name.replace('_', "-") == wanted)
        .max_by(|a, b| (a.direct, &a.version).cmp(&(b.direct, &b.version)))
        .map(|d| d.version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_cache_format_is_read_newest_first_with_yanked_flags() {
        let mut bytes = vec![3u8, 2, 0, 0, 0];
        bytes.extend_from_slice(b"etag\0");
        for (version, yanked) in [("1.0.0", false), ("1.2.0", true), ("1.1.0", false), ("2.0.0-rc.1", false)] {
            bytes.extend_from_slice(version.as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(
                format!(r#"{{"name":"demo","vers":"{version}","deps":[],"cksum":"x","features":{{}},"yanked":{yanked},"rust_version":"1.70"}}"#)
                    .as_bytes(),
            );
            bytes.push(0);
        }
        let versions = parse_index_cache(&bytes);
        let listed: Vec<(&str, bool)> = versions.iter().map(|v| (v.version.as_str(), v.yanked)).collect();
        assert_eq!(listed, [("2.0.0-rc.1", false), ("1.2.0", true), ("1.1.0", false), ("1.0.0", false)]);
        assert_eq!(versions[0].rust_version.as_deref(), Some("1.70"));
        assert_eq!(latest(&versions).as_deref(), Some("1.1.0"));
    }
}
