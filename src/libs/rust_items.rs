//! What a crate's documentation becomes for the crate tools (`items.json`): its public items
//! with their canonical paths and the aliases re-exports give them. Written from rustdoc JSON
//! (`rust.rs`) or, when rustdoc cannot run, from the source (`rust_source.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One public item of a crate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RustItem {
    /// Canonical path (`serde::de::Deserialize`).
    pub path: String,
    /// `fn`, `struct`, `enum`, `trait`, `macro`, `mod`, `type`, `const`, `static`, `union`,
    /// `method`, `trait_alias`.
    pub kind: String,
    pub signature: String,
    pub docs: String,
}

/// What the crate tools read (`items.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RustDocs {
    pub crate_name: String,
    pub version: String,
    pub items: Vec<RustItem>,
    /// Other public paths of an item (re-exports) → its canonical path.
    pub aliases: BTreeMap<String, String>,
}

pub const ITEMS_FILE: &str = "items.json";
