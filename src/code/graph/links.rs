//! The graph's links, made once at build: each file's imports resolved to files (edges,
//! bindings, open imports, package mates), and names imported under an alias tied to the
//! definitions at the end of their chain.

use std::collections::{HashMap, HashSet};

use super::{CodeGraph, SymbolRef, MAX_REEXPORT_HOPS};

impl CodeGraph {
    /// A name imported from a file that binds or exports it under an alias (`from .a import
    /// foo as baz` in a package's `__init__.py`, `export { foo as baz } from "./a"`, `export {
    /// fooCreate as foo }`, `pub use a::foo as baz`), directly or along re-exports, and a name
    /// the file itself imports under an alias of an original it cannot take (two modules'
    /// `create`): each use of it in the importing file, bare or as a member of the module
    /// imported (`d.baz()`), resolves to the definitions at the end of the chain
    /// (`resolve_use`), and is listed under their name for the walk back from them.
    ///
    /// So does a name bound to a whole JavaScript module (`var createDefaultStream =
    /// require('./lib/default_stream')`) that the module does not define: called bare, it is
    /// the module's `module.exports = function …` (named for its file, `default_stream`).
    pub(super) fn link_aliases(&mut self) {
        if self.codes.iter().all(|c| c.renames.is_empty() && c.whole_modules.is_empty()) {
            return;
        }
        // Only a name some file renames can reach a definition under another name.
        let renamed_anywhere: HashSet<String> =
            self.codes.iter().flat_map(|c| c.renames.iter().map(|(bound, _)| bound.clone())).collect();
        for f in 0..self.codes.len() {
            let code = &self.codes[f];
            let globs = matches!(code.language.as_str(), "rust" | "python") && !self.open_imports[f].is_empty();
            let mut found: HashMap<(u32, u32), Vec<SymbolRef>> = HashMap::new();
            let mut asked: HashSet<(u32, u32)> = HashSet::new();
            // Each use's (qualifier, name) and, after a glob, a one-word qualifier as a name
            // of its own (`Handlebars` of `Handlebars::new()`: a type, the alias may be).
            let keys = code.occurrences.iter().flat_map(|o| {
                let head = (globs && o.qualifier != 0 && is_word(code.qualifier_of(o))).then_some((0, o.qualifier));
                std::iter::once((o.qualifier, o.name)).chain(head)
            });
            for key in keys {
                if !asked.insert(key) {
                    continue;
                }
                let text = |i: u32| code.strings.get(i as usize).map_or("", String::as_str);
                let (qualifier, name) = (text(key.0), text(key.1));
                let (bound, own_rename) = if key.0 == 0 {
                    (name, code.renames.iter().find(|(b, _)| b == name).map(|(_, o)| o.as_str()))
                } else {
                    (qualifier, None)
                };
                let targets: &[u32] = match self.bindings[f].get(bound) {
                    Some(targets) => targets,
                    // `Handlebars::new()` after `use handlebars::*`, whose `lib.rs` has `pub
                    // use registry::Registry as Handlebars`: a name the file neither binds nor
                    // defines may come in through a glob under an alias.
                    None if globs
                        && key.0 == 0
                        && renamed_anywhere.contains(name)
                        && !code.symbols.iter().any(|s| s.name == name) =>
                    {
                        &self.open_imports[f]
                    }
                    None => continue,
                };
                let (start, renamed) = match own_rename {
                    Some(original) => (original, true),
                    None => (name, false),
                };
                let mut definitions = self.aliased_definitions(targets, start, renamed);
                if definitions.is_empty() && key.0 == 0 && code.whole_modules.iter().any(|m| m == name) {
                    definitions = self.default_exports(targets, name);
                }
                if !definitions.is_empty() {
                    found.insert(key, definitions);
                }
            }
            if found.is_empty() {
                continue;
            }
            // Listed under the definition's name too, where the walk back looks.
            let mut listed: Vec<(String, u32)> = Vec::new();
            for (o, occurrence) in self.codes[f].occurrences.iter().enumerate() {
                let Some(definitions) = found.get(&(occurrence.qualifier, occurrence.name)) else { continue };
                let own = self.codes[f].name_of(occurrence);
                let mut names: Vec<&str> = definitions.iter().map(|&r| self.symbol(r).name.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                listed.extend(names.into_iter().filter(|n| *n != own).map(|n| (n.to_string(), o as u32)));
            }
            for (defined, o) in listed {
                self.uses_by_name.entry(defined).or_default().push((f as u32, o));
            }
            self.aliased_names[f] = found
                .iter()
                .filter(|((qualifier, _), _)| *qualifier == 0)
                .map(|(&(_, name), definitions)| (self.codes[f].strings[name as usize].clone(), definitions.clone()))
                .collect();
            self.type_aliases[f] = self.aliased_names[f]
                .iter()
                .filter_map(|(bound, definitions)| {
                    let own = &self.symbol(*definitions.first()?).name;
                    let one_type = definitions.iter().all(|&r| {
                        let s = self.symbol(r);
                        s.kind.is_container() && &s.name == own
                    });
                    (one_type && own != bound).then(|| (bound.clone(), own.clone()))
                })
                .collect();
            self.aliases[f] = found;
        }
    }

    /// The `module.exports = function …` (or class) of each of `targets` that does not
    /// define `name` itself; for a `.d.ts` (what a `require` resolves to first where a
    /// package ships its types beside its code), the script beside it.
    fn default_exports(&self, targets: &[u32], name: &str) -> Vec<SymbolRef> {
        let mut out = Vec::new();
        let scripts = targets.iter().filter_map(|&t| {
            let stem = self.paths[t as usize].strip_suffix(".d.ts")?;
            ["js", "cjs", "mjs"].iter().find_map(|ext| self.path_index.get(&format!("{stem}.{ext}")).copied())
        });
        let targets: Vec<u32> = targets.iter().copied().chain(scripts).collect();
        for t in targets {
            let symbols = &self.codes[t as usize].symbols;
            if symbols.iter().any(|s| s.name == name && s.container.is_empty()) {
                continue;
            }
            out.extend(
                symbols
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| {
                        s.container.is_empty()
                            && (s.kind.is_callable() || s.kind.is_container())
                            && s.signature.starts_with("module.exports")
                    })
                    .map(|(i, _)| (t, i as u32)),
            );
        }
        out
    }

    /// The top-level definitions `name` reaches from `targets` once it has been renamed on
    /// the way (`renamed`: by the importing file itself): each file either defines it, binds
    /// it under another name (followed within the file), or imports it from the next files,
    /// up to `MAX_REEXPORT_HOPS` files on. Empty when no rename lies on the way (resolution
    /// by name finds those) or nothing is defined at its end.
    fn aliased_definitions(&self, targets: &[u32], name: &str, renamed: bool) -> Vec<SymbolRef> {
        let mut out: Vec<SymbolRef> = Vec::new();
        let mut seen: HashSet<(u32, String)> = HashSet::new();
        let mut frontier: Vec<(u32, String, bool)> = targets.iter().map(|&t| (t, name.to_string(), renamed)).collect();
        for _ in 0..MAX_REEXPORT_HOPS + 2 {
            let mut next = Vec::new();
            for (t, name, renamed) in frontier {
                if !seen.insert((t, name.clone())) {
                    continue;
                }
                let code = &self.codes[t as usize];
                let defined: Vec<SymbolRef> = code
                    .symbols
                    .iter()
                    .enumerate()
                    .map(|(i, _)| (t, i as u32))
                    .filter(|&r| {
                        let s = self.symbol(r);
                        s.name == name && (self.is_top_level(r) || s.kind.is_container())
                    })
                    .collect();
                if !defined.is_empty() {
                    if renamed {
                        out.extend(defined);
                    }
                    continue;
                }
                if let Some((_, original)) = code.renames.iter().find(|(bound, _)| *bound == name) {
                    // Imported under this name (`import { create as stringCreate } from
                    // "./string"`): on to that import's files, whose name is the original;
                    // exported under it (`export { stringCreate as string }`): the file's own.
                    match self.bindings[t as usize].get(&name) {
                        Some(files) => next.extend(files.iter().map(|&onward| (onward, original.clone(), true))),
                        None => next.push((t, original.clone(), true)),
                    }
                    continue;
                }
                for &onward in self.bindings[t as usize].get(&name).into_iter().flatten() {
                    next.push((onward, name.clone(), renamed));
                }
                for &onward in &self.open_imports[t as usize] {
                    next.push((onward, name.clone(), renamed));
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    pub(super) fn link(&mut self) {
        for f in 0..self.paths.len() {
            let path = self.paths[f].clone();
            let code = &self.codes[f];
            let mut edges: Vec<(u32, f32, u32)> = Vec::new();
            let mut unresolved = Vec::new();
            let mut bindings: HashMap<String, Vec<u32>> = HashMap::new();
            let mut open: Vec<u32> = Vec::new();
            for (i, import) in code.imports.iter().enumerate() {
                let targets = self.resolver.resolve(&path, &code.language, import);
                let ids: Vec<(u32, f32)> = targets
                    .iter()
                    .filter_map(|t| self.path_index.get(&t.file).map(|&id| (id, t.confidence)))
                    .filter(|&(id, _)| id as usize != f)
                    .collect();
                if ids.is_empty() {
                    unresolved.push(i as u32);
                }
                for &(id, confidence) in &ids {
                    if !edges.iter().any(|e| e.0 == id) {
                        edges.push((id, confidence, i as u32));
                    }
                }
                let target_ids: Vec<u32> = ids.iter().map(|&(id, _)| id).collect();
                for name in &import.names {
                    bindings.entry(name.clone()).or_default().extend(&target_ids);
                }
                if import.names.is_empty() || import.spec.ends_with('*') || import.file_like {
                    open.extend(&target_ids);
                    for &(id, _) in &ids {
                        for twin in self.resolver.header_twins(&self.paths[id as usize]) {
                            if let Some(&t) = self.path_index.get(&twin) {
                                open.push(t);
                            }
                        }
                    }
                }
            }
            let mates: Vec<u32> = self
                .resolver
                .package_mates(&path, code)
                .iter()
                .filter_map(|p| self.path_index.get(p).copied())
                .collect();
            for &(target, confidence, _) in &edges {
                self.imported_by[target as usize].push((f as u32, confidence));
            }
            self.imports[f] = edges;
            self.unresolved[f] = unresolved;
            self.bindings[f] = bindings;
            self.open_imports[f] = open;
            self.package_mates[f] = mates;
        }
    }
}

/// Whether a qualifier is one plain name (`Handlebars`, not `a::b` nor `self.x`).
fn is_word(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}
