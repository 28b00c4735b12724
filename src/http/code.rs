//! Code intelligence over HTTP: `GET /v1/symbols`, `/v1/references`, `/v1/callers`,
//! `/v1/callees`, `/v1/graph/impact`, `/v1/ast/search` and `POST /v1/ast/query`. Each route
//! takes only its own parameters (declared with the tool): anything else is refused with the
//! name it may have meant.

use actix_web::web;

use super::{tool_body, tool_query};
use crate::actors::tool_dispatcher::code::{
    AstQueryParams, AstSearchParams, CalleesParams, CallersParams, FileImpactParams, SymbolsParams, TargetParams,
};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/symbols", web::get().to(tool_query::<SymbolsParams>))
        .route("/v1/references", web::get().to(tool_query::<TargetParams>))
        .route("/v1/callers", web::get().to(tool_query::<CallersParams>))
        .route("/v1/callees", web::get().to(tool_query::<CalleesParams>))
        .route("/v1/graph/impact", web::get().to(tool_query::<FileImpactParams>))
        .route("/v1/ast/search", web::get().to(tool_query::<AstSearchParams>))
        .route("/v1/ast/query", web::post().to(tool_body::<AstQueryParams>));
}
