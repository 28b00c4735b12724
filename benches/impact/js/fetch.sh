#!/usr/bin/env bash
# Fetches the JavaScript projects of the change-impact judged set and the tools to judge them,
# all through npm's own client, into target/impact-eval/ (git-ignored):
#   target/impact-eval/dl/               the npm tarballs (`npm pack <name>@<version>`)
#   target/impact-eval/src/<name>/       one project's unpacked tarball (code, tests, fixtures as
#                                        shipped), made a git repo with one commit ("init"), so
#                                        that score.py's one-line edits show up in `git diff`
#   target/impact-eval/js/deps/<name>/   the project's run-time dependencies and the
#                                        devDependencies its test files use, installed with
#                                        `npm ci` from the lockfile in benches/impact/js/deps/
#                                        <name>/ (every version pinned); src/<name>/node_modules
#                                        is a symlink to its node_modules
#   target/impact-eval/js/tools/         acorn (pinned, benches/impact/js/tools/), for judge.py
# The projects are the entries of benches/impact/split.json with "language": "javascript".
# Not the packages' whole devDependencies: their lint and publish tools (eslint configs, nyc,
# ...) are not needed to run the tests, and some of the versions they ask for are not on the
# registry. Install scripts are not run (--ignore-scripts): none of these packages needs one.
# After the commit, node_modules (the symlink) and coverage leftovers (.nyc_output/, coverage/)
# are listed in the repo's .git/info/exclude, so `git status` stays clean; judge.py writes its
# coverage data outside the project (target/impact-eval/js/coverage/).
# Usage: benches/impact/js/fetch.sh   (idempotent: a present project dir is left alone, a
# dependency tree is reinstalled only when its lockfile changed)
set -euo pipefail
cd "$(dirname "$0")/../../.."
HERE=benches/impact/js
BASE="$PWD/target/impact-eval"
SRC="$BASE/src"
JS="$BASE/js"
mkdir -p "$SRC" "$BASE/dl" "$JS"

# $1: a dir of this repo with package.json and package-lock.json, $2: where to install them
install_locked() {
  mkdir -p "$2"
  if [[ ! -d "$2/node_modules" ]] || ! cmp -s "$1/package-lock.json" "$2/package-lock.json"; then
    cp "$1/package.json" "$1/package-lock.json" "$2/"
    (cd "$2" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
}

install_locked "$HERE/tools" "$JS/tools"

PROJECTS=$(python3 -c '
import json
for p in json.load(open("benches/impact/split.json"))["projects"]:
    if p.get("language") == "javascript":
        print(p["name"], p["version"])
')

while read -r name ver <&3; do
  dir="$SRC/$name"
  install_locked "$HERE/deps/$name" "$JS/deps/$name"
  if [[ ! -d "$dir" ]]; then
    tgz=$(cd "$BASE/dl" && npm pack "$name@$ver" --silent)
    tmp=$(mktemp -d "$BASE/unpack.XXXXXX")
    tar xzf "$BASE/dl/$tgz" -C "$tmp" --no-same-owner
    mv "$tmp/package" "$dir"
    rmdir "$tmp"
    (
      cd "$dir"
      git init -q
      git add -A
      git -c user.email=e@x -c user.name=eval commit -qm init
      printf '%s\n' node_modules .nyc_output/ coverage/ >> .git/info/exclude
    )
    echo "fetched $name $ver"
  fi
  ln -sfn "../../js/deps/$name/node_modules" "$dir/node_modules"
done 3<<< "$PROJECTS"
echo "ready: $SRC"
