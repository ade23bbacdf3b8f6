#!/usr/bin/env python3
"""Tests of the Flink lab benchmark's end-to-end summary (benchmarks/flink/netlab/run.py, issue 32). Stdlib
unittest, no lab, no JVM:

  PYTHONPATH=benchmarks/netlab python3 benchmarks/flink/netlab/test_summary.py -v

The modes' FlinkLatencyBench variants, the --configs syntax, metrics_poll.py's lines, and the summary document
from synthetic RESULT / WINDOW lines: one cell per (config, switch, mode) with the fields the issue names, warm-up
runs left out, epochs over TCP counted from the measured runs only, and the per-(config, switch) checks (exact kept
up or not, ATP's latency over the better TCP mode's and over exact's); the JSON written reads back.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def load_runner():
    spec = importlib.util.spec_from_file_location("flink_netlab_run_e2e", os.path.join(HERE, "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


run = load_runner()
sys.path.insert(0, HERE)
import metrics_poll  # noqa: E402  (this directory)


def bench_lines(modes: dict[str, tuple[list[int], int, int]]) -> list[str]:
    """mode -> (window latencies of one measured run, sustained records/s, outside e_max)."""
    out = []
    for mode, (lats, rps, outside) in modes.items():
        out.append(
            f"RESULT mode={mode}-warmup run=-1 windows=2 avg_answers=32 expected_pairs=32 outside_emax=99 "
            f"wrong_or_missing_counts=0 max_rel_error=0.9 sample_fraction=1 latency_p50_ms=1 latency_max_ms=1 "
            f"input_rate=20000 sustained_records_per_s=1 job_wall_s=1"
        )
        for i, l in enumerate(lats):
            out.append(f"WINDOW mode={mode} run=0 window_end={i * 2000} latency_ms={l} first_answer_ms=1")
        out.append(
            f"RESULT mode={mode} run=0 windows={len(lats)} avg_answers=32 expected_pairs=32 "
            f"outside_emax={outside} wrong_or_missing_counts=0 max_rel_error=0.0300 sample_fraction=0.3500 "
            f"latency_p50_ms=1 latency_max_ms=1 input_rate=20000 sustained_records_per_s={rps} job_wall_s=12"
        )
    return out


class ParseTests(unittest.TestCase):
    def test_modes_become_variants_and_unknown_ones_are_refused(self):
        v = run.variants_for(["exact", "atp", "tcp_ss", "tcp_es"])
        self.assertEqual(
            "atp:approx.dataPlane=atp;tcp_ss:approx.dataPlane=tcp,approx.tcpSendPolicy=sampleSend;"
            "tcp_es:approx.dataPlane=tcp,approx.tcpSendPolicy=earlySend",
            v,
        )
        with self.assertRaisesRegex(ValueError, "udp"):
            run.variants_for(["exact", "udp"])

    def test_configs(self):
        self.assertEqual(
            [("keeps-up", 0), ("falls-behind", 600)], run.parse_configs("keeps-up:0,falls-behind:600")
        )
        for bad in ("keeps-up", "keeps-up:x", "Keeps:0", "a:-1"):
            with self.assertRaisesRegex(ValueError, "--configs"):
                run.parse_configs(bad)
        self.assertEqual(2, run.main(["--configs", "nope"]))
        self.assertEqual(2, run.main(["--modes", "exact,udp"]))

    def test_poll_lines_keep_each_jobs_largest_value(self):
        text = (
            "job=tcp_ss_latency_run_0 jid=a value=3\njob=tcp_ss_latency_run_0 jid=a value=17\n"
            "job=atp_latency_run_0 jid=b value=0\nnoise\n"
        )
        self.assertEqual({"tcp_ss_latency_run_0": 17, "atp_latency_run_0": 0}, run.parse_poll(text))

    def test_poll_lines_of_several_metrics_are_kept_apart(self):
        text = (
            "job=atp_latency_run_0 jid=a metric=approxEpochsOverTcp value=0\n"
            "job=atp_latency_run_0 jid=a metric=approxGroupWaitsBeyondDeadline value=2\n"
            "job=atp_latency_run_0 jid=a metric=approxGroupWaitsBeyondDeadline value=5\n"
        )
        self.assertEqual({"atp_latency_run_0": 0}, run.parse_poll(text, run.OVER_TCP))
        self.assertEqual({"atp_latency_run_0": 5}, run.parse_poll(text, run.GROUP_WAITS))

    def test_poller_sums_the_metric_over_vertices_and_subtasks(self):
        answers = {
            "/jobs/j": {"vertices": [{"id": "v1"}, {"id": "v2"}]},
            "/jobs/j/vertices/v1/metrics": [{"id": "0.numRecordsIn"}],
            "/jobs/j/vertices/v2/metrics": [
                {"id": "0.approx receiver.approxEpochsOverTcp"},
                {"id": "1.approx receiver.approxEpochsOverTcp"},
                {"id": "1.approx receiver.approxEpochsOverTcpX"},
            ],
        }

        def get(_base, path):
            if "?get=" in path:
                return [{"id": "x", "value": "4"}, {"id": "y", "value": "5"}]
            return answers[path]

        real, metrics_poll.get = metrics_poll.get, get
        try:
            self.assertEqual(9.0, metrics_poll.job_sum("http://h:1", "j", "approxEpochsOverTcp"))
        finally:
            metrics_poll.get = real

    def test_client_returns_the_clients_lines_beside_the_polled_metrics(self):
        # Lab.client without a lab: the client's RESULT/WINDOW lines must come back, not the poller's log
        # (once they were read from the poll log, so every cell of a run was empty)
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "poll-t.log"), "w") as f:
                f.write(f"job=atp jid=1 metric={run.OVER_TCP} value=3\n")
            lab = object.__new__(run.Lab)
            lab.tmp = tmp
            lab.a = type("A", (), {"app_timeout": 1})()
            lab.log = lambda _msg: None
            lab.spawn = lambda *_a, **_k: object()
            lab.stop = lambda _p: None
            lab.run_client = lambda *_a: (0, "noise\nRESULT mode=atp run=0\nWINDOW mode=atp run=0\n", 1.0)
            real_sleep, run.time.sleep = run.time.sleep, lambda _s: None
            try:
                lines, polled = lab.client("cp", "Main", [], "t", poll_metrics=[run.OVER_TCP])
            finally:
                run.time.sleep = real_sleep
        self.assertEqual(["RESULT mode=atp run=0", "WINDOW mode=atp run=0"], lines)
        self.assertEqual({run.OVER_TCP: {"atp": 3}}, polled)


class SummaryTests(unittest.TestCase):
    def blocks(self):
        keeps = bench_lines(
            {
                "exact": ([300, 320, 400], 19900, 0),
                "atp": ([200, 210, 250], 19950, 1),
                "tcp_ss": ([300, 330, 500], 19950, 0),
                "tcp_es": ([310, 340, 450], 19950, 2),
            }
        )
        behind = bench_lines({"exact": ([4000, 9000], 12000, 0), "atp": ([700, 800], 19800, 0)})
        polled = {
            "atp_latency_run_0": 0,
            "tcp_ss_latency_run_0": 12,
            "tcp_es_latency_run_0": 30,
            "tcp_es_latency_run_-1": 5,
        }
        waits = {"atp_latency_run_0": 0, "tcp_ss_latency_run_0": 3, "tcp_ss_latency_run_-1": 9}
        return [
            dict(
                config="keeps-up",
                switch="slack",
                payload_bytes=0,
                lines=keeps,
                over_tcp=polled,
                group_waits=waits,
            ),
            dict(config="falls-behind", switch="slack", payload_bytes=600, lines=behind, over_tcp=None),
        ]

    def test_one_cell_per_config_switch_mode_with_the_issue_fields(self):
        doc = run.e2e_summary(self.blocks(), {"command": "c", "commit": "abc", "load": "SHARED"})
        self.assertEqual({"command": "c", "commit": "abc", "load": "SHARED"}, doc["header"])
        keys = [(c["config"], c["switch"], c["mode"]) for c in doc["cells"]]
        self.assertEqual(
            [
                ("keeps-up", "slack", "exact"),
                ("keeps-up", "slack", "atp"),
                ("keeps-up", "slack", "tcp_ss"),
                ("keeps-up", "slack", "tcp_es"),
                ("falls-behind", "slack", "exact"),
                ("falls-behind", "slack", "atp"),
            ],
            keys,
        )
        for c in doc["cells"]:
            for k in (
                "config",
                "switch",
                "mode",
                "windows",
                "p50_ms",
                "p99_ms",
                "records_per_s",
                "windows_outside",
            ):
                self.assertIn(k, c)
        atp = doc["cells"][1]
        self.assertEqual(
            (3, 210, 250, 19950, 1, 1),
            (
                atp["windows"],
                atp["p50_ms"],
                atp["p99_ms"],
                atp["records_per_s"],
                atp["windows_outside"],
                atp["runs"],
            ),
        )
        by = {c["mode"]: c["epochs_over_tcp"] for c in doc["cells"][:4]}
        self.assertEqual({"exact": 0, "atp": 0, "tcp_ss": 12, "tcp_es": 30}, by)  # the warm-up's 5 left out
        self.assertIsNone(doc["cells"][4]["epochs_over_tcp"])  # not polled
        waits = {c["mode"]: c["group_waits_beyond_deadline"] for c in doc["cells"][:4]}
        self.assertEqual({"exact": 0, "atp": 0, "tcp_ss": 3, "tcp_es": 0}, waits)  # warm-up left out
        self.assertIsNone(doc["cells"][4]["group_waits_beyond_deadline"])
        self.assertEqual(600, doc["cells"][5]["payload_bytes"])

    def test_latency_growth_is_the_backlogs_slope(self):
        self.assertAlmostEqual(0.0, run.latency_growth([(0, 300), (2000, 300), (4000, 300)]))
        # processing half the input: each window waits one more window length than the one before
        self.assertAlmostEqual(1.0, run.latency_growth([(0, 500), (2000, 2500), (4000, 4500)]))
        self.assertAlmostEqual(0.0, run.latency_growth([(2000, 10), (2000, 20)]))  # no spread in time

    def test_checks_name_the_better_tcp_mode_and_whether_exact_kept_up(self):
        keeps, behind = run.e2e_summary(self.blocks(), {})["checks"]
        self.assertEqual(0.025, keeps["exact_latency_growth"])  # (300, 320, 400) over 0, 2, 4 s
        self.assertTrue(keeps["exact_keeps_up"])
        self.assertEqual(2.5, behind["exact_latency_growth"])
        self.assertEqual("tcp_es", keeps["better_tcp_mode"])  # p99 450 < 500
        self.assertEqual(round(250 / 450, 3), keeps["atp_p99_over_tcp"])
        self.assertEqual(round(210 / 340, 3), keeps["atp_p50_over_tcp"])
        self.assertEqual(round(250 / 400, 3), keeps["atp_p99_over_exact"])
        self.assertFalse(behind["exact_keeps_up"])
        self.assertNotIn("atp_p99_over_tcp", behind)
        self.assertEqual(round(800 / 9000, 3), behind["atp_p99_over_exact"])

    def test_written_json_reads_back(self):
        doc = run.e2e_summary(self.blocks(), {"command": "c"})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "flink", "e2e", "summary.json")
            run.write_summary(path, doc)
            with open(path) as f:
                self.assertEqual(doc, json.load(f))
            self.assertEqual(["summary.json"], os.listdir(os.path.dirname(path)))


if __name__ == "__main__":
    unittest.main()
