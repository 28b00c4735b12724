#!/usr/bin/env bash
# Fetches the change-impact judged projects and the tools to judge them, all through PyPI's own
# client (pip), into target/impact-eval/ (git-ignored):
#   target/impact-eval/dl/             the downloaded sdists
#   target/impact-eval/src/<name>/     one project's unpacked sdist (package, tests, docs as
#                                      shipped), made a git repo with one commit ("init"), so
#                                      that score.py's one-line edits show up in `git diff`
#   target/impact-eval/venv/           pytest + coverage + each project's test dependencies,
#                                      each project installed editable from src/<name>
# The projects, versions and split are read from benches/impact/split.json (the Python ones:
# entries with a "language" other than python are js/fetch.sh's).
# Build artifacts that an editable install or a test run leaves in a project's tree
# (*.egg-info, __pycache__, .pytest_cache, .hypothesis) are listed in the repo's
# .git/info/exclude, so `git status` stays clean without changing any shipped file.
# Usage: benches/impact/fetch.sh   (idempotent: a present project dir is left alone)
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE="$PWD/target/impact-eval"
SRC="$BASE/src"
VENV="$BASE/venv"
mkdir -p "$SRC" "$BASE/dl"

# The test tools and each project's test dependencies (from its pyproject/tox.ini), pinned.
TOOLS=(
  pytest==9.2.0 coverage==7.17.4 pytest-cov==7.1.0
  hypothesis==6.170.17 pympler==1.1 cloudpickle==3.1.3   # attrs
  simplejson==4.3.0                                      # marshmallow
  PyYAML==6.0.4                                          # tomlkit
  # sqlparse, mistune, pyflakes: no test dependencies beyond pytest
  MarkupSafe==3.0.3                                      # jinja2 (its one run-time dependency)
  trio==0.27.0 outcome==1.3.0.post0 sniffio==1.3.1       # jinja2's async tests (versions of
  sortedcontainers==2.4.0 idna==3.10                     # its requirements/tests.txt; trio's
                                                         # attrs is the attrs project's own)
  Mako==1.3.10                                           # bottle's test_mako (its test_jinja2
                                                         # runs on the jinja2 project's copy)
  six==1.17.0                                            # transitions (its run-time dependency)
  pycodestyle==2.15.0                                    # transitions' test_codestyle (imported
                                                         # unconditionally; its graphviz/mermaid
                                                         # diagram tests skip without graphviz)
  termcolor==3.3.0                                       # fire (its run-time dependency)
  # pyasn1: no test dependencies beyond pytest
  Babel==2.17.0                                          # wtforms' test_locale_babel (2.19's
                                                         # CLDR data fails two of its tests)
  email-validator==2.4.0 dnspython==2.9.2                # wtforms' validators/test_email (its
                                                         # run-time MarkupSafe is jinja2's pin)
  # mock: no test dependencies beyond pytest
  hpack==4.2.0 hyperframe==6.1.0                         # h2 (its run-time dependencies; its
                                                         # tests' hypothesis is attrs' pin)
  boltons==26.2.0 face==26.0.1                           # glom (its run-time dependencies, with
                                                         # the attrs project's own attrs; its
                                                         # YAML tests run on tomlkit's PyYAML)
  ruamel.yaml==0.19.1 msgpack==1.2.4 tomli-w==1.2.0      # python-box's tests (its converters'
  toon-format==1.2.0                                     # optional formats; no run-time deps;
                                                         # its PyYAML tests use tomlkit's pin)
  soupsieve==4.1.3 typing-extensions==4.16.0             # beautifulsoup4 (its run-time
                                                         # dependencies; lxml and html5lib are
                                                         # left out: their builder tests skip)
  # tinydb, pycparser: no test dependencies beyond pytest
  pylatexenc==2.10                                       # bibtexparser (its run-time dependency:
                                                         # the latex encoding middlewares)
  # cloup: its run-time dependencies are click (the click project's own copy) and
  # typing-extensions (beautifulsoup4's pin above)
  PyJWT==2.15.1 cryptography==50.0.2 cffi==2.1.1         # oauthlib's tests (no run-time deps:
  blinker==1.9.0                                         # two test files import jwt, RSA signing
                                                         # needs cryptography, its signals tests
                                                         # blinker; cffi's pycparser is the
                                                         # pycparser project's own copy)
  # doit: no run-time dependencies (its optional cloudpickle is attrs' pin above)
  platformdirs==4.14.9                                   # yapf (its run-time dependency: the
                                                         # grammar pickle's cache folder; its
                                                         # tomli is for Python < 3.11 only)
  # petl: no run-time dependencies; its tests' optional formats (numpy, pandas, lxml, ...)
  # are left out: those tests skip
  # parso: no run-time dependencies
  flexcache==0.3 flexparser==0.4                         # pint (its run-time dependencies, with
                                                         # yapf's platformdirs and beautifulsoup4's
                                                         # typing-extensions; its test_babel runs
                                                         # on wtforms' Babel; numpy and its other
                                                         # extras are left out: those tests skip)
)

PROJECTS=$(python3 -c '
import json, sys
for p in json.load(open("benches/impact/split.json"))["projects"]:
    if p.get("language", "python") == "python":  # the JavaScript ones: js/fetch.sh
        print(p["name"], p["version"])
')

[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${TOOLS[@]}"

# Editable install (no dependencies: the projects here have none at run time but jinja2's
# MarkupSafe, transitions' six and fire's termcolor, pinned in TOOLS), before `git init`
# so that whatever the build backend writes into the tree is part of the initial commit. A
# VCS-derived version (hatch-vcs, setuptools-git-versioning) is pretended to be the release.
install_editable() {
  SETUPTOOLS_SCM_PRETEND_VERSION="$2" "$VENV/bin/python" -m pip install -q \
    --disable-pip-version-check --no-deps -e "$3"
}

while read -r name ver <&3; do
  dir="$SRC/$name"
  if [[ ! -d "$dir" ]]; then
    python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
      "$name==$ver" -d "$BASE/dl"
    # sdist file names normalise '-' to '_' (more_itertools-...), older ones keep the name; the
    # spelling not there is no error (an `ls` of both failed the script under pipefail).
    sdist=""
    for candidate in "$BASE/dl/$name-$ver.tar.gz" "$BASE/dl/${name//-/_}-$ver.tar.gz"; do
      if [ -f "$candidate" ]; then sdist=$candidate; break; fi
    done
    tmp=$(mktemp -d "$BASE/unpack.XXXXXX")
    tar xzf "$sdist" -C "$tmp" --no-same-owner
    mv "$tmp"/* "$dir"
    rmdir "$tmp"
    install_editable "$name" "$ver" "$dir"
    (
      cd "$dir"
      git init -q
      git add -A
      git -c user.email=e@x -c user.name=eval commit -qm init
      # after the commit, so that shipped files matching these (a tests/.coveragerc, a shipped
      # *.egg-info) stay committed
      printf '%s\n' '*.egg-info/' '__pycache__/' '.pytest_cache/' '.hypothesis/' '.coverage' \
        >> .git/info/exclude
    )
    echo "fetched $name $ver"
  elif [[ $'\n'"$("$VENV/bin/python" -m pip show "$name" 2>/dev/null)"$'\n' != \
          *$'\n'"Editable project location: $dir"$'\n'* ]]; then
    # not installed, or installed from PyPI as another package's dependency (trio pulls attrs)
    install_editable "$name" "$ver" "$dir"
  fi
done 3<<< "$PROJECTS"
echo "ready: $SRC"
