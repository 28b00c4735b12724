//! The repo-wide code graph: every file's facts, indexed by name, with imports resolved to
//! files and uses resolved to definitions on demand.
//!
//! How one use is resolved (scope, qualifier, import, package, then name alone) is in
//! `resolution`; the queries over resolved uses (references, callers, impact) in `uses`; this file
//! holds the graph and its lookups.

mod definitions;
mod guards;
mod interfaces;
mod links;
mod resolution;
mod signatures;
mod types;
mod uses;

pub(crate) use signatures::{declared_type, return_type};

use std::collections::{HashMap, HashSet};

use super::resolve::Resolver;
use super::test_files;
use super::{FileCode, Occurrence, Symbol, SymbolKind, UseKind};
use crate::protocol::code::SymbolInfo;

/// A definition: file index and symbol index in that file.
pub type SymbolRef = (u32, u32);

/// Names defined in more places than this are not matched by name alone: `new`, `get`,
/// `parse` would drown every answer.
const MAX_NAME_ONLY_CANDIDATES: usize = 5;
/// Definitions of a member's name looked at for a guess by name before its trait's or
/// interface's implementations are counted as one (beyond it, a name like `new` is left).
const MAX_DISPATCHED_CANDIDATES: usize = 32;
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
    /// Rust: the traits each type implements (by name), read from the `impl Trait for Type`
    /// blocks' methods: a value of the type has the traits' provided methods too.
    implemented_traits: HashMap<String, Vec<String>>,
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
    /// Per file: the definitions a use resolves to through names bound under an alias on the
    /// way (`link_aliases`), by the use's (qualifier, name) string indices.
    aliases: Vec<HashMap<(u32, u32), Vec<SymbolRef>>>,
    /// The bare ones of `aliases`, by name (a call's callee is text, `string().min(5)`).
    aliased_names: Vec<HashMap<String, Vec<SymbolRef>>>,
    /// Per file: a type known here by another name → its own (`Handlebars` in a test that
    /// imports it from a `lib.rs` with `pub use registry::Registry as Handlebars`), so that
    /// `Handlebars::new()` and a value of it have `Registry`'s members.
    type_aliases: Vec<HashMap<String, String>>,
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
    /// Python module-level variables by the class of the instance they hold
    /// (`variables_holding`), read once: a walk asks at each `__call__` it meets.
    held_instances: std::sync::OnceLock<HashMap<String, Vec<SymbolRef>>>,
    /// `rust_defaulted_types`, read once: a walk asks at each foreign type's dispatch.
    defaulted_types: std::sync::OnceLock<HashSet<String>>,
    /// `off_by_default`, read once.
    off_attributes: std::sync::OnceLock<HashSet<String>>,
    /// The keywords Python calls outside the tests pass, by callee (`FileCode::passed`), and
    /// the most arguments they pass by place to each (`FileCode::passed_by_place`), read once.
    #[allow(clippy::type_complexity)]
    passed_outside_tests: std::sync::OnceLock<(HashSet<(String, String)>, HashMap<String, u32>)>,
    /// What turns on a Rust field a literal leaves off, by the field's name (`guard_enablers`).
    rust_fields: std::sync::OnceLock<HashMap<String, guards::Enablers>>,
    /// What uses a Rust constant some guard compares with, otherwise (`guard_enablers`).
    rust_constants: std::sync::OnceLock<HashMap<String, guards::Enablers>>,
    /// Per file: the SHA-256 of the text its facts were extracted from ("" unknown), so a
    /// diff whose side has that text reads the facts instead of parsing again.
    content_hashes: Vec<String>,
    /// The definitions the repo's default build leaves out (a Rust module under a
    /// `#[cfg(feature)]` that is off, a Go file for another platform), by file and one by one
    /// (`set_not_built`): a name that also means a built definition means that one.
    files_not_built: HashSet<u32>,
    not_built: HashSet<SymbolRef>,
    /// Per file: whether the JavaScript/TypeScript test runner its package configures runs it
    /// as a test file (`None`: no runner known, or another language).
    runner_tests: Vec<Option<bool>>,
    /// Per Go method, the methods of the repo's interfaces it implements (`go_implementations`).
    interface_methods: HashMap<SymbolRef, Vec<SymbolRef>>,
    /// Per script another file runs in a child process (`FileCode::spawned`), or per fixture a
    /// test file loads by a computed path (`FileCode::computed_loads`), the calls that run it:
    /// what the file does as it loads is theirs.
    spawners: HashMap<u32, Vec<Use>>,
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

/// How sure a definition local to a function is to run when the function does
/// (`CodeGraph::holder_use`), or a method of an object a variable holds where the variable is
/// used: most are called there or by what it is handed to, some only on a branch.
pub(crate) const HELD_CONFIDENCE: f32 = 0.8;

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
        let mut implemented_traits: HashMap<String, Vec<String>> = HashMap::new();
        for (f, code) in codes.iter().enumerate() {
            for symbol in code.symbols.iter().filter(|s| !s.implements.is_empty() && code.language == "rust") {
                let Some(&ty) = split_qualifier(&symbol.container).last() else { continue };
                let traits = implemented_traits.entry(ty.to_string()).or_default();
                if !traits.contains(&symbol.implements) {
                    traits.push(symbol.implements.clone());
                }
            }
            // (Asked only of a file that defines macros: the question scans the file.)
            let has_macros = code.language == "rust" && code.symbols.iter().any(|m| m.kind == SymbolKind::Macro);
            for (s, symbol) in code.symbols.iter().enumerate() {
                // A function written in a macro's body is called where the macro's calls
                // define it (`macro_instances`), never by its name in the macro.
                if has_macros && macro_template_of(code, symbol).is_some() {
                    continue;
                }
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
        let js_tests = test_files::JsTests::read(configs);
        let py_tests = test_files::PyTests::read(configs);
        let runner_tests = paths
            .iter()
            .zip(&codes)
            .map(|(path, code)| match code.language.as_str() {
                "javascript" | "typescript" | "tsx" => js_tests.runs(path),
                "python" => py_tests.collects(path),
                _ => None,
            })
            .collect();
        let spawners = spawn_sites(&paths, &codes, &path_index);
        let mut graph = CodeGraph {
            runner_tests,
            interface_methods: HashMap::new(),
            spawners,
            namespace_level,
            local_to,
            crate_of,
            paths,
            codes,
            path_index,
            defs_by_name,
            implemented_traits,
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
            aliases: vec![HashMap::new(); n],
            aliased_names: vec![HashMap::new(); n],
            type_aliases: vec![HashMap::new(); n],
            open_imports: vec![Vec::new(); n],
            package_mates: vec![Vec::new(); n],
            resolver,
            uses_cache: std::sync::Mutex::new(HashMap::new()),
            member_uses_cache: std::sync::Mutex::new(HashMap::new()),
            resolved: std::sync::OnceLock::new(),
            held_instances: std::sync::OnceLock::new(),
            defaulted_types: std::sync::OnceLock::new(),
            off_attributes: std::sync::OnceLock::new(),
            passed_outside_tests: std::sync::OnceLock::new(),
            rust_fields: std::sync::OnceLock::new(),
            rust_constants: std::sync::OnceLock::new(),
            content_hashes: vec![String::new(); n],
            files_not_built: HashSet::new(),
            not_built: HashSet::new(),
        };
        graph.link();
        graph.add_computed_loads();
        graph.link_aliases();
        graph.interface_methods = graph.go_implementations();
        graph
    }

    /// The calls that run file `f` in a child process (`FileCode::spawned`) or load it by a
    /// computed path (`FileCode::computed_loads`), as uses: at the call, in its enclosing
    /// definition, its occurrence the callee's name (none, `u32::MAX`, for an `import(…)`).
    pub fn spawners(&self, f: u32) -> &[Use] {
        self.spawners.get(&f).map(Vec::as_slice).unwrap_or(&[])
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

    /// Whether `file` holds tests: as its test runner's configuration says where the graph
    /// knows one (vitest's, jest's, pytest's `python_files`), else by its language's conventions.
    pub fn is_test_file(&self, file: u32) -> bool {
        self.runner_tests[file as usize]
            .unwrap_or_else(|| test_files::is_test_file(self.path(file), &self.code(file).language))
    }

    /// Whether the runner collects tests from `file` (`test_files::is_test_module`), by its
    /// configuration where known.
    pub fn is_test_module(&self, file: u32) -> bool {
        match self.runner_tests[file as usize] {
            Some(runs) => runs,
            None => test_files::is_test_module(self.path(file), &self.code(file).language),
        }
    }

    /// Whether definition `index` of `file` is a test (`test_files::is_test`), its file judged
    /// as `is_test_file` does.
    pub fn is_test(&self, file: u32, index: usize) -> bool {
        let module = self.is_test_module(file);
        test_files::defines_test(self.code(file), index, self.is_test_file(file), module)
            || (module && self.runs_with_its_tests(file, index))
    }

    /// Whether a Python test module's function is run by the test runner though no code calls
    /// or names it: `setUp`, `setup_module`, or a test class's `assert_case` that the tests the
    /// module makes at import call (`TestSyntax.load_fixtures("…")` adding a `test_*` method
    /// per case with `setattr`). It runs with the module's tests, so a path that reaches it
    /// ends in a test of that module.
    fn runs_with_its_tests(&self, file: u32, index: usize) -> bool {
        let code = self.code(file);
        let s = &code.symbols[index];
        code.language == "python"
            && s.kind.is_callable()
            && self.local_to[file as usize][index].is_none()
            && self.uses((file, index as u32), 0.0).is_empty()
    }

    /// What a runner is given to run test `index` of `file`: its qualified name; for a
    /// function that runs with its module's tests (`runs_with_its_tests`), its class where
    /// pytest collects the class by its name (`Test*`: the class's tests), else "" (the
    /// file's), never a name the runner would not find. So is a Rust test file's helper (semver's
    /// `assert_match_all`, which its `#[test]`s call) and a macro that writes tests (bytes'
    /// `buf_tests!`, whose tests are named by the modules that call it): "" (the file's). A
    /// Python function local to a test is given as that test.
    pub fn test_name(&self, file: u32, index: usize) -> String {
        let s = &self.code(file).symbols[index];
        if self.code(file).language == "rust" {
            let marked = s.test_marked && s.kind != SymbolKind::Macro;
            return if marked { s.qualified_name.clone() } else { String::new() };
        }
        // A Python function local to another (a route `def test(): …` a test method defines, a
        // helper `def test_includes(t)` it calls) is none pytest collects: the test that holds
        // it runs it.
        if let Some(holder) = self.local_to[file as usize][index].filter(|_| self.code(file).language == "python") {
            return self.test_name(file, holder as usize);
        }
        if test_files::defines_test(self.code(file), index, self.is_test_file(file), self.is_test_module(file)) {
            return s.qualified_name.clone();
        }
        let class = s.container.rsplit('.').next().unwrap_or("");
        if class.starts_with("Test") {
            s.container.clone()
        } else {
            String::new()
        }
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
    /// Whether code names `name` as a definition or a use anywhere in the repo.
    pub fn names(&self, name: &str) -> bool {
        self.uses_by_name.contains_key(name) || !self.lookup(name).is_empty()
    }

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
        if let Some(definitions) = self.aliases[f as usize].get(&(occ.qualifier, occ.name)) {
            let confidence = if definitions.len() == 1 { 0.9 } else { 0.8 };
            let mut out: Vec<Candidate> = definitions
                .iter()
                .map(|&symbol| Candidate { symbol, resolution: Resolution::Import, confidence })
                .collect();
            if occ.kind == UseKind::Call {
                self.keep_callables(&mut out);
            }
            return out;
        }
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
        // Built code means the built one of a name's definitions (code the build leaves out
        // still resolves among its own).
        let built_only: Vec<SymbolRef>;
        let all = if !self.files_not_built.contains(&f)
            && all.iter().any(|&r| !self.built(r))
            && all.iter().any(|&r| self.built(r))
        {
            built_only = all.iter().copied().filter(|&r| self.built(r)).collect();
            built_only.as_slice()
        } else {
            all
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

    /// Whether definition `i` of file `f` is local to a function (a nested `def`, a local).
    pub fn is_local(&self, f: u32, i: u32) -> bool {
        self.local_to[f as usize][i as usize].is_some()
    }

    /// Whether code of file `f` in `enclosing` runs as the module loads: at its top level, or in
    /// the value of a module's or class's variable (not in a function, nor local to one).
    pub fn runs_as_it_loads(&self, f: u32, enclosing: Option<u32>) -> bool {
        enclosing.is_none_or(|e| !self.codes[f as usize].symbols[e as usize].kind.is_callable() && !self.is_local(f, e))
    }

    /// The variable or constant named `name` that file `f` declares at its top level (a
    /// module's `registry = Registry()`, `const immer = new Immer()`).
    pub(super) fn top_level_variable(&self, f: u32, name: &str) -> Option<&Symbol> {
        self.codes[f as usize].symbols.iter().find(|s| {
            s.name == name && s.container.is_empty() && matches!(s.kind, SymbolKind::Variable | SymbolKind::Constant)
        })
    }

    /// A file's facts.
    pub fn code(&self, file: u32) -> &FileCode {
        &self.codes[file as usize]
    }

    /// Records what the repo's default build leaves out (`default_run::not_built`): flate2's
    /// three `Deflate` backends, two of them behind features that are off, make
    /// `self.inner.total_in()` the one that is built, not a three-way guess.
    pub fn set_not_built(&mut self, files: HashSet<u32>, definitions: HashSet<SymbolRef>) {
        self.files_not_built = files;
        self.not_built = definitions;
    }

    /// Whether the default build has this definition (`set_not_built`).
    fn built(&self, r: SymbolRef) -> bool {
        !self.files_not_built.contains(&r.0) && !self.not_built.contains(&r)
    }

    /// Records the hash of the text each file's facts came from (`path` → SHA-256 hex, as the
    /// index records files).
    pub fn set_content_hashes(&mut self, hash_of: impl Fn(&str) -> Option<String>) {
        for (f, path) in self.paths.iter().enumerate() {
            self.content_hashes[f] = hash_of(path).unwrap_or_default();
        }
    }

    /// The facts of `path` when they were extracted from exactly the text whose SHA-256 hex is
    /// `hash`, read as `language`: a diff's side that is what the index holds (the base before
    /// an edit the watcher has not seen, the edit after it has) needs no parse.
    pub fn indexed_code(&self, path: &str, language: &str, hash: &str) -> Option<&FileCode> {
        let f = self.file_index(path)? as usize;
        let held = &self.content_hashes[f];
        let code = &self.codes[f];
        (!held.is_empty() && code.language == language && held == hash).then_some(code)
    }

    /// The SHA-256 hex of the text a file's facts came from (empty when not recorded).
    pub fn content_hash(&self, file: u32) -> &str {
        &self.content_hashes[file as usize]
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

/// The index of the `macro_rules!` macro whose body spells out the function `s`, if it is one.
fn macro_template_of(code: &FileCode, s: &Symbol) -> Option<usize> {
    if s.container.is_empty() || code.language != "rust" {
        return None;
    }
    code.symbols.iter().position(|m| {
        // (The template is named by the macro's bare name, also where the macro is written
        // inside a module block: `mod windows { macro_rules! impl_traits … }`.)
        m.kind == SymbolKind::Macro && m.name == s.container && m.line <= s.line && s.end_line <= m.end_line
    })
}

impl CodeGraph {
    /// A test file that loads modules by a path it computes (superstruct's `await
    /// import(resolve(testsDir, name))` over `readdirSync`: a fixture module per case) runs
    /// what those modules do at their top level, as a spawned script's caller does: each
    /// such call stands, in `spawners`, for every file below the test file's folder that is
    /// no test and that no file imports (a fixture), in the same language family.
    fn add_computed_loads(&mut self) {
        let script = |language: &str| matches!(language, "javascript" | "typescript" | "tsx");
        for f in 0..self.codes.len() {
            if self.codes[f].computed_loads.is_empty() || !self.is_test_file(f as u32) {
                continue;
            }
            let Some((dir, _)) = self.paths[f].rsplit_once('/') else { continue };
            let below = format!("{dir}/");
            let fixtures: Vec<u32> = (0..self.codes.len() as u32)
                .filter(|&t| {
                    t as usize != f
                        && self.paths[t as usize].starts_with(&below)
                        && script(&self.codes[t as usize].language)
                        && self.imported_by[t as usize].is_empty()
                        && !self.is_test_file(t)
                })
                .collect();
            for load in self.codes[f].computed_loads.clone() {
                let at = Use {
                    file: f as u32,
                    // No name stands for the call (`import` is a keyword).
                    occurrence: u32::MAX,
                    enclosing: load.enclosing,
                    line: load.line,
                    kind: UseKind::Call,
                    confidence: 1.0,
                    resolution: Resolution::QualifiedPath,
                };
                for &t in &fixtures {
                    self.spawners.entry(t).or_default().push(at);
                }
            }
        }
    }
}

/// Per file another file runs in a child process, the calls that run it (`CodeGraph::spawners`):
/// a spawned path is the spawning file's folder joined with the parts, as a file of the repo;
/// one from the working directory is taken from the nearest folder above the spawning file
/// where it is a file (a package's tests run from the package's root, wherever it is).
fn spawn_sites(paths: &[String], codes: &[FileCode], path_index: &HashMap<String, u32>) -> HashMap<u32, Vec<Use>> {
    let mut out: HashMap<u32, Vec<Use>> = HashMap::new();
    for (f, (path, code)) in paths.iter().zip(codes).enumerate() {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for spawn in &code.spawned {
            let written = spawn.parts.join("/");
            let at = |base: &str| {
                crate::code::resolve::normalize(&format!("{base}/{written}")).and_then(|p| path_index.get(&p).copied())
            };
            let found = if spawn.from_cwd {
                std::iter::successors(Some(dir), |d| {
                    (!d.is_empty()).then(|| d.rsplit_once('/').map_or("", |(up, _)| up))
                })
                .find_map(at)
            } else {
                at(dir)
            };
            let Some(target) = found else {
                continue;
            };
            // The callee's own occurrence stands for the call.
            let Some(o) = code.occurrences.iter().position(|o| o.line == spawn.line && code.name_of(o) == spawn.callee)
            else {
                continue;
            };
            out.entry(target).or_default().push(Use {
                file: f as u32,
                occurrence: o as u32,
                enclosing: spawn.enclosing,
                line: spawn.line,
                kind: UseKind::Call,
                confidence: 1.0,
                resolution: Resolution::QualifiedPath,
            });
        }
    }
    out
}
