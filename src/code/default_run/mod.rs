//! Which tests the repo's default test run runs: a test `cargo test` does not build, or one
//! `pytest` or `go test` does not collect, covers nothing, whatever calls it.
//!
//! Rust: a test under `#[cfg(feature = "serde")]`, in a module declared so, in a file that
//! opens with `#![cfg(feature = "quickcheck")]` or in a test target whose `required-features`
//! are off by default is not built, nor one for another platform than this machine's
//! (`#[cfg(windows)]`, `target_os = "macos"`). The crate's `Cargo.toml` says which features
//! are on. A condition is true, false or unknown; only a condition known false leaves code
//! out, so what a build may change (`target_env`, `target_feature`) or a cfg a build script
//! may set keeps it.
//!
//! Python: `pytest` run at the repo's root collects only under its `testpaths` and skips what
//! `--ignore` in its `addopts` names (from `pytest.ini`, `pyproject.toml`'s
//! `[tool.pytest.ini_options]`, `tox.ini` or `setup.cfg`, the first that configures pytest):
//! attrs' `bench/test_benchmarks.py` beside `testpaths = "tests"` is not run.
//!
//! Go: a file whose `//go:build` needs a tag of the code's own (`integration`) is not built by
//! `go test` without `-tags`, nor one for another platform or a later Go than this machine's
//! (`mapper_windows_test.go`, `//go:build !go1.19` under Go 1.19).
//!
//! And a test the harness skips unless asked is not run either: Rust's
//! `#[ignore]`, Python's `@pytest.mark.skip` and `@unittest.skip(…)` (the extractor stores them
//! as a gate that is always false). Nor a Python test skipped on the Python that runs the
//! tests (`@skipIf(version_info < (3, 15), …)` under 3.11: pyflakes' lazy-import tests), the
//! version read from the repo's virtual environment or `python3`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::graph::CodeGraph;
use super::{SymbolKind, PYTHON_GATE};

mod go;
use go::{go_constraint, GoTarget};

/// Largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// Module declarations followed up from a file towards its crate's root.
const MAX_MODULE_DEPTH: usize = 32;

/// Conditions the compiler knows whose values depend on the build's settings, so a predicate
/// on one is unknown (the platform's are this machine's, `host_value`; `cargo test` fixes
/// `test`, `debug_assertions` on and `doc`, `doctest`, `miri` off).
const WELL_KNOWN: &[&str] = &[
    "panic",
    "proc_macro",
    "overflow_checks",
    "ub_checks",
    "relocation_model",
    "sanitize",
    "fmt_debug",
    "contract_checks",
    "emscripten_wasm_eh",
];

/// One crate's build settings as `cargo test` takes them without flags.
struct Crate {
    /// Its directory, relative to the repo root ("" at the root).
    dir: String,
    /// Its `[features]` table.
    declared: Option<toml::Table>,
    /// The features on by default (the `default` list, and the features those name), and
    /// those its test suite needs (`suite_features`).
    features: HashSet<String>,
    /// Of those, the ones only the test suite's need turned on (`suite_features`).
    suite: Vec<String>,
    /// A build script or a cargo config may set cfgs of its own (`cargo:rustc-cfg=…`,
    /// `--cfg loom`): an unknown name is then unknown, not off.
    custom_cfgs: bool,
    /// Test targets' `required-features`, by path relative to the crate.
    required_features: HashMap<String, Vec<String>>,
    /// Benchmarks and examples whose tests `cargo test` runs (`test = true`), by path.
    tested_extras: Vec<String>,
    /// The toolchain's channel (`stable`, `beta`, `nightly`) its `rust-toolchain` file pins,
    /// stable without one: rustversion's gates ask it.
    channel: &'static str,
}

/// Answers "does the default test run run this?" for the code of one repo; reads each
/// crate's manifest and pytest's configuration once.
pub struct DefaultRun {
    root: PathBuf,
    crates: HashMap<String, Option<std::rc::Rc<Crate>>>,
    pytest: Option<Option<Collection>>,
    /// Rust files answered already.
    files_built: HashMap<u32, bool>,
    /// Definitions (and files' top levels) `builds` answered already: a walk asks of each
    /// use it follows.
    answered: HashMap<(u32, Option<u32>), bool>,
    /// The files Rust modules bring in by `#[path = "…"]`: path → (declaring file, module).
    path_modules: Option<HashMap<String, (u32, u32)>>,
    /// The (major, minor) version of the Python that runs the repo's tests, once asked.
    python: Option<Option<(u32, u32)>>,
}

/// What the repo's default build leaves out, for `CodeGraph::set_not_built`: the Rust and Go
/// files it does not build, and the definitions of the files it builds that carry a gate of
/// their own that is off (`#[cfg(feature = "zlib")] impl …`).
pub fn not_built(graph: &CodeGraph, root: &Path) -> (HashSet<u32>, HashSet<(u32, u32)>) {
    let mut run = DefaultRun::new(root);
    let mut files = HashSet::new();
    let mut definitions = HashSet::new();
    for f in 0..graph.file_count() as u32 {
        if !matches!(graph.code(f).language.as_str(), "rust" | "go") {
            continue;
        }
        if !run.builds(graph, f, None) {
            files.insert(f);
            continue;
        }
        // Only a file with a gate on some definition has definitions its build leaves out.
        if graph.code(f).gates.iter().any(|g| g.symbol.is_some()) {
            definitions.extend(
                (0..graph.code(f).symbols.len() as u32).filter(|&i| !run.builds(graph, f, Some(i))).map(|i| (f, i)),
            );
        }
    }
    (files, definitions)
}

impl DefaultRun {
    pub fn new(root: &Path) -> DefaultRun {
        DefaultRun {
            root: root.to_path_buf(),
            crates: HashMap::new(),
            pytest: None,
            files_built: HashMap::new(),
            answered: HashMap::new(),
            path_modules: None,
            python: None,
        }
    }

    /// Whether a test (a definition, or a file's top level with `None`) runs in the repo's
    /// default test run. Code of other languages, or outside any crate, always does.
    pub fn runs(&mut self, graph: &CodeGraph, file: u32, symbol: Option<u32>) -> bool {
        match graph.code(file).language.as_str() {
            "rust" => self.built(graph, file, symbol),
            "python" => {
                let root = &self.root;
                let collection = self.pytest.get_or_insert_with(|| Collection::read(root));
                let python = *self.python.get_or_insert_with(|| python_version(root));
                collection.as_ref().is_none_or(|c| c.collects(graph.path(file)))
                    && symbol.is_none_or(|i| !enclosing(graph, file, i).any(|d| skipped(graph, file, d, python)))
            }
            _ => self.builds(graph, file, symbol),
        }
    }

    /// Whether the default test run builds a definition (or a file's top level), so that it
    /// can run in some test: Rust's `#[cfg(…)]` and Go's build constraints; code of other
    /// languages always.
    pub fn builds(&mut self, graph: &CodeGraph, file: u32, symbol: Option<u32>) -> bool {
        if let Some(&built) = self.answered.get(&(file, symbol)) {
            return built;
        }
        let built = match graph.code(file).language.as_str() {
            "rust" => self.built(graph, file, symbol),
            // `go test` builds a file whose name's platform is this one's and whose
            // `//go:build` holds here without `-tags`.
            "go" => {
                let target = GoTarget::host();
                target.builds_named(graph.path(file)) != Some(false)
                    && !graph
                        .code(file)
                        .gates
                        .iter()
                        .any(|g| g.symbol.is_none() && go_constraint(&g.cfg, target) == Some(false))
            }
            _ => true,
        };
        self.answered.insert((file, symbol), built);
        built
    }

    /// Whether `cargo test` builds a Rust definition (or file).
    fn built(&mut self, graph: &CodeGraph, file: u32, symbol: Option<u32>) -> bool {
        let path = graph.path(file).to_string();
        let Some(krate) = self.crate_of(graph, &path) else { return true };
        if let Some(i) = symbol {
            if !definition_built(graph, &krate, file, i) {
                return false;
            }
        }
        // A file's answer holds for all its tests.
        if let Some(&built) = self.files_built.get(&file) {
            return built;
        }
        let path_modules = self.path_modules.get_or_insert_with(|| path_modules(graph));
        let built = file_built(graph, &krate, path_modules, file, &path);
        self.files_built.insert(file, built);
        built
    }

    /// The features the repo's root crate's test suite needs that are off by default (see
    /// `suite_features`), sorted: what `cargo test` at the root is given.
    pub fn suite_features(&mut self, graph: &CodeGraph) -> Vec<String> {
        let mut features = self.crate_of(graph, "Cargo.toml").map(|k| k.suite.clone()).unwrap_or_default();
        features.sort();
        features
    }

    /// The crate whose manifest is nearest above `path`.
    fn crate_of(&mut self, graph: &CodeGraph, path: &str) -> Option<std::rc::Rc<Crate>> {
        let mut dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        loop {
            if !self.crates.contains_key(dir) {
                let krate = read_crate(&self.root, dir).map(|mut krate| {
                    suite_features(graph, &mut krate);
                    std::rc::Rc::new(krate)
                });
                self.crates.insert(dir.to_string(), krate);
            }
            if let Some(Some(krate)) = self.crates.get(dir) {
                return Some(krate.clone());
            }
            if dir.is_empty() {
                return None;
            }
            dir = dir.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        }
    }
}

/// What `pytest` run at the repo's root collects, by its configuration.
struct Collection {
    /// `testpaths`: where collection starts (globs allowed); empty: the whole root.
    testpaths: Vec<globset::GlobMatcher>,
    /// `--ignore` / `--ignore-glob` in `addopts`.
    ignored: Vec<globset::GlobMatcher>,
}

impl Collection {
    /// The configuration pytest itself would take at the root, the first file that has one;
    /// `None` without one, or when it says nothing that limits collection.
    fn read(root: &Path) -> Option<Collection> {
        let read = |name: &str| {
            crate::ingest::open::read_inside(root, name, MAX_MANIFEST_BYTES)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        let settings = crate::code::test_files::pytest_settings(read)?;
        let words = |key: &str| settings.get(key).cloned().unwrap_or_default();
        let (testpaths, addopts) = (words("testpaths"), words("addopts"));
        let glob = |p: &str| {
            let p = p.trim_start_matches("./").trim_end_matches('/');
            globset::GlobBuilder::new(p).literal_separator(true).build().ok().map(|g| g.compile_matcher())
        };
        let mut ignored = Vec::new();
        let mut words = addopts.iter();
        while let Some(word) = words.next() {
            let value = match word.split_once('=') {
                Some(("--ignore" | "--ignore-glob", v)) => Some(v.to_string()),
                None if word == "--ignore" || word == "--ignore-glob" => words.next().cloned(),
                _ => None,
            };
            ignored.extend(value.as_deref().and_then(glob));
        }
        let testpaths: Vec<_> = testpaths.iter().filter_map(|p| glob(p)).collect();
        (!testpaths.is_empty() || !ignored.is_empty()).then_some(Collection { testpaths, ignored })
    }

    /// Whether a file at `path` (relative to the root) is collected: it or a folder above it
    /// is one of `testpaths`, and none is ignored.
    fn collects(&self, path: &str) -> bool {
        let mut prefixes = path.match_indices('/').map(|(i, _)| &path[..i]).chain(std::iter::once(path));
        let mut under_testpath = self.testpaths.is_empty();
        for prefix in prefixes.by_ref() {
            if self.ignored.iter().any(|g| g.is_match(prefix)) {
                return false;
            }
            under_testpath |= self.testpaths.iter().any(|g| g.is_match(prefix));
        }
        under_testpath
    }
}

/// A suite whose test files mostly need a feature off by default is run with it: tokio's
/// `tests/*.rs` open with `#![cfg(feature = "full")]` (its CI passes `--features full`), while
/// petgraph's one `#![cfg(feature = "quickcheck")]` file among twenty is an extra. The features
/// more than half of the crate's test files name are turned on, with what they turn on.
fn suite_features(graph: &CodeGraph, krate: &mut Crate) {
    let tests_dir = if krate.dir.is_empty() { "tests/".to_string() } else { format!("{}/tests/", krate.dir) };
    let files: Vec<u32> = (0..graph.file_count() as u32)
        .filter(|&f| {
            let path = graph.path(f);
            path.strip_prefix(&tests_dir).is_some_and(|rest| rest.ends_with(".rs") && !rest.contains('/'))
        })
        .collect();
    let mut named: HashMap<String, usize> = HashMap::new();
    let mut off = 0;
    for &file in &files {
        let gates: Vec<&str> =
            graph.code(file).gates.iter().filter(|g| g.symbol.is_none()).map(|g| g.cfg.as_str()).collect();
        if !gates.iter().any(|g| evaluate(g, krate) == Some(false)) {
            continue;
        }
        off += 1;
        let mut seen = HashSet::new();
        for name in gates.iter().flat_map(|g| features_named(g)) {
            if seen.insert(name.clone()) {
                *named.entry(name).or_default() += 1;
            }
        }
    }
    if off * 2 <= files.len() {
        return;
    }
    let wanted: Vec<String> =
        named.into_iter().filter(|(f, n)| n * 2 > files.len() && !krate.features.contains(f)).map(|(f, _)| f).collect();
    krate.features.extend(closure(krate.declared.as_ref(), wanted.clone()));
    krate.suite = wanted;
}

/// The features `feature = "…"` names in a predicate.
fn features_named(cfg: &str) -> Vec<String> {
    let tokens = tokenize(cfg).unwrap_or_default();
    tokens
        .windows(3)
        .filter_map(|w| match w {
            [Token::Ident(k), Token::Eq, Token::Str(v)] if k == "feature" => Some(v.clone()),
            _ => None,
        })
        .collect()
}

/// `features` and every feature they turn on through the `[features]` table (`dep:x`
/// names a dependency, `x/y` another crate's feature, or x's when x is an optional
/// dependency, which it then turns on; `x?/y` turns y on only where x is on already and turns
/// on nothing itself: flate2's default `runtime_detection = ["zlib-rs?/std"]` leaves its
/// zlib-rs backend off).
fn closure(declared: Option<&toml::Table>, features: Vec<String>) -> HashSet<String> {
    let mut on: HashSet<String> = features.iter().cloned().collect();
    let mut pending = features;
    while let Some(feature) = pending.pop() {
        let Some(list) = declared.and_then(|d| d.get(&feature)).and_then(|v| v.as_array()) else { continue };
        for entry in list.iter().filter_map(|v| v.as_str()) {
            let own = entry.split('/').next().unwrap_or(entry);
            if !own.starts_with("dep:") && !own.ends_with('?') && on.insert(own.to_string()) {
                pending.push(own.to_string());
            }
        }
    }
    on
}

/// Whether `cargo test` builds a file of `krate` (at `path`): its test target, its folder,
/// the gates on it and on the `mod` declarations that bring it in.
fn file_built(
    graph: &CodeGraph,
    krate: &Crate,
    path_modules: &HashMap<String, (u32, u32)>,
    file: u32,
    path: &str,
) -> bool {
    let in_crate = path.strip_prefix(&krate.dir).unwrap_or(path).trim_start_matches('/');
    if krate.required_features.get(in_crate).is_some_and(|r| !r.iter().all(|f| krate.features.contains(f))) {
        return false;
    }
    // Benchmarks and examples are built by `cargo test` but their tests run only where
    // the target says `test = true`.
    if ["benches/", "examples/"].iter().any(|d| in_crate.starts_with(d))
        && !krate.tested_extras.iter().any(|t| in_crate == t || in_crate.starts_with(&format!("{t}/")))
    {
        return false;
    }
    let mut file = file;
    for _ in 0..MAX_MODULE_DEPTH {
        if gates_off(graph, krate, file, None) {
            return false;
        }
        // The `mod name;` that brings the file in: one whose `#[path]` names it, or the one
        // its place names in its parent module's file.
        let (parent, declaration) = match path_modules.get(graph.path(file)) {
            Some(&(parent, module)) => (parent, Some(module as usize)),
            None => {
                let Some((parent, name)) = parent_module(graph, graph.path(file)) else { return true };
                let code = graph.code(parent);
                let declaration = code
                    .symbols
                    .iter()
                    .position(|s| s.kind == SymbolKind::Module && s.name == name && s.container.is_empty());
                (parent, declaration)
            }
        };
        if declaration.is_some_and(|d| gates_off(graph, krate, parent, Some(d as u32))) {
            return false;
        }
        file = parent;
    }
    true
}

/// Whether a definition and the definitions around it (`mod tests`) are built.
fn definition_built(graph: &CodeGraph, krate: &Crate, file: u32, symbol: u32) -> bool {
    !enclosing(graph, file, symbol).any(|d| gates_off(graph, krate, file, Some(d)))
}

/// A definition and the definitions around it, innermost first (`Case.test_x`, `Case`): of
/// several blocks of one name (`impl BigUint` under `#[cfg(feature = "std")]` and another
/// without), the one whose lines hold it.
fn enclosing(graph: &CodeGraph, file: u32, symbol: u32) -> impl Iterator<Item = u32> + '_ {
    let code = graph.code(file);
    std::iter::successors(Some(symbol), move |&i| {
        let inner = &code.symbols[i as usize];
        let container = &inner.container;
        let named = |s: &super::Symbol| &s.qualified_name == container && s.kind.is_container();
        let holds = |s: &super::Symbol| named(s) && s.line <= inner.line && inner.end_line <= s.end_line;
        (!container.is_empty())
            .then(|| code.symbols.iter().position(holds).or_else(|| code.symbols.iter().position(named)))
            .flatten()
            .map(|p| p as u32)
    })
    .take(MAX_MODULE_DEPTH)
}

/// Whether a skip marker is on a definition (a gate that is always false), or a skip on the
/// Python version `python` (`PYTHON_GATE`; none read when the version is unknown).
fn skipped(graph: &CodeGraph, file: u32, symbol: u32, python: Option<(u32, u32)>) -> bool {
    graph.code(file).gates.iter().filter(|g| g.symbol == Some(symbol)).any(|g| {
        g.cfg == "false" || python.zip(g.cfg.strip_prefix(PYTHON_GATE)).is_some_and(|(v, gate)| !version_holds(v, gate))
    })
}

/// Whether a Python version meets a gate's comparison (`>=3.15`); an unreadable one holds.
fn version_holds(version: (u32, u32), comparison: &str) -> bool {
    let operator = ["<=", ">=", "<", ">"].into_iter().find(|o| comparison.starts_with(o));
    let Some(operator) = operator else { return true };
    let Some((major, minor)) = comparison[operator.len()..].split_once('.') else { return true };
    let (Ok(major), Ok(minor)) = (major.parse::<u32>(), minor.parse::<u32>()) else { return true };
    let wanted = (major, minor);
    match operator {
        "<" => version < wanted,
        "<=" => version <= wanted,
        ">" => version > wanted,
        _ => version >= wanted,
    }
}

/// The (major, minor) version of the Python that runs a repo's tests: its virtual
/// environment's (`.venv/pyvenv.cfg`, `venv/pyvenv.cfg`: the one the test runner picks), else
/// `python3`'s, asked once per process; `None` when neither tells.
fn python_version(root: &Path) -> Option<(u32, u32)> {
    for venv in [".venv", "venv"] {
        let Ok(text) = std::fs::read_to_string(root.join(venv).join("pyvenv.cfg")) else { continue };
        let version = text.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            matches!(key.trim(), "version" | "version_info").then(|| major_minor(value.trim())).flatten()
        });
        if version.is_some() {
            return version;
        }
    }
    static SYSTEM: std::sync::OnceLock<Option<(u32, u32)>> = std::sync::OnceLock::new();
    *SYSTEM.get_or_init(|| {
        let output = std::process::Command::new("python3")
            .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        major_minor(String::from_utf8_lossy(&output.stdout).trim())
    })
}

/// `3.11` of `3.11.7`.
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Whether one of the gates on a definition (or on the file) is known false.
fn gates_off(graph: &CodeGraph, krate: &Crate, file: u32, symbol: Option<u32>) -> bool {
    graph.code(file).gates.iter().filter(|g| g.symbol == symbol).any(|g| evaluate(&g.cfg, krate) == Some(false))
}

/// The files Rust modules bring in by `#[path = "…"]` (relative to the declaring file's
/// folder), each with the declaring file and the module (its index).
fn path_modules(graph: &CodeGraph) -> HashMap<String, (u32, u32)> {
    let mut out = HashMap::new();
    for f in 0..graph.file_count() as u32 {
        let declaring = graph.path(f);
        let dir = declaring.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        for (module, written) in &graph.code(f).module_paths {
            if let Some(path) = normalize(dir, written).filter(|p| p != declaring) {
                out.entry(path).or_insert((f, *module));
            }
        }
    }
    out
}

/// `written` relative to `dir`, with `.` and `..` folded; `None` if it climbs out of the repo.
fn normalize(dir: &str, written: &str) -> Option<String> {
    crate::code::resolve::normalize(&format!("{dir}/{written}"))
}

/// The file of the module that declares the one at `path`, and the declared name:
/// `src/a/b.rs` and `src/a/b/mod.rs` are `b` in `src/a.rs`, `src/a/mod.rs` or, at the top,
/// `src/lib.rs` / `src/main.rs`.
fn parent_module(graph: &CodeGraph, path: &str) -> Option<(u32, String)> {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.strip_suffix(".rs")?;
    let (dir, name) = match stem {
        "lib" | "main" => return None,
        "mod" => {
            let (up, name) = dir.rsplit_once('/').unwrap_or(("", dir));
            (up, name)
        }
        _ => (dir, stem),
    };
    let join = |f: &str| if dir.is_empty() { f.to_string() } else { format!("{dir}/{f}") };
    let own = dir.rsplit_once('/').map(|(_, d)| d).unwrap_or(dir);
    let outer = dir.rsplit_once('/').map(|(up, _)| format!("{up}/{own}.rs")).unwrap_or_else(|| format!("{own}.rs"));
    [join("mod.rs"), outer, join("lib.rs"), join("main.rs")]
        .iter()
        .filter(|p| p.as_str() != path)
        .find_map(|p| graph.file_index(p))
        .map(|f| (f, name.to_string()))
}

/// A crate's manifest at `dir`, if there is one with a `[package]`.
fn read_crate(root: &Path, dir: &str) -> Option<Crate> {
    let join = |f: &str| if dir.is_empty() { f.to_string() } else { format!("{dir}/{f}") };
    let bytes = crate::ingest::open::read_inside(root, &join("Cargo.toml"), MAX_MANIFEST_BYTES).ok()?;
    let manifest: toml::Table = std::str::from_utf8(&bytes).ok()?.parse().ok()?;
    let package = manifest.get("package")?.as_table()?;
    let declared = manifest.get("features").and_then(|f| f.as_table()).cloned();
    let features = closure(declared.as_ref(), vec!["default".to_string()]);
    let mut required_features = HashMap::new();
    for target in manifest.get("test").and_then(|t| t.as_array()).into_iter().flatten() {
        let Some(required) = target.get("required-features").and_then(|r| r.as_array()) else { continue };
        let name = target.get("name").and_then(|n| n.as_str());
        let path =
            target.get("path").and_then(|p| p.as_str()).map(str::to_string).or(name.map(|n| format!("tests/{n}.rs")));
        if let Some(path) = path {
            let required = required.iter().filter_map(|r| r.as_str()).map(str::to_string).collect();
            required_features.insert(path.trim_start_matches("./").to_string(), required);
        }
    }
    // `[[bench]]` / `[[example]]` targets with `test = true`: their file (`benches/x.rs`) or
    // folder (`examples/x/`).
    let mut tested_extras = Vec::new();
    for (kind, folder) in [("bench", "benches"), ("example", "examples")] {
        for target in manifest.get(kind).and_then(|t| t.as_array()).into_iter().flatten() {
            if target.get("test").and_then(|t| t.as_bool()) != Some(true) {
                continue;
            }
            if let Some(path) = target.get("path").and_then(|p| p.as_str()) {
                // The target's modules: beside a `main.rs` (`examples/arithmetic/main.rs`
                // declares `mod test_parser;`, winnow's), under its name otherwise.
                let path = path.trim_start_matches("./");
                let stem = path.strip_suffix(".rs").unwrap_or(path);
                tested_extras.push(path.to_string());
                tested_extras.push(stem.strip_suffix("/main").unwrap_or(stem).to_string());
            } else if let Some(name) = target.get("name").and_then(|n| n.as_str()) {
                tested_extras.push(format!("{folder}/{name}.rs"));
                tested_extras.push(format!("{folder}/{name}"));
            }
        }
    }
    let build_script = match package.get("build") {
        Some(toml::Value::String(_)) => true,
        Some(toml::Value::Boolean(b)) => *b,
        _ => root.join(join("build.rs")).is_file(),
    };
    let cargo_config = |d: &str| {
        [".cargo/config.toml", ".cargo/config"].iter().any(|c| {
            let p = if d.is_empty() { c.to_string() } else { format!("{d}/{c}") };
            crate::ingest::open::read_inside(root, &p, MAX_MANIFEST_BYTES)
                .is_ok_and(|b| String::from_utf8_lossy(&b).contains("--cfg"))
        })
    };
    let custom_cfgs = build_script || cargo_config("") || (!dir.is_empty() && cargo_config(dir));
    // rustup reads the nearest `rust-toolchain.toml` or `rust-toolchain` (a channel alone, or
    // TOML) from the folder it runs in up.
    let pinned =
        [join("rust-toolchain.toml"), join("rust-toolchain"), "rust-toolchain.toml".into(), "rust-toolchain".into()]
            .iter()
            .find_map(|p| crate::ingest::open::read_inside(root, p, MAX_MANIFEST_BYTES).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
    let channel = ["nightly", "beta"].into_iter().find(|c| pinned.contains(c)).unwrap_or("stable");
    Some(Crate {
        dir: dir.to_string(),
        declared,
        features,
        suite: Vec::new(),
        custom_cfgs,
        required_features,
        tested_extras,
        channel,
    })
}

/// A `cfg` predicate's value in the default test build: `Some(true)`, `Some(false)`, or
/// `None` when it depends on what is not known here (the target, an unreadable predicate).
fn evaluate(cfg: &str, krate: &Crate) -> Option<bool> {
    let tokens = tokenize(cfg)?;
    let mut at = 0;
    let value = predicate(&tokens, &mut at, krate)?;
    (at == tokens.len()).then_some(value).flatten()
}

/// Three-valued `and`: one known false decides; all known true is true; else unknown.
fn all_of(values: Vec<Option<bool>>) -> Option<bool> {
    if values.contains(&Some(false)) {
        return Some(false);
    }
    values.iter().all(|v| v.is_some()).then_some(true)
}

/// Three-valued `or`: one known true decides; all known false is false; else unknown.
fn any_of(values: Vec<Option<bool>>) -> Option<bool> {
    all_of(values.into_iter().map(|v| v.map(|b| !b)).collect()).map(|b| !b)
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Eq,
    Open,
    Close,
    Comma,
}

fn tokenize(text: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '=' => {
                chars.next();
                tokens.push(Token::Eq);
            }
            '(' => {
                chars.next();
                tokens.push(Token::Open);
            }
            ')' => {
                chars.next();
                tokens.push(Token::Close);
            }
            ',' => {
                chars.next();
                tokens.push(Token::Comma);
            }
            '"' => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => s.push(chars.next()?),
                        c => s.push(c),
                    }
                }
                tokens.push(Token::Str(s));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut s = String::new();
                while let Some(&c) = chars.peek().filter(|c| c.is_alphanumeric() || **c == '_') {
                    s.push(c);
                    chars.next();
                }
                tokens.push(Token::Ident(s));
            }
            _ => return None,
        }
    }
    Some(tokens)
}

/// One predicate at `tokens[*at]`: the outer `Option` is a parse, the inner the value.
fn predicate(tokens: &[Token], at: &mut usize, krate: &Crate) -> Option<Option<bool>> {
    let Some(Token::Ident(name)) = tokens.get(*at) else { return None };
    *at += 1;
    match tokens.get(*at) {
        Some(Token::Eq) => {
            let Some(Token::Str(value)) = tokens.get(*at + 1) else { return None };
            *at += 2;
            Some(match name.as_str() {
                "feature" => Some(krate.features.contains(value)),
                // rustversion's channel (`attributes::gate`); a pinned release is unknown.
                "rust_channel" => {
                    ["stable", "beta", "nightly"].contains(&value.as_str()).then(|| krate.channel == value)
                }
                _ => host_value(name, value),
            })
        }
        Some(Token::Open) if matches!(name.as_str(), "all" | "any" | "not") => {
            *at += 1;
            let mut values = Vec::new();
            while tokens.get(*at) != Some(&Token::Close) {
                values.push(predicate(tokens, at, krate)?);
                match tokens.get(*at) {
                    Some(Token::Comma) => *at += 1,
                    Some(Token::Close) => {}
                    _ => return None,
                }
            }
            *at += 1;
            Some(match name.as_str() {
                "not" if values.len() == 1 => values[0].map(|v| !v),
                "not" => return None,
                "all" => all_of(values),
                _ => any_of(values),
            })
        }
        _ => Some(match name.as_str() {
            // `cfg(true)`, `cfg(false)`, and the gate of a skip marker (`#[ignore]`).
            "true" => Some(true),
            "false" => Some(false),
            "test" | "debug_assertions" => Some(true),
            "doc" | "doctest" | "miri" => Some(false),
            // The tests run here: this machine's platform decides (as `go test`'s build
            // constraints do), a file behind `#[cfg(windows)]` is not built on Linux.
            "unix" => Some(cfg!(unix)),
            "windows" => Some(cfg!(windows)),
            n if n.starts_with("target_") || WELL_KNOWN.contains(&n) => None,
            // A cfg of the crate's own (`loom`, `tokio_unstable`, `docsrs`) is off unless
            // something sets it.
            _ if krate.custom_cfgs => None,
            _ => Some(false),
        }),
    }
}

/// A `target_*` key's value on this machine, where the standard library says it: the os, its
/// family, the architecture, the pointer width and the byte order (not the environment, the
/// vendor or the CPU's features, which a build may change).
fn host_value(key: &str, value: &str) -> Option<bool> {
    match key {
        "target_os" => Some(std::env::consts::OS == value),
        "target_family" => Some(std::env::consts::FAMILY == value),
        "target_arch" => Some(std::env::consts::ARCH == value),
        "target_pointer_width" => Some(usize::BITS.to_string() == value),
        "target_endian" => Some(value == if cfg!(target_endian = "little") { "little" } else { "big" }),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
