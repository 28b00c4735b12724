//! A static embedding distilled from the transformer, model2vec's way: every token of the
//! model's vocabulary goes through the model once, and a text's vector is then the mean of its
//! tokens' vectors. Embedding a chunk takes microseconds instead of the transformer's tens of
//! milliseconds, so every chunk of a repo has a vector within seconds of its index run.
//!
//! Distillation, once per model (`docdexd models install`, or the first time it is needed):
//! - each token `t` is run as `[SEP] t [CLS]` and its vector is the mean of the three outputs
//!   (model2vec found the reversed markers work better than `[CLS] t [SEP]`);
//! - the vectors are centred: model2vec applies PCA, and a PCA that keeps every dimension is a
//!   centring and a rotation; a rotation changes no cosine, the centring removes the direction
//!   every token shares (without it any two texts look alike);
//! - each vector is weighted by SIF, `a / (a + p)` with `a = 1e-4` and `p` the token's
//!   frequency estimated by Zipf's law from its rank (its id: BERT's vocabulary is ordered
//!   roughly by frequency), so "the" and "##s" weigh little in a mean.
//!
//! The result is a file beside the model: a header, then `vocab × dims` little-endian f32.

use std::path::{Path, PathBuf};

use tokenizers::Tokenizer;

use super::models::{ModelPaths, EMBEDDING_DIMS};

/// The distilled vectors' file, in the model's directory.
pub const STATIC_FILE_NAME: &str = "static-vectors.bin";
/// Changes when the method does: a file of another version is distilled again.
const FORMAT: &[u8; 8] = b"DDXSTAT1";
/// SIF's smoothing constant (model2vec's default).
const SIF_COEFFICIENT: f64 = 1e-4;
/// Tokens per model run while distilling.
const DISTILL_BATCH: usize = 512;

/// The distilled token vectors and the tokenizer that splits a text into those tokens.
pub struct StaticModel {
    tokenizer: Tokenizer,
    dims: usize,
    /// `vocab × dims` as bfloat16 (the upper half of an f32: half the memory, and a mean of
    /// many tokens does not notice the lost mantissa), row `id` is token `id`'s vector.
    vectors: Vec<u16>,
    /// Whether token `id` counts (padding, markers and unused slots have zero vectors).
    counts: Vec<bool>,
}

impl StaticModel {
    /// The file the vectors of the model at `paths` are kept in.
    pub fn path(paths: &ModelPaths) -> PathBuf {
        paths.model_dir.join(STATIC_FILE_NAME)
    }

    /// Loads the distilled vectors, distilling them first when the file is missing or of
    /// another version. `log` hears about a distillation (it takes a while).
    pub fn load_or_distill(
        paths: &ModelPaths,
        threads: usize,
        log: &mut dyn FnMut(&str),
    ) -> std::result::Result<StaticModel, String> {
        let tokenizer = load_tokenizer(paths)?;
        let file = Self::path(paths);
        let vocab = tokenizer.get_vocab_size(true);
        let vectors = match read_vectors(&file, vocab)? {
            Some(vectors) => vectors,
            None => {
                log(&format!("distilling static vectors for {vocab} tokens (once per model)"));
                let vectors = distill(paths, &tokenizer, threads)?;
                if let Err(err) = write_vectors(&file, vocab, &vectors) {
                    // Still usable now; the next process distils again.
                    log(&format!("cannot keep the static vectors in {}: {err}", file.display()));
                }
                vectors.iter().map(|&x| to_bf16(x)).collect()
            }
        };
        let counts = vectors.chunks(EMBEDDING_DIMS).map(|row| row.iter().any(|&x| x & 0x7fff != 0)).collect();
        Ok(StaticModel { tokenizer, dims: EMBEDDING_DIMS, vectors, counts })
    }

    /// One unit-length vector per text (all zeros for a text with no known token).
    pub fn embed(&self, texts: &[String]) -> Vec<Vec<f32>> {
        texts.iter().map(|text| self.embed_one(text)).collect()
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; self.dims];
        let Ok(encoding) = self.tokenizer.encode_fast(words(text), false) else { return sum };
        let mut counted = 0usize;
        for &id in encoding.get_ids() {
            let id = id as usize;
            if !self.counts.get(id).copied().unwrap_or(false) {
                continue;
            }
            let row = &self.vectors[id * self.dims..(id + 1) * self.dims];
            sum.iter_mut().zip(row).for_each(|(s, &x)| *s += from_bf16(x));
            counted += 1;
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if counted > 0 && norm > f32::EPSILON {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }
}

/// Fewest chunks a repo's static vectors are centred at: the mean of a handful of chunks is
/// their own text, not what the repo's chunks share.
pub const MIN_CENTRED_CHUNKS: usize = 200;

/// Centres a chunk's static vector on its repo's mean (and makes it unit length again).
///
/// Every chunk of a repo shares a large part of its mean of tokens: the language's keywords,
/// the repo's own names and style. A question in words has little of it, so in a plain cosine
/// that shared part only dilutes each chunk's own content, most in the chunks made mostly of
/// it. Subtracting the repo's mean leaves the chunk's own part; the question is left as it
/// is (centring it too measured worse). The model's vectors gain nothing from the same
/// centring (measured on the judged sets), so only the static ones are centred. Measured in
/// docs/ranking.md (static vectors).
pub fn centre(vector: &mut [f32], mean: &[f32]) {
    if vector.len() != mean.len() {
        return;
    }
    let norm = vector.iter().zip(mean).map(|(x, m)| (x - m) * (x - m)).sum::<f32>().sqrt();
    // A chunk that is its repo's mean has no own part: it keeps its plain vector.
    if norm > 1e-6 {
        vector.iter_mut().zip(mean).for_each(|(x, m)| *x = (*x - m) / norm);
    }
}

/// The running mean of vectors.
#[derive(Debug, Clone, Default)]
pub struct MeanVector {
    sum: Vec<f64>,
    count: usize,
}

impl MeanVector {
    pub fn add(&mut self, vector: &[f32]) {
        if self.sum.is_empty() {
            self.sum = vec![0.0; vector.len()];
        }
        if vector.len() == self.sum.len() {
            self.sum.iter_mut().zip(vector).for_each(|(s, &x)| *s += f64::from(x));
            self.count += 1;
        }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    pub fn mean(&self) -> Vec<f32> {
        let count = self.count.max(1) as f64;
        self.sum.iter().map(|s| (s / count) as f32).collect()
    }
}

/// The text's words, identifiers split at `_` and case changes (`JoinHandle` → `Join Handle`,
/// which the vocabulary knows; `joinhandle` is three unrelated pieces), punctuation dropped.
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()) {
        for (_, part) in super::analyzer::split_identifier(word) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(part);
        }
    }
    out
}

fn load_tokenizer(paths: &ModelPaths) -> std::result::Result<Tokenizer, String> {
    let file = paths.model_dir.join("tokenizer.json");
    let mut tokenizer =
        Tokenizer::from_file(&file).map_err(|err| format!("cannot read the tokenizer {}: {err}", file.display()))?;
    // The whole text counts: no truncation at the transformer's window, no padding.
    tokenizer.with_truncation(None).map_err(|err| format!("tokenizer: {err}"))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

/// Runs every vocabulary token through the transformer and post-processes the vectors.
fn distill(paths: &ModelPaths, tokenizer: &Tokenizer, threads: usize) -> std::result::Result<Vec<f32>, String> {
    use ort::session::Session;
    use ort::value::Tensor;

    if let Some(missing) = paths.missing() {
        return Err(format!("{} is missing; run `docdexd models install`", missing.display()));
    }
    let environment = super::models::runtime(paths)?;
    let model =
        std::fs::read(paths.model_dir.join("model.onnx")).map_err(|err| format!("cannot read model.onnx: {err}"))?;
    let mut session = Session::builder(&environment)
        .map_err(|err| format!("cannot set up the model: {err}"))?
        .with_intra_threads(threads.max(1))
        .map_err(|err| format!("cannot set up the model: {err}"))?
        .commit_from_memory(&model)
        .map_err(|err| format!("cannot load the model: {err}"))?;
    let id_of = |token: &str| tokenizer.token_to_id(token).ok_or_else(|| format!("the tokenizer has no {token}"));
    let (cls, sep) = (id_of("[CLS]")? as i64, id_of("[SEP]")? as i64);
    let vocab = tokenizer.get_vocab_size(true);
    let counts: Vec<bool> = (0..vocab as u32)
        .map(|id| {
            let token = tokenizer.id_to_token(id).unwrap_or_default();
            !(token.starts_with("[unused") || (token.starts_with('[') && token.ends_with(']') && token.len() <= 6))
        })
        .collect();
    let dims = EMBEDDING_DIMS;
    let mut vectors = vec![0f32; vocab * dims];
    for start in (0..vocab).step_by(DISTILL_BATCH) {
        let ids: Vec<usize> = (start..(start + DISTILL_BATCH).min(vocab)).collect();
        let rows = ids.len();
        let input: Vec<i64> = ids.iter().flat_map(|&id| [sep, id as i64, cls]).collect();
        let tensor = |data: Vec<i64>| Tensor::from_array(([rows, 3], data)).map_err(|err| err.to_string());
        let inputs = ort::inputs![
            "input_ids" => tensor(input)?,
            "attention_mask" => tensor(vec![1; rows * 3])?,
            "token_type_ids" => tensor(vec![0; rows * 3])?,
        ];
        let outputs = session.run(inputs).map_err(|err| format!("the model failed: {err}"))?;
        let (shape, data) = outputs[0].try_extract_tensor::<f32>().map_err(|err| format!("model output: {err}"))?;
        if shape.len() != 3 || shape[0] as usize != rows || shape[1] != 3 || shape[2] as usize != dims {
            return Err(format!("the model's output has shape {shape:?}, expected [{rows}, 3, {dims}]"));
        }
        for (row, &id) in ids.iter().enumerate() {
            let out = &mut vectors[id * dims..(id + 1) * dims];
            for position in 0..3 {
                let from = &data[(row * 3 + position) * dims..(row * 3 + position + 1) * dims];
                out.iter_mut().zip(from).for_each(|(o, x)| *o += x / 3.0);
            }
        }
    }
    post_process(&mut vectors, &counts, dims);
    Ok(vectors)
}

/// Centres the counted tokens' vectors and weights each by SIF; the others become zero.
/// (PCA to 256 dimensions, model2vec's default, measured no better on semble's tune split:
/// dense NDCG@10 0.661 vs 0.664, hybrid 0.793 vs 0.791; left out.)
fn post_process(vectors: &mut [f32], counts: &[bool], dims: usize) {
    let counted = counts.iter().filter(|&&c| c).count().max(1);
    let mut mean = vec![0f64; dims];
    for (row, _) in vectors.chunks(dims).zip(counts).filter(|(_, &c)| c) {
        mean.iter_mut().zip(row).for_each(|(m, &x)| *m += x as f64 / counted as f64);
    }
    // Zipf: the token of rank r (from 1) has frequency proportional to 1 / (r + 1).
    let total: f64 = (0..counts.len()).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    for (rank, (row, &count)) in vectors.chunks_mut(dims).zip(counts).enumerate() {
        if !count {
            row.iter_mut().for_each(|x| *x = 0.0);
            continue;
        }
        let probability = (1.0 / (rank as f64 + 2.0)) / total;
        let weight = SIF_COEFFICIENT / (SIF_COEFFICIENT + probability);
        row.iter_mut().zip(&mean).for_each(|(x, m)| *x = ((*x as f64 - m) * weight) as f32);
    }
}

/// Reads the file's vectors as bfloat16, a block at a time (never the whole file and its
/// copy at once); `None` when it is missing or not of this version and vocabulary.
fn read_vectors(file: &Path, vocab: usize) -> std::result::Result<Option<Vec<u16>>, String> {
    use std::io::Read;
    let cannot = |err: std::io::Error| format!("cannot read {}: {err}", file.display());
    let mut reader = match std::fs::File::open(file) {
        Ok(reader) => reader,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(cannot(err)),
    };
    let values = vocab * EMBEDDING_DIMS;
    let mut header = [0u8; 16];
    let fits = reader.metadata().map_err(cannot)?.len() == (header.len() + values * 4) as u64
        && reader.read_exact(&mut header).is_ok()
        && &header[..FORMAT.len()] == FORMAT
        && u32::from_le_bytes([header[8], header[9], header[10], header[11]]) as usize == vocab
        && u32::from_le_bytes([header[12], header[13], header[14], header[15]]) as usize == EMBEDDING_DIMS;
    if !fits {
        // Another version or a torn write: distil again rather than trust it.
        return Ok(None);
    }
    let mut vectors = Vec::with_capacity(values);
    let mut block = vec![0u8; 1 << 16];
    while vectors.len() < values {
        let want = ((values - vectors.len()) * 4).min(block.len());
        reader.read_exact(&mut block[..want]).map_err(cannot)?;
        vectors.extend(block[..want].chunks_exact(4).map(|b| to_bf16(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))));
    }
    Ok(Some(vectors))
}

/// f32 to bfloat16, rounded to nearest (ties to even).
fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    (bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

fn from_bf16(x: u16) -> f32 {
    f32::from_bits((x as u32) << 16)
}

fn write_vectors(file: &Path, vocab: usize, vectors: &[f32]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(16 + vectors.len() * 4);
    bytes.extend_from_slice(FORMAT);
    bytes.extend_from_slice(&(vocab as u32).to_le_bytes());
    bytes.extend_from_slice(&(EMBEDDING_DIMS as u32).to_le_bytes());
    vectors.iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
    // Two processes may distil at once (a daemon and `models install`): each writes its own
    // file, and the rename makes one of them whole.
    let partial = file.with_extension(format!("partial-{}", std::process::id()));
    let written = std::fs::File::create(&partial).and_then(|mut out| {
        std::io::Write::write_all(&mut out, &bytes)?;
        out.sync_all()
    });
    match written.and_then(|_| std::fs::rename(&partial, file)) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = std::fs::remove_file(&partial);
            Err(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_split_into_the_words_the_vocabulary_knows() {
        assert_eq!(
            words("let h: JoinHandle<()> = spawn_blocking(|| parseHTTPHeader(x));"),
            "let h Join Handle spawn blocking parse HTTP Header x"
        );
        assert_eq!(words("  "), "");
    }

    #[test]
    fn a_centred_vector_keeps_what_sets_it_apart_from_the_mean() {
        let mut mean = MeanVector::default();
        let (a, b) = ([0.8f32, 0.6, 0.0], [0.8f32, 0.0, 0.6]);
        mean.add(&a);
        mean.add(&b);
        assert_eq!(mean.count(), 2);
        let mean = mean.mean();
        assert!((mean[0] - 0.8).abs() < 1e-6 && (mean[1] - 0.3).abs() < 1e-6, "{mean:?}");
        let mut centred = a;
        centre(&mut centred, &mean);
        // What both share (the first axis) is gone; the rest is unit length.
        assert!(centred[0].abs() < 1e-6, "{centred:?}");
        let norm = centred.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{centred:?}");
        assert!(centred[1] > 0.0 && centred[2] < 0.0, "{centred:?}");
        // The mean itself has no own part and stays as it was.
        let mut same = mean.clone();
        centre(&mut same, &mean);
        assert_eq!(same, mean);
    }

    #[test]
    fn bfloat16_keeps_three_significant_digits() {
        for x in [0.0f32, 1.0, -0.5, 0.123_456, -3.75e-4, 12_345.678] {
            let back = from_bf16(to_bf16(x));
            assert!((back - x).abs() <= x.abs() / 256.0, "{x} came back as {back}");
        }
        assert_eq!(to_bf16(-0.0) & 0x7fff, 0, "negative zero is still zero");
    }

    #[test]
    fn centring_and_sif_leave_uncounted_tokens_at_zero_and_weigh_frequent_ones_less() {
        let dims = 2;
        let mut vectors = vec![9.0, 9.0, 1.0, 3.0, 3.0, 1.0, 2.0, 2.0];
        post_process(&mut vectors, &[false, true, true, true], dims);
        assert_eq!(&vectors[..2], &[0.0, 0.0]);
        // Centred on the counted mean (2, 2): the third token sits on it.
        assert_eq!(&vectors[6..], &[0.0, 0.0]);
        // Token 1 (more frequent by Zipf) weighs less than token 2, same distance from the mean.
        assert!(vectors[2].abs() < vectors[4].abs(), "{vectors:?}");
    }
}
