//! File cards: one extra search unit per source file that says what the file is for, in the
//! words its authors chose: the path, the module documentation and, per documented item, its
//! name and the first sentence of its doc comment, public items first.
//!
//! Why: a question asked in plain words ("pause the current task for a while") is answered
//! by the file where the public item and its doc comment live (`time/sleep.rs`: "Waits until
//! `duration` has elapsed"), but the chunks of that file mostly hold code, examples and
//! internals, and a small embedding model that sees 256 tokens of a chunk ranks it below
//! internals that share a word with the question. The card concentrates the file's own
//! summary into one short text, for BM25 and for the embedding alike.

use super::chunk::Chunk;
use super::lang::Language;
use super::sha256_hex;

/// Longest card text (the embedding model reads about the first 1,000 characters; BM25 sees
/// all of it).
const CARD_MAX_CHARS: usize = 1800;
const MODULE_DOC_MAX_CHARS: usize = 360;
const SENTENCE_MAX_CHARS: usize = 160;
const MAX_ITEMS: usize = 40;

/// A documented item of a file.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    name: String,
    summary: String,
    public: bool,
}

/// The card of a source file, or `None` for prose, data files and files without docs.
pub fn file_card(language: Language, text: &str) -> Option<Chunk> {
    let (module_doc, mut items) = match language {
        Language::Python => python_docs(text),
        Language::Rust | Language::TypeScript | Language::Tsx | Language::JavaScript | Language::Go => {
            comment_docs(language, text)
        }
        Language::OtherCode("c" | "cpp" | "java" | "kotlin" | "csharp" | "swift" | "php" | "ruby") => {
            comment_docs(language, text)
        }
        _ => return None,
    };
    if module_doc.is_empty() && items.is_empty() {
        return None;
    }
    // Public items first, each group in file order.
    items.sort_by_key(|item| !item.public);
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(item.name.clone()));
    items.truncate(MAX_ITEMS);
    // The path is not in the text: BM25 has it in its own field and the embedding input
    // starts with it.
    let mut card = String::new();
    if !module_doc.is_empty() {
        card.push_str(&module_doc);
        card.push('\n');
    }
    for item in &items {
        let line = if item.summary.is_empty() { item.name.clone() } else { format!("{}: {}", item.name, item.summary) };
        if card.len() + line.len() + 1 > CARD_MAX_CHARS {
            break;
        }
        card.push_str(&line);
        card.push('\n');
    }
    let card = card.trim_end().to_string();
    let lines = text.lines().count().max(1) as u64;
    Some(Chunk {
        line_start: 1,
        line_end: lines,
        content_hash: sha256_hex(card.as_bytes()),
        text: card,
        heading: String::new(),
        symbols: items.into_iter().map(|item| item.name).collect(),
        card: true,
    })
}

/// Module doc and documented items of a language with comment docs (`///`, `/** */`, `//`).
fn comment_docs(language: Language, text: &str) -> (String, Vec<Item>) {
    let mut module_doc: Vec<String> = Vec::new();
    let mut module_closed = false;
    let mut pending: Vec<String> = Vec::new();
    let mut in_block = false;
    let mut seen_code = false;
    let mut exported = false;
    let mut items = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if in_block {
            let (content, closed) = match line.find("*/") {
                Some(end) => (&line[..end], true),
                None => (line, false),
            };
            pending.push(content.trim_start_matches('*').trim().to_string());
            in_block = !closed;
            continue;
        }
        if let Some(rest) = line.strip_prefix("//!").or_else(|| line.strip_prefix("/*!")) {
            if !module_closed {
                module_doc.push(rest.trim_end_matches("*/").trim().to_string());
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("///") {
            pending.push(rest.trim().to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("/**").or_else(|| line.strip_prefix("/*")) {
            match rest.find("*/") {
                Some(end) => pending.push(rest[..end].trim().to_string()),
                None => {
                    pending.push(rest.trim_start_matches('*').trim().to_string());
                    in_block = true;
                }
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("//") {
            // Plain line comments document items in Go and many C-family files; in Rust
            // they are notes, not docs.
            if language != Language::Rust {
                pending.push(rest.trim().to_string());
            }
            continue;
        }
        if line.is_empty() {
            // A comment block at the top of a file, before any code, is its module doc
            // (unless it is a licence header).
            if !seen_code && module_doc.is_empty() && language != Language::Rust && !pending.is_empty() {
                let block = pending.join(" ");
                let lower = block.to_ascii_lowercase();
                if !lower.contains("copyright") && !lower.contains("license") && !lower.contains("spdx") {
                    module_doc = std::mem::take(&mut pending);
                }
            }
            pending.clear();
            continue;
        }
        // Attributes and decorators sit between a doc and its item.
        if line.starts_with("#[") || line.starts_with('@') {
            exported |= line.starts_with("#[macro_export");
            continue;
        }
        // Go and Java put the package doc right above the package clause.
        if line.starts_with("package ") && module_doc.is_empty() && !pending.is_empty() {
            module_doc = std::mem::take(&mut pending);
        }
        seen_code = true;
        if !module_doc.is_empty() {
            module_closed = true;
        }
        if !pending.is_empty() {
            if let Some((name, public)) = item_name(language, line) {
                let public = public || exported;
                items.push(Item { name, summary: first_sentence(&pending.join("\n")), public });
            }
            pending.clear();
        }
        exported = false;
    }
    (summary_text(&module_doc.join("\n"), MODULE_DOC_MAX_CHARS), items)
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

/// Module docstring and documented functions and classes of a Python file.
fn python_docs(text: &str) -> (String, Vec<Item>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut module_doc = String::new();
    // The module docstring is the first statement.
    if let Some(first) = lines.iter().position(|l| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    }) {
        if let Some(doc) = docstring_at(&lines, first) {
            module_doc = summary_text(&doc, MODULE_DOC_MAX_CHARS);
        }
    }
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
        if let Some(doc) = body.and_then(|j| docstring_at(&lines, j)) {
            let nested = lines[i].len() - line.len() > 4;
            // Dunder methods other than __init__ say little about the file.
            let dunder = name.starts_with("__") && name != "__init__";
            if !name.is_empty() && !dunder {
                items.push(Item { summary: first_sentence(&doc), public: !name.starts_with('_') && !nested, name });
            }
        }
        i = end + 1;
    }
    (module_doc, items)
}

/// The string literal starting on line `at`, if it is one (`"""…"""`, `'''…'''`, `r"""`…).
fn docstring_at(lines: &[&str], at: usize) -> Option<String> {
    let first = lines[at].trim();
    let body = first.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    let quote = ["\"\"\"", "'''", "\"", "'"].into_iter().find(|q| body.starts_with(q))?;
    let after = &body[quote.len()..];
    if let Some(end) = after.find(quote) {
        return Some(after[..end].to_string());
    }
    if quote.len() == 1 {
        return None;
    }
    let mut doc = vec![after.to_string()];
    for line in lines.iter().skip(at + 1).take(200) {
        match line.find(quote) {
            Some(end) => {
                doc.push(line[..end].trim().to_string());
                return Some(doc.join("\n"));
            }
            None => doc.push(line.trim().to_string()),
        }
    }
    Some(doc.join("\n"))
}

/// The first sentence of a doc comment, without Markdown link syntax, at most 160 chars.
fn first_sentence(doc: &str) -> String {
    let paragraph: Vec<&str> =
        doc.lines().map(str::trim).skip_while(|l| l.is_empty()).take_while(|l| !l.is_empty()).collect();
    let text = clean_markdown(&paragraph.join(" "));
    let end = text
        .char_indices()
        .find(|&(i, c)| c == '.' && text[i + 1..].starts_with(' ') || c == '。')
        .map(|(i, _)| i + 1)
        .unwrap_or(text.len());
    truncate_chars(text[..end].trim(), SENTENCE_MAX_CHARS)
}

/// The first paragraphs of a doc, up to `max` chars, without code blocks or headings.
fn summary_text(doc: &str, max: usize) -> String {
    let mut kept = Vec::new();
    let mut in_code = false;
    for line in doc.lines().map(str::trim) {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.starts_with('#') || line.starts_with(">>>") {
            continue;
        }
        kept.push(line);
    }
    let text = clean_markdown(&kept.join(" "));
    truncate_chars(text.split_whitespace().collect::<Vec<_>>().join(" ").trim(), max)
}

/// `[text](url)` → `text`, `` `code` `` → `code`, `[`Name`]` → `Name`.
fn clean_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' | '[' | ']' | '*' => {}
            _ => out.push(c),
        }
        // Drop a link target right after a link text.
        if c == ']' && chars.peek() == Some(&'(') {
            for skipped in chars.by_ref() {
                if skipped == ')' {
                    break;
                }
            }
        }
    }
    out
}

fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_file_card_has_the_module_doc_and_the_public_items_first() {
        let text = r#"//! Utilities for tracking time.
//!
//! More detail that is not the summary.

/// An internal helper.
fn helper() {}

/// Waits until `duration` has elapsed. No work is performed meanwhile.
///
/// # Examples
/// ```
/// sleep(d).await;
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {}

/// Future returned by [`sleep`](sleep) and [`sleep_until`].
pub struct Sleep {}

/// Waits on multiple branches, returning when the first completes.
#[macro_export]
macro_rules! select { () => {} }
"#;
        let card = file_card(Language::Rust, text).unwrap();
        assert!(card.card);
        let lines: Vec<&str> = card.text.lines().collect();
        assert_eq!(lines[0], "Utilities for tracking time. More detail that is not the summary.");
        assert_eq!(lines[1], "sleep: Waits until duration has elapsed.");
        assert_eq!(lines[2], "Sleep: Future returned by sleep and sleep_until.");
        assert_eq!(lines[3], "select!: Waits on multiple branches, returning when the first completes.");
        assert_eq!(lines[4], "helper: An internal helper.");
        assert_eq!(card.symbols, vec!["sleep", "Sleep", "select!", "helper"]);
        assert_eq!((card.line_start, card.line_end), (1, text.lines().count() as u64));
    }

    #[test]
    fn a_python_file_card_reads_docstrings() {
        let text = r#"# comment
"""Render tables in the terminal.

Longer text.
"""

class Table(JupyterMixin):
    """A console renderable to draw a table.

    Args: ...
    """

    def add_row(
        self, *renderables
    ) -> None:
        """Add a row of renderables."""

    def _private(self):
        '''Internal.'''

def __getattr__(name):
    """Not interesting."""
"#;
        let card = file_card(Language::Python, text).unwrap();
        let lines: Vec<&str> = card.text.lines().collect();
        assert_eq!(lines[0], "Render tables in the terminal. Longer text.");
        assert_eq!(lines[1], "Table: A console renderable to draw a table.");
        assert!(card.text.contains("add_row: Add a row of renderables."), "{}", card.text);
        assert!(!card.text.contains("__getattr__"));
    }

    #[test]
    fn typescript_and_go_items_and_licence_headers() {
        let ts = "/* Copyright 2020 X. MIT license */\n\n/**\n * Parses a duration string.\n */\nexport function parseDuration(s: string) {}\n";
        let card = file_card(Language::TypeScript, ts).unwrap();
        assert_eq!(card.text, "parseDuration: Parses a duration string.");
        let go = "// Package pool runs jobs on workers.\npackage pool\n\n// Run starts the pool.\nfunc Run() {}\n";
        let card = file_card(Language::Go, go).unwrap();
        assert_eq!(card.text, "Package pool runs jobs on workers.\nRun: Run starts the pool.");
        assert!(file_card(Language::Rust, "fn undocumented() {}\n").is_none());
        assert!(file_card(Language::Markdown, "# Title\n").is_none());
    }
}
