#!/usr/bin/env python3
"""Smoke test of benchmarks/netlab/netlab.py (stdlib unittest; pytest collects it too).

  python3 benchmarks/netlab/test_netlab.py -v          # or: python3 -m pytest benchmarks/netlab/test_netlab.py

Plan tests are pure and always run. Lab tests need root and network namespaces and skip with a message
otherwise; they bring a 3-host lab up in each mode, ping h2 -> h1, check the tc layout, send DSCP-marked UDP
datagrams per class through the bottleneck, check the per-class counters, and tear down. About 5 s.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import netlab  # noqa: E402

FRAME = 1514
BUF = 200 * 1024


class PlanTests(unittest.TestCase):
    def test_units(self):
        self.assertEqual(netlab.parse_size("200kb"), 204800)
        self.assertEqual(netlab.parse_size("1500"), 1500)
        self.assertEqual(netlab.parse_rate("1gbit"), 10**9)
        self.assertEqual(netlab.parse_rate("100mbit"), 10**8)
        with self.assertRaises(netlab.LabError):
            netlab.parse_rate("fast")

    def test_slack_buffers(self):
        plan = netlab.QueuePlan.build("slack", "1gbit", "200kb")
        cls = plan.classes()
        self.assertEqual([c.index for c in cls], list(range(8)))
        for c in cls[1:]:
            self.assertEqual(c.buffer_bytes, (8 - c.index) * FRAME, c)     # class 7: 1 frame ... class 1: 7
        self.assertEqual(cls[7].buffer_bytes, FRAME)
        self.assertEqual(cls[0].buffer_bytes, BUF - 28 * FRAME)            # exact class gets the rest
        self.assertEqual(sum(c.buffer_bytes for c in cls), BUF)
        self.assertEqual([c.dscp for c in cls], list(netlab.DEFAULT_DSCP_BY_CLASS))
        self.assertEqual([c.htb_prio for c in cls], list(range(8)))

    def test_slack_tc_commands(self):
        plan = netlab.QueuePlan.build("slack", "1gbit", "200kb")
        cmds = [" ".join(c) for c in plan.tc_commands("p1")]
        filters = [c for c in cmds if c.startswith("filter")]
        self.assertEqual(len(filters), 8)
        for c in plan.classes():
            self.assertIn(f"match ip tos 0x{c.dscp << 2:02x} 0xfc flowid 1:{c.minor:x}", " | ".join(filters))
            self.assertIn(f"parent 1:{c.minor:x} handle {c.minor:x}: bfifo limit {c.buffer_bytes}", "|".join(cmds))
            self.assertTrue(any(f"classid 1:{c.minor:x} htb" in x and f"prio {c.index} " in x
                                and "ceil 1000000000bit" in x for x in cmds))
        self.assertIn("0xb8 0xfc flowid 1:a", filters[0])                 # DSCP 46 (EF) -> class 0
        self.assertIn("0x20 0xfc flowid 1:11", filters[-1])               # DSCP 8 (CS1) -> class 7
        self.assertTrue(cmds[0].endswith("htb default a"))                 # unmarked traffic -> class 0

    def test_fifo_plan(self):
        plan = netlab.QueuePlan.build("fifo", "1gbit", "200kb")
        (c,) = plan.classes()
        self.assertEqual(c.buffer_bytes, BUF)
        cmds = [" ".join(x) for x in plan.tc_commands("p1")]
        self.assertFalse([x for x in cmds if x.startswith("filter")])
        self.assertEqual(sum("bfifo" in x for x in cmds), 1)

    def test_other_mtu_and_map(self):
        plan = netlab.QueuePlan.build("slack", "10gbit", "1mb", mtu=9000, dscp_by_class=(7, 6, 5, 4, 3, 2, 1, 0))
        self.assertEqual(plan.classes()[7].buffer_bytes, 9014)
        self.assertEqual(plan.classes()[7].tos, 0)

    def test_rejects_small_buffer_and_bad_map(self):
        with self.assertRaises(netlab.LabError):
            netlab.QueuePlan.build("slack", "1gbit", "20kb")              # < 29 frames
        with self.assertRaises(netlab.LabError):
            netlab.QueuePlan.build("slack", "1gbit", "200kb", dscp_by_class=(1,) * 8)
        with self.assertRaises(netlab.LabError):
            netlab.QueuePlan.build("prio", "1gbit", "200kb")

    def test_plan_cli(self):
        out = subprocess.run([sys.executable, os.path.join(HERE, "netlab.py"), "plan", "--rate", "1gbit",
                              "--buffer", "200kb", "--mode", "slack"], capture_output=True, text=True, check=True)
        self.assertIn("tc filter add dev p1 parent 1: protocol ip prio 1 u32 match ip tos 0xb8 0xfc", out.stdout)
        self.assertIn("Commodity switch", out.stdout)


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


def tc_show(ns: str, what: str) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, "tc", "-s", what, "show", "dev", "p1"],
                          capture_output=True, text=True, check=True).stdout


def class_stats(ns: str) -> dict[str, tuple[int, int]]:
    """classid -> (packets sent, packets dropped) from `tc -s class show`."""
    out = {}
    for m in re.finditer(r"class htb (1:[0-9a-f]+) .*?\n\s*Sent \d+ bytes (\d+) pkt \(dropped (\d+)",
                         tc_show(ns, "class")):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


@unittest.skipIf(SKIP, SKIP or "")
class LabTests(unittest.TestCase):
    NAME = f"nlt{os.getpid()}"

    def tearDown(self):
        netlab.down(self.NAME, quiet=True)
        self.assertEqual(netlab.lab_namespaces(self.NAME), [], "namespaces left behind")

    def send(self, host: int, tos_list, count=5, size=200):
        subprocess.run(["ip", "netns", "exec", f"{self.NAME}-h{host}", sys.executable, "-c", SEND,
                        "10.77.0.1", str(count), str(size), *map(str, tos_list)], check=True)

    def bring_up(self, mode: str) -> netlab.QueuePlan:
        plan = netlab.QueuePlan.build(mode, "100mbit", "200kb")
        netlab.up(self.NAME, 3, plan, quiet=True)
        self.assertEqual(sorted(netlab.lab_namespaces(self.NAME)),
                         sorted([f"{self.NAME}-sw", f"{self.NAME}-h1", f"{self.NAME}-h2", f"{self.NAME}-h3"]))
        ping = subprocess.run([sys.executable, os.path.join(HERE, "netlab.py"), "ping", "--name", self.NAME,
                               "--count", "2", "h2", "h1"], capture_output=True, text=True)
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
            self.assertRegex(qd, rf"qdisc bfifo {c.minor:x}: parent 1:{c.minor:x} limit {tc_size(c.buffer_bytes)}")
        cl = tc_show(sw, "class")
        for c in plan.classes():
            self.assertRegex(cl, rf"class htb 1:{c.minor:x} parent 1:1 leaf {c.minor:x}: prio {c.index} "
                                 rf"rate \S+ ceil 100Mbit")
        flt = tc_show(sw, "filter")
        for c in plan.classes():
            self.assertRegex(flt, rf"flowid 1:{c.minor:x} .*\n\s*match 00{c.tos:02x}0000/00fc0000 at 0")
        before = class_stats(sw)
        self.send(2, [c.tos for c in plan.classes()], count=5)
        after = class_stats(sw)
        for c in plan.classes():
            cid = f"1:{c.minor:x}"
            self.assertGreaterEqual(after[cid][0] - before[cid][0], 5, f"class {c.index} ({cid}) counters: "
                                                                         f"{before[cid]} -> {after[cid]}")
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
        self.send(3, [d << 2 for d in netlab.DEFAULT_DSCP_BY_CLASS])
        self.assertGreaterEqual(class_stats(sw)["1:a"][0] - before, 40)

    def test_up_twice_and_failed_up_cleans(self):
        plan = netlab.QueuePlan.build("slack", "1gbit", "200kb")
        netlab.up(self.NAME, 2, plan, quiet=True)
        netlab.up(self.NAME, 2, plan, quiet=True)          # stale lab of the same name is removed first
        self.assertEqual(len(netlab.lab_namespaces(self.NAME)), 3)
        netlab.down(self.NAME, quiet=True)
        bad = dataclasses.replace(plan)
        object.__setattr__(bad, "tc_commands", lambda dev: [["qdisc", "add", "dev", dev, "root", "nosuchqdisc"]])
        with self.assertRaises(netlab.LabError) as ctx:
            netlab.up(self.NAME, 3, bad, quiet=True)
        self.assertIn("torn down", str(ctx.exception))
        self.assertEqual(netlab.lab_namespaces(self.NAME), [])


def _find_agent() -> str | None:
    root = os.path.dirname(os.path.dirname(HERE))
    for c in (os.environ.get("NETLAB_AGENT", ""), f"{root}/approx-core/target/native-build/netlab-agent",
              f"{root}/build/netlab-native/netlab-agent", f"{root}/native/build/netlab-agent"):
        if c and os.access(c, os.X_OK):
            return c
    return None


@unittest.skipIf(SKIP, SKIP or "")
class SchemeRunTests(unittest.TestCase):
    """A tiny end-to-end run of bench.py: 2 FBKV-like jobs from 2 senders to h1 over the slack-based switch with
    background TCP, as TCP-EarlySend and as ATP Full. About 15 s. Needs netlab-agent (built by `mvn install` into
    approx-core/target/native-build, or by benchmarks/netlab/run.sh; NETLAB_AGENT=path overrides) and iperf3."""

    def test_tiny_schemes(self):
        agent = _find_agent()
        if agent is None:
            self.skipTest("netlab-agent not built (mvn install or benchmarks/netlab/run.sh builds it)")
        if not shutil.which("iperf3"):
            self.skipTest("iperf3 missing (scripts/setup.sh installs it)")
        import bench
        import tempfile
        bench.LAB = "nlbtest"          # not the name a concurrently running benchmark uses
        with tempfile.TemporaryDirectory() as out:
            rc = bench.main(["--preset", "tiny", "--agent", agent, "--out", out, "--only", "schemes",
                             "--schemes", "tcp_es,atp_full", "--jobs", "fbkv=2"])
            self.assertEqual(rc, 0)
            rows = bench.load_rows(os.path.join(out, "jobs.csv"))
            self.assertEqual(sorted(r["scheme"] for r in rows), ["atp_full"] * 2 + ["tcp_es"] * 2)
            for r in rows:
                self.assertEqual(r["status"], "ok", r)
                self.assertTrue(r["met_msr"], r)
                self.assertGreaterEqual(r["delivered"], r["target"], r)
                self.assertLessEqual(r["measured_loss"], 1 - r["msr"] + 1e-9, r)
                self.assertGreater(r["jct_ms"], 0, r)
                self.assertLess(r["jct_ms"], 60_000, r)
            self.assertTrue(os.path.exists(os.path.join(out, "summary.json")))
        self.assertEqual(netlab.lab_namespaces(bench.LAB), [])


if __name__ == "__main__":
    unittest.main()
