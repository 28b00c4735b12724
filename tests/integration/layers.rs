//! The architecture as a test: imports between the library's modules flow one way, from the
//! adapters down to the protocol (ARCHITECTURE.md, "Layers"), and no two modules import each
//! other, directly or round a loop. A module and its own submodules count as one (a parent
//! declares its children, and children reach their parent's private items); between any
//! others an import is a `crate::…` path or a `super::…` path that leaves the module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module's layer: a module may import from its own layer or lower ones.
const LAYERS: &[(&str, u8)] = &[
    ("protocol", 0),
    ("config", 1),
    ("ingest", 2),
    ("index", 2),
    ("code", 2),
    ("change", 2),
    ("runner", 2),
    ("llm", 2),
    ("web", 2),
    ("libs", 2),
    ("document", 2),
    ("postgres", 2),
    ("actors", 3),
    ("daemon", 4),
    ("http", 5),
    ("mcp", 5),
    ("cli", 5),
];

type Module = Vec<String>;

/// Every module of the library (`src/bin` and `main.rs` are other crates), by file.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut found = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(src).unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if rel != "bin" {
                    stack.push(path);
                }
                continue;
            }
            if !rel.ends_with(".rs") || rel == "main.rs" {
                continue;
            }
            let mut parts: Module = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests may reach anywhere; they are not part of the layering.
            let code = match text.find("#[cfg(test)]\nmod tests") {
                Some(at) => text[..at].to_string(),
                None => text,
            };
            found.insert(parts, code);
        }
    }
    found
}

/// The paths a file names: `crate::a::b::C` and `super::x::Y`, made absolute. Each `use`
/// group (`crate::a::{b, c::D}`) gives one path per member.
fn named_paths(module: &Module, code: &str) -> Vec<Module> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let start_ok =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let (root, skip) = if start_ok && rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else if start_ok && rest.starts_with("super::") {
            // `super` is the parent module (of `a/b.rs` and of `a/b/mod.rs` alike: `a`).
            let mut base = module.clone();
            base.pop();
            (base, "super::".len())
        } else {
            i += rest.chars().next().map(char::len_utf8).unwrap_or(1);
            continue;
        };
        let mut prefix = root;
        let mut j = i + skip;
        loop {
            let tail = &code[j..];
            if let Some(after) = tail.strip_prefix("super::") {
                prefix.pop();
                j = code.len() - after.len();
                continue;
            }
            let ident: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if ident.is_empty() {
                if tail.starts_with('{') {
                    let close = matching_brace(tail);
                    paths.extend(expand_group(&prefix, &tail[1..close]));
                } else {
                    paths.push(prefix.clone());
                }
                break;
            }
            prefix.push(ident.clone());
            j += ident.len();
            match code[j..].strip_prefix("::") {
                Some(_) => j += 2,
                None => {
                    paths.push(prefix.clone());
                    break;
                }
            }
        }
        i = j.max(i + 1);
    }
    paths
}

/// The index of the `}` that closes the `{` that `text` starts with.
fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The paths of a `use` group's members (`a::{b, c::{D, E}}`), nested groups included.
fn expand_group(prefix: &Module, members: &str) -> Vec<Module> {
    let mut paths = Vec::new();
    let (mut depth, mut start) = (0, 0);
    let mut pieces = Vec::new();
    for (at, c) in members.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&members[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    pieces.push(&members[start..]);
    for piece in pieces.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let mut path = prefix.clone();
        match piece.find('{') {
            Some(open) => {
                let head = piece[..open].trim_end_matches("::");
                path.extend(head.split("::").filter(|s| !s.is_empty() && *s != "self").map(String::from));
                let close = open + matching_brace(&piece[open..]);
                paths.extend(expand_group(&path, &piece[open + 1..close]));
            }
            None => {
                let name = piece.split(" as ").next().unwrap_or(piece);
                path.extend(
                    name.split("::").map(str::trim).filter(|s| !s.is_empty() && *s != "self").map(String::from),
                );
                paths.push(path);
            }
        }
    }
    paths
}

fn is_ancestor_or_same(a: &Module, b: &Module) -> bool {
    a.len() <= b.len() && b[..a.len()] == a[..]
}

/// Module-to-module imports, a module and its descendants being one.
fn imports(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules(src);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, code) in &modules {
        for path in named_paths(module, code) {
            // The longest module the path names.
            let target = (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains_key(p));
            let Some(target) = target else { continue };
            if target.is_empty() || is_ancestor_or_same(&target, module) || is_ancestor_or_same(module, &target) {
                continue;
            }
            edges.entry(module.clone()).or_default().insert(target);
        }
    }
    edges
}

fn layer(module: &Module) -> u8 {
    let top = module.first().map(String::as_str).unwrap_or("");
    LAYERS
        .iter()
        .find(|(name, _)| *name == top)
        .unwrap_or_else(|| panic!("src/{top} is in no layer: add it to LAYERS here and to ARCHITECTURE.md"))
        .1
}

#[test]
fn imports_flow_down_the_layers_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = imports(&src);
    assert!(edges.len() > 20, "the scan found too few imports to be right: {edges:?}");

    let mut upward = Vec::new();
    for (from, targets) in &edges {
        for to in targets {
            if layer(to) > layer(from) {
                upward.push(format!("{} -> {}", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(upward.is_empty(), "imports that go up a layer:\n{}", upward.join("\n"));

    // A cycle: a path from a module back to itself (depth-first, reporting the loop).
    fn visit(
        node: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        done: &mut BTreeSet<Module>,
        path: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        if let Some(at) = path.iter().position(|m| m == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.clone());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        if let Some(cycle) = visit(node, &edges, &mut done, &mut Vec::new()) {
            let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
            panic!("an import cycle: {}", names.join(" -> "));
        }
    }
}

#[test]
fn the_scan_sees_crate_super_and_grouped_paths() {
    let module: Module = vec!["actors".into(), "chat".into()];
    let code = "use super::waterfall::{RunWaterfall, WaterfallOrchestrator};\nuse crate::index::{dag::{DagRecorder}, RepoIndex};\nlet x = crate::protocol::time::unix_now();";
    let paths = named_paths(&module, code);
    let has = |p: &[&str]| paths.iter().any(|x| x.iter().map(String::as_str).eq(p.iter().copied()));
    assert!(has(&["actors", "waterfall", "RunWaterfall"]), "{paths:?}");
    assert!(has(&["index", "RepoIndex"]), "{paths:?}");
    assert!(has(&["index", "dag", "DagRecorder"]), "{paths:?}");
    assert!(has(&["protocol", "time", "unix_now"]), "{paths:?}");
}
