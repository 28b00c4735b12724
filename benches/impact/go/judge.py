#!/usr/bin/env python3
"""Builds the Go part of the change-impact judged set from real per-test coverage.

Usage:
  python3 benches/impact/go/judge.py [--project NAME]... [--reuse] [--seed S] [--per-project N]
                                     [--timeout S]
  (run benches/impact/go/fetch.sh first; standard library only, plus the `go` command (1.19
  here) and go/funcs.go, a go/ast + go/scanner helper that judge.py builds with that go)

For each project in benches/impact/split.json with "language": "go" (a Debian golang-*-dev
package's tree, in target/impact-eval/src/<name>, a git repo; its dependencies replaced by
folders through target/impact-eval/go/mod/<name>/go.mod, see fetch.sh). Every go command runs
with GOPROXY=off, GOFLAGS="-mod=mod -modfile=<that go.mod>", GOWORK=off.

1. Packages: `go list -json ./...` in the project. Measured packages: every package of the
   module except those under split.json's "omit" folders (test helpers that only tests import,
   e.g. goldmark's `testutil`). -coverpkg is the comma-joined list of the measured packages, so
   a test's coverage spans every measured package of the module, not only its own.

2. Tests: every package with test files is built once as a test binary, as `go test` builds it:
   `go test -c -vet=off -covermode=atomic -coverpkg=<measured> -o BIN PKG` (the binary goes to
   target/impact-eval/go/bin/<name>/, outside the project). The tests are the names
   `BIN -test.list .` prints that are `func TestXxx(t *testing.T)` declared in the package's
   `_test.go` files (Examples, Benchmarks and Fuzz targets are not run). Each test runs on its
   own in the package's folder, as `go test -run '^TestName$' -count=1` runs it:
   `BIN -test.run ^TestName$ -test.count=1 -test.coverprofile=P` (its subtests included). The
   test's outcome does not matter (a failing test's coverage counts); one that runs over
   --timeout seconds is killed and its profile dropped. A baseline run of each binary,
   `-test.run ^$` (no test: package initialisation and TestMain only), gives what runs at load.

3. Functions: function declarations with a body (funcs.go: go/parser) in the non-generated
   (`// Code generated ... DO NOT EDIT.`) GoFiles of the measured packages, the files built on
   this platform (`_test.go` files are never measured). A function literal is part of the
   function it is written in. qualified_name is `Recv.Name` for a method (the receiver's base
   type, pointer and type parameters stripped), else `Name`.

4. The coverage rule. A test COVERS a function when a cover block (the profile's
   `file:l.c,l.c statements count` lines, atomic counts) that starts inside the function's body
   (between its braces) ran more often in the test's run than in its binary's baseline run: code
   run at package load (package-level var initialisers, init functions, TestMain) is credited to
   no test unless the test runs it again. The covering test FILE is the `_test.go` file that
   declares the Test function. covering_test_files = those files, sorted; covering_tests = the
   tests as `FILE::TestName`.

5. Samples up to N (60) of the covered functions per project, as rust/judge.py does: the covered
   functions with at least one probe candidate, sorted by (path, line, qualified name),
   random.Random("<seed>:<project>").sample, sorted again, then for each a probe line chosen by
   the same RNG among the candidates. A probe candidate is a line strictly between the lines of
   the body's braces on which a statement of the function (its func literals' included) starts
   whose position lies in a cover block of the function that some covering test ran more often
   than the baseline, that does not end inside a raw string or a block comment, and on which
   appending " // docdex-probe" is a comment-only edit (funcs.go -check: the edited file scans to
   the same tokens, comments aside, and parses).

Output: target/impact-eval/judged-go.json, a list of
  {project, path, qualified_name, name, line, end_line, probe_line, covering_test_files,
   covering_tests}
(the format of judged.json; line/end_line are the declaration's, doc comment excluded) and
target/impact-eval/judge-summary-go.json (per project: the suite's time, tests run/passed/
failed/timed out, test files, functions measured/covered/sampled, functions run at load,
mean/median/max covering test files per sampled function). Profiles and logs:
target/impact-eval/go/coverage/<name>/.
"""
import argparse
import bisect
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
BASE = os.path.join(ROOT, "target", "impact-eval")
GOBASE = os.path.join(BASE, "go")
SEED = 20250601
PER_PROJECT = 60


def load_split(path=os.path.join(HERE, "..", "split.json")):
    with open(path) as f:
        return json.load(f)


def go_env(name):
    modfile = os.path.join(GOBASE, "mod", name, "go.mod")
    if not os.path.exists(modfile):
        sys.exit(f"judge.py: {modfile} missing: run benches/impact/go/fetch.sh")
    env = dict(os.environ, GOPROXY="off", GOSUMDB="off", GOWORK="off", GO111MODULE="on",
               GOFLAGS=f"-mod=mod -modfile={modfile}")
    env.pop("GOTOOLCHAIN", None)
    return env


def build_helper():
    out = os.path.join(GOBASE, "bin", "funcs")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    env = dict(os.environ, GOPROXY="off", GOFLAGS="", GO111MODULE="on", GOWORK="off")
    subprocess.run(["go", "build", "-o", out, os.path.join(HERE, "funcs.go")], env=env,
                   check=True, cwd=GOBASE)
    return out


def read_sources(helper, paths):
    out = subprocess.run([helper, *paths], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def check_probes(helper, reqs):
    """[(abs path, line)] -> [bool]: is appending ' // docdex-probe' a comment-only edit."""
    if not reqs:
        return []
    out = subprocess.run([helper, "-check"], input=json.dumps(reqs), capture_output=True,
                         text=True, check=True)
    return [r["ok"] for r in json.loads(out.stdout)]


def go_list(proj_dir, env):
    out = subprocess.run(["go", "list", "-json", "./..."], cwd=proj_dir, env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"judge.py: go list failed in {proj_dir}:\n{out.stderr}")
    dec, text, pkgs, i = json.JSONDecoder(), out.stdout, [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = dec.raw_decode(text, i)
        pkgs.append(obj)
    return pkgs


def rel(path, proj_dir):
    return os.path.relpath(os.path.realpath(path), proj_dir).replace(os.sep, "/")


def omitted(relpath, omit):
    return any(relpath == o.rstrip("/") or relpath.startswith(o.rstrip("/") + "/") for o in omit)


# ---------------------------------------------------------------- coverage profiles

PROFILE_LINE = re.compile(r"^(.+):(\d+)\.(\d+),(\d+)\.(\d+) (\d+) (\d+)$")


def read_profile(path):
    """{(import path of file, sl, sc, el, ec): count} (duplicate blocks summed)."""
    blocks = {}
    with open(path) as f:
        for line in f:
            m = PROFILE_LINE.match(line.strip())
            if not m:
                continue
            key = (m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)),
                   int(m.group(5)))
            blocks[key] = blocks.get(key, 0) + int(m.group(7))
    return blocks


# ---------------------------------------------------------------- one project

def judge_project(proj, args, helper):
    name = proj["name"]
    proj_dir = os.path.realpath(os.path.join(BASE, "src", name))
    if not os.path.isdir(proj_dir):
        sys.exit(f"judge.py: {proj_dir} missing: run benches/impact/go/fetch.sh")
    env = go_env(name)
    cov_dir = os.path.join(GOBASE, "coverage", name)
    bin_dir = os.path.join(GOBASE, "bin", name)
    os.makedirs(cov_dir, exist_ok=True)
    os.makedirs(bin_dir, exist_ok=True)
    state_file = os.path.join(cov_dir, "runs.json")
    omit = proj.get("omit", [])

    pkgs = go_list(proj_dir, env)
    module = pkgs[0]["Module"]["Path"]
    measured = [p for p in pkgs if p.get("Module", {}).get("Path") == module
                and not omitted(rel(p["Dir"], proj_dir), omit) and p.get("GoFiles")]
    coverpkg = ",".join(p["ImportPath"] for p in measured)
    dir_of = {p["ImportPath"]: p["Dir"] for p in pkgs}

    # test functions by package: name -> declaring _test.go file
    test_pkgs = [p for p in pkgs if p.get("TestGoFiles") or p.get("XTestGoFiles")]
    tests_of = {}
    for p in test_pkgs:
        files = [os.path.join(p["Dir"], f) for f in p.get("TestGoFiles", []) +
                 p.get("XTestGoFiles", [])]
        decl = {}
        for info in read_sources(helper, files):
            for t in info["tests"]:
                decl[t["name"]] = rel(info["file"], proj_dir)
        tests_of[p["ImportPath"]] = decl

    t0 = time.time()
    if args.reuse and os.path.exists(state_file):
        with open(state_file) as f:
            state = json.load(f)
        runs, baselines = state["runs"], state["baselines"]
        suite_secs = state["suite_seconds"]
    else:
        for old in os.listdir(cov_dir):
            if old.endswith((".out", ".log")):
                os.remove(os.path.join(cov_dir, old))
        runs, baselines = [], {}
        for k, p in enumerate(test_pkgs):
            ip = p["ImportPath"]
            exe = os.path.join(bin_dir, f"{k}.test")
            log = os.path.join(cov_dir, f"{k}.build.log")
            out = subprocess.run(["go", "test", "-c", "-vet=off", "-covermode=atomic",
                                  "-coverpkg=" + coverpkg, "-o", exe, ip], cwd=proj_dir,
                                 env=env, capture_output=True, text=True)
            with open(log, "w") as f:
                f.write(out.stdout + out.stderr)
            if out.returncode != 0:
                sys.exit(f"judge.py: the tests of {ip} do not build (log: {log})")
            if not os.path.exists(exe):
                continue  # a package whose test files hold no test
            base_prof = os.path.join(cov_dir, f"{k}.base.out")
            subprocess.run([exe, "-test.run", "^$", "-test.count=1",
                            "-test.coverprofile=" + base_prof], cwd=p["Dir"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=args.timeout)
            baselines[ip] = base_prof
            listed = subprocess.run([exe, "-test.list", "."], cwd=p["Dir"],
                                    capture_output=True, text=True, errors="replace",
                                    timeout=args.timeout)
            for i, test in enumerate(line.strip() for line in listed.stdout.splitlines()):
                if test not in tests_of[ip]:
                    continue  # Example, Benchmark, Fuzz, or the `ok` line
                prof = os.path.join(cov_dir, f"{k}.{i}.out")
                tlog = os.path.join(cov_dir, f"{k}.{i}.log")
                try:
                    with open(tlog, "w") as f:
                        r = subprocess.run([exe, "-test.run", f"^{test}$", "-test.count=1",
                                            "-test.coverprofile=" + prof, "-test.v"],
                                           cwd=p["Dir"], stdout=f, stderr=subprocess.STDOUT,
                                           timeout=args.timeout)
                    outcome = "passed" if r.returncode == 0 else "failed"
                except subprocess.TimeoutExpired:
                    outcome = "timed_out"
                    if os.path.exists(prof):
                        os.remove(prof)
                runs.append({"package": ip, "test": test, "file": tests_of[ip][test],
                             "profile": prof, "outcome": outcome})
        suite_secs = round(time.time() - t0, 1)
        with open(state_file, "w") as f:
            json.dump({"runs": runs, "baselines": baselines, "suite_seconds": suite_secs}, f,
                      indent=1)

    # measured functions
    go_files = []
    for p in measured:
        go_files += [os.path.join(p["Dir"], f) for f in p["GoFiles"]]
    infos = {rel(i["file"], proj_dir): i for i in read_sources(helper, go_files)}
    for path, info in infos.items():
        if info.get("error"):
            sys.exit(f"judge.py: {path}: {info['error']}")
    functions = {}  # (path, line) -> function
    by_file = {}  # path -> [(lbrace, rbrace, key)] sorted
    for path, info in sorted(infos.items()):
        if info["generated"]:
            continue
        for fn in info["functions"]:
            key = (path, fn["line"])
            qual = f"{fn['recv']}.{fn['name']}" if fn["recv"] else fn["name"]
            functions[key] = dict(fn, path=path, qualified_name=qual)
            by_file.setdefault(path, []).append((tuple(fn["lbrace"]), tuple(fn["rbrace"]), key))
    for spans in by_file.values():
        spans.sort()

    def file_of(ip_file):
        ip, base = ip_file.rsplit("/", 1)
        d = dir_of.get(ip)
        return rel(os.path.join(d, base), proj_dir) if d else None

    starts = {path: [s[0] for s in spans] for path, spans in by_file.items()}

    def owner(path, sl, sc):
        """The function whose body (braces included) holds position (sl, sc), if any."""
        spans = by_file.get(path)
        if not spans:
            return None
        i = bisect.bisect_right(starts[path], (sl, sc)) - 1
        if i >= 0 and (sl, sc) <= spans[i][1]:
            return spans[i][2]
        return None

    base_counts = {ip: read_profile(pr) for ip, pr in baselines.items() if os.path.exists(pr)}
    block_owner = {}
    covers = {}  # function key -> {test file: [test ids]}
    ran = {}  # function key -> {(path, sl, sc, el, ec)} blocks a covering test ran beyond load
    counted = {"passed": 0, "failed": 0, "timed_out": 0}
    at_load = set()
    for ip, bc in base_counts.items():
        for (f, sl, sc, el, ec), n in bc.items():
            if n > 0:
                path = file_of(f)
                key = owner(path, sl, sc) if path else None
                if key:
                    at_load.add(key)
    for run in runs:
        counted[run["outcome"]] += 1
        if not os.path.exists(run["profile"]):
            continue
        base = base_counts.get(run["package"], {})
        test_id = f"{run['file']}::{run['test']}"
        for blk, n in read_profile(run["profile"]).items():
            if n <= base.get(blk, 0):
                continue
            if blk not in block_owner:
                path = file_of(blk[0])
                block_owner[blk] = (path, owner(path, blk[1], blk[2]) if path else None)
            path, key = block_owner[blk]
            if key is None:
                continue
            tests = covers.setdefault(key, {}).setdefault(run["file"], [])
            if test_id not in tests:
                tests.append(test_id)
            ran.setdefault(key, set()).add((path,) + blk[1:])

    # probe candidates
    cand = {}
    reqs = []
    for key in sorted(covers):
        fn = functions[key]
        info = infos[fn["path"]]
        unsafe = set(info["unsafe_lines"])
        lb, rb = fn["lbrace"][0], fn["rbrace"][0]
        blocks = ran[key]
        lines = set()
        for sline, scol in info["stmts"]:
            if not lb < sline < rb or sline in unsafe:
                continue
            if any((b[1], b[2]) <= (sline, scol) < (b[3], b[4]) or
                   (b[1] == sline and (b[1], b[2]) >= (sline, scol)) for b in blocks):
                lines.add(sline)
        cand[key] = sorted(lines)
        reqs += [(os.path.join(proj_dir, fn["path"]), line) for line in cand[key]]
    ok = dict(zip(reqs, check_probes(helper, reqs)))
    sampled_from = []
    for key in sorted(covers, key=lambda k: (k[0], k[1], functions[k]["qualified_name"])):
        fn = functions[key]
        c = [line for line in cand[key] if ok[(os.path.join(proj_dir, fn["path"]), line)]]
        if not c:
            continue
        sampled_from.append({
            "project": name, "path": fn["path"], "qualified_name": fn["qualified_name"],
            "name": fn["name"], "line": fn["line"], "end_line": fn["end_line"],
            "probe_candidates": c, "tests": covers[key]})
    rng = random.Random(f"{args.seed}:{name}")
    picked = rng.sample(sampled_from, min(args.per_project, len(sampled_from)))
    picked.sort(key=lambda e: (e["path"], e["line"], e["qualified_name"]))
    entries = []
    for f in picked:
        entries.append({
            "project": f["project"], "path": f["path"], "qualified_name": f["qualified_name"],
            "name": f["name"], "line": f["line"], "end_line": f["end_line"],
            "probe_line": rng.choice(f["probe_candidates"]),
            "covering_test_files": sorted(f["tests"]),
            "covering_tests": sorted(t for ts in f["tests"].values() for t in ts)})
    n_files = [len(e["covering_test_files"]) for e in entries]
    all_test_files = {t for c in covers.values() for t in c}
    summary = {
        "project": name, "version": proj["version"], "debian": proj["debian"],
        "split": proj["split"], "suite_seconds": suite_secs, "tests": counted,
        "packages": len(measured), "test_files": len(all_test_files),
        "functions": len(functions), "covered": len(covers),
        "with_probe": len(sampled_from), "sampled": len(entries),
        "run_at_load": len(at_load),
        "run_at_load_only": len([k for k in at_load if k not in covers]),
        "mean_covering_test_files": round(statistics.mean(n_files), 2) if n_files else 0,
        "median_covering_test_files": statistics.median(n_files) if n_files else 0,
        "max_covering_test_files": max(n_files) if n_files else 0,
    }
    return entries, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--project", action="append", default=[])
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the profiles of the last run instead of running the tests")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--per-project", type=int, default=PER_PROJECT)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", default=os.path.join(BASE, "judged-go.json"))
    args = ap.parse_args()
    if not shutil.which("go"):
        sys.exit("judge.py: go not found")
    projects = [p for p in load_split()["projects"] if p.get("language") == "go"
                and (not args.project or p["name"] in args.project)]
    if not projects:
        sys.exit("judge.py: no such Go project in split.json")
    helper = build_helper()
    all_entries, rows = [], []
    summary_file = os.path.join(BASE, "judge-summary-go.json")
    if args.project and os.path.exists(args.out):  # merge: replace only the judged projects
        with open(args.out) as f:
            all_entries = [e for e in json.load(f) if e["project"] not in args.project]
        if os.path.exists(summary_file):
            with open(summary_file) as f:
                rows = [r for r in json.load(f) if r["project"] not in args.project]
    for proj in projects:
        entries, summary = judge_project(proj, args, helper)
        all_entries += entries
        rows.append(summary)
        print(json.dumps(summary), flush=True)
    order = {p["name"]: i for i, p in enumerate(load_split()["projects"])}
    all_entries.sort(key=lambda e: order.get(e["project"], 1 << 30))
    rows.sort(key=lambda r: order.get(r["project"], 1 << 30))
    with open(args.out, "w") as f:
        json.dump(all_entries, f, indent=1)
    with open(summary_file, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
