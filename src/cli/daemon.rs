//! `docdexd daemon` (and `serve`): binds the address, takes the home's daemon lock, starts
//! the actors and serves HTTP and MCP until Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use super::output::{human_bytes, print_out, render_progress, render_summary};
use super::progress::index_with_progress;
use crate::actors::repo_manager::CloseAll;
use crate::actors::scraper::CloseBrowser;
use crate::actors::tool_dispatcher::indexing::{EmbedInBackground, StopBackgroundWork};
use crate::actors::tool_dispatcher::repos::Mount;
use crate::config::{self, LoadedConfig};
use crate::http::{self, HttpState};
use crate::protocol::{DaemonStatus, DocdexError, Result};

pub(super) async fn serve(
    loaded: LoadedConfig,
    repo_opt: Option<PathBuf>,
    bind_opt: Option<SocketAddr>,
    expose: bool,
    auth_token_opt: Option<String>,
) -> Result<i32> {
    let auth_token_opt = match auth_token_opt {
        // An empty token would be read as "none given" and the daemon's own used instead:
        // not what was asked for.
        Some(token) if token.trim().is_empty() => {
            return Err(DocdexError::invalid("the auth token (--auth-token or DOCDEX_AUTH_TOKEN) is empty")
                .with_hint("give a token, or leave both unset to use the daemon's own ($DOCDEX_HOME/token)"));
        }
        Some(token) => Some(token),
        None => config::daemon_token(&loaded)?,
    };
    let addr = match bind_opt {
        Some(addr) => addr,
        None => loaded
            .config
            .server
            .http_bind_addr
            .parse()
            .map_err(|_| DocdexError::invalid("bad server.http_bind_addr"))?,
    };
    http::check_bind_policy(&addr, expose, auth_token_opt.as_deref())?;
    // The team store is checked (and its schema created or migrated) before serving: a
    // daemon that cannot reach it, or finds a schema newer than its own, does not start.
    if loaded.config.store.backend == config::STORE_POSTGRES {
        let pool = crate::postgres::PgPool::open(&loaded.config.store.url)?;
        tracing::info!(store = %pool.display_url(), "team store ready");
    }
    // Before anything is opened: a second daemon on this home would fight over the indexes.
    let mut lock = crate::daemon::lock::DaemonLock::acquire(&loaded.home).map_err(|err| match &repo_opt {
        // `daemon --repo other` while one runs: the running one can serve it.
        Some(repo) if err.code == crate::protocol::ErrorCode::DaemonRunning => {
            let hint = err.hint.clone().unwrap_or_default();
            err.with_hint(format!(
                "the running daemon serves {0} too once it is named: `docdexd index --repo {0}` (or any command \
                 with --repo) mounts it there, if it lies inside the daemon's allowed roots; or {hint}",
                repo.display()
            ))
        }
        _ => err,
    })?;
    let actors = crate::actors::system::start_daemon_actors(&loaded, repo_opt.clone());
    if let Some(repo) = &repo_opt {
        let summary = index_with_progress(&actors, repo.clone()).await?;
        eprint!("{}", render_summary(&summary));
        // Lexical search is ready now; mounted, it is watched, and its embeddings follow
        // while the daemon serves. The run above mounted it already (without a run of its
        // own), so the mount starts nothing: the embedding is asked for here.
        actors.dispatcher.send(Mount { repo: repo.clone(), wait: false }).await??;
        actors.dispatcher.send(EmbedInBackground { repo: repo.clone() }).await?;
    }
    // Collections are watched from the start (a repo is, once a request names it).
    actors.dispatcher.do_send(crate::actors::tool_dispatcher::collections::MountCollections);
    let run_tests_refusal =
        http::run_tests_refusal(auth_token_opt.as_deref(), &addr, loaded.config.tests.allow_when_exposed);
    let state = HttpState {
        dispatcher: actors.dispatcher.clone(),
        default_repo_opt: repo_opt.and_then(|p| std::fs::canonicalize(p).ok()),
        default_limit: loaded.config.search.max_repo_hits,
        auth_token_opt: auth_token_opt.map(Arc::from),
        host_policy: Arc::new(http::guard::HostPolicy::new(&loaded.config.server.allowed_hosts, expose)),
        client_slots: http::guard::ClientSlots::new(loaded.config.server.max_requests_per_client),
        mcp_budget_tokens: loaded.config.server.mcp_max_result_tokens,
        run_tests_refusal,
    };
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(4);
    let (server, bound) = http::start(state, addr, workers).map_err(|err| {
        DocdexError::invalid(format!("cannot listen on {addr}: {err}"))
            .with_hint("is another docdexd running? pick another address with --bind")
    })?;
    lock.publish(&format!("http://{bound}"))?;
    print_out(&format!("docdexd listening on http://{bound}\n"))?;
    let handle = server.handle();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = server => result?,
        _ = tokio::signal::ctrl_c() => {
            shut_down(&handle).await;
        }
        _ = terminate.recv() => {
            shut_down(&handle).await;
        }
    }
    // Background embedding ends between batches, the browser goes before the process does
    // (its guards would get it anyway), then the indexes close.
    actors.dispatcher.send(StopBackgroundWork).await?;
    actors.web.scraper.send(CloseBrowser).await?;
    actors.repo_manager.send(CloseAll).await?;
    drop(lock);
    Ok(0)
}

/// Stops serving. Test runs in flight are killed first: a graceful stop waits for their
/// requests, and a run would otherwise hold it until the run's own time limit.
async fn shut_down(handle: &actix_web::dev::ServerHandle) {
    let killed = crate::runner::process::kill_tracked_groups();
    if killed > 0 {
        eprintln!("shutting down (stopped {killed} test run(s))");
    } else {
        eprintln!("shutting down");
    }
    handle.stop(true).await;
}

pub(super) fn render_daemon_status(status: &DaemonStatus, base_url: &str) -> String {
    let mut out = format!(
        "daemon:      {base_url} (pid {}, up {} s, version {})\nmemory:      {} resident, {} embedding model instance(s) loaded\n",
        status.pid,
        status.uptime_secs,
        status.version,
        human_bytes(status.rss_bytes),
        status.models_loaded,
    );
    out.push_str(&format!("repos:       {} mounted\n", status.repos.len()));
    for repo in &status.repos {
        let progress = match &repo.indexing {
            Some(p) => format!(", {}", render_progress(p)),
            None => String::new(),
        };
        let error = repo.last_error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default();
        out.push_str(&format!(
            "  {:<9} {}{progress}{error}; {} runs, idle {} s{}\n",
            repo.state,
            repo.repo,
            repo.runs_completed,
            repo.idle_secs,
            if repo.watching { ", watched" } else { "" }
        ));
    }
    if !status.actors.is_empty() {
        out.push_str("load:\n");
        for actor in &status.actors {
            out.push_str(&format!(
                "  {:<13} {} in flight, {} handled, {} failed\n",
                actor.actor, actor.in_flight, actor.handled, actor.failed
            ));
        }
    }
    out
}
