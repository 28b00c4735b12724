//! Which directories a daemon may index and read. A daemon (`daemon`, `mcp`) answers
//! requests that name a repo by path, so it must not become a reader of `/etc` or `~/.ssh`:
//! a repo must lie inside the user's home (not in a dot-directory, not the home itself),
//! inside `[repos] allowed_roots` (or `DOCDEX_ALLOWED_ROOTS`), or inside the repo the daemon
//! was started with. The filesystem root is never a repo. One-shot CLI commands index what
//! the user typed, so they are not restricted (but `/` is still refused).

use std::path::{Component, Path, PathBuf};

use crate::protocol::{DocdexError, ErrorCode, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoPolicy {
    enforce: bool,
    home_opt: Option<PathBuf>,
    roots: Vec<PathBuf>,
}

impl RepoPolicy {
    /// For one-shot CLI commands: any directory but `/`.
    pub fn unrestricted() -> RepoPolicy {
        RepoPolicy { enforce: false, home_opt: None, roots: Vec::new() }
    }

    /// For a daemon: the user's home (minus dot-directories), the configured roots and the
    /// repo it was started with.
    pub fn daemon(allowed_roots: &[PathBuf], started_with: Option<&Path>) -> RepoPolicy {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        RepoPolicy::daemon_with_home(allowed_roots, started_with, home.as_deref())
    }

    fn daemon_with_home(allowed_roots: &[PathBuf], started_with: Option<&Path>, home: Option<&Path>) -> RepoPolicy {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut roots: Vec<PathBuf> = allowed_roots.iter().map(|p| canonical(p)).collect();
        roots.extend(started_with.map(canonical));
        // A home of `/` (containers, some service managers) would make every top-level folder
        // a root: it gives none.
        let home_opt = home.map(canonical).filter(|h| h.parent().is_some());
        RepoPolicy { enforce: true, home_opt, roots }
    }

    /// Refuses a repo path outside the policy; a path that does not exist passes (the
    /// caller reports it as `repo_not_found`) only where it would be allowed if it did.
    pub fn check(&self, path: &Path) -> Result<()> {
        self.resolve(path).map(|_| ())
    }

    /// The path as it resolves now (canonical), if the policy allows it. A path that does not
    /// exist is judged by where its nearest existing ancestor leads: outside the roots it is
    /// refused like any other, so the answer does not tell whether something exists there
    /// (`/root/.bashrc` and `/root/nothing` both get `path_refused`). Inside, it comes back
    /// as given, for the caller's `repo_not_found`.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf> {
        if let Ok(canonical) = std::fs::canonicalize(path) {
            self.check_resolved(path, &canonical)?;
            return Ok(canonical);
        }
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let mut missing = Vec::new();
        let mut ancestor = absolute.as_path();
        let resolved = loop {
            if let Ok(canonical) = std::fs::canonicalize(ancestor) {
                break missing.iter().rev().fold(canonical, |acc: PathBuf, part: &&std::ffi::OsStr| acc.join(part));
            }
            match (ancestor.parent(), ancestor.file_name()) {
                (Some(parent), Some(name)) => {
                    missing.push(name);
                    ancestor = parent;
                }
                _ => break absolute.clone(),
            }
        };
        self.check_resolved(path, &resolved)?;
        Ok(path.to_path_buf())
    }

    /// Refuses a repo whose resolved path (`canonical`, what `path` resolved to) lies outside
    /// the policy. The repo manager checks the very path it opens and serves, so a path that
    /// resolves one way when a request is checked and another when the repo is opened (a
    /// link swapped in between) is judged by where it leads.
    pub fn check_resolved(&self, path: &Path, canonical: &Path) -> Result<()> {
        if canonical.parent().is_none() {
            return Err(refused(path, "the filesystem root is never a repo"));
        }
        // Git's own files are never served, whatever the allowlist: `.git/config` can hold a
        // remote's credentials, and the index of a repo skips `.git` for the same reason.
        if canonical.components().any(|c| c.as_os_str() == ".git") {
            return Err(DocdexError::new(
                ErrorCode::PathRefused,
                format!("refusing repo {}: it is inside a .git directory", path.display()),
            )
            .with_hint("name the work tree's root, the folder that holds .git"));
        }
        if !self.enforce || self.roots.iter().any(|root| root.parent().is_some() && canonical.starts_with(root)) {
            return Ok(());
        }
        if let Some(home) = &self.home_opt {
            if let Ok(inside) = canonical.strip_prefix(home) {
                match inside.components().next() {
                    None => return Err(refused(path, "the home directory itself is not a repo; name a project in it")),
                    Some(Component::Normal(first)) if first.to_string_lossy().starts_with('.') => {
                        return Err(refused(
                            path,
                            "hidden directories of the home (~/.ssh, ~/.config, ...) are not served",
                        ))
                    }
                    Some(_) => return Ok(()),
                }
            }
        }
        Err(refused(path, "it is outside the directories this daemon serves"))
    }
}

fn refused(path: &Path, why: &str) -> DocdexError {
    DocdexError::new(ErrorCode::PathRefused, format!("refusing repo {}: {why}", path.display())).with_hint(
        "add its parent to [repos] allowed_roots in $DOCDEX_HOME/config.toml (or DOCDEX_ALLOWED_ROOTS), or start the daemon with --repo on it",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_home_and_refusals() {
        let allowed = tempfile::tempdir().unwrap();
        let project = allowed.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let policy = RepoPolicy::daemon(&[allowed.path().to_path_buf()], None);
        assert!(policy.check(&project).is_ok());
        assert_eq!(policy.check(Path::new("/")).unwrap_err().code, ErrorCode::PathRefused);
        assert_eq!(policy.check(Path::new("/etc")).unwrap_err().code, ErrorCode::PathRefused);
        // A path that does not exist is judged like one that does: refused outside the roots
        // (so the answer does not tell what exists there), left to `repo_not_found` inside.
        assert_eq!(policy.check(Path::new("/no/such/dir")).unwrap_err().code, ErrorCode::PathRefused);
        assert_eq!(policy.check(Path::new("/etc/no-such-file")).unwrap_err().code, ErrorCode::PathRefused);
        assert!(policy.check(&allowed.path().join("not-yet/made")).is_ok());
        // The repo it was started with is served even outside the roots.
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(policy.check(elsewhere.path()).is_err());
        assert!(RepoPolicy::daemon(&[], Some(elsewhere.path())).check(elsewhere.path()).is_ok());
        // CLI: anything but the root.
        assert!(RepoPolicy::unrestricted().check(Path::new("/etc")).is_ok());
        assert!(RepoPolicy::unrestricted().check(Path::new("/")).is_err());
        // Git's own folder is never a repo, not even inside the roots or from the CLI.
        std::fs::create_dir_all(project.join(".git/objects")).unwrap();
        for policy in [&policy, &RepoPolicy::unrestricted()] {
            for git in [project.join(".git"), project.join(".git/objects")] {
                assert!(policy.check(&git).unwrap_err().message.contains(".git directory"), "{}", git.display());
            }
        }
        // A root of "/" in the config does not open the whole disk... except below it.
        let everything = RepoPolicy::daemon(&[PathBuf::from("/")], None);
        assert!(everything.check(Path::new("/")).is_err());
    }

    #[test]
    fn a_home_of_slash_gives_no_roots() {
        let policy = RepoPolicy::daemon_with_home(&[], None, Some(Path::new("/")));
        for path in ["/etc", "/usr", "/tmp"] {
            assert_eq!(policy.check(Path::new(path)).unwrap_err().code, ErrorCode::PathRefused, "{path}");
        }
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("app")).unwrap();
        assert!(RepoPolicy::daemon_with_home(&[], None, Some(home.path())).check(&home.path().join("app")).is_ok());
    }

    #[test]
    fn the_home_minus_its_hidden_directories() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("code/app")).unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        let policy =
            RepoPolicy { enforce: true, home_opt: Some(std::fs::canonicalize(home.path()).unwrap()), roots: vec![] };
        assert!(policy.check(&home.path().join("code/app")).is_ok());
        assert!(policy.check(&home.path().join(".ssh")).unwrap_err().message.contains("hidden"));
        assert!(policy.check(home.path()).unwrap_err().message.contains("home directory itself"));
    }
}
