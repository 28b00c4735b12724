//! The code intelligence tools over MCP: definitions, references, callers (and callees), a
//! file's import edges, structural queries. Each result fits the result budget; long lists
//! say where their next page starts.

use std::path::PathBuf;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::budget::{respond_fitted, without, Fit, Page};
use super::DocdexMcp;
use crate::actors::tool_dispatcher::code::{
    self as code_tools, AstQueryParams, CallList, Direction, FileImpactParams, SymbolsParams, TargetParams,
};
use crate::actors::tool_dispatcher::impact::DiffImpactParams;
use crate::actors::tool_dispatcher::params;
use crate::protocol::code::{
    AstQueryResponse, CallEdge, ImpactResponse, ReferencesResponse, SymbolInfo, SymbolsResponse,
};
use crate::protocol::DocdexError;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactArgs {
    /// The file, relative to the repo root: its import edges. Give this or `diff`.
    #[serde(default, alias = "path")]
    pub file: Option<String>,
    /// A git diff instead of a file: "working" (the working tree against HEAD), "staged",
    /// or a revision to compare the working tree with ("HEAD~1", "main"). Answers with the
    /// changed definitions, what depends on them and the tests that reach them.
    #[serde(default)]
    pub diff: Option<String>,
    /// With `diff`: how sure each use on a dependent's path must be, 0-1 (default 0.5).
    #[serde(default, deserialize_with = "params::fraction")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_confidence: Option<f64>,
    /// How many hops to follow, 1-5 (default 1 for a file's importers, 2 for a diff's
    /// dependents).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 5))]
    pub depth: Option<u64>,
    /// Importers to return, 1-1000 (default 200; for a diff, 100 dependents and 100 tests).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// With `file`: where this page of importers starts, the `next_offset` of the previous
    /// one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

fn symbol_text(s: &SymbolInfo) -> String {
    let container = if s.container.is_empty() { String::new() } else { format!(" in {}", s.container) };
    format!("{}:{} {} {}{} — {}", s.path, s.line, s.kind, s.name, container, s.signature)
}

fn edges_text(edges: &[CallEdge]) -> String {
    edges
        .iter()
        .map(|e| {
            let who = if e.name.is_empty() { "(top level)".to_string() } else { e.qualified_name.clone() };
            format!(
                "{}:{} {who} (call at line {}, {} {:.2})\n",
                e.path, e.line, e.call_line, e.resolution, e.confidence
            )
        })
        .collect()
}

/// The page an answer was: a list of `total` entries from `offset` (as the call asked).
fn page_of(offset: Option<u64>, limit: Option<u64>, default_limit: usize, total: usize) -> Page {
    let offset = offset.unwrap_or(0).min(usize::MAX as u64) as usize;
    Page { offset, limit: limit.map_or(default_limit, |l| l as usize), cap: total }
}

#[tool_router(router = code_tool_router, vis = "pub(super)")]
impl DocdexMcp {
    #[tool(
        description = "Find definitions (functions, methods, types, constants…) by name, qualified name or pattern. Example: {\"name\": \"Router::route\"} or {\"name\": \"spawn*\", \"kind\": \"function\"}. Returns path, line-end_line, kind, signature, container for each, best first."
    )]
    async fn docdex_symbols(&self, Parameters(params): Parameters<SymbolsParams>) -> CallToolResult {
        let (offset, limit) = (params.offset, params.limit);
        let result = self.run(params).await;
        let page = page_of(offset, limit, code_tools::DEFAULT_SYMBOLS_LIMIT, result.as_ref().map_or(0, |r| r.total));
        respond_fitted(result, page, self.budget_tokens, |r| {
            let mut text = format!("{} definitions\n", r.total);
            for s in &r.symbols {
                text.push_str(&symbol_text(s));
                text.push('\n');
            }
            text
        })
    }

    #[tool(
        description = "Find the uses of a definition across the repo, highest confidence first, each with how it was resolved (same_file, import, qualified_path, same_package, local_scope, or name_only, which is never above 0.5). Example: {\"name\": \"Cart.add\"}; add {\"path\", \"line\"} of the definition to pick one of several."
    )]
    async fn docdex_references(&self, Parameters(params): Parameters<TargetParams>) -> CallToolResult {
        let (offset, limit) = (params.offset, params.limit);
        let result = self.run(params).await;
        let page = page_of(offset, limit, code_tools::DEFAULT_REFERENCES_LIMIT, result.as_ref().map_or(0, |r| r.total));
        respond_fitted(result, page, self.budget_tokens, |r| {
            let mut text = format!("{}\n{} references\n", symbol_text(&r.symbol), r.total);
            for x in &r.references {
                text.push_str(&format!(
                    "{}:{}:{} {} ({} {:.2})\n",
                    x.path, x.line, x.column, x.kind, x.resolution, x.confidence
                ));
            }
            if !r.alternatives.is_empty() {
                text.push_str(&format!(
                    "({} other definitions share the name: pass path and line to pick one)\n",
                    r.alternatives.len()
                ));
            }
            text
        })
    }

    #[tool(
        description = "Who calls a function or method (direction \"callers\", the default), or what it calls (\"callees\"): the calling definitions with the line of each call and a confidence. Example: {\"name\": \"check\", \"path\": \"src/util.rs\", \"line\": 3}."
    )]
    async fn docdex_callers(&self, Parameters(params): Parameters<TargetParams>) -> CallToolResult {
        let (offset, limit) = (params.offset, params.limit);
        let result = async {
            let repo = self.repo_of(params.repo.as_deref()).await?;
            self.call(params.calls(Some(repo), Direction::Callers)?).await
        }
        .await;
        let page =
            page_of(offset, limit, code_tools::DEFAULT_REFERENCES_LIMIT, result.as_ref().map_or(0, |r| r.total()));
        respond_fitted(result, page, self.budget_tokens, |r| match r {
            CallList::Callers(r) => {
                format!("{}\n{} callers\n{}", symbol_text(&r.symbol), r.total, edges_text(&r.callers))
            }
            CallList::Callees(r) => {
                format!("{}\n{} callees\n{}", symbol_text(&r.symbol), r.total, edges_text(&r.callees))
            }
        })
    }

    #[tool(
        description = "What a change affects. With file: its import graph (the repo files it imports, the files that import it, imports naming nothing in the repo). With diff (\"working\", \"staged\" or a revision): the changed files and definitions, what depends on them (with the path through the graph) and the tests that reach them, surest first, and every test file among them. Example: {\"file\": \"src/extract/mod.rs\", \"depth\": 2} or {\"diff\": \"working\"}."
    )]
    async fn docdex_impact(&self, Parameters(args): Parameters<ImpactArgs>) -> CallToolResult {
        // One tool, two calls: a diff's impact or a file's import edges.
        if let Some(diff) = args.diff {
            let params = DiffImpactParams {
                base: Some(diff),
                staged: None,
                depth: args.depth,
                min_confidence: args.min_confidence,
                limit: args.limit,
                repo: args.repo,
            };
            let result = if args.file.is_some() {
                Err(DocdexError::invalid("give `file` or `diff`, not both"))
            } else if args.offset.is_some() {
                Err(DocdexError::invalid("`offset` goes with `file`: a diff's lists are one page, cut at `limit`"))
            } else {
                self.run(params).await
            };
            return respond_fitted(result, Page::SINGLE, self.budget_tokens, super::impact::diff_impact_text);
        }
        if args.min_confidence.is_some() {
            let refusal = DocdexError::invalid("`min_confidence` goes with `diff`");
            return respond_fitted(Err::<ImpactResponse, _>(refusal), Page::SINGLE, self.budget_tokens, |_| {
                String::new()
            });
        }
        let Some(file) = args.file else {
            let missing = DocdexError::invalid(
                "give `file` (a path relative to the repo root) or `diff` (working, staged or a revision)",
            );
            return respond_fitted(Err::<ImpactResponse, _>(missing), Page::SINGLE, self.budget_tokens, |_| {
                String::new()
            });
        };
        let params =
            FileImpactParams { file, depth: args.depth, limit: args.limit, offset: args.offset, repo: args.repo };
        let result = self.run(params).await;
        respond_fitted(result, Page::SINGLE, self.budget_tokens, |r| {
            let mut text = format!("{} ({})\nimports:\n", r.file, r.language);
            for e in &r.imports {
                text.push_str(&format!("  {} ({:.2})\n", e.path, e.confidence));
            }
            text.push_str(&format!("imported by ({} in all):\n", r.imported_by_total));
            for e in &r.imported_by {
                text.push_str(&format!("  {} (depth {}, {:.2})\n", e.path, e.depth, e.confidence));
            }
            for u in &r.unresolved {
                text.push_str(&format!("unresolved: {} (line {})\n", u.spec, u.line));
            }
            text
        })
    }

    #[tool(
        description = "Structural search: run a tree-sitter query (S-expression with @captures) over the repo's files of one language; bounded in matches and time. Example: {\"language\": \"rust\", \"query\": \"(function_item name: (identifier) @name (#match? @name \\\"^spawn\\\"))\"}. Returns each capture's path, line and text."
    )]
    async fn docdex_ast_query(&self, Parameters(params): Parameters<AstQueryParams>) -> CallToolResult {
        let lim = params.limit.map_or(code_tools::DEFAULT_AST_LIMIT, |l| l as usize);
        let offset = params.offset.unwrap_or(0) as usize;
        let result = self.run(params).await;
        // The search says whether a next page exists; one the budget cuts goes on where it stopped.
        let cap = match &result {
            Ok(r) if r.next_offset.is_some() => usize::MAX,
            _ => offset.saturating_add(lim),
        };
        let page = Page { offset, limit: lim, cap };
        respond_fitted(result, page, self.budget_tokens, |r| {
            let mut text = format!(
                "{} matches in {} files{}\n",
                r.matches.len(),
                r.files_searched,
                if r.truncated { " (stopped at the limit)" } else { "" }
            );
            for m in &r.matches {
                text.push_str(&format!(
                    "{}:{} @{} {}\n",
                    m.path,
                    m.line,
                    m.capture,
                    m.text.lines().next().unwrap_or("")
                ));
            }
            text
        })
    }
}

impl Fit for CallList {
    fn items(&self) -> usize {
        match self {
            CallList::Callers(r) => r.callers.len(),
            CallList::Callees(r) => r.callees.len(),
        }
    }
    fn keep(&mut self, n: usize) {
        match self {
            CallList::Callers(r) => r.callers.truncate(n),
            CallList::Callees(r) => r.callees.truncate(n),
        }
    }
    fn clip(&mut self, _chars: usize) -> bool {
        false
    }
    fn structured(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Fit for SymbolsResponse {
    fn items(&self) -> usize {
        self.symbols.len()
    }
    fn keep(&mut self, n: usize) {
        self.symbols.truncate(n);
    }
    fn clip(&mut self, _chars: usize) -> bool {
        false
    }
    fn structured(&self) -> Value {
        // The text block carries the signatures.
        without(self, "symbols", &["signature"])
    }
}

impl Fit for ReferencesResponse {
    fn items(&self) -> usize {
        self.references.len()
    }
    fn keep(&mut self, n: usize) {
        self.references.truncate(n);
    }
    fn clip(&mut self, _chars: usize) -> bool {
        false
    }
    fn structured(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Fit for ImpactResponse {
    fn items(&self) -> usize {
        1
    }
    fn keep(&mut self, _n: usize) {}
    fn clip(&mut self, chars: usize) -> bool {
        // Cut the importers (the longest list) to fit, keeping the nearest.
        let keep = (chars / 60).max(1);
        if self.imported_by.len() <= keep {
            return false;
        }
        // The page started `imported_by.len()` before where the next one would have.
        let start = self.next_offset.unwrap_or(self.imported_by_total).saturating_sub(self.imported_by.len());
        self.imported_by.truncate(keep);
        self.truncated = true;
        self.next_offset = Some(start + keep);
        true
    }
    fn structured(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Fit for AstQueryResponse {
    fn items(&self) -> usize {
        self.matches.len()
    }
    fn keep(&mut self, n: usize) {
        self.matches.truncate(n);
        self.truncated = true;
    }
    fn clip(&mut self, chars: usize) -> bool {
        self.matches.first_mut().is_some_and(|m| super::budget::clip_text(&mut m.text, chars))
    }
    fn structured(&self) -> Value {
        without(self, "matches", &["text"])
    }
}
