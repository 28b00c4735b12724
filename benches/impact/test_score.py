#!/usr/bin/env python3
"""Tests score.py's metric code (pure functions: no network, no daemon, no files).
Run: python3 -m unittest benches/impact/test_score.py   (or python3 benches/impact/test_score.py)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score  # noqa: E402


def entry(name="f", path="pkg/a.py", files=("tests/test_a.py",), qn=None):
    return {"project": "p", "path": path, "name": name, "qualified_name": qn or name,
            "line": 1, "end_line": 3, "probe_line": 2, "covering_test_files": list(files),
            "covering_tests": [f + "::test" for f in files]}


class SetMetrics(unittest.TestCase):
    def test_exact(self):
        m = score.set_metrics({"a", "b"}, {"a", "b"})
        self.assertEqual((m["recall"], m["precision"], m["f1"]), (1.0, 1.0, 1.0))
        self.assertEqual((m["tp"], m["fp"], m["fn"]), (2, 0, 0))

    def test_partial(self):
        # P = {a, b, c}, T = {a, d}: TP 1, FP 2, FN 1 -> R 1/2, P 1/3, F1 2*(1/6)/(5/6) = 0.4
        m = score.set_metrics(["a", "b", "c"], ["a", "d"])
        self.assertAlmostEqual(m["recall"], 0.5)
        self.assertAlmostEqual(m["precision"], 1 / 3)
        self.assertAlmostEqual(m["f1"], 0.4)
        self.assertEqual((m["tp"], m["fp"], m["fn"]), (1, 2, 1))

    def test_disjoint(self):
        m = score.set_metrics({"x"}, {"a"})
        self.assertEqual((m["recall"], m["precision"], m["f1"]), (0.0, 0.0, 0.0))

    def test_empty_prediction_of_covered_function_is_precision_zero(self):
        m = score.set_metrics(set(), {"a"})
        self.assertEqual((m["recall"], m["precision"], m["f1"]), (0.0, 0.0, 0.0))

    def test_empty_prediction_of_uncovered_function_is_perfect(self):
        m = score.set_metrics(set(), set())
        self.assertEqual((m["recall"], m["precision"], m["f1"]), (1.0, 1.0, 1.0))

    def test_prediction_for_uncovered_function(self):
        m = score.set_metrics({"a"}, set())
        self.assertEqual((m["recall"], m["precision"]), (1.0, 0.0))

    def test_duplicates_count_once(self):
        m = score.set_metrics(["a", "a", "b"], ["a"])
        self.assertEqual((m["tp"], m["fp"]), (1, 1))

    def test_f1(self):
        self.assertEqual(score.f1(0.0, 0.0), 0.0)
        self.assertAlmostEqual(score.f1(1.0, 0.5), 2 / 3)


class Micro(unittest.TestCase):
    def test_pooled(self):
        m = score.micro(3, 1, 2)  # P 3/4, R 3/5
        self.assertAlmostEqual(m["precision"], 0.75)
        self.assertAlmostEqual(m["recall"], 0.6)
        self.assertAlmostEqual(m["f1"], 2 * 0.75 * 0.6 / 1.35)

    def test_no_predictions(self):
        self.assertEqual(score.micro(0, 0, 4)["precision"], 0.0)
        self.assertEqual(score.micro(0, 0, 0), {"precision": 1.0, "recall": 1.0, "f1": 1.0})


class Paths(unittest.TestCase):
    def test_normalize(self):
        self.assertEqual(score.normalize_path("tests\\test_a.py", "/r"), "tests/test_a.py")
        self.assertEqual(score.normalize_path("./tests/test_a.py", "/r"), "tests/test_a.py")
        self.assertEqual(score.normalize_path("/r/tests/test_a.py", "/r"), "tests/test_a.py")
        self.assertEqual(score.normalize_path("/r/tests/test_a.py", "/r/"), "tests/test_a.py")
        self.assertEqual(score.normalize_path("/rx/tests/test_a.py", "/r"), "/rx/tests/test_a.py")
        self.assertEqual(score.normalize_path(None, "/r"), "")

    def test_predicted_files(self):
        tests = [{"path": "tests/a.py", "name": "t1", "confidence": 0.9},
                 {"path": "./tests/a.py", "name": "t2", "confidence": 0.3},
                 {"path": "/r/tests/b.py", "name": "t3", "confidence": 0.4},
                 {"path": "tests/c.py", "name": "t4"},  # no confidence: counts as 1.0
                 {"path": "", "name": "t5"}]
        self.assertEqual(score.predicted_files(tests, "/r"),
                         {"tests/a.py", "tests/b.py", "tests/c.py"})
        self.assertEqual(score.predicted_files(tests, "/r", 0.5), {"tests/a.py", "tests/c.py"})
        self.assertEqual(score.predicted_files(None, "/r"), set())


class Symbols(unittest.TestCase):
    def test_found_by_name(self):
        e = entry(name="method", path="pkg/a.py", qn="C.method")
        self.assertTrue(score.symbol_found([{"name": "method", "path": "pkg/a.py"}], e))
        self.assertTrue(score.symbol_found([{"name": "C.method", "path": "x.py"}], e))
        self.assertTrue(score.symbol_found([{"name": "mod::C::method", "path": "x.py"}], e))
        self.assertFalse(score.symbol_found([{"name": "C", "path": "pkg/a.py"}], e))
        self.assertFalse(score.symbol_found([{"name": "methods", "path": "pkg/a.py"}], e))
        self.assertFalse(score.symbol_found([], e))
        self.assertFalse(score.symbol_found(None, e))

    def test_found_at_path(self):
        e = entry(name="f", path="pkg/a.py")
        self.assertTrue(score.symbol_found([{"name": "f", "path": "./pkg/a.py"}], e, True))
        self.assertFalse(score.symbol_found([{"name": "f", "path": "pkg/b.py"}], e, True))


class ProbeEdit(unittest.TestCase):
    def test_appends_before_line_ending(self):
        text = "def f():\n    return 1\n"
        self.assertEqual(score.probe_edit(text, 2), "def f():\n    return 1 # docdex-probe\n")

    def test_crlf_and_last_line_without_newline(self):
        self.assertEqual(score.probe_edit("a\r\nb", 1), "a # docdex-probe\r\nb")
        self.assertEqual(score.probe_edit("a\r\nb", 2), "a\r\nb # docdex-probe")

    def test_comment_by_language(self):
        for path in ("lib/a.js", "a.mjs", "a.cjs", "src/a.ts", "A.JS"):
            self.assertEqual(score.probe_comment(path), " // docdex-probe", path)
        for path in ("pkg/a.py", "a.pyi", "js/README", "a.json", "", None):
            self.assertEqual(score.probe_comment(path), " # docdex-probe", path)
        text = "function f() {\r\n  return 1;\r\n}\r\n"
        self.assertEqual(score.probe_edit(text, 2, "lib/f.js"),
                         "function f() {\r\n  return 1; // docdex-probe\r\n}\r\n")
        self.assertEqual(score.probe_edit("def f():\n    return 1\n", 2, "pkg/f.py"),
                         "def f():\n    return 1 # docdex-probe\n")

    def test_out_of_range(self):
        with self.assertRaises(ValueError):
            score.probe_edit("a\n", 2)
        with self.assertRaises(ValueError):
            score.probe_edit("a\n", 0)


class ProjectSelection(unittest.TestCase):
    def test_only_projects_in_the_judged_file(self):
        # a split's projects that the judged file does not cover (the JavaScript ones when
        # scoring judged.json, and the other way round) are left out; none left: exit 2, no
        # request made
        with tempfile.TemporaryDirectory() as d:
            split = os.path.join(d, "split.json")
            judged = os.path.join(d, "judged.json")
            with open(split, "w") as f:
                json.dump({"projects": [
                    {"name": "py", "version": "1", "split": "test", "source": ["py"]},
                    {"name": "js", "version": "1", "split": "tune", "language": "javascript",
                     "source": ["lib"]}]}, f)
            with open(judged, "w") as f:
                json.dump([entry()], f)  # project "p": in no split
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = score.main(["--split", "tune", "--judged", judged, "--split-file", split,
                                 "--src", d, "--url", "http://127.0.0.1:9"])
            self.assertEqual(rc, 2)
            self.assertIn("no project of split tune", err.getvalue())

    def test_every_split_of_split_json_is_a_choice(self):
        # each split named in benches/impact/split.json (blind2, blind3 included) is accepted by
        # --split (argparse would exit instead of returning 2)
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "split.json")) as f:
            splits = {p["split"] for p in json.load(f)["projects"]}
        self.assertIn("blind2", splits)
        self.assertIn("blind3", splits)
        with tempfile.TemporaryDirectory() as d:
            judged = os.path.join(d, "judged.json")
            with open(judged, "w") as f:
                json.dump([entry()], f)  # project "p": in no split
            for name in sorted(splits):
                err = io.StringIO()
                with contextlib.redirect_stderr(err):
                    rc = score.main(["--split", name, "--judged", judged, "--src", d,
                                     "--url", "http://127.0.0.1:9"])
                self.assertEqual(rc, 2)
                self.assertIn("no project of split %s" % name, err.getvalue())


class Rows(unittest.TestCase):
    def answer(self, *paths, symbols=("f",), truncated=False):
        return {"changed_files": ["pkg/a.py"],
                "changed_symbols": [{"name": n, "path": "pkg/a.py"} for n in symbols],
                "dependents": [], "tests": [{"path": p, "name": "t", "line": 1,
                                             "confidence": 0.6} for p in paths],
                "truncated": truncated}

    def test_score_function(self):
        e = entry(files=("tests/test_a.py", "tests/test_b.py"))
        r = score.score_function(e, self.answer("tests/test_a.py", "tests/test_a.py",
                                                "tests/test_z.py"), "/r")
        self.assertEqual((r["tp"], r["fp"], r["fn"]), (1, 1, 1))
        self.assertEqual((r["predicted"], r["covering"]), (2, 2))
        self.assertEqual(r["missed"], ["tests/test_b.py"])
        self.assertEqual(r["extra"], ["tests/test_z.py"])
        self.assertTrue(r["found"] and r["found_at_path"])
        self.assertFalse(r["error"])
        # every entry has confidence 0.6: nothing passes the 0.8 cut
        self.assertEqual(r["at_0.8"], {"tp": 0, "fp": 0, "fn": 2})
        self.assertEqual(r["at_0.5"], {"tp": 1, "fp": 1, "fn": 1})

    def test_failed_request_scores_as_empty(self):
        r = score.score_function(entry(), None, "/r")
        self.assertTrue(r["error"])
        self.assertFalse(r["found"])
        self.assertEqual((r["recall"], r["precision"], r["f1"]), (0.0, 0.0, 0.0))

    def test_aggregate(self):
        a = score.score_function(entry(name="f", files=("t/a.py", "t/b.py")),
                                 self.answer("t/a.py", "t/b.py", "t/c.py", "t/d.py"), "/r")
        b = score.score_function(entry(name="g", files=("t/a.py",)),
                                 self.answer(symbols=("other",), truncated=True), "/r")
        s = score.aggregate([a, b])
        # a: R 1, P 1/2, F1 2/3; b: R 0, P 0 (empty answer), F1 0
        self.assertEqual(s["functions"], 2)
        self.assertAlmostEqual(s["macro"]["recall"], 0.5)
        self.assertAlmostEqual(s["macro"]["precision"], 0.25)
        self.assertAlmostEqual(s["macro"]["f1"], 1 / 3)
        # pooled: TP 2, FP 2, FN 1 -> P 1/2, R 2/3
        self.assertEqual((s["tp"], s["fp"], s["fn"]), (2, 2, 1))
        self.assertAlmostEqual(s["micro"]["precision"], 0.5)
        self.assertAlmostEqual(s["micro"]["recall"], 2 / 3)
        self.assertAlmostEqual(s["changed_symbol_found"], 0.5)
        self.assertEqual((s["truncated"], s["no_prediction"], s["errors"]), (1, 1, 0))
        self.assertAlmostEqual(s["mean_predicted_files"], 2.0)
        self.assertAlmostEqual(s["mean_covering_files"], 1.5)
        self.assertEqual(score.aggregate([]), {"functions": 0})

    def test_worst_misses_order(self):
        a = score.score_function(entry(name="f", files=("t/a.py", "t/b.py", "t/c.py")),
                                 self.answer("t/a.py"), "/r")            # misses 2
        b = score.score_function(entry(name="g", files=("t/a.py",)), self.answer(), "/r")  # 1
        c = score.score_function(entry(name="h", files=("t/a.py",)),
                                 self.answer("t/a.py"), "/r")            # misses none
        w = score.worst_misses([c, b, a], k=10)
        self.assertEqual([x["function"] for x in w], ["p pkg/a.py:f", "p pkg/a.py:g"])
        self.assertEqual(w[0]["missed"], ["t/b.py", "t/c.py"])
        self.assertEqual(len(score.worst_misses([a, b], k=1)), 1)


if __name__ == "__main__":
    unittest.main()
