//! Change impact over HTTP: `GET /v1/impact/diff`, `POST /v1/run-tests` and
//! `GET /v1/repo-map`. Each route takes
//! only its own parameters: anything else is refused with the name it may have meant.

use std::path::PathBuf;

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use super::{dispatch, error_response, parse_bool, parse_number, respond, HttpState};
use crate::actors::tool_dispatcher::code::{check_confidence, check_limit, DEFAULT_MIN_CONFIDENCE};
use crate::actors::tool_dispatcher::impact::{
    DiffImpact, RepoMap, RunTests, TestScope, DEFAULT_DIFF_DEPTH, DEFAULT_DIFF_LIMIT, DEFAULT_MAP_TOKENS,
};
use crate::change::git::DiffBase;
use crate::protocol::DocdexError;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/impact/diff", web::get().to(diff_impact))
        .route("/v1/run-tests", web::post().to(run_tests))
        .route("/v1/repo-map", web::get().to(repo_map));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DiffParams {
    #[serde(alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    /// A revision to compare the working tree with (default HEAD), or `staged`/`working`.
    base: Option<String>,
    staged: Option<String>,
    depth: Option<String>,
    min_confidence: Option<String>,
    limit: Option<String>,
}

async fn diff_impact(state: web::Data<HttpState>, params: web::Query<DiffParams>) -> HttpResponse {
    let params = params.into_inner();
    let parsed = (|| -> Result<DiffImpact, DocdexError> {
        let staged = parse_bool("staged", params.staged.as_deref())?;
        let base = DiffBase::parse(params.base.as_deref(), staged)?;
        let depth = parse_number("depth", params.depth.as_deref())?
            .map_or(DEFAULT_DIFF_DEPTH, |d| d.min(u64::from(u32::MAX)) as u32);
        let limit =
            check_limit(parse_number("limit", params.limit.as_deref())?.map_or(DEFAULT_DIFF_LIMIT, |n| n as usize))?;
        let min_confidence = match params.min_confidence.as_deref().map(str::trim) {
            None | Some("") => DEFAULT_MIN_CONFIDENCE,
            Some(raw) => raw
                .parse::<f32>()
                .map_err(|_| {
                    DocdexError::invalid(format!("`min_confidence` must be a number from 0 to 1, got `{raw}`"))
                })
                .and_then(check_confidence)?,
        };
        let repo_opt = params.repo.clone().or_else(|| state.default_repo_opt.clone());
        Ok(DiffImpact { repo_opt, base, depth, min_confidence, limit })
    })();
    match parsed {
        Ok(msg) => respond(dispatch(&state, msg).await),
        Err(err) => error_response(&err),
    }
}

/// `affected` as clients send it: `true` (the working tree against HEAD), or a base
/// (`"staged"`, `"working"`, a revision).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Affected {
    Flag(bool),
    Base(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunTestsBody {
    #[serde(default, alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    affected: Option<Affected>,
    #[serde(default)]
    timeout_secs: Option<u64>,
}

async fn run_tests(state: web::Data<HttpState>, body: web::Json<RunTestsBody>) -> HttpResponse {
    if let Some(refusal) = &state.run_tests_refusal {
        return error_response(refusal);
    }
    let body = body.into_inner();
    let scope = match (body.target.filter(|t| !t.trim().is_empty()), body.affected) {
        (Some(_), Some(Affected::Flag(true) | Affected::Base(_))) => {
            Err(DocdexError::invalid("give `target` or `affected`, not both"))
        }
        (Some(target), _) => Ok(TestScope::Target(target)),
        (None, Some(Affected::Flag(true))) => Ok(TestScope::Affected(DiffBase::Working { rev: "HEAD".into() })),
        (None, Some(Affected::Base(base))) => DiffBase::parse(Some(&base), false).map(TestScope::Affected),
        (None, Some(Affected::Flag(false)) | None) => Ok(TestScope::All),
    };
    let repo_opt = body.repo.or_else(|| state.default_repo_opt.clone());
    match scope {
        Ok(scope) => respond(dispatch(&state, RunTests { repo_opt, scope, timeout_secs_opt: body.timeout_secs }).await),
        Err(err) => error_response(&err),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RepoMapParams {
    #[serde(alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    budget_tokens: Option<String>,
    /// Comma-separated: file paths, definition names, or a question in words.
    focus: Option<String>,
}

async fn repo_map(state: web::Data<HttpState>, params: web::Query<RepoMapParams>) -> HttpResponse {
    let params = params.into_inner();
    let budget = match parse_number("budget_tokens", params.budget_tokens.as_deref()) {
        Ok(budget) => budget.map_or(DEFAULT_MAP_TOKENS, |b| b.min(usize::MAX as u64) as usize),
        Err(err) => return error_response(&err),
    };
    let focus = split_focus(params.focus.as_deref().unwrap_or(""));
    let repo_opt = params.repo.or_else(|| state.default_repo_opt.clone());
    respond(dispatch(&state, RepoMap { repo_opt, budget_tokens: budget, focus }).await)
}

/// `focus` as one string: items split at commas (a question is one item).
pub(crate) fn split_focus(raw: &str) -> Vec<String> {
    raw.split(',').map(str::trim).filter(|f| !f.is_empty()).map(str::to_string).collect()
}
