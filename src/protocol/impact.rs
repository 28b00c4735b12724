//! Change impact answers: what a diff changed, what depends on it, which tests reach it,
//! what running them gave, and the repo map. Lines are 1-based, paths relative to the repo
//! root with `/`.

use serde::{Deserialize, Serialize};

use super::{DocdexError, Result};

/// Which two states of the repo a diff compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffBase {
    /// The working tree (untracked files included) against a revision (`HEAD` by default).
    Working { rev: String },
    /// The index (what `git commit` would record) against `HEAD`.
    Staged,
}

impl DiffBase {
    /// `base` as users write it: `working`/absent for the working tree against HEAD,
    /// `staged`, or a revision (`HEAD~2`, `main`, a hash) for the working tree against it.
    pub fn parse(base_opt: Option<&str>, staged: bool) -> Result<DiffBase> {
        let base = base_opt.map(str::trim).filter(|b| !b.is_empty());
        match (base, staged) {
            (Some(_), true) if base != Some("staged") => Err(DocdexError::invalid(
                "staged compares the index with HEAD: give either a base revision or staged, not both",
            )),
            (_, true) | (Some("staged"), _) => Ok(DiffBase::Staged),
            (None, false) | (Some("working"), false) => Ok(DiffBase::Working { rev: "HEAD".into() }),
            (Some(rev), false) => {
                // A revision is handed to git as an argument: never one that reads as an option.
                let bad = rev.starts_with('-') || rev.chars().any(|c| c.is_whitespace() || c.is_control());
                if bad || rev.len() > 256 {
                    return Err(DocdexError::invalid(format!("`{rev}` is not a revision"))
                        .with_hint("give a branch, tag, commit or expression such as HEAD~1 (or staged, or working)"));
                }
                Ok(DiffBase::Working { rev: rev.to_string() })
            }
        }
    }

    /// How the base is written back: `staged`, or the revision the working tree is compared
    /// with.
    pub fn name(&self) -> String {
        match self {
            DiffBase::Staged => "staged".to_string(),
            DiffBase::Working { rev } => rev.clone(),
        }
    }

    /// The revision the old side is read from.
    pub fn old_rev(&self) -> &str {
        match self {
            DiffBase::Working { rev } => rev,
            DiffBase::Staged => "HEAD",
        }
    }
}

/// How one file changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileChangeInfo {
    pub path: String,
    /// added, modified, deleted or renamed.
    pub change: String,
    /// The path before a rename ("" otherwise).
    pub old_path: String,
}

/// A definition whose lines the diff touched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangedSymbolInfo {
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    /// Where it is now (where it was, for a deletion).
    pub line: u32,
    pub end_line: u32,
    /// added, modified, deleted or renamed.
    pub change: String,
    /// The name before a rename ("" otherwise).
    pub old_name: String,
    pub language: String,
}

/// A definition (or a file's top level, `kind` "file") that uses a changed one, directly
/// (`depth` 1) or through others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DependentInfo {
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub depth: u32,
    /// The path through the graph: the definitions from the one this uses to the changed
    /// one it leads to.
    pub via: Vec<String>,
    /// The product of the uses' confidences along `via`.
    pub confidence: f32,
}

/// A test that reaches a changed definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AffectedTest {
    pub path: String,
    /// The test function, or for a test framework's callback (`it("…")`) its title; "" for
    /// a test file that only imports the changed code.
    pub name: String,
    pub line: u32,
    pub depth: u32,
    pub via: Vec<String>,
    pub confidence: f32,
}

/// A test file among a change's tests: what a runner given files takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AffectedTestFile {
    pub path: String,
    /// Its surest test's confidence.
    pub confidence: f32,
    /// How many of the change's tests it holds (all of them, not only those in `tests`).
    pub tests: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffImpactResponse {
    /// What was compared: `working` against a revision, or `staged`.
    pub base: String,
    pub changed_files: Vec<String>,
    pub file_changes: Vec<FileChangeInfo>,
    pub changed_symbols: Vec<ChangedSymbolInfo>,
    /// Nearest and surest first; tests are in `tests`, not here.
    pub dependents: Vec<DependentInfo>,
    pub dependents_total: usize,
    /// Surest first.
    pub tests: Vec<AffectedTest>,
    pub tests_total: usize,
    /// The files of all the tests (`tests_total`, not only the `limit` listed), surest
    /// first, at most `limit`: a function hundreds of tests reach has its first 100 tests
    /// in a few files, and every covering file here.
    pub test_files: Vec<AffectedTestFile>,
    /// A list was cut at `limit`, or the walk at its bound on a hub.
    pub truncated: bool,
}

/// A failed test and what it said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestFailure {
    pub name: String,
    pub message: String,
}

/// One test run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunTestsResponse {
    /// cargo, pytest, vitest, jest, go or custom.
    pub runner: String,
    /// The command line that ran ("" when nothing needed to run).
    pub command: String,
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub failures: Vec<TestFailure>,
    pub duration_ms: u64,
    /// The run hit the time limit and its process group was killed.
    pub timed_out: bool,
    /// The runner's exit code (none when it was killed).
    pub exit_code: Option<i32>,
    /// The last lines of its output.
    pub output_tail: String,
    /// Output past the cap was dropped from the middle.
    pub output_truncated: bool,
    /// Why nothing ran, or what to know about the selection ("" otherwise).
    pub note: String,
}

/// A definition on the repo map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapSymbol {
    pub name: String,
    pub kind: String,
    pub line: u32,
    /// The declaration up to its body, on one line.
    pub signature: String,
}

/// A file on the repo map, with its definitions that made it (in line order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapFile {
    pub path: String,
    /// Its PageRank over the reference graph, scaled so that the mean file is 1.
    pub rank: f64,
    pub symbols: Vec<MapSymbol>,
}

/// The files and definitions that matter most, most important first, within a budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepoMapResponse {
    pub files: Vec<MapFile>,
    /// The map's size as text (`path:` lines and `line: signature` lines), in tokens of
    /// 3 characters.
    pub tokens: usize,
    pub budget_tokens: usize,
}
