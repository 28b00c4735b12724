//! The HTTP API (actix-web): thin handlers that parse, call the ToolDispatcher and render.
//!
//! Routes: `GET /healthz`, `GET /v1/search` (with `force_web` / `web_research`, the waterfall),
//! `GET /v1/status` (a repo's, or the daemon's), `POST /v1/initialize` (mount a repo),
//! `GET /v1/repos`, `POST /v1/index`, `POST /v1/libs/fetch`, the crate docs tools under
//! `/v1/crates/{name}/…` (in `crates`), memory, `POST /v1/web/search`, `POST /v1/web/fetch`,
//! `GET /v1/dag`, `GET /v1/dag/{session}`, and the OpenAI-compatible `POST
//! /v1/chat/completions` and `GET /v1/models` (in `openai`). Errors are
//! `{"error": {"code", "message", "hint"}}` with the status from the protocol's error table
//! (OpenAI's shape on the OpenAI-compatible routes).

pub mod code;
pub mod crates;
pub mod guard;
pub mod impact;
pub mod openai;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::Addr;
use actix_web::http::StatusCode;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde::Deserialize;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp_actix_web::transport::StreamableHttpService;

use crate::actors::tool_dispatcher::chat::{DagListParams, DagViewParams};
use crate::actors::tool_dispatcher::collections::{CollectionAddParams, CollectionListParams, CollectionRemoveParams};
use crate::actors::tool_dispatcher::files::{FilesParams, GetParams, MultiGetParams};
use crate::actors::tool_dispatcher::indexing::{IndexParams, StatusParams};
use crate::actors::tool_dispatcher::libs::LibsFetchParams;
use crate::actors::tool_dispatcher::memory::{
    MemoryDeleteParams, MemoryListParams, MemoryRecallParams, MemorySaveParams,
};
use crate::actors::tool_dispatcher::pack::PackParams;
use crate::actors::tool_dispatcher::params::{self, Caller, Tool};
use crate::actors::tool_dispatcher::repos::{DaemonState, MountParams, Repos};
use crate::actors::tool_dispatcher::search::SearchToolParams;
use crate::actors::tool_dispatcher::web::{WebFetchParams, WebSearchParams};
use crate::actors::tool_dispatcher::ToolDispatcher;
use crate::mcp::DocdexMcp;
use crate::protocol::{DocdexError, ErrorCode, Health};

/// Largest request body (JSON) the API reads.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Shared state of every worker.
#[derive(Clone)]
pub struct HttpState {
    pub dispatcher: Addr<ToolDispatcher>,
    pub default_repo_opt: Option<PathBuf>,
    pub default_limit: usize,
    pub auth_token_opt: Option<Arc<str>>,
    /// Which Host / Origin names requests may carry (`guard`).
    pub host_policy: Arc<guard::HostPolicy>,
    /// Requests in flight per client address (`guard`).
    pub client_slots: Arc<guard::ClientSlots>,
    /// Token budget of one MCP tool result.
    pub mcp_budget_tokens: usize,
    /// Why this server runs no tests (`run_tests_refusal`), if it does not.
    pub run_tests_refusal: Option<DocdexError>,
}

/// Running tests executes the repo's code: a server does it only behind its token, and
/// beyond this machine only when `[tests] allow_when_exposed` says so.
pub fn run_tests_refusal(
    auth_token_opt: Option<&str>,
    addr: &SocketAddr,
    allow_when_exposed: bool,
) -> Option<DocdexError> {
    if auth_token_opt.is_none() {
        return Some(
            DocdexError::new(ErrorCode::Forbidden, "this daemon runs without a token, so it runs no tests")
                .with_hint("running tests executes the repo's code: start the daemon with its token (require_token = true), or use `docdexd run-tests`"),
        );
    }
    if !addr.ip().is_loopback() && !allow_when_exposed {
        return Some(
            DocdexError::new(ErrorCode::Forbidden, "this daemon is served beyond this machine, so it runs no tests")
                .with_hint("set [tests] allow_when_exposed = true in config.toml to allow it, or use `docdexd run-tests` on the machine"),
        );
    }
    None
}

pub(crate) fn error_response(err: &DocdexError) -> HttpResponse {
    let status = StatusCode::from_u16(err.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    HttpResponse::build(status).json(err.to_json())
}

pub(crate) fn respond<T: serde::Serialize>(result: crate::protocol::Result<T>) -> HttpResponse {
    match result {
        Ok(value) => HttpResponse::Ok().json(value),
        Err(err) => error_response(&err),
    }
}

/// The query of an endpoint that takes none: anything given is refused, not ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

async fn healthz(state: web::Data<HttpState>, _: web::Query<NoParams>) -> HttpResponse {
    HttpResponse::Ok().json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        default_repo: state.default_repo_opt.as_ref().map(|p| p.display().to_string()),
    })
}

/// A search, or with `web_research` / `force_web` the web research (the waterfall).
async fn search(state: web::Data<HttpState>, request: HttpRequest) -> HttpResponse {
    let params = match query_params::<SearchToolParams>(&request) {
        Ok(params) => params,
        Err(err) => return error_response(&err),
    };
    if !params.asks_web_research() {
        return run_tool(&state, params).await;
    }
    if let Err(err) = params::absolute_paths(&params) {
        return error_response(&err);
    }
    let repo_opt = params.repo.clone().or_else(|| state.default_repo_opt.clone());
    match params.web_research(repo_opt) {
        Ok(msg) => respond(dispatch(&state, msg).await),
        Err(err) => error_response(&err),
    }
}

/// With `repo`, that repo's index; without, the daemon itself (mounted repos, actor load,
/// memory).
async fn status(state: web::Data<HttpState>, request: HttpRequest) -> HttpResponse {
    match query_params::<StatusParams>(&request) {
        Ok(params) if params.repo.is_some() => run_tool(&state, params).await,
        Ok(_) => respond(dispatch(&state, DaemonState).await),
        Err(err) => error_response(&err),
    }
}

async fn repos(state: web::Data<HttpState>, _: web::Query<NoParams>) -> HttpResponse {
    respond(dispatch(&state, Repos).await)
}

/// A route that reads its parameters from the query string: a body with any is refused, as a
/// parameter sent there would be ignored (an empty body or `{}` is none).
fn refuse_body(body: &[u8]) -> Result<(), DocdexError> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() || text.replace(char::is_whitespace, "") == "{}" {
        return Ok(());
    }
    Err(DocdexError::invalid("this endpoint reads its parameters from the query string, not the request body")
        .with_hint("send them as ?name=value&… and no body"))
}

/// A route that reads its parameters from the JSON body: a query string is refused, as a
/// parameter sent there would be ignored.
fn refuse_query(request: &HttpRequest) -> Result<(), DocdexError> {
    let names: Vec<String> =
        form_urlencoded::parse(request.query_string().as_bytes()).map(|(key, _)| format!("`{key}`")).collect();
    if names.is_empty() {
        return Ok(());
    }
    Err(DocdexError::invalid(format!(
        "this endpoint reads its parameters from the JSON body, not the query string ({})",
        names.join(", ")
    ))
    .with_hint("send them in the body: {\"name\": value, …}"))
}

/// A tool's GET route: its parameters (`Tool`) from the query string.
pub(crate) async fn tool_query<T: Tool>(
    state: web::Data<HttpState>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse
where
    ToolDispatcher: actix::Handler<T::Message>,
{
    if let Err(err) = refuse_body(&body) {
        return error_response(&err);
    }
    match query_params::<T>(&request) {
        Ok(params) => run_tool(&state, params).await,
        Err(err) => error_response(&err),
    }
}

/// A request's query string as a parameter struct; errors name the parameter.
fn query_params<T: serde::de::DeserializeOwned>(request: &HttpRequest) -> Result<T, DocdexError> {
    parse_query(request.query_string())
}

fn parse_query<T: serde::de::DeserializeOwned>(query: &str) -> Result<T, DocdexError> {
    let pairs = form_urlencoded::parse(query.as_bytes());
    let params = serde_path_to_error::deserialize::<_, T>(serde_urlencoded::Deserializer::new(pairs))
        .map_err(|err| malformed(err, "query string"))?;
    // `repos=` or `base=` read as "not given" would answer another question than the one
    // asked (every repo, HEAD): a parameter given is given a value.
    if let Some((name, _)) = pairs.into_iter().find(|(_, value)| value.trim().is_empty()) {
        return Err(DocdexError::invalid(format!("`{name}` is empty"))
            .with_hint(format!("give `{name}` a value, or leave it out for its default")));
    }
    Ok(params)
}

/// The query string plus one parameter the route's path holds (`/v1/memory/{id}`): given in
/// the query too, it is refused.
pub(crate) fn query_params_with<T: serde::de::DeserializeOwned>(
    request: &HttpRequest,
    (name, value): (&str, &str),
) -> Result<T, DocdexError> {
    let query = form_urlencoded::parse(request.query_string().as_bytes());
    if query.clone().any(|(key, _)| key == name) {
        return Err(DocdexError::invalid(format!("`{name}` is in the path, not the query")));
    }
    parse_query(&form_urlencoded::Serializer::new(String::new()).extend_pairs(query).append_pair(name, value).finish())
}

/// A tool whose route's path holds one of its parameters.
pub(crate) async fn tool_query_with<T: Tool>(
    state: &HttpState,
    request: &HttpRequest,
    body: &[u8],
    path: (&str, &str),
) -> HttpResponse
where
    ToolDispatcher: actix::Handler<T::Message>,
{
    if let Err(err) = refuse_body(body) {
        return error_response(&err);
    }
    match query_params_with::<T>(request, path) {
        Ok(params) => run_tool(state, params).await,
        Err(err) => error_response(&err),
    }
}

/// A tool's POST route: its parameters (`Tool`) from the JSON body.
pub(crate) async fn tool_body<T: Tool>(
    state: web::Data<HttpState>,
    request: HttpRequest,
    body: web::Json<DistinctKeys>,
) -> HttpResponse
where
    ToolDispatcher: actix::Handler<T::Message>,
{
    if let Err(err) = refuse_query(&request) {
        return error_response(&err);
    }
    match serde_path_to_error::deserialize::<_, T>(body.into_inner().0) {
        Ok(params) => run_tool(&state, params).await,
        Err(err) => error_response(&malformed(err, "JSON body")),
    }
}

/// A JSON body whose objects name each key once. serde_json keeps the last of a repeated
/// key, so `{"limit": 5, "limit": 500}` would answer a question the caller may not have meant:
/// the repeat is refused instead.
pub(crate) struct DistinctKeys(serde_json::Value);

impl<'de> Deserialize<'de> for DistinctKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DistinctKeysVisitor).map(DistinctKeys)
    }
}

struct DistinctKeysVisitor;

impl<'de> serde::de::Visitor<'de> for DistinctKeysVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(DistinctKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let DistinctKeys(value) = map.next_value()?;
            if object.insert(key.clone(), value).is_some() {
                return Err(serde::de::Error::custom(format!("`{key}` is given twice")));
            }
        }
        Ok(serde_json::Value::Object(object))
    }
}

pub(crate) async fn run_tool<T: Tool>(state: &HttpState, params: T) -> HttpResponse
where
    ToolDispatcher: actix::Handler<T::Message>,
{
    if let Err(err) = params::absolute_paths(&params) {
        return error_response(&err);
    }
    let repo_opt = params.repo().map(Path::to_path_buf).or_else(|| state.default_repo_opt.clone());
    let caller = Caller { run_tests_refusal: state.run_tests_refusal.clone() };
    match params.into_message(repo_opt, &caller) {
        Ok(msg) => respond(dispatch(state, msg).await),
        Err(err) => error_response(&err),
    }
}

/// Parameters that do not deserialize: an unknown name with the closest known one, a
/// missing one, or a value of the wrong form, each naming the parameter.
pub(crate) fn malformed<E: std::fmt::Display>(err: serde_path_to_error::Error<E>, what: &str) -> DocdexError {
    let field = err.path().to_string();
    let inner = err.into_inner().to_string();
    if let Some(unknown) = DocdexError::unknown_parameter(&inner) {
        return unknown;
    }
    if let Some(name) = inner.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()) {
        return DocdexError::invalid(format!("`{name}` is required"));
    }
    if field.is_empty() || field == "." {
        DocdexError::invalid(format!("malformed {what}: {inner}"))
    } else {
        DocdexError::invalid(format!("`{field}`: {inner}"))
    }
}

pub(crate) async fn dispatch<M, T>(state: &HttpState, msg: M) -> crate::protocol::Result<T>
where
    M: actix::Message<Result = crate::protocol::Result<T>> + Send + 'static,
    T: Send + 'static,
    ToolDispatcher: actix::Handler<M>,
{
    state.dispatcher.send(msg).await?
}

async fn memory_delete(
    state: web::Data<HttpState>,
    id: web::Path<String>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    tool_query_with::<MemoryDeleteParams>(&state, &request, &body, ("id", &id)).await
}

async fn collection_remove(
    state: web::Data<HttpState>,
    name: web::Path<String>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    tool_query_with::<CollectionRemoveParams>(&state, &request, &body, ("name", &name)).await
}

/// A reasoning session, as JSON, text or Graphviz (`format`).
async fn dag_view(state: web::Data<HttpState>, session: web::Path<String>, request: HttpRequest) -> HttpResponse {
    let params = match query_params_with::<DagViewParams>(&request, ("session", &session)) {
        Ok(params) => params,
        Err(err) => return error_response(&err),
    };
    let format = match params.format() {
        Ok(format) => format.to_string(),
        Err(err) => return error_response(&err),
    };
    let repo_opt = params.repo.clone().or_else(|| state.default_repo_opt.clone());
    let view = match params.into_message(repo_opt, &Caller::default()) {
        Ok(msg) => match dispatch(&state, msg).await {
            Ok(view) => view,
            Err(err) => return error_response(&err),
        },
        Err(err) => return error_response(&err),
    };
    match format.as_str() {
        "text" => {
            HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(crate::index::dag::render_text(&view))
        }
        "dot" => HttpResponse::Ok()
            .content_type("text/vnd.graphviz; charset=utf-8")
            .body(crate::index::dag::render_dot(&view)),
        _ => HttpResponse::Ok().json(view),
    }
}

/// No route took the request: a path some route serves was asked with another method (405,
/// not a 404 that would say the endpoint is missing), or no route has the path.
async fn not_found(request: HttpRequest) -> HttpResponse {
    if request.resource_map().has_resource(request.path()) {
        return error_response(
            &DocdexError::new(
                ErrorCode::MethodNotAllowed,
                format!("{} does not take {}", request.path(), request.method()),
            )
            .with_hint("docs/http.md lists each route with its method"),
        );
    }
    error_response(
        &DocdexError::new(ErrorCode::NotFound, "no such endpoint").with_hint("see the README's HTTP API section"),
    )
}

/// Compares without an early exit, so timing does not reveal how much of a guess was right.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Builds the app for one worker (also used by tests through a real listener).
pub fn configure(state: HttpState) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
    move |cfg: &mut web::ServiceConfig| {
        let query_cfg = web::QueryConfig::default().error_handler(|err, _| {
            let body = DocdexError::unknown_parameter(&err.to_string())
                .unwrap_or_else(|| DocdexError::invalid(format!("malformed query string: {err}")));
            actix_web::error::InternalError::from_response(err, error_response(&body)).into()
        });
        let json_cfg = web::JsonConfig::default().limit(MAX_BODY_BYTES).error_handler(|err, _| {
            use actix_web::error::JsonPayloadError;
            let body = match &err {
                JsonPayloadError::Overflow { limit } | JsonPayloadError::OverflowKnownLength { limit, .. } => {
                    DocdexError::new(ErrorCode::TooLarge, format!("the request body is over the {limit}-byte limit"))
                }
                JsonPayloadError::ContentType => DocdexError::new(
                    ErrorCode::UnsupportedMediaType,
                    "the request body must be JSON (Content-Type: application/json)",
                ),
                _ => DocdexError::unknown_parameter(&err.to_string())
                    .unwrap_or_else(|| DocdexError::invalid(format!("malformed JSON body: {err}"))),
            };
            actix_web::error::InternalError::from_response(err, error_response(&body)).into()
        });
        cfg.app_data(web::Data::new(state.clone()))
            .app_data(query_cfg)
            .app_data(json_cfg)
            .route("/v1/memory", web::post().to(tool_body::<MemorySaveParams>))
            .route("/v1/memory", web::get().to(tool_query::<MemoryListParams>))
            .route("/v1/memory/recall", web::post().to(tool_body::<MemoryRecallParams>))
            .route("/v1/pack", web::post().to(tool_body::<PackParams>))
            .route("/v1/memory/{id}", web::delete().to(memory_delete))
            .route("/v1/collections", web::post().to(tool_body::<CollectionAddParams>))
            .route("/v1/collections", web::get().to(tool_query::<CollectionListParams>))
            .route("/v1/collections/{name}", web::delete().to(collection_remove))
            .route("/healthz", web::get().to(healthz))
            .route("/v1/search", web::get().to(search))
            .route("/v1/status", web::get().to(status))
            .route("/v1/initialize", web::post().to(tool_body::<MountParams>))
            .route("/v1/repos", web::get().to(repos))
            .route("/v1/files", web::get().to(tool_query::<FilesParams>))
            .route("/v1/get", web::get().to(tool_query::<GetParams>))
            .route("/v1/multi-get", web::post().to(tool_body::<MultiGetParams>))
            .route("/v1/index", web::post().to(tool_query::<IndexParams>))
            .route("/v1/libs/fetch", web::post().to(tool_body::<LibsFetchParams>))
            .configure(crates::routes)
            .configure(code::routes)
            .configure(impact::routes)
            .route("/v1/web/search", web::post().to(tool_body::<WebSearchParams>))
            .route("/v1/web/fetch", web::post().to(tool_body::<WebFetchParams>))
            .route("/v1/chat/completions", web::post().to(openai::chat_completions))
            .route("/v1/models", web::get().to(openai::models))
            .route("/v1/dag", web::get().to(tool_query::<DagListParams>))
            .route("/v1/dag/{session}", web::get().to(dag_view))
            .default_service(web::to(not_found));
    }
}

/// Refuses non-loopback binds unless exposed on purpose and protected by a token.
pub fn check_bind_policy(addr: &SocketAddr, expose: bool, auth_token_opt: Option<&str>) -> crate::protocol::Result<()> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !expose {
        return Err(DocdexError::invalid(format!("refusing to bind {addr}: it is not a loopback address"))
            .with_hint("add --expose together with --auth-token (or DOCDEX_AUTH_TOKEN) to serve beyond this machine"));
    }
    if auth_token_opt.is_none() {
        return Err(DocdexError::invalid(format!("refusing to expose {addr} without an auth token"))
            .with_hint("pass --auth-token <token> or set DOCDEX_AUTH_TOKEN"));
    }
    Ok(())
}

/// The MCP endpoint answers a request it cannot take (a body that is not JSON-RPC, a missing
/// `Accept` or `Content-Type`, an unknown session) with a plain-text 4xx; a client reads errors
/// as JSON-RPC, so the text becomes a JSON-RPC error's message: a parse error (-32700, with
/// the 400 the transport's spec gives it) for a body that does not parse, an invalid request
/// (-32600) otherwise, the status kept.
async fn mcp_errors(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let response = next.call(req).await?;
    let typed = response
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/event-stream"));
    if !response.status().is_client_error() || typed {
        return Ok(response.map_into_boxed_body());
    }
    let status = response.status();
    let (request, response) = response.into_parts();
    let body = actix_web::body::to_bytes(response.into_body()).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&body).trim().to_string();
    let unparsed = text.starts_with("fail to deserialize");
    let (status, code) = if unparsed { (StatusCode::BAD_REQUEST, -32700) } else { (status, -32600) };
    let message = if text.is_empty() { status.canonical_reason().unwrap_or("refused").to_string() } else { text };
    let answer = HttpResponse::build(status)
        .json(serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}));
    Ok(actix_web::dev::ServiceResponse::new(request, answer))
}

/// Binds and returns the running server (the caller awaits it) and the bound address.
pub fn start(
    state: HttpState,
    addr: SocketAddr,
    workers: usize,
) -> std::io::Result<(actix_web::dev::Server, SocketAddr)> {
    // One MCP service for all workers, so sessions survive requests landing on another one.
    let dispatcher = state.dispatcher.clone();
    let default_repo_opt = state.default_repo_opt.clone();
    let mcp_budget_tokens = state.mcp_budget_tokens;
    let default_limit = state.default_limit;
    let run_tests_refusal = state.run_tests_refusal.clone();
    // One host policy for REST and MCP: `guard` checks Host and Origin before any route, so
    // the SDK's own check (loopback names only, which broke exposed mode) is turned off.
    // Sessions end after `MCP_SESSION_IDLE` without a request; `guard` refuses new ones past
    // `guard::MAX_MCP_SESSIONS` (each holds ~80 KB, and `initialize` in a loop is free).
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(guard::MCP_SESSION_IDLE);
    let sessions = Arc::new(sessions);
    let open_sessions = web::Data::new(guard::McpSessions(Arc::clone(&sessions)));
    let mcp = StreamableHttpService::builder()
        .service_factory(Arc::new(move || {
            // The daemon's `--repo` serves clients that name no workspace; one that shares
            // its roots is about that workspace.
            Ok(DocdexMcp::new(dispatcher.clone(), default_repo_opt.clone(), mcp_budget_tokens)
                .with_default_limit(default_limit)
                .with_run_tests_refusal(run_tests_refusal.clone())
                .with_roots_first()
                .with_absolute_paths())
        }))
        .session_manager(sessions)
        .stateful_mode(true)
        .maybe_allowed_hosts(Some(Vec::new()))
        .build();
    let configure = configure(state);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(open_sessions.clone())
            .wrap(from_fn(guard::guard))
            .service(mcp.clone().scope_with_path("/v1/mcp").wrap(from_fn(mcp_errors)))
            .configure(configure.clone())
    })
    .workers(workers.max(1))
    .disable_signals()
    .bind(addr)?;
    let bound = server.addrs().first().copied().unwrap_or(addr);
    Ok((server.run(), bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_policy() {
        let loopback: SocketAddr = "127.0.0.1:3210".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:3210".parse().unwrap();
        assert!(check_bind_policy(&loopback, false, None).is_ok());
        assert_eq!(check_bind_policy(&any, false, None).unwrap_err().code, ErrorCode::InvalidRequest);
        assert!(check_bind_policy(&any, true, None).unwrap_err().message.contains("without an auth token"));
        assert!(check_bind_policy(&any, true, Some("t")).is_ok());
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
    }
}
