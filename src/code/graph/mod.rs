//! The repo-wide code graph: every file's facts, indexed by name, with imports resolved to
//! files and uses resolved to definitions on demand.
//!
//! How one use is resolved (scope, qualifier, import, package, then name alone) is in
//! `resolution`; this file holds the graph, its lookups and the queries over resolved uses.

mod resolution;

use std::collections::{HashMap, HashSet, VecDeque};

use super::resolve::Resolver;
use super::{FileCode, Occurrence, Symbol, SymbolKind, UseKind};
use crate::protocol::code::{CallEdge, FileEdge, ImpactResponse, Reference, SymbolInfo, UnresolvedImport};

/// A definition: file index and symbol index in that file.
pub type SymbolRef = (u32, u32);

/// Names defined in more places than this are not matched by name alone: `new`, `get`,
/// `parse` would drown every answer.
const MAX_NAME_ONLY_CANDIDATES: usize = 5;
/// Re-exports followed from an import to the definition, at most.
const MAX_REEXPORT_HOPS: usize = 4;
/// How sure a base class's dispatch by a name known only at run time (`getattr(self, name)`)
/// is to run one given method of a subclass: it runs one of them, which one the data says.
const DISPATCH_CONFIDENCE: f32 = 0.5;

/// Definitions of one name, by what could match them by name alone.
#[derive(Debug, Clone, Copy)]
struct NameCounts {
    all: usize,
    top_level: usize,
    members: usize,
}

/// Languages where a bare name inside a method may be a member of its type.
fn implicit_members(language: &str) -> bool {
    matches!(language, "java" | "csharp" | "cpp" | "kotlin" | "scala" | "swift" | "ruby")
}

/// How a use was tied to a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resolution {
    LocalScope,
    SameFile,
    Import,
    SamePackage,
    QualifiedPath,
    NameOnly,
}

impl Resolution {
    pub fn name(self) -> &'static str {
        match self {
            Resolution::LocalScope => "local_scope",
            Resolution::SameFile => "same_file",
            Resolution::Import => "import",
            Resolution::SamePackage => "same_package",
            Resolution::QualifiedPath => "qualified_path",
            Resolution::NameOnly => "name_only",
        }
    }
}

/// One resolved use of a definition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Use {
    pub file: u32,
    pub occurrence: u32,
    /// The definition (index in its file) the use sits in; `None` at file level.
    pub enclosing: Option<u32>,
    pub line: u32,
    pub kind: UseKind,
    pub confidence: f32,
    pub resolution: Resolution,
}

impl Use {
    /// Occurrence `o` of file `f` as a use of what it resolved to.
    fn at(f: u32, o: u32, occ: &Occurrence, confidence: f32, resolution: Resolution) -> Use {
        Use { file: f, occurrence: o, enclosing: occ.enclosing, line: occ.line, kind: occ.kind, confidence, resolution }
    }
}

/// A candidate definition for a use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub symbol: SymbolRef,
    pub resolution: Resolution,
    pub confidence: f32,
}

pub struct CodeGraph {
    paths: Vec<String>,
    codes: Vec<FileCode>,
    path_index: HashMap<String, u32>,
    defs_by_name: HashMap<String, Vec<SymbolRef>>,
    uses_by_name: HashMap<String, Vec<(u32, u32)>>,
    /// The names of `uses_by_name` that are dispatches by a name computed at run time
    /// (`DISPATCH_NAME`, alone or followed by the name's constant prefix).
    dispatch_names: Vec<String>,
    /// Per file: (target file, confidence, import spec index).
    imports: Vec<Vec<(u32, f32, u32)>>,
    imported_by: Vec<Vec<(u32, f32)>>,
    /// Per file: indices of import specs that name no repo file.
    unresolved: Vec<Vec<u32>>,
    /// Per file: a name an import binds → the files it names (empty: names something outside
    /// the repo).
    bindings: Vec<HashMap<String, Vec<u32>>>,
    /// Per file: files whose every top-level name is visible (whole-module and wildcard
    /// imports, includes and their source twins).
    open_imports: Vec<Vec<u32>>,
    /// Per file: files of the same package, namespace or Go folder.
    package_mates: Vec<Vec<u32>>,
    /// Per file and symbol: top level or directly inside a namespace/module.
    namespace_level: Vec<Vec<bool>>,
    /// Per file and symbol: the innermost function whose body holds the definition (a
    /// definition local to it, which only code inside that function can name).
    local_to: Vec<Vec<Option<u32>>>,
    /// Per Rust file: the root file of its crate (`u32::MAX`: none, or not Rust).
    crate_of: Vec<u32>,
    resolver: Resolver,
    /// Uses already resolved per definition and floor: change impact walks the same hubs
    /// again and again, and the graph lives until the index changes.
    uses_cache: std::sync::Mutex<UsesCache>,
    /// `unresolved_member_uses` by name (confidence aside): hubs are walked again and again.
    member_uses_cache: std::sync::Mutex<HashMap<String, std::sync::Arc<Vec<Use>>>>,
    /// Every use resolved once (`resolve_all`, in the background after a build): answers the
    /// same as resolving on demand, without looking at every occurrence of a hub's name.
    resolved: std::sync::OnceLock<Resolved>,
    /// Per file: the SHA-256 of the text its facts were extracted from ("" unknown), so a
    /// diff whose side has that text reads the facts instead of parsing again.
    content_hashes: Vec<String>,
}

/// Every occurrence resolved: per definition its uses (in `uses_by_name` order, as
/// `uses_filtered` finds them, at any confidence), and per file which occurrences resolve to
/// nothing.
struct Resolved {
    uses: HashMap<SymbolRef, Vec<Use>>,
    unresolved: Vec<Vec<bool>>,
}

/// Resolved uses by (definition, the floor's bits).
type UsesCache = HashMap<(SymbolRef, u32), std::sync::Arc<Vec<Use>>>;

/// Definitions whose uses the cache holds at most (it starts over past this).
const MAX_CACHED_USES: usize = 50_000;

/// Most occurrences `resolve_all` resolves ahead (tokio's source has 124,000; each resolved
/// use takes 28 bytes).
const MAX_RESOLVED_OCCURRENCES: usize = 4_000_000;

/// How sure another declaration of a symbol in its own file (an overload, the other accessor)
/// is one of its references (`partner_declarations`).
const PARTNER_CONFIDENCE: f32 = 0.95;

/// Most a use's confidence grows to when declarations of one symbol pool theirs.
const MAX_MERGED_CONFIDENCE: f32 = 0.95;

/// For each of a file's definitions, the innermost function (or method) whose span holds it.
/// Bash is left out: a function defined when another runs is global from then on.
fn local_scopes(code: &FileCode) -> Vec<Option<u32>> {
    let mut out = vec![None; code.symbols.len()];
    if code.language == "bash" {
        return out;
    }
    let mut order: Vec<u32> = (0..code.symbols.len() as u32).collect();
    order.sort_by_key(|&i| {
        let s = &code.symbols[i as usize];
        (s.line, std::cmp::Reverse(s.end_line), i)
    });
    let mut open: Vec<u32> = Vec::new();
    for i in order {
        let s = &code.symbols[i as usize];
        while open.last().is_some_and(|&o| code.symbols[o as usize].end_line < s.end_line) {
            open.pop();
        }
        out[i as usize] = open.last().copied();
        if s.kind.is_callable() && s.end_line > s.line {
            open.push(i);
        }
    }
    out
}

/// Whether a qualifier part is written as a type's name (`Command`, `_OptionParser`), as the
/// extractor leaves a receiver whose type the code states.
fn names_a_type(part: &str) -> bool {
    part.trim_start_matches('_').starts_with(char::is_uppercase)
}

fn split_qualifier(q: &str) -> Vec<&str> {
    // A receiver that is a call or an index (`Cart([1, 2]).total()`, `items[0].name`) is
    // named by what is called or indexed: separators inside brackets do not split, and a
    // part ends where its arguments start.
    let mut parts = Vec::new();
    let (mut depth, mut start, mut cut) = (0usize, 0usize, None::<usize>);
    for (i, b) in q.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => {
                if depth == 0 && cut.is_none() && i > start {
                    cut = Some(i);
                }
                depth += 1;
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b':' | b'.' | b'\\' | b'>' | b'-' if depth == 0 => {
                parts.push(&q[start..cut.unwrap_or(i)]);
                (start, cut) = (i + 1, None);
            }
            _ => {}
        }
    }
    parts.push(&q[start..cut.unwrap_or(q.len())]);
    parts
        .into_iter()
        .map(|s| s.trim_start_matches(['@', '$', '&', '*', '(']).trim_end_matches(['?', '!', ')']))
        .filter(|s| !s.is_empty())
        .collect()
}

impl CodeGraph {
    /// Builds the graph. `configs` are the repo's `go.mod`, `Cargo.toml`, `tsconfig*.json` and
    /// `package.json` texts by path, for import resolution.
    pub fn build(mut files: HashMap<String, FileCode>, configs: &HashMap<String, String>) -> CodeGraph {
        for (path, code) in files.iter_mut() {
            crate::code::extract::name_default_export(code, path);
        }
        let resolver = Resolver::new(&files, configs);
        let mut entries: Vec<(String, FileCode)> = files.into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let (paths, codes): (Vec<String>, Vec<FileCode>) = entries.into_iter().unzip();
        let path_index: HashMap<String, u32> = paths.iter().enumerate().map(|(i, p)| (p.clone(), i as u32)).collect();
        let mut defs_by_name: HashMap<String, Vec<SymbolRef>> = HashMap::new();
        let mut uses_by_name: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        for (f, code) in codes.iter().enumerate() {
            for (s, symbol) in code.symbols.iter().enumerate() {
                defs_by_name.entry(symbol.name.clone()).or_default().push((f as u32, s as u32));
            }
            for (o, occurrence) in code.occurrences.iter().enumerate() {
                uses_by_name.entry(code.name_of(occurrence).to_string()).or_default().push((f as u32, o as u32));
            }
        }
        let n = paths.len();
        let local_to: Vec<Vec<Option<u32>>> = codes.iter().map(local_scopes).collect();
        let namespace_level = codes
            .iter()
            .zip(&local_to)
            .map(|(code, local_to)| {
                let modules: HashSet<&str> = code
                    .symbols
                    .iter()
                    .filter(|s| s.kind == SymbolKind::Module)
                    .map(|s| s.qualified_name.as_str())
                    .collect();
                // Lua has no classes: a module's functions hang off the table it returns.
                let tables_are_modules = code.language == "lua";
                code.symbols
                    .iter()
                    .zip(local_to)
                    .map(|(s, local_to)| {
                        local_to.is_none()
                            && (s.container.is_empty()
                                || tables_are_modules
                                || modules.contains(s.container.as_str())
                                || s.container == code.package)
                    })
                    .collect()
            })
            .collect();
        let crate_of = paths
            .iter()
            .zip(&codes)
            .map(|(path, code)| {
                (code.language == "rust")
                    .then(|| resolver.rust_crate_root(path))
                    .flatten()
                    .and_then(|root| path_index.get(&root).copied())
                    .unwrap_or(u32::MAX)
            })
            .collect();
        let mut graph = CodeGraph {
            namespace_level,
            local_to,
            crate_of,
            paths,
            codes,
            path_index,
            defs_by_name,
            dispatch_names: uses_by_name
                .keys()
                .filter(|k| k.starts_with(crate::code::DISPATCH_NAME))
                .cloned()
                .collect(),
            uses_by_name,
            imports: vec![Vec::new(); n],
            imported_by: vec![Vec::new(); n],
            unresolved: vec![Vec::new(); n],
            bindings: vec![HashMap::new(); n],
            open_imports: vec![Vec::new(); n],
            package_mates: vec![Vec::new(); n],
            resolver,
            uses_cache: std::sync::Mutex::new(HashMap::new()),
            member_uses_cache: std::sync::Mutex::new(HashMap::new()),
            resolved: std::sync::OnceLock::new(),
            content_hashes: vec![String::new(); n],
        };
        graph.link();
        graph
    }

    fn link(&mut self) {
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

    pub fn file_count(&self) -> usize {
        self.paths.len()
    }

    pub fn symbol_count(&self) -> usize {
        self.codes.iter().map(|c| c.symbols.len()).sum()
    }

    pub fn path(&self, file: u32) -> &str {
        &self.paths[file as usize]
    }

    pub fn symbol(&self, r: SymbolRef) -> &Symbol {
        &self.codes[r.0 as usize].symbols[r.1 as usize]
    }

    pub fn info(&self, r: SymbolRef) -> SymbolInfo {
        let s = self.symbol(r);
        SymbolInfo {
            name: s.name.clone(),
            qualified_name: s.qualified_name.clone(),
            kind: s.kind.name().to_string(),
            path: self.paths[r.0 as usize].clone(),
            line: s.line,
            end_line: s.end_line,
            column: s.column,
            signature: s.signature.clone(),
            container: s.container.clone(),
            language: self.codes[r.0 as usize].language.clone(),
            visibility: s.visibility.name().to_string(),
            doc: s.doc.clone(),
        }
    }

    pub fn file_index(&self, path: &str) -> Option<u32> {
        self.path_index.get(path).copied()
    }

    /// Every definition, in path order: for pattern searches.
    pub fn all_symbols(&self) -> impl Iterator<Item = SymbolRef> + '_ {
        self.codes.iter().enumerate().flat_map(|(f, c)| (0..c.symbols.len()).map(move |s| (f as u32, s as u32)))
    }

    /// Definitions named `name`: a plain name, or qualified (`Router::route`, `Flask.route`,
    /// `httpx.Client.send`) matched against the end of the qualified name and container.
    pub fn lookup(&self, name: &str) -> Vec<SymbolRef> {
        let parts = split_qualifier(name);
        let Some(&last) = parts.last() else {
            return Vec::new();
        };
        let Some(candidates) = self.defs_by_name.get(last) else {
            return Vec::new();
        };
        if parts.len() == 1 {
            return candidates.clone();
        }
        let wanted = &parts[..parts.len() - 1];
        let mut found: Vec<SymbolRef> = candidates
            .iter()
            .copied()
            .filter(|&r| {
                let s = self.symbol(r);
                let mut context = split_qualifier(&s.container);
                // A module path from the file's place: `src/extract/mod.rs` → extract.
                let path = &self.paths[r.0 as usize];
                let mut path_parts: Vec<&str> = path
                    .trim_end_matches(|c: char| c != '.')
                    .trim_end_matches('.')
                    .split('/')
                    .filter(|p| !matches!(*p, "src" | "lib" | "mod" | "index" | "__init__" | "init"))
                    .collect();
                if !self.codes[r.0 as usize].package.is_empty() {
                    path_parts = split_qualifier(&self.codes[r.0 as usize].package);
                }
                path_parts.append(&mut context);
                ends_with(&path_parts, wanted)
            })
            .collect();
        // Written with the language's own separator (`Cart::add` is Rust's or C++'s, not
        // Python's `Cart.add`): those first.
        found.sort_by_key(|&r| !self.symbol(r).qualified_name.ends_with(name));
        found
    }

    /// Orders definitions for "which one is meant": exact types and functions before fields
    /// and variables, public first, shallow paths first.
    pub fn rank_definitions(&self, refs: &mut [SymbolRef]) {
        refs.sort_by_key(|&r| {
            let s = self.symbol(r);
            let kind_rank = match s.kind {
                SymbolKind::Struct
                | SymbolKind::Class
                | SymbolKind::Trait
                | SymbolKind::Interface
                | SymbolKind::Enum => 0,
                SymbolKind::Type | SymbolKind::Module => 1,
                SymbolKind::Function | SymbolKind::Macro => 2,
                SymbolKind::Method | SymbolKind::Constructor => 3,
                SymbolKind::Constant => 4,
                _ => 5,
            };
            let visibility = match s.visibility {
                super::Visibility::Public => 0,
                super::Visibility::Internal => 1,
                super::Visibility::Protected => 2,
                super::Visibility::Private => 3,
            };
            let path = &self.paths[r.0 as usize];
            let test_like = (path.contains("test") || path.contains("example") || path.contains("bench")) as u8;
            (test_like, visibility, kind_rank, path.matches('/').count(), path.clone(), s.line)
        });
    }

    /// The definition `name` means at `path`:`line`: one defined there (the innermost whose
    /// span holds the line), or what a use there resolves to.
    pub fn pick(&self, name: &str, path: &str, line: u32) -> Option<SymbolRef> {
        let f = self.file_index(path)?;
        let code = &self.codes[f as usize];
        let last = split_qualifier(name).last().copied().unwrap_or(name);
        let defined = code
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name == last && s.line <= line && line <= s.end_line)
            .min_by_key(|(_, s)| s.end_line - s.line)
            .map(|(i, _)| (f, i as u32));
        if defined.is_some() {
            return defined;
        }
        let use_here = code.occurrences.iter().enumerate().find(|(_, o)| code.name_of(o) == last && o.line == line);
        let (o, _) = use_here?;
        self.resolve_use(f, o as u32).first().map(|c| c.symbol)
    }

    /// The definitions a use may mean, most likely first.
    pub fn resolve_use(&self, f: u32, o: u32) -> Vec<Candidate> {
        let code = &self.codes[f as usize];
        let occ = &code.occurrences[o as usize];
        let Some(all) = self.defs_by_name.get(code.name_of(occ)) else {
            return Vec::new();
        };
        // A Go file's `x.select` is not tomlkit's Python `select`: a name means a definition
        // only in code that can call it.
        let foreign = |r: &SymbolRef| !crate::code::can_name(&code.language, &self.codes[r.0 as usize].language);
        let own: Vec<SymbolRef>;
        let all = if all.iter().any(foreign) {
            own = all.iter().filter(|r| !foreign(r)).copied().collect();
            own.as_slice()
        } else {
            all.as_slice()
        };
        let mut out =
            if occ.qualifier == 0 { self.resolve_bare(f, occ, all) } else { self.resolve_qualified(f, occ, all) };
        self.merge_redeclarations(&mut out);
        if occ.kind == UseKind::Call {
            self.keep_callables(&mut out);
        }
        out.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
        out
    }

    /// Whether `r` is a declaration its file may repeat for one symbol: a function, method or
    /// property in a language with overload signatures, get/set accessors or property setters.
    fn redeclarable(&self, r: SymbolRef) -> bool {
        let code = &self.codes[r.0 as usize];
        let kind = code.symbols[r.1 as usize].kind;
        matches!(code.language.as_str(), "python" | "typescript" | "tsx" | "javascript")
            && (kind.is_callable() || kind == SymbolKind::Property)
    }

    /// The first definition of a name a Python file or class defines again (`@plain.setter
    /// def plain` → the getter; `@overload def prompt(…)` twice, then the body): the one its
    /// uses resolve to (`merge_redeclarations`).
    pub fn first_definition(&self, definition: SymbolRef) -> Option<SymbolRef> {
        let s = self.symbol(definition);
        let code = &self.codes[definition.0 as usize];
        if code.language != "python" || !self.redeclarable(definition) {
            return None;
        }
        let scope = self.local_to[definition.0 as usize][definition.1 as usize];
        let first = (0..code.symbols.len()).find(|&o| {
            let other = &code.symbols[o];
            other.qualified_name == s.qualified_name
                && other.line < s.line
                && self.local_to[definition.0 as usize][o] == scope
                && self.redeclarable((definition.0, o as u32))
        })?;
        Some((definition.0, first as u32))
    }

    /// A call means a method, not a field of the same name (Rust's `fn index(self, …)` beside
    /// its `index` field, a getter named after what it reads): when a call's candidates hold
    /// both, the fields drop out and the methods share their confidence.
    fn keep_callables(&self, candidates: &mut Vec<Candidate>) {
        let is_field = |c: &Candidate| self.symbol(c.symbol).kind == SymbolKind::Field;
        let fields = candidates.iter().filter(|c| is_field(c)).count();
        if fields == 0 || fields == candidates.len() {
            return;
        }
        // The candidates split one use's confidence; what the fields held goes to the
        // methods (a name-only split stays within its own total, below 0.5).
        let total: f32 = candidates.iter().map(|c| c.confidence).sum();
        candidates.retain(|c| !is_field(c));
        let share = (total / candidates.len() as f32).min(MAX_MERGED_CONFIDENCE);
        for c in candidates.iter_mut() {
            c.confidence = c.confidence.max(share);
        }
    }

    /// Several declarations of one symbol in one file (a TypeScript function's overloads, a
    /// property's get and set accessors, a Python property's getter and setter) are one
    /// thing a use means, not rivals splitting the confidence: each gets the sum of theirs.
    /// A Python class that defines a member again has one attribute of that name, and its
    /// uses mean the first definition, as a Python language server answers.
    fn merge_redeclarations(&self, candidates: &mut Vec<Candidate>) {
        if candidates.len() < 2 {
            return;
        }
        let group_of = |c: &Candidate| {
            let scope = self.local_to[c.symbol.0 as usize][c.symbol.1 as usize];
            self.redeclarable(c.symbol).then_some((c.symbol.0, self.symbol(c.symbol).qualified_name.as_str(), scope))
        };
        let groups: Vec<Option<(u32, &str, Option<u32>)>> = candidates.iter().map(group_of).collect();
        // Every use is resolved through here: most have no two declarations of one symbol.
        let shared = groups.iter().enumerate().any(|(i, g)| g.is_some() && groups[i + 1..].contains(g));
        if !shared {
            return;
        }
        let mut merged: Vec<Candidate> = Vec::with_capacity(candidates.len());
        for (i, c) in candidates.iter().enumerate() {
            let Some(group) = groups[i] else {
                merged.push(*c);
                continue;
            };
            let members: Vec<usize> = (0..candidates.len()).filter(|&j| groups[j] == Some(group)).collect();
            if members.len() < 2 {
                merged.push(*c);
                continue;
            }
            let python = self.codes[group.0 as usize].language == "python";
            let first = members.iter().min_by_key(|&&j| self.symbol(candidates[j].symbol).line).copied();
            if python && first != Some(i) {
                continue;
            }
            let sum: f32 = members.iter().map(|&j| candidates[j].confidence).sum();
            let best = members.iter().map(|&j| candidates[j].confidence).fold(0.0, f32::max);
            merged.push(Candidate { confidence: sum.min(MAX_MERGED_CONFIDENCE).max(best), ..*c });
        }
        *candidates = merged;
    }

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
        }
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
                if !self.resolves_to_nothing(f, o) {
                    return None;
                }
                Some(Use::at(f, o, occ, 0.0, Resolution::NameOnly))
            })
            .collect()
    }

    /// The definitions of `path` with this kind and qualified name.
    pub fn defined_in(&self, path: &str, qualified_name: &str, kind: SymbolKind) -> Vec<SymbolRef> {
        let Some(f) = self.file_index(path) else { return Vec::new() };
        self.codes[f as usize]
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.qualified_name == qualified_name && s.kind == kind)
            .map(|(i, _)| (f, i as u32))
            .collect()
    }

    /// A file's facts.
    pub fn code(&self, file: u32) -> &FileCode {
        &self.codes[file as usize]
    }

    /// Records the hash of the text each file's facts came from (`path` → SHA-256 hex, as the
    /// index records files).
    pub fn set_content_hashes(&mut self, hash_of: impl Fn(&str) -> Option<String>) {
        for (f, path) in self.paths.iter().enumerate() {
            self.content_hashes[f] = hash_of(path).unwrap_or_default();
        }
    }

    /// The facts of `path` when they were extracted from exactly `text` read as `language`:
    /// a diff's side that is what the index holds (the base before an edit the watcher has
    /// not seen, the edit after it has) needs no parse.
    pub fn indexed_code(&self, path: &str, language: &str, text: &str) -> Option<&FileCode> {
        let f = self.file_index(path)? as usize;
        let hash = &self.content_hashes[f];
        let code = &self.codes[f];
        (!hash.is_empty() && code.language == language && *hash == crate::ingest::sha256_hex(text.as_bytes()))
            .then_some(code)
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

    /// A file's import edges both ways; `imported_by` follows importers up to `depth` hops.
    pub fn impact(&self, path: &str, depth: u32, limit: usize) -> Option<ImpactResponse> {
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
        imported_by.truncate(limit);
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
            truncated: total > limit,
            imported_by_total: total,
        })
    }

    /// Files per language, for `status`.
    pub fn languages(&self) -> Vec<(String, usize)> {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for code in &self.codes {
            *counts.entry(code.language.as_str()).or_default() += 1;
        }
        let mut out: Vec<(String, usize)> = counts.into_iter().map(|(l, n)| (l.to_string(), n)).collect();
        out.sort();
        out
    }
}

fn ends_with(haystack: &[&str], needle: &[&str]) -> bool {
    haystack.len() >= needle.len() && haystack[haystack.len() - needle.len()..] == *needle
}

fn round(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}
