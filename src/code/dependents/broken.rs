//! Tests a deleted or renamed name breaks before they run: a Python module that imports the
//! name (or uses it) at its top level fails to import, and so does every module that imports
//! that one (every module of a package whose `__init__.py` fails), up to the test files, which
//! fail at collection whatever they call.

use std::collections::{HashSet, VecDeque};

use super::{walk, Reached, Seed, WalkLimits};
use crate::code::graph::CodeGraph;

/// How sure an import chain is to break: an `ImportError` at collection fails the file.
const BROKEN_IMPORT_CONFIDENCE: f32 = 0.9;

/// The test files that import, however far up, a Python module whose top level names one of
/// `gone` (the seeds of definitions the diff deletes or renames, by their old names), each
/// once, nearest first; `via` names the modules between.
pub fn broken_imports(graph: &CodeGraph, gone: &[Seed], limits: WalkLimits) -> Vec<Reached> {
    if gone.is_empty() {
        return Vec::new();
    }
    let first = walk(graph, gone, WalkLimits { depth: 1, test_depth: 1, ..limits });
    let mut seen: HashSet<u32> = HashSet::new();
    let mut queue: VecDeque<(u32, u32, Vec<String>)> = VecDeque::new();
    for r in first.dependents.iter().chain(&first.tests) {
        let at_top = r.symbol_opt.is_none() && graph.code(r.file).language == "python";
        if at_top && seen.insert(r.file) {
            queue.push_back((r.file, 0, r.via.clone()));
        }
    }
    let mut out = Vec::new();
    while let Some((file, hops, via)) = queue.pop_front() {
        if seen.len() >= limits.max_visited {
            break;
        }
        let mut via_here = vec![graph.path(file).to_string()];
        via_here.extend(via);
        let mut broken: Vec<(u32, u32)> = graph.importers(file, limits.min_confidence);
        // Importing any module of a package runs its `__init__.py` first.
        if let Some(package) = graph.path(file).strip_suffix("__init__.py").filter(|dir| !dir.is_empty()) {
            let members = (0..graph.file_count() as u32)
                .filter(|&g| g != file && graph.path(g).starts_with(package) && graph.code(g).language == "python");
            broken.extend(members.map(|g| (g, 1)));
        }
        for (importer, line) in broken {
            if !seen.insert(importer) {
                continue;
            }
            if graph.is_test_file(importer) {
                let mut reached = Reached::changed_test(importer, None, line);
                reached.depth = hops + 2;
                reached.hops = hops + 2;
                reached.confidence = BROKEN_IMPORT_CONFIDENCE;
                reached.weakest = BROKEN_IMPORT_CONFIDENCE;
                reached.via = via_here.clone();
                reached.by_import = true;
                out.push(reached);
            }
            queue.push_back((importer, hops + 1, via_here.clone()));
        }
    }
    out
}
