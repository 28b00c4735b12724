//! `docdexd symbols`, `refs`, `callers`, `callees`, `impact` and `ast`: the code intelligence
//! tools, answered in-process from the repo's index (`--json` prints the HTTP API's objects).

use super::args::{Command, TargetArgs};
use super::message;
use super::output::{print_out, to_json};
use crate::actors::repo_manager::CloseAll;
use crate::actors::tool_dispatcher::code::{
    AstQueryParams, AstSearchParams, CallList, CalleesParams, CallersParams, FileImpactParams, SymbolsParams,
    TargetParams,
};
use crate::actors::tool_dispatcher::impact::{DiffImpactParams, RepoMapParams};
use crate::actors::tool_dispatcher::run_tests::RunTestsParams;
use crate::config::LoadedConfig;
use crate::daemon::client;
use crate::protocol::code::{CallEdge, SymbolInfo};
use crate::protocol::impact::{DiffImpactResponse, RunTestsResponse};
use crate::protocol::{DocdexError, Result};

fn symbol_line(s: &SymbolInfo) -> String {
    let container = if s.container.is_empty() { String::new() } else { format!(" in {}", s.container) };
    format!("{}:{}  {} {}{}\n    {}\n", s.path, s.line, s.kind, s.name, container, s.signature)
}

fn call_lines(edges: &[CallEdge], callers: bool) -> String {
    edges
        .iter()
        .map(|e| {
            let who =
                if e.name.is_empty() { "(top level)".to_string() } else { format!("{} {}", e.kind, e.qualified_name) };
            if callers {
                format!(
                    "{}:{}  {who}  (calls at line {}, {} {:.2})\n",
                    e.path, e.line, e.call_line, e.resolution, e.confidence
                )
            } else {
                format!(
                    "{}:{}  {who}  (called at line {}, {} {:.2})\n",
                    e.path, e.line, e.call_line, e.resolution, e.confidence
                )
            }
        })
        .collect()
}

/// What `run-tests` prints: the counts and command, each failure, the output's tail.
fn run_tests_text(r: &RunTestsResponse) -> String {
    if r.command.is_empty() {
        return format!("{}: {}\n", r.runner, r.note);
    }
    let mut out = String::new();
    if !r.output_tail.is_empty() {
        out.push_str(&r.output_tail);
        if !r.output_tail.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("---\n");
    }
    for f in &r.failures {
        out.push_str(&format!("FAILED {}\n", f.name));
        for line in f.message.lines().take(20) {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out.push_str(&format!("$ {}\n", r.command));
    let stopped = if r.timed_out { ", stopped at the time limit" } else { "" };
    out.push_str(&format!(
        "{}: {} passed, {} failed, {} skipped in {:.1} s{stopped}\n",
        r.runner,
        r.passed,
        r.failed,
        r.skipped,
        r.duration_ms as f64 / 1000.0
    ));
    out
}

/// What `impact --diff` prints: the change, then what depends on it, then the tests.
fn diff_impact_text(r: &DiffImpactResponse) -> String {
    let mut out = format!("changed files ({} against {}):\n", r.changed_files.len(), r.base);
    for f in &r.file_changes {
        let from = if f.old_path.is_empty() { String::new() } else { format!(" (from {})", f.old_path) };
        out.push_str(&format!("  {:<9} {}{from}\n", f.change, f.path));
    }
    out.push_str("changed symbols:\n");
    for s in &r.changed_symbols {
        let from = if s.old_name.is_empty() { String::new() } else { format!(" (was {})", s.old_name) };
        out.push_str(&format!("  {:<9} {}:{}  {} {}{from}\n", s.change, s.path, s.line, s.kind, s.qualified_name));
    }
    out.push_str("dependents:\n");
    for d in &r.dependents {
        let who =
            if d.name.is_empty() { "(top level)".to_string() } else { format!("{} {}", d.kind, d.qualified_name) };
        out.push_str(&format!(
            "  {}:{}  {who}  (depth {}, {:.2}, via {})\n",
            d.path,
            d.line,
            d.depth,
            d.confidence,
            d.via.join(" -> ")
        ));
    }
    if r.dependents_total > r.dependents.len() {
        out.push_str(&format!("  … {} in all (raise --limit)\n", r.dependents_total));
    }
    out.push_str("tests:\n");
    for t in &r.tests {
        let name = if t.name.is_empty() { "(the file)".to_string() } else { t.name.clone() };
        // A test the diff changes itself is reached through nothing.
        let how = if t.via.is_empty() { "changed".to_string() } else { format!("via {}", t.via.join(" -> ")) };
        out.push_str(&format!("  {}:{}  {name}  ({:.2}, {how})\n", t.path, t.line, t.confidence));
    }
    if r.tests_total > r.tests.len() {
        out.push_str(&format!("  … {} in all (raise --limit)\n", r.tests_total));
    }
    out.push_str("test files:\n");
    for f in &r.test_files {
        out.push_str(&format!("  {}  ({:.2}, {} tests)\n", f.path, f.confidence, f.tests));
    }
    out
}

fn more(total: usize, shown: usize, offset: usize) -> String {
    if offset + shown < total {
        format!("… {} more (page with --offset {})\n", total - offset - shown, offset + shown)
    } else {
        String::new()
    }
}

impl TargetArgs {
    /// The tool's parameters, as the flags give them.
    fn params(&self) -> TargetParams {
        TargetParams {
            name: self.name.clone(),
            path: self.path.clone(),
            line: self.line.map(u64::from),
            limit: Some(self.limit as u64),
            offset: Some(self.offset as u64),
            min_confidence: Some(f64::from(self.min_confidence)),
            direction: None,
            repo: Some(client::absolute(&self.repo)),
        }
    }
}

/// Runs one of the code commands; returns the exit code (1 when nothing was found).
pub(super) async fn run_code(loaded: &LoadedConfig, command: Command) -> Result<i32> {
    let actors = crate::actors::system::start_actors(loaded, None);
    let dispatcher = actors.dispatcher.clone();
    let outcome: Result<(String, bool)> = async {
        Ok(match command {
            Command::Symbols { repo, kind, language, limit, offset, json, name } => {
                let params = SymbolsParams {
                    name,
                    kind,
                    language,
                    limit: Some(limit as u64),
                    offset: Some(offset as u64),
                    repo: Some(client::absolute(&repo)),
                };
                let r = dispatcher.send(message(params)?).await??;
                let empty = r.symbols.is_empty();
                let text = if json {
                    to_json(&r)?
                } else {
                    let mut out: String = r.symbols.iter().map(symbol_line).collect();
                    out.push_str(&more(r.total, r.symbols.len(), offset));
                    out
                };
                (text, empty)
            }
            Command::Refs { target: args } => {
                let r = dispatcher.send(message(args.params())?).await??;
                let text = if args.json {
                    to_json(&r)?
                } else {
                    let mut out = symbol_line(&r.symbol);
                    for x in &r.references {
                        out.push_str(&format!(
                            "  {}:{}:{}  {} ({} {:.2})\n",
                            x.path, x.line, x.column, x.kind, x.resolution, x.confidence
                        ));
                    }
                    out.push_str(&more(r.total, r.references.len(), args.offset));
                    if r.below_min_confidence > 0 {
                        out.push_str(&format!(
                            "({} uses below --min-confidence {} left out)\n",
                            r.below_min_confidence, args.min_confidence
                        ));
                    }
                    if !r.alternatives.is_empty() {
                        out.push_str(&format!(
                            "(the name also names {} other definitions; pick one with --path and --line)\n",
                            r.alternatives.len()
                        ));
                    }
                    out
                };
                (text, r.references.is_empty())
            }
            Command::Callers { target: args } => {
                let CallList::Callers(r) = dispatcher.send(message(CallersParams(args.params()))?).await?? else {
                    return Err(DocdexError::internal("callers answered with callees"));
                };
                let text = if args.json {
                    to_json(&r)?
                } else {
                    format!(
                        "{}{}{}",
                        symbol_line(&r.symbol),
                        call_lines(&r.callers, true),
                        more(r.total, r.callers.len(), args.offset)
                    )
                };
                (text, r.callers.is_empty())
            }
            Command::Callees { target: args } => {
                let CallList::Callees(r) = dispatcher.send(message(CalleesParams(args.params()))?).await?? else {
                    return Err(DocdexError::internal("callees answered with callers"));
                };
                let text = if args.json {
                    to_json(&r)?
                } else {
                    format!(
                        "{}{}{}",
                        symbol_line(&r.symbol),
                        call_lines(&r.callees, false),
                        more(r.total, r.callees.len(), args.offset)
                    )
                };
                (text, r.callees.is_empty())
            }
            Command::Impact { repo, file: None, diff, staged, depth, min_confidence, limit, json, .. } => {
                // `--diff --staged` is the staged diff: its base is HEAD, which `--diff` alone
                // names by default; another REV beside --staged is refused by the dispatcher.
                let base = diff.filter(|rev| !(staged && rev == "HEAD"));
                let params = DiffImpactParams {
                    base,
                    staged: Some(staged),
                    depth: depth.map(u64::from),
                    min_confidence: Some(f64::from(min_confidence)),
                    limit: limit.map(|l| l as u64),
                    repo: Some(client::absolute(&repo)),
                };
                let r = dispatcher.send(message(params)?).await??;
                let text = if json { to_json(&r)? } else { diff_impact_text(&r) };
                (text, false)
            }
            Command::Map { repo, budget_tokens, focus, json } => {
                let params = RepoMapParams {
                    budget_tokens: Some(budget_tokens as u64),
                    focus: Some(focus),
                    repo: Some(client::absolute(&repo)),
                };
                let r = dispatcher.send(message(params)?).await??;
                let text = if json {
                    to_json(&r)?
                } else {
                    format!("{}({} tokens of {})\n", crate::code::map::render(&r.files), r.tokens, r.budget_tokens)
                };
                (text, r.files.is_empty())
            }
            Command::RunTests { repo, target, affected, timeout_secs, json } => {
                let params = RunTestsParams { target, affected, timeout_secs, repo: Some(client::absolute(&repo)) };
                let r = dispatcher.send(message(params)?).await??;
                let text = if json { to_json(&r)? } else { run_tests_text(&r) };
                // Exit 1 when a test failed or the run was stopped, as the runners do.
                (text, r.failed > 0 || r.timed_out || r.exit_code.is_some_and(|c| c != 0))
            }
            Command::Impact { repo, file: Some(file), depth, limit, offset, json, .. } => {
                let params = FileImpactParams {
                    file,
                    depth: depth.map(u64::from),
                    limit: limit.map(|l| l as u64),
                    offset: offset.map(|o| o as u64),
                    repo: Some(client::absolute(&repo)),
                };
                let r = dispatcher.send(message(params)?).await??;
                let text = if json {
                    to_json(&r)?
                } else {
                    let mut out = format!("{} ({})\nimports:\n", r.file, r.language);
                    for e in &r.imports {
                        out.push_str(&format!("  {}  ({:.2})\n", e.path, e.confidence));
                    }
                    out.push_str("imported by:\n");
                    for e in &r.imported_by {
                        out.push_str(&format!("  {}  (depth {}, {:.2})\n", e.path, e.depth, e.confidence));
                    }
                    if let Some(next) = r.next_offset {
                        out.push_str(&format!("  … {} in all (next page: --offset {next})\n", r.imported_by_total));
                    }
                    if !r.unresolved.is_empty() {
                        out.push_str("unresolved:\n");
                        for u in &r.unresolved {
                            out.push_str(&format!("  {}  (line {})\n", u.spec, u.line));
                        }
                    }
                    out
                };
                (text, false)
            }
            Command::Ast { repo, language, kind, name, limit, offset, json, query } => {
                let repo = Some(client::absolute(&repo));
                match query {
                    Some(query) => {
                        let language = language.ok_or_else(|| {
                            DocdexError::invalid("a structural query needs --language")
                                .with_hint("e.g. --language rust")
                        })?;
                        let params = AstQueryParams {
                            language,
                            query,
                            limit: Some(limit as u64),
                            offset: offset.map(|o| o as u64),
                            repo,
                        };
                        let r = dispatcher.send(message(params)?).await??;
                        let text = if json {
                            to_json(&r)?
                        } else {
                            let mut out: String = r
                                .matches
                                .iter()
                                .map(|m| {
                                    format!(
                                        "{}:{}:{}  @{}  {}\n",
                                        m.path,
                                        m.line,
                                        m.column,
                                        m.capture,
                                        m.text.lines().next().unwrap_or("")
                                    )
                                })
                                .collect();
                            match r.next_offset {
                                Some(next) => out.push_str(&format!("… more matches: --offset {next}\n")),
                                None if r.truncated => out.push_str("… stopped at the time limit\n"),
                                None => {}
                            }
                            out
                        };
                        (text, r.matches.is_empty())
                    }
                    None => {
                        if kind.is_none() && name.is_none() {
                            return Err(DocdexError::invalid(
                                "give a query (with --language), or --kind and/or --name",
                            ));
                        }
                        let params = AstSearchParams {
                            name,
                            kind,
                            language,
                            limit: Some(limit as u64),
                            offset: offset.map(|o| o as u64),
                            repo,
                        };
                        let r = dispatcher.send(message(params)?).await??;
                        let text = if json { to_json(&r)? } else { r.symbols.iter().map(symbol_line).collect() };
                        (text, r.symbols.is_empty())
                    }
                }
            }
            _ => return Err(DocdexError::internal("not a code command")),
        })
    }
    .await;
    actors.repo_manager.send(CloseAll).await?;
    let (text, empty) = outcome?;
    print_out(&text)?;
    if empty && text.trim().is_empty() {
        // Exit 1 alone would leave a person at the terminal guessing whether it failed.
        eprintln!("no match");
    }
    Ok(if empty { 1 } else { 0 })
}
