//! Change impact: from a git diff to the definitions it touched, what depends on them and
//! the tests that reach them. The changed definitions come from parsing both sides of each
//! file (so they are right however fresh the index is); dependents and tests come from the
//! repo's code graph.

use std::path::PathBuf;

use actix::{Context, Handler, Message, ResponseFuture};

use super::ToolDispatcher;
use crate::change::git::DiffBase;
use crate::change::{ChangeSet, SymbolChange};
use crate::code::dependents::{self, Reached, Seed, WalkLimits};
use crate::code::CodeGraph;
use crate::index::RepoIndex;
use crate::protocol::impact::{AffectedTest, ChangedSymbolInfo, DependentInfo, DiffImpactResponse, FileChangeInfo};
use crate::protocol::{DocdexError, Result};

/// Hops from a changed definition to its dependents when the caller names no depth.
pub const DEFAULT_DIFF_DEPTH: u32 = 2;
/// Hops from a changed definition to a test: tests reach code through helpers and setup.
pub const DEFAULT_TEST_DEPTH: u32 = 3;
/// Dependents and tests each list gives when the caller names no limit.
pub const DEFAULT_DIFF_LIMIT: usize = 100;
/// Definitions a walk visits at most (a hub's dependents are cut there, and said to be).
const MAX_VISITED: usize = 20_000;
/// Test files read for a callback's title at most this large.
const MAX_TEST_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// What a diff changed and what it reaches.
#[derive(Message)]
#[rtype(result = "Result<DiffImpactResponse>")]
pub struct DiffImpact {
    pub repo_opt: Option<PathBuf>,
    pub base: DiffBase,
    pub depth: u32,
    pub min_confidence: f32,
    pub limit: usize,
}

impl Handler<DiffImpact> for ToolDispatcher {
    type Result = ResponseFuture<Result<DiffImpactResponse>>;

    fn handle(&mut self, msg: DiffImpact, _: &mut Context<Self>) -> Self::Result {
        if msg.depth == 0 || msg.depth > super::code::MAX_IMPACT_DEPTH {
            let max = super::code::MAX_IMPACT_DEPTH;
            return Box::pin(async move { Err(DocdexError::invalid(format!("depth must be 1 to {max}"))) });
        }
        let repo_opt = msg.repo_opt.clone();
        self.with_graph(repo_opt, move |index, graph| {
            let changes = crate::change::read(&index.root, &msg.base)?;
            Ok(diff_impact(index, graph, &changes, &msg))
        })
    }
}

fn diff_impact(index: &RepoIndex, graph: &CodeGraph, changes: &ChangeSet, msg: &DiffImpact) -> DiffImpactResponse {
    let mut seeds: Vec<Seed> = Vec::new();
    for c in &changes.symbols {
        let s = &c.symbol;
        match c.change {
            SymbolChange::Added => {}
            SymbolChange::Modified => {
                let found = graph.defined_in(&c.path, &s.qualified_name, s.kind);
                seeds.push(Seed {
                    symbol_opt: found.first().copied(),
                    name: s.name.clone(),
                    label: s.qualified_name.clone(),
                });
            }
            SymbolChange::Deleted | SymbolChange::Renamed => {
                // Its callers may still name it (by the old name); after a rename, those
                // already updated name the new one.
                let old_qualified = c.old_qualified_name_opt.clone().unwrap_or_else(|| s.qualified_name.clone());
                let old_name = c.old_name_opt.clone().unwrap_or_else(|| s.name.clone());
                let file = changes.files.iter().find(|f| f.path == c.path);
                let old_path = file.map(|f| f.old_path.as_str()).unwrap_or(&c.path);
                let stale = graph.defined_in(old_path, &old_qualified, s.kind);
                seeds.push(Seed { symbol_opt: stale.first().copied(), name: old_name, label: old_qualified });
                if c.change == SymbolChange::Renamed {
                    if let Some(&now) = graph.defined_in(&c.path, &s.qualified_name, s.kind).first() {
                        seeds.push(Seed {
                            symbol_opt: Some(now),
                            name: s.name.clone(),
                            label: s.qualified_name.clone(),
                        });
                    }
                }
            }
        }
    }
    let limits = WalkLimits {
        depth: msg.depth,
        test_depth: msg.depth.max(DEFAULT_TEST_DEPTH),
        min_confidence: msg.min_confidence,
        test_min_confidence: msg.min_confidence.min(0.3),
        max_visited: MAX_VISITED,
    };
    let walk = dependents::walk(graph, &seeds, limits);
    let dependents_total = walk.dependents.len();
    let tests_total = walk.tests.len();
    let dependents = walk.dependents.iter().take(msg.limit).map(|r| dependent_info(graph, r)).collect();
    let tests = walk.tests.iter().take(msg.limit).map(|r| affected_test(index, graph, r)).collect();
    DiffImpactResponse {
        base: match &msg.base {
            DiffBase::Staged => "staged".to_string(),
            DiffBase::Working { rev } => rev.clone(),
        },
        changed_files: changes.files.iter().map(|f| f.path.clone()).collect(),
        file_changes: changes
            .files
            .iter()
            .map(|f| FileChangeInfo {
                path: f.path.clone(),
                change: f.change.name().to_string(),
                old_path: if f.old_path != f.path { f.old_path.clone() } else { String::new() },
            })
            .collect(),
        changed_symbols: changes
            .symbols
            .iter()
            .map(|c| ChangedSymbolInfo {
                name: c.symbol.name.clone(),
                qualified_name: c.symbol.qualified_name.clone(),
                kind: c.symbol.kind.name().to_string(),
                path: c.path.clone(),
                line: c.symbol.line,
                end_line: c.symbol.end_line,
                change: c.change.name().to_string(),
                old_name: if c.change == SymbolChange::Renamed {
                    c.old_name_opt.clone().unwrap_or_default()
                } else {
                    String::new()
                },
                language: c.language.to_string(),
            })
            .collect(),
        dependents,
        dependents_total,
        tests,
        tests_total,
        truncated: walk.truncated || dependents_total > msg.limit || tests_total > msg.limit,
    }
}

fn round(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

fn dependent_info(graph: &CodeGraph, r: &Reached) -> DependentInfo {
    let path = graph.path(r.file).to_string();
    let (name, qualified_name, kind) = match r.symbol_opt {
        Some(i) => {
            let s = &graph.code(r.file).symbols[i as usize];
            (s.name.clone(), s.qualified_name.clone(), s.kind.name().to_string())
        }
        None => (String::new(), String::new(), "file".to_string()),
    };
    DependentInfo {
        name,
        qualified_name,
        kind,
        path,
        line: r.line,
        depth: r.depth,
        via: r.via.clone(),
        confidence: round(r.confidence),
    }
}

fn affected_test(index: &RepoIndex, graph: &CodeGraph, r: &Reached) -> AffectedTest {
    let path = graph.path(r.file).to_string();
    let name = match r.symbol_opt {
        Some(i) => graph.code(r.file).symbols[i as usize].qualified_name.clone(),
        // A test framework's callback (`it("adds", () => …)`): its title, read from the file.
        None => super::files::read_inside(&index.root, &path, MAX_TEST_FILE_BYTES)
            .ok()
            .and_then(|text| dependents::enclosing_test_name(&text, r.line))
            .unwrap_or_default(),
    };
    AffectedTest { path, name, line: r.line, depth: r.depth, via: r.via.clone(), confidence: round(r.confidence) }
}
