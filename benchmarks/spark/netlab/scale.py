#!/usr/bin/env python3
"""Issue 16's benchmark at production scale in the network lab (docs/spark-netlab.md, "At production scale").

The lab of run.py (driver h1, standalone Master h2, Workers/executors h3 h4 with 1 core each, background TCP h5 ->
h3,h4 at --bg-load x the port rate, every switch port shaped), but the application is SparkScaleBench: rows
GENERATED inside the job (spark.range + seeded rand/randn, never cached or stored), one application per (size, mode)
so that each executor JVM's peaks belong to one mode. Per size of --scale-rows: exact first (ApproxQuery.exact() over
sort shuffle: every row crosses the shuffle; it writes the answer), then approx (the same query over
ApproxShuffleManager, checked against that answer: groups outside e_max), and with --modes exact,approx,samplesend
SampleSend (TCP-based approximation: Dataset.sample at the fraction approx delivered, then the exact query over sort
shuffle, sums and counts scaled by 1/f; checked the same way). The query is SparkBench's q (--query sampled: hourly
avg(distance) + sum(fare) + count without exact partials).

Per application the RESULT line of SparkScaleBench gets: the switch, wall time of the client, load averages, and the
byte counters of the lab's interfaces over the application: exec_tx_mb (the executors' eth0 transmit: the shuffle
data they serve to the other executor, task results and the background's ACKs), exec_rx_mb, bg_mbps (the background
host's eth0 transmit rate over the application per executor it sends to: the background's goodput incl. headers), drops at the
executors' switch ports.
Raw lines + summary: benchmarks/results/spark/netlab-scale-<timestamp>.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/spark: e2e_summary
import run as lab_run  # noqa: E402  (run.py of this directory: the Lab with its standalone cluster)
from netlab import lab as nlab  # noqa: E402
from netlab.labcluster import interrupt_on_signals, ip  # noqa: E402

ROOT = lab_run.ROOT
DRIVER, MASTER, WORKERS, BG = lab_run.DRIVER, lab_run.MASTER, lab_run.WORKERS, lab_run.BG


def parse(line: str) -> dict[str, str]:
    """key=value fields of a RESULT line (values may be [a,b] lists)."""
    return dict(re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", line))


def nums(v: str) -> list[float]:
    """[a,b] -> [a, b]; a plain number -> [x]; '' or [] -> []."""
    return [float(x) for x in v.strip("[]").split(",") if x.strip()]


def summarize(path: str) -> list[str]:
    """Per switch and size: exact vs approx JCT, ratio, peaks, errors, bytes over the switch, background rate;
    then the memory-flatness of each mode across sizes (largest size's peak / smallest's)."""
    rows = [parse(l) for l in open(path) if l.startswith("RESULT")]
    return summary_lines(rows)


def summary_lines(rows: list[dict[str, str]]) -> list[str]:
    lines = []
    for sw in sorted({r.get("switch", "?") for r in rows}):
        mine = [r for r in rows if r.get("switch", "?") == sw]
        sizes = sorted({int(r["rows"]) for r in mine})
        for n in sizes:
            by = {r["mode"]: r for r in mine if int(r["rows"]) == n}
            for m in ALL_MODES:
                if m not in by:
                    continue
                r = by[m]
                jct = float(r["median_s"])
                out = (
                    f"[{sw}] rows={n} ({float(r['generated_gb']):.1f} GB) {m:6s} JCT {jct:8.1f} s"
                    f"  {n / jct / 1e6:6.2f} M rows/s"
                )
                if m != "exact" and "exact" in by:
                    out += f"  {m}/exact {jct / float(by['exact']['median_s']):.2f}"
                if m == "approx" and "samplesend" in by:
                    out += f"  approx/samplesend {jct / float(by['samplesend']['median_s']):.2f}"
                out += (
                    f"  peak heap {r.get('executor_peak_heap_mb', '?')} MB RSS {r.get('executor_peak_rss_mb', '?')}"
                    f" MB  executor CPU {float(r.get('executor_cpu_s', 'nan')):.0f} s"
                )
                if "exec_tx_mb" in r:
                    out += f"  executors sent {float(r['exec_tx_mb']):.0f} MB"
                if "bg_mbps" in r:
                    out += f"  background {float(r['bg_mbps']):.1f} Mbit/s per executor"
                if "group_aggregates_outside_emax" in r:
                    out += (
                        f"  outside e_max {r['group_aggregates_outside_emax']} (max rel error "
                        f"{100 * float(r['max_rel_error']):.2f}%)"
                    )
                if "sample_fraction" in r:
                    out += f"  sample fraction {float(r['sample_fraction']):.4f}"
                if "load" in r:
                    out += f"  load {r['load']}"
                lines.append(out)
        if len(sizes) >= 2:
            lo, hi = sizes[0], sizes[-1]
            for m in ("exact", "approx"):
                a = [r for r in mine if r["mode"] == m and int(r["rows"]) == lo]
                b = [r for r in mine if r["mode"] == m and int(r["rows"]) == hi]
                if not a or not b:
                    continue
                parts = []
                for key, name in (("executor_peak_heap_mb", "heap"), ("executor_peak_rss_mb", "RSS")):
                    x, y = nums(a[0].get(key, "")), nums(b[0].get(key, ""))
                    if x and y:
                        parts.append(f"{name} {max(x):.0f} -> {max(y):.0f} MB (x{max(y) / max(x):.2f})")
                if parts:
                    lines.append(
                        f"[{sw}] {m} peak memory as input grows x{hi / lo:g} ({lo} -> {hi} rows): "
                        + ", ".join(parts)
                    )
    return lines


# issue 31's modes (SparkScaleBench): the approximate query over ATP / the TCP data plane, and Spark's sampling
NEW_APPROXIMATE = ("atp", "tcp_ss", "tcp_es")
SAMPLING = ("spark_sampleby", "spark_sample")
ALL_MODES = ("exact", "approx", "samplesend", *NEW_APPROXIMATE, *SAMPLING)


def check_modes(modes: list[str]) -> str | None:
    """Why this --modes order cannot run (None: it can)."""
    for m in modes:
        if m not in ALL_MODES:
            return f"--modes: unknown mode {m!r} (one of {','.join(ALL_MODES)})"
    if "samplesend" in modes and ("approx" not in modes or modes.index("approx") > modes.index("samplesend")):
        return "--modes: samplesend needs approx before it (it samples at the fraction approx delivered)"
    first = min((modes.index(m) for m in NEW_APPROXIMATE if m in modes), default=None)
    for m in SAMPLING:
        if m in modes and (first is None or first > modes.index(m)):
            return f"--modes: {m} needs atp, tcp_ss or tcp_es before it (their per-group fractions)"
    return None


def netns_bytes(ns: str, dev: str = "eth0") -> tuple[int, int]:
    """(rx, tx) bytes of dev in namespace ns."""
    out = subprocess.run(
        ["ip", "-n", ns, "-s", "-j", "link", "show", dev], capture_output=True, text=True, check=True
    ).stdout
    st = json.loads(out)[0]["stats64"]
    return int(st["rx"]["bytes"]), int(st["tx"]["bytes"])


def port_drops(sw_ns: str, port: str) -> int:
    """Packets the switch port's qdiscs dropped so far."""
    out = subprocess.run(
        ["ip", "netns", "exec", sw_ns, "tc", "-s", "qdisc", "show", "dev", port],
        capture_output=True,
        text=True,
    ).stdout
    return sum(int(x) for x in re.findall(r"\(dropped (\d+)", out))


class ScaleLab(lab_run.Lab):
    def counters(self) -> dict[str, int]:
        c = {}
        for h in (*WORKERS, BG):
            c[f"rx{h}"], c[f"tx{h}"] = netns_bytes(self.ns(h))
        for h in WORKERS:
            c[f"drop{h}"] = port_drops(f"{self.name}-sw", f"p{h}")
        return c

    def scale_app(
        self,
        cp: str,
        mode: str,
        rows: int,
        truth: str,
        sw: str,
        fraction: float | None = None,
        fractions: str | None = None,
    ) -> list[str]:
        a = self.a
        conf = {
            "spark.driver.host": ip(DRIVER),
            "spark.driver.bindAddress": ip(DRIVER),
            "spark.executor.extraClassPath": cp,
            "spark.executor.memory": a.executor_memory,
            "spark.executor.cores": "1",
            "spark.cores.max": str(len(WORKERS)),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
            "spark.approx.lineRateBps": str(self.rate_bps),
        }
        for kv in a.conf:
            k, v = kv.split("=", 1)
            conf[k] = v
        argv = [
            "--master",
            f"spark://{ip(MASTER)}:7077",
            "--mode",
            mode,
            "--rows",
            str(rows),
            *(["--config", a.config, "--payload", a.payload] if a.config else ["--query", a.query]),
            "--runs",
            a.runs,
            "--partitions",
            a.partitions,
            "--reducers",
            a.reducers,
            "--truth",
            truth,
        ]
        if fraction is not None:
            argv += ["--fraction", f"{fraction:.6g}"]
        if fractions is not None:
            argv += ["--fractions", fractions]
        for k, v in conf.items():
            argv += [f"--{k}", v]
        cmd = [
            "java",
            "-Xmx1g",
            *lab_run.OPENS,
            f"-Dlog4j2.configurationFile={a.log4j}",
            "-cp",
            cp,
            "io.netapprox.examples.spark.SparkScaleBench",
            *argv,
        ]
        tag = f"{sw}-{rows}-{mode}"
        load0 = open("/proc/loadavg").read().split()[:3]
        c0 = self.counters()
        t0 = time.time()
        rc, text, secs = self.run_client(
            DRIVER, cmd, f"driver-{tag}.log", a.app_timeout, {"SPARK_SCALA_VERSION": "2.13"}
        )
        c1 = self.counters()
        load1 = open("/proc/loadavg").read().split()[:3]
        res = [l for l in text.splitlines() if l.startswith("RESULT")]
        self.log(f"app {tag}: rc={rc} in {time.time() - t0:.0f} s, {len(res)} RESULT line(s); load {load1}")
        if rc != 0 or not res:
            self.log(f"app {tag} failed; tail:\n" + "\n".join(text.splitlines()[-25:]))
        d = {k: c1[k] - c0[k] for k in c0}
        extra = (
            f" switch={sw} wall_s={secs:.1f} load={','.join(load0)}->{','.join(load1)}"
            f" exec_tx_mb={(d[f'tx{WORKERS[0]}'] + d[f'tx{WORKERS[1]}']) / 1e6:.1f}"
            f" exec_rx_mb={(d[f'rx{WORKERS[0]}'] + d[f'rx{WORKERS[1]}']) / 1e6:.1f}"
            f" bg_tx_mb={d[f'tx{BG}'] / 1e6:.1f}"
            f" bg_mbps={d[f'tx{BG}'] * 8 / max(secs, 1e-9) / 1e6 / len(WORKERS):.1f}"
            f" port_drops=[{d[f'drop{WORKERS[0]}']},{d[f'drop{WORKERS[1]}']}]"
        )
        self.notes.append(f"# app {tag}: rc={rc} wall {secs:.0f} s")
        return [r + extra for r in res]


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--summarize"]:
        for path in argv[1:]:
            print(f"# {path}")
            for line in summarize(path):
                print("# " + line)
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--scale-rows", default="85000000,340000000", help="comma-separated sizes (rows; 32 B each)"
    )
    ap.add_argument("--switch", default="fifo", help="comma-separated switch modes: fifo,slack")
    ap.add_argument("--rate", default="200mbit")
    ap.add_argument("--buffer", default="150kb")
    ap.add_argument("--bg-load", type=float, default=0.5)
    ap.add_argument("--query", default="sampled", help="SparkScaleBench --query: sampled | median | avg")
    ap.add_argument(
        "--config",
        default=None,
        choices=("cpu-bound", "network-bound"),
        help="issue 31's configuration (SparkScaleBench --config; replaces --query)",
    )
    ap.add_argument(
        "--payload", default="200", help="--config network-bound: bytes of the carried zone column"
    )
    ap.add_argument(
        "--modes",
        default="exact,approx",
        help="exact first: it writes the answer the others are checked on; samplesend after approx; issue 31's "
        "modes exact,atp,tcp_ss,tcp_es,spark_sampleby,spark_sample (the sampling ones after an approximate one)",
    )
    ap.add_argument(
        "--e2e-summary",
        default=None,
        help="also write issue 31's summary (benchmarks/spark/e2e_summary.py) here, e.g. "
        "benchmarks/results/spark/e2e/summary.json (--merge: other configs' cells stay)",
    )
    ap.add_argument("--runs", default="1")
    ap.add_argument("--partitions", default="8", help="map tasks (generated input partitions)")
    ap.add_argument("--reducers", default="2")
    ap.add_argument("--worker-memory", default="1g")
    ap.add_argument("--executor-memory", default="512m")
    ap.add_argument("--app-timeout", type=float, default=5400)
    ap.add_argument("--name", default="nlscale")
    ap.add_argument("--conf", action="append", default=[])
    ap.add_argument(
        "--plugin-jar",
        default=None,
        help="another approx-spark jar (e.g. an older build's) instead of this tree's",
    )
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    modes = a.modes.split(",")
    err = check_modes(modes)
    if err:
        ap.error(err)
    nlab.require_root()
    os.environ.pop("SPARK_TESTING", None)
    others = [n for n in nlab.existing_namespaces() if not n.startswith(a.name + "-")]
    if others and os.environ.get("NETLAB_SPARK_FORCE") != "1":
        print(
            f"other network namespaces exist ({' '.join(others)}): set NETLAB_SPARK_FORCE=1 to go ahead",
            file=sys.stderr,
        )
        return 2
    tmp = tempfile.mkdtemp(prefix="spark-netlab-scale-")
    cp = lab_run.prepare(a, tmp, a.plugin_jar)
    out = a.out or os.path.join(
        ROOT, "benchmarks", "results", "spark", f"netlab-scale-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    )
    lab = ScaleLab(a, tmp)
    interrupt_on_signals()
    with open(out, "w") as f:
        f.write(
            f"# {time.strftime('%c %Z')} {os.cpu_count()} cores, shared machine; spark-netlab scale: "
            f"{' '.join(sys.argv[1:]) or '(defaults)'}\n"
            f"# topology: driver h1, master h2, workers/executors h3 h4 (1 core, {a.executor_memory}), iperf3 h5 "
            f"-> h3,h4 at {a.bg_load} x {a.rate}; every port {a.rate}, buffer {a.buffer}; rows generated in the "
            f"job; query {a.query}\n"
        )
        f.flush()

        def one_switch(sw: str) -> None:
            lab.up(sw)
            lab.start_cluster(cp)
            lab.start_background(BG, WORKERS, a.bg_load)
            for rows in (int(x) for x in a.scale_rows.split(",")):
                truth = os.path.join(tmp, f"truth-{sw}-{rows}.txt")
                fraction = None  # what approx delivered: SampleSend ships the same fraction
                fractions = os.path.join(
                    tmp, f"fractions-{sw}-{rows}.txt"
                )  # per group, of the first approximate
                wrote = False
                for mode in a.modes.split(","):
                    per_group = None
                    if mode in NEW_APPROXIMATE and not wrote:
                        per_group, wrote = fractions, True
                    elif mode in SAMPLING:
                        per_group = fractions
                    for r in lab.scale_app(
                        cp,
                        mode,
                        rows,
                        truth,
                        sw,
                        fraction if mode == "samplesend" and per_group is None else None,
                        per_group,
                    ):
                        delivered = parse(r).get("sample_fraction") if mode == "approx" else None
                        if delivered is not None:
                            fraction = float(delivered)
                        f.write(r + "\n")
                        f.flush()
                for h in WORKERS:
                    f.write(f"# [{sw}] tc p{h} after rows={rows}: {lab.tc_classes(h)}\n")
                f.flush()
            f.write("".join(l + "\n" for l in lab.background_lines(sw, BG, WORKERS)))

        status = lab.each_switch(f, one_switch)
        f.write(f"# load at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}\n")
        lines = summarize(out)
        f.write("\n# SUMMARY\n" + "".join("# " + l + "\n" for l in lines))
    if a.e2e_summary:
        import e2e_summary  # noqa: E402  (benchmarks/spark/e2e_summary.py)

        commit = subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        e2e_summary.main(
            [
                out,
                "--out",
                a.e2e_summary,
                "--merge",
                "--command",
                "bash benchmarks/spark/netlab/scale.sh " + " ".join(argv),
                "--commit",
                commit.stdout.strip() or "unknown",
                "--load-end",
                " ".join(open("/proc/loadavg").read().split()[:3]),
                "--note",
                f"network lab, {os.cpu_count()} cores; see the load= fields of {os.path.basename(out)}",
            ]
        )
    print("\nSUMMARY\n" + "\n".join(lines))
    print(f"results: {out}\nlogs: {tmp}")
    if status == 0:
        shutil.rmtree(os.path.join(tmp, "spark-home"), ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
