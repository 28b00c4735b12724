//! Running a repo's tests: which runner (cargo test, pytest, vitest or jest, go test, or the
//! repo's own command), which tests (all, a file or folder, or the ones a change reaches),
//! and one bounded run: in the repo's root only, in a process group of its own that is
//! killed whole at the time limit, its output capped, its results parsed into counts and
//! failures.

mod parse;
pub mod process;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::protocol::impact::{RunTestsResponse, TestFailure};
use crate::protocol::{DocdexError, Result};
use process::{kill_group, reap_group};

/// The tail of the output a result carries.
const TAIL_BYTES: usize = 8 * 1024;

/// A test runner docdex knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    Cargo,
    Pytest {
        python: String,
    },
    Vitest {
        bin: String,
    },
    Jest {
        bin: String,
    },
    Go,
    /// The repo's own command (`[tests] commands`), run with `sh -c`.
    Custom(String),
}

impl Runner {
    pub fn name(&self) -> &'static str {
        match self {
            Runner::Cargo => "cargo",
            Runner::Pytest { .. } => "pytest",
            Runner::Vitest { .. } => "vitest",
            Runner::Jest { .. } => "jest",
            Runner::Go => "go",
            Runner::Custom(_) => "custom",
        }
    }
}

/// Which tests to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    All,
    /// A file or folder, relative to the repo root.
    Target(String),
    /// Tests by file and name (a change's affected tests); an empty name means the file.
    Tests(Vec<(String, String)>),
}

/// The runners' families, by the file names of the tests they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Rust,
    Go,
    JavaScript,
    Python,
}

impl Family {
    fn of(path: &str) -> Option<Family> {
        let extension = Path::new(path).extension()?.to_str()?;
        Some(match extension {
            "rs" => Family::Rust,
            "go" => Family::Go,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Family::JavaScript,
            "py" => Family::Python,
            _ => return None,
        })
    }

    fn of_runner(runner: &Runner) -> Option<Family> {
        match runner {
            Runner::Cargo => Some(Family::Rust),
            Runner::Go => Some(Family::Go),
            Runner::Vitest { .. } | Runner::Jest { .. } => Some(Family::JavaScript),
            Runner::Pytest { .. } => Some(Family::Python),
            Runner::Custom(_) => None,
        }
    }
}

/// Whether `runner` runs the test file at `path` (a folder, or a file of no known language,
/// is left to it).
pub fn runs(runner: &Runner, path: &str) -> bool {
    match (Family::of_runner(runner), Family::of(path)) {
        (Some(runner), Some(file)) => runner == file,
        _ => true,
    }
}

/// `target` (relative to `root`) when it is a file; a folder's files (at most `max`, hidden
/// folders and dependencies' left out) when it is one.
pub fn files_under(root: &Path, target: &str, max: usize) -> Vec<String> {
    let full = root.join(target);
    if !full.is_dir() {
        return vec![target.to_string()];
    }
    let mut found = Vec::new();
    let mut folders = vec![full];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || matches!(name.as_str(), "node_modules" | "target" | "vendor" | "__pycache__") {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(relative) = path.strip_prefix(root) {
                found.push(relative.to_string_lossy().to_string());
                if found.len() >= max {
                    return found;
                }
            }
        }
    }
    found
}

/// Finds the repo's runner: its configured command, else the one for the language of most of
/// `paths` (the files to run: a repo with a Cargo.toml and Python tests runs a `.py` file
/// with pytest), else by the repo's files (Cargo.toml, go.mod, package.json naming vitest or
/// jest, a Python project or test files), in that order.
pub fn detect(root: &Path, custom_opt: Option<&str>, paths: &[&str]) -> Result<Runner> {
    if let Some(command) = custom_opt.filter(|c| !c.trim().is_empty()) {
        return Ok(Runner::Custom(command.to_string()));
    }
    let mut counts: Vec<(Family, usize)> = Vec::new();
    for family in paths.iter().filter_map(|p| Family::of(p)) {
        match counts.iter_mut().find(|(f, _)| *f == family) {
            Some((_, n)) => *n += 1,
            None => counts.push((family, 1)),
        }
    }
    // Most files first; a tie keeps the order the files came in (surest test first).
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    for (family, _) in counts {
        if let Some(runner) = runner_of(root, Some(family)) {
            return Ok(runner);
        }
    }
    runner_of(root, None).ok_or_else(|| {
        DocdexError::invalid(format!("no test runner found in {}", root.display())).with_hint(
            "docdex runs cargo test (Cargo.toml), go test (go.mod), vitest or jest (package.json) and pytest; \
             for another, set the repo's command in config.toml: [tests] commands = { \"<repo path>\" = \"make test\" }",
        )
    })
}

/// The repo's runner of `family` (any family when `None`), when its project files say it has one.
fn runner_of(root: &Path, family: Option<Family>) -> Option<Runner> {
    let wants = |f: Family| family.is_none_or(|w| w == f);
    if wants(Family::Rust) && root.join("Cargo.toml").is_file() {
        return Some(Runner::Cargo);
    }
    if wants(Family::Go) && root.join("go.mod").is_file() {
        return Some(Runner::Go);
    }
    if let Some(text) =
        wants(Family::JavaScript).then(|| std::fs::read_to_string(root.join("package.json")).ok()).flatten()
    {
        let package: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let names =
            |key: &str| package[key].as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
        let deps: Vec<String> = [names("devDependencies"), names("dependencies")].concat();
        let script = package["scripts"]["test"].as_str().unwrap_or("");
        let bin = |name: &str| {
            let local = root.join("node_modules/.bin").join(name);
            if local.is_file() {
                local.display().to_string()
            } else {
                name.to_string()
            }
        };
        if deps.iter().any(|d| d == "vitest") || script.contains("vitest") {
            return Some(Runner::Vitest { bin: bin("vitest") });
        }
        if deps.iter().any(|d| d == "jest") || script.contains("jest") {
            return Some(Runner::Jest { bin: bin("jest") });
        }
    }
    let python_project = ["pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py"]
        .iter()
        .any(|f| root.join(f).is_file())
        // Test files at the root (`test_app.py` beside `app.py`) or in a tests folder.
        || [".", "tests", "test"].iter().any(|d| root.join(d).is_dir() && has_python_tests(&root.join(d)))
        // Asked to run Python test files: pytest runs them without a project file.
        || family == Some(Family::Python);
    if wants(Family::Python) && python_project {
        // A project's own virtual environment first: it has the project's dependencies.
        let python = [".venv/bin/python", "venv/bin/python"]
            .iter()
            .map(|p| root.join(p))
            .find(|p| p.is_file())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "python3".to_string());
        return Some(Runner::Pytest { python });
    }
    None
}

fn has_python_tests(dir: &Path) -> bool {
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
    })
}

/// The command line for `selection`: program, arguments, and a report file the runner
/// writes (read after the run), if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub program: String,
    pub args: Vec<String>,
    pub report_opt: Option<PathBuf>,
}

impl Plan {
    /// `cargo test --features …`: features a crate's suite needs that are off by default
    /// (`code::default_run::DefaultRun::suite_features`). Nothing for another runner, or none.
    pub fn with_cargo_features(mut self, features: &[String]) -> Plan {
        if self.program == "cargo" && !features.is_empty() && self.args.first().is_some_and(|a| a == "test") {
            self.args.splice(1..1, [String::from("--features"), features.join(",")]);
        }
        self
    }

    /// The command as a shell would show it.
    pub fn display(&self) -> String {
        let quote = |a: &str| {
            if a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c)) && !a.is_empty() {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        };
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(quote)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Plans the run of the repo at `root`; `report_dir` holds a report file for runners that
/// write one.
pub fn plan(runner: &Runner, selection: &Selection, root: &Path, report_dir: &Path) -> Result<Plan> {
    let s = |v: &str| v.to_string();
    let plan = match runner {
        Runner::Custom(command) => {
            if *selection != Selection::All {
                return Err(DocdexError::invalid("the repo's own test command runs as a whole")
                    .with_hint("run it without target or affected, or remove it from [tests] commands to let docdex pick the tests"));
            }
            Plan { program: s("sh"), args: vec![s("-c"), command.clone()], report_opt: None }
        }
        Runner::Cargo => {
            let mut args = vec![s("test"), s("--no-fail-fast")];
            let mut filters: Vec<String> = Vec::new();
            let mut targets = TestTargets::read(root);
            match selection {
                Selection::All => {}
                Selection::Target(target) => cargo_target(&mut targets, target, &mut args, &mut filters),
                Selection::Tests(tests) => {
                    let mut planned: Vec<&str> = Vec::new();
                    // cargo's filters apply to every target of the command: a file given whole
                    // (a helper's or a macro's tests, named "") runs with none.
                    let whole_file = tests.iter().any(|(_, name)| name.is_empty());
                    for (path, name) in tests {
                        let last = name.rsplit("::").next().unwrap_or("");
                        if !whole_file && !last.is_empty() && !filters.contains(&last.to_string()) {
                            filters.push(last.to_string());
                        }
                        // A file's target once, however many of its tests run.
                        if planned.contains(&path.as_str()) {
                            continue;
                        }
                        planned.push(path);
                        let before = args.len();
                        cargo_target(&mut targets, path, &mut args, &mut Vec::new());
                        // A file's integration test target, or the library's unit tests.
                        let integration = path.trim_start_matches("./").starts_with("tests/");
                        if args.len() == before && !integration && !args.contains(&s("--lib")) {
                            args.push(s("--lib"));
                        }
                    }
                    args.dedup();
                }
            }
            if !filters.is_empty() {
                args.push(s("--"));
                args.extend(filters);
            }
            Plan { program: s("cargo"), args, report_opt: None }
        }
        Runner::Pytest { python } => {
            let mut args =
                // `-v`: a line per test as it ends (and its id as it starts), so a run cut at
                // the time limit still says what passed, what failed and what hung.
                vec![s("-m"), s("pytest"), s("-rA"), s("-v"), s("-p"), s("no:cacheprovider"), s("--color=no")];
            match selection {
                Selection::All => {}
                Selection::Target(target) => args.push(operand(target)),
                Selection::Tests(tests) => {
                    for (path, name) in tests {
                        let path = &operand(path);
                        let id =
                            if name.is_empty() { path.clone() } else { format!("{path}::{}", name.replace('.', "::")) };
                        if !args.contains(&id) && !args.contains(path) {
                            args.push(id);
                        }
                    }
                }
            }
            Plan { program: python.clone(), args, report_opt: None }
        }
        Runner::Vitest { bin } | Runner::Jest { bin } => {
            let report = report_dir.join("report.json");
            let mut args = match runner {
                Runner::Vitest { .. } => {
                    vec![s("run"), s("--reporter=json"), format!("--outputFile={}", report.display())]
                }
                _ => vec![s("--ci"), s("--json"), format!("--outputFile={}", report.display())],
            };
            match selection {
                Selection::All => {}
                Selection::Target(target) => args.push(operand(target)),
                Selection::Tests(tests) => {
                    for (path, _) in tests {
                        let path = operand(path);
                        if !args.contains(&path) {
                            args.push(path);
                        }
                    }
                }
            }
            Plan { program: bin.clone(), args, report_opt: Some(report) }
        }
        Runner::Go => {
            let mut args = vec![s("test"), s("-json")];
            let mut packages: Vec<String> = Vec::new();
            let mut names: Vec<String> = Vec::new();
            let package_of = |path: &str| -> String {
                let p = Path::new(path);
                let dir = if path.ends_with(".go") { p.parent().unwrap_or(Path::new("")) } else { p };
                let dir = dir.to_string_lossy().trim_end_matches('/').to_string();
                if dir.is_empty() || dir == "." {
                    s("./")
                } else {
                    format!("./{dir}/")
                }
            };
            match selection {
                Selection::All => packages.push(s("./...")),
                Selection::Target(target) => packages.push(package_of(target)),
                Selection::Tests(tests) => {
                    for (path, name) in tests {
                        let package = package_of(path);
                        if !packages.contains(&package) {
                            packages.push(package);
                        }
                        let last = name.rsplit('.').next().unwrap_or("");
                        if !last.is_empty() && !names.contains(&last.to_string()) {
                            names.push(last.to_string());
                        }
                    }
                }
            }
            if !names.is_empty() {
                args.push(s("-run"));
                args.push(format!("^({})$", names.join("|")));
            }
            args.extend(packages);
            Plan { program: s("go"), args, report_opt: None }
        }
    };
    Ok(plan)
}

/// A path as a runner's operand: one that starts with `-` (a file named `--co`) would be
/// read as an option, so it is written `./--co`, the same file.
fn operand(path: &str) -> String {
    if path.starts_with('-') {
        format!("./{path}")
    } else {
        path.to_string()
    }
}

/// Cargo's selection for a file or folder: an integration test target for `tests/x.rs`,
/// all of them for `tests/`, else the library's tests under that module's path.
fn cargo_target(targets: &mut TestTargets, target: &str, args: &mut Vec<String>, filters: &mut Vec<String>) {
    let target = target.trim_start_matches("./").trim_end_matches('/');
    if target.starts_with("tests/") {
        let Some(name) = targets.of(target) else {
            // A module no target's file is known to declare: every integration test target.
            if !args.iter().any(|a| a == "--tests") {
                args.push("--tests".into());
            }
            return;
        };
        let option = if name.starts_with('-') {
            // One argument: a name that starts with `-` stays the option's value.
            vec![format!("--test={name}")]
        } else {
            vec!["--test".to_string(), name]
        };
        // Once, however many of its files hold the tests (pulldown-cmark's `tests/suite/*.rs`).
        if !args.windows(option.len()).any(|w| w == option.as_slice()) {
            args.extend(option);
        }
    } else if target == "tests" {
        args.push("--tests".into());
    } else if let Some(rest) = target.strip_prefix("src/") {
        let module = rest.trim_end_matches(".rs").trim_end_matches("/mod");
        if !matches!(module, "lib" | "main" | "") {
            filters.push(format!("{}::", module.replace('/', "::")));
        }
        // Once, however many of the library's files hold tests (cargo refuses it twice).
        if !args.iter().any(|a| a == "--lib") {
            args.push("--lib".into());
        }
    }
}

/// The integration test targets of the crate at `root`, by cargo's rules: a `[[test]]` of the
/// manifest by its `name`; `tests/x.rs` is `x`, and `tests/x/main.rs` too. A file of a folder
/// without a `main.rs` is a module of the target whose file declares the folder (`tests/lib.rs`'
/// `mod suite;`, pulldown-cmark's `[[test]] name = "lib"`). Read once per plan: the manifest
/// when made, each folder's declaring file when first asked.
struct TestTargets<'a> {
    root: &'a Path,
    /// `[[test]]`s' names and paths.
    declared: Vec<(String, String)>,
    /// The target each folder's files belong to, as found.
    folders: HashMap<String, Option<String>>,
}

impl<'a> TestTargets<'a> {
    fn read(root: &'a Path) -> Self {
        let declared = std::fs::read_to_string(root.join("Cargo.toml"))
            .ok()
            .and_then(|text| text.parse::<toml::Table>().ok())
            .and_then(|manifest| manifest.get("test").and_then(|t| t.as_array()).cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|t| {
                let name = t.get("name")?.as_str()?.to_string();
                let path =
                    t.get("path").and_then(|p| p.as_str()).map_or_else(|| format!("tests/{name}.rs"), str::to_string);
                Some((name, path.trim_start_matches("./").to_string()))
            })
            .collect();
        TestTargets { root, declared, folders: HashMap::new() }
    }

    /// The target named for `file` by the manifest, else `default`.
    fn named(&self, file: &str, default: &str) -> String {
        self.declared.iter().find(|(_, p)| p == file).map_or_else(|| default.to_string(), |(n, _)| n.clone())
    }

    /// The target that builds `path` (under `tests/`); `None` for a folder's file no target's
    /// file is found to declare.
    fn of(&mut self, path: &str) -> Option<String> {
        let rest = path.strip_prefix("tests/")?;
        let Some((folder, _)) = rest.split_once('/') else {
            return Some(self.named(path, rest.trim_end_matches(".rs")));
        };
        if let Some(found) = self.folders.get(folder) {
            return found.clone();
        }
        let found = self.of_folder(folder);
        self.folders.insert(folder.to_string(), found.clone());
        found
    }

    fn of_folder(&self, folder: &str) -> Option<String> {
        let main = format!("tests/{folder}/main.rs");
        if self.root.join(&main).is_file() {
            return Some(self.named(&main, folder));
        }
        // The target whose file says `mod folder;` (a test file small enough to read).
        let declares = |file: &Path| {
            std::fs::read_to_string(file).is_ok_and(|text| {
                text.lines().any(|l| {
                    let l = l.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
                    l.strip_prefix("mod ").is_some_and(|m| m.trim_end().trim_end_matches(';').trim() == folder)
                })
            })
        };
        let mut files: Vec<String> = self.declared.iter().map(|(_, p)| p.clone()).collect();
        if let Ok(entries) = std::fs::read_dir(self.root.join("tests")) {
            let mut own: Vec<String> = entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| n.ends_with(".rs"))
                .map(|n| format!("tests/{n}"))
                .collect();
            own.sort();
            files.extend(own);
        }
        let file = files.into_iter().find(|f| declares(&self.root.join(f)))?;
        let stem = file.trim_start_matches("tests/").trim_end_matches(".rs").to_string();
        Some(self.named(&file, &stem))
    }
}

/// Output kept from a run: the head up to the cap, then only a rolling tail; and of what
/// falls out of the tail, the lines that carry results (`parse::carries_result`), so a flood
/// of output between them does not lose the counts.
struct Capture {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    cap: usize,
    total: u64,
    /// The line being dropped from the tail's front, and the result lines kept of those.
    dropping: Vec<u8>,
    kept: Vec<u8>,
    keep: fn(&str) -> bool,
}

/// At most this much of the result lines a run drops from its output is kept.
const MAX_KEPT_BYTES: usize = 8 * 1024 * 1024;

impl Capture {
    fn new(cap: usize, keep: fn(&str) -> bool) -> Self {
        Capture {
            head: Vec::new(),
            tail: Default::default(),
            cap,
            total: 0,
            dropping: Vec::new(),
            kept: Vec::new(),
            keep,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let all_in_head = self.total == self.head.len() as u64;
        self.total += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.head.len());
        let (head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(head);
        if all_in_head && !rest.is_empty() {
            // The head just filled: its unfinished last line goes on with the bytes after it.
            self.dropping.extend_from_slice(&self.head[self.head_lines()..]);
        }
        for &b in rest {
            if self.tail.len() == TAIL_BYTES {
                if let Some(dropped) = self.tail.pop_front() {
                    self.drop_byte(dropped);
                }
            }
            self.tail.push_back(b);
        }
    }

    fn drop_byte(&mut self, b: u8) {
        self.dropping.push(b);
        if b == b'\n' {
            let line = String::from_utf8_lossy(&self.dropping);
            if self.kept.len() + self.dropping.len() <= MAX_KEPT_BYTES && (self.keep)(&line) {
                self.kept.extend_from_slice(&self.dropping);
            }
            self.dropping.clear();
        }
    }

    /// The length of the head's whole lines.
    fn head_lines(&self) -> usize {
        self.head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
    }

    fn dropped(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    fn tail_text(&self) -> String {
        String::from_utf8_lossy(&self.tail.iter().copied().collect::<Vec<u8>>()).into_owned()
    }

    /// What a reader sees: the head, a line saying how much was dropped, the tail.
    fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if !self.tail.is_empty() {
            if self.dropped() > 0 {
                out.push_str(&format!("\n[… {} bytes of output dropped …]\n", self.dropped()));
            }
            out.push_str(&self.tail_text());
        }
        out
    }

    /// What the results are read from: the head, the result lines dropped, the tail. Once the
    /// head is full its unfinished last line is read as one with the bytes that went on.
    fn results_text(&self) -> String {
        if self.total == self.head.len() as u64 {
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        let mut out = String::from_utf8_lossy(&self.head[..self.head_lines()]).into_owned();
        out.push_str(&String::from_utf8_lossy(&self.kept));
        if self.dropped() == 0 {
            // Nothing dropped: the unfinished line is still whole, head and tail.
            out.push_str(&String::from_utf8_lossy(&self.head[self.head_lines()..]));
        } else {
            out.push('\n');
        }
        out.push_str(&self.tail_text());
        out
    }
}

/// Runs `plan` in `root`: at most `timeout`, output capped at `max_output` bytes.
pub fn run(
    runner: &Runner,
    plan: &Plan,
    root: &Path,
    timeout: Duration,
    max_output: usize,
) -> Result<RunTestsResponse> {
    let first = run_once(runner, plan, root, timeout, max_output)?;
    // pytest stops the whole run, before any test, when one id of the selection names nothing
    // it collects (a class it does not collect, a module skipped as it loads:
    // `pytest.importorskip("numpy")`): the others run again without those, said in `note`.
    if !matches!(runner, Runner::Pytest { .. }) || first.exit_code != Some(4) {
        return Ok(first);
    }
    let unfound = pytest_unfound(&first.output_tail, root);
    // The selection follows the options (`plan`).
    let options = plan.args.iter().position(|a| a == "--color=no").map_or(plan.args.len(), |i| i + 1);
    let (fixed, ids) = plan.args.split_at(options);
    let kept: Vec<String> = ids.iter().filter(|id| !unfound.contains(id)).cloned().collect();
    if kept.is_empty() || kept.len() == ids.len() {
        return Ok(first);
    }
    let left = timeout.saturating_sub(Duration::from_millis(first.duration_ms));
    let again = Plan { args: fixed.iter().cloned().chain(kept).collect(), ..plan.clone() };
    let mut second = run_once(runner, &again, root, left, max_output)?;
    let shown: Vec<&str> = unfound.iter().take(3).map(String::as_str).collect();
    let more =
        if unfound.len() > shown.len() { format!(" and {} more", unfound.len() - shown.len()) } else { String::new() };
    let note = format!(
        "pytest found {} of the selected tests nowhere ({}{more}) and ran none; the others ran again without them",
        unfound.len(),
        shown.join(", ")
    );
    second.note = [note, second.note].into_iter().filter(|n| !n.is_empty()).collect::<Vec<_>>().join("; ");
    second.duration_ms += first.duration_ms;
    Ok(second)
}

/// The ids of a pytest run's selection that it said it could not find (`ERROR: not found:
/// <root>/<id>`, `ERROR: found no collectors for <root>/<id>`), as the selection wrote them
/// (relative to `root`).
fn pytest_unfound(output: &str, root: &Path) -> Vec<String> {
    let prefix = format!("{}/", root.display());
    let mut out: Vec<String> = Vec::new();
    for line in output.lines() {
        let id = ["ERROR: not found: ", "ERROR: found no collectors for ", "ERROR: file or directory not found: "]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix));
        let Some(id) = id else { continue };
        let id = id.trim();
        let id = id.strip_prefix(prefix.as_str()).unwrap_or(id).to_string();
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// One run of `plan`, bounded in time and output.
fn run_once(
    runner: &Runner,
    plan: &Plan,
    root: &Path,
    timeout: Duration,
    max_output: usize,
) -> Result<RunTestsResponse> {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let mut command = Command::new(&plan.program);
    command
        .args(&plan.args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Plain output, and no runner waiting for a key press.
        .env("NO_COLOR", "1")
        .env("CARGO_TERM_COLOR", "never")
        .env("FORCE_COLOR", "0")
        .env("CI", "true")
        // Its own process group: the whole tree is killed at the time limit.
        .process_group(0);
    let mut child = command.spawn().map_err(|err| {
        DocdexError::invalid(format!("cannot start {}: {err}", plan.program)).with_hint(format!(
            "install {} (the {} runner) or put it on the daemon's PATH",
            plan.program,
            runner.name()
        ))
    })?;
    // Shutdown kills the group too (`kill_tracked_groups`), and the run answers at once.
    let _tracked = crate::runner::process::track_group(child.id());
    // Each stream apart: interleaved, a runner's stderr could land inside one of its stdout
    // lines (`test x ... errorFAILED`) and hide the result.
    let captures: Vec<Arc<Mutex<Capture>>> =
        (0..2).map(|_| Arc::new(Mutex::new(Capture::new(max_output, parse::carries_result(runner))))).collect();
    let readers: Vec<_> = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .zip(&captures)
    .filter_map(|(stream, capture)| stream.map(|s| (s, Arc::clone(capture))))
    .map(|(mut stream, capture)| {
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut c) = capture.lock() {
                    c.push(&buf[..n]);
                }
            }
        })
    })
    .collect();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait()? {
            Some(status) => break status,
            None if started.elapsed() >= timeout => {
                timed_out = true;
                kill_group(child.id());
                break child.wait()?;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    // Whatever the runner left running in its group goes too (a test's server, a worker),
    // and is reaped: orphans come back to the daemon (a subreaper), not to init.
    kill_group(child.id());
    reap_group(child.id(), Duration::from_secs(2));
    for reader in readers {
        let _ = reader.join();
    }
    // What the runner printed, then what it said on stderr (cargo's build and summary).
    let joined = |texts: Vec<String>| match texts[1].trim().is_empty() {
        true => texts[0].clone(),
        false if texts[0].is_empty() => texts[1].clone(),
        false => format!("{}\n{}", texts[0].trim_end_matches('\n'), texts[1]),
    };
    let output = joined(captures.iter().map(|c| c.lock().map(|c| c.text()).unwrap_or_default()).collect());
    let results = joined(captures.iter().map(|c| c.lock().map(|c| c.results_text()).unwrap_or_default()).collect());
    let truncated =
        captures.iter().any(|c| c.lock().is_ok_and(|c| c.total > c.head.len() as u64 + c.tail.len() as u64));
    let report = plan.report_opt.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
    let parsed = parse::results(runner, &results, report.as_deref());
    let tail_start = output.len().saturating_sub(TAIL_BYTES);
    let tail_start = (tail_start..output.len()).find(|&i| output.is_char_boundary(i)).unwrap_or(output.len());
    let exit_code = if timed_out { None } else { status.code() };
    let mut failures: Vec<TestFailure> =
        parsed.failures.into_iter().map(|(name, message)| TestFailure { name, message }).collect();
    let mut failed = parsed.failed;
    let mut note = String::new();
    // A runner that stops before reporting any test (a build error, a test file it cannot
    // find) failed the run: zero failures would read as a pass.
    let reported = parsed.passed + parsed.failed + parsed.skipped > 0 || !failures.is_empty();
    match exit_code {
        // pytest's "no tests collected".
        Some(5) if matches!(runner, Runner::Pytest { .. }) && !reported => {
            note = "pytest collected no test from the selection: nothing ran".to_string();
        }
        Some(code) if code != 0 && !reported => {
            failed += 1;
            failures.push(TestFailure {
                name: format!("{} (the run)", runner.name()),
                message: format!("exited with code {code} before reporting any test: {}", last_lines(&output, 3)),
            });
        }
        _ => {}
    }
    Ok(RunTestsResponse {
        runner: runner.name().to_string(),
        command: plan.display(),
        passed: parsed.passed,
        failed,
        skipped: parsed.skipped,
        failures,
        duration_ms: started.elapsed().as_millis() as u64,
        timed_out,
        exit_code,
        output_tail: output[tail_start..].to_string(),
        output_truncated: truncated,
        note,
    })
}

/// The last `n` non-empty lines of `output`, joined with " | " (an error's gist).
fn last_lines(output: &str, n: usize) -> String {
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests;
