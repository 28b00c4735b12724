//! The Rust crate docs tools over MCP. Numbers are accepted as numbers or strings, paths
//! as `tokio::spawn`, `spawn` or a re-export, and examples come back as whole code blocks.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::budget::{respond_fitted, Page};
use super::DocdexMcp;
use crate::actors::tool_dispatcher::crates::{
    CrateExamplesParams, CrateItemParams, CrateModulesParams, CrateParams, CrateSearchParams, CrateVersionsParams,
};

#[tool_router(router = crate_tool_router, vis = "pub(super)")]
impl DocdexMcp {
    #[tool(
        description = "Summary of a Rust crate: resolved version, description, item counts by kind, largest modules. Works for any crate on crates.io (docs fetched and built on first use). Example: {\"crate_name\": \"tokio\"}."
    )]
    async fn docdex_crate_summary(&self, Parameters(params): Parameters<CrateParams>) -> CallToolResult {
        let result = self.run(params).await;
        super::respond(result, |s| {
            let kinds: Vec<String> = s.kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let modules: Vec<String> = s.top_modules.iter().map(|m| format!("{} ({})", m.path, m.items)).collect();
            format!(
                "{} {} ({})\n{}\nitems: {} ({})\ntop modules: {}",
                s.name,
                s.version,
                s.resolved_by,
                s.description,
                s.items,
                kinds.join(", "),
                modules.join(", ")
            )
        })
    }

    #[tool(
        description = "Search a Rust crate's public items (functions, types, traits, macros, methods) by words or names. Example: {\"crate_name\": \"tokio\", \"query\": \"run blocking code\", \"kind\": \"fn\"}. Returns paths, kinds, signatures and one-line summaries; read one with docdex_crate_item."
    )]
    async fn docdex_crate_search(&self, Parameters(params): Parameters<CrateSearchParams>) -> CallToolResult {
        let result = self.run(params).await;
        super::respond(result, |r| {
            let mut text = format!("{} {} ({} search)\n", r.name, r.version, r.mode);
            if let Some(notice) = &r.notice {
                text.push_str(&format!("note: {notice}\n"));
            }
            for (n, hit) in r.hits.iter().enumerate() {
                text.push_str(&format!(
                    "{}. {} ({})\n   {}\n   {}\n",
                    n + 1,
                    hit.path,
                    hit.kind,
                    hit.signature.lines().next().unwrap_or(""),
                    hit.summary
                ));
            }
            text
        })
    }

    #[tool(
        description = "Full docs of a Rust item: signature, Markdown docs with whole code blocks, re-export aliases, members. Example: {\"crate_name\": \"serde\", \"path\": \"serde::Deserialize\"} (resolves to serde::de::Deserialize). A wrong path gets the closest matches as suggestions."
    )]
    async fn docdex_crate_item(&self, Parameters(params): Parameters<CrateItemParams>) -> CallToolResult {
        let result = self.run(params).await;
        respond_fitted(result, Page::SINGLE, self.budget_tokens, |doc| {
            let via = doc.requested.as_deref().map(|r| format!(" (asked for {r})")).unwrap_or_default();
            let mut text =
                format!("{} {} {}{via}\n```rust\n{}\n```\n{}\n", doc.name, doc.kind, doc.path, doc.signature, doc.docs);
            if !doc.members.is_empty() {
                text.push_str(&format!("\nmembers: {}\n", doc.members.join(", ")));
            }
            text
        })
    }

    #[tool(
        description = "The module tree of a Rust crate, depth-first, with item counts per module. Example: {\"crate_name\": \"tokio\"}."
    )]
    async fn docdex_crate_modules(&self, Parameters(params): Parameters<CrateParams>) -> CallToolResult {
        let result = self.run(CrateModulesParams(params)).await;
        super::respond(result, |tree| {
            let mut text = format!("{} {}\n", tree.name, tree.version);
            for m in &tree.modules {
                text.push_str(&format!("{}{} ({})\n", "  ".repeat(m.depth as usize), m.path, m.items));
            }
            text
        })
    }

    #[tool(
        description = "Code examples of a Rust crate, each a complete code block (from item docs, hidden setup lines shown) or a whole program from examples/. Example: {\"crate_name\": \"tokio\", \"item\": \"tokio::select\", \"limit\": 3}."
    )]
    async fn docdex_crate_examples(&self, Parameters(params): Parameters<CrateExamplesParams>) -> CallToolResult {
        let result = self.run(params).await;
        let page = Page { offset: 0, limit: usize::MAX, cap: 0 };
        respond_fitted(result, page, self.budget_tokens, |e| {
            let mut text = format!("{} {}\n", e.name, e.version);
            for example in &e.examples {
                let title = if example.title.is_empty() { String::new() } else { format!(" — {}", example.title) };
                text.push_str(&format!(
                    "// {}{title}\n```{}\n{}\n```\n",
                    example.source, example.language, example.code
                ));
            }
            if e.more > 0 {
                text.push_str(&format!("({} more: raise limit or narrow with item/query)\n", e.more));
            }
            text
        })
    }

    #[tool(
        description = "Every release of a Rust crate, newest first, with yanked flags and MSRV, from cargo's registry index. Example: {\"crate_name\": \"serde\"}."
    )]
    async fn docdex_crate_versions(&self, Parameters(params): Parameters<CrateVersionsParams>) -> CallToolResult {
        let result = self.run(params).await;
        super::respond(result, |v| {
            let listed: Vec<String> = v
                .versions
                .iter()
                .take(60)
                .map(|r| if r.yanked { format!("{} (yanked)", r.version) } else { r.version.clone() })
                .collect();
            format!("{}: latest {}; {} releases: {}", v.name, v.latest, v.versions.len(), listed.join(", "))
        })
    }
}
