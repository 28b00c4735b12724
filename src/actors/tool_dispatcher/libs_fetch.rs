//! `libs fetch` as a job: detect a repo's dependencies, get each library's docs into the
//! machine-wide cache (bounded concurrency, bounded time each, a failure never stops the
//! run), then ingest the docs into the repo's index with `source = library`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures_util::stream::{self, StreamExt};
use tokio::sync::mpsc::UnboundedSender;

use crate::actors::indexer::{IngestLibraries, LibraryIngest};
use crate::actors::repo_manager::RepoHandle;
use crate::config::LibsConfig;
use crate::index::{LibraryDoc, LibraryRecord};
use crate::ingest::{chunk_file, sha256_hex, Chunk, ChunkParams, Language};
use crate::libs::detect::{compare_versions, normalize_python_name};
use crate::libs::{library_doc_path, CachedLibrary, Dependency, Ecosystem};
use crate::protocol::{
    LibraryFailure, LibraryInfo, LibsFetchRequest, LibsFetchSummary, LibsProgress, Result, UnresolvedDependency,
};

/// The dependencies a fetch covers: direct ones (or all with `--all`), one version per
/// library (the direct one, else the highest), narrowed to `names` when given. Names that
/// match nothing come back as failures.
fn plan(mut deps: Vec<Dependency>, request: &LibsFetchRequest) -> (Vec<Dependency>, Vec<LibraryFailure>) {
    deps.sort_by(|a, b| {
        (a.ecosystem, &a.name, !a.direct)
            .cmp(&(b.ecosystem, &b.name, !b.direct))
            .then_with(|| compare_versions(&b.version, &a.version))
    });
    deps.dedup_by(|later, first| later.ecosystem == first.ecosystem && later.name == first.name);
    if request.names.is_empty() {
        if !request.all {
            deps.retain(|d| d.direct);
        }
        return (deps, Vec::new());
    }
    let wanted = |dep: &Dependency, name: &str| {
        dep.name.eq_ignore_ascii_case(name)
            || (dep.ecosystem == Ecosystem::Python && normalize_python_name(&dep.name) == normalize_python_name(name))
    };
    let mut failures = Vec::new();
    for name in &request.names {
        if !deps.iter().any(|d| wanted(d, name)) {
            failures.push(LibraryFailure {
                ecosystem: String::new(),
                name: name.clone(),
                version: String::new(),
                reason: "not a dependency of this repo (no manifest or lockfile names it)".into(),
            });
        }
    }
    deps.retain(|d| request.names.iter().any(|n| wanted(d, n)));
    (deps, failures)
}

/// A library's doc files, chunked as the repo's own files would be.
fn chunk_library(entry: &CachedLibrary) -> Vec<(LibraryDoc, Vec<Chunk>)> {
    let m = &entry.manifest;
    let mut out = Vec::with_capacity(m.docs.len());
    for relative in &m.docs {
        let Ok(text) = std::fs::read_to_string(entry.doc_path(relative)) else { continue };
        let language = Language::detect(Path::new(relative));
        let chunks = chunk_file(language, &text, ChunkParams::default());
        if chunks.is_empty() {
            continue;
        }
        let doc = LibraryDoc {
            name: m.name.clone(),
            version: m.version.clone(),
            path: library_doc_path(m.ecosystem, &m.name, &m.version, relative),
            language: language.name().to_string(),
        };
        out.push((doc, chunks));
    }
    out
}

/// What fetching one library gave.
struct Fetched {
    dep: Dependency,
    outcome: Result<(CachedLibrary, bool)>,
}

pub async fn run_libs_fetch(
    handle: &Arc<RepoHandle>,
    config: &LibsConfig,
    cache_root: &Path,
    request: &LibsFetchRequest,
    progress_opt: Option<UnboundedSender<LibsProgress>>,
) -> Result<LibsFetchSummary> {
    let started = Instant::now();
    let root = handle.index.root.clone();
    // With names, transitive dependencies may be named too.
    let all = request.all || !request.names.is_empty();
    let detected = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || crate::libs::detect::detect(&root, all)).await?
    };
    let (deps, mut failed) = plan(detected.deps, request);
    let wanted_keys: BTreeSet<String> = deps.iter().map(Dependency::key).collect();

    let total = deps.len() as u64;
    let mut done = 0u64;
    let mut fetches = stream::iter(deps.into_iter().map(|dep| {
        let root: PathBuf = root.clone();
        async move {
            crate::libs::remove_stale_partials(cache_root, &dep);
            let outcome = crate::libs::ensure_cached(&root, cache_root, &dep, config).await;
            Fetched { dep, outcome }
        }
    }))
    .buffer_unordered(config.max_concurrent.max(1));
    let mut ready = Vec::new();
    let (mut fetched, mut from_cache) = (0u64, 0u64);
    while let Some(Fetched { dep, outcome }) = fetches.next().await {
        done += 1;
        let outcome_text = match &outcome {
            Ok((_, true)) => "cached".to_string(),
            Ok((_, false)) => "fetched".to_string(),
            Err(err) => format!("failed: {}", err.message),
        };
        tracing::info!(library = %format!("{}@{}", dep.name, dep.version), outcome = %outcome_text, "libs fetch");
        if let Some(progress) = &progress_opt {
            let _ = progress.send(LibsProgress {
                done,
                total,
                library: format!("{}@{}", dep.name, dep.version),
                outcome: outcome_text,
            });
        }
        match outcome {
            Ok((entry, cached)) => {
                if cached {
                    from_cache += 1;
                } else {
                    fetched += 1;
                }
                ready.push((dep, entry, cached));
            }
            Err(err) => failed.push(LibraryFailure {
                ecosystem: dep.ecosystem.as_str().to_string(),
                name: dep.name,
                version: dep.version,
                reason: match err.hint {
                    Some(hint) => format!("{} ({hint})", err.message),
                    None => err.message,
                },
            }),
        }
    }
    drop(fetches);
    ready.sort_by(|a, b| (a.0.ecosystem, &a.0.name).cmp(&(b.0.ecosystem, &b.0.name)));

    // What the index holds already: unchanged entries are not ingested again.
    let index = Arc::clone(&handle.index);
    let known: HashMap<String, LibraryRecord> = tokio::task::spawn_blocking(move || -> Result<_> {
        let rtxn = index.store.read_txn()?;
        Ok(index.store.all_libraries(&rtxn)?.into_iter().collect())
    })
    .await??;
    let remove: Vec<String> = if request.names.is_empty() {
        known.keys().filter(|key| !wanted_keys.contains(*key)).cloned().collect()
    } else {
        Vec::new()
    };

    let mut libraries = Vec::with_capacity(ready.len());
    let mut to_ingest = Vec::new();
    for (dep, entry, cached) in ready {
        let manifest_bytes = std::fs::read(entry.dir.join(crate::libs::MANIFEST_FILE)).unwrap_or_default();
        let content_hash = sha256_hex(&manifest_bytes);
        let key = dep.key();
        let unchanged = known.get(&key).is_some_and(|r| r.version == dep.version && r.content_hash == content_hash);
        let m = &entry.manifest;
        libraries.push(LibraryInfo {
            ecosystem: dep.ecosystem.as_str().to_string(),
            name: dep.name.clone(),
            version: dep.version.clone(),
            direct: dep.direct,
            origin: m.origin.clone(),
            from_cache: cached,
            docs: m.docs.len() as u64,
            items: m.items,
            chunks_written: 0,
            notes: m.notes.clone(),
        });
        if unchanged {
            continue;
        }
        let docs = {
            let entry = entry.clone();
            tokio::task::spawn_blocking(move || chunk_library(&entry)).await?
        };
        let record = LibraryRecord {
            ecosystem: dep.ecosystem.as_str().to_string(),
            name: dep.name.clone(),
            version: dep.version.clone(),
            content_hash,
            paths: Vec::new(),
            chunk_ids: Vec::new(),
            ingested_at: crate::protocol::time::unix_now(),
        };
        to_ingest.push((libraries.len() - 1, LibraryIngest { record_key: key, record, docs }));
    }

    let (positions, ingests): (Vec<usize>, Vec<LibraryIngest>) = to_ingest.into_iter().unzip();
    let written = {
        let _one_writer_at_a_time = handle.index_run.lock().await;
        handle.indexer.send(IngestLibraries { libraries: ingests, remove: remove.clone() }).await??
    };
    for (position, count) in positions.into_iter().zip(&written) {
        libraries[position].chunks_written = *count;
    }
    let index = Arc::clone(&handle.index);
    let chunks_pending =
        tokio::task::spawn_blocking(move || index.store.read_txn().and_then(|t| index.store.pending_count(&t)))
            .await??;
    Ok(LibsFetchSummary {
        repo: root.display().to_string(),
        manifests: detected.manifests,
        fetched,
        from_cache,
        libraries,
        failed,
        unresolved: detected
            .unresolved
            .into_iter()
            .map(|(ecosystem, name, requirement)| UnresolvedDependency {
                ecosystem: ecosystem.as_str().to_string(),
                name,
                requirement,
            })
            .collect(),
        removed: remove,
        chunks_written: written.iter().sum(),
        chunks_pending,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_keeps_one_version_per_library_direct_first_and_reports_unknown_names() {
        let deps = vec![
            Dependency::new(Ecosystem::Cargo, "syn", "1.0.109", false),
            Dependency::new(Ecosystem::Cargo, "syn", "2.0.100", false),
            Dependency::new(Ecosystem::Cargo, "serde", "1.0.219", true),
            Dependency::new(Ecosystem::Python, "Typing_Extensions", "4.12.2", true),
        ];
        let (direct, failures) = plan(deps.clone(), &LibsFetchRequest::default());
        assert!(failures.is_empty());
        let names: Vec<_> = direct.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["serde", "Typing_Extensions"]);

        let all = LibsFetchRequest { all: true, ..Default::default() };
        let (every, _) = plan(deps.clone(), &all);
        let syn: Vec<_> = every.iter().filter(|d| d.name == "syn").map(|d| d.version.as_str()).collect();
        assert_eq!(syn, ["2.0.100"]);

        let named = LibsFetchRequest { names: vec!["typing-extensions".into(), "tokio".into()], ..Default::default() };
        let (some, failures) = plan(deps, &named);
        assert_eq!(some.len(), 1);
        assert_eq!(some[0].name, "Typing_Extensions");
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].name, "tokio");
    }
}
