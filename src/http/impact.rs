//! Change impact over HTTP: `GET /v1/impact/diff`, `POST /v1/run-tests` and
//! `GET /v1/repo-map`. Each route takes only its own parameters (declared with the tool):
//! anything else is refused with the name it may have meant. Running tests is refused to a
//! daemon that may not run code (`run_tests_refusal`), by the tool itself.

use actix_web::web;

use super::{tool_body, tool_query};
use crate::actors::tool_dispatcher::impact::{DiffImpactParams, RepoMapParams};
use crate::actors::tool_dispatcher::run_tests::RunTestsParams;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/impact/diff", web::get().to(tool_query::<DiffImpactParams>))
        .route("/v1/run-tests", web::post().to(tool_body::<RunTestsParams>))
        .route("/v1/repo-map", web::get().to(tool_query::<RepoMapParams>));
}
