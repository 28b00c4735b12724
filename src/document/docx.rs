//! DOCX: the paragraphs of `word/document.xml` in order (tables' cells included), a blank
//! line between them, and as headings those whose style is a heading: a style named
//! "heading N" or "Title", or one with an outline level (`styles.xml` maps the ids, which
//! Word localises: "berschrift1" is a heading 1 too), or a paragraph with an outline level
//! of its own.

use std::collections::HashMap;
use std::io::Read;

use roxmltree::{Document, Node};

use crate::ingest::{DocumentText, Heading};

/// WordprocessingML's namespace.
const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// The most an XML part may unpack to: a zip bomb stops here.
const MAX_PART_BYTES: u64 = 64 << 20;

pub(super) fn convert(bytes: &[u8]) -> Result<DocumentText, String> {
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|err| format!("not a readable DOCX (zip): {err}"))?;
    let body = part(&mut archive, "word/document.xml")?
        .ok_or_else(|| "not a DOCX: it has no word/document.xml".to_string())?;
    let styles = match part(&mut archive, "word/styles.xml")? {
        Some(xml) => heading_styles(&xml)?,
        None => HashMap::new(),
    };
    let document = Document::parse(&body).map_err(|err| format!("word/document.xml is not well-formed XML: {err}"))?;
    let mut converted = DocumentText::default();
    let mut lines: Vec<String> = Vec::new();
    for paragraph in document.descendants().filter(|n| is_w(n, "p")) {
        let text = paragraph_text(paragraph);
        if text.trim().is_empty() {
            continue;
        }
        if !lines.is_empty() {
            lines.push(String::new());
        }
        if let Some(level) = paragraph_level(paragraph, &styles) {
            let title = super::collapse(&text);
            converted.headings.push(Heading { line: lines.len(), level, title });
        }
        lines.extend(text.lines().map(str::to_string));
    }
    converted.text = lines.join("\n");
    Ok(converted)
}

/// One part of the package, unpacked (at most `MAX_PART_BYTES`); `None` when absent.
fn part(archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>, name: &str) -> Result<Option<String>, String> {
    let file = match archive.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(err) => return Err(format!("{name} cannot be read: {err}")),
    };
    let mut xml = String::new();
    file.take(MAX_PART_BYTES + 1).read_to_string(&mut xml).map_err(|err| format!("{name} cannot be read: {err}"))?;
    if xml.len() as u64 > MAX_PART_BYTES {
        return Err(format!("{name} unpacks to more than {} MiB", MAX_PART_BYTES >> 20));
    }
    Ok(Some(xml))
}

fn is_w(node: &Node, name: &str) -> bool {
    node.is_element() && node.tag_name().name() == name && node.tag_name().namespace() == Some(W)
}

fn w_attr<'a>(node: &Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attribute((W, name))
}

/// The heading level of each paragraph style that is a heading, by style id.
fn heading_styles(xml: &str) -> Result<HashMap<String, usize>, String> {
    let styles = Document::parse(xml).map_err(|err| format!("word/styles.xml is not well-formed XML: {err}"))?;
    let mut levels = HashMap::new();
    for style in styles.descendants().filter(|n| is_w(n, "style")) {
        let Some(id) = w_attr(&style, "styleId") else { continue };
        let name = style.children().find(|n| is_w(n, "name")).and_then(|n| w_attr(&n, "val")).unwrap_or("");
        let outline = style
            .descendants()
            .find(|n| is_w(n, "outlineLvl"))
            .and_then(|n| w_attr(&n, "val"))
            .and_then(|v| v.parse::<usize>().ok());
        let lower = name.to_ascii_lowercase();
        let level = if lower == "title" {
            Some(1)
        } else if let Some(n) = lower.strip_prefix("heading ").and_then(|n| n.trim().parse::<usize>().ok()) {
            Some(n)
        } else {
            // Outline levels count from 0 (level 9 means body text).
            outline.filter(|&l| l < 9).map(|l| l + 1)
        };
        if let Some(level) = level {
            levels.insert(id.to_string(), level.clamp(1, 6));
        }
    }
    Ok(levels)
}

/// A paragraph's heading level: its own outline level, else its style's.
fn paragraph_level(paragraph: Node, styles: &HashMap<String, usize>) -> Option<usize> {
    let properties = paragraph.children().find(|n| is_w(n, "pPr"))?;
    let own = properties
        .children()
        .find(|n| is_w(n, "outlineLvl"))
        .and_then(|n| w_attr(&n, "val"))
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&l| l < 9)
        .map(|l| (l + 1).min(6));
    own.or_else(|| {
        let style = properties.children().find(|n| is_w(n, "pStyle")).and_then(|n| w_attr(&n, "val"))?;
        styles.get(style).copied()
    })
}

/// A paragraph's text: its runs' text, tabs as tabs and breaks as new lines. Text of nested
/// paragraphs (a text box inside) is left to their own turn.
fn paragraph_text(paragraph: Node) -> String {
    let mut text = String::new();
    let mut stack: Vec<Node> = paragraph.children().collect();
    stack.reverse();
    while let Some(node) = stack.pop() {
        if is_w(&node, "p") {
            continue;
        }
        if is_w(&node, "t") {
            text.push_str(node.text().unwrap_or(""));
        } else if is_w(&node, "tab") {
            text.push('\t');
        } else if is_w(&node, "br") || is_w(&node, "cr") {
            text.push('\n');
        } else if !(is_w(&node, "instrText") || is_w(&node, "delText")) {
            stack.extend(node.children().rev());
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_packages_are_errors() {
        assert!(convert(b"PK\x03\x04 not really a zip").unwrap_err().contains("not a readable DOCX"));
        let mut zipped = std::io::Cursor::new(Vec::new());
        {
            let mut writer = zip::ZipWriter::new(&mut zipped);
            writer.start_file("word/document.xml", zip::write::SimpleFileOptions::default()).unwrap();
            std::io::Write::write_all(&mut writer, b"<w:document").unwrap();
            writer.finish().unwrap();
        }
        assert!(convert(zipped.get_ref()).unwrap_err().contains("not well-formed"));
    }
}
