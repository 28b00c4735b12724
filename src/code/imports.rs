//! Import statements as written, per language. Which file an import names is decided with the
//! whole repo in view, in `resolve`.

use tree_sitter::Node;

use super::extract::{attributes, path_attribute};
use super::ImportSpec;
use crate::ingest::Language;

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

/// The text of a string literal node, quotes removed.
fn string_value(node: Node, src: &[u8]) -> Option<String> {
    let raw = text(node, src).trim();
    let unquoted = raw
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| raw.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .or_else(|| raw.strip_prefix('`').and_then(|s| s.strip_suffix('`')))
        .or_else(|| raw.strip_prefix('<').and_then(|s| s.strip_suffix('>')))?;
    if unquoted.is_empty() || unquoted.contains(['\n', '$', '{']) || unquoted.len() > 300 {
        return None;
    }
    Some(unquoted.to_string())
}

fn first_string<'t>(node: Node<'t>) -> Option<Node<'t>> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if matches!(
            n.kind(),
            "string" | "string_literal" | "interpreted_string_literal" | "raw_string_literal" | "encapsed_string"
        ) {
            return Some(n);
        }
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

fn spec(spec: String, node: Node, names: Vec<String>, file_like: bool) -> ImportSpec {
    ImportSpec { spec, line: node.start_position().row as u32 + 1, names, file_like }
}

/// The imports a node states, or `None` when it is not an import.
pub(super) fn import_specs(language: Language, node: Node, src: &[u8]) -> Option<Vec<ImportSpec>> {
    let kind = node.kind();
    match language {
        Language::Rust => match kind {
            "use_declaration" => {
                let mut out = Vec::new();
                rust_use_tree(node.child_by_field_name("argument")?, "", src, node, &mut out);
                // Inside an inline module (`mod tests { use super::*; }`) `super` is the file's
                // own module, not the one above the file: one `super` per module around the
                // `use` stays in the file.
                let inline = std::iter::successors(node.parent(), |n| n.parent())
                    .filter(|n| n.kind() == "mod_item" && n.child_by_field_name("body").is_some())
                    .count();
                for import in out.iter_mut().filter(|_| inline > 0) {
                    let mut rest = import.spec.as_str();
                    let mut dropped = 0;
                    while dropped < inline {
                        match rest.strip_prefix("super") {
                            Some(tail) if tail.is_empty() || tail.starts_with("::") => {
                                rest = tail.trim_start_matches("::");
                                dropped += 1;
                            }
                            _ => break,
                        }
                    }
                    if dropped > 0 && !rest.starts_with("super") {
                        import.spec = if rest.is_empty() { "self".to_string() } else { format!("self::{rest}") };
                    } else if dropped > 0 {
                        import.spec = rest.to_string();
                    }
                }
                Some(out)
            }
            "mod_item" if node.child_by_field_name("body").is_none() => {
                let name = text(node.child_by_field_name("name")?, src);
                // `#[path = "issues/issue_431.rs"] mod issue_431;` names its file itself.
                let written = match attributes(node, src).find_map(path_attribute) {
                    Some(path) => format!("#[path = \"{path}\"] mod {name}"),
                    None => format!("mod {name}"),
                };
                Some(vec![spec(written, node, vec![name.to_string()], true)])
            }
            "extern_crate_declaration" => {
                let name = text(node.child_by_field_name("name")?, src);
                Some(vec![spec(name.to_string(), node, vec![name.to_string()], false)])
            }
            _ => None,
        },
        Language::Python => match kind {
            "import_statement" => {
                let mut out = Vec::new();
                let mut cursor = node.walk();
                for child in node.children_by_field_name("name", &mut cursor) {
                    let (module, bound) = match child.kind() {
                        "aliased_import" => {
                            let module = text(child.child_by_field_name("name")?, src).to_string();
                            let alias = text(child.child_by_field_name("alias")?, src).to_string();
                            (module, alias)
                        }
                        _ => {
                            let module = text(child, src).to_string();
                            let first = module.split('.').next().unwrap_or("").to_string();
                            (module, first)
                        }
                    };
                    out.push(spec(module, node, vec![bound], false));
                }
                Some(out)
            }
            "import_from_statement" => {
                let module = text(node.child_by_field_name("module_name")?, src).to_string();
                // Each name as the module defines it and as this file binds it (`a as b`).
                let mut names: Vec<(String, String)> = Vec::new();
                let mut cursor = node.walk();
                for child in node.children_by_field_name("name", &mut cursor) {
                    let original = match child.kind() {
                        "aliased_import" => child.child_by_field_name("name").map(|n| text(n, src)),
                        _ => Some(text(child, src)),
                    };
                    let bound = child.child_by_field_name("alias").map(|n| text(n, src)).or(original);
                    if let (Some(original), Some(bound)) = (original, bound) {
                        names.push((original.to_string(), bound.to_string()));
                    }
                }
                // Both names are bound: a use of the alias is read as one of the original
                // (`renames`), and the original is what the target module is searched for.
                let bound = |(original, bound): (String, String)| {
                    if original == bound {
                        vec![original]
                    } else {
                        vec![original, bound]
                    }
                };
                // `from . import a, b` names modules: each is an import of its own.
                if module.chars().all(|c| c == '.') {
                    return Some(
                        names.into_iter().map(|n| spec(format!("{module}{}", n.0), node, bound(n), false)).collect(),
                    );
                }
                Some(vec![spec(module, node, names.into_iter().flat_map(bound).collect(), false)])
            }
            "future_import_statement" => Some(Vec::new()),
            _ => None,
        },
        Language::TypeScript | Language::Tsx | Language::JavaScript => match kind {
            "import_statement" | "export_statement" => {
                let source = node.child_by_field_name("source")?;
                let target = string_value(source, src)?;
                let mut names = Vec::new();
                collect_idents(node, src, &mut names, source.id());
                Some(vec![spec(target, node, names, false)])
            }
            "call_expression" => {
                let function = node.child_by_field_name("function")?;
                let callee = text(function, src);
                if callee != "require" && function.kind() != "import" {
                    return None;
                }
                let arg = node.child_by_field_name("arguments")?.named_child(0)?;
                let target = string_value(arg, src)?;
                Some(vec![spec(target, node, bound_by_declaration(node, src), false)])
            }
            _ => None,
        },
        Language::Go => match kind {
            "import_spec" => {
                let path = string_value(node.child_by_field_name("path")?, src)?;
                let name = node
                    .child_by_field_name("name")
                    .map(|n| text(n, src).to_string())
                    .unwrap_or_else(|| go_assumed_name(&path));
                Some(vec![spec(path, node, vec![name], false)])
            }
            _ => None,
        },
        Language::Java => match kind {
            "import_declaration" => {
                let body = text(node, src).trim_start_matches("import").trim().trim_end_matches(';').trim();
                let body = body.strip_prefix("static ").unwrap_or(body).replace(char::is_whitespace, "");
                let last = body.rsplit('.').next().unwrap_or("").to_string();
                let names = if last == "*" { Vec::new() } else { vec![last] };
                Some(vec![spec(body, node, names, false)])
            }
            _ => None,
        },
        Language::Kotlin => match kind {
            "import" => {
                let path = node.named_child(0).map(|n| text(n, src)).unwrap_or("").replace(char::is_whitespace, "");
                let wildcard = text(node, src).trim_end().ends_with('*');
                let alias = text(node, src).split(" as ").nth(1).map(|a| a.trim().to_string());
                let last = path.rsplit('.').next().unwrap_or("").to_string();
                let names = if wildcard { Vec::new() } else { vec![alias.unwrap_or(last)] };
                let path = if wildcard { format!("{path}.*") } else { path };
                Some(vec![spec(path, node, names, false)])
            }
            _ => None,
        },
        Language::Scala => match kind {
            "import_declaration" => {
                let raw = text(node, src).trim_start_matches("import").trim().replace(char::is_whitespace, "");
                if let Some((base, selectors)) = raw.split_once(".{") {
                    let selectors = selectors.trim_end_matches('}');
                    return Some(
                        selectors
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(|s| {
                                let name = s.split("=>").next().unwrap_or(s).to_string();
                                let bound = s.split("=>").last().unwrap_or(s).to_string();
                                spec(format!("{base}.{name}"), node, vec![bound], false)
                            })
                            .collect(),
                    );
                }
                let last = raw.rsplit('.').next().unwrap_or("").to_string();
                let names = if last == "_" || last == "*" { Vec::new() } else { vec![last] };
                Some(vec![spec(raw, node, names, false)])
            }
            _ => None,
        },
        Language::C | Language::Cpp => match kind {
            "preproc_include" => {
                let path = node.child_by_field_name("path")?;
                if path.kind() == "system_lib_string" {
                    return Some(Vec::new());
                }
                let target = string_value(path, src)?;
                Some(vec![spec(target, node, Vec::new(), true)])
            }
            _ => None,
        },
        Language::CSharp => match kind {
            "using_directive" => {
                let raw = text(node, src).trim_start_matches("global").trim();
                let raw = raw.trim_start_matches("using").trim().trim_end_matches(';').trim();
                let raw = raw.strip_prefix("static ").unwrap_or(raw);
                let (alias, target) = match raw.split_once('=') {
                    Some((a, t)) => (vec![a.trim().to_string()], t.trim()),
                    None => (Vec::new(), raw),
                };
                Some(vec![spec(target.replace(char::is_whitespace, ""), node, alias, false)])
            }
            _ => None,
        },
        Language::Swift => match kind {
            "import_declaration" => {
                let raw = text(node, src).trim_start_matches("import").trim().to_string();
                Some(vec![spec(raw, node, Vec::new(), false)])
            }
            _ => None,
        },
        Language::Ruby => match kind {
            "call" => {
                let method = text(node.child_by_field_name("method")?, src);
                if !matches!(method, "require" | "require_relative" | "load" | "autoload")
                    || node.child_by_field_name("receiver").is_some()
                {
                    return None;
                }
                let target = string_value(first_string(node.child_by_field_name("arguments")?)?, src)?;
                let target = if method == "require_relative" && !target.starts_with('.') {
                    format!("./{target}")
                } else {
                    target
                };
                Some(vec![spec(target, node, Vec::new(), true)])
            }
            _ => None,
        },
        Language::Php => match kind {
            "namespace_use_declaration" => {
                let mut out = Vec::new();
                let prefix = node
                    .named_children(&mut node.walk())
                    .find(|c| c.kind() == "namespace_name")
                    .map(|p| text(p, src).to_string());
                let mut cursor = node.walk();
                let clauses: Vec<Node> = node.named_children(&mut cursor).collect();
                let mut stack = clauses;
                while let Some(c) = stack.pop() {
                    match c.kind() {
                        "namespace_use_clause" => {
                            let path = c.named_child(0).map(|n| text(n, src)).unwrap_or("");
                            let full = match &prefix {
                                Some(p) if !path.is_empty() => format!("{p}\\{path}"),
                                _ => path.to_string(),
                            };
                            let alias = c.child_by_field_name("alias").map(|a| text(a, src).to_string());
                            let last = full.rsplit('\\').next().unwrap_or("").to_string();
                            out.push(spec(
                                full.trim_start_matches('\\').to_string(),
                                node,
                                vec![alias.unwrap_or(last)],
                                false,
                            ));
                        }
                        "namespace_use_group" => {
                            let mut cursor = c.walk();
                            stack.extend(c.named_children(&mut cursor));
                        }
                        _ => {}
                    }
                }
                Some(out)
            }
            "require_expression" | "require_once_expression" | "include_expression" | "include_once_expression" => {
                let arg = node.named_child(0)?;
                // `__DIR__ . '/util.php'`: a path joined from the file's own folder.
                let target = match arg.kind() {
                    "binary_expression" => {
                        let left = text(arg.child_by_field_name("left")?, src);
                        let right = string_value(arg.child_by_field_name("right")?, src)?;
                        if left == "__DIR__" || left == "dirname(__FILE__)" {
                            format!(".{}", if right.starts_with('/') { right } else { format!("/{right}") })
                        } else {
                            return Some(vec![spec(text(arg, src).to_string(), node, Vec::new(), true)]);
                        }
                    }
                    _ => string_value(arg, src)?,
                };
                Some(vec![spec(target, node, Vec::new(), true)])
            }
            _ => None,
        },
        Language::Lua => match kind {
            "function_call" => {
                let name = node.child_by_field_name("name")?;
                if text(name, src) != "require" && text(name, src) != "dofile" {
                    return None;
                }
                let target = string_value(first_string(node.child_by_field_name("arguments")?)?, src)?;
                Some(vec![spec(target, node, bound_by_declaration(node, src), false)])
            }
            _ => None,
        },
        Language::Bash => match kind {
            "command" => {
                let name = text(node.child_by_field_name("name")?, src);
                if name != "source" && name != "." {
                    return None;
                }
                let arg = node.child_by_field_name("argument")?;
                let raw = text(arg, src).trim_matches(['"', '\'']).to_string();
                Some(vec![spec(raw, node, Vec::new(), true)])
            }
            _ => None,
        },
        Language::Elixir => match kind {
            "call" => {
                let target = text(node.child_by_field_name("target")?, src);
                if !matches!(target, "alias" | "import" | "require" | "use") {
                    return None;
                }
                let args = node.named_children(&mut node.walk()).find(|c| c.kind() == "arguments")?;
                let first = args.named_child(0)?;
                if first.kind() != "alias" {
                    return Some(Vec::new());
                }
                let module = text(first, src).to_string();
                let bound = module.rsplit('.').next().unwrap_or("").to_string();
                Some(vec![spec(module, node, vec![bound], false)])
            }
            _ => None,
        },
        Language::Haskell => match kind {
            "import" => {
                let module = text(node.child_by_field_name("module")?, src).to_string();
                let mut names = Vec::new();
                if let Some(list) = node.child_by_field_name("names") {
                    collect_idents(list, src, &mut names, usize::MAX);
                }
                Some(vec![spec(module, node, names, false)])
            }
            _ => None,
        },
        Language::Zig => match kind {
            "builtin_function" => {
                let mut cursor = node.walk();
                let name = node.named_children(&mut cursor).find(|c| c.kind() == "builtin_identifier")?;
                if text(name, src) != "@import" {
                    return None;
                }
                let target = string_value(first_string(node)?, src)?;
                Some(vec![spec(target, node, Vec::new(), true)])
            }
            _ => None,
        },
        _ => None,
    }
}

/// The names an import statement binds under another name than the one its target defines
/// them by, as (bound, original): `import { a as b }`, `export { a as b } from`, `from m
/// import a as b`, `use m::a as b`, `const { a: b } = require(…)`. Uses of `b` in the file are
/// uses of `a` (`extract::apply_renames`). A module bound under an alias (`import m as n`,
/// `import * as n`) is not a rename: its uses go through the binding.
pub(super) fn renames(language: Language, node: Node, src: &[u8]) -> Vec<(String, String)> {
    let (pair_kinds, original_field, bound_field): (&[&str], &str, &str) = match language {
        Language::TypeScript | Language::Tsx | Language::JavaScript => {
            (&["import_specifier", "export_specifier", "pair_pattern"], "name", "alias")
        }
        Language::Python if node.kind() == "import_from_statement" => (&["aliased_import"], "name", "alias"),
        Language::Rust => (&["use_as_clause"], "path", "alias"),
        _ => return Vec::new(),
    };
    // `const { a: b } = require(…)`: the pattern is the declaration's, around the call.
    let mut top = node;
    if node.kind() == "call_expression" {
        let mut up = node.parent();
        while let Some(parent) = up.filter(|p| matches!(p.kind(), "await_expression" | "parenthesized_expression")) {
            up = parent.parent();
        }
        match up.filter(|p| p.kind() == "variable_declarator").and_then(|d| d.child_by_field_name("name")) {
            Some(pattern) => top = pattern,
            None => return Vec::new(),
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![top];
    while let Some(n) = stack.pop() {
        if pair_kinds.contains(&n.kind()) {
            // A destructuring pair is `key: value`.
            let (original, bound) = if n.kind() == "pair_pattern" {
                (n.child_by_field_name("key"), n.child_by_field_name("value"))
            } else {
                (n.child_by_field_name(original_field), n.child_by_field_name(bound_field))
            };
            if let (Some(original), Some(bound)) = (original, bound) {
                let original = text(original, src).rsplit("::").next().unwrap_or("").trim_matches(['"', '\'']);
                let bound = text(bound, src);
                let identifier = |s: &str| {
                    s.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$')
                        && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                };
                let reserved = |s: &str| matches!(s, "default" | "self" | "super" | "crate");
                if identifier(original)
                    && identifier(bound)
                    && original != bound
                    && !reserved(original)
                    && !reserved(bound)
                {
                    out.push((bound.to_string(), original.to_string()));
                }
            }
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    out
}

/// The name `var x = require('./lib/x')` binds to a whole module of the repo (a relative
/// path, a plain name declared): JavaScript and TypeScript.
pub(super) fn whole_module_binding(language: Language, node: Node, src: &[u8]) -> Option<String> {
    if !matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx)
        || node.kind() != "call_expression"
    {
        return None;
    }
    if text(node.child_by_field_name("function")?, src) != "require" {
        return None;
    }
    let target = string_value(node.child_by_field_name("arguments")?.named_child(0)?, src)?;
    if !target.starts_with('.') {
        return None;
    }
    let declarator = node.parent().filter(|p| p.kind() == "variable_declarator")?;
    let name = declarator.child_by_field_name("name").filter(|n| n.kind() == "identifier")?;
    Some(text(name, src).to_string())
}

/// Flattens a Rust use tree: `a::{b, c::d as e}` → `a::b` (b), `a::c::d` (e).
fn rust_use_tree(node: Node, prefix: &str, src: &[u8], stmt: Node, out: &mut Vec<ImportSpec>) {
    let join = |a: &str, b: &str| if a.is_empty() { b.to_string() } else { format!("{a}::{b}") };
    match node.kind() {
        "scoped_use_list" => {
            let path = node.child_by_field_name("path").map(|p| text(p, src)).unwrap_or("");
            let prefix = join(prefix, path);
            if let Some(list) = node.child_by_field_name("list") {
                rust_use_tree(list, &prefix, src, stmt, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                rust_use_tree(child, prefix, src, stmt, out);
            }
        }
        "use_as_clause" => {
            let path = node.child_by_field_name("path").map(|p| text(p, src)).unwrap_or("");
            let alias = node.child_by_field_name("alias").map(|a| text(a, src)).unwrap_or("");
            let full = join(prefix, path);
            // The original name is bound too: a use of the alias is read as one of it
            // (`renames`).
            let original = full.rsplit("::").next().unwrap_or("");
            let mut names = vec![alias.to_string()];
            if !original.is_empty() && original != alias && original != "self" && alias != "_" {
                names.push(original.to_string());
            }
            out.push(spec(full, stmt, names, false));
        }
        "use_wildcard" => {
            let path = text(node, src).trim_end_matches('*').trim_end_matches("::");
            out.push(spec(join(prefix, path), stmt, Vec::new(), false));
        }
        _ => {
            let path = text(node, src).replace(char::is_whitespace, "");
            let full = join(prefix, &path);
            let last = full.rsplit("::").next().unwrap_or("");
            let bound =
                if last == "self" { full.trim_end_matches("::self").rsplit("::").next().unwrap_or("") } else { last };
            let full = full.trim_end_matches("::self").to_string();
            out.push(spec(full, stmt, vec![bound.to_string()], false));
        }
    }
}

/// The names a `const x = require(…)` / `local x = require(…)` binds: the declared name, or
/// the names of a destructuring pattern.
fn bound_by_declaration(call: Node, src: &[u8]) -> Vec<String> {
    let mut up = call.parent();
    for _ in 0..4 {
        let Some(node) = up else {
            break;
        };
        match node.kind() {
            "variable_declarator" => {
                let Some(name) = node.child_by_field_name("name") else {
                    break;
                };
                let mut out = Vec::new();
                collect_idents(name, src, &mut out, usize::MAX);
                if name.kind() == "identifier" {
                    return vec![text(name, src).to_string()];
                }
                return out;
            }
            "assignment_statement" => {
                let mut cursor = node.walk();
                let list = node.named_children(&mut cursor).find(|c| c.kind() == "variable_list");
                let mut out = Vec::new();
                if let Some(list) = list {
                    collect_idents(list, src, &mut out, usize::MAX);
                }
                return out;
            }
            "await_expression" | "expression_list" | "parenthesized_expression" | "variable_declaration" => {
                up = node.parent()
            }
            _ => break,
        }
    }
    Vec::new()
}

/// Identifier texts under `node`, skipping the node with id `skip`.
fn collect_idents(node: Node, src: &[u8], out: &mut Vec<String>, skip: usize) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.id() == skip {
            continue;
        }
        if n.kind().contains("identifier") || n.kind() == "variable" {
            out.push(text(n, src).to_string());
            continue;
        }
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
}

/// The name a Go import binds when it gives none, as `goimports` assumes it from the path
/// (the package clause has the last word, but it is in another file): the last element,
/// or the one before a major version (`github.com/go-chi/chi/v5` → `chi`), without a
/// `gopkg.in` version (`yaml.v3` → `yaml`) or a `go-` prefix (`go-runewidth` → `runewidth`),
/// up to its first character that cannot be in a name (`go-toml` → `toml`).
fn go_assumed_name(path: &str) -> String {
    let mut parts = path.rsplit('/');
    let mut base = parts.next().unwrap_or("");
    let major = |s: &str| s.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if major(base) {
        base = parts.next().unwrap_or(base);
    }
    if path.starts_with("gopkg.in/") {
        base = base.split(".v").next().unwrap_or(base);
    }
    let base = base.strip_prefix("go-").unwrap_or(base);
    let end = base.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(base.len());
    base[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_go_import_binds_the_name_goimports_assumes() {
        for (path, name) in [
            ("net/http", "http"),
            ("github.com/go-chi/chi/v5", "chi"),
            ("gopkg.in/yaml.v3", "yaml"),
            ("github.com/mattn/go-runewidth", "runewidth"),
            ("github.com/pelletier/go-toml/v2", "toml"),
            ("example.com/v2", "example"),
        ] {
            assert_eq!(go_assumed_name(path), name, "{path}");
        }
    }
}
