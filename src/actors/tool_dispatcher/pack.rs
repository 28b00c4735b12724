//! Context packs: the best sections for a question, deduplicated, ordered as chat orders its
//! evidence (memory, then the repo's code and docs, then libraries, then web pages), and fitted
//! to a token budget; with what they save against the whole files they come from.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::{AsyncContext, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::files::{open_limits, read_text_inside, GetChunk};
use super::memory::MemoryRecall;
use super::params::{self, Caller, Tool};
use super::search::Search;
use super::{open_indexed, tracked, ToolDispatcher};
use crate::actors::llm_gateway::CountTokens;
use crate::protocol::pack::{PackResponse, PackSection};
use crate::protocol::{DocdexError, HitSource, Result, SearchHit, SearchRequest};

/// Tokens a pack fills when the caller names no budget.
pub const DEFAULT_PACK_TOKENS: usize = 4_000;
/// The largest budget a pack takes.
pub const MAX_PACK_TOKENS: usize = 100_000;
/// Search hits a pack chooses from.
const PACK_CANDIDATES: usize = 40;
/// Notes a pack chooses from.
const PACK_NOTES: usize = 5;
/// A section cut to fit shorter than this is left out: a few lines say nothing.
const MIN_SECTION_TOKENS: usize = 24;

/// `POST /v1/pack`, MCP `docdex_pack`, `docdex pack`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackParams {
    /// The question or task, in words. `q` is taken too.
    #[serde(alias = "q")]
    pub query: String,
    /// Tokens the pack may hold, 1-100000 (default 4000).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 100000))]
    pub budget_tokens: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for PackParams {
    type Message = Pack;
    type Output = PackResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<Pack> {
        let budget_tokens = params::bounded("budget_tokens", self.budget_tokens, DEFAULT_PACK_TOKENS, MAX_PACK_TOKENS)?;
        let query = params::text(Some(self.query)).ok_or_else(|| {
            DocdexError::invalid("`query` must not be empty").with_hint("the question or task, in words")
        })?;
        crate::protocol::check_query_length(&query)?;
        Ok(Pack { repo_opt, query, budget_tokens })
    }
}

/// A context pack for a question.
#[derive(Message)]
#[rtype(result = "Result<PackResponse>")]
pub struct Pack {
    pub repo_opt: Option<PathBuf>,
    pub query: String,
    pub budget_tokens: usize,
}

impl Handler<Pack> for ToolDispatcher {
    type Result = ResponseFuture<Result<PackResponse>>;

    fn handle(&mut self, msg: Pack, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        let gateway = self.chat.gateway.clone();
        let repo = self.resolve_repo(msg.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let limits = open_limits(&self.config);
        tracked(&self.metrics, "pack", async move {
            let repo = repo.await?;
            let notes = me
                .send(MemoryRecall { repo_opt: Some(repo.clone()), query: msg.query.clone(), k: PACK_NOTES, offset: 0 })
                .await??;
            let request = SearchRequest {
                repo_opt: Some(repo.clone()),
                query: msg.query.clone(),
                limit: PACK_CANDIDATES,
                mode_opt: None,
                explain: false,
                source_opt: None,
                lib_opt: None,
            };
            let hits = me.send(Search(request)).await??.hits;
            let mut candidates: Vec<PackSection> = notes
                .items
                .into_iter()
                .map(|note| PackSection {
                    path: "memory".into(),
                    start_line: 1,
                    end_line: note.text.lines().count().max(1) as u64,
                    heading_path: format!("memory #{}", note.id),
                    kind: "memory".into(),
                    text: note.text,
                    tokens: 0,
                    truncated: false,
                })
                .collect();
            for hit in in_pack_order(hits) {
                // The whole chunk, not the snippet; a hit without one keeps its snippet.
                let text = match hit.chunk_id {
                    Some(chunk_id) => match me.send(GetChunk { repo_opt: Some(repo.clone()), chunk_id }).await? {
                        Ok(chunk) => chunk.text,
                        Err(_) => hit.snippet.clone(),
                    },
                    None => hit.snippet.clone(),
                };
                candidates.push(PackSection {
                    path: hit.path,
                    start_line: hit.line_start,
                    end_line: hit.line_end,
                    heading_path: hit.heading,
                    kind: hit.source.as_str().to_string(),
                    text,
                    tokens: 0,
                    truncated: false,
                });
            }
            let count = |texts: Vec<String>| gateway.send(CountTokens { texts });
            let (counts, exact) = count(candidates.iter().map(|c| c.text.clone()).collect()).await?;
            for (c, n) in candidates.iter_mut().zip(counts) {
                c.tokens = n;
            }
            let mut sections = Vec::new();
            let mut used = 0usize;
            for mut c in candidates {
                let room = msg.budget_tokens - used;
                if c.tokens > room {
                    if room < MIN_SECTION_TOKENS {
                        continue;
                    }
                    // Cut at a line end to what fits, counted again until it does.
                    let lines: Vec<&str> = c.text.lines().collect();
                    let mut keep = (lines.len() * room / c.tokens.max(1)).min(lines.len());
                    let mut fitted = None;
                    for _ in 0..6 {
                        if keep == 0 {
                            break;
                        }
                        let text = lines[..keep].join("\n");
                        let (n, _) = count(vec![text.clone()]).await?;
                        let n = n.first().copied().unwrap_or(usize::MAX);
                        if n <= room {
                            fitted = Some((text, n, keep));
                            break;
                        }
                        keep = keep * room / n.max(1) * 9 / 10;
                    }
                    let Some((text, n, kept)) = fitted.filter(|(_, n, _)| *n >= MIN_SECTION_TOKENS) else { continue };
                    c.end_line = c.start_line + kept as u64 - 1;
                    (c.text, c.tokens, c.truncated) = (text, n, true);
                }
                used += c.tokens;
                sections.push(c);
            }
            // What the sections save: the whole files they come from (a note or a library
            // section is its own source).
            let handle = open_indexed(&repo_manager, repo).await?;
            let root = Arc::clone(&handle.index).root.clone();
            // Sections by where they come from: a note is its own source, a file is one.
            let mut by_source: Vec<(String, Vec<&PackSection>)> = Vec::new();
            for s in &sections {
                let key = if s.kind == "memory" { s.heading_path.clone() } else { s.path.clone() };
                match by_source.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, group)) => group.push(s),
                    None => by_source.push((key, vec![s])),
                }
            }
            let mut whole: Vec<String> = Vec::new();
            let mut own_tokens = 0usize;
            for (_, group) in &by_source {
                let first = group[0];
                match (first.kind.as_str(), read_text_inside(&root, &first.path, limits)) {
                    ("repo", Ok(text)) => whole.push(text),
                    _ => own_tokens += group.iter().map(|s| s.tokens).sum::<usize>(),
                }
            }
            let files = by_source.len();
            let (file_counts, _) = count(whole).await?;
            let raw_tokens = (file_counts.iter().sum::<usize>() + own_tokens).max(used);
            Ok(PackResponse {
                summary: summary(used, raw_tokens, files),
                query: msg.query,
                budget_tokens: msg.budget_tokens,
                tokens: used,
                raw_tokens,
                files,
                exact,
                sections,
            })
        })
    }
}

/// Hits in the order a pack takes them: the repo's (and a diff's) first, then libraries,
/// then web pages, each in rank order; a hit overlapping one taken before is left out.
fn in_pack_order(hits: Vec<SearchHit>) -> Vec<SearchHit> {
    let rank = |source: HitSource| match source {
        HitSource::Library => 1,
        HitSource::Web => 2,
        _ => 0,
    };
    let mut ordered: Vec<SearchHit> = hits;
    ordered.sort_by_key(|h| rank(h.source));
    let mut taken: Vec<SearchHit> = Vec::new();
    for hit in ordered {
        if !taken.iter().any(|t| t.overlaps(&hit)) {
            taken.push(hit);
        }
    }
    taken
}

/// "3,950 tokens from 41,200 in 9 files: 90 % saved".
fn summary(tokens: usize, raw_tokens: usize, files: usize) -> String {
    let saved = if raw_tokens == 0 { 0 } else { 100 - (tokens * 100).div_ceil(raw_tokens).min(100) };
    let noun = if files == 1 { "file" } else { "files" };
    format!("{} tokens from {} in {files} {noun}: {saved} % saved", thousands(tokens), thousands(raw_tokens))
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_savings_line_reads_as_people_write_numbers() {
        assert_eq!(summary(3950, 41200, 9), "3,950 tokens from 41,200 in 9 files: 90 % saved");
        assert_eq!(summary(10, 10, 1), "10 tokens from 10 in 1 file: 0 % saved");
        assert_eq!(summary(0, 0, 0), "0 tokens from 0 in 0 files: 0 % saved");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
