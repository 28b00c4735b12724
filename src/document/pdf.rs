//! PDF: each page's text (pdf-extract, which handles the fonts and encodings), and the
//! outline's entries as headings placed on the line of their page that carries the title
//! (or on top of the page, when the text does not show it as such).

use pdf_extract::{Document, PlainTextOutput};

use super::collapse;
use crate::ingest::{DocumentText, Heading};

/// The levels a heading path keeps: deeper outline entries are rare and read as noise.
const MAX_LEVEL: usize = 6;

pub(super) fn convert(bytes: &[u8]) -> Result<DocumentText, String> {
    let mut document = Document::load_mem(bytes).map_err(|err| format!("not a readable PDF: {err}"))?;
    if document.is_encrypted() {
        // Many PDFs are "encrypted" with an empty user password (to set permissions only).
        document.decrypt("").map_err(|_| "the PDF is encrypted and needs a password".to_string())?;
    }
    let pages = document.get_pages();
    if pages.is_empty() {
        return Err("the PDF has no pages".into());
    }
    let mut outline: Vec<(u32, usize, String)> = match document.get_toc() {
        Ok(toc) => toc
            .toc
            .into_iter()
            .map(|entry| (entry.page as u32, entry.level.clamp(1, MAX_LEVEL), collapse(&entry.title)))
            .filter(|(_, _, title)| !title.is_empty())
            .collect(),
        // No outline (the common case for generated reports): pages without headings.
        Err(_) => Vec::new(),
    };
    // In page order, the outline's own order within a page.
    outline.sort_by_key(|(page, _, _)| *page);

    let mut converted = DocumentText::default();
    let mut lines: Vec<String> = Vec::new();
    let mut failed_pages = 0;
    for &number in pages.keys() {
        converted.page_starts.push(lines.len());
        let mut text = String::new();
        let page_ok = pdf_extract::output_doc_page(&document, &mut PlainTextOutput::new(&mut text), number).is_ok();
        if !page_ok {
            failed_pages += 1;
        }
        let page_lines = tidy_lines(&text);
        let (mut found, mut missing) = (Vec::new(), Vec::new());
        let mut search_from = 0;
        for (_, level, title) in outline.iter().filter(|(page, _, _)| *page == number) {
            let heading = |line| Heading { line, level: *level, title: title.clone() };
            match page_lines.iter().skip(search_from).position(|line| names_title(line, title)) {
                Some(offset) => {
                    found.push(heading(search_from + offset));
                    search_from += offset + 1;
                }
                // Not a line of its own on the page: the title goes on top of the page.
                None => missing.push(heading(missing.len())),
            }
        }
        let first = lines.len();
        lines.extend(missing.iter().map(|h| h.title.clone()));
        let shift = first + missing.len();
        converted.headings.extend(missing.into_iter().map(|h| Heading { line: first + h.line, ..h }));
        converted.headings.extend(found.into_iter().map(|h| Heading { line: shift + h.line, ..h }));
        lines.extend(page_lines);
    }
    if failed_pages == pages.len() {
        return Err("no page of the PDF could be read".into());
    }
    converted.headings.sort_by_key(|h| h.line);
    converted.text = lines.join("\n");
    Ok(converted)
}

/// A page's lines with trailing blanks cut and runs of blank lines made one.
fn tidy_lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(if line.trim().is_empty() { String::new() } else { line.to_string() });
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// Whether a line of a page is the heading `title`: the same words, or the same words after
/// a number the outline leaves out ("2.1 Setup" for "Setup") or puts in.
fn names_title(line: &str, title: &str) -> bool {
    let key = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
    let (line, title) = (key(line), key(title));
    if line.len() < 2 || title.len() < 2 {
        return false;
    }
    let unnumbered = |s: &str| s.trim_start_matches(|c: char| c.is_ascii_digit()).to_string();
    line == title || unnumbered(&line) == unnumbered(&title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_match_their_lines_with_or_without_numbers() {
        assert!(names_title("2.1  Setting up", "Setting up"));
        assert!(names_title("Setting Up", "2.1 Setting up"));
        assert!(!names_title("Setting up the network", "Setting up"));
        assert!(!names_title("", "x"));
    }

    #[test]
    fn page_lines_are_tidied() {
        assert_eq!(tidy_lines("\n\na  \n\n\n\nb\n\n"), vec!["a", "", "b"]);
    }
}
