//! The crate docs tools over HTTP: `GET /v1/crates/{name}/summary`, `/search?q=&kind=`,
//! `/item?path=`, `/modules`, `/examples?item=&q=`, `/versions`; each takes its own
//! parameters (declared with the tool), most with `version` and `repo` (whose Cargo.lock
//! fixes the version). The crate's name comes from the path.

use actix_web::{web, HttpRequest, HttpResponse};

use super::{error_response, tool_query_with, HttpState};
use crate::actors::tool_dispatcher::crates::{
    CrateExamplesParams, CrateItemParams, CrateModulesParams, CrateParams, CrateSearchParams, CrateVersionsParams,
};
use crate::actors::tool_dispatcher::params::Tool;
use crate::actors::tool_dispatcher::ToolDispatcher;
use crate::protocol::DocdexError;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/crates/{name}/summary", web::get().to(crate_tool::<CrateParams>))
        .route("/v1/crates/{name}/search", web::get().to(crate_tool::<CrateSearchParams>))
        .route("/v1/crates/{name}/item", web::get().to(crate_tool::<CrateItemParams>))
        .route("/v1/crates/{name}/modules", web::get().to(crate_tool::<CrateModulesParams>))
        .route("/v1/crates/{name}/examples", web::get().to(crate_tool::<CrateExamplesParams>))
        .route("/v1/crates/{name}/versions", web::get().to(crate_tool::<CrateVersionsParams>));
}

/// A crate tool: its parameters from the query string, the crate's name from the path.
async fn crate_tool<T: Tool>(
    state: web::Data<HttpState>,
    name: web::Path<String>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse
where
    ToolDispatcher: actix::Handler<T::Message>,
{
    if form_urlencoded::parse(request.query_string().as_bytes()).any(|(key, _)| key == "crate") {
        return error_response(&DocdexError::invalid("the crate's name is in the path: /v1/crates/{name}/…"));
    }
    tool_query_with::<T>(&state, &request, &body, ("crate_name", &name)).await
}
