//! docdex: a local-first retrieval daemon for AI coding assistants.
//!
//! See `ARCHITECTURE.md` for the map. In short: `ingest` (walking and chunking) and `index`
//! (Tantivy + LMDB) are plain libraries; `actors` wraps them in actix actors that talk by
//! typed messages; `protocol` holds the request/response/error types every surface shares;
//! `http` and `cli` are thin adapters over the `ToolDispatcher` actor.

pub mod actors;
pub mod change;
pub mod cli;
pub mod code;
pub mod config;
pub mod daemon;
pub mod document;
pub mod http;
pub mod index;
pub mod ingest;
pub mod libs;
pub mod llm;
pub mod mcp;
pub mod postgres;
pub mod protocol;
pub mod runner;
pub mod web;
