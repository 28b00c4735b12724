//! `docdexd mcp` while a daemon runs: a relay between the editor's stdio and the daemon's
//! streamable HTTP endpoint, so every editor session shares the daemon's indexes, watchers
//! and model instead of opening its own (and fighting it for the index writer). Messages
//! pass through unchanged both ways (the daemon's questions to the client, such as its
//! workspace roots, included), except that a tool call without a repo gets the `--repo` this
//! process was started with.

use std::path::Path;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::transport::{IntoTransport, Transport};
use rmcp::RoleServer;

use crate::daemon::client::DaemonClient;
use crate::protocol::{DocdexError, Result};

/// Relays stdio to the daemon's `/v1/mcp` until either side closes.
pub async fn relay_stdio(daemon: &DaemonClient, default_repo_opt: Option<&Path>) -> Result<()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{}/v1/mcp", daemon.base_url()));
    if let Some(token) = daemon.token() {
        config = config.auth_header(token.to_string());
    }
    let mut upstream = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let super::stdio::Relay { rmcp_in, rmcp_out, stdin_reader, stdout_writer } = super::stdio::relay();
    let mut downstream = IntoTransport::<RoleServer, std::io::Error, _>::into_transport((rmcp_in, rmcp_out));
    let default_repo = default_repo_opt.map(|p| p.display().to_string());
    let result = loop {
        tokio::select! {
            from_client = downstream.receive() => {
                let Some(mut message) = from_client else { break Ok(()) };
                if let Some(repo) = &default_repo {
                    with_default_repo(&mut message, repo);
                }
                if let Err(err) = upstream.send(message).await {
                    break Err(DocdexError::internal(format!("the daemon's MCP endpoint failed: {err}"))
                        .with_hint("is `docdexd daemon` still running? `docdexd status` tells"));
                }
            }
            from_daemon = upstream.receive() => {
                let Some(message) = from_daemon else {
                    break Err(DocdexError::internal("the daemon closed the MCP session")
                        .with_hint("is `docdexd daemon` still running? `docdexd status` tells"));
                };
                if let Err(err) = downstream.send(message).await {
                    break Err(DocdexError::internal(format!("cannot write to the MCP client: {err}")));
                }
            }
        }
    };
    let _ = upstream.close().await;
    stdin_reader.abort();
    drop(downstream);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), stdout_writer).await;
    result
}

/// Adds `repo` to a tool call that names no repo (by any of its names).
fn with_default_repo(message: &mut ClientJsonRpcMessage, repo: &str) {
    let JsonRpcMessage::Request(request) = message else { return };
    let ClientRequest::CallToolRequest(call) = &mut request.request else { return };
    let arguments = call.params.arguments.get_or_insert_with(Default::default);
    // A search over several repos or a collection names its own; the collection tools take none.
    let named = ["repo", "repo_path", "project_root", "repos", "group", "collection"]
        .iter()
        .any(|key| arguments.get(*key).is_some_and(|v| !v.is_null()));
    if !named && !call.params.name.starts_with("docdex_collection_") {
        arguments.insert("repo".into(), serde_json::Value::String(repo.to_string()));
    }
}
