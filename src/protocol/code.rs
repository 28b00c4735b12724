//! Code intelligence answers: definitions, references, call edges, import edges, structural
//! matches. Lines are 1-based, paths relative to the repo root with `/`.

use serde::{Deserialize, Serialize};

/// One definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolInfo {
    pub name: String,
    /// The name through its containers in its file: `Router::route`, `Flask.route`.
    pub qualified_name: String,
    /// function, method, constructor, class, struct, enum, enum_member, trait, interface,
    /// type, constant, variable, field, property, module, macro.
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub column: u32,
    /// The declaration up to its body, on one line.
    pub signature: String,
    /// The enclosing type, impl, class or module ("" at top level).
    pub container: String,
    pub language: String,
    /// public, internal, protected or private.
    pub visibility: String,
    /// First line of its doc comment or docstring ("" when none).
    pub doc: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolsResponse {
    pub symbols: Vec<SymbolInfo>,
    /// Matches in all, before `offset` and `limit`.
    pub total: usize,
    /// Where the next page starts, when there is one.
    pub next_offset: Option<usize>,
}

/// One use of a symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub path: String,
    pub line: u32,
    pub column: u32,
    /// call, type, read or import; `declaration`: another declaration of the same symbol in its
    /// file (an overload signature, the other accessor of a property).
    pub kind: String,
    /// 0–1: how sure it is that this use means the symbol. A name-only match is never above 0.5.
    pub confidence: f32,
    /// How it was resolved: local_scope, same_file, import, same_package, qualified_path,
    /// name_only.
    pub resolution: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferencesResponse {
    pub symbol: SymbolInfo,
    /// Highest confidence first.
    pub references: Vec<Reference>,
    pub total: usize,
    pub next_offset: Option<usize>,
    /// Uses below `min_confidence` that were left out (name-only matches, by default): lower
    /// `min_confidence` to see them.
    pub below_min_confidence: usize,
    /// Other definitions the name could have meant (when `path`/`line` did not pick one).
    pub alternatives: Vec<SymbolInfo>,
}

/// A call edge: for callers, `name`/`path`/`line` are the calling definition; for callees, the
/// called one. `call_path`/`call_line` are where the call is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallEdge {
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub call_path: String,
    pub call_line: u32,
    pub confidence: f32,
    pub resolution: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallersResponse {
    pub symbol: SymbolInfo,
    pub callers: Vec<CallEdge>,
    pub total: usize,
    pub next_offset: Option<usize>,
    /// Calls below `min_confidence` that were left out.
    pub below_min_confidence: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalleesResponse {
    pub symbol: SymbolInfo,
    pub callees: Vec<CallEdge>,
    pub total: usize,
    pub next_offset: Option<usize>,
    /// Calls below `min_confidence` that were left out.
    pub below_min_confidence: usize,
}

/// A file on the other end of an import edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEdge {
    pub path: String,
    pub confidence: f32,
    /// 1 for a direct edge; more through files in between (`depth` > 1).
    pub depth: u32,
}

/// An import that names no file of the repo (another package, the standard library, or a
/// path this resolution does not follow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnresolvedImport {
    pub spec: String,
    pub line: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImpactResponse {
    pub file: String,
    pub language: String,
    pub imports: Vec<FileEdge>,
    pub imported_by: Vec<FileEdge>,
    pub unresolved: Vec<UnresolvedImport>,
    /// Whether `imported_by` holds only a page of the importers (their total is
    /// `imported_by_total`; the next page starts at `next_offset`).
    pub truncated: bool,
    pub imported_by_total: usize,
    /// Where the next page of `imported_by` starts, when there is one.
    pub next_offset: Option<usize>,
}

/// A structural query's match: one capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AstMatch {
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub column: u32,
    /// The capture's name in the query (without `@`).
    pub capture: String,
    /// The captured text, cut to its first 200 characters.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AstQueryResponse {
    pub matches: Vec<AstMatch>,
    pub files_searched: usize,
    /// The match or time limit stopped the search before every file was read.
    pub truncated: bool,
    /// Where the next page of matches starts, when there is one.
    pub next_offset: Option<usize>,
}
