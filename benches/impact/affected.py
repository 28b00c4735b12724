#!/usr/bin/env python3
"""How long the tests a change reaches take to run, against the whole suite: for each judged
project, the suite run once whole (`POST /v1/run-tests {"repo"}`), then for a sample of its
judged functions the same edit score.py makes (a comment inside the function's body) and
`POST /v1/run-tests {"repo", "affected": true}`, the file restored after each.

Usage:
  python3 benches/impact/affected.py --judged FILE [--project NAME]... [--per-project N]
                                     [--url URL] [--src DIR] [--timeout S] [--json]

The daemon runs the tests with the runner it finds for each repo (cargo, pytest, go test,
vitest or jest), in the environment it was started in: start it with the tools the suites
need on its PATH (a virtual environment's bin for the Python projects). The token is read
from $DOCDEX_TOKEN. Standard library only.

Reports per project: the whole suite's time and test count, and for the sampled functions the
mean and median of the affected run's time and test count, their share of the whole suite's,
and how many affected runs failed or timed out (a comment changes no behaviour, so a failure
is the selection's: a test that needs another to run first, or a runner's filter that did not
match). The whole suite runs first, so the caches it fills (a compiled crate, Python's
bytecode) serve both.
"""
import argparse
import json
import os
import statistics
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import score  # noqa: E402  (the probe edit and the git helpers)


def run_tests(url, token, body, timeout):
    """(answer dict, None) or (None, error text)."""
    req = urllib.request.Request(url.rstrip("/") + "/v1/run-tests", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read().decode("utf-8", "replace")), None
    except urllib.error.HTTPError as e:
        return None, "HTTP %d: %s" % (e.code, e.read().decode("utf-8", "replace")[:300])
    except (urllib.error.URLError, OSError, ValueError) as e:
        return None, str(getattr(e, "reason", None) or e)


def counted(answer):
    return answer["passed"] + answer["failed"] + answer["skipped"]


def sample(entries, n):
    """n of the project's functions spread over its judged list (deterministic)."""
    if len(entries) <= n:
        return entries
    step = len(entries) / n
    return [entries[int(i * step)] for i in range(n)]


def affected_run(entry, repo, args, token):
    path = os.path.join(repo, entry["path"])
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(score.probe_edit(text, entry["probe_line"], entry["path"]))
        started = time.monotonic()
        answer, err = run_tests(args.url, token, {"repo": repo, "affected": True, "timeout_secs": args.timeout}, args.timeout + 60)
        wall = time.monotonic() - started
    finally:
        r = score.git(repo, "checkout", "--", entry["path"])
        if r.returncode != 0:
            sys.stderr.write("could not restore %s: %s\n" % (path, r.stderr.strip()))
    return answer, err, wall


def project_report(name, repo, entries, args, token):
    whole, err = run_tests(args.url, token, {"repo": repo, "timeout_secs": args.timeout}, args.timeout + 60)
    if err:
        return {"project": name, "error": "whole suite: " + err}
    runs = []
    for e in sample(entries, args.per_project):
        answer, err, wall = affected_run(e, repo, args, token)
        if err:
            runs.append({"function": e["qualified_name"], "error": err})
            continue
        runs.append({"function": e["qualified_name"], "ms": answer["duration_ms"], "wall_ms": round(wall * 1000),
                     "tests": counted(answer), "failed": answer["failed"], "timed_out": answer["timed_out"],
                     "command": answer["command"][:300], "note": answer["note"],
                     "failures": [{"name": f["name"], "message": f["message"][:300]} for f in answer["failures"][:5]]})
    ok = [r for r in runs if "error" not in r]
    ms = [r["ms"] for r in ok]
    tests = [r["tests"] for r in ok]
    return {
        "project": name,
        "runner": whole["runner"],
        "whole_ms": whole["duration_ms"],
        "whole_tests": counted(whole),
        "whole_failed": whole["failed"],
        "whole_timed_out": whole["timed_out"],
        "whole_failures": [f["name"] for f in whole["failures"][:20]],
        "affected_runs": len(runs),
        "errors": len(runs) - len(ok),
        "mean_ms": statistics.mean(ms) if ms else None,
        "median_ms": statistics.median(ms) if ms else None,
        "mean_tests": statistics.mean(tests) if tests else None,
        "failed_runs": sum(1 for r in ok if r["failed"] or r["timed_out"]),
        "runs": runs,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judged", required=True)
    ap.add_argument("--project", action="append", help="only these projects (repeatable)")
    ap.add_argument("--per-project", type=int, default=5, help="functions sampled per project")
    ap.add_argument("--url", default=os.environ.get("DOCDEX_URL", "http://127.0.0.1:3210"))
    ap.add_argument("--src", default=score.DEFAULT_SRC)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    ap.add_argument("--json", help="also write the report here")
    args = ap.parse_args(argv)
    token = os.environ.get("DOCDEX_TOKEN", "")
    with open(args.judged) as f:
        judged = json.load(f)
    names = sorted({e["project"] for e in judged})
    if args.project:
        names = [n for n in names if n in args.project]
    if not names:
        sys.stderr.write("no project of %s selected\n" % args.judged)
        return 2
    reports = []
    for name in names:
        repo = os.path.realpath(os.path.join(args.src, name))
        if score.git(repo, "status", "--porcelain", "--untracked-files=no").stdout.strip():
            sys.stderr.write("%s has modified files; clean it with git -C %s checkout -- .\n" % (repo, repo))
            return 2
        entries = [e for e in judged if e["project"] == name]
        report = project_report(name, repo, entries, args, token)
        reports.append(report)
        sys.stderr.write("%s: %s\n" % (name, report.get("error") or "whole %.1f s, %d tests; affected mean %s s, %s tests"
                                       % (report["whole_ms"] / 1000, report["whole_tests"],
                                          "-" if report["mean_ms"] is None else "%.1f" % (report["mean_ms"] / 1000),
                                          "-" if report["mean_tests"] is None else "%.0f" % report["mean_tests"])))
    print("%-14s %-7s %9s %7s %11s %9s %7s %7s %8s %6s" % ("project", "runner", "whole s", "tests", "affected s",
                                                          "median s", "tests", "time %", "tests %", "fail"))
    shares, test_shares = [], []
    for r in reports:
        if "error" in r:
            print("%-14s %s" % (r["project"], r["error"]))
            continue
        if r["mean_ms"] is None:
            print("%-14s %-7s %9.1f %7d  (no affected run answered: %d errors)" % (r["project"], r["runner"],
                                                                                 r["whole_ms"] / 1000, r["whole_tests"], r["errors"]))
            continue
        share = r["mean_ms"] / r["whole_ms"] if r["whole_ms"] else None
        test_share = r["mean_tests"] / r["whole_tests"] if r["whole_tests"] else None
        if share is not None:
            shares.append(share)
        if test_share is not None:
            test_shares.append(test_share)
        print("%-14s %-7s %9.1f %7d %11.1f %9.1f %7.0f %7s %8s %6d" % (
            r["project"], r["runner"], r["whole_ms"] / 1000, r["whole_tests"], r["mean_ms"] / 1000,
            r["median_ms"] / 1000, r["mean_tests"], "-" if share is None else "%.0f" % (100 * share),
            "-" if test_share is None else "%.0f" % (100 * test_share), r["failed_runs"]))
    if shares:
        print("share of the whole suite over %d projects, median (mean): time %.0f %% (%.0f %%), tests %.0f %% (%.0f %%)"
              % (len(shares), 100 * statistics.median(shares), 100 * statistics.mean(shares),
                 100 * statistics.median(test_shares), 100 * statistics.mean(test_shares)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(reports, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
