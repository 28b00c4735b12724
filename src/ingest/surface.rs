//! A source file's public surface: how many public items it documents.
//!
//! Why: a question asked in plain words ("pause the current task for a while") is answered
//! by the file where a public item and its doc comment live (`time/sleep.rs`), while the
//! files that share most of its words ("task", "wait") are often internal plumbing: a
//! runtime's scheduler, private helpers, a vendored mock of another library. Code of a file
//! that documents no public item is ranked a little lower (`index::INTERNAL_PRIOR`).

use super::lang::Language;

/// A documented item of a file.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    name: String,
    public: bool,
}

/// Documented public items of a source file; `None` for prose, data files and languages
/// this does not read.
pub fn public_items(language: Language, text: &str) -> Option<usize> {
    let items = match language {
        Language::Python => python_items(text),
        Language::Rust | Language::TypeScript | Language::Tsx | Language::JavaScript | Language::Go => {
            comment_items(language, text)
        }
        Language::C
        | Language::Cpp
        | Language::Java
        | Language::Kotlin
        | Language::CSharp
        | Language::Swift
        | Language::Php
        | Language::Ruby => comment_items(language, text),
        _ => return None,
    };
    Some(items.iter().filter(|item| item.public).count())
}

/// Documented items of a language with comment docs (`///`, `/** */`, `//`).
fn comment_items(language: Language, text: &str) -> Vec<Item> {
    let mut documented = false;
    let mut in_block = false;
    let mut exported = false;
    // Brackets an attribute or decorator left open: its lines go on until they close.
    let mut open_brackets = 0i32;
    let mut items = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if in_block {
            in_block = !line.contains("*/");
            continue;
        }
        if open_brackets > 0 {
            open_brackets += bracket_balance(line);
            continue;
        }
        if line.starts_with("//!") || line.starts_with("/*!") {
            in_block = line.starts_with("/*!") && !line.contains("*/");
            continue;
        }
        if line.starts_with("///") {
            documented = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("/*") {
            documented = true;
            in_block = !rest.contains("*/");
            continue;
        }
        if line.starts_with("//") {
            // Plain line comments document items in Go and many C-family files; in Rust
            // they are notes, not docs.
            documented |= language != Language::Rust;
            continue;
        }
        if line.is_empty() {
            documented = false;
            continue;
        }
        // Attributes and decorators sit between a doc and its item, on one line or several
        // (`#[cfg_attr(\n    not(…),\n    diagnostic::on_unimplemented(…)\n)]`, as serde's
        // traits have).
        if line.starts_with("#[") || line.starts_with('@') {
            exported |= line.starts_with("#[macro_export");
            open_brackets = bracket_balance(line).max(0);
            continue;
        }
        let fragment = if language == Language::Rust { macro_fragment(line) } else { None };
        if let Some(name) = fragment.filter(|_| documented) {
            // A doc-wrapper macro (`macro_rules! doc { ($select:item) => { /// … #[macro_export]
            // $select } }`, as tokio writes `select!`, `join!`): the docs and the export
            // belong to the item the macro is given.
            items.push(Item { name: name.to_string(), public: exported });
        } else if documented {
            if let Some((name, public)) = item_name(language, line) {
                items.push(Item { name, public: public || exported });
            }
        }
        documented = false;
        exported = false;
    }
    items
}

/// Brackets a line opens minus those it closes, outside string literals.
fn bracket_balance(line: &str) -> i32 {
    let (mut balance, mut in_string, mut escaped) = (0, false, false);
    for c in line.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => balance += 1,
            ')' | ']' | '}' => balance -= 1,
            _ => {}
        }
    }
    balance
}

/// `$name` (a macro's fragment standing for an item), as written without its trailing `;`/`,`.
fn macro_fragment(line: &str) -> Option<&str> {
    let fragment = line.trim_end_matches([';', ',']);
    let name = fragment.strip_prefix('$')?;
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(fragment)
}

/// Keywords that come before an item's name.
const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "mod",
    "union",
    "const",
    "static",
    "class",
    "interface",
    "function",
    "func",
    "def",
    "macro_rules!",
    "record",
    "object",
    "protocol",
    "module",
    "namespace",
];
/// Modifiers skipped on the way to the keyword.
const MODIFIERS: &[&str] = &[
    "pub",
    "pub(crate)",
    "pub(super)",
    "export",
    "default",
    "async",
    "unsafe",
    "extern",
    "abstract",
    "public",
    "private",
    "protected",
    "internal",
    "final",
    "override",
    "open",
    "sealed",
    "data",
    "declare",
    "readonly",
    "virtual",
    "inline",
    "let",
    "var",
];

/// The name an item line declares, and whether it is public.
fn item_name(language: Language, line: &str) -> Option<(String, bool)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut i = 0;
    let mut public = false;
    while i < words.len() && (MODIFIERS.contains(&words[i]) || words[i].starts_with("extern\"")) {
        public |= matches!(words[i], "pub" | "export" | "public");
        i += 1;
    }
    let keyword = *words.get(i)?;
    let name_word = if ITEM_KEYWORDS.contains(&keyword) {
        words.get(i + 1)?
    } else if keyword.starts_with("fn") && keyword.contains('(') {
        keyword
    } else if matches!(language, Language::TypeScript | Language::Tsx | Language::JavaScript) && i > 0 {
        // `export const foo = …` is covered above; a method `foo(…) {` inside a class is not
        // a public item of the file.
        return None;
    } else {
        return None;
    };
    let name: String = name_word
        .trim_start_matches('*')
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    if name.is_empty() {
        return None;
    }
    if language == Language::Go {
        public = name.chars().next().is_some_and(char::is_uppercase);
    }
    let name = if keyword == "macro_rules!" { format!("{name}!") } else { name };
    Some((name, public))
}

/// Documented functions and classes of a Python file (a docstring after the signature).
fn python_items(text: &str) -> Vec<Item> {
    let lines: Vec<&str> = text.lines().collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let declared = line
            .strip_prefix("async def ")
            .or_else(|| line.strip_prefix("def "))
            .or_else(|| line.strip_prefix("class "));
        let Some(rest) = declared else {
            i += 1;
            continue;
        };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // The docstring follows the line that ends the signature.
        let mut end = i;
        while end < lines.len() && !lines[end].trim_end().ends_with(':') && end < i + 20 {
            end += 1;
        }
        let body = (end + 1..lines.len()).find(|&j| !lines[j].trim().is_empty());
        if body.is_some_and(|j| is_docstring(&lines, j)) && !name.is_empty() {
            // Methods of a class are its API as much as the class is.
            items.push(Item { public: !name.starts_with('_'), name });
        }
        i = end + 1;
    }
    items
}

/// Whether line `at` starts a string literal (`"""…`, `\'\'\'…`, `r"…`).
fn is_docstring(lines: &[&str], at: usize) -> bool {
    let body = lines[at].trim().trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    body.starts_with('"') || body.starts_with('\'')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_public_items_need_a_doc_comment_and_pub_or_macro_export() {
        let text = r#"//! Utilities for tracking time.

/// An internal helper.
fn helper() {}

/// Waits until `duration` has elapsed.
///
/// ```
/// sleep(d).await;
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {}

pub fn undocumented() {}

/// Crate-internal.
pub(crate) struct Inner {}

/// Waits on multiple branches, returning when the first completes.
#[macro_export]
macro_rules! select { () => {} }
"#;
        let items = comment_items(Language::Rust, text);
        let names: Vec<(&str, bool)> = items.iter().map(|i| (i.name.as_str(), i.public)).collect();
        assert_eq!(names, [("helper", false), ("sleep", true), ("Inner", false), ("select!", true)]);
        assert_eq!(public_items(Language::Rust, text), Some(2));
        assert_eq!(public_items(Language::Rust, "pub(crate) fn run() {}\n"), Some(0));
    }

    #[test]
    fn an_attribute_or_decorator_over_several_lines_stays_between_a_doc_and_its_item() {
        let text = r#"/// A data structure that can be serialized.
#[cfg_attr(
    not(no_diagnostic_namespace),
    diagnostic::on_unimplemented(
        message = "the trait bound `{Self}: Serialize` is not satisfied (\")\" ]",
    )
)]
pub trait Serialize {}

/// Not public.
fn helper() {}
"#;
        let items = comment_items(Language::Rust, text);
        let names: Vec<(&str, bool)> = items.iter().map(|i| (i.name.as_str(), i.public)).collect();
        assert_eq!(names, [("Serialize", true), ("helper", false)]);
        let typescript = "/** A button. */\n@Component({\n  selector: \"app-button\",\n})\nexport class Button {}\n";
        assert_eq!(public_items(Language::TypeScript, typescript), Some(1));
    }

    #[test]
    fn an_exported_item_documented_inside_a_doc_wrapper_macro_is_public() {
        let text = r#"macro_rules! doc {
    ($select:item) => {
        /// Waits on multiple concurrent branches, returning when the first completes.
        #[macro_export]
        #[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
        $select
    };
}

macro_rules! private_doc {
    ($inner:item) => {
        /// Not exported.
        $inner
    };
}

doc! {macro_rules! select {
    () => {}
}}
"#;
        let items = comment_items(Language::Rust, text);
        let names: Vec<(&str, bool)> = items.iter().map(|i| (i.name.as_str(), i.public)).collect();
        assert_eq!(names, [("$select", true), ("$inner", false)]);
        assert_eq!(public_items(Language::Rust, text), Some(1));
    }

    #[test]
    fn python_items_are_functions_and_classes_with_docstrings() {
        let text = r#""""Render tables."""

class Table(JupyterMixin):
    """A console renderable to draw a table."""

    def add_row(
        self, *renderables
    ) -> None:
        """Add a row of renderables."""

def _private():
    '''Internal.'''

def undocumented():
    return 1
"#;
        let items = python_items(text);
        let names: Vec<(&str, bool)> = items.iter().map(|i| (i.name.as_str(), i.public)).collect();
        assert_eq!(names, [("Table", true), ("add_row", true), ("_private", false)]);
        assert_eq!(public_items(Language::Python, text), Some(2));
        assert_eq!(public_items(Language::Python, "def _helper():\n    \"\"\"Private.\"\"\"\n"), Some(0));
    }

    #[test]
    fn typescript_go_and_unread_languages() {
        let ts = "/**\n * Parses a duration string.\n */\nexport function parseDuration(s: string) {}\n";
        assert_eq!(public_items(Language::TypeScript, ts), Some(1));
        let go = "// Package pool runs jobs.\npackage pool\n\n// Run starts the pool.\nfunc Run() {}\n\n// stop it.\nfunc stop() {}\n";
        assert_eq!(public_items(Language::Go, go), Some(1));
        assert_eq!(public_items(Language::Markdown, "# Title\n"), None);
        assert_eq!(public_items(Language::OtherCode("toml"), "a = 1\n"), None);
    }
}
