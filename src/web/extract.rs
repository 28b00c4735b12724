//! From a page's HTML to clean text an agent can use: `readability` finds the article, and the
//! article's HTML is written out as Markdown-like text (headings as `#` lines, code blocks in
//! fences, list items as `-` lines) so a page chunks like a Markdown document, with heading
//! paths. When readability finds nothing worth keeping, the main content is taken from the
//! page's structure instead (`main`, `article`, `[role=main]`, else `body`), without
//! navigation, sidebars, footers, scripts and cookie banners.

use ego_tree::iter::Edge;
use scraper::{ElementRef, Html, Node, Selector};
use url::Url;

/// Deeper element nesting than this and a page is read as plain text. Readability and the
/// Markdown writer recurse once per level, and a page thousands of `<div>`s deep would
/// overflow a thread's stack: an abort no `catch_unwind` stops, which through the watcher
/// becomes a crash loop. Real pages, generated docs included, stay far below it.
pub const MAX_NESTING: usize = 256;

/// Readability output shorter than this (characters of text) is treated as "found nothing".
const MIN_ARTICLE_CHARS: usize = 200;

/// The cleaned page.
#[derive(Debug, Clone, PartialEq)]
pub struct Article {
    pub title: String,
    /// Markdown-like text.
    pub text: String,
    /// `readability` or `fallback`.
    pub extractor: &'static str,
}

/// Extracts a page's article. Never fails: the worst case is a title and little text.
pub fn extract(html: &str, url: &Url) -> Article {
    let document = Html::parse_document(html);
    let page_title = page_title(&document);
    if nesting_depth(&document) > MAX_NESTING {
        let text = plain_text(&document);
        let title =
            [page_title, first_line(&text)].into_iter().find(|t| !t.is_empty()).unwrap_or_else(|| url.to_string());
        return Article { title, text, extractor: "plain" };
    }
    let readable = readability::extractor::extract(&mut html.as_bytes(), url)
        .ok()
        .map(|product| (product.title, to_markdown(&Html::parse_fragment(&product.content), false)));
    let fallback = || main_content(html);
    let (title, text, extractor) = match readable {
        Some((title, text)) if text.chars().filter(|c| !c.is_whitespace()).count() >= MIN_ARTICLE_CHARS => {
            // Readability can settle on one section of a long page: when the page's main
            // content holds clearly more text, the main content is the better answer.
            let main = fallback();
            if main.len() > text.len() * 2 {
                (title, main, "fallback")
            } else {
                (title, text, "readability")
            }
        }
        _ => (String::new(), fallback(), "fallback"),
    };
    let title = [page_title, title, first_heading(&text)]
        .into_iter()
        .map(|t| collapse(&t))
        .find(|t| !t.is_empty())
        .unwrap_or_else(|| url.to_string());
    Article { title, text, extractor }
}

/// A page's main content as Markdown-like text, every heading kept: the structure of a
/// document whose article readability flattened.
pub fn main_content(html: &str) -> String {
    let document = Html::parse_document(html);
    if nesting_depth(&document) > MAX_NESTING {
        return plain_text(&document);
    }
    to_markdown(&document, true)
}

/// The deepest element nesting in a parsed page, counted without recursion.
pub fn nesting_depth(document: &Html) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for edge in document.tree.root().traverse() {
        match edge {
            Edge::Open(_) => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Edge::Close(_) => depth = depth.saturating_sub(1),
        }
    }
    deepest
}

/// A page's words without its structure, one line per block element, walked without
/// recursion: what a page too deep to walk (`MAX_NESTING`) still offers to search.
fn plain_text(document: &Html) -> String {
    const BLOCKS: [&str; 16] = [
        "p", "div", "section", "article", "main", "li", "tr", "br", "pre", "table", "ul", "ol", "h1", "h2", "h3", "h4",
    ];
    let mut out = String::new();
    // The depth at which a skipped element (a script, a style) opened, while inside it.
    let (mut depth, mut skipped_at) = (0usize, None::<usize>);
    for edge in document.tree.root().traverse() {
        match edge {
            Edge::Open(node) => {
                depth += 1;
                match node.value() {
                    Node::Element(element) if skipped_at.is_none() => {
                        if SKIPPED_TAGS.contains(&element.name()) {
                            skipped_at = Some(depth);
                        } else if BLOCKS.contains(&element.name()) && !out.ends_with('\n') && !out.is_empty() {
                            out.push('\n');
                        }
                    }
                    Node::Text(text) if skipped_at.is_none() => {
                        let words = collapse(text);
                        if !words.is_empty() {
                            if !out.is_empty() && !out.ends_with(['\n', ' ']) {
                                out.push(' ');
                            }
                            out.push_str(&words);
                        }
                    }
                    _ => {}
                }
            }
            Edge::Close(_) => {
                if skipped_at == Some(depth) {
                    skipped_at = None;
                }
                depth = depth.saturating_sub(1);
            }
        }
    }
    out.trim().to_string()
}

fn first_line(text: &str) -> String {
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(|l| l.chars().take(120).collect()).unwrap_or_default()
}

fn page_title(document: &Html) -> String {
    let selector = Selector::parse("title").expect("static selector");
    document.select(&selector).next().map(|t| t.text().collect::<String>()).unwrap_or_default()
}

fn first_heading(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix('#').map(|h| h.trim_start_matches('#').trim().to_string()))
        .unwrap_or_default()
}

/// Elements whose content is never article text.
const SKIPPED_TAGS: [&str; 12] =
    ["script", "style", "noscript", "svg", "template", "iframe", "button", "form", "select", "input", "canvas", "head"];
/// Page furniture, dropped in fallback mode (readability already dropped it otherwise).
const FURNITURE_TAGS: [&str; 4] = ["nav", "aside", "footer", "header"];
/// Class or id words that mark furniture: cookie banners, sidebars, menus, share bars.
const FURNITURE_WORDS: [&str; 14] = [
    "cookie",
    "consent",
    "banner",
    "sidebar",
    "navbar",
    "menu",
    "breadcrumb",
    "footer",
    "advert",
    "popup",
    "modal",
    "newsletter",
    "share",
    "toc",
];

fn is_furniture(element: &ElementRef) -> bool {
    let value = element.value();
    if FURNITURE_TAGS.contains(&value.name()) {
        return true;
    }
    if matches!(value.attr("role"), Some("navigation" | "banner" | "contentinfo" | "complementary" | "dialog")) {
        return true;
    }
    if value.attr("aria-hidden") == Some("true") || value.attr("hidden").is_some() {
        return true;
    }
    let marks = format!("{} {}", value.attr("class").unwrap_or(""), value.id().unwrap_or("")).to_ascii_lowercase();
    marks
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| FURNITURE_WORDS.iter().any(|f| word == *f || (word.starts_with(f) && f.len() > 4)))
}

/// Writes a document (or fragment) as Markdown-like text. With `find_main`, starts at the main
/// content element and skips page furniture.
fn to_markdown(document: &Html, find_main: bool) -> String {
    let mut out = Writer::default();
    let root = if find_main {
        let main = Selector::parse("main, article, [role=main], #content, .content, body").expect("static selector");
        document.select(&main).next().unwrap_or_else(|| document.root_element())
    } else {
        document.root_element()
    };
    walk(root, &mut out, find_main);
    out.finish()
}

#[derive(Default)]
struct Writer {
    text: String,
    /// Nesting depth of `<pre>`: whitespace is kept inside.
    pre: usize,
}

impl Writer {
    fn block(&mut self) {
        let trimmed = self.text.trim_end_matches([' ', '\t']).len();
        self.text.truncate(trimmed);
        if !self.text.is_empty() && !self.text.ends_with("\n\n") {
            self.text.push_str(if self.text.ends_with('\n') { "\n" } else { "\n\n" });
        }
    }

    fn line(&mut self) {
        let trimmed = self.text.trim_end_matches([' ', '\t']).len();
        self.text.truncate(trimmed);
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }

    fn inline(&mut self, text: &str) {
        if self.pre > 0 {
            self.text.push_str(text);
            return;
        }
        let mut words = text.split_whitespace().peekable();
        if words.peek().is_none() {
            if !text.is_empty() && !self.text.ends_with([' ', '\n']) && !self.text.is_empty() {
                self.text.push(' ');
            }
            return;
        }
        if text.starts_with(char::is_whitespace) && !self.text.ends_with([' ', '\n']) && !self.text.is_empty() {
            self.text.push(' ');
        }
        let joined = words.collect::<Vec<_>>().join(" ");
        self.text.push_str(&joined);
        if text.ends_with(char::is_whitespace) {
            self.text.push(' ');
        }
    }

    fn finish(self) -> String {
        let mut out = String::with_capacity(self.text.len());
        let mut blank = 0;
        let mut in_fence = false;
        for line in self.text.lines() {
            if line.starts_with("```") {
                in_fence = !in_fence;
            }
            let line = if in_fence { line.trim_end() } else { line.trim() };
            if line.is_empty() && !in_fence {
                blank += 1;
                if blank > 1 {
                    continue;
                }
            } else {
                blank = 0;
            }
            out.push_str(line);
            out.push('\n');
        }
        out.trim().to_string()
    }
}

fn walk(element: ElementRef, out: &mut Writer, skip_furniture: bool) {
    for child in element.children() {
        match child.value() {
            Node::Text(text) => out.inline(text),
            Node::Element(_) => {
                let Some(child_el) = ElementRef::wrap(child) else { continue };
                let name = child_el.value().name();
                if SKIPPED_TAGS.contains(&name) || (skip_furniture && is_furniture(&child_el)) {
                    continue;
                }
                match name {
                    "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                        let level = name[1..].parse::<usize>().unwrap_or(1);
                        // Without the permalink marks doc generators append ("¶", or an
                        // icon font's private-use character in Sphinx themes).
                        let title: String = child_el
                            .text()
                            .flat_map(str::chars)
                            .filter(|&c| c != '¶' && !('\u{e000}'..='\u{f8ff}').contains(&c))
                            .collect();
                        let text = collapse(&title);
                        if !text.is_empty() {
                            out.block();
                            out.text.push_str(&"#".repeat(level));
                            out.text.push(' ');
                            out.text.push_str(&text);
                            out.block();
                        }
                    }
                    "pre" => {
                        let code: String = child_el.text().collect();
                        let language = code_language(&child_el);
                        out.block();
                        out.text.push_str("```");
                        out.text.push_str(&language);
                        out.text.push('\n');
                        out.text.push_str(code.trim_matches('\n'));
                        out.text.push_str("\n```");
                        out.block();
                    }
                    "code" | "kbd" | "samp" if out.pre == 0 => {
                        let code = collapse(&child_el.text().collect::<String>());
                        if !code.is_empty() {
                            if !out.text.ends_with([' ', '\n', '(']) && !out.text.is_empty() {
                                out.text.push(' ');
                            }
                            out.text.push('`');
                            out.text.push_str(&code);
                            out.text.push('`');
                        }
                    }
                    "br" => out.line(),
                    "li" => {
                        out.line();
                        out.text.push_str("- ");
                        walk(child_el, out, skip_furniture);
                        out.line();
                    }
                    "tr" => {
                        out.line();
                        walk(child_el, out, skip_furniture);
                        out.line();
                    }
                    "td" | "th" => {
                        out.text.push_str("| ");
                        walk(child_el, out, skip_furniture);
                        out.text.push(' ');
                    }
                    "p" | "div" | "section" | "article" | "main" | "blockquote" | "ul" | "ol" | "dl" | "dd" | "dt"
                    | "table" | "figure" | "figcaption" | "hr" | "body" | "html" | "details" | "summary" => {
                        out.block();
                        walk(child_el, out, skip_furniture);
                        out.block();
                    }
                    _ => walk(child_el, out, skip_furniture),
                }
            }
            _ => {}
        }
    }
}

/// `language-rust` / `lang-rust` / `rust` on a `<pre>` or its `<code>`.
fn code_language(pre: &ElementRef) -> String {
    let code_sel = Selector::parse("code").expect("static selector");
    let classes: Vec<String> = std::iter::once(*pre)
        .chain(pre.select(&code_sel).take(1))
        .flat_map(|el| el.value().classes().map(str::to_string).collect::<Vec<_>>())
        .collect();
    classes
        .iter()
        .find_map(|c| c.strip_prefix("language-").or_else(|| c.strip_prefix("lang-")).map(str::to_string))
        .filter(|l| l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '+'))
        .unwrap_or_default()
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARTICLE: &str = r#"<!doctype html><html><head><title>Aborting tasks in a JoinSet | Async Notes</title>
<script>var tracking = 1;</script><style>.x{}</style></head><body>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience. <button>Accept all</button></div>
<header class="site-header"><nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/about">About</a></nav></header>
<div class="layout"><aside class="sidebar"><h3>Related posts</h3><ul><li><a href="/a">Tokio basics</a></li></ul></aside>
<main><article><h1>Aborting tasks in a JoinSet</h1>
<p>A <code>JoinSet</code> owns the tasks spawned on it. Calling <code>abort_all</code> cancels every task in the set,
and dropping the set aborts them too, so no task outlives the collection that spawned it.</p>
<h2>Example</h2>
<p>The following program spawns ten tasks and aborts them all before they finish their work.</p>
<pre><code class="language-rust">let mut set = JoinSet::new();
for i in 0..10 {
    set.spawn(async move { i });
}
set.abort_all();</code></pre>
<h2>Why cancellation is cooperative</h2>
<p>An aborted task stops at its next await point; code between awaits always runs to completion.</p>
</article></main></div>
<footer class="site-footer">Copyright 2026 Async Notes. All rights reserved.</footer>
</body></html>"#;

    #[test]
    fn an_article_keeps_headings_and_code_and_loses_the_furniture() {
        let url = Url::parse("https://notes.example/joinset").unwrap();
        let article = extract(ARTICLE, &url);
        assert_eq!(article.title, "Aborting tasks in a JoinSet | Async Notes");
        let text = &article.text;
        assert!(text.contains("## Example"), "{text}");
        // Readability drops class attributes, so the fence may lose its language.
        assert!(text.contains("\nlet mut set = JoinSet::new();\nfor i in 0..10 {\n    set.spawn"), "{text}");
        assert!(text.contains("```\nlet mut set") || text.contains("```rust\nlet mut set"), "{text}");
        assert!(text.contains("`abort_all` cancels every task"), "{text}");
        for furniture in ["cookies", "Related posts", "Copyright", "tracking", "Blog"] {
            assert!(!text.contains(furniture), "{furniture} left in: {text}");
        }
    }

    #[test]
    fn a_page_without_an_article_falls_back_to_its_main_content() {
        let html = r#"<html><head><title>Short</title></head><body><nav>Home | Docs</nav>
            <main><h2>Install</h2><p>Run the installer.</p></main><footer>Footer text</footer></body></html>"#;
        let article = extract(html, &Url::parse("https://x.example/").unwrap());
        assert_eq!(article.extractor, "fallback");
        assert_eq!(article.text, "## Install\n\nRun the installer.");
        assert_eq!(article.title, "Short");
    }

    fn nested(levels: usize) -> String {
        format!(
            "<!DOCTYPE html><html><head><title>Deep</title><script>var hidden = 1;</script></head><body>{}<p>The bottom word</p>{}</body></html>",
            "<div>".repeat(levels),
            "</div>".repeat(levels)
        )
    }

    #[test]
    fn a_page_nested_past_the_limit_is_read_as_plain_text_without_recursion() {
        let url = Url::parse("https://example.com/deep").unwrap();
        // At the limit the page still goes through readability and the Markdown writer,
        // on a test thread's ordinary stack.
        let shallow = extract(&nested(MAX_NESTING - 10), &url);
        assert_ne!(shallow.extractor, "plain");
        assert!(shallow.text.contains("The bottom word"), "{}", shallow.text);
        // Far past it (a hostile page), the words are kept and nothing recurses.
        let deep = extract(&nested(20_000), &url);
        assert_eq!((deep.extractor, deep.title.as_str()), ("plain", "Deep"));
        assert_eq!(deep.text, "The bottom word");
        assert_eq!(main_content(&nested(20_000)), "The bottom word");
        assert!(nesting_depth(&Html::parse_document(&nested(20_000))) > 20_000);
    }
}
