//! Change impact over MCP: `docdex_run_tests`, `docdex_repo_map`, and the text of
//! `docdex_impact`'s diff form (the tool itself is with the code tools). Each result fits
//! the result budget.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde_json::Value;

use super::budget::{respond_fitted, Fit, Page};
use super::DocdexMcp;
use crate::actors::tool_dispatcher::impact::RepoMapParams;
use crate::actors::tool_dispatcher::run_tests::RunTestsParams;
use crate::protocol::impact::{DiffImpactResponse, RepoMapResponse, RunTestsResponse};

impl Fit for RepoMapResponse {
    fn items(&self) -> usize {
        self.files.len()
    }
    fn keep(&mut self, n: usize) {
        self.files.truncate(n);
    }
    fn clip(&mut self, _chars: usize) -> bool {
        false
    }
    fn structured(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

fn run_tests_text(r: &RunTestsResponse) -> String {
    let mut text = if r.command.is_empty() {
        format!("{}: {}\n", r.runner, r.note)
    } else {
        format!(
            "{}: {} passed, {} failed, {} skipped in {} ms{}\n$ {}\n",
            r.runner,
            r.passed,
            r.failed,
            r.skipped,
            r.duration_ms,
            if r.timed_out { " (timed out: stopped)" } else { "" },
            r.command
        )
    };
    for f in &r.failures {
        text.push_str(&format!("FAILED {}\n{}\n", f.name, f.message));
    }
    if !r.output_tail.is_empty() {
        text.push_str(&format!("output (tail):\n{}\n", r.output_tail));
    }
    text
}

impl Fit for RunTestsResponse {
    fn items(&self) -> usize {
        1
    }
    fn keep(&mut self, _n: usize) {}
    /// Shortens the output tail first, then the failure messages.
    fn clip(&mut self, chars: usize) -> bool {
        if self.output_tail.len() > 200 {
            let keep = self.output_tail.len().saturating_sub(chars.max(200)).max(self.output_tail.len() / 2);
            let start = (keep..self.output_tail.len()).find(|&i| self.output_tail.is_char_boundary(i)).unwrap_or(0);
            self.output_tail = self.output_tail[start..].to_string();
            return true;
        }
        let longest = self.failures.iter_mut().max_by_key(|f| f.message.len());
        match longest {
            Some(f) if f.message.len() > 200 => {
                let cut = (200..=f.message.len() / 2).rev().find(|&i| f.message.is_char_boundary(i)).unwrap_or(200);
                f.message.truncate(cut);
                f.message.push('…');
                true
            }
            _ => false,
        }
    }
    fn structured(&self) -> Value {
        let mut json = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut json {
            map.remove("output_tail");
        }
        json
    }
}

#[tool_router(router = impact_tool_router, vis = "pub(super)")]
impl DocdexMcp {
    #[tool(
        description = "Run the repo's tests with its own runner (cargo test, pytest, vitest or jest, go test): all of them, those in a file or folder (target), or only those a change reaches (affected: \"working\", \"staged\" or a revision). Bounded in time; returns passed/failed/skipped, each failure's message and the output's tail. Example: {\"affected\": \"working\"} or {\"target\": \"tests/test_cart.py\"}."
    )]
    async fn docdex_run_tests(&self, Parameters(params): Parameters<RunTestsParams>) -> CallToolResult {
        respond_fitted(self.run(params).await, Page::SINGLE, self.budget_tokens, run_tests_text)
    }

    #[tool(
        description = "A map of the repo at a glance: the files and definitions that matter most (ranked by how the code uses them), as signatures with line numbers, fitted to a token budget and centred on what you focus on. Example: {\"budget_tokens\": 1024} or {\"focus\": [\"src/cart.rs\", \"how are refunds computed\"]}."
    )]
    async fn docdex_repo_map(&self, Parameters(params): Parameters<RepoMapParams>) -> CallToolResult {
        respond_fitted(self.run(params).await, Page::SINGLE, self.budget_tokens, |r| {
            format!("{}({} tokens)\n", crate::code::map::render(&r.files), r.tokens)
        })
    }
}

/// The text block of a diff's impact.
pub(super) fn diff_impact_text(r: &DiffImpactResponse) -> String {
    let mut text = format!("{} changed files against {}:\n", r.changed_files.len(), r.base);
    for f in &r.file_changes {
        let from = if f.old_path.is_empty() { String::new() } else { format!(" (from {})", f.old_path) };
        text.push_str(&format!("  {} {}{from}\n", f.change, f.path));
    }
    text.push_str("changed definitions:\n");
    for s in &r.changed_symbols {
        let from = if s.old_name.is_empty() { String::new() } else { format!(" (was {})", s.old_name) };
        text.push_str(&format!("  {} {} {} {}:{}{from}\n", s.change, s.kind, s.qualified_name, s.path, s.line));
    }
    text.push_str(&format!("dependents ({} in all):\n", r.dependents_total));
    for d in &r.dependents {
        let who = if d.name.is_empty() { "(top level)".to_string() } else { d.qualified_name.clone() };
        text.push_str(&format!(
            "  {who} {}:{} depth {} ({:.2}) via {}\n",
            d.path,
            d.line,
            d.depth,
            d.confidence,
            d.via.join(" -> ")
        ));
    }
    text.push_str(&format!("tests ({} in all):\n", r.tests_total));
    for t in &r.tests {
        let name = if t.name.is_empty() { "(the file)" } else { t.name.as_str() };
        text.push_str(&format!("  {name} {}:{} ({:.2}) via {}\n", t.path, t.line, t.confidence, t.via.join(" -> ")));
    }
    text.push_str("test files:\n");
    for f in &r.test_files {
        text.push_str(&format!("  {} ({:.2}, {} tests)\n", f.path, f.confidence, f.tests));
    }
    text
}

impl Fit for DiffImpactResponse {
    fn items(&self) -> usize {
        1
    }
    fn keep(&mut self, _n: usize) {}
    /// Cuts the dependents first (the farthest go), then the tests (the least sure go).
    fn clip(&mut self, chars: usize) -> bool {
        let keep = (chars / 120).max(1);
        let listed = self.dependents.len() + self.tests.len();
        if listed <= keep {
            return false;
        }
        let tests = self.tests.len().min(keep.div_ceil(2).max(keep.saturating_sub(self.dependents.len())));
        self.tests.truncate(tests);
        self.dependents.truncate(keep - tests);
        // A file's line is short, and what a runner takes: half the room again.
        self.test_files.truncate(keep.div_ceil(2));
        self.truncated = true;
        true
    }
    fn structured(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
