//! Pure ingestion logic (no actors): walking a repo under its ignore rules, detecting
//! languages and splitting files into chunks. The `Ingestor` actor drives these.

pub mod chunk;
pub mod code;
pub mod lang;
pub mod licence;
pub mod open;
pub mod repo_policy;
pub mod skeleton;
pub mod surface;
pub mod walk;
pub mod window;

pub use chunk::{chunk_document, chunk_file, markdown_headings, Chunk, DocumentText, Heading};
pub use lang::Language;
pub use walk::{read_text_file, scan_paths, scan_repo, FileRead, ScanResult, ScannedFile, SizeLimits};
pub use window::ChunkParams;

/// Hex SHA-256 of some bytes: content hashes for incremental indexing and repo fingerprints.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}
