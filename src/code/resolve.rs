//! Which repo file an import names, per language, as that language's module resolution would
//! find it: Rust's module tree, Python's packages, Node's and TypeScript's lookup, Go's module
//! path, JVM and .NET packages, include paths, load paths.

use std::collections::{HashMap, HashSet};

use super::{FileCode, ImportSpec};
use crate::ingest::Language;

/// A resolved import: the file and how sure the resolution is.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub file: String,
    pub confidence: f32,
}

/// Repo-wide facts the resolution needs.
pub struct Resolver {
    files: HashSet<String>,
    /// Declared package or namespace → files declaring it.
    by_package: HashMap<String, Vec<String>>,
    /// Top-level definitions: (file, name) pairs, for `package.Class` imports.
    top_level: HashSet<(String, String)>,
    /// Directory → its files.
    by_dir: HashMap<String, Vec<String>>,
    /// `go.mod` module paths: (module path, directory).
    go_modules: Vec<(String, String)>,
    /// Cargo package names (`-` as `_`) → crate root file.
    rust_crates: HashMap<String, String>,
    /// The folders of the repo's Cargo packages (`""` for one at the root).
    rust_packages: HashSet<String>,
    /// tsconfig `paths`: (directory of the tsconfig, pattern, replacements), and `baseUrl`s.
    ts_paths: Vec<(String, String, Vec<String>)>,
    ts_base_urls: Vec<String>,
    /// package.json `name` → the package's directory and entry file, for workspaces.
    js_packages: HashMap<String, (String, Option<String>)>,
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

/// `a/./b/../c` → `a/c`; `None` when it climbs above the root.
pub(crate) fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

impl Resolver {
    /// `configs` holds the text of the repo's `go.mod`, `Cargo.toml`, `tsconfig.json` and
    /// `package.json` files by path.
    pub fn new(files: &HashMap<String, FileCode>, configs: &HashMap<String, String>) -> Resolver {
        let mut by_package: HashMap<String, Vec<String>> = HashMap::new();
        let mut top_level = HashSet::new();
        let mut by_dir: HashMap<String, Vec<String>> = HashMap::new();
        for (path, code) in files {
            if !code.package.is_empty() {
                by_package.entry(code.package.clone()).or_default().push(path.clone());
            }
            for symbol in &code.symbols {
                if symbol.container.is_empty() || code.language == "elixir" {
                    top_level.insert((path.clone(), symbol.name.clone()));
                }
            }
            by_dir.entry(dir_of(path).to_string()).or_default().push(path.clone());
        }
        for list in by_package.values_mut().chain(by_dir.values_mut()) {
            list.sort();
        }
        let file_set: HashSet<String> = files.keys().cloned().collect();
        let mut resolver = Resolver {
            files: file_set,
            by_package,
            top_level,
            by_dir,
            go_modules: Vec::new(),
            rust_crates: HashMap::new(),
            rust_packages: HashSet::new(),
            ts_paths: Vec::new(),
            ts_base_urls: Vec::new(),
            js_packages: HashMap::new(),
        };
        for (path, text) in configs {
            let dir = dir_of(path).to_string();
            let name = path.rsplit('/').next().unwrap_or(path);
            match name {
                "go.mod" => {
                    if let Some(module) = text.lines().find_map(|l| l.trim().strip_prefix("module ")) {
                        resolver.go_modules.push((module.trim().trim_matches('"').to_string(), dir));
                    }
                }
                "Cargo.toml" => resolver.read_cargo(&dir, text),
                "package.json" => resolver.read_package_json(&dir, text),
                _ if name.starts_with("tsconfig") && name.ends_with(".json") => resolver.read_tsconfig(&dir, text),
                _ => {}
            }
        }
        resolver.go_modules.sort_by_key(|(m, _)| std::cmp::Reverse(m.len()));
        resolver
    }

    fn read_cargo(&mut self, dir: &str, text: &str) {
        let Ok(manifest) = text.parse::<toml::Table>() else {
            return;
        };
        let Some(name) = manifest.get("package").and_then(|p| p.get("name")).and_then(|n| n.as_str()) else {
            return;
        };
        self.rust_packages.insert(dir.to_string());
        let lib_path = manifest.get("lib").and_then(|l| l.get("path")).and_then(|p| p.as_str());
        let root = lib_path
            .map(|p| join(dir, p))
            .into_iter()
            .chain([join(dir, "src/lib.rs"), join(dir, "src/main.rs")])
            .find(|p| self.files.contains(p));
        if let Some(root) = root {
            self.rust_crates.insert(name.replace('-', "_"), root);
        }
    }

    fn read_package_json(&mut self, dir: &str, text: &str) {
        let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
            return;
        };
        let Some(name) = json.get("name").and_then(|n| n.as_str()) else {
            return;
        };
        let entry = ["source", "types", "typings", "module", "main"]
            .iter()
            .filter_map(|k| json.get(*k).and_then(|v| v.as_str()))
            .chain(json.get("exports").and_then(export_entry))
            .find_map(|p| self.js_file(&normalize(&join(dir, p))?));
        self.js_packages.insert(name.to_string(), (dir.to_string(), entry));
    }

    fn read_tsconfig(&mut self, dir: &str, text: &str) {
        let Some(json) = parse_jsonc(text) else {
            return;
        };
        let Some(options) = json.get("compilerOptions") else {
            return;
        };
        let base =
            options.get("baseUrl").and_then(|b| b.as_str()).map(|b| normalize(&join(dir, b)).unwrap_or_default());
        if let Some(base) = &base {
            self.ts_base_urls.push(base.clone());
        }
        if let Some(paths) = options.get("paths").and_then(|p| p.as_object()) {
            let base = base.unwrap_or_else(|| dir.to_string());
            for (pattern, targets) in paths {
                let targets: Vec<String> = targets
                    .as_array()
                    .map(|a| a.iter().filter_map(|t| t.as_str()).map(|t| join(&base, t)).collect())
                    .unwrap_or_default();
                self.ts_paths.push((base.clone(), pattern.clone(), targets));
            }
        }
    }

    /// The files an import names; empty when it names nothing in the repo.
    pub fn resolve(&self, from: &str, language: &str, import: &ImportSpec) -> Vec<Target> {
        let spec = import.spec.as_str();
        let exact = |files: Vec<String>| files.into_iter().map(|file| Target { file, confidence: 1.0 }).collect();
        let Some(language) = Language::from_name(language) else {
            return Vec::new();
        };
        match language {
            Language::Rust => exact(self.rust(from, spec).into_iter().collect()),
            Language::Python => exact(self.python(from, spec, &import.names)),
            Language::TypeScript | Language::Tsx | Language::JavaScript => {
                exact(self.js(from, spec).into_iter().collect())
            }
            Language::Go => exact(self.go(spec)),
            Language::Java | Language::Kotlin | Language::Scala => self.jvm(spec),
            Language::C | Language::Cpp => self.include(from, spec),
            Language::CSharp => self.by_package.get(spec).map(|files| with_confidence(files, 0.9)).unwrap_or_default(),
            Language::Ruby => exact(self.with_ext(from, spec, &["rb"]).into_iter().collect()),
            Language::Php => self.php(from, spec, import.file_like),
            Language::Lua => exact(self.dotted_module(from, spec, &["lua"], "init.lua")),
            Language::Bash => {
                let spec = spec.trim_start_matches("$DIR/").trim_start_matches("${DIR}/");
                let spec = spec.trim_start_matches("$(dirname \"$0\")/").trim_start_matches("$(dirname $0)/");
                exact(self.with_ext(from, spec, &["sh", "bash"]).into_iter().collect())
            }
            Language::Elixir => self.by_package.get(spec).map(|files| with_confidence(files, 1.0)).unwrap_or_default(),
            Language::Haskell => match self.by_package.get(spec) {
                Some(files) => with_confidence(files, 1.0),
                None => exact(self.dotted_module(from, spec, &["hs"], "")),
            },
            Language::Zig => exact(self.with_ext(from, spec, &["zig"]).into_iter().collect()),
            _ => Vec::new(),
        }
    }

    /// A path relative to the importing file's folder, or to the repo root, with or without
    /// one of `exts`.
    fn with_ext(&self, from: &str, spec: &str, exts: &[&str]) -> Option<String> {
        let bases = [dir_of(from), ""];
        for base in bases {
            let Some(path) = normalize(&join(base, spec)) else {
                continue;
            };
            if self.files.contains(&path) {
                return Some(path);
            }
            for ext in exts {
                let candidate = format!("{path}.{ext}");
                if self.files.contains(&candidate) {
                    return Some(candidate);
                }
            }
        }
        // Ruby's `require "shop/util"` looks in the load path: `lib/` by convention.
        exts.iter().map(|ext| format!("lib/{spec}.{ext}")).find(|p| self.files.contains(p))
    }

    /// `a.b.c` as `a/b/c.<ext>` or `a/b/c/<index>` below the root or a folder above `from`.
    fn dotted_module(&self, from: &str, spec: &str, exts: &[&str], index: &str) -> Vec<String> {
        let rel = spec.replace('.', "/");
        for base in roots_of(from) {
            for ext in exts {
                let candidate = join(&base, &format!("{rel}.{ext}"));
                if self.files.contains(&candidate) {
                    return vec![candidate];
                }
            }
            if !index.is_empty() {
                let candidate = join(&base, &format!("{rel}/{index}"));
                if self.files.contains(&candidate) {
                    return vec![candidate];
                }
            }
        }
        Vec::new()
    }

    fn rust(&self, from: &str, spec: &str) -> Option<String> {
        if let Some(declared) = spec.strip_prefix("#[path = \"") {
            // `#[path = "issues/issue_431.rs"] mod issue_431`: relative to the declaring
            // file's folder.
            let written = declared.split('"').next()?;
            return normalize(&join(dir_of(from), written)).filter(|p| self.files.contains(p));
        }
        if let Some(name) = spec.strip_prefix("mod ") {
            let dir = self.rust_children_dir(from);
            return [join(&dir, &format!("{name}.rs")), join(&dir, &format!("{name}/mod.rs"))]
                .into_iter()
                .find(|p| self.files.contains(p));
        }
        let segments: Vec<&str> = spec.split("::").filter(|s| !s.is_empty()).collect();
        let (&first, rest) = segments.split_first()?;
        let (mut file, rest) = match first {
            "crate" => (self.rust_crate_root(from)?, rest),
            "self" => (from.to_string(), rest),
            "super" => {
                let mut file = self.rust_parent(from)?;
                let mut rest = rest;
                while let Some((&"super", tail)) = rest.split_first() {
                    file = self.rust_parent(&file)?;
                    rest = tail;
                }
                (file, rest)
            }
            name => match self.rust_crates.get(name) {
                Some(root) => (root.clone(), rest),
                // A module declared in this file (`mod a;` … `use a::X`), 2018 style.
                None => (from.to_string(), &segments[..]),
            },
        };
        let mut moved = false;
        for segment in rest {
            let dir = self.rust_children_dir(&file);
            match [join(&dir, &format!("{segment}.rs")), join(&dir, &format!("{segment}/mod.rs"))]
                .into_iter()
                .find(|p| self.files.contains(p))
            {
                Some(next) => {
                    file = next;
                    moved = true;
                }
                None => break,
            }
        }
        if !moved && !matches!(first, "crate" | "self" | "super") && !self.rust_crates.contains_key(first) {
            return None;
        }
        Some(file)
    }

    /// The crate root (`lib.rs`, `main.rs`, a `src/bin` file) whose module tree holds `from`.
    pub fn rust_crate_root(&self, from: &str) -> Option<String> {
        let mut dir = dir_of(from).to_string();
        loop {
            for root in ["lib.rs", "main.rs"] {
                let candidate = join(&dir, root);
                if self.files.contains(&candidate) {
                    return Some(candidate);
                }
            }
            if dir.is_empty() {
                return None;
            }
            dir = dir_of(&dir).to_string();
        }
    }

    /// The module file that declares `from`'s module.
    fn rust_parent(&self, from: &str) -> Option<String> {
        let name = from.rsplit('/').next().unwrap_or(from);
        let module_dir = if name == "mod.rs" { dir_of(dir_of(from)) } else { dir_of(from) };
        // The parent's children live in `module_dir`: its file is `<module_dir>.rs`,
        // `<module_dir>/mod.rs`, or a crate root inside it.
        [
            format!("{module_dir}.rs"),
            join(module_dir, "mod.rs"),
            join(module_dir, "lib.rs"),
            join(module_dir, "main.rs"),
        ]
        .into_iter()
        .find(|p| self.files.contains(p) && p != from)
    }

    /// [`rust_children_dir`], but a crate root's submodules live beside it: Cargo makes each
    /// file directly in a package's `tests/`, `benches/`, `examples/` or `src/bin/` (and its
    /// `build.rs`) a crate of its own, so `mod utils;` in `tests/basic_types.rs` is
    /// `tests/utils.rs` (the Rust book's `tests/common/mod.rs`), not `tests/basic_types/utils.rs`.
    fn rust_children_dir(&self, file: &str) -> String {
        let dir = dir_of(file);
        let (package, folder) = match dir.rsplit_once('/') {
            Some((package, folder)) => (package, folder),
            None => ("", dir),
        };
        let target_root = (matches!(folder, "tests" | "benches" | "examples") && self.rust_packages.contains(package))
            || (folder == "bin"
                && package.rsplit('/').next() == Some("src")
                && self.rust_packages.contains(dir_of(package)))
            || (file.rsplit('/').next() == Some("build.rs") && self.rust_packages.contains(dir));
        if target_root {
            return dir.to_string();
        }
        rust_children_dir(file)
    }

    fn python(&self, from: &str, spec: &str, names: &[String]) -> Vec<String> {
        let dots = spec.chars().take_while(|&c| c == '.').count();
        let module = &spec[dots..];
        let bases: Vec<String> = if dots > 0 {
            let mut dir = dir_of(from).to_string();
            for _ in 1..dots {
                dir = dir_of(&dir).to_string();
            }
            vec![dir]
        } else {
            roots_of(from)
        };
        for base in bases {
            let rel = module.replace('.', "/");
            let package_dir = if rel.is_empty() { base.clone() } else { join(&base, &rel) };
            let module_file =
                [format!("{package_dir}.py"), join(&package_dir, "__init__.py"), format!("{package_dir}.pyi")]
                    .into_iter()
                    .find(|p| !rel.is_empty() && self.files.contains(p));
            // `from pkg import sub` names a submodule when one exists.
            let submodules: Vec<String> = names
                .iter()
                .filter_map(|n| {
                    [join(&package_dir, &format!("{n}.py")), join(&package_dir, &format!("{n}/__init__.py"))]
                        .into_iter()
                        .find(|p| self.files.contains(p))
                })
                .collect();
            if module_file.is_some() || !submodules.is_empty() {
                let mut out: Vec<String> = Vec::new();
                let all_submodules = !names.is_empty() && submodules.len() == names.len();
                if let Some(file) = module_file {
                    if !all_submodules {
                        out.push(file);
                    }
                }
                out.extend(submodules);
                return out;
            }
            // `from . import registry` where no module of that name exists: the package's own
            // attribute, defined in its `__init__.py` (`registry = Registry()`).
            if dots > 0 && !module.contains('.') && names.iter().any(|n| n == module) {
                let package = join(&base, "__init__.py");
                if self.files.contains(&package) {
                    return vec![package];
                }
            }
        }
        Vec::new()
    }

    fn js_file(&self, base: &str) -> Option<String> {
        const EXTS: [&str; 9] = ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs", "mts", "cts"];
        if self.files.contains(base) && base.rsplit('/').next().is_some_and(|n| n.contains('.')) {
            return Some(base.to_string());
        }
        // ESM TypeScript names `./a.js` for `a.ts`.
        let stem = [".js", ".jsx", ".mjs", ".cjs"].iter().find_map(|e| base.strip_suffix(e)).unwrap_or(base);
        for ext in EXTS {
            let candidate = format!("{stem}.{ext}");
            if self.files.contains(&candidate) {
                return Some(candidate);
            }
        }
        for ext in ["ts", "tsx", "js", "jsx", "mjs"] {
            let candidate = format!("{base}/index.{ext}");
            if self.files.contains(&candidate) {
                return Some(candidate);
            }
        }
        // A folder that is a package (`require('../')` in its own tests): its entry file.
        self.js_packages.values().find(|(dir, _)| dir == base).and_then(|(_, entry)| entry.clone())
    }

    fn js(&self, from: &str, spec: &str) -> Option<String> {
        if spec.starts_with('.') {
            return self.js_file(&normalize(&join(dir_of(from), spec))?);
        }
        for (_, pattern, targets) in &self.ts_paths {
            let matched = match pattern.split_once('*') {
                Some((prefix, suffix)) => spec
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_suffix(suffix))
                    .map(|star| targets.iter().map(|t| t.replace('*', star)).collect::<Vec<_>>()),
                None => (spec == pattern).then(|| targets.clone()),
            };
            if let Some(file) = matched.into_iter().flatten().find_map(|t| self.js_file(&normalize(&t)?)) {
                return Some(file);
            }
        }
        for base in &self.ts_base_urls {
            if let Some(file) = self.js_file(&join(base, spec)) {
                return Some(file);
            }
        }
        // A package of this repo's workspace, by name or `name/sub/path`.
        let mut split = spec.splitn(if spec.starts_with('@') { 3 } else { 2 }, '/');
        let name = if spec.starts_with('@') {
            format!("{}/{}", split.next()?, split.next()?)
        } else {
            split.next()?.to_string()
        };
        let sub = split.next();
        let (dir, entry) = self.js_packages.get(&name)?;
        match sub {
            Some(sub) => self.js_file(&join(dir, sub)).or_else(|| self.js_file(&join(dir, &format!("src/{sub}")))),
            None => entry
                .clone()
                .or_else(|| self.js_file(&join(dir, "src/index")).or_else(|| self.js_file(&join(dir, "index")))),
        }
    }

    fn go(&self, spec: &str) -> Vec<String> {
        for (module, dir) in &self.go_modules {
            let rest = if spec == module {
                Some("")
            } else {
                spec.strip_prefix(module.as_str()).and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                let pkg_dir = if rest.is_empty() { dir.clone() } else { join(dir, rest) };
                return self
                    .by_dir
                    .get(&pkg_dir)
                    .map(|files| {
                        files.iter().filter(|f| f.ends_with(".go") && !f.ends_with("_test.go")).cloned().collect()
                    })
                    .unwrap_or_default();
            }
        }
        Vec::new()
    }

    /// `a.b.C` → the file of package `a.b` that defines `C`; `a.b.*` → the package's files.
    fn jvm(&self, spec: &str) -> Vec<Target> {
        if let Some(package) = spec.strip_suffix(".*") {
            return self.by_package.get(package).map(|f| with_confidence(f, 0.8)).unwrap_or_default();
        }
        let segments: Vec<&str> = spec.split('.').collect();
        for k in (1..segments.len()).rev() {
            let package = segments[..k].join(".");
            let class = segments[k];
            let found = self.files_defining(&package, class);
            if !found.is_empty() {
                return with_confidence(&found, 1.0);
            }
        }
        Vec::new()
    }

    /// The files of `package` that define `class` at top level (or are named after it).
    fn files_defining(&self, package: &str, class: &str) -> Vec<String> {
        let Some(files) = self.by_package.get(package) else {
            return Vec::new();
        };
        files
            .iter()
            .filter(|f| file_stem(f) == class || self.top_level.contains(&((*f).clone(), class.to_string())))
            .cloned()
            .collect()
    }

    fn include(&self, from: &str, spec: &str) -> Vec<Target> {
        if let Some(path) = normalize(&join(dir_of(from), spec)).filter(|p| self.files.contains(p)) {
            return vec![Target { file: path, confidence: 1.0 }];
        }
        for root in ["", "include", "src"] {
            if let Some(path) = normalize(&join(root, spec)).filter(|p| self.files.contains(p)) {
                return vec![Target { file: path, confidence: 0.9 }];
            }
        }
        let suffix = format!("/{spec}");
        let found: Vec<String> = self.files.iter().filter(|f| f.ends_with(&suffix)).cloned().collect();
        let confidence = if found.len() == 1 { 0.8 } else { 0.5 };
        let mut found = found;
        found.sort();
        found.truncate(5);
        with_confidence(&found, confidence)
    }

    fn php(&self, from: &str, spec: &str, file_like: bool) -> Vec<Target> {
        if file_like {
            return self
                .with_ext(from, spec, &["php"])
                .map(|file| vec![Target { file, confidence: 1.0 }])
                .unwrap_or_default();
        }
        let (namespace, class) = spec.rsplit_once('\\').unwrap_or(("", spec));
        let found = self.files_defining(namespace, class);
        if !found.is_empty() {
            return with_confidence(&found, 1.0);
        }
        // PSR-4: the namespace's tail as folders.
        let tail = spec.replace('\\', "/");
        let mut parts: Vec<&str> = tail.split('/').collect();
        while parts.len() > 1 {
            let suffix = format!("/{}.php", parts.join("/"));
            let found: Vec<String> = self.files.iter().filter(|f| f.ends_with(&suffix)).cloned().collect();
            if found.len() == 1 {
                return with_confidence(&found, 0.8);
            }
            parts.remove(0);
        }
        Vec::new()
    }

    /// Whether `name` is a Cargo package of this repo (as Rust paths spell it).
    pub fn is_crate_name(&self, name: &str) -> bool {
        self.rust_crates.contains_key(name)
    }

    /// The files a C or C++ header declares for: the header and its `.c`/`.cc`/`.cpp` twin.
    pub fn header_twins(&self, header: &str) -> Vec<String> {
        let Some((stem, ext)) = header.rsplit_once('.') else {
            return Vec::new();
        };
        if !matches!(ext, "h" | "hh" | "hpp" | "hxx") {
            return Vec::new();
        }
        let name = stem.rsplit('/').next().unwrap_or(stem);
        let mut out: Vec<String> = ["c", "cc", "cpp", "cxx"]
            .iter()
            .map(|e| format!("{stem}.{e}"))
            .filter(|p| self.files.contains(p))
            .collect();
        if out.is_empty() {
            // `include/x.h` with `src/x.c`.
            out = self
                .files
                .iter()
                .filter(|f| {
                    ["c", "cc", "cpp", "cxx"]
                        .iter()
                        .any(|e| f.ends_with(&format!("/{name}.{e}")) || **f == format!("{name}.{e}"))
                })
                .cloned()
                .collect();
            out.sort();
            out.truncate(3);
        }
        out
    }

    /// Files that share `path`'s package (Go's folder, a JVM or .NET package, a PHP
    /// namespace): names defined there are visible without an import.
    pub fn package_mates(&self, path: &str, code: &FileCode) -> Vec<String> {
        let language = code.language.as_str();
        let mates: Vec<String> = match language {
            "go" => self.by_dir.get(dir_of(path)).cloned().unwrap_or_default(),
            "java" | "kotlin" | "scala" | "csharp" | "php" | "swift" if !code.package.is_empty() => {
                self.by_package.get(&code.package).cloned().unwrap_or_default()
            }
            "swift" => self.by_dir.get(dir_of(path)).cloned().unwrap_or_default(),
            _ => Vec::new(),
        };
        mates.into_iter().filter(|m| m != path).collect()
    }
}

fn with_confidence(files: &[String], confidence: f32) -> Vec<Target> {
    files.iter().map(|file| Target { file: file.clone(), confidence }).collect()
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}

/// Folders a module path may start from: the repo root, `src/` and `lib/`, then each folder
/// above the importing file, outermost first.
fn roots_of(from: &str) -> Vec<String> {
    let mut roots = vec![String::new(), "src".to_string(), "lib".to_string()];
    let mut ancestors = Vec::new();
    let mut dir = dir_of(from);
    while !dir.is_empty() {
        ancestors.push(dir.to_string());
        dir = dir_of(dir);
    }
    for a in ancestors.into_iter().rev() {
        if !roots.contains(&a) {
            roots.push(a);
        }
    }
    roots
}

/// Where the submodules of a Rust module file live: `a/mod.rs`, `a/lib.rs` → `a/`; `a/b.rs`
/// → `a/b/`.
fn rust_children_dir(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    match name {
        "mod.rs" | "lib.rs" | "main.rs" => dir_of(file).to_string(),
        _ => file.strip_suffix(".rs").unwrap_or(file).to_string(),
    }
}

/// package.json `exports`: the entry of `"."` (a string, or its import/require/default).
fn export_entry(exports: &serde_json::Value) -> Option<&str> {
    match exports {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Object(map) => {
            let dot = map.get(".").unwrap_or(exports);
            match dot {
                serde_json::Value::String(s) => Some(s),
                serde_json::Value::Object(m) => ["source", "types", "import", "require", "default"]
                    .iter()
                    .find_map(|k| m.get(*k).and_then(|v| v.as_str())),
                _ => None,
            }
        }
        _ => None,
    }
}

/// tsconfig files allow comments and trailing commas.
fn parse_jsonc(text: &str) -> Option<serde_json::Value> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '/' if chars.peek() == Some(&'/') => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas before `}` or `]`.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    for (i, &c) in bytes.iter().enumerate() {
        if c == ',' {
            let next = bytes[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    serde_json::from_str(&cleaned).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_and_jsonc_parses() {
        assert_eq!(normalize("a/./b/../c").as_deref(), Some("a/c"));
        assert_eq!(normalize("../x"), None);
        let json = parse_jsonc("{\n // c\n \"a\": [1, 2,], /* x */ \"b\": \"//not\",\n}").unwrap();
        assert_eq!(json["b"], "//not");
        assert_eq!(rust_children_dir("src/a/mod.rs"), "src/a");
        assert_eq!(rust_children_dir("src/a.rs"), "src/a");
        assert_eq!(base_type("&'a mut Foo<'a>"), "Foo");
    }

    fn base_type(s: &str) -> String {
        super::super::extract::base_type_name(s)
    }
}
