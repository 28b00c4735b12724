//! Integration tests: one binary (to keep link time down) driving the real `docdexd` binary,
//! real Tantivy and LMDB in temp dirs, and real HTTP over loopback.

mod common;
mod fakeweb;
mod ollama_stub;

mod across;
mod browser_guard;
mod chat;
mod cli;
mod code;
mod collections;
mod crash;
mod daemon;
mod documents;
mod http;
mod impact;
mod indexing;
mod layers;
mod libs;
mod mcp;
mod memory;
mod quality;
mod semantic;
mod store;
mod web;
