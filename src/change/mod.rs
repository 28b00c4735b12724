//! What a change touched: the files of a git diff and the definitions whose lines its hunks
//! touch, each added, modified, deleted or renamed. Both sides of each file are read here
//! (the old from git, the new from the working tree or git's index) and parsed unless the
//! code graph was built from that very text, so the answer does not depend on how fresh the
//! index is; what depends on those definitions comes from the code graph
//! (`code::dependents`).

pub mod git;
pub mod sides;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use crate::code::{CodeGraph, FileCode, Symbol, SymbolKind};
use crate::ingest::Language;
use crate::protocol::Result;
use git::{DiffBase, FileChange, FileDiff};
use sides::SideFacts;

/// Files larger than this are listed as changed but not parsed for definitions.
pub(crate) const MAX_PARSED_BYTES: usize = 2 * 1024 * 1024;

/// A definition the change touched.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedSymbol {
    pub symbol: Symbol,
    pub path: String,
    pub change: SymbolChange,
    /// For a rename: the name before.
    pub old_name_opt: Option<String>,
    /// For a deletion or rename: the qualified name before (the graph may still hold it).
    pub old_qualified_name_opt: Option<String>,
    pub language: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolChange {
    Added,
    Modified,
    Deleted,
    Renamed,
}

impl SymbolChange {
    pub fn name(self) -> &'static str {
        match self {
            SymbolChange::Added => "added",
            SymbolChange::Modified => "modified",
            SymbolChange::Deleted => "deleted",
            SymbolChange::Renamed => "renamed",
        }
    }
}

/// A diff read for its definitions.
#[derive(Debug, Clone)]
pub struct ChangeSet {
    pub files: Vec<FileDiff>,
    pub symbols: Vec<ChangedSymbol>,
    /// Changed files the graph `read` was given holds at neither side's text: the index has
    /// another version of them (an earlier edit, or a file caught mid-write), whose
    /// definitions may not be the diff's (`ChangeSet::behind`).
    pub unheld: Vec<String>,
    /// Test files of the working tree that add tests the graph does not hold (the index has
    /// not read them since: a CLI without a daemon, a save the watcher has not read yet): the
    /// tests a change adds are affected, and only the graph can name them.
    pub stale: Vec<String>,
    /// Sides parsed for this answer (neither the graph nor the kept sides had them).
    pub parsed: usize,
}

impl ChangeSet {
    /// The changed files whose modified definitions `graph` does not have at their path,
    /// because it holds another version of the file (`unheld`): a walk from them would start
    /// nowhere. The index must catch up with these files before it can answer.
    /// Also the test files that add tests the index has not read yet (`stale`), and both
    /// paths of a moved file the graph holds at its old path only (its tests and dependents
    /// would be named where the file no longer is).
    pub fn behind(&self, graph: &CodeGraph) -> Vec<String> {
        let moved = self
            .files
            .iter()
            .filter(|f| f.change == FileChange::Renamed && f.old_path != f.path)
            .filter(|f| graph.file_index(&f.old_path).is_some() && graph.file_index(&f.path).is_none())
            .flat_map(|f| [f.old_path.clone(), f.path.clone()]);
        let mut paths: Vec<String> = self
            .symbols
            .iter()
            .filter(|c| c.change == SymbolChange::Modified && self.unheld.contains(&c.path))
            .filter(|c| graph.defined_in(&c.path, &c.symbol.qualified_name, c.symbol.kind).is_empty())
            .map(|c| c.path.clone())
            .chain(self.stale.iter().cloned())
            .chain(moved)
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }
}

/// Reads the diff `base` names in the work tree at `root` and the definitions it touches.
/// A side whose text is what `indexed_opt`'s graph was built from is read from the graph,
/// one `sides_opt` holds from there; any other is parsed (and kept in `sides_opt`).
pub fn read(
    root: &Path,
    base: &DiffBase,
    indexed_opt: Option<&CodeGraph>,
    sides_opt: Option<&SideFacts>,
) -> Result<ChangeSet> {
    let files = git::diff(root, base)?;
    let code_files: Vec<(&FileDiff, Language)> = files
        .iter()
        .filter(|f| !f.binary)
        .map(|f| (f, Language::detect(Path::new(&f.path))))
        .filter(|(f, language)| {
            crate::ingest::lang::CODE_LANGUAGES.contains(language) || language.may_be_script(Path::new(&f.path))
        })
        .collect();
    // The working tree's new sides first: a changed file's old side is then rebuilt from its
    // new side and the diff's removed lines (checked against git's blob id), sparing git the
    // reading of it.
    let new_texts: Vec<Option<String>> = code_files
        .iter()
        .map(|(file, _)| match (file.change, base) {
            (FileChange::Deleted, _) | (_, DiffBase::Staged) => None,
            (_, DiffBase::Working { .. }) => Some(
                crate::ingest::open::read_inside(root, &file.path, MAX_PARSED_BYTES as u64)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default(),
            ),
        })
        .collect();
    let mut rebuilt: Vec<Option<String>> = code_files
        .iter()
        .zip(&new_texts)
        .map(|((file, _), new_text)| file.old_side(new_text.as_deref().filter(|_| file.change != FileChange::Added)?))
        .collect();
    // Every other old side (and every staged new side) from one git process, in this order.
    let mut requests: Vec<(&str, &str)> = Vec::new();
    for (i, (file, _)) in code_files.iter().enumerate() {
        if file.change != FileChange::Added && rebuilt[i].is_none() {
            requests.push((base.old_rev(), file.old_path.as_str()));
        }
        if *base == DiffBase::Staged && file.change != FileChange::Deleted {
            requests.push(("", file.path.as_str()));
        }
    }
    let mut texts = git::show_many(root, &requests)?.into_iter();
    let mut jobs: Vec<(&FileDiff, Language, String, String)> = Vec::new();
    for (i, ((file, language), new_text)) in code_files.into_iter().zip(new_texts).enumerate() {
        let old_text = match (file.change, rebuilt[i].take()) {
            (FileChange::Added, _) => String::new(),
            (_, Some(text)) => text,
            (_, None) => texts.next().flatten().unwrap_or_default(),
        };
        let new_text = match new_text {
            Some(text) => text,
            None if file.change == FileChange::Deleted => String::new(),
            None => texts.next().flatten().unwrap_or_default(),
        };
        if old_text.len() <= MAX_PARSED_BYTES && new_text.len() <= MAX_PARSED_BYTES {
            // Read as the index reads it (a C++ header is C++ by its text).
            let text = if new_text.is_empty() { &old_text } else { &new_text };
            let language = language.with_text(Path::new(&file.path), text);
            if crate::ingest::lang::CODE_LANGUAGES.contains(&language) {
                jobs.push((file, language, old_text, new_text));
            }
        }
    }
    // Both sides of every file are parsed unless the index has them: spread over the cores
    // (a 10-file diff of large files is most of the answer's time), the largest files taken
    // first and each thread taking the next file when it is done, so that one thread does
    // not end up with the large files while the other idles.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4).min(jobs.len().max(1));
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].2.len() + jobs[i].3.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Vec<ChangedSymbol>, bool, bool, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let taken = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&i) = order.get(taken) else { break };
                        let (file, language, old_text, new_text) = &jobs[i];
                        let mut parsed = 0;
                        let mut facts = |path: &str, text: &str| -> (Side<'_>, bool) {
                            let hash = crate::ingest::sha256_hex(text.as_bytes());
                            if let Some(code) = indexed_opt.and_then(|g| g.indexed_code(path, language.name(), &hash)) {
                                return (Side::Borrowed(code), true);
                            }
                            if text.is_empty() {
                                return (Side::Kept(Arc::default()), false);
                            }
                            if let Some(code) = sides_opt.and_then(|s| s.get(path, language.name(), &hash)) {
                                return (Side::Kept(code), false);
                            }
                            parsed += 1;
                            let code = Arc::new(extract(*language, path, text));
                            if let Some(sides) = sides_opt {
                                sides.put(path, &hash, Arc::clone(&code));
                            }
                            (Side::Kept(code), false)
                        };
                        let (old, old_held) = facts(&file.old_path, old_text);
                        let (new, new_held) = facts(&file.path, new_text);
                        let unheld = indexed_opt.is_some() && !old_held && !new_held;
                        let symbols = compare(*language, file, (old_text, old.code()), (new_text, new.code()));
                        // A test the working tree adds is listed only once the graph has it (a
                        // modified one it has at its old side). The index reads the working
                        // tree: a staged side it may never hold.
                        let working = matches!(base, DiffBase::Working { .. });
                        let added = |c: &ChangedSymbol| matches!(c.change, SymbolChange::Added | SymbolChange::Renamed);
                        // Also a test added beside the code it tests (a Rust `#[test]` in a
                        // `mod tests` of a source file).
                        let adds_tests = (crate::code::test_files::is_test_file(&file.path, language.name())
                            && (file.change == FileChange::Added || symbols.iter().any(added)))
                            || symbols.iter().any(|c| added(c) && c.symbol.test_marked);
                        let stale = indexed_opt.is_some()
                            && working
                            && file.change != FileChange::Deleted
                            && !new_held
                            && adds_tests;
                        out.push((i, symbols, unheld, stale, parsed));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    // In the diff's order of files, as one thread would give them.
    done.sort_by_key(|(i, ..)| *i);
    let unheld = done.iter().filter(|(_, _, unheld, ..)| *unheld).map(|(i, ..)| jobs[*i].0.path.clone()).collect();
    let stale = done.iter().filter(|(_, _, _, stale, _)| *stale).map(|(i, ..)| jobs[*i].0.path.clone()).collect();
    let parsed = done.iter().map(|(.., parsed)| parsed).sum();
    let symbols: Vec<ChangedSymbol> = done.into_iter().flat_map(|(_, symbols, ..)| symbols).collect();
    Ok(ChangeSet { files, symbols, unheld, stale, parsed })
}

/// A side's facts: the graph's, or kept ones (empty for a side that does not exist).
enum Side<'a> {
    Borrowed(&'a FileCode),
    Kept(Arc<FileCode>),
}

impl Side<'_> {
    fn code(&self) -> &FileCode {
        match self {
            Side::Borrowed(code) => code,
            Side::Kept(code) => code,
        }
    }
}

/// A side's definitions (none for a side that does not exist), named as the graph names
/// them.
fn extract(language: Language, path: &str, text: &str) -> FileCode {
    if text.is_empty() {
        return FileCode::default();
    }
    let mut code = crate::code::extract::extract(language, text).unwrap_or_default();
    crate::code::extract::name_default_export(&mut code, path);
    crate::code::extract::name_file_struct(&mut code, path);
    code
}

/// The definitions of one file whose lines the hunks touch: on the new side (added or
/// modified) and on the old (deleted or modified), the innermost definition of each changed
/// line; an added and a deleted definition of the same kind and container whose bodies are
/// alike are one rename.
pub fn changed_symbols(language: Language, file: &FileDiff, old_text: &str, new_text: &str) -> Vec<ChangedSymbol> {
    let (old, new) = (extract(language, &file.old_path, old_text), extract(language, &file.path, new_text));
    compare(language, file, (old_text, &old), (new_text, &new))
}

/// `changed_symbols` over each side's text and its facts.
fn compare(
    language: Language,
    file: &FileDiff,
    (old_text, old): (&str, &FileCode),
    (new_text, new): (&str, &FileCode),
) -> Vec<ChangedSymbol> {
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (old_text.lines().collect(), new_text.lines().collect());
    let touched = |code: &FileCode, lines: &[&str], ranges: Vec<(u32, u32)>| -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for (start, count) in ranges {
            for line in start..start + count {
                // A line that is only whitespace changes no definition.
                if lines.get(line as usize - 1).is_none_or(|l| l.trim().is_empty()) {
                    continue;
                }
                if let Some(i) = innermost(code, line) {
                    if !out.contains(&i) {
                        out.push(i);
                    }
                }
            }
        }
        out
    };
    let new_ranges = file.hunks.iter().filter(|h| h.new_count > 0).map(|h| (h.new_start.max(1), h.new_count)).collect();
    let old_ranges = file.hunks.iter().filter(|h| h.old_count > 0).map(|h| (h.old_start.max(1), h.old_count)).collect();
    let touched_new = touched(new, &new_lines, new_ranges);
    let touched_old = touched(old, &old_lines, old_ranges);
    let old_keys = keys(old);
    let new_keys = keys(new);
    let old_by_key: HashMap<&(SymbolKind, String, usize), usize> =
        old_keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let new_by_key: HashMap<&(SymbolKind, String, usize), usize> =
        new_keys.iter().enumerate().map(|(i, k)| (k, i)).collect();

    let mut modified: Vec<usize> = Vec::new();
    let mut added: Vec<usize> = Vec::new();
    let mut deleted: Vec<usize> = Vec::new();
    for &i in &touched_new {
        match old_by_key.get(&new_keys[i]) {
            Some(_) => modified.push(i),
            None => added.push(i),
        }
    }
    for &i in &touched_old {
        match new_by_key.get(&old_keys[i]) {
            Some(&n) if !modified.contains(&n) => modified.push(n),
            Some(_) => {}
            None => deleted.push(i),
        }
    }
    // Renames: the most alike added body for each deleted one (names blanked out).
    let mut renamed: Vec<(usize, usize)> = Vec::new();
    for &d in &deleted {
        let o = &old.symbols[d];
        let old_body = body_lines(&old_lines, o);
        let best = added
            .iter()
            .filter(|&&a| !renamed.iter().any(|(_, r)| *r == a))
            .map(|&a| (a, &new.symbols[a]))
            .filter(|(_, n)| n.kind == o.kind && n.container == o.container && n.name != o.name)
            .map(|(a, n)| (a, similarity(&old_body, &body_lines(&new_lines, n), &o.name, &n.name)))
            .filter(|(_, s)| *s >= 0.5)
            .max_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((a, _)) = best {
            renamed.push((d, a));
        }
    }
    let path = file.path.clone();
    let entry = |symbol: &Symbol, change, old_opt: Option<&Symbol>| ChangedSymbol {
        symbol: symbol.clone(),
        path: path.clone(),
        change,
        old_name_opt: old_opt.map(|o| o.name.clone()),
        old_qualified_name_opt: old_opt.map(|o| o.qualified_name.clone()),
        language: language.name(),
    };
    let mut out = Vec::new();
    for &i in &modified {
        out.push(entry(&new.symbols[i], SymbolChange::Modified, None));
    }
    for &i in &added {
        match renamed.iter().find(|(_, a)| *a == i) {
            Some(&(d, _)) => out.push(entry(&new.symbols[i], SymbolChange::Renamed, Some(&old.symbols[d]))),
            None => out.push(entry(&new.symbols[i], SymbolChange::Added, None)),
        }
    }
    for &i in &deleted {
        if !renamed.iter().any(|(d, _)| *d == i) {
            let symbol = &old.symbols[i];
            out.push(entry(symbol, SymbolChange::Deleted, Some(symbol)));
        }
    }
    out.sort_by(|a, b| a.symbol.line.cmp(&b.symbol.line).then(a.symbol.name.cmp(&b.symbol.name)));
    out
}

/// The innermost definition whose span holds `line`. A field or variable declared inside a
/// function (Python's `self.x = …` in `__init__`) is not what changed: the function is.
fn innermost(code: &FileCode, line: u32) -> Option<usize> {
    let holding: Vec<(usize, &Symbol)> =
        code.symbols.iter().enumerate().filter(|(_, s)| s.line <= line && line <= s.end_line).collect();
    let in_function = holding.iter().any(|(_, s)| s.kind.is_callable());
    holding
        .into_iter()
        .filter(|(_, s)| {
            !(in_function && matches!(s.kind, SymbolKind::Field | SymbolKind::Property | SymbolKind::Variable))
        })
        .min_by_key(|(_, s)| s.end_line - s.line)
        .map(|(i, _)| i)
}

/// Each definition's identity across the two sides: kind, qualified name and which of the
/// same (overloads, redefinitions) it is.
fn keys(code: &FileCode) -> Vec<(SymbolKind, String, usize)> {
    let mut seen: HashMap<(SymbolKind, &str), usize> = HashMap::new();
    code.symbols
        .iter()
        .map(|s| {
            let n = seen.entry((s.kind, s.qualified_name.as_str())).or_default();
            *n += 1;
            (s.kind, s.qualified_name.clone(), *n - 1)
        })
        .collect()
}

fn body_lines<'a>(lines: &[&'a str], s: &Symbol) -> Vec<&'a str> {
    let start = (s.line as usize).saturating_sub(1);
    let end = (s.end_line as usize).min(lines.len());
    lines.get(start..end).unwrap_or(&[]).iter().map(|l| l.trim()).filter(|l| !l.is_empty()).collect()
}

/// Jaccard similarity of two bodies' trimmed lines, each definition's own name blanked.
fn similarity(old: &[&str], new: &[&str], old_name: &str, new_name: &str) -> f32 {
    let a: HashSet<String> = old.iter().map(|l| blank_word(l, old_name)).collect();
    let b: HashSet<String> = new.iter().map(|l| blank_word(l, new_name)).collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f32 / union as f32
}

/// `line` with each whole-word `name` blanked: `int_to_bytes` renamed leaves the
/// `_int_to_bytes` its body calls as it was.
fn blank_word(line: &str, name: &str) -> String {
    if name.is_empty() {
        return line.to_string();
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
    let mut out = String::with_capacity(line.len());
    let mut rest = 0;
    for (at, _) in line.match_indices(name) {
        let end = at + name.len();
        if at < rest || word(line[..at].chars().next_back()) || word(line[end..].chars().next()) {
            continue;
        }
        out.push_str(&line[rest..at]);
        out.push('\u{0}');
        rest = end;
    }
    out.push_str(&line[rest..]);
    out
}

#[cfg(test)]
mod tests {
    use super::git::Hunk;
    use super::*;

    fn diff(hunks: Vec<Hunk>) -> FileDiff {
        FileDiff {
            path: "a.py".into(),
            old_path: "a.py".into(),
            change: FileChange::Modified,
            hunks,
            removed: Vec::new(),
            old_oid: String::new(),
            binary: false,
        }
    }

    #[test]
    fn hunks_map_to_innermost_definitions_with_renames_and_deletions() {
        let old = "class Cart:\n    def total(self):\n        return sum(self.items)\n\n    def clear(self):\n        self.items = []\n\n\ndef helper(x):\n    y = x + 1\n    z = y * 2\n    return z\n";
        let new = "class Cart:\n    def total(self):\n        return sum(self.items) + 0\n\n\ndef assist(x):\n    y = x + 1\n    z = y * 2\n    return z\n\n\ndef fresh():\n    return 1\n";
        // total's body line changed; clear (lines 5-7) deleted; helper renamed to assist; fresh added.
        let hunks = vec![
            Hunk { old_start: 3, old_count: 1, new_start: 3, new_count: 1 },
            Hunk { old_start: 5, old_count: 3, new_start: 4, new_count: 0 },
            Hunk { old_start: 9, old_count: 1, new_start: 6, new_count: 1 },
            Hunk { old_start: 12, old_count: 0, new_start: 10, new_count: 4 },
        ];
        let changed = changed_symbols(Language::Python, &diff(hunks), old, new);
        let got: Vec<(&str, &str, Option<&str>)> = changed
            .iter()
            .map(|c| (c.symbol.qualified_name.as_str(), c.change.name(), c.old_name_opt.as_deref()))
            .collect();
        assert!(got.contains(&("Cart.total", "modified", None)), "{got:?}");
        assert!(got.contains(&("Cart.clear", "deleted", Some("clear"))), "{got:?}");
        assert!(got.contains(&("assist", "renamed", Some("helper"))), "{got:?}");
        assert!(got.contains(&("fresh", "added", None)), "{got:?}");
        assert!(!got.iter().any(|(n, _, _)| *n == "Cart"), "the class itself is not touched: {got:?}");
    }

    #[test]
    fn a_short_function_renamed_is_a_rename_when_its_body_calls_a_longer_namesake() {
        // itsdangerous' `int_to_bytes` calls `_int_to_bytes`: blanking the name inside the
        // longer one made the bodies differ.
        let old = "def int_to_bytes(num):\n    return _int_to_bytes(num).lstrip(b\"\\x00\")\n";
        let new = "def int_as_bytes(num):\n    return _int_to_bytes(num).lstrip(b\"\\x00\")\n";
        let hunks = vec![Hunk { old_start: 1, old_count: 1, new_start: 1, new_count: 1 }];
        let changed = changed_symbols(Language::Python, &diff(hunks), old, new);
        let got: Vec<(&str, &str)> = changed.iter().map(|c| (c.symbol.name.as_str(), c.change.name())).collect();
        assert_eq!(got, vec![("int_as_bytes", "renamed")]);
        assert_eq!(blank_word("x = _f(f) + f_ + f", "f"), "x = _f(\u{0}) + f_ + \u{0}");
    }
}

#[cfg(test)]
mod graph_tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_side_the_graph_was_built_from_is_read_from_it_with_the_same_answer() {
        let work_tree = tempfile::tempdir().unwrap();
        // The repo is a folder inside the work tree: paths are relative to it.
        let root = work_tree.path().join("pkg");
        std::fs::create_dir_all(&root).unwrap();
        let old = "def helper(x):\n    return x + 1\n\n\ndef other():\n    return helper(2)\n";
        std::fs::write(root.join("a.py"), old).unwrap();
        git(work_tree.path(), &["init", "-q"]);
        git(work_tree.path(), &["add", "-A"]);
        git(work_tree.path(), &["commit", "-qm", "base"]);

        let files = HashMap::from([("a.py".to_string(), extract(Language::Python, "a.py", old))]);
        let mut graph = CodeGraph::build(files, &HashMap::new());
        graph.set_content_hashes(|path| (path == "a.py").then(|| crate::ingest::sha256_hex(old.as_bytes())));
        let hash = |text: &str| crate::ingest::sha256_hex(text.as_bytes());
        assert!(graph.indexed_code("a.py", "python", &hash(old)).is_some());
        assert!(graph.indexed_code("a.py", "python", &hash("def helper(x):\n    pass\n")).is_none());
        assert!(graph.indexed_code("a.py", "rust", &hash(old)).is_none());
        assert!(graph.indexed_code("b.py", "python", &hash(old)).is_none());

        std::fs::write(root.join("a.py"), old.replace("x + 1", "x + 2")).unwrap();
        let base = DiffBase::Working { rev: "HEAD".into() };
        let parsed = read(&root, &base, None, None).unwrap();
        let from_graph = read(&root, &base, Some(&graph), None).unwrap();
        assert_eq!(parsed.symbols, from_graph.symbols);
        let changed: Vec<(&str, &str)> =
            from_graph.symbols.iter().map(|c| (c.symbol.name.as_str(), c.change.name())).collect();
        assert_eq!(changed, [("helper", "modified")]);
    }

    #[test]
    fn a_side_parsed_once_or_held_before_an_edit_is_not_parsed_again() {
        let work_tree = tempfile::tempdir().unwrap();
        let root = work_tree.path();
        let old = "def helper(x):\n    return x + 1\n\n\ndef other():\n    return helper(2)\n";
        let new = old.replace("x + 1", "x + 2");
        std::fs::write(root.join("a.py"), old).unwrap();
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "base"]);
        std::fs::write(root.join("a.py"), &new).unwrap();
        let base = DiffBase::Working { rev: "HEAD".into() };
        let graph_of = |text: &str| {
            let files = HashMap::from([("a.py".to_string(), extract(Language::Python, "a.py", text))]);
            let mut graph = CodeGraph::build(files, &HashMap::new());
            let hash = crate::ingest::sha256_hex(text.as_bytes());
            graph.set_content_hashes(|path| (path == "a.py").then(|| hash.clone()));
            graph
        };
        let parsed_alone = read(root, &base, None, None).unwrap();
        assert_eq!(parsed_alone.parsed, 2, "both sides, without a graph");

        // The index holds the base: the edit is parsed once, then kept.
        let before = graph_of(old);
        let sides = SideFacts::default();
        let first = read(root, &base, Some(&before), Some(&sides)).unwrap();
        let again = read(root, &base, Some(&before), Some(&sides)).unwrap();
        assert_eq!((first.parsed, again.parsed), (1, 0));
        assert_eq!(first.symbols, parsed_alone.symbols);
        assert_eq!(again.symbols, parsed_alone.symbols);

        // The index has read the edit: the base's facts, which the graph it held gave up,
        // are kept, and nothing is parsed.
        let after = graph_of(&new);
        let sides = SideFacts::default();
        sides.keep_replaced(&before, &after);
        assert_eq!(sides.len(), 1);
        let read_after = read(root, &base, Some(&after), Some(&sides)).unwrap();
        assert_eq!(read_after.parsed, 0);
        assert_eq!(read_after.symbols, parsed_alone.symbols);
        // A graph that holds the same texts gives up nothing.
        let same = SideFacts::default();
        same.keep_replaced(&after, &graph_of(&new));
        assert!(same.is_empty());
    }

    #[test]
    fn kept_sides_are_bounded_and_the_least_recently_used_goes_first() {
        let sides = SideFacts::default();
        let code = |_: usize| Arc::new(FileCode::new("python"));
        for i in 0..sides::MAX_SIDES {
            sides.put(&format!("f{i}.py"), &format!("h{i}"), code(i));
        }
        assert!(sides.get("f0.py", "python", "h0").is_some(), "f0 used again: f1 is now the oldest");
        sides.put("late.py", "h", code(0));
        assert_eq!(sides.len(), sides::MAX_SIDES);
        assert!(sides.get("f0.py", "python", "h0").is_some());
        assert!(sides.get("f1.py", "python", "h1").is_none());
        assert!(sides.get("late.py", "python", "h").is_some());
        assert!(sides.get("late.py", "rust", "h").is_none(), "another language is another side");
        // Large sides push out the least recently used until they fit; one larger than the
        // budget is not kept and pushes out nothing.
        let large = |n: usize| {
            let mut code = FileCode::new("python");
            code.strings = vec!["x".repeat(1 << 20); n];
            Arc::new(code)
        };
        sides.put("big.py", "b", large(20));
        sides.put("big2.py", "b", large(20));
        assert_eq!(sides.len(), 1);
        assert!(sides.get("big2.py", "python", "b").is_some());
        sides.put("huge.py", "h", large(40));
        assert!(sides.get("huge.py", "python", "h").is_none());
        assert!(sides.get("big2.py", "python", "b").is_some());
    }

    #[test]
    fn a_folder_outside_git_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(dir.path(), &DiffBase::Working { rev: "HEAD".into() }, None, None).unwrap_err();
        assert!(err.message.contains("is not inside a git work tree"), "{}", err.message);
    }
}

#[cfg(test)]
mod field_tests {
    use super::git::Hunk;
    use super::*;

    #[test]
    fn a_line_that_sets_a_field_in_a_method_changes_the_method() {
        let old = "class Cart:\n    def __init__(self, items):\n        self.items = list(items)\n";
        let new = "class Cart:\n    def __init__(self, items):\n        self.items = sorted(items)\n";
        let file = FileDiff {
            path: "a.py".into(),
            old_path: "a.py".into(),
            change: FileChange::Modified,
            hunks: vec![Hunk { old_start: 3, old_count: 1, new_start: 3, new_count: 1 }],
            removed: Vec::new(),
            old_oid: String::new(),
            binary: false,
        };
        let changed = changed_symbols(Language::Python, &file, old, new);
        let names: Vec<&str> = changed.iter().map(|c| c.symbol.qualified_name.as_str()).collect();
        assert_eq!(names, vec!["Cart.__init__"]);
    }
}
