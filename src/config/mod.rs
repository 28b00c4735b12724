//! Typed configuration: `$DOCDEX_HOME/config.toml`, created with documented defaults on first
//! run, with environment overrides applied on top.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::{DocdexError, ErrorCode, Result};

// Defaults the configured layers also use on their own (tests, one-shot tools): they live
// here so that the configuration does not import the layers it configures.

/// Default `[search] concept_weight`.
pub const DEFAULT_CONCEPT_WEIGHT: f32 = 0.5;
/// A file's second hit ranks this many places below where fusion put it, its third twice
/// as far: the answer to a question is a file, and a page whose first places go to two
/// chunks of one wrong file names fewer candidates (hybrid success@5 over the 216 questions
/// of the tune splits 0.92 -> 0.95; see ARCHITECTURE.md, Ranking).
pub const DEFAULT_REPEAT_HIT_DELAY: usize = 10;
/// The map is a ceiling on the file's size, not an allocation (address space, reserved
/// sparsely): 64 GiB is far beyond what a repo's records, vectors and cache need, so a full
/// map is a misconfiguration (`[index] lmdb_map_bytes`), reported as such.
pub const DEFAULT_MAP_BYTES: usize = 64 << 30;
/// The default budget of one tool result, in tokens (`[server] mcp_max_result_tokens`).
pub const DEFAULT_RESULT_TOKENS: usize = 8_000;

/// The commented example shipped in `config/`, every key set to its default; the first run
/// writes it with those settings commented out (`first_run_config`).
pub const DEFAULT_CONFIG_TOML: &str = include_str!("../../config/config.example.toml");

/// The file a first run writes: the example with every setting commented out, so the user
/// sees each key, its documentation and its default, and a later version's defaults (a better
/// ranking, a new limit) reach them for every line they have not uncommented. A file that
/// spelled every default out froze the defaults of the version that wrote it.
pub fn first_run_config() -> String {
    let mut text = String::with_capacity(DEFAULT_CONFIG_TOML.len() + 256);
    for line in DEFAULT_CONFIG_TOML.lines() {
        if line.starts_with(|c: char| c.is_ascii_lowercase()) && line.contains(" = ") {
            text.push_str("# ");
        } else if line.starts_with("# Every key is optional") {
            text.push_str(
                "# Every setting is commented out at its default: uncomment a line to change it; what\n\
                 # stays commented follows the defaults of the docdex you run. Unknown keys are warned about.\n",
            );
            continue;
        }
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    pub core: CoreConfig,
    pub index: IndexConfig,
    pub search: SearchConfig,
    pub embedding: EmbeddingConfig,
    pub server: ServerConfig,
    pub web: WebConfig,
    pub llm: LlmConfig,
    pub repos: ReposConfig,
    pub watcher: WatcherConfig,
    pub libs: LibsConfig,
    pub tests: TestsConfig,
}

/// `run-tests`: running a repo's tests, bounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestsConfig {
    /// A run taking longer is stopped (its whole process group killed).
    pub timeout_secs: u64,
    /// Output kept from a run (the rest is dropped from the middle; the tail is kept).
    pub max_output_bytes: u64,
    /// Whether a daemon served beyond this machine (`--expose`) may run tests at all.
    pub allow_when_exposed: bool,
    /// A repo's own test command, by the repo's path, run with `sh -c` in its root instead
    /// of the runner docdex detects: `{ "/home/me/app" = "make test" }`.
    pub commands: std::collections::BTreeMap<String, String>,
}

impl Default for TestsConfig {
    fn default() -> Self {
        TestsConfig {
            timeout_secs: 600,
            max_output_bytes: 4 * 1024 * 1024,
            allow_when_exposed: false,
            commands: Default::default(),
        }
    }
}

/// Which directories a daemon serves (see `repo_policy`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReposConfig {
    /// Directories (besides the home, minus its dot-directories, and the daemon's `--repo`)
    /// whose subdirectories requests may name as repos (`DOCDEX_ALLOWED_ROOTS`, `:`-separated).
    pub allowed_roots: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoreConfig {
    /// Where per-repo state lives; empty means `$DOCDEX_HOME/state`.
    pub global_state_dir: Option<PathBuf>,
    pub log_level: String,
    /// Pages fetched at once (browser tabs or plain requests), across all repos.
    pub max_concurrent_fetches: usize,
    /// Largest file `get` (every surface, and chat's chunk reads) will read.
    pub max_open_bytes: u64,
    /// A daemon releases a repo's index handles after this long unused (0: never); the
    /// next request reopens them.
    pub repo_idle_secs: u64,
    /// Repos a daemon keeps mounted (watched) at once; the least recently used goes first.
    pub max_mounted_repos: usize,
    /// How long a search waits for a repo's first index run before answering
    /// `indexing_in_progress`.
    pub first_index_wait_secs: u64,
}

/// Library docs (`libs fetch`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LibsConfig {
    /// Libraries fetched and extracted at once.
    pub max_concurrent: usize,
    /// A library taking longer than this (download, rustdoc build, extraction) is reported
    /// as failed and the run goes on.
    pub timeout_secs: u64,
    /// Build rustdoc JSON locally for Rust crates (`RUSTC_BOOTSTRAP=1 cargo doc`); without
    /// it, or when it fails, docs come from the crate's README and crate-level comments.
    pub rustdoc: bool,
    /// Where docs.rs's rustdoc JSON is fetched from first (`https://docs.rs`); empty means
    /// never (offline by default).
    pub docs_rs_base_url: String,
    /// Bounds on what one library contributes (files and bytes of docs).
    pub max_files_per_library: usize,
    pub max_bytes_per_library: u64,
}

impl Default for LibsConfig {
    fn default() -> Self {
        LibsConfig {
            max_concurrent: 2,
            timeout_secs: 300,
            rustdoc: true,
            docs_rs_base_url: String::new(),
            max_files_per_library: 400,
            max_bytes_per_library: 16 * 1024 * 1024,
        }
    }
}

/// The daemon's file watcher.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WatcherConfig {
    /// Watch mounted repos and re-index what changes.
    pub enabled: bool,
    /// Quiet time after the last change before the re-index starts: a burst (a branch
    /// checkout) is one run.
    pub debounce_ms: u64,
    /// A change waits at most this long, however busy the files stay.
    pub max_delay_ms: u64,
}

impl Default for WatcherConfig {
    fn default() -> Self {
        WatcherConfig { enabled: true, debounce_ms: 500, max_delay_ms: 10_000 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IndexConfig {
    /// Files larger than this are skipped (generated code, data dumps, minified bundles).
    pub max_file_size_bytes: u64,
    /// Chunks longer than this are split (at inner items for code, paragraphs for prose).
    pub max_chunk_lines: usize,
    /// Consecutive small items are merged until a chunk reaches this many lines.
    pub target_chunk_lines: usize,
    /// A write batch is committed once it holds this many files...
    pub batch_max_files: usize,
    /// ...or this many bytes of source.
    pub batch_max_bytes: usize,
    /// Memory budget of the Tantivy writer.
    pub writer_heap_bytes: usize,
    /// Ceiling of each repo's LMDB file (records, vectors, memory, embedding cache): address
    /// space reserved sparsely, not memory used.
    pub lmdb_map_bytes: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchConfig {
    /// Default number of hits when a request gives no limit.
    pub max_repo_hits: usize,
    /// At most this many hits from one file; the rest collapse into the best ones.
    pub max_hits_per_file: usize,
    /// Places a file's second and later hits move down the ranking, so the first page
    /// names more files (0 keeps the ranked order).
    pub repeat_hit_delay: usize,
    /// Confidence below which a later waterfall escalates to the web.
    pub web_trigger_threshold: f32,
    /// Hybrid search ranks files by Reciprocal Rank Fusion of the two rankings' file orders:
    /// `weight / (fusion_k + place)`; larger values flatten the curve.
    pub fusion_k: f32,
    /// Weight of the lexical (BM25) ranking in hybrid fusion.
    pub rrf_lexical_weight: f32,
    /// Weight of the dense (embedding) ranking in hybrid fusion.
    pub rrf_dense_weight: f32,
    /// Web hits a waterfall adds after the local ones.
    pub max_web_hits: usize,
    /// A question's plain phrases add the names programmers give the same ideas ("pause
    /// for a while" adds `sleep`, `delay`; the list is `src/index/concepts.txt`) to the
    /// lexical query (and, with `expand_embedding`, to the query embedding's text).
    pub expand_concepts: bool,
    /// Whether the query embedding's text also gets those terms. On by default since
    /// hybrid fuses files: dense ranking then finds what the lexical query's concept terms
    /// name, and the fused order gains on every kind of question but how-it-works ones
    /// (ARCHITECTURE.md, Ranking).
    pub expand_embedding: bool,
    /// Weight of those added terms in the lexical query, relative to the question's words.
    pub concept_weight: f32,
}

impl SearchConfig {
    /// The lexical weight of concept terms: 0 when expansion is off.
    pub fn lexical_concept_weight(&self) -> f32 {
        if self.expand_concepts {
            self.concept_weight
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EmbeddingConfig {
    /// Semantic search; without the model docdex works lexical-only and says so.
    pub enabled: bool,
    /// Where `docdexd models install` puts the model and ONNX Runtime; unset means
    /// `$DOCDEX_HOME/models`.
    pub models_dir: Option<PathBuf>,
    /// Chunks per inference batch.
    pub batch_size: usize,
    /// Tokens the model sees per chunk (all-MiniLM-L6-v2 was trained on 256).
    pub max_tokens: usize,
    /// ONNX Runtime threads per embedder instance.
    pub threads: usize,
    /// Vectors kept per repo for texts that may come back (branch switches, rebuilds); the
    /// least recently used go beyond this (about 1.5 KiB each).
    pub cache_max_entries: u64,
    /// A daemon unloads the model after this long unused (0: never); it loads again on the
    /// next query or embedding.
    pub idle_unload_secs: u64,
}

/// The web tier of the waterfall: discovery (DuckDuckGo's HTML endpoint), fetching (headless
/// Chromium, plain HTTP as the fallback), the shared cache and the guards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WebConfig {
    /// Off: forcing the web is an error and weak local answers stay local.
    pub enabled: bool,
    /// DuckDuckGo's HTML endpoint (`DOCDEX_DDG_BASE_URL`).
    pub ddg_base_url: String,
    /// Used when the primary answers with a challenge page or 202 (`DOCDEX_DDG_PROXY_BASE_URL`).
    pub ddg_proxy_base_url: Option<String>,
    pub user_agent: String,
    /// Least time between two discovery requests of this process (never below 2000).
    pub min_spacing_ms: u64,
    /// Least time between two fetches from one domain (never below 1000).
    pub request_delay_ms: u64,
    /// A page that has not loaded after this long is abandoned.
    pub page_load_timeout_secs: u64,
    /// Cached pages and discovery results are reused for this long.
    pub cache_ttl_secs: u64,
    /// Domains never fetched or returned by discovery (suffix match: `example.com` also
    /// blocks `docs.example.com`).
    pub blocklist: Vec<String>,
    /// Fetching loopback, link-local and private addresses; off so that an exposed daemon
    /// cannot be used as a proxy into the user's network.
    pub allow_private_addresses: bool,
    /// Responses larger than this are cut off.
    pub max_response_bytes: usize,
    /// Pages a waterfall fetches from the discovery results.
    pub max_pages: usize,
    /// Retries of a discovery request answered with 429, 5xx or a challenge page.
    pub max_retries: u32,
    /// `chromium` (headless browser, plain HTTP when it is missing) or `http` (never a browser).
    pub engine: String,
    /// Chromium binary; unset means the usual places (`/usr/bin/chromium`, ...).
    pub chrome_binary_path: Option<PathBuf>,
    /// An idle browser is closed after this long (it restarts in about a second).
    pub browser_idle_secs: u64,
}

/// The local LLM server chat answers come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmConfig {
    /// `ollama` (Ollama's API) or `openai` (any OpenAI-compatible server: llama.cpp, LM
    /// Studio, vLLM). An unknown name is a warning; chat then fails with a clear error.
    pub provider: String,
    /// Where the server listens (`DOCDEX_LLM_BASE_URL`).
    pub base_url: String,
    /// The model asked for when a request names none (`DOCDEX_LLM_MODEL`); empty means the
    /// server's first model (what a single-model llama.cpp server serves anyway).
    pub default_model: String,
    /// Most tokens an answer may take (requests may ask for fewer; never more than the
    /// answer's 20% of the context window).
    pub max_answer_tokens: usize,
    /// The model's context window in tokens; 0 means ask the server, and 4096 when it does
    /// not say.
    pub context_window: usize,
    /// Connecting, and waiting for each piece of a streamed answer, give up after this long.
    pub timeout_secs: u64,
    /// Retries of a request the server did not accept a connection for (it may be starting).
    pub retries: u32,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: "ollama".into(),
            base_url: "http://127.0.0.1:11434".into(),
            default_model: "phi3.5:3.8b".into(),
            max_answer_tokens: 512,
            context_window: 0,
            timeout_secs: 120,
            retries: 2,
        }
    }
}

/// Floors the rate limits can never go below, whatever the configuration says: the web tier
/// must stay polite to the sites it uses.
pub const MIN_DISCOVERY_SPACING_MS: u64 = 2000;
pub const MIN_DOMAIN_DELAY_MS: u64 = 1000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerConfig {
    pub http_bind_addr: String,
    /// The token every HTTP request must carry (`Authorization: Bearer <token>`); unset
    /// means the one generated in `$DOCDEX_HOME/token` (see `require_token`).
    pub auth_token: Option<String>,
    /// Require a token even on loopback (the default: any local web page can reach
    /// 127.0.0.1). `false` serves loopback without one, as docdex did before.
    pub require_token: bool,
    /// Host names (besides loopback) requests may be addressed to, e.g. the name an exposed
    /// daemon is reached by. Empty on an exposed daemon means any (the token guards it).
    pub allowed_hosts: Vec<String>,
    /// Requests one client (its MCP session, else its address) may have in flight of each
    /// kind (LLM, web, MCP, local work; `/healthz` is never counted); more get 429.
    pub max_requests_per_client: usize,
    /// Budget of one MCP tool result in tokens (estimated as characters / 3): longer results
    /// are paged. Agents' clients cap a result (Claude Code at 25k tokens).
    pub mcp_max_result_tokens: usize,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            global_state_dir: None,
            log_level: "warn".into(),
            max_concurrent_fetches: 2,
            max_open_bytes: 4 * 1024 * 1024,
            repo_idle_secs: 600,
            max_mounted_repos: 64,
            first_index_wait_secs: 30,
        }
    }
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_file_size_bytes: 1024 * 1024,
            max_chunk_lines: 120,
            target_chunk_lines: 40,
            batch_max_files: 1000,
            batch_max_bytes: 4 * 1024 * 1024,
            writer_heap_bytes: 64 * 1024 * 1024,
            lmdb_map_bytes: DEFAULT_MAP_BYTES,
        }
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            max_repo_hits: 10,
            max_hits_per_file: 2,
            repeat_hit_delay: DEFAULT_REPEAT_HIT_DELAY,
            web_trigger_threshold: 0.7,
            fusion_k: 3.0,
            rrf_lexical_weight: 1.0,
            rrf_dense_weight: 1.0,
            max_web_hits: 5,
            expand_concepts: true,
            expand_embedding: true,
            concept_weight: DEFAULT_CONCEPT_WEIGHT,
        }
    }
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            enabled: true,
            models_dir: None,
            batch_size: 4,
            max_tokens: 256,
            threads: 2,
            cache_max_entries: 200_000,
            idle_unload_secs: 300,
        }
    }
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            enabled: true,
            ddg_base_url: "https://html.duckduckgo.com/html/".into(),
            ddg_proxy_base_url: None,
            user_agent: concat!("Mozilla/5.0 (X11; Linux x86_64) docdex/", env!("CARGO_PKG_VERSION")).into(),
            min_spacing_ms: MIN_DISCOVERY_SPACING_MS,
            request_delay_ms: MIN_DOMAIN_DELAY_MS,
            page_load_timeout_secs: 15,
            cache_ttl_secs: 7 * 24 * 3600,
            blocklist: Vec::new(),
            allow_private_addresses: false,
            max_response_bytes: 5 * 1024 * 1024,
            max_pages: 3,
            max_retries: 3,
            engine: "chromium".into(),
            chrome_binary_path: None,
            browser_idle_secs: 60,
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            http_bind_addr: "127.0.0.1:3210".into(),
            auth_token: None,
            require_token: true,
            allowed_hosts: Vec::new(),
            max_requests_per_client: 64,
            mcp_max_result_tokens: DEFAULT_RESULT_TOKENS,
        }
    }
}

/// The loaded configuration plus where it came from and what looked wrong in it.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    pub home: PathBuf,
    pub path: PathBuf,
    /// Keys present in the file that docdex does not know (typos, removed options).
    pub unknown_keys: Vec<String>,
    /// Values that are kept but will not work as written (an unknown LLM provider).
    pub warnings: Vec<String>,
}

impl LoadedConfig {
    pub fn state_dir(&self) -> PathBuf {
        self.config.core.global_state_dir.clone().unwrap_or_else(|| self.home.join("state"))
    }

    pub fn models_dir(&self) -> PathBuf {
        self.config.embedding.models_dir.clone().unwrap_or_else(|| self.home.join("models"))
    }
}

/// The daemon's bearer token: `[server] auth_token` (or `DOCDEX_AUTH_TOKEN`) when set, else
/// with `require_token` the one in `$DOCDEX_HOME/token`, generated on first use (0600).
pub fn daemon_token(loaded: &LoadedConfig) -> Result<Option<String>> {
    if let Some(token) = &loaded.config.server.auth_token {
        return Ok(Some(token.clone()));
    }
    if !loaded.config.server.require_token {
        return Ok(None);
    }
    let path = loaded.home.join("token");
    if let Ok(token) = std::fs::read_to_string(&path) {
        let token = token.trim().to_string();
        if !token.is_empty() {
            return Ok(Some(token));
        }
    }
    let token = hex::encode(rand::random::<[u8; 32]>());
    let unwritable = |err: std::io::Error| {
        DocdexError::new(ErrorCode::StateUnwritable, format!("cannot write {}: {err}", path.display()))
            .with_hint("set DOCDEX_HOME to a writable folder")
    };
    std::fs::create_dir_all(&loaded.home).map_err(unwritable)?;
    // Created with 0600 from the start, then renamed into place: never readable by others.
    let tmp = loaded.home.join(format!("token.{}.tmp", std::process::id()));
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(unwritable)?;
        file.write_all(token.as_bytes()).map_err(unwritable)?;
    }
    // Another process may have won the race; its token stands.
    if let Ok(existing) = std::fs::read_to_string(&path) {
        let _ = std::fs::remove_file(&tmp);
        if !existing.trim().is_empty() {
            return Ok(Some(existing.trim().to_string()));
        }
    }
    std::fs::rename(&tmp, &path).map_err(unwritable)?;
    Ok(Some(token))
}

/// `$DOCDEX_HOME`, defaulting to `~/.docdex`.
pub fn docdex_home() -> PathBuf {
    if let Some(home) = std::env::var_os("DOCDEX_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    let user_home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    user_home.join(".docdex")
}

/// Loads `config.toml` from `home`, creating it with the documented defaults if missing.
pub fn load(home: &Path) -> Result<LoadedConfig> {
    let path = home.join("config.toml");
    if !path.exists() {
        std::fs::create_dir_all(home).map_err(|err| {
            DocdexError::new(ErrorCode::StateUnwritable, format!("cannot create {}: {err}", home.display()))
                .with_hint("set DOCDEX_HOME to a writable folder")
        })?;
        std::fs::write(&path, first_run_config()).map_err(|err| {
            DocdexError::new(ErrorCode::StateUnwritable, format!("cannot write {}: {err}", path.display()))
                .with_hint("set DOCDEX_HOME to a writable folder")
        })?;
    }
    let text = std::fs::read_to_string(&path).map_err(|err| {
        DocdexError::new(ErrorCode::ConfigInvalid, format!("cannot read {}: {err}", path.display()))
            .with_hint("check the file's permissions")
    })?;
    let (mut config, mut unknown_keys) = parse(&text).map_err(|err| {
        DocdexError::new(ErrorCode::ConfigInvalid, format!("{}: {err}", path.display()))
            .with_hint("fix the file, or delete it and run any command to get the defaults back (every setting is in it, commented out)")
    })?;
    apply_env_overrides(&mut config)?;
    check_ranges(&config).map_err(|err| {
        DocdexError::new(ErrorCode::ConfigInvalid, format!("{}: {err}", path.display()))
            .with_hint("fix the value, or comment the line out to get the default back")
    })?;
    let mut warnings = value_warnings(&config);
    warnings.extend(retired_key_warnings(&mut unknown_keys));
    Ok(LoadedConfig { config, home: home.to_path_buf(), path, unknown_keys, warnings })
}

/// Parses config text; unknown keys are collected (and later warned about), not fatal, so an
/// older docdex can read a newer file.
pub fn parse(text: &str) -> std::result::Result<(Config, Vec<String>), String> {
    let mut unknown = Vec::new();
    let deserializer = toml::de::Deserializer::parse(text).map_err(|err| err.to_string())?;
    let config: Config = serde_ignored::deserialize(deserializer, |path| unknown.push(path.to_string()))
        .map_err(|err| err.to_string())?;
    unknown.sort();
    Ok((config, unknown))
}

/// Keys earlier versions wrote into every config file, and what replaced them: a file
/// written on first run keeps them, so they get a message of their own rather than
/// "unknown key".
const RETIRED_KEYS: &[(&str, &str)] = &[(
    "search.rrf_k",
    "search.rrf_k is no longer read: hybrid search now fuses the rankings' files, not their chunks, \
     with search.fusion_k (default 3); delete the line",
)];

/// Defaults that changed, with the value earlier versions wrote into every config file on
/// first run (as TOML): such a file still sets the old value, which `check` points out (a
/// user may have chosen it, so it is a note there, not a warning on every command).
const CHANGED_DEFAULTS: &[(&str, &str, &str, &str)] = &[
    (
        "search",
        "expand_embedding",
        "false",
        "search.expand_embedding = false was the default before hybrid search fused files; the default is now \
         true (plain-words questions rank better, ARCHITECTURE.md, Ranking): delete the line unless you chose it",
    ),
    (
        "embedding",
        "batch_size",
        "16",
        "embedding.batch_size = 16 was an early default; the default is now 4 (as fast on a CPU, half the \
         memory): delete the line unless you chose it",
    ),
    (
        "embedding",
        "threads",
        "1",
        "embedding.threads = 1 was an early default; the default is now 2: delete the line unless you chose it",
    ),
    (
        "index",
        "batch_max_bytes",
        "16777216",
        "index.batch_max_bytes = 16777216 was an early default; the default is now 4194304 (smaller commits, \
         indexing pipelined with them): delete the line unless you chose it",
    ),
];

/// `check`'s notes on settings a config file holds at a default that has since changed.
pub fn stale_default_notes(text: &str) -> Vec<String> {
    let Ok(table) = text.parse::<toml::Table>() else { return Vec::new() };
    CHANGED_DEFAULTS
        .iter()
        .filter(|(section, key, old, _)| {
            let old = format!("v = {old}").parse::<toml::Table>().ok().and_then(|t| t.get("v").cloned());
            old.is_some() && table.get(*section).and_then(|s| s.get(*key)) == old.as_ref()
        })
        .map(|(_, _, _, note)| note.to_string())
        .collect()
}

/// Takes the retired keys out of `unknown_keys` and returns a warning for each.
pub fn retired_key_warnings(unknown_keys: &mut Vec<String>) -> Vec<String> {
    let mut warnings = Vec::new();
    unknown_keys.retain(|key| match RETIRED_KEYS.iter().find(|(retired, _)| retired == key) {
        Some((_, message)) => {
            warnings.push(message.to_string());
            false
        }
        None => true,
    });
    warnings
}

/// What `core.log_level` may be.
pub const LOG_LEVELS: [&str; 5] = ["error", "warn", "info", "debug", "trace"];

/// Values that parse but are out of their range: refused at load (and so by `check`), with
/// the key and the range, instead of a search that answers nothing or a gate that never
/// opens.
pub fn check_ranges(config: &Config) -> std::result::Result<(), String> {
    let max_limit = crate::protocol::MAX_SEARCH_LIMIT;
    let usize_at_least_1 = [
        ("search.max_repo_hits", config.search.max_repo_hits),
        ("search.max_hits_per_file", config.search.max_hits_per_file),
        ("index.max_chunk_lines", config.index.max_chunk_lines),
        ("index.target_chunk_lines", config.index.target_chunk_lines),
        ("index.batch_max_files", config.index.batch_max_files),
        ("embedding.batch_size", config.embedding.batch_size),
        ("server.max_requests_per_client", config.server.max_requests_per_client),
        ("tests.timeout_secs", config.tests.timeout_secs as usize),
        ("tests.max_output_bytes", config.tests.max_output_bytes as usize),
    ];
    for (key, value) in usize_at_least_1 {
        if value == 0 {
            return Err(format!("{key} = 0: it must be at least 1"));
        }
    }
    if config.search.max_repo_hits > max_limit {
        return Err(format!("search.max_repo_hits = {}: it must be at most {max_limit}", config.search.max_repo_hits));
    }
    let unit = [("search.web_trigger_threshold", config.search.web_trigger_threshold)];
    for (key, value) in unit {
        if !(0.0..=1.0).contains(&value) {
            return Err(format!("{key} = {value}: it is a confidence, between 0 and 1"));
        }
    }
    let non_negative = [
        ("search.fusion_k", config.search.fusion_k),
        ("search.rrf_lexical_weight", config.search.rrf_lexical_weight),
        ("search.rrf_dense_weight", config.search.rrf_dense_weight),
        ("search.concept_weight", config.search.concept_weight),
    ];
    for (key, value) in non_negative {
        if !(value >= 0.0 && value.is_finite()) {
            return Err(format!("{key} = {value}: it must be a number of at least 0"));
        }
    }
    Ok(())
}

/// Settings that parse but cannot work; reported, not fatal (the rest of docdex runs).
pub fn value_warnings(config: &Config) -> Vec<String> {
    let mut warnings = Vec::new();
    if !LOG_LEVELS.contains(&config.core.log_level.trim().to_ascii_lowercase().as_str()) {
        warnings.push(format!(
            "core.log_level `{}` is not a level ({}); using warn",
            config.core.log_level,
            LOG_LEVELS.join(", ")
        ));
    }
    if ProviderKind::parse(&config.llm.provider).is_none() {
        warnings.push(format!(
            "llm.provider `{}` is unknown: chat will fail until it is `ollama` or `openai`",
            config.llm.provider
        ));
    }
    warnings
}

fn apply_env_overrides(config: &mut Config) -> Result<()> {
    for (name, target) in [
        ("DOCDEX_LLM_PROVIDER", &mut config.llm.provider),
        ("DOCDEX_LLM_BASE_URL", &mut config.llm.base_url),
        ("DOCDEX_LLM_MODEL", &mut config.llm.default_model),
    ] {
        if let Some(value) = env_nonempty(name) {
            *target = value.trim().to_string();
        }
    }
    if let Some(dir) = env_nonempty("DOCDEX_STATE_DIR") {
        config.core.global_state_dir = Some(PathBuf::from(dir));
    }
    if let Some(dir) = env_nonempty("DOCDEX_MODELS_DIR") {
        config.embedding.models_dir = Some(PathBuf::from(dir));
    }
    if let Some(level) = env_nonempty("DOCDEX_LOG_LEVEL") {
        config.core.log_level = level;
    }
    if let Some(addr) = env_nonempty("DOCDEX_HTTP_BIND_ADDR") {
        config.server.http_bind_addr = addr;
    }
    if let Some(token) = env_nonempty("DOCDEX_AUTH_TOKEN") {
        config.server.auth_token = Some(token);
    }
    if let Some(roots) = env_nonempty("DOCDEX_ALLOWED_ROOTS") {
        config.repos.allowed_roots.extend(std::env::split_paths(&roots).filter(|p| !p.as_os_str().is_empty()));
    }
    if let Some(value) = env_nonempty("DOCDEX_REQUIRE_TOKEN") {
        config.server.require_token = parse_env_bool("DOCDEX_REQUIRE_TOKEN", &value)?;
    }
    if let Some(value) = env_nonempty("DOCDEX_WEB_TRIGGER_THRESHOLD") {
        config.search.web_trigger_threshold = value.parse().map_err(|_| {
            DocdexError::new(ErrorCode::ConfigInvalid, format!("DOCDEX_WEB_TRIGGER_THRESHOLD={value} is not a number"))
        })?;
    }
    if let Some(url) = env_nonempty("DOCDEX_DDG_BASE_URL") {
        config.web.ddg_base_url = url;
    }
    if let Some(url) = env_nonempty("DOCDEX_DDG_PROXY_BASE_URL") {
        config.web.ddg_proxy_base_url = Some(url);
    }
    if let Some(list) = env_nonempty("DOCDEX_WEB_BLOCKLIST") {
        config.web.blocklist.extend(list.split(',').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()));
    }
    if let Some(path) = env_nonempty("DOCDEX_CHROME_PATH") {
        config.web.chrome_binary_path = Some(PathBuf::from(path));
    }
    for (name, target) in [
        ("DOCDEX_WEB_MIN_SPACING_MS", &mut config.web.min_spacing_ms),
        ("DOCDEX_WEB_REQUEST_DELAY_MS", &mut config.web.request_delay_ms),
    ] {
        if let Some(value) = env_nonempty(name) {
            *target = value.trim().parse().map_err(|_| {
                DocdexError::new(ErrorCode::ConfigInvalid, format!("{name}={value} is not a number of milliseconds"))
            })?;
        }
    }
    if let Some(value) = env_nonempty("DOCDEX_WEB_ENABLED") {
        config.web.enabled = parse_env_bool("DOCDEX_WEB_ENABLED", &value)?;
    }
    // Politeness floors: a lower value is raised (and said so), never obeyed.
    if config.web.min_spacing_ms < MIN_DISCOVERY_SPACING_MS {
        tracing::warn!(configured = config.web.min_spacing_ms, "web.min_spacing_ms raised to the 2000 ms floor");
        config.web.min_spacing_ms = MIN_DISCOVERY_SPACING_MS;
    }
    if config.web.request_delay_ms < MIN_DOMAIN_DELAY_MS {
        tracing::warn!(configured = config.web.request_delay_ms, "web.request_delay_ms raised to the 1000 ms floor");
        config.web.request_delay_ms = MIN_DOMAIN_DELAY_MS;
    }
    if !matches!(config.web.engine.as_str(), "chromium" | "http") {
        return Err(DocdexError::new(
            ErrorCode::ConfigInvalid,
            format!("web.engine `{}` is not one of chromium, http", config.web.engine),
        ));
    }
    config.core.max_concurrent_fetches = config.core.max_concurrent_fetches.clamp(1, 16);
    config.llm.max_answer_tokens = config.llm.max_answer_tokens.max(1);
    config.web.page_load_timeout_secs = config.web.page_load_timeout_secs.max(1);
    if config.server.auth_token.as_deref() == Some("") {
        config.server.auth_token = None;
    }
    config.server.http_bind_addr.parse::<SocketAddr>().map_err(|_| {
        DocdexError::new(
            ErrorCode::ConfigInvalid,
            format!("server.http_bind_addr `{}` is not an address", config.server.http_bind_addr),
        )
        .with_hint("use host:port, e.g. 127.0.0.1:3210")
    })?;
    Ok(())
}

fn parse_env_bool(name: &str, value: &str) -> Result<bool> {
    match value.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(DocdexError::new(ErrorCode::ConfigInvalid, format!("{name}={other} is not true or false"))),
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Which API the configured server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    Ollama,
    #[serde(rename = "openai")]
    OpenAi,
}

impl ProviderKind {
    pub fn parse(name: &str) -> Option<ProviderKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "ollama" => Some(ProviderKind::Ollama),
            "openai" | "openai-compatible" | "openai_compatible" | "llamacpp" | "llama.cpp" => {
                Some(ProviderKind::OpenAi)
            }
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAi => "openai",
        }
    }
}

#[cfg(test)]
mod tests;
