#!/usr/bin/env python3
"""Builds the Rust part of the change-impact judged set from real per-test coverage.

Usage:
  python3 benches/impact/rust/judge.py [--project NAME]... [--reuse] [--seed S] [--per-project N]
  (run benches/impact/rust/fetch.sh first; standard library only, plus cargo and LLVM's
  llvm-profdata, llvm-cov and llvm-cxxfilt of a version that reads rustc's profiles: LLVM 19
  reads those of rustc 1.95's LLVM 22; --llvm-suffix, default "-19", names them)

For each project in benches/impact/split.json with "language": "rust" (the crate as published,
in target/impact-eval/src/<name>, a git repo):

1. Tests: `cargo test --no-run` with `-C instrument-coverage` builds every test target (the
   library's unit tests, each `tests/*.rs`), into target/impact-eval/rust/target/<name>/. Each
   test (`--list`) is run on its own (`--exact NAME --test-threads=1`, in the crate's folder, as
   cargo runs it), with its own raw profile. Doc tests are not run (cargo builds them apart,
   without instrumentation): the truth is `#[test]` functions. A test's outcome does not matter
   (a failing test's coverage counts); one that runs over --timeout seconds is killed and its
   profile dropped.

2. Functions: the coverage mapping of each test binary (`llvm-cov export` over the merged
   profile of its tests) lists every function the binary holds with its mangled name, file and
   regions; demangled (llvm-cxxfilt), a closure (`{closure#N}`) or a shim is part of the named
   function it is written in, never a function of its own. A function is identified by its file
   and the line its first region starts on (a generic function's instances are one function).
   Measured: functions in the project's `source` folders, outside test code (a `#[cfg(test)]`
   module, a file that only such a module includes, a `#[test]` function).

3. The coverage rule. A test COVERS a function when its profile counts the function's entry
   (the function's execution count, counter 0) above zero in the test's run. The covering test
   FILE is the file that holds the test's function (found by its demangled path in the mapping);
   for a unit test that is the source file with the test module. covering_test_files = those
   files, sorted; covering_tests = the tests as `FILE::path::to::test`.

4. Samples up to N (60) of the covered functions per project, as benches/impact/judge.py does:
   the covered functions with at least one probe candidate, sorted by (path, line, qualified
   name), random.Random("<seed>:<project>").sample, sorted again, then for each a probe line
   chosen by the same RNG among the candidates. A probe candidate is a line after the
   function's first line where one of the function's own code regions starts, a region some
   covering test executed, that lies in no closure or nested function of its own, and on which
   appending " // docdex-probe" is a comment-only edit: outside the function's nested
   items, no unbalanced `"` or `'"'`, no raw string, no `/*` left open, not ending in `\\`.

Output: target/impact-eval/judged-rust.json, a list of
  {project, path, qualified_name, name, line, end_line, probe_line, covering_test_files,
   covering_tests}
(the format of judged.json) and target/impact-eval/judge-summary-rust.json (per project: the
suite's time, tests run/passed/failed/timed out, test files, functions measured/covered/
sampled, mean/median/max covering test files per sampled function). Profiles and logs:
target/impact-eval/rust/coverage/<name>/.
"""
import argparse
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
RSBASE = os.path.join(BASE, "rust")
SEED = 20250601
PER_PROJECT = 60


def load_split(path=os.path.join(HERE, "..", "split.json")):
    with open(path) as f:
        return json.load(f)


def tool(name, suffix):
    found = shutil.which(name + suffix) or shutil.which(name)
    if not found:
        sys.exit(f"judge.py: {name}{suffix} not found (Debian: apt-get install llvm-19)")
    return found


# ---------------------------------------------------------------- building and running

def build_tests(proj_dir, target_dir, log, stray):
    """Builds every test target with coverage; returns [(target name, kind, executable)].
    `stray`: where the profiles of instrumented programs the build runs go (build scripts)."""
    env = dict(os.environ, RUSTFLAGS="-C instrument-coverage", CARGO_TARGET_DIR=target_dir,
               CARGO_INCREMENTAL="0", LLVM_PROFILE_FILE=stray)
    out = subprocess.run(["cargo", "test", "--no-run", "--message-format=json"], cwd=proj_dir,
                         env=env, capture_output=True, text=True)
    log.write(out.stderr)
    if out.returncode != 0:
        sys.exit(f"judge.py: the tests of {proj_dir} do not build (log: {log.name})")
    exes = []
    for line in out.stdout.splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") == "compiler-artifact" and m.get("executable") and \
                m.get("profile", {}).get("test"):
            exes.append((m["target"]["name"], m["target"]["kind"][0], m["executable"]))
    return exes


def list_tests(exe, proj_dir, stray):
    out = subprocess.run([exe, "--list", "--format", "terse"], cwd=proj_dir,
                         env=dict(os.environ, LLVM_PROFILE_FILE=stray),
                         capture_output=True, text=True, check=True)
    return [line[:-len(": test")] for line in out.stdout.splitlines() if line.endswith(": test")]


def run_test(exe, name, proj_dir, profile, timeout):
    env = dict(os.environ, LLVM_PROFILE_FILE=profile, CARGO_MANIFEST_DIR=proj_dir,
               RUST_BACKTRACE="0")
    try:
        out = subprocess.run([exe, "--exact", name, "--test-threads=1", "-q"], cwd=proj_dir,
                             env=env, capture_output=True, text=True, timeout=timeout)
        return "passed" if out.returncode == 0 else "failed"
    except subprocess.TimeoutExpired:
        if os.path.exists(profile):
            os.remove(profile)
        return "timed_out"


def function_counts(profdata_tool, profile):
    """{mangled name: entry count} of one raw profile."""
    out = subprocess.run([profdata_tool, "show", "--all-functions", "--counts", profile],
                         capture_output=True, text=True, check=True)
    counts, name = {}, None
    for line in out.stdout.splitlines():
        if line.startswith("  ") and line.strip().endswith(":") and not line.startswith("    "):
            name = line.strip()[:-1]
        elif name and line.strip().startswith("Function count:"):
            counts[plain_name(name)] = int(line.split(":")[1])
            name = None
    return counts


def plain_name(name):
    """A profile name without the file prefix a local symbol carries (`src/x.rs;_RNv…`)."""
    for sep in (";", ":"):
        if sep in name and not name.startswith("_R"):
            name = name.rsplit(sep, 1)[1]
    return name


def demangle(cxxfilt, names):
    out = subprocess.run([cxxfilt], input="\n".join(names), capture_output=True, text=True,
                         check=True)
    return dict(zip(names, out.stdout.splitlines()))


def strip_hashes(path):
    """`semver[1a2b]::parse::<T>` -> `semver::parse`: the crate's hash and generic args out."""
    path = re.sub(r"\[[0-9a-f]+\]", "", path)
    depth, out = 0, []
    for ch in path:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    # a trailing turbofish (`semver::parse::<T>`) leaves `::` at the end: no empty last name
    return "".join(out).replace("::::", "::").removesuffix("::")


# ---------------------------------------------------------------- source reading

def test_spans(text):
    """Line spans (1-based, inclusive) of `#[cfg(test)]` items and `#[test]` functions, and the
    names of modules declared `#[cfg(test)] mod x;` (their files are test code)."""
    lines = text.split("\n")
    spans, outlined = [], []
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("#[cfg(test)]") or s == "#[test]" or s.startswith("#[test]"):
            j = i
            # the item the attribute is on: the next line that is not an attribute or comment
            while j + 1 < len(lines) and (lines[j].strip().startswith("#[") or
                                          lines[j].strip().startswith("//") or not lines[j].strip()):
                if "{" in lines[j] or (lines[j].strip().endswith(";") and not
                                       lines[j].strip().startswith("#[")):
                    break
                j += 1
            m = re.match(r"\s*(pub(\(\w+\))?\s+)?mod\s+(\w+)\s*;", lines[j])
            if m:
                outlined.append(m.group(3))
                i = j + 1
                continue
            end = brace_end(lines, j)
            spans.append((i + 1, end + 1))
            i = end + 1
            continue
        i += 1
    return spans, outlined


def brace_end(lines, start):
    """The index of the line where the item starting at `start` closes its first brace (a naive
    count, strings and comments aside, which is enough for the attribute's item)."""
    depth, opened = 0, False
    for k in range(start, len(lines)):
        code = strip_literals(lines[k])
        for ch in code:
            if ch == "{":
                depth += 1
                opened = True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return k
        if not opened and code.rstrip().endswith(";"):
            return k
    return len(lines) - 1


def strip_literals(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def probe_ok(line):
    """Appending a line comment to `line` leaves the code as it was."""
    if line.rstrip().endswith("\\") or re.search(r'\br#*"', line) or "/*" in line or "*/" in line:
        return False
    code = re.sub(r"'(\\.|[^'\\])'", "''", line)  # '"' is a char, not a string's start
    quotes = len(re.findall(r'(?<!\\)"', code))
    return quotes % 2 == 0


# ---------------------------------------------------------------- one project

def judge_project(proj, args, tools):
    name = proj["name"]
    proj_dir = os.path.realpath(os.path.join(BASE, "src", name))
    cov_dir = os.path.join(RSBASE, "coverage", name)
    target_dir = os.path.join(RSBASE, "target", name)
    os.makedirs(cov_dir, exist_ok=True)
    state_file = os.path.join(cov_dir, "runs.json")
    # profiles of instrumented runs that are no test's (build scripts, `--list`): kept out of
    # the project's folder, where they would show in `git status`
    stray = os.path.join(RSBASE, "stray", "%p.profraw")
    t0 = time.time()
    with open(os.path.join(cov_dir, "build.log"), "w") as log:
        exes = build_tests(proj_dir, target_dir, log, stray)
    if args.reuse and os.path.exists(state_file):
        with open(state_file) as f:
            runs = json.load(f)
    else:
        for old in os.listdir(cov_dir):
            if old.endswith((".profraw", ".profdata")):
                os.remove(os.path.join(cov_dir, old))
        runs = []
        for tname, kind, exe in exes:
            for i, test in enumerate(list_tests(exe, proj_dir, stray)):
                profile = os.path.join(cov_dir, f"{tname}.{kind}.{i}.profraw")
                outcome = run_test(exe, test, proj_dir, profile, args.timeout)
                runs.append({"target": tname, "kind": kind, "exe": exe, "test": test,
                             "profile": profile, "outcome": outcome})
        with open(state_file, "w") as f:
            json.dump(runs, f, indent=1)
    suite_secs = time.time() - t0

    # the functions each binary holds: name -> (file, first line, last line, regions)
    records = {}  # mangled name -> record
    ran = {}  # mangled name -> lines where a region starts that ran, in any test binary
    for tname, kind, exe in exes:
        profiles = [r["profile"] for r in runs if r["exe"] == exe and os.path.exists(r["profile"])]
        if not profiles:
            continue
        merged = os.path.join(cov_dir, f"{tname}.{kind}.profdata")
        subprocess.run([tools["profdata"], "merge", "-sparse", *profiles, "-o", merged],
                       check=True)
        out = subprocess.run([tools["cov"], "export", "--format=text", "-skip-expansions",
                              "-instr-profile=" + merged, exe], capture_output=True, text=True,
                             check=True)
        for fn in json.loads(out.stdout)["data"][0]["functions"]:
            regions = [r for r in fn["regions"] if r[5] == 0 and r[7] == 0]  # own file, code
            if not regions or not fn["filenames"]:
                continue
            path = os.path.relpath(os.path.realpath(fn["filenames"][0]), proj_dir)
            if path.startswith(".."):
                continue
            rec = {"path": path.replace(os.sep, "/"), "exe": exe, "crate": tname.replace("-", "_"),
                   "line": min(r[0] for r in regions), "end_line": max(r[2] for r in regions),
                   "regions": sorted(regions)}
            records[plain_name(fn["name"])] = rec
            # a library function is linked into every test binary under one name, and the record
            # kept is the last binary's: its own counts alone would miss where the function ran
            ran.setdefault(plain_name(fn["name"]), set()).update(r[0] for r in regions if r[4] > 0)
    names = demangle(tools["cxxfilt"], sorted(records))
    for mangled, rec in records.items():
        rec["demangled"] = strip_hashes(names.get(mangled, mangled))
        rec["nested"] = "{closure#" in rec["demangled"] or "{shim" in rec["demangled"]
    ran_at = {}  # (path, line) -> lines that ran, over all of a function's binaries and instances
    for mangled, rec in records.items():
        if not rec["nested"]:
            ran_at.setdefault((rec["path"], rec["line"]), set()).update(ran[mangled])

    # test code: where the tests live, and every test module's span
    test_code = {}  # path -> [(start, end)]
    test_files = set()
    for root, _, files in os.walk(proj_dir):
        for fname in files:
            if not fname.endswith(".rs"):
                continue
            full = os.path.join(root, fname)
            rel = os.path.relpath(full, proj_dir).replace(os.sep, "/")
            with open(full, encoding="utf-8", errors="replace") as f:
                spans, outlined = test_spans(f.read())
            test_code[rel] = spans
            base = os.path.dirname(rel) if fname in ("mod.rs", "lib.rs", "main.rs") else \
                rel[:-3]
            for mod in outlined:
                test_files.update({f"{base}/{mod}.rs", f"{base}/{mod}/mod.rs"})

    def in_test_code(path, line):
        if path in test_files or not any(path == s or path.startswith(s.rstrip("/") + "/")
                                         for s in proj["source"]):
            return True
        return any(a <= line <= b for a, b in test_code.get(path, []))

    # the test -> its file, by its demangled path in the mapping
    by_path = {}  # (binary, demangled path) -> record
    for rec in records.values():
        by_path.setdefault((rec["exe"], rec["demangled"]), rec)
    covers = {}  # (path, line) -> {test file: [test ids]}
    counted = {"passed": 0, "failed": 0, "timed_out": 0}
    for run in runs:
        counted[run["outcome"]] += 1
        if not os.path.exists(run["profile"]):
            continue
        test_rec = by_path.get((run["exe"], run["target"].replace("-", "_") + "::" + run["test"]))
        if test_rec is None:
            continue  # a test made by a macro whose function the mapping names otherwise
        test_file = test_rec["path"]
        test_id = f"{test_file}::{run['test']}"
        for mangled, count in function_counts(tools["profdata"], run["profile"]).items():
            rec = records.get(mangled)
            if count <= 0 or rec is None or rec["nested"]:
                continue
            key = (rec["path"], rec["line"])
            covers.setdefault(key, {}).setdefault(test_file, []).append(test_id)

    # measured functions and their probe lines
    functions = {}
    for rec in records.values():
        if rec["nested"] or in_test_code(rec["path"], rec["line"]):
            continue
        functions.setdefault((rec["path"], rec["line"]), rec)
    sources = {}
    sampled_from = []
    for key, rec in sorted(functions.items()):
        if key not in covers:
            continue
        path = rec["path"]
        if path not in sources:
            with open(os.path.join(proj_dir, path), encoding="utf-8", errors="replace") as f:
                sources[path] = f.read().split("\n")
        lines = sources[path]
        # lines of items nested in this function (closures' own regions are theirs)
        nested = [(r["line"], r["end_line"]) for r in records.values()
                  if r["path"] == path and (r["line"], r["end_line"]) != (rec["line"], rec["end_line"])
                  and rec["line"] <= r["line"] and r["end_line"] <= rec["end_line"]]
        candidates = sorted({line for line in ran_at[key]
                             if rec["line"] < line <= rec["end_line"]
                             and not any(a <= line <= b for a, b in nested)
                             and probe_ok(lines[line - 1])})
        if not candidates:
            continue
        qual = rec["demangled"].split("::", 1)[-1]
        sampled_from.append({
            "project": proj["name"], "path": path, "qualified_name": qual,
            "name": qual.rsplit("::", 1)[-1], "line": rec["line"], "end_line": rec["end_line"],
            "probe_candidates": candidates,
            "tests": covers[key]})
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
        "project": name, "version": proj["version"], "split": proj["split"],
        "suite_seconds": round(suite_secs, 1), "tests": counted,
        "test_files": len(all_test_files), "functions": len(functions),
        "covered": len([k for k in functions if k in covers]), "sampled": len(entries),
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
    ap.add_argument("--llvm-suffix", default="-19")
    ap.add_argument("--out", default=os.path.join(BASE, "judged-rust.json"))
    args = ap.parse_args()
    tools = {k: tool(v, args.llvm_suffix) for k, v in
             (("profdata", "llvm-profdata"), ("cov", "llvm-cov"), ("cxxfilt", "llvm-cxxfilt"))}
    projects = [p for p in load_split()["projects"] if p.get("language") == "rust"
                and (not args.project or p["name"] in args.project)]
    if not projects:
        sys.exit("judge.py: no such Rust project in split.json")
    all_entries, rows = [], []
    if args.project and os.path.exists(args.out):  # merge: replace only the judged projects
        with open(args.out) as f:
            all_entries = [e for e in json.load(f) if e["project"] not in args.project]
    for proj in projects:
        entries, summary = judge_project(proj, args, tools)
        all_entries += entries
        rows.append(summary)
        print(json.dumps(summary), flush=True)
    with open(args.out, "w") as f:
        json.dump(all_entries, f, indent=1)
    with open(os.path.join(BASE, "judge-summary-rust.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
