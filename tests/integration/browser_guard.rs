//! The browser guard under abuse: fetches, page timeouts, Chromium killed mid-fetch and the
//! daemon killed with SIGKILL mid-fetch, a hundred times over; afterwards no Chromium process
//! of ours runs, none is left a zombie, the locks directory is empty, and the daemon answered
//! throughout.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Home, Server};
use crate::fakeweb::{article, FakeWeb, Reply};

/// Live (non-zombie) processes whose command line mentions `marker` (the test's DOCDEX_HOME:
/// every browser profile lives under it).
pub fn browsers_of(marker: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|r| r.trim().chars().next().unwrap_or('?')))
            .unwrap_or('?');
        if cmdline.contains(marker) && cmdline.contains("chrom") && state != 'Z' {
            found.push((pid, cmdline.chars().take(120).collect()));
        }
    }
    found
}

fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(2)?.parse().ok()
}

/// Zombie Chromium processes whose parent is this test process (we are their subreaper).
fn reap_our_zombies() -> usize {
    let me = std::process::id();
    let mut reaped = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let comm = stat.split('(').nth(1).and_then(|s| s.split(')').next()).unwrap_or("");
        let rest: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
        let (state, ppid) = (rest.first().copied().unwrap_or(""), rest.get(1).and_then(|p| p.parse::<u32>().ok()));
        if state == "Z" && ppid == Some(me) && comm.starts_with("chrom") {
            // SAFETY: waiting for a specific zombie child reparented to us.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            reaped += 1;
        }
    }
    reaped
}

fn zombies_of_ours() -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let rest: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
                rest.first() == Some(&"Z")
                    && rest.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(me)
                    && stat.contains("(chrom")
            })
        })
        .collect()
}

fn browser_pid(home: &Home) -> Option<u32> {
    let locks = home.dir.path().join("state/locks");
    std::fs::read_dir(locks).ok()?.flatten().find_map(|e| {
        let lock: Value = serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
        lock["pid"].as_u64().map(|p| p as u32)
    })
}

fn wait_for<T>(what: &str, within: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_hundred_fetch_timeout_and_crash_cycles_leave_nothing_behind() {
    // SAFETY: prctl with integer arguments; orphans of the daemons we kill come back to us.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    // Ten loopback hosts: fetches rotate over them, so the per-domain delay does not pace the
    // loop (it is tested elsewhere).
    let web = FakeWeb::start(10, |path, _| {
        if path.starts_with("/slow") {
            return Reply { delay: Duration::from_secs(30), ..Reply::html("<html><body>late</body></html>") };
        }
        if path.starts_with("/held") {
            // Long enough to be killed in the middle of.
            return Reply {
                delay: Duration::from_millis(1000),
                ..Reply::html(article(
                    "Held",
                    &["A page that takes its time to arrive, long enough for a crash in the middle of loading it."],
                    "x",
                ))
            };
        }
        Reply::html(article("Page", &["An ordinary page about reverse proxies, upstream servers and timeouts, with enough words to count as an article."], "location / {}"))
    });
    let home = Home::with_config("[web]\nallow_private_addresses = true\npage_load_timeout_secs = 2\n");
    let marker = home.dir.path().to_string_lossy().to_string();
    let mut server = Server::start(&home, &[]);
    let client = server.blocking_client();
    let mut outcomes = std::collections::BTreeMap::<&str, usize>::new();
    let mut seconds = std::collections::BTreeMap::<&str, f64>::new();
    let profiles = home.dir.path().join("state/browser");
    // The folders Chromium keeps its singleton socket in, outside the profile (in the temp
    // dir): each profile links to its own.
    let mut socket_dirs = std::collections::BTreeSet::new();
    for cycle in 0..100usize {
        let cycle_started = Instant::now();
        let host = web.base(cycle % 10);
        let kind = match cycle % 10 {
            1 => "timeout",
            3 | 6 => "browser_killed",
            9 => "daemon_killed",
            _ => "fetch",
        };
        *outcomes.entry(kind).or_default() += 1;
        let fetch_url = server.url("/v1/web/fetch");
        let page = match kind {
            "timeout" => format!("{host}/slow/{cycle}"),
            "browser_killed" | "daemon_killed" => format!("{host}/held/{cycle}"),
            _ => format!("{host}/page/{cycle}"),
        };
        let request = {
            let client = client.clone();
            std::thread::spawn(move || {
                client.post(fetch_url).json(&serde_json::json!({"url": page, "refresh": true})).send().map(|r| {
                    let status = r.status().as_u16();
                    (status, r.text().unwrap_or_default())
                })
            })
        };
        match kind {
            "browser_killed" => {
                // Kill Chromium once the held page is being loaded.
                let held = format!("/held/{cycle}");
                wait_for("the held page request", Duration::from_secs(20), || {
                    (!web.seen(&held).is_empty()).then_some(())
                });
                let pid = wait_for("a browser lock", Duration::from_secs(10), || browser_pid(&home));
                // SAFETY: killing the browser process recorded in our own lock file.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                let (status, body) = request.join().unwrap().expect("the daemon answers after its browser died");
                assert!(matches!(status, 200 | 502 | 504), "cycle {cycle}: status {status}: {body}");
            }
            "daemon_killed" => {
                let held = format!("/held/{cycle}");
                wait_for("the held page request", Duration::from_secs(20), || {
                    (!web.seen(&held).is_empty()).then_some(())
                });
                // SAFETY: SIGKILL to the daemon we started.
                unsafe { libc::kill(server.child.id() as i32, libc::SIGKILL) };
                let _ = server.child.wait();
                assert!(request.join().unwrap().is_err(), "a killed daemon cannot answer");
                // Its browser dies with it (parent-death signal), even before the next start
                // sweeps the stale lock.
                wait_for("the orphaned browser to die", Duration::from_secs(10), || {
                    reap_our_zombies();
                    browsers_of(&marker).is_empty().then_some(())
                });
                server = Server::start(&home, &[]);
            }
            _ => {
                let (status, body) = request.join().unwrap().expect("the daemon answers");
                let want = if kind == "timeout" { 504 } else { 200 };
                assert_eq!(status, want, "cycle {cycle} ({kind}): {body}");
            }
        }
        *seconds.entry(kind).or_default() += cycle_started.elapsed().as_secs_f64();
        for profile in std::fs::read_dir(&profiles).into_iter().flatten().flatten() {
            if let Ok(socket) = std::fs::read_link(profile.path().join("SingletonSocket")) {
                socket_dirs.extend(socket.parent().map(std::path::Path::to_path_buf));
            }
        }
        // The daemon keeps answering.
        let health = client.get(server.url("/healthz")).send().expect("healthz");
        assert_eq!(health.status().as_u16(), 200, "cycle {cycle}");
        // One browser (a process group with its helpers) at most, whatever happened before.
        let groups: std::collections::BTreeSet<u32> =
            browsers_of(&marker).iter().filter_map(|(pid, _)| process_group(*pid)).collect();
        assert!(groups.len() <= 1, "cycle {cycle}: browsers pile up: {groups:?}");
    }
    // A graceful stop closes the browser and its lock.
    // SAFETY: SIGTERM to the daemon we started.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the daemon did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    wait_for("no chromium of ours", Duration::from_secs(10), || {
        reap_our_zombies();
        browsers_of(&marker).is_empty().then_some(())
    });
    // Other tests' daemons, killed with SIGKILL, may hand us their browsers' zombies at any
    // time (we are a subreaper): reap once more, then nothing may be left.
    reap_our_zombies();
    assert!(zombies_of_ours().is_empty(), "zombies left: {:?}", zombies_of_ours());
    let locks = home.dir.path().join("state/locks");
    let left: Vec<_> = std::fs::read_dir(&locks).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "locks left: {left:?}");
    let left: Vec<_> =
        std::fs::read_dir(&profiles).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "profiles left: {left:?}");
    assert!(!socket_dirs.is_empty(), "no profile linked to a singleton socket: nothing above checks that folder");
    let left: Vec<_> = socket_dirs.iter().filter(|dir| dir.exists()).collect();
    assert!(left.is_empty(), "singleton socket folders left in the temp dir: {left:?}");
    eprintln!("cycles: {outcomes:?}; seconds per kind: {seconds:?}");
}
