//! Rust crates: the source from cargo's registry (fetched with `cargo fetch` when missing),
//! the public API from rustdoc JSON built locally (`RUSTC_BOOTSTRAP=1 cargo doc` with the
//! features and flags the crate asks docs.rs for), turned into one Markdown page per module
//! for search and `items.json` (items, signatures, re-export aliases) for the crate tools.
//! When rustdoc fails, the README and the crate-level docs are what the entry holds.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{find_readme, first_paragraph, run_command, walk_files, CachedLibrary, Dependency, EntryBuilder};
use crate::config::LibsConfig;
use crate::protocol::{DocdexError, ErrorCode, Result};

use super::rust_items::{RustDocs, RustItem, ITEMS_FILE};

pub(crate) fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
}

/// The unpacked source of `name-version` in cargo's registry, if present.
fn registry_source(name: &str, version: &str) -> Option<PathBuf> {
    let src = cargo_home().join("registry").join("src");
    std::fs::read_dir(src)
        .ok()?
        .flatten()
        .map(|registry| registry.path().join(format!("{name}-{version}")))
        .find(|dir| dir.join("Cargo.toml").is_file())
}

/// A throwaway package depending on exactly `dep` (with `features`), for `cargo fetch` and
/// `cargo doc -p`.
fn write_wrapper(dir: &Path, dep: &Dependency, features: &[String], default_features: bool) -> Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    let features = features.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join(", ");
    let manifest = format!(
        "[package]\nname = \"docdex-libdoc\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n[dependencies]\n{:?} = {{ version = \"={}\", features = [{features}], default-features = {default_features} }}\n",
        dep.name, dep.version
    );
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    std::fs::write(dir.join("src").join("lib.rs"), "")?;
    Ok(())
}

pub(crate) fn cargo_command(build_dir: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.env("CARGO_TARGET_DIR", build_dir.join("target")).env("CARGO_TERM_COLOR", "never");
    command
}

/// What to do about the two ways `cargo fetch` of one exact version fails that a user can
/// act on: the version does not exist, or it was yanked (cargo then takes it only from a
/// lockfile that pins it, so the repo's own `cargo fetch` puts its source where this finds it).
fn with_fetch_hint(err: DocdexError, dep: &Dependency) -> DocdexError {
    if err.hint.is_some() {
        return err;
    }
    if err.message.contains("is yanked") {
        return err.with_hint(format!(
            "{}@{} was yanked: run `cargo fetch` in the repo that locks it (cargo takes a yanked version from its \
             Cargo.lock), then fetch again",
            dep.name, dep.version
        ));
    }
    if err.message.contains("failed to select a version") || err.message.contains("candidate versions found") {
        return err.with_hint(format!(
            "crates.io has no {}@{}: `docdexd crate versions {}` lists the versions there are",
            dep.name, dep.version, dep.name
        ));
    }
    err
}

pub async fn fetch(
    cache_root: &Path,
    dep: &Dependency,
    config: &LibsConfig,
    deadline: Duration,
) -> Result<CachedLibrary> {
    let build_dir = cache_root.join("cargo").join(".build");
    std::fs::create_dir_all(&build_dir)?;
    let source = match registry_source(&dep.name, &dep.version) {
        Some(dir) => dir,
        None => {
            let wrapper = tempfile::Builder::new().prefix("fetch-").tempdir_in(&build_dir)?;
            write_wrapper(wrapper.path(), dep, &[], true)?;
            let mut command = cargo_command(&build_dir);
            command.arg("fetch").arg("--manifest-path").arg(wrapper.path().join("Cargo.toml"));
            run_command(command, &format!("`cargo fetch` of {}@{}", dep.name, dep.version), deadline)
                .await
                .map_err(|err| with_fetch_hint(err, dep))?;
            registry_source(&dep.name, &dep.version).ok_or_else(|| {
                DocdexError::new(
                    ErrorCode::LibraryUnavailable,
                    format!(
                        "cargo fetched {}@{} but its source is not in {}",
                        dep.name,
                        dep.version,
                        cargo_home().display()
                    ),
                )
            })?
        }
    };
    let manifest: toml::Table =
        std::fs::read_to_string(source.join("Cargo.toml")).ok().and_then(|t| t.parse().ok()).unwrap_or_default();
    let mut entry = EntryBuilder::new(cache_root, dep, config)?;
    let package = manifest.get("package").and_then(|p| p.as_table());
    let mut description = package.and_then(|p| p.get("description")).and_then(|d| d.as_str()).unwrap_or("").to_string();
    if let Some((name, text)) = find_readme(&source) {
        entry.add_doc(
            &format!("README{}", if name.ends_with(".md") || !name.contains('.') { ".md" } else { ".txt" }),
            &text,
        )?;
        if description.is_empty() {
            description = first_paragraph(&text, 1000);
        }
    }
    // docs.rs's build first when configured (no local build), else rustdoc here.
    let mut rustdoc_origin = "rustdoc";
    let mut json_opt = None;
    if !config.docs_rs_base_url.trim().is_empty() {
        match docs_rs_json(&config.docs_rs_base_url, dep, deadline).await {
            Ok(json) => {
                json_opt = Some(json);
                rustdoc_origin = "docs.rs";
            }
            Err(err) => entry.notes.push(format!("docs.rs JSON unavailable ({}); built locally", err.message)),
        }
    }
    if json_opt.is_none() && config.rustdoc {
        match rustdoc_json(&build_dir, &manifest, dep, deadline).await {
            Ok((json, note_opt)) => {
                entry.notes.extend(note_opt);
                json_opt = Some(json);
            }
            Err(err) => {
                entry.notes.push(format!("rustdoc JSON failed ({}); items read from the source", err.message));
            }
        }
    }
    let mut docs_opt = json_opt.map(|json| convert(&json, dep));
    let mut from_source = false;
    if docs_opt.is_none() {
        // No rustdoc JSON: the items as the source declares them.
        let root = lib_root(&source, &manifest);
        let (source_dir, name) = (source.clone(), lib_name(&manifest, &dep.name));
        let mut extracted =
            tokio::task::spawn_blocking(move || super::rust_source::extract(&source_dir, &name, &root)).await?;
        if extracted.items.len() > 1 {
            extracted.version = dep.version.clone();
            docs_opt = Some(extracted);
            from_source = true;
        }
    }
    let (origin, items) = match docs_opt {
        Some(docs) => {
            for (page, text) in module_pages(&docs) {
                if !entry.add_doc(&page, &text)? {
                    break;
                }
            }
            entry.add_file(ITEMS_FILE, &serde_json::to_vec(&docs)?)?;
            if description.is_empty() {
                description = docs.items.first().map(|i| first_paragraph(&i.docs, 1000)).unwrap_or_default();
            }
            (if from_source { "crate-source" } else { rustdoc_origin }, docs.items.len() as u64)
        }
        None => {
            let crate_docs = crate_level_docs(&source, &manifest);
            if !crate_docs.trim().is_empty() {
                entry.add_doc(
                    &format!("api/{}.md", lib_name(&manifest, &dep.name)),
                    &format!("# {}\n\n{crate_docs}", dep.name),
                )?;
            }
            ("crate-source", 0)
        }
    };
    // Whole example programs: `crate_examples` returns them as they are.
    for path in walk_files(&source.join("examples"), &["target"], 50) {
        if path.extension().is_some_and(|e| e == "rs") {
            if let (Ok(text), Ok(relative)) = (std::fs::read_to_string(&path), path.strip_prefix(&source)) {
                if !entry.add_doc(&relative.to_string_lossy(), &text)? {
                    break;
                }
            }
        }
    }
    entry.finish(dep, &description, origin, items)
}

/// The library target's name (`[lib] name`, else the package name with `_` for `-`).
fn lib_name(manifest: &toml::Table, package: &str) -> String {
    manifest
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| package.replace('-', "_"))
}

/// The crate root file (`[lib] path`, else `src/lib.rs`).
fn lib_root(source: &Path, manifest: &toml::Table) -> PathBuf {
    manifest
        .get("lib")
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str())
        .map(|p| source.join(p))
        .unwrap_or_else(|| source.join("src").join("lib.rs"))
}

/// `//!` lines of the crate root.
fn crate_level_docs(source: &Path, manifest: &toml::Table) -> String {
    let text = std::fs::read_to_string(lib_root(source, manifest)).unwrap_or_default();
    text.lines()
        .map(str::trim_start)
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate's rustdoc JSON as docs.rs built it: `{base}/crate/{name}/{version}/json`
/// (redirected to a zstd-compressed file; plain JSON is taken too).
async fn docs_rs_json(base_url: &str, dep: &Dependency, deadline: Duration) -> Result<Value> {
    let url = format!("{}/crate/{}/{}/json", base_url.trim_end_matches('/'), dep.name, dep.version);
    let unavailable = |why: String| DocdexError::new(ErrorCode::LibraryUnavailable, format!("{url}: {why}"));
    let client = reqwest::Client::builder()
        .timeout(deadline.min(Duration::from_secs(120)))
        .user_agent(concat!("docdex/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|err| unavailable(err.to_string()))?;
    let response = client.get(&url).send().await.map_err(|err| unavailable(err.to_string()))?;
    if !response.status().is_success() {
        return Err(unavailable(format!("HTTP {}", response.status())));
    }
    let body = response.bytes().await.map_err(|err| unavailable(err.to_string()))?;
    const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
    let bytes = if body.starts_with(&ZSTD_MAGIC) {
        zstd::decode_all(&body[..]).map_err(|err| unavailable(format!("bad zstd data: {err}")))?
    } else {
        body.to_vec()
    };
    let json: Value = serde_json::from_slice(&bytes).map_err(|err| unavailable(format!("not rustdoc JSON: {err}")))?;
    if json.get("index").is_none() || json.get("root").is_none() {
        return Err(unavailable("not rustdoc JSON (no index or root)".into()));
    }
    Ok(json)
}

/// One way of building a crate's docs: features, default features, rustdoc and rustc flags.
struct DocBuild {
    features: Vec<String>,
    default_features: bool,
    rustdoc_flags: Vec<String>,
    rustc_flags: Vec<String>,
    what: &'static str,
}

/// The builds to try, best first: the way docs.rs builds the crate (its
/// `[package.metadata.docs.rs]` features, `--cfg docsrs`, its rustdoc and rustc args); then
/// the crate's `full` feature if it has one (crates like tokio document almost nothing
/// without features); then plain default features.
fn doc_builds(manifest: &toml::Table) -> Vec<DocBuild> {
    let docs_rs = manifest
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("docs"))
        .and_then(|d| d.get("rs"))
        .and_then(|d| d.as_table())
        .cloned()
        .unwrap_or_default();
    let strings = |key: &str| -> Vec<String> {
        docs_rs
            .get(key)
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let declared: Vec<String> =
        manifest.get("features").and_then(|f| f.as_table()).map(|f| f.keys().cloned().collect()).unwrap_or_default();
    let mut features = strings("features");
    if docs_rs.get("all-features").and_then(|v| v.as_bool()) == Some(true) {
        features = declared.clone();
    }
    let mut rustdoc_flags = vec!["--cfg".to_string(), "docsrs".to_string()];
    rustdoc_flags.extend(strings("rustdoc-args"));
    let mut builds = vec![DocBuild {
        features,
        default_features: docs_rs.get("no-default-features").and_then(|v| v.as_bool()) != Some(true),
        rustdoc_flags,
        rustc_flags: strings("rustc-args"),
        what: "docs.rs settings",
    }];
    if declared.iter().any(|f| f == "full") {
        builds.push(DocBuild {
            features: vec!["full".into()],
            default_features: true,
            rustdoc_flags: Vec::new(),
            rustc_flags: Vec::new(),
            what: "feature `full`",
        });
    }
    builds.push(DocBuild {
        features: Vec::new(),
        default_features: true,
        rustdoc_flags: Vec::new(),
        rustc_flags: Vec::new(),
        what: "default features",
    });
    builds
}

/// Builds the crate's rustdoc JSON, trying `doc_builds` in order. With the JSON comes a note
/// when it is not the docs.rs build (what failed, what was used instead).
async fn rustdoc_json(
    build_dir: &Path,
    manifest: &toml::Table,
    dep: &Dependency,
    deadline: Duration,
) -> Result<(Value, Option<String>)> {
    let lib = lib_name(manifest, &dep.name);
    let started = std::time::Instant::now();
    let mut first_err_opt: Option<DocdexError> = None;
    let mut last_err = None;
    for build in doc_builds(manifest) {
        let remaining = deadline.saturating_sub(started.elapsed());
        if remaining.is_zero() {
            break;
        }
        let wrapper = tempfile::Builder::new().prefix("doc-").tempdir_in(build_dir)?;
        write_wrapper(wrapper.path(), dep, &build.features, build.default_features)?;
        let mut command = cargo_command(build_dir);
        let mut rustdoc_flags =
            vec!["-Z".to_string(), "unstable-options".into(), "--output-format".into(), "json".into()];
        rustdoc_flags.extend(build.rustdoc_flags);
        command
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTDOCFLAGS", rustdoc_flags.join(" "))
            .arg("doc")
            .arg("--manifest-path")
            .arg(wrapper.path().join("Cargo.toml"))
            .arg("-p")
            .arg(format!("{}@{}", dep.name, dep.version))
            .arg("--no-deps");
        if !build.rustc_flags.is_empty() {
            // docs.rs passes `rustc-args` to every crate of the build, as RUSTFLAGS does.
            command.env("RUSTFLAGS", build.rustc_flags.join(" "));
        }
        let output = build_dir.join("target").join("doc").join(format!("{lib}.json"));
        let _ = std::fs::remove_file(&output);
        match run_command(command, &format!("rustdoc for {}@{}", dep.name, dep.version), remaining).await {
            Ok(_) => {
                let bytes = std::fs::read(&output)
                    .map_err(|err| DocdexError::internal(format!("rustdoc wrote no {}: {err}", output.display())))?;
                let _ = std::fs::remove_file(&output);
                let json = serde_json::from_slice(&bytes).map_err(|err| {
                    DocdexError::internal(format!("rustdoc JSON of {} is unreadable: {err}", dep.name))
                })?;
                let note_opt = first_err_opt
                    .map(|err| format!("built with {} after the docs.rs build failed: {}", build.what, err.message));
                return Ok((json, note_opt));
            }
            Err(err) => {
                tracing::debug!(library = %dep.name, build = build.what, error = %err.message, "rustdoc build failed");
                if first_err_opt.is_none() {
                    first_err_opt = Some(err.clone());
                }
                last_err = Some(err);
            }
        }
    }
    Err(last_err.unwrap_or_else(|| DocdexError::new(ErrorCode::Timeout, "no time left to build rustdoc JSON")))
}

fn kind_of(item: &Value) -> Option<&str> {
    item.get("inner")?.as_object()?.keys().next().map(String::as_str)
}

fn short_kind(kind: &str) -> &str {
    match kind {
        "function" => "fn",
        "module" => "mod",
        "type_alias" => "type",
        "constant" => "const",
        "proc_macro" => "macro",
        "assoc_const" => "const",
        "assoc_type" => "type",
        other => other,
    }
}

/// Reads a rustdoc JSON crate (any recent format version: only long-stable fields are used)
/// into items and aliases.
///
/// Items are named by a public path: crates define much in private modules and re-export it
/// (`tokio::spawn` is defined in `tokio::task::spawn::spawn`, a private module), so a first
/// pass collects every public path an item is reachable by (its module's children and the
/// `pub use`s), and the second names each item by one of them (`canonical_path`) and
/// records the others as aliases.
pub fn convert(json: &Value, dep: &Dependency) -> RustDocs {
    let index = json.get("index").and_then(|i| i.as_object());
    let paths = json.get("paths").and_then(|p| p.as_object());
    let mut docs = RustDocs { crate_name: dep.name.clone(), version: dep.version.clone(), ..RustDocs::default() };
    let (Some(index), Some(root)) = (index, json.get("root")) else { return docs };
    let id_key = |v: &Value| v.as_u64().map(|n| n.to_string()).or_else(|| v.as_str().map(str::to_string));
    let Some(root_key) = id_key(root) else { return docs };
    let definition_of = |key: &str| -> Option<String> {
        let entry = paths?.get(key)?;
        let parts: Vec<&str> = entry.get("path")?.as_array()?.iter().filter_map(|p| p.as_str()).collect();
        (!parts.is_empty()).then(|| parts.join("::"))
    };
    let root_name =
        index.get(&root_key).and_then(|r| r.get("name")).and_then(|n| n.as_str()).unwrap_or(&dep.name).to_string();

    // Pass 1: public modules (each walked once, at the first path reached) and the public
    // paths of every other item.
    let mut walked: HashMap<String, String> = HashMap::new();
    let mut modules: Vec<(String, String)> = Vec::new();
    let mut reachable: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // (module key, its path, whether it is a glob import: children only, no module item)
    let mut stack = vec![(root_key, root_name.clone(), false)];
    while let Some((key, path, glob)) = stack.pop() {
        let Some(module) = index.get(&key) else { continue };
        if !glob {
            if let Some(first) = walked.get(&key) {
                // Reached again through a re-export: an alias of the module.
                if *first != path {
                    docs.aliases.insert(path.clone(), first.clone());
                }
                continue;
            }
            walked.insert(key.clone(), path.clone());
            modules.push((key.clone(), path.clone()));
        }
        let children = module.pointer("/inner/module/items").and_then(|i| i.as_array()).cloned().unwrap_or_default();
        for child_id in children {
            let Some(child_key) = id_key(&child_id) else { continue };
            let Some(child) = index.get(&child_key) else { continue };
            // Glob-imported children are private to their module unless public themselves.
            if child.get("visibility").and_then(|v| v.as_str()) != Some("public") {
                continue;
            }
            let Some(kind) = kind_of(child) else { continue };
            if kind == "use" {
                let Some(use_) = child.pointer("/inner/use") else { continue };
                let name = use_.get("name").and_then(|n| n.as_str()).unwrap_or("");
                let target = use_.get("id").and_then(id_key).filter(|t| index.contains_key(t));
                let is_glob = use_.get("is_glob").and_then(|g| g.as_bool()) == Some(true);
                match target {
                    Some(t) if is_glob => {
                        if index.get(&t).and_then(kind_of) == Some("module") && !glob {
                            stack.push((t, path.clone(), true));
                        }
                    }
                    Some(t) if !name.is_empty() => {
                        let here = format!("{path}::{name}");
                        if index.get(&t).and_then(kind_of) == Some("module") {
                            stack.push((t, here, false));
                        } else {
                            reachable.entry(t).or_default().push(here);
                        }
                    }
                    _ => {
                        // Another crate's item: an alias to its own path.
                        let target_path =
                            use_.get("id").and_then(id_key).as_deref().and_then(definition_of).or_else(|| {
                                use_.get("source")
                                    .and_then(|s| s.as_str())
                                    .map(|s| s.replace("crate::", &format!("{root_name}::")))
                            });
                        if let (Some(target_path), false) = (target_path, name.is_empty() || is_glob) {
                            docs.aliases.insert(format!("{path}::{name}"), target_path);
                        }
                    }
                }
                continue;
            }
            let Some(name) = child.get("name").and_then(|n| n.as_str()) else { continue };
            match kind {
                "module" => stack.push((child_key, format!("{path}::{name}"), false)),
                "impl" => {}
                _ => reachable.entry(child_key).or_default().push(format!("{path}::{name}")),
            }
        }
    }

    // Modules: named by the path they were first reached at.
    let mut sources: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, path) in &modules {
        let Some(module) = index.get(key) else { continue };
        docs.items.push(RustItem {
            path: path.clone(),
            kind: "mod".into(),
            signature: format!("pub mod {}", path.rsplit("::").next().unwrap_or(path)),
            docs: module.get("docs").and_then(|d| d.as_str()).unwrap_or("").to_string(),
        });
        if let Some(definition) = definition_of(key).filter(|d| d != path) {
            docs.aliases.insert(definition, path.clone());
        }
    }

    // Pass 2: every other item once, at its canonical public path, with its members.
    for (key, mut public_paths) in reachable {
        let Some(item) = index.get(&key) else { continue };
        let Some(kind) = kind_of(item) else { continue };
        public_paths.sort();
        public_paths.dedup();
        let definition_opt = definition_of(&key);
        let canonical = canonical_path(&public_paths, definition_opt.as_deref());
        for other in public_paths.iter().chain(definition_opt.as_ref()) {
            if *other != canonical {
                docs.aliases.insert(other.clone(), canonical.clone());
            }
        }
        push_item(&mut docs.items, item, short_kind(kind), &canonical, &mut sources);
        // Methods: inherent impls of types, and a trait's own items.
        let mut members: Vec<Value> = Vec::new();
        if let Some(impls) = item.pointer(&format!("/inner/{kind}/impls")).and_then(|i| i.as_array()) {
            for impl_id in impls {
                let Some(impl_) = id_key(impl_id).and_then(|k| index.get(&k)) else { continue };
                if impl_.pointer("/inner/impl/trait").is_some_and(|t| !t.is_null()) {
                    continue;
                }
                members
                    .extend(impl_.pointer("/inner/impl/items").and_then(|i| i.as_array()).cloned().unwrap_or_default());
            }
        }
        if kind == "trait" {
            members.extend(item.pointer("/inner/trait/items").and_then(|i| i.as_array()).cloned().unwrap_or_default());
        }
        for member_id in members {
            let Some(member) = id_key(&member_id).and_then(|k| index.get(&k)) else { continue };
            let visibility = member.get("visibility").and_then(|v| v.as_str()).unwrap_or("");
            if kind != "trait" && visibility != "public" {
                continue;
            }
            let (Some(member_kind), Some(member_name)) = (kind_of(member), member.get("name").and_then(|n| n.as_str()))
            else {
                continue;
            };
            let member_kind = if member_kind == "function" { "method" } else { short_kind(member_kind) };
            push_item(&mut docs.items, member, member_kind, &format!("{canonical}::{member_name}"), &mut sources);
        }
    }
    docs.items.sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.cmp(&b.kind)));
    docs.items.dedup_by(|a, b| a.path == b.path && a.kind == b.kind);
    docs
}

/// The public path an item is documented at: its definition path when that is public (so
/// `serde::Deserialize` is an alias of `serde::de::Deserialize`); else the public path
/// sharing the longest prefix with the definition (`tokio::task::spawn` for
/// `tokio::task::spawn::spawn`, not the crate-root re-export); ties go to the shorter path.
fn canonical_path(public_paths: &[String], definition_opt: Option<&str>) -> String {
    if let Some(definition) = definition_opt {
        if public_paths.iter().any(|p| p == definition) {
            return definition.to_string();
        }
    }
    let shared = |path: &str| -> usize {
        let Some(definition) = definition_opt else { return 0 };
        path.split("::").zip(definition.split("::")).take_while(|(a, b)| a == b).count()
    };
    public_paths
        .iter()
        .max_by(|a, b| {
            shared(a)
                .cmp(&shared(b))
                .then_with(|| b.matches("::").count().cmp(&a.matches("::").count()))
                .then_with(|| b.cmp(a))
        })
        .cloned()
        .unwrap_or_default()
}

fn push_item(
    items: &mut Vec<RustItem>,
    item: &Value,
    kind: &str,
    path: &str,
    sources: &mut BTreeMap<String, Vec<String>>,
) {
    let name = path.rsplit("::").next().unwrap_or(path);
    let signature =
        item.get("span").and_then(|span| signature_from_span(span, sources)).unwrap_or_else(|| match kind {
            "macro" => format!("macro_rules! {name}"),
            other => format!("pub {other} {name}"),
        });
    items.push(RustItem {
        path: path.to_string(),
        kind: kind.to_string(),
        signature,
        docs: item.get("docs").and_then(|d| d.as_str()).unwrap_or("").to_string(),
    });
}

/// The declaration lines of an item, read from its source: up to the body's `{` or the
/// closing `;`, attributes and comments left out, at most 12 lines.
fn signature_from_span(span: &Value, sources: &mut BTreeMap<String, Vec<String>>) -> Option<String> {
    let file = span.get("filename")?.as_str()?.to_string();
    let begin = span.get("begin")?.get(0)?.as_u64()? as usize;
    let end = span.get("end")?.get(0)?.as_u64()? as usize;
    let lines = sources.entry(file.clone()).or_insert_with(|| {
        std::fs::read_to_string(&file).map(|t| t.lines().map(str::to_string).collect()).unwrap_or_default()
    });
    if begin == 0 || begin > lines.len() {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    for line in lines.iter().take(end.min(lines.len())).skip(begin - 1) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[") || trimmed.starts_with("//") {
            continue;
        }
        if let Some(brace) = line.find('{').filter(|_| !trimmed.starts_with("macro_rules!")) {
            let head = line[..brace].trim_end();
            if !head.trim().is_empty() {
                out.push(head.to_string());
            }
            break;
        }
        out.push(line.trim_end().to_string());
        if trimmed.trim_end().ends_with(';') || out.len() >= 12 || trimmed.starts_with("macro_rules!") {
            break;
        }
    }
    let indent = out.iter().map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    let text = out.iter().map(|l| l.get(indent..).unwrap_or(l.trim_start())).collect::<Vec<_>>().join("\n");
    (!text.trim().is_empty()).then_some(text)
}

/// Docs text with its headings pushed under the item's heading (rustdoc's `# Examples`
/// must not start a section of its own), fences left alone.
fn demote_headings(docs: &str) -> String {
    let mut in_fence = false;
    docs.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
                return line.to_string();
            }
            if !in_fence && line.starts_with('#') {
                format!("###{line}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One Markdown page per module: the module's docs, then each item (signature in a code
/// block, then its docs), methods under their type.
pub fn module_pages(docs: &RustDocs) -> Vec<(String, String)> {
    let modules: HashSet<&str> = docs.items.iter().filter(|i| i.kind == "mod").map(|i| i.path.as_str()).collect();
    let mut pages: BTreeMap<String, String> = BTreeMap::new();
    for item in &docs.items {
        if item.kind == "mod" {
            let page = pages.entry(item.path.clone()).or_default();
            let body = format!("# {}\n\n{}\n\n", item.path, demote_headings(&item.docs));
            page.insert_str(0, &body);
            continue;
        }
        // The module is the longest prefix that is a module (methods sit under their type).
        let mut module = item.path.as_str();
        while let Some((parent, _)) = module.rsplit_once("::") {
            module = parent;
            if modules.contains(module) {
                break;
            }
        }
        let level = if item.kind == "method" { "###" } else { "##" };
        let page = pages.entry(module.to_string()).or_default();
        page.push_str(&format!(
            "{level} {} {}\n\n```rust\n{}\n```\n\n{}\n\n",
            item.kind,
            item.path,
            item.signature,
            demote_headings(&item.docs)
        ));
    }
    pages.into_iter().map(|(module, text)| (format!("api/{}.md", module.replace("::", "/")), text)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::libs::Ecosystem;

    #[tokio::test]
    async fn a_failed_fetch_says_what_to_do() {
        // The tool's error line is kept even when context lines follow it.
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(
            "echo '    Updating index' >&2; echo 'error: failed to select a version for the requirement `serde = \"=9.9.9\"`' >&2; \
             echo 'candidate versions found which did not match: 1.0.229' >&2; echo 'location searched: index' >&2; \
             echo 'required by package `x`' >&2; echo 'if you are looking for the prerelease package' >&2; exit 101",
        );
        let err = crate::libs::run_command(command, "`cargo fetch` of serde@9.9.9", Duration::from_secs(10))
            .await
            .unwrap_err();
        assert!(err.message.contains("failed to select a version"), "{}", err.message);
        let dep = Dependency::new(Ecosystem::Cargo, "serde", "9.9.9", true);
        let err = with_fetch_hint(err, &dep);
        assert!(err.hint.as_deref().unwrap().contains("docdexd crate versions serde"), "{err:?}");
        let yanked = DocdexError::new(ErrorCode::LibraryUnavailable, "error: version 0.4.10 is yanked");
        let dep = Dependency::new(Ecosystem::Cargo, "slab", "0.4.10", true);
        assert!(with_fetch_hint(yanked, &dep).hint.unwrap().contains("run `cargo fetch` in the repo"));
    }

    #[test]
    fn rustdoc_json_items_methods_and_reexport_aliases() {
        let json = serde_json::json!({
            "root": 0,
            "format_version": 57,
            "index": {
                "0": {"name": "demo", "visibility": "public", "docs": "Demo crate.", "inner": {"module": {"items": [1, 2, 5, 7]}}},
                "1": {"name": "de", "visibility": "public", "docs": "Deserialization.", "inner": {"module": {"items": [3]}}},
                "2": {"name": null, "visibility": "public", "docs": null, "inner": {"use": {"source": "crate::de::Deserialize", "name": "Deserialize", "id": 3, "is_glob": false}}},
                "3": {"name": "Deserialize", "visibility": "public", "docs": "A data structure.\n\n# Examples\n\n```rust\nlet x = 1;\n```", "inner": {"trait": {"items": [4]}}},
                "4": {"name": "deserialize", "visibility": "default", "docs": "Deserialize this value.", "inner": {"function": {}}},
                "5": {"name": "Thing", "visibility": "public", "docs": "A thing.", "inner": {"struct": {"impls": [6]}}},
                "6": {"name": null, "visibility": "default", "inner": {"impl": {"trait": null, "items": [8]}}},
                "7": {"name": "hidden", "visibility": "crate", "docs": "", "inner": {"function": {}}},
                "8": {"name": "new", "visibility": "public", "docs": "Makes one.", "inner": {"function": {}}}
            },
            "paths": {
                "3": {"crate_id": 0, "path": ["demo", "de", "Deserialize"], "kind": "trait"},
                "5": {"crate_id": 0, "path": ["demo", "Thing"], "kind": "struct"}
            }
        });
        let docs = convert(&json, &Dependency::new(Ecosystem::Cargo, "demo", "1.0.0", true));
        let paths: Vec<(&str, &str)> = docs.items.iter().map(|i| (i.path.as_str(), i.kind.as_str())).collect();
        assert_eq!(
            paths,
            vec![
                ("demo", "mod"),
                ("demo::Thing", "struct"),
                ("demo::Thing::new", "method"),
                ("demo::de", "mod"),
                ("demo::de::Deserialize", "trait"),
                ("demo::de::Deserialize::deserialize", "method"),
            ]
        );
        assert_eq!(docs.aliases.get("demo::Deserialize").map(String::as_str), Some("demo::de::Deserialize"));
        let pages = module_pages(&docs);
        let de = &pages.iter().find(|(p, _)| p == "api/demo/de.md").expect("a page per module").1;
        assert!(de.starts_with("# demo::de\n"), "{de}");
        assert!(de.contains("## trait demo::de::Deserialize") && de.contains("#### Examples"), "{de}");
        assert!(de.contains("### method demo::de::Deserialize::deserialize"), "{de}");
    }
}
