#!/usr/bin/env bash
# Measures grounded chat latency: context assembly (memory recall, hybrid search, budget),
# time to first token and total, cold (first question: the embedding model loads, the LLM's
# prompt cache is empty) and warm (median of the rest). Starts the test LLM server
# (llama.cpp + SmolLM2-135M, one thread; `./scripts/test.sh` installs it into target/py) and
# uses the tokio source as the repo, in a throwaway DOCDEX_HOME.
# Usage: benches/chat.sh [path/to/repo] [bench-chat options, e.g. --runs 9 --json]
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="${1:-$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tokio-1.* | sort -V | tail -1)}"
export DOCDEX_HOME="${DOCDEX_HOME:-$(mktemp -d)}"
cargo build --release --quiet
target/py/bin/python scripts/llm_server.py --n-predict 64 > "$DOCDEX_HOME/llm.out" 2>"$DOCDEX_HOME/llm.err" &
LLM_PID=$!
trap 'kill $LLM_PID 2>/dev/null || true' EXIT
until grep -q "listening on" "$DOCDEX_HOME/llm.out" 2>/dev/null; do
  kill -0 $LLM_PID 2>/dev/null || { cat "$DOCDEX_HOME/llm.err" >&2; exit 1; }
  sleep 0.2
done
export DOCDEX_LLM_PROVIDER=openai DOCDEX_LLM_MODEL=smollm2-135m-instruct
export DOCDEX_LLM_BASE_URL="$(sed 's/listening on //' "$DOCDEX_HOME/llm.out")"
export DOCDEX_WEB_ENABLED=false
./target/release/docdexd index --repo "$REPO" --wait >/dev/null
./target/release/docdex-bench bench-chat --repo "$REPO" --question "How does spawn_blocking run a closure without blocking the runtime?" "${@:2}"
