//! The code intelligence tools: definitions by name or pattern, references, callers and
//! callees, a file's import edges, and structural queries. They read the repo's code graph
//! (built from the code facts the index run stored), so they answer from the index, never
//! from a fresh parse of the repo.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{self, Caller, Tool};
use super::{open_indexed, tracked, ToolDispatcher};
use crate::code::graph::SymbolRef;
use crate::code::query::{glob_match, AstQuery};
use crate::code::{CodeGraph, SymbolKind};
use crate::index::RepoIndex;
use crate::ingest::Language;
use crate::protocol::code::{
    AstQueryResponse, CalleesResponse, CallersResponse, ImpactResponse, ReferencesResponse, SymbolsResponse,
};
use crate::protocol::{DocdexError, ErrorCode, Result};

/// Definitions a symbol search gives when the caller names no limit (every surface).
pub const DEFAULT_SYMBOLS_LIMIT: usize = 20;
/// References, callers or callees a query gives when the caller names no limit.
pub const DEFAULT_REFERENCES_LIMIT: usize = 100;
/// Importers an impact query gives when the caller names no limit.
pub const DEFAULT_IMPACT_LIMIT: usize = 200;
/// Matches a structural query gives when the caller names no limit.
pub const DEFAULT_AST_LIMIT: usize = 100;
/// Most entries any code intelligence list gives at once (page with `offset` past it).
pub const MAX_CODE_LIMIT: usize = 1000;
/// The `min_confidence` of references, callers and callees when the caller names none: above
/// every name-only match (at most 0.45), so a default answer holds only uses tied to the
/// definition by scope, import, path or package. The answer counts what it left out.
pub const DEFAULT_MIN_CONFIDENCE: f32 = 0.5;
/// Deepest `depth` an impact query follows.
pub const MAX_IMPACT_DEPTH: u32 = 5;
/// Time a structural query may run.
pub const AST_QUERY_SECS: u64 = 10;

/// One page of a list.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub limit: usize,
    pub offset: usize,
}

impl Page {
    fn cut<T>(self, items: Vec<T>) -> (Vec<T>, usize, Option<usize>) {
        let total = items.len();
        let page: Vec<T> = items.into_iter().skip(self.offset).take(self.limit).collect();
        let end = self.offset + page.len();
        (page, total, (end < total).then_some(end))
    }
}

/// Which definition a query is about: a name (plain, qualified or with a trailing `*`), and
/// optionally where it is defined or used.
#[derive(Debug, Clone)]
pub struct SymbolTarget {
    pub repo_opt: Option<PathBuf>,
    pub name: String,
    pub path_opt: Option<String>,
    pub line_opt: Option<u32>,
}

/// Definitions by name, qualified name, or glob pattern (`spawn*`, `*Handle`).
#[derive(Message)]
#[rtype(result = "Result<SymbolsResponse>")]
pub struct FindSymbols {
    pub repo_opt: Option<PathBuf>,
    /// `None`: every definition (of `kind`).
    pub name_opt: Option<String>,
    pub kind_opt: Option<SymbolKind>,
    pub language_opt: Option<Language>,
    pub page: Page,
}

#[derive(Message)]
#[rtype(result = "Result<ReferencesResponse>")]
pub struct FindReferences {
    pub target: SymbolTarget,
    pub min_confidence: f32,
    pub page: Page,
}

/// Which way a calls query goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Who calls the definition.
    Callers,
    /// What the definition calls.
    Callees,
}

/// The calling definitions of a function, or the ones it calls.
#[derive(Message)]
#[rtype(result = "Result<CallList>")]
pub struct FindCalls {
    pub target: SymbolTarget,
    pub min_confidence: f32,
    pub page: Page,
    pub direction: Direction,
}

/// Callers or callees, as asked (each serializes as its own response).
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum CallList {
    Callers(CallersResponse),
    Callees(CalleesResponse),
}

impl CallList {
    pub fn total(&self) -> usize {
        match self {
            CallList::Callers(r) => r.total,
            CallList::Callees(r) => r.total,
        }
    }
}

/// A file's imports, its importers (through `depth` hops) and its unresolved imports.
#[derive(Message)]
#[rtype(result = "Result<ImpactResponse>")]
pub struct FileImpact {
    pub repo_opt: Option<PathBuf>,
    pub file: String,
    pub depth: u32,
    pub offset: usize,
    pub limit: usize,
}

/// A tree-sitter query over one language's indexed files.
#[derive(Message)]
#[rtype(result = "Result<AstQueryResponse>")]
pub struct RunAstQuery {
    pub repo_opt: Option<PathBuf>,
    pub language: Language,
    pub query: String,
    pub offset: usize,
    pub limit: usize,
}

/// Parses a `kind` parameter; an unknown kind is refused with the list.
pub fn parse_kind(raw: &str) -> Result<SymbolKind> {
    SymbolKind::from_name(raw.trim()).ok_or_else(|| {
        let kinds: Vec<&str> = SymbolKind::ALL.iter().map(|k| k.name()).collect();
        DocdexError::invalid(format!("unknown kind `{raw}`")).with_hint(format!("use one of {}", kinds.join(", ")))
    })
}

/// Parses a `language` parameter: one of the languages with a grammar.
pub fn parse_language(raw: &str) -> Result<Language> {
    Language::from_name(raw.trim()).ok_or_else(|| {
        let names: Vec<&str> = crate::ingest::lang::CODE_LANGUAGES.iter().map(|l| l.name()).collect();
        DocdexError::invalid(format!("unknown language `{raw}`")).with_hint(format!("use one of {}", names.join(", ")))
    })
}

/// Checks a `limit` against its bounds.
pub fn check_limit(limit: usize) -> Result<usize> {
    if (1..=MAX_CODE_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(DocdexError::invalid(format!("`limit` must be between 1 and {MAX_CODE_LIMIT}, got {limit}")))
    }
}

/// Checks a `min_confidence` (0–1).
pub fn check_confidence(value: f32) -> Result<f32> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(DocdexError::invalid(format!("`min_confidence` must be between 0 and 1, got {value}")))
    }
}

// ---- Parameters, as every surface takes them (see `params`).

/// `GET /v1/symbols`, MCP `docdex_symbols`, `docdex symbols`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolsParams {
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
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl SymbolsParams {
    fn page(&self, default: usize) -> Result<Page> {
        page(self.limit, self.offset, default)
    }
}

impl Tool for SymbolsParams {
    type Message = FindSymbols;
    type Output = SymbolsResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<FindSymbols> {
        let page = self.page(DEFAULT_SYMBOLS_LIMIT)?;
        let name = params::text(Some(self.name)).ok_or_else(|| {
            DocdexError::invalid("`name` is required")
                .with_hint("a name (`Router`), a qualified name (`Router::route`) or a pattern (`spawn*`)")
        })?;
        Ok(FindSymbols {
            repo_opt,
            name_opt: Some(name),
            kind_opt: params::text(self.kind).as_deref().map(parse_kind).transpose()?,
            language_opt: params::text(self.language).as_deref().map(parse_language).transpose()?,
            page,
        })
    }
}

/// `GET /v1/ast/search`: definitions by kind and name pattern; the name may be left out
/// when a kind is given.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstSearchParams {
    /// A name or a pattern with * and ? (default: every definition of `kind`).
    #[serde(default)]
    pub name: Option<String>,
    /// Only this kind of definition (needed without a name).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only definitions in this language.
    #[serde(default)]
    pub language: Option<String>,
    /// Definitions to return, 1-1000 (default 20).
    #[serde(default, deserialize_with = "params::number")]
    pub limit: Option<u64>,
    /// Where this page starts (default 0).
    #[serde(default, deserialize_with = "params::number")]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for AstSearchParams {
    type Message = FindSymbols;
    type Output = SymbolsResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<FindSymbols> {
        let page = page(self.limit, self.offset, DEFAULT_SYMBOLS_LIMIT)?;
        let kind_opt = params::text(self.kind).as_deref().map(parse_kind).transpose()?;
        let name_opt = params::text(self.name);
        if name_opt.is_none() && kind_opt.is_none() {
            return Err(DocdexError::invalid("`name` is required without `kind`")
                .with_hint("a name (`Router`), a pattern (`spawn*`), or a kind (`trait`)"));
        }
        let language_opt = params::text(self.language).as_deref().map(parse_language).transpose()?;
        Ok(FindSymbols { repo_opt, name_opt, kind_opt, language_opt, page })
    }
}

/// A definition and a page of what relates to it: `GET /v1/references`, `/v1/callers`,
/// `/v1/callees`; MCP `docdex_references`, `docdex_callers`; `docdex refs|callers|callees`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetParams {
    /// The symbol's name, plain or qualified ("Cart::add", "Cart.add").
    pub name: String,
    /// The file of the definition (or of a use) meant, relative to the repo root: picks one
    /// definition among several of that name.
    #[serde(default)]
    pub path: Option<String>,
    /// The line (1-based) of that definition or use in `path`.
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1))]
    pub line: Option<u64>,
    /// Entries to return, 1-1000 (default 100), highest confidence first.
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Leave out entries below this confidence, 0-1 (default 0.5, which leaves out name-only
    /// matches; the answer counts them in below_min_confidence).
    #[serde(default, deserialize_with = "params::fraction")]
    pub min_confidence: Option<f64>,
    /// "callers" or "callees" (what the symbol calls): callers and callees only (the
    /// default is the one asked for).
    #[serde(default)]
    #[schemars(extend("enum" = ["callers", "callees"]))]
    pub direction: Option<String>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

/// Callees asked for under their own name (`/v1/callees`, `docdex callees`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct CalleesParams(pub TargetParams);

impl TargetParams {
    /// The definition meant, the page and the confidence floor, checked.
    fn parts(self, repo_opt: Option<PathBuf>) -> Result<(SymbolTarget, Page, f32, Option<String>)> {
        let page = page(self.limit, self.offset, DEFAULT_REFERENCES_LIMIT)?;
        let min_confidence = confidence(self.min_confidence)?;
        let line_opt = params::line("line", self.line)?;
        let name = params::text(Some(self.name)).ok_or_else(|| {
            DocdexError::invalid("`name` is required")
                .with_hint("the symbol's name; add `path` and `line` to pick one definition among several")
        })?;
        let path_opt = params::text(self.path);
        if line_opt.is_some() && path_opt.is_none() {
            return Err(DocdexError::invalid("`line` needs `path`").with_hint("give the file the line is in"));
        }
        let target = SymbolTarget { repo_opt, name, path_opt, line_opt };
        Ok((target, page, min_confidence, params::text(self.direction)))
    }

    /// Callers or callees, as `direction` says (`default` when it is left out).
    pub fn calls(self, repo_opt: Option<PathBuf>, default: Direction) -> Result<FindCalls> {
        let (target, page, min_confidence, direction_opt) = self.parts(repo_opt)?;
        let direction = match direction_opt.as_deref() {
            None => default,
            Some("callers") => Direction::Callers,
            Some("callees") => Direction::Callees,
            Some(other) => {
                return Err(
                    DocdexError::invalid(format!("unknown direction `{other}`")).with_hint("use callers or callees")
                )
            }
        };
        Ok(FindCalls { target, min_confidence, page, direction })
    }
}

impl Tool for TargetParams {
    type Message = FindReferences;
    type Output = ReferencesResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<FindReferences> {
        let (target, page, min_confidence, direction_opt) = self.parts(repo_opt)?;
        if direction_opt.is_some() {
            return Err(DocdexError::invalid("`direction` belongs to callers and callees"));
        }
        Ok(FindReferences { target, min_confidence, page })
    }
}

/// Callers asked for under their own name (`/v1/callers`, `docdex callers`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct CallersParams(pub TargetParams);

impl TargetParams {
    /// `calls` under a route that names its direction: a `direction` that says the other one
    /// is refused, not followed (the route's name would answer the wrong question).
    fn calls_of(self, repo_opt: Option<PathBuf>, route: Direction) -> Result<FindCalls> {
        let (this, other) = match route {
            Direction::Callers => ("callers", "callees"),
            Direction::Callees => ("callees", "callers"),
        };
        if self.direction.as_deref().is_some_and(|d| d != this) {
            return Err(DocdexError::invalid(format!("this endpoint answers {this}; `direction` says otherwise"))
                .with_hint(format!("ask /v1/{other} (docdexd {other}) for {other}, or leave out `direction`")));
        }
        self.calls(repo_opt, route)
    }
}

impl Tool for CallersParams {
    type Message = FindCalls;
    type Output = CallList;

    fn repo(&self) -> Option<&Path> {
        self.0.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<FindCalls> {
        self.0.calls_of(repo_opt, Direction::Callers)
    }
}

impl Tool for CalleesParams {
    type Message = FindCalls;
    type Output = CallList;

    fn repo(&self) -> Option<&Path> {
        self.0.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<FindCalls> {
        self.0.calls_of(repo_opt, Direction::Callees)
    }
}

/// `GET /v1/graph/impact`, MCP `docdex_impact {file}`, `docdex impact --file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileImpactParams {
    /// The file, relative to the repo root: its import edges.
    #[serde(alias = "path")]
    pub file: String,
    /// How many hops of importers to follow, 1-5 (default 1).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 5))]
    pub depth: Option<u64>,
    /// Importers to return, 1-1000 (default 200).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Where this page of importers starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for FileImpactParams {
    type Message = FileImpact;
    type Output = ImpactResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<FileImpact> {
        let limit = params::bounded("limit", self.limit, DEFAULT_IMPACT_LIMIT, MAX_CODE_LIMIT)?;
        let depth = params::bounded("depth", self.depth, 1, MAX_IMPACT_DEPTH as usize)? as u32;
        let file = params::text(Some(self.file)).ok_or_else(|| {
            DocdexError::invalid("`file` is required")
                .with_hint("a path relative to the repo root, as search results give it")
        })?;
        let offset = self.offset.unwrap_or(0) as usize;
        Ok(FileImpact { repo_opt, file, depth, offset, limit })
    }
}

/// `POST /v1/ast/query`, MCP `docdex_ast_query`, `docdex ast`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstQueryParams {
    /// The language whose files are searched, e.g. "rust", "python", "typescript", "go".
    pub language: String,
    /// A tree-sitter query (S-expression) with captures, e.g.
    /// "(function_item name: (identifier) @name)".
    pub query: String,
    /// Captures to return, 1-1000 (default 100).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for AstQueryParams {
    type Message = RunAstQuery;
    type Output = AstQueryResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<RunAstQuery> {
        let language = parse_language(&self.language)?;
        let limit = params::bounded("limit", self.limit, DEFAULT_AST_LIMIT, MAX_CODE_LIMIT)?;
        if self.query.trim().is_empty() {
            return Err(DocdexError::invalid("`query` must not be empty")
                .with_hint("a tree-sitter query, e.g. (function_item name: (identifier) @name)"));
        }
        let offset = self.offset.unwrap_or(0).min(usize::MAX as u64) as usize;
        Ok(RunAstQuery { repo_opt, language, query: self.query, offset, limit })
    }
}

fn page(limit: Option<u64>, offset: Option<u64>, default: usize) -> Result<Page> {
    let limit = params::bounded("limit", limit, default, MAX_CODE_LIMIT)?;
    Ok(Page { limit, offset: offset.unwrap_or(0).min(usize::MAX as u64) as usize })
}

/// A `min_confidence` parameter (default `DEFAULT_MIN_CONFIDENCE`).
pub fn confidence(value: Option<f64>) -> Result<f32> {
    check_confidence(value.map_or(DEFAULT_MIN_CONFIDENCE, |c| c as f32))
}

impl ToolDispatcher {
    /// Runs `work` on the repo's code graph, off the executor.
    pub(super) fn with_graph<T: Send + 'static>(
        &self,
        repo_opt: Option<PathBuf>,
        work: impl FnOnce(&RepoIndex, &CodeGraph) -> Result<T> + Send + 'static,
    ) -> ResponseFuture<Result<T>> {
        let repo = self.resolve_repo(repo_opt);
        let repo_manager = self.repo_manager.clone();
        tracked(&self.metrics, "code", async move {
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let graph = index.code_graph()?;
                work(&index, &graph)
            })
            .await?
        })
    }
}

fn is_pattern(name: &str) -> bool {
    name.contains(['*', '?'])
}

/// The definitions a symbol search names, best first.
fn find_symbols(graph: &CodeGraph, msg: &FindSymbols) -> Vec<SymbolRef> {
    let keep = |r: &SymbolRef| {
        let s = graph.symbol(*r);
        msg.kind_opt.is_none_or(|k| k == s.kind) && msg.language_opt.is_none_or(|l| graph.info(*r).language == l.name())
    };
    let mut found: Vec<SymbolRef> = match msg.name_opt.as_deref().map(str::trim) {
        None | Some("") | Some("*") => graph.all_symbols().filter(keep).collect(),
        Some(name) if is_pattern(name) => {
            // `Type::new*`: the pattern is matched against the qualified name.
            let qualified = name.contains("::") || name.trim_end_matches(['*', '?']).contains('.');
            graph
                .all_symbols()
                .filter(|r| {
                    let s = graph.symbol(*r);
                    if qualified {
                        glob_match(name, &s.qualified_name)
                    } else {
                        glob_match(name, &s.name)
                    }
                })
                .filter(keep)
                .collect()
        }
        Some(name) => {
            let exact: Vec<SymbolRef> = graph.lookup(name).into_iter().filter(keep).collect();
            if exact.is_empty() {
                // No exact match: the same name in another case (`joinhandle`).
                let lower = name.to_lowercase();
                graph.all_symbols().filter(|r| graph.symbol(*r).name.to_lowercase() == lower).filter(keep).collect()
            } else {
                exact
            }
        }
    };
    graph.rank_definitions(&mut found);
    if let Some(name) = msg.name_opt.as_deref().map(str::trim).filter(|n| !is_pattern(n) && n.contains([':', '.'])) {
        // As written (`Cart::add` is Rust's, `Cart.add` Python's) first.
        found.sort_by_key(|&r| !graph.symbol(r).qualified_name.ends_with(name));
    }
    if let Some(name) = msg.name_opt.as_deref().filter(|n| is_pattern(n)) {
        // Patterns: exact-case and shorter names first within the ranking's kinds.
        let bare = name.trim_matches(['*', '?']);
        found.sort_by_key(|r| {
            let s = graph.symbol(*r);
            (!s.name.starts_with(bare), s.name.len())
        });
    }
    found
}

/// The one definition a target means, and the others its name could mean.
fn pick_target(graph: &CodeGraph, target: &SymbolTarget) -> Result<(SymbolRef, Vec<SymbolRef>)> {
    let name = target.name.trim();
    if name.is_empty() {
        return Err(
            DocdexError::invalid("`name` must not be empty").with_hint("name a function, type, method or constant")
        );
    }
    if let (Some(path), Some(line)) = (&target.path_opt, target.line_opt) {
        let path = path.trim_start_matches("./");
        if graph.file_index(path).is_none() {
            return Err(DocdexError::new(ErrorCode::NotFound, format!("{path} has no symbols in this repo's index"))
                .with_hint("use a path relative to the repo root, as `symbols` gives it"));
        }
        return match graph.pick(name, path, line) {
            Some(found) => Ok((found, Vec::new())),
            None => Err(DocdexError::new(
                ErrorCode::NotFound,
                format!("no definition or use of `{name}` at {path}:{line}"),
            )
            .with_hint(
                "give the line of the definition (as `symbols` reports it) or of a use, or leave out path and line",
            )),
        };
    }
    let mut candidates = if is_pattern(name) {
        let msg = FindSymbols {
            repo_opt: None,
            name_opt: Some(name.to_string()),
            kind_opt: None,
            language_opt: None,
            page: Page { limit: 1, offset: 0 },
        };
        find_symbols(graph, &msg)
    } else {
        let mut c = graph.lookup(name);
        graph.rank_definitions(&mut c);
        c.sort_by_key(|&r| !graph.symbol(r).qualified_name.ends_with(name));
        c
    };
    if let Some(path) = &target.path_opt {
        // A path alone narrows to that file's definitions.
        let path = path.trim_start_matches("./");
        candidates.retain(|r| graph.path(r.0) == path);
    }
    if candidates.is_empty() {
        return Err(DocdexError::new(ErrorCode::NotFound, format!("no definition named `{name}` in this repo"))
            .with_hint(format!("look for it with a pattern: `docdexd symbols '{name}*'`")));
    }
    let first = candidates.remove(0);
    candidates.truncate(10);
    Ok((first, candidates))
}

impl Handler<FindSymbols> for ToolDispatcher {
    type Result = ResponseFuture<Result<SymbolsResponse>>;

    fn handle(&mut self, msg: FindSymbols, _: &mut Context<Self>) -> Self::Result {
        let repo_opt = msg.repo_opt.clone();
        self.with_graph(repo_opt, move |_, graph| {
            let found = find_symbols(graph, &msg);
            let (page, total, next_offset) = msg.page.cut(found);
            Ok(SymbolsResponse { symbols: page.into_iter().map(|r| graph.info(r)).collect(), total, next_offset })
        })
    }
}

impl Handler<FindReferences> for ToolDispatcher {
    type Result = ResponseFuture<Result<ReferencesResponse>>;

    fn handle(&mut self, msg: FindReferences, _: &mut Context<Self>) -> Self::Result {
        let repo_opt = msg.target.repo_opt.clone();
        self.with_graph(repo_opt, move |_, graph| {
            let (target, others) = pick_target(graph, &msg.target)?;
            let all = graph.references(target, 0.0);
            let before = all.len();
            let refs: Vec<_> = all.into_iter().filter(|r| r.confidence >= msg.min_confidence).collect();
            let below_min_confidence = before - refs.len();
            let (references, total, next_offset) = msg.page.cut(refs);
            Ok(ReferencesResponse {
                symbol: graph.info(target),
                references,
                total,
                next_offset,
                below_min_confidence,
                alternatives: others.into_iter().map(|r| graph.info(r)).collect(),
            })
        })
    }
}

impl Handler<FindCalls> for ToolDispatcher {
    type Result = ResponseFuture<Result<CallList>>;

    fn handle(&mut self, msg: FindCalls, _: &mut Context<Self>) -> Self::Result {
        let repo_opt = msg.target.repo_opt.clone();
        self.with_graph(repo_opt, move |_, graph| {
            let (target, _) = pick_target(graph, &msg.target)?;
            let all = match msg.direction {
                Direction::Callers => graph.callers(target, 0.0),
                Direction::Callees => graph.callees(target, 0.0),
            };
            let before = all.len();
            let kept: Vec<_> = all.into_iter().filter(|c| c.confidence >= msg.min_confidence).collect();
            let below_min_confidence = before - kept.len();
            let (edges, total, next_offset) = msg.page.cut(kept);
            let symbol = graph.info(target);
            Ok(match msg.direction {
                Direction::Callers => CallList::Callers(CallersResponse {
                    symbol,
                    callers: edges,
                    total,
                    next_offset,
                    below_min_confidence,
                }),
                Direction::Callees => CallList::Callees(CalleesResponse {
                    symbol,
                    callees: edges,
                    total,
                    next_offset,
                    below_min_confidence,
                }),
            })
        })
    }
}

impl Handler<FileImpact> for ToolDispatcher {
    type Result = ResponseFuture<Result<ImpactResponse>>;

    fn handle(&mut self, msg: FileImpact, _: &mut Context<Self>) -> Self::Result {
        let repo_opt = msg.repo_opt.clone();
        self.with_graph(repo_opt, move |index, graph| {
            let file = msg.file.trim().trim_start_matches("./").to_string();
            if file.is_empty() {
                return Err(DocdexError::invalid("`file` must not be empty")
                    .with_hint("use a path relative to the repo root, as search results give it"));
            }
            if msg.depth == 0 || msg.depth > MAX_IMPACT_DEPTH {
                return Err(DocdexError::invalid(format!(
                    "`depth` must be between 1 and {MAX_IMPACT_DEPTH}, got {}",
                    msg.depth
                )));
            }
            graph.impact(&file, msg.depth, msg.offset, msg.limit).ok_or_else(|| {
                let indexed = index.store.read_txn().and_then(|t| index.store.file(&t, &file)).ok().flatten().is_some();
                let message = if indexed {
                    format!("{file} is indexed but is not source in a language docdex parses")
                } else {
                    format!("{file} is not an indexed file of this repo")
                };
                DocdexError::new(ErrorCode::NotFound, message)
                    .with_hint("use a path relative to the repo root, as search results and `files` give it")
            })
        })
    }
}

impl Handler<RunAstQuery> for ToolDispatcher {
    type Result = ResponseFuture<Result<AstQueryResponse>>;

    fn handle(&mut self, msg: RunAstQuery, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let max_open_bytes = self.config.core.max_open_bytes;
        tracked(&self.metrics, "code", async move {
            // Compiled before the repo is opened: a wrong query is the caller's error whatever
            // the repo's state.
            let query = AstQuery::new(msg.language, &msg.query).map_err(|e| {
                DocdexError::invalid(format!("the query does not compile for {}: {e}", msg.language.name()))
                    .with_hint("write a tree-sitter query (S-expression) with node kinds of that language's grammar")
            })?;
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let language = msg.language.name();
                let mut paths: Vec<String> = index
                    .store
                    .all_files(&index.store.read_txn()?)?
                    .into_iter()
                    .filter(|(_, record)| record.language == language)
                    .map(|(path, _)| path)
                    .collect();
                paths.sort();
                let root = index.root.clone();
                // Files that cannot be read now (gone, grown past the cap) are skipped.
                let files = paths.into_iter().filter_map(move |path| {
                    let bytes = crate::ingest::open::read_inside(&root, &path, max_open_bytes).ok()?;
                    Some((path, String::from_utf8(bytes).ok()?))
                });
                let deadline = Instant::now() + Duration::from_secs(AST_QUERY_SECS);
                Ok(query.run(files, msg.offset, msg.limit, deadline))
            })
            .await?
        })
    }
}
