//! The actor system: spawns every actor in order (downstream first) and wires their
//! addresses, for a one-shot command (`start_actors`) or a daemon (`start_daemon_actors`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Addr, SyncArbiter};

use super::discovery::Discovery;
use super::embedder::{Embedder, EmbedderSettings, EmbedderShared};
use super::ingestor::Ingestor;
use super::memory_store::MemoryStore;
use super::repo_manager::RepoManager;
use super::scraper::Scraper;
use super::tool_dispatcher::{DispatcherParts, ToolDispatcher};
use crate::config::LoadedConfig;

/// Embedder threads: while one runs a background batch, a query's message is taken by the
/// other at once (and waits only for the model, not behind the indexing run's queue).
const EMBEDDER_THREADS: usize = 2;

/// Embedding model instances the embedder threads share.
const MODEL_INSTANCES: usize = 1;

/// Addresses of the running actors.
#[derive(Clone)]
pub struct Actors {
    pub dispatcher: Addr<ToolDispatcher>,
    pub repo_manager: Addr<RepoManager>,
    pub embedder: Addr<Embedder>,
    pub web: super::tool_dispatcher::WebActors,
    pub chat: super::tool_dispatcher::ChatActors,
}

/// Spawns the actor system for a one-shot CLI command (any repo the user names but `/`).
/// Must run inside an actix `System`.
pub fn start_actors(loaded: &LoadedConfig, default_repo_opt: Option<PathBuf>) -> Actors {
    start_actors_with(loaded, default_repo_opt, crate::ingest::repo_policy::RepoPolicy::unrestricted(), None)
}

/// Spawns the actor system for a daemon (`daemon`, `mcp`): repos named by requests must be
/// inside the allowed roots (see `repo_policy`).
pub fn start_daemon_actors(loaded: &LoadedConfig, default_repo_opt: Option<PathBuf>) -> Actors {
    let policy =
        crate::ingest::repo_policy::RepoPolicy::daemon(&loaded.config.repos.allowed_roots, default_repo_opt.as_deref());
    let config = &loaded.config;
    let settings = super::repo_supervisor::SupervisorSettings {
        watch: config.watcher.enabled,
        debounce: Duration::from_millis(config.watcher.debounce_ms),
        max_delay: Duration::from_millis(config.watcher.max_delay_ms.max(config.watcher.debounce_ms)),
        repo_idle: Duration::from_secs(config.core.repo_idle_secs),
        model_idle: Duration::from_secs(config.embedding.idle_unload_secs),
        max_mounted: config.core.max_mounted_repos,
        state_dir: std::fs::canonicalize(loaded.state_dir()).unwrap_or_else(|_| loaded.state_dir()),
    };
    start_actors_with(loaded, default_repo_opt, policy, Some(settings))
}

/// Spawns the actor system, downstream first.
fn start_actors_with(
    loaded: &LoadedConfig,
    default_repo_opt: Option<PathBuf>,
    policy: crate::ingest::repo_policy::RepoPolicy,
    supervisor_settings_opt: Option<super::repo_supervisor::SupervisorSettings>,
) -> Actors {
    let state_dir = loaded.state_dir();
    let indexer_settings = super::indexer::IndexerSettings {
        writer_heap_bytes: loaded.config.index.writer_heap_bytes,
        cache_max_entries: loaded.config.embedding.cache_max_entries,
    };
    let map_bytes = loaded.config.index.lmdb_map_bytes;
    let store = loaded.config.store.clone();
    let manager_policy = policy.clone();
    let repo_manager = SyncArbiter::start(1, move || {
        RepoManager::new(&state_dir, manager_policy.clone(), indexer_settings, map_bytes, store.clone())
    });
    // Chunking (tree-sitter parsing) is the most expensive part of indexing: one thread per core.
    let ingest_threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let ingestor = SyncArbiter::start_with_thread_builder(
        ingest_threads,
        || std::thread::Builder::new().name("docdex-ingest".into()),
        || {
            super::ingestor::lower_this_thread_priority();
            Ingestor
        },
    );
    // Two threads over one model instance (loaded on first use): background embedding sends
    // one batch at a time, so a query waits at most for the batch in progress, and a second
    // instance's memory (measured: 701 MiB after hybrid searches with two, see
    // MODEL_INSTANCES) is not paid for.
    let settings = embedder_settings(loaded);
    let embedder_shared = EmbedderShared::new(MODEL_INSTANCES);
    let shared = Arc::clone(&embedder_shared);
    let embedder = SyncArbiter::start(EMBEDDER_THREADS, move || Embedder::new(settings.clone(), Arc::clone(&shared)));
    let memory = SyncArbiter::start(1, || MemoryStore);
    let config = Arc::new(loaded.config.clone());
    let state_dir = loaded.state_dir();
    let discovery = Discovery::new(&config.web, &state_dir).expect("the discovery HTTP client builds").start();
    let scraper = Scraper::new(&config, &state_dir).expect("the scraper HTTP client builds").start();
    let gateway = super::llm_gateway::LlmGateway::new(&config.llm).start();
    let dag = SyncArbiter::start(1, || super::dag_logger::DagLogger);
    let (dispatcher, web, chat) = ToolDispatcher::start_with(DispatcherParts {
        repo_manager: repo_manager.clone(),
        ingestor,
        embedder: embedder.clone(),
        memory,
        discovery,
        scraper,
        gateway,
        dag,
        config,
        default_repo_opt,
        repo_policy: policy,
        embedder_shared,
        supervisor_settings_opt,
        state_dir,
        crate_cache: SyncArbiter::start(1, super::crate_cache::CrateCache::default),
    });
    Actors { dispatcher, repo_manager, embedder, web, chat }
}

/// The Embedder's settings from the configuration.
pub fn embedder_settings(loaded: &LoadedConfig) -> EmbedderSettings {
    let embedding = &loaded.config.embedding;
    EmbedderSettings {
        enabled: embedding.enabled,
        paths: crate::index::models::ModelPaths::under(&loaded.models_dir()),
        batch_size: embedding.batch_size,
        max_tokens: embedding.max_tokens,
        threads: embedding.threads,
        static_vectors: embedding.static_vectors,
        model_vectors: embedding.model_vectors,
    }
}
