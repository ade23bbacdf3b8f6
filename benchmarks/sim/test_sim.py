#!/usr/bin/env python3
"""Tests of the ns-3 simulator (benchmarks/sim): the ATP adapter on a 2-host topology (exact delivery under loss,
MSR never under target under a lossy bottleneck), determinism for a seed, and the ns-3 DCTCP baseline's bytes.
Needs the built atp-sim: ATP_SIM=path (benchmarks/sim/run.sh test sets it). No timing assertions.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sim  # noqa: E402

SIM = os.environ.get("ATP_SIM", os.path.join(sim.ROOT, "build", "sim", "atp-sim"))


def fbkv_jobs(n: int, msrs: list[float], seed: int, spacing_ns: int = 300_000, prod_scale: float = 1 / 40):
    """n FBKV-like jobs (benchmarks/netlab/netlab/workload.py) from host 2 to host 1, started spacing_ns apart."""
    r = random.Random(seed)
    jobs = []
    for i in range(n):
        sizes, offs = sim.one_job("fbkv", r)
        jobs.append(
            sim.SimJob(
                i + 1,
                sim.WARMUP_NS + i * spacing_ns,
                2,
                1,
                msrs[i % len(msrs)],
                sizes,
                [int(o * 1000 * prod_scale) for o in offs],
            )
        )
    return jobs


def incast_jobs(wl: str, senders: list[int], msr: float, seed: int, prod_scale: float = 1 / 40):
    """One job of workload wl from each sender to host 1, all started together."""
    r = random.Random(seed)
    jobs = []
    for i, snd in enumerate(senders):
        sizes, offs = sim.one_job(wl, r)
        jobs.append(
            sim.SimJob(i + 1, sim.WARMUP_NS, snd, 1, msr, sizes, [int(o * 1000 * prod_scale) for o in offs])
        )
    return jobs


class SimTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(SIM, os.X_OK):
            raise unittest.SkipTest(f"atp-sim not built at {SIM} (benchmarks/sim/run.sh build)")
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_sim(self, jobs, scheme: str, *args: str, name: str = "t") -> tuple[list[dict], dict]:
        d = self.tmp.name
        sched = os.path.join(d, name + ".txt")
        sim.write_schedule(sched, jobs)
        out, stats = os.path.join(d, name + ".jsonl"), os.path.join(d, name + ".stats.json")
        subprocess.run(
            [SIM, "--schedule", sched, "--scheme", scheme, "--out", out, "--stats", stats, *args],
            check=True,
            capture_output=True,
            text=True,
        )
        with open(out) as f:
            res = [json.loads(line) for line in f]
        with open(stats) as f:
            return res, json.load(f)


class AtpAdapterTest(SimTestCase):
    def test_msr_one_delivers_every_byte_in_order_under_loss(self):
        jobs = fbkv_jobs(6, [1.0], seed=11)
        res, stats = self.run_sim(
            jobs,
            "atp_full",
            "--topology",
            "star",
            "--hosts",
            "2",
            "--verify",
            "--bottleneck-loss",
            "0.05",
            "--seed",
            "3",
            name="exact",
        )
        self.assertEqual(len(res), len(jobs))
        for j, r in zip(jobs, res):
            with self.subTest(job=r["job"]):
                self.assertEqual(r["status"], "ok")
                self.assertEqual(r["delivered"], len(j.sizes))
                self.assertEqual(r["lost"], 0)
                self.assertEqual(r["bytes_received"], sum(j.sizes))
                self.assertTrue(r["in_order"], "exact job delivered out of order")
                self.assertTrue(r["content_ok"], "delivered bytes differ from the submitted ones")
        # The loss was real: the engine had to retransmit.
        self.assertGreater(sum(r["retransmitted"] for r in res), 0)

    def test_msr_below_one_never_completes_below_target_on_a_lossy_bottleneck(self):
        jobs = fbkv_jobs(24, [0.5, 0.75, 0.9], seed=12, spacing_ns=200_000)
        for scheme in ("atp_full", "atp_base", "atp_fixprio"):
            res, _ = self.run_sim(
                jobs,
                scheme,
                "--topology",
                "star",
                "--hosts",
                "2",
                "--verify",
                "--bottleneck-loss",
                "0.15",
                "--seed",
                "4",
                name="lossy-" + scheme,
            )
            self.assertEqual(len(res), len(jobs))
            for j, r in zip(jobs, res):
                with self.subTest(scheme=scheme, job=r["job"], msr=j.msr):
                    self.assertEqual(r["status"], "ok")
                    self.assertGreaterEqual(r["delivered"], r["target"])
                    self.assertLessEqual(r["lost"], r["messages"] - r["target"])
                    self.assertTrue(r["content_ok"])
            self.assertGreater(
                sum(r["retransmitted"] for r in res), 0, scheme + ": the bottleneck lost nothing"
            )

    def test_same_seed_same_results_other_seed_other_results(self):
        jobs = fbkv_jobs(10, [0.5, 0.9], seed=13, spacing_ns=20_000)
        args = ("--topology", "fattree", "--k", "4", "--bottleneck-loss", "0.05")
        a, _ = self.run_sim(jobs, "atp_full", *args, "--seed", "7", name="a")
        b, _ = self.run_sim(jobs, "atp_full", *args, "--seed", "7", name="b")
        c, _ = self.run_sim(jobs, "atp_full", *args, "--seed", "8", name="c")
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)


class SummaryDeterminismTest(SimTestCase):
    def test_same_seed_gives_a_bit_identical_summary(self):
        outs = []
        for i in range(2):
            out = os.path.join(self.tmp.name, f"tiny{i}")
            subprocess.run(
                [
                    sys.executable,
                    os.path.join(HERE, "sim.py"),
                    "run",
                    "--preset",
                    "tiny",
                    "--sim",
                    SIM,
                    "--out",
                    out,
                    "--seed",
                    "5",
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            with open(os.path.join(out, "cells.json"), "rb") as f:
                outs.append(f.read())
        self.assertEqual(outs[0], outs[1])
        cells = json.loads(outs[0])
        self.assertTrue(cells and all(c["jobs"] > 0 for c in cells))


class DctcpBaselineTest(SimTestCase):
    def test_dctcp_moves_the_expected_bytes(self):
        jobs = fbkv_jobs(8, [0.5, 0.9], seed=14)
        exact, _ = self.run_sim(jobs, "dctcp_exact", "--topology", "star", "--hosts", "2", name="dctcp-exact")
        for j, r in zip(jobs, exact):
            with self.subTest(variant="exact", job=r["job"]):
                self.assertEqual(r["status"], "ok")
                self.assertEqual(r["delivered"], len(j.sizes))
                self.assertEqual(r["bytes_received"], sum(j.sizes))
                # job header + one 8-byte header per message + the payload, all handed to ns-3's TCP
                self.assertEqual(r["bytes_sent"], 16 + 8 * len(j.sizes) + sum(j.sizes))
        ss, _ = self.run_sim(jobs, "dctcp_ss", "--topology", "star", "--hosts", "2", name="dctcp-ss")
        for j, r in zip(jobs, ss):
            with self.subTest(variant="samplesend", job=r["job"]):
                self.assertEqual(r["status"], "ok")
                self.assertEqual(r["delivered"], r["target"])
                self.assertLess(r["bytes_received"], sum(j.sizes))
                self.assertEqual(r["bytes_sent"], 16 + 8 * r["target"] + r["bytes_received"])
        es, stats = self.run_sim(jobs, "dctcp_es", "--topology", "star", "--hosts", "2", name="dctcp-es")
        for j, r in zip(jobs, es):
            with self.subTest(variant="earlysend", job=r["job"]):
                self.assertEqual(r["status"], "ok")
                # in order over one connection: the answer comes after exactly the first ceil(MSR N) messages
                self.assertEqual(r["bytes_received"], sum(j.sizes[: r["target"]]))
        self.assertEqual(stats["unfinished"], 0)


class SwitchTest(SimTestCase):
    """The switch's buffer models (src/switch_queue.hpp) through what the switches report."""

    def test_shared_buffer_bounds_each_queue_by_its_dynamic_threshold(self):
        # UDP (no rate control) from 3 hosts at line rate into host 1: the port toward host 1 overflows. Per port, its
        # class-0 queue fills its own 1.5 MB; shared, one queue holds at most alpha / (1 + alpha) of the switch's 1.5
        # MB (q <= alpha (B - q)), and the pool never exceeds B.
        jobs = incast_jobs("fbhd", [2, 3, 4], 0.9, seed=21, prod_scale=1 / 400)
        star = ["--topology", "star", "--hosts", "4"]
        _, port = self.run_sim(jobs, "udp", *star, "--buffer-model", "port", name="buf-port")
        self.assertGreater(port["switch_max_bytes"][0], 1_400_000)
        self.assertEqual(port["switch_pool_max_bytes"], 0)
        for alpha in (1.0, 0.25):
            with self.subTest(alpha=alpha):
                _, shared = self.run_sim(
                    jobs, "udp", *star, "--buffer-model", "shared", "--alpha", str(alpha), name=f"buf-{alpha}"
                )
                self.assertGreater(shared["switch_dropped"][0], 0)
                self.assertLessEqual(shared["switch_max_bytes"][0], alpha / (1 + alpha) * 1_500_000 + 1500)
                self.assertGreater(shared["switch_max_bytes"][0], alpha / (1 + alpha) * 1_500_000 - 3000)
                self.assertLessEqual(shared["switch_pool_max_bytes"], 1_500_000)


class PfabricBaselineTest(SimTestCase):
    def test_connections_climb_the_classes_as_they_near_their_answer(self):
        # pfabric_es: DCTCP-ES whose DSCP follows the bytes it still needs (class 7 above the last bound, class 1 near
        # the answer); dctcp_es sends everything in class 0. Both deliver exactly the first ceil(MSR N) messages.
        jobs = incast_jobs("fbhd", [2, 3, 4], 0.75, seed=22)
        star = ["--topology", "star", "--hosts", "4", "--approx-alpha", "1"]
        pf, pst = self.run_sim(jobs, "pfabric_es", *star, name="pf")
        es, est = self.run_sim(jobs, "dctcp_es", *star, name="pf-es")
        self.assertEqual(sum(est["switch_enqueued"][1:]), 0)
        self.assertGreater(pst["switch_enqueued"][7], 0, "big jobs start in class 7")
        self.assertGreater(pst["switch_enqueued"][1], 0, "and finish in class 1")
        for j, a, b in zip(jobs, pf, es):
            with self.subTest(job=a["job"]):
                self.assertEqual(a["status"], "ok")
                self.assertEqual(a["bytes_received"], sum(j.sizes[: a["target"]]))
                self.assertEqual(a["bytes_received"], b["bytes_received"])


if __name__ == "__main__":
    unittest.main()
