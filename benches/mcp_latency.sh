#!/usr/bin/env bash
# docdex_search round-trip latency through the official MCP Python SDK, over stdio and
# streamable HTTP, on a small repo (release build). Needs target/py (./scripts/test.sh makes it).
# Usage: benches/mcp_latency.sh [CALLS]
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-300}"
cargo build --release --quiet
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export DOCDEX_HOME="$work/home"
repo="$work/repo"
mkdir -p "$repo/src" "$repo/docs"
printf '/// Limits how many requests a client may send per minute.\npub fn rate_limit(client_id: u64, per_minute: u32) -> bool {\n    per_minute > 0 && client_id > 0\n}\n' > "$repo/src/throttle.rs"
printf '/// Copies the database files to cold storage every night.\npub fn nightly_snapshot(target: &str) {\n    let _ = target;\n}\n' > "$repo/src/backup.rs"
printf '# Palette\n\nTeal buttons, amber warnings.\n' > "$repo/docs/colors.md"
echo "stdio: $(target/py/bin/python tests/mcp/client.py stdio "$PWD/target/release/docdexd" "$repo" --bench "$calls" 2>/dev/null | tail -1)"
target/release/docdexd serve --repo "$repo" --bind 127.0.0.1:0 > "$work/serve.out" 2> "$work/serve.err" &
for _ in $(seq 50); do grep -q listening "$work/serve.out" 2>/dev/null && break; sleep 0.2; done
url="$(sed 's/docdexd listening on //' "$work/serve.out" | head -1)/v1/mcp"
echo "http:  $(target/py/bin/python tests/mcp/client.py http "$url" "$repo" --token "$(cat "$DOCDEX_HOME/token")" --bench "$calls" 2>/dev/null | tail -1)"
