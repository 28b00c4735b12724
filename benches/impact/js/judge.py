#!/usr/bin/env python3
"""Builds the JavaScript part of the change-impact judged set from real per-test-file coverage.

Usage:
  python3 benches/impact/js/judge.py [--project NAME]... [--reuse] [--seed S] [--per-project N]
  (run benches/impact/js/fetch.sh first; standard library only, plus `node` on the PATH)

For each project in benches/impact/split.json with "language": "javascript" (its unpacked npm
tarball in target/impact-eval/src/<name>, a git repo, its test dependencies in node_modules):

1. Test files: the files matching the project's `tests` globs (split.json, taken from the
   package's own test script, e.g. tape 'test/*.js'). Each test FILE is run on its own, in the
   project dir, with the suite's runner (`runner`: "tape" = `node node_modules/tape/bin/tape
   FILE`; "node" = `node FILE`, for tap test files, which tap's own runner also spawns one `node
   FILE` each) under Node's built-in V8 precise coverage (NODE_V8_COVERAGE=<dir>: call counts
   and block counts, one JSON file per Node process, child processes included), so every
   coverage result belongs to exactly one test file. Test outcomes do not matter (a failing
   file's coverage counts). Load-only baseline: one more process, run the same way, that only
   require()s (or import()s, for ES modules) every measured source file, in path order, and does
   nothing else (a file starting with a shebang is a program, which loading would run: it is
   left out, so whatever it calls counts for the test files that run it).

2. Functions: every measured source file (the .js/.mjs/.cjs files, and extension-less files with
   a node shebang such as bin/tape, in the project's `source` files and dirs, minus its `omit`
   globs) is parsed with acorn (functions.mjs, which documents the naming rules): every named
   function, i.e. a function declaration, a function expression or arrow with a name of its own
   or bound to a name (variable, assignment target, object literal key, class method, getter,
   setter, class field), with name, qualified name, path, first and last line. Anonymous
   functions (callbacks passed as arguments and the like) are part of the named function they
   are written in; anonymous code at module level belongs to no function.

3. The coverage rule. Each acorn function is matched to the V8 function entry of the same script
   whose function range ends where the function ends and starts between the function's head (its
   method key, `static`, `get`, `async`, or the function itself) and its body (the earliest such
   start). That entry's function range count is the number of times the function was called in
   that process (0 without an entry: V8 lists no function nested in one that was never
   compiled); a nested function has an entry of its own, so its calls never count as its
   parent's. A call runs the function's first own statement, so for every function with a
   statement "called" is "executed at least one of its own statements". A test file COVERS a
   named function when, in at least one Node process of its run, the function's count is higher
   than its count in the load-only baseline process: it was called beyond what merely loading
   the package's modules does (calls made at module load, e.g. to build a table, are not
   credited to tests; a function that only runs at load is covered by no test file). Code at
   module level is no function's. covering_test_files = the covering test files (paths relative
   to the project root), sorted; covering_tests = the same list: a test file is the unit of this
   truth (one coverage result per file, not per test).

4. Samples up to N (60) of the covered functions per project, as benches/impact/judge.py does:
   the covered functions (with at least one probe candidate) sorted by (path, line, qualified
   name), random.Random("<seed>:<project>").sample, sorted again, then for each a probe line
   chosen by the same RNG among the candidates. A probe candidate is the first line of one of
   the function's own statements (statements of the function and of anonymous functions inside
   it, not of named functions or classes inside it; an arrow's expression body counts as a
   statement) that (a) a covering test file executed: in one of its processes the statement's
   count (the count of the innermost block range of its function's V8 entry that contains the
   statement's start, else the entry's function range count; 0 without an entry) is higher than
   in the baseline, and (b) functions.mjs marks probe_ok: the line lies within the function's
   lines, shares no line with another named function or class that does not enclose the
   function, and does not end inside a template literal chunk, a string continued on the next
   line or a block comment, so appending " // docdex-probe" is a comment-only edit. The sampled
   probe lines are checked: each edited file must parse (acorn) to the same tokens as the
   original, comments aside, or judge.py stops.

Output: target/impact-eval/judged-js.json, a list of
  {project, path, qualified_name, name, line, end_line, probe_line, covering_test_files,
   covering_tests}
(the format of judged.json, which this leaves alone) and
target/impact-eval/judge-summary-js.json (per project: suite time, top-level TAP results
passed/failed, test files, functions defined/covered/sampled, mean/median/max covering test
files per sampled function, the functions covered by the most test files, and a sanity count of
functions that no V8 entry matched although the function or module around them ran, which
should be 0). Coverage data (reduced to the measured files) and logs:
target/impact-eval/js/coverage/<name>/. Deterministic for the same sources, tool versions and
seed (a test that depends on timing or on the machine could cover differently in another run).
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
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
BASE = os.path.join(ROOT, "target", "impact-eval")
JSBASE = os.path.join(BASE, "js")
SEED = 20250601
PER_PROJECT = 60
SOURCE_EXT = (".js", ".mjs", ".cjs")
# the command that runs one test file, after `node`: "tape" = the package's tape bin, "node" =
# the file itself (a tap test file: tap's own runner spawns `node FILE` per file, too)
RUNNERS = {
    "tape": ["node_modules/tape/bin/tape"],
    "node": [],
}


def load_split(path=os.path.join(HERE, "..", "split.json")):
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


def has_shebang(path):
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


def is_node_script(path):
    """An extension-less file whose first line is a node shebang (a package's bin/<name>)."""
    if "." in os.path.basename(path):
        return False
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"node" in first


def source_files(proj_dir, all_files, sources, omit):
    out = []
    for rel in all_files:
        if not (rel.endswith(SOURCE_EXT) or is_node_script(os.path.join(proj_dir, rel))):
            continue
        if not any(rel == s or rel.startswith(s.rstrip("/") + "/") for s in sources):
            continue
        if any(glob_match(rel, g) for g in omit):
            continue
        out.append(rel)
    return out


def test_files(all_files, globs):
    return [rel for rel in all_files if any(glob_match(rel, g) for g in globs)]


# ---------------------------------------------------------------- running

def slug(rel):
    return rel.replace("/", "__")


def run_node(cmd, proj_dir, cov_raw, log, timeout):
    if os.path.isdir(cov_raw):
        shutil.rmtree(cov_raw)
    os.makedirs(cov_raw)
    env = {k: v for k, v in os.environ.items() if k not in ("NODE_OPTIONS", "NODE_V8_COVERAGE")}
    env["NODE_V8_COVERAGE"] = cov_raw
    t0 = time.monotonic()
    with open(log, "w") as lf:
        try:
            proc = subprocess.run(cmd, cwd=proj_dir, env=env, stdout=lf, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    return rc, time.monotonic() - t0


def reduce_coverage(cov_raw, proj_dir, files, out_path):
    """Keeps, of every process's V8 coverage, the scripts that are measured files: a list (one
    item per process) of {relpath: [[function name, [[start, end, count], ...]], ...]}."""
    real = {os.path.realpath(os.path.join(proj_dir, rel)): rel for rel in files}
    procs = []
    for fn in sorted(os.listdir(cov_raw)):
        if not fn.endswith(".json"):
            continue
        with open(os.path.join(cov_raw, fn)) as f:
            data = json.load(f)
        one = {}
        for script in data.get("result", []):
            url = script.get("url", "")
            if not url.startswith("file://"):
                continue
            path = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
            rel = real.get(os.path.realpath(path))
            if rel is None:
                continue
            one[rel] = [[f.get("functionName", ""),
                         [[r["startOffset"], r["endOffset"], r["count"]] for r in f["ranges"]]]
                        for f in script["functions"]]
        procs.append(one)
    with open(out_path, "w") as f:
        json.dump(procs, f)
    shutil.rmtree(cov_raw)
    return procs


def tap_counts(log):
    """Top-level TAP results of a run's output: (ok lines, not ok lines) at column 0. For a tape
    file each is one assertion, for a tap file one top-level test (its assertions are
    indented)."""
    passed = failed = 0
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("ok "):
                passed += 1
            elif line.startswith("not ok "):
                failed += 1
    return passed, failed


# ---------------------------------------------------------------- coverage counts

def match_entries(file_info, entries):
    """{function index: ranges} for one script in one process (see the docstring, 3)."""
    by_end = {}
    for _name, ranges in entries:
        if ranges:
            by_end.setdefault(ranges[0][1], []).append(ranges)
    out = {}
    for fn in file_info["functions"]:
        cands = [r for r in by_end.get(fn["end"], [])
                 if fn["head_start"] <= r[0][0] <= fn["body_start"]]
        if cands:
            out[fn["index"]] = min(cands, key=lambda r: r[0][0])
    return out


def offset_count(ranges, offset):
    """Count of the innermost range containing offset (ranges[0] is the function range)."""
    if not ranges:
        return 0
    best = ranges[0]
    for r in ranges[1:]:
        if r[0] <= offset < r[1] and r[1] - r[0] <= best[1] - best[0]:
            best = r
    return best[2]


def process_counts(info, proc):
    """For one process: ({(file, fn index): calls}, {(file, stmt index): count}, unmatched),
    only for the files the process loaded. unmatched counts the functions without a V8 entry
    although the function or module around them ran (V8 lists every function it compiled, so
    this should be 0; a function inside one that never ran may have no entry)."""
    fcount, scount, unmatched = {}, {}, 0
    for rel, entries in proc.items():
        fi = info[rel]
        matched = match_entries(fi, entries)
        fns = fi["functions"]
        for fn in fns:
            r = matched.get(fn["index"])
            fcount[(rel, fn["index"])] = r[0][2] if r else 0
            if r is None:
                outer = [g for g in fns if g["start"] < fn["start"] and fn["end"] <= g["end"]]
                if not outer or fcount.get((rel, max(outer, key=lambda g: g["start"])["index"]), 0):
                    unmatched += 1
        for k, st in enumerate(fi["statements"]):
            scount[(rel, k)] = offset_count(matched.get(st["fn"]), st["offset"])
    return fcount, scount, unmatched


# ---------------------------------------------------------------- main

def judge_project(p, args):
    name = p["name"]
    proj_dir = os.path.join(args.src, name)
    if not os.path.isdir(os.path.join(proj_dir, "node_modules")):
        sys.exit("%s (or its node_modules) missing: run benches/impact/js/fetch.sh" % proj_dir)
    all_files = walk_files(proj_dir)
    files = source_files(proj_dir, all_files, p["source"], p.get("omit", []))
    tests = test_files(all_files, p["tests"])
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
    runner = RUNNERS[p.get("runner", "tape")]

    def run(key, cmd):
        data = os.path.join(cov_dir, key + ".json")
        log = os.path.join(cov_dir, key + ".log")
        meta_path = os.path.join(cov_dir, key + ".meta.json")
        if args.reuse and os.path.exists(data) and os.path.exists(meta_path):
            with open(data) as f, open(meta_path) as g:
                return json.load(f), json.load(g)
        rc, secs = run_node(cmd, proj_dir, os.path.join(cov_dir, key + ".raw"), log, args.timeout)
        procs = reduce_coverage(os.path.join(cov_dir, key + ".raw"), proj_dir, files, data)
        passed, failed = tap_counts(log)
        meta = {"rc": rc, "seconds": round(secs, 2), "passed": passed, "failed": failed}
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        return procs, meta

    loader = os.path.join(cov_dir, "load-only.cjs")
    with open(loader, "w") as f:
        f.write("// generated by judge.py: loads every measured file and does nothing else\n")
        f.write("const { pathToFileURL } = require('url');\n(async () => {\n")
        for rel in files:
            if has_shebang(os.path.join(proj_dir, rel)):
                continue  # a program (bin/tape): loading it runs it
            absf = os.path.join(os.path.realpath(proj_dir), rel)
            esm = info[rel]["source_type"] == "module"
            f.write("  try { %s; } catch (e) { console.error(%s, String(e)); }\n"
                    % ("await import(pathToFileURL(%s).href)" % json.dumps(absf) if esm
                       else "require(%s)" % json.dumps(absf), json.dumps(rel)))
        f.write("})();\n")
    print("%s: load-only baseline and %d test files under coverage%s ..."
          % (name, len(tests), " (reused where present)" if args.reuse else ""), flush=True)
    base_procs, base_meta = run("_load-only", ["node", loader])
    if len(base_procs) != 1:
        sys.exit("%s: the load-only run left %d coverage files" % (name, len(base_procs)))
    bf, bs, _ = process_counts(info, base_procs[0])

    fn_files = {}    # (rel, fn index) -> set of test files
    stmt_files = {}  # (rel, stmt index) -> set of test files
    metas, unmatched = {}, 0
    for t in tests:
        procs, meta = run(slug(t), ["node"] + runner + [t])
        metas[t] = meta
        for proc in procs:
            fc, sc, um = process_counts(info, proc)
            unmatched += um
            for k, c in fc.items():
                if c > bf.get(k, 0):
                    fn_files.setdefault(k, set()).add(t)
            for k, c in sc.items():
                if c > bs.get(k, 0):
                    stmt_files.setdefault(k, set()).add(t)

    funcs = []
    for rel in files:
        fi = info[rel]
        by_owner = {}
        for k, st in enumerate(fi["statements"]):
            by_owner.setdefault(st["owner"], []).append((k, st))
        for fn in fi["functions"]:
            if not fn["named"]:
                continue
            covering = fn_files.get((rel, fn["index"]), set())
            cands = sorted({st["line"] for k, st in by_owner.get(fn["index"], [])
                            if st["probe_ok"] and stmt_files.get((rel, k), set()) & covering})
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
    bad_rc = sorted(t for t, m in metas.items() if m["rc"] != 0)
    row = {
        "project": name, "version": p["version"], "split": p["split"], "language": "javascript",
        "suite": "%d passed, %d failed (TAP results), %d test files%s" % (
            passed, failed, len(tests),
            "" if not bad_rc else " (%d exited non-zero: %s)" % (len(bad_rc), ", ".join(bad_rc))),
        "suite_seconds": round(secs, 1), "tap_passed": passed,
        "tap_failed": failed, "test_files": len(tests),
        "test_files_with_coverage": len(test_files_cov), "source_files": len(files),
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
        "unmatched_function_entries": unmatched,
        "load_only_rc": base_meta["rc"],
        "widest_functions": widest,
    }
    return entries, row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", action="append", help="only these projects (repeatable)")
    ap.add_argument("--src", default=os.path.join(BASE, "src"))
    ap.add_argument("--tools", default=os.path.join(JSBASE, "tools"),
                    help="the dir whose node_modules has the pinned acorn (fetch.sh)")
    ap.add_argument("--coverage", default=os.path.join(JSBASE, "coverage"))
    ap.add_argument("--split-file", default=os.path.join(HERE, "..", "split.json"))
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--per-project", type=int, default=PER_PROJECT)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per test file")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the coverage data of the last run instead of running the tests")
    ap.add_argument("--out", default=os.path.join(BASE, "judged-js.json"))
    args = ap.parse_args()

    split = load_split(args.split_file)
    projects = [p for p in split["projects"] if p.get("language") == "javascript"
                and (not args.project or p["name"] in args.project)]
    if not projects:
        sys.exit("no javascript project selected in %s" % args.split_file)
    all_entries, rows = [], []
    for p in projects:
        entries, row = judge_project(p, args)
        all_entries.extend(entries)
        rows.append(row)
        print("%-14s %-5s suite %6ss  %s" % (row["project"], row["split"], row["suite_seconds"],
                                             row["suite"]))
        print("               functions %d, covered %d, sampled %d, test files %d, mean covering "
              "test files %.2f (median %s, max %d), unmatched V8 entries %d"
              % (row["functions"], row["functions_covered"], row["sampled"],
                 row["test_files_with_coverage"], row["mean_covering_test_files"],
                 row["median_covering_test_files"], row["max_covering_test_files"],
                 row["unmatched_function_entries"]), flush=True)
    summary_path = os.path.join(os.path.dirname(args.out), "judge-summary-js.json")
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
