//! The code intelligence tools over MCP: definitions, references, callers (and callees), a
//! file's import edges, structural queries. Each result fits the result budget; long lists
//! say where their next page starts.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::budget::{offset_arg, respond_fitted, without, Fit, Page};
use super::{bounded, lenient_number, DocdexMcp};
use crate::actors::tool_dispatcher::code::{
    self as code_tools, check_confidence, parse_kind, parse_language, FileImpact, FindCallees, FindCallers,
    FindReferences, FindSymbols, RunAstQuery, SymbolTarget, MAX_CODE_LIMIT,
};
use crate::actors::tool_dispatcher::impact::{DiffImpact, DEFAULT_DIFF_DEPTH, DEFAULT_DIFF_LIMIT};
use crate::change::git::DiffBase;
use crate::protocol::code::{
    AstQueryResponse, CallEdge, CalleesResponse, CallersResponse, ImpactResponse, ReferencesResponse, SymbolInfo,
    SymbolsResponse,
};
use crate::protocol::{DocdexError, Result};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolsArgs {
    /// A name ("Router"), a qualified name ("Router::route", "Flask.route") or a pattern with
    /// * and ? ("spawn*", "*Handle").
    pub name: String,
    /// Only this kind of definition.
    #[serde(default)]
    #[schemars(extend("enum" = ["function", "method", "constructor", "class", "struct", "enum", "enum_member", "trait", "interface", "type", "constant", "variable", "field", "property", "module", "macro"]))]
    pub kind: Option<String>,
    /// Only definitions in this language, e.g. "rust", "python", "typescript".
    #[serde(default)]
    pub language: Option<String>,
    /// Definitions to return, 1-1000 (default 20).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetArgs {
    /// The symbol's name, plain or qualified ("Cart::add", "Cart.add").
    pub name: String,
    /// The file of the definition (or of a use) meant, relative to the repo root: picks one
    /// definition among several of that name.
    #[serde(default)]
    pub path: Option<String>,
    /// The line (1-based) of that definition or use in `path`.
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1))]
    pub line: Option<u64>,
    /// Entries to return, 1-1000 (default 100), highest confidence first.
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Leave out entries below this confidence, 0-1 (default 0.5, which leaves out name-only
    /// matches; the answer counts them in below_min_confidence).
    #[serde(default)]
    pub min_confidence: Option<f64>,
    /// "callers" (default) or "callees" (what the symbol calls); docdex_callers only.
    #[serde(default)]
    #[schemars(extend("enum" = ["callers", "callees"]))]
    pub direction: Option<String>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

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
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_confidence: Option<f64>,
    /// How many hops to follow, 1-5 (default 1 for a file's importers, 2 for a diff's
    /// dependents).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 5))]
    pub depth: Option<u64>,
    /// Importers to return, 1-1000 (default 200; for a diff, 100 dependents and 100 tests).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstQueryArgs {
    /// The language whose files are searched, e.g. "rust", "python", "typescript", "go".
    pub language: String,
    /// A tree-sitter query (S-expression) with captures, e.g.
    /// "(function_item name: (identifier) @name)".
    pub query: String,
    /// Captures to return, 1-1000 (default 100).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
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

/// The page an answer was: a list of `total` entries from `offset`.
fn page_of(offset: usize, limit: usize, total: usize) -> Page {
    Page { offset, limit, cap: total }
}

#[tool_router(router = code_tool_router, vis = "pub(super)")]
impl DocdexMcp {
    #[tool(
        description = "Find definitions (functions, methods, types, constants…) by name, qualified name or pattern. Example: {\"name\": \"Router::route\"} or {\"name\": \"spawn*\", \"kind\": \"function\"}. Returns path, line-end_line, kind, signature, container for each, best first."
    )]
    async fn docdex_symbols(&self, Parameters(args): Parameters<SymbolsArgs>) -> CallToolResult {
        let limit = bounded(args.limit, code_tools::DEFAULT_SYMBOLS_LIMIT, MAX_CODE_LIMIT, "limit");
        let offset = offset_arg(args.offset, usize::MAX);
        let (off, lim) = (*offset.as_ref().unwrap_or(&0), *limit.as_ref().unwrap_or(&0));
        let result = async {
            let msg = FindSymbols {
                repo_opt: Some(self.repo(args.repo).await?),
                name_opt: Some(args.name),
                kind_opt: args.kind.as_deref().filter(|k| !k.trim().is_empty()).map(parse_kind).transpose()?,
                language_opt: args
                    .language
                    .as_deref()
                    .filter(|l| !l.trim().is_empty())
                    .map(parse_language)
                    .transpose()?,
                page: code_tools::Page { limit: limit?, offset: offset? },
            };
            self.call(msg).await
        }
        .await;
        let page = page_of(off, lim, result.as_ref().map(|r| r.total).unwrap_or(0));
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
    async fn docdex_references(&self, Parameters(args): Parameters<TargetArgs>) -> CallToolResult {
        let limit = bounded(args.limit, code_tools::DEFAULT_REFERENCES_LIMIT, MAX_CODE_LIMIT, "limit");
        let offset = offset_arg(args.offset, usize::MAX);
        let (off, lim) = (*offset.as_ref().unwrap_or(&0), *limit.as_ref().unwrap_or(&0));
        let result = async {
            if args.direction.is_some() {
                return Err(DocdexError::invalid("`direction` belongs to docdex_callers"));
            }
            let (target, min_confidence) = self.target(&args).await?;
            let page = code_tools::Page { limit: limit?, offset: offset? };
            self.call(FindReferences { target, min_confidence, page }).await
        }
        .await;
        let page = page_of(off, lim, result.as_ref().map(|r| r.total).unwrap_or(0));
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
    async fn docdex_callers(&self, Parameters(args): Parameters<TargetArgs>) -> CallToolResult {
        let limit = bounded(args.limit, code_tools::DEFAULT_REFERENCES_LIMIT, MAX_CODE_LIMIT, "limit");
        let offset = offset_arg(args.offset, usize::MAX);
        let (off, lim) = (*offset.as_ref().unwrap_or(&0), *limit.as_ref().unwrap_or(&0));
        let callees = match args.direction.as_deref().map(str::trim) {
            None | Some("") | Some("callers") => Ok(false),
            Some("callees") => Ok(true),
            Some(other) => {
                Err(DocdexError::invalid(format!("unknown direction `{other}`")).with_hint("use callers or callees"))
            }
        };
        let result = async {
            let callees = callees?;
            let (target, min_confidence) = self.target(&args).await?;
            let page = code_tools::Page { limit: limit?, offset: offset? };
            Ok(if callees {
                CallList::Callees(self.call(FindCallees { target, min_confidence, page }).await?)
            } else {
                CallList::Callers(self.call(FindCallers { target, min_confidence, page }).await?)
            })
        }
        .await;
        let page = page_of(off, lim, result.as_ref().map(|r| r.total()).unwrap_or(0));
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
        description = "What a change affects. With file: its import graph (the repo files it imports, the files that import it, imports naming nothing in the repo). With diff (\"working\", \"staged\" or a revision): the changed files and definitions, what depends on them (with the path through the graph) and the tests that reach them, surest first. Example: {\"file\": \"src/extract/mod.rs\", \"depth\": 2} or {\"diff\": \"working\"}."
    )]
    async fn docdex_impact(&self, Parameters(args): Parameters<ImpactArgs>) -> CallToolResult {
        if let Some(diff) = args.diff.clone() {
            let result = async {
                if args.file.is_some() {
                    return Err(DocdexError::invalid("give `file` or `diff`, not both"));
                }
                let limit = bounded(args.limit, DEFAULT_DIFF_LIMIT, MAX_CODE_LIMIT, "limit")?;
                let depth =
                    bounded(args.depth, DEFAULT_DIFF_DEPTH as usize, code_tools::MAX_IMPACT_DEPTH as usize, "depth")?;
                let min_confidence =
                    check_confidence(args.min_confidence.map_or(code_tools::DEFAULT_MIN_CONFIDENCE, |c| c as f32))?;
                let base = DiffBase::parse(Some(&diff), false)?;
                let repo_opt = Some(self.repo(args.repo).await?);
                self.call(DiffImpact { repo_opt, base, depth: depth as u32, min_confidence, limit }).await
            }
            .await;
            return respond_fitted(result, Page::SINGLE, self.budget_tokens, super::impact::diff_impact_text);
        }
        let result = async {
            let limit = bounded(args.limit, code_tools::DEFAULT_IMPACT_LIMIT, MAX_CODE_LIMIT, "limit")?;
            let depth = bounded(args.depth, 1, code_tools::MAX_IMPACT_DEPTH as usize, "depth")? as u32;
            let file = args.file.filter(|f| !f.trim().is_empty()).ok_or_else(|| {
                DocdexError::invalid(
                    "give `file` (a path relative to the repo root) or `diff` (working, staged or a revision)",
                )
            })?;
            let repo_opt = Some(self.repo(args.repo).await?);
            self.call(FileImpact { repo_opt, file, depth, limit }).await
        }
        .await;
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
    async fn docdex_ast_query(&self, Parameters(args): Parameters<AstQueryArgs>) -> CallToolResult {
        let limit = bounded(args.limit, code_tools::DEFAULT_AST_LIMIT, MAX_CODE_LIMIT, "limit");
        let lim = *limit.as_ref().unwrap_or(&0);
        let result = async {
            let msg = RunAstQuery {
                repo_opt: Some(self.repo(args.repo).await?),
                language: parse_language(&args.language)?,
                query: args.query,
                limit: limit?,
            };
            self.call(msg).await
        }
        .await;
        let page = Page { offset: 0, limit: lim, cap: lim };
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

impl DocdexMcp {
    async fn target(&self, args: &TargetArgs) -> Result<(SymbolTarget, f32)> {
        let line_opt = args
            .line
            .map(|l| u32::try_from(l).map_err(|_| DocdexError::invalid(format!("no line {l}"))))
            .transpose()?;
        if line_opt.is_some() && args.path.is_none() {
            return Err(DocdexError::invalid("`line` needs `path`").with_hint("give the file the line is in"));
        }
        let min_confidence =
            check_confidence(args.min_confidence.map_or(code_tools::DEFAULT_MIN_CONFIDENCE, |c| c as f32))?;
        let target = SymbolTarget {
            repo_opt: Some(self.repo(args.repo.clone()).await?),
            name: args.name.clone(),
            path_opt: args.path.clone(),
            line_opt,
        };
        Ok((target, min_confidence))
    }
}

/// docdex_callers answers either list.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum CallList {
    Callers(CallersResponse),
    Callees(CalleesResponse),
}

impl CallList {
    fn total(&self) -> usize {
        match self {
            CallList::Callers(r) => r.total,
            CallList::Callees(r) => r.total,
        }
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
        self.imported_by.truncate(keep);
        self.truncated = true;
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
