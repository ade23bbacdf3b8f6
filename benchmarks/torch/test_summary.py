"""The PyTorch lab benchmark's summarizer on hand-made rank results (no lab, no torch):
python3 -m unittest discover -s benchmarks/torch -p 'test_*.py'"""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summary  # noqa: E402


def rank(r, steps, accuracy=0.9, by_group=None):
    return {
        "rank": r,
        "mode": "x",
        "params": 100,
        "step_s": steps,
        "accuracy": accuracy,
        "by_group": by_group or {},
    }


class SummaryTest(unittest.TestCase):
    def test_step_time_is_the_slowest_rank_after_the_warm_up(self):
        c = summary.run_cell(
            "slack",
            "gloo",
            0,
            [rank(0, [9.0, 1.0, 3.0, 2.0]), rank(1, [9.0, 2.0, 1.0, 2.5]), rank(2, [9.0, 1.5, 1.0, 1.0])],
            warmup=1,
        )
        # per step max over ranks: 2.0, 3.0, 2.5 (the 9 s warm-up left out)
        self.assertEqual(c["steps"], 3)
        self.assertEqual(c["step_p50_s"], 2.5)
        self.assertEqual(c["step_p90_s"], 3.0)
        self.assertAlmostEqual(c["step_mean_s"], 2.5)

    def test_groups_are_summed_over_ranks_and_accuracy_is_rank_0s(self):
        c = summary.run_cell(
            "fifo",
            "atp",
            1,
            [
                rank(1, [1, 1], 0.5, {"0": [3, 5], "2": [4, 4]}),
                rank(0, [1, 1], 0.8, {"0": [1, 5], "1": [2, 2]}),
            ],
            warmup=0,
        )
        self.assertEqual(c["accuracy"], 0.8)
        self.assertEqual(c["by_group"], {"0": [4, 10], "1": [2, 2], "2": [4, 4]})

    def test_bad_runs_are_refused(self):
        with self.assertRaisesRegex(ValueError, "no rank results"):
            summary.run_cell("slack", "gloo", 0, [], 0)
        with self.assertRaisesRegex(ValueError, "different step counts"):
            summary.run_cell("slack", "gloo", 0, [rank(0, [1, 1]), rank(1, [1])], 0)
        with self.assertRaisesRegex(ValueError, "none after the 2 warm-up"):
            summary.run_cell("slack", "gloo", 0, [rank(0, [1, 1])], 2)

    def cells(self, atp_step, atp_acc):
        mk = lambda sw, mode, run, step, acc: summary.run_cell(sw, mode, run, [rank(0, [step, step], acc)], 0)  # noqa: E731
        return [
            mk("slack", "gloo", 0, 1.0, 0.90),
            mk("slack", "gloo", 1, 3.0, 0.92),
            mk("slack", "atp_exact", 0, 4.0, 0.91),
            mk("slack", "atp", 0, atp_step, atp_acc),
        ]

    def test_ratio_over_median_gloo_and_accuracy_delta_in_points(self):
        (k,) = summary.checks(self.cells(1.2, 0.905))
        self.assertEqual(k["gloo_step_p50_s"], 2.0)  # median of 1 and 3
        self.assertEqual(k["atp_over_gloo"], 0.6)
        self.assertEqual(k["atp_exact_over_gloo"], 2.0)
        self.assertEqual(k["atp_accuracy_delta_points"], -0.5)  # 90.5 % against the mean 91 %
        self.assertTrue(k["target_met"])

    def test_target_missed_on_time_or_on_accuracy(self):
        self.assertFalse(summary.checks(self.cells(1.5, 0.91))[0]["target_met"])  # 0.75x
        self.assertFalse(summary.checks(self.cells(1.0, 0.895))[0]["target_met"])  # -1.5 points

    def test_no_target_without_atp_or_gloo(self):
        (k,) = summary.checks(self.cells(1.0, 0.9)[:3])
        self.assertNotIn("target_met", k)
        (k,) = summary.checks(self.cells(1.0, 0.9)[2:])
        self.assertEqual(k, {"switch": "slack"})

    def test_write_both_files(self):
        doc = summary.summarize(
            self.cells(1.2, 0.905), {"command": "bash benchmarks/torch/run.sh", "commit": "abc"}
        )
        with tempfile.TemporaryDirectory() as d:
            summary.write(d, doc)
            with open(os.path.join(d, "summary.json")) as f:
                self.assertEqual(json.load(f), doc)
            with open(os.path.join(d, "summary.md")) as f:
                md = f.read()
        self.assertIn("- command: bash benchmarks/torch/run.sh", md)
        self.assertIn("| slack | 0.6 | -0.5 | 2.0 | met |", md)


if __name__ == "__main__":
    unittest.main()
