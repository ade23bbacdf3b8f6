#!/usr/bin/env python3
"""Tests of the Kafka lab benchmark's parsing and summary writer (benchmarks/kafka/run.py). Stdlib unittest, no
lab, no JVM:

  PYTHONPATH=benchmarks/netlab python3 benchmarks/kafka/test_run.py -v

KafkaLab's result and window lines, the relay's RelayMetrics line, the background's bytes from `ss -tinH`, and
the summary document: one cell per (switch, mode) with the fields the issue names, means over runs, the plain
consumer's totals not counted as outside e_max, the ATP ratios per switch, and the JSON written as read back.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def load_runner():
    spec = importlib.util.spec_from_file_location("kafka_run", os.path.join(HERE, "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


run = load_runner()


def result(mode: str, wps: float, cells: int = 10, within: int = 10) -> str:
    return (
        f"window 0 done_ms 1000\nwindow 1 done_ms 3000\nresult mode {mode} records_returned 500 seconds 4.00 "
        f"windows 2 windows_per_s {wps:.3f} records_per_s 25000 cells {cells} within_emax {within} "
        f"worst_error 0.0210 load 3.5\n"
    )


class ParseTests(unittest.TestCase):
    def test_consumer_result_and_window_times(self):
        d = run.parse_consumer("# noise\n" + result("approx", 0.5, 10, 9))
        self.assertEqual("approx", d["mode"])
        self.assertEqual("0.500", d["windows_per_s"])
        self.assertEqual("9", d["within_emax"])
        self.assertEqual(1000, d["first_window_ms"])
        self.assertEqual(1500, d["window_gap_ms"])  # gaps 1000 and 2000
        with self.assertRaises(ValueError):
            run.parse_consumer("window 0 done_ms 5\n")

    def test_relay_metrics_line(self):
        self.assertIsNone(run.segments_over_tcp("INFO relay serves 10.77.0.2:7390\n"))
        text = (
            "INFO 1 sessions, RelayMetrics{sessions=1, pulls=4, empty=0, segments=4, segmentsOverTcp=0, x=1}\n"
            "INFO 1 sessions, RelayMetrics{sessions=1, pulls=9, empty=0, segments=9, segmentsOverTcp=7, x=1}\n"
        )
        self.assertEqual(7, run.segments_over_tcp(text))

    def test_background_bytes_count_only_the_iperf3_port(self):
        ss = (
            "ESTAB 0      0      10.77.0.1:5201 10.77.0.3:40000\n"
            "\t cubic rto:204 bytes_received:1448000 segs_out:10 segs_in:1001 data_segs_in:1000\n"
            "ESTAB 0      0      10.77.0.1:5201 10.77.0.3:40002\n"
            "\t cubic rto:204 bytes_received:37 segs_in:3\n"
            "ESTAB 0      0      10.77.0.1:51000 10.77.0.2:9092\n"
            "\t cubic rto:204 bytes_received:99999 segs_in:77\n"
        )
        self.assertEqual(1448000 + 1001 * 66 + 37 + 3 * 66, run.parse_tcp_rx(ss, 5201))
        self.assertEqual(0, run.parse_tcp_rx("", 5201))


class SummaryTests(unittest.TestCase):
    def runs(self):
        out = []
        for sw in ("fifo", "slack"):
            for mode, wps, mb, within, tcp in (
                ("plain", 0.1, 450e6, 3, None),  # the plain consumer's totals are the truth: never outside
                ("atp", 0.6, 30e6, 9, 0),
                ("tcp", 0.3, 31e6, 10, 40),
            ):
                for k in range(2):
                    d = run.parse_consumer(
                        result("plain" if mode == "plain" else "approx", wps + k * 0.1, 10, within)
                    )
                    d.update(switch=sw, mode=mode, wire_bytes=mb + k * 2e6)
                    if tcp is not None:
                        d["segments_over_tcp"] = tcp
                    out.append(d)
        return out

    def test_one_cell_per_switch_and_mode_with_the_issue_fields(self):
        header = {"command": "bash benchmarks/kafka/run.sh --runs 2", "commit": "abc1234", "load": "SHARED"}
        doc = run.summary(self.runs(), header)
        self.assertEqual(header, doc["header"])
        self.assertEqual(
            [
                ("fifo", "plain"),
                ("fifo", "atp"),
                ("fifo", "tcp"),
                ("slack", "plain"),
                ("slack", "atp"),
                ("slack", "tcp"),
            ],
            [(c["switch"], c["mode"]) for c in doc["cells"]],
        )
        for c in doc["cells"]:
            for key in ("mode", "windows_per_s", "consumer_link_mb", "windows_outside"):
                self.assertIn(key, c)
        plain, atp, tcp = doc["cells"][:3]
        self.assertEqual(2, atp["runs"])
        self.assertAlmostEqual(0.65, atp["windows_per_s"])
        self.assertEqual([0.6, 0.7], atp["windows_per_s_runs"])
        self.assertAlmostEqual(31.0, atp["consumer_link_mb"])
        self.assertEqual(2, atp["windows_outside"])  # 1 of 10 in each of 2 runs
        self.assertEqual(20, atp["window_strata_checked"])
        self.assertEqual(0, tcp["windows_outside"])
        self.assertEqual(0, plain["windows_outside"])
        self.assertEqual(0, plain["window_strata_checked"])
        self.assertIsNone(plain["segments_over_tcp"])
        self.assertEqual(0, atp["segments_over_tcp"])
        self.assertEqual(80, tcp["segments_over_tcp"])
        self.assertEqual(
            {"atp_over_plain": round(0.65 / 0.15, 3), "atp_over_tcp": round(0.65 / 0.35, 3)},
            doc["windows_per_s_ratios"]["fifo"],
        )

    def test_no_ratio_without_an_atp_cell(self):
        doc = run.summary([r for r in self.runs() if r["mode"] != "atp"], {})
        self.assertEqual({"fifo": {}, "slack": {}}, doc["windows_per_s_ratios"])

    def test_written_json_reads_back(self):
        doc = run.summary(self.runs(), {"command": "c", "commit": "x", "load": "l"})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "kafka", "e2e", "summary.json")
            run.write_summary(path, doc)
            with open(path) as f:
                self.assertEqual(doc, json.load(f))
            self.assertEqual(["summary.json"], os.listdir(os.path.dirname(path)))  # no .tmp left

    def test_unknown_mode_is_refused_naming_it(self):
        self.assertEqual(2, run.main(["--modes", "plain,udp"]))


if __name__ == "__main__":
    unittest.main()
