//! The Rust crate docs tools over MCP. Numbers are accepted as numbers or strings, paths
//! as `tokio::spawn`, `spawn` or a re-export, and examples come back as whole code blocks.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;

use super::budget::{respond_fitted, Page};
use super::{bounded, lenient_number, DocdexMcp};
use crate::actors::tool_dispatcher::crates::{
    CrateExamplesQuery, CrateSearch, CrateSummaryQuery, CrateVersionsQuery, ItemDocQuery, ModuleTreeQuery,
};
use crate::protocol::{CrateRef, Result};

/// Fields every crate tool takes.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateOnlyArgs {
    /// The crate's name on crates.io, e.g. "serde".
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// A version, e.g. "1.0.219" (default: the version the repo's Cargo.lock locks, else the
    /// newest release).
    #[serde(default)]
    pub version: Option<String>,
    /// Repository root whose Cargo.lock fixes the version (default: the server's repo).
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateSearchArgs {
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// What to find, in words or names, e.g. "spawn a blocking task".
    pub query: String,
    /// Only this kind of item.
    #[serde(default)]
    #[schemars(extend("enum" = ["fn", "method", "struct", "enum", "trait", "macro", "mod", "type", "const", "static", "union"]))]
    pub kind: Option<String>,
    /// Items to return, 1-50 (default 10).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u64>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemDocArgs {
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// The item's path, e.g. "serde::Deserialize" or "tokio::sync::Mutex::lock" (re-exports
    /// and bare names work; close misses get suggestions).
    #[serde(alias = "item_path")]
    pub path: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateExamplesArgs {
    #[serde(alias = "crate")]
    pub crate_name: String,
    /// Only the examples in this item's docs (and its methods'), e.g. "tokio::select".
    #[serde(default)]
    pub item: Option<String>,
    /// Only examples mentioning every word of this.
    #[serde(default)]
    pub query: Option<String>,
    /// Examples to return, 1-50 (default 5).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u64>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrateVersionsArgs {
    #[serde(alias = "crate")]
    pub crate_name: String,
}

impl DocdexMcp {
    /// The crate a call names; its repo is the call's, else the session's (never waited for).
    fn crate_ref(&self, name: String, version: Option<String>, repo_path: Option<String>) -> CrateRef {
        let repo_opt = repo_path
            .filter(|p| !p.trim().is_empty())
            .map(std::path::PathBuf::from)
            .or_else(|| self.default_repo.read().ok().and_then(|r| r.clone()));
        CrateRef { name, version_opt: version.filter(|v| !v.trim().is_empty()), repo_opt }
    }
}

#[tool_router(router = crate_tool_router, vis = "pub(super)")]
impl DocdexMcp {
    #[tool(
        description = "Summary of a Rust crate: resolved version, description, item counts by kind, largest modules. Works for any crate on crates.io (docs fetched and built on first use). Example: {\"crate_name\": \"tokio\"}."
    )]
    async fn docdex_crate_summary(&self, Parameters(args): Parameters<CrateOnlyArgs>) -> CallToolResult {
        let crate_ref = self.crate_ref(args.crate_name, args.version, args.repo);
        let result = self.call(CrateSummaryQuery(crate_ref)).await;
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
    async fn docdex_crate_search(&self, Parameters(args): Parameters<CrateSearchArgs>) -> CallToolResult {
        let result = async {
            let limit = bounded(args.limit, 10, 50, "limit")?;
            let crate_ref = self.crate_ref(args.crate_name, args.version, args.repo);
            self.call(CrateSearch { crate_ref, query: args.query, kind_opt: args.kind, limit, mode_opt: None }).await
        }
        .await;
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
    async fn docdex_crate_item(&self, Parameters(args): Parameters<ItemDocArgs>) -> CallToolResult {
        let crate_ref = self.crate_ref(args.crate_name, args.version, args.repo);
        let result = self.call(ItemDocQuery { crate_ref, path: args.path }).await;
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
    async fn docdex_crate_modules(&self, Parameters(args): Parameters<CrateOnlyArgs>) -> CallToolResult {
        let crate_ref = self.crate_ref(args.crate_name, args.version, args.repo);
        let result = self.call(ModuleTreeQuery(crate_ref)).await;
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
    async fn docdex_crate_examples(&self, Parameters(args): Parameters<CrateExamplesArgs>) -> CallToolResult {
        let result: Result<_> = async {
            let limit = bounded(args.limit, 5, 50, "limit")?;
            let crate_ref = self.crate_ref(args.crate_name, args.version, args.repo);
            self.call(CrateExamplesQuery { crate_ref, item_opt: args.item, query_opt: args.query, limit }).await
        }
        .await;
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
    async fn docdex_crate_versions(&self, Parameters(args): Parameters<CrateVersionsArgs>) -> CallToolResult {
        let result = self.call(CrateVersionsQuery(args.crate_name)).await;
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
