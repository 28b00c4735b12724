#!/usr/bin/env bash
# Measures the waterfall gate (precision and recall of escalating to the web) on the tokio
# source with benches/gate-questions.tsv, in a throwaway DOCDEX_HOME. Needs the embedding
# model (`docdexd models install`, or DOCDEX_MODELS_DIR) for the dense and hybrid rows.
# Usage: benches/gate.sh [path/to/tokio]   (default: the newest tokio in cargo's registry)
set -euo pipefail
cd "$(dirname "$0")/.."
TOKIO="${1:-$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tokio-1.* | sort -V | tail -1)}"
export DOCDEX_HOME="${DOCDEX_HOME:-$(mktemp -d)}"
cargo build --release --quiet
./target/release/docdexd index --repo "$TOKIO" --wait >/dev/null
./target/release/docdex-bench eval-gate --repo "$TOKIO" --questions benches/gate-questions.tsv "${@:2}"
