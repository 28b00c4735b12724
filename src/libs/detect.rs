//! Which libraries a repo depends on, at which locked versions: Cargo (`Cargo.lock` with the
//! manifests of the workspace), npm (`package-lock.json`, `pnpm-lock.yaml`, `yarn.lock`,
//! `package.json` with `node_modules`) and Python (`uv.lock`, `poetry.lock`,
//! `requirements*.txt`, `pyproject.toml`, an in-repo virtualenv).
//!
//! Direct dependencies are the ones a manifest names; with `all`, every locked package is
//! listed too. A dependency the manifests name but no lock file pins is reported with the
//! reason instead of guessed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Dependency, Ecosystem};

/// Dependencies found, and the ones that could not be resolved to a version (name, why).
#[derive(Debug, Default)]
pub struct Detected {
    pub deps: Vec<Dependency>,
    pub unresolved: Vec<(Ecosystem, String, String)>,
    /// Manifests and lock files read (relative paths), for the summary.
    pub manifests: Vec<String>,
}

/// Reads every supported manifest under `root` (the root and, for Cargo, workspace members).
pub fn detect(root: &Path, all: bool) -> Detected {
    let mut out = Detected::default();
    cargo(root, all, &mut out);
    npm(root, all, &mut out);
    python(root, all, &mut out);
    out.deps.sort_by(|a, b| (a.ecosystem, !a.direct, &a.name).cmp(&(b.ecosystem, !b.direct, &b.name)));
    out.deps.dedup_by(|a, b| a.ecosystem == b.ecosystem && a.name == b.name && a.version == b.version);
    out
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

// ---------------------------------------------------------------------------------------
// Cargo

fn cargo(root: &Path, all: bool, out: &mut Detected) {
    let manifest_path = root.join("Cargo.toml");
    let Some(manifest) = read(&manifest_path).and_then(|t| t.parse::<toml::Table>().ok()) else { return };
    out.manifests.push("Cargo.toml".into());
    let mut direct = BTreeSet::new();
    let mut members = vec![manifest.clone()];
    if let Some(workspace) = manifest.get("workspace").and_then(|w| w.as_table()) {
        collect_cargo_deps(workspace, &mut direct);
        for pattern in workspace.get("members").and_then(|m| m.as_array()).into_iter().flatten() {
            let Some(pattern) = pattern.as_str() else { continue };
            for dir in expand_member(root, pattern) {
                let path = dir.join("Cargo.toml");
                if let Some(table) = read(&path).and_then(|t| t.parse::<toml::Table>().ok()) {
                    out.manifests.push(rel(root, &path));
                    members.push(table);
                }
            }
        }
    }
    let mut local = BTreeSet::new();
    for member in &members {
        collect_cargo_deps(member, &mut direct);
        if let Some(name) = member.get("package").and_then(|p| p.get("name")).and_then(|n| n.as_str()) {
            local.insert(name.to_string());
        }
    }
    direct.retain(|name| !local.contains(name));
    let lock_path = root.join("Cargo.lock");
    let Some(lock) = read(&lock_path).and_then(|t| t.parse::<toml::Table>().ok()) else {
        for name in direct {
            out.unresolved.push((Ecosystem::Cargo, name, "no Cargo.lock: run `cargo generate-lockfile`".into()));
        }
        return;
    };
    out.manifests.push("Cargo.lock".into());
    // Registry packages only: path and git dependencies are the repo's own code or not
    // published.
    let mut locked: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in lock.get("package").and_then(|p| p.as_array()).into_iter().flatten() {
        let (Some(name), Some(version)) =
            (package.get("name").and_then(|v| v.as_str()), package.get("version").and_then(|v| v.as_str()))
        else {
            continue;
        };
        let registry = package.get("source").and_then(|s| s.as_str()).is_some_and(|s| s.starts_with("registry+"));
        if registry {
            locked.entry(name.to_string()).or_default().push(version.to_string());
        }
    }
    for (name, versions) in &mut locked {
        versions.sort_by(|a, b| compare_versions(b, a));
        let is_direct = direct.contains(name);
        if is_direct {
            // Two majors of one crate: the newest is the one the manifest most likely names.
            out.deps.push(Dependency::new(Ecosystem::Cargo, name, &versions[0], true));
            for version in versions.iter().skip(1).filter(|_| all) {
                out.deps.push(Dependency::new(Ecosystem::Cargo, name, version, false));
            }
        } else if all {
            for version in versions.iter() {
                out.deps.push(Dependency::new(Ecosystem::Cargo, name, version, false));
            }
        }
    }
    for name in direct {
        if !locked.contains_key(&name) {
            out.unresolved.push((
                Ecosystem::Cargo,
                name,
                "not a registry package in Cargo.lock (a path or git dependency)".into(),
            ));
        }
    }
}

/// Whether a `[target.…]` table of a manifest applies to this machine: a `cfg(…)` over
/// `unix`, `windows`, `target_os` and `target_family` (with `not`, `any`, `all`) is
/// evaluated; a predicate it does not know (an architecture, a `--cfg` flag such as
/// `tokio_unstable`) counts as true, so only what surely is another platform's is left out.
/// A bare target triple applies when it names this operating system.
fn target_applies_here(spec: &str) -> bool {
    let os = std::env::consts::OS;
    let family = std::env::consts::FAMILY;
    match spec.trim().strip_prefix("cfg(").and_then(|rest| rest.strip_suffix(')')) {
        Some(expr) => eval_cfg(expr, os, family).unwrap_or(true),
        None => spec.contains(if os == "macos" { "apple" } else { os }),
    }
}

/// Evaluates a `cfg` expression for `os`/`family`; `None` when it cannot be read.
fn eval_cfg(expr: &str, os: &str, family: &str) -> Option<bool> {
    let expr = expr.trim();
    for (op, all) in [("all(", true), ("any(", false)] {
        if let Some(inner) = expr.strip_prefix(op).and_then(|rest| rest.strip_suffix(')')) {
            let values: Option<Vec<bool>> = split_top_level(inner).iter().map(|e| eval_cfg(e, os, family)).collect();
            let values = values?;
            return Some(if all { values.iter().all(|v| *v) } else { values.iter().any(|v| *v) });
        }
    }
    if let Some(inner) = expr.strip_prefix("not(").and_then(|rest| rest.strip_suffix(')')) {
        return eval_cfg(inner, os, family).map(|v| !v);
    }
    match expr.split_once('=') {
        Some((key, value)) => {
            let value = value.trim().trim_matches('"');
            match key.trim() {
                "target_os" => Some(value == os),
                "target_family" => Some(value == family),
                _ => Some(true),
            }
        }
        None => match expr {
            "unix" => Some(family == "unix"),
            "windows" => Some(family == "windows"),
            "" => None,
            _ => Some(true),
        },
    }
}

/// Splits `a, f(b, c), d` at the commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Names of the dependencies a manifest (or `[workspace]`) declares, by their package name
/// (`package = "…"` renames resolved); path-only dependencies are left out.
fn collect_cargo_deps(table: &toml::Table, out: &mut BTreeSet<String>) {
    let mut tables: Vec<&toml::Table> = Vec::new();
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(t) = table.get(key).and_then(|v| v.as_table()) {
            tables.push(t);
        }
    }
    if let Some(targets) = table.get("target").and_then(|v| v.as_table()) {
        // Another platform's dependencies (`windows-sys` on Linux: ~100,000 chunks of
        // constants) are not what this machine's code uses.
        let here = targets.iter().filter(|(spec, _)| target_applies_here(spec));
        for target in here.filter_map(|(_, v)| v.as_table()) {
            for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                if let Some(t) = target.get(key).and_then(|v| v.as_table()) {
                    tables.push(t);
                }
            }
        }
    }
    for deps in tables {
        for (key, spec) in deps {
            let spec_table = spec.as_table();
            if spec_table.is_some_and(|t| t.contains_key("path") && !t.contains_key("version")) {
                continue;
            }
            let name = spec_table.and_then(|t| t.get("package")).and_then(|p| p.as_str()).unwrap_or(key);
            out.insert(name.to_string());
        }
    }
}

/// Workspace member globs (`crates/*`) to directories.
fn expand_member(root: &Path, pattern: &str) -> Vec<PathBuf> {
    if !pattern.contains('*') && !pattern.contains('?') && !pattern.contains('[') {
        return vec![root.join(pattern)];
    }
    let Ok(glob) = globset::Glob::new(pattern).map(|g| g.compile_matcher()) else { return Vec::new() };
    // Members sit at most a few levels down; the walk stays under the pattern's literal prefix.
    let prefix: PathBuf = pattern.split('/').take_while(|part| !part.contains(['*', '?', '['])).collect();
    let mut found = Vec::new();
    let mut stack = vec![root.join(&prefix)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten().filter(|e| e.path().is_dir()) {
            let path = entry.path();
            let relative = rel(root, &path);
            if glob.is_match(&relative) {
                found.push(path.clone());
            }
            if relative.split('/').count() < 4 {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Orders `1.10.0` after `1.9.2` (numeric parts compared as numbers, then the rest as text).
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |v: &str| -> Vec<(u64, String)> {
        v.split(['.', '-', '+'])
            .map(|p| {
                let digits: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
                (digits.parse().unwrap_or(0), p[digits.len()..].to_string())
            })
            .collect()
    };
    parts(a).cmp(&parts(b))
}

// ---------------------------------------------------------------------------------------
// npm

fn npm(root: &Path, all: bool, out: &mut Detected) {
    let package_json =
        read(&root.join("package.json")).and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let mut direct = BTreeSet::new();
    if let Some(package) = &package_json {
        out.manifests.push("package.json".into());
        for key in ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"] {
            if let Some(deps) = package.get(key).and_then(|d| d.as_object()) {
                for (name, spec) in deps {
                    // `workspace:`, `file:` and `link:` specs are the repo's own packages.
                    let spec = spec.as_str().unwrap_or("");
                    if !(spec.starts_with("workspace:") || spec.starts_with("file:") || spec.starts_with("link:")) {
                        direct.insert(name.clone());
                    }
                }
            }
        }
    }
    let mut locked: BTreeMap<String, String> = BTreeMap::new();
    if let Some(lock) =
        read(&root.join("package-lock.json")).and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    {
        out.manifests.push("package-lock.json".into());
        if let Some(packages) = lock.get("packages").and_then(|p| p.as_object()) {
            for (key, entry) in packages {
                // Top-level installs only (`node_modules/x`, not `node_modules/a/node_modules/x`):
                // those are the versions `require("x")` gets from the root.
                let Some(name) = key.strip_prefix("node_modules/") else { continue };
                if name.contains("/node_modules/") || entry.get("link").and_then(|l| l.as_bool()) == Some(true) {
                    continue;
                }
                if let Some(version) = entry.get("version").and_then(|v| v.as_str()) {
                    locked.insert(name.to_string(), version.to_string());
                }
            }
        } else if let Some(deps) = lock.get("dependencies").and_then(|d| d.as_object()) {
            for (name, entry) in deps {
                if let Some(version) = entry.get("version").and_then(|v| v.as_str()) {
                    locked.insert(name.clone(), version.to_string());
                }
            }
        }
    } else if let Some(text) = read(&root.join("pnpm-lock.yaml")) {
        out.manifests.push("pnpm-lock.yaml".into());
        locked.extend(pnpm_versions(&text));
    } else if let Some(text) = read(&root.join("yarn.lock")) {
        out.manifests.push("yarn.lock".into());
        locked.extend(yarn_versions(&text));
    }
    // What is installed counts as locked when there is no lock file.
    for name in &direct {
        if !locked.contains_key(name) {
            if let Some(version) = installed_npm_version(root, name) {
                locked.insert(name.clone(), version);
            }
        }
    }
    for (name, version) in &locked {
        let is_direct = direct.contains(name);
        if is_direct || all {
            out.deps.push(Dependency::new(Ecosystem::Npm, name, version, is_direct));
        }
    }
    for name in direct {
        if !locked.contains_key(&name) {
            out.unresolved.push((
                Ecosystem::Npm,
                name,
                "no lock file pins it and it is not installed: run `npm install`".into(),
            ));
        }
    }
}

fn installed_npm_version(root: &Path, name: &str) -> Option<String> {
    let text = read(&root.join("node_modules").join(name).join("package.json"))?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str().map(str::to_string)
}

/// Versions of the root importer's dependencies in a pnpm lock file (lockfile v5-v9): the
/// `importers: .:` section (v6+) or the top-level `dependencies:` maps (v5), as
/// `name: version` or `name: { specifier, version }`.
fn pnpm_versions(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start().len();
    let unquote = |s: &str| s.trim().trim_matches(|c| c == '\'' || c == '"').to_string();
    // The dependency sections of the root importer, with the indentation of their entries.
    let mut i = 0;
    let mut root_base: Option<usize> = None;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if trimmed == "importers:" {
            // v6+: find `.:` under it.
            let base = indent(line);
            let mut j = i + 1;
            while j < lines.len() && (lines[j].trim().is_empty() || indent(lines[j]) > base) {
                if lines[j].trim() == ".:" || lines[j].trim() == "'.':" {
                    root_base = Some(indent(lines[j]));
                    i = j;
                    break;
                }
                j += 1;
            }
        }
        let section_indent = match root_base {
            Some(base) => base + 2,
            None => 0,
        };
        if indent(line) == section_indent
            && matches!(trimmed, "dependencies:" | "devDependencies:" | "optionalDependencies:")
        {
            let mut j = i + 1;
            while j < lines.len() && (lines[j].trim().is_empty() || indent(lines[j]) > section_indent) {
                let entry = lines[j];
                if entry.trim().is_empty() || indent(entry) != section_indent + 2 {
                    j += 1;
                    continue;
                }
                let Some((name, rest)) = entry.trim().rsplit_once(':').filter(|(n, _)| !n.is_empty()) else {
                    j += 1;
                    continue;
                };
                let name = unquote(name);
                let mut version = unquote(rest);
                if version.is_empty() {
                    // `{ specifier, version }` on the following lines.
                    let mut k = j + 1;
                    while k < lines.len() && indent(lines[k]) > section_indent + 2 {
                        if let Some(v) = lines[k].trim().strip_prefix("version:") {
                            version = unquote(v);
                        }
                        k += 1;
                    }
                }
                // `1.2.3(peer@4.5.6)` and `/name/1.2.3`: the version proper.
                let version = version.split('(').next().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
                if !version.is_empty() && version.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                    out.insert(name, version);
                }
                j += 1;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// Versions in a yarn lock file (classic `name@range:` blocks with `version "x"`, and
/// Berry's `"name@npm:range":` with `version: x`).
fn yarn_versions(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            names = line
                .trim_end_matches(':')
                .split(", ")
                .filter_map(|spec| {
                    let spec = spec.trim().trim_matches('"');
                    // The name is everything before the last `@` that is not the first char
                    // (scoped packages start with `@`).
                    let at = spec[1..].find('@').map(|i| i + 1)?;
                    Some(spec[..at].to_string())
                })
                .collect();
            continue;
        }
        let trimmed = line.trim();
        if let Some(version) = trimmed.strip_prefix("version") {
            let version = version.trim_start_matches(':').trim().trim_matches('"').to_string();
            for name in names.drain(..) {
                out.entry(name).or_insert_with(|| version.clone());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Python

/// PEP 503 normalized name: lowercase, runs of `-`, `_`, `.` as one `-`.
pub fn normalize_python_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut dash = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
            continue;
        }
        if dash && !out.is_empty() {
            out.push('-');
        }
        dash = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The name at the start of a requirement (`requests[socks]>=2.0; python_version>"3"`).
fn requirement_name(spec: &str) -> Option<String> {
    let name: String =
        spec.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).collect();
    (!name.is_empty()).then(|| normalize_python_name(&name))
}

fn python(root: &Path, all: bool, out: &mut Detected) {
    let mut direct = BTreeSet::new();
    let mut pinned: BTreeMap<String, String> = BTreeMap::new();
    let mut own_name = None;
    if let Some(pyproject) = read(&root.join("pyproject.toml")).and_then(|t| t.parse::<toml::Table>().ok()) {
        out.manifests.push("pyproject.toml".into());
        let project = pyproject.get("project").and_then(|p| p.as_table());
        own_name = project.and_then(|p| p.get("name")).and_then(|n| n.as_str()).map(normalize_python_name);
        let mut specs: Vec<&str> = Vec::new();
        if let Some(project) = project {
            specs.extend(
                project.get("dependencies").and_then(|d| d.as_array()).into_iter().flatten().filter_map(|v| v.as_str()),
            );
            for group in
                project.get("optional-dependencies").and_then(|d| d.as_table()).into_iter().flat_map(|t| t.values())
            {
                specs.extend(group.as_array().into_iter().flatten().filter_map(|v| v.as_str()));
            }
        }
        for group in pyproject.get("dependency-groups").and_then(|d| d.as_table()).into_iter().flat_map(|t| t.values())
        {
            specs.extend(group.as_array().into_iter().flatten().filter_map(|v| v.as_str()));
        }
        for spec in specs {
            if let Some(name) = requirement_name(spec) {
                direct.insert(name.clone());
                if let Some((_, version)) = spec.split_once("==") {
                    pinned.insert(name, version.split([';', ',', ' ']).next().unwrap_or("").trim().to_string());
                }
            }
        }
        let poetry = pyproject.get("tool").and_then(|t| t.get("poetry"));
        for key in ["dependencies", "dev-dependencies"] {
            for name in poetry.and_then(|p| p.get(key)).and_then(|d| d.as_table()).into_iter().flat_map(|t| t.keys()) {
                if name != "python" {
                    direct.insert(normalize_python_name(name));
                }
            }
        }
        if let Some(groups) = poetry.and_then(|p| p.get("group")).and_then(|g| g.as_table()) {
            for group in groups.values() {
                for name in group.get("dependencies").and_then(|d| d.as_table()).into_iter().flat_map(|t| t.keys()) {
                    if name != "python" {
                        direct.insert(normalize_python_name(name));
                    }
                }
            }
        }
    }
    let mut requirement_files: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("requirements") && name.ends_with(".txt")
        })
        .collect();
    requirement_files.sort();
    for path in requirement_files {
        let Some(text) = read(&path) else { continue };
        out.manifests.push(rel(root, &path));
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() || line.starts_with('-') || line.contains("://") {
                continue;
            }
            let Some(name) = requirement_name(line) else { continue };
            direct.insert(name.clone());
            if let Some((_, version)) = line.split_once("==") {
                pinned.insert(name, version.split([';', ',', ' ']).next().unwrap_or("").trim().to_string());
            }
        }
    }
    if let Some(own) = &own_name {
        direct.remove(own);
    }
    let mut locked: BTreeMap<String, String> = BTreeMap::new();
    for lock_name in ["uv.lock", "poetry.lock", "pdm.lock"] {
        let Some(lock) = read(&root.join(lock_name)).and_then(|t| t.parse::<toml::Table>().ok()) else { continue };
        out.manifests.push(lock_name.into());
        for package in lock.get("package").and_then(|p| p.as_array()).into_iter().flatten() {
            let (Some(name), Some(version)) =
                (package.get("name").and_then(|v| v.as_str()), package.get("version").and_then(|v| v.as_str()))
            else {
                continue;
            };
            // uv lists the project itself (and workspace members) with an editable/virtual source.
            let local = package.get("source").and_then(|s| s.as_table()).is_some_and(|s| {
                s.contains_key("editable") || s.contains_key("virtual") || s.contains_key("directory")
            });
            if !local {
                locked.insert(normalize_python_name(name), version.to_string());
            }
        }
        break;
    }
    let installed = installed_python(root);
    for (name, version) in pinned {
        locked.entry(name).or_insert(version);
    }
    for name in &direct {
        if !locked.contains_key(name) {
            if let Some(version) = installed.get(name) {
                locked.insert(name.clone(), version.clone());
            }
        }
    }
    if let Some(own) = &own_name {
        locked.remove(own);
    }
    for (name, version) in &locked {
        let is_direct = direct.contains(name);
        if is_direct || all {
            out.deps.push(Dependency::new(Ecosystem::Python, name, version, is_direct));
        }
    }
    for name in direct {
        if !locked.contains_key(&name) {
            out.unresolved.push((
                Ecosystem::Python,
                name,
                "not pinned (`==`), locked or installed in the repo's virtualenv".into(),
            ));
        }
    }
}

/// Site-packages directories of in-repo virtualenvs (`.venv`, `venv`, `env`).
pub fn site_packages_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for venv in [".venv", "venv", "env"] {
        let lib = root.join(venv).join("lib");
        for entry in std::fs::read_dir(&lib).into_iter().flatten().flatten() {
            let site = entry.path().join("site-packages");
            if site.is_dir() {
                out.push(site);
            }
        }
    }
    out
}

/// Distributions installed in the repo's virtualenvs: normalized name → version.
fn installed_python(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for site in site_packages_dirs(root) {
        for entry in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let Some(stem) = name.strip_suffix(".dist-info") else { continue };
            if let Some((dist, version)) = stem.rsplit_once('-') {
                out.insert(normalize_python_name(dist), version.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "detect_tests.rs"]
mod tests;
