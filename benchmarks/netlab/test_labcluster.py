#!/usr/bin/env python3
"""Tests of netlab.labcluster and of the two runners built on it (benchmarks/spark/netlab/run.py,
benchmarks/flink/netlab/run.py). Stdlib unittest:

  python3 benchmarks/netlab/test_labcluster.py -v

Pure tests always run: jar lookup and snapshots, iperf3 goodput parsing, percentiles, both runners import against
the shared module and summarize synthetic result lines, and refuse to start without root. The life-cycle test needs
root and network namespaces (skips otherwise): a 3-host lab comes up, a client runs in a namespace, background
iperf3 TCP reaches its target and is reported, the switch port's class counters parse, and `down` leaves no
namespace and no process behind (about 10 s).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from netlab import lab as nlab
from netlab import labcluster

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def load_runner(framework: str):
    path = os.path.join(ROOT, "benchmarks", framework, "netlab", "run.py")
    spec = importlib.util.spec_from_file_location(f"{framework}_netlab_run", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def can_run_lab() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "tc", "iperf3"):
        if shutil.which(tool) is None:
            return f"{tool} missing"
    return None


class PureTests(unittest.TestCase):
    def test_load_note_says_idle_only_when_nothing_ran_at_the_start(self):
        idle = labcluster.load_note(0.2, 1.9, cores=2)
        self.assertIn("idle at the start", idle)
        self.assertIn("0.2 at the start, 1.9 at the end", idle)
        shared = labcluster.load_note(16.3, 20.2, cores=2)
        self.assertIn("SHARED", shared)
        self.assertIn("not of record", shared)
        self.assertNotIn("idle", shared)

    def test_find_jar_skips_sources_tests_and_original(self):
        with tempfile.TemporaryDirectory() as root:
            target = os.path.join(root, "mod", "target")
            os.makedirs(target)
            for n in (
                "thing-1.0-sources.jar",
                "thing-1.0-tests.jar",
                "original-thing-1.0.jar",
                "thing-1.0.jar",
                "thingy-1.0.jar",
            ):
                open(os.path.join(target, n), "w").close()
            self.assertEqual(os.path.join(target, "thing-1.0.jar"), labcluster.find_jar("mod", "thing", root))
            with self.assertRaisesRegex(FileNotFoundError, "absent jar missing"):
                labcluster.find_jar("mod", "absent", root)
            with self.assertRaises(FileNotFoundError):
                labcluster.find_jar("nomodule", "thing", root)
            with tempfile.TemporaryDirectory() as tmp:
                [copy] = labcluster.snapshot_jars(tmp, [("mod", "thing")], root)
                self.assertEqual(os.path.join(tmp, "thing.jar"), copy)
                self.assertTrue(os.path.exists(copy))

    def test_iperf_goodput_and_percentiles(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "iperf3-c.log")
            with open(log, "w") as f:
                f.write(
                    "[  5]   0.00-1.00   sec  16.0 MBytes   134 Mbits/sec    0   1.2 MBytes\n"
                    "[  5]   1.00-2.00   sec  17.0 MBytes   146 Mbits/sec    3   1.2 MBytes\n"
                )
            self.assertEqual((2, 140.0, 134.0, 146.0), labcluster.iperf_goodput(log))
            self.assertIsNone(labcluster.iperf_goodput(os.path.join(tmp, "absent.log")))
            open(log, "w").close()
            self.assertIsNone(labcluster.iperf_goodput(log))
        self.assertEqual(5, labcluster.pct([5, 1, 3, 2, 4], 0.99))
        self.assertEqual(3, labcluster.pct([5, 1, 3, 2, 4], 0.5))
        self.assertNotEqual(labcluster.pct([], 0.5), labcluster.pct([], 0.5))  # NaN
        self.assertEqual(f"{nlab.SUBNET}.3", labcluster.ip(3))

    def test_flink_runner_summarizes_every_mode_against_exact(self):
        run = load_runner("flink")
        lines = []
        for mode, lat in (("exact", (200, 300)), ("before", (500, 900)), ("after", (100, 150))):
            for i, l in enumerate(lat):
                lines.append(f"WINDOW mode={mode} run=0 window_end={i} latency_ms={l} first_answer_ms=1")
            lines.append(
                f"RESULT mode={mode} run=0 windows=2 avg_answers=32 expected_pairs=32 outside_emax=0 "
                f"wrong_or_missing_counts=0 max_rel_error=0.0100 sample_fraction=0.5000 "
                f"latency_p50_ms=1 latency_max_ms=1 input_rate=20000 sustained_records_per_s=19900"
            )
        lines.append(
            "RESULT mode=exact-warmup run=-1 windows=2 avg_answers=32 expected_pairs=32 outside_emax=9 "
            "wrong_or_missing_counts=9 max_rel_error=0.9 sample_fraction=1 input_rate=20000 "
            "sustained_records_per_s=1"
        )
        lines.append(
            "RESULT mode=plain-flink run=0 seconds=7.366 records_per_s=135759 answers=5260 "
            "sampled_fraction=1.0000"
        )  # FlinkBench overhead: not a latency run
        lines.append("SUMMARY overhead: flag off vs plain 0.98")
        text = "\n".join(run.summarize(lines, "slack"))
        self.assertIn("exact p50 300 ms p99 300 ms", text)
        self.assertIn("before p50 900 ms p99 900 ms; ratio to exact p50 3.00 p99 3.00", text)
        self.assertIn("after p50 150 ms p99 150 ms; ratio to exact p50 0.50 p99 0.50", text)
        self.assertIn(
            "exact: sustained records/s (median of runs) 19900 at input 20000/s; outside e_max 0;", text
        )
        self.assertNotIn("warmup", text)
        self.assertNotIn("plain-flink", text)
        self.assertIn("[slack] overhead: SUMMARY overhead: flag off vs plain 0.98", text)

    def test_spark_runner_summarizes_its_result_file(self):
        run = load_runner("spark")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.txt")
            with open(path, "w") as f:
                f.write(
                    "RESULT mode=exact median_s=2.0 ratio_vs_exact=1.0 max_rel_error=0 "
                    "group_aggregates_outside_emax=0 sample_fraction=1 all_s=[2.0,2.1] switch=slack\n"
                    "RESULT mode=approx median_s=1.0 ratio_vs_exact=0.5 max_rel_error=0.01 "
                    "group_aggregates_outside_emax=0 sample_fraction=0.3 all_s=[1.0,1.1] switch=slack\n"
                    "RESULT mode=passthrough manager=sort median_s=1.0 switch=slack\n"
                    "RESULT mode=passthrough manager=approx median_s=1.1 switch=slack\n"
                )
            text = "\n".join(run.summarize(path))
        self.assertIn("[slack] approx     median JCT    1.00 s  ratio 0.50", text)
        self.assertIn("overhead +10.0%", text)

    @unittest.skipIf(os.geteuid() == 0, "the refusal is for non-root users")
    def test_runners_refuse_without_root(self):
        for framework in ("spark", "flink"):
            r = subprocess.run(
                [sys.executable, os.path.join(ROOT, "benchmarks", framework, "netlab", "run.py")],
                env={**os.environ, "PYTHONPATH": HERE},
                capture_output=True,
                text=True,
                timeout=60,
            )
            self.assertNotEqual(0, r.returncode, framework)


class LifeCycleTest(unittest.TestCase):
    NAME = f"lct{os.getpid() % 100000}"

    @unittest.skipIf(can_run_lab() is not None, can_run_lab() or "")
    def test_up_client_background_down(self):
        with tempfile.TemporaryDirectory() as tmp:
            lab = labcluster.LabCluster(self.NAME, 3, "100mbit", "150kb", tmp)
            try:
                lab.up("slack")
                rc, text, _ = lab.run_client(1, ["ip", "-4", "-o", "addr", "show"], "client.log", 30)
                self.assertEqual(0, rc)
                self.assertIn(labcluster.ip(1), text)
                lab.start_background(3, (2,), 0.5)
                lab.check_alive()
                # a second client that lasts 3 s, while the background runs
                rc, _, secs = lab.run_client(1, ["sleep", "3"], "sleep.log", 30)
                self.assertEqual(0, rc)
                self.assertGreaterEqual(secs, 3)
                self.assertIn("prio", lab.tc_classes(2))
            finally:
                lab.down()
            self.assertEqual([], nlab.lab_namespaces(self.NAME))
            self.assertEqual([], lab.procs)
            [line] = lab.background_lines("slack", 3, (2,))
            self.assertRegex(line, r"# \[slack\] iperf3 h3->h2: mean of \d+ 1-s intervals [0-9.]+ Mbit/s")


if __name__ == "__main__":
    unittest.main()
