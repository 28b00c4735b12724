//! `libs fetch`: a fixture workspace with Cargo, npm and Python manifests and lockfiles, the
//! real cargo/rustdoc for a crate cargo's registry holds, the repo's own `node_modules` and
//! virtualenv; the machine-wide cache shared by repos; failures and kills mid-fetch.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{hit_paths, write, Home};
use crate::web::{run_json, standard_web, web_home};

/// The version of `name` this repo locks (so cargo's registry holds its source).
fn locked_version(name: &str) -> String {
    let lock: toml::Table =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap().parse().unwrap();
    lock["package"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some(name))
        .and_then(|p| p["version"].as_str())
        .unwrap()
        .to_string()
}

/// A Cargo workspace whose member depends on serde.
fn cargo_workspace(root: &Path) {
    let serde = locked_version("serde");
    write(root, "Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n");
    write(
        root,
        "crates/app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n",
    );
    write(root, "crates/app/src/lib.rs", "//! The app.\n\n/// Loads settings.\npub fn load_settings() {}\n");
    write(
        root,
        "Cargo.lock",
        &format!(
            "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\n \"serde\",\n]\n\n[[package]]\nname = \"serde\"\nversion = \"{serde}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        ),
    );
}

/// npm: package.json, its lockfile, and the package installed in node_modules.
fn npm_project(root: &Path) {
    write(root, ".gitignore", "node_modules/\n");
    write(root, "package.json", r#"{"name": "web-ui", "version": "1.0.0", "dependencies": {"quiet-retry": "^2.3.0"}}"#);
    write(
        root,
        "package-lock.json",
        r#"{"name": "web-ui", "lockfileVersion": 3, "packages": {"": {"name": "web-ui", "dependencies": {"quiet-retry": "^2.3.0"}}, "node_modules/quiet-retry": {"version": "2.3.1"}}}"#,
    );
    write(
        root,
        "node_modules/quiet-retry/package.json",
        r#"{"name": "quiet-retry", "version": "2.3.1", "description": "Retry promises with backoff.", "types": "index.d.ts"}"#,
    );
    write(root, "node_modules/quiet-retry/README.md", "# quiet-retry\n\nRetry promises with exponential backoff.\n");
    write(
        root,
        "node_modules/quiet-retry/index.d.ts",
        "export interface RetryOptions {\n  /** Attempts before giving up (default 5). */\n  maxAttempts?: number;\n  /** First delay in milliseconds; each retry doubles it, plus jitter. */\n  baseDelayMs?: number;\n}\n\n/**\n * Calls `operation` until its promise resolves, waiting between attempts with\n * exponential backoff and full jitter. Rejects with the last error after `maxAttempts`.\n */\nexport declare function retryWithBackoff<T>(operation: () => Promise<T>, options?: RetryOptions): Promise<T>;\n",
    );
}

/// Python: pyproject.toml naming a distribution installed in the repo's virtualenv.
fn python_project(root: &Path) {
    write(
        root,
        "pyproject.toml",
        "[project]\nname = \"tool\"\nversion = \"0.1.0\"\ndependencies = [\"tidyconf>=0.4\"]\n",
    );
    let site = ".venv/lib/python3.11/site-packages";
    write(
        root,
        &format!("{site}/tidyconf/__init__.py"),
        "\"\"\"Layered configuration files.\"\"\"\n\n\ndef load_layers(paths, *, strict=False):\n    \"\"\"Merge configuration layers in order, later files overriding earlier keys.\n\n    With strict=True an unknown key in a later layer raises KeyError.\n    \"\"\"\n    return {}\n\n\ndef _private_helper():\n    \"\"\"Not public.\"\"\"\n",
    );
    write(
        root,
        &format!("{site}/tidyconf-0.4.0.dist-info/METADATA"),
        "Metadata-Version: 2.1\nName: tidyconf\nVersion: 0.4.0\nSummary: Layered configuration loading\nDescription-Content-Type: text/markdown\n\n# tidyconf\n\nLoad configuration from several files, each overriding the last.\n",
    );
    write(
        root,
        &format!("{site}/tidyconf-0.4.0.dist-info/RECORD"),
        "tidyconf/__init__.py,sha256=x,300\ntidyconf-0.4.0.dist-info/METADATA,sha256=y,200\n",
    );
}

fn libs_fetch(home: &Home, repo: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["libs", "fetch", "--json", "--repo", repo.to_str().unwrap()];
    args.extend_from_slice(extra);
    home.json(&args)
}

fn library<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing: {summary}"))
}

fn search(home: &Home, repo: &Path, args: &[&str]) -> Value {
    let mut all = vec!["search", "--json", "--repo", repo.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = home.run(&all);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("search {args:?}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_workspace_gets_its_libraries_docs_from_each_ecosystem_and_repos_share_the_cache() {
    let web = standard_web();
    let home = web_home(&web, "max_pages = 1\n[search]\nweb_trigger_threshold = 0.3");
    let repo = tempfile::tempdir().unwrap();
    cargo_workspace(repo.path());
    npm_project(repo.path());
    python_project(repo.path());
    let serde = locked_version("serde");

    // An unindexed repo is indexed on the way.
    let summary = libs_fetch(&home, repo.path(), &[]);
    assert!(summary["failed"].as_array().unwrap().is_empty(), "{summary}");
    let manifests: Vec<&str> = summary["manifests"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    for manifest in ["Cargo.toml", "crates/app/Cargo.toml", "Cargo.lock", "package-lock.json", "pyproject.toml"] {
        assert!(manifests.contains(&manifest), "{manifest} not read: {manifests:?}");
    }
    let serde_lib = library(&summary, "serde");
    assert_eq!(serde_lib["version"], serde.as_str());
    assert_eq!(serde_lib["origin"], "rustdoc", "{serde_lib}");
    assert!(serde_lib["items"].as_u64().unwrap() > 100, "{serde_lib}");
    let npm = library(&summary, "quiet-retry");
    assert_eq!((npm["version"].as_str(), npm["origin"].as_str()), (Some("2.3.1"), Some("node_modules")));
    let python = library(&summary, "tidyconf");
    assert_eq!((python["version"].as_str(), python["origin"].as_str()), (Some("0.4.0"), Some("site-packages")));
    assert!(summary["chunks_written"].as_u64().unwrap() > 0);
    assert_eq!(summary["fetched"], 3);

    // The cache entry is complete, with rustdoc's items and re-export aliases.
    let entry = home.dir.path().join(format!("state/cache/libs/cargo/serde/{serde}"));
    let items: Value = serde_json::from_slice(&std::fs::read(entry.join("items.json")).unwrap()).unwrap();
    assert_eq!(items["aliases"]["serde::Deserialize"], "serde::de::Deserialize");
    assert!(entry.join("library.json").is_file());

    // Searchable, filtered by source and library; the hits say which library and version.
    let hits = search(&home, repo.path(), &["--source", "library", "retry a promise with exponential backoff"]);
    let top = &hits["hits"][0];
    assert!(top["path"].as_str().unwrap().starts_with("npm:quiet-retry@2.3.1/"), "{hits}");
    assert_eq!((top["source"].as_str(), top["library"].as_str()), (Some("library"), Some("quiet-retry")));
    assert_eq!(top["version"], "2.3.1");
    let docstring = search(&home, repo.path(), &["--lib", "tidyconf", "merge configuration layers"]);
    assert!(!docstring["hits"].as_array().unwrap().is_empty(), "{docstring}");
    assert!(docstring["hits"].as_array().unwrap().iter().all(|h| h["library"] == "tidyconf"), "{docstring}");
    assert!(hit_paths(&docstring).iter().all(|p| !p.contains("_private_helper")));
    let rust_docs = search(&home, repo.path(), &["--lib", "serde", "Deserializer deserialize_map"]);
    assert!(hit_paths(&rust_docs)[0].starts_with(&format!("cargo:serde@{serde}/")), "{rust_docs}");
    let repo_only = search(&home, repo.path(), &["--source", "repo", "load settings"]);
    assert!(repo_only["hits"].as_array().unwrap().iter().all(|h| h["source"] == "repo"), "{repo_only}");
    let unknown = home.run(&["search", "--repo", repo.path().to_str().unwrap(), "--lib", "left-pad", "pad"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("indexed: quiet-retry, serde, tidyconf"));

    // The waterfall counts library hits as local: no web for a library question.
    let (code, answered, stderr) = run_json(
        &home,
        &["web-rag", "--json", "--repo", repo.path().to_str().unwrap(), "retryWithBackoff maxAttempts jitter"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(answered["gate"]["decision"], "local", "{answered}");
    assert_eq!(answered["hits"][0]["source"], "library", "{answered}");
    assert!(web.seen("/html/").is_empty(), "the web tier was asked");

    // A second repo with the same serde: from the cache, into an index of its own.
    let other = tempfile::tempdir().unwrap();
    cargo_workspace(other.path());
    let second = libs_fetch(&home, other.path(), &[]);
    assert_eq!(library(&second, "serde")["from_cache"], true, "{second}");
    assert_eq!((second["fetched"].as_u64(), second["from_cache"].as_u64()), (Some(0), Some(1)));
    let elsewhere = search(&home, other.path(), &["--source", "library", "retry a promise with exponential backoff"]);
    assert!(hit_paths(&elsewhere).iter().all(|p| !p.starts_with("npm:")), "{elsewhere}");
    let entries = std::fs::read_dir(home.dir.path().join("state/cache/libs/cargo/serde")).unwrap().count();
    assert_eq!(entries, 1, "one cache entry per library version");

    // Fetching again changes nothing; a library no longer depended on leaves the index.
    let again = libs_fetch(&home, repo.path(), &[]);
    assert_eq!(again["chunks_written"], 0, "{again}");
    std::fs::remove_file(repo.path().join("pyproject.toml")).unwrap();
    let after = libs_fetch(&home, repo.path(), &[]);
    assert_eq!(after["removed"], serde_json::json!(["python/tidyconf"]), "{after}");
    let gone = home.run(&["search", "--repo", repo.path().to_str().unwrap(), "--lib", "tidyconf", "layers"]);
    assert_eq!(gone.status.code(), Some(2));
}

/// A stand-in for `npm` (DOCDEX_NPM): `pack NAME@VERSION --pack-destination DIR --json`.
fn fake_npm(dir: &Path, body: &str) -> std::path::PathBuf {
    let path = dir.join("npm");
    write(dir, "npm", &format!("#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in --pack-destination) dest=\"$2\"; shift;; esac; shift; done\n{body}\n"));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn registry_only_repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    write(repo.path(), "package.json", r#"{"name": "x", "dependencies": {"slowpkg": "1.0.0"}}"#);
    write(
        repo.path(),
        "package-lock.json",
        r#"{"lockfileVersion": 3, "packages": {"": {"dependencies": {"slowpkg": "1.0.0"}}, "node_modules/slowpkg": {"version": "1.0.0"}}}"#,
    );
    write(repo.path(), "index.js", "module.exports = 1;\n");
    repo
}

fn partials(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(".partial-"))
        .collect()
}

#[test]
fn a_network_failure_or_a_kill_mid_fetch_leaves_the_cache_consistent() {
    let home = Home::new();
    let tools = tempfile::tempdir().unwrap();
    let repo = registry_only_repo();
    let repo_arg = repo.path().to_str().unwrap();
    let library_dir = home.dir.path().join("state/cache/libs/npm/slowpkg");

    // The download breaks off: a partial tarball, an error. The run reports it and goes on.
    let broken = fake_npm(
        tools.path(),
        "printf 'partial' > \"$dest/slowpkg-1.0.0.tgz\"\necho 'npm ERR! network socket hang up' >&2\nexit 1",
    );
    let out =
        home.cmd().env("DOCDEX_NPM", &broken).args(["libs", "fetch", "--json", "--repo", repo_arg]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "nothing fetched is a failure: {}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failure = &summary["failed"][0];
    assert_eq!((failure["name"].as_str(), failure["version"].as_str()), (Some("slowpkg"), Some("1.0.0")));
    assert!(failure["reason"].as_str().unwrap().contains("socket hang up"), "{summary}");
    assert!(!library_dir.join("1.0.0").exists(), "a failed fetch left an entry");
    assert!(partials(&library_dir).is_empty(), "a failed fetch left its partial entry");

    // Killed mid-fetch: the partial entry stays behind but is never read as an entry.
    let hanging = fake_npm(tools.path(), "sleep 30");
    let mut child = home
        .cmd()
        .env("DOCDEX_NPM", &hanging)
        .args(["libs", "fetch", "--json", "--repo", repo_arg])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while partials(&library_dir).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(60), "the fetch never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!library_dir.join("1.0.0").exists());

    // The network is back: a complete entry, and the package's docs are searchable.
    let good = fake_npm(
        tools.path(),
        "work=$(mktemp -d)\nmkdir -p \"$work/package\"\nprintf '# slowpkg\\n\\nSlow but steady package.\\n' > \"$work/package/README.md\"\nprintf '/** Waits patiently for the tortoise. */\\nexport declare function awaitTortoise(): Promise<void>;\\n' > \"$work/package/index.d.ts\"\nprintf '{\"name\":\"slowpkg\",\"version\":\"1.0.0\",\"description\":\"Slow but steady.\"}' > \"$work/package/package.json\"\ntar czf \"$dest/slowpkg-1.0.0.tgz\" -C \"$work\" package\necho '[]'",
    );
    let out =
        home.cmd().env("DOCDEX_NPM", &good).args(["libs", "fetch", "--json", "--repo", repo_arg]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let lib = library(&summary, "slowpkg");
    assert_eq!((lib["origin"].as_str(), lib["from_cache"].as_bool()), (Some("npm-pack"), Some(false)), "{summary}");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(library_dir.join("1.0.0/library.json")).unwrap()).unwrap();
    assert_eq!(manifest["docs"], serde_json::json!(["README.md", "types/index.d.ts"]));
    assert_eq!(manifest["description"], "Slow but steady.");
    let hits = search(&home, repo.path(), &["--lib", "slowpkg", "tortoise"]);
    assert!(hit_paths(&hits)[0].starts_with("npm:slowpkg@1.0.0/types/index.d.ts"), "{hits}");
}

/// The crate tools from the CLI and HTTP: serde at the version this repo locks.
#[test]
fn crate_tools_answer_from_rustdoc_with_aliases_suggestions_and_whole_examples() {
    let home = Home::new();
    let this_repo = env!("CARGO_MANIFEST_DIR");
    let serde = locked_version("serde");

    let doc = home.json(&["crate", "item", "serde", "serde::Deserialize", "--repo", this_repo, "--json"]);
    assert_eq!((doc["path"].as_str(), doc["version"].as_str()), (Some("serde::de::Deserialize"), Some(serde.as_str())));
    assert_eq!(doc["requested"], "serde::Deserialize");
    assert!(doc["docs"].as_str().unwrap().contains("A **data structure** that can be deserialized"), "{doc}");

    // The crate named by the path's first segment alone.
    let short = home.json(&["crate", "item", "serde::Deserialize", "--repo", this_repo, "--json"]);
    assert_eq!(short["path"], doc["path"], "{short}");

    let typo = home.run(&["crate", "doc", "serde", "serde::Deserialise", "--repo", this_repo]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("did you mean: serde::Deserialize"), "{typo:?}");

    let examples = home.json(&[
        "crate",
        "examples",
        "serde",
        "--repo",
        this_repo,
        "--item",
        "serde::Serializer",
        "--limit",
        "50",
        "--json",
    ]);
    let blocks = examples["examples"].as_array().unwrap();
    assert!(!blocks.is_empty(), "{examples}");
    for block in blocks {
        let code = block["code"].as_str().unwrap();
        assert!(!code.contains("```"), "a fence inside a block: {code}");
        assert_eq!(code.matches('{').count(), code.matches('}').count(), "a fragment: {code}");
    }
    // `modules` (`tree` is its older name) lists the module tree, as HTTP's `/modules` does.
    for command in ["modules", "tree"] {
        let tree = home.json(&["crate", command, "serde", "--repo", this_repo, "--json"]);
        let modules = tree["modules"].as_array().unwrap();
        assert!(modules.iter().any(|m| m["path"] == "serde::de"), "{command}: {tree}");
    }

    let search = home.json(&[
        "crate",
        "search",
        "serde",
        "--repo",
        this_repo,
        "--kind",
        "trait",
        "--json",
        "serialize",
        "a",
        "map",
    ]);
    let paths: Vec<&str> = search["hits"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert_eq!(paths.first().copied(), Some("serde::ser::SerializeMap"), "{search}");
    assert!(search["hits"].as_array().unwrap().iter().all(|h| h["kind"] == "trait"));

    // The repo's own dependencies: the crate tools' cache entry serves `libs fetch` too.
    let fetched = libs_fetch(&home, Path::new(this_repo), &["--lib", "serde"]);
    assert_eq!(library(&fetched, "serde")["from_cache"], true, "{fetched}");

    let versions = home.json(&["crate", "versions", "serde", "--json"]);
    assert!(versions["versions"].as_array().unwrap().iter().any(|v| v["version"] == serde.as_str()), "{versions}");

    // Over HTTP, from the same cache.
    let server = crate::common::Server::start(&home, &[]);
    let client = server.blocking_client();
    let url = server.url(&format!("/v1/crates/serde/item?path=serde::Serialize&version={serde}"));
    let body: Value = client.get(url).send().unwrap().json().unwrap();
    assert_eq!(body["path"], "serde::ser::Serialize", "{body}");
    let missing = client.get(server.url("/v1/crates/serde/item")).send().unwrap();
    assert_eq!(missing.status().as_u16(), 400);

    // libs fetch through the daemon (which mounts and indexes the repo on the way), then
    // a search narrowed to the library.
    let fixture = tempfile::tempdir().unwrap();
    npm_project(fixture.path());
    write(fixture.path(), "src/index.js", "module.exports = require('quiet-retry');\n");
    let body: Value = client
        .post(server.url("/v1/libs/fetch"))
        .json(&serde_json::json!({"repo": fixture.path()}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(library(&body, "quiet-retry")["origin"], "node_modules", "{body}");
    let search: Value = client
        .get(server.url("/v1/search"))
        .query(&[("q", "exponential backoff"), ("source", "library"), ("lib", "quiet-retry")])
        .query(&[("repo", fixture.path().to_str().unwrap())])
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(search["hits"][0]["library"], "quiet-retry", "{search}");
    let bad = client.get(server.url("/v1/search")).query(&[("q", "x"), ("source", "elsewhere")]).send().unwrap();
    assert_eq!(bad.status().as_u16(), 400);
}

/// The library tools through the official MCP Python SDK (1.x): libs_fetch, search by
/// library, and the crate tools on tokio and serde as this repo locks them.
#[test]
fn library_and_crate_tools_over_mcp_with_the_official_sdk() {
    let home = Home::new();
    let fixture = tempfile::tempdir().unwrap();
    npm_project(fixture.path());
    write(fixture.path(), "src/index.js", "module.exports = require('quiet-retry');\n");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/crates_client.py");
    let out = std::process::Command::new(crate::common::python())
        .arg(&script)
        .args([env!("CARGO_BIN_EXE_docdexd"), fixture.path().to_str().unwrap(), env!("CARGO_MANIFEST_DIR")])
        .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))))
        // The crate tools read this checkout's Cargo.lock, and the checkout need not be in
        // the temp dir the fixtures live in.
        .env(
            "DOCDEX_ALLOWED_ROOTS",
            std::env::join_paths([std::env::temp_dir(), env!("CARGO_MANIFEST_DIR").into()]).unwrap(),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
}

/// Serves docs.rs's JSON route for one crate: a redirect to a zstd-compressed rustdoc JSON
/// file, as docs.rs answers; any other crate gets 404.
fn fake_docs_rs(krate: &str, version: &str, json: &Value) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let compressed = zstd::encode_all(json.to_string().as_bytes(), 3).unwrap();
    let route = format!("/crate/{krate}/{version}/json");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buffer = [0u8; 4096];
            let n = stream.read(&mut buffer).unwrap_or(0);
            let request = String::from_utf8_lossy(&buffer[..n]).to_string();
            let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
            let _ = if path == route {
                stream.write_all(b"HTTP/1.1 302 Found\r\nLocation: /static/rustdoc.json.zst\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            } else if path == "/static/rustdoc.json.zst" {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/zstd\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", compressed.len());
                stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&compressed))
            } else {
                stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            };
        }
    });
    base
}

#[test]
fn docs_rs_rustdoc_json_is_used_first_when_configured_and_local_builds_cover_its_absence() {
    let serde = locked_version("serde");
    let this_repo = env!("CARGO_MANIFEST_DIR");
    let json = serde_json::json!({
        "root": 0,
        "format_version": 57,
        "index": {
            "0": {"name": "serde", "visibility": "public", "docs": "Served by the docs.rs stand-in.", "inner": {"module": {"items": [1]}}},
            "1": {"name": "only_on_docs_rs", "visibility": "public", "docs": "An item only the served JSON has.", "inner": {"function": {}}}
        },
        "paths": {"1": {"crate_id": 0, "path": ["serde", "only_on_docs_rs"], "kind": "function"}}
    });
    let base = fake_docs_rs("serde", &serde, &json);
    let home = Home::with_config(&format!("[libs]\ndocs_rs_base_url = \"{base}\"\n"));
    let summary = home.json(&["crate", "summary", "serde", "--repo", this_repo, "--json"]);
    assert_eq!(summary["origin"], "docs.rs", "{summary}");
    let doc = home.json(&["crate", "doc", "serde", "only_on_docs_rs", "--repo", this_repo, "--json"]);
    assert_eq!(doc["path"], "serde::only_on_docs_rs");

    // docs.rs has no build of this crate: the local build answers, and says so.
    let home = Home::with_config(&format!("[libs]\ndocs_rs_base_url = \"{base}/missing\"\n"));
    let summary = home.json(&["crate", "summary", "serde", "--repo", this_repo, "--json"]);
    assert_eq!(summary["origin"], "rustdoc", "{summary}");
    assert!(summary["notes"][0].as_str().unwrap().contains("docs.rs JSON unavailable ("), "{summary}");

    // Without rustdoc at all: the items as tokio's source declares them.
    let home = Home::with_config("[libs]\nrustdoc = false\n");
    let summary = home.json(&["crate", "summary", "tokio", "--repo", this_repo, "--json"]);
    assert_eq!(summary["origin"], "crate-source", "{summary}");
    assert!(summary["items"].as_u64().unwrap() > 500, "{summary}");
    let lock = home.json(&["crate", "doc", "tokio", "tokio::sync::Mutex::lock", "--repo", this_repo, "--json"]);
    assert_eq!(lock["kind"], "method", "{lock}");
    assert!(lock["docs"].as_str().unwrap().contains("Locks this mutex"), "{lock}");
    let spawn = home.json(&["crate", "doc", "tokio", "tokio::spawn", "--repo", this_repo, "--json"]);
    assert_eq!(spawn["path"], "tokio::task::spawn", "{spawn}");
}
