//! Per-actor load counters the daemon reports in `/v1/status`: requests in flight (queued or
//! running), handled and failed. Counted where the dispatcher hands work to an actor, so
//! every surface is counted once. Background work reads them too, to keep out of the way
//! of requests someone waits on (`Metrics::until_quiet`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::protocol::ActorLoad;

#[derive(Default)]
pub struct Metrics {
    actors: Mutex<BTreeMap<&'static str, Counts>>,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    in_flight: u64,
    handled: u64,
    failed: u64,
    /// When the last request ended.
    ended_opt: Option<Instant>,
}

/// The requests an agent or a person waits on, answered from the repo's index in
/// milliseconds: the model's inference beside them (a batch holds both cores for a second
/// or more) would double their time.
const INTERACTIVE: [&str; 4] = ["search", "code", "open", "pack"];
/// How often `until_quiet` looks again.
const QUIET_POLL: Duration = Duration::from_millis(20);

impl Metrics {
    fn update(&self, actor: &'static str, change: impl FnOnce(&mut Counts)) {
        if let Ok(mut actors) = self.actors.lock() {
            change(actors.entry(actor).or_default());
        }
    }

    /// Runs `work` counted against `actor`.
    pub async fn track<T, E>(&self, actor: &'static str, work: impl Future<Output = Result<T, E>>) -> Result<T, E> {
        self.update(actor, |c| c.in_flight += 1);
        // Decremented on drop too: a request whose client went away is no longer in flight.
        let guard = InFlight { metrics: self, actor, ok: false };
        let result = work.await;
        let mut guard = guard;
        guard.ok = result.is_ok();
        drop(guard);
        result
    }

    /// Waits until no interactive request (`INTERACTIVE`) has been in flight for `quiet`, or
    /// `longest` has passed: background work that yields to requests but is never starved
    /// by a steady stream of them.
    pub async fn until_quiet(&self, quiet: Duration, longest: Duration) {
        let started = Instant::now();
        while started.elapsed() < longest && self.busy(quiet) {
            tokio::time::sleep(QUIET_POLL).await;
        }
    }

    fn busy(&self, quiet: Duration) -> bool {
        let Ok(actors) = self.actors.lock() else { return false };
        INTERACTIVE
            .iter()
            .filter_map(|actor| actors.get(actor))
            .any(|c| c.in_flight > 0 || c.ended_opt.is_some_and(|ended| ended.elapsed() < quiet))
    }

    pub fn snapshot(&self) -> Vec<ActorLoad> {
        let actors = self.actors.lock().map(|a| a.clone()).unwrap_or_default();
        actors
            .into_iter()
            .map(|(actor, c)| ActorLoad {
                actor: actor.into(),
                in_flight: c.in_flight,
                handled: c.handled,
                failed: c.failed,
            })
            .collect()
    }
}

struct InFlight<'a> {
    metrics: &'a Metrics,
    actor: &'static str,
    ok: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let ok = self.ok;
        self.metrics.update(self.actor, |c| {
            c.in_flight = c.in_flight.saturating_sub(1);
            c.handled += 1;
            c.ended_opt = Some(Instant::now());
            if !ok {
                c.failed += 1;
            }
        });
    }
}

/// Resident memory of this process in bytes (0 where `/proc` is not available).
pub fn resident_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else { return 0 };
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page_size.max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn background_work_waits_for_a_quiet_moment_but_not_forever() {
        let metrics = Metrics::default();
        let quiet = Duration::from_millis(200);
        // Nothing asked yet, or only work nobody waits on: no wait.
        metrics.track("indexer", async { Ok::<_, ()>(()) }).await.unwrap();
        assert!(!metrics.busy(quiet));
        metrics.track("search", async { Ok::<_, ()>(()) }).await.unwrap();
        assert!(metrics.busy(quiet), "a search just ended");
        let started = Instant::now();
        metrics.until_quiet(quiet, Duration::from_secs(5)).await;
        assert!(started.elapsed() >= Duration::from_millis(150) && !metrics.busy(quiet));
        // A request in flight holds background work back until the longest wait.
        metrics.update("code", |c| c.in_flight += 1);
        let started = Instant::now();
        metrics.until_quiet(quiet, Duration::from_millis(300)).await;
        assert!(started.elapsed() >= Duration::from_millis(300) && metrics.busy(quiet));
    }
}
