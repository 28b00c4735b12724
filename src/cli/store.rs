//! `docdexd store copy`: this home's embedded repos into the team store, as they are.

use std::path::Path;

use crate::actors::repo_manager::{list_registry, RepoFingerprint};
use crate::cli::args::StoreAction;
use crate::config::LoadedConfig;
use crate::index::{copy_repo, RepoIndex, StoreBackend};
use crate::postgres::PgPool;
use crate::protocol::{DocdexError, Result};

pub(super) fn run_store(loaded: &LoadedConfig, action: StoreAction) -> Result<i32> {
    let StoreAction::Copy { to, repo, json } = action;
    let repos_dir = loaded.state_dir().join("repos");
    let mut entries: Vec<_> =
        list_registry(&repos_dir)?.into_iter().filter_map(|e| e.meta_opt.map(|m| (e.dir, m))).collect();
    if let Some(repo) = &repo {
        let canonical = std::fs::canonicalize(repo)
            .map_err(|_| DocdexError::repo_not_found(&repo.display().to_string(), "does not exist"))?;
        let fingerprint = RepoFingerprint::of(&canonical).0;
        entries.retain(|(_, meta)| meta.fingerprint == fingerprint);
        if entries.is_empty() {
            return Err(DocdexError::repo_not_indexed(&canonical.display().to_string()));
        }
    }
    let pool = PgPool::open(&to)?;
    let target_backend = StoreBackend::Postgres(pool.clone());
    let map_bytes = loaded.config.index.lmdb_map_bytes;
    let mut copied = Vec::new();
    for (dir, meta) in &entries {
        let root = Path::new(&meta.canonical_path);
        if !dir.join("meta.lmdb").exists() {
            // A repo this home only ever served from a store has nothing embedded to copy.
            continue;
        }
        eprintln!("copying {} ...", meta.canonical_path);
        let source = RepoIndex::open_with(root, &meta.fingerprint, dir, map_bytes)?;
        let target = RepoIndex::open_in(root, &meta.fingerprint, dir, &target_backend)?;
        let copy = copy_repo(&source, &target)?;
        if !json {
            crate::outln!(
                "copied {}: {} index files ({}), {} chunks, {} chunk vectors, {} static vectors, {} memory vectors, {} records",
                meta.canonical_path,
                copy.index_files,
                super::output::human_bytes(copy.index_bytes),
                copy.chunks,
                copy.records.chunk_vectors,
                copy.records.static_vectors,
                copy.records.memory_vectors,
                copy.records.records
            );
        }
        let mut value = serde_json::to_value(&copy)?;
        value["repo"] = meta.canonical_path.clone().into();
        copied.push(value);
    }
    if json {
        let out = serde_json::json!({ "to": pool.display_url(), "repos": copied });
        super::output::print_out(&super::output::to_json(&out)?)?;
    } else {
        crate::outln!("{} repos copied into {}", copied.len(), pool.display_url());
    }
    Ok(0)
}
