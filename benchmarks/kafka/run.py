"""Kafka lab benchmark (docs/kafka.md section 12). Needs root and a built approx-kafka (test classes, relay jar).

Topology (benchmarks/netlab, module netlab.lab): 3 hosts around the lab switch; the bottleneck queue is on the
switch port toward h1.
  h2 (10.77.0.2): KRaft broker (kafka.Kafka from kafka_2.13, its own JVM), one relay per approximate mode beside it
                  (java -jar approx-kafka-relay.jar: `atp` with --data-plane atp, `tcp` / `tcp_ss` / `tcp_es` with
                  --data-plane tcp and the TCP send policy), and the producer (local to the broker, before the runs)
  h1 (10.77.0.1): the consumer (io.netapprox.kafka.lab.KafkaLab consume), one at a time: `plain` (a KafkaConsumer
                  reading every record) or approximate through the mode's relay (approx.data.plane atp or tcp)
  h3 (10.77.0.3): background TCP (iperf3, cubic, DSCP 0) toward h1 at --bg-load x the bottleneck (0: none)
Each run reads the whole topic from the start; after --warmup unmeasured runs through each relay, the modes
alternate (their order rotates from run to run).
Measured per run: seconds, records covered per second, windows completed per second and when each window
completed, bytes h1 received from the broker host (h1's eth0 minus the background's TCP segments), every
(window, stratum) total of the approximate consumer against the exact one, and the relay's segmentsSentOverTcp
(from its RelayMetrics log line): 0 on ATP, > 0 over TCP. Per (switch, mode): benchmarks/results/kafka/e2e/summary.json
(`summary`, tested by benchmarks/kafka/test_run.py); raw lines in benchmarks/results/kafka/e2e/ (not in git).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from netlab import lab as nlab
from netlab.labcluster import load_note

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONSUMER, BROKER, BG = 1, 2, 3
BG_PORT = 5201
# relay options per approximate mode; the consumer's approx.data.plane follows the relay's
MODES = {
    "plain": None,
    "atp": ["--data-plane", "atp"],
    "tcp": ["--data-plane", "tcp"],
    "tcp_ss": ["--data-plane", "tcp", "--tcp-send-policy", "sampleSend"],
    "tcp_es": ["--data-plane", "tcp", "--tcp-send-policy", "earlySend"],
}
# a frame's bytes on h1's eth0 beyond its TCP payload: Ethernet 14 + IPv4 20 + TCP with timestamps 32
FRAME_OVERHEAD = 66


def ip(h: int) -> str:
    return f"{nlab.SUBNET}.{h}"


def rx_bytes(ns: str) -> int:
    out = subprocess.run(
        ["ip", "netns", "exec", ns, "cat", "/proc/net/dev"], capture_output=True, text=True
    ).stdout
    for line in out.splitlines():
        if line.strip().startswith("eth0:"):
            return int(line.split(":")[1].split()[0])
    raise RuntimeError("no eth0 in " + ns)


def parse_tcp_rx(ss_text: str, port: int) -> int:
    """Bytes on the wire of what the TCP connections with local port `port` received, from `ss -tinH` output:
    payload (bytes_received) plus FRAME_OVERHEAD per segment in (segs_in)."""
    total = 0
    conn = None
    for line in ss_text.splitlines():
        if not line.startswith((" ", "\t")):
            f = line.split()
            conn = f[3] if len(f) > 3 else ""
            continue
        if conn is not None and conn.endswith(f":{port}"):
            got = re.search(r"bytes_received:(\d+)", line)
            segs = re.search(r"segs_in:(\d+)", line)
            total += (int(got.group(1)) if got else 0) + (int(segs.group(1)) if segs else 0) * FRAME_OVERHEAD
    return total


def bg_rx_bytes(ns: str) -> int:
    """Wire bytes the background iperf3 server in ns has received so far (0 without background)."""
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tinH"], capture_output=True, text=True).stdout
    return parse_tcp_rx(out, BG_PORT)


def segments_over_tcp(log_text: str) -> int | None:
    """The relay's segmentsSentOverTcp in its last RelayMetrics log line, None if it logged none yet."""
    found = re.findall(r"segmentsOverTcp=(\d+)", log_text)
    return int(found[-1]) if found else None


def parse_consumer(stdout: str) -> dict:
    """KafkaLab consume's `result` line as a dict, plus when each window completed (`window` lines)."""
    res = [x for x in stdout.splitlines() if x.startswith("result ")]
    if not res:
        raise ValueError("no result line")
    f = res[-1].split()
    d: dict = {f[i]: f[i + 1] for i in range(1, len(f) - 1, 2)}
    done = [int(x.split()[3]) for x in stdout.splitlines() if x.startswith("window ")]
    gaps = [b - a for a, b in zip([0] + done, done)]
    d["window_gap_ms"] = statistics.mean(gaps) if gaps else float("nan")
    d["first_window_ms"] = done[0] if done else float("nan")
    return d


def summary(runs: list[dict], header: dict) -> dict:
    """The summary document: one cell per (switch, mode) in the order first seen, from runs of
    {switch, mode, windows_per_s, wire_bytes, cells, within_emax, segments_over_tcp}; per switch the ratios the
    issue's targets name (atp / each tcp mode, atp / plain)."""
    cells: dict[tuple[str, str], dict] = {}
    for r in runs:
        c = cells.setdefault(
            (r["switch"], r["mode"]),
            dict(
                switch=r["switch"], mode=r["mode"], runs=0, wps=[], mb=[], outside=0, strata_cells=0, tcp=None
            ),
        )
        c["runs"] += 1
        c["wps"].append(float(r["windows_per_s"]))
        c["mb"].append(r["wire_bytes"] / 1e6)
        if r["mode"] != "plain":  # the plain consumer is the truth
            c["outside"] += int(r["cells"]) - int(r["within_emax"])
            c["strata_cells"] += int(r["cells"])
        if r.get("segments_over_tcp") is not None:
            c["tcp"] = (c["tcp"] or 0) + int(r["segments_over_tcp"])
    out = []
    for c in cells.values():
        out.append(
            dict(
                switch=c["switch"],
                mode=c["mode"],
                runs=c["runs"],
                windows_per_s=round(statistics.mean(c["wps"]), 4),
                windows_per_s_runs=[round(x, 4) for x in c["wps"]],
                consumer_link_mb=round(statistics.mean(c["mb"]), 2),
                windows_outside=c["outside"],
                window_strata_checked=c["strata_cells"],
                segments_over_tcp=c["tcp"],
            )
        )
    ratios = {}
    for sw in dict.fromkeys(c["switch"] for c in out):
        by = {c["mode"]: c["windows_per_s"] for c in out if c["switch"] == sw}
        r = {}
        if "atp" in by:
            for m, v in by.items():
                if m != "atp" and v > 0:
                    r[f"atp_over_{m}"] = round(by["atp"] / v, 3)
        ratios[sw] = r
    return {"header": header, "cells": out, "windows_per_s_ratios": ratios}


def write_summary(path: str, doc: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def wait_log(path: str, pattern: str, timeout: float, procs) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                if re.search(pattern, f.read()):
                    return
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"a lab process exited; see {path}")
        time.sleep(0.5)
    raise RuntimeError(f"timeout waiting for {pattern!r} in {path}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", default="kafkabench")
    ap.add_argument("--switch", default="fifo", help="comma-separated switch modes: fifo,slack")
    ap.add_argument(
        "--modes",
        default="plain,atp,tcp",
        help=f"comma-separated, of {','.join(MODES)} (tcp: the relay's default policy)",
    )
    ap.add_argument("--rate", default="100mbit", help="the bottleneck (switch port toward the consumer host)")
    ap.add_argument("--buffer", default="150kb")
    ap.add_argument(
        "--bg-load", type=float, default=0.5, help="background TCP h3 -> h1, x the bottleneck rate (0: none)"
    )
    ap.add_argument("--records", default="1000000")
    ap.add_argument("--partitions", default="2")
    ap.add_argument("--windows", default="10")
    ap.add_argument("--strata", default="4")
    ap.add_argument("--value-bytes", default="400")
    ap.add_argument("--emax", default="0.05")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="unmeasured runs per relay before the measured ones (each mode's relay is its own JVM: JIT warm-up)",
    )
    ap.add_argument("--relay-args", default="", help="extra options of every relay, e.g. '--read-threads 1'")
    ap.add_argument(
        "--out", default=None, help="raw lines (default benchmarks/results/kafka/e2e/netlab-<time>.txt)"
    )
    ap.add_argument(
        "--summary", default=os.path.join(ROOT, "benchmarks", "results", "kafka", "e2e", "summary.json")
    )
    a = ap.parse_args(argv)
    modes = a.modes.split(",")
    bad = [m for m in modes if m not in MODES]
    if bad:
        print(f"--modes: unknown {bad}; known: {list(MODES)}", file=sys.stderr)
        return 2
    nlab.require_root()
    target = os.path.join(ROOT, "approx-kafka", "target")
    relay_jar = os.path.join(target, "approx-kafka-relay.jar")
    for need in (relay_jar, os.path.join(target, "test-classes"), os.path.join(target, "test-classpath.txt")):
        if not os.path.exists(need):
            print(f"{need} missing (mvn -B -ntp install -DskipTests)", file=sys.stderr)
            return 1
    tmp = tempfile.mkdtemp(prefix="kafka-netlab-")
    # snapshots: a concurrent rebuild must not change the classes under running JVMs
    shutil.copytree(os.path.join(target, "test-classes"), os.path.join(tmp, "test-classes"))
    shutil.copytree(os.path.join(target, "classes"), os.path.join(tmp, "classes"))
    relay = shutil.copy(relay_jar, os.path.join(tmp, "relay.jar"))
    cp = ":".join(
        [
            os.path.join(tmp, "test-classes"),
            os.path.join(tmp, "classes"),
            open(os.path.join(target, "test-classpath.txt")).read().strip(),
        ]
    )
    secret = os.path.join(tmp, "relay.secret")
    with open(secret, "w") as f:
        f.write(os.urandom(24).hex() + "\n")
    out = a.out or os.path.join(
        ROOT, "benchmarks", "results", "kafka", "e2e", f"netlab-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    )
    os.makedirs(os.path.dirname(out), exist_ok=True)
    procs: list[subprocess.Popen] = []
    lines: list[str] = []
    load_start = os.getloadavg()
    command = f"bash benchmarks/kafka/run.sh {' '.join(sys.argv[1:] if argv is None else argv)}".strip()
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty", "--abbrev=7"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()

    def log(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        lines.append(line)

    def ns(h: int) -> str:
        return f"{a.name}-h{h}"

    def spawn(h: int, args: list[str], name: str) -> subprocess.Popen:
        p = nlab.spawn_in(ns(h), args, os.path.join(tmp, name), {})
        procs.append(p)
        return p

    def java(main: str, args: list[str], heap: str, classpath: str | None = None) -> list[str]:
        return ["java", f"-Xmx{heap}", "-cp", classpath or cp, main, *args]

    def read(name: str) -> str:
        with open(os.path.join(tmp, name), errors="replace") as f:
            return f.read()

    # the broker's own class path: Kafka's jars without the test resources (which set the log level to WARN)
    kafka_cp = open(os.path.join(target, "test-classpath.txt")).read().strip()

    def on_signal(signum, _f):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    runs: list[dict] = []
    status = 0
    try:
        for sw in a.switch.split(","):
            plan = nlab.QueuePlan.build(sw, a.rate, a.buffer)
            nlab.up(a.name, 3, plan, quiet=True)
            log(
                f"[{sw}] lab {a.name} up: consumer h1 {ip(CONSUMER)}, broker+relays h2 {ip(BROKER)}, background "
                f"h3, {sw} switch, bottleneck {a.rate} (buffer {a.buffer}) on the port toward h1; load average "
                f"{os.getloadavg()[0]:.1f}"
            )
            props = os.path.join(tmp, "server.properties")
            logs = os.path.join(tmp, f"kafka-logs-{sw}")
            with open(props, "w") as f:
                f.write(
                    "\n".join(
                        [
                            "process.roles=broker,controller",
                            "node.id=1",
                            f"controller.quorum.voters=1@{ip(BROKER)}:9093",
                            f"listeners=PLAINTEXT://{ip(BROKER)}:9092,CONTROLLER://{ip(BROKER)}:9093",
                            f"advertised.listeners=PLAINTEXT://{ip(BROKER)}:9092",
                            "controller.listener.names=CONTROLLER",
                            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                            f"log.dirs={logs}",
                            "offsets.topic.replication.factor=1",
                            "transaction.state.log.replication.factor=1",
                            "transaction.state.log.min.isr=1",
                            "group.initial.rebalance.delay.ms=0",
                            "log.retention.ms=-1",
                            f"num.partitions={a.partitions}",
                            "num.network.threads=2",
                            "num.io.threads=2",
                            "",
                        ]
                    )
                )
            uuid = (
                subprocess.run(
                    java("kafka.tools.StorageTool", ["random-uuid"], "256m", kafka_cp),
                    capture_output=True,
                    text=True,
                    check=True,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            subprocess.run(
                java("kafka.tools.StorageTool", ["format", "-t", uuid, "-c", props], "256m", kafka_cp),
                capture_output=True,
                check=True,
            )
            spawn(BROKER, java("kafka.Kafka", [props], "768m", kafka_cp), f"broker-{sw}.log")
            wait_log(os.path.join(tmp, f"broker-{sw}.log"), r"Kafka Server started", 120, procs)
            log(f"[{sw}] KRaft broker {ip(BROKER)}:9092 started (kafka.Kafka 4.3.1, own JVM)")
            ports = {}
            for i, mode in enumerate(m for m in modes if MODES[m] is not None):
                ports[mode] = 7390 + i
                spawn(
                    BROKER,
                    [
                        "java",
                        "-Xmx384m",
                        "-jar",
                        relay,
                        "--bootstrap",
                        f"{ip(BROKER)}:9092",
                        "--broker-id",
                        "1",
                        "--listen",
                        f"{ip(BROKER)}:{ports[mode]}",
                        "--secret-file",
                        secret,
                        # the lab's broker is PLAINTEXT without ACLs: the relay reads as itself
                        "--authorization",
                        "none",
                        # RelayMetrics (segmentsSentOverTcp) in the log every second
                        "--metrics-interval",
                        "1",
                        *MODES[mode],
                        *a.relay_args.split(),
                    ],
                    f"relay-{sw}-{mode}.log",
                )
                wait_log(os.path.join(tmp, f"relay-{sw}-{mode}.log"), r"serves", 60, procs)
                log(f"[{sw}] relay {mode} {ip(BROKER)}:{ports[mode]} started ({' '.join(MODES[mode])})")
            topic = "trips"
            truth = os.path.join(tmp, f"truth-{sw}.csv")
            r = subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    ns(BROKER),
                    *java(
                        "io.netapprox.kafka.lab.KafkaLab",
                        [
                            "produce",
                            "--bootstrap",
                            f"{ip(BROKER)}:9092",
                            "--topic",
                            topic,
                            "--partitions",
                            a.partitions,
                            "--records",
                            a.records,
                            "--windows",
                            a.windows,
                            "--strata",
                            a.strata,
                            "--value-bytes",
                            a.value_bytes,
                            "--truth",
                            truth,
                        ],
                        "768m",
                    ),
                ],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                raise RuntimeError("produce failed: " + r.stderr[-2000:])
            log(f"[{sw}] " + [x for x in r.stdout.splitlines() if x.startswith("produced")][-1])
            if a.bg_load > 0:
                spawn(CONSUMER, ["iperf3", "-s", "-p", str(BG_PORT), "-1"], f"iperf3-s-{sw}.log")
                time.sleep(0.3)
                per = int(a.bg_load * nlab.parse_rate(a.rate))
                spawn(
                    BG,
                    [
                        "iperf3",
                        "-c",
                        ip(CONSUMER),
                        "-p",
                        str(BG_PORT),
                        "-t",
                        "3600",
                        "-b",
                        str(per),
                        "-C",
                        "cubic",
                    ],
                    f"iperf3-c-{sw}.log",
                )
                time.sleep(1.0)
                log(
                    f"[{sw}] background TCP: iperf3 h3 -> h1 at {per / 1e6:.0f} Mbit/s ({a.bg_load:.2f} x {a.rate})"
                )
            for run in range(-a.warmup, a.runs):
                for k in range(len(modes)):
                    mode = modes[(k + max(run, 0)) % len(modes)]
                    if run < 0 and mode not in ports:
                        continue  # the plain consumer has no relay to warm up (each run is a new JVM)
                    relay_log = f"relay-{sw}-{mode}.log"
                    tcp_before = segments_over_tcp(read(relay_log)) if mode in ports else None
                    before = rx_bytes(ns(CONSUMER)) - bg_rx_bytes(ns(CONSUMER))
                    args = [
                        "consume",
                        "--bootstrap",
                        f"{ip(BROKER)}:9092",
                        "--topic",
                        topic,
                        "--partitions",
                        a.partitions,
                        "--truth",
                        truth,
                        "--mode",
                        "plain" if mode == "plain" else "approx",
                        "--emax",
                        a.emax,
                    ]
                    if mode in ports:
                        args += ["--relay", f"{ip(BROKER)}:{ports[mode]}", "--secret-file", secret]
                        args += ["--data-plane", "atp" if mode == "atp" else "tcp"]
                    r = subprocess.run(
                        [
                            "ip",
                            "netns",
                            "exec",
                            ns(CONSUMER),
                            *java("io.netapprox.kafka.lab.KafkaLab", args, "1g"),
                        ],
                        capture_output=True,
                        text=True,
                        timeout=1800,
                    )
                    wire = rx_bytes(ns(CONSUMER)) - bg_rx_bytes(ns(CONSUMER)) - before
                    try:
                        d = parse_consumer(r.stdout)
                    except ValueError:
                        d = None
                    if r.returncode != 0 or d is None:
                        raise RuntimeError(f"{mode} consumer failed: {r.stdout[-1500:]} {r.stderr[-3000:]}")
                    if mode in ports:
                        time.sleep(2.5)  # the relay's next metrics line (every second)
                        after = segments_over_tcp(read(relay_log))
                        d["segments_over_tcp"] = (after or 0) - (tcp_before or 0)
                    d.update(switch=sw, mode=mode, wire_bytes=wire)
                    if run >= 0:
                        runs.append(d)
                    log(
                        f"[{sw}] {'warm-up' if run < 0 else f'run {run + 1}'} {mode}: {float(d['seconds']):.1f} s, "
                        f"{float(d['records_per_s']):,.0f} records/s covered, {d['records_returned']} returned, "
                        f"{float(d['windows_per_s']):.3f} windows/s (first after {d['first_window_ms']} ms, then "
                        f"every {d['window_gap_ms']:.0f} ms), {wire / 1e6:.1f} MB from the broker host on h1's "
                        f"link, within e_max {d['within_emax']}/{d['cells']} (worst "
                        f"{float(d['worst_error']) * 100:.2f} %), segments over TCP "
                        f"{d.get('segments_over_tcp', '-')}, load {d['load']}"
                    )
            for p in reversed(procs):
                nlab.stop_group(p, 10)
            procs.clear()
            nlab.down(a.name, quiet=True)
    except KeyboardInterrupt as e:
        log(f"interrupted ({e})")
        status = 130
    except Exception as e:  # noqa: BLE001
        log(f"failed: {e}")
        status = 1
    finally:
        for p in reversed(procs):
            nlab.stop_group(p, 10)
        nlab.down(a.name, quiet=True)
        header = dict(
            command=command,
            commit=commit,
            date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            load=load_note(load_start[0], os.getloadavg()[0]),
            complete=status == 0,
            lab=dict(
                rate=a.rate,
                buffer=a.buffer,
                bg_load=a.bg_load,
                records=int(a.records),
                partitions=int(a.partitions),
                windows=int(a.windows),
                strata=int(a.strata),
                value_bytes=int(a.value_bytes),
                emax=float(a.emax),
                runs=a.runs,
                warmup=a.warmup,
            ),
            windows_outside="(window, stratum) totals outside e_max, summed over the mode's runs",
            consumer_link_mb="bytes h1 received from the broker host per run (eth0 minus the background's TCP)",
        )
        doc = summary(runs, header)
        for c in doc["cells"]:
            log(
                f"[{c['switch']}] {c['mode']}: {c['windows_per_s']:.3f} windows/s (runs {c['windows_per_s_runs']}), "
                f"{c['consumer_link_mb']:.1f} MB on the consumer's link, outside e_max {c['windows_outside']}/"
                f"{c['window_strata_checked']}, segments over TCP {c['segments_over_tcp']}"
            )
        log(f"windows/s ratios: {doc['windows_per_s_ratios']}")
        if runs:
            write_summary(a.summary, doc)
        with open(out, "w") as f:
            f.write(f"# command: {command}\n# {header['date']} commit {commit}; {header['load']}\n")
            f.write("\n".join(lines) + "\n")
        print(f"results: {out}; summary: {a.summary if runs else '(no runs)'}; logs: {tmp}")
    return status


if __name__ == "__main__":
    sys.exit(main())
