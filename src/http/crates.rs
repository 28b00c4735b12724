//! The crate docs tools over HTTP: `GET /v1/crates/{name}/summary`, `/search?q=&kind=`,
//! `/item?path=`, `/modules`, `/examples?item=&q=`, `/versions`; every route takes
//! `version` and `repo` (whose Cargo.lock fixes the version).

use std::path::PathBuf;

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use super::{dispatch, error_response, parse_number, respond, HttpState};
use crate::actors::tool_dispatcher::crates::{
    CrateExamplesQuery, CrateSearch, CrateSummaryQuery, CrateVersionsQuery, ItemDocQuery, ModuleTreeQuery,
};
use crate::protocol::{CrateRef, DocdexError, SearchMode};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrateParams {
    version: Option<String>,
    #[serde(alias = "repo_path", alias = "project_root")]
    repo: Option<PathBuf>,
    #[serde(alias = "query")]
    q: Option<String>,
    kind: Option<String>,
    mode: Option<String>,
    limit: Option<String>,
    path: Option<String>,
    item: Option<String>,
}

impl CrateParams {
    fn crate_ref(&self, name: String) -> CrateRef {
        CrateRef { name, version_opt: self.version.clone(), repo_opt: self.repo.clone() }
    }

    fn limit(&self) -> Result<usize, DocdexError> {
        Ok(parse_number("limit", self.limit.as_deref())?.map(|n| n as usize).unwrap_or(10))
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/crates/{name}/summary", web::get().to(summary))
        .route("/v1/crates/{name}/search", web::get().to(search))
        .route("/v1/crates/{name}/item", web::get().to(item))
        .route("/v1/crates/{name}/modules", web::get().to(modules))
        .route("/v1/crates/{name}/examples", web::get().to(examples))
        .route("/v1/crates/{name}/versions", web::get().to(versions));
}

async fn summary(state: web::Data<HttpState>, name: web::Path<String>, p: web::Query<CrateParams>) -> HttpResponse {
    respond(dispatch(&state, CrateSummaryQuery(p.crate_ref(name.into_inner()))).await)
}

async fn search(state: web::Data<HttpState>, name: web::Path<String>, p: web::Query<CrateParams>) -> HttpResponse {
    let limit = match p.limit() {
        Ok(limit) => limit,
        Err(err) => return error_response(&err),
    };
    let Some(query) = p.q.clone() else {
        return error_response(&DocdexError::invalid("missing query parameter `q`"));
    };
    let mode_opt =
        match p.mode.as_deref().map(str::trim).filter(|m| !m.is_empty()).map(str::parse::<SearchMode>).transpose() {
            Ok(mode_opt) => mode_opt,
            Err(err) => return error_response(&err),
        };
    let search =
        CrateSearch { crate_ref: p.crate_ref(name.into_inner()), query, kind_opt: p.kind.clone(), limit, mode_opt };
    respond(dispatch(&state, search).await)
}

async fn item(state: web::Data<HttpState>, name: web::Path<String>, p: web::Query<CrateParams>) -> HttpResponse {
    let Some(path) = p.path.clone() else {
        return error_response(
            &DocdexError::invalid("missing query parameter `path`").with_hint("e.g. path=tokio::spawn"),
        );
    };
    respond(dispatch(&state, ItemDocQuery { crate_ref: p.crate_ref(name.into_inner()), path }).await)
}

async fn modules(state: web::Data<HttpState>, name: web::Path<String>, p: web::Query<CrateParams>) -> HttpResponse {
    respond(dispatch(&state, ModuleTreeQuery(p.crate_ref(name.into_inner()))).await)
}

async fn examples(state: web::Data<HttpState>, name: web::Path<String>, p: web::Query<CrateParams>) -> HttpResponse {
    let limit = match p.limit() {
        Ok(limit) => limit,
        Err(err) => return error_response(&err),
    };
    let query = CrateExamplesQuery {
        crate_ref: p.crate_ref(name.into_inner()),
        item_opt: p.item.clone(),
        query_opt: p.q.clone(),
        limit,
    };
    respond(dispatch(&state, query).await)
}

async fn versions(
    state: web::Data<HttpState>,
    name: web::Path<String>,
    _: web::Query<super::NoParams>,
) -> HttpResponse {
    respond(dispatch(&state, CrateVersionsQuery(name.into_inner())).await)
}
