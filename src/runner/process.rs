//! The processes the daemon starts in groups of their own (the browser, a test runner): killed
//! as a group, reaped when they come back to us, and killed at shutdown.
//!
//! The daemon is a child subreaper (Linux): a killed runner's grandchildren (a test's server,
//! a pytest worker) are reparented to it, and would stay zombies unless reaped here.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Makes this process the reaper of its orphaned descendants (Linux), so the helpers of a
/// group we killed are reaped by us (`reap_group`) rather than left as zombies.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
}

/// SIGKILL to every process of a group.
pub fn kill_group(pgid: u32) {
    if pgid > 1 {
        // SAFETY: plain syscall; a negative pid addresses the process group.
        unsafe {
            libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
        }
    }
}

/// Reaps members of a killed process group that were reparented to us, until none is left
/// or the time is up.
pub fn reap_group(pgid: u32, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        // SAFETY: waitpid on a process group with WNOHANG; the status is discarded.
        loop {
            let reaped = unsafe { libc::waitpid(-(pgid as libc::pid_t), std::ptr::null_mut(), libc::WNOHANG) };
            if reaped <= 0 {
                break;
            }
        }
        if group_members(pgid).is_empty() || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `/proc/<pid>/stat` fields after the command name: (state, ppid, pgrp, start ticks).
pub fn proc_stat(pid: u32) -> Option<(char, u32, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); start time is field 22.
    Some((
        fields.first()?.chars().next()?,
        fields.get(1)?.parse().ok()?,
        fields.get(2)?.parse().ok()?,
        fields.get(19)?.parse().ok()?,
    ))
}

pub fn process_start_ticks(pid: u32) -> Option<u64> {
    proc_stat(pid).map(|(_, _, _, ticks)| ticks)
}

/// Live (non-zombie) processes of a process group.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| matches!(proc_stat(pid), Some((state, _, pgrp, _)) if pgrp == pgid && state != 'Z'))
        .collect()
}

/// Groups running now that shutdown must not leave behind (test runs: a browser has its own
/// guards). A run registers its group while it runs.
static RUNNING: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

/// Marks a group as running until the returned guard is dropped.
pub fn track_group(pgid: u32) -> TrackedGroup {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashSet::new).insert(pgid);
    TrackedGroup(pgid)
}

pub struct TrackedGroup(u32);

impl Drop for TrackedGroup {
    fn drop(&mut self) {
        if let Some(running) = RUNNING.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            running.remove(&self.0);
        }
    }
}

/// Kills every tracked group (the daemon is stopping): a run waiting on its group then sees it
/// end at once and answers, instead of the group outliving the daemon until its time limit.
/// Returns how many groups were killed.
pub fn kill_tracked_groups() -> usize {
    let groups: Vec<u32> = RUNNING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|r| r.iter().copied().collect())
        .unwrap_or_default();
    for &pgid in &groups {
        kill_group(pgid);
    }
    groups.len()
}
