//! Unit tests of `runner`: each runner's arguments for a selection, which runner runs a
//! file, a run that stops before any test, pytest's unfound ids, the output capture.

use super::*;

#[test]
fn selections_become_each_runners_arguments() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let tests = Selection::Tests(vec![
        ("src/pricing.rs".into(), "tests::discount_applies".into()),
        ("tests/cart.rs".into(), "total_subtracts".into()),
    ]);
    let cargo = plan(&Runner::Cargo, &tests, dir, dir).unwrap();
    assert_eq!(cargo.display(), "cargo test --no-fail-fast --lib --test cart -- discount_applies total_subtracts");
    // Unit tests of two library files: `--lib` once (cargo refuses it twice). A file given
    // whole (a helper's or a test-writing macro's tests, named "") drops every filter,
    // which would apply to its target too.
    let two = Selection::Tests(vec![
        ("src/pricing.rs".into(), "tests::discount_applies".into()),
        ("tests/cart.rs".into(), "total_subtracts".into()),
        ("src/tax.rs".into(), "tests::tax_is_a_fifth".into()),
    ]);
    let cargo = plan(&Runner::Cargo, &two, dir, dir).unwrap();
    assert_eq!(
        cargo.display(),
        "cargo test --no-fail-fast --lib --test cart -- discount_applies total_subtracts tax_is_a_fifth"
    );
    let whole = Selection::Tests(vec![
        ("tests/cart.rs".into(), "total_subtracts".into()),
        ("tests/buf.rs".into(), String::new()),
    ]);
    let cargo = plan(&Runner::Cargo, &whole, dir, dir).unwrap();
    assert_eq!(cargo.display(), "cargo test --no-fail-fast --test cart --test buf");
    let file = plan(&Runner::Cargo, &Selection::Target("tests/cart.rs".into()), dir, dir).unwrap();
    assert_eq!(file.display(), "cargo test --no-fail-fast --test cart");
    // A suite that needs features off by default gets them; another runner never.
    let featured = plan(&Runner::Cargo, &Selection::Target("tests/cart.rs".into()), dir, dir).unwrap();
    let features = vec!["full".to_string(), "test-util".to_string()];
    assert_eq!(
        featured.with_cargo_features(&features).display(),
        "cargo test --features full,test-util --no-fail-fast --test cart"
    );
    let module = plan(&Runner::Cargo, &Selection::Target("src/shop/cart.rs".into()), dir, dir).unwrap();
    assert_eq!(module.display(), "cargo test --no-fail-fast --lib -- shop::cart::");
    let py = Selection::Tests(vec![
        ("tests/test_cart.py".into(), "TestCart.test_total".into()),
        ("tests/test_x.py".into(), String::new()),
    ]);
    let pytest = plan(&Runner::Pytest { python: "python3".into() }, &py, dir, dir).unwrap();
    assert!(pytest
        .args
        .ends_with(&["tests/test_cart.py::TestCart::test_total".to_string(), "tests/test_x.py".to_string()]));
    let go = Selection::Tests(vec![
        ("cart/cart_test.go".into(), "TestTotal".into()),
        ("cart/more_test.go".into(), "TestCount".into()),
    ]);
    assert_eq!(
        plan(&Runner::Go, &go, dir, dir).unwrap().display(),
        "go test -json -run '^(TestTotal|TestCount)$' ./cart/"
    );
    assert!(plan(&Runner::Custom("make test".into()), &py, dir, dir).is_err());
    // Two tests of one file: its target once.
    let same_file = Selection::Tests(vec![
        ("tests/cart.rs".into(), "total_subtracts".into()),
        ("tests/cart.rs".into(), "total_adds".into()),
    ]);
    assert_eq!(
        plan(&Runner::Cargo, &same_file, dir, dir).unwrap().display(),
        "cargo test --no-fail-fast --test cart -- total_subtracts total_adds"
    );
    // A file named like an option is passed as a path, never read as one.
    let odd = Selection::Target("--co".into());
    let pytest = plan(&Runner::Pytest { python: "python3".into() }, &odd, dir, dir).unwrap();
    assert_eq!(pytest.args.last().unwrap(), "./--co");
    let jest = plan(
        &Runner::Jest { bin: "jest".into() },
        &Selection::Tests(vec![("-x.test.js".into(), String::new())]),
        dir,
        dir,
    );
    assert_eq!(jest.unwrap().args.last().unwrap(), "./-x.test.js");
    let cargo = plan(&Runner::Cargo, &Selection::Target("tests/--co.rs".into()), dir, dir).unwrap();
    assert!(cargo.args.contains(&"--test=--co".to_string()), "{:?}", cargo.args);
}

#[test]
fn the_runner_is_the_one_of_the_files_to_run() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    std::fs::create_dir(repo.path().join("tests")).unwrap();
    std::fs::write(repo.path().join("tests/test_x.py"), "def test_x():\n    pass\n").unwrap();
    // Python test files at the root alone make a pytest project.
    let flat = tempfile::tempdir().unwrap();
    std::fs::write(flat.path().join("test_mod.py"), "def test_x():\n    pass\n").unwrap();
    assert!(matches!(detect(flat.path(), None, &[]).unwrap(), Runner::Pytest { .. }));
    // The whole suite: the repo's first runner.
    assert_eq!(detect(repo.path(), None, &[]).unwrap(), Runner::Cargo);
    // A Python file beside a Cargo.toml is pytest's; a Rust one cargo's.
    assert!(matches!(detect(repo.path(), None, &["tests/test_x.py"]).unwrap(), Runner::Pytest { .. }));
    assert_eq!(
        detect(repo.path(), None, &["tests/cart.rs", "tests/test_x.py", "tests/more.rs"]).unwrap(),
        Runner::Cargo
    );
    // A language without its project files falls back to what the repo has.
    assert_eq!(detect(repo.path(), None, &["cart_test.go"]).unwrap(), Runner::Cargo);
    assert!(runs(&Runner::Cargo, "tests/cart.rs") && !runs(&Runner::Cargo, "tests/test_x.py"));
    assert!(runs(&Runner::Cargo, "tests/"));
    // A folder is read for its files' language.
    assert_eq!(files_under(repo.path(), "tests", 10), ["tests/test_x.py"]);
    assert_eq!(files_under(repo.path(), "tests/test_x.py", 10), ["tests/test_x.py"]);
}

#[test]
fn a_run_that_fails_before_any_test_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Runner::Custom("echo 'error: no test target named x' >&2; exit 101".into());
    let planned = plan(&runner, &Selection::All, dir.path(), dir.path()).unwrap();
    let r = run(&runner, &planned, dir.path(), Duration::from_secs(30), 64 * 1024).unwrap();
    assert_eq!((r.exit_code, r.passed, r.failed), (Some(101), 0, 1));
    assert!(r.failures[0].message.contains("exited with code 101"), "{:?}", r.failures);
    assert!(r.failures[0].message.contains("no test target named x"), "{:?}", r.failures);
    // A clean exit that reports nothing is no failure.
    let quiet = Runner::Custom("true".into());
    let planned = plan(&quiet, &Selection::All, dir.path(), dir.path()).unwrap();
    let r = run(&quiet, &planned, dir.path(), Duration::from_secs(30), 64 * 1024).unwrap();
    assert_eq!((r.exit_code, r.failed), (Some(0), 0));
}

/// A file under `tests/` is run by the target that builds it: a `[[test]]` of the manifest
/// by its name, `tests/x/main.rs` as `x`, and a folder without one as the target whose file
/// declares it (pulldown-cmark's `tests/lib.rs` says `mod suite;`), once however many of
/// its files hold tests; a folder nothing declares runs every integration target.
#[test]
fn a_test_file_runs_in_the_target_that_builds_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let write = |path: &str, text: &str| {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("Cargo.toml", "[package]\nname = \"md\"\n\n[[test]]\nname = \"spec\"\npath = \"tests/lib.rs\"\n");
    write("tests/lib.rs", "pub mod suite;\n");
    write("tests/suite/mod.rs", "mod tables;\nmod lists;\n");
    write("tests/cli/main.rs", "mod args;\n");
    let tests = |paths: &[&str]| {
        let selection = Selection::Tests(paths.iter().map(|p| (p.to_string(), "t".to_string())).collect());
        plan(&Runner::Cargo, &selection, dir, dir).unwrap().display()
    };
    assert_eq!(
        tests(&["tests/suite/tables.rs", "tests/suite/lists.rs", "tests/lib.rs"]),
        "cargo test --no-fail-fast --test spec -- t"
    );
    assert_eq!(tests(&["tests/cli/args.rs"]), "cargo test --no-fail-fast --test cli -- t");
    assert_eq!(tests(&["tests/orphan/x.rs"]), "cargo test --no-fail-fast --tests -- t");
}

#[test]
fn the_ids_pytest_found_nowhere_are_read_from_its_errors() {
    let output = "collected 3 items\n\
                  ERROR: not found: /r/tests/test_a.py::Mixin::test_x\n\
                  (no match in any of [<Module test_a.py>])\n\n\
                  ERROR: found no collectors for /r/tests/test_b.py::test_y\n\
                  ERROR: not found: /r/tests/test_a.py::Mixin::test_x\n";
    assert_eq!(pytest_unfound(output, Path::new("/r")), ["tests/test_a.py::Mixin::test_x", "tests/test_b.py::test_y"]);
    assert!(pytest_unfound("2 passed in 0.1s\n", Path::new("/r")).is_empty());
}

#[test]
fn a_capture_keeps_its_head_and_tail() {
    let mut c = Capture::new(10, |_| false);
    c.push(b"0123456789abcdef");
    c.push(&vec![b'x'; TAIL_BYTES + 5]);
    let text = c.text();
    assert!(text.starts_with("0123456789"));
    assert!(text.contains("bytes of output dropped"));
    assert!(text.ends_with(&"x".repeat(100)));
}

#[test]
fn a_flood_of_output_keeps_the_result_lines_it_drops() {
    let runner = Runner::Go;
    let mut c = Capture::new(100, parse::carries_result(&runner));
    let event =
        |action: &str, test: &str| format!("{{\"Action\":\"{action}\",\"Package\":\"x\",\"Test\":\"{test}\"}}\n");
    for i in 0..20 {
        c.push(event("pass", &format!("TestEarly{i}")).as_bytes());
    }
    let noise = event("output", "TestNoisy").repeat(5_000);
    c.push(noise.as_bytes());
    c.push(event("pass", "TestLate").as_bytes());
    assert!(c.dropped() > 0);
    let parsed = parse::results(&runner, &c.results_text(), None);
    assert_eq!(parsed.passed, 21, "each pass event counts once");
}
