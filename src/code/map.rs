//! The repo map: the files and definitions that matter most, fitted to a token budget. A
//! PageRank over the file graph whose edges are resolved uses (file A uses a definition of
//! file B), personalised towards focus files when there are any; each definition then scores
//! by the rank of the files that use it (one nothing else uses, a share of its own file's
//! rank), and the best are taken, in that order, until the rendered map reaches the budget.

use std::collections::HashMap;

use super::graph::CodeGraph;
use super::test_files::is_test_file;
use super::SymbolKind;
use crate::protocol::impact::{MapFile, MapSymbol, RepoMapResponse};

/// Characters per token in the budget's estimate (code runs denser than prose's 4).
pub const CHARS_PER_TOKEN: usize = 3;
const DAMPING: f64 = 0.85;
const ITERATIONS: usize = 30;
/// A use must be at least this sure to be an edge.
const MIN_EDGE_CONFIDENCE: f32 = 0.5;
/// A definition no other file uses scores this share of its file's rank (weighted by what it
/// is): below the definitions its file's users use, above nothing.
const UNUSED_SHARE: f64 = 0.05;

/// Whether a kind of definition belongs on a map: types and callables, not fields.
fn mapped(kind: SymbolKind) -> bool {
    !matches!(
        kind,
        SymbolKind::Field | SymbolKind::Property | SymbolKind::Variable | SymbolKind::EnumMember | SymbolKind::Module
    )
}

/// The map of `graph` within `budget_tokens`, personalised towards `focus` files (indices).
pub fn repo_map(graph: &CodeGraph, budget_tokens: usize, focus: &[u32]) -> RepoMapResponse {
    let n = graph.file_count();
    let focused = |f: u32| focus.contains(&f);
    // Edges file → file with weights, and per definition the (file, weight) of its uses.
    let mut edges: HashMap<(u32, u32), f64> = HashMap::new();
    let mut def_uses: HashMap<(u32, u32), Vec<(u32, f64)>> = HashMap::new();
    for f in 0..n as u32 {
        let code = graph.code(f);
        // Tests use everything and define nothing others use: they would only add noise,
        // unless asked about.
        if is_test_file(graph.path(f), &code.language) && !focused(f) {
            continue;
        }
        for o in 0..code.occurrences.len() as u32 {
            let Some(c) = graph.resolve_use(f, o).into_iter().next() else { continue };
            if c.confidence < MIN_EDGE_CONFIDENCE || c.symbol.0 == f {
                continue;
            }
            // A name used often says less each time (aider's sqrt of the count, per edge).
            *edges.entry((f, c.symbol.0)).or_default() += f64::from(c.confidence);
            def_uses.entry(c.symbol).or_default().push((f, f64::from(c.confidence)));
        }
    }
    for w in edges.values_mut() {
        *w = w.sqrt();
    }
    let mut out_weight = vec![0.0f64; n];
    for (&(from, _), &w) in &edges {
        out_weight[from as usize] += w;
    }
    // Teleport: uniform, or onto the focus files.
    let teleport: Vec<f64> = if focus.is_empty() {
        vec![1.0 / n.max(1) as f64; n]
    } else {
        (0..n as u32).map(|f| if focused(f) { 1.0 / focus.len() as f64 } else { 0.0 }).collect()
    };
    let mut rank = teleport.clone();
    for _ in 0..ITERATIONS {
        let mut next: Vec<f64> = teleport.iter().map(|t| (1.0 - DAMPING) * t).collect();
        let dangling: f64 = (0..n).filter(|&f| out_weight[f] == 0.0).map(|f| rank[f]).sum();
        for (f, t) in next.iter_mut().zip(&teleport) {
            *f += DAMPING * dangling * t;
        }
        for (&(from, to), &w) in &edges {
            next[to as usize] += DAMPING * rank[from as usize] * w / out_weight[from as usize];
        }
        rank = next;
    }
    // A definition scores by the rank its users pass on through their uses of it.
    let mut scored: Vec<((u32, u32), f64)> = def_uses
        .iter()
        .filter(|(r, _)| mapped(graph.symbol(**r).kind))
        .filter(|(r, _)| !is_test_file(graph.path(r.0), &graph.code(r.0).language) || focused(r.0))
        .map(|(&r, uses)| {
            let score: f64 = uses.iter().map(|&(f, c)| rank[f as usize] * c / out_weight[f as usize].max(1e-9)).sum();
            // Focus files' own definitions come first.
            let boost = if focused(r.0) { 10.0 } else { 1.0 };
            (r, score * boost * weight(graph, r))
        })
        .collect();
    // A definition no other file uses (a library's public API, which its users call, not its
    // own files) still belongs on the map when the budget has room: after the used ones of
    // its file's rank, by its file's rank and what it is.
    for f in 0..n as u32 {
        let code = graph.code(f);
        if focused(f) || is_test_file(graph.path(f), &code.language) {
            continue;
        }
        for (i, s) in code.symbols.iter().enumerate() {
            if mapped(s.kind) && !def_uses.contains_key(&(f, i as u32)) {
                let r = (f, i as u32);
                scored.push((r, rank[f as usize] * UNUSED_SHARE * weight(graph, r)));
            }
        }
    }
    // Focus files' definitions are on the map even when nothing else uses them.
    for &f in focus {
        for (i, s) in graph.code(f).symbols.iter().enumerate() {
            if mapped(s.kind) && !def_uses.contains_key(&(f, i as u32)) {
                scored.push(((f, i as u32), rank[f as usize]));
            }
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));

    let budget_chars = budget_tokens * CHARS_PER_TOKEN;
    let mut files: Vec<MapFile> = Vec::new();
    let mut used = 0usize;
    // A file's rank on the map is its best definition's score against the map's best (1.0):
    // files come in that order.
    let best = scored.first().map_or(1.0, |s| s.1).max(f64::MIN_POSITIVE);
    for ((f, i), score) in scored {
        let s = graph.symbol((f, i));
        let path = graph.path(f);
        let signature = one_line(&s.signature, &s.name);
        let line_cost = signature.len() + 8;
        let position = files.iter().position(|m| m.path == path);
        let cost = line_cost + if position.is_none() { path.len() + 2 } else { 0 };
        if used + cost > budget_chars {
            // Smaller entries may still fit.
            continue;
        }
        used += cost;
        let symbol = MapSymbol { name: s.name.clone(), kind: s.kind.name().to_string(), line: s.line, signature };
        match position {
            Some(p) => files[p].symbols.push(symbol),
            None => files.push(MapFile { path: path.to_string(), rank: round(score / best), symbols: vec![symbol] }),
        }
    }
    for file in &mut files {
        file.symbols.sort_by_key(|s| s.line);
    }
    let tokens = render(&files).len().div_ceil(CHARS_PER_TOKEN);
    RepoMapResponse { files, tokens, budget_tokens }
}

/// How much a definition's own nature adds to its rank: the API (public types and
/// functions) over internals, types over functions, names defined in many places
/// (`new`, `fmt`) and plumbing (configuration macros, `_private` helpers) far less.
fn weight(graph: &CodeGraph, r: (u32, u32)) -> f64 {
    let s = graph.symbol(r);
    let visibility = match s.visibility {
        super::Visibility::Public => 1.0,
        super::Visibility::Internal | super::Visibility::Protected => 0.5,
        super::Visibility::Private => 0.3,
    };
    let kind = match s.kind {
        k if k.is_container() => 2.0,
        SymbolKind::Macro => 0.3,
        SymbolKind::Constant => 0.5,
        _ => 1.0,
    };
    let common = if graph.lookup(&s.name).len() > 5 { 0.1 } else { 1.0 };
    let private = if s.name.starts_with('_') && !s.name.starts_with("__") { 0.1 } else { 1.0 };
    visibility * kind * common * private
}

/// The map as text: each file, then its definitions' signatures with their lines.
pub fn render(files: &[MapFile]) -> String {
    let mut out = String::new();
    for file in files {
        out.push_str(&file.path);
        out.push_str(":\n");
        for s in &file.symbols {
            out.push_str(&format!("{:>5}: {}\n", s.line, s.signature));
        }
    }
    out
}

fn one_line(signature: &str, name: &str) -> String {
    let line = signature.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = if line.is_empty() { name.to_string() } else { line };
    match line.char_indices().nth(160) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
