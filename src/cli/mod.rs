//! The `docdexd` command line: argument parsing (no side effects) and one small function per
//! command that calls the ToolDispatcher and renders the answer for a terminal or as JSON.
//!
//! Exit codes follow ripgrep: 0 success (search: hits found), 1 nothing found or a failed
//! check, 2 error.

pub mod allocator;
pub mod args;
pub mod chat;
pub mod check;
pub mod code;
pub mod daemon;
pub mod libs;
pub mod memory;
pub mod output;
pub mod progress;
pub mod setup;
mod store;

use std::path::{Path, PathBuf};

use self::args::{Cli, CollectionAction, Command, DagAction, ModelsAction};
use self::check::{run_check, run_models_install};
use self::daemon::{render_daemon_status, serve};
use self::memory::run_memory;
use self::output::{
    human_bytes, print_out, render_pack, render_search, render_summary, render_waterfall, render_web_fetch,
    render_web_search, report_error, to_json,
};
use self::progress::{embed_with_progress, index_with_progress, spawn_daemon_progress, with_progress};
use self::setup::{mcp_config, run_setup};
use crate::actors::repo_manager::CloseAll;
use crate::actors::scraper::CloseBrowser;
use crate::actors::tool_dispatcher::files::{FilesParams, GetParams, MultiGetParams};
use crate::actors::tool_dispatcher::indexing::StatusParams;
use crate::actors::tool_dispatcher::indexing::StopBackgroundWork;
use crate::actors::tool_dispatcher::pack::PackParams;
use crate::actors::tool_dispatcher::params::{Caller, Tool};
use crate::actors::tool_dispatcher::repos::Mount;
use crate::actors::tool_dispatcher::search::SearchToolParams;
use crate::actors::tool_dispatcher::web::{WebFetchParams, WebSearchParams};
use crate::config::{self, LoadedConfig};
use crate::daemon::client::{self, Backend, DaemonClient, Route};
use crate::protocol::{DocdexError, ErrorCode, GetResult, Result};

/// Whether the command line asked for JSON (`--json`, on any command that takes it).
/// A command's message from its tool's parameters (what a local user may do, all of it).
fn message<T: Tool>(params: T) -> Result<T::Message> {
    let repo_opt = params.repo().map(Path::to_path_buf);
    params.into_message(repo_opt, &Caller::default())
}

fn json_asked() -> bool {
    std::env::args().skip(1).take_while(|a| a != "--").any(|a| a == "--json")
}

/// Reports an error: with `--json`, also as the API's error object on stdout (`{"error":
/// {code, message, hint}}`), so a program reading JSON gets JSON on failure too.
fn report_error_for(err: &DocdexError, json: bool) -> i32 {
    if json {
        if let Ok(text) = to_json(&err.to_json()) {
            let _ = print_out(&text);
        }
    }
    report_error(err)
}

/// The command line, parsed; a misnamed or bad argument is said as clap says it and, with
/// `--json`, also as the API's error object on stdout (exit code 2 either way).
pub fn parse_args() -> std::result::Result<Cli, i32> {
    use clap::error::ErrorKind;
    use clap::Parser;
    match Cli::try_parse() {
        Ok(cli) => Ok(cli),
        Err(err) if matches!(err.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => err.exit(),
        Err(err) => {
            if json_asked() {
                let text = err.render().to_string();
                let message = text.lines().next().unwrap_or("").trim_start_matches("error: ").to_string();
                let error = DocdexError::invalid(message).with_hint("`docdexd <command> --help` lists its arguments");
                if let Ok(json) = to_json(&error.to_json()) {
                    let _ = print_out(&json);
                }
            }
            let _ = err.print();
            Err(2)
        }
    }
}

/// Runs a command and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    // Orphaned helpers of a browser we start come back to us to be reaped (web::browser).
    crate::runner::process::become_subreaper();
    let home = config::docdex_home();
    if let Command::Check { json } = cli.command {
        return run_check(&home, json);
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
            return report_error_for(&err, json_asked());
        }
    };
    init_tracing(&loaded.config.core.log_level);
    for key in &loaded.unknown_keys {
        tracing::warn!(key = %key, file = %loaded.path.display(), "unknown config key ignored");
    }
    for warning in &loaded.warnings {
        tracing::warn!(file = %loaded.path.display(), "{warning}");
    }
    if let Command::Store { action } = cli.command {
        // One-shot and blocking, with no actors: it reads this home's stores directly.
        return store::run_store(&loaded, action).unwrap_or_else(|err| report_error_for(&err, json_asked()));
    }
    let system = actix::System::new();
    let code = system.block_on(async move {
        let code = match run_async(cli.command, loaded).await {
            Ok(code) => code,
            Err(err) => report_error_for(&err, json_asked()),
        };
        // A command refused before any await leaves the actors it started never polled; the
        // runtime's teardown would then start them outside the runtime (a panic in their
        // timers). One turn of the executor starts them while it still runs.
        tokio::task::yield_now().await;
        code
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
        let actors = crate::actors::system::start_actors(&loaded, None);
        let startup = crate::mcp::Startup { notes: Vec::new(), broken_opt: Some(err) };
        match crate::mcp::serve_stdio(actors.dispatcher.clone(), repo_opt, &loaded.config, startup).await {
            Ok(()) => 0,
            Err(err) => report_error(&err),
        }
    })
}

/// What a session should know about this installation (a missing model: search is lexical).
fn installation_notes(loaded: &LoadedConfig) -> Vec<String> {
    let mut notes = Vec::new();
    if loaded.config.embedding.enabled {
        let paths = crate::index::models::ModelPaths::under(&loaded.models_dir());
        if let Some(missing) = paths.missing() {
            // Static vectors distilled before (they need the tokenizer, not the model or its
            // runtime) still answer by meaning.
            let statics = crate::index::static_model::StaticModel::path(&paths).is_file()
                && paths.model_dir.join("tokenizer.json").is_file();
            notes.push(if loaded.config.embedding.static_vectors && statics {
                format!(
                    "the embedding model is incomplete ({} is missing; run `docdexd models install`); \
                     searches by meaning use the static vectors until then",
                    missing.display()
                )
            } else {
                format!(
                    "semantic search is off ({} is missing; run `docdexd models install`); searches are lexical",
                    missing.display()
                )
            });
        }
    }
    notes
}

pub fn init_tracing(level: &str) {
    // A level that is not one (reported by the config's warnings, with its key) logs at warn.
    let level = level.trim().to_ascii_lowercase();
    let level = if config::LOG_LEVELS.contains(&level.as_str()) { level } else { "warn".to_string() };
    let filter = tracing_subscriber::EnvFilter::try_from_env("DOCDEX_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("docdex={level}")));
    // Colours only for a terminal: a daemon's log redirected to a file stays plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // A second init (tests calling `run` twice) is harmless.
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi).try_init();
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
                    let actors = crate::actors::system::start_actors(&loaded, None);
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
        Command::Get { repo, chunk_id, symbol, line_start, line_end, json, path } => {
            let params = GetParams { path, symbol, chunk_id, line_start, line_end, repo: Some(repo) };
            let msg = message(params)?;
            let actors = crate::actors::system::start_actors(&loaded, None);
            let read = actors.dispatcher.send(msg).await?;
            actors.repo_manager.send(CloseAll).await?;
            let text = match read? {
                read if json => to_json(&read)?,
                GetResult::File(content) => format!("{}\n", content.numbered()),
                GetResult::Chunk(chunk) => {
                    format!(
                        "{}:{}-{} [{}]\n{}\n",
                        chunk.path, chunk.line_start, chunk.line_end, chunk.heading, chunk.text
                    )
                }
            };
            print_out(&text)?;
            Ok(0)
        }
        Command::MultiGet { repo, glob, limit, offset, json, paths } => {
            let actors = crate::actors::system::start_actors(&loaded, None);
            let params = MultiGetParams {
                paths: Some(paths),
                glob,
                limit: Some(limit as u64),
                offset: offset.map(|o| o as u64),
                repo: Some(repo),
            };
            let response = actors.dispatcher.send(message(params)?).await??;
            actors.repo_manager.send(CloseAll).await?;
            let text = if json {
                to_json(&response)?
            } else {
                let mut out = String::new();
                for file in &response.files {
                    out.push_str(&format!(
                        "==> {} (lines {}-{} of {})\n{}\n",
                        file.path,
                        file.line_start,
                        file.line_end,
                        file.total_lines,
                        file.numbered()
                    ));
                }
                for missing in &response.missing {
                    out.push_str(&format!("==> {}: {}\n", missing.path, missing.error));
                }
                if let Some(next) = response.next_offset {
                    out.push_str(&format!("… {} files in all; the next ones: --offset {next}\n", response.total));
                }
                out
            };
            print_out(&text)?;
            Ok(if response.files.is_empty() { 1 } else { 0 })
        }
        Command::Files { repo, glob, limit, json } => {
            let actors = crate::actors::system::start_actors(&loaded, None);
            let params =
                FilesParams { glob, limit: Some(limit as u64), offset: None, repo: Some(client::absolute(&repo)) };
            let list = actors.dispatcher.send(message(params)?).await?;
            actors.repo_manager.send(CloseAll).await?;
            let list = list?;
            print_out(&if json {
                to_json(&list)?
            } else {
                let mut out: String = list
                    .files
                    .iter()
                    .map(|f| format!("{}  ({}, {} chunks, {})\n", f.path, f.language, f.chunks, human_bytes(f.size)))
                    .collect();
                if list.truncated {
                    out.push_str(&format!("… {} more (raise --limit)\n", list.total - list.files.len() as u64));
                }
                out
            })?;
            Ok(if list.files.is_empty() { 1 } else { 0 })
        }
        Command::Search { repo, limit, json, mode, explain, source, diff, lib, repos, group, collection, query } => {
            // A collection is searched alone unless a repo is named beside it.
            let beside_collection = collection.is_some() && repo.is_some();
            let repo = client::absolute(&repo.unwrap_or_else(|| PathBuf::from(".")));
            let across = !repos.is_empty() || group.is_some() || collection.is_some();
            let repos: Vec<String> = repos.iter().map(|r| client::absolute(r).display().to_string()).collect();
            let params = SearchToolParams {
                query: query.join(" "),
                limit: limit.map(|l| l as u64),
                offset: None,
                mode: mode.map(|m| m.as_str().to_string()),
                explain: Some(explain),
                source,
                lib,
                diff,
                web_research: None,
                force_web: None,
                repo: (!across || beside_collection).then(|| repo.clone()),
                repos: (!repos.is_empty()).then_some(repos),
                group,
                collection,
            };
            let backend = if across { Backend::connect(&loaded)? } else { Backend::for_repo(&loaded, &repo).await? };
            let response = backend.run(params, Route::Get("/v1/search")).await;
            backend.close().await?;
            let response = response?;
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
            let status = backend.run(StatusParams { repo: Some(repo) }, Route::Get("/v1/status")).await?;
            backend.close().await?;
            let text = if json {
                to_json(&status)?
            } else {
                let state = match (status.indexed, status.interrupted) {
                    _ if status.indexing => "indexing: a run is writing the index now",
                    (_, true) => "interrupted: the last index run did not finish; run `docdexd index` again",
                    (true, false) => "indexed",
                    (false, false) => "not indexed yet",
                };
                let e = &status.embeddings;
                let embeddings = if e.model_available {
                    format!(
                        "{} of {} chunks embedded, {} pending ({}); static vectors {} ({} pending); dense search uses {}",
                        e.embedded, e.total, e.pending, e.model, e.static_vectors, e.static_pending, e.dense_vectors
                    )
                } else if e.dense_vectors == "static" {
                    // Without the model, static vectors (distilled before) still answer by meaning.
                    format!(
                        "static vectors for {} of {} chunks ({} pending), which dense search uses; the model's: {}",
                        e.static_vectors,
                        e.total,
                        e.static_pending,
                        e.notice.as_deref().unwrap_or("model unavailable")
                    )
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
                } + &render_code_status(&status.code)
                    + &render_document_status(&status.documents)
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
            let actors = crate::actors::system::start_daemon_actors(&loaded, repo.clone());
            let default_repo_opt = repo.clone();
            if let Some(repo) = repo {
                // Mounted: the session starts at once, the index run (and watcher) go in the
                // background, and a tool call during a first run waits for it.
                match actors.dispatcher.send(Mount { repo, wait: false }).await? {
                    Ok(mounted) => tracing::info!(repo = %mounted.repo, "repo mounted"),
                    Err(err) => tracing::warn!(error = %err.message, "could not mount the repo"),
                }
            }
            let startup = crate::mcp::Startup { notes: installation_notes(&loaded), broken_opt };
            crate::mcp::serve_stdio(actors.dispatcher.clone(), default_repo_opt, &loaded.config, startup).await?;
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
        Command::Collection { action } => run_collection(&loaded, action).await,
        Command::Memory { action } => run_memory(&loaded, action).await,
        command @ (Command::Symbols { .. }
        | Command::Refs { .. }
        | Command::Callers { .. }
        | Command::Callees { .. }
        | Command::Impact { .. }
        | Command::RunTests { .. }
        | Command::Map { .. }
        | Command::Ast { .. }) => code::run_code(&loaded, command).await,
        Command::Libs { action } => crate::cli::libs::run_libs(&loaded, action).await,
        Command::Crate { action } => crate::cli::libs::run_crate(&loaded, action).await,
        Command::WebSearch { limit, json, query } => {
            // Through a running daemon: one rate-limit gate and one cache for the machine.
            let backend = Backend::connect(&loaded)?;
            let params = WebSearchParams { query: query.join(" "), limit: Some(limit as u64) };
            let result = with_progress("searching the web", backend.run(params, Route::Post("/v1/web/search"))).await;
            backend.close().await?;
            let response = result?;
            print_out(&if json { to_json(&response)? } else { render_web_search(&response) })?;
            Ok(if response.results.is_empty() { 1 } else { 0 })
        }
        Command::WebFetch { refresh, json, url } => {
            let backend = Backend::connect(&loaded)?;
            let params = WebFetchParams { url, refresh: Some(refresh) };
            let result = with_progress("fetching", backend.run(params, Route::Post("/v1/web/fetch"))).await;
            backend.close().await?;
            let response = result?;
            print_out(&if json { to_json(&response)? } else { render_web_fetch(&response) })?;
            Ok(0)
        }
        Command::WebResearch { repo, force_web, limit, mode, json, query } => {
            let repo = client::absolute(&repo);
            // Fetched pages join the repo's index: the daemon holds its writer.
            let backend = Backend::for_repo(&loaded, &repo).await?;
            let params = SearchToolParams {
                query: query.join(" "),
                limit: limit.map(|l| l as u64),
                offset: None,
                mode: mode.map(|m| m.as_str().to_string()),
                explain: None,
                source: None,
                lib: None,
                diff: None,
                web_research: Some(true),
                force_web: Some(force_web),
                repo: Some(repo),
                repos: None,
                group: None,
                collection: None,
            };
            let result = with_progress("answering", backend.web_research(params)).await;
            backend.close().await?;
            let response = result?;
            print_out(&if json { to_json(&response)? } else { render_waterfall(&response) })?;
            Ok(if response.hits.is_empty() { 1 } else { 0 })
        }
        Command::Pack { repo, budget, json, query } => {
            let repo = client::absolute(&repo);
            let params = PackParams { query: query.join(" "), budget_tokens: budget, repo: Some(repo.clone()) };
            let backend = Backend::for_repo(&loaded, &repo).await?;
            let result = with_progress("packing", backend.run(params, Route::Post("/v1/pack"))).await;
            backend.close().await?;
            let pack = result?;
            print_out(&if json { to_json(&pack)? } else { render_pack(&pack) })?;
            Ok(if pack.sections.is_empty() { 1 } else { 0 })
        }
        Command::Chat { repo, query, force_web, diff, model, max_tokens, json } => {
            let options = crate::cli::chat::ChatOptions {
                repo,
                query_opt: query,
                force_web,
                diff_opt: diff
                    .as_deref()
                    .map(|d| crate::protocol::impact::DiffBase::parse(Some(d), false))
                    .transpose()?,
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
        Command::Check { .. } | Command::Models { .. } | Command::Store { .. } => {
            unreachable!("handled before the actors start")
        }
    }
}

/// The `symbols:` lines of `status`: languages read for symbols, those without a grammar.
fn render_code_status(code: &crate::protocol::CodeStatus) -> String {
    let list = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter().map(|(l, n)| format!("{l} {n}")).collect::<Vec<_>>().join(", ")
    };
    let mut out = String::new();
    if !code.languages.is_empty() {
        let note =
            if code.symbols_current { "" } else { " (built by other grammars: the next index run rebuilds them)" };
        out.push_str(&format!("symbols:     {} files{note}\n", list(&code.languages)));
    }
    if !code.without_grammar.is_empty() {
        out.push_str(&format!("no grammar:  {} files (line windows, no symbols)\n", list(&code.without_grammar)));
    }
    out
}

/// The `documents:` lines of `status`: formats indexed, and each document left out with why.
fn render_document_status(documents: &crate::protocol::DocumentStatus) -> String {
    let mut out = String::new();
    if !documents.formats.is_empty() {
        let list = documents.formats.iter().map(|(f, n)| format!("{f} {n}")).collect::<Vec<_>>().join(", ");
        out.push_str(&format!(
            "documents:   {list}
"
        ));
    }
    for skipped in &documents.skipped {
        out.push_str(&format!(
            "skipped:     {}: {}
",
            skipped.path, skipped.reason
        ));
    }
    out
}

/// `docdexd collection add|remove|list`: through the running daemon (which then watches the
/// collection), else in this process.
async fn run_collection(loaded: &LoadedConfig, action: CollectionAction) -> Result<i32> {
    use crate::actors::tool_dispatcher::collections::{
        CollectionAddParams, CollectionListParams, CollectionRemoveParams,
    };
    let backend = Backend::connect(loaded)?;
    let result = match action {
        CollectionAction::Add { name, path, json } => {
            let params = CollectionAddParams { name, path: client::absolute(&path) };
            with_progress("indexing", backend.run(params, Route::Post("/v1/collections"))).await.and_then(|added| {
                Ok(if json {
                    to_json(&added)?
                } else {
                    format!(
                        "collection {} added: {} ({} files, {} chunks)\n",
                        added.name, added.path, added.files, added.chunks
                    )
                })
            })
        }
        CollectionAction::Remove { name, json } => {
            backend.collection_remove(CollectionRemoveParams { name }).await.and_then(|removed| {
                Ok(if json {
                    to_json(&removed)?
                } else {
                    format!("collection {} removed (the folder {} is left as it is)\n", removed.name, removed.path)
                })
            })
        }
        CollectionAction::List { json } => {
            backend.run(CollectionListParams {}, Route::Get("/v1/collections")).await.and_then(|list| {
                Ok(if json {
                    to_json(&list)?
                } else if list.collections.is_empty() {
                    "no collections (add one with `docdexd collection add NAME PATH`)\n".to_string()
                } else {
                    list.collections
                        .iter()
                        .map(|c| match &c.problem {
                            Some(problem) => format!("{}  {}  ({problem})\n", c.name, c.path),
                            None => format!("{}  {}  ({} files, {} chunks)\n", c.name, c.path, c.files, c.chunks),
                        })
                        .collect()
                })
            })
        }
    };
    backend.close().await?;
    print_out(&result?)?;
    Ok(0)
}
