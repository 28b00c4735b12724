//! The OpenAI-compatible surface: `POST /v1/chat/completions` (plain and `stream: true`
//! server-sent events ending in `data: [DONE]`) and `GET /v1/models`. Errors use OpenAI's
//! shape, `{"error": {"message", "type", "param", "code"}}`, so OpenAI clients raise them as
//! their own error types. docdex's extras travel in a `docdex` field: in the request
//! `{"repo", "force_web", "diff", "include_sources", "debug"}` (`repo_path` is taken for `repo`), in the answer the session id,
//! the numbered sources, the gate and the budget (and with `debug`, the prompt sent).

use std::path::PathBuf;

use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use serde_json::{json, Value};

use super::HttpState;
use crate::actors::chat::ChatStart;
use crate::actors::tool_dispatcher::chat::{Chat, LlmModels};
use crate::llm::{ChatMessage, EventReceiver, StreamEvent, Usage};
use crate::protocol::{ChatContext, ChatRequest, DocdexError, ErrorCode};

/// An error as OpenAI clients expect it; the hint is folded into the message, since that
/// is what clients show.
pub fn openai_error(err: &DocdexError) -> HttpResponse {
    let status = StatusCode::from_u16(err.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    HttpResponse::build(status).json(openai_error_body(err))
}

fn openai_error_body(err: &DocdexError) -> Value {
    let kind = match err.code {
        ErrorCode::InvalidRequest | ErrorCode::RepoNotFound | ErrorCode::RepoNotIndexed | ErrorCode::NotFound => {
            "invalid_request_error"
        }
        ErrorCode::Unauthorized => "authentication_error",
        _ => "server_error",
    };
    let message = match &err.hint {
        Some(hint) => format!("{} (hint: {hint})", err.message),
        None => err.message.clone(),
    };
    json!({ "error": { "message": message, "type": kind, "param": null, "code": err.code.as_str() } })
}

#[derive(Debug, Deserialize)]
struct ChatBody {
    #[serde(default)]
    model: Option<String>,
    messages: Vec<RawMessage>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    max_tokens: Option<usize>,
    #[serde(default)]
    max_completion_tokens: Option<usize>,
    #[serde(default)]
    temperature: Option<f32>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    docdex: Option<DocdexExtension>,
}

#[derive(Debug, Deserialize)]
struct RawMessage {
    role: String,
    /// A string, an array of content parts (`{"type": "text", "text": ...}`) or null.
    #[serde(default)]
    content: Value,
}

#[derive(Debug, Default, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocdexExtension {
    #[serde(default, alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    #[serde(default)]
    force_web: bool,
    /// "working", "staged" or a revision: the diff's code first in the context.
    #[serde(default)]
    diff: Option<String>,
    #[serde(default = "yes")]
    include_sources: bool,
    #[serde(default)]
    debug: bool,
}

fn yes() -> bool {
    true
}

impl Default for DocdexExtension {
    fn default() -> Self {
        DocdexExtension { repo: None, force_web: false, diff: None, include_sources: true, debug: false }
    }
}

fn text_of(content: &Value) -> Result<String, DocdexError> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(text) => Ok(text.clone()),
        Value::Array(parts) => Ok(parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")),
        _ => Err(DocdexError::invalid("message `content` must be a string or an array of text parts")),
    }
}

/// Parses the body by hand so a malformed request gets OpenAI's error shape.
fn parse_chat(
    state: &HttpState,
    req: &HttpRequest,
    body: &[u8],
) -> Result<(ChatRequest, bool, bool, DocdexExtension), DocdexError> {
    let body: ChatBody = serde_json::from_slice(body).map_err(|err| {
        DocdexError::invalid(format!("malformed chat request: {err}"))
            .with_hint("send {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}]}")
    })?;
    let extension = body.docdex.unwrap_or_default();
    // A header docdex cannot read is refused, not ignored: ignored, the chat would run on the
    // default repo without a word.
    let header_repo = match req.headers().get("x-docdex-repo") {
        None => None,
        Some(value) => Some(PathBuf::from(value.to_str().map_err(|_| {
            DocdexError::invalid("the X-Docdex-Repo header is not plain ASCII text")
                .with_hint("send a repo path with other characters as `docdex.repo` in the request body")
        })?)),
    };
    let repo_opt = extension.repo.clone().or(header_repo).or_else(|| state.default_repo_opt.clone());
    let messages = body
        .messages
        .iter()
        .map(|m| Ok(ChatMessage::new(&m.role, text_of(&m.content)?)))
        .collect::<Result<Vec<_>, DocdexError>>()?;
    let request = ChatRequest {
        repo_opt,
        messages,
        model_opt: body.model,
        max_tokens_opt: body.max_completion_tokens.or(body.max_tokens),
        temperature_opt: body.temperature,
        force_web: extension.force_web,
        diff_opt: extension
            .diff
            .as_deref()
            .map(|d| crate::protocol::impact::DiffBase::parse(Some(d), false))
            .transpose()?,
    };
    let include_usage = body.stream_options.map(|o| o.include_usage).unwrap_or(false);
    Ok((request, body.stream, include_usage, extension))
}

fn extension_json(context: &ChatContext, extension: &DocdexExtension) -> Value {
    let mut ext = json!({
        "session_id": context.session_id,
        "repo": context.repo,
        "provider": context.provider,
        "gate": context.gate,
        "budget": context.budget,
        "assembly_ms": context.assembly_ms,
    });
    if extension.include_sources {
        ext["sources"] = json!(context.sources);
    }
    if let Some(notice) = &context.notice {
        ext["notice"] = json!(notice);
    }
    if extension.debug {
        ext["prompt"] = json!(context.prompt);
    }
    ext
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    })
}

/// When the server gave no usage, estimate it (the same estimate the budget uses).
fn usage_or_estimate(usage_opt: Option<Usage>, context: &ChatContext, answer: &str) -> Usage {
    usage_opt.unwrap_or_else(|| Usage {
        prompt_tokens: context.prompt.iter().map(|m| crate::llm::budget::estimate_tokens(&m.content) as u64).sum(),
        completion_tokens: crate::llm::budget::estimate_tokens(answer) as u64,
    })
}

/// Largest chat request body: conversations with pasted code are larger than API calls.
pub const MAX_CHAT_BODY_BYTES: usize = 4 << 20;

/// Reads the body up to the limit, so an oversized one gets OpenAI's error shape too.
async fn read_body(mut payload: web::Payload) -> Result<Bytes, DocdexError> {
    use futures_util::StreamExt;
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|err| DocdexError::invalid(format!("cannot read the request body: {err}")))?;
        if body.len() + chunk.len() > MAX_CHAT_BODY_BYTES {
            return Err(DocdexError::new(
                ErrorCode::TooLarge,
                format!("the request body is over the {MAX_CHAT_BODY_BYTES}-byte limit"),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

pub async fn chat_completions(state: web::Data<HttpState>, req: HttpRequest, payload: web::Payload) -> HttpResponse {
    let body = match read_body(payload).await {
        Ok(body) => body,
        Err(err) => return openai_error(&err),
    };
    let (request, stream, include_usage, extension) = match parse_chat(&state, &req, &body) {
        Ok(parsed) => parsed,
        Err(err) => return openai_error(&err),
    };
    let started = match state.dispatcher.send(Chat(request)).await {
        Ok(Ok(started)) => started,
        Ok(Err(err)) => return openai_error(&err),
        Err(err) => return openai_error(&err.into()),
    };
    if stream {
        HttpResponse::Ok()
            .content_type("text/event-stream")
            .insert_header(("cache-control", "no-cache"))
            .streaming(sse_stream(started, extension, include_usage))
    } else {
        complete(started, extension).await
    }
}

/// Events that ended without `Done`: the answer was cut short.
fn cut_short() -> DocdexError {
    DocdexError::new(ErrorCode::LlmError, "the answer ended before the LLM server finished it")
}

/// Collects the whole answer.
async fn complete(started: ChatStart, extension: DocdexExtension) -> HttpResponse {
    let ChatStart { context, mut events } = started;
    let mut answer = String::new();
    let mut finish_opt = None;
    while let Some(event) = events.recv().await {
        match event {
            Ok(StreamEvent::Delta(text)) => answer.push_str(&text),
            Ok(StreamEvent::Done { finish_reason, usage_opt }) => finish_opt = Some((finish_reason, usage_opt)),
            Err(err) => return openai_error(&err),
        }
    }
    // Events that end without `Done` are an answer cut short, not a whole one.
    let Some(finish) = finish_opt else { return openai_error(&cut_short()) };
    let usage = usage_or_estimate(finish.1, &context, &answer);
    HttpResponse::Ok().json(json!({
        "id": format!("chatcmpl-{}", context.session_id),
        "object": "chat.completion",
        "created": unix_now(),
        "model": context.model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": answer },
            "finish_reason": finish.0,
        }],
        "usage": usage_json(usage),
        "docdex": extension_json(&context, &extension),
    }))
}

fn sse(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

struct SseState {
    events: EventReceiver,
    context: ChatContext,
    extension: DocdexExtension,
    include_usage: bool,
    id: String,
    created: u64,
    answer: String,
    /// Frames ready to go out before the next event is read.
    queue: std::collections::VecDeque<Bytes>,
    done: bool,
}

impl SseState {
    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.context.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
        })
    }
}

/// The SSE body: a role chunk, one chunk per piece of text, a final chunk with the finish
/// reason and the `docdex` extension, a usage chunk when asked for, then `[DONE]`. When the
/// client disconnects, actix drops this stream, and with it the receiver: generation stops.
fn sse_stream(
    started: ChatStart,
    extension: DocdexExtension,
    include_usage: bool,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>> {
    let ChatStart { context, events } = started;
    let mut state = SseState {
        id: format!("chatcmpl-{}", context.session_id),
        created: unix_now(),
        events,
        context,
        extension,
        include_usage,
        answer: String::new(),
        queue: Default::default(),
        done: false,
    };
    let first = state.chunk(json!({ "role": "assistant", "content": "" }), None);
    state.queue.push_back(sse(&first));
    stream::unfold(state, |mut state| async move {
        loop {
            if let Some(frame) = state.queue.pop_front() {
                return Some((Ok(frame), state));
            }
            if state.done {
                return None;
            }
            match state.events.recv().await {
                Some(Ok(StreamEvent::Delta(text))) => {
                    state.answer.push_str(&text);
                    let chunk = state.chunk(json!({ "content": text }), None);
                    state.queue.push_back(sse(&chunk));
                }
                Some(Ok(StreamEvent::Done { finish_reason, usage_opt })) => {
                    let mut last = state.chunk(json!({}), Some(&finish_reason));
                    last["docdex"] = extension_json(&state.context, &state.extension);
                    state.queue.push_back(sse(&last));
                    if state.include_usage {
                        let usage = usage_or_estimate(usage_opt, &state.context, &state.answer);
                        let mut chunk = state.chunk(json!({}), None);
                        chunk["choices"] = json!([]);
                        chunk["usage"] = usage_json(usage);
                        state.queue.push_back(sse(&chunk));
                    }
                    state.queue.push_back(Bytes::from_static(b"data: [DONE]\n\n"));
                    state.done = true;
                }
                Some(Err(err)) => {
                    state.queue.push_back(sse(&openai_error_body(&err)));
                    state.queue.push_back(Bytes::from_static(b"data: [DONE]\n\n"));
                    state.done = true;
                }
                None => {
                    // Ended without `Done`: the answer was cut short, and the client is told.
                    state.queue.push_back(sse(&openai_error_body(&cut_short())));
                    state.queue.push_back(Bytes::from_static(b"data: [DONE]\n\n"));
                    state.done = true;
                }
            }
        }
    })
}

pub async fn models(state: web::Data<HttpState>, _: web::Query<super::NoParams>) -> HttpResponse {
    let models = match state.dispatcher.send(LlmModels).await {
        Ok(Ok(models)) => models,
        Ok(Err(err)) => return openai_error(&err),
        Err(err) => return openai_error(&err.into()),
    };
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "id": m.id,
                "object": "model",
                "created": 0,
                "owned_by": "docdex",
                "context_window": m.context_window,
            })
        })
        .collect();
    HttpResponse::Ok().json(json!({ "object": "list", "data": data }))
}
