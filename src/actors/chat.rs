//! ChatOrchestrator: grounded chat, one path for every surface. For a question about a repo
//! it recalls memory, runs the waterfall (the repo's search, the web when the gate says so),
//! fits the numbered snippets into the model's context window (`llm::budget`), records each
//! step in the session's reasoning DAG, and starts the generation through the LlmGateway.
//! The caller gets the sources at once and the answer as a stream; when the stream ends,
//! or the caller drops it (a client that went away), the outcome is recorded too.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use actix::{Actor, Addr, Context, Handler, Message, Recipient, ResponseFuture};
use serde_json::json;
use tokio::sync::mpsc;

use super::dag_logger::{AppendDag, DagLogger};
use super::llm_gateway::{CountTokens, Generate, LlmGateway, ResolveModel};
use super::repo_manager::{OpenRepo, RepoManager};
use super::waterfall::{RunWaterfall, WaterfallOrchestrator};
use crate::config::Config;
use crate::index::dag::{DagRecorder, NodeKind};
use crate::index::RepoIndex;
use crate::llm::budget::{self, Candidate, SnippetKind, MESSAGE_OVERHEAD_TOKENS};
use crate::llm::{ChatMessage, EventReceiver, Generation, StreamEvent, STREAM_BUFFER};
use crate::protocol::{
    ChatContext, ChatRequest, ChatSource, DocdexError, FileContent, HitSource, MemoryItem, MemoryRecallResponse,
    Result, SearchHit, SearchRequest,
};

/// Memories recalled per question (the memory share usually holds fewer).
const MEMORY_RECALL_K: usize = 5;
/// Dense recall returns the nearest notes however far; below this cosine they are noise.
const MIN_MEMORY_SIMILARITY: f32 = 0.2;
/// Lines of a repo chunk put in the prompt: whole chunks read better than search snippets,
/// and the budget drops what does not fit.
const MAX_CHUNK_LINES: u64 = 60;

/// The repo's notes closest to a question: memory recall as every surface runs it.
#[derive(Message)]
#[rtype(result = "Result<MemoryRecallResponse>")]
pub struct RecallNotes {
    pub repo: PathBuf,
    pub query: String,
    pub k: usize,
}

/// Lines of a repo file (1-based, inclusive), read with the file tools' root and size checks.
#[derive(Message)]
#[rtype(result = "Result<FileContent>")]
pub struct ReadLines {
    pub repo: PathBuf,
    pub path: String,
    pub start: u64,
    pub end: u64,
}

/// What chat asks of the tools that started it (the dispatcher answers both), so the
/// orchestrator depends on no part above it.
#[derive(Clone)]
pub struct ChatTools {
    pub recall: Recipient<RecallNotes>,
    pub read: Recipient<ReadLines>,
    pub diff: Recipient<ReadDiff>,
}

/// The code a diff changed and one hop of what uses it, as hits (`source` diff) whose
/// snippets are the code itself: the context a question about a change starts from.
#[derive(Message)]
#[rtype(result = "Result<Vec<SearchHit>>")]
pub struct ReadDiff {
    pub repo: PathBuf,
    pub base: crate::protocol::impact::DiffBase,
    /// Hits at most: the changed definitions first, then their dependents, surest first.
    pub limit: usize,
}

pub struct ChatOrchestrator {
    tools: ChatTools,
    waterfall: Addr<WaterfallOrchestrator>,
    repo_manager: Addr<RepoManager>,
    gateway: Addr<LlmGateway>,
    dag: Addr<DagLogger>,
    config: Arc<Config>,
}

/// What the orchestrator is handed at start.
pub struct ChatParts {
    pub tools: ChatTools,
    pub waterfall: Addr<WaterfallOrchestrator>,
    pub repo_manager: Addr<RepoManager>,
    pub gateway: Addr<LlmGateway>,
    pub dag: Addr<DagLogger>,
    pub config: Arc<Config>,
}

impl ChatOrchestrator {
    pub fn new(parts: ChatParts) -> ChatOrchestrator {
        let ChatParts { tools, waterfall, repo_manager, gateway, dag, config } = parts;
        ChatOrchestrator { tools, waterfall, repo_manager, gateway, dag, config }
    }
}

impl Actor for ChatOrchestrator {
    type Context = Context<Self>;
}

/// A started answer: its grounding now, its text as it streams.
pub struct ChatStart {
    pub context: ChatContext,
    pub events: EventReceiver,
}

/// Answers a chat request on `repo` (resolved by the dispatcher).
#[derive(Message)]
#[rtype(result = "Result<ChatStart>")]
pub struct RunChat {
    pub repo: PathBuf,
    pub request: ChatRequest,
}

/// The question and the conversation before it, checked.
fn split_conversation(messages: &[ChatMessage]) -> Result<(String, Vec<ChatMessage>, Vec<String>)> {
    let Some(last) = messages.last() else {
        return Err(DocdexError::invalid("`messages` must not be empty")
            .with_hint("send at least one {\"role\": \"user\", \"content\": \"...\"} message"));
    };
    if last.role != "user" || last.content.trim().is_empty() {
        return Err(DocdexError::invalid("the last message must be the user's question, with content"));
    }
    let mut history = Vec::new();
    let mut instructions = Vec::new();
    for message in &messages[..messages.len() - 1] {
        match message.role.as_str() {
            "system" | "developer" => instructions.push(message.content.clone()),
            "user" | "assistant" => history.push(message.clone()),
            // Tool messages belong to the client's own tool loop; they carry no role the
            // model here was given, so they are left out.
            _ => {}
        }
    }
    Ok((last.content.clone(), history, instructions))
}

fn repo_name(repo: &Path) -> String {
    repo.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| repo.display().to_string())
}

fn instructions_text(repo: &Path, client_instructions: &[String]) -> String {
    let mut text = format!(
        "You are docdex, a coding assistant answering questions about the repository `{}`. \
         Answer from the numbered sources below and cite the ones you use as [1], [2]. \
         Memory notes are facts the team asked you to remember. \
         If the sources do not answer the question, say so.",
        repo_name(repo)
    );
    for extra in client_instructions {
        text.push_str("\n\n");
        text.push_str(extra);
    }
    text
}

/// Pieces of a diff (changed definitions and their direct dependents) a chat takes at most.
const MAX_DIFF_PIECES: usize = 20;

/// A candidate snippet and the source it becomes when kept.
struct Piece {
    candidate: Candidate,
    source: ChatSource,
}

fn memory_piece(item: &MemoryItem) -> Piece {
    let label = format!("memory #{}", item.id);
    let text = format!("{label} (saved {}):\n{}", item.created_at.get(..10).unwrap_or(&item.created_at), item.text);
    Piece {
        candidate: Candidate { kind: SnippetKind::Memory, label: label.clone(), text, tokens: 0 },
        source: source(SnippetKind::Memory, label, |s| s.memory_id = Some(item.id)),
    }
}

/// The chunk's own lines (numbered), or the search snippet when the file cannot be read.
async fn chunk_text(read: &Recipient<ReadLines>, repo: &Path, hit: &SearchHit) -> String {
    if !matches!(hit.source, HitSource::Repo | HitSource::Diff) {
        return hit.snippet.clone();
    }
    let lines = ReadLines {
        repo: repo.to_path_buf(),
        path: hit.path.clone(),
        start: hit.line_start,
        end: hit.line_end.min(hit.line_start + MAX_CHUNK_LINES - 1),
    };
    match read.send(lines).await {
        Ok(Ok(content)) => content.numbered(),
        _ => hit.snippet.clone(),
    }
}

fn hit_piece(hit: &SearchHit, body: &str) -> Piece {
    match hit.source {
        HitSource::Diff => {
            let label = format!("{}:{}-{}", hit.path, hit.line_start, hit.line_end);
            let text = format!("{label} ({}):\n```{}\n{body}\n```", hit.heading, hit.language);
            Piece {
                candidate: Candidate { kind: SnippetKind::Diff, label: label.clone(), text, tokens: 0 },
                source: source(SnippetKind::Diff, label, |s| {
                    s.path = Some(hit.path.clone());
                    s.line_start = Some(hit.line_start);
                    s.line_end = Some(hit.line_end);
                }),
            }
        }
        HitSource::Web => {
            let url = hit.url.clone().unwrap_or_else(|| hit.path.clone());
            let title = hit.title.clone().unwrap_or_default();
            let text = format!("{url} ({title}):\n{body}");
            Piece {
                candidate: Candidate { kind: SnippetKind::Web, label: url.clone(), text, tokens: 0 },
                source: source(SnippetKind::Web, url.clone(), |s| {
                    s.url = Some(url.clone());
                    s.title = hit.title.clone();
                }),
            }
        }
        HitSource::Library => {
            let library = format!("{}@{}", hit.library.as_deref().unwrap_or(""), hit.version.as_deref().unwrap_or(""));
            let label = format!("{} ({library})", if hit.heading.is_empty() { &hit.path } else { &hit.heading });
            let text = format!("{label}:\n{body}");
            Piece {
                candidate: Candidate { kind: SnippetKind::Library, label: label.clone(), text, tokens: 0 },
                source: source(SnippetKind::Library, label, |s| s.path = Some(hit.path.clone())),
            }
        }
        HitSource::Repo => {
            let label = format!("{}:{}-{}", hit.path, hit.line_start, hit.line_end);
            let heading = if hit.heading.is_empty() { String::new() } else { format!(" ({})", hit.heading) };
            let text = format!("{label}{heading}:\n```{}\n{body}\n```", hit.language);
            Piece {
                candidate: Candidate { kind: SnippetKind::Repo, label: label.clone(), text, tokens: 0 },
                source: source(SnippetKind::Repo, label, |s| {
                    s.path = Some(hit.path.clone());
                    s.line_start = Some(hit.line_start);
                    s.line_end = Some(hit.line_end);
                }),
            }
        }
    }
}

fn source(kind: SnippetKind, label: String, fill: impl FnOnce(&mut ChatSource)) -> ChatSource {
    let mut source = ChatSource {
        n: 0,
        kind,
        label,
        path: None,
        line_start: None,
        line_end: None,
        url: None,
        title: None,
        memory_id: None,
    };
    fill(&mut source);
    source
}

/// Keeps the most recent turns that fit the system share (beyond the instructions and the
/// question, which always go in); returns the kept turns and how many were left out.
fn trim_history(history: Vec<ChatMessage>, counts: &[usize], room: usize) -> (Vec<ChatMessage>, usize) {
    let mut used = 0;
    let mut keep_from = history.len();
    for (i, tokens) in counts.iter().enumerate().rev() {
        if used + tokens + MESSAGE_OVERHEAD_TOKENS > room {
            break;
        }
        used += tokens + MESSAGE_OVERHEAD_TOKENS;
        keep_from = i;
    }
    let dropped = keep_from;
    (history.into_iter().skip(keep_from).collect(), dropped)
}

impl Handler<RunChat> for ChatOrchestrator {
    type Result = ResponseFuture<Result<ChatStart>>;

    fn handle(&mut self, msg: RunChat, _: &mut Context<Self>) -> Self::Result {
        let tools = self.tools.clone();
        let waterfall = self.waterfall.clone();
        let repo_manager = self.repo_manager.clone();
        let gateway = self.gateway.clone();
        let dag = self.dag.clone();
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            let started = Instant::now();
            let RunChat { repo, request } = msg;
            let (question, history, client_instructions) = split_conversation(&request.messages)?;
            let mut recorder = DagRecorder::new("chat", &question);
            let root = recorder.add(
                NodeKind::UserRequest,
                &[],
                question.clone(),
                json!({ "repo": repo.display().to_string(), "turns": request.messages.len(), "force_web": request.force_web }),
            );

            recorder.add(
                NodeKind::Thought,
                &[root],
                "recall memory, search the repo (the web if the gate says so), fit the prompt, generate",
                json!(null),
            );
            // Memory first: notes outrank everything else in the prompt.
            let call = recorder.add(NodeKind::ToolCall, &[root], "memory_recall", json!({ "k": MEMORY_RECALL_K }));
            let recall = tools
                .recall
                .send(RecallNotes {
                    repo: repo.clone(),
                    query: question.chars().take(crate::protocol::MAX_QUERY_CHARS).collect(),
                    k: MEMORY_RECALL_K,
                })
                .await??;
            let memories: Vec<MemoryItem> = recall
                .items
                .into_iter()
                .filter(|m| match recall.mode {
                    crate::protocol::SearchMode::Dense => m.score.unwrap_or(0.0) >= MIN_MEMORY_SIMILARITY,
                    _ => m.score.unwrap_or(0.0) > 0.0,
                })
                .collect();
            let memory_obs = recorder.add(
                NodeKind::Observation,
                &[call],
                format!("{} memory notes", memories.len()),
                json!({ "ids": memories.iter().map(|m| m.id).collect::<Vec<_>>(), "mode": recall.mode }),
            );

            // Then the repo, and the web when the gate says so.
            // A long question (pasted code) is searched by its beginning; the model sees it all.
            let search = SearchRequest {
                source_opt: None,
                lib_opt: None,
                repo_opt: Some(repo.clone()),
                query: question.chars().take(crate::protocol::MAX_QUERY_CHARS).collect(),
                limit: config.search.max_repo_hits,
                mode_opt: None,
                explain: false,
            };
            let call = recorder.add(
                NodeKind::ToolCall,
                &[root],
                "search (waterfall)",
                json!({ "limit": search.limit, "force_web": request.force_web }),
            );
            let found =
                waterfall.send(RunWaterfall { repo: repo.clone(), search, force_web: request.force_web }).await??;
            let search_obs = recorder.add(
                NodeKind::Observation,
                &[call],
                format!(
                    "{} hits ({} web), top score {:.2}",
                    found.hits.len(),
                    found.hits.iter().filter(|h| h.source == HitSource::Web).count(),
                    found.top_score
                ),
                json!({
                    "hits": found.hits.iter().take(20).map(|h| h.url.clone().unwrap_or_else(|| format!("{}:{}-{}", h.path, h.line_start, h.line_end))).collect::<Vec<_>>(),
                    "web_error": found.web.as_ref().and_then(|w| w.error.as_ref()).map(|e| e.message.clone()),
                }),
            );
            let gate_node = recorder.add(
                NodeKind::Decision,
                &[search_obs],
                format!(
                    "gate: {} (confidence {:.2}, threshold {:.2})",
                    found.gate.decision, found.gate.top_score, found.gate.threshold
                ),
                json!(found.gate),
            );

            // A diff's code after memory and before the rest of the repo (its snippets are the
            // code itself); repo hits inside it are not repeated.
            let mut diff_hits: Vec<SearchHit> = Vec::new();
            if let Some(base) = &request.diff_opt {
                let call = recorder.add(NodeKind::ToolCall, &[root], "diff", json!({ "base": base.name() }));
                diff_hits = tools
                    .diff
                    .send(ReadDiff { repo: repo.clone(), base: base.clone(), limit: MAX_DIFF_PIECES })
                    .await??;
                recorder.add(
                    NodeKind::Observation,
                    &[call],
                    format!("{} pieces of the diff and what uses it", diff_hits.len()),
                    json!({ "pieces": diff_hits.iter().map(|h| format!("{}:{}-{}", h.path, h.line_start, h.line_end)).collect::<Vec<_>>() }),
                );
            }
            let overlaps = |hit: &SearchHit| diff_hits.iter().any(|d| d.overlaps(hit));

            // Fit it all into the model's window.
            let choice = gateway.send(ResolveModel { requested_opt: request.model_opt.clone() }).await??;
            let instructions = instructions_text(&repo, &client_instructions);
            let mut pieces: Vec<Piece> = memories.iter().map(memory_piece).collect();
            for hit in &diff_hits {
                pieces.push(hit_piece(hit, &chunk_text(&tools.read, &repo, hit).await));
            }
            for hit in found.hits.iter().filter(|h| h.source != HitSource::Repo || !overlaps(h)) {
                pieces.push(hit_piece(hit, &chunk_text(&tools.read, &repo, hit).await));
            }
            let mut texts: Vec<String> = vec![instructions.clone(), question.clone()];
            texts.extend(history.iter().map(|m| m.content.clone()));
            // `[12] ` before each snippet and a blank line after it.
            texts.extend(pieces.iter().map(|p| format!("[00] {}\n\n", p.candidate.text)));
            let (counts, exact) = gateway.send(CountTokens { texts }).await?;
            let (fixed_counts, rest) = counts.split_at(2);
            let (history_counts, piece_counts) = rest.split_at(history.len());
            for (piece, tokens) in pieces.iter_mut().zip(piece_counts) {
                piece.candidate.tokens = *tokens;
            }
            // "Sources:" heading and the message overheads of system + question.
            let base = fixed_counts[0] + fixed_counts[1] + 2 * MESSAGE_OVERHEAD_TOKENS + 4;
            let system_share = (choice.context_window as f64 * budget::SYSTEM_SHARE) as usize;
            let (history, history_dropped) = trim_history(history, history_counts, system_share.saturating_sub(base));
            let history_tokens: usize = history_counts[history_counts.len() - history.len()..]
                .iter()
                .map(|t| t + MESSAGE_OVERHEAD_TOKENS)
                .sum();
            let requested_answer =
                request.max_tokens_opt.unwrap_or(config.llm.max_answer_tokens).min(config.llm.max_answer_tokens.max(1));
            let candidates: Vec<Candidate> = pieces.iter().map(|p| p.candidate.clone()).collect();
            let plan = budget::plan(choice.context_window, requested_answer, base + history_tokens, &candidates)
                .map_err(|why| DocdexError::invalid(why).with_hint("shorten the conversation or the question"))?;
            let mut report = plan.report;
            report.token_count = if exact { "exact" } else { "estimate" }.into();
            for dropped in &report.dropped {
                tracing::info!(
                    session = %recorder.session.id,
                    kind = dropped.kind.as_str(),
                    source = %dropped.label,
                    tokens = dropped.tokens,
                    reason = %dropped.reason,
                    "context snippet dropped"
                );
            }
            let mut sources = Vec::new();
            let mut sources_text = String::from("Sources:\n");
            for (n, i) in plan.kept.iter().enumerate() {
                let piece = &pieces[*i];
                let mut source = piece.source.clone();
                source.n = n + 1;
                sources_text.push_str(&format!("[{}] {}\n\n", n + 1, piece.candidate.text));
                sources.push(source);
            }
            if sources.is_empty() {
                sources_text.push_str("(none: nothing in the repo, its memory or the web matched)\n");
            }
            let budget_node = recorder.add(
                NodeKind::Decision,
                &[memory_obs, gate_node],
                format!(
                    "context: {} sources kept, {} dropped, {} history turns left out ({} of {} tokens, {})",
                    sources.len(),
                    report.dropped.len(),
                    history_dropped,
                    report.system_tokens + report.memory_tokens + report.evidence_tokens,
                    report.context_window,
                    report.token_count
                ),
                json!({ "kept": sources.iter().map(|s| &s.label).collect::<Vec<_>>(), "dropped": report.dropped, "history_dropped": history_dropped }),
            );
            let mut prompt = vec![ChatMessage::new("system", format!("{instructions}\n\n{sources_text}"))];
            prompt.extend(history);
            prompt.push(ChatMessage::new("user", question.clone()));
            let generation = Generation {
                model: choice.model.clone(),
                messages: prompt.clone(),
                max_tokens: report.answer_tokens,
                temperature_opt: request.temperature_opt,
                context_window: choice.context_window,
            };
            let call = recorder.add(
                NodeKind::ToolCall,
                &[budget_node],
                format!("generate with {} ({})", choice.model, choice.provider),
                json!({ "max_tokens": report.answer_tokens, "context_window": choice.context_window, "base_url": choice.base_url }),
            );
            let assembly_ms = started.elapsed().as_secs_f64() * 1000.0;
            let handle = repo_manager.send(OpenRepo { path: repo.clone(), create: false }).await??;
            let index = Arc::clone(&handle.index);
            let upstream = match gateway.send(Generate(generation)).await? {
                Ok(rx) => rx,
                Err(err) => {
                    recorder.add(
                        NodeKind::Observation,
                        &[call],
                        format!("generation failed: {}", err.message),
                        json!(null),
                    );
                    append(&dag, &index, &mut recorder).await;
                    return Err(err);
                }
            };
            append(&dag, &index, &mut recorder).await;
            let context = ChatContext {
                session_id: recorder.session.id.clone(),
                repo: handle.meta.canonical_path.clone(),
                model: choice.model,
                provider: choice.provider,
                sources,
                budget: report,
                gate: found.gate,
                assembly_ms,
                notice: found.notice,
                prompt,
            };
            let events = relay(upstream, recorder, call, dag, index);
            Ok(ChatStart { context, events })
        })
    }
}

async fn append(dag: &Addr<DagLogger>, index: &Arc<RepoIndex>, recorder: &mut DagRecorder) {
    let nodes = recorder.take();
    if nodes.is_empty() {
        return;
    }
    let msg = AppendDag { index: Arc::clone(index), session: recorder.session.clone(), nodes };
    match dag.send(msg).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::warn!(error = %err.message, "could not record the reasoning DAG"),
        Err(err) => tracing::warn!(error = %err, "could not record the reasoning DAG"),
    }
}

/// Forwards the answer to the caller and records how it ended. The channel is bounded, so
/// a slow caller slows the upstream read; a caller that goes away drops `upstream` here,
/// which cancels the generation at the server.
fn relay(
    mut upstream: EventReceiver,
    mut recorder: DagRecorder,
    call: u32,
    dag: Addr<DagLogger>,
    index: Arc<RepoIndex>,
) -> EventReceiver {
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    actix::spawn(async move {
        let mut answer = String::new();
        let (summary, data) = loop {
            match upstream.recv().await {
                Some(Ok(StreamEvent::Delta(text))) => {
                    answer.push_str(&text);
                    if tx.send(Ok(StreamEvent::Delta(text))).await.is_err() {
                        break (
                            format!("cancelled: the client went away after {} characters", answer.chars().count()),
                            json!({ "cancelled": true, "answer_start": crate::index::dag::shorten(&answer, 200) }),
                        );
                    }
                }
                Some(Ok(StreamEvent::Done { finish_reason, usage_opt })) => {
                    let data = json!({ "finish_reason": finish_reason, "usage": usage_opt, "answer_start": crate::index::dag::shorten(&answer, 200) });
                    let _ = tx.send(Ok(StreamEvent::Done { finish_reason: finish_reason.clone(), usage_opt })).await;
                    break (format!("answer: {} characters, finish {finish_reason}", answer.chars().count()), data);
                }
                Some(Err(err)) => {
                    let summary = format!("generation failed: {}", err.message);
                    let _ = tx.send(Err(err)).await;
                    break (summary, json!(null));
                }
                None => break ("the generation ended without a final event".into(), json!(null)),
            }
        };
        // Close the upstream first: a cancelled generation stops before the DAG write.
        drop(upstream);
        recorder.add(NodeKind::Observation, &[call], summary, data);
        append(&dag, &index, &mut recorder).await;
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_is_the_last_user_message() {
        let messages = vec![
            ChatMessage::new("system", "be brief"),
            ChatMessage::new("user", "hi"),
            ChatMessage::new("assistant", "hello"),
            ChatMessage::new("user", "what is WorkerPool?"),
        ];
        let (question, history, instructions) = split_conversation(&messages).unwrap();
        assert_eq!(question, "what is WorkerPool?");
        assert_eq!(history.len(), 2);
        assert_eq!(instructions, vec!["be brief".to_string()]);
        assert!(split_conversation(&[]).is_err());
        assert!(split_conversation(&[ChatMessage::new("assistant", "x")]).is_err());
    }

    #[test]
    fn history_keeps_the_latest_turns_that_fit() {
        let history =
            vec![ChatMessage::new("user", "a"), ChatMessage::new("assistant", "b"), ChatMessage::new("user", "c")];
        let (kept, dropped) = trim_history(history, &[50, 10, 10], 40);
        assert_eq!(dropped, 1);
        assert_eq!(kept.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), vec!["b", "c"]);
    }
}
