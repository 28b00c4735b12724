#!/usr/bin/env bash
# Fetches the TypeScript projects of the change-impact judged set and the tools to judge them
# into target/impact-eval/ (git-ignored):
#   target/impact-eval/src/<name>/       one project's source tree at the pinned commit (code,
#                                        tests, fixtures, configs: `git archive <commit>` of the
#                                        project's GitHub repository), made a git repo with one
#                                        commit ("init"), so that score.py's one-line edits
#                                        show up in `git diff`
#   target/impact-eval/ts/deps/<name>/   the project's run-time dependencies and the
#                                        devDependencies its test files use (vitest,
#                                        @vitest/coverage-v8 of the project's vitest major, ...),
#                                        installed with `npm ci` from the lockfile in
#                                        benches/impact/ts/deps/<name>/ (every version pinned);
#                                        src/<name>/node_modules is a symlink to its node_modules
#   target/impact-eval/ts/tools/         typescript (pinned, benches/impact/ts/tools/), whose
#                                        parser benches/impact/ts/functions.mjs uses
# The projects are the entries of benches/impact/split.json with "language": "typescript"; each
# names its GitHub repository ("github": "owner/name") and the commit ("commit") it is judged at.
#
# Where the source comes from. These projects' npm tarballs ship only their build (dist/), not
# their TypeScript sources and tests, so the source is the GitHub repository at the pinned
# commit (a release tag's commit: see split.json's "version"). The judged set was built from
# GitHub snapshots that were copied onto the judging machine as bare git repos under
# /work/.mirror/<owner>+<name>/repo (that machine could not reach GitHub with git itself). This
# script takes the commit, in that order, from:
#   1. $IMPACT_TS_MIRROR/<owner>+<name>/repo (default /work/.mirror): a bare repo that has it;
#   2. `git clone --bare https://github.com/<owner>/<name>` into target/impact-eval/ts/git/
#      (needs GitHub; a clone made once is reused);
# and stops with an error naming the repository and commit when neither has it: the set is not
# reproducible offline without such a copy. Nothing else is substituted for it.
#
# Not the projects' whole devDependencies: their lint, build and release tools are not needed to
# run the tests. Install scripts are not run (--ignore-scripts: esbuild and rollup take their
# native binaries from their optional platform packages). After the commit, node_modules (the
# symlink), coverage/ and judge.py's load-only test file are listed in the repo's
# .git/info/exclude, so `git status` stays clean; judge.py writes its coverage data outside the
# project (target/impact-eval/ts/coverage/).
# Usage: benches/impact/ts/fetch.sh   (idempotent: a present project dir is left alone, a
# dependency tree is reinstalled only when its lockfile changed)
set -euo pipefail
cd "$(dirname "$0")/../../.."
HERE=benches/impact/ts
BASE="$PWD/target/impact-eval"
SRC="$BASE/src"
TS="$BASE/ts"
MIRROR="${IMPACT_TS_MIRROR:-/work/.mirror}"
mkdir -p "$SRC" "$TS"

# $1: a dir of this repo with package.json and package-lock.json, $2: where to install them
install_locked() {
  mkdir -p "$2"
  if [[ ! -d "$2/node_modules" ]] || ! cmp -s "$1/package-lock.json" "$2/package-lock.json"; then
    cp "$1/package.json" "$1/package-lock.json" "$2/"
    (cd "$2" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
}

# $1: owner/name, $2: commit; prints a git dir that has the commit, or fails
git_dir_with() {
  local m="$MIRROR/${1/\//+}/repo" c="$TS/git/${1/\//+}.git"
  if [[ -d "$m" ]] && git --git-dir="$m" cat-file -e "$2^{commit}" 2>/dev/null; then
    echo "$m"; return
  fi
  if [[ ! -d "$c" ]]; then
    mkdir -p "$TS/git"
    git clone -q --bare "https://github.com/$1" "$c" >&2 || rm -rf "$c"
  fi
  if [[ -d "$c" ]] && git --git-dir="$c" cat-file -e "$2^{commit}" 2>/dev/null; then
    echo "$c"; return
  fi
  echo "error: commit $2 of github.com/$1 is in neither $m nor a clone from GitHub;" >&2
  echo "       put a bare copy of that repository there (IMPACT_TS_MIRROR=DIR for" >&2
  echo "       DIR/${1/\//+}/repo) or run this where GitHub is reachable" >&2
  return 1
}

install_locked "$HERE/tools" "$TS/tools"

PROJECTS=$(python3 -c '
import json
for p in json.load(open("benches/impact/split.json"))["projects"]:
    if p.get("language") == "typescript":
        print(p["name"], p["version"], p["github"], p["commit"])
')

while read -r name ver repo commit <&3; do
  dir="$SRC/$name"
  install_locked "$HERE/deps/$name" "$TS/deps/$name"
  if [[ ! -d "$dir" ]]; then
    gd=$(git_dir_with "$repo" "$commit")
    tmp=$(mktemp -d "$BASE/unpack.XXXXXX")
    git --git-dir="$gd" archive --format=tar "$commit" | tar -x -C "$tmp"
    mv "$tmp" "$dir"
    (
      cd "$dir"
      git init -q
      git add -A
      git -c user.email=e@x -c user.name=eval commit -qm "init: github.com/$repo at $commit ($ver)"
      printf '%s\n' node_modules coverage/ '__impact_load_only__.*' >> .git/info/exclude
    )
    echo "fetched $name $ver (github.com/$repo $commit)"
  fi
  ln -sfn "../../ts/deps/$name/node_modules" "$dir/node_modules"
done 3<<< "$PROJECTS"
echo "ready: $SRC"
