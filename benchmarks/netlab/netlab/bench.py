#!/usr/bin/env python3
"""netlab benchmarks: ATP against TCP-based approximation on the emulated network (docs/netlab.md).

  bench.py --preset quick|full|tiny --agent PATH/netlab-agent --out DIR [--only schemes,corun,trace]

Needs root (network namespaces, tc), iperf3 and a built netlab-agent (native/tools/netlab_agent.cpp). Python
orchestrates only: topology (netlab.py), background iperf3, launching one agent per host per phase with
`ip netns exec`, and collecting the agents' JSON lines into CSV. The data path is the C++ agent.

Experiments (all in one run, each on its own fresh lab):
  schemes  the same job schedule (seeded) replayed once per scheme: tcp_exact, tcp_ss (SampleSend), tcp_es
           (EarlySend), udp (UDP-blast), atp_full and the ablations atp_base, atp_rc, atp_rc_mrdf, atp_fixtlr,
           atp_fixprio; slack-based switch queues; background TCP at a chosen load; incast (and, in the full
           preset, all-to-all).
  corun    exact jobs (ATP, MSR = 1, class 0) next to approximate ATP Full jobs, FIFO switch vs slack queues.
  trace    one ATP Full job (MSR 0.5) against background UDP that moves from the job's class to higher ones,
           like the paper's Fig. 10: per-epoch TLR, loss, rate and priority class.
Outputs in DIR: jobs.csv (one row per job and scheme), trace.csv, summary.csv, summary.json, run.json.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import netlab  # noqa: E402
import workload as wl  # noqa: E402

PORT = 7480
LAB = "nlbench"
SCHEMES = ["tcp_exact", "tcp_ss", "tcp_es", "udp", "atp_full", "atp_base", "atp_rc", "atp_rc_mrdf",
           "atp_fixtlr", "atp_fixprio"]

PRESETS = {
    # a few seconds per phase; CI-sized (test_netlab.py runs this through a reduced scheme list)
    "tiny": dict(rate="200mbit", buffer="150kb", hosts=4, senders=[2, 3], bg_host=4, bg_load=0.3, load=0.8,
                 jobs={"fbhd": 4}, runs=[("incast", "slack")], msrs=[0.75], corun_jobs=0, trace=False, seed=7),
    "quick": dict(rate="200mbit", buffer="150kb", hosts=5, senders=[2, 3, 4], bg_host=5, bg_load=0.3, load=0.8,
                  jobs={"fbhd": 15, "fbkv": 30}, runs=[("incast", "slack"), ("incast", "fifo")],
                  msrs=[0.5, 0.75, 0.9], corun_jobs=24,
                  trace=True, seed=11),
    "full": dict(rate="200mbit", buffer="150kb", hosts=5, senders=[2, 3, 4], bg_host=5, bg_load=0.3, load=0.8,
                 jobs={"fbhd": 45, "fbkv": 90},
                 runs=[("incast", "slack"), ("incast", "fifo"), ("all-to-all", "slack")], msrs=[0.5, 0.75, 0.9],
                 corun_jobs=60, trace=True, seed=2026),
}

ROW_FIELDS = ["experiment", "workload", "pattern", "switch", "scheme", "kind", "job", "sender", "receiver", "msr",
              "messages", "job_bytes", "production_ms", "start_s", "jct_ms", "target", "sent", "delivered", "lost",
              "measured_loss", "met_msr", "status", "bytes_sent", "packets", "retransmissions", "epochs",
              "time_in_class_ms"]


def cpu_times() -> tuple[int, int]:
    """(total, idle+iowait) jiffies of all CPUs."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]


def other_cpu_hogs() -> str:
    """Processes outside this benchmark using CPU right now (the box may be shared): 'name:%cpu' list."""
    p = subprocess.run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"], capture_output=True, text=True)
    out = []
    for line in p.stdout.splitlines()[:8]:
        pc, _, comm = line.strip().partition(" ")
        comm = comm.strip()
        if comm in ("netlab-agent", "iperf3", "ps", "python3", "ip") or float(pc or 0) < 5:
            continue
        out.append(f"{comm}:{pc}")
    return " ".join(out)


class Bench:
    def __init__(self, agent: str, out: str, preset: dict, verbose: bool = True):
        self.agent = os.path.abspath(agent)
        self.out = out
        self.p = preset
        self.rows: list[dict] = []
        self.phases: list[dict] = []
        self.verbose = verbose
        self.procs: list[subprocess.Popen] = []
        self.rate_bps = netlab.parse_rate(preset["rate"])
        os.makedirs(out, exist_ok=True)
        self.tmp = os.path.join(out, "tmp")
        os.makedirs(self.tmp, exist_ok=True)

    def log(self, msg: str) -> None:
        if self.verbose:
            print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)

    # -- lab and processes ------------------------------------------------------------------------------------

    def ns(self, host: int) -> str:
        return f"{LAB}-h{host}"

    def spawn(self, host: int, args: list[str], log_name: str) -> subprocess.Popen:
        nice = ["nice", "-n", str(self.p["nice"])] if self.p.get("nice") else []
        p = netlab.spawn_in(self.ns(host), [*nice, *args], os.path.join(self.tmp, log_name))
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, timeout: float = 3) -> None:
        netlab.stop_group(p, timeout)
        if p in self.procs:
            self.procs.remove(p)

    def lab_up(self, mode: str, shape_all: bool) -> None:
        plan = netlab.QueuePlan.build(mode, self.p["rate"], self.p["buffer"])
        netlab.up(LAB, self.p["hosts"], plan, quiet=True, shape_all=shape_all)
        self.log(f"lab up: {self.p['hosts']} hosts, {mode} switch, {self.p['rate']}, buffer {self.p['buffer']}"
                 f"{', every port shaped' if shape_all else ''}")

    def lab_down(self) -> None:
        for p in list(self.procs):
            self.stop(p)
        netlab.down(LAB, quiet=True)

    def start_servers(self, receivers: list[int]) -> None:
        for h in receivers:
            self.spawn(h, [self.agent, "serve", "--bind", f"{netlab.SUBNET}.{h}", "--port", str(PORT)],
                       f"serve-h{h}.log")
        time.sleep(0.5)

    def start_background(self, receivers: list[int]) -> None:
        """Background TCP (iperf3, cubic, DSCP 0) from bg_host to each receiver at bg_load x rate in total."""
        if not self.p["bg_load"]:
            return
        per = int(self.p["bg_load"] * self.rate_bps / len(receivers))
        for i, h in enumerate(receivers):
            if h == self.p["bg_host"]:
                continue
            port = 5201 + i
            self.spawn(h, ["iperf3", "-s", "-p", str(port), "-1"], f"iperf3-s-h{h}.log")
            time.sleep(0.2)
            self.spawn(self.p["bg_host"], ["iperf3", "-c", f"{netlab.SUBNET}.{h}", "-p", str(port), "-t", "3600",
                                           "-b", str(per), "-C", "cubic"], f"iperf3-c-h{h}.log")
        time.sleep(1.0)

    # -- one phase: every sender host replays its part of the schedule with one scheme --------------------------

    def run_phase(self, jobs: list[wl.Job], scheme: str, meta: dict, trace_path: str | None = None) -> list[dict]:
        atp_mode = scheme[4:] if scheme.startswith("atp_") else "full"
        base_scheme = "atp" if scheme.startswith("atp") else scheme
        by_host: dict[int, list[wl.Job]] = {}
        for j in jobs:
            if j.kind == "exact":
                j.scheme = "atp" if base_scheme == "atp" else "tcp_exact"
            else:
                j.scheme = base_scheme
            by_host.setdefault(j.sender, []).append(j)
        procs, outs = [], []
        cpu0, t_phase = cpu_times(), time.time()
        tag = f"{meta['experiment']}-{meta['workload']}-{meta['pattern']}-{meta['switch']}-{scheme}"
        for h, hj in sorted(by_host.items()):
            sched = os.path.join(self.tmp, f"{tag}-h{h}.sched")
            out = os.path.join(self.tmp, f"{tag}-h{h}.jsonl")
            wl.write_schedule(sched, hj, PORT)
            args = [self.agent, "run", "--schedule", sched, "--out", out, "--mode", atp_mode,
                    "--rate-gbps", str(self.p.get("line_gbps", 1.0)), "--timeout", "60"]
            if self.p.get("reaction_speed"):
                args += ["--reaction-speed", str(self.p["reaction_speed"])]
            if trace_path and any(j.trace for j in hj):
                args += ["--trace", trace_path]
            procs.append(self.spawn(h, args, f"{tag}-h{h}.log"))
            outs.append(out)
        deadline = time.time() + max(j.start_us for j in jobs) / 1e6 + 90
        for p in procs:
            try:
                p.wait(max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                self.log(f"phase {tag}: agent timed out, stopping it")
            self.stop(p)
        cpu1 = cpu_times()
        busy = 1 - (cpu1[1] - cpu0[1]) / max(1, cpu1[0] - cpu0[0])
        self.phases.append(dict(meta, scheme=scheme, seconds=round(time.time() - t_phase, 2),
                                cpu_busy=round(busy, 3), load1=os.getloadavg()[0],
                                other_cpu=other_cpu_hogs()))
        rows = []
        info = {j.id: j for j in jobs}
        for out in outs:
            if not os.path.exists(out):
                continue
            for line in open(out):
                r = json.loads(line)
                j = info.get(r["job"])
                row = dict(meta, scheme=scheme, kind=j.kind if j else "", sender=j.sender if j else "",
                           receiver=j.receiver if j else "")
                for k in ROW_FIELDS:
                    if k in r and k not in ("scheme",):
                        row[k] = r[k]
                row["time_in_class_ms"] = " ".join(f"{v:.1f}" for v in r.get("time_in_class_ms", []))
                rows.append(row)
        ok = [r for r in rows if r["status"] == "ok"]
        jcts = sorted(r["jct_ms"] for r in ok)
        self.log(f"  {scheme:<12} {len(rows)}/{len(jobs)} jobs, {len(ok)} ok, median JCT "
                 f"{statistics.median(jcts) if jcts else float('nan'):.1f} ms, met MSR "
                 f"{sum(1 for r in rows if r['met_msr'])}/{len(rows)}")
        self.rows.extend(rows)
        return rows

    # -- experiments ----------------------------------------------------------------------------------------------

    def exp_schemes(self, schemes: list[str]) -> None:
        p = self.p
        for pattern, switch in p["runs"]:
            all_hosts = list(range(1, p["hosts"] + 1))
            if pattern == "incast":
                senders, receivers = p["senders"], [1]
            else:
                senders = receivers = [h for h in all_hosts if h != p["bg_host"]]
            for wname, n_jobs in p["jobs"].items():
                self.log(f"experiment schemes: workload {wname}, {pattern}, {switch} switch, {n_jobs} jobs, load {p['load']}, "
                         f"background TCP {p['bg_load']}")
                jobs = wl.generate(wname, n_jobs, senders, receivers, p["msrs"], self.rate_bps, p["load"],
                                   p["seed"], pattern=pattern)
                self.lab_up(switch, shape_all=pattern != "incast")
                try:
                    self.start_servers(receivers)
                    self.start_background(receivers)
                    meta = dict(experiment="schemes", workload=wname, pattern=pattern, switch=switch)
                    for s in schemes:
                        self.run_phase(jobs, s, meta)
                        time.sleep(0.5)
                finally:
                    self.lab_down()
                self.save()

    def exp_corun(self) -> None:
        p = self.p
        n = p["corun_jobs"]
        if not n:
            return
        # One schedule: every third job is exact (ATP, MSR 1 -> class 0); the others approximate ATP Full jobs.
        jobs = wl.generate("fbhd", n, p["senders"], [1], [0.5, 0.75, 1.0], self.rate_bps, p["load"],
                           p["seed"] + 1)
        for j in jobs:
            if j.msr == 1.0:
                j.kind = "exact"
        for mode in ("fifo", "slack"):
            self.log(f"experiment corun: {mode} switch, {n} jobs ({sum(j.kind == 'exact' for j in jobs)} exact)")
            self.lab_up(mode, shape_all=False)
            try:
                self.start_servers([1])
                self.start_background([1])
                self.run_phase(jobs, "atp_full", dict(experiment="corun", workload="fbhd", pattern="incast",
                                                      switch=mode))
            finally:
                self.lab_down()
        self.save()

    def exp_trace(self) -> None:
        """Fig. 10-like: one ATP Full job, MSR 0.5 (TLR_0 = 0.5 -> class 4), 3000 x 16 KiB messages all ready at
        t=0. Background UDP (iperf3, 150 Mbit/s of the 200 Mbit/s) is marked with class 4's DSCP, moves to class
        3 after 0.5 s and to class 2 after 1.0 s."""
        if not self.p["trace"]:
            return
        self.log("experiment trace (Fig. 10-like)")
        trace_path = os.path.join(self.out, "trace.csv")
        if os.path.exists(trace_path):
            os.remove(trace_path)
        self.lab_up("slack", shape_all=False)
        try:
            self.start_servers([1])
            bg = self.p["bg_host"]
            dscp = netlab.DEFAULT_DSCP_BY_CLASS
            for k, port in ((4, 5301), (3, 5302), (2, 5303)):
                self.spawn(1, ["iperf3", "-s", "-p", str(port), "-1"], f"trace-iperf3-s-{k}.log")
            time.sleep(0.3)
            job = wl.Job(id=1, start_us=0, sender=2, receiver=1, msr=0.5, sizes=[16384] * 3000,
                         offsets_us=[0] * 3000, trace=True)
            bg_rate = str(int(0.75 * self.rate_bps))
            switches = []

            def bg_class(k, port):
                return self.spawn(bg, ["iperf3", "-c", f"{netlab.SUBNET}.1", "-p", str(port), "-u", "-b", bg_rate,
                                       "-l", "1400", "-S", str(dscp[k] << 2), "-t", "30"], f"trace-bg-{k}.log")
            switches.append(bg_class(4, 5301))
            time.sleep(0.5)
            import threading
            timeline = []

            def mover():
                t0 = time.time()
                time.sleep(0.7)   # agent start-up (0.2 s) + 0.5 s of the job in class 4 competition
                for k, port in ((3, 5302), (2, 5303)):
                    old = switches[-1]
                    switches.append(bg_class(k, port))
                    self.stop(old)
                    timeline.append((time.time() - t0 - 0.2, k))
                    time.sleep(0.5)
            th = threading.Thread(target=mover)
            th.start()
            self.run_phase([job], "atp_full", dict(experiment="trace", workload="fixed16k", pattern="single",
                                                   switch="slack"), trace_path=trace_path)
            th.join()
            with open(os.path.join(self.out, "trace_bg.json"), "w") as f:
                json.dump({"bg_class_changes_s": timeline, "bg_start_class": 4, "bg_rate_bps": int(bg_rate)}, f)
        finally:
            self.lab_down()
        self.save()

    # -- output ---------------------------------------------------------------------------------------------------

    def save(self) -> None:
        if self.phases:
            with open(os.path.join(self.out, "phases.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(self.phases[0].keys()))
                w.writeheader()
                w.writerows(self.phases)
        with open(os.path.join(self.out, "jobs.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=ROW_FIELDS, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow(r)


def load_rows(path: str) -> list[dict]:
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k in ("msr", "jct_ms", "measured_loss", "job_bytes", "production_ms", "start_s"):
                r[k] = float(r[k]) if r[k] not in ("", None) else float("nan")
            for k in ("messages", "target", "delivered", "lost", "retransmissions", "sent"):
                r[k] = int(float(r[k])) if r[k] not in ("", None) else 0
            r["met_msr"] = r["met_msr"] in ("True", "true", "1")
            rows.append(r)
    return rows


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(out: str) -> dict:
    """summary.csv (per experiment/workload/pattern/switch/scheme/msr) and summary.json (the targets)."""
    rows = load_rows(os.path.join(out, "jobs.csv"))
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        key = (r["experiment"], r["workload"], r["pattern"], r["switch"], r["scheme"], r["kind"], r["msr"])
        groups.setdefault(key, []).append(r)
    lines = []
    for key, rs in sorted(groups.items()):
        ok = [r for r in rs if r["status"] == "ok"]
        j = sorted(r["jct_ms"] if r["status"] == "ok" else float("inf") for r in rs)
        lines.append(dict(zip(("experiment", "workload", "pattern", "switch", "scheme", "kind", "msr"), key),
                          jobs=len(rs), ok=len(ok), median_jct_ms=round(med(j), 2),
                          p90_jct_ms=round(j[int(0.9 * (len(j) - 1))], 2) if j else "",  # inf: failed jobs
                          met_msr=sum(r["met_msr"] for r in rs),
                          worst_loss=round(max((r["measured_loss"] for r in rs), default=float("nan")), 4),
                          median_loss=round(med([r["measured_loss"] for r in rs]), 4)))
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(lines[0].keys()) if lines else ["experiment"])
        w.writeheader()
        w.writerows(lines)

    def median_of(exp, wlname, pattern, scheme, msr=None, kind=None, switch=None):
        # A job that failed (timeout, peer dead) counts as infinitely slow, so failures never improve a median.
        xs = [r["jct_ms"] if r["status"] == "ok" else float("inf") for r in rows if r["experiment"] == exp
              and r["workload"] == wlname and r["pattern"] == pattern and r["scheme"] == scheme
              and (msr is None or abs(r["msr"] - msr) < 1e-9) and (kind is None or r["kind"] == kind)
              and (switch is None or r["switch"] == switch)]
        return med(xs), len(xs)

    res = {"targets": [], "ablation": [], "loss": {}, "udp": [], "corun": {}}
    combos = sorted({(r["workload"], r["pattern"], r["switch"]) for r in rows if r["experiment"] == "schemes"})
    for wname, pat, sw in combos:
        full, n_full = median_of("schemes", wname, pat, "atp_full", 0.75, switch=sw)
        es, n_es = median_of("schemes", wname, pat, "tcp_es", 0.75, switch=sw)
        ss, n_ss = median_of("schemes", wname, pat, "tcp_ss", 0.75, switch=sw)
        ex, _ = median_of("schemes", wname, pat, "tcp_exact", 0.75, switch=sw)
        res["targets"].append(dict(workload=wname, pattern=pat, switch=sw, msr=0.75, atp_full_ms=full, tcp_es_ms=es,
                                   tcp_ss_ms=ss, tcp_exact_ms=ex, jobs=n_full,
                                   ratio_full_es=full / es if es else float("nan"),
                                   ratio_full_ss=full / ss if ss else float("nan"),
                                   met_es=full <= 0.5 * es, met_ss=full <= 0.7 * ss))
        for msr in sorted({r["msr"] for r in rows if r["experiment"] == "schemes"}):
            res["ablation"].append(dict(workload=wname, pattern=pat, switch=sw, msr=msr, **{
                s: median_of("schemes", wname, pat, s, msr, switch=sw)[0]
                for s in ("atp_base", "atp_rc", "atp_rc_mrdf", "atp_fixtlr", "atp_fixprio", "atp_full",
                          "tcp_es", "tcp_ss", "tcp_exact", "udp")}))
        udp = [r for r in rows if r["experiment"] == "schemes" and r["workload"] == wname and r["pattern"] == pat
               and r["switch"] == sw and r["scheme"] == "udp"]
        res["udp"].append(dict(workload=wname, pattern=pat, switch=sw, jobs=len(udp),
                               missed_msr=sum(not r["met_msr"] for r in udp),
                               median_loss=med([r["measured_loss"] for r in udp])))
    atp_rows = [r for r in rows if r["scheme"].startswith("atp") and r["msr"] < 1]
    if atp_rows:
        worst = max(atp_rows, key=lambda r: r["measured_loss"] - (1 - r["msr"]))
        res["loss"] = dict(atp_jobs=len(atp_rows),
                           violations=sum(1 for r in atp_rows if r["measured_loss"] > 1 - r["msr"] + 1e-9),
                           not_ok=sum(1 for r in atp_rows if r["status"] != "ok"),
                           missed_target=sum(1 for r in atp_rows if not r["met_msr"]),
                           worst_margin=worst["measured_loss"] - (1 - worst["msr"]),
                           worst_job=dict(scheme=worst["scheme"], workload=worst["workload"], msr=worst["msr"],
                                          measured_loss=worst["measured_loss"], status=worst["status"]))
    fifo, nf = median_of("corun", "fbhd", "incast", "atp_full", kind="exact", switch="fifo")
    slack, ns_ = median_of("corun", "fbhd", "incast", "atp_full", kind="exact", switch="slack")
    afifo, _ = median_of("corun", "fbhd", "incast", "atp_full", kind="approx", switch="fifo")
    aslack, _ = median_of("corun", "fbhd", "incast", "atp_full", kind="approx", switch="slack")
    if nf or ns_:
        res["corun"] = dict(exact_fifo_ms=fifo, exact_slack_ms=slack, ratio=slack / fifo if fifo else float("nan"),
                            met=slack <= 0.7 * fifo, exact_jobs=nf, approx_fifo_ms=afifo, approx_slack_ms=aslack)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(res, f, indent=2)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    ap.add_argument("--agent", required=True, help="path of the netlab-agent binary")
    ap.add_argument("--out", required=True, help="results directory")
    ap.add_argument("--only", default="schemes,corun,trace", help="comma list of experiments")
    ap.add_argument("--schemes", default=",".join(SCHEMES), help="comma list of schemes for `schemes`")
    ap.add_argument("--jobs", help="override the preset's jobs per workload, e.g. fbkv=20,fbhd=10")
    ap.add_argument("--msrs", help="override the MSR list, e.g. 0.75")
    ap.add_argument("--bg-load", type=float, help="override the background TCP load (0 = none)")
    ap.add_argument("--runs", help="override the scheme runs, e.g. incast/slack,incast/fifo")
    ap.add_argument("--reaction-speed", type=float,
                    help="diagnostics only: m of eq. 2 for the ATP senders (default: the engine's 0.125)")
    ap.add_argument("--nice", type=int, default=-10,
                    help="niceness of every lab process (agents, iperf3); default -10 so that other work on a "
                         "shared machine disturbs the measurement less; 0 = inherit")
    a = ap.parse_args(argv)
    preset = dict(PRESETS[a.preset])
    preset["nice"] = a.nice
    if a.msrs:
        preset["msrs"] = [float(x) for x in a.msrs.split(",")]
    if a.bg_load is not None:
        preset["bg_load"] = a.bg_load
    if a.reaction_speed:
        preset["reaction_speed"] = a.reaction_speed
    if a.runs:
        preset["runs"] = [tuple(x.split("/")) for x in a.runs.split(",")]
    if a.jobs:
        preset["jobs"] = {k: int(v) for k, v in (x.split("=") for x in a.jobs.split(","))}
    if not os.access(a.agent, os.X_OK):
        print(f"bench: no netlab-agent at {a.agent} (build native/ first)", file=sys.stderr)
        return 2
    try:
        netlab.require_root()
    except netlab.LabError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    if subprocess.run(["sh", "-c", "command -v iperf3"], capture_output=True).returncode != 0:
        print("bench: iperf3 is missing (scripts/setup.sh installs it)", file=sys.stderr)
        return 2
    b = Bench(a.agent, a.out, preset)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    t0 = time.time()
    only = a.only.split(",")
    try:
        if "schemes" in only:
            b.exp_schemes(a.schemes.split(","))
        if "corun" in only:
            b.exp_corun()
        if "trace" in only:
            b.exp_trace()
    except KeyboardInterrupt as e:
        print(f"bench: interrupted ({e}); tearing the lab down", file=sys.stderr)
        return 130
    finally:
        b.lab_down()
        b.save()
    with open(os.path.join(a.out, "run.json"), "w") as f:
        json.dump(dict(preset=a.preset, params=preset, seconds=round(time.time() - t0, 1),
                       date=time.strftime("%Y-%m-%d %H:%M:%S"), schemes=a.schemes.split(","), only=only), f,
                  indent=2)
    res = summarize(a.out)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
