//! Unit tests of the module beside it (kept apart so the module reads in one go).

use super::*;

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn found(detected: &Detected, ecosystem: Ecosystem) -> Vec<(String, String, bool)> {
    detected
        .deps
        .iter()
        .filter(|d| d.ecosystem == ecosystem)
        .map(|d| (d.name.clone(), d.version.clone(), d.direct))
        .collect()
}

#[test]
fn cargo_workspace_members_renames_and_lock_versions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n[workspace.dependencies]\nanyhow = \"1\"\n");
    write(
        root,
        "crates/a/Cargo.toml",
        "[package]\nname = \"a\"\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\nb = { path = \"../b\" }\nmy_log = { package = \"log\", version = \"0.4\" }\n",
    );
    write(
        root,
        "crates/b/Cargo.toml",
        "[package]\nname = \"b\"\n[target.'cfg(unix)'.dev-dependencies]\nlibc = \"0.2\"\n[target.'cfg(windows)'.dependencies]\nwinapi = \"0.3\"\n",
    );
    write(
        root,
        "Cargo.lock",
        r#"version = 4
[[package]]
name = "a"
version = "0.1.0"
[[package]]
name = "anyhow"
version = "1.0.99"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "serde"
version = "1.0.9"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "serde"
version = "1.0.229"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "log"
version = "0.4.28"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "libc"
version = "0.2.177"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "itoa"
version = "1.0.15"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#,
    );
    let direct = detect(root, false);
    assert_eq!(
        found(&direct, Ecosystem::Cargo),
        vec![
            ("anyhow".into(), "1.0.99".into(), true),
            ("libc".into(), "0.2.177".into(), true),
            ("log".into(), "0.4.28".into(), true),
            ("serde".into(), "1.0.229".into(), true),
        ]
    );
    if std::env::consts::FAMILY == "unix" {
        assert!(!direct.unresolved.iter().any(|(_, name, _)| name == "winapi"), "{:?}", direct.unresolved);
    }
    let all = detect(root, true);
    let names: Vec<_> = found(&all, Ecosystem::Cargo).into_iter().map(|(n, v, _)| format!("{n}@{v}")).collect();
    assert!(names.contains(&"itoa@1.0.15".to_string()) && names.contains(&"serde@1.0.9".to_string()), "{names:?}");
}

#[test]
fn another_platforms_dependencies_are_left_out() {
    let linux = |expr: &str| eval_cfg(expr, "linux", "unix");
    assert_eq!(linux("windows"), Some(false));
    assert_eq!(linux("unix"), Some(true));
    assert_eq!(linux("target_os = \"linux\""), Some(true));
    assert_eq!(linux("target_os = \"freebsd\""), Some(false));
    assert_eq!(linux("not(windows)"), Some(true));
    assert_eq!(linux("any(target_os = \"macos\", target_os = \"ios\")"), Some(false));
    assert_eq!(linux("all(tokio_unstable, target_os = \"linux\")"), Some(true));
    assert_eq!(linux("all(unix, not(target_os = \"linux\"))"), Some(false));
    // What it cannot judge stays in.
    assert_eq!(linux("target_arch = \"wasm32\""), Some(true));
    assert_eq!(linux("tokio_taskdump"), Some(true));
    let windows = |expr: &str| eval_cfg(expr, "windows", "windows");
    assert_eq!(windows("windows"), Some(true));
    assert_eq!(windows("unix"), Some(false));
    if std::env::consts::OS == "linux" {
        assert!(!target_applies_here("cfg(windows)"));
        assert!(!target_applies_here("x86_64-pc-windows-msvc"));
        assert!(target_applies_here("x86_64-unknown-linux-gnu"));
        assert!(target_applies_here("cfg(unix)"));
    }
}

#[test]
fn npm_lockfiles_of_each_manager() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "package.json",
        r#"{"dependencies": {"zod": "^3.22.0", "@scope/pkg": "^1.0.0", "mine": "workspace:*"}, "devDependencies": {"typescript": "~5.4.0"}}"#,
    );
    write(
        root,
        "package-lock.json",
        r#"{"lockfileVersion": 3, "packages": {"": {}, "node_modules/zod": {"version": "3.22.4"}, "node_modules/@scope/pkg": {"version": "1.2.0"}, "node_modules/typescript": {"version": "5.4.5"}, "node_modules/zod/node_modules/x": {"version": "9.9.9"}, "node_modules/left-pad": {"version": "1.3.0"}}}"#,
    );
    assert_eq!(
        found(&detect(root, false), Ecosystem::Npm),
        vec![
            ("@scope/pkg".into(), "1.2.0".into(), true),
            ("typescript".into(), "5.4.5".into(), true),
            ("zod".into(), "3.22.4".into(), true),
        ]
    );
    std::fs::remove_file(root.join("package-lock.json")).unwrap();
    write(
        root,
        "pnpm-lock.yaml",
        "lockfileVersion: '9.0'\n\nimporters:\n\n  .:\n    dependencies:\n      '@scope/pkg':\n        specifier: ^1.0.0\n        version: 1.2.1\n      zod:\n        specifier: ^3.22.0\n        version: 3.22.3(typescript@5.4.5)\n    devDependencies:\n      typescript:\n        specifier: ~5.4.0\n        version: 5.4.2\n\npackages:\n\n  zod@3.22.3:\n    resolution: {integrity: sha512-x}\n",
    );
    assert_eq!(
        found(&detect(root, false), Ecosystem::Npm),
        vec![
            ("@scope/pkg".into(), "1.2.1".into(), true),
            ("typescript".into(), "5.4.2".into(), true),
            ("zod".into(), "3.22.3".into(), true),
        ]
    );
    std::fs::remove_file(root.join("pnpm-lock.yaml")).unwrap();
    write(
        root,
        "yarn.lock",
        "# yarn lockfile v1\n\n\"@scope/pkg@^1.0.0\":\n  version \"1.2.2\"\n  resolved \"x\"\n\nzod@^3.22.0, zod@^3.0.0:\n  version \"3.22.2\"\n\ntypescript@~5.4.0:\n  version \"5.4.3\"\n",
    );
    assert_eq!(
        found(&detect(root, false), Ecosystem::Npm),
        vec![
            ("@scope/pkg".into(), "1.2.2".into(), true),
            ("typescript".into(), "5.4.3".into(), true),
            ("zod".into(), "3.22.2".into(), true),
        ]
    );
}

#[test]
fn python_pins_locks_and_virtualenvs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "pyproject.toml",
        "[project]\nname = \"my-app\"\ndependencies = [\"Requests[socks]>=2.0\", \"attrs==23.2.0\", \"rich\"]\n",
    );
    write(root, "requirements-dev.txt", "# tools\npytest==8.0.0 ; python_version > '3.8'\n-e .\nsix\n");
    write(
        root,
        "uv.lock",
        "version = 1\n[[package]]\nname = \"my-app\"\nversion = \"0.1.0\"\nsource = { editable = \".\" }\n[[package]]\nname = \"requests\"\nversion = \"2.32.3\"\nsource = { registry = \"https://pypi.org/simple\" }\n[[package]]\nname = \"urllib3\"\nversion = \"2.2.1\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
    );
    write(root, ".venv/lib/python3.12/site-packages/rich-14.1.0.dist-info/METADATA", "Name: rich\n");
    let detected = detect(root, false);
    assert_eq!(
        found(&detected, Ecosystem::Python),
        vec![
            ("attrs".into(), "23.2.0".into(), true),
            ("pytest".into(), "8.0.0".into(), true),
            ("requests".into(), "2.32.3".into(), true),
            ("rich".into(), "14.1.0".into(), true),
        ]
    );
    assert_eq!(detected.unresolved.len(), 1, "{:?}", detected.unresolved);
    assert_eq!(detected.unresolved[0].1, "six");
    assert!(found(&detect(root, true), Ecosystem::Python).contains(&("urllib3".into(), "2.2.1".into(), false)));
}

#[test]
fn versions_compare_numerically() {
    assert!(compare_versions("1.10.0", "1.9.2").is_gt());
    assert!(compare_versions("0.4.28", "0.4.3").is_gt());
    assert_eq!(normalize_python_name("Foo__Bar.baz"), "foo-bar-baz");
}
