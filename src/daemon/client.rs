//! Where a CLI command runs: through the daemon serving this `DOCDEX_HOME` when one is running
//! (or `DOCDEX_HTTP_BASE_URL` names one), else in this process. Both answer with the same
//! protocol types, so the output and exit codes are the same either way, and a user who runs
//! `docdexd index` while the daemon serves the repo is not told the index is locked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::actors::repo_manager::CloseAll;
use crate::actors::scraper::CloseBrowser;
use crate::actors::tool_dispatcher::collections::CollectionRemoveParams;
use crate::actors::tool_dispatcher::indexing::StatusParams;
use crate::actors::tool_dispatcher::memory::MemoryDeleteParams;
use crate::actors::tool_dispatcher::params::{Caller, Tool};
use crate::actors::tool_dispatcher::search::SearchToolParams;
use crate::actors::tool_dispatcher::ToolDispatcher;
use crate::config::{self, LoadedConfig};
use crate::llm::Usage;
use crate::protocol::{
    ChatContext, ChatRequest, Collection, DaemonStatus, DocdexError, ErrorCode, IndexSummary, LibsFetchRequest,
    LibsFetchSummary, MemoryDeleted, MountedRepo, RepoStatus, Result, WaterfallResponse,
};

/// Names a daemon to use instead of the one found through the lock file.
pub const BASE_URL_ENV: &str = "DOCDEX_HTTP_BASE_URL";

/// A running daemon, reached over loopback HTTP with the home's token.
#[derive(Clone)]
pub struct DaemonClient {
    base_url: String,
    token_opt: Option<String>,
    http: reqwest::Client,
    /// The daemon found through the lock file (none when `DOCDEX_HTTP_BASE_URL` names one).
    info_opt: Option<crate::daemon::lock::DaemonInfo>,
}

/// The daemon read its configuration when it started; a command that goes through it after
/// an edit would otherwise act on the old settings without a word (a changed `[llm]`
/// server, a web tier turned off).
fn warn_if_config_is_newer(loaded: &LoadedConfig, daemon: &crate::daemon::lock::DaemonInfo) {
    let modified_secs = std::fs::metadata(&loaded.path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    if modified_secs.is_some_and(|secs| secs > daemon.started_at) {
        eprintln!(
            "warning: {} changed after the daemon started (pid {}); it still uses the settings it read then: \
             restart it to apply them (`kill {}`, then `docdexd daemon` again)",
            loaded.path.display(),
            daemon.pid,
            daemon.pid
        );
    }
}

/// A tool's route on the daemon's HTTP API.
#[derive(Debug, Clone, Copy)]
pub enum Route {
    /// Parameters in the query string.
    Get(&'static str),
    /// Parameters as the JSON body.
    Post(&'static str),
}

/// Where commands run.
pub enum Backend {
    Daemon(DaemonClient),
    Local(crate::actors::system::Actors),
}

impl DaemonClient {
    /// The daemon for this home, if one is running (or `DOCDEX_HTTP_BASE_URL` is set).
    pub fn find(loaded: &LoadedConfig) -> Result<Option<DaemonClient>> {
        let found = DaemonClient::find_quietly(loaded)?;
        if let Some(client) = &found {
            client.warn_if_config_is_newer(loaded);
        }
        Ok(found)
    }

    /// `find`, without the warning about a config edited since the daemon started: for a
    /// caller that may not use the daemon after all (it says so when it does).
    fn find_quietly(loaded: &LoadedConfig) -> Result<Option<DaemonClient>> {
        let (base_url, info_opt) = match std::env::var(BASE_URL_ENV).ok().filter(|u| !u.trim().is_empty()) {
            Some(url) => (url.trim().trim_end_matches('/').to_string(), None),
            None => match crate::daemon::lock::running(&loaded.home) {
                Some(info) => (info.base_url.clone(), Some(info)),
                None => return Ok(None),
            },
        };
        let token_opt = config::daemon_token(loaded)?;
        // Index runs of large repos take minutes: only connecting is bounded.
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|err| DocdexError::internal(format!("cannot build the HTTP client: {err}")))?;
        Ok(Some(DaemonClient { base_url, token_opt, http, info_opt }))
    }

    fn warn_if_config_is_newer(&self, loaded: &LoadedConfig) {
        if let Some(info) = &self.info_opt {
            warn_if_config_is_newer(loaded, info);
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn token(&self) -> Option<&str> {
        self.token_opt.as_deref()
    }

    /// Mounts a repo in the daemon (its index run and watcher start).
    pub async fn mount(&self, repo: &Path) -> Result<MountedRepo> {
        self.call(self.http.post(self.url("/v1/initialize")).json(&serde_json::json!({ "repo": repo }))).await
    }

    async fn call<T: DeserializeOwned>(&self, request: reqwest::RequestBuilder) -> Result<T> {
        let request = match &self.token_opt {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        let response = request.send().await.map_err(|err| self.unreachable(err))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|err| DocdexError::internal(format!("the daemon's answer broke off: {err}")))?;
        if status.is_success() {
            return serde_json::from_slice(&body)
                .map_err(|err| DocdexError::internal(format!("unexpected answer from the daemon: {err}")));
        }
        #[derive(serde::Deserialize)]
        struct ErrorBody {
            error: DocdexError,
        }
        Err(serde_json::from_slice::<ErrorBody>(&body).map(|b| b.error).unwrap_or_else(|_| {
            DocdexError::internal(format!("the daemon answered {status}: {}", String::from_utf8_lossy(&body)))
        }))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// A tool call over the daemon's API: its parameters as the query string (GET) or the
    /// JSON body (POST) of its route.
    pub async fn run<T: Tool + Serialize>(&self, params: &T, route: Route) -> Result<T::Output>
    where
        T::Output: DeserializeOwned,
    {
        let request = match route {
            Route::Get(path) => self.http.get(self.url(path)).query(params),
            Route::Post(path) => self.http.post(self.url(path)).json(params),
        };
        self.call(request).await
    }

    /// A repo's status (`GET /v1/status?repo=`).
    pub async fn status(&self, repo: &Path) -> Result<RepoStatus> {
        self.run(&StatusParams { repo: Some(repo.to_path_buf()) }, Route::Get("/v1/status")).await
    }

    /// The daemon's own status (`GET /v1/status` without a repo).
    pub async fn libs_fetch(&self, request: &LibsFetchRequest) -> Result<LibsFetchSummary> {
        let body = serde_json::json!({ "repo": request.repo_opt, "all": request.all, "libs": request.names });
        self.call(self.http.post(self.url("/v1/libs/fetch")).json(&body)).await
    }

    pub async fn index(&self, repo: &Path, wait: bool) -> Result<IndexSummary> {
        let query = [("repo", repo.display().to_string()), ("wait", wait.to_string())];
        self.call(self.http.post(self.url("/v1/index")).query(&query).json(&serde_json::json!({}))).await
    }

    pub async fn daemon_status(&self) -> Result<DaemonStatus> {
        self.call(self.http.get(self.url("/v1/status"))).await
    }

    /// One chat turn over the daemon's OpenAI-compatible endpoint, streamed: each piece of
    /// text goes to `on_text`; the grounding (sources, budget, session) comes with the end.
    pub async fn chat(
        &self,
        request: &ChatRequest,
        mut on_text: impl FnMut(&str) -> Result<()>,
    ) -> Result<(ChatContext, String, Option<Usage>)> {
        let mut body = serde_json::json!({
            "messages": request.messages,
            "stream": true,
            "stream_options": { "include_usage": true },
            "docdex": {
                "repo": request.repo_opt,
                "force_web": request.force_web,
                "include_sources": true,
                "debug": true,
            },
        });
        if let Some(model) = &request.model_opt {
            body["model"] = serde_json::json!(model);
        }
        if let Some(max_tokens) = request.max_tokens_opt {
            body["max_tokens"] = serde_json::json!(max_tokens);
        }
        let mut http_request = self.http.post(self.url("/v1/chat/completions")).json(&body);
        if let Some(token) = &self.token_opt {
            http_request = http_request.bearer_auth(token);
        }
        let mut response = http_request.send().await.map_err(|err| self.unreachable(err))?;
        if !response.status().is_success() {
            let status = response.status();
            let body = response.bytes().await.unwrap_or_default();
            return Err(serde_json::from_slice(&body).ok().and_then(|v| openai_error(&v)).unwrap_or_else(|| {
                DocdexError::internal(format!("the daemon answered {status}: {}", String::from_utf8_lossy(&body)))
            }));
        }
        let mut pending = String::new();
        let mut text = String::new();
        let (mut context_opt, mut usage_opt) = (None, None);
        while let Some(bytes) = response
            .chunk()
            .await
            .map_err(|err| DocdexError::internal(format!("the daemon's answer broke off: {err}")))?
        {
            pending.push_str(&String::from_utf8_lossy(&bytes));
            while let Some(end) = pending.find("\n\n") {
                let frame: String = pending.drain(..end + 2).collect();
                let Some(data) = frame.trim().strip_prefix("data: ") else { continue };
                if data == "[DONE]" {
                    continue;
                }
                let chunk: serde_json::Value = serde_json::from_str(data)?;
                if let Some(err) = openai_error(&chunk) {
                    return Err(err);
                }
                if let Some(piece) = chunk["choices"][0]["delta"]["content"].as_str().filter(|p| !p.is_empty()) {
                    text.push_str(piece);
                    on_text(piece)?;
                }
                if let Some(docdex) = chunk.get("docdex") {
                    let mut grounding = docdex.clone();
                    grounding["model"] = chunk["model"].clone();
                    context_opt = Some(serde_json::from_value::<ChatContext>(grounding)?);
                }
                if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
                    usage_opt = Some(Usage {
                        prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
                        completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
                    });
                }
            }
        }
        let context =
            context_opt.ok_or_else(|| DocdexError::internal("the daemon's answer ended without its sources"))?;
        Ok((context, text, usage_opt))
    }

    fn unreachable(&self, err: reqwest::Error) -> DocdexError {
        DocdexError::new(ErrorCode::Internal, format!("the daemon at {} is not answering: {err}", self.base_url))
            .with_hint("is `docdexd daemon` still running? unset DOCDEX_HTTP_BASE_URL to run commands locally")
    }

    pub async fn memory_delete(&self, repo_opt: Option<&Path>, id: u64) -> Result<MemoryDeleted> {
        let url = self.url(&format!("/v1/memory/{id}"));
        let query: Vec<(&str, String)> = repo_opt.map(|r| ("repo", r.display().to_string())).into_iter().collect();
        // The daemon takes state-changing requests only as JSON (a form a web page could post
        // is refused), so even a bodiless delete says it is.
        let request = self.http.delete(url).query(&query).json(&serde_json::json!({}));
        self.call(request).await
    }
}

impl Backend {
    /// The daemon when one serves this home, else this process (commands without a repo).
    pub fn connect(loaded: &LoadedConfig) -> Result<Backend> {
        Ok(match DaemonClient::find(loaded)? {
            Some(client) => Backend::Daemon(client),
            None => Backend::Local(crate::actors::system::start_actors(loaded, None)),
        })
    }

    /// The daemon when one serves this home and will serve `repo`; otherwise this process.
    /// A repo outside the daemon's allowed roots is served locally, as the CLI always could.
    pub async fn for_repo(loaded: &LoadedConfig, repo: &Path) -> Result<Backend> {
        if let Some(client) = DaemonClient::find_quietly(loaded)? {
            match client.status(repo).await {
                Err(err) if err.code == ErrorCode::PathRefused => {
                    // Said, not logged: this run's index gets no background embedding.
                    eprintln!(
                        "note: the daemon at {} does not serve {} (outside its allowed roots), so this command runs \
                         in this process: add the repo's parent to [repos] allowed_roots (or DOCDEX_ALLOWED_ROOTS) \
                         and restart the daemon to have it served and embedded there, or embed it here with \
                         `docdexd index --repo {} --wait`",
                        client.base_url,
                        repo.display(),
                        repo.display()
                    );
                }
                _ => {
                    client.warn_if_config_is_newer(loaded);
                    return Ok(Backend::Daemon(client));
                }
            }
        }
        Ok(Backend::Local(crate::actors::system::start_actors(loaded, None)))
    }

    /// A tool call: through the daemon's route for it, or in this process.
    pub async fn run<T: Tool + Serialize>(&self, params: T, route: Route) -> Result<T::Output>
    where
        T::Output: DeserializeOwned,
        ToolDispatcher: actix::Handler<T::Message>,
    {
        match self {
            Backend::Daemon(client) => client.run(&params, route).await,
            Backend::Local(actors) => {
                let repo_opt = params.repo().map(Path::to_path_buf);
                let msg = params.into_message(repo_opt, &Caller::default())?;
                actors.dispatcher.send(msg).await?
            }
        }
    }

    /// Web research: a search with `web_research` through the daemon, the waterfall here.
    pub async fn web_research(&self, params: SearchToolParams) -> Result<WaterfallResponse> {
        match self {
            Backend::Daemon(client) => {
                let params = SearchToolParams { web_research: Some(true), ..params };
                let request = client.http.get(client.url("/v1/search")).query(&params);
                client.call(request).await
            }
            Backend::Local(actors) => {
                let repo_opt = params.repo.clone();
                actors.dispatcher.send(params.web_research(repo_opt)?).await?
            }
        }
    }

    /// Forgets a collection (the name goes in the daemon's path).
    pub async fn collection_remove(&self, params: CollectionRemoveParams) -> Result<Collection> {
        match self {
            Backend::Daemon(client) => {
                let name: String = form_urlencoded::byte_serialize(params.name.as_bytes()).collect();
                let url = client.url(&format!("/v1/collections/{name}"));
                client.call(client.http.delete(url).json(&serde_json::json!({}))).await
            }
            Backend::Local(actors) => actors.dispatcher.send(params.into_message(None, &Caller::default())?).await?,
        }
    }

    /// Deletes a note (the id goes in the daemon's path).
    pub async fn memory_delete(&self, params: MemoryDeleteParams) -> Result<MemoryDeleted> {
        match self {
            Backend::Daemon(client) => client.memory_delete(params.repo.as_deref(), params.id).await,
            Backend::Local(actors) => {
                let repo_opt = params.repo.clone();
                actors.dispatcher.send(params.into_message(repo_opt, &Caller::default())?).await?
            }
        }
    }

    /// Closes what this process opened (its browser, its repos; nothing for the daemon).
    pub async fn close(self) -> Result<()> {
        if let Backend::Local(actors) = self {
            actors.web.scraper.send(CloseBrowser).await?;
            actors.repo_manager.send(CloseAll).await?;
        }
        Ok(())
    }
}

/// An error in OpenAI's shape (`{"error": {"message", "code"}}`), as docdex writes it: the
/// code is docdex's, the hint is appended to the message.
fn openai_error(value: &serde_json::Value) -> Option<DocdexError> {
    let error = value.get("error")?;
    let code = serde_json::from_value(error["code"].clone()).unwrap_or(ErrorCode::Internal);
    let message = error["message"].as_str().unwrap_or("the daemon failed").to_string();
    Some(match message.strip_suffix(')').and_then(|m| m.split_once(" (hint: ")) {
        Some((message, hint)) => DocdexError::new(code, message).with_hint(hint),
        None => DocdexError::new(code, message),
    })
}

/// The repo path as the daemon must see it: absolute (the daemon's working directory is not
/// ours). A path that does not exist stays as given, for the usual error.
pub fn absolute(repo: &Path) -> PathBuf {
    std::fs::canonicalize(repo).unwrap_or_else(|_| match std::env::current_dir() {
        Ok(cwd) if repo.is_relative() => cwd.join(repo),
        _ => repo.to_path_buf(),
    })
}
