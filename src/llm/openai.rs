//! OpenAI-compatible servers (llama.cpp's server, LM Studio, vLLM): `/v1/chat/completions`
//! with SSE streaming, `/v1/models`; llama.cpp's `/tokenize` and `/props` when present.

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::{emit, for_each_line, AsyncLineHandler, Generation, LineOutcome, LlmClient, ModelEntry, Pumped};
use super::{StreamEvent, Usage};
use crate::protocol::{DocdexError, ErrorCode, Result};

pub(super) async fn list_models(client: &LlmClient) -> Result<Vec<ModelEntry>> {
    let response = client.send(client.http.get(client.url("/v1/models"))).await?;
    let body: Value = client.checked(response, "the model list").await?.json().await.map_err(|err| {
        DocdexError::new(
            ErrorCode::LlmError,
            format!("{} answered /v1/models with something else: {err}", client.base_url),
        )
    })?;
    Ok(body["data"]
        .as_array()
        .map(|models| {
            models
                .iter()
                .filter_map(|m| {
                    Some(ModelEntry {
                        id: m["id"].as_str()?.to_string(),
                        size_bytes: m["meta"]["size"].as_u64(),
                        context_window: m["meta"]["n_ctx"].as_u64(),
                    })
                })
                .collect()
        })
        .unwrap_or_default())
}

/// llama.cpp's `/props` knows the per-slot context; `/v1/models` its `meta.n_ctx`.
pub(super) async fn context_window(client: &LlmClient, model: &str) -> Option<u64> {
    if let Ok(response) = client.http.get(client.url("/props")).send().await {
        if response.status().is_success() {
            if let Ok(body) = response.json::<Value>().await {
                if let Some(n_ctx) = body["default_generation_settings"]["n_ctx"].as_u64().filter(|n| *n > 0) {
                    return Some(n_ctx);
                }
            }
        }
    }
    let models = list_models(client).await.ok()?;
    models.iter().find(|m| m.id == model).or(models.first()).and_then(|m| m.context_window)
}

/// One `/tokenize` call per text (loopback, about a millisecond each); `None` as soon as
/// the server turns out not to have the endpoint.
pub(super) async fn count_tokens(client: &LlmClient, texts: &[String]) -> Option<Vec<usize>> {
    let mut counts = Vec::with_capacity(texts.len());
    for text in texts {
        let response = client.http.post(client.url("/tokenize")).json(&json!({ "content": text })).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let body: Value = response.json().await.ok()?;
        counts.push(body["tokens"].as_array()?.len());
    }
    Some(counts)
}

pub(super) async fn start(client: &LlmClient, generation: &Generation) -> Result<reqwest::Response> {
    let mut body = json!({
        "model": generation.model,
        "messages": generation.messages,
        "stream": true,
        "stream_options": { "include_usage": true },
        "max_tokens": generation.max_tokens,
    });
    if let Some(temperature) = generation.temperature_opt {
        body["temperature"] = json!(temperature);
    }
    let response = client.send(client.http.post(client.url("/v1/chat/completions")).json(&body)).await?;
    client.checked(response, "the chat request").await
}

struct SseParser<'a> {
    tx: &'a mpsc::Sender<Result<StreamEvent>>,
    finish_opt: Option<String>,
    usage_opt: Option<Usage>,
    /// Whether any answer text came: an answer that ends with none is the server's failure,
    /// not an empty answer to show as one.
    answered: bool,
}

impl AsyncLineHandler for SseParser<'_> {
    async fn line(&mut self, line: &str) -> Result<LineOutcome> {
        // Comments (`: ping`), event names and blank separators carry nothing we use.
        let Some(data) = line.strip_prefix("data:").map(str::trim) else { return Ok(LineOutcome::More) };
        if data == "[DONE]" {
            return self.finish().await;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|err| {
            DocdexError::new(ErrorCode::LlmError, format!("unreadable stream chunk from the LLM server: {err}"))
        })?;
        if let Some(message) = chunk["error"]["message"].as_str() {
            return Err(DocdexError::new(ErrorCode::LlmError, format!("the LLM server failed mid-answer: {message}")));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage_opt = Some(Usage {
                prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
                completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
            });
        }
        let choice = &chunk["choices"][0];
        if let Some(text) = choice["delta"]["content"].as_str().filter(|t| !t.is_empty()) {
            self.answered = true;
            if !emit(self.tx, StreamEvent::Delta(text.to_string())).await {
                return Ok(LineOutcome::Cancelled);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_opt = Some(reason.to_string());
        }
        Ok(LineOutcome::More)
    }

    async fn end(&mut self) -> Result<Pumped> {
        // Without `[DONE]` a stream that said how it finished is whole (some servers stop
        // there); one that said nothing was cut: its text is part of an answer, not one.
        if self.finish_opt.is_none() {
            return Err(DocdexError::new(
                ErrorCode::LlmError,
                "the LLM server closed the stream mid-answer (no finish reason, no [DONE])",
            ));
        }
        match self.finish().await? {
            LineOutcome::Cancelled => Ok(Pumped::Cancelled),
            _ => Ok(Pumped::Finished),
        }
    }
}

impl SseParser<'_> {
    async fn finish(&mut self) -> Result<LineOutcome> {
        // `length` with no text is the server's answer to a budget spent (on reasoning, say):
        // the client sees that reason. Finished with nothing to say is a failure.
        if !self.answered && self.finish_opt.as_deref().is_none_or(|reason| reason == "stop") {
            return Err(DocdexError::new(ErrorCode::LlmError, "the LLM server's answer was empty").with_hint(
                "check the model: it finished without a word (a broken chat template or a model that failed to load)",
            ));
        }
        let event = StreamEvent::Done {
            finish_reason: self.finish_opt.take().unwrap_or_else(|| "stop".into()),
            usage_opt: self.usage_opt.take(),
        };
        Ok(if emit(self.tx, event).await { LineOutcome::Done } else { LineOutcome::Cancelled })
    }
}

pub(super) async fn pump(
    client: &LlmClient,
    response: reqwest::Response,
    tx: &mpsc::Sender<Result<StreamEvent>>,
) -> Result<Pumped> {
    for_each_line(response, client, SseParser { tx, finish_opt: None, usage_opt: None, answered: false }).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `lines` to the stream parser; the outcome, and whether `Done` was sent.
    async fn parse(lines: &[&str], closed: bool) -> (Result<()>, bool) {
        let (tx, mut rx) = mpsc::channel(64);
        let mut parser = SseParser { tx: &tx, finish_opt: None, usage_opt: None, answered: false };
        let mut outcome = Ok(());
        for line in lines {
            match parser.line(line).await {
                Ok(LineOutcome::More) => {}
                Ok(_) => break,
                Err(err) => {
                    outcome = Err(err);
                    break;
                }
            }
        }
        if closed && outcome.is_ok() {
            outcome = parser.end().await.map(|_| ());
        }
        drop(tx);
        let mut done = false;
        while let Some(event) = rx.recv().await {
            done |= matches!(event, Ok(StreamEvent::Done { .. }));
        }
        (outcome, done)
    }

    const HELLO: &str = r#"data: {"choices":[{"delta":{"content":"Hello"}}]}"#;
    const STOP: &str = r#"data: {"choices":[{"delta":{},"finish_reason":"stop"}]}"#;

    #[tokio::test]
    async fn a_cut_or_empty_answer_is_the_servers_error_not_an_answer() {
        // Whole: text, a finish reason, [DONE]; or a finish reason and the connection closed.
        assert!(matches!(parse(&[HELLO, STOP, "data: [DONE]"], false).await, (Ok(()), true)));
        assert!(matches!(parse(&[HELLO, STOP], true).await, (Ok(()), true)));
        // Cut: text, then the connection closed with no finish reason.
        let (outcome, done) = parse(&[HELLO], true).await;
        let err = outcome.unwrap_err();
        assert_eq!((err.code, done), (ErrorCode::LlmError, false));
        assert!(err.message.contains("mid-answer"), "{}", err.message);
        // Empty: finished, without a word.
        let (outcome, done) = parse(&[STOP, "data: [DONE]"], false).await;
        assert_eq!((outcome.unwrap_err().code, done), (ErrorCode::LlmError, false));
        // A budget spent before any text says so as its finish reason, not as an error.
        let length = r#"data: {"choices":[{"delta":{},"finish_reason":"length"}]}"#;
        assert!(matches!(parse(&[length, "data: [DONE]"], false).await, (Ok(()), true)));
    }
}
