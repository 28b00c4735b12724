//! Per-actor load counters the daemon reports in `/v1/status`: requests in flight (queued or
//! running), handled and failed. Counted where the dispatcher hands work to an actor, so
//! every surface is counted once.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;

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
}

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
