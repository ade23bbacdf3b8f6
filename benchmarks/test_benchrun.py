#!/usr/bin/env python3
"""Tests of benchmarks/run (benchmarks/benchrun): every entry's --list metadata is complete and names a harness that
exists, --dry-run prints the harness command(s) with and without --quick and passes the arguments after `--`,
entries that need arguments refuse to start without them, the summary (header + table) is written from raw output
(--summarize-only, synthetic data, into a temporary --out), a rerun overwrites it, and a failing harness keeps the
previous one. No harness runs; stdlib unittest, about a second:

  python3 benchmarks/test_benchrun.py -v
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(HERE, "netlab")]
from benchrun import cli  # noqa: E402
from benchrun import entries as E  # noqa: E402
from benchrun import summary as S  # noqa: E402

S.IDLE_SAMPLE_S = 0.05  # the idle check's CPU sample before each (summarize-only) run: short in tests
AREAS = {"netlab", "veth", "sim", "spark", "flink", "kafka", "torch", "jmh"}
# placeholder harness arguments for the entries that need some (--dry-run only prints them)
ARGS = {
    "netlab-ab": ["/x/old-agent", "/x/new-agent"],
    "incast-sim-ab": ["--a-sim", "/x/a-sim", "--b-sim", "/x/b-sim"],
    "small-messages-ab": ["/x/a-perf", "/x/b-perf"],
    "java-small-messages-ab": ["/x/a.jar", "/x/a-perf", "/x/b.jar", "/x/b-perf"],
}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(argv))
        except SystemExit as x:  # argparse errors
            rc = x.code if isinstance(x.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def dry(name: str, *more: str, extra: list[str] | None = None) -> tuple[int, str, str]:
    extra = ARGS.get(name, []) if extra is None else extra
    raw = os.path.join(tempfile.gettempdir(), "benchrun-test-never-created", name)
    return run(name, "--dry-run", "--raw", raw, *more, *(["--", *extra] if extra else []))


class Metadata(unittest.TestCase):
    def test_every_entry_is_complete(self):
        names = [e.name for e in E.ENTRIES]
        self.assertEqual(len(names), len(set(names)), "entry names are unique")
        dirs = [(e.area, e.dir) for e in E.ENTRIES]
        self.assertEqual(len(dirs), len(set(dirs)), "summary directories are unique")
        for e in E.ENTRIES:
            with self.subTest(e.name):
                self.assertRegex(e.name, r"^[a-z0-9]+(-[a-z0-9]+)*$")
                self.assertIn(e.area, AREAS)
                for text in (e.measures, e.needs, e.quick):
                    self.assertGreater(len(text), 10)
                self.assertIn("root" if e.root else "no root", e.needs)
                self.assertGreater(e.quick_minutes, 0)
                self.assertGreaterEqual(e.minutes, e.quick_minutes)
                self.assertEqual(e.summary_dir, os.path.join(ROOT, "benchmarks", "results", e.area, e.dir))
                self.assertTrue(callable(e.steps) and callable(e.summarize))

    def test_every_area_of_the_issue_has_an_entry(self):
        # the lab, simulator, Spark, Flink, Kafka, PyTorch and veth benchmarks each have their entry (issue 36), and JMH
        self.assertEqual({e.area for e in E.ENTRIES}, AREAS)
        figs = {e.name for e in E.ENTRIES if e.area == "sim"}
        for f in ("fig5", "fig6", "fig9", "fig10", "fig11", "fig12", "fig13", "fig14"):
            self.assertIn(f"sim-{f}", figs)

    def test_harness_scripts_exist(self):
        for e in E.ENTRIES:
            for quick in (False, True):
                ctx = E.Ctx(quick=quick, raw="/tmp/raw", out="/tmp/out", extra=list(ARGS.get(e.name, [])))
                for s in e.steps(ctx):
                    script = next((x for x in s.argv if x.endswith((".sh", ".py"))), None)
                    if script is None:  # python -m netlab.X
                        mod = s.argv[s.argv.index("-m") + 1]
                        script = os.path.join("benchmarks", "netlab", *mod.split(".")) + ".py"
                    with self.subTest(e.name, quick=quick):
                        self.assertTrue(os.path.isfile(os.path.join(ROOT, script)), script)

    def test_list(self):
        rc, out, _ = run("--list")
        self.assertEqual(rc, 0)
        for e in E.ENTRIES:
            self.assertIn(f"\n{e.name}", "\n" + out)
        self.assertEqual(out.count("    measures: "), len(E.ENTRIES))
        self.assertEqual(out.count("    needs:    "), len(E.ENTRIES))
        self.assertEqual(out.count("    summary:  benchmarks/results/"), len(E.ENTRIES))
        rc, out, _ = run("--list", "--json")
        doc = json.loads(out)
        self.assertEqual([d["name"] for d in doc], [e.name for e in E.ENTRIES])
        for d in doc:
            for k in ("area", "measures", "needs", "quick", "summary"):
                self.assertTrue(d[k], (d["name"], k))
            self.assertTrue(d["summary"].startswith(f"benchmarks/results/{d['area']}/"))
            self.assertTrue(d["summary"].endswith("/summary.md"))

    def test_docs_name_every_entry(self):
        with open(os.path.join(ROOT, "docs", "benchmarks.md")) as f:
            doc = f.read()
        for e in E.ENTRIES:
            self.assertIn(f"`benchmarks/run {e.name}", doc, f"docs/benchmarks.md's table lacks {e.name}")

    def test_the_script_itself_lists(self):
        p = subprocess.run([os.path.join(HERE, "run"), "--list"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("netlab-ab OLD_AGENT NEW_AGENT", p.stdout)


class DryRun(unittest.TestCase):
    def test_every_entry_prints_its_commands_full_and_quick(self):
        for e in E.ENTRIES:
            with self.subTest(e.name):
                rc, full, err = dry(e.name)
                self.assertEqual(rc, 0, err)
                rc, quick, err = dry(e.name, "--quick")
                self.assertEqual(rc, 0, err)
                for out in (full, quick):
                    self.assertIn(f"summary: {os.path.relpath(e.summary_dir, ROOT)}/summary.md", out)
                    self.assertIn("run:     ", out)
                runs = lambda o: [x for x in o.splitlines() if x.startswith("run:")]  # noqa: E731
                if e.name != "sim-smoke":  # the smoke preset is its own quick variant
                    self.assertNotEqual(runs(full), runs(quick), "--quick changes the harness command")
                self.assertFalse(
                    os.path.exists(os.path.join(tempfile.gettempdir(), "benchrun-test-never-created"))
                )

    def test_quick_plumbing(self):
        _, full, _ = dry("netlab")
        _, quick, _ = dry("netlab", "--quick")
        self.assertIn("benchmarks/netlab/run.sh full", full)
        self.assertIn("benchmarks/netlab/run.sh quick", quick)
        _, quick, _ = dry("sim-fig13", "--quick")
        self.assertIn("benchmarks/sim/run.sh fig13 k4", quick)
        _, full, _ = dry("sim-fig13")
        self.assertIn("benchmarks/sim/run.sh fig13 paper", full)
        _, quick, _ = dry("netlab-ab", "--quick")
        self.assertRegex(quick, r"ab\.sh /x/old-agent /x/new-agent \S+ 1\n")
        _, quick, _ = dry("kafka-e2e", "--quick")
        self.assertIn("--records 200000", quick)
        self.assertIn(
            "--summary " + os.path.join(tempfile.gettempdir(), "benchrun-test-never-created"), quick
        )
        _, quick, _ = dry("spark-local", "--quick")
        self.assertIn("PASSTHROUGH_ROUNDS=1 ", quick)
        self.assertIn("collect: benchmarks/results/spark/spark-*.txt", quick)
        _, quick, _ = dry("netlab-ablation", "--quick")
        self.assertEqual(quick.count("run:"), 1)
        _, full, _ = dry("netlab-ablation")
        self.assertEqual(full.count("run:"), 3)

    def test_arguments_after_the_separator_reach_the_harness(self):
        _, out, _ = dry("netlab", extra=["--runs", "incast/slack/16/1", "--schemes", "atp_full,tcp_es"])
        line = next(x for x in out.splitlines() if x.startswith("run:"))
        argv = shlex.split(line[len("run:") :])
        self.assertEqual(argv[-4:], ["--runs", "incast/slack/16/1", "--schemes", "atp_full,tcp_es"])
        _, out, _ = dry(
            "incast-sim-ab", extra=["--a-sim", "/a", "--b-sim", "/b", "--b-flags=--mrdf-across=1"]
        )
        self.assertIn("--b-flags=--mrdf-across=1", out)

    def test_entries_needing_arguments_refuse_without_them(self):
        for name, usage in (
            ("netlab-ab", "OLD_AGENT NEW_AGENT"),
            ("java-small-messages-ab", "B/benchmarks.jar"),
        ):
            rc, out, err = dry(name, extra=[])
            self.assertEqual(rc, 2)
            self.assertIn(usage, err)
            self.assertNotIn("run:", out)

    def test_unknown_entry(self):
        rc, _, err = run("no-such-bench", "--dry-run")
        self.assertEqual(rc, 2)
        self.assertIn("unknown entry 'no-such-bench'", err)
        self.assertIn("netlab-ab", err)


class Summaries(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.raw = os.path.join(self.tmp.name, "raw")
        self.out = os.path.join(self.tmp.name, "out")
        os.makedirs(self.raw)

    def tearDown(self):
        self.tmp.cleanup()

    def summarize(self, name: str) -> tuple[dict, str]:
        rc, _, err = run(name, "--summarize-only", "--raw", self.raw, "--out", self.out)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(self.out, "summary.json")) as f:
            doc = json.load(f)
        with open(os.path.join(self.out, "summary.md")) as f:
            return doc, f.read()

    def test_header(self):
        doc, md = self.summarize("kafka-e2e")
        h = doc["entry"]["header"]  # the harness's own document (none here) with the entry's header
        for k in ("command", "commit", "date", "machine", "load_before", "load_after", "idle", "idle_reason"):
            self.assertIn(k, h)
        self.assertTrue(h["command"].startswith("benchmarks/run kafka-e2e"))
        self.assertEqual(len(h["load_before"]), 3)
        self.assertIsInstance(h["idle"], bool)
        for word in (
            "- command: `benchmarks/run kafka-e2e",
            "- commit: ",
            "- load average",
            "- machine before the run",
        ):
            self.assertIn(word, md)
        self.assertIn("no rows", md)  # no raw output: said, not an empty table

    def test_idle_verdict(self):
        self.assertTrue(S.idle_verdict(0.2, 0.05, 2)[0])
        self.assertFalse(S.idle_verdict(3.0, 0.05, 2)[0])  # load
        self.assertFalse(S.idle_verdict(0.1, 0.9, 2)[0])  # busy CPUs
        self.assertIn("1-min load 3.00 on 2 cores", S.idle_verdict(3.0, 0.05, 2)[1])
        rc, out, _ = run("kafka-e2e", "--summarize-only", "--raw", self.raw, "--out", self.out)
        with open(os.path.join(self.out, "summary.md")) as f:
            md = f.read()
        self.assertRegex(
            md, r"machine before the run: (idle|NOT idle \(shared or loaded machine\): not a run of record)"
        )

    def test_result_lines_table_and_rerun_overwrites(self):
        with open(os.path.join(self.raw, "spark-1.txt"), "w") as f:
            f.write("# header\nRESULT mode=exact rows=1000 runs=5 median_s=2.5 all_s=[2.4,2.6]\n")
            f.write("RESULT mode=approx rows=1000 runs=5 median_s=1.0 all_s=[0.9,1.1] max_rel_error=0.01\n")
            f.write("# passthrough alloc ratio approx/sort = 1.001 [0.994, 1.007] over 6 pairs: within 2 %\n")
        doc, md = self.summarize("spark-local")
        self.assertEqual([r["mode"] for r in doc["rows"]], ["exact", "approx"])
        self.assertEqual(doc["rows"][1]["median_s"], 1.0)
        self.assertIn("| mode | rows | runs | median_s |", md)
        self.assertIn("passthrough alloc ratio approx/sort = 1.001", md)
        os.remove(os.path.join(self.raw, "spark-1.txt"))
        with open(os.path.join(self.raw, "spark-2.txt"), "w") as f:
            f.write("RESULT mode=samplesend rows=10 runs=1 median_s=9\n")
        doc, md = self.summarize("spark-local")
        self.assertEqual([r["mode"] for r in doc["rows"]], ["samplesend"])
        self.assertNotIn("approx", md)

    def test_harness_summary_cells_and_copied_plots(self):
        cells = [
            dict(figure="fig9", workload="fbkv", scheme="atp_full", msr=0.75, jobs=8, p50_ms=0.1, p99_ms=0.2)
        ]
        with open(os.path.join(self.raw, "summary.json"), "w") as f:
            json.dump(dict(cells=cells, preset="k4"), f)
        for name in ("fig9.png", "fig9.csv"):
            with open(os.path.join(self.raw, name), "w") as f:
                f.write("x")
        doc, md = self.summarize("sim-fig9")
        self.assertEqual(doc["cells"], cells)  # the harness's document, its schema kept
        self.assertEqual(doc["preset"], "k4")
        self.assertTrue(doc["entry"]["header"]["command"].startswith("benchmarks/run sim-fig9"))
        self.assertTrue(os.path.exists(os.path.join(self.out, "fig9.png")))
        self.assertIn("| fig9 | fbkv |", md)
        os.remove(os.path.join(self.raw, "fig9.png"))  # a rerun without the plot removes the stale copy
        self.summarize("sim-fig9")
        self.assertFalse(os.path.exists(os.path.join(self.out, "fig9.png")))

    def test_jmh(self):
        jmh = [
            dict(
                benchmark="io.netapprox.benchmarks.GoodputBenchmark.send",
                mode="thrpt",
                params=dict(size="65536"),
                primaryMetric=dict(score=7028.4, scoreError=9077.0, scoreUnit="ops/s"),
                secondaryMetrics=dict(gbits=dict(score=3.69)),
            )
        ]
        with open(os.path.join(self.raw, "jmh-thrpt.json"), "w") as f:
            json.dump(jmh, f)
        doc, md = self.summarize("jmh")
        self.assertEqual(doc["rows"][0]["benchmark"], "GoodputBenchmark.send")
        self.assertEqual(doc["rows"][0]["gbits"], 3.69)
        self.assertIn("| GoodputBenchmark.send | thrpt | size=65536 | 7,028 |", md)

    def test_netlab_ab_uses_the_stats_module(self):
        import random

        sys.path.insert(0, os.path.join(HERE, "netlab"))
        import test_stats  # the jobs.csv writer of the stats tests

        rng = random.Random(1)
        for rnd in (1, 2):
            for side, scale in (("old", 1.0), ("new", 2.0)):
                rows = [test_stats.job("atp_full", scale * rng.uniform(90, 110)) for _ in range(10)]
                test_stats.write_jobs(os.path.join(self.raw, f"fifo-bg-{side}-{rnd}"), rows)
        doc, md = self.summarize("netlab-ab")
        (row,) = doc["rows"]
        self.assertAlmostEqual(row["b_over_a"], 2.0, delta=0.15)
        self.assertEqual(row["verdict"], "slower beyond noise")
        self.assertIn("| fifo-bg | fbkv | slack | 3 | atp_full |", md)


class RunPath(unittest.TestCase):
    """The run path with a stand-in harness (a Python one-liner): output teed into raw/output.log, files the
    harness writes at a fixed place collected, a failure keeps the previous summary."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.raw = os.path.join(self.tmp.name, "raw")
        self.out = os.path.join(self.tmp.name, "out")
        self.made = os.path.join(self.tmp.name, "made-1.txt")

    def tearDown(self):
        E.BY_NAME.pop("fake", None)
        self.tmp.cleanup()

    def fake(self, code: str, produces: str | None = None):
        steps = lambda ctx: [E.Step([sys.executable, "-c", code], produces=produces)]  # noqa: E731
        E.BY_NAME["fake"] = E.Entry(
            name="fake",
            area="jmh",
            dir="fake",
            measures="a stand-in harness",
            needs="nothing; no root",
            root=False,
            minutes=1,
            quick_minutes=1,
            quick="the same",
            steps=steps,
            summarize=E.results_summary("fake", ["mode"]),
        )

    def test_success_then_failure(self):
        self.fake(
            f"print('RESULT mode=one x=1'); open({self.made!r}, 'w').write('RESULT mode=two x=2')", self.made
        )
        rc, _, err = run("fake", "--raw", self.raw, "--out", self.out)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(self.raw, "output.log")) as f:
            self.assertIn("RESULT mode=one", f.read())
        self.assertTrue(os.path.exists(os.path.join(self.raw, "made-1.txt")))  # collected into raw
        self.assertFalse(os.path.exists(self.made))
        with open(os.path.join(self.out, "summary.json")) as f:
            doc = json.load(f)
        self.assertEqual([r["mode"] for r in doc["rows"]], ["two"])  # *.txt of raw; output.log is the console
        self.assertIn(sys.executable, doc["header"]["harness"][0])
        self.assertIsNotNone(doc["header"]["max_load1_during"])
        self.fake("import sys; print('RESULT mode=three'); sys.exit(3)")
        rc, _, err = run("fake", "--raw", self.raw, "--out", self.out)
        self.assertEqual(rc, 3)
        self.assertIn("harness exited 3", err)
        self.assertIn("previous summary is kept", err)
        with open(os.path.join(self.out, "summary.json")) as f:
            self.assertEqual([r["mode"] for r in json.load(f)["rows"]], ["two"])


if __name__ == "__main__":
    unittest.main()
