//! Loading the configuration: the file (created with documented defaults on first run),
//! retired keys and changed defaults, range checks, environment overrides, and the daemon's
//! token.

use std::path::{Path, PathBuf};

use super::*;
use crate::protocol::{DocdexError, ErrorCode, Result};

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
pub(super) const CHANGED_DEFAULTS: &[(&str, &str, &str, &str)] = &[
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
        // Zero here would stall or starve the part it sizes: no page fetched, no file read,
        // no answer token, an MCP result of nothing.
        ("core.max_concurrent_fetches", config.core.max_concurrent_fetches),
        ("core.max_open_bytes", config.core.max_open_bytes as usize),
        ("core.max_mounted_repos", config.core.max_mounted_repos),
        ("libs.max_concurrent", config.libs.max_concurrent),
        ("libs.timeout_secs", config.libs.timeout_secs as usize),
        ("libs.max_files_per_library", config.libs.max_files_per_library),
        ("libs.max_bytes_per_library", config.libs.max_bytes_per_library as usize),
        ("index.max_file_size_bytes", config.index.max_file_size_bytes as usize),
        ("index.max_document_bytes", config.index.max_document_bytes as usize),
        ("index.batch_max_bytes", config.index.batch_max_bytes),
        ("index.writer_heap_bytes", config.index.writer_heap_bytes),
        ("index.lmdb_map_bytes", config.index.lmdb_map_bytes),
        ("embedding.max_tokens", config.embedding.max_tokens),
        ("web.page_load_timeout_secs", config.web.page_load_timeout_secs as usize),
        ("web.max_response_bytes", config.web.max_response_bytes),
        ("web.max_pages", config.web.max_pages),
        ("llm.max_answer_tokens", config.llm.max_answer_tokens),
        ("llm.timeout_secs", config.llm.timeout_secs as usize),
        ("server.mcp_max_result_tokens", config.server.mcp_max_result_tokens),
    ];
    for (key, value) in usize_at_least_1 {
        if value == 0 {
            return Err(format!("{key} = 0: it must be at least 1"));
        }
    }
    if config.search.max_repo_hits > max_limit {
        return Err(format!("search.max_repo_hits = {}: it must be at most {max_limit}", config.search.max_repo_hits));
    }
    for (name, repos) in &config.repos.groups {
        if name == crate::protocol::GROUP_ALL {
            return Err(format!(
                "repos.groups.{name}: `{name}` names every repo the daemon serves; give the group another name"
            ));
        }
        if repos.is_empty() {
            return Err(format!("repos.groups.{name} is empty: list the repos' roots"));
        }
        if repos.len() > crate::protocol::MAX_SEARCH_REPOS {
            return Err(format!(
                "repos.groups.{name} lists {} repos: a search covers at most {}",
                repos.len(),
                crate::protocol::MAX_SEARCH_REPOS
            ));
        }
    }
    match config.store.backend.as_str() {
        super::STORE_EMBEDDED => {}
        super::STORE_POSTGRES if config.store.url.trim().is_empty() => return Err(
            "store.backend = \"postgres\" needs store.url (or DOCDEX_STORE_URL): postgres://USER@HOST:PORT/DATABASE"
                .into(),
        ),
        super::STORE_POSTGRES => {}
        other => {
            return Err(format!(
                "store.backend = \"{other}\" is not a backend: \"{}\" or \"{}\"",
                super::STORE_EMBEDDED,
                super::STORE_POSTGRES
            ))
        }
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
        ("search.path_match_weight", config.search.path_match_weight),
        ("search.file_evidence_weight", config.search.file_evidence_weight),
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
    // A root that is no folder serves nothing, silently: most often two roots written as one
    // (`DOCDEX_ALLOWED_ROOTS=/a,/b`), every repo under them then refused as outside.
    for root in &config.repos.allowed_roots {
        if !root.is_dir() {
            warnings.push(format!(
                "repos.allowed_roots `{}` is not a directory: no repo under it is served (DOCDEX_ALLOWED_ROOTS separates roots with `:`)",
                root.display()
            ));
        }
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
    if let Some(url) = env_nonempty("DOCDEX_STORE_URL") {
        // The URL of a store means that store: an embedded backend would ignore it.
        config.store.url = url;
        config.store.backend = super::STORE_POSTGRES.into();
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
