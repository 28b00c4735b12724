//! Who uses a definition: its references and uses (resolved once per graph, cached), the
//! call edges into and out of it, and a file's impact.

use std::collections::{HashMap, VecDeque};

use super::{
    names_a_type, round, split_qualifier, CodeGraph, Resolution, Resolved, SymbolRef, Use, DISPATCH_CONFIDENCE,
    MAX_CACHED_USES, MAX_RESOLVED_OCCURRENCES, PARTNER_CONFIDENCE,
};
use crate::code::UseKind;
use crate::protocol::code::{CallEdge, FileEdge, ImpactResponse, Reference, UnresolvedImport};

/// How sure a use is made by a script's top level for the call that runs the script in a
/// child process, against the use itself: the script runs whole, but the path is a string.
const SPAWN_CONFIDENCE: f32 = 0.9;

impl CodeGraph {
    /// Uses of a definition, highest confidence first, at or above `min_confidence`.
    pub fn references(&self, target: SymbolRef, min_confidence: f32) -> Vec<Reference> {
        self.references_filtered(target, min_confidence, true)
    }

    /// `references`, with or without the `may_mean` shortcut (the tests check they agree).
    pub(crate) fn references_filtered(
        &self,
        target: SymbolRef,
        min_confidence: f32,
        prefilter: bool,
    ) -> Vec<Reference> {
        let mut out: Vec<Reference> = self
            .uses_filtered(target, min_confidence, prefilter)
            .into_iter()
            .map(|u| {
                let occ = &self.codes[u.file as usize].occurrences[u.occurrence as usize];
                Reference {
                    path: self.paths[u.file as usize].clone(),
                    line: occ.line,
                    column: occ.column,
                    kind: occ.kind.name().to_string(),
                    confidence: round(u.confidence),
                    resolution: u.resolution.name().to_string(),
                }
            })
            .collect();
        if PARTNER_CONFIDENCE >= min_confidence {
            out.extend(self.partner_declarations(target).into_iter().map(|(f, i)| {
                let s = &self.codes[f as usize].symbols[i as usize];
                Reference {
                    path: self.paths[f as usize].clone(),
                    line: s.line,
                    column: s.column,
                    kind: "declaration".to_string(),
                    confidence: PARTNER_CONFIDENCE,
                    resolution: Resolution::SameFile.name().to_string(),
                }
            }));
        }
        out.sort_by(|a, b| {
            b.confidence.total_cmp(&a.confidence).then_with(|| a.path.cmp(&b.path)).then(a.line.cmp(&b.line))
        });
        out
    }

    /// The other declarations of the symbol `target` declares: a TypeScript function's
    /// overload signatures and implementation, a property's get and set accessors, a Python
    /// property's getter and setter. A language server lists them among each one's
    /// references.
    fn partner_declarations(&self, target: SymbolRef) -> Vec<SymbolRef> {
        if !self.redeclarable(target) {
            return Vec::new();
        }
        let code = &self.codes[target.0 as usize];
        let s = &code.symbols[target.1 as usize];
        code.symbols
            .iter()
            .enumerate()
            .filter(|&(i, o)| i as u32 != target.1 && o.qualified_name == s.qualified_name && o.line != s.line)
            // Two functions nested in two others share a qualified name, not a scope.
            .filter(|&(i, _)| {
                self.local_to[target.0 as usize][i] == self.local_to[target.0 as usize][target.1 as usize]
            })
            .map(|(i, _)| (target.0, i as u32))
            .collect()
    }

    /// Every use resolved to `target` at or above `min_confidence`, with the definition it
    /// sits in: the edges change impact walks backwards.
    pub fn uses(&self, target: SymbolRef, min_confidence: f32) -> std::sync::Arc<Vec<Use>> {
        let key = (target, min_confidence.to_bits());
        if let Some(found) = self.uses_cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return found;
        }
        let mut found = self.uses_filtered(target, min_confidence, true);
        if DISPATCH_CONFIDENCE >= min_confidence {
            // A class body's alias (`ASSIGN = handleChildren`) names the method for the same
            // dispatch that finds the alias: it is not a caller.
            let target_symbol = self.symbol(target);
            let named = found.iter().any(|u| {
                u.file != target.0
                    || u.enclosing.is_none_or(|e| {
                        let at = &self.codes[u.file as usize].symbols[e as usize];
                        at.kind.is_callable() || at.container != target_symbol.container
                    })
            });
            found.extend(self.dispatch_uses(target, DISPATCH_CONFIDENCE, named));
            if found.is_empty() {
                found.extend(self.unnamed_method_uses(target, min_confidence));
            }
        }
        // What a script run in a child process (or a module a test loads by a computed path)
        // does as it loads, at its top level or in a module-level variable's value (not its
        // imports), the call that runs it does: each call once, as sure as the surest use it
        // stands for (a script's variable used on twelve lines is run by each call once, not
        // twelve times).
        let mut spawned: Vec<Use> = Vec::new();
        let as_it_loads = |u: &&Use| {
            !self.spawners(u.file).is_empty() && u.kind != UseKind::Import && self.runs_as_it_loads(u.file, u.enclosing)
        };
        for u in found.iter().filter(as_it_loads) {
            for s in self.spawners(u.file) {
                let confidence = u.confidence * SPAWN_CONFIDENCE;
                match spawned.iter_mut().find(|t| t.file == s.file && t.occurrence == s.occurrence) {
                    Some(t) => t.confidence = t.confidence.max(confidence),
                    None => spawned.push(Use { confidence, ..*s }),
                }
            }
        }
        found.extend(spawned.into_iter().filter(|s| s.confidence >= min_confidence));
        let found = std::sync::Arc::new(found);
        if let Ok(mut cache) = self.uses_cache.lock() {
            if cache.len() >= MAX_CACHED_USES {
                cache.clear();
            }
            cache.insert(key, std::sync::Arc::clone(&found));
        }
        found
    }

    /// Resolves every occurrence once, so that `uses` and the searches for what resolves to
    /// nothing stop resolving on demand. Worth it for a graph that answers change impact (a
    /// walk through hubs looks at every use of `new` or `poll` otherwise). A no-op when done;
    /// a caller while another thread resolves waits for it.
    pub fn resolve_all(&self) {
        // Every walk calls this: done is the common case.
        if self.is_resolved() {
            return;
        }
        // Past this, what every use resolved to would not fit in memory beside the rest: uses
        // are then resolved as they are asked for.
        if self.codes.iter().map(|c| c.occurrences.len()).sum::<usize>() > MAX_RESOLVED_OCCURRENCES {
            return;
        }
        self.resolved.get_or_init(|| {
            let mut uses: HashMap<SymbolRef, Vec<Use>> = HashMap::new();
            let mut unresolved: Vec<Vec<bool>> = self.codes.iter().map(|c| vec![false; c.occurrences.len()]).collect();
            for (name, occurrences) in &self.uses_by_name {
                let counts = self.name_counts(name);
                for &(f, o) in occurrences {
                    let occ = &self.codes[f as usize].occurrences[o as usize];
                    // Also listed under an aliased definition's name (`link_aliases`):
                    // resolved once, under its own.
                    if self.codes[f as usize].name_of(occ) != name {
                        continue;
                    }
                    let candidates = self.resolve_use(f, o);
                    unresolved[f as usize][o as usize] = candidates.is_empty();
                    let mut seen: Vec<SymbolRef> = Vec::new();
                    for c in &candidates {
                        // The first (surest) candidate per definition, as `uses_filtered` takes;
                        // and only where its prefilter would have looked.
                        if seen.contains(&c.symbol) || !self.may_mean(f, occ, c.symbol, counts) {
                            continue;
                        }
                        seen.push(c.symbol);
                        uses.entry(c.symbol).or_default().push(Use::at(f, o, occ, c.confidence, c.resolution));
                    }
                }
            }
            Resolved { uses, unresolved }
        });
    }

    /// Whether `resolve_all` has run to the end.
    pub fn is_resolved(&self) -> bool {
        self.resolved.get().is_some()
    }

    /// Whether an occurrence resolves to no definition.
    fn resolves_to_nothing(&self, f: u32, o: u32) -> bool {
        match self.resolved.get() {
            Some(resolved) => resolved.unresolved[f as usize][o as usize],
            None => self.resolve_use(f, o).is_empty(),
        }
    }

    fn uses_filtered(&self, target: SymbolRef, min_confidence: f32, prefilter: bool) -> Vec<Use> {
        if let Some(resolved) = self.resolved.get().filter(|_| prefilter) {
            let all = resolved.uses.get(&target).map(Vec::as_slice).unwrap_or(&[]);
            return all.iter().filter(|u| u.confidence >= min_confidence).copied().collect();
        }
        let name = &self.symbol(target).name;
        let Some(uses) = self.uses_by_name.get(name) else {
            return Vec::new();
        };
        let counts = self.name_counts(name);
        let mut out = Vec::new();
        for &(f, o) in uses {
            let occ = &self.codes[f as usize].occurrences[o as usize];
            if prefilter && !self.may_mean(f, occ, target, counts) {
                continue;
            }
            let candidates = self.resolve_use(f, o);
            let Some(c) = candidates.iter().find(|c| c.symbol == target).filter(|c| c.confidence >= min_confidence)
            else {
                continue;
            };
            out.push(Use::at(f, o, occ, c.confidence, c.resolution));
        }
        out
    }

    /// Uses of `name` that resolve to no definition at all: what still names a definition
    /// that is gone (deleted or renamed since the index was built).
    pub fn dangling_uses(&self, name: &str) -> Vec<Use> {
        let Some(uses) = self.uses_by_name.get(name) else {
            return Vec::new();
        };
        uses.iter()
            .filter_map(|&(f, o)| {
                let occ = &self.codes[f as usize].occurrences[o as usize];
                if !self.resolves_to_nothing(f, o) {
                    return None;
                }
                // A name only, but nothing else answers to it.
                Some(Use::at(f, o, occ, 0.5, Resolution::NameOnly))
            })
            .collect()
    }

    /// Calls through an object of unknown type (`item.as_string()`) that name `name` and
    /// resolve to nothing (nothing says the object's type, and the name is not matched by
    /// name alone). Change impact follows them at `confidence` when a method changes, since
    /// one of those objects may well be of the method's class; only in code of a language
    /// that can call one written in `language`. Cached by name.
    pub fn unresolved_member_uses(&self, name: &str, language: &str, confidence: f32) -> Vec<Use> {
        let cached = self.member_uses_cache.lock().ok().and_then(|c| c.get(name).cloned());
        let found = match cached {
            Some(found) => found,
            None => {
                let found = std::sync::Arc::new(self.find_unresolved_member_uses(name));
                if let Ok(mut cache) = self.member_uses_cache.lock() {
                    if cache.len() >= MAX_CACHED_USES {
                        cache.clear();
                    }
                    cache.insert(name.to_string(), std::sync::Arc::clone(&found));
                }
                found
            }
        };
        found
            .iter()
            .filter(|u| crate::code::can_name(&self.codes[u.file as usize].language, language))
            .map(|u| Use { confidence, ..*u })
            .collect()
    }

    fn find_unresolved_member_uses(&self, name: &str) -> Vec<Use> {
        // An instance called (`processor(data)`) is recorded as a use of `__call__` through
        // the local's value; unresolved, it says only that something was called.
        if name == "__call__" {
            return Vec::new();
        }
        let Some(uses) = self.uses_by_name.get(name) else {
            return Vec::new();
        };
        uses.iter()
            .filter_map(|&(f, o)| {
                let code = &self.codes[f as usize];
                let occ = &code.occurrences[o as usize];
                let through = code.strings.get(occ.qualifier as usize).map(String::as_str).unwrap_or("");
                // `self.m()` and `Type.m()` resolve when they can; what is left is an object.
                // Nor is a value whose type the code states (`env: Dict`): not one of ours.
                let typed = split_qualifier(through).len() == 1 && names_a_type(through);
                if occ.qualifier == 0 || typed || matches!(through, "self" | "this" | "cls" | "super") {
                    return None;
                }
                // Nor a field the class builds from a class (`self.decoder = Decoder()` in
                // `__init__`): a value of that class, here one outside the repo (h2's
                // `self.decoder.header_table_size` is hpack's, not `Settings`' property).
                let built = crate::code::extract::own_field_path(through)
                    .and_then(|field| self.own_field(f, occ, field))
                    .is_some_and(|d| super::signatures::constructed_type(&self.symbol(d).signature).is_some());
                if built {
                    return None;
                }
                // Nor a member of a module a Python file imports from outside the repo
                // (`pickle.dump(…)` after `import pickle` is no tree's `dump`), nor of what its
                // functions return (`json.loads(text).get(…)`). (A value of an outside class,
                // `self` narrowed by `isinstance(self, click.Group)`, may be an instance of the
                // repo's subclass: its `format_commands` may be the repo's override. And a
                // function imported by name may be a factory of the repo's objects.)
                let parts = split_qualifier(through);
                let module_import = |head: &str| {
                    code.imports
                        .iter()
                        .any(|i| i.spec.split('.').next() == Some(head) && i.names.iter().any(|n| n == head))
                };
                let outside = code.language == "python"
                    && parts.first().is_some_and(|&h| module_import(h) && self.imported_from_outside(f, h));
                let outside_class =
                    !through.contains('(') && parts.len() > 1 && parts.last().is_some_and(|p| names_a_type(p));
                if outside && !outside_class {
                    return None;
                }
                if !self.resolves_to_nothing(f, o) {
                    return None;
                }
                Some(Use::at(f, o, occ, 0.0, Resolution::NameOnly))
            })
            .collect()
    }

    /// The definitions that call `target`, one entry per calling definition and call line.
    pub fn callers(&self, target: SymbolRef, min_confidence: f32) -> Vec<CallEdge> {
        let name = &self.symbol(target).name;
        let Some(uses) = self.uses_by_name.get(name) else {
            return Vec::new();
        };
        let counts = self.name_counts(name);
        let mut out = Vec::new();
        for &(f, o) in uses {
            let occ = &self.codes[f as usize].occurrences[o as usize];
            if occ.kind != UseKind::Call || !self.may_mean(f, occ, target, counts) {
                continue;
            }
            let candidates = self.resolve_use(f, o);
            let Some(c) = candidates.iter().find(|c| c.symbol == target).filter(|c| c.confidence >= min_confidence)
            else {
                continue;
            };
            let (name, qualified_name, kind, line) = match occ.enclosing {
                Some(e) => {
                    let s = &self.codes[f as usize].symbols[e as usize];
                    (s.name.clone(), s.qualified_name.clone(), s.kind.name().to_string(), s.line)
                }
                None => (String::new(), String::new(), "file".to_string(), 1),
            };
            out.push(CallEdge {
                name,
                qualified_name,
                kind,
                path: self.paths[f as usize].clone(),
                line,
                call_path: self.paths[f as usize].clone(),
                call_line: occ.line,
                confidence: round(c.confidence),
                resolution: c.resolution.name().to_string(),
            });
        }
        out.sort_by(|a, b| {
            b.confidence.total_cmp(&a.confidence).then_with(|| a.path.cmp(&b.path)).then(a.call_line.cmp(&b.call_line))
        });
        out
    }

    /// What `source` calls, in call order, each call resolved to its likeliest definition.
    pub fn callees(&self, source: SymbolRef, min_confidence: f32) -> Vec<CallEdge> {
        let f = source.0;
        let code = &self.codes[f as usize];
        let s = &code.symbols[source.1 as usize];
        let mut out = Vec::new();
        for (o, occ) in code.occurrences.iter().enumerate() {
            if occ.kind != UseKind::Call || occ.line < s.line || occ.line > s.end_line {
                continue;
            }
            // Calls inside a nested definition belong to it, unless it is the source.
            if let Some(e) = occ.enclosing {
                if e != source.1 {
                    let inner = &code.symbols[e as usize];
                    if !(inner.line <= s.line && s.end_line <= inner.end_line) && inner.kind.is_callable() {
                        continue;
                    }
                }
            }
            let candidates = self.resolve_use(f, o as u32);
            let Some(c) = candidates.first().filter(|c| c.confidence >= min_confidence) else {
                continue;
            };
            let callee = self.symbol(c.symbol);
            out.push(CallEdge {
                name: callee.name.clone(),
                qualified_name: callee.qualified_name.clone(),
                kind: callee.kind.name().to_string(),
                path: self.paths[c.symbol.0 as usize].clone(),
                line: callee.line,
                call_path: self.paths[f as usize].clone(),
                call_line: occ.line,
                confidence: round(c.confidence),
                resolution: c.resolution.name().to_string(),
            });
        }
        out
    }

    /// The files that import file `f`, each with the line of its first import of it, at
    /// least `min_confidence` sure.
    pub fn importers(&self, f: u32, min_confidence: f32) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for &(importer, confidence) in &self.imported_by[f as usize] {
            if confidence < min_confidence || out.iter().any(|&(i, _)| i == importer) {
                continue;
            }
            let code = &self.codes[importer as usize];
            let line = self.imports[importer as usize]
                .iter()
                .filter(|&&(target, _, _)| target == f)
                .filter_map(|&(_, _, spec)| code.imports.get(spec as usize).map(|s| s.line))
                .min()
                .unwrap_or(1);
            out.push((importer, line));
        }
        out
    }

    /// A file's import edges both ways; `imported_by` follows importers up to `depth` hops.
    pub fn impact(&self, path: &str, depth: u32, offset: usize, limit: usize) -> Option<ImpactResponse> {
        let f = self.file_index(path)?;
        let code = &self.codes[f as usize];
        let mut imports: Vec<FileEdge> = self.imports[f as usize]
            .iter()
            .map(|&(t, confidence, _)| FileEdge {
                path: self.paths[t as usize].clone(),
                confidence: round(confidence),
                depth: 1,
            })
            .collect();
        imports.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then_with(|| a.path.cmp(&b.path)));
        let mut seen: HashMap<u32, (u32, f32)> = HashMap::new();
        let mut queue: VecDeque<(u32, u32, f32)> = VecDeque::from([(f, 0, 1.0)]);
        while let Some((file, d, confidence)) = queue.pop_front() {
            if d >= depth.max(1) {
                continue;
            }
            for &(importer, c) in &self.imported_by[file as usize] {
                if importer == f || seen.contains_key(&importer) {
                    continue;
                }
                let total = confidence * c;
                seen.insert(importer, (d + 1, total));
                queue.push_back((importer, d + 1, total));
            }
        }
        let mut imported_by: Vec<FileEdge> = seen
            .into_iter()
            .map(|(importer, (d, c))| FileEdge {
                path: self.paths[importer as usize].clone(),
                confidence: round(c),
                depth: d,
            })
            .collect();
        imported_by.sort_by(|a, b| {
            a.depth.cmp(&b.depth).then(b.confidence.total_cmp(&a.confidence)).then_with(|| a.path.cmp(&b.path))
        });
        let total = imported_by.len();
        let imported_by: Vec<FileEdge> = imported_by.into_iter().skip(offset).take(limit).collect();
        let next_offset = (offset + imported_by.len() < total).then_some(offset + imported_by.len());
        let unresolved = self.unresolved[f as usize]
            .iter()
            .map(|&i| {
                let spec = &code.imports[i as usize];
                UnresolvedImport { spec: spec.spec.clone(), line: spec.line }
            })
            .collect();
        Some(ImpactResponse {
            file: path.to_string(),
            language: code.language.clone(),
            imports,
            imported_by,
            unresolved,
            truncated: next_offset.is_some(),
            imported_by_total: total,
            next_offset,
        })
    }
}
