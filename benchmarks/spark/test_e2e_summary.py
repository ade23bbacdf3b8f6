#!/usr/bin/env python3
"""Tests of benchmarks/spark/e2e_summary.py (stdlib unittest, no Spark):

python3 benchmarks/spark/test_e2e_summary.py -v
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_summary as es  # noqa: E402


def line(mode, all_s, config="network-bound", rnd=1, extra="", cpu=10.0, rows=4000000):
    return (
        f"RESULT round={rnd} mode={mode} config={config} query={'wide' if config == 'network-bound' else 'sampled'} "
        f"rows={rows} generated_gb=0.9 runs={len(all_s)} median_s={sorted(all_s)[len(all_s) // 2]} "
        f"all_s=[{','.join(str(x) for x in all_s)}] driver_cpu_s=1.0 executor_cpu_s={cpu} peak_task_exec_mb=1.0 "
        f"spilled_mb=0.0 shuffle_write_mb=50.0 remote_read_mb=25.0 executor_peak_heap_mb=[100,110] "
        f"executor_peak_rss_mb=[300,310]{extra}\n"
    )


APPROX = " sample_fraction=0.01 groups_below_target=0 groups_short_of_plan=0 approx_read_mb=1.5"
CHECK = " groups=24 groups_outside={} group_aggregates_outside_emax={}/72 max_rel_error=0.04"


class Summary(unittest.TestCase):
    def run_summary(self, text, *more):
        d = tempfile.mkdtemp()
        raw = os.path.join(d, "raw.txt")
        with open(raw, "w") as f:
            f.write(text)
        out = os.path.join(d, "summary.json")
        rc = es.main(
            [raw, "--out", out, "--command", "bash x", "--commit", "abc1234", "--load-start", "1 2 3", *more]
        )
        self.assertEqual(0, rc)
        with open(out) as f:
            return json.load(f), out, raw

    def test_one_cell_per_config_switch_mode_with_the_issue_keys(self):
        text = (
            "# a comment\n"
            + line("exact", [10.0, 12.0, 11.0])
            + line("atp", [2.0, 3.0, 2.5], extra=APPROX + CHECK.format(1, 2))
            + line("tcp_ss", [3.0], extra=APPROX + CHECK.format(0, 0))
            + line("spark_sample", [4.0], extra=" sample_fraction=0.02" + CHECK.format(3, 5))
            + line("exact", [9.0], config="cpu-bound")
        )
        doc, _, _ = self.run_summary(text)
        self.assertEqual("bash x", doc["header"]["command"])
        self.assertEqual("abc1234", doc["header"]["commit"])
        self.assertEqual("1 2 3", doc["header"]["load"]["start"])
        keys = [(c["config"], c["switch"], c["mode"]) for c in doc["cells"]]
        self.assertEqual(
            [
                ("cpu-bound", "local", "exact"),
                ("network-bound", "local", "exact"),
                ("network-bound", "local", "atp"),
                ("network-bound", "local", "tcp_ss"),
                ("network-bound", "local", "spark_sample"),
            ],
            keys,
        )
        need = {
            "config",
            "switch",
            "mode",
            "runs",
            "p50_s",
            "p90_s",
            "groups_outside",
            "groups",
            "bottleneck_mb",
            "executor_cpu_s",
        }
        for c in doc["cells"]:
            self.assertTrue(need <= set(c), c)
        exact = doc["cells"][1]
        self.assertEqual((3, 11.0, 12.0), (exact["runs"], exact["p50_s"], exact["p90_s"]))
        self.assertEqual(0, exact["groups_outside"])
        self.assertEqual(24, exact["groups"], "the groups the other modes checked")
        self.assertEqual(25.0, exact["bottleneck_mb"])
        atp = doc["cells"][2]
        self.assertEqual(1, atp["groups_outside"])
        self.assertEqual(24, atp["groups"])
        self.assertEqual(1.5, atp["bottleneck_mb"], "the approximate modes' bytes are what the reducers read")
        self.assertEqual(3, doc["cells"][4]["groups_outside"])

    def test_rounds_pool_their_runs_and_old_names_map(self):
        text = (
            line("approx", [1.0, 2.0], rnd=1, extra=APPROX + CHECK.format(0, 0), cpu=4.0)
            + line("approx", [3.0, 4.0], rnd=2, extra=APPROX + CHECK.format(2, 3), cpu=6.0)
            + line("samplesend", [5.0], config="cpu-bound", extra=CHECK.format(0, 0))
        )
        doc, _, _ = self.run_summary(text)
        by = {(c["config"], c["mode"]): c for c in doc["cells"]}
        atp = by[("network-bound", "atp")]
        self.assertEqual(4, atp["runs"])
        self.assertEqual(2.5, atp["p50_s"])
        self.assertEqual(4.0, atp["p90_s"])
        self.assertEqual(2, atp["groups_outside"], "the worst round")
        self.assertEqual(5.0, atp["executor_cpu_s"])
        self.assertIn(("cpu-bound", "spark_sample"), by)

    def test_the_lab_counts_the_executors_downlinks_per_query(self):
        text = line("exact", [10.0, 10.0], extra=" switch=slack exec_rx_mb=600.0 bg_tx_mb=200.0") + line(
            "exact", [10.0], extra=" switch=fifo exec_rx_mb=100.0"
        )
        doc, _, _ = self.run_summary(text)
        by = {c["switch"]: c for c in doc["cells"]}
        self.assertEqual(200.0, by["slack"]["bottleneck_mb"], "(600 - 200 of background) / 2 runs")
        self.assertEqual(["exec_rx_mb-bg_tx_mb"], by["slack"]["bottleneck_source"])
        self.assertEqual(100.0, by["fifo"]["bottleneck_mb"])

    def test_merge_keeps_the_other_cells(self):
        doc, out, raw = self.run_summary(
            line("exact", [10.0]) + line("atp", [2.0], extra=APPROX + CHECK.format(0, 0))
        )
        with open(raw, "w") as f:
            f.write(line("atp", [1.0], extra=APPROX + CHECK.format(0, 0)))
        self.assertEqual(0, es.main([raw, "--out", out, "--command", "c", "--commit", "d", "--merge"]))
        with open(out) as f:
            merged = json.load(f)
        by = {c["mode"]: c for c in merged["cells"]}
        self.assertEqual(10.0, by["exact"]["p50_s"])
        self.assertEqual(1.0, by["atp"]["p50_s"])
        self.assertEqual("c", merged["header"]["command"])
        self.assertEqual(
            ["bash x"], [h["command"] for h in merged["header"]["earlier"]], "whose exact cell stayed"
        )

    def test_bad_lines_fail_by_name(self):
        with self.assertRaisesRegex(ValueError, "unknown mode"):
            es.cells([es.parse(line("sloppy", [1.0]))])
        with self.assertRaisesRegex(ValueError, "neither configuration"):
            es.cells([es.parse(line("exact", [1.0], config="-").replace("query=sampled", "query=avg"))])

    def test_percentile_is_nearest_rank(self):
        self.assertEqual(9.0, es.percentile([float(x) for x in range(1, 11)], 0.9))
        self.assertEqual(1.0, es.percentile([1.0], 0.9))


if __name__ == "__main__":
    unittest.main()
