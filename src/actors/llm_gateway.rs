//! LlmGateway: the one way to the local LLM server, for every surface (HTTP chat, CLI chat,
//! benchmarks). It owns the provider client, picks the model, knows its context window
//! (asked once per model and remembered), counts tokens with the model's own tokenizer when
//! the server has one, and starts streamed generations.

use std::collections::HashMap;
use std::sync::Arc;

use actix::{Actor, AsyncContext, Context, Handler, Message, ResponseActFuture, ResponseFuture, WrapFuture};

use crate::config::LlmConfig;
use crate::llm::budget::estimate_tokens;
use crate::llm::{EventReceiver, Generation, LlmClient, ModelEntry};
use crate::protocol::{DocdexError, Result};

/// Used when neither the configuration nor the server says how long the context is.
pub const FALLBACK_CONTEXT_WINDOW: usize = 4096;

pub struct LlmGateway {
    client: Result<LlmClient>,
    config: Arc<LlmConfig>,
    windows: HashMap<String, usize>,
}

impl LlmGateway {
    pub fn new(config: &LlmConfig) -> LlmGateway {
        LlmGateway { client: LlmClient::new(config), config: Arc::new(config.clone()), windows: HashMap::new() }
    }
}

impl Actor for LlmGateway {
    type Context = Context<Self>;
}

/// The server's models.
#[derive(Message)]
#[rtype(result = "Result<Vec<ModelEntry>>")]
pub struct ListModels;

/// The model a request will use and its context window.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice {
    pub model: String,
    pub context_window: usize,
    pub provider: String,
    pub base_url: String,
}

/// Picks the model: the request's, else `[llm] default_model`, else the server's first.
/// `docdex` (what clients that must name a model can send) means the default.
#[derive(Message)]
#[rtype(result = "Result<ModelChoice>")]
pub struct ResolveModel {
    pub requested_opt: Option<String>,
}

/// Token counts of texts, and whether they are exact (the model's tokenizer) or estimated.
#[derive(Message)]
#[rtype(result = "(Vec<usize>, bool)")]
pub struct CountTokens {
    pub texts: Vec<String>,
}

/// Starts a streamed generation; dropping the receiver cancels it upstream.
#[derive(Message)]
#[rtype(result = "Result<EventReceiver>")]
pub struct Generate(pub Generation);

/// Remembers a model's context window once the server told it.
#[derive(Message)]
#[rtype(result = "()")]
struct RememberWindow {
    model: String,
    window: usize,
}

impl LlmGateway {
    fn client(&self) -> Result<LlmClient> {
        self.client.clone()
    }
}

impl Handler<ListModels> for LlmGateway {
    type Result = ResponseFuture<Result<Vec<ModelEntry>>>;

    fn handle(&mut self, _: ListModels, _: &mut Context<Self>) -> Self::Result {
        let client = self.client();
        Box::pin(async move { client?.list_models().await })
    }
}

impl Handler<ResolveModel> for LlmGateway {
    type Result = ResponseActFuture<Self, Result<ModelChoice>>;

    fn handle(&mut self, msg: ResolveModel, ctx: &mut Context<Self>) -> Self::Result {
        let client = self.client();
        let config = Arc::clone(&self.config);
        let known = self.windows.clone();
        let me = ctx.address();
        let work = async move {
            let client = client?;
            let requested = msg.requested_opt.map(|m| m.trim().to_string()).filter(|m| !m.is_empty() && m != "docdex");
            let configured = Some(config.default_model.trim().to_string()).filter(|m| !m.is_empty());
            let model = match requested.or(configured) {
                Some(model) => model,
                None => client.list_models().await?.into_iter().next().map(|m| m.id).ok_or_else(|| {
                    DocdexError::new(
                        crate::protocol::ErrorCode::LlmUnavailable,
                        format!("the LLM server at {} has no models", client.base_url),
                    )
                    .with_hint("load or pull a model on the server, or set [llm] default_model")
                })?,
            };
            let context_window = if config.context_window > 0 {
                config.context_window
            } else if let Some(window) = known.get(&model) {
                *window
            } else {
                let window = client.context_window(&model).await.map(|w| w as usize).unwrap_or(FALLBACK_CONTEXT_WINDOW);
                me.do_send(RememberWindow { model: model.clone(), window });
                window
            };
            Ok(ModelChoice {
                model,
                context_window,
                provider: client.kind.as_str().to_string(),
                base_url: client.base_url.clone(),
            })
        };
        Box::pin(work.into_actor(self))
    }
}

impl Handler<RememberWindow> for LlmGateway {
    type Result = ();

    fn handle(&mut self, msg: RememberWindow, _: &mut Context<Self>) {
        self.windows.insert(msg.model, msg.window);
    }
}

impl Handler<CountTokens> for LlmGateway {
    type Result = ResponseFuture<(Vec<usize>, bool)>;

    fn handle(&mut self, msg: CountTokens, _: &mut Context<Self>) -> Self::Result {
        let client = self.client();
        Box::pin(async move {
            if let Ok(client) = client {
                if let Some(counts) = client.count_tokens(&msg.texts).await {
                    return (counts, true);
                }
            }
            (msg.texts.iter().map(|t| estimate_tokens(t)).collect(), false)
        })
    }
}

impl Handler<Generate> for LlmGateway {
    type Result = ResponseFuture<Result<EventReceiver>>;

    fn handle(&mut self, Generate(generation): Generate, _: &mut Context<Self>) -> Self::Result {
        let client = self.client();
        Box::pin(async move { client?.stream(&generation).await })
    }
}
