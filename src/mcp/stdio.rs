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
    error_answer(&serde_json::Value::Null, -32700, &format!("Parse error: {detail}"))
}

/// The longest message taken, as the HTTP endpoint's body limit (rmcp's default there). rmcp's
/// stdio transport drops a longer line (over 16 MiB) without a word, and its client waits
/// forever: here it is answered, with its id when the line's start names it.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// What the reader took from the input.
enum Line {
    Text(String),
    NotUtf8,
    /// Over `MAX_MESSAGE_BYTES`: its length and its first bytes (where a client's `id`
    /// usually is), the rest read and dropped so that memory stays bounded.
    TooLong {
        bytes: usize,
        head: Vec<u8>,
    },
    End,
}

/// How much of an over-long line is kept to look for its id.
const HEAD_BYTES: usize = 64 << 10;

/// The next line, without its newline, reading at most `MAX_MESSAGE_BYTES` into memory.
async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(input: &mut R) -> std::io::Result<Line> {
    let mut line: Vec<u8> = Vec::new();
    let mut bytes = 0usize;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            if bytes == 0 {
                return Ok(Line::End);
            }
            break;
        }
        let (taken, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        bytes += taken;
        let room = if bytes - taken <= MAX_MESSAGE_BYTES { MAX_MESSAGE_BYTES + 1 - line.len() } else { 0 };
        line.extend_from_slice(&available[..taken.min(room)]);
        input.consume(taken + usize::from(ended));
        if ended {
            break;
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
        bytes -= 1;
    }
    if bytes > MAX_MESSAGE_BYTES {
        line.truncate(HEAD_BYTES);
        return Ok(Line::TooLong { bytes, head: line });
    }
    Ok(String::from_utf8(line).map_or(Line::NotUtf8, Line::Text))
}

/// The answer to a message over the limit: an invalid request (-32600), with the id its
/// start names (`{"jsonrpc":"2.0","id":7,"method":…` as clients write it), else null.
fn too_large(bytes: usize, head: &[u8]) -> String {
    let head = String::from_utf8_lossy(head);
    let id = leading_id(&head).unwrap_or(serde_json::Value::Null);
    error_answer(
        &id,
        -32600,
        &format!("Invalid Request: the message is {bytes} bytes, over the limit of {MAX_MESSAGE_BYTES}"),
    )
}

/// The value of a top-level `"id"` met before the message's first nested value.
fn leading_id(head: &str) -> Option<serde_json::Value> {
    let at = head.find("\"id\"")?;
    // Only at the top level: no object or array opened before it but the message's own.
    if head[..at].chars().filter(|&c| c == '{' || c == '[').count() != 1 {
        return None;
    }
    let rest = head[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
    match values.next()? {
        Ok(id @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => Some(id),
        _ => None,
    }
}

/// An error answer: `code`, `message`, and the id of the message it answers.
fn error_answer(id: &serde_json::Value, code: i64, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// The answer to a message JSON-RPC or MCP does not take, which rmcp would drop without a
/// word (no `"jsonrpc"`, a method that is not a string) or answer without naming what is
/// wrong (`tools/call` without a tool's name: "method not found"). None for the rest.
fn malformed(message: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    // A batch (an array) is left to rmcp.
    let Value::Object(fields) = message else {
        return if message.is_array() {
            None
        } else {
            Some(error_answer(&Value::Null, -32600, "Invalid Request: a message is a JSON object"))
        };
    };
    let id = fields.get("id").cloned().unwrap_or(Value::Null);
    if fields.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error_answer(&id, -32600, "Invalid Request: \"jsonrpc\" must be \"2.0\""));
    }
    match fields.get("method") {
        Some(Value::String(method)) if method == "tools/call" && fields.contains_key("id") => {
            let params = fields.get("params");
            let named = params.and_then(|p| p.get("name")).is_some_and(Value::is_string);
            let arguments_ok =
                params.and_then(|p| p.get("arguments")).is_none_or(|a| a.is_object() || a.is_null());
            (!named || !arguments_ok).then(|| {
                error_answer(
                    &id,
                    -32602,
                    "Invalid params: tools/call takes {\"name\": the tool (a string), \"arguments\": an object}",
                )
            })
        }
        Some(Value::String(_)) => None,
        Some(_) => Some(error_answer(&id, -32600, "Invalid Request: \"method\" must be a string")),
        None if fields.contains_key("result") || fields.contains_key("error") => None,
        None => Some(error_answer(
            &id,
            -32600,
            "Invalid Request: a message has a \"method\" (a request or a notification) or a \"result\" or \"error\" (a response)",
        )),
    }
}

/// rmcp's answer, its terse errors said in full: a method not found names itself as the
/// whole message, and a request before `initialize` is told about its missing `_meta` only.
fn clearer(line: String) -> String {
    if line.len() > HEAD_BYTES || !line.contains("\"error\"") {
        return line;
    }
    let Ok(mut answer) = serde_json::from_str::<serde_json::Value>(&line) else { return line };
    let Some(error) = answer.get_mut("error").and_then(|e| e.as_object_mut()) else { return line };
    let code = error.get("code").and_then(|c| c.as_i64());
    let message = error.get("message").and_then(|m| m.as_str()).unwrap_or_default().to_string();
    let clearer = if code == Some(-32601) && !message.contains(' ') {
        format!("Method not found: {message}")
    } else if message.starts_with("request _meta is missing") {
        format!("the session is not initialized: send initialize (then notifications/initialized) first ({message})")
    } else {
        return line;
    };
    error.insert("message".into(), clearer.into());
    answer.to_string()
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
        let mut input = BufReader::new(input);
        loop {
            let line = match next_line(&mut input).await {
                Ok(Line::Text(line)) => line,
                Ok(Line::End) => break,
                Ok(Line::NotUtf8) => {
                    let _ = errors.send(parse_error("the line is not UTF-8"));
                    continue;
                }
                Ok(Line::TooLong { bytes, head }) => {
                    let _ = errors.send(too_large(bytes, &head));
                    continue;
                }
                Err(err) => {
                    // stdin failed: answer and stop, as rmcp would have.
                    let _ = errors.send(parse_error(&err.to_string()));
                    break;
                }
            };
            if !line.trim().is_empty() {
                match serde_json::from_str::<serde_json::Value>(&line) {
                    Err(err) => {
                        let _ = errors.send(parse_error(&err.to_string()));
                        continue;
                    }
                    Ok(message) => {
                        if let Some(refusal) = malformed(&message) {
                            let _ = errors.send(refusal);
                            continue;
                        }
                    }
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
            let line = clearer(line);
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

    /// rmcp's ends closed: what the client read, as text and as JSON lines.
    async fn answers(
        rmcp_in: DuplexStream,
        rmcp_out: DuplexStream,
        stdout_writer: JoinHandle<()>,
        mut client_out: DuplexStream,
    ) -> (String, Vec<serde_json::Value>) {
        drop(rmcp_out);
        drop(rmcp_in);
        stdout_writer.await.unwrap();
        let mut out = String::new();
        client_out.read_to_string(&mut out).await.unwrap();
        let lines = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (out, lines)
    }

    #[tokio::test]
    async fn a_line_that_is_not_json_is_answered_and_the_rest_pass_through() {
        let (mut client_in, server_in) = tokio::io::duplex(PIPE_BYTES);
        let (server_out, client_out) = tokio::io::duplex(PIPE_BYTES);
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
        let (out, lines) = answers(rmcp_in, rmcp_out, stdout_writer, client_out).await;
        assert_eq!(lines.len(), 2, "{out}");
        assert_eq!(lines[0]["error"]["code"], -32700, "{out}");
        assert!(lines[0]["id"].is_null(), "{out}");
        assert_eq!(lines[1]["id"], 1, "{out}");
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_answered_with_its_id_and_bad_utf8_is_a_parse_error() {
        let (mut client_in, server_in) = tokio::io::duplex(PIPE_BYTES);
        let (server_out, client_out) = tokio::io::duplex(PIPE_BYTES);
        let Relay { mut rmcp_in, rmcp_out, stdout_writer, .. } = relay_between(server_in, server_out);
        let writer = tokio::spawn(async move {
            let huge = "x".repeat(MAX_MESSAGE_BYTES + 10);
            let call = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"docdex_search\",\"arguments\":{{\"query\":\"{huge}\"}}}}}}\n"
            );
            client_in.write_all(call.as_bytes()).await.unwrap();
            client_in.write_all(b"\xff\xfe\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n").await.unwrap();
            client_in.shutdown().await.unwrap();
        });
        let mut passed = String::new();
        rmcp_in.read_to_string(&mut passed).await.unwrap();
        writer.await.unwrap();
        // Only the message within the limit reaches rmcp.
        assert_eq!(passed, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n");
        let (out, lines) = answers(rmcp_in, rmcp_out, stdout_writer, client_out).await;
        assert_eq!(lines.len(), 2, "{out}");
        assert_eq!((lines[0]["id"].as_u64(), lines[0]["error"]["code"].as_i64()), (Some(7), Some(-32600)), "{out}");
        assert!(lines[0]["error"]["message"].as_str().unwrap().contains("over the limit"), "{out}");
        assert_eq!((lines[1]["id"].is_null(), lines[1]["error"]["code"].as_i64()), (true, Some(-32700)), "{out}");
    }

    #[test]
    fn a_malformed_message_is_answered_with_what_is_wrong_and_its_id() {
        let refusal = |text: &str| {
            malformed(&serde_json::from_str(text).unwrap())
                .map(|a| serde_json::from_str::<serde_json::Value>(&a).unwrap())
        };
        let no_version = refusal(r#"{"id":9,"method":"ping"}"#).unwrap();
        assert_eq!((no_version["id"].as_u64(), no_version["error"]["code"].as_i64()), (Some(9), Some(-32600)));
        let nameless = refusal(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}"#).unwrap();
        assert_eq!((nameless["id"].as_u64(), nameless["error"]["code"].as_i64()), (Some(6), Some(-32602)));
        assert!(refusal(r#"{"jsonrpc":"2.0","id":1,"method":5}"#).is_some());
        assert!(refusal(r#"{"jsonrpc":"2.0","id":1}"#).is_some());
        assert!(refusal("7").is_some());
        for fine in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"docdex_search","arguments":{"query":"x"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        ] {
            assert_eq!(refusal(fine), None, "{fine}");
        }
        let unknown = clearer(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"bogus/method"}}"#.into());
        assert!(unknown.contains("Method not found: bogus/method"), "{unknown}");
        let result = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        assert_eq!(clearer(result.into()), result);
    }

    #[test]
    fn an_id_is_read_only_at_the_top_level() {
        assert_eq!(leading_id(r#"{"jsonrpc":"2.0","id":"a-1","method":"x"#), Some(serde_json::json!("a-1")));
        assert_eq!(leading_id(r#"{"params":{"id":3},"id":4"#), None);
        assert_eq!(leading_id(r#"{"jsonrpc":"2.0","method":"x","par"#), None);
    }
}
