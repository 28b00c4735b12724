//! RepoSupervisor: the daemon's mounted repos. Mounting a repo starts its index run (the
//! first, or a refresh) and a file watcher; saved, created, deleted and renamed files are
//! re-indexed after a quiet moment (`[watcher] debounce_ms`), a burst coalescing into one
//! run. A timer releases repos nobody used for `[core] repo_idle_secs` (their handles reopen on
//! the next request) and unloads the embedding model after `[embedding] idle_unload_secs`.
//!
//! Each mount publishes its state on a watch channel, so a search that arrives during the
//! repo's first index run can wait for it (bounded) instead of being told the repo is not
//! indexed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message, Recipient, WrapFuture};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::watch;

use super::embedder::EmbedderShared;
use super::repo_manager::{OpenRepo, Release, ReleaseIdle, RepoManager};
use crate::ingest::walk::DOCDEX_IGNORE_FILE;
use crate::protocol::{DocdexError, ErrorCode, IndexProgress, IndexSummary, MountedRepo, Result};

/// How the supervisor behaves (from the configuration).
#[derive(Debug, Clone)]
pub struct SupervisorSettings {
    /// Watch mounted repos for changes.
    pub watch: bool,
    /// Quiet time after the last change before a re-index starts.
    pub debounce: Duration,
    /// A change waits at most this long, however busy the files stay.
    pub max_delay: Duration,
    /// Release repos idle this long (zero: never).
    pub repo_idle: Duration,
    /// Unload the embedding model after this long unused (zero: never).
    pub model_idle: Duration,
    /// Most repos mounted at once; beyond it the least recently used idle one is unmounted.
    pub max_mounted: usize,
    /// Paths never worth re-indexing for (docdex's own state, when it lives inside a repo).
    pub state_dir: PathBuf,
}

/// A mounted repo's state, as requests waiting on it see it.
#[derive(Debug, Clone, Default)]
pub struct MountState {
    /// A complete index exists (searches answer from it, even while a refresh runs).
    pub searchable: bool,
    pub running: bool,
    pub progress_opt: Option<IndexProgress>,
    pub runs_completed: u64,
    pub last_error_opt: Option<String>,
}

struct Mount {
    state: watch::Sender<MountState>,
    watcher_opt: Option<RecommendedWatcher>,
    ignore: Gitignore,
    mounted_at: Instant,
    last_used: Instant,
    /// The first change not yet picked up by a run, and the latest one.
    first_change_opt: Option<Instant>,
    last_change_opt: Option<Instant>,
    changes_seen: u64,
    /// The paths (relative, `/`-separated) changed since the last run started: the next run
    /// reads only those. A folder stands for everything in it.
    changed: BTreeSet<String>,
    /// The next run walks the whole repo: the first one, new ignore rules, a watcher that
    /// lost events, a failed run, or more changed paths than `MAX_CHANGED_PATHS`.
    rescan: bool,
    /// Runs started by others (`RunStarted`) not ended yet.
    external_runs: u32,
    /// A run of the supervisor's own is going.
    own_run: bool,
}

/// A mounted repo's index run, with its progress, and the background embedding of what it
/// wrote: sent to whoever started the supervisor (the dispatcher runs it like any index
/// request, and counts it as the supervisor's own run).
#[derive(Message)]
#[rtype(result = "Result<IndexSummary>")]
pub struct RunIndex {
    pub repo: PathBuf,
    pub progress: tokio::sync::mpsc::UnboundedSender<IndexProgress>,
    /// Only these paths (relative; a folder for all it holds), as the watcher saw them
    /// change; `None` walks the whole repo.
    pub changed_opt: Option<Vec<String>>,
}

/// Changed paths past this many make the next run walk the whole repo: a branch switch or
/// a generator touching thousands of files is a walk's work anyway.
const MAX_CHANGED_PATHS: usize = 2_000;

/// A run refused because another process writes the repo (on the team store, another
/// daemon) is tried again this much later, until that writer is done: the change waits, it
/// is not dropped.
const LOCKED_RETRY: Duration = Duration::from_secs(2);

pub struct RepoSupervisor {
    run_index: Recipient<RunIndex>,
    repo_manager: Addr<RepoManager>,
    embedder: Arc<EmbedderShared>,
    settings: SupervisorSettings,
    mounts: HashMap<PathBuf, Mount>,
}

impl RepoSupervisor {
    pub fn new(
        run_index: Recipient<RunIndex>,
        repo_manager: Addr<RepoManager>,
        embedder: Arc<EmbedderShared>,
        settings: SupervisorSettings,
    ) -> RepoSupervisor {
        RepoSupervisor { run_index, repo_manager, embedder, settings, mounts: HashMap::new() }
    }

    fn mount(
        &mut self,
        repo: PathBuf,
        start_run: bool,
        ctx: &mut Context<Self>,
    ) -> Result<watch::Receiver<MountState>> {
        if let Some(mount) = self.mounts.get_mut(&repo) {
            mount.last_used = Instant::now();
            return Ok(mount.state.subscribe());
        }
        if self.mounts.len() >= self.settings.max_mounted.max(1) {
            self.unmount_least_recently_used()?;
        }
        let (state, receiver) = watch::channel(MountState { running: start_run, ..MountState::default() });
        let watcher_opt = if self.settings.watch { self.start_watcher(&repo, ctx) } else { None };
        let now = Instant::now();
        let mount = Mount {
            state,
            watcher_opt,
            ignore: ignore_matcher(&repo),
            mounted_at: now,
            last_used: now,
            first_change_opt: None,
            last_change_opt: None,
            changes_seen: 0,
            changed: BTreeSet::new(),
            rescan: true,
            external_runs: 0,
            own_run: false,
        };
        self.mounts.insert(repo.clone(), mount);
        tracing::info!(repo = %repo.display(), mounted = self.mounts.len(), "repo mounted");
        if start_run {
            self.start_run(repo.clone(), ctx);
        }
        // A repo indexed before is searchable at once; its refresh runs meanwhile.
        let repo_manager = self.repo_manager.clone();
        let path = repo.clone();
        ctx.spawn(
            async move {
                let handle = repo_manager.send(OpenRepo { path, create: false }).await.ok()?.ok()?;
                let index = Arc::clone(&handle.index);
                tokio::task::spawn_blocking(move || index.store.read_txn().and_then(|t| index.store.run_state(&t)))
                    .await
                    .ok()?
                    .ok()
                    .map(|state| state.indexed())
            }
            .into_actor(self)
            .map(move |indexed_opt, act, _| {
                if indexed_opt == Some(true) {
                    if let Some(mount) = act.mounts.get(&repo) {
                        mount.state.send_modify(|s| s.searchable = true);
                    }
                }
            }),
        );
        Ok(receiver)
    }

    /// Makes room by unmounting the least recently used repo that is not indexing.
    fn unmount_least_recently_used(&mut self) -> Result<()> {
        let victim = self
            .mounts
            .iter()
            .filter(|(_, m)| !m.state.borrow().running)
            .min_by_key(|(_, m)| m.last_used)
            .map(|(path, _)| path.clone());
        let Some(victim) = victim else {
            return Err(DocdexError::new(
                ErrorCode::TooManyRequests,
                format!("{} repos are mounted and all are indexing", self.mounts.len()),
            )
            .with_hint("raise [core] max_mounted_repos, or retry when an index run has finished"));
        };
        self.unmount(&victim);
        Ok(())
    }

    fn unmount(&mut self, repo: &Path) {
        if self.mounts.remove(repo).is_some() {
            tracing::info!(repo = %repo.display(), "repo unmounted");
            self.repo_manager.do_send(Release { canonical_path: repo.to_path_buf() });
        }
    }

    fn start_watcher(&self, repo: &Path, ctx: &mut Context<Self>) -> Option<RecommendedWatcher> {
        let address = ctx.address();
        let root = repo.to_path_buf();
        let handler = move |event: notify::Result<notify::Event>| match event {
            Ok(event) if !matches!(event.kind, EventKind::Access(_)) || event.need_rescan() => {
                let rescan = event.need_rescan();
                address.do_send(FilesChanged { repo: root.clone(), paths: event.paths, rescan });
            }
            Ok(_) => {}
            Err(err) => {
                // Events may be lost (a full kernel queue): the next run walks everything.
                tracing::warn!(error = %err, "file watcher error; the repo is walked again");
                address.do_send(FilesChanged { repo: root.clone(), paths: Vec::new(), rescan: true });
            }
        };
        let watcher = notify::recommended_watcher(handler).and_then(|mut watcher| {
            watcher.watch(repo, RecursiveMode::Recursive)?;
            Ok(watcher)
        });
        match watcher {
            Ok(watcher) => Some(watcher),
            Err(err) => {
                // Without a watcher the repo is still served; explicit index runs refresh it.
                tracing::warn!(repo = %repo.display(), error = %err, "cannot watch the repo; it is refreshed only by index requests");
                None
            }
        }
    }

    /// Starts an index run of `repo` (callers check that none is running).
    fn start_run(&mut self, repo: PathBuf, ctx: &mut Context<Self>) {
        let Some(mount) = self.mounts.get_mut(&repo) else { return };
        mount.first_change_opt = None;
        mount.last_change_opt = None;
        mount.own_run = true;
        let changed = std::mem::take(&mut mount.changed);
        let only_opt = (!mount.rescan && changed.len() <= MAX_CHANGED_PATHS).then(|| changed.into_iter().collect());
        mount.rescan = false;
        mount.state.send_modify(|s| {
            s.running = true;
            s.progress_opt = None;
        });
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let state = mount.state.clone();
        actix::spawn(async move {
            while let Some(progress) = progress_rx.recv().await {
                state.send_modify(|s| s.progress_opt = Some(progress));
            }
        });
        let index = RunIndex { repo: repo.clone(), progress: progress_tx, changed_opt: only_opt };
        let run_index = self.run_index.clone();
        ctx.spawn(async move { run_index.send(index).await }.into_actor(self).map(move |result, act, ctx| {
            let locked = matches!(&result, Ok(Err(err)) if err.code == ErrorCode::IndexLocked);
            let outcome = match result {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(err)) => Err(err.message),
                Err(err) => Err(err.to_string()),
            };
            if let Some(mount) = act.mounts.get_mut(&repo) {
                mount.own_run = false;
                if locked {
                    // Another writer has the repo: the change waits for it and runs after
                    // (a change counted as made a little ahead, so the next check is then).
                    let now = Instant::now();
                    mount.first_change_opt = Some(now);
                    mount.last_change_opt = Some(now + LOCKED_RETRY);
                }
            }
            act.run_finished(&repo, outcome, locked, ctx);
        }));
    }

    /// `locked`: the run was refused because another process writes the repo (it is tried
    /// again, see `LOCKED_RETRY`).
    fn run_finished(
        &mut self,
        repo: &Path,
        outcome: std::result::Result<(), String>,
        locked: bool,
        ctx: &mut Context<Self>,
    ) {
        let Some(mount) = self.mounts.get_mut(repo) else { return };
        if let Err(err) = &outcome {
            if locked {
                tracing::info!(repo = %repo.display(), error = %err, "index run waits for another writer");
            } else {
                tracing::warn!(repo = %repo.display(), error = %err, "index run failed");
            }
            // The paths it was given are not known to be indexed: the next run walks all.
            mount.rescan = true;
        }
        let still_running = mount.own_run || mount.external_runs > 0;
        mount.state.send_modify(|s| {
            s.running = still_running;
            s.runs_completed += 1;
            s.searchable |= outcome.is_ok();
            s.last_error_opt = outcome.err();
        });
        // Changes that arrived during the run get a run of their own.
        if mount.first_change_opt.is_some() {
            self.schedule_check(repo.to_path_buf(), self.settings.debounce, ctx);
        }
    }

    fn schedule_check(&self, repo: PathBuf, after: Duration, ctx: &mut Context<Self>) {
        ctx.run_later(after, move |act, ctx| act.check_due(repo, ctx));
    }

    /// Starts the run a change asked for once the files have been quiet for the debounce
    /// window (or the change has waited `max_delay`).
    fn check_due(&mut self, repo: PathBuf, ctx: &mut Context<Self>) {
        let Some(mount) = self.mounts.get(&repo) else { return };
        let (Some(first), Some(last)) = (mount.first_change_opt, mount.last_change_opt) else { return };
        if mount.state.borrow().running {
            return; // run_finished schedules the next check
        }
        let quiet_for = last.elapsed();
        if quiet_for >= self.settings.debounce || first.elapsed() >= self.settings.max_delay {
            self.start_run(repo, ctx);
        } else {
            self.schedule_check(repo, self.settings.debounce - quiet_for, ctx);
        }
    }

    fn release_idle(&mut self, ctx: &mut Context<Self>) {
        if !self.settings.model_idle.is_zero() {
            let unloaded = self.embedder.unload_idle(self.settings.model_idle);
            if unloaded > 0 {
                tracing::info!(instances = unloaded, "embedding model unloaded after being idle");
            }
        }
        if self.settings.repo_idle.is_zero() {
            return;
        }
        let repo_manager = self.repo_manager.clone();
        let idle = self.settings.repo_idle;
        ctx.spawn(
            async move {
                if let Ok(released) = repo_manager.send(ReleaseIdle { idle }).await {
                    if !released.is_empty() {
                        super::release_free_memory();
                    }
                    for repo in released {
                        tracing::info!(repo = %repo, "idle repo released (reopens on the next request)");
                    }
                }
            }
            .into_actor(self),
        );
    }

    fn mounted_repos(&self, open: &[String]) -> Vec<MountedRepo> {
        let mut repos: Vec<MountedRepo> = self
            .mounts
            .iter()
            .map(|(path, mount)| {
                let state = mount.state.borrow();
                let path = path.display().to_string();
                MountedRepo {
                    state: if state.running {
                        "indexing".into()
                    } else if state.last_error_opt.is_some() {
                        "failed".into()
                    } else if open.contains(&path) {
                        "ready".into()
                    } else {
                        "released".into()
                    },
                    open: open.contains(&path),
                    repo: path,
                    searchable: state.searchable,
                    indexing: state.progress_opt.clone().filter(|_| state.running),
                    runs_completed: state.runs_completed,
                    last_error: state.last_error_opt.clone(),
                    watching: mount.watcher_opt.is_some(),
                    changes_seen: mount.changes_seen,
                    mounted_secs: mount.mounted_at.elapsed().as_secs(),
                    idle_secs: mount.last_used.elapsed().as_secs(),
                }
            })
            .collect();
        repos.sort_by(|a, b| a.repo.cmp(&b.repo));
        repos
    }
}

/// The repo's top-level ignore rules (`.gitignore`, `.docdexignore`): events in ignored
/// places (a build directory) do not start runs. Nested rules are left to the walk.
fn ignore_matcher(repo: &Path) -> Gitignore {
    let mut builder = GitignoreBuilder::new(repo);
    for name in [".gitignore", DOCDEX_IGNORE_FILE] {
        let path = repo.join(name);
        if path.is_file() {
            let _ = builder.add(path);
        }
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

impl Actor for RepoSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let shortest = [self.settings.repo_idle, self.settings.model_idle]
            .into_iter()
            .filter(|d| !d.is_zero())
            .min()
            .unwrap_or(Duration::from_secs(60));
        // Checked a few times per idle period, at least once a minute.
        let every = (shortest / 4).clamp(Duration::from_millis(250), Duration::from_secs(60));
        ctx.run_interval(every, |act, ctx| act.release_idle(ctx));
    }
}

/// Mounts a repo (canonical path) unless mounted already: starts its watcher, and with
/// `start_run` its index run (a caller about to run one itself says so with `RunStarted`).
/// The receiver follows its state.
#[derive(Message)]
#[rtype(result = "Result<watch::Receiver<MountState>>")]
pub struct MountRepo {
    pub repo: PathBuf,
    pub start_run: bool,
}

/// An index run of a mounted repo that someone else started.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RunStarted {
    pub repo: PathBuf,
}

/// The end of a run announced with `RunStarted`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RunEnded {
    pub repo: PathBuf,
    pub outcome: std::result::Result<(), String>,
}

/// Unmounts a repo: stops watching it and releases its handles.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct UnmountRepo {
    pub repo: PathBuf,
}

/// The mounted repos and their state; `open` lists the repos whose handles are open.
#[derive(Message)]
#[rtype(result = "Vec<MountedRepo>")]
pub struct ListMounts {
    pub open: Vec<String>,
}

/// A file system event in a mounted repo (from its watcher's thread).
#[derive(Message)]
#[rtype(result = "()")]
struct FilesChanged {
    repo: PathBuf,
    paths: Vec<PathBuf>,
    /// The watcher may have missed events: walk the whole repo.
    rescan: bool,
}

impl Handler<MountRepo> for RepoSupervisor {
    type Result = Result<watch::Receiver<MountState>>;

    fn handle(&mut self, msg: MountRepo, ctx: &mut Context<Self>) -> Self::Result {
        self.mount(msg.repo, msg.start_run, ctx)
    }
}

impl Handler<RunStarted> for RepoSupervisor {
    type Result = ();

    fn handle(&mut self, msg: RunStarted, _: &mut Context<Self>) {
        if let Some(mount) = self.mounts.get_mut(&msg.repo) {
            mount.last_used = Instant::now();
            // Runs announced this way overlap (they queue on the repo's run lock): counted
            // so the mount reads "indexing" until the last one ends.
            mount.external_runs += 1;
            mount.state.send_modify(|s| s.running = true);
        }
    }
}

impl Handler<RunEnded> for RepoSupervisor {
    type Result = ();

    fn handle(&mut self, msg: RunEnded, ctx: &mut Context<Self>) {
        if let Some(mount) = self.mounts.get_mut(&msg.repo) {
            mount.external_runs = mount.external_runs.saturating_sub(1);
        }
        self.run_finished(&msg.repo, msg.outcome, false, ctx);
    }
}

impl Handler<UnmountRepo> for RepoSupervisor {
    type Result = bool;

    fn handle(&mut self, msg: UnmountRepo, _: &mut Context<Self>) -> bool {
        let mounted = self.mounts.contains_key(&msg.repo);
        self.unmount(&msg.repo);
        mounted
    }
}

/// The paths of a mounted repo (relative, `/`-separated) the watcher saw change since its
/// last run started: files the index may hold at another text than the working tree's.
#[derive(Message)]
#[rtype(result = "Vec<String>")]
pub struct PendingChanges {
    pub repo: PathBuf,
}

impl Handler<PendingChanges> for RepoSupervisor {
    type Result = actix::MessageResult<PendingChanges>;

    fn handle(&mut self, msg: PendingChanges, _: &mut Context<Self>) -> Self::Result {
        actix::MessageResult(
            self.mounts.get(&msg.repo).map(|m| m.changed.iter().cloned().collect()).unwrap_or_default(),
        )
    }
}

impl Handler<ListMounts> for RepoSupervisor {
    type Result = actix::MessageResult<ListMounts>;

    fn handle(&mut self, msg: ListMounts, _: &mut Context<Self>) -> Self::Result {
        actix::MessageResult(self.mounted_repos(&msg.open))
    }
}

impl Handler<FilesChanged> for RepoSupervisor {
    type Result = ();

    fn handle(&mut self, msg: FilesChanged, ctx: &mut Context<Self>) {
        let state_dir = self.settings.state_dir.clone();
        let debounce = self.settings.debounce;
        let Some(mount) = self.mounts.get_mut(&msg.repo) else { return };
        let mut relevant = msg.rescan;
        mount.rescan |= msg.rescan;
        for path in &msg.paths {
            let Ok(relative) = path.strip_prefix(&msg.repo) else { continue };
            if path.starts_with(&state_dir) || relative.components().any(|c| c.as_os_str() == ".git") {
                continue;
            }
            let name = relative.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == ".gitignore" || name == DOCDEX_IGNORE_FILE {
                // New rules: the next run applies them (files now ignored leave the index).
                mount.ignore = ignore_matcher(&msg.repo);
                mount.rescan = true;
                relevant = true;
                continue;
            }
            if mount.ignore.matched_path_or_any_parents(relative, path.is_dir()).is_ignore() {
                continue;
            }
            let rel = relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
            mount.changed.insert(rel);
            relevant = true;
        }
        if !relevant {
            return;
        }
        let now = Instant::now();
        mount.changes_seen += 1;
        mount.last_change_opt = Some(now);
        if mount.first_change_opt.is_none() {
            mount.first_change_opt = Some(now);
            self.schedule_check(msg.repo, debounce, ctx);
        }
    }
}
