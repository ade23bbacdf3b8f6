"""netlab benchmarks: ATP against TCP-based approximation on the emulated network (docs/netlab.md).

  python3 -m netlab.bench --preset quick|full|tiny --agent PATH/netlab-agent --out DIR [--only schemes,corun,trace]
                          [--runs incast/slack/8/1,...] [--schemes atp_full,tcp_es,...] [--name LAB]

Needs root (network namespaces, tc), iperf3 and a built netlab-agent (native/tools/netlab_agent.cpp). Python
orchestrates only: topology (netlab.lab), background iperf3, one agent per sending host per phase (`ip netns
exec`), and collecting the agents' JSON lines into jobs.csv / summary.json (netlab.results). The data path is the
C++ agent.

Configurations (a run = pattern / switch / senders / host_rate_ratio, each on its own fresh lab):
  datacenter  host_rate_ratio 1: every host's uplink is shaped to the switch port's rate, ATP's line rate and
              UDP-blast's pace are that rate, so one sender alone cannot congest the port; congestion comes from
              fan-in. The headline configuration.
  stress      host_rate_ratio 5: hosts at 5x the port (1 Gbit/s against 200 Mbit/s), the lab's earlier setting.
Experiments:
  schemes  the same seeded job schedule replayed once per scheme (netlab.schemes) on every run of the preset,
           background TCP throughout. Incast runs at 3, 8, 16 and 32 senders form the incast-degree sweep.
  corun    exact jobs (ATP, MSR 1, class 0) next to approximate ATP Full jobs, FIFO switch vs slack queues; then
           the same exact jobs alone (experiment corun_alone: no approximate traffic, same background) on each
           switch, their floor there.
  trace    one ATP Full job (MSR 0.5) against background UDP that moves from the job's class to higher ones,
           like the paper's Fig. 10: per-epoch TLR, loss, rate and priority class.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

from netlab import lab, results, schemes
from netlab import workload as wl

PORT = 7480
DEFAULT_LAB = "nlbench"
AGENT_TIMEOUT_S = 60  # a job not done after this long counts as failed (agent --timeout)
ALL, SWEEP = schemes.ALL, schemes.SWEEP


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One lab configuration of the schemes experiment."""

    pattern: str  # incast: senders -> h1; all-to-all: each job between two random hosts
    switch: str  # slack | fifo
    senders: int  # incast: sending hosts (the incast degree); all-to-all: hosts exchanging jobs
    host_rate_ratio: float  # host line rate / switch port rate: 1 = datacenter, 5 = stress
    schemes: tuple[str, ...] = ALL

    @classmethod
    def parse(cls, text: str, default_schemes: tuple[str, ...] = ALL) -> RunSpec:
        """pattern/switch/senders/host_rate_ratio, e.g. incast/slack/16/1 (the scheme list comes separately)."""
        parts = text.split("/")
        if len(parts) != 4:
            raise ValueError(
                f"run {text!r}: use pattern/switch/senders/host_rate_ratio, e.g. incast/slack/16/1"
            )
        spec = cls(parts[0], parts[1], int(parts[2]), float(parts[3]), tuple(default_schemes))
        spec.validate()
        return spec

    def validate(self) -> None:
        if self.pattern not in ("incast", "all-to-all"):
            raise ValueError(f"pattern must be incast or all-to-all, not {self.pattern!r}")
        if self.switch not in ("slack", "fifo"):
            raise ValueError(f"switch must be slack or fifo, not {self.switch!r}")
        if not (1 <= self.senders <= 64 if self.pattern == "incast" else 2 <= self.senders <= 16):
            raise ValueError(f"senders {self.senders} out of range (incast 1..64, all-to-all 2..16)")
        if not self.host_rate_ratio > 0:
            raise ValueError("host_rate_ratio must be > 0")
        schemes.check(list(self.schemes))

    @property
    def label(self) -> str:
        return f"{self.pattern}/{self.switch}/{self.senders}/{self.host_rate_ratio:g}"

    def layout(self) -> tuple[list[int], list[int], int]:
        """(sending hosts, receiving hosts, background host); hosts are numbered 1..bg."""
        if self.pattern == "incast":
            return list(range(2, self.senders + 2)), [1], self.senders + 2
        hosts = list(range(1, self.senders + 1))
        return hosts, hosts, self.senders + 1


def _runs(*items: tuple[str, tuple[str, ...]]) -> list[RunSpec]:
    return [RunSpec.parse(text, sch) for text, sch in items]


COMMON = dict(rate="200mbit", buffer="150kb", bg_load=0.3, bg_cc="cubic", load=0.8, msrs=[0.5, 0.75, 0.9])
PRESETS = {
    # CI-sized (test_netlab.py runs it with a reduced scheme list); a few seconds per phase
    "tiny": dict(
        COMMON,
        runs=_runs(("incast/slack/2/1", ("tcp_es", "atp_full"))),
        jobs={"fbhd": 4},
        msrs=[0.75],
        corun=None,
        trace=False,
        seed=7,
    ),
    "quick": dict(
        COMMON,
        runs=_runs(
            ("incast/slack/8/1", ALL),
            ("incast/fifo/8/1", ALL),
            ("incast/slack/32/1", SWEEP),
            ("incast/slack/3/5", SWEEP),
        ),
        jobs={"fbhd": 15, "fbkv": 30},
        corun=dict(jobs=24, senders=8, host_rate_ratio=1.0),
        trace=True,
        seed=11,
    ),
    "full": dict(
        COMMON,
        runs=_runs(
            # datacenter configuration (headline): every scheme, incast at 8 senders and all-to-all among 4 hosts
            ("incast/slack/8/1", ALL),
            ("incast/fifo/8/1", ALL),
            ("all-to-all/slack/4/1", ALL),
            # the incast-degree sweep (8 senders above)
            ("incast/slack/3/1", SWEEP),
            ("incast/slack/16/1", SWEEP),
            ("incast/slack/32/1", SWEEP),
            ("incast/fifo/3/1", SWEEP),
            ("incast/fifo/16/1", SWEEP),
            ("incast/fifo/32/1", SWEEP),
            # stress configuration: hosts at 5x the port, as the lab's earlier runs
            ("incast/slack/3/5", SWEEP),
            ("incast/fifo/3/5", SWEEP),
        ),
        jobs={"fbhd": 45, "fbkv": 90},
        corun=dict(jobs=60, senders=8, host_rate_ratio=1.0),
        trace=True,
        seed=2026,
    ),
}

# Wall-clock model of a run (seconds), measured on this 2-core machine: agent start-up and the 1.2 s set-up lead
# before a phase's first job, the drain after its last job starts, the pause between phases, bringing a lab up
# and down (per host), the background TCP's start. A phase with a failed ATP job waits up to AGENT_TIMEOUT_S
# longer, which the estimate does not include.
PHASE_START_S, PHASE_DRAIN_S, PHASE_GAP_S = 1.6, 2.0, 0.5
LAB_FIXED_S, LAB_PER_HOST_S = 3.0, 0.12


def expected_seconds(preset: dict) -> float:
    rate = lab.parse_rate(preset["rate"])
    total = 0.0
    for spec in preset["runs"]:
        senders, receivers, bg = spec.layout()
        for wname, n in preset["jobs"].items():
            jobs = wl.generate(
                wname,
                n,
                senders,
                receivers,
                preset["msrs"],
                rate,
                preset["load"],
                preset["seed"],
                pattern=spec.pattern,
            )
            span = max(j.start_us for j in jobs) / 1e6
            total += LAB_FIXED_S + LAB_PER_HOST_S * bg
            total += len(spec.schemes) * (PHASE_START_S + span + PHASE_DRAIN_S + PHASE_GAP_S)
    co = preset.get("corun")
    if co:
        jobs = wl.generate(
            "fbhd", co["jobs"], [2], [1], [0.5, 0.75, 1.0], rate, preset["load"], preset["seed"] + 1
        )
        span = max(j.start_us for j in jobs) / 1e6
        alone = max(j.start_us for j in jobs if j.msr == 1.0) / 1e6  # corun_alone: the exact jobs only
        total += 2 * (
            LAB_FIXED_S + LAB_PER_HOST_S * (co["senders"] + 2) + PHASE_START_S + span + PHASE_DRAIN_S
        )
        total += 2 * (PHASE_GAP_S + PHASE_START_S + alone + PHASE_DRAIN_S)
    if preset.get("trace"):
        total += LAB_FIXED_S + 6.0
    return total


def cpu_times() -> tuple[int, int]:
    """(total, idle+iowait) jiffies of all CPUs."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]


def other_cpu_hogs() -> str:
    """Processes outside this benchmark using CPU right now (the box may be shared): 'name:%cpu' list."""
    p = subprocess.run(
        ["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"], capture_output=True, text=True
    )
    out = []
    for line in p.stdout.splitlines()[:8]:
        pc, _, comm = line.strip().partition(" ")
        comm = comm.strip()
        if comm in ("netlab-agent", "iperf3", "ps", "python3", "ip") or float(pc or 0) < 5:
            continue
        out.append(f"{comm}:{pc}")
    return " ".join(out)


def git_commit() -> str:
    p = subprocess.run(
        ["git", "-C", results.REPO, "describe", "--always", "--dirty"], capture_output=True, text=True
    )
    return p.stdout.strip()


class Bench:
    def __init__(self, agent: str, out: str, preset: dict, name: str = DEFAULT_LAB, verbose: bool = True):
        self.agent = os.path.abspath(agent)
        self.out = out
        self.p = preset
        self.name = name
        self.rows: list[dict] = []
        self.phases: list[dict] = []
        self.labs: list[dict] = []
        self.skipped: list[dict] = []
        self.verbose = verbose
        self.procs: list[subprocess.Popen] = []
        self.rate_bps = lab.parse_rate(preset["rate"])
        self.base_rtt_ms = 0.0
        self.loaded_rtt_ms = 0.0
        self.unsupported: dict[str, str | None] = {}
        self.plan: lab.QueuePlan | None = None
        self.bg_host: int | None = None
        self.bg_receivers = 1  # the background is split evenly over this many receivers (ports)
        self.rotation = 0  # phase groups run so far (--rotate-schemes)
        os.makedirs(out, exist_ok=True)
        self.tmp = os.path.join(out, "tmp")
        os.makedirs(self.tmp, exist_ok=True)

    def log(self, msg: str) -> None:
        if self.verbose:
            print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)

    # -- lab and processes ------------------------------------------------------------------------------------

    def ns(self, host: int) -> str:
        return f"{self.name}-h{host}"

    def spawn(self, host: int, args: list[str], log_name: str) -> subprocess.Popen:
        nice = ["nice", "-n", str(self.p["nice"])] if self.p.get("nice") else []
        p = lab.spawn_in(self.ns(host), [*nice, *args], os.path.join(self.tmp, log_name))
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, timeout: float = 3) -> None:
        lab.stop_group(p, timeout)
        if p in self.procs:
            self.procs.remove(p)

    def host_gbps(self, ratio: float) -> float:
        return ratio * self.rate_bps / 1e9

    def lab_up(self, mode: str, hosts: int, ratio: float, shape_all: bool) -> None:
        t0 = time.time()
        plan = lab.QueuePlan.build(mode, self.p["rate"], self.p["buffer"])
        self.plan, self.bg_host = plan, None
        link = lab.HostLink(int(ratio * self.rate_bps))
        lab.up(self.name, hosts, plan, quiet=True, shape_all=shape_all, host_link=link)
        self.base_rtt_ms = lab.base_rtt_ms(self.name, 2, 1)
        # control frames travel in class 0 (the FIFO's only queue): a full one is the loaded path's RTT
        self.loaded_rtt_ms = results.loaded_rtt_ms(
            self.base_rtt_ms, plan.classes()[0].buffer_bytes, self.rate_bps
        )
        self.labs.append(
            dict(
                mode=mode,
                hosts=hosts,
                host_rate_ratio=ratio,
                shape_all=shape_all,
                host_rate_bps=link.rate_bps,
                base_rtt_ms=self.base_rtt_ms,
                up_seconds=round(time.time() - t0, 2),
            )
        )
        self.log(
            f"lab {self.name} up: {hosts} hosts, {mode} switch {self.p['rate']} buffer {self.p['buffer']}"
            f"{' on every port' if shape_all else ''}, host uplinks {link.rate_bps / 1e6:g} Mbit/s "
            f"(ratio {ratio:g}), base RTT {self.base_rtt_ms:.3f} ms"
        )

    def lab_down(self) -> None:
        for p in list(self.procs):
            self.stop(p)
        lab.down(self.name, quiet=True)

    def start_servers(self, receivers: list[int]) -> None:
        for h in receivers:
            self.spawn(
                h,
                [self.agent, "serve", "--bind", f"{lab.SUBNET}.{h}", "--port", str(PORT)],
                f"serve-h{h}.log",
            )
        time.sleep(0.5)

    def start_background(self, receivers: list[int], bg_host: int) -> None:
        """Background TCP (iperf3, congestion control bg_cc: cubic by default, DSCP 0) from bg_host to each receiver
        at bg_load x rate in total."""
        if not self.p["bg_load"]:
            return
        self.bg_host, self.bg_receivers = bg_host, len(receivers)
        per = int(self.p["bg_load"] * self.rate_bps / len(receivers))
        for i, h in enumerate(receivers):
            port = 5201 + i
            self.spawn(h, ["iperf3", "-s", "-p", str(port), "-1"], f"iperf3-s-h{h}.log")
            time.sleep(0.2)
            self.spawn(
                bg_host,
                [
                    "iperf3",
                    "-c",
                    f"{lab.SUBNET}.{h}",
                    "-p",
                    str(port),
                    "-t",
                    "3600",
                    "-b",
                    str(per),
                    "-C",
                    self.p["bg_cc"],
                ],
                f"iperf3-c-h{h}.log",
            )
        time.sleep(1.0)

    # -- one phase: every sending host replays its part of the schedule with one scheme ------------------------

    @staticmethod
    def start_time(agents: int) -> float:
        """The schedule's time 0 (wall clock) for a phase about to spawn this many agents."""
        return time.time() + 1.4 + 0.04 * agents

    def counters(self) -> dict:
        """What the bottleneck port and the background have done so far: per-class (bytes, packets, drops) of the
        port's leaf queues and the background TCP's acknowledged payload bytes (None without a background)."""
        out: dict = dict(t=time.time(), port={}, bg_acked=None)
        if self.plan is None:
            return out
        raw = lab.port_counters(self.name)
        out["port"] = {c.index: raw[c.minor] for c in self.plan.classes() if c.minor in raw}
        if self.bg_host is not None:
            out["bg_acked"] = lab.tcp_bytes_acked(self.name, self.bg_host)
        return out

    @staticmethod
    def counter_fields(c0: dict, c1: dict) -> dict:
        """phases.csv columns from two counters() snapshots: the window, the background's delivered rate (frames,
        Mbit/s, all its receivers together) and per class (0..7, space-separated; one value for a FIFO) the frames sent and dropped at the
        bottleneck and the bytes sent."""
        secs = c1["t"] - c0["t"]
        bg = None
        if c0["bg_acked"] is not None and c1["bg_acked"] is not None:
            bg = results.bg_rate_bps(c1["bg_acked"] - c0["bg_acked"], secs)
        ks = sorted(set(c0["port"]) & set(c1["port"]))
        d = lambda k, f: c1["port"][k][f] - c0["port"][k][f]  # noqa: E731
        return dict(
            window_s=round(secs, 3),
            bg_mbps=None if bg is None else round(bg / 1e6, 2),
            port_pkts=" ".join(str(d(k, "packets")) for k in ks),
            port_drops=" ".join(str(d(k, "drops")) for k in ks),
            port_mbps=" ".join(f"{d(k, 'bytes') * 8 / secs / 1e6:.1f}" if secs > 0 else "" for k in ks),
        )

    def scheme_unsupported(self, scheme: str) -> str | None:
        if scheme not in self.unsupported:
            self.unsupported[scheme] = schemes.unsupported_reason(self.agent, scheme)
        return self.unsupported[scheme]

    def run_phase(
        self,
        jobs: list[wl.Job],
        scheme: str,
        meta: dict,
        trace_path: str | None = None,
        start_at: float | None = None,
    ) -> list[dict]:
        reason = self.scheme_unsupported(scheme)
        if reason:
            self.log(f"  {scheme:<12} SKIPPED: {reason}")
            self.skipped.append(dict(meta, scheme=scheme, reason=reason))
            return []
        agent_scheme, mode = schemes.agent_scheme(scheme)
        by_host: dict[int, list[wl.Job]] = {}
        for j in jobs:
            if j.kind == "exact":
                j.scheme = "atp" if agent_scheme == "atp" else "tcp_exact"
            else:
                j.scheme = agent_scheme
            by_host.setdefault(j.sender, []).append(j)
        procs, outs = [], []
        cpu0, t_phase = cpu_times(), time.time()
        tag = (
            f"{meta['experiment']}-{meta['workload']}-{meta['pattern']}-{meta['switch']}-{meta['senders']}-"
            f"{meta['host_rate_ratio']:g}-{scheme}"
        )
        # One start time for every agent (wall clock), so that the schedule is aligned across hosts however long
        # spawning 32 agents takes; the agent sets up each job's session 1 s before the job.
        if start_at is None:
            start_at = self.start_time(len(by_host))
        for h, hj in sorted(by_host.items()):
            sched = os.path.join(self.tmp, f"{tag}-h{h}.sched")
            trace_all = (
                bool(self.p.get("trace_schemes"))
                and meta.get("experiment") == "schemes"
                and agent_scheme == "atp"
                and not trace_path
            )
            for j in hj:
                j.trace = j.trace or trace_all
            out = os.path.join(self.tmp, f"{tag}-h{h}.jsonl")
            wl.write_schedule(sched, hj, PORT)
            args = [
                self.agent,
                "run",
                "--schedule",
                sched,
                "--out",
                out,
                "--mode",
                mode,
                "--rate-gbps",
                f"{self.host_gbps(meta['host_rate_ratio']):.6g}",
                "--timeout",
                str(AGENT_TIMEOUT_S),
                "--start-at",
                f"{start_at:.6f}",
            ]
            if self.p.get("reaction_speed"):
                args += ["--reaction-speed", str(self.p["reaction_speed"])]
            if trace_path and any(j.trace for j in hj):
                args += ["--trace", trace_path]
            elif trace_all:
                os.makedirs(os.path.join(self.out, "traces"), exist_ok=True)
                args += ["--trace", os.path.join(self.out, "traces", f"{tag}-h{h}.csv")]
            procs.append(self.spawn(h, args, f"{tag}-h{h}.log"))
            outs.append(out)
        deadline = start_at + max(j.start_us for j in jobs) / 1e6 + AGENT_TIMEOUT_S + 30
        # Counters from the schedule's time 0 to the end of the last agent (the jobs' window).
        snap: dict = {}
        timer = threading.Timer(
            max(0.0, start_at - time.time()), lambda: snap.setdefault("c0", self.counters())
        )
        timer.start()
        for p in procs:
            try:
                p.wait(max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                self.log(f"phase {tag}: agent timed out, stopping it")
            self.stop(p)
        timer.join()
        c1 = self.counters()
        counted = self.counter_fields(snap["c0"], c1) if "c0" in snap else {}
        cpu1 = cpu_times()
        busy = 1 - (cpu1[1] - cpu0[1]) / max(1, cpu1[0] - cpu0[0])
        self.phases.append(
            dict(
                meta,
                scheme=scheme,
                seconds=round(time.time() - t_phase, 2),
                cpu_busy=round(busy, 3),
                load1=os.getloadavg()[0],
                other_cpu=other_cpu_hogs(),
                **counted,
            )
        )
        bg = counted.get("bg_mbps")
        rows = self.collect(outs, jobs, scheme, meta, None if bg is None else bg / max(1, self.bg_receivers))
        ok = [r for r in rows if r["status"] == "ok"]
        jcts = sorted(r["jct_ms"] for r in ok)
        self.log(
            f"  {scheme:<12} {len(rows)}/{len(jobs)} jobs, {len(ok)} ok, median JCT "
            f"{statistics.median(jcts) if jcts else float('nan'):.1f} ms, met MSR "
            f"{sum(1 for r in rows if r['met_msr'])}/{len(rows)}"
        )
        self.rows.extend(rows)
        return rows

    def collect(
        self, outs: list[str], jobs: list[wl.Job], scheme: str, meta: dict, bg_mbps: float | None = None
    ) -> list[dict]:
        """bg_mbps: the background's delivered rate toward one receiver (its share on a job's bottleneck port)."""
        rows = []
        info = {j.id: j for j in jobs}
        for out in outs:
            if not os.path.exists(out):
                continue
            with open(out) as f:
                lines = f.readlines()
            for line in lines:
                r = json.loads(line)
                j = info.get(r["job"])
                row = dict(
                    meta,
                    scheme=scheme,
                    kind=j.kind if j else "",
                    sender=j.sender if j else "",
                    receiver=j.receiver if j else "",
                    bottleneck_bps=self.rate_bps,
                    base_rtt_ms=round(self.base_rtt_ms, 4),
                    loaded_rtt_ms=round(self.loaded_rtt_ms, 4),
                )
                for k in results.ROW_FIELDS:
                    if k in r and k not in row:
                        row[k] = r[k]
                row["time_in_class_ms"] = " ".join(f"{v:.1f}" for v in r.get("time_in_class_ms", []))
                row["ideal_ms"] = round(
                    results.ideal_ms(r["msr"], r["job_bytes"], self.rate_bps, self.base_rtt_ms), 4
                )
                if j is not None and r.get("target"):
                    row["target_ready_ms"] = round(
                        j.offsets_us[min(r["target"], len(j.offsets_us)) - 1] / 1e3, 3
                    )
                row["bg_mbps"] = bg_mbps
                ibg = results.ideal_bg_ms(
                    r["msr"],
                    r["job_bytes"],
                    self.rate_bps,
                    None if bg_mbps is None else bg_mbps * 1e6,
                    self.base_rtt_ms,
                    row.get("target_ready_ms"),
                )
                row["ideal_bg_ms"] = None if ibg is None or ibg == float("inf") else round(ibg, 4)
                wait = r.get("start_to_running_ns")
                row["start_wait_rtts"] = (
                    round(wait / 1e6 / self.loaded_rtt_ms, 2)
                    if wait is not None and self.loaded_rtt_ms > 0
                    else None
                )
                rows.append(row)
        return rows

    # -- experiments ----------------------------------------------------------------------------------------------

    def scheme_order(self, names) -> list[str]:
        """The schemes of the next phase group in the order they run: the preset's, or, with --rotate-schemes, that
        order rotated by one more place for every phase group of the run (deterministic), so no scheme is always the
        first phase after the lab comes up or after the previous workload's UDP blast (engine8m: the preset's order
        put ATP Full first in every cell)."""
        names = list(names)
        if not self.p.get("rotate_schemes") or not names:
            return names
        self.rotation += 1
        return rotated(names, self.rotation - 1)

    def exp_schemes(self, runs: list[RunSpec]) -> None:
        p = self.p
        for spec in runs:
            senders, receivers, bg = spec.layout()
            self.lab_up(spec.switch, bg, spec.host_rate_ratio, shape_all=spec.pattern != "incast")
            try:
                self.start_servers(receivers)
                self.start_background(receivers, bg)
                for wname, n_jobs in p["jobs"].items():
                    self.log(
                        f"experiment schemes {spec.label}: workload {wname}, {n_jobs} jobs, load {p['load']}, "
                        f"background TCP {p['bg_load']}"
                    )
                    jobs = wl.generate(
                        wname,
                        n_jobs,
                        senders,
                        receivers,
                        p["msrs"],
                        self.rate_bps,
                        p["load"],
                        p["seed"],
                        pattern=spec.pattern,
                    )
                    meta = dict(
                        experiment="schemes",
                        workload=wname,
                        pattern=spec.pattern,
                        switch=spec.switch,
                        senders=spec.senders,
                        host_rate_ratio=spec.host_rate_ratio,
                    )
                    for s in self.scheme_order(spec.schemes):
                        self.run_phase(jobs, s, meta)
                        time.sleep(PHASE_GAP_S)
            finally:
                self.lab_down()
            self.save()

    def exp_corun(self) -> None:
        co = self.p.get("corun")
        if not co:
            return
        spec = RunSpec("incast", "slack", co["senders"], co["host_rate_ratio"])
        senders, receivers, bg = spec.layout()
        # One schedule: every third job is exact (ATP, MSR 1 -> class 0); the others approximate ATP Full jobs.
        jobs = wl.generate(
            "fbhd",
            co["jobs"],
            senders,
            receivers,
            [0.5, 0.75, 1.0],
            self.rate_bps,
            self.p["load"],
            self.p["seed"] + 1,
        )
        for j in jobs:
            if j.msr == 1.0:
                j.kind = "exact"
        for mode in ("fifo", "slack"):
            self.log(
                f"experiment corun: {mode} switch, {len(jobs)} jobs ({sum(j.kind == 'exact' for j in jobs)} "
                f"exact), {spec.senders} senders, host rate ratio {spec.host_rate_ratio:g}"
            )
            self.lab_up(mode, bg, spec.host_rate_ratio, shape_all=False)
            try:
                self.start_servers(receivers)
                self.start_background(receivers, bg)
                self.run_phase(
                    jobs,
                    "atp_full",
                    dict(
                        experiment="corun",
                        workload="fbhd",
                        pattern="incast",
                        switch=mode,
                        senders=spec.senders,
                        host_rate_ratio=spec.host_rate_ratio,
                    ),
                )
                # The exact jobs alone (same schedule and background, no approximate traffic): their floor here.
                time.sleep(PHASE_GAP_S)
                self.run_phase(
                    [j for j in jobs if j.kind == "exact"],
                    "atp_full",
                    dict(
                        experiment="corun_alone",
                        workload="fbhd",
                        pattern="incast",
                        switch=mode,
                        senders=spec.senders,
                        host_rate_ratio=spec.host_rate_ratio,
                    ),
                )
            finally:
                self.lab_down()
        self.save()

    def exp_trace(self) -> None:
        """Fig. 10-like: one ATP Full job, MSR 0.5 (TLR_0 = 0.5 -> class 4), 3000 x 16 KiB messages all ready at
        t=0, datacenter configuration. Background UDP (iperf3, 0.75 x the port rate) from another host is marked
        with class 4's DSCP, moves to class 3 after 0.5 s and to class 2 after 1.0 s."""
        if not self.p.get("trace"):
            return
        self.log("experiment trace (Fig. 10-like)")
        trace_path = os.path.join(self.out, "trace.csv")
        if os.path.exists(trace_path):
            os.remove(trace_path)
        sender, bg = 2, 3
        self.lab_up("slack", bg, 1.0, shape_all=False)
        try:
            self.start_servers([1])
            dscp = lab.DEFAULT_DSCP_BY_CLASS
            for k, port in ((4, 5301), (3, 5302), (2, 5303)):
                self.spawn(1, ["iperf3", "-s", "-p", str(port), "-1"], f"trace-iperf3-s-{k}.log")
            time.sleep(0.3)
            job = wl.Job(
                id=1,
                start_us=0,
                sender=sender,
                receiver=1,
                msr=0.5,
                sizes=[16384] * 3000,
                offsets_us=[0] * 3000,
                trace=True,
            )
            bg_rate = str(int(0.75 * self.rate_bps))
            switches = []

            def bg_class(k, port):
                return self.spawn(
                    bg,
                    [
                        "iperf3",
                        "-c",
                        f"{lab.SUBNET}.1",
                        "-p",
                        str(port),
                        "-u",
                        "-b",
                        bg_rate,
                        "-l",
                        "1400",
                        "-S",
                        str(dscp[k] << 2),
                        "-t",
                        "30",
                    ],
                    f"trace-bg-{k}.log",
                )

            switches.append(bg_class(4, 5301))
            time.sleep(0.5)
            timeline = []
            start_at = self.start_time(1)

            def mover():
                for i, (k, port) in enumerate(((3, 5302), (2, 5303))):
                    time.sleep(max(0.0, start_at + 0.5 * (i + 1) - time.time()))  # 0.5 s of the job per class
                    old = switches[-1]
                    switches.append(bg_class(k, port))
                    self.stop(old)
                    timeline.append((round(time.time() - start_at, 3), k))

            th = threading.Thread(target=mover)
            th.start()
            self.run_phase(
                [job],
                "atp_full",
                dict(
                    experiment="trace",
                    workload="fixed16k",
                    pattern="single",
                    switch="slack",
                    senders=1,
                    host_rate_ratio=1.0,
                ),
                trace_path=trace_path,
                start_at=start_at,
            )
            th.join()
            with open(os.path.join(self.out, "trace_bg.json"), "w") as f:
                json.dump(
                    {"bg_class_changes_s": timeline, "bg_start_class": 4, "bg_rate_bps": int(bg_rate)}, f
                )
        finally:
            self.lab_down()
        self.save()

    # -- output ---------------------------------------------------------------------------------------------------

    def save(self) -> None:
        if self.phases:
            with open(os.path.join(self.out, "phases.csv"), "w", newline="") as f:
                keys = list(dict.fromkeys(k for ph in self.phases for k in ph))  # phases without counters too
                w = csv.DictWriter(f, fieldnames=keys)
                w.writeheader()
                w.writerows(self.phases)
        results.write_rows(os.path.join(self.out, "jobs.csv"), self.rows)


def rotated(names: list, k: int) -> list:
    """names rotated left by k places (k modulo the length)."""
    if not names:
        return []
    k %= len(names)
    return names[k:] + names[:k]


def build_preset(a) -> dict:
    preset = dict(PRESETS[a.preset])
    preset["nice"] = a.nice
    if a.msrs:
        preset["msrs"] = [float(x) for x in a.msrs.split(",")]
    if a.bg_load is not None:
        preset["bg_load"] = a.bg_load
    if a.bg_cc is not None:
        preset["bg_cc"] = a.bg_cc
    if a.reaction_speed:
        preset["reaction_speed"] = a.reaction_speed
    if a.trace_schemes:
        preset["trace_schemes"] = True
    if a.rotate_schemes:
        preset["rotate_schemes"] = True
    if a.jobs:
        preset["jobs"] = {k: int(v) for k, v in (x.split("=") for x in a.jobs.split(","))}
    if a.runs:
        preset["runs"] = [RunSpec.parse(x) for x in a.runs.split(",")]
    if a.schemes:
        chosen = tuple(schemes.check(a.schemes.split(",")))
        preset["runs"] = [dataclasses.replace(r, schemes=chosen) for r in preset["runs"]]
    only = a.only.split(",")
    if "schemes" not in only:
        preset["runs"] = []
    if "corun" not in only:
        preset["corun"] = None
    if "trace" not in only:
        preset["trace"] = False
    return preset


def preset_json(preset: dict) -> dict:
    return {
        k: ([dataclasses.asdict(r) | {"label": r.label} for r in v] if k == "runs" else v)
        for k, v in preset.items()
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m netlab.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    ap.add_argument("--agent", required=True, help="path of the netlab-agent binary")
    ap.add_argument("--out", required=True, help="results directory (benchmarks/results/netlab/<run-name>)")
    ap.add_argument(
        "--name",
        default=DEFAULT_LAB,
        help=f"lab name (namespaces NAME-h1.., NAME-sw); unique per user of the machine; default "
        f"{DEFAULT_LAB}",
    )
    ap.add_argument("--only", default="schemes,corun,trace", help="comma list of experiments")
    ap.add_argument(
        "--runs",
        help="override the preset's runs: pattern/switch/senders/host_rate_ratio,... "
        "e.g. incast/slack/3/1,incast/slack/32/1",
    )
    ap.add_argument("--schemes", help=f"override every run's schemes (comma list of {','.join(schemes.ALL)})")
    ap.add_argument("--jobs", help="override the preset's jobs per workload, e.g. fbkv=20,fbhd=10")
    ap.add_argument("--msrs", help="override the MSR list, e.g. 0.75")
    ap.add_argument("--bg-load", type=float, help="override the background TCP load (0 = none)")
    ap.add_argument(
        "--bg-cc",
        choices=["cubic", "bbr", "reno"],
        help="override the background TCP's congestion control (default cubic; bbr keeps the exact "
        "queue short, the closest this kernel has to the paper's DCTCP)",
    )
    ap.add_argument(
        "--reaction-speed",
        type=float,
        help="diagnostics only: m of eq. 2 for the ATP senders (default: the engine's)",
    )
    ap.add_argument(
        "--rotate-schemes",
        action="store_true",
        help="rotate the schemes' order by one place per phase group (default: the preset's order, ATP "
        "Full first in every cell)",
    )
    ap.add_argument(
        "--trace-schemes",
        action="store_true",
        help="diagnostics: every ATP job of the schemes experiment logs its end-of-epoch samples to "
        "OUT/traces/<phase>-h<host>.csv (rate, rho, TLR, class, delivered rate, srtt, app-limited)",
    )
    ap.add_argument(
        "--nice",
        type=int,
        default=-10,
        help="niceness of every lab process (agents, iperf3); default -10 so that other work on a "
        "shared machine disturbs the measurement less; 0 = inherit",
    )
    ap.add_argument("--estimate", action="store_true", help="print the expected duration and exit (no root)")
    a = ap.parse_args(argv)
    try:
        preset = build_preset(a)
        lab.check_name(a.name)
    except (ValueError, lab.LabError) as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    est = expected_seconds(preset)
    print(
        f"[bench] preset {a.preset}: {len(preset['runs'])} lab configurations, "
        f"{sum(len(r.schemes) * len(preset['jobs']) for r in preset['runs'])} scheme phases; expected duration "
        f"~{est / 60:.0f} min on an idle 2-core machine (longer when shared or when ATP jobs hit the "
        f"{AGENT_TIMEOUT_S} s timeout)",
        flush=True,
    )
    if a.estimate:
        return 0
    if not os.access(a.agent, os.X_OK):
        print(f"bench: no netlab-agent at {a.agent} (build native/ first)", file=sys.stderr)
        return 2
    try:
        lab.require_root()
    except lab.LabError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    if subprocess.run(["sh", "-c", "command -v iperf3"], capture_output=True).returncode != 0:
        print("bench: iperf3 is missing (scripts/setup.sh installs it)", file=sys.stderr)
        return 2
    b = Bench(a.agent, a.out, preset, name=a.name)
    commit = git_commit()  # of the code that runs, before anything else changes the tree

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    t0 = time.time()
    try:
        b.exp_schemes(preset["runs"])
        b.exp_corun()
        b.exp_trace()
    except KeyboardInterrupt as e:
        print(f"bench: interrupted ({e}); tearing the lab down", file=sys.stderr)
        return 130
    finally:
        b.lab_down()
        b.save()
    run = dict(
        preset=a.preset,
        date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        seconds=round(time.time() - t0, 1),
        expected_seconds=round(est),
        commit=commit,
        agent=b.agent,
        lab_name=a.name,
        cores=os.cpu_count(),
        argv=sys.argv[1:] if argv is None else argv,
        labs=b.labs,
        skipped=b.skipped,
        params=preset_json(preset),
    )
    with open(os.path.join(a.out, "run.json"), "w") as f:
        json.dump(run, f, indent=1)
    res = results.summarize(a.out, run)
    v = res["verdict"]
    print(
        f"[bench] done in {run['seconds'] / 60:.1f} min (expected ~{est / 60:.0f}); {len(res['cells'])} cells; "
        f"ATP jobs {v['atp_jobs']}, failed {v['atp_failed']}, loss above allowance "
        f"{v['atp_loss_above_allowance']}; skipped schemes: "
        f"{sorted({s['scheme'] for s in b.skipped}) or 'none'}. Verdict: python3 -m netlab.report --results "
        f"{a.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
