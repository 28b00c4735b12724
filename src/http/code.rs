//! Code intelligence over HTTP: `GET /v1/symbols`, `/v1/references`, `/v1/callers`,
//! `/v1/callees`, `/v1/graph/impact`, `/v1/ast/search` and `POST /v1/ast/query`. Each route
//! takes only its own parameters: anything else is refused with the name it may have meant.

use std::path::PathBuf;

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use super::{dispatch, error_response, parse_number, respond, HttpState};
use crate::actors::tool_dispatcher::code::{
    check_confidence, check_limit, parse_kind, parse_language, FileImpact, FindCallees, FindCallers, FindReferences,
    FindSymbols, Page, RunAstQuery, SymbolTarget, DEFAULT_AST_LIMIT, DEFAULT_IMPACT_LIMIT, DEFAULT_MIN_CONFIDENCE,
    DEFAULT_REFERENCES_LIMIT, DEFAULT_SYMBOLS_LIMIT,
};
use crate::protocol::DocdexError;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/symbols", web::get().to(symbols))
        .route("/v1/references", web::get().to(references))
        .route("/v1/callers", web::get().to(callers))
        .route("/v1/callees", web::get().to(callees))
        .route("/v1/graph/impact", web::get().to(impact))
        .route("/v1/ast/search", web::get().to(ast_search))
        .route("/v1/ast/query", web::post().to(ast_query));
}

fn repo_or_default(state: &HttpState, repo: Option<PathBuf>) -> Option<PathBuf> {
    repo.or_else(|| state.default_repo_opt.clone())
}

fn page(limit: Option<&str>, offset: Option<&str>, default: usize) -> Result<Page, DocdexError> {
    let limit = check_limit(parse_number("limit", limit)?.map_or(default, |n| n as usize))?;
    let offset = parse_number("offset", offset)?.unwrap_or(0) as usize;
    Ok(Page { limit, offset })
}

fn confidence(raw: Option<&str>) -> Result<f32, DocdexError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(DEFAULT_MIN_CONFIDENCE),
        Some(raw) => raw
            .parse::<f32>()
            .map_err(|_| DocdexError::invalid(format!("`min_confidence` must be a number from 0 to 1, got `{raw}`")))
            .and_then(check_confidence),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SymbolsParams {
    #[serde(alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    name: Option<String>,
    kind: Option<String>,
    language: Option<String>,
    limit: Option<String>,
    offset: Option<String>,
}

impl SymbolsParams {
    fn into_message(self, state: &HttpState, name_required: bool) -> Result<FindSymbols, DocdexError> {
        let page = page(self.limit.as_deref(), self.offset.as_deref(), DEFAULT_SYMBOLS_LIMIT)?;
        let kind_opt = self.kind.as_deref().filter(|k| !k.trim().is_empty()).map(parse_kind).transpose()?;
        let language_opt = self.language.as_deref().filter(|l| !l.trim().is_empty()).map(parse_language).transpose()?;
        let name_opt = self.name.filter(|n| !n.trim().is_empty());
        if name_opt.is_none() && (name_required || kind_opt.is_none()) {
            return Err(DocdexError::invalid("`name` is required")
                .with_hint("a name (`Router`), a qualified name (`Router::route`) or a pattern (`spawn*`)"));
        }
        Ok(FindSymbols { repo_opt: repo_or_default(state, self.repo), name_opt, kind_opt, language_opt, page })
    }
}

async fn symbols(state: web::Data<HttpState>, params: web::Query<SymbolsParams>) -> HttpResponse {
    match params.into_inner().into_message(&state, true) {
        Ok(msg) => respond(dispatch(&state, msg).await),
        Err(err) => error_response(&err),
    }
}

/// Definitions by kind and name pattern (the name may be left out when a kind is given).
async fn ast_search(state: web::Data<HttpState>, params: web::Query<SymbolsParams>) -> HttpResponse {
    match params.into_inner().into_message(&state, false) {
        Ok(msg) => respond(dispatch(&state, msg).await),
        Err(err) => error_response(&err),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetParams {
    #[serde(alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    name: Option<String>,
    path: Option<String>,
    line: Option<String>,
    limit: Option<String>,
    offset: Option<String>,
    min_confidence: Option<String>,
}

struct Target {
    target: SymbolTarget,
    page: Page,
    min_confidence: f32,
}

impl TargetParams {
    fn parse(self, state: &HttpState) -> Result<Target, DocdexError> {
        let page = page(self.limit.as_deref(), self.offset.as_deref(), DEFAULT_REFERENCES_LIMIT)?;
        let min_confidence = confidence(self.min_confidence.as_deref())?;
        let line_opt = parse_number("line", self.line.as_deref())?
            .map(|l| u32::try_from(l).map_err(|_| DocdexError::invalid(format!("no line {l}"))))
            .transpose()?;
        let name = self.name.filter(|n| !n.trim().is_empty()).ok_or_else(|| {
            DocdexError::invalid("`name` is required")
                .with_hint("the symbol's name; add `path` and `line` to pick one definition among several")
        })?;
        if line_opt.is_some() && self.path.is_none() {
            return Err(DocdexError::invalid("`line` needs `path`").with_hint("give the file the line is in"));
        }
        let target = SymbolTarget { repo_opt: repo_or_default(state, self.repo), name, path_opt: self.path, line_opt };
        Ok(Target { target, page, min_confidence })
    }
}

async fn references(state: web::Data<HttpState>, params: web::Query<TargetParams>) -> HttpResponse {
    match params.into_inner().parse(&state) {
        Ok(t) => respond(
            dispatch(&state, FindReferences { target: t.target, min_confidence: t.min_confidence, page: t.page }).await,
        ),
        Err(err) => error_response(&err),
    }
}

async fn callers(state: web::Data<HttpState>, params: web::Query<TargetParams>) -> HttpResponse {
    match params.into_inner().parse(&state) {
        Ok(t) => respond(
            dispatch(&state, FindCallers { target: t.target, min_confidence: t.min_confidence, page: t.page }).await,
        ),
        Err(err) => error_response(&err),
    }
}

async fn callees(state: web::Data<HttpState>, params: web::Query<TargetParams>) -> HttpResponse {
    match params.into_inner().parse(&state) {
        Ok(t) => respond(
            dispatch(&state, FindCallees { target: t.target, min_confidence: t.min_confidence, page: t.page }).await,
        ),
        Err(err) => error_response(&err),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImpactParams {
    #[serde(alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    #[serde(alias = "path")]
    file: Option<String>,
    depth: Option<String>,
    limit: Option<String>,
}

async fn impact(state: web::Data<HttpState>, params: web::Query<ImpactParams>) -> HttpResponse {
    let params = params.into_inner();
    let parsed = (|| -> Result<FileImpact, DocdexError> {
        let depth = parse_number("depth", params.depth.as_deref())?.unwrap_or(1).min(u64::from(u32::MAX)) as u32;
        let limit =
            check_limit(parse_number("limit", params.limit.as_deref())?.map_or(DEFAULT_IMPACT_LIMIT, |n| n as usize))?;
        let file = params.file.clone().filter(|f| !f.trim().is_empty()).ok_or_else(|| {
            DocdexError::invalid("`file` is required")
                .with_hint("a path relative to the repo root, as search results give it")
        })?;
        Ok(FileImpact { repo_opt: repo_or_default(&state, params.repo.clone()), file, depth, limit })
    })();
    match parsed {
        Ok(msg) => respond(dispatch(&state, msg).await),
        Err(err) => error_response(&err),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AstQueryBody {
    #[serde(default, alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    language: String,
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

async fn ast_query(state: web::Data<HttpState>, body: web::Json<AstQueryBody>) -> HttpResponse {
    let body = body.into_inner();
    let parsed = (|| -> Result<RunAstQuery, DocdexError> {
        let language = parse_language(&body.language)?;
        let limit = check_limit(body.limit.unwrap_or(DEFAULT_AST_LIMIT))?;
        if body.query.trim().is_empty() {
            return Err(DocdexError::invalid("`query` must not be empty")
                .with_hint("a tree-sitter query, e.g. (function_item name: (identifier) @name)"));
        }
        Ok(RunAstQuery {
            repo_opt: repo_or_default(&state, body.repo.clone()),
            language,
            query: body.query.clone(),
            limit,
        })
    })();
    match parsed {
        Ok(msg) => respond(dispatch(&state, msg).await),
        Err(err) => error_response(&err),
    }
}
