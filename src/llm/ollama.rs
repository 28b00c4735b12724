//! Ollama's documented API: `POST /api/chat` (NDJSON stream of `{message: {content}, done}`
//! objects, the last with `done: true`, `done_reason` and the eval counts), `GET /api/tags`
//! (installed models) and `POST /api/show` (model info, with `<arch>.context_length`).

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::{emit, for_each_line, AsyncLineHandler, Generation, LineOutcome, LlmClient, ModelEntry, Pumped};
use super::{StreamEvent, Usage};
use crate::protocol::{DocdexError, ErrorCode, Result};

pub(super) async fn list_models(client: &LlmClient) -> Result<Vec<ModelEntry>> {
    let response = client.send(client.http.get(client.url("/api/tags"))).await?;
    let body: Value = client.checked(response, "the model list").await?.json().await.map_err(|err| {
        DocdexError::new(
            ErrorCode::LlmError,
            format!("{} answered /api/tags with something else: {err}", client.base_url),
        )
    })?;
    Ok(body["models"]
        .as_array()
        .map(|models| {
            models
                .iter()
                .filter_map(|m| {
                    let id = m["name"].as_str().or_else(|| m["model"].as_str())?;
                    Some(ModelEntry { id: id.to_string(), size_bytes: m["size"].as_u64(), context_window: None })
                })
                .collect()
        })
        .unwrap_or_default())
}

/// `model_info` holds `<architecture>.context_length` (e.g. `llama.context_length`).
pub(super) async fn context_window(client: &LlmClient, model: &str) -> Option<u64> {
    let response = client.http.post(client.url("/api/show")).json(&json!({ "model": model })).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body: Value = response.json().await.ok()?;
    body["model_info"]
        .as_object()?
        .iter()
        .find(|(key, _)| key.ends_with(".context_length"))
        .and_then(|(_, value)| value.as_u64())
}

pub(super) async fn start(client: &LlmClient, generation: &Generation) -> Result<reqwest::Response> {
    let mut options = json!({
        "num_predict": generation.max_tokens,
        "num_ctx": generation.context_window,
    });
    if let Some(temperature) = generation.temperature_opt {
        options["temperature"] = json!(temperature);
    }
    let body = json!({
        "model": generation.model,
        "messages": generation.messages,
        "stream": true,
        "options": options,
    });
    let response = client.send(client.http.post(client.url("/api/chat")).json(&body)).await?;
    client.checked(response, "the chat request").await
}

struct NdjsonParser<'a> {
    tx: &'a mpsc::Sender<Result<StreamEvent>>,
}

impl AsyncLineHandler for NdjsonParser<'_> {
    async fn line(&mut self, line: &str) -> Result<LineOutcome> {
        if line.is_empty() {
            return Ok(LineOutcome::More);
        }
        let object: Value = serde_json::from_str(line).map_err(|err| {
            DocdexError::new(ErrorCode::LlmError, format!("unreadable stream line from Ollama: {err}"))
        })?;
        if let Some(message) = object["error"].as_str() {
            return Err(DocdexError::new(ErrorCode::LlmError, format!("Ollama failed mid-answer: {message}")));
        }
        if let Some(text) = object["message"]["content"].as_str().filter(|t| !t.is_empty()) {
            if !emit(self.tx, StreamEvent::Delta(text.to_string())).await {
                return Ok(LineOutcome::Cancelled);
            }
        }
        if object["done"].as_bool() == Some(true) {
            let usage = Usage {
                prompt_tokens: object["prompt_eval_count"].as_u64().unwrap_or(0),
                completion_tokens: object["eval_count"].as_u64().unwrap_or(0),
            };
            let event = StreamEvent::Done {
                finish_reason: object["done_reason"].as_str().unwrap_or("stop").to_string(),
                usage_opt: Some(usage),
            };
            return Ok(if emit(self.tx, event).await { LineOutcome::Done } else { LineOutcome::Cancelled });
        }
        Ok(LineOutcome::More)
    }

    async fn end(&mut self) -> Result<Pumped> {
        Err(DocdexError::new(ErrorCode::LlmError, "Ollama closed the stream before its final `done` message"))
    }
}

pub(super) async fn pump(
    client: &LlmClient,
    response: reqwest::Response,
    tx: &mpsc::Sender<Result<StreamEvent>>,
) -> Result<Pumped> {
    for_each_line(response, client, NdjsonParser { tx }).await
}
