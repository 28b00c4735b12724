//! Typed configuration: `$DOCDEX_HOME/config.toml`, created with documented defaults on first
//! run, with environment overrides applied on top.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

// Defaults the configured layers also use on their own (tests, one-shot tools): they live
// here so that the configuration does not import the layers it configures.

/// Default `[search] expand_concepts`. Concept expansion is off unless configured: on semble's benchmark (repos the list was not
/// written for) it gained nothing in hybrid search (both halves within 0.004) and cost 0.03
/// of success@5 in a search across repos (docs/ranking.md, "The concept list on repos it was
/// not written for").
pub const DEFAULT_EXPAND_CONCEPTS: bool = false;
/// Default `[search] concept_weight`.
pub const DEFAULT_CONCEPT_WEIGHT: f32 = 0.5;
/// Default `[search] path_match_weight`.
pub const DEFAULT_PATH_MATCH_WEIGHT: f32 = 1.0;
/// Default `[search] file_evidence_weight`.
pub const DEFAULT_FILE_EVIDENCE_WEIGHT: f32 = 0.2;
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
    pub store: StoreConfig,
}

/// `[store]`: where repos' indexes and records live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StoreConfig {
    /// `embedded` (Tantivy and LMDB under the state directory) or `postgres` (one
    /// PostgreSQL with pgvector that many daemons share).
    pub backend: String,
    /// The PostgreSQL URL (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`) when `backend`
    /// is `postgres` (`DOCDEX_STORE_URL`, which also selects `postgres`).
    pub url: String,
}

/// `[store] backend` values.
pub const STORE_EMBEDDED: &str = "embedded";
pub const STORE_POSTGRES: &str = "postgres";

impl Default for StoreConfig {
    fn default() -> StoreConfig {
        StoreConfig { backend: STORE_EMBEDDED.into(), url: String::new() }
    }
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
    /// Named sets of repos one search covers (`group=NAME`): `backend = ["/home/me/api",
    /// "/home/me/worker"]`. `all` is taken: every repo the daemon serves.
    pub groups: std::collections::BTreeMap<String, Vec<PathBuf>>,
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
    /// The same for documents (PDF, DOCX, HTML), whose bytes are mostly not text.
    pub max_document_bytes: u64,
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
    /// A query that is one identifier (`Serialize`, `Router::route`) gets the chunks that
    /// define it first, in lexical and hybrid search.
    pub definitions_first: bool,
    /// A plain-words question's candidates in a file whose name or folder names some of its
    /// words gain this share of the best score, times the share named (0: off).
    pub path_match_weight: f32,
    /// A plain-words question's best chunk of each file gains this share of the best score,
    /// times the file's summed candidate scores over the largest file's (0: off).
    pub file_evidence_weight: f32,
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
    /// Static vectors for every chunk within seconds (`index::static_model`).
    pub static_vectors: bool,
    /// The model's vectors, in the background; false: static vectors only.
    pub model_vectors: bool,
    /// Where `docdexd models install` puts the model and ONNX Runtime; unset means
    /// `$DOCDEX_HOME/models`.
    pub models_dir: Option<PathBuf>,
    /// Chunks per inference batch.
    pub batch_size: usize,
    /// Tokens the model sees per chunk (all-MiniLM-L6-v2 was trained on 256).
    pub max_tokens: usize,
    /// ONNX Runtime threads of the embedding model instance.
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
    /// Least time between two discovery requests of this process (never below 2000), from
    /// when the one before was answered.
    pub min_spacing_ms: u64,
    /// Least time between two fetches from one domain (never below 1000), from when the one
    /// before ended.
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
            max_document_bytes: 64 * 1024 * 1024,
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
            expand_concepts: DEFAULT_EXPAND_CONCEPTS,
            expand_embedding: true,
            concept_weight: DEFAULT_CONCEPT_WEIGHT,
            definitions_first: true,
            path_match_weight: DEFAULT_PATH_MATCH_WEIGHT,
            file_evidence_weight: DEFAULT_FILE_EVIDENCE_WEIGHT,
        }
    }
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            enabled: true,
            static_vectors: true,
            model_vectors: true,
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

mod load;
pub use load::*;

#[cfg(test)]
mod tests;
