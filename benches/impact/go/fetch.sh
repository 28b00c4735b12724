#!/usr/bin/env bash
# Fetches the Go projects of the change-impact judged set from the Debian archive, into
# target/impact-eval/src/<name>/ (git-ignored): the library's source tree as Debian's
# golang-*-dev package ships it under /usr/share/gocode/src/<import path> (its sources, its
# _test.go files, its test data, its go.mod), made a git repo with one commit ("init") so that
# score.py's one-line edits show up in `git diff`. The projects are the entries of
# benches/impact/split.json with "language": "go": "debian" (the binary package), "version"
# (its exact Debian version), "import_path" (the folder under /usr/share/gocode/src), "module"
# (the module path; written to a go.mod only when the tree has none) and "deps" (other
# golang-*-dev packages the tests need, each with "debian", "version", "module").
#
# Dependencies stay outside the project: each is unpacked into target/impact-eval/go/deps/
# <module>/ (given a go.mod naming its module when it ships none), and
# target/impact-eval/go/mod/<name>/go.mod is the project's own go.mod plus a `replace` per
# dependency to that folder; judge.py builds with GOFLAGS="-mod=mod -modfile=<that go.mod>" and
# GOPROXY=off, so nothing is fetched from the network and the project's tree stays as shipped.
# The .debs are kept in target/impact-eval/go/debs/.
# Usage: benches/impact/go/fetch.sh   (idempotent: a present project dir is left alone;
# needs apt-get with a Debian bookworm source, dpkg-deb, git)
set -euo pipefail
cd "$(dirname "$0")/../../.."
BASE="$PWD/target/impact-eval"
SRC="$BASE/src"
GOBASE="$BASE/go"
mkdir -p "$SRC" "$GOBASE/debs" "$GOBASE/deps" "$GOBASE/mod"

# download PKG VERSION -> path of the .deb (exact version or a clear error)
download() {
  local pkg=$1 ver=$2 deb
  deb=$(ls "$GOBASE/debs/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
  if [[ -z "$deb" ]]; then
    if ! (cd "$GOBASE/debs" && apt-get download -q "$pkg=$ver" >&2); then
      echo "fetch.sh: $pkg=$ver is not in the archive apt knows (apt-cache policy $pkg;" \
           "the judged set needs that exact version)" >&2
      exit 1
    fi
    deb=$(ls "$GOBASE/debs/${pkg}_${ver//:/%3a}_"*.deb | head -n1)
  fi
  local got
  got=$(dpkg-deb -f "$deb" Version)
  if [[ "$got" != "$ver" ]]; then
    echo "fetch.sh: $deb is version $got, not $ver" >&2
    exit 1
  fi
  echo "$deb"
}

PROJECTS=$(python3 -c '
import json
for p in json.load(open("benches/impact/split.json"))["projects"]:
    if p.get("language") == "go":
        deps = ",".join("%s=%s=%s" % (d["debian"], d["version"], d["module"]) for d in p.get("deps", []))
        print(p["name"], p["debian"], p["version"], p["import_path"], p["module"], deps or "-")
')

while read -r name pkg ver ipath module deps <&3; do
  dir="$SRC/$name"
  moddir="$GOBASE/mod/$name"
  if [[ ! -d "$dir" ]]; then
    deb=$(download "$pkg" "$ver")
    tmp=$(mktemp -d "$GOBASE/unpack.XXXXXX")
    dpkg-deb -x "$deb" "$tmp"
    tree="$tmp/usr/share/gocode/src/$ipath"
    if [[ ! -d "$tree" ]]; then
      echo "fetch.sh: $deb has no /usr/share/gocode/src/$ipath" >&2
      exit 1
    fi
    cp -r "$tree" "$dir"
    rm -rf "$tmp"
    (
      cd "$dir"
      [[ -f go.mod ]] || printf 'module %s\n\ngo 1.19\n' "$module" > go.mod
      git init -q
      printf '%s\n' '*.test' '*.coverprofile' >> .git/info/exclude
      git add -A
      git -c user.email=e@x -c user.name=eval commit -qm init
    )
    echo "fetched $name $pkg $ver"
  fi
  # the go.mod judge.py builds with: the project's own, plus a replace per dependency
  mkdir -p "$moddir"
  cp "$dir/go.mod" "$moddir/go.mod"
  if [[ -f "$dir/go.sum" ]]; then cp "$dir/go.sum" "$moddir/go.sum"; else : > "$moddir/go.sum"; fi
  if [[ "$deps" != "-" ]]; then
    IFS=',' read -ra DEPS <<< "$deps"
    for d in "${DEPS[@]}"; do
      IFS='=' read -r dpkg dver dmod <<< "$d"
      ddir="$GOBASE/deps/$dmod"
      if [[ ! -d "$ddir" ]]; then
        deb=$(download "$dpkg" "$dver")
        tmp=$(mktemp -d "$GOBASE/unpack.XXXXXX")
        dpkg-deb -x "$deb" "$tmp"
        if [[ ! -d "$tmp/usr/share/gocode/src/$dmod" ]]; then
          echo "fetch.sh: $deb has no /usr/share/gocode/src/$dmod" >&2
          exit 1
        fi
        mkdir -p "$(dirname "$ddir")"
        cp -r "$tmp/usr/share/gocode/src/$dmod" "$ddir"
        rm -rf "$tmp"
        [[ -f "$ddir/go.mod" ]] || printf 'module %s\n' "$dmod" > "$ddir/go.mod"
      fi
      grep -q "^require $dmod \|^	$dmod " "$moddir/go.mod" || printf 'require %s v0.0.0\n' "$dmod" >> "$moddir/go.mod"
      printf 'replace %s => %s\n' "$dmod" "$ddir" >> "$moddir/go.mod"
    done
  fi
done 3<<< "$PROJECTS"
echo "ready: $SRC"
