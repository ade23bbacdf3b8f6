#!/usr/bin/env python3
"""Flink benchmark of issue 14 in the network lab (docs/flink.md, "Network-lab benchmark"). Needs root, iperf3,
a built approx-flink and examples/flink.

Topology (benchmarks/netlab, module netlab.lab; every switch port shaped, slack-priority or FIFO switch):
  h1 10.77.0.1  JobManager (StandaloneSessionClusterEntrypoint from flink-runtime) and the client
  h2 10.77.0.2  TaskManager 1 (TaskManagerRunner, its own JVM, 2 slots)
  h3 10.77.0.3  TaskManager 2 (TaskManagerRunner, its own JVM, 2 slots)
  h4 10.77.0.4  background TCP (iperf3, cubic, DSCP 0) toward h2 and h3 (the TaskManagers' downlinks)

flink-dist is not served by this machine's Maven mirror, so the cluster runs Flink's own standalone entry points
(flink-runtime) on the examples' Flink classpath, one JVM per process, each in its own namespace. The TaskManagers
have approx-flink, approx-core and the examples on their classpath (no job jar upload).

Per switch mode: lab up, JobManager + 2 TaskManagers, background TCP, then per configuration (--configs: a name
and the bytes per trip the query does not read, e.g. `keeps-up:0,falls-behind:600`)
  FlinkLatencyBench (exact and every approximate mode at the same paced input rate, alternating runs after a
  warm-up each; --modes: `atp` = approx.dataPlane=atp with the default sending policy, `tcp_ss` / `tcp_es` = the
  TCP data plane with sampleSend / earlySend; or --variants), while metrics_poll.py reads the receivers'
  approxEpochsOverTcp (0 on ATP, > 0 over TCP) and approxGroupWaitsBeyondDeadline (groups that went longer than
  approx.epochDeadline without data while short of target: issue 32's "no group waits behind class 0 beyond the
  bound", 0 is the target) of each running job from the REST API,
then FlinkBench overhead (flag-off query vs the same aggregation written directly with Flink's API, unpaced,
alternating runs; --skip-overhead), and everything is torn down in `finally`.
Raw lines + summary: benchmarks/results/flink/e2e/netlab-<timestamp>.txt (not in git); one cell per (config,
switch, mode): benchmarks/results/flink/e2e/summary.json (`e2e_summary`, tested by test_summary.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from netlab import lab as nlab  # the network lab (benchmarks/netlab; run.sh puts it on PYTHONPATH)
from netlab.labcluster import LabCluster, interrupt_on_signals, ip, load_note, pct, snapshot_jars

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import epoch_timeline  # noqa: E402  (this directory)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
JM, TMS, BG = 1, (2, 3), 4
REST_PORT = 8081
# exact keeps up with its input when its window latency grows by at most this per unit of input time (a job that
# processes 95 % of its input has 1/0.95 - 1 = 0.053)
KEEPS_UP_GROWTH = 0.05
# the approximate modes of the end-to-end benchmark (issue 32) as FlinkLatencyBench variants
MODES = {
    "atp": "approx.dataPlane=atp",
    "tcp_ss": "approx.dataPlane=tcp,approx.tcpSendPolicy=sampleSend",
    "tcp_es": "approx.dataPlane=tcp,approx.tcpSendPolicy=earlySend",
}


class Lab(LabCluster):
    """The lab with a standalone Flink cluster: JobManager and client in h1, TaskManagers in h2 and h3."""

    def __init__(self, a, tmp: str):
        super().__init__(a.name, 4, a.rate, a.buffer, tmp)
        self.a = a

    def start_cluster(self, cp: str) -> None:
        conf = os.path.join(self.tmp, "conf")
        os.makedirs(conf, exist_ok=True)
        with open(os.path.join(conf, "config.yaml"), "w") as f:
            f.write(f"""jobmanager.rpc.address: {ip(JM)}
jobmanager.bind-host: {ip(JM)}
rest.address: {ip(JM)}
rest.bind-address: {ip(JM)}
rest.port: {REST_PORT}
jobmanager.memory.process.size: 768m
# TaskManagerRunner started directly (no flink-dist scripts) needs its resources spelled out
taskmanager.cpu.cores: 2
taskmanager.memory.framework.heap.size: 128m
taskmanager.memory.task.heap.size: 384m
taskmanager.memory.framework.off-heap.size: 128m
taskmanager.memory.task.off-heap.size: 64m
taskmanager.memory.managed.size: 64m
taskmanager.memory.network.min: 64m
taskmanager.memory.network.max: 64m
taskmanager.memory.jvm-metaspace.size: 192m
taskmanager.memory.jvm-overhead.min: 128m
taskmanager.memory.jvm-overhead.max: 128m
taskmanager.numberOfTaskSlots: 2
parallelism.default: 4
io.tmp.dirs: {self.tmp}
# the REST API's metrics at most 1 s old (metrics_poll.py reads the running jobs' counters)
metrics.fetcher.update-interval: 1 s
""")
        log4j = f"-Dlog4j2.configurationFile={os.path.join(ROOT, 'examples', 'flink', 'log4j2.properties')}"
        self.spawn(
            JM,
            [
                "java",
                "-Xmx512m",
                log4j,
                "-cp",
                cp,
                "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
                "--configDir",
                conf,
            ],
            "jobmanager.log",
        )
        self.wait_for_slots(0, 120)  # the REST endpoint answers (the lab's log level is WARN)
        if self.a.epoch_log:
            log4j = f"-Dlog4j2.configurationFile={os.path.join(HERE, 'log4j2-epochs.properties')}"
        for h in TMS:
            self.spawn(
                h,
                [
                    "java",
                    f"-Xmx{self.a.tm_heap}",
                    "-XX:MaxDirectMemorySize=400m",
                    log4j,
                    "-cp",
                    cp,
                    "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                    "--configDir",
                    conf,
                    "-D",
                    f"taskmanager.host={ip(h)}",
                    "-D",
                    f"taskmanager.bind-host={ip(h)}",
                    "-D",
                    f"taskmanager.resource-id=tm-h{h}",
                ],
                f"taskmanager-h{h}.log",
            )
        self.wait_for_slots(4, 120)
        self.log(f"standalone Flink: JobManager {ip(JM)}:{REST_PORT}, TaskManagers on h2, h3 (2 slots each)")

    def wait_for_slots(self, n: int, timeout: float) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    f"{self.a.name}-h{JM}",
                    "curl",
                    "-s",
                    f"http://{ip(JM)}:{REST_PORT}/overview",
                ],
                capture_output=True,
                text=True,
            )
            m = re.search(r'"slots-total":(\d+)', r.stdout)
            if m and int(m.group(1)) >= n:
                return
            self.check_alive()
            time.sleep(1)
        raise RuntimeError(f"the cluster did not reach {n} slots in {timeout} s; see {self.tmp}")

    def client(self, cp: str, main: str, args: list[str], tag: str, poll_metrics: list[str] | None = None):
        """Runs a client application in h1: its RESULT/WINDOW/SUMMARY/# lines, and with poll_metrics per metric
        its largest sum per job name seen while the jobs ran (metrics_poll.py beside the client)."""
        log4j = f"-Dlog4j2.configurationFile={os.path.join(ROOT, 'examples', 'flink', 'log4j2.properties')}"
        poller = None
        if poll_metrics:
            poller = self.spawn(
                JM,
                [
                    sys.executable,
                    os.path.join(HERE, "metrics_poll.py"),
                    f"http://{ip(JM)}:{REST_PORT}",
                    ",".join(poll_metrics),
                ],
                f"poll-{tag}.log",
            )
        rc, text, secs = self.run_client(
            JM, ["java", "-Xmx768m", log4j, "-cp", cp, main, *args], f"client-{tag}.log", self.a.app_timeout
        )
        polled: dict[str, dict[str, int]] = {}
        if poller is not None:
            time.sleep(1.5)  # the last round of the poller
            self.stop(poller)
            # the poller's own log: not `text`, which holds the client's lines
            with open(os.path.join(self.tmp, f"poll-{tag}.log"), errors="replace") as f:
                poll_text = f.read()
            polled = {m: parse_poll(poll_text, m) for m in poll_metrics or []}
        lines = [l for l in text.splitlines() if l.startswith(("RESULT", "WINDOW", "SUMMARY", "#"))]
        self.log(f"client {tag}: rc={rc} in {secs:.0f} s, {len(lines)} lines")
        if rc != 0:
            self.log("tail:\n" + "\n".join(text.splitlines()[-30:]))
        return (lines, polled) if poll_metrics else lines


OVER_TCP = "approxEpochsOverTcp"  # receivers' epochs over the TCP data plane
# receivers' groups that went longer than approx.epochDeadline without data while short of target (issue 32's bound)
GROUP_WAITS = "approxGroupWaitsBeyondDeadline"


def parse_poll(text: str, metric: str | None = None) -> dict[str, int]:
    """metrics_poll.py's output -> the largest value per job name (a counter only grows while its job runs), of
    `metric` when given (lines without a metric= field belong to every metric: a one-metric poller)."""
    out: dict[str, int] = {}
    for m in re.finditer(r"^job=(\S+) jid=\S+(?: metric=(\S+))? value=(\d+)", text, re.M):
        if metric is None or m.group(2) in (None, metric):
            out[m.group(1)] = max(out.get(m.group(1), 0), int(m.group(3)))
    return out


def parse_configs(spec: str) -> list[tuple[str, int]]:
    """`NAME:PAYLOAD_BYTES,...` -> [(name, payload bytes)]; names are the summary's `config` values."""
    out = []
    for item in spec.split(","):
        name, _, payload = item.partition(":")
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name) or not payload.isdigit():
            raise ValueError(f"--configs: expected NAME:PAYLOAD_BYTES, got '{item}'")
        out.append((name, int(payload)))
    return out


def variants_for(modes: list[str]) -> str:
    """FlinkLatencyBench's --variants for the approximate modes (exact always runs)."""
    bad = [m for m in modes if m != "exact" and m not in MODES]
    if bad:
        raise ValueError(f"--modes: unknown {bad}; known: exact, {', '.join(MODES)}")
    return ";".join(f"{m}:{MODES[m]}" for m in modes if m != "exact")


def e2e_cells(blocks: list[dict]) -> list[dict]:
    """One cell per (config, switch, mode) from blocks of {config, switch, payload_bytes, lines, over_tcp,
    group_waits}: windows
    (answered windows over the measured runs), p50/p99 of their result latency, sustained records/s (median of
    runs), windows outside e_max (averages outside e_max or missing, summed over runs) and the receivers'
    approxEpochsOverTcp and approxGroupWaitsBeyondDeadline summed over the mode's measured runs (None: not
    polled)."""
    cells = []
    for b in blocks:
        win: dict[str, list[float]] = {}
        series: dict[tuple[str, str], list[tuple[float, float]]] = {}
        res: dict[str, list[dict]] = {}
        for l in b["lines"]:
            kv = dict(re.findall(r"(\w+)=(\S+)", l))
            if l.startswith("WINDOW"):
                win.setdefault(kv["mode"], []).append(float(kv["latency_ms"]))
                series.setdefault((kv["mode"], kv["run"]), []).append(
                    (float(kv["window_end"]), float(kv["latency_ms"]))
                )
            elif (
                l.startswith("RESULT")
                and "sustained_records_per_s" in kv
                and not kv["mode"].endswith("-warmup")
            ):
                res.setdefault(kv["mode"], []).append(kv)
        tcp = per_mode(b.get("over_tcp"))
        waits = per_mode(b.get("group_waits"))
        for mode in dict.fromkeys([*res, *win]):
            r = res.get(mode, [])
            lat = win.get(mode, [])
            growth = [latency_growth(v) for (m, _), v in series.items() if m == mode and len(v) >= 2]
            cells.append(
                dict(
                    config=b["config"],
                    switch=b["switch"],
                    mode=mode,
                    windows=len(lat),
                    p50_ms=round(pct(lat, 0.5)) if lat else None,
                    p99_ms=round(pct(lat, 0.99)) if lat else None,
                    records_per_s=round(statistics.median(float(x["sustained_records_per_s"]) for x in r))
                    if r
                    else None,
                    windows_outside=sum(int(x["outside_emax"]) for x in r),
                    latency_growth=round(statistics.median(growth), 3) if growth else None,
                    runs=len(r),
                    input_rate=int(r[0]["input_rate"]) if r else None,
                    payload_bytes=b["payload_bytes"],
                    max_rel_error=max(float(x["max_rel_error"]) for x in r) if r else None,
                    sample_fraction=round(statistics.median(float(x["sample_fraction"]) for x in r), 4)
                    if r
                    else None,
                    epochs_over_tcp=tcp.get(mode, 0) if b.get("over_tcp") is not None else None,
                    group_waits_beyond_deadline=waits.get(mode, 0)
                    if b.get("group_waits") is not None
                    else None,
                )
            )
    return cells


def per_mode(polled: dict[str, int] | None) -> dict[str, int]:
    """A polled counter per job name -> summed per mode over the measured runs (the warm-up is run -1)."""
    out: dict[str, int] = {}
    for job, v in (polled or {}).items():
        mode, _, run = job.rpartition("_latency_run_")
        if mode and run.isdigit():
            out[mode] = out.get(mode, 0) + v
    return out


def latency_growth(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of window latency over window end (ms per ms of input) in one run: ~0 when the job
    keeps up with its input, 1/f - 1 when it processes a fraction f of it (its backlog grows through the run).
    Unlike sustained records/s it does not depend on the run's length (a 10-s run's last window latency)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


def e2e_summary(blocks: list[dict], header: dict) -> dict:
    """The summary document: the header, the cells, and per (config, switch) the ratios the issue's targets name
    (atp's p50 and p99 over the better TCP mode's, over exact's) and whether exact kept up with the input (its
    latency_growth at most KEEPS_UP_GROWTH: the configuration's name is checked, not assumed)."""
    cells = e2e_cells(blocks)
    checks = []
    for key in dict.fromkeys((c["config"], c["switch"]) for c in cells):
        by = {c["mode"]: c for c in cells if (c["config"], c["switch"]) == key}
        chk: dict = dict(config=key[0], switch=key[1])
        ex = by.get("exact")
        if ex and ex["latency_growth"] is not None:
            chk["exact_latency_growth"] = ex["latency_growth"]
            chk["exact_keeps_up"] = ex["latency_growth"] <= KEEPS_UP_GROWTH
        atp = by.get("atp")
        tcps = [by[m] for m in ("tcp_ss", "tcp_es") if m in by and by[m]["p99_ms"]]
        if atp and atp["p99_ms"] is not None:
            if tcps:
                best = min(tcps, key=lambda c: c["p99_ms"])
                chk["better_tcp_mode"] = best["mode"]
                chk["atp_p99_over_tcp"] = round(atp["p99_ms"] / best["p99_ms"], 3)
                chk["atp_p50_over_tcp"] = round(atp["p50_ms"] / max(1, best["p50_ms"]), 3)
            if ex and ex["p99_ms"]:
                chk["atp_p99_over_exact"] = round(atp["p99_ms"] / ex["p99_ms"], 3)
                chk["atp_p50_over_exact"] = round(atp["p50_ms"] / max(1, ex["p50_ms"]), 3)
        checks.append(chk)
    return {"header": header, "cells": cells, "checks": checks}


def write_summary(path: str, doc: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def summarize(lines: list[str], sw: str) -> list[str]:
    """Per mode (exact, approx or each --variants name): window latency percentiles and ratios to exact."""
    out = []
    win: dict[str, list[float]] = {}
    res: dict[str, list[dict]] = {}
    for l in lines:
        kv = dict(re.findall(r"(\w+)=(\S+)", l))
        if l.startswith("WINDOW"):
            win.setdefault(kv["mode"], []).append(float(kv["latency_ms"]))
        elif (
            l.startswith("RESULT") and "sustained_records_per_s" in kv and not kv["mode"].endswith("-warmup")
        ):
            # FlinkLatencyBench's runs (FlinkBench overhead's RESULT lines have their own SUMMARY)
            res.setdefault(kv["mode"], []).append(kv)
    if "exact" in win:
        e50, e99 = pct(win["exact"], 0.5), pct(win["exact"], 0.99)
        out.append(
            f"[{sw}] window result latency over {len(win['exact'])} windows: exact p50 {e50:.0f} ms "
            f"p99 {e99:.0f} ms"
        )
        for m, v in win.items():
            if m != "exact":
                a50, a99 = pct(v, 0.5), pct(v, 0.99)
                out.append(
                    f"[{sw}] window result latency over {len(v)} windows: {m} p50 {a50:.0f} ms p99 "
                    f"{a99:.0f} ms; ratio to exact p50 {a50 / e50:.2f} p99 {a99 / e99:.2f}"
                )
    for m, r in res.items():
        out.append(
            f"[{sw}] {m}: sustained records/s (median of runs) "
            f"{statistics.median(float(x['sustained_records_per_s']) for x in r):.0f} at input "
            f"{r[0]['input_rate']}/s; outside e_max {sum(int(x['outside_emax']) for x in r)}; wrong or "
            f"missing counts {sum(int(x['wrong_or_missing_counts']) for x in r)}; max rel error "
            f"{max(float(x['max_rel_error']) for x in r):.4f}; sample fraction "
            f"{statistics.median(float(x['sample_fraction']) for x in r):.3f}"
        )
    ov = [l for l in lines if l.startswith("SUMMARY")]
    out += [f"[{sw}] overhead: {l}" for l in ov]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--switch", default="slack", help="comma-separated switch modes: slack,fifo")
    ap.add_argument("--rate", default="200mbit", help="every switch port (tc syntax)")
    ap.add_argument("--buffer", default="150kb")
    ap.add_argument(
        "--bg-load", type=float, default=0.7, help="background TCP toward each TaskManager, x rate"
    )
    ap.add_argument("--input-rate", default="20000", help="trips per second, both modes")
    ap.add_argument("--seconds", default="30")
    ap.add_argument("--window-ms", default="2000")
    ap.add_argument("--groups", default="16")
    ap.add_argument(
        "--payload-bytes",
        default="0",
        help="bytes per trip the query does not read (both modes; exact's keyBy ships them); without --configs",
    )
    ap.add_argument(
        "--configs",
        default=None,
        help="configurations run one after the other on each switch's cluster, NAME:PAYLOAD_BYTES, e.g. "
        "'keeps-up:0,falls-behind:1500' (the summary checks whether exact kept up)",
    )
    ap.add_argument(
        "--modes",
        default="exact,atp,tcp_ss,tcp_es",
        help=f"exact (always runs) and approximate modes of {', '.join(MODES)}; --variants replaces them",
    )
    ap.add_argument(
        "--summary", default=os.path.join(ROOT, "benchmarks", "results", "flink", "e2e", "summary.json")
    )
    ap.add_argument("--runs", default="5")
    ap.add_argument("--emax", default="0.05")
    ap.add_argument("--overhead-runs", default="5")
    ap.add_argument("--overhead-rows", default="1000000")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--tm-heap", default="512m", help="TaskManager -Xmx (framework + task heap)")
    ap.add_argument("--app-timeout", type=float, default=1800)
    ap.add_argument("--name", default="flinkbench")
    ap.add_argument(
        "--conf", action="append", default=[], help="extra approx.KEY=VALUE for the approximate runs"
    )
    ap.add_argument(
        "--variants",
        default=None,
        help="several approximate modes compared with exact in one invocation, e.g. "
        "'before:approx.flushInterval=0ms;after:approx.flushInterval=250ms'",
    )
    ap.add_argument(
        "--epoch-log",
        action="store_true",
        help="TaskManagers log one DEBUG line per tail epoch (log4j2-epochs.properties); the results "
        "get EPOCHS lines (epoch_timeline.py): where the approximate windows' latency goes",
    )
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    try:
        configs = (
            parse_configs(a.configs) if a.configs else [(f"payload-{a.payload_bytes}", int(a.payload_bytes))]
        )
        variants = a.variants or variants_for(a.modes.split(","))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    nlab.require_root()
    tmp = tempfile.mkdtemp(prefix="flink-netlab-")
    # snapshots of the jars: a concurrent rebuild must not change the classes under running JVMs
    try:
        jars = snapshot_jars(
            tmp,
            [
                ("approx-flink", "approx-flink"),
                (os.path.join("examples", "taxi"), "examples-taxi"),
                (os.path.join("examples", "flink"), "examples-flink"),
            ],
        )
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    flink_cp = open(os.path.join(ROOT, "examples", "flink", "target", "flink-classpath.txt")).read().strip()
    cp = ":".join(jars) + ":" + flink_cp
    out = a.out or os.path.join(
        ROOT, "benchmarks", "results", "flink", "e2e", f"netlab-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    )
    os.makedirs(os.path.dirname(out), exist_ok=True)
    load_start = os.getloadavg()
    # the code that runs (a later edit of the checkout must not change what the summary says it measured)
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty", "--abbrev=7"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    blocks: list[dict] = []
    lab = Lab(a, tmp)

    interrupt_on_signals()
    status = 0
    summary: list[str] = []
    with open(out, "w") as f:
        f.write(
            f"# {time.strftime('%c %Z')} {os.cpu_count()} cores, load average at start "
            f"{os.getloadavg()}; flink-netlab: {' '.join(sys.argv[1:]) or '(defaults)'}\n"
            f"# topology: JobManager + client h1, TaskManagers h2 h3 (separate JVMs, 2 slots each), iperf3 h4 -> "
            f"h2,h3 at {a.bg_load} x {a.rate}; every port {a.rate}, buffer {a.buffer}\n"
        )
        f.flush()
        for sw in a.switch.split(","):
            lines: list[str] = []
            try:
                lab.up(sw)
                lab.start_cluster(cp)
                lab.start_background(BG, TMS, a.bg_load)
                cluster = f"{ip(JM)}:{REST_PORT}"
                if not a.skip_latency:
                    extra = []
                    for kv in [f"approx.lineRateBps={lab.rate_bps}", *a.conf]:
                        k, v = kv.split("=", 1)
                        extra += [f"--{k}", v]
                    for config, payload in configs:
                        got, polled = lab.client(
                            cp,
                            "io.netapprox.examples.flink.FlinkLatencyBench",
                            [
                                "--cluster",
                                cluster,
                                "--rate",
                                a.input_rate,
                                "--seconds",
                                a.seconds,
                                "--window-ms",
                                a.window_ms,
                                "--groups",
                                a.groups,
                                "--runs",
                                a.runs,
                                "--emax",
                                a.emax,
                                "--payload-bytes",
                                str(payload),
                                *extra,
                                "--variants",
                                variants,
                            ],
                            f"{sw}-{config}-latency",
                            poll_metrics=[OVER_TCP, GROUP_WAITS],
                        )
                        lines += [
                            l + f" config={config}" if l.startswith(("RESULT", "WINDOW")) else l for l in got
                        ]
                        lines += [
                            f"# [{sw}/{config}] {m} per job: {polled[m]}" for m in (OVER_TCP, GROUP_WAITS)
                        ]
                        blocks.append(
                            dict(
                                config=config,
                                switch=sw,
                                payload_bytes=payload,
                                lines=got,
                                over_tcp=polled[OVER_TCP],
                                group_waits=polled[GROUP_WAITS],
                            )
                        )
                        summary += summarize(got, f"{sw}/{config}")
                if not a.skip_overhead:
                    lines += lab.client(
                        cp,
                        "io.netapprox.examples.flink.FlinkBench",
                        [
                            "overhead",
                            "--cluster",
                            cluster,
                            "--rows",
                            a.overhead_rows,
                            "--runs",
                            a.overhead_runs,
                        ],
                        f"{sw}-overhead",
                    )
                for l in lines:
                    f.write(l + (f" switch={sw}" if l.startswith(("RESULT", "WINDOW")) else "") + "\n")
                f.write("".join(l + "\n" for l in lab.background_lines(sw, BG, TMS)))
                if a.epoch_log:
                    tm_logs = [os.path.join(tmp, f"taskmanager-h{h}.log") for h in TMS]
                    f.write(
                        "".join(
                            f"{l} switch={sw}\n"
                            for l in epoch_timeline.summarize([p for p in tm_logs if os.path.exists(p)])
                        )
                    )
                summary += [f"[{sw}] overhead: {l}" for l in lines if l.startswith("SUMMARY")]
            except KeyboardInterrupt as e:
                lab.log(f"interrupted ({e}); tearing down")
                status = 130
                break
            except Exception as e:  # noqa: BLE001
                lab.log(f"[{sw}] failed: {e}")
                f.write(f"# [{sw}] failed: {e}\n")
                status = 1
            finally:
                lab.down()
                lab.log(f"lab {a.name} down")
        f.write(
            f"# load average at the end {os.getloadavg()}\n# SUMMARY\n"
            + "".join("# " + l + "\n" for l in summary)
        )
    if blocks:
        header = dict(
            command="bash benchmarks/flink/netlab/run.sh " + " ".join(sys.argv[1:] if argv is None else argv),
            commit=commit,
            date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            load=load_note(load_start[0], os.getloadavg()[0]),
            complete=status == 0,
            lab=dict(
                rate=a.rate,
                buffer=a.buffer,
                bg_load=a.bg_load,
                input_rate=int(a.input_rate),
                seconds=int(a.seconds),
                window_ms=int(a.window_ms),
                groups=int(a.groups),
                runs=int(a.runs),
                emax=float(a.emax),
                conf=a.conf,
                variants=variants,
            ),
            windows_outside="(run, window, group) averages outside e_max or missing, summed over the mode's runs",
            records_per_s="sustained input records/s, median of the mode's runs (input_rate is the offered rate)",
        )
        doc = e2e_summary(blocks, header)
        write_summary(a.summary, doc)
        summary += [f"check {c}" for c in doc["checks"]]
    print("\nSUMMARY\n" + "\n".join(summary))
    print(f"results: {out}\nsummary: {a.summary if blocks else '(no latency runs)'}\nlogs: {tmp}")
    return status


if __name__ == "__main__":
    sys.exit(main())
