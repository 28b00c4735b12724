//! The guarded Chromium process: found where the system put it, started headless with a fresh
//! profile, recorded in a lock file, and never left behind.
//!
//! Guards, from the gentlest to the last resort:
//! - `BrowserProcess` kills the browser's whole process group when dropped (shutdown, idle,
//!   timeout, a panic unwinding through its owner) and reaps what it killed;
//! - the browser runs in a process group of its own with a parent-death signal (Linux), so a
//!   daemon killed with SIGKILL takes its browser with it. The signal fires when the *thread*
//!   that forked the browser exits, so every browser is forked by one launcher thread that
//!   lives as long as the process;
//! - the daemon is a child subreaper (Linux), so the browser's helper processes, orphaned
//!   when the browser dies, come back to it to be reaped instead of lingering as zombies;
//! - a lock file under `<state>/locks/` records the browser's PID, process start time and
//!   profile; a lock whose owner is gone is stale: its browser (if that PID is still that
//!   very process) is killed and the lock and profile removed at the next start or `check`.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::cdp::Connection;
use crate::protocol::{DocdexError, ErrorCode, Result};
use crate::runner::process::{group_members, kill_group, proc_stat, process_start_ticks, reap_group};

/// Where Debian/Ubuntu, Fedora, snap and macOS put Chromium or Chrome.
const KNOWN_PATHS: [&str; 8] = [
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/snap/bin/chromium",
    "/usr/lib/chromium/chromium",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

/// Flags for a quiet, headless browser on a machine that may have no network but the pages it
/// is asked for: no background requests, no first-run UI, no sandbox (it runs as root in
/// containers) and no GPU.
const FLAGS: [&str; 11] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--mute-audio",
    // DevTools over the fds 3 and 4 the browser inherits (`cdp`), never a port: a DevTools
    // port on loopback has no authentication, and every local user could drive the browser.
    "--remote-debugging-pipe",
];

/// How long a starting browser has to answer on its DevTools pipe.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);

/// The Chromium binary: the configured one, else the usual places, else `PATH`.
pub fn find_chromium(configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = configured {
        return path.is_file().then(|| path.to_path_buf());
    }
    if let Some(path) = KNOWN_PATHS.iter().map(PathBuf::from).find(|p| p.is_file()) {
        return Some(path);
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .flat_map(|dir| ["chromium", "chromium-browser", "google-chrome"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// `Chromium 156.0.8078.73` (from `--version`).
pub fn chromium_version(path: &Path) -> Result<String> {
    let output = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|err| DocdexError::internal(format!("cannot run {}: {err}", path.display())))?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() || text.is_empty() {
        return Err(DocdexError::internal(format!("{} --version failed", path.display())));
    }
    Ok(text)
}

/// What a lock file records about a browser we started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrowserLock {
    pub pid: u32,
    /// The browser leads its own process group (pgid == pid).
    pub pgid: u32,
    /// Process start time in clock ticks since boot (`/proc/<pid>/stat`, field 22): a PID
    /// reused by another program has another start time.
    pub start_ticks: u64,
    pub profile_dir: PathBuf,
    pub owner_pid: u32,
    pub owner_start_ticks: u64,
    pub started_at_unix: u64,
}

/// A running browser. Dropping it kills the process group, reaps it, and removes the lock
/// file and the profile.
pub struct BrowserProcess {
    child: Child,
    pub lock: BrowserLock,
    lock_path: PathBuf,
    /// DevTools over the browser's pipe.
    pub connection: Connection,
}

impl BrowserProcess {
    /// Starts Chromium with a fresh profile under `profiles_dir` and records it in `locks_dir`.
    pub fn launch(binary: &Path, locks_dir: &Path, profiles_dir: &Path) -> Result<BrowserProcess> {
        std::fs::create_dir_all(locks_dir)?;
        std::fs::create_dir_all(profiles_dir)?;
        let profile = tempfile::Builder::new()
            .prefix(&format!("chromium-{}-", std::process::id()))
            .tempdir_in(profiles_dir)?
            .keep();
        let cannot_start = |err: std::io::Error| {
            remove_profile(&profile);
            DocdexError::new(ErrorCode::WebUnavailable, format!("cannot start {}: {err}", binary.display()))
                .with_hint("check `docdexd check`; set `[web] chrome_binary_path` or install chromium")
        };
        let (commands, answers) = match (cloexec_pipe(), cloexec_pipe()) {
            (Ok(commands), Ok(answers)) => (commands, answers),
            (Err(err), _) | (_, Err(err)) => return Err(cannot_start(err)),
        };
        let mut command = Command::new(binary);
        command
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        guard_child(&mut command);
        hand_over_pipe(&mut command, commands.0.as_raw_fd(), answers.1.as_raw_fd());
        let spawned = spawn_on_launcher_thread(command);
        // The browser's ends: ours closed, so its death reads as the end of the pipe.
        let (to_browser, from_browser) = (File::from(commands.1), File::from(answers.0));
        drop((commands.0, answers.1));
        let child = spawned.map_err(cannot_start)?;
        let pid = child.id();
        let lock = BrowserLock {
            pid,
            pgid: pid,
            start_ticks: process_start_ticks(pid).unwrap_or(0),
            profile_dir: profile.clone(),
            owner_pid: std::process::id(),
            owner_start_ticks: process_start_ticks(std::process::id()).unwrap_or(0),
            started_at_unix: crate::protocol::time::unix_now(),
        };
        let lock_path = locks_dir.join(format!("chromium-{pid}.json"));
        let connection = Connection::start(to_browser, from_browser)
            .map_err(|err| DocdexError::internal(format!("cannot read the browser's pipe: {err}")))?;
        let mut process = BrowserProcess { child, lock, lock_path, connection };
        std::fs::write(&process.lock_path, serde_json::to_vec_pretty(&process.lock)?)?;
        process.wait_for_devtools()?;
        Ok(process)
    }

    /// The browser answers on its pipe once it is up.
    fn wait_for_devtools(&mut self) -> Result<()> {
        match self.connection.version(LAUNCH_TIMEOUT) {
            Ok(_) => Ok(()),
            Err(err) => match self.child.try_wait() {
                Ok(Some(status)) => {
                    Err(DocdexError::new(ErrorCode::WebUnavailable, format!("chromium exited at start ({status})"))
                        .with_hint("run `docdexd check` to see whether it launches"))
                }
                _ if err.contains("timed out") => Err(DocdexError::new(
                    ErrorCode::Timeout,
                    format!("chromium did not answer on its DevTools pipe in {} s", LAUNCH_TIMEOUT.as_secs()),
                )),
                _ => Err(DocdexError::new(ErrorCode::WebUnavailable, format!("chromium at start: {err}"))),
            },
        }
    }

    pub fn pid(&self) -> u32 {
        self.lock.pid
    }

    /// Whether the browser process is still running (reaping it if it died).
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None)) && !self.connection.is_closed()
    }

    fn terminate(&mut self) {
        kill_group(self.lock.pgid);
        let _ = self.child.kill();
        let _ = self.child.wait();
        reap_group(self.lock.pgid, Duration::from_secs(2));
        remove_profile(&self.lock.profile_dir);
        let _ = std::fs::remove_file(&self.lock_path);
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// Removes a browser's profile and the folder Chromium keeps its singleton socket in. A
/// socket's path must be short, so Chromium puts it in a fresh `org.chromium.Chromium.*`
/// folder of the temp dir and links it from the profile (`SingletonSocket`); it removes that
/// folder only when it exits cleanly, and every killed browser would leave one behind.
fn remove_profile(profile: &Path) {
    if let Ok(socket) = std::fs::read_link(profile.join("SingletonSocket")) {
        let chromiums =
            |dir: &&Path| dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with("org.chromium.Chromium."));
        if let Some(dir) = socket.parent().filter(chromiums) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    let _ = std::fs::remove_dir_all(profile);
}

/// Own process group (so the whole browser can be signalled at once) and, on Linux, death
/// with the thread that forked it.
fn guard_child(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (setpgid, prctl, getppid, _exit) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            }
            #[cfg(not(target_os = "linux"))]
            let _ = parent;
            Ok(())
        });
    }
}

/// A pipe whose ends are closed in every program this process starts, but where handed over.
fn cloexec_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and belong to no one else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// In the child: `commands` (the read end of our command pipe) becomes fd 3 and `answers`
/// (the write end of the answer pipe) fd 4, where `--remote-debugging-pipe` looks for them.
fn hand_over_pipe(command: &mut Command, commands: RawFd, answers: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (fcntl, dup2, close) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            // Copied above 4 first: dup2 onto 3 could otherwise close `answers` if it were 3.
            let high_commands = libc::fcntl(commands, libc::F_DUPFD, 10);
            let high_answers = libc::fcntl(answers, libc::F_DUPFD, 10);
            if high_commands < 0 || high_answers < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // dup2's copies are inherited across exec (no close-on-exec flag).
            if libc::dup2(high_commands, 3) < 0 || libc::dup2(high_answers, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::close(high_commands);
            libc::close(high_answers);
            Ok(())
        });
    }
}

type LaunchJob = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Forks every browser from one thread that never exits (see the module docs).
fn spawn_on_launcher_thread(command: Command) -> std::io::Result<Child> {
    static LAUNCHER: OnceLock<Mutex<mpsc::Sender<LaunchJob>>> = OnceLock::new();
    let sender = LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<LaunchJob>();
        std::thread::Builder::new()
            .name("docdex-browser-launcher".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("spawn the browser launcher thread");
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    sender
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .send((command, reply_tx))
        .map_err(|_| std::io::Error::other("the browser launcher thread is gone"))?;
    reply_rx.recv().map_err(|_| std::io::Error::other("the browser launcher thread is gone"))?
}

fn cmdline_contains(pid: u32, needle: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
}

/// Whether `pid` is the very process `start_ticks` describes.
fn is_same_process(pid: u32, start_ticks: u64) -> bool {
    matches!(proc_stat(pid), Some((state, _, _, ticks)) if ticks == start_ticks && state != 'Z')
}

/// What the lock directory holds.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct LockSweep {
    /// Locks of browsers whose owner is alive (another running docdexd, or us).
    pub live: usize,
    /// Stale locks removed, with what was done about each.
    pub cleaned: Vec<String>,
}

/// Removes stale browser locks: the owner is gone, so its browser (if that PID is still the
/// browser it started) is killed with its group, and the lock and profile are deleted.
pub fn sweep_stale_locks(locks_dir: &Path) -> LockSweep {
    let mut sweep = LockSweep::default();
    let Ok(entries) = std::fs::read_dir(locks_dir) else { return sweep };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.starts_with("chromium-") || !name.ends_with(".json") {
            continue;
        }
        let Some(lock) = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<BrowserLock>(&b).ok()) else {
            // A lock written halfway by a killed process: nothing to trust in it.
            let _ = std::fs::remove_file(&path);
            sweep.cleaned.push(format!("{name}: unreadable, removed"));
            continue;
        };
        if is_same_process(lock.owner_pid, lock.owner_start_ticks) {
            sweep.live += 1;
            continue;
        }
        // The browser itself, or helpers of it that outlived it: members of its process group
        // that run with its profile (a PID reused by anything else has neither).
        let profile = lock.profile_dir.to_string_lossy().to_string();
        let helpers: Vec<u32> =
            group_members(lock.pgid).into_iter().filter(|&pid| cmdline_contains(pid, &profile)).collect();
        let what = if is_same_process(lock.pid, lock.start_ticks) || !helpers.is_empty() {
            kill_group(lock.pgid);
            reap_group(lock.pgid, Duration::from_secs(2));
            format!("{name}: owner {} gone; its chromium (pid {}) killed", lock.owner_pid, lock.pid)
        } else {
            format!("{name}: owner {} and chromium {} gone", lock.owner_pid, lock.pid)
        };
        if lock.profile_dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with("chromium-")) {
            remove_profile(&lock.profile_dir);
        }
        let _ = std::fs::remove_file(&path);
        sweep.cleaned.push(what);
    }
    sweep
}
