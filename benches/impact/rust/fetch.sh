#!/usr/bin/env bash
# Fetches the Rust projects of the change-impact judged set through cargo's own client, into
# target/impact-eval/src/<name>/ (git-ignored): the crate as published on crates.io (its
# sources, the tests it ships, its Cargo.toml), made a git repo with one commit ("init") so
# that score.py's one-line edits show up in `git diff`. The projects are the entries of
# benches/impact/split.json with "language": "rust". cargo resolves and downloads their
# dev-dependencies when judge.py builds the tests; the build goes to
# target/impact-eval/rust/target/<name>/, outside the project, so `git status` stays clean.
# Usage: benches/impact/rust/fetch.sh   (idempotent: a present project dir is left alone)
set -euo pipefail
cd "$(dirname "$0")/../../.."
BASE="$PWD/target/impact-eval"
SRC="$BASE/src"
mkdir -p "$SRC" "$BASE/rust"

PROJECTS=$(python3 -c '
import json
for p in json.load(open("benches/impact/split.json"))["projects"]:
    if p.get("language") == "rust":
        print(p["name"], p["version"])
')

while read -r name ver <&3; do
  dir="$SRC/$name"
  [[ -d "$dir" ]] && continue
  # a throwaway package that depends on exactly that version: `cargo fetch` unpacks the crate
  # into cargo's registry cache, where its folder is <name>-<version>
  probe=$(mktemp -d "$BASE/rust/fetch.XXXXXX")
  mkdir -p "$probe/src"
  : > "$probe/src/lib.rs"
  printf '[package]\nname = "fetch-probe"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
    "$name" "$ver" > "$probe/Cargo.toml"
  (cd "$probe" && cargo fetch -q)
  unpacked=$(cd "$probe" && cargo metadata --format-version 1 -q | python3 -c '
import json, os, sys
name = sys.argv[1]
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == name:
        print(os.path.dirname(p["manifest_path"]))
        break
' "$name")
  rm -rf "$probe"
  cp -r "$unpacked" "$dir"
  (
    cd "$dir"
    rm -f .cargo_vcs_info.json .cargo-ok
    git init -q
    printf '%s\n' target/ Cargo.lock >> .git/info/exclude
    git add -A
    git -c user.email=e@x -c user.name=eval commit -qm init
  )
  echo "fetched $name $ver"
done 3<<< "$PROJECTS"
echo "ready: $SRC"
