use super::*;
use crate::code::extract;
use crate::ingest::Language;

/// A crate on disk (its manifest is read from there) and its graph.
fn crate_on_disk(manifest: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, CodeGraph) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    let files = files.iter().map(|(p, t)| (p.to_string(), extract(Language::Rust, t).unwrap())).collect();
    let configs = HashMap::from([("Cargo.toml".to_string(), manifest.to_string())]);
    (dir, CodeGraph::build(files, &configs))
}

fn built(builds: &mut DefaultRun, graph: &CodeGraph, path: &str) -> bool {
    builds.runs(graph, graph.file_index(path).unwrap(), None)
}

#[test]
fn a_module_another_platform_builds_is_not_built_here_also_by_its_path() {
    let manifest = "[package]\nname = \"tz\"\n";
    let (dir, graph) = crate_on_disk(
        manifest,
        &[
            ("src/lib.rs", "mod local;\n#[cfg(target_os = \"macos\")]\nmod mac;\n"),
            (
                "src/local/mod.rs",
                "#[cfg(unix)]\n#[path = \"unix.rs\"]\nmod inner;\n#[cfg(windows)]\n#[path = \"windows.rs\"]\nmod inner;\n",
            ),
            ("src/local/unix.rs", "#[test]\nfn u() {}\n"),
            ("src/local/windows.rs", "#[test]\nfn w() {}\n"),
            ("src/mac.rs", "#[test]\nfn m() {}\n"),
        ],
    );
    let mut builds = DefaultRun::new(dir.path());
    assert_eq!(built(&mut builds, &graph, "src/local/unix.rs"), cfg!(unix));
    assert_eq!(built(&mut builds, &graph, "src/local/windows.rs"), cfg!(windows));
    assert_eq!(built(&mut builds, &graph, "src/mac.rs"), cfg!(target_os = "macos"));
    assert_eq!(normalize("src/a", "../b/c.rs").as_deref(), Some("src/b/c.rs"));
    assert_eq!(normalize("", "../c.rs"), None);
}

/// flate2's backends: the one its default features build is what a call means, not a
/// guess among three; a weak feature (`zlib?/std`) turns its crate on nowhere.
#[test]
fn a_name_built_code_uses_means_the_definition_the_build_has() {
    let manifest = "[package]\nname = \"flate\"\n[features]\ndefault = [\"rt\"]\nrt = [\"zlib?/std\"]\n\
                    [dependencies]\nzlib = { version = \"1\", optional = true }\n";
    let backend = "pub struct Deflate;\n\nimpl Deflate {\n    pub fn total_in(&self) -> u64 {\n        0\n    }\n}\n";
    let (dir, mut graph) = crate_on_disk(
        manifest,
        &[
            (
                "src/lib.rs",
                "#[cfg(feature = \"zlib\")]\nmod zlib;\n#[cfg(feature = \"zlib\")]\npub use zlib::*;\n\
                 #[cfg(not(feature = \"zlib\"))]\nmod rust;\n#[cfg(not(feature = \"zlib\"))]\npub use rust::*;\n\n\
                 pub struct Compress {\n    inner: Deflate,\n}\n\nimpl Compress {\n    \
                 pub fn total_in(&self) -> u64 {\n        self.inner.total_in()\n    }\n}\n",
            ),
            ("src/zlib.rs", backend),
            ("src/rust.rs", backend),
        ],
    );
    let (files, definitions) = not_built(&graph, dir.path());
    let zlib = graph.file_index("src/zlib.rs").unwrap();
    assert_eq!(files, HashSet::from([zlib]));
    graph.set_not_built(files, definitions);
    let lib = graph.file_index("src/lib.rs").unwrap();
    let code = graph.code(lib);
    let call = code.occurrences.iter().position(|o| code.name_of(o) == "total_in" && o.line == 16).unwrap();
    let meant: Vec<(&str, bool)> =
        graph.resolve_use(lib, call as u32).iter().map(|c| (graph.path(c.symbol.0), c.confidence > 0.5)).collect();
    assert_eq!(meant, [("src/rust.rs", true)]);
}

#[test]
fn a_feature_most_test_files_need_is_on_and_an_extras_is_off() {
    let manifest =
        "[package]\nname = \"rt\"\n[features]\ndefault = []\nfull = [\"sync\"]\nsync = []\nquickcheck = []\n";
    let full = "#![cfg(feature = \"full\")]\n#[test]\nfn t() {}\n";
    let (dir, graph) = crate_on_disk(
        manifest,
        &[
            ("src/lib.rs", "#[cfg(feature = \"quickcheck\")]\nmod arbitrary;\nmod inner;\n"),
            ("src/arbitrary.rs", "#[test]\nfn a() {}\n"),
            ("src/inner/mod.rs", "#[cfg(feature = \"sync\")]\nmod deep;\n"),
            ("src/inner/deep.rs", "#[test]\nfn d() {}\n"),
            ("tests/a.rs", full),
            ("tests/b.rs", full),
            ("tests/c.rs", "#![cfg(feature = \"sync\")]\n#[test]\nfn t() {}\n"),
            ("tests/d.rs", "#![cfg(feature = \"quickcheck\")]\n#[test]\nfn t() {}\n"),
            ("tests/e.rs", "#![cfg(all(feature = \"full\", loom))]\n#[test]\nfn t() {}\n"),
        ],
    );
    let mut builds = DefaultRun::new(dir.path());
    assert_eq!(builds.suite_features(&graph), vec!["full".to_string()]);
    // Four of five test files need `full` (tokio's suite): it is on, and `sync` with it.
    for on in ["tests/a.rs", "tests/b.rs", "tests/c.rs", "src/inner/deep.rs"] {
        assert!(built(&mut builds, &graph, on), "{on}");
    }
    // `quickcheck` stays an extra; `loom` is off without a build script.
    for off in ["tests/d.rs", "tests/e.rs", "src/arbitrary.rs"] {
        assert!(!built(&mut builds, &graph, off), "{off}");
    }
}

#[test]
fn pytest_collects_under_its_testpaths_and_not_what_it_ignores() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // No configuration: everything.
    assert!(Collection::read(root).is_none());
    std::fs::write(
        root.join("pyproject.toml"),
        "[tool.pytest.ini_options]\ntestpaths = \"tests\"\naddopts = [\"--ignore=tests/slow\", \"-q\"]\n",
    )
    .unwrap();
    let c = Collection::read(root).unwrap();
    assert!(c.collects("tests/test_a.py"));
    assert!(c.collects("tests/unit/test_b.py"));
    assert!(!c.collects("bench/test_benchmarks.py"));
    assert!(!c.collects("tests/slow/test_c.py"));
    assert!(!c.collects("testsuite/test_d.py"));
    // pytest.ini comes first, words over indented lines, globs.
    std::fs::write(
        root.join("pytest.ini"),
        "[pytest]\ntestpaths =\n    src/*/tests\n    docs\naddopts = --ignore docs/old -ra\n",
    )
    .unwrap();
    let c = Collection::read(root).unwrap();
    assert!(c.collects("src/pkg/tests/test_x.py"));
    assert!(c.collects("docs/test_doc.py"));
    assert!(!c.collects("docs/old/test_doc.py"));
    assert!(!c.collects("tests/test_a.py"));
    // setup.cfg's section only when it is there.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("setup.cfg"), "[metadata]\nname = x\n").unwrap();
    assert!(Collection::read(other.path()).is_none());
    std::fs::write(other.path().join("setup.cfg"), "[tool:pytest]\ntestpaths = t\n").unwrap();
    assert!(!Collection::read(other.path()).unwrap().collects("tests/test_a.py"));
}

/// Whether the test named `qualified` (in the file at `path`) runs.
fn test_runs(run: &mut DefaultRun, graph: &CodeGraph, path: &str, qualified: &str) -> bool {
    let file = graph.file_index(path).unwrap();
    let i = graph.code(file).symbols.iter().position(|s| s.qualified_name == qualified).unwrap();
    run.runs(graph, file, Some(i as u32))
}

#[test]
fn a_test_the_harness_skips_unless_asked_does_not_run() {
    let manifest = "[package]\nname = \"x\"\n";
    let rust = "#[test]\n#[ignore = \"slow\"]\nfn slow() {}\n\n#[test]\nfn quick() {}\n";
    let (dir, graph) = crate_on_disk(manifest, &[("tests/a.rs", rust)]);
    let mut run = DefaultRun::new(dir.path());
    assert!(!test_runs(&mut run, &graph, "tests/a.rs", "slow"));
    assert!(test_runs(&mut run, &graph, "tests/a.rs", "quick"));

    let python = "import pytest, unittest\n\n@pytest.mark.skip(reason=\"x\")\ndef test_skipped():\n    pass\n\n@pytest.mark.skipif(True, reason=\"x\")\ndef test_maybe():\n    pass\n\ndef test_plain():\n    pass\n\n@unittest.skip(\"old\")\nclass TestOld(unittest.TestCase):\n    def test_m(self):\n        pass\n";
    let files = HashMap::from([("tests/test_a.py".to_string(), extract(Language::Python, python).unwrap())]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let mut run = DefaultRun::new(dir.path());
    for (name, runs) in [("test_skipped", false), ("test_maybe", true), ("test_plain", true), ("TestOld.test_m", false)]
    {
        assert_eq!(test_runs(&mut run, &graph, "tests/test_a.py", name), runs, "{name}");
    }
}

/// A test skipped on some Pythons runs where the repo's Python is not one of them: the
/// version comes from the virtual environment the test runner uses.
#[test]
fn a_test_skipped_on_the_repo_s_python_does_not_run() {
    let python = "import sys, unittest\nfrom sys import version_info\nimport pytest\n\n\n\
                  @unittest.skipIf(version_info < (3, 15), 'new in 3.15')\nclass TestLazy(unittest.TestCase):\n    \
                  def test_lazy(self):\n        pass\n\n\n\
                  @pytest.mark.skipif(sys.version_info >= (3, 14), reason=\"gone in 3.14\")\ndef test_old():\n    pass\n\n\n\
                  @unittest.skipIf(sys.version_info[0] < 3, 'py2')\ndef test_py3():\n    pass\n\n\n\
                  @unittest.skipUnless(sys.version_info >= (3, 12), 'needs 3.12')\ndef test_new():\n    pass\n";
    let files = HashMap::from([("tests/test_v.py".to_string(), extract(Language::Python, python).unwrap())]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".venv")).unwrap();
    let on = |version: &str| {
        std::fs::write(dir.path().join(".venv/pyvenv.cfg"), format!("home = /usr/bin\nversion = {version}\n")).unwrap();
        let mut run = DefaultRun::new(dir.path());
        ["TestLazy.test_lazy", "test_old", "test_py3", "test_new"]
            .map(|name| test_runs(&mut run, &graph, "tests/test_v.py", name))
    };
    assert_eq!(on("3.11.7"), [false, true, true, false]);
    assert_eq!(on("3.15.0"), [true, false, true, true]);
}

/// Code a feature off by default gates (heapless' `#[cfg(feature = "serde")] mod de;`) runs
/// in no test: the walk lists it as a dependent, and no test is reached through it.
#[test]
fn a_path_through_code_the_default_run_does_not_build_reaches_no_test() {
    use crate::code::dependents::{walk_built, Seed};
    let manifest = "[package]\nname = \"heap\"\n[features]\nserde = []\n";
    let (dir, graph) = crate_on_disk(
        manifest,
        &[
            ("src/lib.rs", "mod heap;\nmod vec;\n#[cfg(feature = \"serde\")]\nmod de;\n"),
            (
                "src/heap.rs",
                "pub fn make_heap() -> u8 {\n    1\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn made() {\n        super::make_heap();\n    }\n}\n",
            ),
            ("src/de.rs", "pub fn visit_heap() -> u8 {\n    crate::heap::make_heap()\n}\n"),
            (
                "src/vec.rs",
                "#[cfg(test)]\nmod tests {\n    #[test]\n    fn visits() {\n        crate::de::visit_heap();\n    }\n}\n",
            ),
        ],
    );
    let make_heap = graph.lookup("make_heap")[0];
    let seeds = [Seed {
        symbol_opt: Some(make_heap),
        name: "make_heap".into(),
        label: "make_heap".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let limits = crate::code::tests::daemon_walk_limits();
    let mut run = DefaultRun::new(dir.path());
    let walk = walk_built(&graph, &seeds, limits, &mut |file, symbol| run.builds(&graph, file, symbol));
    let tests: Vec<&str> = walk.tests.iter().map(|t| graph.path(t.file)).collect();
    assert_eq!(tests, ["src/heap.rs"]);
    let dependents: Vec<&str> = walk.dependents.iter().map(|d| graph.path(d.file)).collect();
    assert_eq!(dependents, ["src/de.rs"]);
    // Built as if every feature were on, the walk goes on to the test through it.
    let all = crate::code::dependents::walk(&graph, &seeds, limits);
    assert_eq!(all.tests.len(), 2);
}

#[test]
fn a_test_target_with_required_features_off_or_a_benchmarks_is_not_run() {
    let manifest = "[package]\nname = \"x\"\n[features]\ndefault = [\"std\"]\nstd = []\nslow = []\n\n[[test]]\nname = \"big\"\nrequired-features = [\"slow\"]\n\n[[test]]\nname = \"io\"\npath = \"tests/io_tests.rs\"\nrequired-features = [\"std\"]\n";
    let test = "#[test]\nfn t() {}\n";
    let manifest = format!(
        "{manifest}\n[[bench]]\nname = \"tested\"\ntest = true\n\n[[example]]\nname = \"calc\"\n\
         path = \"examples/calc/main.rs\"\ntest = true\n"
    );
    let (dir, graph) = crate_on_disk(
        &manifest,
        &[
            ("tests/big.rs", test),
            ("tests/io_tests.rs", test),
            ("tests/plain.rs", test),
            ("benches/speed.rs", test),
            ("benches/tested.rs", test),
            ("examples/demo.rs", test),
            ("examples/calc/main.rs", "#[cfg(test)]\nmod test_parser;\nfn main() {}\n"),
            ("examples/calc/test_parser.rs", test),
        ],
    );
    let mut builds = DefaultRun::new(dir.path());
    // A benchmark's or an example's tests run only with `test = true`.
    assert!(!built(&mut builds, &graph, "benches/speed.rs"));
    assert!(!built(&mut builds, &graph, "examples/demo.rs"));
    assert!(built(&mut builds, &graph, "benches/tested.rs"));
    // An example marked so, and the modules its `main.rs` declares beside it.
    assert!(built(&mut builds, &graph, "examples/calc/test_parser.rs"));
    assert!(!built(&mut builds, &graph, "tests/big.rs"));
    assert!(built(&mut builds, &graph, "tests/io_tests.rs"));
    assert!(built(&mut builds, &graph, "tests/plain.rs"));
}

fn krate(features: &[&str], custom_cfgs: bool) -> Crate {
    Crate {
        dir: String::new(),
        declared: None,
        suite: Vec::new(),
        features: features.iter().map(|f| f.to_string()).collect(),
        custom_cfgs,
        required_features: HashMap::new(),
        tested_extras: Vec::new(),
        channel: "stable",
    }
}

#[test]
fn a_test_for_another_toolchain_does_not_run_unless_the_repo_pins_it() {
    let manifest = "[package]\nname = \"x\"\n";
    let rust = "#[rustversion::nightly]\n#[test]\nfn nightly() {}\n\n\
                #[rustversion::not(nightly)]\n#[test]\nfn stable() {}\n\n\
                #[rustversion::attr(not(nightly), ignore = \"requires nightly\")]\n#[test]\nfn ui() {}\n\n\
                #[rustversion::since(1.60)]\n#[test]\nfn recent() {}\n\n\
                #[cfg_attr(miri, ignore)]\n#[test]\nfn not_under_miri() {}\n";
    let (dir, graph) = crate_on_disk(manifest, &[("tests/a.rs", rust)]);
    let expect = |run: &mut DefaultRun, nightly: bool| {
        for (name, runs) in
            [("nightly", nightly), ("stable", !nightly), ("ui", nightly), ("recent", true), ("not_under_miri", true)]
        {
            assert_eq!(test_runs(run, &graph, "tests/a.rs", name), runs, "{name}, nightly {nightly}");
        }
    };
    expect(&mut DefaultRun::new(dir.path()), false);
    std::fs::write(dir.path().join("rust-toolchain.toml"), "[toolchain]\nchannel = \"nightly-2025-06-01\"\n").unwrap();
    expect(&mut DefaultRun::new(dir.path()), true);
}

#[test]
fn a_predicate_is_true_false_or_unknown_in_the_default_test_build() {
    let k = krate(&["default", "std"], false);
    let cases = [
        ("feature = \"std\"", Some(true)),
        ("feature = \"serde\"", Some(false)),
        ("test", Some(true)),
        ("all(test, feature = \"serde\")", Some(false)),
        ("any(test, feature = \"serde\")", Some(true)),
        ("not(feature = \"serde\")", Some(true)),
        ("unix", Some(cfg!(unix))),
        ("windows", Some(cfg!(windows))),
        ("all(unix, feature = \"serde\")", Some(false)),
        ("any(unix, feature = \"serde\")", Some(cfg!(unix))),
        ("target_os = \"linux\"", Some(cfg!(target_os = "linux"))),
        ("target_os = \"windows\"", Some(cfg!(target_os = "windows"))),
        ("target_pointer_width = \"64\"", Some(cfg!(target_pointer_width = "64"))),
        ("target_env = \"gnu\"", None),
        ("panic = \"unwind\"", None),
        ("loom", Some(false)),
        ("not(loom)", Some(true)),
        ("doc", Some(false)),
        ("all(", None),
        ("feature = ", None),
        ("not(a, b)", None),
        ("rust_channel = \"stable\"", Some(true)),
        ("not(rust_channel = \"nightly\")", Some(true)),
        ("rust_channel = \"unknown\"", None),
    ];
    for (cfg, want) in cases {
        assert_eq!(evaluate(cfg, &k), want, "{cfg}");
    }
    // A build script may set a cfg of its own.
    assert_eq!(evaluate("loom", &krate(&[], true)), None);
}
