#!/usr/bin/env bash
# Regenerates every judged file in benches/code from the sources fetch.sh put in
# target/code-eval/src (run fetch.sh first). Deterministic: same sources and tool versions
# give byte-identical files. Takes about a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=target/code-eval/venv/bin/python
J=benches/code

$PY $J/judge_python.py rich-14.0.0 rich-14.0.0 tune \
  "pip download --no-deps --no-binary :all: rich==14.0.0 (sdist, unpacked whole)"
$PY $J/judge_python.py httpx-0.28.1 httpx-0.28.1 test \
  "pip download --no-deps --no-binary :all: httpx==0.28.1 (sdist, unpacked whole)"
python3 $J/judge_typescript.py mobx-7.1.3 mobx-7.1.3 tune \
  "npm pack mobx@7.1.3 (dist/ removed: src/, package.json, LICENSE, README kept)"
python3 $J/judge_typescript.py tanstack-query-core-5.108.0 tanstack-query-core-5.108.0 test \
  "npm pack @tanstack/query-core@5.108.0 (build/ removed: src/, package.json, LICENSE kept)"
python3 $J/judge_go.py goldmark-1.5.4 goldmark-1.5.4 github.com/yuin/goldmark tune \
  "apt-get download golang-github-yuin-goldmark-dev=1.5.4-1 (Debian; /usr/share/gocode/src/github.com/yuin/goldmark)"
python3 $J/judge_go.py go-cmp-0.5.9 go-cmp-0.5.9 github.com/google/go-cmp test \
  "apt-get download golang-github-google-go-cmp-dev=0.5.9-1 (Debian; /usr/share/gocode/src/github.com/google/go-cmp)"
python3 $J/judge_rust.py clap_builder-4.6.7 clap_builder-4.6.7 tune \
  "cargo fetch clap_builder@4.6.7 (.crate unpacked whole; cargo remove: dev-dependencies, optional terminal_size; Cargo.lock from benches/code)"
python3 $J/judge_rust.py aho-corasick-1.1.5 aho-corasick-1.1.5 test \
  "cargo fetch aho-corasick@1.1.5 (.crate unpacked whole; cargo remove: dev-dependencies; Cargo.lock from benches/code)"
