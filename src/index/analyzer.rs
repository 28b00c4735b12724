//! The code-aware analyzer: identifiers are kept whole *and* split into their parts, so
//! `spawn_blocking`, `JoinSet::abort_all` and `HTTPServer` match both exact names and the
//! words inside them; then lowercase, English stop words out, English stemming for prose.

use tantivy::tokenizer::{
    Language, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Name under which the analyzer is registered on every index.
pub const CODE_ANALYZER: &str = "docdex_code";

/// Tokens longer than this are hashes, base64 or minified noise, not words anyone searches.
const MAX_TOKEN_BYTES: usize = 64;

pub fn code_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(CodeTokenizer);
    match StopWordFilter::new(Language::English) {
        Some(stop_words) => builder
            .filter(stop_words)
            .filter(Stemmer::new(Language::English))
            .build(),
        None => builder.filter(Stemmer::new(Language::English)).build(),
    }
}

/// Runs the analyzer over `text` and returns the terms, in order, duplicates included.
pub fn analyze(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut terms = Vec::new();
    while stream.advance() {
        terms.push(stream.token().text.clone());
    }
    terms
}

#[derive(Clone, Default)]
pub struct CodeTokenizer;

pub struct CodeTokenStream {
    tokens: Vec<Token>,
    index: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        CodeTokenStream {
            tokens: tokenize(text),
            index: 0,
        }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        self.index += 1;
        self.index <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.index - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.index - 1]
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits text into words (runs of letters, digits and `_`); each word yields its lowercase
/// whole form and, when it is a compound identifier, its parts at the same position.
fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut position = 0;
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if !is_word_char(c) {
            chars.next();
            continue;
        }
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if !is_word_char(c) {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        let word = &text[start..end];
        let whole = word.trim_matches('_');
        if whole.is_empty() || whole.len() > MAX_TOKEN_BYTES {
            continue;
        }
        let lower = whole.to_lowercase();
        let push = |tokens: &mut Vec<Token>, text: String, from: usize, to: usize| {
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text,
                position_length: 1,
            });
        };
        push(&mut tokens, lower.clone(), start, end);
        let parts = split_identifier(word);
        if parts.len() > 1 {
            for (offset, part) in parts {
                let part_lower = part.to_lowercase();
                if part_lower != lower {
                    push(
                        &mut tokens,
                        part_lower,
                        start + offset,
                        start + offset + part.len(),
                    );
                }
            }
        }
        position += 1;
    }
    tokens
}

/// Splits an identifier at `_` and case changes: `parseHTTPHeader` → parse, HTTP, Header.
/// Returns (byte offset within the word, part).
fn split_identifier(word: &str) -> Vec<(usize, &str)> {
    let mut parts = Vec::new();
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut part_start: Option<usize> = None;
    for (n, &(i, c)) in chars.iter().enumerate() {
        if c == '_' {
            if let Some(s) = part_start.take() {
                parts.push((s, &word[s..i]));
            }
            continue;
        }
        if let Some(s) = part_start {
            let prev = chars[n - 1].1;
            let next_is_lower = chars.get(n + 1).is_some_and(|&(_, nc)| nc.is_lowercase());
            let boundary = (prev.is_lowercase() || prev.is_ascii_digit()) && c.is_uppercase()
                || (prev.is_uppercase() && c.is_uppercase() && next_is_lower);
            if boundary {
                parts.push((s, &word[s..i]));
                part_start = Some(i);
            }
        } else {
            part_start = Some(i);
        }
    }
    if let Some(s) = part_start {
        parts.push((s, &word[s..]));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        analyze(&mut code_analyzer(), text)
    }

    #[test]
    fn splits_identifiers_and_keeps_them_whole() {
        assert_eq!(
            split_identifier("parseHTTPHeader")
                .iter()
                .map(|p| p.1)
                .collect::<Vec<_>>(),
            ["parse", "HTTP", "Header"]
        );
        assert_eq!(
            split_identifier("abort_all")
                .iter()
                .map(|p| p.1)
                .collect::<Vec<_>>(),
            ["abort", "all"]
        );
        assert_eq!(
            split_identifier("JoinSet")
                .iter()
                .map(|p| p.1)
                .collect::<Vec<_>>(),
            ["Join", "Set"]
        );
        assert_eq!(
            split_identifier("utf8Decode")
                .iter()
                .map(|p| p.1)
                .collect::<Vec<_>>(),
            ["utf8", "Decode"]
        );
        let t = terms("JoinSet::abort_all(self)");
        for expected in ["joinset", "join", "set", "abort", "self"] {
            assert!(
                t.contains(&expected.to_string()),
                "{expected} missing from {t:?}"
            );
        }
        for term in terms("abort_all") {
            assert!(t.contains(&term), "{term} missing from {t:?}");
        }
    }

    #[test]
    fn prose_is_stemmed_and_stop_words_dropped() {
        assert_eq!(
            terms("Running the blocking tasks"),
            ["run", "block", "task"]
        );
        // Query and document forms of an identifier meet on the same terms.
        let doc = terms("pub fn spawn_blocking<F, R>(f: F)");
        for term in terms("spawn blocking") {
            assert!(doc.contains(&term), "{term} missing from {doc:?}");
        }
    }

    #[test]
    fn parts_share_the_position_of_their_word() {
        let mut analyzer = code_analyzer();
        let mut stream = analyzer.token_stream("fooBar baz");
        let mut positions = Vec::new();
        while stream.advance() {
            positions.push((stream.token().text.clone(), stream.token().position));
        }
        assert_eq!(
            positions,
            [
                ("foobar".into(), 0),
                ("foo".into(), 0),
                ("bar".into(), 0),
                ("baz".into(), 1)
            ]
        );
    }
}
