//! Change impact: from a git diff to the definitions it touched, what depends on them and
//! the tests that reach them. The changed definitions come from parsing both sides of each
//! file (so they are right however fresh the index is); dependents and tests come from the
//! repo's code graph.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::{Addr, AsyncContext, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{self, Caller, Tool};
use super::search::DiffSearch;
use super::{code, open_indexed, tracked, ToolDispatcher};
use crate::actors::chat::ReadDiff;
use crate::actors::repo_supervisor::{PendingChanges, RunIndex};
use crate::change::git::{DiffBase, FileChange};
use crate::change::{ChangeSet, SymbolChange};
use crate::code::dependents::{self, Reached, Seed, WalkLimits};
use crate::code::CodeGraph;
use crate::index::RepoIndex;
use crate::protocol::impact::{
    AffectedTest, AffectedTestFile, ChangedSymbolInfo, DependentInfo, DiffImpactResponse, FileChangeInfo,
    RepoMapResponse,
};
use crate::protocol::{DocdexError, HitSource, Result, SearchHit, SearchRequest, SearchResponse};

/// A call through an object of unknown type that names a changed method, when the name is
/// defined too often to resolve (`item.as_string()`): followed to tests at this confidence
/// (above `TEST_MIN_CONFIDENCE`, below every dependent's floor). On the coverage-judged set
/// it raised covering-test recall 0.40 -> 0.56 at precision 0.62 -> 0.57 (tune), and on the
/// held-out projects 0.31 -> 0.58 at 0.69 -> 0.64.
pub const MEMBER_GUESS_CONFIDENCE: f32 = 0.2;
/// Hops from a changed definition to its dependents when the caller names no depth.
pub const DEFAULT_DIFF_DEPTH: u32 = 2;
/// Hops from a changed definition to a test: tests reach code through helpers, fixtures and
/// the layers of the code under test (click's tests: runner → `Command.main` → context →
/// parser → …). Measured on the coverage-judged tune split (benches/impact): 3 hops found
/// 0.30 of the covering test files at precision 0.71, 5 hops 0.41 at 0.59; with typed
/// receivers and local scopes, 5 hops 0.63 at 0.57, 8 hops 0.76 at 0.55, 12 hops 0.77 at 0.54.
pub const DEFAULT_TEST_DEPTH: u32 = 8;
/// Rust code is written in smaller functions, so its tests are more hops away (pulldown-cmark:
/// a scanner → `parse_line` → `parse_paragraph` → `parse_block` → `run` → `run_first_pass` →
/// `Parser::new_ext` → the suite's `test_markdown_html` → a test is nine). Micro R / P at 8 →
/// 12 hops, crates.io crates: semver and regex-syntax 0.854 / 0.581 → 0.890 / 0.568, similar
/// and petgraph 0.886 / 0.478 → 0.898 / 0.479, http and pulldown-cmark 0.706 / 0.592 → 0.789 /
/// 0.591, bytes, ron and num-bigint unchanged. So is a grammar's precedence ladder in
/// JavaScript/TypeScript (cel-js: a literal's alternative → `unaryExpression` → … → `expr` →
/// `parse` → a spec is ten): cel-js and typed-binary 0.810 / 0.387 → 0.956 / 0.369, yup and
/// immer 0.789 / 0.715 → 0.791 / 0.712, cheerio and css-select 0.923 / 0.676 → 0.927 / 0.676,
/// tape 0.728 / 0.332 → 0.728 / 0.329, the others unchanged. Elsewhere 12 hops cost precision
/// for little: Python 0.910 / 0.570 → 0.920 / 0.558, Go 0.810 / 0.553 → 0.859 / 0.525 and
/// 0.924 / 0.613 → 0.930 / 0.578.
pub const DEEP_TEST_DEPTH: u32 = 12;
/// How sure each use on a test's path must be: below dependents' 0.5, so that a method called
/// on a value of unknown type (one of two definitions by name, 0.2) still leads to its tests.
pub const TEST_MIN_CONFIDENCE: f32 = 0.15;
/// Dependents and tests each list gives when the caller names no limit.
pub const DEFAULT_DIFF_LIMIT: usize = 100;
/// Definitions a walk visits at most (a hub's dependents are cut there, and said to be).
const MAX_VISITED: usize = 20_000;
/// Resolved uses a walk follows at most (a definition expanded costs its uses): bounds the
/// time and size of a diff's walk through hubs; the answer says when it was cut. Coverage-
/// judged tune split (micro R / P): 500 0.728 / 0.632, 1,000 0.853 / 0.609, 2,000 0.896 /
/// 0.585, 4,000 0.898 / 0.569, none 0.902 / 0.564. (Counted in every use of the name before
/// uses were resolved ahead, 2,000 gave 0.805 / 0.631.)
const MAX_WALK_WORK: usize = 2_000;
/// Test files read for a callback's title at most this large.
const MAX_TEST_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// What a diff changed and what it reaches.
#[derive(Message, Clone)]
#[rtype(result = "Result<DiffImpactResponse>")]
pub struct DiffImpact {
    pub repo_opt: Option<PathBuf>,
    pub base: DiffBase,
    pub depth: u32,
    pub min_confidence: f32,
    pub limit: usize,
}

/// A diff's answer from the graph at hand, or the files the index must re-read first
/// (`ChangeSet::behind`) in the repo at that root.
enum FirstPass {
    Answered(Box<DiffImpactResponse>),
    Behind(PathBuf, Vec<String>),
}

impl Handler<DiffImpact> for ToolDispatcher {
    type Result = ResponseFuture<Result<DiffImpactResponse>>;

    fn handle(&mut self, msg: DiffImpact, ctx: &mut Context<Self>) -> Self::Result {
        if msg.depth == 0 || msg.depth > super::code::MAX_IMPACT_DEPTH {
            let max = super::code::MAX_IMPACT_DEPTH;
            return Box::pin(async move { Err(DocdexError::invalid(format!("depth must be 1 to {max}"))) });
        }
        let retry = msg.clone();
        // Set before the first pass runs (a future does nothing until awaited).
        let pending_cell: Arc<std::sync::OnceLock<Vec<String>>> = Arc::default();
        let pending_opt = Arc::clone(&pending_cell);
        let pending = self.pending_changes(msg.repo_opt.clone());
        let first = self.with_graph(msg.repo_opt.clone(), move |index, graph| {
            let changes = crate::change::read(&index.root, &msg.base, Some(graph), Some(&index.side_facts))?;
            let mut behind = changes.behind(graph);
            let pending = pending_opt.get().map(Vec::as_slice).unwrap_or_default();
            behind.extend(held_at_another_text(&index.root, graph, &changes, pending));
            behind.sort();
            behind.dedup();
            if behind.is_empty() {
                return Ok(FirstPass::Answered(Box::new(diff_impact(index, graph, &changes, &msg))));
            }
            Ok(FirstPass::Behind(index.root.clone(), behind))
        });
        // Built now, run only when the index had to catch up (a future does nothing until
        // awaited).
        let second = self.with_graph(retry.repo_opt.clone(), move |index, graph| {
            let changes = crate::change::read(&index.root, &retry.base, Some(graph), Some(&index.side_facts))?;
            Ok(diff_impact(index, graph, &changes, &retry))
        });
        let me = ctx.address();
        Box::pin(async move {
            let _ = pending_cell.set(pending.await);
            let (root, paths) = match first.await? {
                FirstPass::Answered(answer) => return Ok(*answer),
                FirstPass::Behind(root, paths) => (root, paths),
            };
            reread(&me, root, paths).await;
            second.await
        })
    }
}

impl ToolDispatcher {
    /// The paths of the repo the watcher saw change and the index has not read since (none
    /// without a watcher, or for a repo that cannot be resolved: the pass reports that).
    fn pending_changes(&self, repo_opt: Option<PathBuf>) -> impl std::future::Future<Output = Vec<String>> + 'static {
        let repo = self.resolve_repo(repo_opt);
        let supervisor_opt = self.supervisor_opt.clone();
        async move {
            let (Ok(repo), Some(supervisor)) = (repo.await, supervisor_opt) else { return Vec::new() };
            supervisor.send(PendingChanges { repo }).await.unwrap_or_default()
        }
    }
}

/// Files outside the diff that the watcher saw change (`pending`) and that the graph holds at
/// another text than the working tree's: most often one an index run read while `git
/// checkout` or an editor was writing it, half written or gone for a moment, whose next read
/// waits for the watcher's pause. A walk through its facts would follow what was half there
/// (a diff's answer then misses what that file leads to), so the index re-reads it first.
/// So is a code file the graph does not hold and that is there now, outside the diff (so
/// tracked and as its base has it): `git checkout` deletes a file before it writes it again,
/// and an index run that looked in between left it out. The walk would go round it, and the
/// answer would miss every test it leads to, with no word of it, until the watcher's next
/// run (scoring passes under load saw such short answers now and then).
pub(super) fn held_at_another_text(
    root: &Path,
    graph: &CodeGraph,
    changes: &ChangeSet,
    pending: &[String],
) -> Vec<String> {
    pending
        .iter()
        .filter(|p| !changes.files.iter().any(|f| f.path == **p || f.old_path == **p))
        .filter(|p| {
            let Some(file) = graph.file_index(p) else {
                return crate::ingest::Language::detect(Path::new(p.as_str())).grammar().is_some()
                    && root.join(p.as_str()).is_file();
            };
            let held = graph.content_hash(file);
            if held.is_empty() {
                return false;
            }
            match crate::ingest::read_text_file(root, p, crate::change::MAX_PARSED_BYTES as u64) {
                crate::ingest::FileRead::Text(text) => crate::ingest::sha256_hex(text.as_bytes()) != held,
                crate::ingest::FileRead::Binary => true,
                // Gone since (its facts name what is not there), or not readable now.
                crate::ingest::FileRead::Unreadable(_) => !root.join(p.as_str()).exists(),
            }
        })
        .cloned()
        .collect()
}

/// Re-reads files of a diff that the index holds at another version, without the definitions
/// the diff modified (`ChangeSet::behind`: it read them while an editor or `git checkout` was
/// writing them, and the watcher reads them again only once edits pause), as the watcher
/// would: a walk from the diff would otherwise start from nothing.
pub(super) async fn reread(me: &Addr<ToolDispatcher>, root: PathBuf, paths: Vec<String>) {
    tracing::info!(repo = %root.display(), files = ?paths, "the index re-reads changed files it holds at another version");
    let (progress, _) = tokio::sync::mpsc::unbounded_channel();
    let caught_up = me.send(RunIndex { repo: root, progress, changed_opt: Some(paths) }).await;
    if let Ok(Err(err)) | Err(err) = caught_up.map_err(DocdexError::from) {
        // Another writer holds the index: the answer is the one the graph can give.
        tracing::warn!(error = %err.message, "could not re-read the changed files");
    }
}

pub(super) fn diff_impact(
    index: &RepoIndex,
    graph: &CodeGraph,
    changes: &ChangeSet,
    msg: &DiffImpact,
) -> DiffImpactResponse {
    let mut seeds: Vec<Seed> = Vec::new();
    // The old names the diff takes away: what imports them breaks where it is imported.
    let mut gone: Vec<Seed> = Vec::new();
    for c in &changes.symbols {
        let s = &c.symbol;
        match c.change {
            SymbolChange::Added => {}
            SymbolChange::Modified => {
                // Of several definitions of one name (regex-syntax's three `fn imp()`, each
                // under its own `#[cfg(…)]`), the one at the changed lines.
                let found = graph.defined_in(&c.path, &s.qualified_name, s.kind);
                let nearest = found.iter().min_by_key(|&&r| graph.symbol(r).line.abs_diff(s.line));
                seeds.push(Seed::plain(nearest.copied(), &s.name, &s.qualified_name));
            }
            SymbolChange::Deleted | SymbolChange::Renamed => {
                // Its callers may still name it (by the old name); after a rename, those
                // already updated name the new one.
                let old_qualified = c.old_qualified_name_opt.clone().unwrap_or_else(|| s.qualified_name.clone());
                let old_name = c.old_name_opt.clone().unwrap_or_else(|| s.name.clone());
                let file = changes.files.iter().find(|f| f.path == c.path);
                let old_path = file.map(|f| f.old_path.as_str()).unwrap_or(&c.path);
                let stale = graph.defined_in(old_path, &old_qualified, s.kind);
                let old = Seed::plain(stale.first().copied(), &old_name, &old_qualified);
                gone.push(old.clone());
                seeds.push(old);
                if c.change == SymbolChange::Renamed {
                    if let Some(&now) = graph.defined_in(&c.path, &s.qualified_name, s.kind).first() {
                        seeds.push(Seed::plain(Some(now), &s.name, &s.qualified_name));
                    }
                }
            }
        }
    }
    let moved = moved_modules(graph, changes);
    for &(file, reread) in &moved {
        seeds.extend(module_seeds(graph, file, reread));
    }
    dependents::add_implied_seeds(graph, &mut seeds);
    let limits = WalkLimits {
        depth: msg.depth,
        test_depth: msg.depth.max(default_test_depth(graph, &seeds)),
        min_confidence: msg.min_confidence,
        test_min_confidence: msg.min_confidence.min(TEST_MIN_CONFIDENCE),
        max_visited: MAX_VISITED,
        max_work: MAX_WALK_WORK,
        member_guess: MEMBER_GUESS_CONFIDENCE,
    };
    // Code the repo's default test run does not build (`#[cfg(feature = "serde")]`) runs in
    // no test, and neither does a test it leaves out: one outside pytest's `testpaths`.
    let mut default_run = crate::code::default_run::DefaultRun::new(&index.root);
    let mut walk =
        dependents::walk_built(graph, &seeds, limits, &mut |file, symbol| default_run.builds(graph, file, symbol));
    walk.tests.retain(|r| default_run.runs(graph, r.file, r.symbol_opt));
    // A test reached through a dict entry (`"wordcount": do_wordcount`) runs it where its
    // file names the key; a file that cannot be read keeps its tests.
    let mut texts: HashMap<u32, Option<String>> = HashMap::new();
    walk.tests.retain(|r| {
        let Some(key) = dependents::required_key(graph, r) else { return true };
        let text = texts.entry(r.file).or_insert_with(|| read_test_file(&index.root, graph.path(r.file)));
        text.as_deref().is_none_or(|text| dependents::names_key(text, &key))
    });
    // A test reached through Rust code a guard keeps off (`if let Some(r) = self.range`) runs
    // it only if it also runs what turns the guard on (`Compound::new_range`).
    dependents::drop_tests_a_guard_keeps_off(graph, &mut walk.tests, limits);
    let callbacks = each_callback(&index.root, graph, &walk.tests, &mut texts);
    walk.tests = callbacks;
    // A Python test file that imports, however far up, a module whose top level names a name
    // the diff takes away fails before any test in it runs.
    for r in dependents::broken_imports(graph, &gone, limits) {
        if !walk.tests.iter().any(|t| t.file == r.file) && default_run.runs(graph, r.file, None) {
            walk.tests.push(r);
        }
    }
    // A test the diff changes or adds is affected before anything it reaches: an agent that
    // edits a test runs that test.
    let mut changed = changed_tests(graph, changes);
    changed.retain(|r| default_run.runs(graph, r.file, r.symbol_opt));
    walk.tests.retain(|r| !changed.iter().any(|c| c.file == r.file && c.symbol_opt == r.symbol_opt));
    walk.tests.splice(0..0, changed);
    // A moved module's own code still names its definitions where they are: not broken.
    walk.dependents.retain(|r| !moved.iter().any(|&(file, _)| file == r.file));
    let dependents_total = walk.dependents.len();
    let tests_total = walk.tests.len();
    let dependents = walk.dependents.iter().take(msg.limit).map(|r| dependent_info(graph, r)).collect();
    let tests =
        listed_tests(&walk.tests, msg.limit).into_iter().map(|r| affected_test(index, graph, r, &mut texts)).collect();
    let test_files = test_files(graph, &walk.tests, msg.limit);
    DiffImpactResponse {
        base: msg.base.name(),
        changed_files: changes.files.iter().map(|f| f.path.clone()).collect(),
        file_changes: changes
            .files
            .iter()
            .map(|f| FileChangeInfo {
                path: f.path.clone(),
                change: f.change.name().to_string(),
                old_path: if f.old_path != f.path { f.old_path.clone() } else { String::new() },
            })
            .collect(),
        changed_symbols: changes
            .symbols
            .iter()
            .map(|c| ChangedSymbolInfo {
                name: c.symbol.name.clone(),
                qualified_name: c.symbol.qualified_name.clone(),
                kind: c.symbol.kind.name().to_string(),
                path: c.path.clone(),
                line: c.symbol.line,
                end_line: c.symbol.end_line,
                change: c.change.name().to_string(),
                old_name: if c.change == SymbolChange::Renamed {
                    c.old_name_opt.clone().unwrap_or_default()
                } else {
                    String::new()
                },
                language: c.language.to_string(),
            })
            .collect(),
        dependents,
        dependents_total,
        tests,
        tests_total,
        test_files,
        truncated: walk.truncated || dependents_total > msg.limit || tests_total > msg.limit,
    }
}

/// The graph's files of the modules the diff moves (git reads a rename) whose path names
/// them where they are imported (`renames_module`): at the old path while the graph still
/// holds it, else at the new (then `true`: the index has read the move).
fn moved_modules(graph: &CodeGraph, changes: &ChangeSet) -> Vec<(u32, bool)> {
    let mut moved = Vec::new();
    for f in changes.files.iter().filter(|f| f.change == FileChange::Renamed && f.old_path != f.path) {
        let found = match graph.file_index(&f.old_path) {
            Some(file) => Some((file, false)),
            None => graph.file_index(&f.path).map(|file| (file, true)),
        };
        if let Some((file, reread)) = found {
            if renames_module(&graph.code(file).language, &f.old_path, &f.path) {
                moved.push((file, reread));
            }
        }
    }
    moved
}

/// Whether moving a file from `old` to `new` changes the name its importers give it: not a Go
/// file within its package's folder, nor a Rust module between `x.rs` and `x/mod.rs`.
fn renames_module(language: &str, old: &str, new: &str) -> bool {
    let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let rust_module = |p: &str| p.strip_suffix("/mod.rs").or_else(|| p.strip_suffix(".rs")).unwrap_or(p).to_string();
    match language {
        "go" => folder(old) != folder(new),
        "rust" => rust_module(old) != rust_module(new),
        _ => true,
    }
}

/// Seeds for the top-level definitions of a moved module: each import of them names a path
/// that is gone. Once the index has read the move (`reread`), those imports resolve to
/// nothing, and are sought by the definitions' names too.
fn module_seeds(graph: &CodeGraph, file: u32, reread: bool) -> Vec<Seed> {
    let code = graph.code(file);
    let mut seeds = Vec::new();
    for (i, s) in code.symbols.iter().enumerate().filter(|(_, s)| s.container.is_empty()) {
        for symbol_opt in std::iter::once(Some((file, i as u32))).chain(reread.then_some(None)) {
            seeds.push(Seed::plain(symbol_opt, &s.name, &s.qualified_name));
        }
    }
    seeds
}

/// `tests` with each JS/TS test file reached at file level (its `it(…)` callbacks are no
/// definitions: the walk keeps one entry per file, at its first use) as one entry per test
/// callback holding a use of the name it was reached by, in the order of the file; an import
/// alone stays the file's entry.
fn each_callback(
    root: &Path,
    graph: &CodeGraph,
    tests: &[Reached],
    texts: &mut HashMap<u32, Option<String>>,
) -> Vec<Reached> {
    let mut out: Vec<Reached> = Vec::new();
    for r in tests {
        let language = graph.code(r.file).language.as_str();
        let js = matches!(language, "javascript" | "typescript" | "tsx");
        let name = r.via.first().and_then(|v| v.rsplit([':', '.']).next()).filter(|n| !n.is_empty());
        let (true, None, Some(name)) = (js, r.symbol_opt, name) else {
            out.push(r.clone());
            continue;
        };
        let text = texts.entry(r.file).or_insert_with(|| read_test_file(root, graph.path(r.file)));
        let Some(text) = text.as_deref() else {
            out.push(r.clone());
            continue;
        };
        let mut titles: Vec<String> = Vec::new();
        let mut found: Vec<Reached> = Vec::new();
        // Each line with the byte its successor starts at: the title is read back from there.
        let mut end = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            end += line.len();
            let trimmed = line.trim_start();
            if trimmed.starts_with("import ") || !dependents::names_key(line, name) {
                continue;
            }
            let number = i as u32 + 1;
            if let Some(title) = crate::code::test_files::test_name_above(&text[..end]) {
                if !titles.contains(&title) {
                    titles.push(title);
                    found.push(Reached { line: number, by_import: false, ..r.clone() });
                }
            }
        }
        if found.is_empty() {
            out.push(r.clone());
        } else {
            out.extend(found);
        }
    }
    out
}

/// The tests among the definitions the diff modifies, renames or adds, in the diff's order;
/// and a changed test file where none of them is (a JS `it(…)` callback, a helper, an
/// import): its code at the first changed line, named as its test framework's callback is.
fn changed_tests(graph: &CodeGraph, changes: &ChangeSet) -> Vec<Reached> {
    let mut tests: Vec<Reached> = Vec::new();
    for c in changes.symbols.iter().filter(|c| c.change != SymbolChange::Deleted) {
        let s = &c.symbol;
        let found = graph.defined_in(&c.path, &s.qualified_name, s.kind);
        let Some(&(file, index)) = found.iter().min_by_key(|&&r| graph.symbol(r).line.abs_diff(s.line)) else {
            continue;
        };
        let seen = tests.iter().any(|t| t.file == file && t.symbol_opt == Some(index));
        if !seen && graph.is_test(file, index as usize) {
            tests.push(Reached::changed_test(file, Some(index), graph.symbol((file, index)).line));
        }
    }
    for f in changes.files.iter().filter(|f| f.change != FileChange::Deleted) {
        let Some(file) = graph.file_index(&f.path) else { continue };
        let Some(hunk) = f.hunks.first() else { continue };
        // A helper the diff changes leads to the tests that call it (Go's `runTestCases` in
        // `util_test.go`): the file is no test of its own then.
        let helper_changed = changes.symbols.iter().any(|c| c.path == f.path);
        if graph.is_test_module(file) && !helper_changed && !tests.iter().any(|t| t.file == file) {
            tests.push(Reached::changed_test(file, None, hunk.new_start.max(1)));
        }
    }
    tests
}

fn round(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

fn dependent_info(graph: &CodeGraph, r: &Reached) -> DependentInfo {
    let path = graph.path(r.file).to_string();
    let (name, qualified_name, kind) = match r.symbol_opt {
        Some(i) => {
            let s = &graph.code(r.file).symbols[i as usize];
            (s.name.clone(), s.qualified_name.clone(), s.kind.name().to_string())
        }
        None => (String::new(), String::new(), "file".to_string()),
    };
    DependentInfo {
        name,
        qualified_name,
        kind,
        path,
        line: r.line,
        depth: r.depth,
        via: r.via.clone(),
        confidence: round(r.confidence),
    }
}

/// The tests to list of `tests` (surest first), at most `limit`, still surest first: when
/// they are more, each file's surest test before any file's second, so a cut list names as
/// many test files as it can (a runner takes files; the first 100 of 900 tests at one
/// confidence would all be the first few files').
fn listed_tests(tests: &[Reached], limit: usize) -> Vec<&Reached> {
    if tests.len() <= limit {
        return tests.iter().collect();
    }
    let mut files: HashSet<u32> = HashSet::new();
    let (firsts, rest): (Vec<usize>, Vec<usize>) = (0..tests.len()).partition(|&i| files.insert(tests[i].file));
    let mut listed = vec![false; tests.len()];
    for i in firsts.into_iter().chain(rest).take(limit) {
        listed[i] = true;
    }
    tests.iter().zip(listed).filter(|(_, l)| *l).map(|(r, _)| r).collect()
}

/// The files of `tests` (surest first), each with its surest test's confidence and how many
/// of them it holds; at most `limit`.
fn test_files(graph: &CodeGraph, tests: &[Reached], limit: usize) -> Vec<AffectedTestFile> {
    let mut files: Vec<AffectedTestFile> = Vec::new();
    let mut index_of: HashMap<u32, usize> = HashMap::new();
    for r in tests {
        match index_of.get(&r.file) {
            Some(&i) => files[i].tests += 1,
            None => {
                index_of.insert(r.file, files.len());
                let path = graph.path(r.file).to_string();
                files.push(AffectedTestFile { path, confidence: r.confidence, tests: 1 });
            }
        }
    }
    files.truncate(limit);
    files
}

/// `texts`: test files' texts by file, read once per answer.
fn affected_test(
    index: &RepoIndex,
    graph: &CodeGraph,
    r: &Reached,
    texts: &mut HashMap<u32, Option<String>>,
) -> AffectedTest {
    let path = graph.path(r.file).to_string();
    let name = match r.symbol_opt {
        Some(i) => graph.test_name(r.file, i as usize),
        // A test framework's callback (`it("adds", () => …)`): its title, read from the file.
        None => texts
            .entry(r.file)
            .or_insert_with(|| read_test_file(&index.root, &path))
            .as_deref()
            .and_then(|text| crate::code::test_files::enclosing_test_name(text, r.line))
            .unwrap_or_default(),
    };
    AffectedTest { path, name, line: r.line, depth: r.depth, via: r.via.clone(), confidence: round(r.confidence) }
}

/// A test file's text, read through the repo root's handle like every read (none when it
/// cannot be read: the test is then named by its file).
fn read_test_file(root: &Path, path: &str) -> Option<String> {
    let bytes = crate::ingest::open::read_inside(root, path, MAX_TEST_FILE_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

// ---- Parameters, as every surface takes them (see `params`).

/// `GET /v1/impact/diff`, MCP `docdex_impact {diff}`, `docdex impact --diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffImpactParams {
    /// A revision to compare the working tree with (default HEAD), or "staged" / "working".
    #[serde(default)]
    pub base: Option<String>,
    /// The staged changes against HEAD instead of the working tree.
    #[serde(default, deserialize_with = "params::flag")]
    pub staged: Option<bool>,
    /// How many hops of dependents to follow, 1-5 (default 2).
    #[serde(default, deserialize_with = "params::number")]
    pub depth: Option<u64>,
    /// How sure each use on a dependent's path must be, 0-1 (default 0.5).
    #[serde(default, deserialize_with = "params::fraction")]
    pub min_confidence: Option<f64>,
    /// Dependents and tests to return, 1-1000 each (default 100).
    #[serde(default, deserialize_with = "params::number")]
    pub limit: Option<u64>,
    /// Repository root (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for DiffImpactParams {
    type Message = DiffImpact;
    type Output = DiffImpactResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<DiffImpact> {
        let base = DiffBase::parse(params::text(self.base).as_deref(), self.staged.unwrap_or(false))?;
        let depth = params::bounded("depth", self.depth, DEFAULT_DIFF_DEPTH as usize, code::MAX_IMPACT_DEPTH as usize)?;
        let limit = params::bounded("limit", self.limit, DEFAULT_DIFF_LIMIT, code::MAX_CODE_LIMIT)?;
        let min_confidence = code::confidence(self.min_confidence)?;
        Ok(DiffImpact { repo_opt, base, depth: depth as u32, min_confidence, limit })
    }
}

/// `GET /v1/repo-map`, MCP `docdex_repo_map`, `docdex map`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoMapParams {
    /// Tokens the map may fill, 1-32768 (default 1024).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 32768))]
    pub budget_tokens: Option<u64>,
    /// What to centre the map on: file paths, definition names, or a question in words,
    /// e.g. ["src/cart.rs", "Checkout", "how are refunds computed"] (in a query string, one
    /// text split at commas).
    #[serde(default, deserialize_with = "params::list")]
    pub focus: Option<Vec<String>>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for RepoMapParams {
    type Message = RepoMap;
    type Output = RepoMapResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<RepoMap> {
        let budget_tokens = params::bounded("budget_tokens", self.budget_tokens, DEFAULT_MAP_TOKENS, MAX_MAP_TOKENS)?;
        Ok(RepoMap { repo_opt, budget_tokens, focus: self.focus.unwrap_or_default() })
    }
}

/// Tokens a repo map fills when the caller names no budget (aider's default).
pub const DEFAULT_MAP_TOKENS: usize = 1024;
/// The largest budget a repo map takes.
pub const MAX_MAP_TOKENS: usize = 32_768;

/// The repo map, personalised by `focus`: file paths, definition names, or words of a
/// question (its best search hits' files).
#[derive(Message)]
#[rtype(result = "Result<RepoMapResponse>")]
pub struct RepoMap {
    pub repo_opt: Option<PathBuf>,
    pub budget_tokens: usize,
    pub focus: Vec<String>,
}

impl Handler<RepoMap> for ToolDispatcher {
    type Result = ResponseFuture<Result<RepoMapResponse>>;

    fn handle(&mut self, msg: RepoMap, ctx: &mut Context<Self>) -> Self::Result {
        if msg.budget_tokens == 0 || msg.budget_tokens > MAX_MAP_TOKENS {
            return Box::pin(async move {
                Err(DocdexError::invalid(format!("budget_tokens must be 1 to {MAX_MAP_TOKENS}")))
            });
        }
        let me = ctx.address();
        let repo = self.resolve_repo(msg.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        tracked(&self.metrics, "code", async move {
            let repo = repo.await?;
            // A focus with spaces is a question: the files of its best hits.
            let mut hit_files: Vec<String> = Vec::new();
            for question in msg.focus.iter().filter(|f| f.trim().contains(' ')) {
                let request = crate::protocol::SearchRequest {
                    source_opt: None,
                    lib_opt: None,
                    repo_opt: Some(repo.clone()),
                    query: question.clone(),
                    limit: 5,
                    mode_opt: None,
                    explain: false,
                };
                let response = me.send(super::search::Search(request)).await??;
                hit_files.extend(response.hits.into_iter().map(|h| h.path));
            }
            let handle = open_indexed(&repo_manager, repo).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let graph = index.code_graph()?;
                let mut focus: Vec<u32> = Vec::new();
                let mut unknown: Vec<&str> = Vec::new();
                for item in msg.focus.iter().map(|f| f.trim()).filter(|f| !f.is_empty() && !f.contains(' ')) {
                    let item = item.trim_start_matches("./");
                    if let Some(f) = graph.file_index(item) {
                        focus.push(f);
                        continue;
                    }
                    let defs = graph.lookup(item);
                    if defs.is_empty() {
                        unknown.push(item);
                    }
                    focus.extend(defs.iter().map(|r| r.0));
                }
                if !unknown.is_empty() {
                    return Err(DocdexError::invalid(format!(
                        "focus `{}` is neither a file of this repo nor a definition it has",
                        unknown.join("`, `")
                    ))
                    .with_hint("give paths relative to the repo root, definition names, or a question in words"));
                }
                focus.extend(hit_files.iter().filter_map(|p| graph.file_index(p)));
                focus.sort_unstable();
                focus.dedup();
                Ok(crate::code::map::repo_map(&graph, msg.budget_tokens, &focus))
            })
            .await?
        })
    }
}

impl Handler<ReadDiff> for ToolDispatcher {
    type Result = ResponseFuture<Result<Vec<SearchHit>>>;

    fn handle(&mut self, msg: ReadDiff, _: &mut Context<Self>) -> Self::Result {
        self.with_graph(Some(msg.repo.clone()), move |index, graph| {
            let changes = crate::change::read(&index.root, &msg.base, Some(graph), Some(&index.side_facts))?;
            Ok(diff_hits(index, graph, &changes, msg.limit))
        })
    }
}

/// Lines of a diff hit's snippet at most.
const MAX_DIFF_HIT_LINES: u32 = 60;

/// The changed definitions that still exist and their direct dependents, as hits whose
/// snippets are their code (numbered): changed first, then dependents surest first.
fn diff_hits(index: &RepoIndex, graph: &CodeGraph, changes: &ChangeSet, limit: usize) -> Vec<SearchHit> {
    let query = DiffImpact {
        repo_opt: None,
        base: DiffBase::Staged,
        depth: 1,
        min_confidence: super::code::DEFAULT_MIN_CONFIDENCE,
        limit,
    };
    let impact = diff_impact(index, graph, changes, &query);
    let mut spans: Vec<(String, u32, u32, String, String)> = Vec::new();
    for c in impact.changed_symbols.iter().filter(|c| c.change != "deleted") {
        let heading = format!("{} {} {}", c.change, c.kind, c.qualified_name);
        spans.push((c.path.clone(), c.line, c.end_line, heading, c.language.clone()));
    }
    for d in impact.dependents.iter().filter(|d| !d.name.is_empty()) {
        let end = graph
            .file_index(&d.path)
            .and_then(|f| {
                graph.code(f).symbols.iter().find(|s| s.line == d.line && s.qualified_name == d.qualified_name)
            })
            .map_or(d.line, |s| s.end_line);
        let heading = format!("uses {}: {} {}", d.via.join(" -> "), d.kind, d.qualified_name);
        let language = graph.file_index(&d.path).map(|f| graph.code(f).language.clone()).unwrap_or_default();
        spans.push((d.path.clone(), d.line, end, heading, language));
    }
    let mut hits = Vec::new();
    let mut texts: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
    for (path, start, end, heading, language) in spans.into_iter().take(limit) {
        let text =
            texts.entry(path.clone()).or_insert_with(|| read_test_file(&index.root, &path)).clone().unwrap_or_default();
        let last = end.min(start + MAX_DIFF_HIT_LINES - 1);
        let snippet: String = text
            .lines()
            .enumerate()
            .skip(start.saturating_sub(1) as usize)
            .take((last + 1).saturating_sub(start) as usize)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        hits.push(SearchHit {
            path,
            line_start: u64::from(start),
            line_end: u64::from(last),
            score: 1.0,
            snippet,
            heading,
            heading_path: None,
            page: None,
            language,
            source: HitSource::Diff,
            library: None,
            version: None,
            url: None,
            title: None,
            fetched_at: None,
            explain: None,
            chunk_id: None,
            repo: None,
        });
    }
    hits
}

/// The diff-aware search (`search::DiffSearch`, declared with the search it serves).
impl Handler<DiffSearch> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, msg: DiffSearch, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        let repo = self.resolve_repo(msg.request.repo_opt.clone());
        Box::pin(async move {
            msg.request.validate()?;
            let repo = repo.await?;
            let limit = msg.request.limit;
            let diff = me.send(ReadDiff { repo: repo.clone(), base: msg.base, limit: limit.div_ceil(2) }).await??;
            let request = SearchRequest { repo_opt: Some(repo), ..msg.request };
            let mut response = me.send(super::search::Search(request)).await??;
            let rest: Vec<SearchHit> =
                response.hits.into_iter().filter(|h| !diff.iter().any(|d| d.overlaps(h))).collect();
            response.hits = diff.into_iter().chain(rest).take(limit).collect();
            Ok(response)
        })
    }
}

/// Hops to a test when the caller names none: `DEEP_TEST_DEPTH` when every changed definition
/// is Rust, JavaScript or TypeScript, `DEFAULT_TEST_DEPTH` otherwise.
fn default_test_depth(graph: &CodeGraph, seeds: &[Seed]) -> u32 {
    let mut files = seeds.iter().filter_map(|s| s.symbol_opt).map(|(f, _)| f).peekable();
    let deep = files.peek().is_some()
        && files.all(|f| matches!(graph.code(f).language.as_str(), "rust" | "javascript" | "typescript" | "tsx"));
    if deep {
        DEEP_TEST_DEPTH
    } else {
        DEFAULT_TEST_DEPTH
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::git::FileDiff;
    use crate::ingest::{sha256_hex, Language};

    fn reached(file: u32, line: u32, confidence: f32) -> Reached {
        Reached { depth: 1, hops: 1, confidence, weakest: confidence, ..Reached::changed_test(file, Some(line), line) }
    }

    /// A cut list takes each file's surest test before a second of any file's, and still
    /// lists them surest first; a list under the limit is as it was.
    #[test]
    fn a_cut_test_list_names_every_file_it_can_surest_first() {
        let tests =
            vec![reached(1, 1, 0.9), reached(1, 2, 0.9), reached(1, 3, 0.8), reached(2, 1, 0.8), reached(3, 1, 0.5)];
        let listed: Vec<(u32, u32)> = listed_tests(&tests, 4).iter().map(|r| (r.file, r.line)).collect();
        assert_eq!(listed, vec![(1, 1), (1, 2), (2, 1), (3, 1)]);
        let listed: Vec<(u32, u32)> = listed_tests(&tests, 2).iter().map(|r| (r.file, r.line)).collect();
        assert_eq!(listed, vec![(1, 1), (2, 1)]);
        assert_eq!(listed_tests(&tests, 5).len(), 5);
    }

    /// A file the watcher saw change is re-read before a diff's walk when the graph holds it
    /// at another text (an index run caught it half written by `git checkout`), and a code
    /// file the graph does not hold that is there (an index run found it gone for a moment);
    /// one held as it is, one in the diff itself (its sides are parsed), one neither held nor
    /// there, a file that is no code and a folder are not.
    #[test]
    fn a_changed_file_held_at_another_text_is_read_again_before_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let whole = "def helper():\n    return 1\n\n\ndef other():\n    return helper()\n";
        let files = [("pkg/a.py", whole), ("pkg/b.py", whole), ("pkg/c.py", whole), ("pkg/d.py", whole)];
        for (path, text) in files {
            std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
            std::fs::write(dir.path().join(path), text).unwrap();
        }
        let codes: HashMap<String, crate::code::FileCode> = files
            .iter()
            .map(|(p, t)| (p.to_string(), crate::code::extract::extract(Language::Python, t).unwrap()))
            .collect();
        let mut graph = CodeGraph::build(codes, &HashMap::new());
        // b.py was read half written; d.py is gone since it was read.
        let half = sha256_hex(b"def helper():\n");
        graph.set_content_hashes(|path| {
            Some(if path == "pkg/b.py" { half.clone() } else { sha256_hex(whole.as_bytes()) })
        });
        std::fs::remove_file(dir.path().join("pkg/d.py")).unwrap();
        let diff = |path: &str| FileDiff {
            path: path.to_string(),
            old_path: path.to_string(),
            change: FileChange::Modified,
            hunks: Vec::new(),
            removed: Vec::new(),
            old_oid: String::new(),
            binary: false,
        };
        let changes = ChangeSet {
            files: vec![diff("pkg/c.py")],
            symbols: Vec::new(),
            unheld: Vec::new(),
            stale: Vec::new(),
            parsed: 0,
        };
        std::fs::write(dir.path().join("pkg/back.py"), whole).unwrap();
        std::fs::write(dir.path().join("pkg/notes.txt"), "notes\n").unwrap();
        let pending: Vec<String> =
            ["pkg", "pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/d.py", "pkg/new.py", "pkg/back.py", "pkg/notes.txt"]
                .map(String::from)
                .to_vec();
        assert_eq!(
            held_at_another_text(dir.path(), &graph, &changes, &pending),
            ["pkg/b.py", "pkg/d.py", "pkg/back.py"]
        );
        assert!(held_at_another_text(dir.path(), &graph, &changes, &[]).is_empty());
    }
}
