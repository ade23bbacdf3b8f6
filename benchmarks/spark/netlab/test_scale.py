#!/usr/bin/env python3
"""Tests of the network lab's scale runner summary (benchmarks/spark/netlab/scale.py). Stdlib unittest, no root:

PYTHONPATH=benchmarks/netlab python3 benchmarks/spark/netlab/test_scale.py -v
"""

from __future__ import annotations

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402

EXACT_S = (
    "RESULT mode=exact query=sampled rows={n} generated_gb={gb} runs=1 median_s={t} all_s=[{t}] "
    "driver_cpu_s=4.2 executor_cpu_s={cpu} peak_task_exec_mb=0.0 spilled_mb=0.0 shuffle_write_mb=45.1 "
    "remote_read_mb=22.6 executor_peak_heap_mb=[{h1},{h2}] executor_peak_rss_mb=[{r1},{r2}] switch={sw} "
    "wall_s=62.7 load=5.99,4.08,2.37->11.04,5.87,3.09 exec_tx_mb={tx} exec_rx_mb=1664.4 bg_mbps=104.7 "
    "port_drops=[2312,590]"
)
APPROX_S = (
    "RESULT mode=approx query=sampled rows={n} generated_gb={gb} runs=1 median_s={t} all_s=[{t}] "
    "driver_cpu_s=4.4 executor_cpu_s={cpu} peak_task_exec_mb=12.6 spilled_mb=0.0 shuffle_write_mb=1.1 "
    "remote_read_mb=0.3 executor_peak_heap_mb=[{h1},{h2}] executor_peak_rss_mb=[{r1},{r2}] "
    "sample_fraction=0.0157 groups_below_target=0 groups_short_of_plan=0 groups=24 "
    "group_aggregates_outside_emax={out}/72 max_rel_error=0.0666 switch={sw} wall_s=48.9 "
    "load=11.04,5.87,3.09->11.81,6.85,3.57 exec_tx_mb={tx} exec_rx_mb=1279.8 bg_mbps=104.6 "
    "port_drops=[48,80]"
)


def line(tmpl: str, **kw) -> dict[str, str]:
    return scale.parse(tmpl.format(**kw))


class ScaleSummaryTest(unittest.TestCase):
    def test_samplesend_ratios_beside_approx(self):
        ss = APPROX_S.replace("mode=approx", "mode=samplesend").replace(
            " groups_below_target=0 groups_short_of_plan=0", ""
        )
        rows = [
            line(
                EXACT_S, n=5000000, gb=0.16, t=80.0, cpu=60, h1=200, h2=190, r1=400, r2=410, sw="fifo", tx=100
            ),
            line(
                APPROX_S,
                n=5000000,
                gb=0.16,
                t=20.0,
                cpu=15,
                h1=150,
                h2=160,
                r1=380,
                r2=390,
                sw="fifo",
                tx=10,
                out=0,
            ),
            line(
                ss,
                n=5000000,
                gb=0.16,
                t=16.0,
                cpu=12,
                h1=150,
                h2=160,
                r1=380,
                r2=390,
                sw="fifo",
                tx=10,
                out=2,
            ),
        ]
        lines = scale.summary_lines(rows)
        a = [l for l in lines if " approx " in l][0]
        self.assertIn("approx/exact 0.25", a)
        self.assertIn("approx/samplesend 1.25", a)
        s = [l for l in lines if " samplesend " in l][0]
        self.assertIn("samplesend/exact 0.20", s)
        self.assertIn("outside e_max 2/72", s)

    def test_samplesend_needs_approx_before_it(self):
        with self.assertRaises(SystemExit):
            scale.main(["--modes", "exact,samplesend"])
        with self.assertRaises(SystemExit):
            scale.main(["--modes", "exact,samplesend,approx"])

    def test_issue31_modes_need_an_approximate_mode_before_the_sampling_ones(self):
        self.assertIsNone(scale.check_modes("exact,atp,tcp_ss,tcp_es,spark_sampleby,spark_sample".split(",")))
        self.assertIsNone(scale.check_modes(["exact", "tcp_es", "spark_sample"]))
        self.assertIn("needs atp, tcp_ss or tcp_es", scale.check_modes(["exact", "spark_sampleby", "atp"]))
        self.assertIn("needs atp, tcp_ss or tcp_es", scale.check_modes(["exact", "spark_sample"]))
        self.assertIn("unknown mode 'sampleby'", scale.check_modes(["exact", "sampleby"]))
        self.assertIn("samplesend needs approx", scale.check_modes(["exact", "samplesend", "approx"]))

    def test_parse_keeps_lists_and_numbers(self):
        r = line(
            EXACT_S, n=2000000, gb=0.06, t=35.81, cpu=23.9, h1=166, h2=164, r1=406, r2=405, sw="fifo", tx=38.7
        )
        self.assertEqual(r["executor_peak_heap_mb"], "[166,164]")
        self.assertEqual(scale.nums(r["executor_peak_rss_mb"]), [406.0, 405.0])
        self.assertEqual(scale.nums("[]"), [])
        self.assertEqual(r["load"], "5.99,4.08,2.37->11.04,5.87,3.09")

    def test_ratio_per_size_and_memory_growth_across_sizes(self):
        rows = [
            line(
                EXACT_S, n=5000000, gb=0.16, t=80.0, cpu=60, h1=200, h2=190, r1=400, r2=410, sw="fifo", tx=100
            ),
            line(
                APPROX_S,
                n=5000000,
                gb=0.16,
                t=20.0,
                cpu=15,
                h1=150,
                h2=160,
                r1=380,
                r2=390,
                sw="fifo",
                tx=10,
                out=0,
            ),
            line(
                EXACT_S,
                n=20000000,
                gb=0.64,
                t=320.0,
                cpu=240,
                h1=300,
                h2=310,
                r1=500,
                r2=520,
                sw="fifo",
                tx=400,
            ),
            line(
                APPROX_S,
                n=20000000,
                gb=0.64,
                t=60.0,
                cpu=45,
                h1=165,
                h2=150,
                r1=400,
                r2=390,
                sw="fifo",
                tx=12,
                out=1,
            ),
        ]
        lines = scale.summary_lines(rows)
        small = [l for l in lines if "rows=5000000" in l and " approx " in l][0]
        self.assertIn("approx/exact 0.25", small)
        self.assertIn("outside e_max 0/72", small)
        big = [l for l in lines if "rows=20000000" in l and " approx " in l][0]
        self.assertIn("approx/exact 0.19", big)
        self.assertIn("outside e_max 1/72", big)
        # rows per second: 20M / 60 s
        self.assertIn("0.33 M rows/s", big)
        growth = [l for l in lines if "peak memory as input grows" in l]
        self.assertEqual(len(growth), 2)
        approx = [l for l in growth if l.startswith("[fifo] approx")][0]
        # the larger executor of each size: heap 160 -> 165, RSS 390 -> 400
        self.assertIn("x4 (5000000 -> 20000000 rows)", approx)
        self.assertIn("heap 160 -> 165 MB (x1.03)", approx)
        self.assertIn("RSS 390 -> 400 MB (x1.03)", approx)
        exact = [l for l in growth if l.startswith("[fifo] exact")][0]
        self.assertIn("heap 200 -> 310 MB (x1.55)", exact)

    def test_switches_are_kept_apart_and_a_missing_exact_gives_no_ratio(self):
        rows = [
            line(
                APPROX_S,
                n=5000000,
                gb=0.16,
                t=20.0,
                cpu=15,
                h1=150,
                h2=160,
                r1=380,
                r2=390,
                sw="slack",
                tx=10,
                out=0,
            ),
            line(
                EXACT_S, n=5000000, gb=0.16, t=80.0, cpu=60, h1=200, h2=190, r1=400, r2=410, sw="fifo", tx=100
            ),
        ]
        lines = scale.summary_lines(rows)
        self.assertEqual(len(lines), 2)
        self.assertTrue(any(l.startswith("[slack]") and "approx/exact" not in l for l in lines))
        self.assertFalse(any("peak memory as input grows" in l for l in lines))

    def test_summarize_reads_only_result_lines(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# a comment with mode=exact rows=1\n")
            f.write(
                EXACT_S.format(n=1000, gb=0.0, t=2.0, cpu=1, h1=1, h2=2, r1=3, r2=4, sw="fifo", tx=1) + "\n"
            )
        try:
            lines = scale.summarize(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(len(lines), 1)
        self.assertIn("rows=1000 ", lines[0])


if __name__ == "__main__":
    unittest.main()
