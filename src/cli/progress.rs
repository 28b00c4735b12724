//! Progress of long work on stderr: a local index or embedding run, or a daemon's run read
//! from its status, at most once a second.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::output::{render_embed_progress, render_progress};
use crate::actors::tool_dispatcher::indexing::{EmbedPending, Index};
use crate::daemon::client::DaemonClient;
use crate::protocol::{EmbedProgress, EmbedSummary, IndexProgress, IndexRequest, IndexSummary, Result};

/// Indexes a repo, printing progress lines to stderr at most once a second.
pub async fn index_with_progress(actors: &crate::actors::system::Actors, repo: PathBuf) -> Result<IndexSummary> {
    let (tx, rx) = mpsc::unbounded_channel::<IndexProgress>();
    let printer = spawn_progress_printer(rx, |p| format!("indexing: {}", render_progress(p)));
    let index = Index { request: IndexRequest { repo }, progress_opt: Some(tx), embed_in_background: false };
    let result = actors.dispatcher.send(index).await?;
    finish_progress_printer(printer).await;
    result
}

/// The progress of an index run (and, with `wait`, its embedding) that the daemon does for
/// this command, which answers only at the end: the daemon's status, read once a second,
/// printed to stderr when it moves.
pub(super) fn spawn_daemon_progress(daemon: DaemonClient, repo: PathBuf, wait: bool) -> tokio::task::JoinHandle<()> {
    let shown = std::fs::canonicalize(&repo).unwrap_or_else(|_| repo.clone()).display().to_string();
    tokio::spawn(async move {
        let mut last = String::new();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let indexing = match daemon.daemon_status().await {
                Ok(status) => status.repos.into_iter().find(|r| r.repo == shown).and_then(|r| r.indexing),
                Err(_) => None,
            };
            let line = match indexing {
                Some(progress) => Some(format!("indexing: {}", render_progress(&progress))),
                None if wait => match daemon.status(&repo).await {
                    Ok(status) if status.embeddings.pending > 0 => Some(format!(
                        "embedding: {} of {} chunks embedded",
                        status.embeddings.embedded, status.embeddings.total
                    )),
                    _ => None,
                },
                None => None,
            };
            if let Some(line) = line.filter(|line| *line != last) {
                eprintln!("{line}");
                last = line;
            }
        }
    })
}

/// Embeds a repo's pending chunks, printing progress lines to stderr at most once a second.
pub async fn embed_with_progress(actors: &crate::actors::system::Actors, repo: PathBuf) -> Result<EmbedSummary> {
    let (tx, rx) = mpsc::unbounded_channel::<EmbedProgress>();
    let started = Instant::now();
    let printer = spawn_progress_printer(rx, move |p| render_embed_progress(p, started));
    let result = actors.dispatcher.send(EmbedPending { repo, progress_opt: Some(tx) }).await?;
    finish_progress_printer(printer).await;
    result
}

/// Prints progress reports to stderr: the first at once, then at most one a second, and
/// always the last (where the job ended).
pub(super) fn spawn_progress_printer<T: Send + 'static>(
    mut rx: mpsc::UnboundedReceiver<T>,
    render: impl Fn(&T) -> String + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last_print: Option<Instant> = None;
        let mut unprinted: Option<T> = None;
        while let Some(progress) = rx.recv().await {
            if last_print.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                eprintln!("{}", render(&progress));
                last_print = Some(Instant::now());
                unprinted = None;
            } else {
                unprinted = Some(progress);
            }
        }
        if let Some(progress) = unprinted {
            eprintln!("{}", render(&progress));
        }
    })
}

/// Waits for the printer; the job's sender is gone when the job finished, so it ends.
pub(super) async fn finish_progress_printer(printer: tokio::task::JoinHandle<()>) {
    if let Err(err) = printer.await {
        tracing::debug!(error = %err, "progress printer ended abnormally");
    }
}

/// Awaits `work`, telling the terminal (stderr) what is going on when it takes over a second:
/// web requests are spaced on purpose, so silence would look like a hang.
pub(super) async fn with_progress<F: std::future::Future>(label: &str, work: F) -> F::Output {
    let started = Instant::now();
    let label = label.to_string();
    let ticker = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        loop {
            eprintln!(
                "{label}... {:.0} s (discovery requests are at least 2 s apart, pages at least 1 s per site)",
                started.elapsed().as_secs_f64()
            );
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
    });
    let output = work.await;
    ticker.abort();
    output
}
