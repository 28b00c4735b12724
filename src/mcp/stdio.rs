//! MCP's stdio transport with JSON-RPC's parse error.
//!
//! rmcp's stdio transport skips a line that is not JSON without a word, and a client that
//! sent one waits for its answer forever. JSON-RPC 2.0 asks for a parse error (-32700, id
//! null) instead. Lines from stdin pass through here: one that is not JSON is answered on
//! stdout; the rest go on to rmcp unchanged, whose answers are copied to stdout line by line,
//! so the two writers never interleave within a message.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How much of a message may be in flight between the relays and rmcp.
const PIPE_BYTES: usize = 1 << 16;

/// The two ends rmcp reads and writes, the task that reads stdin (aborted when the session
/// is over), and the one that writes stdout (it ends once rmcp has closed its end and
/// everything it wrote is out).
pub struct Relay {
    pub rmcp_in: DuplexStream,
    pub rmcp_out: DuplexStream,
    pub stdin_reader: JoinHandle<()>,
    pub stdout_writer: JoinHandle<()>,
}

/// The parse error for a line that is not JSON.
pub fn parse_error(detail: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {detail}")},
    })
    .to_string()
}

/// Starts relaying the process's stdin and stdout.
pub fn relay() -> Relay {
    relay_between(tokio::io::stdin(), tokio::io::stdout())
}

/// Relays `input` to rmcp and rmcp (with the parse errors) to `output`.
pub fn relay_between<R, W>(input: R, mut output: W) -> Relay
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (errors, mut error_lines) = mpsc::unbounded_channel::<String>();
    let stdin_reader = tokio::spawn(async move {
        let mut lines = BufReader::new(input).lines();
        loop {
            let line = match lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(err) => {
                    // Not UTF-8, or stdin failed: answer and stop, as rmcp would have.
                    let _ = errors.send(parse_error(&err.to_string()));
                    break;
                }
            };
            if !line.trim().is_empty() {
                if let Err(err) = serde_json::from_str::<serde::de::IgnoredAny>(&line) {
                    let _ = errors.send(parse_error(&err.to_string()));
                    continue;
                }
            }
            let sent = async {
                to_rmcp.write_all(line.as_bytes()).await?;
                to_rmcp.write_all(b"\n").await
            };
            if sent.await.is_err() {
                break;
            }
        }
        // End of input: rmcp sees it and ends the session.
        let _ = to_rmcp.shutdown().await;
    });
    let stdout_writer = tokio::spawn(async move {
        let mut answers = BufReader::new(from_rmcp).lines();
        let mut errors_open = true;
        loop {
            let line = tokio::select! {
                answer = answers.next_line() => match answer {
                    Ok(Some(line)) => line,
                    _ => break,
                },
                error = error_lines.recv(), if errors_open => match error {
                    Some(line) => line,
                    None => {
                        errors_open = false;
                        continue;
                    }
                },
            };
            let written = async {
                output.write_all(line.as_bytes()).await?;
                output.write_all(b"\n").await?;
                output.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
        // A parse error answered just before rmcp closed is still owed.
        while let Ok(line) = error_lines.try_recv() {
            let _ = output.write_all(format!("{line}\n").as_bytes()).await;
        }
        let _ = output.flush().await;
    });
    Relay { rmcp_in, rmcp_out, stdout_writer, stdin_reader }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_line_that_is_not_json_is_answered_and_the_rest_pass_through() {
        let (mut client_in, server_in) = tokio::io::duplex(PIPE_BYTES);
        let (server_out, mut client_out) = tokio::io::duplex(PIPE_BYTES);
        let relay = relay_between(server_in, server_out);
        client_in.write_all(b"not json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n").await.unwrap();
        client_in.shutdown().await.unwrap();
        // What rmcp would read: the JSON line (and the blank one), not the broken one.
        let Relay { mut rmcp_in, mut rmcp_out, stdout_writer, .. } = relay;
        let mut passed = String::new();
        rmcp_in.read_to_string(&mut passed).await.unwrap();
        assert_eq!(passed, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n");
        // What rmcp writes goes out whole, after the parse error.
        rmcp_out.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await.unwrap();
        drop(rmcp_out);
        drop(rmcp_in);
        stdout_writer.await.unwrap();
        let mut out = String::new();
        client_out.read_to_string(&mut out).await.unwrap();
        let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert_eq!(lines[0]["error"]["code"], -32700, "{out}");
        assert!(lines[0]["id"].is_null(), "{out}");
        assert_eq!(lines[1]["id"], 1, "{out}");
    }
}
