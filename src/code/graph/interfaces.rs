//! Go's interfaces are satisfied, not declared: a type whose method set holds every method an
//! interface names implements it, and a call through the interface (`m.Convert(…)` on a
//! `Markdown`, `bp.Open(…)` on a `BlockParser`) runs the type's method. Which of the repo's
//! methods implement which of its interfaces' methods is found once, when the graph is built.

use std::collections::{HashMap, HashSet};

use super::{CodeGraph, SymbolRef};
use crate::code::SymbolKind;

/// How deep embedded types are followed for a method set (`Document` embeds `BaseBlock`,
/// which embeds `BaseNode`).
const MAX_EMBEDDING: usize = 4;

/// A Go type by its package (folder) and name.
type TypeKey = (String, String);

impl CodeGraph {
    /// Per Go method that implements a method of one of the repo's interfaces (its own
    /// type's, or a type's that embeds its type), those interface methods.
    pub(super) fn go_implementations(&self) -> HashMap<SymbolRef, Vec<SymbolRef>> {
        let folder = |f: usize| self.paths[f].rsplit_once('/').map(|(d, _)| d).unwrap_or("").to_string();
        // Each interface's methods by name, each type's own methods by name, and what each
        // struct embeds.
        let mut interfaces: Vec<Vec<(String, SymbolRef)>> = Vec::new();
        let mut own: HashMap<TypeKey, HashMap<String, SymbolRef>> = HashMap::new();
        let mut embeds: HashMap<TypeKey, Vec<String>> = HashMap::new();
        for (f, code) in self.codes.iter().enumerate() {
            if code.language != "go" {
                continue;
            }
            let dir = folder(f);
            let declared: HashSet<&str> = code
                .symbols
                .iter()
                .filter(|s| s.kind == SymbolKind::Interface)
                .map(|s| s.qualified_name.as_str())
                .collect();
            let mut methods_of: HashMap<&str, Vec<(String, SymbolRef)>> = HashMap::new();
            for (i, s) in code.symbols.iter().enumerate() {
                let r = (f as u32, i as u32);
                if s.kind.is_callable() && !s.container.is_empty() {
                    if declared.contains(s.container.as_str()) {
                        methods_of.entry(s.container.as_str()).or_default().push((s.name.clone(), r));
                    } else {
                        own.entry((dir.clone(), s.container.clone())).or_default().insert(s.name.clone(), r);
                    }
                } else if matches!(s.kind, SymbolKind::Struct | SymbolKind::Class | SymbolKind::Type) {
                    let embedded = self.embedded_types(r);
                    if !embedded.is_empty() {
                        embeds.entry((dir.clone(), s.qualified_name.clone())).or_default().extend(embedded);
                    }
                }
            }
            interfaces.extend(methods_of.into_values().filter(|m| !m.is_empty()));
        }
        // Each type's method set: its own methods, then those of the types it embeds (found in
        // its folder first, else wherever the repo defines a type of that name).
        let by_name: HashMap<&str, Vec<&TypeKey>> =
            own.keys().chain(embeds.keys()).fold(HashMap::new(), |mut map, key| {
                map.entry(key.1.as_str()).or_default().push(key);
                map
            });
        let mut method_sets: HashMap<&TypeKey, HashMap<&str, SymbolRef>> = HashMap::new();
        for key in own.keys().chain(embeds.keys()) {
            if method_sets.contains_key(key) {
                continue;
            }
            let mut set: HashMap<&str, SymbolRef> = HashMap::new();
            let mut level = vec![key];
            let mut seen: HashSet<&TypeKey> = HashSet::new();
            for _ in 0..=MAX_EMBEDDING {
                let mut next = Vec::new();
                for k in level {
                    if !seen.insert(k) {
                        continue;
                    }
                    for (name, &r) in own.get(k).into_iter().flatten() {
                        set.entry(name.as_str()).or_insert(r);
                    }
                    for embedded in embeds.get(k).into_iter().flatten() {
                        let candidates = by_name.get(embedded.as_str()).map(Vec::as_slice).unwrap_or_default();
                        let local = candidates.iter().find(|c| c.0 == k.0);
                        next.extend(local.or(candidates.first()).copied());
                    }
                }
                level = next;
            }
            method_sets.insert(key, set);
        }
        // The types that have a method of each name, to test an interface only against them.
        let mut having: HashMap<&str, Vec<&TypeKey>> = HashMap::new();
        for (key, set) in &method_sets {
            for name in set.keys() {
                having.entry(name).or_default().push(key);
            }
        }
        let mut out: HashMap<SymbolRef, Vec<SymbolRef>> = HashMap::new();
        for methods in &interfaces {
            let rarest = methods.iter().map(|(n, _)| having.get(n.as_str()).map_or(0, Vec::len)).min().unwrap_or(0);
            let Some((start, _)) = methods.iter().find(|(n, _)| having.get(n.as_str()).map_or(0, Vec::len) == rarest)
            else {
                continue;
            };
            for key in having.get(start.as_str()).into_iter().flatten() {
                let set = &method_sets[key];
                if !methods.iter().all(|(n, _)| set.contains_key(n.as_str())) {
                    continue;
                }
                for (name, spec) in methods {
                    let implementation = set[name.as_str()];
                    let specs = out.entry(implementation).or_default();
                    if !specs.contains(spec) {
                        specs.push(*spec);
                    }
                }
            }
        }
        out
    }
}
