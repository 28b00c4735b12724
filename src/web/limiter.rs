//! Politeness gates: a minimum interval between requests, shared by every caller of the
//! process. Callers queue on a fair (FIFO) tokio mutex and sleep while holding it, so they go
//! out in arrival order and none starves. A caller holds its turn until its request has been
//! answered and the interval counts from then: the far side sees requests arrive, and a
//! request that travels faster than the one before it (a reused connection after a fresh
//! one, a busy machine) must still not arrive early.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// Added to the machine-wide interval, which counts from when a request leaves (another
/// process cannot wait on this one's answer): a request that travels faster than the one
/// before it must not arrive early.
const ARRIVAL_MARGIN: Duration = Duration::from_millis(20);

pub struct Spacing {
    interval: Duration,
    /// When the next request may start.
    next: tokio::sync::Mutex<Option<Instant>>,
}

impl Spacing {
    pub fn new(interval: Duration) -> Spacing {
        Spacing { interval, next: tokio::sync::Mutex::new(None) }
    }

    /// Waits for this caller's turn; returns when it may send. At least `extra` more is
    /// waited when given (backoff after a refusal). The gate stays closed while the turn is
    /// held and for the interval after it is dropped: drop it once the request is answered
    /// (or has failed).
    pub async fn wait_turn(&self, extra: Duration) -> Turn<'_> {
        let next = self.next.lock().await;
        let now = Instant::now();
        let mut at = next.unwrap_or(now).max(now);
        if !extra.is_zero() {
            at = at.max(now + extra);
        }
        tokio::time::sleep_until(at).await;
        Turn { next, interval: self.interval }
    }
}

/// One caller's turn at a `Spacing`; the next caller's wait starts when it is dropped.
pub struct Turn<'a> {
    next: tokio::sync::MutexGuard<'a, Option<Instant>>,
    interval: Duration,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *self.next = Some(Instant::now() + self.interval);
    }
}

/// The same spacing across processes on one home: two `docdexd web-search` runs without a
/// daemon must not hit DuckDuckGo closer together than one process would. The time the next
/// request may start is kept in a file, read and written under an exclusive lock that the
/// caller holds while it waits, so processes take turns.
pub struct FileSpacing {
    path: std::path::PathBuf,
    interval: Duration,
}

impl FileSpacing {
    pub fn new(path: std::path::PathBuf, interval: Duration) -> FileSpacing {
        FileSpacing { path, interval: interval + ARRIVAL_MARGIN }
    }

    /// Waits for this process's turn (at least `extra` more when given). Best effort: a gate
    /// file that cannot be used leaves the spacing to the process's own gate, with a warning.
    pub async fn wait_turn(&self, extra: Duration) {
        let (path, interval) = (self.path.clone(), self.interval);
        let waited = tokio::task::spawn_blocking(move || take_turn(&path, interval, extra)).await;
        if let Ok(Err(err)) | Err(err) = waited.map_err(std::io::Error::other) {
            tracing::warn!(error = %err, "the machine-wide discovery gate is unusable; spacing holds within this process only");
        }
    }
}

fn take_turn(path: &std::path::Path, interval: Duration, extra: Duration) -> std::io::Result<()> {
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsRawFd;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
    // SAFETY: flock on an open descriptor; released when the file is closed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let unix_ms = || {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
    };
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let next_ms: u64 = text.trim().parse().unwrap_or(0);
    let now = unix_ms();
    let at = next_ms.max(now).max(now + extra.as_millis() as u64);
    std::thread::sleep(Duration::from_millis(at - now));
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "{}", unix_ms() + interval.as_millis() as u64)?;
    Ok(())
}

/// One `Spacing` per domain.
pub struct DomainSpacing {
    interval: Duration,
    gates: Mutex<HashMap<String, Arc<Spacing>>>,
}

impl DomainSpacing {
    pub fn new(interval: Duration) -> DomainSpacing {
        DomainSpacing { interval, gates: Mutex::new(HashMap::new()) }
    }

    pub fn gate(&self, domain: &str) -> Arc<Spacing> {
        let mut gates = self.gates.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Arc::clone(gates.entry(domain.to_string()).or_insert_with(|| Arc::new(Spacing::new(self.interval))))
    }
}

/// Exponential backoff with jitter: `base * 2^attempt`, plus up to a quarter more at random
/// so callers that were refused together do not come back together.
pub fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << attempt.min(6));
    let jitter_ms = (rand::random::<u64>() % (exp.as_millis() as u64 / 4 + 1)).min(60_000);
    exp + Duration::from_millis(jitter_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn concurrent_callers_are_spaced_in_arrival_order() {
        let interval = Duration::from_millis(40);
        let spacing = Arc::new(Spacing::new(interval));
        let started = Instant::now();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for n in 0..4 {
            let spacing = Arc::clone(&spacing);
            let order = Arc::clone(&order);
            tasks.push(tokio::spawn(async move {
                let _turn = spacing.wait_turn(Duration::ZERO).await;
                order.lock().unwrap().push((n, started.elapsed()));
            }));
            // Each caller queues before the next one starts.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        for task in tasks {
            task.await.unwrap();
        }
        let order = order.lock().unwrap();
        let names: Vec<usize> = order.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, vec![0, 1, 2, 3]);
        for pair in order.windows(2) {
            assert!(pair[1].1 - pair[0].1 >= interval, "{order:?}");
        }
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        for attempt in 0..4 {
            let d = backoff(Duration::from_secs(2), attempt);
            let floor = Duration::from_secs(2 << attempt);
            assert!(d >= floor && d <= floor + floor / 4, "{attempt}: {d:?}");
        }
    }
}
