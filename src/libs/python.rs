//! Python distributions: the long description (usually the README) and the docstrings of
//! public modules, classes and functions with their signatures, one Markdown page per
//! module. From the repo's virtualenv when it has the locked version installed, else from
//! the registry (`pip download --no-deps`: a wheel, or the sdist).

use std::path::Path;
use std::time::Duration;

use super::detect::normalize_python_name;
use super::{extract_tar_gz, first_paragraph, run_command, CachedLibrary, Dependency, EntryBuilder};
use crate::config::LibsConfig;
use crate::protocol::{DocdexError, ErrorCode, Result};

/// Source files of a distribution worth reading: public modules, no tests or build scripts.
fn wanted_module(path: &str) -> bool {
    if !(path.ends_with(".py") || path.ends_with(".pyi")) || path.contains("..") {
        return false;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let skip_dir = |p: &&str| {
        matches!(*p, "tests" | "test" | "testing" | "docs" | "examples" | "benchmarks" | "build" | "__pycache__")
            || p.ends_with(".dist-info")
            || p.ends_with(".egg-info")
    };
    let file = parts.last().copied().unwrap_or("");
    !parts[..parts.len() - 1].iter().any(skip_dir)
        && file != "setup.py"
        && file != "conftest.py"
        && !file.starts_with("test_")
        // Private modules (`_internal.py`) hold implementation; `__init__` is the package's face.
        && (!file.starts_with('_') || file.starts_with("__init__"))
}

/// `Summary` and the long description of a METADATA / PKG-INFO file.
fn parse_metadata(text: &str) -> (String, String) {
    let (headers, body) = text.split_once("\n\n").unwrap_or((text, ""));
    let summary = headers.lines().find_map(|l| l.strip_prefix("Summary:")).unwrap_or("").trim().to_string();
    let mut description = body.trim().to_string();
    if description.is_empty() {
        // Older metadata puts it in a folded `Description:` header.
        if let Some(start) = headers.find("\nDescription:") {
            description = headers[start + 13..]
                .lines()
                .map(|l| l.strip_prefix("        ").unwrap_or(l.trim_start_matches('|')))
                .collect::<Vec<_>>()
                .join("\n");
        }
    }
    (summary, description)
}

/// The module's dotted name from its path in a wheel or site-packages (`rich/console.py` →
/// `rich.console`), or in an sdist (`src/` and the top directory dropped).
fn module_name(path: &str) -> String {
    let path = path.strip_prefix("src/").unwrap_or(path);
    let path = path.trim_end_matches(".pyi").trim_end_matches(".py");
    let path = path.strip_suffix("/__init__").unwrap_or(path);
    path.replace('/', ".")
}

pub async fn fetch(
    repo_root: &Path,
    cache_root: &Path,
    dep: &Dependency,
    config: &LibsConfig,
    deadline: Duration,
) -> Result<CachedLibrary> {
    let mut entry = EntryBuilder::new(cache_root, dep, config)?;
    let wanted = normalize_python_name(&dep.name);
    let mut metadata = None;
    let mut modules: Vec<(String, String)> = Vec::new();
    let mut origin = "site-packages";
    'sites: for site in super::detect::site_packages_dirs(repo_root) {
        for info in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let name = info.file_name().to_string_lossy().to_string();
            let Some((dist, version)) = name.strip_suffix(".dist-info").and_then(|s| s.rsplit_once('-')) else {
                continue;
            };
            if normalize_python_name(dist) != wanted || version != dep.version {
                continue;
            }
            metadata = std::fs::read_to_string(info.path().join("METADATA")).ok();
            let record = std::fs::read_to_string(info.path().join("RECORD")).unwrap_or_default();
            for line in record.lines() {
                let path = line.split(',').next().unwrap_or("");
                if wanted_module(path) && modules.len() < config.max_files_per_library {
                    if let Ok(text) = std::fs::read_to_string(site.join(path)) {
                        modules.push((path.to_string(), text));
                    }
                }
            }
            break 'sites;
        }
    }
    if metadata.is_none() {
        origin = "pip-download";
        let work = tempfile::tempdir()?;
        let python = std::env::var_os("DOCDEX_PYTHON").unwrap_or_else(|| "python3".into());
        let mut command = tokio::process::Command::new(python);
        command
            .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--quiet", "-d"])
            .arg(work.path())
            .arg(format!("{}=={}", dep.name, dep.version));
        run_command(command, &format!("`pip download {}=={}`", dep.name, dep.version), deadline).await?;
        let archive = std::fs::read_dir(work.path())?.flatten().map(|e| e.path()).next().ok_or_else(|| {
            DocdexError::new(
                ErrorCode::LibraryUnavailable,
                format!("`pip download {}=={}` wrote nothing", dep.name, dep.version),
            )
        })?;
        let archive_name = archive.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if archive_name.ends_with(".whl") {
            let file = std::fs::File::open(&archive)?;
            let mut zip = zip::ZipArchive::new(file)
                .map_err(|err| DocdexError::internal(format!("{archive_name} is not a readable wheel: {err}")))?;
            let mut bytes = 0u64;
            for i in 0..zip.len() {
                let Ok(mut member) = zip.by_index(i) else { continue };
                let name = member.name().to_string();
                let is_metadata = name.ends_with(".dist-info/METADATA");
                if !(is_metadata || wanted_module(&name)) || bytes > config.max_bytes_per_library {
                    continue;
                }
                let mut text = String::new();
                if std::io::Read::read_to_string(&mut member, &mut text).is_err() {
                    continue;
                }
                bytes += text.len() as u64;
                if is_metadata {
                    metadata = Some(text);
                } else if modules.len() < config.max_files_per_library {
                    modules.push((name, text));
                }
            }
        } else {
            for (name, text) in extract_tar_gz(
                &archive,
                |path| {
                    // Members sit under `<name>-<version>/`.
                    let relative = path.split_once('/').map(|(_, rest)| rest)?;
                    (relative == "PKG-INFO" || wanted_module(relative)).then(|| relative.to_string())
                },
                config.max_files_per_library + 1,
                config.max_bytes_per_library,
            )? {
                if name == "PKG-INFO" {
                    metadata = Some(text);
                } else {
                    modules.push((name, text));
                }
            }
        }
    }
    let (summary, long_description) = parse_metadata(metadata.as_deref().unwrap_or(""));
    if !long_description.trim().is_empty() {
        entry.add_doc("README.md", &long_description)?;
    }
    let mut items = 0u64;
    modules.sort();
    for (path, source) in &modules {
        let name = module_name(path);
        let (page, count) = api_page(&name, source);
        if count > 0 || page.lines().count() > 2 {
            items += count as u64;
            if !entry.add_doc(&format!("api/{}.md", name.replace('.', "/")), &page)? {
                break;
            }
        }
    }
    if entry.doc_count() == 0 {
        entry.notes.push("no long description and no documented public modules".into());
    }
    let description = if summary.is_empty() { first_paragraph(&long_description, 1000) } else { summary };
    entry.finish(dep, &description, origin, items)
}

/// A module's page: its docstring, then each public class and function (signature, then
/// docstring), methods under their class. Returns the page and how many items it documents.
pub fn api_page(module: &str, source: &str) -> (String, usize) {
    let mut parser = tree_sitter::Parser::new();
    let mut page = format!("# {module}\n\n");
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return (page, 0);
    }
    let Some(tree) = parser.parse(source, None) else { return (page, 0) };
    let root = tree.root_node();
    if let Some(doc) = docstring(root, source) {
        page.push_str(&doc);
        page.push_str("\n\n");
    }
    let mut count = 0;
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        count += definition(node, source, module, "##", &mut page);
    }
    (page, count)
}

fn definition(node: tree_sitter::Node, source: &str, prefix: &str, level: &str, page: &mut String) -> usize {
    let node = if node.kind() == "decorated_definition" {
        match node.child_by_field_name("definition") {
            Some(inner) => inner,
            None => return 0,
        }
    } else {
        node
    };
    let kind = match node.kind() {
        "class_definition" => "class",
        "function_definition" => {
            if level == "##" {
                "def"
            } else {
                "method"
            }
        }
        _ => return 0,
    };
    let Some(name) = node.child_by_field_name("name").and_then(|n| n.utf8_text(source.as_bytes()).ok()) else {
        return 0;
    };
    if name.starts_with('_') && name != "__init__" && name != "__call__" {
        return 0;
    }
    let Some(body) = node.child_by_field_name("body") else { return 0 };
    let doc_opt = docstring(body, source);
    // Undocumented methods are noise; undocumented top-level definitions still show their
    // signature (the API's shape).
    if doc_opt.is_none() && kind == "method" {
        return 0;
    }
    let signature = source[node.start_byte()..body.start_byte()].trim_end().trim_end_matches(':').to_string();
    let signature = signature.lines().map(str::trim_end).collect::<Vec<_>>().join("\n");
    let path = format!("{prefix}.{name}");
    page.push_str(&format!("{level} {kind} {path}\n\n```python\n{signature}\n```\n\n"));
    if let Some(doc) = doc_opt {
        page.push_str(&doc);
        page.push_str("\n\n");
    }
    let mut count = 1;
    if kind == "class" {
        let mut cursor = body.walk();
        for member in body.named_children(&mut cursor) {
            count += definition(member, source, &path, "###", page);
        }
    }
    count
}

/// The docstring of a module or body: its first statement, when that is a string literal,
/// with quotes removed and common indentation stripped (like `inspect.cleandoc`).
fn docstring(body: tree_sitter::Node, source: &str) -> Option<String> {
    let mut cursor = body.walk();
    let first = body.named_children(&mut cursor).find(|n| n.kind() != "comment")?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let string = first.named_child(0).filter(|n| n.kind() == "string")?;
    let raw = string.utf8_text(source.as_bytes()).ok()?;
    let raw = raw.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    let inner =
        ["\"\"\"", "'''", "\"", "'"].iter().find_map(|q| raw.strip_prefix(q).and_then(|r| r.strip_suffix(q)))?;
    let mut lines = inner.lines();
    let first_line = lines.next().unwrap_or("").trim().to_string();
    let rest: Vec<&str> = lines.collect();
    let indent =
        rest.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    let mut out = vec![first_line];
    out.extend(rest.iter().map(|l| l.get(indent..).unwrap_or("").trim_end().to_string()));
    let text = out.join("\n").trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstrings_of_public_definitions_with_signatures() {
        let source = r#""""Render tables.

    Long text.
"""
import os

def render(table, *, width: int = 80) -> str:
    """Render a table to text."""
    return ""

def _private():
    """Hidden."""

@dataclass
class Table:
    """A table of rows."""

    def add_row(self, *cells):
        """Add a row of cells."""

    def _grow(self):
        """Internal."""

    def undocumented(self):
        pass
"#;
        let (page, count) = api_page("rich.table", source);
        assert_eq!(count, 3, "{page}");
        assert!(page.starts_with("# rich.table\n\nRender tables.\n\nLong text."), "{page}");
        assert!(page.contains("## def rich.table.render\n\n```python\ndef render(table, *, width: int = 80) -> str\n```\n\nRender a table to text."), "{page}");
        assert!(
            page.contains("## class rich.table.Table") && page.contains("### method rich.table.Table.add_row"),
            "{page}"
        );
        assert!(!page.contains("_private") && !page.contains("_grow") && !page.contains("undocumented"), "{page}");
    }

    #[test]
    fn modules_worth_reading() {
        assert!(wanted_module("rich/console.py"));
        assert!(wanted_module("rich/__init__.py"));
        assert!(!wanted_module("rich/_loop.py"));
        assert!(!wanted_module("tests/test_console.py"));
        assert!(!wanted_module("rich-14.1.0.dist-info/METADATA"));
        assert_eq!(module_name("src/attr/__init__.py"), "attr");
        assert_eq!(module_name("rich/console.py"), "rich.console");
        let (summary, description) = parse_metadata("Name: x\nSummary: Fast things\n\n# x\n\nBody.");
        assert_eq!((summary.as_str(), description.as_str()), ("Fast things", "# x\n\nBody."));
    }
}
