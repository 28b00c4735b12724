//! Query expansion from plain words to programming terms (`concepts.txt`).
//!
//! A question asked by someone who does not know the code ("pause the task for a while")
//! shares no word with its answer (`sleep`), and the small embedding model does not bridge
//! every such gap. A fixed list of everyday phrases and the names programmers give the same
//! ideas adds those names to the lexical query as extra, weaker evidence. The words that
//! triggered a concept count as matched in a chunk that has one of the concept's terms, so
//! coverage rescoring does not punish the answer for lacking the question's wording.

use std::collections::HashSet;
use std::sync::OnceLock;

use tantivy::tokenizer::TextAnalyzer;

use super::analyzer::{analyze, code_analyzer};

const CONCEPTS: &str = include_str!("concepts.txt");

/// Words a `..` in a phrase may skip.
const MAX_GAP: usize = 4;

/// One line of the list: the terms it adds and the phrases that call for them.
#[derive(Debug)]
struct Concept {
    /// Index terms (analyzed as the index analyzes them).
    terms: Vec<String>,
    /// The terms as written in the list.
    words: Vec<String>,
    phrases: Vec<Vec<PhraseWord>>,
}

#[derive(Debug, PartialEq)]
enum PhraseWord {
    Word(String),
    Gap,
}

/// The concepts a query calls for.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Expansion {
    pub concepts: Vec<ExpandedConcept>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExpandedConcept {
    /// Index terms to add (none of them already a query term).
    pub terms: Vec<String>,
    /// Analyzed query terms the matching phrases covered: a chunk holding one of `terms`
    /// counts them as present.
    pub covers: Vec<String>,
}

impl Expansion {
    pub fn is_empty(&self) -> bool {
        self.concepts.is_empty()
    }

    /// Every added term once, in order.
    pub fn terms(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for term in self.concepts.iter().flat_map(|c| c.terms.iter()) {
            if !out.contains(&term.as_str()) {
                out.push(term);
            }
        }
        out
    }
}

fn concepts() -> &'static [Concept] {
    static PARSED: OnceLock<Vec<Concept>> = OnceLock::new();
    PARSED.get_or_init(|| parse(CONCEPTS, &mut code_analyzer()))
}

fn parse(text: &str, analyzer: &mut TextAnalyzer) -> Vec<Concept> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((terms, phrases)) = line.split_once(':') else { continue };
        let mut index_terms: Vec<String> = Vec::new();
        for word in terms.split_whitespace() {
            // Only the whole identifier: its parts ("spawn" of `spawn_blocking`) are too
            // common to be evidence of the concept.
            if let Some(term) = analyze(analyzer, word).into_iter().next() {
                if !index_terms.contains(&term) {
                    index_terms.push(term);
                }
            }
        }
        let phrases: Vec<Vec<PhraseWord>> = phrases
            .split(';')
            .map(|phrase| {
                phrase
                    .split_whitespace()
                    .flat_map(|token| {
                        if token == ".." {
                            vec![PhraseWord::Gap]
                        } else {
                            words(token).into_iter().map(PhraseWord::Word).collect()
                        }
                    })
                    .collect::<Vec<_>>()
            })
            // An identifier in a phrase would become a placeholder: such a phrase is a mistake
            // in the list (the test below says which), never a match.
            .filter(|p| {
                p.iter().any(|w| matches!(w, PhraseWord::Word(_)))
                    && !p.iter().any(|w| matches!(w, PhraseWord::Word(w) if w.is_empty()))
            })
            .collect();
        if !index_terms.is_empty() && !phrases.is_empty() {
            let words = terms.split_whitespace().map(|w| w.replace('_', " ")).collect();
            out.push(Concept { terms: index_terms, words, phrases });
        }
    }
    out
}

/// Lower-cased, stemmed words of `text`, stop words kept (a phrase's "up" in "give up"
/// matters). Identifiers (`abort_all`, `JoinSet`, `fs::read`) are code, not plain words:
/// each becomes a placeholder no phrase matches.
fn words(text: &str) -> Vec<String> {
    thread_local! {
        static STEMMER: frostem::Stemmer = frostem::Stemmer::new(frostem::Algorithm::English);
    }
    STEMMER.with(|stemmer| {
        let mut out = Vec::new();
        for token in text.split_whitespace() {
            if is_identifier(token) {
                out.push(String::new());
                continue;
            }
            // "a file's size" says "file size": the possessive is not a word.
            let token = token
                .trim_end_matches(|c: char| !c.is_alphanumeric())
                .trim_end_matches("'s")
                .trim_end_matches("\u{2019}s");
            out.extend(
                token
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(|w| stemmer.stem(&w.to_lowercase()).into_owned()),
            );
        }
        out
    })
}

/// `snake_case`, `CamelCase`, `path::to`, `call()`, `a.b`: written as code.
fn is_identifier(token: &str) -> bool {
    let token = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
    let inner_upper = token.chars().skip(1).any(|c| c.is_uppercase()) && token.chars().any(|c| c.is_lowercase());
    token.contains('_') || token.contains("::") || token.contains('(') || token.contains('.') || inner_upper
}

/// A query's words, in order and as a set: a phrase with a word the query lacks is
/// rejected by lookups alone, so a long query (a pasted paragraph) against the whole list
/// costs a hash lookup per phrase word, not a scan per phrase and position.
struct QueryWords {
    seq: Vec<String>,
    set: HashSet<String>,
}

impl QueryWords {
    fn new(text: &str) -> QueryWords {
        let seq = words(text);
        let set = seq.iter().cloned().collect();
        QueryWords { seq, set }
    }
}

/// Where `phrase` occurs in the query: the positions of its words, first occurrence only.
fn find(phrase: &[PhraseWord], query: &QueryWords) -> Option<Vec<usize>> {
    let all_present = phrase.iter().all(|w| match w {
        PhraseWord::Word(w) => query.set.contains(w),
        PhraseWord::Gap => true,
    });
    if !all_present {
        return None;
    }
    (0..query.seq.len()).find_map(|start| match_at(phrase, &query.seq, start))
}

fn match_at(phrase: &[PhraseWord], words: &[String], start: usize) -> Option<Vec<usize>> {
    let mut at = start;
    let mut matched = Vec::new();
    let mut gap = false;
    for part in phrase {
        match part {
            PhraseWord::Gap => gap = true,
            PhraseWord::Word(w) => {
                let limit = if gap { (at + MAX_GAP + 1).min(words.len()) } else { (at + 1).min(words.len()) };
                let found = (at..limit).find(|&i| &words[i] == w)?;
                matched.push(found);
                at = found + 1;
                gap = false;
            }
        }
    }
    Some(matched)
}

/// The names of the concepts `query_text` calls for, as written in the list (underscores
/// as spaces, for the embedding model), each once.
pub fn concept_words(query_text: &str) -> Vec<String> {
    let raw = QueryWords::new(query_text);
    let mut added: Vec<String> = Vec::new();
    for concept in concepts() {
        if concept.phrases.iter().any(|p| find(p, &raw).is_some()) {
            for word in &concept.words {
                if !added.contains(word) {
                    added.push(word.clone());
                }
            }
        }
    }
    added
}

/// `query_text` followed by the names of the concepts it calls for (the text its embedding
/// is made from), or `None` when it calls for none.
pub fn with_concept_words(query_text: &str) -> Option<String> {
    let added = concept_words(query_text);
    (!added.is_empty()).then(|| format!("{query_text} ({})", added.join(", ")))
}

/// The concepts `query_text` calls for, given its analyzed `query_terms`.
pub fn expand(query_text: &str, query_terms: &[String], analyzer: &mut TextAnalyzer) -> Expansion {
    let raw = QueryWords::new(query_text);
    if raw.seq.is_empty() {
        return Expansion::default();
    }
    let mut out = Expansion::default();
    for concept in concepts() {
        let mut covered_positions: Vec<usize> = Vec::new();
        for phrase in &concept.phrases {
            if let Some(positions) = find(phrase, &raw) {
                covered_positions.extend(positions);
            }
        }
        if covered_positions.is_empty() {
            continue;
        }
        let terms: Vec<String> = concept.terms.iter().filter(|t| !query_terms.contains(t)).cloned().collect();
        if terms.is_empty() {
            continue;
        }
        // The analyzed forms of the matched words (stop words have none).
        let mut covers: Vec<String> = Vec::new();
        for &i in &covered_positions {
            for term in analyze(analyzer, &raw.seq[i]) {
                if query_terms.contains(&term) && !covers.contains(&term) {
                    covers.push(term);
                }
            }
        }
        out.concepts.push(ExpandedConcept { terms, covers });
    }
    out
}

/// The text a search query's embedding is made from: the query with its concept words when
/// `[search]` expands both the query and its embedding.
pub fn embedding_query(search: &crate::config::SearchConfig, query: &str) -> String {
    let expanded = if search.expand_concepts && search.expand_embedding { with_concept_words(query) } else { None };
    expanded.unwrap_or_else(|| query.to_string())
}

/// The programming terms a query's plain phrases add (none when `[search]` turns expansion off).
pub fn expansion(search: &crate::config::SearchConfig, query: &str) -> Vec<String> {
    if search.expand_concepts {
        concept_words(query)
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `word` as the index spells it.
    fn term(word: &str) -> String {
        analyze(&mut code_analyzer(), word).remove(0)
    }

    fn adds(query: &str, word: &str) -> bool {
        expansion(query).terms().contains(&term(word).as_str())
    }

    fn expansion(query: &str) -> Expansion {
        let mut analyzer = code_analyzer();
        let terms = analyze(&mut analyzer, query);
        expand(query, &terms, &mut analyzer)
    }

    #[test]
    fn every_line_of_the_list_parses_into_terms_and_phrases() {
        let lines = CONCEPTS.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        for line in lines.clone() {
            let phrases = line.split_once(':').map_or("", |(_, p)| p);
            for phrase in phrases.split(';') {
                assert!(!phrase.split_whitespace().any(is_identifier), "identifier in a phrase: {phrase:?}");
            }
        }
        let lines = lines.count();
        assert_eq!(concepts().len(), lines, "a line of concepts.txt has no terms or no phrase");
        for concept in concepts() {
            for phrase in &concept.phrases {
                assert!(!matches!(phrase.first(), Some(PhraseWord::Gap)), "a phrase starts with `..`: {concept:?}");
            }
        }
    }

    #[test]
    fn plain_phrases_add_the_programming_terms() {
        let e = expansion("pause the current task for a while");
        let sleep = e.concepts.iter().find(|c| c.terms.contains(&term("sleep"))).expect("sleep added");
        assert!(sleep.covers.contains(&term("pause")), "{sleep:?}");
        assert!(adds("Give up on an operation that takes too long", "timeout"));
    }

    #[test]
    fn gaps_and_stemming_match_and_unrelated_words_do_not() {
        // `every .. seconds` skips "few"; "waiting" stems like "wait".
        assert!(adds("run something every few seconds", "interval"));
        assert!(adds("waiting for a while", "sleep"));
        assert!(expansion("JoinSet::abort_all").is_empty());
        assert!(expansion("").is_empty());
        // A gap is bounded: the two words are too far apart here.
        assert!(!adds("every one of the many different kinds of seconds", "interval"));
    }

    #[test]
    fn everyday_words_for_files_and_output_reach_their_programming_names() {
        assert!(adds("delete a folder with everything inside it", "directory"));
        assert!(adds("print the report to the terminal", "stdout"));
        assert!(adds("a writer that throws away everything", "sink"));
        // "throw away the handle" is not about discarding data.
        assert!(!adds("does a job stop if I throw away the handle", "sink"));
    }

    #[test]
    fn runtime_internals_and_systems_words_reach_their_programming_names() {
        assert!(adds("remove a directory and everything inside it", "remove_dir_all"));
        assert!(adds("what if the task panics inside the runtime", "catch_unwind"));
        assert!(adds("can I reuse the address of a socket", "set_reuseaddr"));
        assert!(adds("show a progress bar while downloading", "progress_bar"));
        // A phrase's words must be there in order: "panics" alone is no crash inside a task.
        assert!(!adds("what panics", "catch_unwind"));
    }

    #[test]
    fn a_pasted_paragraph_is_matched_like_a_question() {
        let filler = "the quick brown fox jumps over the lazy dog and then ".repeat(300);
        let long = format!("{filler} how do I pause for a while before retrying");
        assert!(adds(&long, "sleep"));
        assert!(!adds(&filler, "sleep"));
    }

    #[test]
    fn a_possessive_reads_as_the_noun_it_follows() {
        assert!(adds("how do I find out a file's size", "metadata"));
        assert_eq!(words("a file\u{2019}s size"), words("a file size"));
        assert_eq!(words("the runtime's"), words("the runtime"));
    }

    #[test]
    fn terms_already_in_the_query_are_not_added_again() {
        assert!(!adds("sleep for a while", "sleep"));
    }
}
