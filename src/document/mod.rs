//! Documents (HTML, PDF, DOCX) as text with their structure: what the index chunks and what
//! `get` shows for such a file. HTML goes through the web tier's article extraction
//! (readability, headings as `#` lines); a PDF gives its pages' text and its outline's
//! headings (`pdf.rs`); a DOCX its paragraphs and the headings its styles mark (`docx.rs`).
//! A file that cannot be read as its format (an encrypted PDF, a corrupt zip) is an error
//! that says why, never a panic: the index run skips it and `status` lists it.

mod docx;
mod pdf;

use std::time::Duration;

use crate::ingest::{markdown_headings, DocumentText, Language};

/// The longest a conversion may take: a pathological file (a PDF whose content streams
/// never end) must not hold an index run's thread.
pub const CONVERT_TIMEOUT: Duration = Duration::from_secs(120);

/// Converts a document's bytes to text; `path` (relative to the repo) names it in errors.
pub fn convert(language: Language, path: &str, bytes: &[u8]) -> Result<DocumentText, String> {
    convert_within(language, path, bytes, CONVERT_TIMEOUT)
}

/// `convert`, given up after `timeout`. The conversion runs on a thread of its own; one
/// that overruns is left to finish on it, its result dropped.
fn convert_within(language: Language, path: &str, bytes: &[u8], timeout: Duration) -> Result<DocumentText, String> {
    if !language.is_document() {
        return Err(format!("{} is not a document format", language.name()));
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    let (path_owned, bytes_owned) = (path.to_string(), bytes.to_vec());
    std::thread::Builder::new()
        .name("docdex-document".into())
        .spawn(move || {
            // The parsers are third-party code fed untrusted files: a panic costs this file.
            let converted = std::panic::catch_unwind(|| match language {
                Language::Html => Ok(html(&path_owned, &bytes_owned)),
                Language::Pdf => pdf::convert(&bytes_owned),
                _ => docx::convert(&bytes_owned),
            });
            let _ =
                sender.send(converted.unwrap_or_else(|_| Err(format!("the {} parser failed on it", language.name()))));
        })
        .map_err(|err| format!("cannot start a conversion thread: {err}"))?;
    match receiver.recv_timeout(timeout) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            Err(format!("converting it took longer than {} s; left out", timeout.as_secs()))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(format!("the {} parser failed on it", language.name()))
        }
    }
}

/// HTML: the article, as Markdown-like text, its headings read back from the `#` lines. A
/// fragment (a component's or a view's template, no `<html>` or doctype) is code, not a
/// page: it is kept as written, so its markup and template syntax stay searchable.
fn html(path: &str, bytes: &[u8]) -> DocumentText {
    let source = String::from_utf8_lossy(bytes);
    if !is_page(&source) {
        return DocumentText { text: source.into_owned(), headings: Vec::new(), page_starts: Vec::new() };
    }
    // Readability wants a base URL for relative links; a file has none worth resolving.
    let url = url::Url::parse("file:///").and_then(|base| base.join(path)).expect("a file URL parses");
    let article = crate::web::extract::extract(&source, &url);
    let has_headings = |text: &str| !markdown_headings(&text.lines().collect::<Vec<_>>()).is_empty();
    let mut text = article.text;
    if !has_headings(&text) {
        // Readability keeps an article's words but can drop its headings (DocBook pages):
        // a document's structure matters more here than a web page's clutter.
        let main = crate::web::extract::main_content(&source);
        if has_headings(&main) {
            text = main;
        }
    }
    // A page whose headings readability dropped (or that has none) still names its title.
    if !has_headings(&text) && !article.title.is_empty() && article.title != url.as_str() {
        text = format!("# {}\n\n{text}", article.title);
    }
    let lines: Vec<&str> = text.lines().collect();
    let headings = markdown_headings(&lines);
    DocumentText { headings, text, page_starts: Vec::new() }
}

/// Whether HTML is a whole page: a doctype or an `<html>` element near its start.
fn is_page(source: &str) -> bool {
    let head: String = source.chars().take(2048).collect::<String>().to_ascii_lowercase();
    head.contains("<!doctype html") || head.contains("<html")
}

/// Whitespace runs as one space, trimmed: how titles and lines are compared.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents").join(name))
            .unwrap()
    }

    fn chunks_of(name: &str, language: Language) -> Vec<crate::ingest::Chunk> {
        let document = convert(language, name, &fixture(name)).unwrap();
        crate::ingest::chunk_document(&document, crate::ingest::ChunkParams::default())
    }

    fn under<'a>(chunks: &'a [crate::ingest::Chunk], heading: &str) -> &'a crate::ingest::Chunk {
        chunks.iter().find(|c| c.heading == heading).unwrap_or_else(|| {
            panic!("no chunk under {heading:?}; headings: {:?}", chunks.iter().map(|c| &c.heading).collect::<Vec<_>>())
        })
    }

    /// A Texinfo manual (pdfTeX): 36 pages, an outline two levels deep. The pages of the
    /// sections are the ones qpdf reads from the outline's destinations.
    #[test]
    fn a_pdf_gives_pages_and_the_outline_as_heading_paths() {
        let document = convert(Language::Pdf, "libtasn1.pdf", &fixture("libtasn1.pdf")).unwrap();
        assert_eq!(document.page_starts.len(), 36);
        let chunks = crate::ingest::chunk_document(&document, crate::ingest::ChunkParams::default());
        let parser = under(&chunks, "3 Utilities > Invoking asn1Parser");
        assert_eq!(parser.page, Some(8));
        assert!(parser.text.contains("asn1Parser"), "{}", parser.text);
        assert_eq!(under(&chunks, "3 Utilities > Invoking asn1Decoding").page, Some(10));
        assert!(chunks.iter().all(|c| c.page.is_some_and(|p| (1..=36).contains(&p))));
        // Pages only grow down the document.
        assert!(chunks.windows(2).all(|w| w[0].page <= w[1].page));
        // A page's running header alone is no chunk.
        assert!(chunks.iter().all(|c| c.text.chars().filter(|c| !c.is_whitespace()).count() >= 8), "tiny chunk");
    }

    #[test]
    fn html_sections_carry_heading_paths() {
        // Sphinx: the permalink icon is not part of a heading.
        let chunks = chunks_of("qemu-nbd.html", Language::Html);
        let options = under(&chunks, "QEMU Disk Network Block Device Server > Options");
        assert!(options.text.contains("--port"), "{}", options.text);
        // DocBook: readability drops the headings, the page's structure has them.
        let chunks = chunks_of("shared-mime-info-spec.html", Language::Html);
        assert!(under(&chunks, "2. Unified system > 2.4. The glob files").text.contains("globs2"));
        assert!(chunks.iter().all(|c| c.page.is_none()));
    }

    /// pandoc's DOCX: headings by style ("Heading1", named "heading 1").
    #[test]
    fn docx_headings_come_from_paragraph_styles() {
        let chunks = chunks_of("shared-mime-info-spec.docx", Language::Docx);
        let globs = under(&chunks, "2. Unified system > 2.4. The glob files");
        assert!(globs.text.contains("globs2"), "{}", globs.text);
        assert!(under(&chunks, "2. Unified system > 2.9. The mime.cache files").text.contains("mime.cache"));
    }

    #[test]
    fn broken_documents_are_errors_that_say_why() {
        let encrypted = convert(Language::Pdf, "encrypted.pdf", &fixture("encrypted.pdf")).unwrap_err();
        assert!(encrypted.contains("encrypted") && encrypted.contains("password"), "{encrypted}");
        let pdf = fixture("libtasn1.pdf");
        let truncated = convert(Language::Pdf, "cut.pdf", &pdf[..pdf.len() / 3]).unwrap_err();
        assert!(truncated.contains("PDF"), "{truncated}");
        let docx = fixture("shared-mime-info-spec.docx");
        let cut = convert(Language::Docx, "cut.docx", &docx[..docx.len() / 2]).unwrap_err();
        assert!(cut.contains("DOCX"), "{cut}");
        assert!(convert(Language::Docx, "x.docx", b"").is_err());
        assert!(convert(Language::Rust, "x.rs", b"fn main() {}").is_err());
        // HTML is forgiving: bytes that are not HTML are text.
        assert!(convert(Language::Html, "x.html", &[0xff, 0xfe, b'a']).is_ok());
    }

    #[test]
    fn a_conversion_that_overruns_its_time_is_left_out_with_why() {
        let err = convert_within(Language::Pdf, "libtasn1.pdf", &fixture("libtasn1.pdf"), Duration::ZERO).unwrap_err();
        assert!(err.contains("took longer than"), "{err}");
    }

    #[test]
    fn an_html_fragment_is_kept_as_written() {
        let template =
            "<div class=\"profile\">\n  <h2>{{ user.name }}</h2>\n  <p *ngIf=\"user.admin\">Admin</p>\n</div>\n";
        let document = convert(Language::Html, "profile.component.html", template.as_bytes()).unwrap();
        assert_eq!(document.text, template);
        assert!(document.headings.is_empty());
        let page = format!("<!DOCTYPE html><html><body>{template}</body></html>");
        let document = convert(Language::Html, "page.html", page.as_bytes()).unwrap();
        assert!(!document.text.contains("<div") && document.text.contains("{{ user.name }}"), "{}", document.text);
    }

    #[test]
    fn a_page_nested_thousands_deep_is_indexed_as_plain_text() {
        let page = format!(
            "<!DOCTYPE html><html><body>{}<h1>Lost heading</h1><p>still searchable</p>{}</body></html>",
            "<div>".repeat(20_000),
            "</div>".repeat(20_000)
        );
        let document = convert(Language::Html, "deep.html", page.as_bytes()).unwrap();
        assert!(document.text.contains("still searchable"), "{}", document.text);
    }
}
