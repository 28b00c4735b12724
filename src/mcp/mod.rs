//! The MCP adapter: `docdex_*` tools over the ToolDispatcher, served on stdio
//! (`docdexd mcp`) and as streamable HTTP at `/v1/mcp` on the daemon.
//!
//! Thin by design: each tool parses its arguments, sends one dispatcher message and renders
//! the typed answer twice, as a compact text block for the model and as structured content
//! (the same JSON the HTTP API returns) for programs. A docdex error becomes a tool error
//! (`isError: true`) with the message and its hint, never an empty result.

pub mod budget;
pub mod code;
pub mod crates;
mod impact;
pub mod proxy;
pub(crate) mod stdio;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use actix::Addr;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::NotificationContext;
use rmcp::{tool, tool_handler, tool_router, RoleServer, ServerHandler};
use serde::Serialize;

use crate::actors::tool_dispatcher::collections::{CollectionAddParams, CollectionListParams, CollectionRemoveParams};
use crate::actors::tool_dispatcher::files::{self, FilesParams, GetParams, MultiGetParams};
use crate::actors::tool_dispatcher::indexing::{IndexParams, StatusParams};
use crate::actors::tool_dispatcher::libs::LibsFetchParams;
use crate::actors::tool_dispatcher::memory::{self, MemoryRecallParams, MemorySaveParams};
use crate::actors::tool_dispatcher::pack::PackParams;
use crate::actors::tool_dispatcher::params;
use crate::actors::tool_dispatcher::params::{Caller, Tool};
use crate::actors::tool_dispatcher::repos::Mount;
use crate::actors::tool_dispatcher::search::{SearchToolParams, WebResearchParams};
use crate::actors::tool_dispatcher::ToolDispatcher;
use crate::protocol::{DocdexError, Result};

use budget::{respond_fitted, Page};

/// The MCP server: one per session, all sharing the daemon's dispatcher.
#[derive(Clone)]
pub struct DocdexMcp {
    dispatcher: Addr<ToolDispatcher>,
    /// `--repo`, or the first workspace root the client lists.
    default_repo: Arc<RwLock<Option<PathBuf>>>,
    /// True while the client is being asked for its workspace roots: a tool call that needs
    /// the default repo waits for the answer instead of failing.
    roots_pending: Arc<tokio::sync::watch::Sender<bool>>,
    /// Token budget of one tool result (`[server] mcp_max_result_tokens`).
    budget_tokens: usize,
    /// Hits when a search names no `limit`: `[search] max_repo_hits`, as on HTTP and the CLI.
    default_limit: usize,
    /// What is wrong with this installation, for the session's instructions and tool errors.
    startup: Arc<Startup>,
    /// Why `docdex_run_tests` is refused here (a daemon without a token, or exposed).
    run_tests_refusal: Option<DocdexError>,
    /// The default repo is only a fallback (a daemon's `--repo`, for every client): a client
    /// that shares its workspace roots still gets its own workspace.
    roots_first: bool,
    /// Relative paths are refused (`with_absolute_paths`).
    absolute_paths: bool,
}

/// Problems found when the server started. The handshake completes whatever they are: a
/// broken configuration makes every tool answer with its error and fix, a missing model is a
/// note in the instructions (search works lexically).
#[derive(Debug, Default)]
pub struct Startup {
    pub notes: Vec<String>,
    pub broken_opt: Option<DocdexError>,
}

/// How long a tool call waits for the client's roots.
const ROOTS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

fn tool_error(err: &DocdexError) -> CallToolResult {
    let mut text = format!("error ({}): {}", err.code.as_str(), err.message);
    if let Some(hint) = &err.hint {
        text.push_str(&format!("\nhint: {hint}"));
    }
    let mut result = CallToolResult::structured_error(err.to_json());
    result.content = vec![ContentBlock::text(text)];
    result
}

/// A tool's answer: the rendered text for the model plus the value as structured content, or
/// the error as a tool error.
fn respond<T: Serialize>(result: Result<T>, render: impl FnOnce(&T) -> String) -> CallToolResult {
    match result {
        Ok(value) => {
            let text = render(&value);
            tool_ok(&value, text)
        }
        Err(err) => tool_error(&err),
    }
}

fn tool_ok<T: Serialize>(value: &T, text: String) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(json) => {
            let mut result = CallToolResult::structured(json);
            result.content = vec![ContentBlock::text(text)];
            result
        }
        Err(err) => tool_error(&DocdexError::internal(format!("cannot render the result: {err}"))),
    }
}

/// A file range as the model reads it: a header with where the next page starts, then the
/// numbered lines.
fn render_file(content: &crate::protocol::FileContent) -> String {
    let more = if content.line_end < content.total_lines {
        format!(" (more: call again with line_start={})", content.line_end + 1)
    } else {
        String::new()
    };
    format!(
        "{} lines {}-{} of {}{more}\n{}",
        content.path,
        content.line_start,
        content.line_end,
        content.total_lines,
        content.numbered()
    )
}

impl DocdexMcp {
    pub fn new(dispatcher: Addr<ToolDispatcher>, default_repo_opt: Option<PathBuf>, budget_tokens: usize) -> DocdexMcp {
        DocdexMcp {
            dispatcher,
            default_repo: Arc::new(RwLock::new(default_repo_opt)),
            roots_pending: Arc::new(tokio::sync::watch::channel(false).0),
            budget_tokens,
            default_limit: crate::config::SearchConfig::default().max_repo_hits,
            startup: Arc::default(),
            run_tests_refusal: None,
            roots_first: false,
            absolute_paths: false,
        }
    }

    /// Hits when a search names no `limit` (`[search] max_repo_hits`).
    /// This server refusing `docdex_run_tests` with `refusal_opt`'s error.
    pub fn with_run_tests_refusal(mut self, refusal_opt: Option<DocdexError>) -> DocdexMcp {
        self.run_tests_refusal = refusal_opt;
        self
    }

    pub fn with_default_limit(mut self, limit: usize) -> DocdexMcp {
        self.default_limit = limit;
        self
    }

    /// This server with its default repo as a fallback behind the client's workspace roots.
    pub fn with_roots_first(mut self) -> DocdexMcp {
        self.roots_first = true;
        self
    }

    /// This server for clients in other processes (over HTTP): the paths they name must be
    /// absolute, since the daemon's working directory is not theirs.
    pub fn with_absolute_paths(mut self) -> DocdexMcp {
        self.absolute_paths = true;
        self
    }

    /// A default repo the session keeps whatever the client's roots say.
    fn has_firm_default(&self) -> bool {
        !self.roots_first && self.default_repo.read().ok().is_some_and(|r| r.is_some())
    }

    /// This server, knowing what is wrong with the installation.
    pub fn with_startup(mut self, startup: Startup) -> DocdexMcp {
        self.startup = Arc::new(startup);
        self
    }

    /// The repo a call is about: its own `repo`, else the session default.
    async fn repo_of(&self, named: Option<&Path>) -> Result<PathBuf> {
        if let Some(broken) = &self.startup.broken_opt {
            return Err(broken.clone());
        }
        if let Some(path) = named.filter(|p| !p.to_string_lossy().trim().is_empty()) {
            if self.absolute_paths {
                params::absolute(path)?;
            }
            return Ok(path.to_path_buf());
        }
        let mut pending = self.roots_pending.subscribe();
        let _ = tokio::time::timeout(ROOTS_WAIT, pending.wait_for(|p| !p)).await;
        self.default_repo.read().ok().and_then(|r| r.clone()).ok_or_else(|| {
            DocdexError::invalid("no repo: pass repo")
                .with_hint("give repo (the repository root), or start the server with --repo")
        })
    }

    /// What this session may do (`Tool::into_message` checks it).
    fn caller(&self) -> Caller {
        Caller { run_tests_refusal: self.run_tests_refusal.clone() }
    }

    /// A tool call through its declared parameters, in the session's repo unless it names one.
    async fn run<T: Tool>(&self, params: T) -> Result<T::Output>
    where
        ToolDispatcher: actix::Handler<T::Message>,
    {
        if self.absolute_paths {
            params::absolute_paths(&params)?;
        }
        let repo_opt = if params.needs_repo() {
            Some(self.repo_of(params.repo()).await?)
        } else {
            // Not waited for: the call goes on without a repo.
            params.repo().map(Path::to_path_buf).or_else(|| self.default_repo.read().ok().and_then(|r| r.clone()))
        };
        let msg = params.into_message(repo_opt, &self.caller())?;
        self.call(msg).await
    }

    async fn call<M, T>(&self, msg: M) -> Result<T>
    where
        M: actix::Message<Result = Result<T>> + Send + 'static,
        T: Send + 'static,
        ToolDispatcher: actix::Handler<M>,
    {
        self.dispatcher.send(msg).await?
    }
}

#[tool_router]
impl DocdexMcp {
    #[tool(
        description = "Search the repository's code and docs (BM25 + embeddings). Example: {\"query\": \"where are auth tokens refreshed\", \"limit\": 5}. Returns ranked hits: path, line_start-line_end, score, heading (symbol or section) and a snippet; read a hit with docdex_get."
    )]
    async fn docdex_search(&self, Parameters(params): Parameters<SearchToolParams>) -> CallToolResult {
        let page = Page {
            offset: params::offset(params.offset),
            limit: params.limit.map_or(self.default_limit, |l| l as usize),
            cap: crate::protocol::MAX_SEARCH_LIMIT,
        };
        let result = self.run(params).await;
        respond_fitted(result, page, self.budget_tokens, |response| {
            let mut text = String::new();
            if let Some(notice) = &response.notice {
                text.push_str(&format!("note: {notice}\n"));
            }
            if response.hits.is_empty() {
                text.push_str(&format!("no hits for \"{}\"", response.query));
            }
            for (n, hit) in response.hits.iter().enumerate() {
                let heading = if hit.heading.is_empty() { String::new() } else { format!(" [{}]", hit.heading) };
                let n = page.offset + n + 1;
                text.push_str(&format!("{n}. {}{heading}\n", hit.location()));
                for line in hit.snippet.lines() {
                    text.push_str(&format!("   {line}\n"));
                }
            }
            text
        })
    }

    #[tool(
        description = "Research a question: search the repository first and, when its answer is weak (or force_web is true), search the web, fetch the best pages, and return the repo's hits followed by web hits (source \"web\", url, title, fetched_at). Web pages are kept in this repo's index for later searches. Example: {\"query\": \"how do I configure an nginx reverse proxy\"}. Slow when it goes to the web (seconds: requests are rate-limited)."
    )]
    async fn docdex_web_research(&self, Parameters(params): Parameters<WebResearchParams>) -> CallToolResult {
        // Web hits come after the local ones: a page is counted over the merged list.
        let page = Page { offset: params::offset(params.offset), limit: usize::MAX, cap: usize::MAX };
        let result = self.run(params).await;
        respond_fitted(result, page, self.budget_tokens, |response| {
            let gate = &response.gate;
            let mut text = format!(
                "gate: {} (local confidence {:.2}, threshold {:.2}{})\n",
                gate.decision,
                gate.top_score,
                gate.threshold,
                if gate.forced { ", forced" } else { "" }
            );
            if let Some(notice) = &response.notice {
                text.push_str(&format!("note: {notice}\n"));
            }
            for (n, hit) in response.hits.iter().enumerate() {
                let place = match &hit.url {
                    Some(url) => format!("[web] {url}"),
                    None => hit.location(),
                };
                let heading = if hit.heading.is_empty() { String::new() } else { format!(" [{}]", hit.heading) };
                text.push_str(&format!("{}. {place}{heading}\n", page.offset + n + 1));
                for line in hit.snippet.lines() {
                    text.push_str(&format!("   {line}\n"));
                }
            }
            text
        })
    }

    #[tool(
        description = "Read an indexed file: lines by path (numbered, at most 400; read on from line_end + 1), the span of a symbol (a function, type or heading name), or one chunk by the chunk_id a search hit gave. Example: {\"path\": \"src/lib.rs\", \"line_start\": 10, \"line_end\": 60}, {\"symbol\": \"Router::route\"} or {\"chunk_id\": 42}."
    )]
    async fn docdex_get(&self, Parameters(params): Parameters<GetParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond_fitted(result, Page::SINGLE, self.budget_tokens, |read| match read {
            crate::protocol::GetResult::File(file) => render_file(file),
            crate::protocol::GetResult::Chunk(chunk) => format!(
                "{}:{}-{} [{}] (chunk {})\n{}",
                chunk.path, chunk.line_start, chunk.line_end, chunk.heading, chunk.chunk_id, chunk.text
            ),
        })
    }

    #[tool(
        description = "Read several files at once, by a list of paths or a glob (each at most 400 lines; paged with offset). Example: {\"glob\": \"docs/*.md\", \"limit\": 5}. Paths that cannot be read are listed under missing."
    )]
    async fn docdex_multi_get(&self, Parameters(params): Parameters<MultiGetParams>) -> CallToolResult {
        let page = Page {
            offset: params::offset(params.offset),
            limit: params.limit.map_or(files::DEFAULT_MULTI_GET, |l| l as usize),
            cap: crate::protocol::MAX_MULTI_GET,
        };
        let result = self.run(params).await;
        respond_fitted(result, page, self.budget_tokens, |response| {
            let mut text = String::new();
            for file in &response.files {
                text.push_str(&render_file(file));
                text.push_str("\n\n");
            }
            for missing in &response.missing {
                text.push_str(&format!("{}: {}\n", missing.path, missing.error));
            }
            text
        })
    }

    #[tool(
        description = "List indexed files, optionally matching a glob. Example: {\"glob\": \"src/**/*.rs\"}. Returns paths with language, chunk count and size."
    )]
    async fn docdex_files(&self, Parameters(params): Parameters<FilesParams>) -> CallToolResult {
        let page = Page {
            offset: params::offset(params.offset),
            limit: params.limit.map_or(files::DEFAULT_FILES_LIMIT, |l| l as usize),
            cap: usize::MAX,
        };
        let result = self.run(params).await;
        respond_fitted(result, page, self.budget_tokens, |list| {
            let mut text = format!("{} files{}\n", list.total, if list.truncated { " (list truncated)" } else { "" });
            for file in &list.files {
                text.push_str(&format!("{} ({})\n", file.path, file.language));
            }
            text
        })
    }

    #[tool(
        description = "Index the repository, or refresh its index (only changed files are re-read). Example: {\"repo\": \"/home/me/project\"}. Returns counts of files and chunks; embeddings follow in the background."
    )]
    async fn docdex_index(&self, Parameters(params): Parameters<IndexParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond(result, |s| {
            let text = format!(
                "indexed {}: {} files scanned, {} indexed, {} unchanged, {} deleted; {} chunks in {:.1} s",
                s.repo, s.files_scanned, s.files_indexed, s.files_unchanged, s.files_deleted, s.chunks_total, s.seconds
            );
            text
        })
    }

    #[tool(
        description = "Fetch the docs of the repository's dependencies (Cargo, npm, Python manifests and lockfiles, at the locked versions) and index them with the repo, so docdex_search answers library questions (source \"library\"; filter with lib). Example: {\"libs\": [\"serde\"]}. Slow the first time (downloads, rustdoc builds; seconds to minutes: if the call times out, the fetch goes on and a later call finds the finished libraries cached); later calls come from the machine-wide cache. Returns each library with its version and origin, and the failures with reasons."
    )]
    async fn docdex_libs_fetch(&self, Parameters(params): Parameters<LibsFetchParams>) -> CallToolResult {
        let result = self.run(params).await;
        // No pages: a list cut to fit says how many libraries there were in its text.
        let page = Page { offset: 0, limit: usize::MAX, cap: 0 };
        respond_fitted(result, page, self.budget_tokens, |s| {
            let mut text = format!(
                "{} libraries indexed ({} fetched, {} from cache, {} failed); {} chunks written, {} waiting for embeddings\n",
                s.fetched + s.from_cache,
                s.fetched,
                s.from_cache,
                s.failed.len(),
                s.chunks_written,
                s.chunks_pending
            );
            for lib in &s.libraries {
                text.push_str(&format!(
                    "- {} {}@{} ({}, {} docs)\n",
                    lib.ecosystem, lib.name, lib.version, lib.origin, lib.docs
                ));
            }
            for failure in &s.failed {
                text.push_str(&format!("- FAILED {} {}: {}\n", failure.name, failure.version, failure.reason));
            }
            text
        })
    }

    #[tool(
        description = "What is indexed for the repository: files, chunks, embeddings done and pending, last run. Example: {}. Call before searching a repo you have not indexed."
    )]
    async fn docdex_status(&self, Parameters(params): Parameters<StatusParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond(result, |s| {
            let text = format!(
                "{}: {} files, {} chunks, {} of {} embedded ({} pending, {} with static vectors; dense search uses {}), last completed {}",
                s.repo,
                s.files,
                s.chunks,
                s.embeddings.embedded,
                s.embeddings.total,
                s.embeddings.pending,
                s.embeddings.static_vectors,
                s.embeddings.dense_vectors,
                s.last_index_completed.as_deref().unwrap_or("never")
            );
            text
        })
    }

    #[tool(
        description = "Register a folder outside any repository (notes, an exported wiki, specs) as a named collection: it is indexed now, watched from then on, and searched with docdex_search's `collection`. Example: {\"name\": \"notes\", \"path\": \"/home/me/notes\"}."
    )]
    async fn docdex_collection_add(&self, Parameters(params): Parameters<CollectionAddParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond(result, |c| format!("collection {} added: {} ({} files, {} chunks)", c.name, c.path, c.files, c.chunks))
    }

    #[tool(description = "Forget a collection by name (its folder is left as it is). Example: {\"name\": \"notes\"}.")]
    async fn docdex_collection_remove(&self, Parameters(params): Parameters<CollectionRemoveParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond(result, |c| format!("collection {} removed ({})", c.name, c.path))
    }

    #[tool(
        description = "The collections (named folders searched like repositories), with what their indexes hold. Example: {}."
    )]
    async fn docdex_collection_list(&self, Parameters(params): Parameters<CollectionListParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond(result, |list| {
            if list.collections.is_empty() {
                return "no collections".to_string();
            }
            let lines: Vec<String> = list
                .collections
                .iter()
                .map(|c| match &c.problem {
                    Some(problem) => format!("{}: {} ({problem})", c.name, c.path),
                    None => format!("{}: {} ({} files, {} chunks)", c.name, c.path, c.files, c.chunks),
                })
                .collect();
            lines.join("\n")
        })
    }

    #[tool(
        description = "Remember a note about this repository for later sessions. Example: {\"text\": \"Auth tokens are refreshed in src/auth/refresh.rs\", \"metadata\": {\"topic\": \"auth\"}}. Returns the memory id."
    )]
    async fn docdex_memory_save(&self, Parameters(params): Parameters<MemorySaveParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond(result, |item| {
            let text = format!("saved memory #{}", item.id);
            text
        })
    }

    #[tool(
        description = "A context pack for a question or task: the best sections of the repository (its saved notes first, then code and docs, then its libraries' docs), none repeated, fitted to budget_tokens, with a line saying what they save against the whole files. Example: {\"query\": \"how are refunds computed\", \"budget_tokens\": 3000}."
    )]
    async fn docdex_pack(&self, Parameters(params): Parameters<PackParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond_fitted(result, Page::SINGLE, self.budget_tokens, |pack| {
            let mut text = String::new();
            for s in &pack.sections {
                let place = if s.kind == "memory" {
                    s.heading_path.clone()
                } else {
                    format!("{}:{}-{} [{}]", s.path, s.start_line, s.end_line, s.heading_path)
                };
                text.push_str(&format!("==> {place}\n{}\n\n", s.text));
            }
            text.push_str(&pack.summary);
            text
        })
    }

    #[tool(
        description = "Recall notes saved for this repository, most similar first. Example: {\"query\": \"how does auth work\", \"k\": 3}. Returns items with id, text, metadata, created_at and score."
    )]
    async fn docdex_memory_recall(&self, Parameters(params): Parameters<MemoryRecallParams>) -> CallToolResult {
        let page = Page {
            offset: params::offset(params.offset),
            limit: params.limit.map_or(memory::DEFAULT_RECALL, |l| l as usize),
            cap: crate::protocol::MAX_MEMORY_RECALL,
        };
        let result = self.run(params).await;
        respond_fitted(result, page, self.budget_tokens, |response| {
            let mut text = String::new();
            if let Some(notice) = &response.notice {
                text.push_str(&format!("note: {notice}\n"));
            }
            if response.items.is_empty() {
                text.push_str("no memories match");
            }
            for item in &response.items {
                text.push_str(&format!("#{} ({:.2}) {}\n", item.id, item.score.unwrap_or(0.0), item.text));
            }
            text
        })
    }
}

/// Older tool names, still answered (clients and prompts written against them keep working)
/// but no longer listed: one name per idea in the list an agent reads.
const TOOL_ALIASES: [(&str, &str); 3] = [
    ("docdex_open", "docdex_get"),
    ("docdex_item_doc", "docdex_crate_item"),
    ("docdex_module_tree", "docdex_crate_modules"),
];

fn tool_alias(name: &str) -> Option<&'static str> {
    TOOL_ALIASES.iter().find(|(old, _)| *old == name).map(|(_, new)| *new)
}

/// A call to a tool nobody serves: its name, the closest tool's, and the list (the SDK says
/// only "tool not found").
fn unknown_tool(name: &str) -> String {
    let mut tools: Vec<&str> = DocdexMcp::router().map.keys().map(|k| k.as_ref()).collect();
    tools.sort_unstable();
    let guess = crate::protocol::error::closest_parameter(name, &tools)
        .map(|t| format!("; did you mean \"{t}\"?"))
        .unwrap_or_default();
    format!("unknown tool \"{name}\"{guess} (tools: {})", tools.join(", "))
}

/// The arguments whose JSON type is not the one the tool's schema gives them, each named with
/// what it should be: serde's message ("invalid type: integer `5`, expected a string") does not
/// say which argument it means. None when every argument has its type.
fn mistyped_arguments(
    schema: &serde_json::Map<String, serde_json::Value>,
    arguments_opt: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Option<String> {
    use serde_json::Value;
    let properties = schema.get("properties")?.as_object()?;
    let wrong: Vec<String> = arguments_opt?
        .iter()
        .filter_map(|(name, value)| {
            let expected = properties.get(name)?.get("type")?.as_str()?;
            let fits = match (expected, value) {
                (_, Value::Null) => true,
                ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("number", Value::Number(_)) => true,
                ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
                ("array", Value::Array(_)) | ("object", Value::Object(_)) => true,
                _ => false,
            };
            let article = if expected.starts_with(['a', 'i', 'o']) { "an" } else { "a" };
            let mut shown = value.to_string();
            if shown.chars().count() > 60 {
                shown = format!("{}…", shown.chars().take(60).collect::<String>());
            }
            (!fits).then(|| format!("\"{name}\" must be {article} {expected}, not {shown}"))
        })
        .collect();
    (!wrong.is_empty()).then(|| format!("invalid argument: {}", wrong.join("; ")))
}

#[tool_handler(router = Self::router())]
impl ServerHandler for DocdexMcp {
    /// The router's call, with an unknown argument's error naming the closest one the tool
    /// takes (as the HTTP API does): the SDK's message only lists them.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<RoleServer>,
    ) -> std::result::Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let mut request = request;
        if let Some(name) = tool_alias(&request.name) {
            request.name = name.into();
        }
        let Some(route) = Self::router().map.get(request.name.as_ref()) else {
            return Err(rmcp::ErrorData::invalid_params(unknown_tool(&request.name), None));
        };
        let schema = Arc::clone(&route.attr.input_schema);
        let arguments = request.arguments.clone();
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let name_it = |message: &str| {
            DocdexError::unknown_parameter(message).map(|named| {
                let hint = named.hint.map(|h| format!(" ({})", h.replace("this endpoint", "this tool")));
                format!("{}{}", named.message, hint.unwrap_or_default())
            })
        };
        match Self::router().call(tcc).await {
            // The SDK answers arguments that do not deserialize with a tool error.
            Ok(rmcp::model::CallToolResponse::Complete(mut result)) if result.is_error == Some(true) => {
                for block in &mut result.content {
                    let text = block.as_text().map(|t| t.text.clone()).unwrap_or_default();
                    // The SDK's own detail kept after the names (the lenient values' words).
                    let mistyped = || {
                        let detail =
                            text.strip_prefix("failed to deserialize parameters")?.trim_start_matches([':', ' ']);
                        mistyped_arguments(&schema, arguments.as_ref()).map(|named| format!("{named} ({detail})"))
                    };
                    if let Some(named) = name_it(&text).or_else(mistyped) {
                        *block = ContentBlock::text(named);
                    }
                }
                Ok(rmcp::model::CallToolResponse::Complete(result))
            }
            Err(mut err) => {
                if let Some(named) = name_it(&err.message) {
                    err.message = named.into();
                }
                Err(err)
            }
            other => other,
        }
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: rmcp::service::RequestContext<RoleServer>,
    ) -> std::result::Result<rmcp::model::InitializeResult, rmcp::ErrorData> {
        // A client that will be asked for its roots (in `on_initialized`) may call a tool
        // before it has answered: from here on, such calls wait for the answer.
        if !self.has_firm_default() && request.capabilities.roots.is_some() {
            self.roots_pending.send_replace(true);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    fn get_info(&self) -> ServerConfig {
        let mut instructions = String::from(
            "docdex searches this repository's code and docs locally. Start with docdex_search; open hits with \
             docdex_get; save what you learn with docdex_memory_save and recall it with docdex_memory_recall. \
             Long results come in pages: call again with the offset (or line_start) they name.",
        );
        if let Some(broken) = &self.startup.broken_opt {
            instructions.push_str(&format!("\n\ndocdex cannot work until this is fixed: {}", broken.message));
            if let Some(hint) = &broken.hint {
                instructions.push_str(&format!(" (fix: {hint})"));
            }
        }
        for note in &self.startup.notes {
            instructions.push_str(&format!("\n\nNote: {note}"));
        }
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("docdex", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.has_firm_default() {
            return;
        }
        // A client that shares its workspace roots gives the session its default repo.
        let supports_roots = context.peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        if !supports_roots {
            return;
        }
        // Roots are deprecated in the newest protocol revision but are what today's editors
        // send to say which workspace they have open.
        self.roots_pending.send_replace(true);
        let _done = RootsDone(Arc::clone(&self.roots_pending));
        #[allow(deprecated)]
        match context.peer.list_roots().await {
            #[allow(deprecated)]
            Ok(roots) => {
                let first = roots.roots.iter().find_map(|root| root.uri.strip_prefix("file://").map(PathBuf::from));
                if let (Some(path), Ok(mut default)) = (first, self.default_repo.write()) {
                    tracing::info!(repo = %path.display(), "default repo from the client's workspace roots");
                    *default = Some(path.clone());
                    // Mounted now, so its index run is under way before the first tool call
                    // (which waits for it). A path the daemon may not serve is refused there.
                    let mount = self.dispatcher.send(Mount { repo: path, wait: false });
                    tokio::spawn(async move {
                        if let Ok(Err(err)) = mount.await {
                            tracing::warn!(error = %err.message, "could not mount the workspace root");
                        }
                    });
                }
            }
            Err(err) => tracing::debug!(error = %err, "client listed no roots"),
        }
    }
}

impl DocdexMcp {
    /// The tools, with input schemas every client accepts (built once).
    fn router() -> &'static ToolRouter<DocdexMcp> {
        static ROUTER: std::sync::OnceLock<ToolRouter<DocdexMcp>> = std::sync::OnceLock::new();
        ROUTER.get_or_init(|| {
            let mut router = DocdexMcp::tool_router()
                + DocdexMcp::crate_tool_router()
                + DocdexMcp::code_tool_router()
                + DocdexMcp::impact_tool_router();
            for route in router.map.values_mut() {
                let mut schema = serde_json::Value::Object((*route.attr.input_schema).clone());
                flatten_schema(&mut schema);
                // A tool without parameters still lists its (empty) properties: some clients
                // read `properties` of every object schema.
                if let serde_json::Value::Object(map) = &mut schema {
                    map.entry("properties").or_insert_with(|| serde_json::json!({}));
                }
                if let serde_json::Value::Object(flat) = schema {
                    route.attr.input_schema = Arc::new(flat);
                }
            }
            router
        })
    }
}

/// Rewrites a JSON Schema into the flat form the strictest clients take: an optional field
/// is simply not required (no `["integer", "null"]` union types, no `anyOf`/`oneOf` with a
/// null branch, no `null` defaults), and no `$schema` key. Some clients reject unions
/// (Gemini), others rewrite them into strings (Codex).
pub fn flatten_schema(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            map.remove("$schema");
            map.remove("nullable");
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(branches)) = map.get(key) else { continue };
                let mut kept: Vec<Value> =
                    branches.iter().filter(|b| b.get("type") != Some(&Value::from("null"))).cloned().collect();
                if kept.len() == 1 {
                    map.remove(key);
                    if let Value::Object(inner) = kept.remove(0) {
                        for (k, v) in inner {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            }
            if let Some(Value::Array(types)) = map.get("type") {
                let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                if kept.len() == 1 {
                    let only = kept[0].clone();
                    map.insert("type".into(), only);
                }
            }
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            for child in map.values_mut() {
                flatten_schema(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(flatten_schema),
        _ => {}
    }
}

/// Clears `roots_pending` however the roots request ends.
struct RootsDone(Arc<tokio::sync::watch::Sender<bool>>);

impl Drop for RootsDone {
    fn drop(&mut self) {
        self.0.send_replace(false);
    }
}

/// Serves MCP on stdin/stdout until the client disconnects.
pub async fn serve_stdio(
    dispatcher: Addr<ToolDispatcher>,
    default_repo_opt: Option<PathBuf>,
    config: &crate::config::Config,
    startup: Startup,
) -> Result<()> {
    use rmcp::ServiceExt;
    let stdio::Relay { rmcp_in, rmcp_out, stdin_reader, stdout_writer } = stdio::relay();
    let server = DocdexMcp::new(dispatcher, default_repo_opt, config.server.mcp_max_result_tokens)
        .with_default_limit(config.search.max_repo_hits)
        .with_startup(startup)
        .serve((rmcp_in, rmcp_out))
        .await
        .map_err(|err| DocdexError::internal(format!("MCP session failed to start: {err}")))?;
    let ended = server.waiting().await;
    stdin_reader.abort();
    // Everything rmcp wrote (its end is closed now) reaches stdout before the process exits.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), stdout_writer).await;
    ended.map_err(|err| DocdexError::internal(format!("MCP session ended abnormally: {err}")))?;
    Ok(())
}

#[cfg(test)]
mod schema_tests {
    use super::*;

    /// Every place a schema could hold a union: none may be left.
    fn unions(value: &serde_json::Value, at: &str, found: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for key in ["anyOf", "oneOf", "allOf"] {
                    if map.contains_key(key) {
                        found.push(format!("{at}: {key}"));
                    }
                }
                match map.get("type") {
                    Some(serde_json::Value::Array(_)) => found.push(format!("{at}: type list")),
                    Some(t) if t == "null" => found.push(format!("{at}: null type")),
                    _ => {}
                }
                for (key, child) in map {
                    unions(child, &format!("{at}.{key}"), found);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| unions(i, at, found)),
            _ => {}
        }
    }

    #[test]
    fn every_tool_schema_is_flat_typed_and_bounded() {
        let tools = DocdexMcp::router().list_all();
        assert!(tools.len() >= 8);
        for tool in &tools {
            let schema = serde_json::Value::Object((*tool.input_schema).clone());
            let mut found = Vec::new();
            unions(&schema, &tool.name, &mut found);
            assert!(found.is_empty(), "{found:?} in {schema}");
            assert_eq!(schema["type"], "object", "{schema}");
            assert!(schema.get("$schema").is_none());
            for (name, property) in schema["properties"].as_object().unwrap() {
                assert!(property["type"].is_string(), "{}.{name} has no single type: {property}", tool.name);
            }
        }
        let search = tools.iter().find(|t| t.name == "docdex_search").unwrap();
        let schema = serde_json::Value::Object((*search.input_schema).clone());
        assert_eq!(schema["properties"]["mode"]["enum"], serde_json::json!(["lexical", "dense", "hybrid"]));
        assert_eq!(
            (schema["properties"]["limit"]["minimum"].as_u64(), schema["properties"]["limit"]["maximum"].as_u64()),
            (Some(1), Some(200))
        );
        assert_eq!(schema["required"], serde_json::json!(["query"]));
    }
}
