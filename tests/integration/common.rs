//! Helpers: an isolated DOCDEX_HOME per test, fixture repos, and running `docdexd`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

/// A docdex home (config + state) of its own, so tests never share or touch user state.
/// Without the embedding model by default: lexical behaviour is tested without it, and only
/// the tests of meaning (dense, hybrid, embeddings) opt in with `model()`.
pub struct Home {
    pub dir: TempDir,
    models_opt: Option<PathBuf>,
    /// On the team store: the database of this home alone (a fresh machine's store).
    pub store_url_opt: Option<String>,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
            models_opt: None,
            store_url_opt: test_store_url().map(|url| fresh_database(&url)),
        }
    }

    /// A home on the embedded store, whatever the suite's backend.
    pub fn embedded() -> Home {
        Home { dir: tempfile::tempdir().unwrap(), models_opt: None, store_url_opt: None }
    }

    /// A home on the given store (several homes sharing one store: many daemons).
    pub fn on_store(url: &str) -> Home {
        Home { dir: tempfile::tempdir().unwrap(), models_opt: None, store_url_opt: Some(url.to_string()) }
    }

    /// The backend this home's commands use.
    pub fn backend(&self) -> docdex::index::StoreBackend {
        match &self.store_url_opt {
            Some(url) => docdex::index::StoreBackend::Postgres(docdex::postgres::PgPool::open(url).unwrap()),
            None => docdex::index::StoreBackend::default(),
        }
    }

    /// A repo's index and store as this home's commands open them (for checks of what they
    /// hold; the commands themselves must not be running).
    pub fn open_index(&self, repo: &Path) -> docdex::index::RepoIndex {
        let canonical = std::fs::canonicalize(repo).unwrap();
        let state_dir = repo_state_dir(self, repo);
        let fingerprint = state_dir.file_name().unwrap().to_string_lossy().to_string();
        docdex::index::RepoIndex::open_in(&canonical, &fingerprint, &state_dir, &self.backend()).unwrap()
    }

    /// A home whose daemon has the real embedding model.
    pub fn with_model() -> Home {
        Home::new().model()
    }

    /// This home with the real embedding model.
    pub fn model(mut self) -> Home {
        self.models_opt = Some(models_dir());
        self
    }

    /// This home with the models directory `dir` (a partial one, say).
    pub fn models_in(mut self, dir: &Path) -> Home {
        self.models_opt = Some(dir.to_path_buf());
        self
    }

    /// A home whose config.toml holds `toml` (the rest defaults).
    pub fn with_config(toml: &str) -> Home {
        let home = Home::new();
        std::fs::write(home.dir.path().join("config.toml"), toml).unwrap();
        home
    }

    pub fn cmd(&self) -> Command {
        self.cmd_of(env!("CARGO_BIN_EXE_docdexd"))
    }

    /// The benchmark and evaluation binary, in this home.
    pub fn bench_cmd(&self) -> Command {
        self.cmd_of(env!("CARGO_BIN_EXE_docdex-bench"))
    }

    fn cmd_of(&self, binary: &str) -> Command {
        let mut cmd = Command::new(binary);
        cmd.env("DOCDEX_HOME", self.dir.path())
            .env_remove("DOCDEX_AUTH_TOKEN")
            .env_remove("DOCDEX_REQUIRE_TOKEN")
            .env_remove("DOCDEX_STATE_DIR")
            .env_remove("DOCDEX_HTTP_BIND_ADDR")
            .env_remove("DOCDEX_DDG_BASE_URL")
            .env_remove("DOCDEX_DDG_PROXY_BASE_URL")
            .env_remove("DOCDEX_WEB_BLOCKLIST")
            .env_remove("DOCDEX_WEB_ENABLED")
            .env_remove("DOCDEX_CHROME_PATH")
            .env_remove("DOCDEX_WEB_TRIGGER_THRESHOLD")
            .env_remove("DOCDEX_LLM_PROVIDER")
            .env_remove("DOCDEX_LLM_BASE_URL")
            .env_remove("DOCDEX_LLM_MODEL")
            .env_remove(docdex::actors::indexer::FAULT_ABORT_AFTER_COMMITS_ENV)
            .env_remove(docdex::actors::indexer::FAULT_PANIC_INDEXER_ENV)
            .env_remove(docdex::daemon::client::BASE_URL_ENV)
            .env_remove("DOCDEX_STORE_URL")
            .env("DOCDEX_MODELS_DIR", self.models_opt.clone().unwrap_or_else(|| self.dir.path().join("no-models")))
            // Fixture repos live in the temp dir, outside the home a daemon serves by default.
            .env("DOCDEX_ALLOWED_ROOTS", std::env::temp_dir())
            .stdin(Stdio::null());
        if let Some(url) = &self.store_url_opt {
            cmd.env("DOCDEX_STORE_URL", url);
        }
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// Runs a command that must succeed with exit code 0 and print JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        json_of(self.run(args), args)
    }

    /// `docdex-bench` with `args`, which must succeed and print JSON.
    pub fn bench_json(&self, args: &[&str]) -> Value {
        json_of(self.bench_cmd().args(args).output().unwrap(), args)
    }

    pub fn index(&self, repo: &Path) -> Value {
        self.json(&["index", "--repo", repo.to_str().unwrap(), "--json"])
    }

    pub fn search(&self, repo: &Path, query: &str) -> Value {
        let out = self.run(&["search", "--repo", repo.to_str().unwrap(), "--json", "--limit", "20", query]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "search failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

pub fn hit_paths(response: &Value) -> Vec<String> {
    response["hits"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_string()).collect()
}

/// Writes files (path → content) under a fresh temp dir.
/// `repo_with` for generated files.
pub fn repo_with_owned(files: &[(String, String)]) -> TempDir {
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    repo_with(&refs)
}

pub fn repo_with(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        write(dir.path(), path, content);
    }
    dir
}

pub fn write(root: &Path, path: &str, content: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, content).unwrap();
}

/// A small mixed repo: Rust, Python, TypeScript and Markdown.
pub fn sample_repo() -> TempDir {
    repo_with(&[
        (
            "src/pool.rs",
            "/// A pool of worker threads for blocking jobs.\npub struct WorkerPool {\n    size: usize,\n}\n\nimpl WorkerPool {\n    /// Runs a closure on a worker without stalling the caller.\n    pub fn run_detached(&self, job: impl FnOnce()) {\n        job();\n    }\n}\n",
        ),
        (
            "scripts/report.py",
            "def render_quarterly_report(rows):\n    \"\"\"Formats revenue rows as a table.\"\"\"\n    return '\\n'.join(str(r) for r in rows)\n",
        ),
        ("web/auth.ts", "export function verifyOauthScopes(token: string, scopes: string[]): boolean {\n  return scopes.every((s) => token.includes(s));\n}\n"),
        (
            "docs/guide.md",
            "# Guide\n\nIntro.\n\n## Auth\n\n### OAuth\n\nRequest the `repo:read` scope from the zanzibar provider.\n",
        ),
    ])
}

/// The backend the suite runs on: `DOCDEX_TEST_BACKEND=postgres` runs every command against
/// the team store (`DOCDEX_TEST_STORE_URL`, or the server `scripts/postgres.sh` starts);
/// unset or `embedded`, the default store. The same tests, either way.
pub fn test_store_url() -> Option<String> {
    static URL: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    URL.get_or_init(|| match std::env::var("DOCDEX_TEST_BACKEND").as_deref() {
        Ok("postgres") => Some(postgres_url()),
        Ok("embedded") | Ok("") | Err(_) => None,
        Ok(other) => panic!("DOCDEX_TEST_BACKEND={other}: embedded or postgres"),
    })
    .clone()
}

/// The test PostgreSQL's URL, started by `scripts/postgres.sh` when not given.
pub fn postgres_url() -> String {
    if let Ok(url) = std::env::var("DOCDEX_TEST_STORE_URL") {
        if !url.is_empty() {
            return url;
        }
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/postgres.sh");
    let out = Command::new("bash").arg(script).output().unwrap();
    assert!(out.status.success(), "scripts/postgres.sh failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A new, empty database on the test server, named for this process and a counter.
pub fn fresh_database(url: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!("docdex_h_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let mut admin = docdex::postgres::PgPool::connect(url).unwrap().client().unwrap();
    admin.batch(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).unwrap();
    admin.batch(&format!("CREATE DATABASE {name}")).unwrap();
    let (base, _) = url.rsplit_once('/').expect("a database in the URL");
    format!("{base}/{name}")
}

impl Drop for Home {
    fn drop(&mut self) {
        // A home's own database goes with it (best effort: a daemon may still hold it).
        let Some(url) = &self.store_url_opt else { return };
        let Some((base, name)) = url.rsplit_once('/') else { return };
        if !name.starts_with("docdex_h_") {
            return;
        }
        if let Ok(pool) = docdex::postgres::PgPool::connect(&format!("{base}/postgres")) {
            if let Ok(mut admin) = pool.client() {
                let _ = admin.batch(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

/// A running `docdexd daemon`, killed on drop.
pub struct Server {
    pub child: Child,
    pub base_url: String,
    /// The bearer token it requires: `--auth-token`, or the one generated in the home.
    pub token_opt: Option<String>,
}

impl Server {
    /// Starts `docdexd daemon --bind 127.0.0.1:0 <extra>` and waits for its address line.
    pub fn start(home: &Home, extra: &[&str]) -> Server {
        Server::start_with_env(home, extra, &[])
    }

    /// `start`, with extra environment variables.
    pub fn start_with_env(home: &Home, extra: &[&str], envs: &[(&str, &str)]) -> Server {
        let mut child = home
            .cmd()
            .envs(envs.iter().copied())
            .arg("daemon")
            .args(if extra.contains(&"--bind") { &[][..] } else { &["--bind", "127.0.0.1:0"][..] })
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let Some(addr) = line.trim().strip_prefix("docdexd listening on ") else {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("serve did not start: {line} {}", String::from_utf8_lossy(&out.stderr));
        };
        let token_opt = extra
            .windows(2)
            .find(|w| w[0] == "--auth-token")
            .map(|w| w[1].to_string())
            .or_else(|| std::fs::read_to_string(home.dir.path().join("token")).ok().map(|t| t.trim().to_string()));
        Server { base_url: addr.to_string(), child, token_opt }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    pub fn token(&self) -> Option<&str> {
        self.token_opt.as_deref()
    }

    fn auth_headers(&self) -> reqwest::header::HeaderMap {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(token) = &self.token_opt {
            headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
        }
        headers
    }

    /// An HTTP client that sends the server's token.
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder().default_headers(self.auth_headers()).build().unwrap()
    }

    /// A blocking HTTP client that sends the server's token (60 s timeout).
    pub fn blocking_client(&self) -> reqwest::blocking::Client {
        reqwest::blocking::Client::builder()
            .default_headers(self.auth_headers())
            .timeout(std::time::Duration::from_secs(180))
            .build()
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Best effort: the process may already be gone.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GET returning (status, JSON body).
pub async fn get(url: &str, token_opt: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token_opt {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// The tokio crate's source from cargo's registry (it is one of our dependencies, so any
/// machine that built docdex has it).
/// Cargo's unpacked registry sources (one folder per registry index).
fn registry_sources() -> Vec<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    std::fs::read_dir(cargo_home.join("registry/src")).unwrap().flatten().map(|index| index.path()).collect()
}

pub fn tokio_source() -> PathBuf {
    let mut found: Vec<PathBuf> = registry_sources()
        .into_iter()
        .flat_map(|index| std::fs::read_dir(index).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("tokio-1."))
        .filter(|p| p.join("src/task/blocking.rs").exists())
        .collect();
    // The newest by version number (string order would put 1.9 after 1.54).
    let version = |p: &PathBuf| -> Vec<u64> {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        name.trim_start_matches("tokio-").split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect()
    };
    found.sort_by_key(version);
    found.pop().expect("tokio 1.x source in cargo's registry (run `cargo fetch`)")
}

/// A crate's source in cargo's registry, `name-version` as Cargo.lock locks it (so a build
/// has fetched it).
pub fn registry_crate(name_version: &str) -> PathBuf {
    registry_sources()
        .into_iter()
        .map(|index| index.join(name_version))
        .find(|p| p.join("Cargo.toml").is_file())
        .unwrap_or_else(|| panic!("{name_version} in cargo's registry (run `cargo fetch`)"))
}

/// The installed embedding model (`scripts/test.sh` installs it into target/test-models).
pub fn models_dir() -> PathBuf {
    let dir = std::env::var_os("DOCDEX_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-models"));
    assert!(
        docdex::index::models::ModelPaths::under(&dir).missing().is_none(),
        "the embedding model is not installed in {}: run ./scripts/test.sh (or `docdexd models install` with DOCDEX_MODELS_DIR set)",
        dir.display()
    );
    dir
}

/// The Python with the test tools (MCP SDK, OpenAI client, llama.cpp server): scripts/test.sh
/// makes target/py.
pub fn python() -> PathBuf {
    let python = std::env::var_os("DOCDEX_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/py/bin/python"));
    assert!(
        python.exists(),
        "{} is missing: run ./scripts/test.sh (it installs the Python test tools)",
        python.display()
    );
    python
}

/// One Python per major version of the official MCP SDK (1.x in target/py, 2.x in
/// target/py2; scripts/test.sh makes both): the MCP tests run their clients with each.
pub fn mcp_pythons() -> Vec<PathBuf> {
    let second = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/py2/bin/python");
    assert!(
        second.exists(),
        "{} is missing: run ./scripts/test.sh (it installs the MCP SDK 2.x there)",
        second.display()
    );
    vec![python(), second]
}

/// A repo's state directory under a home (where docdex keeps its index and LMDB file).
pub fn repo_state_dir(home: &Home, repo: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(repo).unwrap();
    let fingerprint = docdex::actors::repo_manager::RepoFingerprint::of(&canonical).0;
    home.dir.path().join("state/repos").join(fingerprint)
}

/// The team store at `url` and a repo's id in it.
fn team_repo(url: &str, repo: &Path) -> (std::sync::Arc<docdex::postgres::PgPool>, i64) {
    let pool = docdex::postgres::PgPool::open(url).unwrap();
    let canonical = std::fs::canonicalize(repo).unwrap();
    let fingerprint = docdex::actors::repo_manager::RepoFingerprint::of(&canonical).0;
    let id = pool.repo_id(&fingerprint, &canonical.display().to_string()).unwrap();
    (pool, id)
}

/// A repo's store where the home keeps it (to read what a docdexd that has exited wrote).
pub fn open_store(home: &Home, repo: &Path) -> docdex::index::RepoStore {
    match &home.store_url_opt {
        Some(url) => {
            let (pool, id) = team_repo(url, repo);
            docdex::index::RepoStore::open_postgres(pool, id)
        }
        None => docdex::index::RepoStore::open(&repo_state_dir(home, repo).join("meta.lmdb")).unwrap(),
    }
}

/// Takes a repo's index writer lock as another process would (the lock file on the
/// embedded store, the repo's database lock on the team store); held until dropped.
pub fn hold_writer_lock(home: &Home, repo: &Path) -> Box<dyn std::any::Any> {
    match &home.store_url_opt {
        Some(url) => {
            let (pool, id) = team_repo(url, repo);
            Box::new(pool.try_writer_lock(id).unwrap().expect("the lock is free"))
        }
        None => {
            let lock_path = repo_state_dir(home, repo).join("index/.tantivy-writer.lock");
            let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).unwrap();
            lock.try_lock().unwrap();
            Box::new(lock)
        }
    }
}

/// Overwrites a repo's index `meta.json` with garbage, where the home's store keeps it.
pub fn damage_index_meta(home: &Home, repo: &Path) {
    let garbage = b"{ this is not an index";
    match &home.store_url_opt {
        Some(url) => {
            let pool = docdex::postgres::PgPool::open(url).unwrap();
            let mut client = pool.client().unwrap();
            let rows = client
                .query("UPDATE docdex_index_files SET data = $1 WHERE name = 'meta.json' RETURNING 1", &[&&garbage[..]])
                .unwrap();
            assert_eq!(rows.len(), 1, "one repo's meta.json in this home's store");
            // The home's cached copy is not the truth; it goes too.
            let _ = std::fs::remove_dir_all(repo_state_dir(home, repo).join("index-cache"));
        }
        None => std::fs::write(repo_state_dir(home, repo).join("index/meta.json"), garbage).unwrap(),
    }
}

/// (path, chunk id) of every live document in a repo's index.
pub fn live_chunks(index: &docdex::index::RepoIndex) -> Vec<(String, u32)> {
    index.live_chunks().unwrap()
}

fn json_of(out: Output, args: &[&str]) -> Value {
    assert_eq!(out.status.code(), Some(0), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// How long the race tests flip a path: 6 s in the suite; `DOCDEX_RACE_SECS=60` for the
/// long run SECURITY.md reports.
pub fn race_duration() -> std::time::Duration {
    let secs = std::env::var("DOCDEX_RACE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(6);
    std::time::Duration::from_secs(secs)
}
