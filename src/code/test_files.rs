//! Which files and definitions are tests: each language's conventions (Rust `tests/` and
//! `#[test]`, pytest's `test_*.py`, JS/TS `*.test.*`, Go `_test.go`, …), and for JavaScript
//! and TypeScript the files the repo's test runner is configured to run, for Python the files
//! pytest's `python_files` names (mock's `test*.py`: `testmock.py` holds tests).
//!
//! vitest runs the files its config's `test.include` matches (by default
//! `**/*.{test,spec}.?(c|m)[jt]s?(x)`) less those `test.exclude` names; jest those its
//! `testMatch` matches (by default `**/__tests__/**/*.[jt]s?(x)` and
//! `**/?(*.)+(spec|test).[jt]s?(x)`); tape, tap, mocha and `node --test` the files their
//! `test` script names (`test_scripts`). A file beside the tests that the runner does not take
//! (yup's excluded `test/helpers.ts`, a folder of fixture modules a test loads) is a helper:
//! its callers are the tests, it is not one. Where a package names no runner these know (ava,
//! a runner given no files), or its config is more than string patterns (a `testRegex`, an
//! include computed at run time), the conventions decide.

use std::collections::HashMap;

use globset::{GlobBuilder, GlobMatcher};
use tree_sitter::{Node, Parser};

use super::{FileCode, Symbol, SymbolKind};

/// vitest's default `include`.
const VITEST_INCLUDE: &[&str] = &["**/*.{test,spec}.?(c|m)[jt]s?(x)"];
/// jest's default `testMatch`.
const JEST_TEST_MATCH: &[&str] = &["**/__tests__/**/*.[jt]s?(x)", "**/?(*.)+(spec|test).[jt]s?(x)"];
/// The names a vitest config goes by, in the order vitest looks for them.
const VITEST_CONFIGS: &[&str] = &["vitest.config", "vite.config"];
const JEST_CONFIGS: &[&str] = &["jest.config"];
const CONFIG_EXTENSIONS: &[&str] = &["ts", "mts", "cts", "js", "mjs", "cjs", "json"];

/// pytest's configuration files with the section that configures it (pyproject.toml's is a
/// table), in the order pytest takes the first of them at the root.
const PYTEST_CONFIGS: &[(&str, &str)] = &[
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", ""),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
];

/// Whether `rel_path` is a test runner's config this module reads.
pub fn is_runner_config(rel_path: &str) -> bool {
    if PYTEST_CONFIGS.iter().any(|(name, _)| *name == rel_path) {
        return true;
    }
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    let Some((stem, ext)) = name.rsplit_once('.') else { return false };
    CONFIG_EXTENSIONS.contains(&ext) && (VITEST_CONFIGS.contains(&stem) || JEST_CONFIGS.contains(&stem))
}

/// The settings of pytest's configuration at the root, each as words (`testpaths`,
/// `addopts`, `python_files`, …), from the first file that configures pytest as pytest itself
/// picks it (`pytest.ini` even without settings); `read` gives a root file's text. `None`
/// without one.
pub(crate) fn pytest_settings(read: impl Fn(&str) -> Option<String>) -> Option<HashMap<String, Vec<String>>> {
    for &(name, section) in PYTEST_CONFIGS {
        let Some(text) = read(name) else { continue };
        if name == "pyproject.toml" {
            let Ok(table) = text.parse::<toml::Table>() else { continue };
            let pytest = table.get("tool").and_then(|t| t.get("pytest")).and_then(|t| t.as_table());
            let Some(options) = pytest.and_then(|p| p.get("ini_options")).and_then(|t| t.as_table()).or(pytest) else {
                continue;
            };
            return Some(options.iter().map(|(k, v)| (k.clone(), toml_words(v))).collect());
        }
        if name.ends_with("pytest.ini") || text.contains(&format!("[{section}]")) {
            return Some(ini_settings(&text, section));
        }
    }
    None
}

/// An INI file's `[section]`, each setting as words (values may go on over indented lines).
fn ini_settings(text: &str, section: &str) -> HashMap<String, Vec<String>> {
    let (mut current, mut key) = (String::new(), String::new());
    let mut values: HashMap<String, String> = HashMap::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            (current, key) = (name.trim().to_string(), String::new());
        } else if current != section {
            continue;
        } else if line.starts_with(char::is_whitespace) && !key.is_empty() {
            values.entry(key.clone()).or_default().push_str(&format!(" {trimmed}"));
        } else if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            key = k.trim().to_string();
            values.insert(key.clone(), v.trim().to_string());
        }
    }
    values.into_iter().map(|(k, v)| (k, v.split_whitespace().map(str::to_string).collect())).collect()
}

/// A TOML setting that is a string of words or a list of them.
fn toml_words(value: &toml::Value) -> Vec<String> {
    match value {
        toml::Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        toml::Value::Array(a) => {
            a.iter().filter_map(|v| v.as_str()).flat_map(|s| s.split_whitespace()).map(str::to_string).collect()
        }
        _ => Vec::new(),
    }
}

/// The Python files pytest collects tests from where its configuration names them
/// (`python_files`: fnmatch patterns over a file's name, or its path when they hold a `/`).
#[derive(Default)]
pub struct PyTests {
    /// Each pattern, and whether it is matched against the whole path.
    files: Option<Vec<(GlobMatcher, bool)>>,
}

impl PyTests {
    /// Reads `python_files` from the root's pytest configuration among `configs` (texts by
    /// path relative to the repo root).
    pub fn read(configs: &HashMap<String, String>) -> PyTests {
        let settings = pytest_settings(|name| configs.get(name).cloned());
        let files = settings.and_then(|s| s.get("python_files").cloned()).filter(|p| !p.is_empty()).and_then(|p| {
            p.iter()
                .map(|p| Some((GlobBuilder::new(p).build().ok()?.compile_matcher(), p.contains('/'))))
                .collect::<Option<Vec<_>>>()
        });
        PyTests { files }
    }

    /// Whether pytest collects tests from `path` where its configuration says which files it
    /// does; `None` where the conventions (pytest's defaults) decide.
    pub fn collects(&self, path: &str) -> Option<bool> {
        let files = self.files.as_ref()?;
        let name = path.rsplit('/').next().unwrap_or(path);
        let collects = files.iter().any(|(g, whole)| g.is_match(if *whole { path } else { name }));
        // A file outside the patterns is one of the tests' helpers, as the conventions' own
        // non-test modules are; one the conventions would not collect either is theirs to judge.
        (collects || is_test_module(path, "python")).then_some(collects)
    }
}

/// One package's runner: the files it takes, relative to the package's folder.
struct Runner {
    /// The package's folder relative to the repo root ("" at the root).
    dir: String,
    include: Vec<GlobMatcher>,
    /// A file matched here, or under a folder matched here, is not run.
    exclude: Vec<GlobMatcher>,
}

/// The test runners of a repo's packages, nearest folder first.
#[derive(Default)]
pub struct JsTests {
    runners: Vec<Runner>,
}

impl JsTests {
    /// Reads every package's runner from the repo's `package.json` files and runner configs
    /// (`configs`: their texts by path relative to the repo root).
    pub fn read(configs: &HashMap<String, String>) -> JsTests {
        let mut dirs: Vec<&str> = configs
            .keys()
            .filter(|p| p.rsplit('/').next() == Some("package.json") || is_runner_config(p))
            .map(|p| p.rsplit_once('/').map(|(d, _)| d).unwrap_or(""))
            .collect();
        dirs.sort_unstable();
        dirs.dedup();
        let mut runners: Vec<Runner> = dirs.into_iter().filter_map(|dir| runner_of(dir, configs)).collect();
        // The deepest package that names a runner decides for its files.
        runners.sort_by_key(|r| std::cmp::Reverse(r.dir.len()));
        JsTests { runners }
    }

    /// Whether the runner of the package holding `path` runs it as a test file; `None` when no
    /// runner is known for it.
    pub fn runs(&self, path: &str) -> Option<bool> {
        let runner = self.runners.iter().find(|r| r.dir.is_empty() || path.starts_with(&format!("{}/", r.dir)))?;
        let rel = if runner.dir.is_empty() { path } else { &path[runner.dir.len() + 1..] };
        let excluded = rel
            .match_indices('/')
            .map(|(i, _)| &rel[..i])
            .chain(std::iter::once(rel))
            .any(|prefix| runner.exclude.iter().any(|g| g.is_match(prefix)));
        Some(!excluded && runner.include.iter().any(|g| g.is_match(rel)))
    }
}

/// The runner of the package in `dir`: its vitest config's patterns, its jest config's, the
/// defaults of the runner it depends on, or the files its `test` script gives tape, tap,
/// mocha or `node --test`.
fn runner_of(dir: &str, configs: &HashMap<String, String>) -> Option<Runner> {
    let at = |name: &str| if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
    let config = |stems: &[&str]| {
        stems.iter().find_map(|stem| {
            CONFIG_EXTENSIONS.iter().find_map(|ext| configs.get(&at(&format!("{stem}.{ext}"))).map(|t| t.as_str()))
        })
    };
    let manifest: Option<serde_json::Value> =
        configs.get(&at("package.json")).and_then(|t| serde_json::from_str(t).ok());
    let depends_on = |name: &str| {
        manifest.as_ref().is_some_and(|m| {
            ["devDependencies", "dependencies"].iter().any(|k| m.get(k).and_then(|d| d.get(name)).is_some())
        })
    };
    let (include, exclude) = if let Some(text) = config(VITEST_CONFIGS) {
        let patterns = vitest_patterns(text)?;
        let include = if patterns.include.is_empty() { owned(VITEST_INCLUDE) } else { patterns.include };
        (include, patterns.exclude)
    } else if let Some(text) = config(JEST_CONFIGS) {
        (jest_patterns(text)?.unwrap_or_else(|| owned(JEST_TEST_MATCH)), Vec::new())
    } else if let Some(jest) = manifest.as_ref().and_then(|m| m.get("jest")) {
        let test_match = jest_json_patterns(jest)?;
        (test_match.unwrap_or_else(|| owned(JEST_TEST_MATCH)), Vec::new())
    } else if depends_on("vitest") {
        (owned(VITEST_INCLUDE), Vec::new())
    } else if depends_on("jest") {
        (owned(JEST_TEST_MATCH), Vec::new())
    } else if let Some(patterns) = manifest.as_ref().and_then(super::test_scripts::script_patterns) {
        (patterns, Vec::new())
    } else {
        return None;
    };
    let include = globs(&include)?;
    let exclude = globs(&exclude)?;
    Some(Runner { dir: dir.to_string(), include, exclude })
}

fn owned(patterns: &[&str]) -> Vec<String> {
    patterns.iter().map(|p| p.to_string()).collect()
}

/// Every pattern as a glob over paths relative to the package; `None` when one is beyond
/// what `globset` reads (a negated extended glob), so the conventions decide instead.
fn globs(patterns: &[String]) -> Option<Vec<GlobMatcher>> {
    let mut out = Vec::new();
    for p in patterns {
        let p = p.trim_start_matches("<rootDir>/").trim_start_matches("./");
        for p in extended_glob(p)? {
            out.push(GlobBuilder::new(&p).literal_separator(true).build().ok()?.compile_matcher());
        }
    }
    Some(out)
}

/// picomatch's extended globs spelled out as plain globs: `?(x|y)` and `*(x|y)` (zero or one
/// / any) → a glob without, one with `x`, one with `y`; `+(x|y)` and `@(x|y)` → one with each
/// (`globset`'s `{x,y}` takes no empty alternative); `!(…)` → `None`.
fn extended_glob(pattern: &str) -> Option<Vec<String>> {
    let mut variants = vec![String::new()];
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if !(matches!(c, '?' | '*' | '+' | '@' | '!') && chars.peek() == Some(&'(')) {
            variants.iter_mut().for_each(|v| v.push(c));
            continue;
        }
        chars.next();
        let mut inner = String::new();
        for d in chars.by_ref() {
            if d == ')' {
                break;
            }
            inner.push(d);
        }
        let mut options: Vec<&str> = inner.split('|').collect();
        match c {
            '!' => return None,
            '?' | '*' => options.insert(0, ""),
            _ => {}
        }
        variants = variants.iter().flat_map(|v| options.iter().map(move |o| format!("{v}{o}"))).collect();
        if variants.len() > 64 {
            return None;
        }
    }
    Some(variants)
}

/// What a vitest config's `test` objects say.
#[derive(Default)]
struct VitestPatterns {
    include: Vec<String>,
    exclude: Vec<String>,
}

/// The string patterns of `include` and `exclude` directly in any `test: {…}` object of a
/// vitest config (the config's own, and each of its `projects`'), not those of `coverage`
/// or `typecheck`. `None` when one is not a list of string literals (computed at run time).
fn vitest_patterns(text: &str) -> Option<VitestPatterns> {
    let tree = parse_script(text)?;
    let mut found = VitestPatterns::default();
    let mut ok = true;
    visit_pairs(tree.root_node(), text, &mut |key, value| {
        if key != "test" || value.kind() != "object" {
            return;
        }
        let mut cursor = value.walk();
        for pair in value.named_children(&mut cursor).filter(|p| p.kind() == "pair") {
            let (Some(k), Some(v)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) else {
                continue;
            };
            let list = match key_text(k, text) {
                "include" => &mut found.include,
                "exclude" => &mut found.exclude,
                _ => continue,
            };
            match string_list(v, text) {
                Some(strings) => list.extend(strings),
                None => ok = false,
            }
        }
    });
    ok.then_some(found)
}

/// A jest config's `testMatch` (`Some(None)`: it sets none); `None` when it matches by
/// `testRegex` or computes its patterns.
fn jest_patterns(text: &str) -> Option<Option<Vec<String>>> {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(text) {
        return jest_json_patterns(&json);
    }
    let tree = parse_script(text)?;
    let mut test_match: Option<Vec<String>> = None;
    let mut ok = true;
    visit_pairs(tree.root_node(), text, &mut |key, value| match key {
        "testMatch" => match string_list(value, text) {
            Some(strings) => test_match.get_or_insert_with(Vec::new).extend(strings),
            None => ok = false,
        },
        "testRegex" => ok = false,
        _ => {}
    });
    ok.then_some(test_match)
}

/// `testMatch` of a jest config written as JSON (or `package.json`'s `jest`).
fn jest_json_patterns(config: &serde_json::Value) -> Option<Option<Vec<String>>> {
    if config.get("testRegex").is_some() {
        return None;
    }
    match config.get("testMatch") {
        None => Some(None),
        Some(list) => {
            let strings: Option<Vec<String>> =
                list.as_array()?.iter().map(|s| s.as_str().map(str::to_string)).collect();
            strings.map(Some)
        }
    }
}

fn parse_script(text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser.set_language(&crate::ingest::Language::TypeScript.grammar()?).ok()?;
    parser.parse(text, None)
}

/// Calls `f(key, value)` for every `key: value` pair of every object in the tree.
fn visit_pairs<'t>(node: Node<'t>, text: &str, f: &mut impl FnMut(&str, Node<'t>)) {
    if node.kind() == "pair" {
        if let (Some(k), Some(v)) = (node.child_by_field_name("key"), node.child_by_field_name("value")) {
            f(key_text(k, text), v);
        }
    }
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        visit_pairs(child, text, f);
    }
}

/// A property name as written, without quotes.
fn key_text<'a>(key: Node, text: &'a str) -> &'a str {
    text[key.byte_range()].trim_matches(['"', '\'', '`'])
}

/// The strings of an array of string literals; `None` for anything else.
fn string_list(node: Node, text: &str) -> Option<Vec<String>> {
    if node.kind() != "array" {
        return None;
    }
    let mut cursor = node.walk();
    let items: Vec<Node> = node.named_children(&mut cursor).filter(|n| n.kind() != "comment").collect();
    items
        .into_iter()
        .map(|n| (n.kind() == "string").then(|| text[n.byte_range()].trim_matches(['"', '\'']).to_string()))
        .collect()
}

/// Whether a file holds tests by its language's conventions: Rust `tests/`, pytest
/// `test_*.py`/`*_test.py`/`tests/`, JS/TS `*.test.*`/`*.spec.*`/`__tests__/`, Go `_test.go`,
/// JVM `src/test/` and `*Test`/`*Spec`/`*Suite` classes, and the like elsewhere.
pub fn is_test_file(path: &str, language: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or("");
    let stem = name.split('.').next().unwrap_or("");
    let dirs: Vec<&str> = lower.split('/').rev().skip(1).collect();
    let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    match language {
        "rust" => {
            in_dir(&["tests"])
                || matches!(stem, "tests" | "test")
                || stem.ends_with("_tests")
                || stem.ends_with("_test")
        }
        "python" => {
            (stem.starts_with("test_") || stem.ends_with("_test") || stem == "tests" || stem == "conftest")
                || (in_dir(&["tests", "test", "testing"]) && name.ends_with(".py"))
        }
        "javascript" | "typescript" | "tsx" => {
            name.contains(".test.") || name.contains(".spec.") || in_dir(&["__tests__", "test", "tests", "spec"])
        }
        "go" => name.ends_with("_test.go"),
        "java" | "kotlin" | "scala" | "csharp" | "swift" | "php" => {
            lower.contains("src/test/")
                || in_dir(&["test", "tests", "spec"])
                || dirs.iter().any(|d| d.ends_with(".tests") || d.ends_with("tests"))
                || ["test", "tests", "spec", "suite"].iter().any(|s| stem.ends_with(s))
                || stem.starts_with("test")
        }
        "ruby" => stem.ends_with("_spec") || stem.ends_with("_test") || in_dir(&["spec", "test"]),
        "elixir" => name.ends_with("_test.exs") || in_dir(&["test"]),
        "lua" => stem.ends_with("_spec") || stem.ends_with("_test") || in_dir(&["spec", "test", "tests"]),
        _ => {
            stem.starts_with("test_")
                || stem.ends_with("_test")
                || stem.ends_with("_tests")
                || in_dir(&["test", "tests"])
        }
    }
}

/// Whether the runner collects tests from the file at `path` by default: pytest only from
/// `test_*.py` and `*_test.py` (a `tests/utils.py` or `conftest.py` holds helpers, credited to
/// the tests that use them); elsewhere every test file.
pub fn is_test_module(path: &str, language: &str) -> bool {
    if language != "python" {
        return is_test_file(path, language);
    }
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let stem = name.strip_suffix(".py").unwrap_or(&name);
    // pytest's default `python_files`: `test_*.py`, `*_test.py`.
    stem.starts_with("test_") || stem.ends_with("_test")
}

/// Whether definition `index` of the file at `path` is a test, by the conventions.
pub fn is_test(path: &str, code: &FileCode, index: usize) -> bool {
    defines_test(code, index, is_test_file(path, &code.language), is_test_module(path, &code.language))
}

/// `is_test`, with whether the file holds tests (`file`) and whether the runner collects
/// tests from it (`module`) already known.
pub(crate) fn defines_test(code: &FileCode, index: usize, file: bool, module: bool) -> bool {
    let s: &Symbol = &code.symbols[index];
    if !s.kind.is_callable() {
        return false;
    }
    match code.language.as_str() {
        // `#[test]` functions live in `mod tests` or in `tests/`.
        // `#[test]` functions (and `#[tokio::test]`, `#[rstest]`…), and the helpers of a test
        // module or file that holds such tests (`mod tests`' `fn roundtrip`): their callers
        // are tests of the same file. A helper in a file without tests (`tests/util/mod.rs`,
        // which each test file includes as `mod util;`) leads on to the tests that call it.
        "rust" => {
            s.test_marked
                || ((file || s.qualified_name.split("::").any(|seg| matches!(seg, "tests" | "test")))
                    && code.symbols.iter().any(|o| o.test_marked))
        }
        // pytest collects `test*` functions and `test*` methods of `Test*` classes.
        "python" => module && s.name.starts_with("test"),
        "go" => file && is_go_test_name(&s.name),
        // Elsewhere a test file's functions are its tests (JS/TS tests are callbacks, found
        // at file level; JVM/.NET test classes hold tests and their helpers alike).
        _ => file && !matches!(s.kind, SymbolKind::Constructor),
    }
}

/// What `go test` runs of a `_test.go` file's functions: `TestX`, `FuzzX` (its seed corpus)
/// and `ExampleX`, where what follows the prefix does not start in lower case (`Testify` is a
/// helper). Benchmarks run only under `-bench`, so a `BenchmarkX` is not a test to run.
fn is_go_test_name(name: &str) -> bool {
    ["Test", "Fuzz", "Example"]
        .iter()
        .any(|p| name.strip_prefix(p).is_some_and(|rest| !rest.chars().next().is_some_and(|c| c.is_lowercase())))
}

/// The name of the JS/TS test (`it("…")`/`test("…")`) whose callback holds `line`, from the
/// file's text: the nearest such call at or above the line. Read backwards from the line's
/// end, without splitting the file: a diff's impact asks this for every line of a test file
/// that names a changed function (collecting the file's lines each time was a tenth of a
/// request's time on zod).
pub fn enclosing_test_name(text: &str, line: u32) -> Option<String> {
    let up_to_line = match (line as usize).checked_sub(1) {
        None => return None,
        Some(k) => text.match_indices('\n').nth(k).map_or(text, |(i, _)| &text[..=i]),
    };
    test_name_above(up_to_line)
}

/// `enclosing_test_name` of the last line of `up_to_line` (a file's text up to the end of
/// that line): for a caller that walks the file's lines itself.
pub fn test_name_above(up_to_line: &str) -> Option<String> {
    for l in up_to_line.lines().rev() {
        let t = l.trim_start();
        for prefix in ["it(", "test(", "it.only(", "test.only(", "it.each(", "describe("] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let rest = rest.trim_start();
                let quote = rest.chars().next()?;
                if matches!(quote, '\'' | '"' | '`') {
                    let inner = &rest[1..];
                    if let Some(end) = inner.find(quote) {
                        return Some(inner[..end].to_string());
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_test_runs_tests_fuzz_seeds_and_examples_not_benchmarks() {
        for (name, runs) in [
            ("TestParse", true),
            ("Test", true),
            ("Test_parse", true),
            ("FuzzParse", true),
            ("ExampleNew", true),
            ("Testify", false),
            ("BenchmarkParse", false),
            ("helper", false),
        ] {
            assert_eq!(is_go_test_name(name), runs, "{name}");
        }
    }

    #[test]
    fn pytest_python_files_names_the_files_it_collects() {
        let configs = |files: &[(&str, &str)]| -> HashMap<String, String> {
            files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
        };
        let setup = configs(&[(
            "setup.cfg",
            "[metadata]\nname = mock\n\n[tool:pytest]\npython_files = test*.py\nfilterwarnings =\n    error\n",
        )]);
        let py = PyTests::read(&setup);
        assert_eq!(py.collects("mock/tests/testmock.py"), Some(true));
        assert_eq!(py.collects("tests/test_api.py"), Some(true));
        assert_eq!(py.collects("mock/tests/support.py"), None);
        // pytest.ini comes first, even without settings; a pattern with a `/` is a path.
        let both = configs(&[("pytest.ini", "[pytest]\n"), ("setup.cfg", "[tool:pytest]\npython_files = test*.py\n")]);
        assert_eq!(PyTests::read(&both).collects("tests/testmock.py"), None);
        let pyproject = configs(&[(
            "pyproject.toml",
            "[tool.pytest.ini_options]\npython_files = [\"check_*.py\", \"suite/*.py\"]\n",
        )]);
        let py = PyTests::read(&pyproject);
        assert_eq!(py.collects("tests/check_io.py"), Some(true));
        assert_eq!(py.collects("suite/io.py"), Some(true));
        assert_eq!(py.collects("tests/test_io.py"), Some(false));
        assert_eq!(PyTests::read(&HashMap::new()).collects("tests/testmock.py"), None);
        assert!(is_test_module("tests/test_io.py", "python") && is_test_module("io_test.py", "python"));
        assert!(!is_test_module("tests/testmock.py", "python") && !is_test_module("tests/conftest.py", "python"));
    }

    fn repo(files: &[(&str, &str)]) -> JsTests {
        JsTests::read(&files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect())
    }

    #[test]
    fn a_vitest_configs_include_and_exclude_decide_and_coverage_patterns_do_not() {
        let config = "import { defineConfig } from 'vitest/config';\n\
                      export default defineConfig({\n\
                      \x20 test: {\n\
                      \x20   include: ['test/**/*.{js,ts}', \"**/*.spec.ts\"],\n\
                      \x20   exclude: ['test/helpers.ts', 'test/fixtures'],\n\
                      \x20   coverage: { include: ['src/**/*.ts'] },\n\
                      \x20   typecheck: { include: ['src/types.ts'] },\n\
                      \x20 },\n\
                      });\n";
        let tests =
            repo(&[("package.json", "{\"devDependencies\": {\"vitest\": \"^3\"}}"), ("vitest.config.ts", config)]);
        for (path, runs) in [
            ("test/string.ts", true),
            ("test/deep/array.js", true),
            ("src/parse.spec.ts", true),
            ("test/helpers.ts", false),
            ("test/fixtures/a.ts", false),
            ("src/parse.ts", false),
            ("src/types.ts", false),
        ] {
            assert_eq!(tests.runs(path), Some(runs), "{path}");
        }
    }

    #[test]
    fn defaults_follow_the_runner_a_package_depends_on_and_none_is_unknown() {
        let tests = repo(&[
            ("packages/a/package.json", "{\"devDependencies\": {\"vitest\": \"1\"}}"),
            ("packages/b/package.json", "{\"jest\": {\"testMatch\": [\"<rootDir>/checks/**/*.ts\"]}}"),
            ("packages/c/package.json", "{\"devDependencies\": {\"jest\": \"29\"}}"),
            ("packages/d/package.json", "{\"devDependencies\": {\"tape\": \"5\"}}"),
            ("packages/e/package.json", "{}"),
            ("packages/e/jest.config.js", "module.exports = { testRegex: '(/__tests__/.*|\\\\.test)\\\\.js$' };"),
            ("packages/f/package.json", "{}"),
            ("packages/f/vitest.config.mts", "export default { test: { include: [...base, 'x/*.ts'] } };"),
        ]);
        assert_eq!(tests.runs("packages/a/test/index.test.ts"), Some(true));
        assert_eq!(tests.runs("packages/a/test/validation/string/valid.ts"), Some(false));
        assert_eq!(tests.runs("packages/b/checks/deep/one.ts"), Some(true));
        assert_eq!(tests.runs("packages/b/test/one.test.ts"), Some(false));
        assert_eq!(tests.runs("packages/c/src/__tests__/util.js"), Some(true));
        assert_eq!(tests.runs("packages/c/src/util.test.tsx"), Some(true));
        assert_eq!(tests.runs("packages/c/test/util.js"), Some(false));
        // tape with no script naming its files, a regular expression, a pattern computed at run time: the conventions decide.
        assert_eq!(tests.runs("packages/d/test/util.js"), None);
        assert_eq!(tests.runs("packages/e/src/a.test.js"), None);
        assert_eq!(tests.runs("packages/f/x/a.ts"), None);
    }

    #[test]
    fn a_test_scripts_files_are_the_tests_where_no_config_says() {
        let tests = repo(&[
            ("package.json", r#"{"scripts": {"test": "npm run unit", "unit": "nyc tape 'test/*.js'"}}"#),
            ("packages/m/package.json", r#"{"scripts": {"test": "mocha --recursive spec"}}"#),
        ]);
        assert_eq!(tests.runs("test/parse.js"), Some(true));
        // A fixture another test spawns is not a test.
        assert_eq!(tests.runs("test/ignore/stub.js"), Some(false));
        assert_eq!(tests.runs("packages/m/spec/deep/a.spec.js"), Some(true));
        assert_eq!(tests.runs("packages/m/test/a.test.js"), Some(false));
    }

    #[test]
    fn extended_globs_read_as_alternatives() {
        assert_eq!(extended_glob("**/*.[jt]s?(x)").unwrap(), ["**/*.[jt]s", "**/*.[jt]sx"]);
        assert_eq!(extended_glob("?(*.)+(spec|test).ts").unwrap(), ["spec.ts", "test.ts", "*.spec.ts", "*.test.ts"]);
        assert_eq!(extended_glob("!(a).ts"), None);
        let tests = repo(&[
            ("package.json", "{}"),
            ("vitest.config.ts", "export default { test: { include: ['**/__tests__/**/*.[jt]s?(x)'] } }"),
        ]);
        assert_eq!(tests.runs("__tests__/base.ts"), Some(true));
        assert_eq!(tests.runs("src/__tests__/deep/map.tsx"), Some(true));
        assert_eq!(tests.runs("src/map.ts"), Some(false));
    }

    #[test]
    fn test_files_by_convention() {
        assert!(is_test_file("tests/api.rs", "rust"));
        assert!(is_test_file("src/parser/tests.rs", "rust"));
        assert!(!is_test_file("src/parser/mod.rs", "rust"));
        assert!(is_test_file("tests/unit/test_api.py", "python"));
        assert!(is_test_file("pkg/api_test.py", "python"));
        assert!(!is_test_file("pkg/api.py", "python"));
        assert!(is_test_file("src/a.test.ts", "typescript"));
        assert!(is_test_file("src/__tests__/a.js", "javascript"));
        assert!(!is_test_file("src/a.ts", "typescript"));
        assert!(is_test_file("pkg/a_test.go", "go"));
        assert!(!is_test_file("pkg/a.go", "go"));
        assert!(is_test_file("src/test/java/com/x/CartTest.java", "java"));
        assert!(!is_test_file("src/main/java/com/x/Cart.java", "java"));
        assert!(is_test_file("spec/cart_spec.rb", "ruby"));
        // Each language by the name the rest of docdex gives it (C# is `csharp`).
        assert!(is_test_file("Shop.Tests/CartTests.cs", "csharp"));
        assert!(!is_test_file("Shop/Cart.cs", "csharp"));
        assert!(is_test_file("app/src/test/kotlin/CartTest.kt", "kotlin"));
        assert!(is_test_file("tests/CartTest.php", "php"));
    }

    #[test]
    fn the_enclosing_js_test_is_named() {
        let text = "describe('cart', () => {\n  it('adds', () => {\n    add(1);\n  });\n  test(\"clears\", () => {\n    clear();\n  });\n});\n";
        assert_eq!(enclosing_test_name(text, 3).as_deref(), Some("adds"));
        assert_eq!(enclosing_test_name(text, 6).as_deref(), Some("clears"));
        assert_eq!(enclosing_test_name(text, 1).as_deref(), Some("cart"));
        // The call's own line is inside it; no line 0; a line past the end is under the last.
        assert_eq!(enclosing_test_name(text, 2).as_deref(), Some("adds"));
        assert_eq!(enclosing_test_name(text, 0), None);
        assert_eq!(enclosing_test_name(text, 99).as_deref(), Some("clears"));
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(enclosing_test_name(&crlf, 3).as_deref(), Some("adds"));
        assert_eq!(enclosing_test_name(&crlf, 5).as_deref(), Some("clears"));
    }
}
