#!/usr/bin/env python3
"""Smoke test of the network lab package benchmarks/netlab/netlab (stdlib unittest; pytest collects it too).

  python3 benchmarks/netlab/test_netlab.py -v          # or: python3 -m pytest benchmarks/netlab/test_netlab.py

Running this file puts benchmarks/netlab on sys.path (Python does that for a script's directory), so the package
imports as `netlab`. Pure tests always run: the switch queue plan, the host uplink, run specs and presets, the
per-job ideal JCT, percentiles, the summary.json schema and the verdict on synthetic jobs, skipping a scheme the
agent does not know. Lab tests need root and network namespaces and skip with a message otherwise; they bring labs
up (switch modes, host uplink shaping), send DSCP-marked traffic and check the qdisc counters, and run the
benchmark end to end at a tiny size (2 senders, every row and summary.json checked) and the incast sweep's set-up
(16 sending hosts). About 40 s as root.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

from netlab import bench, lab, results, schemes
from netlab import workload as wl

HERE = os.path.dirname(os.path.abspath(__file__))
FRAME = 1514
BUF = 200 * 1024


def module_env() -> dict:
    return {**os.environ, "PYTHONPATH": HERE}


class PlanTests(unittest.TestCase):
    def test_units(self):
        self.assertEqual(lab.parse_size("200kb"), 204800)
        self.assertEqual(lab.parse_size("1500"), 1500)
        self.assertEqual(lab.parse_rate("1gbit"), 10**9)
        self.assertEqual(lab.parse_rate("100mbit"), 10**8)
        with self.assertRaises(lab.LabError):
            lab.parse_rate("fast")

    def test_slack_buffers(self):
        plan = lab.QueuePlan.build("slack", "1gbit", "200kb")
        cls = plan.classes()
        self.assertEqual([c.index for c in cls], list(range(8)))
        for c in cls[1:]:
            self.assertEqual(c.buffer_bytes, (8 - c.index) * FRAME, c)  # class 7: 1 frame ... class 1: 7
        self.assertEqual(cls[7].buffer_bytes, FRAME)
        self.assertEqual(cls[0].buffer_bytes, BUF - 28 * FRAME)  # exact class gets the rest
        self.assertEqual(sum(c.buffer_bytes for c in cls), BUF)
        self.assertEqual([c.dscp for c in cls], list(lab.DEFAULT_DSCP_BY_CLASS))
        self.assertEqual([c.htb_prio for c in cls], list(range(8)))

    def test_slack_tc_commands(self):
        plan = lab.QueuePlan.build("slack", "1gbit", "200kb")
        cmds = [" ".join(c) for c in plan.tc_commands("p1")]
        filters = [c for c in cmds if c.startswith("filter")]
        self.assertEqual(len(filters), 8)
        for c in plan.classes():
            self.assertIn(f"match ip tos 0x{c.dscp << 2:02x} 0xfc flowid 1:{c.minor:x}", " | ".join(filters))
            self.assertIn(
                f"parent 1:{c.minor:x} handle {c.minor:x}: bfifo limit {c.buffer_bytes}", "|".join(cmds)
            )
            self.assertTrue(
                any(
                    f"classid 1:{c.minor:x} htb" in x
                    and f"prio {c.index} " in x
                    and "ceil 1000000000bit" in x
                    for x in cmds
                )
            )
        self.assertIn("0xb8 0xfc flowid 1:a", filters[0])  # DSCP 46 (EF) -> class 0
        self.assertIn("0x20 0xfc flowid 1:11", filters[-1])  # DSCP 8 (CS1) -> class 7
        self.assertTrue(cmds[0].endswith("htb default a"))  # unmarked traffic -> class 0

    def test_fifo_plan(self):
        plan = lab.QueuePlan.build("fifo", "1gbit", "200kb")
        (c,) = plan.classes()
        self.assertEqual(c.buffer_bytes, BUF)
        cmds = [" ".join(x) for x in plan.tc_commands("p1")]
        self.assertFalse([x for x in cmds if x.startswith("filter")])
        self.assertEqual(sum("bfifo" in x for x in cmds), 1)

    def test_other_mtu_and_map(self):
        plan = lab.QueuePlan.build("slack", "10gbit", "1mb", mtu=9000, dscp_by_class=(7, 6, 5, 4, 3, 2, 1, 0))
        self.assertEqual(plan.classes()[7].buffer_bytes, 9014)
        self.assertEqual(plan.classes()[7].tos, 0)

    def test_rejects_small_buffer_and_bad_map(self):
        with self.assertRaises(lab.LabError):
            lab.QueuePlan.build("slack", "1gbit", "20kb")  # < 29 frames
        with self.assertRaises(lab.LabError):
            lab.QueuePlan.build("slack", "1gbit", "200kb", dscp_by_class=(1,) * 8)
        with self.assertRaises(lab.LabError):
            lab.QueuePlan.build("prio", "1gbit", "200kb")

    def test_plan_cli(self):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "netlab",
                "plan",
                "--rate",
                "1gbit",
                "--buffer",
                "200kb",
                "--mode",
                "slack",
            ],
            capture_output=True,
            text=True,
            check=True,
            env=module_env(),
        )
        self.assertIn(
            "tc filter add dev p1 parent 1: protocol ip prio 1 u32 match ip tos 0xb8 0xfc", out.stdout
        )
        self.assertIn("Commodity switch", out.stdout)

    def test_host_link(self):
        link = lab.HostLink(lab.parse_rate("200mbit"))
        (cmd,) = link.tc_commands("eth0")
        self.assertEqual(cmd[:6], ["qdisc", "replace", "dev", "eth0", "root", "tbf"])
        self.assertEqual(cmd[cmd.index("rate") + 1], "200000000bit")
        self.assertEqual(int(cmd[cmd.index("burst") + 1]), 2 * FRAME)  # 100 us at 200 Mbit/s < 2 frames
        self.assertEqual(int(cmd[cmd.index("limit") + 1]), 1000 * FRAME)  # a Linux NIC's txqueuelen
        fast = lab.HostLink(lab.parse_rate("10gbit"))
        self.assertEqual(fast.burst_bytes, 125_000)  # 100 us at 10 Gbit/s


class RunSpecTests(unittest.TestCase):
    def test_parse_and_layout(self):
        spec = bench.RunSpec.parse("incast/slack/16/1")
        self.assertEqual(
            (spec.pattern, spec.switch, spec.senders, spec.host_rate_ratio), ("incast", "slack", 16, 1)
        )
        senders, receivers, bg = spec.layout()
        self.assertEqual(senders, list(range(2, 18)))  # one namespace per sender
        self.assertEqual(receivers, [1])
        self.assertEqual(bg, 18)
        a2a = bench.RunSpec.parse("all-to-all/slack/4/1")
        self.assertEqual(a2a.layout(), ([1, 2, 3, 4], [1, 2, 3, 4], 5))
        for bad in (
            "incast/slack/16",
            "ring/slack/3/1",
            "incast/prio/3/1",
            "incast/slack/0/1",
            "incast/slack/3/0",
        ):
            with self.assertRaises(ValueError, msg=bad):
                bench.RunSpec.parse(bad)
        with self.assertRaises(ValueError):
            schemes.check(["atp_full", "tcp_bbr"])

    def test_presets(self):
        full = bench.PRESETS["full"]
        for spec in full["runs"]:
            spec.validate()
        dc_incast = {
            (s.switch, s.senders) for s in full["runs"] if s.pattern == "incast" and s.host_rate_ratio == 1
        }
        for sw in ("slack", "fifo"):
            self.assertEqual({n for s, n in dc_incast if s == sw}, {3, 8, 16, 32})  # the incast-degree sweep
        self.assertIn(5, {s.host_rate_ratio for s in full["runs"]})  # the stress configuration
        # the 18 ablation cells: 2 workloads x 3 (pattern, switch) x 3 MSRs, every scheme, datacenter
        every = [s for s in full["runs"] if set(s.schemes) == set(schemes.ALL) and s.host_rate_ratio == 1]
        self.assertEqual(len(every) * len(full["jobs"]) * len(full["msrs"]), 18)
        self.assertLess(bench.expected_seconds(full), 45 * 60)  # fits the ~40 min budget
        self.assertEqual(schemes.agent_scheme("atp_paper"), ("atp", "paper"))
        self.assertEqual(schemes.agent_scheme("udp_blast"), ("udp", "full"))

    def test_unknown_mode_is_reported_not_fatal(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "agent")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\n[ "$3" = paper ] && echo "netlab-agent: bad --mode" >&2\nexit 2\n')
            os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
            self.assertIn("does not know --mode paper", schemes.unsupported_reason(fake, "atp_paper"))
            self.assertIsNone(schemes.unsupported_reason(fake, "atp_full"))
            self.assertIsNone(schemes.unsupported_reason(fake, "tcp_es"))


def job_row(
    scheme,
    jct,
    msr=0.75,
    status="ok",
    loss=0.1,
    senders=8,
    ratio=1.0,
    switch="slack",
    workload_="fbhd",
    pattern="incast",
    job_bytes=1_000_000,
    experiment="schemes",
    kind="approx",
    **extra,
):
    rate, rtt = 200_000_000, 0.1
    row = dict(
        experiment=experiment,
        workload=workload_,
        pattern=pattern,
        switch=switch,
        senders=senders,
        host_rate_ratio=ratio,
        scheme=scheme,
        kind=kind,
        job=1,
        sender=2,
        receiver=1,
        msr=msr,
        messages=100,
        job_bytes=job_bytes,
        production_ms=5.0,
        start_s=0.0,
        jct_ms=jct,
        ideal_ms=results.ideal_ms(msr, job_bytes, rate, rtt),
        target=75,
        sent=100,
        delivered=90,
        lost=10,
        measured_loss=loss,
        met_msr=status == "ok",
        status=status,
        bytes_sent=job_bytes,
        packets=700,
        retransmissions=0,
        epochs=3,
        time_in_class_ms="",
        bottleneck_bps=rate,
        base_rtt_ms=rtt,
    )
    row.update(extra)
    return row


class WorkloadTests(unittest.TestCase):
    def test_incast_spreads_every_msr_over_every_sender(self):
        # Regression: senders and MSRs were both assigned round robin by job index, so with 3 senders and 3 MSRs
        # every job of one MSR came from one host (the "3 senders" cells were one sender per MSR).
        msrs = [0.5, 0.75, 0.9]
        for n_senders in (2, 3, 6, 8, 32):
            senders = list(range(2, 2 + n_senders))
            for workload in ("fbkv", "fbhd"):
                jobs = wl.generate(workload, 90, senders, [1], msrs, 200_000_000, 0.8, seed=7)
                for msr in msrs:
                    mine = [j.sender for j in jobs if j.msr == msr]
                    self.assertEqual(len(mine), 30)
                    self.assertGreaterEqual(len(set(mine)), min(n_senders, 15), (workload, n_senders, msr))
                    top = max(mine.count(h) for h in set(mine))
                    share = 1 / n_senders  # a fair share plus three binomial standard deviations
                    self.assertLessEqual(
                        top,
                        30 * share + 3 * math.sqrt(30 * share * (1 - share)) + 1,
                        (workload, n_senders, msr),
                    )
                # balanced: every sender once in each block of n_senders consecutive jobs
                for b in range(0, 90 - n_senders + 1, n_senders):
                    self.assertEqual(sorted(j.sender for j in jobs[b : b + n_senders]), senders)

    def test_placement_does_not_change_sizes_or_arrivals(self):
        a = wl.generate("fbkv", 40, [2, 3, 4], [1], [0.75], 200_000_000, 0.8, seed=3)
        b = wl.generate("fbkv", 40, list(range(2, 10)), [1], [0.75], 200_000_000, 0.8, seed=3)
        self.assertEqual([(j.start_us, j.sizes) for j in a], [(j.start_us, j.sizes) for j in b])


class ResultsTests(unittest.TestCase):
    def test_ideal_ms(self):
        # 0.75 x 1 MB at 200 Mbit/s = 30 ms, plus one 0.1 ms base RTT
        self.assertAlmostEqual(results.ideal_ms(0.75, 1_000_000, 200_000_000, 0.1), 30.1)
        self.assertAlmostEqual(results.ideal_ms(1.0, 25_000, 200_000_000, 0.0), 1.0)

    def test_percentile(self):
        xs = list(range(1, 101))
        self.assertEqual(results.percentile(xs, 0.5), 50.5)  # the median
        self.assertAlmostEqual(results.percentile(xs, 0.99), 99.01)
        self.assertEqual(results.percentile([5, 1, 3], 0.5), 3)
        self.assertAlmostEqual(results.percentile([1, 2, 3], 0.99), 2.98)  # few jobs: near the slowest
        self.assertEqual(results.percentile([1, 2, math.inf], 0.5), 2)
        self.assertEqual(results.percentile([1, 2, math.inf], 0.99), math.inf)  # a failed job is inf
        self.assertEqual(results.percentile([7.0], 0.99), 7.0)
        self.assertTrue(math.isnan(results.percentile([], 0.5)))

    def write(self, d, rows, run=None):
        results.write_rows(os.path.join(d, "jobs.csv"), rows)
        return results.summarize(d, run or {"preset": "synthetic"})

    def test_summary_schema_and_failures(self):
        rows = [job_row("atp_full", 10.0 + i) for i in range(9)] + [
            job_row("atp_full", 5.0, status="timeout")
        ]
        rows += [job_row("tcp_es", 20.0 + i, loss=0.25) for i in range(10)]
        rows += [job_row("udp_blast", 3.0, loss=0.5) for _ in range(4)]
        rows += [job_row("atp_full", 40.0, experiment="corun", kind="exact", msr=1.0, loss=0.0)]
        with tempfile.TemporaryDirectory() as d:
            res = self.write(d, rows)
            with open(os.path.join(d, "summary.json")) as f:
                on_disk = json.load(f)  # strict JSON: no NaN/Infinity
            self.assertEqual(on_disk["cells"], res["cells"])
            self.assertEqual(len(res["cells"]), 3)  # corun rows are not cells
            for c in res["cells"]:
                for k in (
                    "workload",
                    "pattern",
                    "switch",
                    "senders",
                    "host_rate_ratio",
                    "msr",
                    "scheme",
                    "jobs",
                    "failed",
                    "p50_ms",
                    "p99_ms",
                    "ideal_p50_ms",
                    "loss_above_allowance",
                ):
                    self.assertIn(k, c)
            full = next(c for c in res["cells"] if c["scheme"] == "atp_full")
            self.assertEqual((full["jobs"], full["failed"]), (10, 1))
            self.assertEqual(full["p50_ms"], 14.5)  # failed job = slowest
            self.assertIsNone(full["p99_ms"])  # ... so p99 is infinite -> null
            self.assertAlmostEqual(full["ideal_p50_ms"], 30.1)
            self.assertEqual(full["loss_above_allowance"], 0)
            es = next(c for c in res["cells"] if c["scheme"] == "tcp_es")
            self.assertEqual(es["loss_above_allowance"], 0)  # 0.25 = 1 - 0.75 exactly: allowed
            udp = next(c for c in res["cells"] if c["scheme"] == "udp_blast")
            self.assertEqual(udp["loss_above_allowance"], 4)
            self.assertEqual(res["corun"]["exact_slack"]["p50_ms"], 40.0)
            self.assertNotIn("exact_slack_over_fifo", res["corun"])  # no FIFO phase: no ratio
            self.assertEqual(res["run"]["name"], os.path.basename(d))

    def test_verdict(self):
        rows = []
        # ablation order monotone at MSR 0.75, not at 0.5 (RC slower than Base)
        for msr, base, rc, rcm, full in ((0.75, 40, 30, 20, 10), (0.5, 20, 30, 15, 10)):
            for s, v in (("atp_base", base), ("atp_rc", rc), ("atp_rc_mrdf", rcm), ("atp_full", full)):
                rows += [job_row(s, float(v), msr=msr) for _ in range(3)]
        rows += [job_row("tcp_es", 20.0) for _ in range(3)] + [job_row("tcp_ss", 8.0) for _ in range(3)]
        rows += [job_row("atp_full", 500.0, senders=16) for _ in range(3)]
        rows += [job_row("tcp_es", 400.0, senders=16) for _ in range(3)]
        rows += [job_row("atp_base", 1.0, senders=16, status="peer dead")]
        rows += [job_row("atp_full", 10.0, ratio=5.0, loss=0.3)]  # stress: loss above the allowance
        for sw, jct in (("fifo", 100.0), ("slack", 40.0)):
            rows += [job_row("atp_full", jct, experiment="corun", kind="exact", msr=1.0, switch=sw, loss=0.0)]
        with tempfile.TemporaryDirectory() as d:
            v = self.write(d, rows)["verdict"]
        self.assertEqual(v["datacenter_cells"], 2)
        cell8 = next(c for c in v["per_cell"] if c["senders"] == 8 and c["host_rate_ratio"] == 1)
        self.assertAlmostEqual(cell8["p50_vs_es"], 0.5)
        self.assertAlmostEqual(cell8["p50_vs_ss"], 1.25)
        self.assertTrue(cell8["met_p50_vs_es"])
        self.assertFalse(cell8["met_p50_vs_ss"])
        self.assertNotIn("met_p99_vs_es", cell8)  # < 16 senders: no p99 target
        cell16 = next(c for c in v["per_cell"] if c["senders"] == 16)
        self.assertAlmostEqual(cell16["p99_vs_es"], 1.25)
        self.assertFalse(cell16["met_p99_vs_es"])
        self.assertEqual((v["p99_cells"], v["p99_vs_es_met"]), (1, 0))
        self.assertEqual((v["p50_vs_es_met"], v["p50_vs_ss_met"]), (1, 0))
        self.assertEqual((v["monotone_cells"], v["ablation_cells"]), (1, 2))
        self.assertEqual(v["atp_failed"], 1)
        self.assertEqual(v["atp_failed_by_scheme"]["atp_base"], 1)
        self.assertEqual(v["atp_loss_above_allowance"], 1)
        self.assertAlmostEqual(v["corun_exact_slack_over_fifo"], 0.4)
        self.assertEqual(v["start_waits_reported"], 0)

    def test_ablation_breaks_against_noise(self):
        # A break within the cell's spread (Base's and RC's jobs overlap; RC's p50 is higher by one job) is noise;
        # Full at twice RC+MRDF's jobs with no overlap is a real break. Every other step holds.
        spread = [10.0 + i for i in range(20)]  # 10..29 ms
        rows = [job_row("atp_base", v) for v in spread]
        rows += [job_row("atp_rc", v + 1.0) for v in spread]  # p50 +1 ms: a break, within noise
        rows += [job_row("atp_rc_mrdf", v / 4) for v in spread]
        rows += [job_row("atp_full", v / 2) for v in spread]  # 2x RC+MRDF, every job: beyond noise
        rows += [job_row("tcp_es", 20.0) for _ in range(3)]
        with tempfile.TemporaryDirectory() as d:
            v = self.write(d, rows)["verdict"]
        (cell,) = v["ablation"]
        self.assertFalse(cell["monotone"])
        self.assertEqual(cell["breaks_beyond_noise"], ["atp_full>atp_rc_mrdf"])
        self.assertEqual((v["monotone_cells"], v["ablation_cells_no_real_break"]), (0, 0))
        # the same cell without the Full break: only the noisy one is left
        rows = [r for r in rows if r["scheme"] != "atp_full"] + [job_row("atp_full", v / 5) for v in spread]
        with tempfile.TemporaryDirectory() as d:
            v = self.write(d, rows)["verdict"]
        self.assertEqual(v["ablation"][0]["breaks_beyond_noise"], [])
        self.assertEqual((v["monotone_cells"], v["ablation_cells_no_real_break"]), (0, 1))

    def test_rotate_schemes(self):
        self.assertEqual(bench.rotated(["a", "b", "c"], 0), ["a", "b", "c"])
        self.assertEqual(bench.rotated(["a", "b", "c"], 4), ["b", "c", "a"])
        self.assertEqual(bench.rotated([], 3), [])
        with tempfile.TemporaryDirectory() as d:
            plain = bench.Bench("/bin/true", d, {"rate": "200mbit"}, verbose=False)
            self.assertEqual([plain.scheme_order(("x", "y")) for _ in range(3)], [["x", "y"]] * 3)
            rot = bench.Bench("/bin/true", d, {"rate": "200mbit", "rotate_schemes": True}, verbose=False)
            firsts = [rot.scheme_order(("x", "y", "z"))[0] for _ in range(6)]
            self.assertEqual(firsts, ["x", "y", "z", "x", "y", "z"])  # each scheme first equally often

    def test_break_beyond_noise(self):
        a = [10.0 + i for i in range(15)]
        self.assertFalse(results.break_beyond_noise(a, a))  # same jobs: never beyond noise
        self.assertFalse(results.break_beyond_noise(a, [x + 1.0 for x in a]))
        self.assertTrue(results.break_beyond_noise(a, [x * 2 for x in a]))
        self.assertFalse(results.break_beyond_noise([x * 2 for x in a], a))  # faster is no break
        self.assertTrue(results.break_beyond_noise(a, [math.inf] * 15))  # the step failed: slower
        self.assertFalse(results.break_beyond_noise([math.inf] * 15, a))
        self.assertFalse(results.break_beyond_noise([], a))
        self.assertEqual(
            results.break_beyond_noise(a, [x * 1.2 for x in a], seed=3),
            results.break_beyond_noise(a, [x * 1.2 for x in a], seed=3),
        )

    def test_agent_counters_and_start_wait(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [
                job_row(
                    "atp_full",
                    10.0,
                    announces_sent=2,
                    updates_sent=1,
                    dones_sent=1,
                    start_to_running_ns=2_000_000,
                    last_data_to_done_ns=300_000,
                    start_wait_rtts=20.0,
                ),
                job_row("atp_full", 12.0, announces_sent=1, start_to_running_ns=100_000, start_wait_rtts=1.0),
            ]
            res = self.write(d, rows)
            loaded = results.load_rows(os.path.join(d, "jobs.csv"))
        self.assertEqual(loaded[0]["announces_sent"], 2)
        self.assertIsNone(loaded[1]["updates_sent"])  # not reported: empty
        self.assertEqual(res["cells"][0]["max_start_wait_rtts"], 20.0)
        self.assertEqual(
            (res["verdict"]["start_waits_reported"], res["verdict"]["start_waits_over_target"]), (2, 1)
        )

    def test_ideal_with_background(self):
        # 0.75 x 1 MB at 200 - 50 Mbit/s left = 40 ms, plus one 0.1 ms base RTT
        self.assertAlmostEqual(results.ideal_bg_ms(0.75, 1_000_000, 200e6, 50e6, 0.1), 40.1)
        self.assertAlmostEqual(
            results.ideal_bg_ms(0.75, 1_000_000, 200e6, 0.0, 0.1),
            results.ideal_ms(0.75, 1_000_000, 200e6, 0.1),
        )  # no background: the ideal
        self.assertAlmostEqual(
            results.ideal_bg_ms(0.75, 1_000_000, 200e6, 50e6, 0.1, target_ready_ms=60.0), 60.1
        )
        self.assertAlmostEqual(
            results.ideal_bg_ms(0.75, 1_000_000, 200e6, 50e6, 0.1, target_ready_ms=10.0), 40.1
        )
        self.assertIsNone(results.ideal_bg_ms(0.75, 1_000_000, 200e6, None, 0.1))  # not measured
        self.assertEqual(results.ideal_bg_ms(0.75, 1_000_000, 200e6, 200e6, 0.1), math.inf)
        # the background's rate: acknowledged payload scaled to frames (1448 B of payload per 1514 B frame)
        self.assertAlmostEqual(results.bg_rate_bps(1448 * 1000, 1.0), 1514 * 1000 * 8)
        self.assertIsNone(results.bg_rate_bps(1000, 0.0))

    def test_cells_and_verdict_carry_ideal_bg(self):
        rows = [
            job_row(
                "atp_full",
                50.0 + i,
                bg_mbps=50.0,
                job_bytes=1_000_000 * (i + 1),
                ideal_bg_ms=results.ideal_bg_ms(0.75, 1_000_000 * (i + 1), 200e6, 50e6, 0.1),
            )
            for i in range(3)
        ]
        rows += [job_row("tcp_es", 100.0)]  # old row: no background measured
        with tempfile.TemporaryDirectory() as d:
            res = self.write(d, rows)
        full = next(c for c in res["cells"] if c["scheme"] == "atp_full")
        self.assertAlmostEqual(full["ideal_bg_p50_ms"], 80.1)  # median of 40.1, 80.1, 120.1
        self.assertAlmostEqual(full["bg_mbps"], 50.0)
        self.assertAlmostEqual(full["ideal_p50_ms"], 60.1)  # ideal_ms unchanged beside it
        es = next(c for c in res["cells"] if c["scheme"] == "tcp_es")
        self.assertIsNone(es["ideal_bg_p50_ms"])
        cell = res["verdict"]["per_cell"][0]
        self.assertAlmostEqual(cell["ideal_bg_p50_ms"], 80.1)
        self.assertAlmostEqual(cell["p50_vs_ideal_bg"], round(51.0 / 80.1, 3))
        self.assertAlmostEqual(cell["p50_vs_ideal"], round(51.0 / 60.1, 3))  # the verdict's ideal stays

    def test_corun_exact_alone(self):
        rows = []
        for exp, sw, jct in (
            ("corun", "fifo", 200.0),
            ("corun", "slack", 180.0),
            ("corun_alone", "fifo", 150.0),
            ("corun_alone", "slack", 120.0),
        ):
            rows += [job_row("atp_full", jct, experiment=exp, kind="exact", msr=1.0, switch=sw, loss=0.0)]
        rows += [job_row("atp_full", 90.0, experiment="corun", kind="approx", switch="slack")]
        with tempfile.TemporaryDirectory() as d:
            res = self.write(d, rows)
        co = res["corun"]
        self.assertEqual(co["exact_alone_fifo"]["p50_ms"], 150.0)
        self.assertEqual(co["exact_alone_slack"]["p50_ms"], 120.0)
        self.assertEqual(co["exact_slack"]["p50_ms"], 180.0)  # alone rows are not co-run rows
        self.assertEqual(co["approx_slack"]["jobs"], 1)
        self.assertAlmostEqual(co["exact_slack_over_fifo"], 0.9)
        self.assertAlmostEqual(co["exact_slack_over_alone"], 1.5)
        self.assertAlmostEqual(co["exact_fifo_over_alone"], round(200 / 150, 3))
        self.assertAlmostEqual(res["verdict"]["corun_exact_slack_over_fifo"], 0.9)  # the target's ratio stays
        self.assertAlmostEqual(res["verdict"]["corun_exact_slack_over_alone"], 1.5)
        self.assertEqual(res["cells"], [])  # neither is a schemes cell


class CounterTests(unittest.TestCase):
    QDISC = json.dumps(
        [
            {"kind": "htb", "handle": "1:", "root": True, "bytes": 9000, "packets": 6, "drops": 0},
            {"kind": "bfifo", "handle": "a:", "parent": "1:a", "bytes": 3028, "packets": 2, "drops": 1},
            {"kind": "bfifo", "handle": "b:", "parent": "1:b", "bytes": 1514, "packets": 1, "drops": 7},
        ]
    )
    SS = (
        "ESTAB 0 0 10.77.0.10:40000 10.77.0.1:5201\n\t cubic wscale:7,7 rto:204 bytes_sent:900 "
        "bytes_acked:1448000 bytes_received:0 segs_out:5\n"
        "ESTAB 0 0 10.77.0.10:40002 10.77.0.1:5201\n\t cubic bytes_acked:38 segs_out:2\n"
    )

    def test_parsers(self):
        self.assertEqual(
            lab.parse_qdisc_counters(self.QDISC),
            {0xA: dict(bytes=3028, packets=2, drops=1), 0xB: dict(bytes=1514, packets=1, drops=7)},
        )
        self.assertEqual(lab.parse_qdisc_counters(""), {})
        self.assertEqual(lab.parse_bytes_acked(self.SS), 1448038)
        self.assertEqual(lab.parse_bytes_acked("no tcp here"), 0)

    def test_phase_fields(self):
        c0 = dict(
            t=10.0,
            bg_acked=1000,
            port={0: dict(bytes=0, packets=0, drops=0), 1: dict(bytes=100, packets=1, drops=2)},
        )
        c1 = dict(
            t=12.0,
            bg_acked=1000 + 1448 * 2000,
            port={0: dict(bytes=25_000_000, packets=20, drops=3), 1: dict(bytes=100, packets=9, drops=10)},
        )
        got = bench.Bench.counter_fields(c0, c1)
        self.assertEqual(got["window_s"], 2.0)
        self.assertAlmostEqual(got["bg_mbps"], round(1514 * 2000 * 8 / 2 / 1e6, 2))
        self.assertEqual(
            (got["port_pkts"], got["port_drops"], got["port_mbps"]), ("20 8", "3 8", "100.0 0.0")
        )
        self.assertIsNone(bench.Bench.counter_fields(dict(c0, bg_acked=None), c1)["bg_mbps"])  # no background


def _lab_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "lab tests need root (network namespaces)"
    if not shutil.which("ip") or not shutil.which("tc"):
        return "lab tests need iproute2 (ip, tc)"
    probe = f"nlprobe{os.getpid()}"
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if p.returncode != 0:
        return f"cannot create network namespaces here: {p.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


SKIP = _lab_unavailable()

SEND = r"""
import socket, sys
dst, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for tos in map(int, sys.argv[4:]):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    for _ in range(count):
        s.sendto(b"n" * size, (dst, 9))
    s.close()
"""


def tc_size(n: int) -> str:
    """How tc prints a byte size (e.g. 204800 -> 200Kb, 1514 -> 1514b)."""
    if n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)}Mb"
    return f"{n // 1024}Kb" if n % 1024 == 0 else f"{n}b"


def tc_show(ns: str, what: str, dev: str = "p1") -> str:
    return subprocess.run(
        ["ip", "netns", "exec", ns, "tc", "-s", what, "show", "dev", dev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def class_stats(ns: str) -> dict[str, tuple[int, int]]:
    """classid -> (packets sent, packets dropped) from `tc -s class show`."""
    out = {}
    for m in re.finditer(
        r"class htb (1:[0-9a-f]+) .*?\n\s*Sent \d+ bytes (\d+) pkt \(dropped (\d+)", tc_show(ns, "class")
    ):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


@unittest.skipIf(SKIP, SKIP or "")
class LabTests(unittest.TestCase):
    NAME = f"nlt{os.getpid()}"

    def tearDown(self):
        lab.down(self.NAME, quiet=True)
        self.assertEqual(lab.lab_namespaces(self.NAME), [], "namespaces left behind")

    def send(self, host: int, tos_list, count=5, size=200):
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                f"{self.NAME}-h{host}",
                sys.executable,
                "-c",
                SEND,
                "10.77.0.1",
                str(count),
                str(size),
                *map(str, tos_list),
            ],
            check=True,
        )

    def bring_up(self, mode: str, host_link: lab.HostLink | None = None) -> lab.QueuePlan:
        plan = lab.QueuePlan.build(mode, "100mbit", "200kb")
        lab.up(self.NAME, 3, plan, quiet=True, host_link=host_link)
        self.assertEqual(
            sorted(lab.lab_namespaces(self.NAME)),
            sorted([f"{self.NAME}-sw", f"{self.NAME}-h1", f"{self.NAME}-h2", f"{self.NAME}-h3"]),
        )
        ping = subprocess.run(
            [sys.executable, "-m", "netlab", "ping", "--name", self.NAME, "--count", "2", "h2", "h1"],
            capture_output=True,
            text=True,
            env=module_env(),
        )
        self.assertEqual(ping.returncode, 0, ping.stdout + ping.stderr)
        self.assertIn("2 received", ping.stdout)
        return plan

    def test_slack_lab(self):
        plan = self.bring_up("slack")
        sw = f"{self.NAME}-sw"
        qd = tc_show(sw, "qdisc")
        self.assertIn("qdisc htb 1: root", qd)
        self.assertIn("default 0xa", qd)
        for c in plan.classes():
            self.assertRegex(
                qd, rf"qdisc bfifo {c.minor:x}: parent 1:{c.minor:x} limit {tc_size(c.buffer_bytes)}"
            )
        cl = tc_show(sw, "class")
        for c in plan.classes():
            self.assertRegex(
                cl,
                rf"class htb 1:{c.minor:x} parent 1:1 leaf {c.minor:x}: prio {c.index} "
                rf"rate \S+ ceil 100Mbit",
            )
        flt = tc_show(sw, "filter")
        for c in plan.classes():
            self.assertRegex(flt, rf"flowid 1:{c.minor:x} .*\n\s*match 00{c.tos:02x}0000/00fc0000 at 0")
        before = class_stats(sw)
        self.send(2, [c.tos for c in plan.classes()], count=5)
        after = class_stats(sw)
        for c in plan.classes():
            cid = f"1:{c.minor:x}"
            self.assertGreaterEqual(
                after[cid][0] - before[cid][0],
                5,
                f"class {c.index} ({cid}) counters: {before[cid]} -> {after[cid]}",
            )
        # A burst of 300 full-size datagrams into the lowest class (1-frame buffer) at 100 Mbit/s must overflow it;
        # the exact class (107 frames) is untouched.
        low, top = f"1:{plan.classes()[7].minor:x}", f"1:{plan.classes()[0].minor:x}"
        self.send(2, [plan.classes()[7].tos], count=300, size=1472)
        final = class_stats(sw)
        self.assertGreater(final[low][1], 0, f"no drops in the 1-frame class: {final[low]}")
        self.assertEqual(final[top][1], 0)

    def test_fifo_lab(self):
        plan = self.bring_up("fifo")
        sw = f"{self.NAME}-sw"
        qd = tc_show(sw, "qdisc")
        self.assertEqual(qd.count("qdisc bfifo"), 1, qd)
        self.assertIn(f"limit {tc_size(plan.buffer_bytes)}", qd)
        self.assertNotIn("u32", tc_show(sw, "filter"))
        before = class_stats(sw)["1:a"][0]
        self.send(3, [d << 2 for d in lab.DEFAULT_DSCP_BY_CLASS])
        self.assertGreaterEqual(class_stats(sw)["1:a"][0] - before, 40)

    def test_host_uplink_shaping(self):
        # Hosts at 10 Mbit/s behind a 100 Mbit/s port: a 300-datagram burst must queue in the sender's own
        # token bucket (overlimits), not at the switch, and nothing may be dropped at the host (1000-frame queue).
        link = lab.HostLink(lab.parse_rate("10mbit"))
        self.bring_up("fifo", host_link=link)
        for h in (1, 2, 3):
            qd = tc_show(f"{self.NAME}-h{h}", "qdisc", "eth0")
            m = re.search(r"qdisc tbf \S+: root .*rate 10Mbit burst (\d+)b lat ([0-9.]+)s", qd)
            self.assertIsNotNone(m, qd)
            self.assertLessEqual(abs(int(m.group(1)) - link.burst_bytes), 1, qd)  # tc rounds the bucket
            self.assertAlmostEqual(
                float(m.group(2)), link.limit_bytes * 8 / 10e6, places=1
            )  # limit as latency
        self.send(2, [0], count=300, size=1472)
        qd = tc_show(f"{self.NAME}-h2", "qdisc", "eth0")
        m = re.search(
            r"Sent \d+ bytes (\d+) pkt \(dropped (\d+), overlimits (\d+).*\n\s*backlog \S+ (\d+)p", qd
        )
        self.assertIsNotNone(m, qd)
        sent, dropped, overlimits, queued = map(int, m.groups())
        self.assertGreaterEqual(sent + queued, 300, qd)  # the burst still drains at 10 Mbit/s
        self.assertEqual(dropped, 0, qd)
        self.assertGreater(overlimits, 0, f"the uplink's token bucket never held a packet back: {qd}")
        rtt = lab.base_rtt_ms(self.NAME, 2, 1, count=5)
        self.assertGreater(rtt, 0)

    def test_up_twice_and_failed_up_cleans(self):
        plan = lab.QueuePlan.build("slack", "1gbit", "200kb")
        lab.up(self.NAME, 2, plan, quiet=True)
        lab.up(self.NAME, 2, plan, quiet=True)  # stale lab of the same name is removed first
        self.assertEqual(len(lab.lab_namespaces(self.NAME)), 3)
        lab.down(self.NAME, quiet=True)
        bad = dataclasses.replace(plan)
        object.__setattr__(
            bad, "tc_commands", lambda dev: [["qdisc", "add", "dev", dev, "root", "nosuchqdisc"]]
        )
        with self.assertRaises(lab.LabError) as ctx:
            lab.up(self.NAME, 3, bad, quiet=True)
        self.assertIn("torn down", str(ctx.exception))
        self.assertEqual(lab.lab_namespaces(self.NAME), [])


def _find_agent() -> str | None:
    root = os.path.dirname(os.path.dirname(HERE))
    for c in (
        os.environ.get("NETLAB_AGENT", ""),
        f"{root}/approx-core/target/native-build/netlab-agent",
        f"{root}/build/netlab-native/netlab-agent",
        f"{root}/native/build/netlab-agent",
    ):
        if c and os.access(c, os.X_OK):
            return c
    return None


@unittest.skipIf(SKIP, SKIP or "")
class SchemeRunTests(unittest.TestCase):
    """The benchmark end to end at tiny sizes, on a lab name of this process (so that concurrent test runs on one
    machine do not collide). Needs netlab-agent (built by `mvn install` into approx-core/target/native-build, or
    by benchmarks/netlab/run.sh; NETLAB_AGENT=path overrides) and iperf3."""

    NAME = f"nlb{os.getpid()}"

    def setUp(self):
        self.agent = _find_agent()
        if self.agent is None:
            self.skipTest("netlab-agent not built (mvn install or benchmarks/netlab/run.sh builds it)")
        if not shutil.which("iperf3"):
            self.skipTest("iperf3 missing (scripts/setup.sh installs it)")

    def tearDown(self):
        self.assertEqual(lab.lab_namespaces(self.NAME), [], "namespaces left behind")

    def run_bench(self, out: str, *args: str) -> tuple[list[dict], dict, dict]:
        rc = bench.main(
            [
                "--preset",
                "tiny",
                "--agent",
                self.agent,
                "--out",
                out,
                "--name",
                self.NAME,
                "--only",
                "schemes",
                *args,
            ]
        )
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out, "run.json")) as f:
            run = json.load(f)
        return results.load_rows(os.path.join(out, "jobs.csv")), summary, run

    def test_tiny_schemes(self):
        """2 FBKV-like jobs from 2 senders over the slack switch, datacenter configuration, background TCP, as
        TCP-EarlySend, ATP Full and ATP with the paper's law (or a clean skip where the engine lacks it)."""
        with tempfile.TemporaryDirectory() as out:
            rows, summary, run = self.run_bench(
                out, "--schemes", "tcp_es,atp_full,atp_paper", "--jobs", "fbkv=2"
            )
            ran = sorted({r["scheme"] for r in rows})
            skipped = {s["scheme"]: s["reason"] for s in summary["skipped"]}
            if "atp_paper" in skipped:
                self.assertIn("does not know --mode paper", skipped["atp_paper"])
                self.assertEqual(ran, ["atp_full", "tcp_es"])
            else:
                self.assertEqual(ran, ["atp_full", "atp_paper", "tcp_es"])
            self.assertEqual(len(rows), 2 * len(ran))
            (labinfo,) = run["labs"]
            self.assertEqual((labinfo["hosts"], labinfo["host_rate_bps"]), (4, 200_000_000))
            for r in rows:
                self.assertEqual(r["status"], "ok", r)
                self.assertTrue(r["met_msr"], r)
                self.assertGreaterEqual(r["delivered"], r["target"], r)
                self.assertLessEqual(r["measured_loss"], 1 - r["msr"] + 1e-9, r)
                self.assertGreater(r["jct_ms"], 0, r)
                self.assertLess(r["jct_ms"], 60_000, r)
                self.assertEqual(
                    (r["senders"], r["host_rate_ratio"], r["bottleneck_bps"]), (2, 1.0, 200_000_000)
                )
                self.assertGreater(r["base_rtt_ms"], 0)
                self.assertGreaterEqual(r["target_ready_ms"], 0)  # the target-th message's production
                self.assertAlmostEqual(
                    r["ideal_ms"],
                    results.ideal_ms(r["msr"], r["job_bytes"], 200_000_000, r["base_rtt_ms"]),
                    places=3,
                )
                if r.get("start_to_running_ns") is not None:
                    self.assertAlmostEqual(
                        r["start_wait_rtts"], r["start_to_running_ns"] / 1e6 / r["loaded_rtt_ms"], places=1
                    )
                # the slack switch's class 0 (150 KiB minus 28 frames of classes 1..7) drained at 200 Mbit/s
                self.assertAlmostEqual(
                    r["loaded_rtt_ms"], r["base_rtt_ms"] + (153_600 - 28 * 1514) * 8 / 200e6 * 1e3, places=3
                )
            self.assertEqual(len(summary["cells"]), len(ran))
            for c in summary["cells"]:
                self.assertEqual(set(results.CELL_FIELDS), set(c))
                self.assertEqual(
                    (
                        c["workload"],
                        c["pattern"],
                        c["switch"],
                        c["senders"],
                        c["host_rate_ratio"],
                        c["msr"],
                        c["jobs"],
                        c["failed"],
                        c["loss_above_allowance"],
                    ),
                    ("fbkv", "incast", "slack", 2, 1.0, 0.75, 2, 0, 0),
                )
                self.assertGreater(c["p99_ms"], 0)
                self.assertLessEqual(c["p50_ms"], c["p99_ms"])
            with open(os.path.join(out, "jobs.csv")) as f:
                self.assertEqual(next(csv.reader(f)), results.ROW_FIELDS)

    def test_incast_sweep_setup(self):
        """The incast sweep's set-up at a tiny size: 16 sending hosts (one namespace, uplink and agent each) with
        one FBKV-like job each, replayed in step (--start-at), FIFO switch, as TCP-EarlySend."""
        with tempfile.TemporaryDirectory() as out:
            rows, summary, run = self.run_bench(
                out, "--runs", "incast/fifo/16/1", "--schemes", "tcp_es", "--jobs", "fbkv=16"
            )
            self.assertEqual(len(rows), 16)
            self.assertEqual(sorted(int(r["sender"]) for r in rows), list(range(2, 18)))
            self.assertTrue(all(r["receiver"] == "1" and r["status"] == "ok" for r in rows), rows)
            (labinfo,) = run["labs"]
            self.assertEqual((labinfo["hosts"], labinfo["mode"]), (18, "fifo"))  # + receiver + background
            (cell,) = summary["cells"]
            self.assertEqual((cell["senders"], cell["jobs"], cell["failed"]), (16, 16, 0))


if __name__ == "__main__":
    unittest.main()
