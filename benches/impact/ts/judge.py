#!/usr/bin/env python3
"""Builds the TypeScript part of the change-impact judged set from real per-test-file coverage.

Usage:
  python3 benches/impact/ts/judge.py [--project NAME]... [--reuse] [--seed S] [--per-project N]
  (run benches/impact/ts/fetch.sh first; standard library only, plus `node` on the PATH)

For each project in benches/impact/split.json with "language": "typescript" (its source tree in
target/impact-eval/src/<name>, a git repo, its pinned vitest and test dependencies in
node_modules):

1. Test files: the files vitest collects in the project's default run (`vitest list --filesOnly
   --json`, with the project's own vitest config: its include/exclude globs and its vitest
   "projects", e.g. yup's `async` and `sync`), which must all match the project's `tests` globs
   in split.json. Each test FILE is run on its own, in the project dir: `vitest run FILE` with
   @vitest/coverage-v8 (`--coverage.provider=v8 --coverage.reporter=json
   --coverage.include=<source dir>/** --coverage.reportOnFailure`; on vitest 3 also
   `--coverage.all=false --coverage.experimentalAstAwareRemapping`, which vitest 4 does by
   default), so every coverage result belongs to exactly one test file. coverage-v8 takes V8's
   precise coverage (call and block counts) of the code vite compiled from the TypeScript
   sources and maps it back through vite's source maps onto the original .ts files, as istanbul
   data (coverage-final.json: fnMap/f = functions and their call counts, statementMap/s =
   statements and their counts, lines 1-based, columns 0-based). When a file runs under several
   vitest projects (yup's async and sync), the counts are the sum over its runs. Test outcomes
   do not matter (a failing file's coverage counts). Load-only baseline: one more test file,
   written next to the first collected test file as `__impact_load_only__.test.ts` (excluded
   from git by fetch.sh, deleted after the run), that only imports every measured source file
   and has one empty test, run the same way (same config, setup files and vitest projects).
   A project whose vitest config would not collect that name there names the file in
   split.json's "load_only" (css-select: `__impact_load_only__.spec.ts`, its config collecting
   `test/*.ts` and `**/*.spec.ts`). A project's "vitest_args" in split.json are appended to
   every such run (true-myth: `--coverage.thresholds.*=0`, since its config's 100% coverage
   thresholds would fail every single-file run, the load-only one included, which must exit 0).

2. Functions: every measured source file (the .ts/.mts/.cts/.tsx files, not .d.ts, in the
   project's `source` dirs, minus its `omit` globs) is parsed with the TypeScript compiler's
   parser (functions.mjs, which documents the naming rules, those of benches/impact/js): every
   named function (declaration, function expression or arrow bound to a name, method,
   constructor, getter/setter, class field arrow), with name, qualified name, path, first and
   last line. Anonymous functions (callbacks) are part of the named function they are written
   in; module-level code belongs to no function. Bodiless signatures (overloads, `declare`,
   abstract) are not functions.

3. The coverage rule. Each parsed function is matched to the istanbul function entry of its
   file whose declaration starts between the function's head (its modifiers, method key or
   `function` keyword) and its body, and whose range ends on the function's last line (the
   earliest such entry). That entry's count is the number of times the function was called in
   the run (0 without one). A nested function has an entry of its own, so its calls never count
   as its parent's. A call runs the function's first own statement, so "called" is "executed at
   least one of its own statements". A test file COVERS a named function when the function's
   count in its run is higher than its count in the load-only baseline run: it was called
   beyond what merely loading the package's modules does (calls made at module load, e.g. to
   build a table or a default instance, are credited to no test file; a function that only runs
   at load is covered by no test file). covering_test_files = the covering test files (paths
   relative to the project root), sorted; covering_tests = the same list: a test file is the
   unit of this truth (one coverage result per file, not per test).

4. Samples up to N (60) of the covered functions per project, as benches/impact/judge.py does:
   the covered functions (with at least one probe candidate) sorted by (path, line, qualified
   name), random.Random("<seed>:<project>").sample, sorted again, then for each a probe line
   chosen by the same RNG among the candidates. A probe candidate is the first line of one of
   the function's own statements (statements of the function and of anonymous functions inside
   it, not of named functions or classes inside it; an arrow's expression body counts as a
   statement) that (a) a covering test file executed: an istanbul statement that starts on that
   line has a higher count in that file's run than in the baseline, and (b) functions.mjs marks
   probe_ok: the line lies within the function's lines, shares no line with another named
   function or class that does not enclose the function, and does not end inside a template
   literal chunk, a string continued on the next line or a block comment, so appending
   " // docdex-probe" is a comment-only edit. The sampled probe lines are checked: each edited
   file must parse (TypeScript's parser) to the same tokens as the original, comments aside,
   with no new syntax error, or judge.py stops.

Output: target/impact-eval/judged-ts.json, a list of
  {project, path, qualified_name, name, line, end_line, probe_line, covering_test_files,
   covering_tests}
(the format of judged.json) and target/impact-eval/judge-summary-ts.json (per project: suite
time, tests passed/failed/skipped, test files, functions defined/covered/sampled,
mean/median/max covering test files per sampled function, the functions covered by the most
test files, and a sanity count of parsed functions that no istanbul entry matched in a run that
loaded their file, which should be 0 or close to it). Coverage data (reduced to the measured
files) and logs: target/impact-eval/ts/coverage/<name>/. Deterministic for the same sources,
tool versions and seed (a test that depends on timing or on the machine could cover
differently in another run).
"""
import argparse
import fnmatch
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
BASE = os.path.join(ROOT, "target", "impact-eval")
TSBASE = os.path.join(BASE, "ts")
SEED = 20250601
PER_PROJECT = 60
SOURCE_EXT = (".ts", ".mts", ".cts", ".tsx")
LOAD_ONLY = "__impact_load_only__.test.ts"


def load_split(path):
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------- files

def walk_files(proj_dir):
    """Every file under the project (relative, '/'), node_modules and .git left out, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(proj_dir):
        dirnames[:] = sorted(d for d in dirnames if d not in ("node_modules", ".git"))
        for fn in filenames:
            out.append(os.path.relpath(os.path.join(dirpath, fn), proj_dir).replace(os.sep, "/"))
    return sorted(out)


def glob_match(rel, pattern):
    """Shell-like glob on '/'-separated paths: '*' stays within one directory, '**/' matches
    any number of directories (zero included)."""
    parts, pats = rel.split("/"), pattern.split("/")

    def m(i, j):
        if j == len(pats):
            return i == len(parts)
        if pats[j] == "**":
            return any(m(k, j + 1) for k in range(i, len(parts) + 1))
        return i < len(parts) and fnmatch.fnmatchcase(parts[i], pats[j]) and m(i + 1, j + 1)

    return m(0, 0)


def source_files(all_files, sources, omit):
    out = []
    for rel in all_files:
        if not rel.endswith(SOURCE_EXT) or rel.endswith(".d.ts"):
            continue
        if not any(rel == s or rel.startswith(s.rstrip("/") + "/") for s in sources):
            continue
        if any(glob_match(rel, g) for g in omit):
            continue
        out.append(rel)
    return out


# ---------------------------------------------------------------- running

def slug(rel):
    return rel.replace("/", "__")


def node_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("NODE_OPTIONS", "NODE_V8_COVERAGE", "VITEST", "TEST")}
    env["NO_COLOR"] = "1"
    env["FORCE_COLOR"] = "0"
    return env


def vitest_major(proj_dir):
    with open(os.path.join(proj_dir, "node_modules", "vitest", "package.json")) as f:
        return int(json.load(f)["version"].split(".")[0])


def vitest_bin(proj_dir):
    return os.path.join(proj_dir, "node_modules", "vitest", "vitest.mjs")


def collected_tests(proj_dir):
    out = subprocess.run(["node", vitest_bin(proj_dir), "list", "--filesOnly", "--json"],
                         cwd=proj_dir, env=node_env(), capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=300)
    if out.returncode != 0:
        sys.exit("%s: vitest list failed: %s" % (proj_dir, out.stderr[-2000:]))
    text = out.stdout
    data = json.loads(text[text.index("["):])
    real = os.path.realpath(proj_dir)
    rels = set()
    for item in data:
        f = os.path.realpath(item["file"])
        rels.add(os.path.relpath(f, real).replace(os.sep, "/"))
    return sorted(rels)


def run_vitest(proj_dir, test_rel, sources, cov_dir, key, timeout, extra=()):
    """Runs one test file under coverage (extra: split.json's "vitest_args"); returns (rc,
    seconds, coverage-final.json data or None, test counts)."""
    raw = os.path.join(cov_dir, key + ".raw")
    if os.path.isdir(raw):
        shutil.rmtree(raw)
    os.makedirs(raw)
    report = os.path.join(raw, "report.json")
    cmd = ["node", vitest_bin(proj_dir), "run", test_rel,
           "--coverage.enabled=true", "--coverage.provider=v8", "--coverage.reporter=json",
           "--coverage.reportsDirectory=" + os.path.join(raw, "cov"),
           "--coverage.reportOnFailure=true", "--coverage.clean=true",
           "--reporter=default", "--reporter=json", "--outputFile.json=" + report]
    for s in sources:
        cmd.append("--coverage.include=" + (s.rstrip("/") + "/**" if not s.endswith(SOURCE_EXT)
                                            else s))
    if vitest_major(proj_dir) < 4:
        cmd += ["--coverage.all=false", "--coverage.experimentalAstAwareRemapping=true"]
    cmd += list(extra)
    log = os.path.join(cov_dir, key + ".log")
    t0 = time.monotonic()
    with open(log, "w") as lf:
        lf.write("$ " + " ".join(cmd) + "\n")
        lf.flush()
        try:
            proc = subprocess.run(cmd, cwd=proj_dir, env=node_env(), stdout=lf,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    secs = time.monotonic() - t0
    data = None
    final = os.path.join(raw, "cov", "coverage-final.json")
    if os.path.exists(final):
        with open(final) as f:
            data = json.load(f)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    if os.path.exists(report):
        with open(report) as f:
            r = json.load(f)
        counts = {"passed": r.get("numPassedTests", 0), "failed": r.get("numFailedTests", 0),
                  "skipped": r.get("numPendingTests", 0) + r.get("numTodoTests", 0)}
    shutil.rmtree(raw)
    return rc, secs, data, counts


def reduce_coverage(data, proj_dir, files):
    """{rel: {"fn": [[decl line, decl col, end line, count], ...],
              "st": [[start line, start col, end line, end col, count], ...]}} for the measured
    files (absent: the run did not load the file)."""
    real = {os.path.realpath(os.path.join(proj_dir, rel)): rel for rel in files}
    out = {}
    for path, fc in (data or {}).items():
        rel = real.get(os.path.realpath(path))
        if rel is None:
            continue
        fns = []
        for k, fm in fc["fnMap"].items():
            d = fm["decl"]["start"]
            fns.append([d["line"], d.get("column"), fm["loc"]["end"]["line"], fc["f"][k]])
        sts = []
        for k, sm in fc["statementMap"].items():
            sts.append([sm["start"]["line"], sm["start"].get("column"), sm["end"]["line"],
                        sm["end"].get("column"), fc["s"][k]])
        out[rel] = {"fn": fns, "st": sts}
    return out


# ---------------------------------------------------------------- coverage counts

def pos_ge(a, b):
    """(line, col) a >= b; a column of None (unmapped) compares on the line alone."""
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] is None or b[1] is None or a[1] >= b[1]


def pos_le(a, b):
    return pos_ge(b, a)


def match_functions(fi, entries):
    """{function index: count} for one file in one run (see the docstring, 3), and the indices
    no entry matched."""
    out, unmatched = {}, []
    for fn in fi["functions"]:
        cands = [e for e in entries
                 if e[2] == fn["end_line"] and pos_ge((e[0], e[1]), fn["head"])
                 and pos_le((e[0], e[1]), fn["body"])]
        if cands:
            best = min(cands, key=lambda e: (e[0], -1 if e[1] is None else e[1]))
            out[fn["index"]] = best[3]
        else:
            unmatched.append(fn["index"])
    return out, unmatched


def run_counts(info, cov):
    """For one run: ({(file, fn index): calls}, {(file, line): {statement key: count}},
    unmatched named functions in loaded files)."""
    fcount, scount, unmatched = {}, {}, []
    for rel, fc in cov.items():
        fi = info[rel]
        m, um = match_functions(fi, fc["fn"])
        for fn in fi["functions"]:
            fcount[(rel, fn["index"])] = m.get(fn["index"], 0)
        unmatched += [(rel, i) for i in um if fi["functions"][i]["named"]]
        for st in fc["st"]:
            scount.setdefault((rel, st[0]), {})[tuple(st[:4])] = st[4]
    return fcount, scount, unmatched


# ---------------------------------------------------------------- main

def judge_project(p, args):
    name = p["name"]
    proj_dir = os.path.join(args.src, name)
    if not os.path.isdir(os.path.join(proj_dir, "node_modules", "vitest")):
        sys.exit("%s (or its node_modules) missing: run benches/impact/ts/fetch.sh" % proj_dir)
    stray = os.path.join(proj_dir, LOAD_ONLY)
    load_name = p.get("load_only", LOAD_ONLY)
    all_files = [f for f in walk_files(proj_dir) if not f.endswith(load_name)]
    files = source_files(all_files, p["source"], p.get("omit", []))
    tests = collected_tests(proj_dir)
    tests = [t for t in tests if not t.endswith(load_name)]
    outside = [t for t in tests if not any(glob_match(t, g) for g in p["tests"])]
    if outside:
        sys.exit("%s: vitest collects test files outside split.json's tests globs: %s"
                 % (name, outside))
    if not files or not tests:
        sys.exit("%s: no source files or no test files" % name)
    out = subprocess.run(
        ["node", os.path.join(HERE, "functions.mjs"), args.tools, proj_dir] + files,
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s: functions.mjs failed: %s" % (name, out.stderr))
    info = json.loads(out.stdout)

    cov_dir = os.path.join(args.coverage, name)
    os.makedirs(cov_dir, exist_ok=True)

    def run(key, test_rel):
        data_path = os.path.join(cov_dir, key + ".json")
        meta_path = os.path.join(cov_dir, key + ".meta.json")
        if args.reuse and os.path.exists(data_path) and os.path.exists(meta_path):
            with open(data_path) as f, open(meta_path) as g:
                return json.load(f), json.load(g)
        rc, secs, data, counts = run_vitest(proj_dir, test_rel, p["source"], cov_dir, key,
                                            args.timeout, p.get("vitest_args", []))
        cov = reduce_coverage(data, proj_dir, files)
        meta = dict(counts, rc=rc, seconds=round(secs, 2), coverage=data is not None)
        with open(data_path, "w") as f:
            json.dump(cov, f)
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        return cov, meta

    # the load-only baseline, next to the first collected test file
    load_dir = os.path.dirname(tests[0])
    load_rel = (load_dir + "/" if load_dir else "") + load_name
    load_abs = os.path.join(proj_dir, load_rel)
    if not (args.reuse and os.path.exists(os.path.join(cov_dir, "_load-only.json"))):
        with open(load_abs, "w") as f:
            f.write("// generated by benches/impact/ts/judge.py: loads every measured file and "
                    "does nothing else\nimport { test } from 'vitest';\n")
            for rel in files:
                spec = os.path.relpath(os.path.join(proj_dir, rel),
                                       os.path.join(proj_dir, load_dir)).replace(os.sep, "/")
                if not spec.startswith("."):
                    spec = "./" + spec
                f.write("import %s;\n" % json.dumps(spec))
            f.write("test('load only', () => {});\n")
    print("%s: load-only baseline and %d test files under coverage%s ..."
          % (name, len(tests), " (reused where present)" if args.reuse else ""), flush=True)
    try:
        base_cov, base_meta = run("_load-only", load_rel)
    finally:
        if os.path.exists(load_abs):
            os.remove(load_abs)
    if not base_meta["coverage"] or base_meta["rc"] != 0:
        sys.exit("%s: the load-only run failed (rc %s), see %s"
                 % (name, base_meta["rc"], os.path.join(cov_dir, "_load-only.log")))
    not_loaded = sorted(set(files) - set(base_cov))
    bf, bs, _ = run_counts(info, base_cov)

    fn_files = {}     # (rel, fn index) -> set of test files
    line_files = {}   # (rel, line) -> set of test files that ran a statement there beyond base
    metas, unmatched = {}, set()
    for t in tests:
        cov, meta = run(slug(t), t)
        metas[t] = meta
        fc, sc, um = run_counts(info, cov)
        unmatched.update(um)
        for k, c in fc.items():
            if c > bf.get(k, 0):
                fn_files.setdefault(k, set()).add(t)
        for k, sts in sc.items():
            base = bs.get(k, {})
            if any(c > base.get(sk, 0) for sk, c in sts.items()):
                line_files.setdefault(k, set()).add(t)

    funcs = []
    for rel in files:
        fi = info[rel]
        by_owner = {}
        for st in fi["statements"]:
            by_owner.setdefault(st["owner"], []).append(st)
        for fn in fi["functions"]:
            if not fn["named"]:
                continue
            covering = fn_files.get((rel, fn["index"]), set())
            cands = sorted({st["line"] for st in by_owner.get(fn["index"], [])
                            if st["probe_ok"] and line_files.get((rel, st["line"]), set())
                            & covering})
            funcs.append(dict(fn, path=rel, tests=covering, probe_candidates=cands))

    covered = [f for f in funcs if f["tests"] and f["probe_candidates"]]
    covered.sort(key=lambda f: (f["path"], f["line"], f["qualified_name"]))
    rng = random.Random("%d:%s" % (args.seed, name))
    sample = covered if len(covered) <= args.per_project else rng.sample(covered, args.per_project)
    sample.sort(key=lambda f: (f["path"], f["line"], f["qualified_name"]))
    entries = []
    for f in sample:
        entries.append({
            "project": name, "path": f["path"], "qualified_name": f["qualified_name"],
            "name": f["name"], "line": f["line"], "end_line": f["end_line"],
            "probe_line": rng.choice(f["probe_candidates"]),
            "covering_test_files": sorted(f["tests"]), "covering_tests": sorted(f["tests"]),
        })

    check = subprocess.run(
        ["node", os.path.join(HERE, "functions.mjs"), "--check-probes", args.tools, proj_dir],
        input=json.dumps([{"path": e["path"], "line": e["probe_line"]} for e in entries]),
        capture_output=True, text=True)
    if check.returncode != 0 or json.loads(check.stdout):
        sys.exit("%s: probe lines that are not comment-only edits: %s %s"
                 % (name, check.stdout, check.stderr))

    test_files_cov = sorted(set().union(*[f["tests"] for f in funcs]) if funcs else set())
    n_files = [len(e["covering_test_files"]) for e in entries]
    widest = sorted(({"function": "%s:%s" % (f["path"], f["qualified_name"]),
                      "test_files": len(f["tests"])} for f in funcs if f["tests"]),
                    key=lambda d: (-d["test_files"], d["function"]))[:5]
    secs = sum(m["seconds"] for m in metas.values())
    passed = sum(m["passed"] for m in metas.values())
    failed = sum(m["failed"] for m in metas.values())
    skipped = sum(m["skipped"] for m in metas.values())
    bad_rc = sorted(t for t, m in metas.items() if m["rc"] != 0)
    no_cov = sorted(t for t, m in metas.items() if not m["coverage"])
    row = {
        "project": name, "version": p["version"], "commit": p.get("commit"),
        "split": p["split"], "language": "typescript",
        "vitest": vitest_major(proj_dir),
        "suite": "%d passed, %d failed, %d skipped, %d test files%s%s" % (
            passed, failed, skipped, len(tests),
            "" if not bad_rc else " (%d exited non-zero: %s)" % (len(bad_rc), ", ".join(bad_rc)),
            "" if not no_cov else " (no coverage: %s)" % ", ".join(no_cov)),
        "suite_seconds": round(secs, 1), "tests_passed": passed, "tests_failed": failed,
        "tests_skipped": skipped, "test_files": len(tests),
        "test_files_with_coverage": len(test_files_cov), "source_files": len(files),
        "source_files_not_loaded_by_baseline": not_loaded,
        "functions": len(funcs), "functions_covered": len([f for f in funcs if f["tests"]]),
        "covered_without_probe_line": len([f for f in funcs
                                           if f["tests"] and not f["probe_candidates"]]),
        "sampled": len(entries),
        "mean_covering_test_files": round(statistics.mean(n_files), 2) if n_files else 0,
        "median_covering_test_files": statistics.median(n_files) if n_files else 0,
        "max_covering_test_files": max(n_files) if n_files else 0,
        "sampled_with_one_test_file": sum(1 for n in n_files if n == 1),
        "functions_called_at_load": sum(1 for (rel, i), c in bf.items()
                                        if c > 0 and info[rel]["functions"][i]["named"]),
        "unmatched_functions": len(unmatched),
        "unmatched_examples": ["%s:%s" % (rel, info[rel]["functions"][i]["qualified_name"])
                               for rel, i in sorted(unmatched)[:10]],
        "load_only_seconds": base_meta["seconds"],
        "widest_functions": widest,
    }
    return entries, row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", action="append", help="only these projects (repeatable)")
    ap.add_argument("--src", default=os.path.join(BASE, "src"))
    ap.add_argument("--tools", default=os.path.join(TSBASE, "tools"),
                    help="the dir whose node_modules has the pinned typescript (fetch.sh)")
    ap.add_argument("--coverage", default=os.path.join(TSBASE, "coverage"))
    ap.add_argument("--split-file", default=os.path.join(HERE, "..", "split.json"))
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--per-project", type=int, default=PER_PROJECT)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per test file")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the coverage data of the last run instead of running the tests")
    ap.add_argument("--out", default=os.path.join(BASE, "judged-ts.json"))
    args = ap.parse_args()

    split = load_split(args.split_file)
    projects = [p for p in split["projects"] if p.get("language") == "typescript"
                and (not args.project or p["name"] in args.project)]
    if not projects:
        sys.exit("no typescript project selected in %s" % args.split_file)
    all_entries, rows = [], []
    for p in projects:
        entries, row = judge_project(p, args)
        all_entries.extend(entries)
        rows.append(row)
        print("%-10s %-6s suite %6ss  %s" % (row["project"], row["split"], row["suite_seconds"],
                                            row["suite"]))
        print("           functions %d, covered %d, sampled %d, test files %d, mean covering "
              "test files %.2f (median %s, max %d), one covering file %d, unmatched %d"
              % (row["functions"], row["functions_covered"], row["sampled"],
                 row["test_files_with_coverage"], row["mean_covering_test_files"],
                 row["median_covering_test_files"], row["max_covering_test_files"],
                 row["sampled_with_one_test_file"], row["unmatched_functions"]), flush=True)
    summary_path = os.path.join(os.path.dirname(args.out), "judge-summary-ts.json")
    if args.project and os.path.exists(args.out):  # merge: replace only the judged projects
        with open(args.out) as f:
            old = [e for e in json.load(f) if e["project"] not in set(args.project)]
        all_entries = old + all_entries
        if os.path.exists(summary_path):
            with open(summary_path) as f:
                rows = [r for r in json.load(f) if r["project"] not in set(args.project)] + rows
    order = {p["name"]: i for i, p in enumerate(split["projects"])}
    all_entries.sort(key=lambda e: (order.get(e["project"], 99), e["path"], e["line"]))
    rows.sort(key=lambda r: order.get(r["project"], 99))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(all_entries, f, indent=1)
        f.write("\n")
    with open(summary_path, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    print("wrote %d functions to %s" % (len(all_entries), os.path.relpath(args.out, ROOT)))


if __name__ == "__main__":
    main()
