//! The code-aware analyzer: identifiers are kept whole *and* split into their parts, so
//! `spawn_blocking`, `JoinSet::abort_all` and `HTTPServer` match both exact names and the
//! words inside them; then lowercase, English stop words out, English stemming for prose.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use tantivy::tokenizer::{StopWordFilter, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer};

/// Name under which the analyzer is registered on every index.
pub const CODE_ANALYZER: &str = "docdex_code";

/// Tokens longer than this are hashes, base64 or minified noise, not words anyone searches.
const MAX_TOKEN_BYTES: usize = 64;

/// English function words: the common general-purpose list (pronouns, auxiliaries,
/// prepositions, conjunctions). Measured on Vaswani: MAP 0.2909 with it, 0.2892 with
/// Tantivy's shorter list, 0.2846 with none. Identifiers that contain these words keep them
/// (`before_park` is still a token); only the loose parts are dropped.
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "did", "do", "does", "doing",
    "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here",
    "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most",
    "my", "no", "nor", "not", "now", "of", "on", "only", "or", "other", "our", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "you", "your",
];

pub fn code_analyzer() -> TextAnalyzer {
    let stop_words = StopWordFilter::remove(STOP_WORDS.iter().map(|w| w.to_string()));
    TextAnalyzer::builder(CodeTokenizer).filter(stop_words).filter(CachedEnglishStemmer).build()
}

/// Entries kept per thread before the stem cache starts over.
const STEM_CACHE_LIMIT: usize = 200_000;

thread_local! {
    /// Code repeats the same identifiers and words endlessly, so stems are remembered. The
    /// value is `None` when the stem is the word itself (most identifiers): nothing to copy.
    static STEM_CACHE: RefCell<(frostem::Stemmer, FxHashMap<String, Option<String>>)> =
        RefCell::new((frostem::Stemmer::new(frostem::Algorithm::English), FxHashMap::default()));
}

/// English (Snowball) stemming with a per-thread cache.
#[derive(Clone, Copy)]
pub struct CachedEnglishStemmer;

impl TokenFilter for CachedEnglishStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter { inner: tokenizer }
    }
}

#[derive(Clone)]
pub struct CachedStemmerFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemmerStream { tail: self.inner.token_stream(text) }
    }
}

pub struct CachedStemmerStream<T> {
    tail: T,
}

impl<T: TokenStream> TokenStream for CachedStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        STEM_CACHE.with(|cell| {
            let (stemmer, cache) = &mut *cell.borrow_mut();
            if let Some(known) = cache.get(token.text.as_str()) {
                if let Some(stem) = known {
                    token.text.clear();
                    token.text.push_str(stem);
                }
                return;
            }
            let stem = stemmer.stem(&token.text);
            let stem = match fold_agent_noun(&stem, stemmer) {
                Some(verb) => std::borrow::Cow::Owned(verb),
                None => stem,
            };
            let changed = (stem != token.text.as_str()).then(|| stem.into_owned());
            if cache.len() >= STEM_CACHE_LIMIT {
                cache.clear();
            }
            match changed {
                Some(stem) => {
                    let word = std::mem::replace(&mut token.text, stem.clone());
                    cache.insert(word, Some(stem));
                }
                None => {
                    cache.insert(token.text.clone(), None);
                }
            }
        });
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

/// The verb's stem for an agent noun's: `timer` → `time`, `spinner` → `spin`, `reader` →
/// `read`, `interceptor` → `intercept`, `buffer` → `buf`. Code names its types after what
/// they do (`Sender`, `Timer`, `Spinner`) while a question says what it wants done ("send",
/// "spin"); Snowball leaves short agent nouns alone. The stem's `-er`/`-or` is read as the
/// `-ing` of the same verb and stemmed again, so every form of a word folds the same way
/// (`render`, `renderer`, `rendering` → `rend`). Short stems (`user`, `error`) stay.
fn fold_agent_noun(stem: &str, stemmer: &frostem::Stemmer) -> Option<String> {
    let base = match stem.strip_suffix("er") {
        Some(base) if stem.len() >= 5 => base,
        _ => match stem.strip_suffix("or") {
            Some(base) if stem.len() >= 6 => base,
            _ => return None,
        },
    };
    if !base.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    Some(stemmer.stem(&format!("{base}ing")).into_owned())
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

/// Streams tokens without allocating per token: the one `Token` is reused, and a word's
/// parts are produced from byte ranges recorded when the word is found.
pub struct CodeTokenStream<'a> {
    text: &'a str,
    cursor: usize,
    next_position: usize,
    token: Token,
    /// Byte ranges (absolute) of the current word's parts still to emit.
    parts: Vec<(usize, usize)>,
    next_part: usize,
    /// Byte range of the current whole word (underscores trimmed).
    word: (usize, usize),
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        CodeTokenStream {
            text,
            cursor: 0,
            next_position: 0,
            token: Token::default(),
            parts: Vec::new(),
            next_part: 0,
            word: (0, 0),
        }
    }
}

impl CodeTokenStream<'_> {
    fn set_token(&mut self, from: usize, to: usize, position: usize) {
        self.token.text.clear();
        let word = &self.text[from..to];
        if word.is_ascii() {
            self.token.text.push_str(word);
            self.token.text.make_ascii_lowercase();
        } else {
            for c in word.chars() {
                self.token.text.extend(c.to_lowercase());
            }
        }
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = position;
        self.token.position_length = 1;
    }

    /// Emits the next pending part of the current word that differs from the whole word.
    fn advance_part(&mut self) -> bool {
        while self.next_part < self.parts.len() {
            let (from, to) = self.parts[self.next_part];
            self.next_part += 1;
            if (from, to) == self.word {
                continue;
            }
            let position = self.token.position;
            self.set_token(from, to, position);
            return true;
        }
        false
    }
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.advance_part() {
            return true;
        }
        let bytes = self.text.as_bytes();
        loop {
            let Some(start) = next_word_start(self.text, self.cursor) else {
                self.cursor = self.text.len();
                return false;
            };
            let end = word_end(self.text, start);
            self.cursor = end;
            // Leading and trailing underscores are decoration (`__init__`, `_private`).
            let mut from = start;
            let mut to = end;
            while from < to && bytes[from] == b'_' {
                from += 1;
            }
            while to > from && bytes[to - 1] == b'_' {
                to -= 1;
            }
            if from == to || to - from > MAX_TOKEN_BYTES {
                continue;
            }
            let position = self.next_position;
            self.next_position += 1;
            self.parts.clear();
            self.next_part = 0;
            let word = &self.text[start..end];
            // Only compound identifiers have parts; plain words skip the split.
            if word[from - start..to - start].bytes().any(|b| b == b'_' || b.is_ascii_uppercase()) {
                let split = split_identifier(word);
                if split.len() > 1 {
                    self.parts
                        .extend(split.into_iter().map(|(offset, part)| (start + offset, start + offset + part.len())));
                }
            }
            self.word = (from, to);
            self.set_token(from, to, position);
            return true;
        }
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

/// A character of a word: the analyzer's terms are made of runs of them (`search::Snippets`
/// relies on it).
pub(super) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether the char at byte `i` (a char boundary) is a word character, and its length.
/// ASCII is decided from the byte; only non-ASCII text pays for decoding.
fn word_char_at(text: &str, i: usize) -> (bool, usize) {
    let b = text.as_bytes()[i];
    if b.is_ascii() {
        return (b.is_ascii_alphanumeric() || b == b'_', 1);
    }
    let c = text[i..].chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
    (is_word_char(c), c.len_utf8())
}

/// Byte offset of the first word character at or after `from` (a char boundary).
fn next_word_start(text: &str, from: usize) -> Option<usize> {
    let mut i = from;
    while i < text.len() {
        let (is_word, len) = word_char_at(text, i);
        if is_word {
            return Some(i);
        }
        i += len;
    }
    None
}

/// Byte offset just after the word that starts at `start`.
fn word_end(text: &str, start: usize) -> usize {
    let mut i = start;
    while i < text.len() {
        let (is_word, len) = word_char_at(text, i);
        if !is_word {
            return i;
        }
        i += len;
    }
    i
}

/// Splits an identifier at `_` and case changes: `parseHTTPHeader` → parse, HTTP, Header.
/// Returns (byte offset within the word, part).
pub(crate) fn split_identifier(word: &str) -> Vec<(usize, &str)> {
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
            split_identifier("parseHTTPHeader").iter().map(|p| p.1).collect::<Vec<_>>(),
            ["parse", "HTTP", "Header"]
        );
        assert_eq!(split_identifier("abort_all").iter().map(|p| p.1).collect::<Vec<_>>(), ["abort", "all"]);
        assert_eq!(split_identifier("JoinSet").iter().map(|p| p.1).collect::<Vec<_>>(), ["Join", "Set"]);
        assert_eq!(split_identifier("utf8Decode").iter().map(|p| p.1).collect::<Vec<_>>(), ["utf8", "Decode"]);
        let t = terms("JoinSet::abort_all(self)");
        for expected in ["joinset", "join", "set", "abort", "self"] {
            assert!(t.contains(&expected.to_string()), "{expected} missing from {t:?}");
        }
        for term in terms("abort_all") {
            assert!(t.contains(&term), "{term} missing from {t:?}");
        }
    }

    #[test]
    fn prose_is_stemmed_and_stop_words_dropped() {
        assert_eq!(terms("Running the blocking tasks"), ["run", "block", "task"]);
        // Query and document forms of an identifier meet on the same terms.
        let doc = terms("pub fn spawn_blocking<F, R>(f: F)");
        for term in terms("spawn blocking") {
            assert!(doc.contains(&term), "{term} missing from {doc:?}");
        }
    }

    #[test]
    fn agent_nouns_meet_their_verbs() {
        // A question's verb finds the type named after the one who does it.
        for (noun, verb) in [
            ("Spinner", "spinning"),
            ("timer", "time"),
            ("BufReader", "buffered reads"),
            ("Waiter", "waiting"),
            ("interceptor", "intercept"),
            ("renderer", "rendering"),
            ("authorization", "auth"),
        ] {
            let noun_terms = terms(noun);
            assert!(
                terms(verb).iter().all(|t| noun_terms.contains(t)),
                "{noun} {noun_terms:?} vs {verb} {:?}",
                terms(verb)
            );
        }
        // Short stems are words of their own, not agent nouns.
        assert_eq!(terms("user error order"), ["user", "error", "ord"]);
        assert_ne!(terms("user"), terms("use"));
    }

    #[test]
    fn parts_share_the_position_of_their_word() {
        let mut analyzer = code_analyzer();
        let mut stream = analyzer.token_stream("fooBar baz");
        let mut positions = Vec::new();
        while stream.advance() {
            positions.push((stream.token().text.clone(), stream.token().position));
        }
        assert_eq!(positions, [("foobar".into(), 0), ("foo".into(), 0), ("bar".into(), 0), ("baz".into(), 1)]);
    }
}
