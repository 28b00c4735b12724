//! The git side of a change: which files a diff touches, its hunks, and a file's text at a
//! revision, from the `git` command (every install has it; its diff is the one users read).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::protocol::{DocdexError, Result};

pub use crate::protocol::impact::DiffBase;

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChange {
    Added,
    Modified,
    Deleted,
    Renamed,
}

impl FileChange {
    pub fn name(self) -> &'static str {
        match self {
            FileChange::Added => "added",
            FileChange::Modified => "modified",
            FileChange::Deleted => "deleted",
            FileChange::Renamed => "renamed",
        }
    }
}

/// One hunk of a zero-context diff: the old side's lines `old_start..old_start+old_count`
/// became the new side's `new_start..new_start+new_count` (a count of 0: nothing on that side,
/// the start is the line before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_count: u32,
    pub new_start: u32,
    pub new_count: u32,
}

/// One file of a diff, paths relative to the repo root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    /// The path on the old side (differs from `path` for a rename).
    pub old_path: String,
    pub change: FileChange,
    pub hunks: Vec<Hunk>,
    /// Each hunk's old lines as the diff gives them (line endings kept, the last one's left
    /// out where git says the old side had none): the old side can be rebuilt from the new
    /// without asking git for it (`old_side`).
    pub removed: Vec<String>,
    /// The old side's blob id (`index` line of `--full-index`), empty when there is none.
    pub old_oid: String,
    pub binary: bool,
}

impl FileDiff {
    /// The old side rebuilt from the new one: each hunk's new lines replaced by its old,
    /// given only when its git blob id is the diff's old one (so never a near miss: a line
    /// that is not UTF-8, a file with another line ending than the diff showed). Spares a
    /// git process per diff on the path every change-impact answer takes.
    pub fn old_side(&self, new_text: &str) -> Option<String> {
        if self.binary || self.removed.len() != self.hunks.len() || self.old_oid.len() != 40 {
            return None;
        }
        let lines: Vec<&str> = new_text.split_inclusive('\n').collect();
        let mut out = String::with_capacity(new_text.len());
        let mut next = 0usize; // the first new line (0-based) not yet copied
        for (hunk, removed) in self.hunks.iter().zip(&self.removed) {
            // A hunk with no new lines sits after line `new_start`; else it starts there.
            let start = if hunk.new_count == 0 { hunk.new_start as usize } else { hunk.new_start as usize - 1 };
            let end = start + hunk.new_count as usize;
            if start < next || end > lines.len() {
                return None;
            }
            out.extend(lines[next..start].iter().copied());
            out.push_str(removed);
            next = end;
        }
        out.extend(lines[next..].iter().copied());
        (blob_oid(out.as_bytes()) == self.old_oid).then_some(out)
    }
}

/// git's SHA-1 object id of a blob with these bytes.
fn blob_oid(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs git in `root` and returns its standard output; a failure names the command and
/// what git said.
fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>> {
    run_git(root, args, &[0])
}

/// `git` where each exit code of `ok` is an answer.
fn run_git(root: &Path, args: &[&str], ok: &[i32]) -> Result<Vec<u8>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| {
            DocdexError::invalid(format!("cannot run git: {err}"))
                .with_hint("install git; diffs and change impact read the repo through it")
        })?;
    if !output.status.code().is_some_and(|code| ok.contains(&code)) {
        let said = String::from_utf8_lossy(&output.stderr);
        let said = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        return Err(DocdexError::invalid(format!("git {} failed: {said}", args.first().unwrap_or(&""))));
    }
    Ok(output.stdout)
}

/// Checks that `root` is inside a git work tree; its path from the work tree's top (`""` at
/// the top, else ending in `/`).
pub fn check_repo(root: &Path) -> Result<String> {
    match git(root, &["rev-parse", "--is-inside-work-tree", "--show-prefix"]) {
        Ok(out) if String::from_utf8_lossy(&out).starts_with("true") => {
            Ok(String::from_utf8_lossy(&out).lines().nth(1).unwrap_or("").trim().to_string())
        }
        Ok(_) | Err(_) => Err(DocdexError::invalid(format!("{} is not inside a git work tree", root.display()))
            .with_hint(
            "change impact compares against git's history: run `git init` and commit, or use a repo cloned with git",
        )),
    }
}

/// The files and hunks of the diff `base` names, restricted to `root` (which may be a
/// folder inside a larger work tree) with paths relative to it. A `root` outside any work
/// tree is a clear error.
pub fn diff(root: &Path, base: &DiffBase) -> Result<Vec<FileDiff>> {
    diff_in_work_tree(root, base).map_err(|err| match check_repo(root) {
        // Asked only on failure: one git process less on every diff.
        Ok(_) => err,
        Err(not_a_repo) => not_a_repo,
    })
}

fn diff_in_work_tree(root: &Path, base: &DiffBase) -> Result<Vec<FileDiff>> {
    let mut args = vec!["diff", "--no-color", "--no-ext-diff", "-U0", "-M", "--relative", "--full-index"];
    match base {
        DiffBase::Staged => args.extend(["--cached", "HEAD"]),
        DiffBase::Working { rev } => args.extend(["--end-of-options", rev.as_str()]),
    }
    args.push("--");
    // A revision git does not know is the caller's error, said plainly.
    // Untracked files are part of the working tree's change (a new module, a new test):
    // listed by a second git while the first diffs.
    let (text, untracked) = std::thread::scope(|scope| {
        let untracked = matches!(base, DiffBase::Working { .. })
            .then(|| scope.spawn(|| git(root, &["ls-files", "--others", "--exclude-standard", "-z"])));
        let text = git(root, &args);
        (text, untracked.map(|h| h.join().unwrap_or_else(|_| Err(DocdexError::internal("git ls-files stopped")))))
    });
    let text = text.map_err(|err| {
        let said = &err.message;
        if said.contains("unknown revision") || said.contains("bad revision") || said.contains("ambiguous argument") {
            DocdexError::invalid(format!("git does not know the revision `{}`", base.old_rev()))
                .with_hint("give a branch, tag, commit or expression such as HEAD~1; a repo without commits has none")
        } else {
            err
        }
    })?;
    let mut files = parse_diff(&String::from_utf8_lossy(&text));
    if let Some(out) = untracked {
        let out = out?;
        for path in out.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path).into_owned();
            if files.iter().any(|f| f.path == path) {
                continue;
            }
            let lines = std::fs::read(root.join(&path)).map(|b| count_lines(&b)).unwrap_or(0);
            files.push(FileDiff {
                old_path: path.clone(),
                path,
                change: FileChange::Added,
                hunks: vec![Hunk { old_start: 0, old_count: 0, new_start: 1, new_count: lines }],
                removed: vec![String::new()],
                old_oid: String::new(),
                binary: false,
            });
        }
    }
    if matches!(base, DiffBase::Working { .. }) {
        pair_moves(root, base.old_rev(), &mut files)?;
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The most deleted files and untracked new ones compared for moves: beyond it a change is a
/// reorganisation whose pairs git itself finds once they are added.
const MOVE_CANDIDATES: usize = 64;

/// A file moved with a plain `mv` (not `git mv`) is to git a deletion and an untracked file,
/// so its diff has no rename: every definition in it would read as deleted and added, and a
/// deleted name's uses all over the repo as broken. Pairs each deleted file with the new
/// untracked file most like it, when half its lines or more are kept (git's own default
/// for `-M`), and diffs the two with git so the pair is one renamed file with its hunks.
fn pair_moves(root: &Path, rev: &str, files: &mut Vec<FileDiff>) -> Result<()> {
    let deleted: Vec<usize> = (0..files.len()).filter(|&i| files[i].change == FileChange::Deleted).collect();
    let added: Vec<usize> =
        (0..files.len()).filter(|&i| files[i].change == FileChange::Added && files[i].old_oid.is_empty()).collect();
    if deleted.is_empty() || added.is_empty() || deleted.len() > MOVE_CANDIDATES || added.len() > MOVE_CANDIDATES {
        return Ok(());
    }
    let requests: Vec<(&str, &str)> = deleted.iter().map(|&i| (rev, files[i].old_path.as_str())).collect();
    let old_texts = show_many(root, &requests)?;
    let new_texts: Vec<Option<String>> =
        added.iter().map(|&i| std::fs::read_to_string(root.join(&files[i].path)).ok()).collect();
    let old_lines: Vec<Option<Vec<u64>>> = old_texts.iter().map(|t| t.as_deref().map(line_hashes)).collect();
    let new_lines: Vec<Option<Vec<u64>>> = new_texts.iter().map(|t| t.as_deref().map(line_hashes)).collect();
    let mut scored: Vec<(f32, usize, usize)> = Vec::new();
    for (d, old) in old_lines.iter().enumerate() {
        let Some(old) = old else { continue };
        for (a, new) in new_lines.iter().enumerate() {
            let Some(new) = new else { continue };
            let score = kept_lines(old, new);
            if score >= 0.5 {
                scored.push((score, d, a));
            }
        }
    }
    // The surest pairs first; each file in one pair at most.
    scored.sort_by(|x, y| y.0.total_cmp(&x.0));
    let (mut used_d, mut used_a) = (vec![false; deleted.len()], vec![false; added.len()]);
    let mut moves = Vec::new();
    for (_, d, a) in scored {
        if used_d[d] || used_a[a] {
            continue;
        }
        used_d[d] = true;
        used_a[a] = true;
        let old_text = old_texts[d].as_deref().unwrap_or("");
        moves.push(moved(root, old_text, &files[deleted[d]].old_path, &files[added[a]].path)?);
    }
    let mut paired = vec![false; files.len()];
    for (d, _) in used_d.iter().enumerate().filter(|(_, used)| **used) {
        paired[deleted[d]] = true;
    }
    for (a, _) in used_a.iter().enumerate().filter(|(_, used)| **used) {
        paired[added[a]] = true;
    }
    let mut kept = paired.iter();
    files.retain(|_| !kept.next().copied().unwrap_or(false));
    files.extend(moves);
    Ok(())
}

/// A text's non-blank lines (indentation aside) as sorted hashes: two files' kept lines are
/// then counted in one pass over both.
fn line_hashes(text: &str) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut hashes: Vec<u64> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            line.hash(&mut hasher);
            hasher.finish()
        })
        .collect();
    hashes.sort_unstable();
    hashes
}

/// The share of the longer side's lines (`line_hashes`) the other side keeps, as a multiset.
fn kept_lines(old: &[u64], new: &[u64]) -> f32 {
    let longer = old.len().max(new.len());
    // Fewer than half as many lines on one side: under half kept whatever they are.
    if longer == 0 || old.len().min(new.len()) * 2 < longer {
        return 0.0;
    }
    let (mut i, mut j, mut kept) = (0, 0, 0usize);
    while i < old.len() && j < new.len() {
        match old[i].cmp(&new[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                kept += 1;
                i += 1;
                j += 1;
            }
        }
    }
    kept as f32 / longer as f32
}

/// The diff of a moved file, its old text (at the diff's base) against its new file, as git
/// reads it, with the repo's two paths.
fn moved(root: &Path, old_text: &str, old_path: &str, path: &str) -> Result<FileDiff> {
    let dir = tempfile::tempdir()?;
    let old_file = dir.path().join("old");
    std::fs::write(&old_file, old_text)?;
    let old_arg = old_file.to_string_lossy().into_owned();
    let new_arg = root.join(path).to_string_lossy().into_owned();
    // `--no-index` exits with 1 when the files differ: that is its answer, not a failure.
    let out = run_git(
        root,
        &["diff", "--no-index", "--no-color", "--no-ext-diff", "-U0", "--full-index", "--", &old_arg, &new_arg],
        &[0, 1],
    )?;
    let mut diff = parse_diff(&String::from_utf8_lossy(&out)).into_iter().next().unwrap_or(FileDiff {
        path: String::new(),
        old_path: String::new(),
        change: FileChange::Renamed,
        hunks: Vec::new(),
        removed: Vec::new(),
        old_oid: String::new(),
        binary: false,
    });
    diff.path = path.to_string();
    diff.old_path = old_path.to_string();
    diff.change = FileChange::Renamed;
    diff.old_oid = blob_oid(old_text.as_bytes());
    Ok(diff)
}

fn count_lines(bytes: &[u8]) -> u32 {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u32;
    newlines + u32::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// Files' texts at revisions in one `git cat-file --batch` (one process for a whole diff):
/// each request is (`rev`, path relative to `root`), `rev` `""` for the index; `None` where
/// the file does not exist there.
pub fn show_many(root: &Path, requests: &[(&str, &str)]) -> Result<Vec<Option<String>>> {
    use std::io::{BufRead, Read, Write};
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| DocdexError::invalid(format!("cannot run git: {err}")))?;
    let mut input = String::new();
    for (rev, path) in requests {
        // An object name is one line: a path with a newline is simply not found. `./`: the
        // path is relative to `root`, which may be a folder inside the work tree.
        input.push_str(&format!("{rev}:./{}\n", path.replace('\n', " ")));
    }
    let mut stdin = child.stdin.take().ok_or_else(|| DocdexError::internal("git cat-file has no stdin"))?;
    // Written from a thread: git answers while it reads, and two full pipes would stall.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let stdout = child.stdout.take().ok_or_else(|| DocdexError::internal("git cat-file has no stdout"))?;
    let mut out = std::io::BufReader::new(stdout);
    let mut texts = Vec::with_capacity(requests.len());
    for _ in requests {
        let mut header = String::new();
        if out.read_line(&mut header)? == 0 {
            break;
        }
        // `<oid> blob <size>`, or `<name> missing`.
        let size = match header.trim_end().rsplit_once(' ') {
            Some((kind, size)) if kind.ends_with(" blob") => size.parse::<usize>().ok(),
            _ => None,
        };
        match size {
            Some(size) => {
                let mut body = vec![0u8; size + 1];
                out.read_exact(&mut body)?;
                body.pop();
                texts.push(Some(String::from_utf8_lossy(&body).into_owned()));
            }
            None => texts.push(None),
        }
    }
    let _ = writer.join();
    let _ = child.wait();
    texts.resize(requests.len(), None);
    Ok(texts)
}

/// Parses `git diff -U0 -M` output.
pub fn parse_diff(text: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    // Whether the line before was a removed line (a "\ No newline" marker then speaks of it).
    let mut after_removed = false;
    for raw in text.split_inclusive('\n') {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let in_hunk = files.last().is_some_and(|f| !f.hunks.is_empty());
        if in_hunk && (line.starts_with('-') || line.starts_with('+') || line.starts_with('\\')) {
            // A hunk's body (headers of the next file start with "diff --git").
            let file = files.last_mut().expect("in a hunk");
            let removed = file.removed.last_mut().expect("a hunk's removed lines");
            if let Some(old) = raw.strip_prefix('-') {
                removed.push_str(old);
                if !old.ends_with('\n') {
                    removed.push('\n');
                }
            } else if line.starts_with('\\') && after_removed {
                removed.pop();
            }
            after_removed = line.starts_with('-');
            continue;
        }
        after_removed = false;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (old, new) = split_git_paths(rest);
            files.push(FileDiff {
                path: new,
                old_path: old,
                change: FileChange::Modified,
                hunks: Vec::new(),
                removed: Vec::new(),
                old_oid: String::new(),
                binary: false,
            });
            continue;
        }
        let Some(file) = files.last_mut() else { continue };
        if line.starts_with("new file mode") {
            file.change = FileChange::Added;
        } else if let Some(ids) = line.strip_prefix("index ") {
            let old = ids.split("..").next().unwrap_or("");
            file.old_oid = if old.bytes().all(|b| b == b'0') { String::new() } else { old.to_string() };
        } else if line.starts_with("deleted file mode") {
            file.change = FileChange::Deleted;
        } else if let Some(from) = line.strip_prefix("rename from ") {
            file.old_path = unquote(from);
            file.change = FileChange::Renamed;
        } else if let Some(to) = line.strip_prefix("rename to ") {
            file.path = unquote(to);
        } else if line.starts_with("Binary files ") {
            file.binary = true;
        } else if let Some(old) = line.strip_prefix("--- ") {
            if old != "/dev/null" {
                let old = unquote(old);
                file.old_path = old.strip_prefix("a/").unwrap_or(&old).to_string();
            }
        } else if let Some(new) = line.strip_prefix("+++ ") {
            if new != "/dev/null" {
                let new = unquote(new);
                file.path = new.strip_prefix("b/").unwrap_or(&new).to_string();
            } else {
                file.path = file.old_path.clone();
            }
        } else if let Some(rest) = line.strip_prefix("@@ -") {
            if let Some(hunk) = parse_hunk(rest) {
                file.hunks.push(hunk);
                file.removed.push(String::new());
            }
        }
    }
    files
}

/// `a,b +c,d @@ …` → the hunk (a count left out is 1).
fn parse_hunk(rest: &str) -> Option<Hunk> {
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let range = |s: &str| -> Option<(u32, u32)> {
        match s.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = range(old)?;
    let (new_start, new_count) = range(new)?;
    Some(Hunk { old_start, old_count, new_start, new_count })
}

/// The two paths of a `diff --git a/x b/y` line (quoted when they hold odd characters).
fn split_git_paths(rest: &str) -> (String, String) {
    if rest.starts_with('"') {
        let mut parts = rest.splitn(2, "\" ");
        let old = parts.next().unwrap_or("").trim_start_matches('"');
        let new = parts.next().unwrap_or("");
        let strip = |s: &str| unquote(s).trim_start_matches("a/").trim_start_matches("b/").to_string();
        return (strip(&format!("\"{old}\"")), strip(new));
    }
    // Unquoted: the two halves are equal for a plain change, so split in the middle.
    match rest.split_once(" b/") {
        Some((old, new)) => (old.trim_start_matches("a/").to_string(), new.to_string()),
        None => (rest.to_string(), rest.to_string()),
    }
}

/// Undoes git's C-style quoting of a path (`"a\tb"`), leaving plain paths as they are.
fn unquote(s: &str) -> String {
    let s = s.trim_end_matches('\t');
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut bytes = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = chars.peek() {
                        value = value * 8 + u32::from(n - b'0');
                        chars.next();
                    }
                }
                bytes.push(value as u8);
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_context_diff_gives_files_changes_and_hunks() {
        let text = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -3,2 +3 @@ fn x\n-a\n-b\n+c\n@@ -10,0 +11,2 @@\n+d\n+e\n\
diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-x\n+y\n\
diff --git a/gone.go b/gone.go\ndeleted file mode 100644\n--- a/gone.go\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n\
diff --git a/img.png b/img.png\nnew file mode 100644\nBinary files /dev/null and b/img.png differ\n";
        let files = parse_diff(text);
        assert_eq!(files.len(), 4);
        assert_eq!(
            files[0].hunks,
            vec![
                Hunk { old_start: 3, old_count: 2, new_start: 3, new_count: 1 },
                Hunk { old_start: 10, old_count: 0, new_start: 11, new_count: 2 },
            ]
        );
        assert_eq!(
            (files[1].old_path.as_str(), files[1].path.as_str(), files[1].change),
            ("old.py", "new.py", FileChange::Renamed)
        );
        assert_eq!((files[2].path.as_str(), files[2].change), ("gone.go", FileChange::Deleted));
        assert!(files[3].binary && files[3].change == FileChange::Added);
    }

    /// Commits `old` as each file, writes `new` over it, and returns the working tree's diff.
    fn real_diff(pairs: &[(&str, &[u8], &[u8])]) -> (tempfile::TempDir, Vec<FileDiff>) {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let out = Command::new("git").arg("-C").arg(dir.path()).args(args).output().unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        run(&["init", "-q"]);
        run(&["config", "core.autocrlf", "false"]);
        for (path, old, _) in pairs {
            std::fs::write(dir.path().join(path), old).unwrap();
        }
        run(&["add", "-A"]);
        run(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
        for (path, _, new) in pairs {
            std::fs::write(dir.path().join(path), new).unwrap();
        }
        let files = diff(dir.path(), &DiffBase::Working { rev: "HEAD".into() }).unwrap();
        (dir, files)
    }

    #[test]
    fn the_old_side_is_rebuilt_from_the_new_and_the_diff_or_not_at_all() {
        let cases: &[(&str, &[u8], &[u8])] = &[
            // lines replaced, removed at the start, added at the end
            ("a.rs", b"fn a() {\n    1\n}\nfn b() {}\n", b"fn a() {\n    2\n}\nfn b() {}\nfn c() {}\n"),
            ("b.rs", b"// head\n// more\nfn b() {}\n", b"fn b() {}\n"),
            // CRLF kept, and an old side without a final newline
            ("c.rs", b"fn c() {\r\n    1\r\n}", b"fn c() {\r\n    2\r\n}\r\n"),
            // a new side without a final newline
            ("d.rs", b"fn d() {}\nfn e() {}\n", b"fn d() {}\nfn e() { 1 }"),
        ];
        let (dir, files) = real_diff(cases);
        assert_eq!(files.len(), cases.len());
        for (path, old, new) in cases {
            let file = files.iter().find(|f| f.path == *path).unwrap();
            let rebuilt = file.old_side(std::str::from_utf8(new).unwrap());
            assert_eq!(rebuilt.as_deref().map(str::as_bytes), Some(*old), "{path}");
        }
        drop(dir);
        // A removed line that is not UTF-8 cannot be rebuilt from the diff's text: no answer
        // rather than a wrong one (the caller asks git for that side).
        let (_dir, files) = real_diff(&[("e.rs", b"fn e() {}\n// \xff\n", b"fn e() {}\n")]);
        assert_eq!(files[0].old_side("fn e() {}\n"), None);
        assert_eq!(files[0].old_oid.len(), 40);
    }

    #[test]
    fn a_file_moved_without_git_is_one_renamed_file_with_its_edits() {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let out = Command::new("git").arg("-C").arg(dir.path()).args(args).output().unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        run(&["init", "-q"]);
        let crate_dir = dir.path().join("lib");
        std::fs::create_dir_all(crate_dir.join("src")).unwrap();
        let body: String = (0..12).map(|i| format!("fn f{i}() {{\n    {i}\n}}\n")).collect();
        std::fs::write(crate_dir.join("src/a.rs"), &body).unwrap();
        std::fs::write(crate_dir.join("src/gone.rs"), "fn unrelated() {}\n").unwrap();
        run(&["add", "-A"]);
        run(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
        // `mv` and an edit of one line; another file deleted and an unrelated one created.
        std::fs::remove_file(crate_dir.join("src/a.rs")).unwrap();
        std::fs::write(crate_dir.join("src/b.rs"), body.replace("    3\n", "    33\n")).unwrap();
        std::fs::remove_file(crate_dir.join("src/gone.rs")).unwrap();
        std::fs::write(crate_dir.join("src/new.rs"), "struct New;\n").unwrap();
        // The root is a folder inside the work tree: paths stay relative to it.
        let files = diff(&crate_dir, &DiffBase::Working { rev: "HEAD".into() }).unwrap();
        let summary: Vec<(&str, &str, FileChange)> =
            files.iter().map(|f| (f.old_path.as_str(), f.path.as_str(), f.change)).collect();
        assert_eq!(
            summary,
            vec![
                ("src/a.rs", "src/b.rs", FileChange::Renamed),
                ("src/gone.rs", "src/gone.rs", FileChange::Deleted),
                ("src/new.rs", "src/new.rs", FileChange::Added),
            ]
        );
        let moved = &files[0];
        assert_eq!(moved.hunks, vec![Hunk { old_start: 11, old_count: 1, new_start: 11, new_count: 1 }]);
        let new_text = std::fs::read_to_string(crate_dir.join("src/b.rs")).unwrap();
        assert_eq!(moved.old_side(&new_text).as_deref(), Some(body.as_str()));
    }

    #[test]
    fn quoted_paths_and_bad_revisions() {
        assert_eq!(unquote("\"caf\\303\\251 x.rs\""), "café x.rs");
        let files = parse_diff(
            "diff --git \"a/t\\tb.rs\" \"b/t\\tb.rs\"\n--- \"a/t\\tb.rs\"\n+++ \"b/t\\tb.rs\"\n@@ -1 +1 @@\n",
        );
        assert_eq!(files[0].path, "t\tb.rs");
        assert!(DiffBase::parse(Some("--output=/tmp/x"), false).is_err());
        assert!(DiffBase::parse(Some("HEAD~1"), true).is_err());
        assert_eq!(DiffBase::parse(Some("staged"), false).unwrap(), DiffBase::Staged);
        assert_eq!(DiffBase::parse(None, false).unwrap(), DiffBase::Working { rev: "HEAD".into() });
    }
}
