//! Who may ask: every request (REST, OpenAI-compatible and MCP alike) passes one guard.
//!
//! - `Host` must name this daemon: a loopback name (`localhost`, `127.0.0.1`, `::1`) or one
//!   of `[server] allowed_hosts`; any port. A web page that rebinds its own domain to
//!   127.0.0.1 sends its domain as Host and is refused. An exposed daemon (`--expose`, always
//!   with a token) accepts any Host unless `allowed_hosts` narrows it.
//! - `Origin`, when a browser sends one, must be an allowed host too (`null` never is), so a
//!   page elsewhere cannot use the user's browser as a client.
//! - State-changing REST requests (POST, PUT, PATCH, DELETE) must declare a JSON body:
//!   a cross-site HTML form can only send form or text types.
//! - The bearer token, when one is set, on everything.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web;

use super::{constant_time_eq, error_response, HttpState};
use crate::protocol::{DocdexError, ErrorCode};

/// Which `Host` and `Origin` names are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicy {
    names: Vec<String>,
    any: bool,
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl HostPolicy {
    /// Loopback names plus `extra`; `exposed` without `extra` accepts any name (the token
    /// guards an exposed daemon).
    pub fn new(extra: &[String], exposed: bool) -> HostPolicy {
        let mut names: Vec<String> = LOOPBACK_NAMES.iter().map(|n| n.to_string()).collect();
        names.extend(extra.iter().map(|n| n.trim().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()));
        HostPolicy { names, any: exposed && extra.is_empty() }
    }

    /// `host[:port]` as sent in a Host header.
    pub fn allows_authority(&self, authority: &str) -> bool {
        if self.any {
            return true;
        }
        let Some(host) = strip_port(authority.trim()) else { return false };
        self.names.contains(&host.to_ascii_lowercase())
    }

    /// An Origin header value (`scheme://host[:port]`).
    pub fn allows_origin(&self, origin: &str) -> bool {
        let Some((scheme, authority)) = origin.trim().split_once("://") else { return false };
        matches!(scheme, "http" | "https") && self.allows_authority(authority.trim_end_matches('/'))
    }
}

/// Most MCP sessions open at once: a client that calls `initialize` in a loop gets a clear
/// refusal instead of the daemon's memory (each session holds ~80 KB until it expires).
pub const MAX_MCP_SESSIONS: usize = 256;
/// An MCP session without a request for this long is closed (the client starts another).
pub const MCP_SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(300);

/// The daemon's MCP sessions, as the guard counts them.
pub struct McpSessions(pub Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>);

/// What a request is, for counting it: slow work of one kind must not starve the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndpointClass {
    /// `/healthz`: never counted, so a daemon busy with anything still says it is alive.
    Health,
    /// The LLM server's answers (chat, the model list): as slow as the model.
    Llm,
    /// The web tier (discovery, page fetches, the waterfall): as slow as the web.
    Web,
    /// MCP sessions.
    Mcp,
    /// Everything else: search, files, memory, status, index.
    Local,
}

impl EndpointClass {
    pub fn of(path: &str, query: &str) -> EndpointClass {
        let waterfall =
            query.split('&').any(|p| matches!(p, "web_research=true" | "waterfall=true" | "force_web=true"));
        match path {
            "/healthz" => EndpointClass::Health,
            "/v1/chat/completions" | "/v1/models" => EndpointClass::Llm,
            p if p.starts_with("/v1/web/") => EndpointClass::Web,
            "/v1/search" if waterfall => EndpointClass::Web,
            p if p.starts_with("/v1/mcp") => EndpointClass::Mcp,
            _ => EndpointClass::Local,
        }
    }
}

/// Who a request is from, as far as the daemon can tell: its MCP session when it names one,
/// else its address. Every local client shares 127.0.0.1 and the token, so sessions (and
/// the endpoint class below) are what keep one busy client from blocking the rest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ClientKey {
    Session(String),
    Address(IpAddr),
}

/// Requests in flight per client and endpoint class, bounded: one runaway client (an agent
/// in a loop, 64 slow model-list calls) cannot take every worker from the others, nor its
/// own slow calls block its searches; `/healthz` is never counted.
#[derive(Debug)]
pub struct ClientSlots {
    limit: usize,
    busy: Mutex<HashMap<(ClientKey, EndpointClass), usize>>,
}

/// Held while a request runs; gives its slot back on drop.
pub struct Slot {
    slots: Arc<ClientSlots>,
    key: (ClientKey, EndpointClass),
}

impl ClientSlots {
    pub fn new(limit: usize) -> Arc<ClientSlots> {
        Arc::new(ClientSlots { limit: limit.max(1), busy: Mutex::new(HashMap::new()) })
    }

    fn try_take(self: &Arc<Self>, client: ClientKey, class: EndpointClass) -> Option<Slot> {
        let mut busy = self.busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let key = (client, class);
        let count = busy.entry(key.clone()).or_default();
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(Slot { slots: Arc::clone(self), key })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut busy = self.slots.busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(count) = busy.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                busy.remove(&self.key);
            }
        }
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port` → the host part (brackets removed); `None` for
/// anything else, such as text after the brackets (`[::1]evil.example`).
fn strip_port(authority: &str) -> Option<&str> {
    let is_port = |port: &str| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit());
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return (after.is_empty() || after.strip_prefix(':').is_some_and(is_port)).then_some(host);
    }
    match authority.rsplit_once(':') {
        // A bare IPv6 address has more than one colon and no port.
        Some((host, port)) if !host.contains(':') => is_port(port).then_some(host),
        _ => Some(authority),
    }
}

fn refuse(req: ServiceRequest, err: DocdexError) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    tracing::warn!(path = %req.path(), code = err.code.as_str(), "request refused: {}", err.message);
    Ok(req.into_response(error_response(&err)))
}

pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<HttpState>>().cloned() else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let header = |name: &str| req.headers().get(name).map(|v| v.to_str().unwrap_or("\u{fffd}").to_string());
    if let Some(host) = header("host") {
        if !state.host_policy.allows_authority(&host) {
            let err = DocdexError::new(ErrorCode::Forbidden, format!("Host `{host}` is not this daemon's")).with_hint(
                "use http://127.0.0.1:<port> or http://localhost:<port>, or add the name to [server] allowed_hosts",
            );
            return refuse(req, err);
        }
    }
    if let Some(origin) = header("origin") {
        if !state.host_policy.allows_origin(&origin) {
            let err = DocdexError::new(ErrorCode::Forbidden, format!("requests from origin `{origin}` are refused"))
                .with_hint("docdex answers local clients; a web page elsewhere may not call it");
            return refuse(req, err);
        }
    }
    let changes_state = matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
    // A DELETE without a body (`DELETE /v1/memory/7`) has no content to type: no form can
    // send a DELETE, and a page's fetch of one needs a CORS preflight docdex never grants.
    let bodiless_delete = *req.method() == Method::DELETE
        && header("content-length").is_none_or(|n| n.trim() == "0")
        && header("transfer-encoding").is_none();
    // MCP checks its own media types (JSON-RPC bodies, session DELETE without a body).
    if changes_state && !bodiless_delete && !req.path().starts_with("/v1/mcp") {
        let json =
            header("content-type").is_some_and(|t| t.trim().to_ascii_lowercase().starts_with("application/json"));
        if !json {
            let err = DocdexError::new(
                ErrorCode::UnsupportedMediaType,
                format!("{} {} needs `Content-Type: application/json`", req.method(), req.path()),
            )
            .with_hint("send a JSON body (`{}` when there is nothing to say) with that content type");
            return refuse(req, err);
        }
    }
    if let Some(expected) = state.auth_token_opt.clone() {
        let given = header("authorization");
        let given = given.as_deref().and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("");
        if !constant_time_eq(given.as_bytes(), expected.as_bytes()) {
            let err = DocdexError::new(ErrorCode::Unauthorized, "missing or wrong bearer token")
                .with_hint("send `Authorization: Bearer <token>`; the token is in $DOCDEX_HOME/token (`docdexd mcp-config` prints it)");
            return refuse(req, err);
        }
    }
    // A request that opens an MCP session (a POST without a session id) past the cap.
    let opens_session = req.method() == Method::POST
        && req.path().starts_with("/v1/mcp")
        && header("mcp-session-id").is_none_or(|s| s.is_empty());
    if opens_session {
        if let Some(sessions) = req.app_data::<web::Data<McpSessions>>() {
            let open = sessions.0.sessions.read().await.len();
            if open >= MAX_MCP_SESSIONS {
                let err = DocdexError::new(
                    ErrorCode::TooManyRequests,
                    format!("{open} MCP sessions are open, the most this daemon keeps"),
                )
                .with_hint(format!(
                    "close sessions you no longer use (DELETE with their Mcp-Session-Id); idle ones close after {} s",
                    MCP_SESSION_IDLE.as_secs()
                ));
                return refuse(req, err);
            }
        }
    }
    let class = EndpointClass::of(req.path(), req.query_string());
    if class == EndpointClass::Health {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let ip = req.peer_addr().map(|a| a.ip()).unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let client = match header("mcp-session-id").filter(|s| !s.is_empty() && s.len() <= 128) {
        Some(session) => ClientKey::Session(session),
        None => ClientKey::Address(ip),
    };
    let Some(_slot) = state.client_slots.try_take(client, class) else {
        let limit = state.client_slots.limit;
        let err = DocdexError::new(
            ErrorCode::TooManyRequests,
            format!("{ip} already has {limit} requests of this kind in progress, the limit per client"),
        )
        .with_hint("wait for answers before sending more, or raise [server] max_requests_per_client");
        return refuse(req, err);
    };
    Ok(next.call(req).await?.map_into_boxed_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_kind_and_health_never() {
        assert_eq!(EndpointClass::of("/healthz", ""), EndpointClass::Health);
        assert_eq!(EndpointClass::of("/v1/models", ""), EndpointClass::Llm);
        assert_eq!(EndpointClass::of("/v1/chat/completions", ""), EndpointClass::Llm);
        assert_eq!(EndpointClass::of("/v1/web/fetch", ""), EndpointClass::Web);
        assert_eq!(EndpointClass::of("/v1/search", "q=x&force_web=true"), EndpointClass::Web);
        assert_eq!(EndpointClass::of("/v1/search", "q=x"), EndpointClass::Local);
        assert_eq!(EndpointClass::of("/v1/mcp", ""), EndpointClass::Mcp);
        let slots = ClientSlots::new(1);
        let local = ClientKey::Address(IpAddr::from([127, 0, 0, 1]));
        let held = slots.try_take(local.clone(), EndpointClass::Llm).unwrap();
        assert!(slots.try_take(local.clone(), EndpointClass::Llm).is_none());
        assert!(slots.try_take(local.clone(), EndpointClass::Local).is_some());
        assert!(slots.try_take(ClientKey::Session("s2".into()), EndpointClass::Llm).is_some());
        drop(held);
        assert!(slots.try_take(local, EndpointClass::Llm).is_some());
    }

    #[test]
    fn text_around_a_bracketed_address_or_a_bad_port_is_refused() {
        let policy = HostPolicy::new(&[], false);
        assert!(policy.allows_authority("[::1]:8080") && policy.allows_authority("[::1]"));
        for host in ["[::1]evil.example", "[::1]:80evil", "[::1]:", "127.0.0.1:80x", "localhost:", "[::1"] {
            assert!(!policy.allows_authority(host), "{host} was accepted");
        }
    }

    #[test]
    fn loopback_names_on_any_port_and_nothing_else() {
        let policy = HostPolicy::new(&[], false);
        for ok in ["127.0.0.1:3210", "localhost", "LOCALHOST:80", "[::1]:3210", "::1"] {
            assert!(policy.allows_authority(ok), "{ok}");
        }
        for bad in
            ["evil.example", "evil.example:3210", "127.0.0.1.evil.example", "localhost.evil:3210", "10.0.0.5:3210"]
        {
            assert!(!policy.allows_authority(bad), "{bad}");
        }
        assert!(policy.allows_origin("http://localhost:5173"));
        assert!(!policy.allows_origin("https://evil.example"));
        assert!(!policy.allows_origin("null"));
        assert!(!policy.allows_origin("file://"));
    }

    #[test]
    fn exposed_accepts_any_host_unless_narrowed() {
        assert!(HostPolicy::new(&[], true).allows_authority("devbox.lan:3210"));
        let narrowed = HostPolicy::new(&["devbox.lan".into()], true);
        assert!(narrowed.allows_authority("devbox.lan:3210"));
        assert!(narrowed.allows_authority("127.0.0.1:3210"));
        assert!(!narrowed.allows_authority("other.lan:3210"));
    }
}
