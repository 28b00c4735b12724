#!/usr/bin/env bash
# Fetches the judged projects' sources and the judging tools, all through the package
# registries' own clients, into target/code-eval/ (git-ignored):
#   target/code-eval/src/<root>/   one project's source tree (what docdex indexes, R)
#   target/code-eval/venv/         jedi + grimp (Python judge)
#   target/code-eval/node/         typescript (TypeScript judge)
#   go (Debian golang-go, apt-get install) for the Go judge
#   target/code-eval/ra/bin/rust-analyzer   (Rust judge; built from crates.io, see below)
# Python projects are the unpacked sdist, whole (package, tests, docs as shipped).
# npm projects are the unpacked `npm pack` tarball with the built output (dist/, build/)
# removed: only src/ (the TypeScript sources), package.json, LICENSE and README stay.
# Go projects are Debian's golang-*-dev packages (`apt-get download`, needs `apt-get update`
# once), whose /usr/share/gocode/src/<import path> tree is the project's source as packaged.
# Rust projects are crates.io .crate files (fetched by cargo into its registry cache, unpacked
# whole) made loadable offline: the manifest's dev-dependencies and the optional dependencies
# not in the registry cache are removed with `cargo remove` (no .rs file changes), and the
# lockfile committed as benches/code/<root>.Cargo.lock replaces the shipped one; `cargo fetch
# --locked` then brings every locked dependency into the cache (rust-analyzer reads them).
# rust-analyzer is the crates.io binary crate ra_ap_rust-analyzer (`cargo install --locked`,
# nightly: 0.0.349 uses std::assert_matches, unstable on stable 1.95), and reads std's source
# from the stable toolchain's rust-src component (std's locked dependencies fetched too).
# Usage: benches/code/fetch.sh [--no-tools]   (idempotent: a present root is left alone)
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE="$PWD/target/code-eval"
SRC="$BASE/src"
mkdir -p "$SRC" "$BASE/dl"

if [[ "${1:-}" != "--no-tools" ]]; then
  [[ -x "$BASE/venv/bin/python" ]] || python3 -m venv "$BASE/venv"
  "$BASE/venv/bin/pip" install -q jedi==0.20.1 parso==0.8.7 grimp==3.20
  mkdir -p "$BASE/node"
  [[ -f "$BASE/node/package.json" ]] || (cd "$BASE/node" && npm init -y >/dev/null)
  (cd "$BASE/node" && npm install -q --no-audit --no-fund typescript@5.9.3 >/dev/null)
  command -v go >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q golang-go >/dev/null
  rustup component add rust-src --toolchain stable >/dev/null
  # std's own dependencies, which rust-analyzer's `cargo metadata` of the sysroot needs offline
  # (without them it falls back to a --no-deps sysroot where std resolves nothing)
  __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly cargo +stable fetch -q --locked \
    --manifest-path "$(rustc +stable --print sysroot)/lib/rustlib/src/rust/library/Cargo.toml"
  if [[ ! -x "$BASE/ra/bin/rust-analyzer" ]]; then   # ~11 min with one job (temporary target dir)
    nice -n 19 cargo +nightly install -q --locked ra_ap_rust-analyzer@0.0.349 --root "$BASE/ra"
  fi
fi

# pypi NAME VERSION: sdist -> $SRC/NAME-VERSION
pypi() {
  local name=$1 ver=$2 root="$1-$2"
  [[ -d "$SRC/$root" ]] && return
  python3 -m pip download -q --no-deps --no-binary :all: "$name==$ver" -d "$BASE/dl"
  tar xzf "$BASE/dl/$name-$ver.tar.gz" -C "$SRC"
  echo "fetched $root"
}

# npm PKG VERSION ROOT: npm pack tarball -> $SRC/ROOT (sources only)
npmpkg() {
  local pkg=$1 ver=$2 root=$3
  [[ -d "$SRC/$root" ]] && return
  local tgz
  tgz=$(cd "$BASE/dl" && npm pack -q "$pkg@$ver" | tail -1)
  mkdir -p "$SRC/$root"
  tar xzf "$BASE/dl/$tgz" -C "$SRC/$root" --strip-components=1
  rm -rf "$SRC/$root/dist" "$SRC/$root/build"
  echo "fetched $root"
}

# deb PACKAGE VERSION IMPORT_PATH ROOT: Debian golang-*-dev -> $SRC/ROOT
deb() {
  local pkg=$1 ver=$2 ipath=$3 root=$4
  [[ -d "$SRC/$root" ]] && return
  local tmp
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  (cd "$tmp" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) \
    || { echo "apt-get download $pkg=$ver failed (run apt-get update first)" >&2; exit 1; }
  dpkg -x "$tmp"/*.deb "$tmp/x"
  cp -r "$tmp/x/usr/share/gocode/src/$ipath" "$SRC/$root"
  cp "$tmp"/*.deb "$BASE/dl/"
  rm -rf "$tmp"
  echo "fetched $root"
}

# crate NAME VERSION OPTIONAL_DEP...: crates.io .crate -> $SRC/NAME-VERSION, loadable offline
crate() {
  local name=$1 ver=$2 root="$1-$2"
  shift 2
  [[ -d "$SRC/$root" ]] && return
  local tmp dot lock="$PWD/benches/code/$root.Cargo.lock"
  tmp=$(mktemp -d)
  mkdir "$tmp/src" && touch "$tmp/src/lib.rs"
  printf '[package]\nname = "fetch-%s"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n' \
    "$name" "$name" "$ver" > "$tmp/Cargo.toml"
  (cd "$tmp" && cargo fetch -q)
  dot=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$root.crate" | head -1)
  cp "$dot" "$BASE/dl/"
  tar xzf "$dot" -C "$SRC"
  rm -rf "$tmp"
  local dev
  dev=$(cd "$SRC/$root" && python3 -c 'import tomllib; print(" ".join(tomllib.load(open("Cargo.toml", "rb")).get("dev-dependencies", {})))')
  # each `cargo remove` edits the manifest, then fails to relock offline while another
  # unavailable dependency is left: the final `cargo metadata --locked` is the check
  (cd "$SRC/$root" && rm -f Cargo.lock \
    && { [[ -z "$dev" ]] || cargo remove -q --offline --dev $dev 2>/dev/null || true; } \
    && { [[ $# -eq 0 ]] || cargo remove -q --offline "$@" 2>/dev/null || true; } \
    && cp "$lock" Cargo.lock \
    && cargo fetch -q --locked \
    && cargo metadata -q --offline --locked --format-version 1 >/dev/null)
  echo "fetched $root"
}

pypi rich 14.0.0                                        # python, tune
pypi httpx 0.28.1                                       # python, test
npmpkg mobx 7.1.3 mobx-7.1.3                            # typescript, tune
npmpkg @tanstack/query-core 5.108.0 tanstack-query-core-5.108.0   # typescript, test
deb golang-github-yuin-goldmark-dev 1.5.4-1 github.com/yuin/goldmark goldmark-1.5.4   # go, tune
deb golang-github-google-go-cmp-dev 0.5.9-1 github.com/google/go-cmp go-cmp-0.5.9     # go, test
crate clap_builder 4.6.7 terminal_size                   # rust, tune
crate aho-corasick 1.1.5                                 # rust, test
