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
                if let Ok(cwd) = std::env::current_dir() {
                    with_absolute_paths(&mut message, &cwd);
                }
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

/// Makes the relative paths a tool call names absolute, against this process's directory:
/// the daemon refuses them, its working directory not being the client's, but this relay
/// runs where the client does (as `docdexd mcp` without a daemon would resolve them).
fn with_absolute_paths(message: &mut ClientJsonRpcMessage, cwd: &Path) {
    let JsonRpcMessage::Request(request) = message else { return };
    let ClientRequest::CallToolRequest(call) = &mut request.request else { return };
    let Some(arguments) = call.params.arguments.as_mut() else { return };
    let absolute = |text: &str| -> String {
        if text.trim().is_empty() || Path::new(text).is_absolute() {
            text.to_string()
        } else {
            cwd.join(text).display().to_string()
        }
    };
    let mut keys = vec!["repo", "repo_path", "project_root", "repos"];
    if call.params.name == "docdex_collection_add" {
        keys.push("path");
    }
    for key in keys {
        match arguments.get_mut(key) {
            Some(serde_json::Value::Array(items)) => {
                for item in items {
                    if let serde_json::Value::String(text) = item {
                        *text = absolute(text);
                    }
                }
            }
            // `repos` may be comma-separated, as a query string carries a list.
            Some(serde_json::Value::String(text)) if key == "repos" => {
                *text = text.split(',').map(|item| absolute(item.trim())).collect::<Vec<_>>().join(",");
            }
            Some(serde_json::Value::String(text)) => *text = absolute(text),
            _ => {}
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(arguments: serde_json::Value, tool: &str) -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }))
        .unwrap()
    }

    fn arguments(message: &ClientJsonRpcMessage) -> serde_json::Value {
        serde_json::to_value(message).unwrap()["params"]["arguments"].clone()
    }

    #[test]
    fn relative_paths_are_made_absolute_against_the_relay_s_directory() {
        let cwd = Path::new("/home/me/project");
        let mut message = call(serde_json::json!({"query": "x", "repo": ".", "repos": ["a", "/b"]}), "docdex_search");
        with_absolute_paths(&mut message, cwd);
        assert_eq!(
            arguments(&message),
            serde_json::json!({"query": "x", "repo": "/home/me/project/.", "repos": ["/home/me/project/a", "/b"]})
        );
        let mut message = call(serde_json::json!({"query": "x", "repos": "a, /b"}), "docdex_search");
        with_absolute_paths(&mut message, cwd);
        assert_eq!(arguments(&message)["repos"], "/home/me/project/a,/b");
        // A collection's folder too, but `path` elsewhere is a file of the repo.
        let mut message = call(serde_json::json!({"name": "n", "path": "notes"}), "docdex_collection_add");
        with_absolute_paths(&mut message, cwd);
        assert_eq!(arguments(&message)["path"], "/home/me/project/notes");
        let mut message = call(serde_json::json!({"path": "src/lib.rs"}), "docdex_get");
        with_absolute_paths(&mut message, cwd);
        assert_eq!(arguments(&message)["path"], "src/lib.rs");
    }
}
