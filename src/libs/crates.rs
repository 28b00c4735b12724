//! The Rust crate docs tools over a cached crate's `items.json`: summary, module tree, an
//! item's docs (re-export aliases, close-match suggestions), whole code examples, and item
//! search (BM25 over names, paths, signatures and docs; fused with the embedding model's
//! ranking once the items' vectors exist).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use super::rust_items::{RustDocs, RustItem, ITEMS_FILE};
use super::{first_paragraph, CachedLibrary, LibraryManifest};
use crate::index::analyzer::{analyze, code_analyzer};
use crate::index::models::EMBEDDING_DIMS;
use crate::protocol::{
    CodeExample, CrateExamples, CrateSummary, DocdexError, ErrorCode, ItemDoc, ItemHit, ModuleCount, ModuleNode,
    ModuleTree, Result,
};

/// Item vectors kept next to `items.json`: `items.len() × EMBEDDING_DIMS` little-endian f32.
const VECTORS_FILE: &str = "item-vectors.minilm-l6.f32";
/// Members listed in an `item_doc`.
const MAX_MEMBERS: usize = 100;
/// RRF constant of the item search fusion (as the repo search's default).
const RRF_K: f32 = 10.0;

/// A crate's items, loaded and indexed for the tools.
pub struct CrateDocs {
    pub manifest: LibraryManifest,
    pub dir: PathBuf,
    pub docs: RustDocs,
    by_path: HashMap<String, usize>,
    /// The module each item sits in (index into `items`, a `mod` item).
    module_of: Vec<Option<usize>>,
    lexical: Bm25,
    vectors: RwLock<Option<Arc<Vec<f32>>>>,
    /// Set while a background job embeds the items (one job per crate).
    pub embedding: std::sync::atomic::AtomicBool,
}

impl CrateDocs {
    pub fn load(entry: &CachedLibrary) -> Result<CrateDocs> {
        let path = entry.dir.join(ITEMS_FILE);
        let bytes = std::fs::read(&path).map_err(|_| {
            let why = entry.manifest.notes.first().cloned().unwrap_or_else(|| "rustdoc JSON was not built".into());
            DocdexError::new(
                ErrorCode::LibraryUnavailable,
                format!(
                    "{}@{} has no item index ({why}); its README and crate docs are still searchable",
                    entry.manifest.name, entry.manifest.version
                ),
            )
            .with_hint("check that `cargo doc` works for this crate, and `[libs] rustdoc = true`")
        })?;
        let docs: RustDocs = serde_json::from_slice(&bytes)
            .map_err(|err| DocdexError::internal(format!("{} is unreadable: {err}", path.display())))?;
        let by_path: HashMap<String, usize> =
            docs.items.iter().enumerate().map(|(i, it)| (it.path.clone(), i)).collect();
        let modules: HashMap<&str, usize> = docs
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| it.kind == "mod")
            .map(|(i, it)| (it.path.as_str(), i))
            .collect();
        let module_of = docs
            .items
            .iter()
            .map(|item| {
                let mut path = item.path.as_str();
                while let Some((parent, _)) = path.rsplit_once("::") {
                    if let Some(&m) = modules.get(parent) {
                        return Some(m);
                    }
                    path = parent;
                }
                None
            })
            .collect();
        let lexical = Bm25::build(docs.items.iter().map(lexical_text));
        let crate_docs = CrateDocs {
            manifest: entry.manifest.clone(),
            dir: entry.dir.clone(),
            docs,
            by_path,
            module_of,
            lexical,
            vectors: RwLock::new(None),
            embedding: Default::default(),
        };
        if let Some(vectors) = crate_docs.read_vectors() {
            crate_docs.set_vectors(vectors);
        }
        Ok(crate_docs)
    }

    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    pub fn version(&self) -> &str {
        &self.manifest.version
    }

    pub fn summary(&self, resolved_by: &str) -> CrateSummary {
        let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
        for item in &self.docs.items {
            *kinds.entry(item.kind.clone()).or_default() += 1;
        }
        let mut top_modules: Vec<ModuleCount> = self
            .module_counts()
            .into_iter()
            .map(|(path, kinds)| ModuleCount { path, items: kinds.values().sum() })
            .collect();
        top_modules.sort_by(|a, b| b.items.cmp(&a.items).then_with(|| a.path.cmp(&b.path)));
        top_modules.truncate(15);
        CrateSummary {
            name: self.manifest.name.clone(),
            version: self.manifest.version.clone(),
            resolved_by: resolved_by.to_string(),
            description: first_paragraph(&self.manifest.description, 1000),
            origin: self.manifest.origin.clone(),
            items: self.docs.items.len() as u64,
            kinds,
            top_modules,
            notes: self.manifest.notes.clone(),
        }
    }

    /// Items directly in each module, by kind (methods count with their type's module).
    fn module_counts(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for item in self.docs.items.iter().filter(|it| it.kind == "mod") {
            out.entry(item.path.clone()).or_default();
        }
        for (i, item) in self.docs.items.iter().enumerate() {
            if let Some(module) = self.module_of[i] {
                *out.entry(self.docs.items[module].path.clone()).or_default().entry(item.kind.clone()).or_default() +=
                    1;
            }
        }
        out
    }

    pub fn module_tree(&self) -> ModuleTree {
        // Sorted paths are a depth-first order already (`a` < `a::b` < `a::b::c` < `b`).
        let modules = self
            .module_counts()
            .into_iter()
            .map(|(path, kinds)| ModuleNode {
                depth: path.matches("::").count() as u32,
                items: kinds.values().sum(),
                kinds,
                path,
            })
            .collect();
        ModuleTree { name: self.manifest.name.clone(), version: self.manifest.version.clone(), modules }
    }

    /// The item `requested` names: its path, a re-export of it, a re-exported parent's
    /// member, or a unique name; else `not_found` with the closest paths.
    pub fn resolve(&self, requested: &str) -> Result<usize> {
        let wanted = self.normalize(requested);
        if let Some(&i) = self.by_path.get(&wanted) {
            return Ok(i);
        }
        if let Some(i) = self.docs.aliases.get(&wanted).and_then(|c| self.by_path.get(c)) {
            return Ok(*i);
        }
        // `serde::Deserialize::deserialize`: a member of a re-exported item.
        let mut prefix = wanted.as_str();
        while let Some((parent, _)) = prefix.rsplit_once("::") {
            if let Some(canonical) = self.docs.aliases.get(parent) {
                let rewritten = format!("{canonical}{}", &wanted[parent.len()..]);
                if let Some(&i) = self.by_path.get(&rewritten) {
                    return Ok(i);
                }
            }
            prefix = parent;
        }
        // `tokio::JoinHandle`: a name only one item has.
        let last = wanted.rsplit("::").next().unwrap_or(&wanted);
        let same_name: Vec<usize> = self
            .docs
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| it.path.rsplit("::").next() == Some(last) && it.kind != "method")
            .map(|(i, _)| i)
            .collect();
        if same_name.len() == 1 {
            return Ok(same_name[0]);
        }
        let suggestions = if same_name.len() > 1 {
            same_name.iter().take(8).map(|&i| self.docs.items[i].path.clone()).collect()
        } else {
            self.suggest(&wanted)
        };
        let mut err = DocdexError::new(
            ErrorCode::NotFound,
            format!("no item `{requested}` in {} {}", self.manifest.name, self.manifest.version),
        );
        err = if suggestions.is_empty() {
            err.with_hint("search for it with crate_search, or list the modules with module_tree")
        } else {
            err.with_hint(format!("did you mean: {}", suggestions.join(", ")))
        };
        Err(err)
    }

    /// `spawn`, `::tokio::spawn()`, `tokio::select!`, `tokio.spawn` → `tokio::spawn`.
    fn normalize(&self, requested: &str) -> String {
        let crate_name = self.docs.crate_name.replace('-', "_");
        let mut path = requested.trim().trim_start_matches("::").replace('.', "::");
        for suffix in ["()", "!"] {
            if let Some(stripped) = path.strip_suffix(suffix) {
                path = stripped.to_string();
            }
        }
        if let Some(rest) = path.strip_prefix("crate::") {
            path = format!("{crate_name}::{rest}");
        }
        let first = path.split("::").next().unwrap_or("").replace('-', "_");
        if first != crate_name && !path.is_empty() {
            path = format!("{crate_name}::{path}");
        } else if first == crate_name {
            path = format!("{crate_name}{}", &path[path.find("::").unwrap_or(path.len())..]);
        }
        path
    }

    /// Paths (canonical or re-exports) closest to `wanted`: the last segment by edit
    /// distance (transpositions count once: `spwan` is one edit from `spawn`), then the
    /// whole path.
    fn suggest(&self, wanted: &str) -> Vec<String> {
        let last = wanted.rsplit("::").next().unwrap_or(wanted).to_ascii_lowercase();
        let mut scored: Vec<(usize, f64, &str)> = self
            .docs
            .items
            .iter()
            .map(|it| it.path.as_str())
            .chain(self.docs.aliases.keys().map(String::as_str))
            .filter_map(|path| {
                let name = path.rsplit("::").next().unwrap_or(path).to_ascii_lowercase();
                let distance = strsim::damerau_levenshtein(&last, &name);
                let allowed = (last.chars().count() / 3).clamp(1, 3);
                (distance <= allowed).then(|| (distance, strsim::normalized_levenshtein(wanted, path), path))
            })
            .collect();
        scored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.len().cmp(&b.2.len())));
        // One suggestion per item: the path closest to what was asked.
        let mut out: Vec<String> = Vec::new();
        let mut items_seen = std::collections::HashSet::new();
        for (_, _, path) in scored {
            let canonical = self.docs.aliases.get(path).map(String::as_str).unwrap_or(path);
            if items_seen.insert(canonical) {
                out.push(path.to_string());
            }
            if out.len() == 5 {
                break;
            }
        }
        out
    }

    pub fn item_doc(&self, requested: &str) -> Result<ItemDoc> {
        let i = self.resolve(requested)?;
        let item = &self.docs.items[i];
        let aliases: Vec<String> = self
            .docs
            .aliases
            .iter()
            .filter(|(_, canonical)| **canonical == item.path)
            .map(|(a, _)| a.clone())
            .collect();
        let prefix = format!("{}::", item.path);
        let members: Vec<String> = self
            .docs
            .items
            .iter()
            .filter(|it| it.path.starts_with(&prefix) && !it.path[prefix.len()..].contains("::"))
            .take(MAX_MEMBERS)
            .map(|it| it.path.clone())
            .collect();
        let normalized = self.normalize(requested);
        Ok(ItemDoc {
            name: self.manifest.name.clone(),
            version: self.manifest.version.clone(),
            path: item.path.clone(),
            requested: (normalized != item.path).then(|| requested.trim().to_string()),
            kind: item.kind.clone(),
            signature: item.signature.clone(),
            docs: item.docs.clone(),
            aliases,
            members,
        })
    }

    /// Whole code blocks from the docs of `item_opt` (and its members), or of every item
    /// (modules first), then whole example programs; narrowed to those mentioning every
    /// word of `query_opt`.
    pub fn examples(&self, item_opt: Option<&str>, query_opt: Option<&str>, limit: usize) -> Result<CrateExamples> {
        let mut sources: Vec<&RustItem> = Vec::new();
        match item_opt.filter(|p| !p.trim().is_empty()) {
            Some(requested) => {
                let item = &self.docs.items[self.resolve(requested)?];
                let prefix = format!("{}::", item.path);
                sources.push(item);
                sources.extend(self.docs.items.iter().filter(|it| it.path.starts_with(&prefix)));
            }
            None => {
                sources.extend(self.docs.items.iter().filter(|it| it.kind == "mod"));
                sources.extend(self.docs.items.iter().filter(|it| it.kind != "mod"));
            }
        }
        let mut examples: Vec<CodeExample> = Vec::new();
        for item in sources {
            for (title, language, code) in code_blocks(&item.docs) {
                examples.push(CodeExample { source: item.path.clone(), title, language, code });
            }
        }
        if item_opt.is_none_or(|p| p.trim().is_empty()) {
            for relative in self.manifest.docs.iter().filter(|d| d.starts_with("examples/")) {
                if let Ok(code) = std::fs::read_to_string(self.dir.join("docs").join(relative)) {
                    examples.push(CodeExample {
                        source: relative.clone(),
                        title: String::new(),
                        language: "rust".into(),
                        code,
                    });
                }
            }
        }
        if let Some(query) = query_opt.filter(|q| !q.trim().is_empty()) {
            let words: Vec<String> = query.split_whitespace().map(str::to_ascii_lowercase).collect();
            examples.retain(|e| {
                let haystack = format!("{} {} {}", e.source, e.title, e.code).to_ascii_lowercase();
                words.iter().all(|w| haystack.contains(w.as_str()))
            });
        }
        let more = examples.len().saturating_sub(limit) as u64;
        examples.truncate(limit);
        Ok(CrateExamples { name: self.manifest.name.clone(), version: self.manifest.version.clone(), examples, more })
    }

    /// BM25 ranking of the items `kind_opt` admits: (item, score), best first.
    pub fn search_lexical(&self, query: &str, kind_opt: Option<&str>, depth: usize) -> Vec<(usize, f32)> {
        let mut analyzer = code_analyzer();
        let terms = analyze(&mut analyzer, query);
        let wanted_name = query.trim().trim_end_matches("()").trim_end_matches('!').to_ascii_lowercase();
        let mut scored = self.lexical.score(&terms);
        for (i, score) in scored.iter_mut() {
            // A query that is exactly an item's name wants that item.
            let name = self.docs.items[*i].path.rsplit("::").next().unwrap_or("");
            if name.eq_ignore_ascii_case(&wanted_name) {
                *score *= 1.5;
            }
        }
        rank(scored, |i| self.admits(i, kind_opt), depth)
    }

    /// Cosine ranking of the items `kind_opt` admits, when their vectors exist.
    pub fn search_dense(
        &self,
        query_vector: &[f32],
        kind_opt: Option<&str>,
        depth: usize,
    ) -> Option<Vec<(usize, f32)>> {
        let vectors = self.vectors.read().ok()?.clone()?;
        let scored: Vec<(usize, f32)> = vectors
            .chunks_exact(EMBEDDING_DIMS)
            .enumerate()
            .map(|(i, v)| (i, v.iter().zip(query_vector).map(|(a, b)| a * b).sum::<f32>()))
            .collect();
        Some(rank(scored, |i| self.admits(i, kind_opt), depth))
    }

    fn admits(&self, i: usize, kind_opt: Option<&str>) -> bool {
        kind_opt.is_none_or(|kind| self.docs.items[i].kind == kind)
    }

    pub fn hit(&self, i: usize, score: f32) -> ItemHit {
        let item = &self.docs.items[i];
        ItemHit {
            path: item.path.clone(),
            kind: item.kind.clone(),
            signature: item.signature.clone(),
            summary: first_paragraph(&item.docs, 300),
            score,
        }
    }

    pub fn has_vectors(&self) -> bool {
        self.vectors.read().is_ok_and(|v| v.is_some())
    }

    /// What the model sees of each item: its path and kind, signature, and the first
    /// paragraph of its docs.
    pub fn embedding_inputs(&self) -> Vec<String> {
        self.docs
            .items
            .iter()
            .map(|it| format!("{} ({})\n{}\n{}", it.path, it.kind, it.signature, first_paragraph(&it.docs, 600)))
            .collect()
    }

    /// Keeps the items' vectors (one per item, in order), and writes them next to the
    /// items, atomically, for the next load.
    pub fn store_vectors(&self, vectors: Vec<Vec<f32>>) -> Result<()> {
        if vectors.len() != self.docs.items.len() || vectors.iter().any(|v| v.len() != EMBEDDING_DIMS) {
            return Err(DocdexError::internal("item vectors do not match the items"));
        }
        let flat: Vec<f32> = vectors.into_iter().flatten().collect();
        let bytes: Vec<u8> = flat.iter().flat_map(|f| f.to_le_bytes()).collect();
        let tmp = self.dir.join(format!(".{VECTORS_FILE}.tmp-{}", std::process::id()));
        std::fs::write(&tmp, &bytes)?;
        std::fs::rename(&tmp, self.dir.join(VECTORS_FILE))?;
        self.set_vectors(flat);
        Ok(())
    }

    fn read_vectors(&self) -> Option<Vec<f32>> {
        let bytes = std::fs::read(self.dir.join(VECTORS_FILE)).ok()?;
        (bytes.len() == self.docs.items.len() * EMBEDDING_DIMS * 4)
            .then(|| bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    fn set_vectors(&self, flat: Vec<f32>) {
        if let Ok(mut slot) = self.vectors.write() {
            *slot = Some(Arc::new(flat));
        }
    }
}

/// Best `depth` of `scored` among the admitted, best first.
fn rank(mut scored: Vec<(usize, f32)>, admits: impl Fn(usize) -> bool, depth: usize) -> Vec<(usize, f32)> {
    scored.retain(|&(i, s)| s > 0.0 && admits(i));
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(depth);
    scored
}

/// Reciprocal rank fusion of two rankings (equal weights).
pub fn fuse(lexical: &[(usize, f32)], dense: &[(usize, f32)], limit: usize) -> Vec<(usize, f32)> {
    let mut fused: HashMap<usize, f32> = HashMap::new();
    for ranking in [lexical, dense] {
        for (rank, &(i, _)) in ranking.iter().enumerate() {
            *fused.entry(i).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut out: Vec<(usize, f32)> = fused.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(limit);
    out
}

/// The text BM25 sees of an item: its name three times (names matter most), path,
/// signature and docs.
fn lexical_text(item: &RustItem) -> String {
    let name = item.path.rsplit("::").next().unwrap_or(&item.path);
    let docs: String = item.docs.chars().take(2000).collect();
    format!("{name} {name} {name} {} {} {docs}", item.path, item.signature)
}

/// `kind` as the tools accept it: `function` → `fn`, `module` → `mod`, … ; `None` for "any".
pub fn normalize_kind(kind: &str) -> Result<Option<String>> {
    let kind = kind.trim().to_ascii_lowercase();
    let normalized = match kind.as_str() {
        "" | "any" | "all" => return Ok(None),
        "fn" | "function" | "func" => "fn",
        "mod" | "module" => "mod",
        "method" | "struct" | "enum" | "trait" | "macro" | "type" | "const" | "static" | "union" => kind.as_str(),
        "constant" => "const",
        "type_alias" | "typealias" => "type",
        other => {
            return Err(DocdexError::invalid(format!("unknown item kind `{other}`"))
                .with_hint("use fn, method, struct, enum, trait, macro, mod, type, const, static or union"))
        }
    };
    Ok(Some(normalized.to_string()))
}

/// The fenced code blocks of Markdown docs, whole: (heading above, language, code). In Rust
/// blocks the lines rustdoc hides (`# use …;`) are shown, so the code compiles as printed.
pub fn code_blocks(docs: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut open: Option<(String, String, Vec<String>)> = None;
    for line in docs.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            Some((fence, _, lines)) => {
                if trimmed.starts_with(fence.as_str())
                    && trimmed.trim_start_matches(fence.chars().next().unwrap_or('`')).trim().is_empty()
                {
                    let (_, language, lines) = open.take().expect("open block");
                    out.push((heading.clone(), language, lines.join("\n")));
                } else {
                    lines.push(line.to_string());
                }
            }
            None => {
                if let Some(title) = trimmed.strip_prefix('#').filter(|_| !trimmed.starts_with("#[")) {
                    heading = title.trim_start_matches('#').trim().to_string();
                } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                    let fence_char = trimmed.chars().next().unwrap_or('`');
                    let fence: String = trimmed.chars().take_while(|&c| c == fence_char).collect();
                    let info = trimmed[fence.len()..].trim().to_ascii_lowercase();
                    open = Some((fence, block_language(&info), Vec::new()));
                }
            }
        }
    }
    out.into_iter()
        .map(|(title, language, code)| {
            let code = if language == "rust" { unhide_rust_lines(&code) } else { code };
            (title, language, code)
        })
        .filter(|(_, _, code)| !code.trim().is_empty())
        .collect()
}

/// Rustdoc's code block info string: no language, or rustdoc's attributes, means Rust.
fn block_language(info: &str) -> String {
    const RUSTDOC_ATTRIBUTES: &[&str] = &[
        "rust",
        "ignore",
        "no_run",
        "should_panic",
        "compile_fail",
        "edition2015",
        "edition2018",
        "edition2021",
        "edition2024",
        "test_harness",
        "standalone_crate",
    ];
    let words: Vec<&str> = info.split([',', ' ']).map(str::trim).filter(|w| !w.is_empty()).collect();
    if words.is_empty() || words.iter().all(|w| RUSTDOC_ATTRIBUTES.contains(w) || w.starts_with("ignore-")) {
        return "rust".into();
    }
    words[0].to_string()
}

fn unhide_rust_lines(code: &str) -> String {
    code.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed == "#" {
                ""
            } else if let Some(rest) = trimmed.strip_prefix("# ") {
                rest
            } else if trimmed.starts_with("##") {
                &trimmed[1..]
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A small in-memory BM25 over the items (k1 1.2, b 0.75).
struct Bm25 {
    postings: HashMap<String, Vec<(u32, u16)>>,
    lengths: Vec<u32>,
    average: f32,
}

impl Bm25 {
    fn build<'a>(texts: impl Iterator<Item = String> + 'a) -> Bm25 {
        let mut analyzer = code_analyzer();
        let mut postings: HashMap<String, Vec<(u32, u16)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (i, text) in texts.enumerate() {
            let terms = analyze(&mut analyzer, &text);
            lengths.push(terms.len() as u32);
            let mut counts: HashMap<String, u16> = HashMap::new();
            for term in terms {
                *counts.entry(term).or_default() += 1;
            }
            for (term, count) in counts {
                postings.entry(term).or_default().push((i as u32, count));
            }
        }
        let average = (lengths.iter().map(|&l| l as f64).sum::<f64>() / lengths.len().max(1) as f64) as f32;
        Bm25 { postings, lengths, average: average.max(1.0) }
    }

    fn score(&self, terms: &[String]) -> Vec<(usize, f32)> {
        let n = self.lengths.len() as f32;
        let mut scores: HashMap<usize, f32> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for term in terms {
            if !seen.insert(term) {
                continue;
            }
            let Some(list) = self.postings.get(term) else { continue };
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(doc, tf) in list {
                let tf = tf as f32;
                let norm = 1.2 * (0.25 + 0.75 * self.lengths[doc as usize] as f32 / self.average);
                *scores.entry(doc as usize).or_default() += idf * tf * 2.2 / (tf + norm);
            }
        }
        scores.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::libs::Ecosystem;

    fn demo() -> CrateDocs {
        let dir = tempfile::tempdir().unwrap().keep();
        let item = |path: &str, kind: &str, docs: &str| RustItem {
            path: path.into(),
            kind: kind.into(),
            signature: format!("pub {kind} {}", path.rsplit("::").next().unwrap()),
            docs: docs.into(),
        };
        let docs = RustDocs {
            crate_name: "tokio".into(),
            version: "1.0.0".into(),
            items: vec![
                item("tokio", "mod", "Async runtime.\n\n# Examples\n\n```\n# use tokio::task;\nlet x = 1;\n\nlet y = 2;\n```\n"),
                item("tokio::task", "mod", "Tasks."),
                item("tokio::task::spawn", "fn", "Spawns a new asynchronous task.\n\n```rust,no_run\ntokio::spawn(async {});\n```\n\n```text\noutput\n```"),
                item("tokio::task::JoinHandle", "struct", "An owned permission to join on a task."),
                item("tokio::task::JoinHandle::abort", "method", "Abort the task."),
                item("tokio::sync", "mod", "Synchronization."),
                item("tokio::sync::Mutex", "struct", "An asynchronous mutex."),
            ],
            aliases: [("tokio::spawn".to_string(), "tokio::task::spawn".to_string())].into_iter().collect(),
        };
        std::fs::write(dir.join(ITEMS_FILE), serde_json::to_vec(&docs).unwrap()).unwrap();
        let manifest = LibraryManifest {
            ecosystem: Ecosystem::Cargo,
            name: "tokio".into(),
            version: "1.0.0".into(),
            description: "An async runtime.".into(),
            origin: "rustdoc".into(),
            fetched_at: 0,
            docs: vec![],
            items: 7,
            notes: vec![],
        };
        CrateDocs::load(&CachedLibrary { dir, manifest }).unwrap()
    }

    #[test]
    fn paths_resolve_through_aliases_names_and_close_matches() {
        let docs = demo();
        let path = |p: &str| docs.item_doc(p).map(|d| d.path);
        assert_eq!(path("tokio::task::spawn").unwrap(), "tokio::task::spawn");
        assert_eq!(path("tokio::spawn").unwrap(), "tokio::task::spawn");
        assert_eq!(path("spawn()").unwrap(), "tokio::task::spawn");
        assert_eq!(path("tokio::JoinHandle").unwrap(), "tokio::task::JoinHandle");
        assert_eq!(path("crate::sync::Mutex").unwrap(), "tokio::sync::Mutex");
        let err = docs.item_doc("tokio::spwan").unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        let hint = err.hint.unwrap();
        assert!(hint.starts_with("did you mean: tokio::spawn"), "{hint}");
        let doc = docs.item_doc("tokio::spawn").unwrap();
        assert_eq!(doc.requested.as_deref(), Some("tokio::spawn"));
        assert_eq!(doc.aliases, vec!["tokio::spawn"]);
        let handle = docs.item_doc("tokio::task::JoinHandle").unwrap();
        assert_eq!(handle.members, vec!["tokio::task::JoinHandle::abort"]);
    }

    #[test]
    fn examples_are_whole_blocks_with_hidden_lines_shown() {
        let docs = demo();
        let all = docs.examples(None, None, 10).unwrap();
        assert_eq!(all.examples[0].source, "tokio");
        assert_eq!(all.examples[0].title, "Examples");
        assert_eq!(all.examples[0].code, "use tokio::task;\nlet x = 1;\n\nlet y = 2;");
        let spawn = docs.examples(Some("tokio::spawn"), None, 10).unwrap();
        let languages: Vec<&str> = spawn.examples.iter().map(|e| e.language.as_str()).collect();
        assert_eq!(languages, ["rust", "text"]);
        assert_eq!(spawn.examples[0].code, "tokio::spawn(async {});");
        let filtered = docs.examples(None, Some("LET Y"), 10).unwrap();
        assert_eq!(filtered.examples.len(), 1);
        let limited = docs.examples(None, None, 1).unwrap();
        assert_eq!((limited.examples.len(), limited.more), (1, 2));
    }

    #[test]
    fn search_ranks_names_and_docs_and_filters_by_kind() {
        let docs = demo();
        let top = |q: &str, kind: Option<&str>| {
            docs.search_lexical(q, kind, 5).first().map(|&(i, _)| docs.docs.items[i].path.clone())
        };
        assert_eq!(top("spawn", None).unwrap(), "tokio::task::spawn");
        assert_eq!(top("asynchronous mutex lock", None).unwrap(), "tokio::sync::Mutex");
        assert_eq!(top("abort a task", Some("method")).unwrap(), "tokio::task::JoinHandle::abort");
        assert_eq!(normalize_kind("function").unwrap().as_deref(), Some("fn"));
        assert!(normalize_kind("widget").is_err());
        let tree = docs.module_tree();
        let paths: Vec<(&str, u32, u64)> = tree.modules.iter().map(|m| (m.path.as_str(), m.depth, m.items)).collect();
        assert_eq!(paths, [("tokio", 0, 2), ("tokio::sync", 1, 1), ("tokio::task", 1, 3)]);
        let summary = docs.summary("requested");
        assert_eq!(summary.kinds["struct"], 2);
        assert_eq!(summary.top_modules[0].path, "tokio::task");
    }
}
