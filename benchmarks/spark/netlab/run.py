#!/usr/bin/env python3
"""Spark benchmark of issue 5 in the network lab (docs/spark-netlab.md). Needs root, iperf3, a built approx-spark.

Topology (benchmarks/netlab, module netlab.lab; every switch port shaped, slack-priority or FIFO switch):
  h1 10.77.0.1  driver (SparkBench, the application)
  h2 10.77.0.2  Spark standalone Master (spark://10.77.0.2:7077)
  h3 10.77.0.3  Worker 1 -> executor 1 (1 core)
  h4 10.77.0.4  Worker 2 -> executor 2 (1 core)
  h5 10.77.0.5  background TCP (iperf3, cubic, DSCP 0) toward h3 and h4 (the executors' downlinks)

Per switch mode: lab up, Master + 2 Workers, background TCP, then
  SparkBench query       (exact / approx e_max 5% / samplesend, interleaved runs after a warm-up),
  SparkBench passthrough (a non-approximate job; sort vs ApproxShuffleManager, separate applications, alternating),
and everything is torn down in `finally` (also on SIGINT/SIGTERM).
Raw RESULT lines + summary: benchmarks/results/spark/netlab-<timestamp>.txt.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

from netlab import lab as nlab  # the network lab (benchmarks/netlab; run.sh puts it on PYTHONPATH)
from netlab.labcluster import LabCluster, interrupt_on_signals, ip, snapshot_jars

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

OPENS = (
    "-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.lang=ALL-UNNAMED "
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
    "--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED "
    "--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED "
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED "
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED "
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED "
    "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED --add-opens=java.base/sun.security.action=ALL-UNNAMED "
    "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED -Djdk.reflect.useDirectMethodHandle=false "
    "-Dio.netty.tryReflectionSetAccessible=true"
).split()

DRIVER, MASTER, WORKERS, BG = 1, 2, (3, 4), 5


class Lab(LabCluster):
    """The lab with a Spark standalone cluster: driver h1, Master h2, Workers h3 and h4."""

    def __init__(self, a, tmp: str):
        super().__init__(a.name, 5, a.rate, a.buffer, tmp)
        self.a = a
        self.notes: list[str] = []

    def each_switch(self, f, body) -> int:
        """Runs body(sw) once per switch mode of --switch on a fresh lab, torn down after each mode also when it
        fails or is interrupted; returns 0, 1 (a mode failed, the others still ran) or 130 (interrupted)."""
        status = 0
        for sw in self.a.switch.split(","):
            try:
                body(sw)
            except KeyboardInterrupt as e:
                self.log(f"interrupted ({e}); tearing down")
                status = 130
                break
            except Exception as e:  # noqa: BLE001
                self.log(f"[{sw}] failed: {e}")
                f.write(f"# [{sw}] failed: {e}\n")
                status = 1
            finally:
                f.write("".join(n + "\n" for n in self.notes))
                self.notes.clear()
                self.down()
                self.log(f"lab {self.name} down")
        return status

    # -- Spark standalone ----------------------------------------------------------------------------------------

    def java(self, cp: str, main: str, args: list[str], heap: str) -> list[str]:
        return ["java", f"-Xmx{heap}", *OPENS, "-cp", cp, main, *args]

    def start_cluster(self, cp: str) -> None:
        env = {"SPARK_HOME": self.a.spark_home, "SPARK_SCALA_VERSION": "2.13"}
        self.spawn(
            MASTER,
            self.java(
                cp,
                "org.apache.spark.deploy.master.Master",
                ["--host", ip(MASTER), "--port", "7077", "--webui-port", "8080"],
                "384m",
            ),
            "master.log",
            {**env, "SPARK_LOCAL_IP": ip(MASTER)},
        )
        self.wait_log("master.log", r"I have been elected leader|Starting Spark master", 1, 90)
        for h in WORKERS:
            wd = os.path.join(self.tmp, f"work-h{h}")
            os.makedirs(wd, exist_ok=True)
            self.spawn(
                h,
                self.java(
                    cp,
                    "org.apache.spark.deploy.worker.Worker",
                    [
                        "--host",
                        ip(h),
                        "--cores",
                        "1",
                        "--memory",
                        self.a.worker_memory,
                        "--work-dir",
                        wd,
                        f"spark://{ip(MASTER)}:7077",
                    ],
                    "256m",
                ),
                f"worker-h{h}.log",
                {**env, "SPARK_LOCAL_IP": ip(h), "SPARK_WORKER_DIR": wd},
            )
        self.wait_log("master.log", r"Registering worker", len(WORKERS), 120)
        self.log(f"standalone master spark://{ip(MASTER)}:7077 with {len(WORKERS)} workers")

    def app(self, cp: str, mode: str, args: list[str], tag: str) -> list[str]:
        conf = {
            "spark.driver.host": ip(DRIVER),
            "spark.driver.bindAddress": ip(DRIVER),
            "spark.executor.extraClassPath": cp,
            "spark.executor.memory": self.a.executor_memory,
            "spark.executor.cores": "1",
            "spark.cores.max": str(len(WORKERS)),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
            "spark.approx.lineRateBps": str(self.rate_bps),
        }
        for kv in self.a.conf:
            k, v = kv.split("=", 1)
            conf[k] = v
        argv = [mode, "--master", f"spark://{ip(MASTER)}:7077"]
        for k, v in conf.items():
            argv += [f"--{k}", v]
        argv += args
        cmd = [
            "java",
            "-Xmx1g",
            *OPENS,
            f"-Dlog4j2.configurationFile={self.a.log4j}",
            "-cp",
            cp,
            "io.netapprox.examples.spark.SparkBench",
            *argv,
        ]
        log_name = f"driver-{tag}.log"
        t0 = time.time()
        rc, text, _secs = self.run_client(
            DRIVER, cmd, log_name, self.a.app_timeout, {"SPARK_SCALA_VERSION": "2.13"}
        )
        res = [l for l in text.splitlines() if l.startswith("RESULT")]
        self.log(f"app {tag}: rc={rc} in {time.time() - t0:.0f} s, {len(res)} RESULT line(s)")
        if rc != 0 or not res:
            tail = "\n".join(text.splitlines()[-25:])
            self.log(f"app {tag} failed; tail of {log_name}:\n{tail}")
        pat = r"FetchFailed|CONTROL_CLOSED|PEER_DEAD"
        errs = len(re.findall(pat, text))
        # executors' logs (Spark default log4j, INFO): <work-dir>/app-*/<id>/stderr
        ex = 0
        for h in WORKERS:
            wd = os.path.join(self.tmp, f"work-h{h}")
            for dp, _dn, fn in os.walk(wd):
                for n in fn:
                    if n == "stderr" and os.path.getmtime(os.path.join(dp, n)) >= t0:
                        ex += len(re.findall(pat, open(os.path.join(dp, n), errors="replace").read()))
        if errs or ex:
            self.log(
                f"app {tag}: FetchFailed/CONTROL_CLOSED/PEER_DEAD mentions: driver log {errs}, executor logs {ex}"
            )
        self.notes.append(
            f"# app {tag}: rc={rc} wall {time.time() - t0:.0f} s; FetchFailed/CONTROL_CLOSED/PEER_DEAD"
            f" mentions: driver {errs}, executors {ex}"
        )
        return res


def summarize(path: str) -> list[str]:
    rows = []
    for l in open(path):
        if l.startswith("RESULT"):
            rows.append(dict(re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", l)))
    lines = []
    for sw in sorted({r.get("switch") for r in rows}):
        q = {r["mode"]: r for r in rows if r.get("switch") == sw and r["mode"] != "passthrough"}
        for m in ("exact", "approx", "samplesend"):
            if m in q:
                r = q[m]
                lines.append(
                    f"[{sw}] {m:10s} median JCT {float(r['median_s']):7.2f} s  ratio "
                    f"{float(r['ratio_vs_exact']):.2f}  max rel error {100 * float(r['max_rel_error']):.2f}%"
                    f"  outside e_max {r['group_aggregates_outside_emax']}  sample fraction "
                    f"{float(r['sample_fraction']):.3f}  runs {r['all_s']}"
                )
        # paired per timed run: the three modes of run r ran one after the other in the same application
        runs = {m: [float(x) for x in q[m]["all_s"].strip("[]").split(",") if x.strip()] for m in q}
        for num, den in (("approx", "exact"), ("approx", "samplesend")):
            if num in runs and den in runs and runs[num] and len(runs[num]) == len(runs[den]):
                ratios = [a / b for a, b in zip(runs[num], runs[den])]
                g = math.exp(sum(map(math.log, ratios)) / len(ratios))
                lines.append(
                    f"[{sw}] paired per run {num}/{den} {[round(x, 2) for x in ratios]}: geometric mean "
                    f"{g:.2f}, median {statistics.median(ratios):.2f}, {num} faster in "
                    f"{sum(x < 1 for x in ratios)} of {len(ratios)}"
                )
        pt: dict[str, list[float]] = {}
        for r in rows:
            if r.get("switch") == sw and r["mode"] == "passthrough":
                pt.setdefault(r["manager"], []).append(float(r["median_s"]))
        if "sort" in pt and "approx" in pt:
            s, a = statistics.median(pt["sort"]), statistics.median(pt["approx"])
            lines.append(
                f"[{sw}] pass-through (non-approximate job): sort {s:.3f} s {pt['sort']}, "
                f"ApproxShuffleManager {a:.3f} s {pt['approx']}, overhead {100 * (a / s - 1):+.1f}% "
                f"(medians of per-application medians, {len(pt['sort'])} applications each)"
            )
            # pairs: the two applications of a round (run order alternates between rounds)
            p = [r for r in rows if r.get("switch") == sw and r["mode"] == "passthrough"]
            ratios = []
            for i in range(0, len(p) - 1, 2):
                d = {
                    p[i]["manager"]: float(p[i]["median_s"]),
                    p[i + 1]["manager"]: float(p[i + 1]["median_s"]),
                }
                if set(d) == {"sort", "approx"}:
                    ratios.append(d["approx"] / d["sort"])
            if ratios:
                g = math.exp(sum(map(math.log, ratios)) / len(ratios))
                lines.append(
                    f"[{sw}] pass-through paired ratios approx/sort {[round(x, 3) for x in ratios]}: geometric "
                    f"mean {g:.3f}, median {statistics.median(ratios):.3f}, approx slower in "
                    f"{sum(x > 1 for x in ratios)} of {len(ratios)}"
                )
    return lines


def prepare(a, tmp: str, plugin_jar: str | None = None) -> str:
    """The applications' classpath from snapshots of the jars in tmp (a concurrent rebuild must not change the
    classes under running JVMs; plugin_jar: another approx-spark jar instead of this tree's), the empty SPARK_HOME
    the Workers launch executors from, the log4j configuration and the results directory."""
    plugin, app = snapshot_jars(
        tmp, [("approx-spark", "approx-spark_2.13"), (os.path.join("examples", "spark"), "examples-spark")]
    )
    if plugin_jar:
        plugin = shutil.copy(plugin_jar, os.path.join(tmp, "approx-spark-other.jar"))
    spark_cp = open(os.path.join(ROOT, "examples", "spark", "target", "spark-classpath.txt")).read().strip()
    a.spark_home = os.path.join(tmp, "spark-home")
    os.makedirs(os.path.join(a.spark_home, "jars"))
    a.log4j = os.path.join(ROOT, "examples", "spark", "log4j2.properties")
    os.makedirs(os.path.join(ROOT, "benchmarks", "results", "spark"), exist_ok=True)
    return plugin + ":" + app + ":" + spark_cp


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--summarize"]:  # the summary of existing result files, printed only
        for path in argv[1:]:
            print(f"# {path}")
            for line in summarize(path):
                print("# " + line)
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--switch", default="slack", help="comma-separated switch modes: slack,fifo")
    ap.add_argument("--rate", default="200mbit", help="every switch port (tc syntax)")
    ap.add_argument("--buffer", default="150kb")
    ap.add_argument(
        "--bg-load", type=float, default=0.5, help="background TCP toward each executor host, x rate"
    )
    ap.add_argument("--rows", default="1000000")
    ap.add_argument("--runs", default="5")
    ap.add_argument("--partitions", default="8")
    ap.add_argument("--passthrough-rounds", type=int, default=3)
    ap.add_argument("--passthrough-rows", default="300000")
    ap.add_argument("--skip-query", action="store_true")
    ap.add_argument("--worker-memory", default="1g")
    ap.add_argument("--executor-memory", default="768m")
    ap.add_argument("--app-timeout", type=float, default=900)
    ap.add_argument("--name", default="nlspark")
    ap.add_argument("--conf", action="append", default=[], help="extra spark.key=value for the application")
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep-tmp", action="store_true")
    a = ap.parse_args(argv)
    nlab.require_root()
    os.environ.pop("SPARK_TESTING", None)
    lab_dirs = [n for n in nlab.existing_namespaces() if not n.startswith(a.name + "-")]
    if lab_dirs:
        print(
            f"other network namespaces exist ({' '.join(lab_dirs)}): another lab benchmark is running? "
            "(set NETLAB_SPARK_FORCE=1 to go ahead)",
            file=sys.stderr,
        )
        if os.environ.get("NETLAB_SPARK_FORCE") != "1":
            return 2
    tmp = tempfile.mkdtemp(prefix="spark-netlab-")
    try:
        cp = prepare(a, tmp)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    out = a.out or os.path.join(
        ROOT, "benchmarks", "results", "spark", f"netlab-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    )
    lab = Lab(a, tmp)
    interrupt_on_signals()
    with open(out, "w") as f:
        f.write(
            f"# {time.strftime('%c %Z')} {os.cpu_count()} cores; spark-netlab: {' '.join(sys.argv[1:]) or '(defaults)'}\n"
            f"# topology: driver h1, master h2, workers/executors h3 h4 (1 core, {a.executor_memory}), "
            f"iperf3 h5 -> h3,h4 at {a.bg_load} x {a.rate}; every port {a.rate}, buffer {a.buffer}\n"
        )
        f.flush()

        def one_switch(sw: str) -> None:
            lab.up(sw)
            lab.start_cluster(cp)
            lab.start_background(BG, WORKERS, a.bg_load)
            common = ["--partitions", a.partitions, "--runs", a.runs]
            if not a.skip_query:
                for r in lab.app(cp, "query", ["--rows", a.rows, *common], f"{sw}-query"):
                    f.write(f"{r} switch={sw}\n")
                    f.flush()
                # cumulative per-class counters of the executors' downlinks after the query application
                # (class 0 / fifo leaf includes the background TCP; slack classes 1-7 carry only ATP)
                for h in WORKERS:
                    f.write(f"# [{sw}] tc p{h} after the query application: {lab.tc_classes(h)}\n")
            for i in range(a.passthrough_rounds):
                for m in ("sort", "approx") if i % 2 == 0 else ("approx", "sort"):
                    for r in lab.app(
                        cp,
                        "passthrough",
                        ["--manager", m, "--rows", a.passthrough_rows, *common],
                        f"{sw}-pt{i}-{m}",
                    ):
                        f.write(f"{r} switch={sw}\n")
                        f.flush()
            # background TCP goodput over the measurement: a sanity check that the ports were congested
            f.write("".join(l + "\n" for l in lab.background_lines(sw, BG, WORKERS)))

        status = lab.each_switch(f, one_switch)
        lines = summarize(out)
        f.write("\n# SUMMARY\n" + "".join("# " + l + "\n" for l in lines))
    print("\nSUMMARY\n" + "\n".join(lines))
    print(f"results: {out}\nlogs: {tmp}")
    if not a.keep_tmp and status == 0:
        shutil.rmtree(os.path.join(tmp, "spark-home"), ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
