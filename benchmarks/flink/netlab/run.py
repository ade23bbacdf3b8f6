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

Per switch mode: lab up, JobManager + 2 TaskManagers, background TCP, then
  FlinkLatencyBench (exact vs approximate at the same paced input rate, alternating runs after a warm-up each),
  FlinkBench overhead (flag-off query vs the same aggregation written directly with Flink's API, unpaced,
  alternating runs), and everything is torn down in `finally`.
Raw lines + summary: benchmarks/results/flink/netlab-<timestamp>.txt.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from netlab import lab as nlab  # the network lab (benchmarks/netlab; run.sh puts it on PYTHONPATH)
from netlab.labcluster import LabCluster, interrupt_on_signals, ip, pct, snapshot_jars

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import epoch_timeline  # noqa: E402  (this directory)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
JM, TMS, BG = 1, (2, 3), 4
REST_PORT = 8081


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

    def client(self, cp: str, main: str, args: list[str], tag: str) -> list[str]:
        log4j = f"-Dlog4j2.configurationFile={os.path.join(ROOT, 'examples', 'flink', 'log4j2.properties')}"
        rc, text, secs = self.run_client(
            JM, ["java", "-Xmx768m", log4j, "-cp", cp, main, *args], f"client-{tag}.log", self.a.app_timeout
        )
        lines = [l for l in text.splitlines() if l.startswith(("RESULT", "WINDOW", "SUMMARY", "#"))]
        self.log(f"client {tag}: rc={rc} in {secs:.0f} s, {len(lines)} lines")
        if rc != 0:
            self.log("tail:\n" + "\n".join(text.splitlines()[-30:]))
        return lines


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
        help="bytes per trip the query does not read (both modes; exact's keyBy ships them)",
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
    os.makedirs(os.path.join(ROOT, "benchmarks", "results", "flink"), exist_ok=True)
    out = a.out or os.path.join(
        ROOT, "benchmarks", "results", "flink", f"netlab-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    )
    lab = Lab(a, tmp)

    interrupt_on_signals()
    status = 0
    summary: list[str] = []
    with open(out, "w") as f:
        f.write(
            f"# {time.strftime('%c %Z')} {os.cpu_count()} cores, SHARED machine, load average at start "
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
                    lines += lab.client(
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
                            a.payload_bytes,
                            *extra,
                            *(["--variants", a.variants] if a.variants else []),
                        ],
                        f"{sw}-latency",
                    )
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
                summary += summarize(lines, sw)
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
    print("\nSUMMARY\n" + "\n".join(summary))
    print(f"results: {out}\nlogs: {tmp}")
    return status


if __name__ == "__main__":
    sys.exit(main())
