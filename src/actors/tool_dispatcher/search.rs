//! The search tool: a repo's lexical, dense or hybrid search, with library docs and the
//! query's concept words, as every surface runs it.

use std::sync::Arc;
use std::time::Instant;

use actix::{Context, Handler, Message, ResponseFuture};

use super::{open_indexed, tracked, vector_counts, ToolDispatcher};
use crate::actors::embedder::{EmbedQuery, ModelInfo, ProbeModel};
use crate::actors::waterfall::LocalSearch;
use crate::index::{FusionParams, SearchFilter, SearchParams};
use crate::protocol::{Result, SearchMode, SearchRequest, SearchResponse};

/// arroy nodes inspected per neighbour asked for (see `dense_depth_and_search_k`).
const DENSE_SEARCH_K_PER_RESULT: usize = 150;

/// How many neighbours a dense search of `limit` hits asks arroy for, and how many nodes it
/// lets arroy inspect: the same depth as `RepoIndex::search_with` uses.
pub fn dense_depth_and_search_k(limit: usize) -> (usize, usize) {
    let depth = crate::index::candidate_depth(SearchParams::new(limit, 2));
    (depth, depth * DENSE_SEARCH_K_PER_RESULT)
}

/// Search a repo.
#[derive(Message)]
#[rtype(result = "Result<SearchResponse>")]
pub struct Search(pub SearchRequest);

impl Handler<Search> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, Search(request): Search, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(request.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let embedder = self.embedder.clone();
        let search = &self.config.search;
        let fusion = FusionParams {
            k: search.fusion_k,
            lexical_weight: search.rrf_lexical_weight,
            dense_weight: search.rrf_dense_weight,
        };
        let max_hits_per_file = search.max_hits_per_file;
        let repeat_hit_delay = search.repeat_hit_delay;
        let concept_weight = search.lexical_concept_weight();
        let embedding_query = crate::index::concepts::embedding_query(search, &request.query);
        let expanded = crate::index::concepts::expansion(search, &request.query);
        tracked(&self.metrics, "search", async move {
            request.validate()?;
            let started = Instant::now();
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            if let Some(library) = request.lib_opt.as_deref().filter(|l| !l.trim().is_empty()) {
                super::libs::check_library_indexed(&handle, library).await?;
            }
            let (vectors, pending) = vector_counts(&handle).await?;
            let mut notice_opt = None;
            // Auto mode embeds the query only when there is something to compare it with.
            let wants_vector = match request.mode_opt {
                Some(SearchMode::Lexical) => false,
                Some(_) => true,
                None => vectors > 0,
            };
            let vector_opt = if wants_vector {
                // Any embedder failure, a dead worker included, degrades to lexical search.
                match embedder.send(EmbedQuery(embedding_query)).await {
                    Ok(Ok(vector)) => Some(vector),
                    Ok(Err(err)) => {
                        notice_opt = Some(format!("{}; searched lexically", err.message));
                        None
                    }
                    Err(err) => {
                        notice_opt = Some(format!("the embedding worker is not answering ({err}); searched lexically"));
                        None
                    }
                }
            } else {
                None
            };
            let mode = match (request.mode_opt, &vector_opt) {
                (_, None) => SearchMode::Lexical,
                (Some(mode), Some(_)) => mode,
                (None, Some(_)) => SearchMode::Hybrid,
            };
            if mode != SearchMode::Lexical && pending > 0 && vectors == 0 {
                // Nothing to compare the query with: say how to get there, not just "no hits".
                notice_opt = Some(format!(
                    "nothing in this repo is embedded yet ({pending} chunks waiting), so a dense search finds \
                     nothing: embed them with `docdexd index --repo {} --wait` (a running daemon does it on \
                     its own), or search lexically meanwhile",
                    handle.index.root.display()
                ));
            } else if mode != SearchMode::Lexical && pending > 0 {
                notice_opt = Some(format!(
                    "{pending} chunks are still waiting for embeddings; dense results cover the {vectors} embedded so far"
                ));
            } else if request.mode_opt.is_none() && vectors == 0 && pending > 0 {
                // Waiting for a model that is not there would be a false promise: say what
                // is missing instead.
                notice_opt = Some(match embedder.send(ProbeModel).await {
                    Ok(ModelInfo { available: true, .. }) => {
                        format!("{pending} chunks are waiting for embeddings; searched lexically")
                    }
                    Ok(ModelInfo { detail, .. }) => {
                        format!("semantic search unavailable: {detail}; searched lexically")
                    }
                    Err(err) => format!("the embedding worker is not answering ({err}); searched lexically"),
                });
            }
            let (_, dense_search_k) = dense_depth_and_search_k(request.limit);
            let params = SearchParams {
                limit: request.limit,
                max_hits_per_file,
                fusion,
                dense_search_k,
                concept_weight,
                repeat_hit_delay,
            };
            let query = request.query.clone();
            let explain = request.explain;
            let filter = SearchFilter {
                source_opt: request.source_opt,
                library_opt: request.lib_opt.clone().filter(|l| !l.trim().is_empty()),
            };
            let index = Arc::clone(&handle.index);
            let outcome = tokio::task::spawn_blocking(move || {
                let vector_opt = vector_opt.as_deref().map(|v| v.as_slice());
                index.search_filtered(&query, vector_opt, mode, params, explain, &filter)
            })
            .await??;
            Ok(SearchResponse {
                query: request.query,
                took_ms: started.elapsed().as_secs_f64() * 1000.0,
                top_score: outcome.top_score,
                mode,
                notice: notice_opt,
                expanded,
                hits: outcome.hits,
            })
        })
    }
}

/// The waterfall's tier 1 is this very search.
impl Handler<LocalSearch> for ToolDispatcher {
    type Result = ResponseFuture<Result<SearchResponse>>;

    fn handle(&mut self, LocalSearch(request): LocalSearch, ctx: &mut Context<Self>) -> Self::Result {
        <Self as Handler<Search>>::handle(self, Search(request), ctx)
    }
}
