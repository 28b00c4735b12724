//! The simplest peer, as a yardstick for question sets: BM25 over whole files, words split
//! on anything not a letter or digit, lower-cased, no stemming and no stop words (the seeds'
//! docdex and a forty-line script rank files this way). `bench --questions` reports it as the
//! mode `file-bm25` beside docdex's own, so a set written here can be compared with a set
//! measured elsewhere: a set on which this baseline scores what it scores on another is about
//! as hard as that one.

use std::collections::HashMap;
use std::path::Path;

use docdex::ingest::{read_text_file, scan_repo, FileRead};

/// The usual BM25 constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// One file: its path, its words' counts and how many words it has.
struct FileWords {
    path: String,
    counts: HashMap<String, u32>,
    length: u32,
}

pub struct FileBm25 {
    files: Vec<FileWords>,
    /// Files containing each word.
    document_frequency: HashMap<String, u32>,
    average_length: f64,
}

/// Lower-cased runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

impl FileBm25 {
    /// Reads every text file docdex would index in `repo`.
    pub fn build(repo: &Path, max_file_size_bytes: u64) -> FileBm25 {
        let mut files = Vec::new();
        let mut document_frequency: HashMap<String, u32> = HashMap::new();
        let root = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf());
        for file in scan_repo(repo, docdex::ingest::SizeLimits::uniform(max_file_size_bytes)).files {
            let FileRead::Text(text) = read_text_file(&root, &file.rel_path, max_file_size_bytes) else {
                continue;
            };
            let mut counts: HashMap<String, u32> = HashMap::new();
            let mut length = 0;
            for word in words(&text) {
                *counts.entry(word).or_default() += 1;
                length += 1;
            }
            for word in counts.keys() {
                *document_frequency.entry(word.clone()).or_default() += 1;
            }
            files.push(FileWords { path: file.rel_path, counts, length });
        }
        let average_length = files.iter().map(|f| f.length as f64).sum::<f64>() / files.len().max(1) as f64;
        FileBm25 { files, document_frequency, average_length }
    }

    /// The best `limit` files for `query`, best first (files matching no word are left out).
    pub fn search(&self, query: &str, limit: usize) -> Vec<String> {
        let mut terms: Vec<String> = Vec::new();
        for word in words(query) {
            if !terms.contains(&word) {
                terms.push(word);
            }
        }
        let total = self.files.len() as f64;
        let weights: Vec<(&String, f64)> = terms
            .iter()
            .filter_map(|term| {
                let df = *self.document_frequency.get(term)? as f64;
                Some((term, (1.0 + (total - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        let mut scored: Vec<(f64, &str)> = self
            .files
            .iter()
            .filter_map(|FileWords { path, counts, length }| {
                let norm = K1 * (1.0 - B + B * *length as f64 / self.average_length.max(1.0));
                let score: f64 = weights
                    .iter()
                    .filter_map(|(term, idf)| {
                        counts.get(*term).map(|&tf| idf * tf as f64 * (K1 + 1.0) / (tf as f64 + norm))
                    })
                    .sum();
                (score > 0.0).then_some((score, path.as_str()))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.into_iter().take(limit).map(|(_, path)| path.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_the_file_that_uses_the_rare_words_most() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("sleep.rs"),
            "/// Waits until the deadline.\npub fn sleep(deadline: Instant) { sleep_until(deadline) }\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("channel.rs"), "/// Sends a value to the receiver.\npub fn send(value: T) {}\n")
            .unwrap();
        std::fs::write(dir.path().join("notes.md"), "The deadline for the value is soon.\n").unwrap();
        let index = FileBm25::build(dir.path(), 1 << 20);
        // Three of "deadline" and the rarer "until" beat one "deadline" in a short note; the
        // channel shares only "the", which every file has.
        assert_eq!(index.search("until the deadline", 10), vec!["sleep.rs", "notes.md", "channel.rs"]);
        // Case does not matter; "send" and "value" are both in the channel's file.
        assert_eq!(index.search("Send VALUE", 10)[0], "channel.rs");
        assert!(index.search("nothing matches", 10).is_empty());
    }
}
