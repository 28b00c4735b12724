//! Change impact and run-tests on fixture repos with real tests in Rust, Python, TypeScript
//! and Go (tests/fixtures/impact): a change lists the tests that reach it directly and
//! through one function and not the others, renames and deletions are reported, and each
//! runner runs, fails, hangs and floods as it would for a user.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

use crate::common::{Home, Server};

/// A copy of a fixture repo in a temp dir, committed with git.
pub(crate) fn fixture_repo(lang: &str) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/impact").join(lang);
    copy_dir(&from, dir.path());
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "init"]);
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

pub(crate) fn edit(repo: &Path, path: &str, from: &str, to: &str) {
    let file = repo.join(path);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(from), "{path} has no `{from}`");
    std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
}

fn impact(home: &Home, repo: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["impact", "--repo", repo.to_str().unwrap(), "--json"];
    args.extend(extra);
    if !extra.contains(&"--staged") && !extra.iter().any(|a| a.starts_with("--diff")) {
        args.push("--diff");
    }
    home.json(&args)
}

fn names(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// The Python with pytest (scripts/test.sh puts it in target/py) as the repo's `.venv`, and
/// vitest (scripts/test.sh installs it in target/vitest) as its `node_modules`.
fn link_tools(repo: &Path, lang: &str) {
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let (link, to) = match lang {
        "python" => (".venv", target.join("py")),
        "ts" => ("node_modules", target.join("vitest/node_modules")),
        _ => return,
    };
    assert!(to.exists(), "{} is missing: run ./scripts/test.sh", to.display());
    std::os::unix::fs::symlink(to, repo.join(link)).unwrap();
    // Not part of any change.
    std::fs::write(repo.join(".git/info/exclude"), format!("{link}\n")).unwrap();
}

/// One fixture's change: the discount's body edited.
struct Case {
    lang: &'static str,
    file: &'static str,
    from: &'static str,
    to: &'static str,
    /// A test calling the changed function.
    direct: &'static str,
    /// A test calling it through one function (the cart's total).
    through: &'static str,
    /// Tests that do not reach it.
    unrelated: &'static [&'static str],
}

const CASES: [Case; 4] = [
    Case {
        lang: "rust",
        file: "src/pricing.rs",
        from: "total / 10",
        to: "total / 20",
        direct: "tests::discount_applies_over_100",
        through: "total_subtracts_the_discount",
        unrelated: &["tax_is_a_fifth", "count_counts_items"],
    },
    Case {
        lang: "python",
        file: "shop/pricing.py",
        from: "total // 10",
        to: "total // 20",
        direct: "test_discount_applies_over_100",
        through: "test_total_subtracts_the_discount",
        unrelated: &["test_tax_is_a_fifth", "test_count_counts_items"],
    },
    Case {
        lang: "ts",
        file: "src/pricing.ts",
        from: "total / 10",
        to: "total / 20",
        direct: "applies the discount over 100",
        through: "total subtracts the discount",
        unrelated: &["tax is a fifth"],
    },
    Case {
        lang: "go",
        file: "pricing/pricing.go",
        from: "total / 10",
        to: "total / 20",
        direct: "TestDiscountAppliesOver100",
        through: "TestTotalSubtractsTheDiscount",
        unrelated: &["TestTaxIsAFifth", "TestCountCountsItems"],
    },
];

#[test]
fn a_change_lists_the_tests_that_reach_it_in_four_languages() {
    let home = Home::new();
    for Case { lang, file, from, to, direct, through, unrelated } in CASES {
        let repo = fixture_repo(lang);
        home.index(repo.path());
        // Nothing changed: nothing to say.
        let clean = impact(&home, repo.path(), &[]);
        assert_eq!(clean["changed_files"], serde_json::json!([]), "{lang}: {clean}");
        edit(repo.path(), file, from, to);
        let r = impact(&home, repo.path(), &[]);
        assert_eq!(r["changed_files"], serde_json::json!([file]), "{lang}: {r}");
        let changed = &r["changed_symbols"][0];
        assert_eq!(
            (changed["name"].as_str().unwrap().to_lowercase(), changed["change"].as_str()),
            ("discount".to_string(), Some("modified")),
            "{lang}: {r}"
        );
        assert_eq!(changed["path"], file);
        // The caller in the cart is a dependent at depth 1, with the path back to the change.
        let cart = r["dependents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"].as_str().unwrap().eq_ignore_ascii_case("total"));
        let cart = cart.unwrap_or_else(|| panic!("{lang}: no Cart total among the dependents: {r}"));
        assert_eq!(cart["depth"], 1, "{lang}: {cart}");
        assert!(cart["via"][0].as_str().unwrap().eq_ignore_ascii_case("discount"), "{lang}: {cart}");
        let tests = names(&r["tests"]);
        assert!(tests.iter().any(|t| t == direct), "{lang}: the direct test is missing: {tests:?}");
        let via = r["tests"].as_array().unwrap().iter().find(|t| t["name"] == through);
        let via = via.unwrap_or_else(|| panic!("{lang}: the test through Cart's total is missing: {tests:?}"));
        assert_eq!(via["depth"], 2, "{lang}: {via}");
        for name in unrelated {
            assert!(!tests.iter().any(|t| t == name), "{lang}: {name} does not reach the change: {tests:?}");
        }
        // Surest first.
        let confidences: Vec<f64> =
            r["tests"].as_array().unwrap().iter().map(|t| t["confidence"].as_f64().unwrap()).collect();
        assert!(confidences.windows(2).all(|w| w[0] >= w[1]), "{lang}: {confidences:?}");
        // Every test's file, with how many of the tests it holds, even when the list of
        // tests is cut at the limit.
        let mut files: Vec<String> =
            r["tests"].as_array().unwrap().iter().map(|t| t["path"].as_str().unwrap().to_string()).collect();
        files.sort();
        files.dedup();
        let cut = impact(&home, repo.path(), &["--limit", "1"]);
        assert_eq!(cut["tests"].as_array().unwrap().len(), 1, "{lang}: {cut}");
        let mut listed: Vec<String> =
            cut["test_files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
        if files.len() > 1 {
            // At most `limit` files too: the surest one.
            assert_eq!(listed, vec![r["tests"][0]["path"].as_str().unwrap().to_string()], "{lang}: {cut}");
        }
        let whole = impact(&home, repo.path(), &["--limit", "1000"]);
        listed =
            whole["test_files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
        listed.sort();
        assert_eq!(listed, files, "{lang}: {whole}");
        let counted: u64 = whole["test_files"].as_array().unwrap().iter().map(|f| f["tests"].as_u64().unwrap()).sum();
        assert_eq!(counted, whole["tests_total"].as_u64().unwrap(), "{lang}: {whole}");
    }
}

/// Every JS test callback that calls the changed function is listed, not only the file's
/// first: `it(…)` callbacks are no definitions, and the walk meets the file once.
#[test]
fn each_js_test_callback_that_calls_a_change_is_listed() {
    let home = Home::new();
    let repo = fixture_repo("ts");
    crate::common::write(
        repo.path(),
        "test/more.test.ts",
        "import { expect, it, test } from \"vitest\";\nimport { discount, tax } from \"../src/pricing\";\n\nit(\"has none under 100\", () => {\n  expect(discount(50)).toBe(0);\n});\n\nit(\"taxes\", () => {\n  expect(tax(100)).toBe(20);\n});\n\ntest(\"has one over 100\", () => {\n  expect(discount(300)).toBe(30);\n});\n",
    );
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-qm", "more"]);
    home.index(repo.path());
    edit(repo.path(), "src/pricing.ts", "total / 10", "total / 20");
    let r = impact(&home, repo.path(), &[]);
    let listed: Vec<String> = r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["path"] == "test/more.test.ts")
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, vec!["has none under 100", "has one over 100"], "{r}");
    let file = r["test_files"].as_array().unwrap().iter().find(|f| f["path"] == "test/more.test.ts");
    assert_eq!(file.map(|f| f["tests"].as_u64()), Some(Some(2)), "{r}");
}

/// A test the change edits, or a test file it adds, is affected itself, at depth 0 and
/// confidence 1: an agent that edits a test runs that test (a JS `test(…)` callback named by
/// its title). The index has not read the edits yet: the answer waits for it to.
#[test]
fn an_edited_or_added_test_is_affected_itself() {
    let home = Home::new();
    let cases = [
        (
            "rust",
            "tests/tax.rs",
            "tax(100), 20",
            "tax(100), 20 + 0",
            "tax_is_a_fifth",
            "tests/added.rs",
            "#[test]\nfn added() {}\n",
        ),
        (
            "python",
            "tests/test_tax.py",
            "== 20",
            "== 20 + 0",
            "test_tax_is_a_fifth",
            "tests/test_added.py",
            "def test_added():\n    assert True\n",
        ),
        (
            "ts",
            "test/tax.test.ts",
            "toBe(20)",
            "toBe(20 + 0)",
            "tax is a fifth",
            "test/added.test.ts",
            "import { test } from \"vitest\";\n\ntest(\"added\", () => {});\n",
        ),
        (
            "go",
            "pricing/pricing_test.go",
            "Tax(100) != 20",
            "Tax(100) != 20+0",
            "TestTaxIsAFifth",
            "pricing/added_test.go",
            "package pricing\n\nimport \"testing\"\n\nfunc TestAdded(t *testing.T) {}\n",
        ),
    ];
    for (lang, file, from, to, test, added, added_text) in cases {
        let repo = fixture_repo(lang);
        home.index(repo.path());
        edit(repo.path(), file, from, to);
        crate::common::write(repo.path(), added, added_text);
        let r = impact(&home, repo.path(), &[]);
        let edited = r["tests"].as_array().unwrap().iter().find(|t| t["path"] == file && t["name"] == test);
        let edited = edited.unwrap_or_else(|| panic!("{lang}: the edited test is missing: {r}"));
        assert_eq!((edited["depth"].as_u64(), edited["confidence"].as_f64()), (Some(0), Some(1.0)), "{lang}: {r}");
        let paths: Vec<&str> = r["tests"].as_array().unwrap().iter().map(|t| t["path"].as_str().unwrap()).collect();
        assert!(paths.contains(&added), "{lang}: the added test file is missing: {r}");
        // Only once each.
        let listed = names(&r["tests"]);
        assert_eq!(listed.iter().filter(|n| *n == test).count(), 1, "{lang}: {listed:?}");
    }
    // A Rust test added beside the code it tests, in a source file's `mod tests`.
    let repo = fixture_repo("rust");
    home.index(repo.path());
    edit(repo.path(), "src/pricing.rs", "mod tests {\n", "mod tests {\n    #[test]\n    fn beside() {}\n\n");
    let r = impact(&home, repo.path(), &[]);
    let listed = names(&r["tests"]);
    assert!(listed.contains(&"tests::beside".to_string()), "{r}");
}

/// The index read a changed file while something wrote it (empty: `git checkout` and many
/// editors write a file in place), and the watcher has not read it again: the answer still
/// starts from the diff's definitions, because the index catches up with that file first.
#[test]
fn a_changed_file_the_index_caught_mid_write_is_read_again() {
    let home = Home::new();
    let repo = fixture_repo("rust");
    let path = repo.path().join("src/pricing.rs");
    let pricing = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, "").unwrap();
    home.index(repo.path());
    std::fs::write(&path, pricing).unwrap();
    edit(repo.path(), "src/pricing.rs", "total / 10", "total / 20");
    let r = impact(&home, repo.path(), &[]);
    assert_eq!(r["changed_symbols"][0]["name"], "discount", "{r}");
    let tests = names(&r["tests"]);
    assert!(tests.iter().any(|t| t == "tests::discount_applies_over_100"), "{tests:?}");
    assert!(tests.iter().any(|t| t == "total_subtracts_the_discount"), "{tests:?}");
    // The index now holds the file as it is: a search finds its code.
    let found = home.search(repo.path(), "discount");
    assert!(found.to_string().contains("src/pricing.rs"), "{found}");
    // So does a run of the affected tests: none picked would be a run that passes.
    let edited = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, "").unwrap();
    home.index(repo.path());
    std::fs::write(&path, edited).unwrap();
    let (_, run) = run_tests(&home, repo.path(), &["--affected"]);
    assert_eq!((run["runner"].as_str(), run["failed"].as_u64()), (Some("cargo"), Some(2)), "{run}");
}

/// `git checkout` deletes a file before it writes it again: an index run that looked in
/// between leaves the file out, and until the watcher reads it again a walk goes round it,
/// missing every test it leads to without a word. A diff asked meanwhile has the index read
/// such a file first (the watcher here waits ten minutes: only the request can do it).
#[test]
fn a_file_an_index_run_found_gone_for_a_moment_is_read_again_before_the_walk() {
    let home = Home::with_config("[watcher]\ndebounce_ms = 600000\nmax_delay_ms = 600000\n");
    let repo = fixture_repo("python");
    let repo_arg = repo.path().to_str().unwrap();
    let server = Server::start(&home, &["--repo", repo_arg]);
    let client = server.blocking_client();
    let changes_seen = || -> u64 {
        let repos: Value = client.get(server.url("/v1/repos")).send().unwrap().json().unwrap();
        repos.as_array().into_iter().flatten().filter_map(|r| r["changes_seen"].as_u64()).sum()
    };
    let cart = repo.path().join("shop/cart.py");
    let text = std::fs::read_to_string(&cart).unwrap();
    std::fs::remove_file(&cart).unwrap();
    let run =
        client.post(server.url(&format!("/v1/index?repo={repo_arg}"))).json(&serde_json::json!({})).send().unwrap();
    assert_eq!(run.status().as_u16(), 200);
    let seen = changes_seen();
    std::fs::write(&cart, text).unwrap();
    // The watcher's event for the file that came back, which tells the request about it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while changes_seen() == seen {
        assert!(std::time::Instant::now() < deadline, "the watcher never saw shop/cart.py come back");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    edit(repo.path(), "shop/pricing.py", "total // 10", "total // 20");
    let r: Value = client.get(server.url("/v1/impact/diff")).send().unwrap().json().unwrap();
    assert_eq!(r["changed_symbols"][0]["name"], "discount", "{r}");
    let files: Vec<&str> = r["tests"].as_array().unwrap().iter().filter_map(|t| t["path"].as_str()).collect();
    assert!(files.contains(&"tests/test_cart.py"), "through shop/cart.py: {r}");
    assert!(files.contains(&"tests/test_pricing.py"), "{r}");
}

/// Tests the default `cargo test` does not build call the changed function too, but run
/// nothing: one under `#[cfg(all(test, feature = "extra"))]`, one in a module declared under
/// `#[cfg(feature = "extra")]`, a file that opens with `#![cfg(feature = "quickcheck")]` and
/// a test target whose `required-features` are off (the fixture's `Cargo.toml`).
#[test]
fn a_test_cargo_does_not_build_is_not_listed() {
    let home = Home::new();
    let repo = fixture_repo("rust");
    home.index(repo.path());
    edit(repo.path(), "src/pricing.rs", "total / 10", "total / 20");
    let r = impact(&home, repo.path(), &["--limit", "1000"]);
    let tests = names(&r["tests"]);
    assert!(tests.iter().any(|t| t == "tests::discount_applies_over_100"), "{tests:?}");
    for gated in [
        "tests::discount_under_100_is_none",
        "tests::extra_discount_of_nothing",
        "quick_discount_never_exceeds_the_total",
        "slow_discount_of_a_large_total",
    ] {
        assert!(!tests.iter().any(|t| t == gated), "{gated} is not built: {tests:?}");
    }
    let files: Vec<&str> = r["test_files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    for gated in ["src/extra.rs", "tests/quick.rs", "tests/slow.rs"] {
        assert!(!files.contains(&gated), "{gated}: {files:?}");
    }
    // With the feature on by default, its tests are built and listed.
    let manifest = repo.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("default = []", "default = [\"extra\"]")).unwrap();
    let r = impact(&home, repo.path(), &["--limit", "1000"]);
    let tests = names(&r["tests"]);
    for built in
        ["tests::discount_under_100_is_none", "tests::extra_discount_of_nothing", "slow_discount_of_a_large_total"]
    {
        assert!(tests.iter().any(|t| t == built), "{built} is built now: {tests:?}");
    }
    assert!(!tests.iter().any(|t| t == "quick_discount_never_exceeds_the_total"), "{tests:?}");
}

/// A Go test file under `//go:build integration` is built by `go test -tags integration`
/// only: `go test` does not run it.
#[test]
fn a_go_test_file_behind_a_build_tag_is_not_listed() {
    let home = Home::new();
    let repo = fixture_repo("go");
    home.index(repo.path());
    edit(repo.path(), "pricing/pricing.go", "total / 10", "total / 20");
    let r = impact(&home, repo.path(), &["--limit", "1000"]);
    let tests = names(&r["tests"]);
    assert!(tests.iter().any(|t| t == "TestDiscountAppliesOver100"), "{tests:?}");
    assert!(!tests.iter().any(|t| t == "TestDiscountOfALargeTotal"), "{tests:?}");
}

#[test]
fn renames_deletions_staged_changes_and_bad_input() {
    let home = Home::new();
    let repo = fixture_repo("python");
    home.index(repo.path());
    edit(repo.path(), "shop/pricing.py", "def tax(total):", "def levy(total):");
    edit(repo.path(), "shop/cart.py", "    def count(self):\n        return len(self.items)\n", "");
    let r = impact(&home, repo.path(), &[]);
    let changed: Vec<(String, String, String)> = r["changed_symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["qualified_name"].as_str().unwrap().into(),
                s["change"].as_str().unwrap().into(),
                s["old_name"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(changed.contains(&("levy".into(), "renamed".into(), "tax".into())), "{changed:?}");
    assert!(changed.contains(&("Cart.count".into(), "deleted".into(), "".into())), "{changed:?}");
    // The tests that still name what is gone are the ones to run.
    let tests = names(&r["tests"]);
    assert!(tests.contains(&"test_tax_is_a_fifth".to_string()), "{tests:?}");
    assert!(tests.contains(&"test_count_counts_items".to_string()), "{tests:?}");
    assert!(!tests.contains(&"test_discount_applies_over_100".to_string()), "{tests:?}");

    // Staged: only what is in the index.
    git(repo.path(), &["add", "shop/pricing.py"]);
    let staged = impact(&home, repo.path(), &["--staged"]);
    assert_eq!(staged["changed_files"], serde_json::json!(["shop/pricing.py"]), "{staged}");
    assert_eq!(staged["base"], "staged");
    // `--diff --staged` is the same staged diff (the form the interface writes).
    let both = impact(&home, repo.path(), &["--diff", "--staged"]);
    assert_eq!((&both["changed_files"], &both["base"]), (&staged["changed_files"], &staged["base"]), "{both}");
    // Against an older revision: a commit, then the working tree against HEAD~1.
    git(repo.path(), &["commit", "-qm", "rename"]);
    let since = impact(&home, repo.path(), &["--diff", "HEAD~1"]);
    assert_eq!(since["changed_files"], serde_json::json!(["shop/cart.py", "shop/pricing.py"]), "{since}");
    // A new, untracked file is part of the working tree's change.
    crate::common::write(repo.path(), "shop/fees.py", "def fee(total):\n    return 1\n");
    let added = impact(&home, repo.path(), &[]);
    let fee = added["changed_symbols"].as_array().unwrap().iter().find(|s| s["name"] == "fee").cloned();
    assert_eq!(fee.map(|s| s["change"].clone()), Some(Value::from("added")), "{added}");

    // Clear errors: a revision git does not know, one that reads as an option, no git.
    let repo_arg = repo.path().to_str().unwrap();
    for (args, said) in [
        (vec!["--diff", "no-such-branch"], "does not know the revision"),
        (vec!["--diff=--output=/tmp/x"], "is not a revision"),
    ] {
        let mut all = vec!["impact", "--repo", repo_arg];
        all.extend(args);
        let out = home.run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(said), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let plain = crate::common::repo_with(&[("a.py", "def f():\n    return 1\n")]);
    home.index(plain.path());
    let out = home.run(&["impact", "--repo", plain.path().to_str().unwrap(), "--diff"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not inside a git work tree"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run_tests(home: &Home, repo: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["run-tests", "--repo", repo.to_str().unwrap(), "--json"];
    args.extend(extra);
    let out = home.run(&args);
    let code = out.status.code().unwrap_or(-1);
    let value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!("{args:?}: {} {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    (code, value)
}

/// Processes whose command line names `dir` (what a killed run must not leave behind).
fn processes_in(dir: &Path) -> Vec<String> {
    let out = Command::new("ps").args(["-eo", "pid,args"]).output().unwrap();
    let me = std::process::id().to_string();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(dir.to_str().unwrap()) && !l.trim_start().starts_with(&me) && !l.contains(" ps "))
        .map(str::to_string)
        .collect()
}

#[test]
fn each_runner_runs_all_a_target_or_the_affected_tests() {
    let home = Home::new();
    // (language, runner, tests in all, the target and its tests)
    let cases = [
        ("rust", "cargo", 4, "tests/cart.rs", 2),
        ("python", "pytest", 4, "tests/test_cart.py", 2),
        ("ts", "vitest", 3, "test/cart.test.ts", 1),
        ("go", "go", 4, "cart", 2),
    ];
    for (lang, runner, all, target, in_target) in cases {
        let repo = fixture_repo(lang);
        link_tools(repo.path(), lang);
        home.index(repo.path());
        let (code, r) = run_tests(&home, repo.path(), &[]);
        assert_eq!(
            (code, r["runner"].as_str(), r["passed"].as_u64(), r["failed"].as_u64()),
            (0, Some(runner), Some(all), Some(0)),
            "{lang}: {r}"
        );
        assert_eq!(r["timed_out"], false);
        let (_, r) = run_tests(&home, repo.path(), &["--target", target]);
        assert_eq!(r["passed"].as_u64(), Some(in_target), "{lang} --target {target}: {r}");
        // Affected with nothing changed: nothing runs, and it says why.
        let (code, r) = run_tests(&home, repo.path(), &["--affected"]);
        assert_eq!((code, r["command"].as_str()), (0, Some("")), "{lang}: {r}");
        assert!(r["note"].as_str().unwrap().contains("nothing changed"), "{lang}: {r}");
        // A change that breaks the discount: only the two tests that reach it run, and fail.
        let case = CASES.iter().find(|c| c.lang == lang).unwrap();
        edit(repo.path(), case.file, case.from, case.to);
        let (code, r) = run_tests(&home, repo.path(), &["--affected"]);
        assert_eq!(code, 1, "{lang}: {r}");
        assert_eq!(
            (r["failed"].as_u64(), r["passed"].as_u64()),
            (Some(2), Some(0)),
            "{lang}: only the two reaching tests run: {r}"
        );
        let failures = r["failures"].as_array().unwrap();
        assert_eq!(failures.len(), 2, "{lang}: {r}");
        assert!(
            failures.iter().all(|f| !f["message"].as_str().unwrap().is_empty()),
            "{lang}: each failure says why: {r}"
        );
    }
}

/// pytest stops a whole run before any test when one id of the selection names nothing it
/// collects: here a test module that skips itself as it loads (`pytest.importorskip`), whose
/// test reaches the change. The affected run still runs the other reaching tests, and says
/// which ids pytest found nowhere.
#[test]
fn an_affected_test_pytest_cannot_find_does_not_stop_the_others() {
    let home = Home::new();
    let repo = fixture_repo("python");
    link_tools(repo.path(), "python");
    crate::common::write(
        repo.path(),
        "tests/test_optional.py",
        "import pytest\n\npytest.importorskip(\"a_module_nobody_installed\")\n\nfrom shop.pricing import discount\n\n\
         \ndef test_optional_discount():\n    assert discount(200) == 20\n",
    );
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-qm", "an optional test"]);
    home.index(repo.path());
    let case = CASES.iter().find(|c| c.lang == "python").unwrap();
    edit(repo.path(), case.file, case.from, case.to);
    let (code, r) = run_tests(&home, repo.path(), &["--affected"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!((r["failed"].as_u64(), r["passed"].as_u64()), (Some(2), Some(0)), "the two reaching tests ran: {r}");
    let note = r["note"].as_str().unwrap();
    assert!(note.contains("found 1 of the selected tests nowhere"), "{r}");
    assert!(note.contains("tests/test_optional.py::test_optional_discount"), "{r}");
}

#[test]
fn a_hanging_run_is_killed_whole_a_flood_is_capped_and_no_runner_is_said() {
    let home = Home::with_config("[tests]\nmax_output_bytes = 65536\n");
    let repo = fixture_repo("python");
    link_tools(repo.path(), "python");
    home.index(repo.path());
    // A test that starts a child of its own and hangs: both must go at the limit.
    crate::common::write(
        repo.path(),
        "tests/test_hang.py",
        "import subprocess, time\n\ndef test_hangs():\n    subprocess.Popen(['sleep', '300'])\n    time.sleep(300)\n",
    );
    let started = std::time::Instant::now();
    let (code, r) = run_tests(&home, repo.path(), &["--target", "tests/test_hang.py", "--timeout-secs", "3"]);
    assert_eq!((code, r["timed_out"].as_bool()), (1, Some(true)), "{r}");
    assert!(started.elapsed().as_secs() < 60, "stopped at the limit");
    assert!(r["exit_code"].is_null(), "{r}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(processes_in(repo.path()), Vec::<String>::new(), "nothing of the run is left");
    // 8 MB of output: the result keeps a bounded tail and says the rest was dropped.
    crate::common::write(
        repo.path(),
        "tests/test_flood.py",
        "def test_floods():\n    print('x' * 8_000_000)\n    assert False\n",
    );
    let (code, r) = run_tests(&home, repo.path(), &["--target", "tests/test_flood.py"]);
    assert_eq!((code, r["failed"].as_u64()), (1, Some(1)), "{r}");
    assert_eq!(r["output_truncated"], true);
    assert!(r["output_tail"].as_str().unwrap().len() <= 8 * 1024, "the tail is bounded");
    assert!(r.to_string().len() < 200_000, "the whole result is bounded");
    // Beside a Cargo.toml, a Python test file is still pytest's.
    crate::common::write(repo.path(), "Cargo.toml", "[package]\nname = \"cart\"\nversion = \"0.1.0\"\n");
    let (code, r) = run_tests(&home, repo.path(), &["--target", "tests/test_cart.py"]);
    assert_eq!((code, r["runner"].as_str(), r["passed"].as_u64()), (0, Some("pytest"), Some(2)), "{r}");
    // A folder of Python files is pytest's too; one without tests says nothing ran (and the
    // CLI exits 1, as pytest does: nothing was shown to pass).
    let (code, r) = run_tests(&home, repo.path(), &["--target", "shop"]);
    assert_eq!((code, r["runner"].as_str(), r["failed"].as_u64()), (1, Some("pytest"), Some(0)), "{r}");
    assert!(r["note"].as_str().unwrap().contains("nothing ran"), "{r}");
    // A Rust file goes to cargo, which fails before any test (it does not compile): the run is
    // a failure that says why, not zero failures.
    crate::common::write(repo.path(), "tests/cart.rs", "#[test]\nfn adds() {\n    let n: u32 = \"two\";\n}\n");
    let (code, r) = run_tests(&home, repo.path(), &["--target", "tests/cart.rs"]);
    assert_eq!((code, r["runner"].as_str(), r["failed"].as_u64()), (1, Some("cargo"), Some(1)), "{r}");
    assert!(r["failures"][0]["message"].as_str().unwrap().contains("before reporting any test"), "{r}");
    // A target outside the repo, and a repo with no runner.
    for outside in ["../..", "/etc/passwd"] {
        let out = home.run(&["run-tests", "--repo", repo.path().to_str().unwrap(), "--target", outside]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a file or folder of this repo"));
    }
    // An absolute path inside the repo is its path from the root.
    let absolute = repo.path().canonicalize().unwrap().join("tests/cart.rs");
    let (_, r) = run_tests(&home, repo.path(), &["--target", absolute.to_str().unwrap()]);
    assert!(r["command"].as_str().unwrap().contains("--test cart"), "{r}");
    let plain = crate::common::repo_with(&[("notes.md", "# notes\n")]);
    home.index(plain.path());
    let out = home.run(&["run-tests", "--repo", plain.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no test runner found") && said.contains("[tests] commands"), "{said}");
}

#[test]
fn a_moved_module_lists_its_importers_and_their_tests() {
    let home = Home::new();
    for (lang, from, to, importer, tests) in [
        (
            "rust",
            "src/pricing.rs",
            "src/prices.rs",
            "src/cart.rs",
            ["tests::discount_applies_over_100", "tax_is_a_fifth", "total_subtracts_the_discount"],
        ),
        (
            "python",
            "shop/pricing.py",
            "shop/prices.py",
            "shop/cart.py",
            ["test_discount_applies_over_100", "test_tax_is_a_fifth", "test_total_subtracts_the_discount"],
        ),
        (
            "ts",
            "src/pricing.ts",
            "src/prices.ts",
            "src/cart.ts",
            ["applies the discount over 100", "tax is a fifth", "total subtracts the discount"],
        ),
    ] {
        // `git mv`, and a plain `mv` whose new file git does not know yet.
        for by_git in [true, false] {
            let repo = fixture_repo(lang);
            home.index(repo.path());
            if by_git {
                git(repo.path(), &["mv", from, to]);
            } else {
                std::fs::rename(repo.path().join(from), repo.path().join(to)).unwrap();
            }
            if lang == "rust" {
                edit(repo.path(), "src/lib.rs", "pub mod pricing;", "pub mod prices;");
            }
            // Before the index reads the move (its graph holds the old path), and after.
            for moment in ["before the index reads the move", "after"] {
                if moment == "after" {
                    home.index(repo.path());
                }
                let r = impact(&home, repo.path(), &[]);
                let moved = r["file_changes"].as_array().unwrap().iter().find(|f| f["path"] == to).unwrap();
                assert_eq!(
                    (moved["change"].as_str(), moved["old_path"].as_str()),
                    (Some("renamed"), Some(from)),
                    "{r}"
                );
                let paths: Vec<&str> =
                    r["dependents"].as_array().unwrap().iter().filter_map(|d| d["path"].as_str()).collect();
                assert!(paths.contains(&importer), "{lang} {moment} (by git: {by_git}): {paths:?}");
                // The module's own code moved with it: not broken.
                assert!(!paths.contains(&to) && !paths.contains(&from), "{lang} {moment}: {paths:?}");
                let listed = names(&r["tests"]);
                for test in tests {
                    assert!(listed.contains(&test.to_string()), "{lang} {moment}: {test} not in {listed:?}");
                }
                // Its own tests are named where the file now is.
                let test_paths: Vec<&str> =
                    r["tests"].as_array().unwrap().iter().filter_map(|t| t["path"].as_str()).collect();
                assert!(!test_paths.contains(&from), "{lang} {moment}: {test_paths:?}");
            }
        }
    }
    // A Go file moved within its package's folder keeps its importers' import path.
    let repo = fixture_repo("go");
    home.index(repo.path());
    git(repo.path(), &["mv", "pricing/pricing.go", "pricing/rates.go"]);
    let r = impact(&home, repo.path(), &[]);
    assert_eq!(r["file_changes"][0]["change"], "renamed", "{r}");
    assert_eq!(r["tests"], serde_json::json!([]), "{r}");
}

#[test]
fn impact_and_run_tests_over_http() {
    let home = Home::new();
    let repo = fixture_repo("rust");
    let repo_arg = repo.path().to_str().unwrap();
    home.index(repo.path());
    let server = Server::start(&home, &["--repo", repo_arg]);
    edit(repo.path(), "src/pricing.rs", "total / 10", "total / 20");
    let client = server.blocking_client();
    let r: Value = client.get(server.url("/v1/impact/diff?depth=2")).send().unwrap().json().unwrap();
    for key in ["changed_files", "changed_symbols", "dependents", "tests", "truncated"] {
        assert!(r.get(key).is_some(), "{key} missing: {r}");
    }
    assert_eq!(r["changed_symbols"][0]["name"], "discount", "{r}");
    for key in ["name", "kind", "path", "line", "change"] {
        assert!(r["changed_symbols"][0].get(key).is_some(), "{key}: {r}");
    }
    for key in ["name", "path", "line", "depth", "via", "confidence"] {
        assert!(r["dependents"][0].get(key).is_some(), "{key}: {r}");
    }
    for key in ["path", "name", "line", "confidence"] {
        assert!(r["tests"][0].get(key).is_some(), "{key}: {r}");
    }
    // A search given the diff: its code first, said to come from it.
    let found: Value = client.get(server.url("/v1/search?q=tax&diff=working")).send().unwrap().json().unwrap();
    let sources: Vec<(&str, &str)> = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["source"].as_str().unwrap(), h["path"].as_str().unwrap()))
        .collect();
    assert_eq!(sources.first(), Some(&("diff", "src/pricing.rs")), "{found}");
    assert!(sources.iter().skip_while(|(s, _)| *s == "diff").all(|(s, _)| *s != "diff"), "{sources:?}");
    // Once the index has read the edit (as the watcher would), the graph holds the edit and
    // the base is the facts it held before: the same answer.
    let indexed: Value =
        client.post(server.url("/v1/index")).json(&serde_json::json!({})).send().unwrap().json().unwrap();
    assert_eq!(indexed["files_indexed"], 1, "{indexed}");
    let again: Value = client.get(server.url("/v1/impact/diff?depth=2")).send().unwrap().json().unwrap();
    assert_eq!((&again["changed_symbols"], &again["tests"]), (&r["changed_symbols"], &r["tests"]), "{again}");
    let bad = client.get(server.url("/v1/impact/diff?bse=HEAD")).send().unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    assert!(bad.text().unwrap().contains("did you mean \\\"base\\\""));
    let body = serde_json::json!({ "repo": repo_arg, "affected": true, "timeout_secs": 300 });
    let r: Value = client.post(server.url("/v1/run-tests")).json(&body).send().unwrap().json().unwrap();
    assert_eq!((r["runner"].as_str(), r["failed"].as_u64()), (Some("cargo"), Some(2)), "{r}");
    for key in ["command", "passed", "skipped", "failures", "duration_ms", "timed_out", "output_tail"] {
        assert!(r.get(key).is_some(), "{key} missing: {r}");
    }
    let over =
        client.post(server.url("/v1/run-tests")).json(&serde_json::json!({ "timeout_secs": 100000 })).send().unwrap();
    assert_eq!(over.status().as_u16(), 400);
    // Without the token: refused before anything runs.
    let anonymous =
        reqwest::blocking::Client::new().post(server.url("/v1/run-tests")).json(&serde_json::json!({})).send().unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    drop(server);
    // A daemon without a token runs no tests at all: running them executes the repo's code.
    let open = Home::with_config("[server]\nrequire_token = false\n");
    let server = Server::start(&open, &["--repo", repo_arg]);
    let refused =
        reqwest::blocking::Client::new().post(server.url("/v1/run-tests")).json(&serde_json::json!({})).send().unwrap();
    assert_eq!(refused.status().as_u16(), 403);
    assert!(refused.text().unwrap().contains("runs without a token"));
}

/// Through the daemon: a hanging run killed at its limit leaves no zombie behind (its
/// orphans come back to the daemon, a subreaper), and a daemon stopped mid-run kills the run
/// and exits at once instead of waiting out the run's limit.
#[test]
fn a_daemon_reaps_what_a_run_leaves_and_a_stop_ends_the_run() {
    let home = Home::new();
    let repo = fixture_repo("python");
    link_tools(repo.path(), "python");
    crate::common::write(
        repo.path(),
        "tests/test_hang.py",
        "import subprocess, time\n\ndef test_hangs():\n    subprocess.Popen(['sleep', '301'])\n    time.sleep(301)\n",
    );
    let repo_arg = repo.path().to_str().unwrap();
    home.index(repo.path());
    let mut server = Server::start(&home, &["--repo", repo_arg]);
    let daemon = server.child.id().to_string();
    let client = server.blocking_client();
    let body = serde_json::json!({ "repo": repo_arg, "target": "tests/test_hang.py", "timeout_secs": 2 });
    let r: Value = client.post(server.url("/v1/run-tests")).json(&body).send().unwrap().json().unwrap();
    assert_eq!(r["timed_out"], true, "{r}");
    let children = Command::new("ps").args(["--ppid", &daemon, "-o", "stat=,args="]).output().unwrap();
    let children = String::from_utf8_lossy(&children.stdout).to_string();
    assert!(!children.lines().any(|l| l.trim_start().starts_with('Z')), "zombies left: {children}");
    assert_eq!(sleepers(), Vec::<String>::new(), "nothing of the run is left");
    // A run with a long limit, and the daemon told to stop while it hangs.
    let body = serde_json::json!({ "repo": repo_arg, "target": "tests/test_hang.py", "timeout_secs": 600 });
    let (url, token) = (server.url("/v1/run-tests"), server.token().map(str::to_string));
    let request = std::thread::spawn(move || {
        let mut post = reqwest::blocking::Client::new().post(url).json(&body);
        if let Some(token) = token {
            post = post.bearer_auth(token);
        }
        post.send().map(|r| r.status().as_u16())
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while sleepers().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the run did not start");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let stopped = std::time::Instant::now();
    // SAFETY: SIGTERM to the daemon this test started.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(stopped.elapsed().as_secs() < 20, "the stop waited for the run's limit");
    let _ = request.join();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(sleepers(), Vec::<String>::new(), "nothing of the run outlives the daemon");
}

/// The hanging test's own child (`sleep 301`, a duration no other test uses), alive.
fn sleepers() -> Vec<String> {
    let out = Command::new("ps").args(["-eo", "stat=,args="]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.ends_with("sleep 301") && !l.trim_start().starts_with('Z'))
        .map(str::to_string)
        .collect()
}

/// With room in the budget the map holds the API no other file of the repo uses (a library's
/// users call it, its tests do), and its files come most important first.
#[test]
fn the_repo_map_holds_the_unused_api_when_there_is_room_in_rank_order() {
    let home = Home::new();
    let repo = fixture_repo("rust");
    home.index(repo.path());
    let map = home.json(&["map", "--repo", repo.path().to_str().unwrap(), "--budget-tokens", "4000", "--json"]);
    let names: Vec<&str> = map["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["symbols"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()))
        .collect();
    assert!(names.contains(&"tax"), "`tax`, used by tests only, is not on the map: {map}");
    let ranks: Vec<f64> = map["files"].as_array().unwrap().iter().map(|f| f["rank"].as_f64().unwrap()).collect();
    assert!(ranks.windows(2).all(|w| w[0] >= w[1]), "{ranks:?}");
}

#[test]
fn the_repo_map_fits_its_budget_and_puts_core_types_first() {
    let home = Home::new();
    let tokio = crate::common::tokio_source();
    let repo_arg = tokio.to_str().unwrap();
    home.index(&tokio);
    for budget in [256usize, 1024, 4096] {
        let map = home.json(&["map", "--repo", repo_arg, "--budget-tokens", &budget.to_string(), "--json"]);
        let tokens = map["tokens"].as_u64().unwrap() as usize;
        assert!(tokens <= budget && tokens * 3 >= budget * 3 / 2, "budget {budget}: {tokens} tokens");
        // The map as text is what the budget bounds.
        let text: usize = map["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                f["path"].as_str().unwrap().len()
                    + 2
                    + f["symbols"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s["signature"].as_str().unwrap().len() + 8)
                        .sum::<usize>()
            })
            .sum();
        assert!(text <= budget * 3, "budget {budget}: {text} characters");
    }
    let map = home.json(&["map", "--repo", repo_arg, "--json"]);
    let first: Vec<&str> = map["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["symbols"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()))
        .take(25)
        .collect();
    for core in ["AsyncRead", "AsyncWrite", "ReadBuf", "JoinHandle"] {
        assert!(first.contains(&core), "{core} is not among the map's first definitions: {first:?}");
    }
    assert!(map["files"].as_array().unwrap().iter().all(|f| !f["path"].as_str().unwrap().starts_with("tests/")));
    // Focus: a file comes first; a question leads to its files; a name it has not is an error.
    let server = Server::start(&home, &["--repo", repo_arg]);
    let client = server.blocking_client();
    let focused: Value = client
        .get(server.url("/v1/repo-map?budget_tokens=300&focus=src/net/tcp/stream.rs"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(focused["files"][0]["path"], "src/net/tcp/stream.rs", "{focused}");
    assert!(focused["tokens"].as_u64().unwrap() <= 300);
    let asked: Value = client
        .get(server.url("/v1/repo-map?focus=how%20does%20a%20tcp%20listener%20accept%20connections"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(asked["files"][0]["path"].as_str().unwrap().starts_with("src/net/"), "{asked}");
    let unknown = client.get(server.url("/v1/repo-map?focus=NoSuchThingAnywhere")).send().unwrap();
    assert_eq!(unknown.status().as_u16(), 400);
    assert!(unknown.text().unwrap().contains("NoSuchThingAnywhere"));
}

/// The impact tools with the official MCP Python SDK (1.x and 2.x), over stdio and HTTP.
#[test]
fn the_impact_tools_pass_the_official_mcp_client() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/impact_client.py");
    let home = Home::new();
    let repo = fixture_repo("rust");
    home.index(repo.path());
    edit(repo.path(), "src/pricing.rs", "total / 10", "total / 20");
    let run = |python: &Path, args: &[&str], envs: &[(&str, &str)]| {
        let out = Command::new(python)
            .arg(&script)
            .args(args)
            .arg(repo.path())
            .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))))
            .envs(envs.iter().copied())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{} {args:?}: {stderr}", python.display());
        assert!(stderr.contains("all impact checks passed"), "{stderr}");
    };
    for python in crate::common::mcp_pythons() {
        run(&python, &["stdio", env!("CARGO_BIN_EXE_docdexd")], &[]);
    }
    let server = Server::start(&home, &[]);
    for python in crate::common::mcp_pythons() {
        run(&python, &["http", &server.url("/v1/mcp")], &[("DOCDEX_TEST_TOKEN", server.token().unwrap_or_default())]);
    }
}
