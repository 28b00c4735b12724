#!/usr/bin/env bash
# Fetch the source projects of the definitions benchmark (benches/defs/).
#
# Downloads released source code in 11 languages through package registries only
# (Debian apt, PyPI via pip, the npm registry via npm), every version pinned, and
# unpacks each project into target/defs-eval/src/<project>/ (relative to the repo
# root), keeping only the files of the project's language under a sensible project
# root, with the directory structure preserved.  It also (re)writes the manifest
# benches/defs/projects.tsv (project, language, split, source) that judge.py and
# score.py read.
#
# Idempotent: a project whose directory already exists is skipped (delete it to
# fetch it again).  Works from any cwd.  Needs: apt-get + dpkg-deb (Debian
# bookworm lists; run `apt-get update` once on a fresh machine), pip, npm, tar.
#
# Usage: benches/defs/fetch.sh [PROJECT...]     (no argument: every project)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DEST="$ROOT/target/defs-eval/src"
MANIFEST="$HERE/projects.tsv"

die() { echo "fetch.sh: error: $*" >&2; exit 1; }
log() { echo "fetch.sh: $*" >&2; }

for tool in tar find dpkg-deb apt-get npm; do
  command -v "$tool" >/dev/null || die "'$tool' is not installed"
done
PIP=(python3 -m pip)
"${PIP[@]}" --version >/dev/null 2>&1 || die "pip is not available (python3 -m pip)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/defs-fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# ---------------------------------------------------------------------------
# The projects: id, language, split, registry, package, version, project root
# inside the package, and the filter (a function name below) that keeps the
# language's files.  Two per language, one `tune` and one `test`.
# ---------------------------------------------------------------------------
PROJECTS=(
  # id                    lang     split reg    package                              version                 root in package
  "react-native-svg       java     tune  npm    react-native-svg                     15.16.1                 android"
  "react-native-maps      java     test  npm    react-native-maps                    1.29.11                 android"
  "rn-gesture-handler     kotlin   tune  npm    react-native-gesture-handler         3.5.0                   android"
  "stripe-react-native    kotlin   test  npm    @stripe/stripe-react-native          0.78.0                  android"
  "brotli                 c        tune  pypi   brotli                               1.2.1                   c"
  "lua54                  c        test  pypi   lupa                                 2.8                     third-party/lua54"
  "pikepdf                cpp      tune  pypi   pikepdf                              10.18.0                 src/core"
  "jpype-native           cpp      test  pypi   JPype1                               1.7.1                   native"
  "pythonnet              csharp   tune  pypi   pythonnet                            3.2.1                   src/runtime"
  "unitask                csharp   test  npm    com.cysharp.unitask                  2.2.5                   ."
  "thor                   ruby     tune  deb    ruby-thor                            1.2.1-2                 usr/share/rubygems-integration/all/gems/thor-1.2.1"
  "rspec-core             ruby     test  deb    ruby-rspec-core                      3.12.0c0e1m1s0-1        usr/share/rubygems-integration/all/gems/rspec-core-3.12.0"
  "monolog                php      tune  deb    php-monolog                          2.9.1-1                 usr/share/php/Monolog"
  "guzzle-psr7            php      test  deb    php-guzzlehttp-psr7                  2.4.5-1                 usr/share/php/GuzzleHttp/Psr7"
  "penlight               lua      tune  deb    lua-penlight                         1.13.1-3                usr/share/lua/5.1/pl"
  "lua-http               lua      test  deb    lua-http                             0.4-1                   usr/share/lua/5.1/http"
  "makepkg                bash     tune  deb    makepkg                              6.0.2-3                 usr/share/makepkg"
  "dracut                 bash     test  deb    dracut-core                          059-4                   usr/lib/dracut"
  "snyk-hex-plugin        elixir   test  npm    @snyk/snyk-hex-plugin                2.2.2                   elixirsrc"
  "hugs-cabal             haskell  tune  deb    libhugs-cabal-bundled                98.200609.21-6+b1       usr/lib/hugs/packages/Cabal"
  "hugs-haxml             haskell  test  deb    libhugs-haxml-bundled                98.200609.21-6+b1       usr/lib/hugs/packages/HaXml"
)

# File names kept per language (extended regex on the path).
lang_regex() {
  case "$1" in
    java) echo '\.java$' ;;
    kotlin) echo '\.kt$' ;;
    c) echo '\.[ch]$' ;;
    cpp) echo '\.(cpp|cc|cxx|hpp|hh|hxx|h)$' ;;
    csharp) echo '\.cs$' ;;
    ruby) echo '\.rb$' ;;
    php) echo '\.php$' ;;
    lua) echo '\.lua$' ;;
    bash) echo '\.(sh|bash)$' ;;
    elixir) echo '\.exs?$' ;;
    haskell) echo '\.hs$' ;;
    *) die "unknown language $1" ;;
  esac
}

# Paths (relative to the project root, starting with ./) dropped per project:
# generated code (react-native-codegen output, T4 template output, Cabal's
# Paths_ modules), bundled third-party headers, and dracut's non-9x modules (to
# stay under 200 files).
project_exclude() {
  case "$1" in
    react-native-svg) echo '^\./src/paper/java/com/facebook/' ;;
    react-native-maps) echo '^\./src/main/java/com/facebook/' ;;
    jpype-native) echo '^\./jni_include/' ;;
    hugs-cabal | hugs-haxml) echo '^\./Paths_[A-Za-z]+\.hs$' ;;
    dracut) echo '^\./modules\.d/[0-8]' ;;
    *) echo '^$' ;;
  esac
}

# ---------------------------------------------------------------------------
# Registry clients.  Each downloads into a fresh dir under $WORK, unpacks, and
# prints the unpacked tree's top directory.
# ---------------------------------------------------------------------------
APT_UPDATED=0
get_deb() {  # PKG VERSION
  local pkg=$1 ver=$2 dir="$WORK/deb-$1"
  mkdir -p "$dir/x"
  # -o APT::Sandbox::User=root: the temp dir is not readable by the _apt user.
  if ! (cd "$dir" && apt-get -q -o APT::Sandbox::User=root download "$pkg=$ver" >&2); then
    if [ "$APT_UPDATED" = 0 ] && [ "$(id -u)" = 0 ]; then
      log "apt-get download $pkg=$ver failed; running apt-get update once and retrying"
      apt-get -q update >&2 || true
      APT_UPDATED=1
      (cd "$dir" && apt-get -q -o APT::Sandbox::User=root download "$pkg=$ver" >&2) \
        || die "apt-get download $pkg=$ver failed (is that version still in Debian bookworm? see apt-cache policy $pkg)"
    else
      die "apt-get download $pkg=$ver failed (run apt-get update; is that version still in Debian bookworm? see apt-cache policy $pkg)"
    fi
  fi
  local deb
  deb=$(ls "$dir"/*.deb 2>/dev/null | head -n1) || true
  [ -n "$deb" ] || die "no .deb downloaded for $pkg=$ver"
  dpkg-deb -x "$deb" "$dir/x" || die "dpkg-deb -x $deb failed"
  echo "$dir/x"
}

get_pypi() {  # NAME VERSION  (source distribution only)
  local name=$1 ver=$2 dir="$WORK/pypi-$1"
  mkdir -p "$dir/x"
  "${PIP[@]}" download --quiet --disable-pip-version-check --no-deps \
    --no-binary "$name" "$name==$ver" -d "$dir" >&2 \
    || die "pip download $name==$ver (sdist) failed"
  local sdist
  sdist=$(ls "$dir"/*.tar.gz "$dir"/*.zip 2>/dev/null | head -n1) || true
  [ -n "$sdist" ] || die "no sdist downloaded for $name==$ver"
  case "$sdist" in
    *.zip) python3 -m zipfile -e "$sdist" "$dir/x" ;;
    *) tar -xzf "$sdist" -C "$dir/x" ;;
  esac
  local top
  top=$(find "$dir/x" -mindepth 1 -maxdepth 1 -type d | head -n1)
  [ -n "$top" ] || die "sdist $sdist has no top directory"
  echo "$top"
}

get_npm() {  # NAME VERSION
  local name=$1 ver=$2 dir
  dir="$WORK/npm-$(echo "$1" | tr '@/' '__')"
  mkdir -p "$dir/x"
  (cd "$dir" && npm pack --silent "$name@$ver" >/dev/null) || die "npm pack $name@$ver failed"
  local tgz
  tgz=$(ls "$dir"/*.tgz 2>/dev/null | head -n1) || true
  [ -n "$tgz" ] || die "no tarball from npm pack $name@$ver"
  tar -xzf "$tgz" -C "$dir/x" --no-same-owner
  [ -d "$dir/x/package" ] || die "npm tarball of $name@$ver has no package/ dir"
  echo "$dir/x/package"
}

# Copy the language's files under SRC into DST (symlinks dereferenced, structure
# kept), dropping excluded paths and files whose header says they are generated.
keep_files() {  # SRC DST LANG_REGEX EXCLUDE_REGEX
  local src=$1 dst=$2 inc=$3 exc=$4
  [ -d "$src" ] || die "project root $src does not exist in the package"
  mkdir -p "$dst"
  local list="$WORK/list.$$"
  (cd "$src" && find -L . -type f | LC_ALL=C sort | grep -E "$inc" | grep -Ev "$exc" || true) > "$list"
  # Drop generated files: a header marker within the first 15 lines.
  local f out="$list.kept"
  : > "$out"
  while IFS= read -r f; do
    if head -n 15 "$src/$f" | grep -qE '@generated|This code was generated|<auto-generated'; then
      continue
    fi
    echo "$f" >> "$out"
  done < "$list"
  [ -s "$out" ] || die "no matching files under $src"
  (cd "$src" && tar -cf - --dereference --no-recursion -T "$out") | (cd "$dst" && tar -xf - --no-same-owner)
}

# C#: a .cs produced by a T4 template that ships beside it (X.tt -> X.cs) is generated.
drop_t4_output() {  # DIR
  local tt
  while IFS= read -r tt; do rm -f "${tt%.tt}.cs"; done < <(find "$1" -name '*.tt')
}

fetch_project() {  # fields of one PROJECTS line
  local id=$1 lang=$2 split=$3 reg=$4 pkg=$5 ver=$6 sub=$7
  local out="$DEST/$id"
  if [ -d "$out" ]; then
    log "$id: already present, skipped"
    return
  fi
  log "$id: $reg $pkg $ver"
  local top
  case "$reg" in
    deb) top=$(get_deb "$pkg" "$ver") ;;
    pypi) top=$(get_pypi "$pkg" "$ver") ;;
    npm) top=$(get_npm "$pkg" "$ver") ;;
    *) die "unknown registry $reg" ;;
  esac
  local src="$top/$sub"
  if [ "$lang" = csharp ]; then drop_t4_output "$src"; fi
  local stage="$DEST/.partial-$id"
  rm -rf "$stage"
  keep_files "$src" "$stage" "$(lang_regex "$lang")" "$(project_exclude "$id")"
  mv "$stage" "$out"
  log "$id: $(find "$out" -type f | wc -l) files in $out"
}

source_label() {  # REG PKG VER
  case "$1" in
    deb) echo "debian $2=$3" ;;
    pypi) echo "pypi $2==$3" ;;
    npm) echo "npm $2@$3" ;;
  esac
}

main() {
  mkdir -p "$DEST"
  local wanted=" $* " line fields
  {
    printf 'project\tlanguage\tsplit\tsource\n'
    for line in "${PROJECTS[@]}"; do
      read -r -a fields <<< "$line"
      printf '%s\t%s\t%s\t%s\n' "${fields[0]}" "${fields[1]}" "${fields[2]}" \
        "$(source_label "${fields[3]}" "${fields[4]}" "${fields[5]}")"
    done
  } > "$MANIFEST.tmp"
  mv "$MANIFEST.tmp" "$MANIFEST"
  for line in "${PROJECTS[@]}"; do
    read -r -a fields <<< "$line"
    if [ $# -gt 0 ] && [[ "$wanted" != *" ${fields[0]} "* ]]; then
      continue
    fi
    fetch_project "${fields[@]}"
  done
  log "done: projects in $DEST, manifest $MANIFEST"
}

main "$@"
