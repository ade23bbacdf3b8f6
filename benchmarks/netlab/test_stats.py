#!/usr/bin/env python3
"""Tests of netlab.stats (pooling, bootstrap intervals, noise verdicts, A/B and paired summaries). Stdlib unittest,
seeded, no lab; about a second:

  PYTHONPATH=benchmarks/netlab python3 benchmarks/netlab/test_stats.py -v
"""

from __future__ import annotations

import csv
import math
import os
import random
import statistics
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netlab import stats  # noqa: E402

FIELDS = [
    "experiment",
    "workload",
    "pattern",
    "switch",
    "senders",
    "host_rate_ratio",
    "msr",
    "scheme",
    "status",
]


def write_jobs(path: str, rows: list[dict]) -> None:
    os.makedirs(path, exist_ok=True)
    keys = FIELDS + ["jct_ms", "start_to_running_ns"]
    with open(os.path.join(path, "jobs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in keys})


def job(scheme: str, jct: float, workload="fbkv", status="ok", start_ms=None) -> dict:
    return dict(
        experiment="schemes",
        workload=workload,
        pattern="incast",
        switch="slack",
        senders="3",
        host_rate_ratio="1.0",
        msr="0.75",
        scheme=scheme,
        status=status,
        jct_ms=f"{jct:.3f}",
        start_to_running_ns="" if start_ms is None else str(int(start_ms * 1e6)),
    )


class Basics(unittest.TestCase):
    def test_nearest_rank_and_median(self):
        xs = list(range(1, 46))  # 45 jobs: p99 is the largest, p50 the 23rd
        self.assertEqual(stats.nearest_rank(xs, 0.99), 45)
        self.assertEqual(stats.nearest_rank(xs, 0.5), 23)
        self.assertEqual(stats.median([1, 2, 3, 4]), 2.5)
        self.assertTrue(math.isnan(stats.nearest_rank([], 0.5)))
        self.assertEqual(stats.median([1, 2, math.inf]), 2)
        self.assertEqual(stats.median([1, math.inf]), math.inf)

    def test_ratio_edge_cases(self):
        self.assertEqual(stats.ratio(math.inf, math.inf), 1.0)
        self.assertEqual(stats.ratio(5, math.inf), 0.0)
        self.assertEqual(stats.ratio(5, 0), math.inf)
        self.assertEqual(stats.ratio(6, 3), 2.0)

    def test_geomean(self):
        self.assertAlmostEqual(stats.geomean([0.5, 2.0]), 1.0)
        self.assertAlmostEqual(stats.geomean([1, 10, 100]), 10.0)

    def test_sign_test(self):
        self.assertAlmostEqual(stats.sign_test_p(0, 10), 2 / 1024)
        self.assertEqual(stats.sign_test_p(5, 10), 1.0)
        self.assertAlmostEqual(stats.sign_test_p(9, 10), 2 * 11 / 1024)  # symmetric in wins / losses
        self.assertEqual(stats.sign_test_p(0, 0), 1.0)

    def test_deterministic(self):
        rng = random.Random(3)
        xs = [rng.expovariate(1) for _ in range(40)]
        self.assertEqual(stats.bootstrap_ci(xs, seed=7), stats.bootstrap_ci(xs, seed=7))
        self.assertNotEqual(stats.bootstrap_ci(xs, seed=7), stats.bootstrap_ci(xs, seed=8))


class Coverage(unittest.TestCase):
    def test_median_interval_covers_the_true_median_about_95_percent(self):
        # exponential(1): median ln 2. 150 seeded trials of 60 jobs; a 95 % interval should cover in ~95 % of
        # them (percentile bootstrap of a median: slightly under, so 0.88-0.99 is the accepted band)
        truth = math.log(2)
        rng = random.Random(2026)
        trials, covered = 150, 0
        for t in range(trials):
            xs = [rng.expovariate(1) for _ in range(60)]
            lo, hi = stats.bootstrap_ci(xs, level=0.95, resamples=250, seed=t)
            covered += lo <= truth <= hi
        self.assertGreaterEqual(covered / trials, 0.88)
        self.assertLessEqual(covered / trials, 0.99)

    def test_lower_level_gives_narrower_interval(self):
        rng = random.Random(5)
        xs = [rng.gauss(10, 2) for _ in range(80)]
        lo90, hi90 = stats.bootstrap_ci(xs, level=0.90, seed=1)
        lo99, hi99 = stats.bootstrap_ci(xs, level=0.99, seed=1)
        self.assertLessEqual(lo99, lo90)
        self.assertGreaterEqual(hi99, hi90)
        self.assertLess(lo90, statistics.median(xs))
        self.assertGreater(hi90, statistics.median(xs))

    def test_ratio_interval_of_equal_distributions_holds_one_about_90_percent(self):
        rng = random.Random(11)
        trials, holds = 100, 0
        for t in range(trials):
            a = [[rng.lognormvariate(3, 0.5) for _ in range(20)] for _ in range(3)]
            b = [[rng.lognormvariate(3, 0.5) for _ in range(20)] for _ in range(3)]
            lo, hi = stats.bootstrap_ratio_ci(a, b, level=0.90, resamples=200, seed=t)
            holds += stats.compare(lo, hi) == stats.NOISE
        self.assertGreaterEqual(holds / trials, 0.80)
        self.assertLessEqual(holds / trials, 0.98)

    def test_a_real_difference_is_beyond_noise(self):
        rng = random.Random(12)
        slower = 0
        for t in range(30):
            a = [[1.5 * rng.lognormvariate(3, 0.3) for _ in range(30)] for _ in range(3)]
            b = [[rng.lognormvariate(3, 0.3) for _ in range(30)] for _ in range(3)]
            lo, hi = stats.bootstrap_ratio_ci(a, b, resamples=200, seed=t)
            slower += stats.compare(lo, hi) == stats.SLOWER
            self.assertLess(lo, 1.5 * 1.2)
        self.assertGreaterEqual(slower, 29)

    def test_resampling_stays_within_runs(self):
        # two runs of very different level: resampled within runs, every resample keeps 10 jobs of each, so the
        # pooled median stays between the runs' levels; resampling the pooled list would draw all-low samples
        a = {"r1": [1.0] * 10, "r2": [100.0] * 11}
        b = {"r1": [1.0] * 10, "r2": [100.0] * 11}
        lo, hi = stats.bootstrap_ratio_ci(a, b, resamples=300, seed=1)
        self.assertEqual((lo, hi), (1.0, 1.0))


class AbAndPaired(unittest.TestCase):
    def test_ab_summary(self):
        a = {"1": [10.0, 11, 12, 13, 14], "2": [10.0, 10, 12, 13, 15]}
        b = {"1": [20.0, 22, 24, 26, 28], "2": [20.0, 20, 24, 26, 30]}
        r = stats.ab(a, b)
        self.assertEqual((r["a_jobs"], r["b_jobs"], r["a_runs"]), (10, 10, 2))
        self.assertAlmostEqual(r["b_over_a"], 2.0)
        self.assertEqual(r["per_run"], [2.0, 2.0])
        self.assertEqual(r["b_slower_runs"], 2)
        self.assertEqual(r["verdict"], stats.SLOWER)

    def test_paired_seeds(self):
        a = {s: 100.0 for s in range(10)}
        b = {s: 90.0 for s in range(9)}  # seed 9 only on one side: not a pair
        b[0] = 100.0  # a tie: left out of the sign test
        r = stats.paired(a, b)
        self.assertEqual(r["pairs"], 9)
        self.assertEqual((r["b_faster"], r["untied"]), (8, 8))
        self.assertAlmostEqual(r["sign_test_p"], 2 / 256)
        self.assertLess(r["geomean_b_over_a"], 1)

    def test_ordered_breaks(self):
        rng = random.Random(4)

        def cell(scale):
            return {str(k): [scale * rng.lognormvariate(3, 0.2) for _ in range(25)] for k in range(3)}

        # base 2.0 > rc 1.5 (holds beyond noise) = rc_mrdf 1.5 (within noise) < full 3.0 (a real break)
        rc = cell(1.5)
        c = {"base": cell(2.0), "rc": rc, "rc_mrdf": {k: list(v) for k, v in rc.items()}, "full": cell(3.0)}
        v = {
            (x["before"], x["step"]): x["verdict"]
            for x in stats.ordered_breaks(c, ["base", "rc", "rc_mrdf", "full"])
        }
        self.assertEqual(v[("base", "rc")], "holds")
        self.assertEqual(v[("rc", "rc_mrdf")], stats.NOISE)
        self.assertEqual(v[("rc_mrdf", "full")], "broken")
        # a scheme without jobs is skipped, not a break
        self.assertEqual(stats.ordered_breaks({"base": cell(1)}, ["base", "rc"]), [])


class Pooling(unittest.TestCase):
    def test_pool_jobs_and_failed_jobs(self):
        runs = {
            "r1": [
                job("atp_full", 10),
                job("atp_full", 12),
                job("tcp_es", 20),
                job("atp_full", 0, status="failed"),
            ],
            "r2": [job("atp_full", 11), dict(job("atp_full", 99), experiment="corun")],
        }
        p = stats.pool_jobs(runs, key=("scheme",))
        self.assertEqual(sorted(p[("atp_full",)]["r1"]), [10.0, 12.0, math.inf])
        self.assertEqual(p[("atp_full",)]["r2"], [11.0])  # the co-run row is not a schemes job
        self.assertEqual(stats.pool_jobs(runs, key=("scheme",), min_jobs=2)[("atp_full",)].keys(), {"r1"})

    def test_ab_table_of_an_ab_directory(self):
        with tempfile.TemporaryDirectory() as d:
            rng = random.Random(9)
            for rnd in (1, 2):
                for side, scale in (("old", 1.0), ("new", 0.5)):
                    rows = [job("atp_full", scale * rng.uniform(90, 110), start_ms=2.0) for _ in range(20)]
                    rows += [job("tcp_es", rng.uniform(45, 55)) for _ in range(20)]
                    write_jobs(os.path.join(d, f"slack-bg-{side}-{rnd}"), rows)
            os.makedirs(os.path.join(d, "corun-x"))  # not an A/B cell: ignored
            t = {(r["cell"], r["scheme"]): r for r in stats.ab_table(d)}
            full = t[("slack-bg", "atp_full")]
            self.assertAlmostEqual(full["b_over_a"], 0.5, delta=0.05)
            self.assertEqual(full["verdict"], stats.FASTER)
            self.assertEqual(len(full["per_run"]), 2)
            self.assertAlmostEqual(full["new_over_tcp_es"], 1.0, delta=0.1)
            self.assertAlmostEqual(full["start_p50_new"], 2.0)
            self.assertIsNone(t[("slack-bg", "tcp_es")]["new_over_tcp_es"])
            self.assertEqual(t[("slack-bg", "tcp_es")]["verdict"], stats.NOISE)


class IncastSim(unittest.TestCase):
    OUT = (
        "# 500 messages x 300 B, MSR 0.75\n"
        "full    slack   3  jobs  60/ 60  p50    63.16 ms (13.73x)  p99   194.17 ms (42.21x)  loss 0.465  "
        "sent/needed 0.48  util 0.96  drops c0:64/7564  failed 0 below 0\n"
        "full    fifo    8  jobs  32/ 32  p50   299.64 ms ( 6.30x)  p99  1668.56 ms (35.10x)  loss 0.208  "
        "sent/needed 1.40  util 0.98  drops c0:8711/41925  exact p50 356.94 approx p50 299.64  failed 0\n"
    )

    def test_parse(self):
        r = stats.parse_incast_sim(self.OUT)
        self.assertEqual(len(r), 2)
        self.assertEqual((r[0]["mode"], r[0]["switch"], r[0]["senders"]), ("full", "slack", 3))
        self.assertEqual(
            (r[0]["p50_ms"], r[0]["p99_ms"], r[0]["loss"], r[0]["util"]), (63.16, 194.17, 0.465, 0.96)
        )
        self.assertIsNone(r[0]["exact_p50_ms"])
        self.assertEqual(r[1]["exact_p50_ms"], 356.94)
        self.assertEqual((r[1]["done"], r[1]["total"]), (32, 32))
        labelled = stats.parse_incast_sim("fbkv spj=1 across=0 seed=1 " + self.OUT.splitlines()[1])
        self.assertEqual((labelled[0]["mode"], labelled[0]["p50_ms"]), ("full", 63.16))


class SimAb(unittest.TestCase):
    """netlab.simab: the incast-sim A/B harness (a stand-in simulator: a Python script printing result lines whose
    p50 depends on the seed and on a --slow flag)."""

    FAKE = (
        "import sys\n"
        "a = sys.argv[1:]\n"
        "seed = int(a[a.index('--seed') + 1])\n"
        "k = 1.5 if '--slow' in a else 1.0\n"
        "print('# config line')\n"
        "for sw in ('slack', 'fifo'):\n"
        "    p50 = k * (10 + seed)\n"
        "    print(f'full {sw} 3  jobs  60/ 60  p50 {p50:8.2f} ms (1x)  p99 {3 * p50:8.2f} ms (1x)  loss 0.1  util 0.9')\n"
    )

    def test_commands_alternate_and_carry_the_flags(self):
        from netlab import simab

        c = simab.commands("/a", "--x 1", "/b", "", 2, ["fbkv", "corun"])
        self.assertEqual(
            [(s, sh, seed) for s, sh, seed, _ in c[:4]],
            [("a", "fbkv", 1), ("b", "fbkv", 1)]
            + [
                ("a", "corun", 1),
                ("b", "corun", 1),
            ],
        )
        self.assertEqual(len(c), 8)
        self.assertEqual(c[0][3][0], "/a")
        self.assertEqual(c[0][3][-2:], ["--x", "1"])
        self.assertIn("--exact-every", c[2][3])
        with self.assertRaisesRegex(ValueError, "unknown shape 'fbxx'"):
            simab.commands("/a", "", "/b", "", 1, ["fbxx"])

    def test_run_and_summarize(self):
        from netlab import simab

        with tempfile.TemporaryDirectory() as d:
            sim = os.path.join(d, "fake-sim")
            with open(sim, "w") as f:
                f.write(f"#!{sys.executable}\n" + self.FAKE)
            os.chmod(sim, 0o755)
            out = os.path.join(d, "raw")
            rc = simab.main(
                [
                    "run",
                    "--a-sim",
                    sim,
                    "--b-sim",
                    sim,
                    "--b-flags=--slow",
                    "--out",
                    out,
                    "--seeds",
                    "4",
                    "--shapes",
                    "fbkv",
                ]
            )
            self.assertEqual(rc, 0)
            self.assertEqual(len(os.listdir(out)), 8)
            rows = {r["switch"]: r for r in simab.summarize(out)}
            self.assertEqual(set(rows), {"slack", "fifo"})
            r = rows["slack"]
            self.assertEqual(r["seeds"], 4)
            self.assertAlmostEqual(r["geomean_b_over_a"], 1.5)
            self.assertEqual(r["b_faster"], "0/4")
            self.assertAlmostEqual(r["sign_test_p"], 2 / 16)
            self.assertAlmostEqual(r["a_p50_ms"], 12.5)  # seeds 1-4: 11..14
            self.assertTrue(r["all_done"])


if __name__ == "__main__":
    unittest.main()
