#!/usr/bin/env python3
"""Builds the change-impact judged set from real per-test coverage.

Usage:
  target/impact-eval/venv/bin/python benches/impact/judge.py [--project NAME]... [--reuse]
                                                             [--seed S] [--per-project N]
  (run fetch.sh first; the venv's python is needed only for `coverage`, the rest is stdlib)

For each Python project in benches/impact/split.json (no "language" field, or "python";
js/judge.py judges the JavaScript ones), its unpacked sdist in target/impact-eval/src/<name>, a
git repo:

1. Runs the project's pytest suite once, in the project dir, under pytest-cov with
   `--cov-context=test`: every line executed while a test runs is recorded with the context
   "<pytest node id>|setup", "|run" or "|teardown" (fixtures count for their test). Measured
   files: the project's `source` dirs (split.json; a source may also be one module file, such as
   bottle's `bottle.py`, then all sources go to coverage's `include`) minus its `omit` globs
   (test dirs inside the package). Lines executed outside any test (collection, i.e. import
   time) have the empty context, which is ignored. Test outcomes do not matter (a failing
   test's lines count). The suite's own pytest options (pyproject/setup.cfg addopts, markers)
   apply unchanged, plus `-p no:cacheprovider`; the data file goes to
   target/impact-eval/coverage/<name>.coverage.

2. Parses every measured source file with `ast` and lists every function and method
   (`def`/`async def`, nested ones included): name, qualified name (enclosing classes and
   functions joined with '.', e.g. `Class.method`, `outer.inner`), path relative to the
   project root, first line (the `def` line, decorators not included) and last line. A
   function's OWN lines are the lines from its first body statement to its last line, minus
   the full span (decorators included) of every function or class defined inside it; the `def`
   line and a multi-line signature are not own lines (they execute when the enclosing scope
   runs, e.g. at import).

3. A test COVERS a function when one of its contexts executed at least one of the function's
   own lines. covering_tests = those node ids (parametrised ids kept apart), covering_test_files
   = the files of those node ids (the part before the first '::'), both sorted. A node id whose
   file is a measured source file (a doctest) would be dropped; none of the pinned suites
   collects doctests.

4. Samples up to N (60) of the covered functions per project: the covered functions sorted by
   (path, line), then random.Random("<seed>:<project>").sample, then sorted again. For each a
   probe line is chosen (same RNG) among its own lines that a test context executed and that
   start a statement (ast), do not end with a backslash, are not a decorator, and do not end
   inside a multi-line string (tokenize), so that appending ` # docdex-probe` is a
   comment-only edit.

Output: target/impact-eval/judged.json, a list of
  {project, path, qualified_name, name, line, end_line, probe_line, covering_test_files,
   covering_tests}
and target/impact-eval/judge-summary.json with per-project figures (suite runtime, tests with
coverage, functions defined/covered/sampled, mean covering test files per sampled function,
the functions covered by the most test files). Deterministic for the same sources, tool
versions and seed (the suite itself may differ run to run only where a test is
nondeterministic).
"""
import argparse
import ast
import fnmatch
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
import tokenize

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BASE = os.path.join(ROOT, "target", "impact-eval")
SEED = 20250601
PER_PROJECT = 60


def load_split(path=os.path.join(HERE, "split.json")):
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------- source files and functions

def source_files(proj_dir, sources, omit):
    """Measured .py files (relative paths with '/'), sorted."""
    out = []
    for src in sources:
        if os.path.isfile(os.path.join(proj_dir, src)):  # a single-module project (bottle.py)
            if src.endswith(".py") and not any(fnmatch.fnmatch(src, g) for g in omit):
                out.append(src)
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(proj_dir, src)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for fn in filenames:
                if not fn.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, fn), proj_dir).replace(os.sep, "/")
                if any(fnmatch.fnmatch(rel, g) for g in omit):
                    continue
                out.append(rel)
    return sorted(out)


def _span_start(node):
    decos = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decos])


def functions_in(source, relpath):
    """Every function/method in a module: dicts with name, qualified_name, path, line, end_line,
    own (set of own lines), starts (own lines that start a statement)."""
    tree = ast.parse(source)
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qn = prefix + child.name
                first_body = child.body[0].lineno
                own = set(range(first_body, child.end_lineno + 1))
                starts = set()
                nested = []
                _collect(child.body, starts, nested)
                for a, b in nested:
                    own.difference_update(range(a, b + 1))
                starts &= own
                out.append({"name": child.name, "qualified_name": qn, "path": relpath,
                            "line": child.lineno, "end_line": child.end_lineno,
                            "own": own, "starts": starts})
                visit(child, qn + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _collect(stmts, starts, nested):
    """Statement start lines in a body, not descending into nested defs (their spans go to
    nested)."""
    for st in stmts:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            nested.append((_span_start(st), st.end_lineno))
            continue
        starts.add(st.lineno)
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(st, field, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                _collect(sub, starts, nested)
        for h in getattr(st, "handlers", []) or []:
            starts.add(h.lineno)
            _collect(h.body, starts, nested)
        for c in getattr(st, "cases", []) or []:
            _collect(c.body, starts, nested)
        # lambdas and comprehensions stay part of this function


# f-strings are one STRING token before Python 3.12, FSTRING_START/MIDDLE/END from 3.12 on
STRING_TOKENS = {tokenize.STRING} | {getattr(tokenize, n) for n in ("FSTRING_MIDDLE",
                                                                     "TSTRING_MIDDLE")
                                      if hasattr(tokenize, n)}


def unsafe_lines(source):
    """Lines whose end lies inside a multi-line string token (a comment appended there would
    change the string)."""
    bad = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in STRING_TOKENS and tok.end[0] > tok.start[0]:
            bad.update(range(tok.start[0], tok.end[0]))
    return bad


# ---------------------------------------------------------------- coverage run

def run_suite(name, proj_dir, sources, omit, python):
    cov_dir = os.path.join(BASE, "coverage")
    os.makedirs(cov_dir, exist_ok=True)
    data_file = os.path.join(cov_dir, name + ".coverage")
    rc = os.path.join(cov_dir, name + ".coveragerc")
    with open(rc, "w") as f:
        f.write("[run]\n")
        f.write("data_file = %s\n" % data_file)
        paths = [os.path.join(proj_dir, s) for s in sources]
        if all(os.path.isdir(p) for p in paths):
            f.write("source =\n" + "".join("    %s\n" % p for p in paths))
        else:  # a source that is one file (bottle.py): `source` takes only dirs and module
            # names, so the files and dirs are measured through `include` instead
            f.write("include =\n" + "".join(
                "    %s\n" % (os.path.join(p, "*") if os.path.isdir(p) else p) for p in paths))
        if omit:
            f.write("omit =\n" + "".join("    %s\n" % os.path.join(proj_dir, g) for g in omit))
        f.write("branch = False\n")
    for stale in (data_file,):
        if os.path.exists(stale):
            os.remove(stale)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", COVERAGE_FILE=data_file)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--cov",
           "--cov-config=" + rc, "--cov-context=test", "--cov-report="]
    log = os.path.join(cov_dir, name + ".log")
    t0 = time.monotonic()
    with open(log, "w") as lf:
        proc = subprocess.run(cmd, cwd=proj_dir, env=env, stdout=lf, stderr=subprocess.STDOUT)
    secs = time.monotonic() - t0
    with open(log) as lf:
        tail = [l.rstrip() for l in lf.readlines()[-3:]]
    summary = next((l for l in reversed(tail) if " in " in l and ("passed" in l or "failed" in l)),
                   tail[-1] if tail else "")
    if proc.returncode not in (0, 1):  # 1 = some tests failed: their coverage still counts
        sys.exit("%s: pytest exited %d, see %s" % (name, proc.returncode, log))
    return data_file, secs, summary.strip("= ")


def read_contexts(data_file, proj_dir, files):
    """{relpath: {line: set(node ids)}} from the coverage data, empty context dropped."""
    import coverage  # the venv's

    data = coverage.CoverageData(basename=data_file)
    data.read()
    measured = {os.path.realpath(f): f for f in data.measured_files()}
    out = {}
    for rel in files:
        absf = os.path.realpath(os.path.join(proj_dir, rel))
        key = measured.get(absf)
        if key is None:
            out[rel] = {}
            continue
        by_line = {}
        for line, ctxs in (data.contexts_by_lineno(key) or {}).items():
            ids = set()
            for c in ctxs:
                if not c:
                    continue
                node = c.rsplit("|", 1)[0] if c.rsplit("|", 1)[-1] in (
                    "setup", "run", "teardown") else c
                ids.add(node)
            if ids:
                by_line[line] = ids
        out[rel] = by_line
    return out


# ---------------------------------------------------------------- main

def judge_project(p, args):
    name = p["name"]
    proj_dir = os.path.join(args.src, name)
    if not os.path.isdir(proj_dir):
        sys.exit("%s missing: run benches/impact/fetch.sh" % proj_dir)
    omit = p.get("omit", [])
    files = source_files(proj_dir, p["source"], omit)
    data_file = os.path.join(BASE, "coverage", name + ".coverage")
    if args.reuse and os.path.exists(data_file):
        secs, summary = None, "(reused)"
    else:
        print("%s: running the suite under coverage ..." % name, flush=True)
        data_file, secs, summary = run_suite(name, proj_dir, p["source"], omit, args.python)
    ctx = read_contexts(data_file, proj_dir, files)
    src_set = set(files)

    funcs = []
    all_tests = set()
    dropped_doctests = set()
    for rel in files:
        with open(os.path.join(proj_dir, rel), encoding="utf-8") as f:
            source = f.read()
        bad = unsafe_lines(source)
        lines = source.splitlines()
        by_line = ctx.get(rel, {})
        for fn in functions_in(source, rel):
            tests = set()
            probe_candidates = []
            for ln in sorted(fn["own"]):
                ids = by_line.get(ln)
                if not ids:
                    continue
                keep = set()
                for t in ids:
                    if t.split("::", 1)[0] in src_set:
                        dropped_doctests.add(t)
                    else:
                        keep.add(t)
                if not keep:
                    continue
                tests |= keep
                text = lines[ln - 1].rstrip() if ln <= len(lines) else ""
                if (ln in fn["starts"] and ln not in bad and not text.endswith("\\")
                        and not text.lstrip().startswith("@")):
                    probe_candidates.append(ln)
            all_tests |= tests
            fn["tests"] = tests
            fn["probe_candidates"] = probe_candidates
            funcs.append(fn)

    covered = [f for f in funcs if f["tests"] and f["probe_candidates"]]
    covered.sort(key=lambda f: (f["path"], f["line"], f["qualified_name"]))
    rng = random.Random("%d:%s" % (args.seed, name))
    sample = covered if len(covered) <= args.per_project else rng.sample(covered, args.per_project)
    sample.sort(key=lambda f: (f["path"], f["line"], f["qualified_name"]))
    entries = []
    for f in sample:
        files_ = sorted({t.split("::", 1)[0] for t in f["tests"]})
        entries.append({
            "project": name, "path": f["path"], "qualified_name": f["qualified_name"],
            "name": f["name"], "line": f["line"], "end_line": f["end_line"],
            "probe_line": rng.choice(f["probe_candidates"]),
            "covering_test_files": files_, "covering_tests": sorted(f["tests"]),
        })

    test_files = sorted({t.split("::", 1)[0] for t in all_tests})
    n_files = [len(e["covering_test_files"]) for e in entries]
    widest = sorted(
        ({"function": "%s:%s" % (f["path"], f["qualified_name"]),
          "test_files": len({t.split("::", 1)[0] for t in f["tests"]})} for f in funcs
         if f["tests"]), key=lambda d: (-d["test_files"], d["function"]))[:5]
    summary_row = {
        "project": name, "version": p["version"], "split": p["split"],
        "suite": summary, "suite_seconds": None if secs is None else round(secs, 1),
        "source_files": len(files), "test_files_with_coverage": len(test_files),
        "tests_with_coverage": len(all_tests), "functions": len(funcs),
        "functions_covered": len([f for f in funcs if f["tests"]]),
        "sampled": len(entries),
        "mean_covering_test_files": round(statistics.mean(n_files), 2) if n_files else 0,
        "median_covering_test_files": statistics.median(n_files) if n_files else 0,
        "max_covering_test_files": max(n_files) if n_files else 0,
        "mean_covering_tests": round(statistics.mean(len(e["covering_tests"]) for e in entries),
                                     1) if entries else 0,
        "sampled_with_one_test_file": sum(1 for n in n_files if n == 1),
        "doctest_ids_dropped": len(dropped_doctests),
        "widest_functions": widest,
    }
    return entries, summary_row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", action="append", help="only these projects (repeatable)")
    ap.add_argument("--src", default=os.path.join(BASE, "src"))
    ap.add_argument("--python", default=os.path.join(BASE, "venv", "bin", "python"),
                    help="the venv python that runs the suites")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--per-project", type=int, default=PER_PROJECT)
    ap.add_argument("--reuse", action="store_true",
                    help="reuse an existing coverage data file instead of running the suite")
    ap.add_argument("--out", default=os.path.join(BASE, "judged.json"))
    args = ap.parse_args()

    split = load_split()
    projects = [p for p in split["projects"] if p.get("language", "python") == "python"
                and (not args.project or p["name"] in args.project)]
    all_entries, rows = [], []
    for p in projects:
        entries, row = judge_project(p, args)
        all_entries.extend(entries)
        rows.append(row)
        print("%-12s %-5s suite %6ss  %s" % (row["project"], row["split"], row["suite_seconds"],
                                             row["suite"]))
        print("             functions %d, covered %d, sampled %d, test files %d, mean covering "
              "test files %.2f (median %s, max %d), mean covering tests %.1f"
              % (row["functions"], row["functions_covered"], row["sampled"],
                 row["test_files_with_coverage"], row["mean_covering_test_files"],
                 row["median_covering_test_files"], row["max_covering_test_files"],
                 row["mean_covering_tests"]), flush=True)
    if args.project and os.path.exists(args.out):  # merge: replace only the judged projects
        with open(args.out) as f:
            old = [e for e in json.load(f) if e["project"] not in set(args.project)]
        all_entries = old + all_entries
        sp = os.path.join(os.path.dirname(args.out), "judge-summary.json")
        if os.path.exists(sp):
            with open(sp) as f:
                rows = [r for r in json.load(f) if r["project"] not in set(args.project)] + rows
    order = {p["name"]: i for i, p in enumerate(split["projects"])}
    all_entries.sort(key=lambda e: (order.get(e["project"], 99), e["path"], e["line"]))
    rows.sort(key=lambda r: order.get(r["project"], 99))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(all_entries, f, indent=1)
        f.write("\n")
    with open(os.path.join(os.path.dirname(args.out), "judge-summary.json"), "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    print("wrote %d functions to %s" % (len(all_entries), os.path.relpath(args.out, ROOT)))


if __name__ == "__main__":
    main()
