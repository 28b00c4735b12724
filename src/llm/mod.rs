//! The LLM client library behind the `LlmGateway` actor: one `LlmClient` that speaks either
//! Ollama's API (`/api/chat` NDJSON streaming, `/api/tags`, `/api/show`) or any
//! OpenAI-compatible server (`/v1/chat/completions` SSE streaming, `/v1/models`, and
//! llama.cpp's `/tokenize` and `/props` when they exist), plus the pure parts of chat:
//! the token budget (`budget`) and hardware-aware model advice (`hardware`).
//!
//! Streaming keeps backpressure end to end: events go through a bounded channel, and when
//! the receiver is dropped (the HTTP client went away) the pump returns and drops the
//! upstream response, which closes the connection — llama.cpp and Ollama both stop
//! generating when their client disconnects.

pub mod budget;
pub mod hardware;
mod ollama;
mod openai;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::config::{LlmConfig, ProviderKind};
pub use crate::protocol::chat::ChatMessage;
use crate::protocol::{DocdexError, ErrorCode, Result};

/// A generation request, already budgeted.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    pub max_tokens: usize,
    pub temperature_opt: Option<f32>,
    /// The context window the prompt was budgeted for (Ollama needs it as `num_ctx`).
    pub context_window: usize,
}

/// Token counts the server reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What a stream yields.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of the answer.
    Delta(String),
    /// The end: why it stopped (`stop`, `length`) and the usage when the server said.
    Done { finish_reason: String, usage_opt: Option<Usage> },
}

/// A model the server has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEntry {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

/// How the events of one generation reach the caller; dropping it cancels the generation.
pub type EventReceiver = mpsc::Receiver<Result<StreamEvent>>;

/// Events buffered between the upstream reader and the client: small, so a slow client
/// slows the upstream read (and so generation) instead of piling tokens up in memory.
pub const STREAM_BUFFER: usize = 16;

/// The configured server, ready to talk to.
#[derive(Clone)]
pub struct LlmClient {
    pub kind: ProviderKind,
    pub base_url: String,
    http: reqwest::Client,
    retries: u32,
}

impl LlmClient {
    /// `None` provider kinds are reported by config loading; here an unknown one is an error.
    pub fn new(config: &LlmConfig) -> Result<LlmClient> {
        let kind = ProviderKind::parse(&config.provider).ok_or_else(|| {
            DocdexError::new(ErrorCode::ConfigInvalid, format!("unknown llm.provider `{}`", config.provider))
                .with_hint("use `ollama` or `openai` (any OpenAI-compatible server: llama.cpp, LM Studio, vLLM)")
        })?;
        // No overall timeout: an answer streams for as long as it streams. Connecting and
        // each read are bounded instead.
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(config.timeout_secs.clamp(1, 30)))
            .read_timeout(Duration::from_secs(config.timeout_secs.max(1)))
            .user_agent(concat!("docdex/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| DocdexError::internal(format!("cannot build the LLM HTTP client: {err}")))?;
        // `http://host:8080/v1` is how every OpenAI client is configured; the paths here carry
        // their own `/v1`, so the server's root is taken either way.
        let base = config.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        Ok(LlmClient { kind, base_url: base.to_string(), http, retries: config.retries })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// The error for a server that cannot be reached: names the URL and how to start one.
    pub fn unreachable(&self, cause: &str) -> DocdexError {
        let hint = match self.kind {
            ProviderKind::Ollama => format!(
                "start Ollama (`ollama serve`) and pull a model (`docdexd llm-setup` shows which), or point [llm] base_url at a running server (now {})",
                self.base_url
            ),
            ProviderKind::OpenAi => format!(
                "start an OpenAI-compatible server there, e.g. llama.cpp: `llama-server -m model.gguf --port 8080`, or set [llm] base_url (now {})",
                self.base_url
            ),
        };
        DocdexError::new(
            ErrorCode::LlmUnavailable,
            format!("cannot reach the {} LLM server at {}: {cause}", self.kind.as_str(), self.base_url),
        )
        .with_hint(hint)
    }

    /// Maps a transport error; connection failures are `llm_unavailable`.
    fn transport_error(&self, err: reqwest::Error) -> DocdexError {
        if err.is_timeout() {
            return DocdexError::new(
                ErrorCode::Timeout,
                format!("the LLM server at {} did not answer in time: {err}", self.base_url),
            )
            .with_hint("raise [llm] timeout_secs, or use a smaller model");
        }
        self.unreachable(&error_chain(&err))
    }

    /// Sends a request, retrying connection failures `retries` times (a server that is
    /// starting up or restarting); HTTP error statuses are not retried.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let mut attempt = 0;
        loop {
            let Some(this) = request.try_clone() else {
                return request.send().await.map_err(|err| self.transport_error(err));
            };
            match this.send().await {
                Ok(response) => return Ok(response),
                Err(err) if err.is_connect() && attempt < self.retries => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
                }
                Err(err) => return Err(self.transport_error(err)),
            }
        }
    }

    /// Fails with the server's own message on a non-success status.
    async fn checked(&self, response: reqwest::Response, what: &str) -> Result<reqwest::Response> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.text().await.unwrap_or_default();
        let message = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| {
                v["error"]["message"].as_str().map(str::to_string).or_else(|| v["error"].as_str().map(str::to_string))
            })
            .unwrap_or_else(|| body.chars().take(300).collect());
        let code = if status.as_u16() == 404 { ErrorCode::LlmUnavailable } else { ErrorCode::LlmError };
        let mut err =
            DocdexError::new(code, format!("the LLM server at {} refused {what} ({status}): {message}", self.base_url));
        if status.as_u16() == 404 && self.kind == ProviderKind::Ollama {
            err = err.with_hint("pull the model first (`ollama pull <model>`; `docdexd llm-setup` shows which)");
        } else if status.as_u16() == 404 {
            err = err.with_hint("check [llm] default_model against `docdexd llm-list` (the server's models)");
        }
        Err(err)
    }

    /// The models the server has.
    pub async fn list_models(&self) -> Result<Vec<ModelEntry>> {
        match self.kind {
            ProviderKind::Ollama => ollama::list_models(self).await,
            ProviderKind::OpenAi => openai::list_models(self).await,
        }
    }

    /// The model's context window as the server reports it, when it does.
    pub async fn context_window(&self, model: &str) -> Option<u64> {
        match self.kind {
            ProviderKind::Ollama => ollama::context_window(self, model).await,
            ProviderKind::OpenAi => openai::context_window(self, model).await,
        }
    }

    /// Exact token counts from the model's own tokenizer (llama.cpp's `/tokenize`), or
    /// `None` when the server has no tokenizer endpoint (then `budget::estimate_tokens`).
    pub async fn count_tokens(&self, texts: &[String]) -> Option<Vec<usize>> {
        match self.kind {
            ProviderKind::Ollama => None,
            ProviderKind::OpenAi => openai::count_tokens(self, texts).await,
        }
    }

    /// Starts a generation: returns once the server accepted the request (so a refusal is
    /// an error here, not in the stream), then pumps events in a task until the end or
    /// until the receiver is dropped.
    pub async fn stream(&self, generation: &Generation) -> Result<EventReceiver> {
        let response = match self.kind {
            ProviderKind::Ollama => ollama::start(self, generation).await?,
            ProviderKind::OpenAi => openai::start(self, generation).await?,
        };
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        let this = self.clone();
        tokio::spawn(async move {
            let outcome = match this.kind {
                ProviderKind::Ollama => ollama::pump(&this, response, &tx).await,
                ProviderKind::OpenAi => openai::pump(&this, response, &tx).await,
            };
            match outcome {
                Ok(Pumped::Finished) => {}
                Ok(Pumped::Cancelled) => tracing::info!("generation cancelled: the client went away"),
                Err(err) => {
                    let _ = tx.send(Err(err)).await;
                }
            }
        });
        Ok(rx)
    }
}

/// How a pump ended (errors are sent to the receiver).
#[derive(Debug, PartialEq, Eq)]
enum Pumped {
    Finished,
    /// The receiver was dropped: the upstream response is dropped too, closing the
    /// connection so the server stops generating.
    Cancelled,
}

/// Splits a byte stream into lines; the providers parse each line (SSE `data:` or NDJSON).
async fn for_each_line<F>(response: reqwest::Response, client: &LlmClient, mut on_line: F) -> Result<Pumped>
where
    F: AsyncLineHandler,
{
    use futures_util::StreamExt;
    let mut stream = response.bytes_stream();
    let mut buffer: Vec<u8> = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|err| {
            DocdexError::new(
                ErrorCode::LlmError,
                format!("the LLM server at {} broke off the answer: {}", client.base_url, error_chain(&err)),
            )
        })?;
        buffer.extend_from_slice(&chunk);
        while let Some(pos) = buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            match on_line.line(line.trim()).await? {
                LineOutcome::More => {}
                LineOutcome::Done => return Ok(Pumped::Finished),
                LineOutcome::Cancelled => return Ok(Pumped::Cancelled),
            }
        }
    }
    let rest = String::from_utf8_lossy(&buffer).trim().to_string();
    if !rest.is_empty() {
        match on_line.line(&rest).await? {
            LineOutcome::Cancelled => return Ok(Pumped::Cancelled),
            LineOutcome::Done => return Ok(Pumped::Finished),
            LineOutcome::More => {}
        }
    }
    on_line.end().await
}

enum LineOutcome {
    More,
    Done,
    Cancelled,
}

/// A provider's line parser: sends events, says when the stream is over.
trait AsyncLineHandler {
    async fn line(&mut self, line: &str) -> Result<LineOutcome>;
    /// The connection ended without an explicit end marker.
    async fn end(&mut self) -> Result<Pumped>;
}

/// Sends an event; `false` when the receiver is gone.
async fn emit(tx: &mpsc::Sender<Result<StreamEvent>>, event: StreamEvent) -> bool {
    tx.send(Ok(event)).await.is_ok()
}

/// `err: cause: cause`, so "connection refused" is not hidden behind "error sending request".
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_is_taken_with_or_without_v1() {
        for base in
            ["http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"]
        {
            let config = LlmConfig { provider: "openai".into(), base_url: base.into(), ..LlmConfig::default() };
            let client = LlmClient::new(&config).unwrap();
            assert_eq!(client.url("/v1/models"), "http://127.0.0.1:8080/v1/models", "{base}");
        }
    }

    #[test]
    fn provider_names() {
        assert_eq!(ProviderKind::parse("Ollama"), Some(ProviderKind::Ollama));
        assert_eq!(ProviderKind::parse("openai"), Some(ProviderKind::OpenAi));
        assert_eq!(ProviderKind::parse("llama.cpp"), Some(ProviderKind::OpenAi));
        assert_eq!(ProviderKind::parse("bard"), None);
    }
}
