"""Kafka lab benchmark (docs/kafka.md section 8). Needs root and a built approx-kafka (test classes, relay jar).

Topology (benchmarks/netlab, module netlab.lab): 2 hosts around the lab switch; the bottleneck queue is on the
switch port toward h1.
  h2 (10.77.0.2): KRaft broker (kafka.Kafka from kafka_2.13, its own JVM), the relay beside it
                  (java -jar approx-kafka-relay.jar), and the producer (local to the broker, before the runs)
  h1 (10.77.0.1): the consumer (io.netapprox.kafka.lab.KafkaLab consume), plain or approximate, one at a time
Each run reads the whole topic from the start; the two modes alternate. Measured per run: seconds, records
covered per second, windows completed per second and when each window completed, bytes received by h1's eth0
(/proc/net/dev), and for the approximate consumer every (window, stratum) total against the exact one.
"""

from __future__ import annotations

import argparse
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONSUMER, BROKER = 1, 2


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
    ap.add_argument("--switch", default="fifo")
    ap.add_argument("--rate", default="100mbit", help="the bottleneck (switch port toward the consumer host)")
    ap.add_argument("--buffer", default="150kb")
    ap.add_argument("--records", default="1000000")
    ap.add_argument("--partitions", default="2")
    ap.add_argument("--windows", default="10")
    ap.add_argument("--strata", default="4")
    ap.add_argument("--value-bytes", default="400")
    ap.add_argument("--emax", default="0.05")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--relay-args", default="", help="extra relay options, e.g. '--read-threads 1'")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
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
    os.makedirs(os.path.join(ROOT, "benchmarks", "results", "kafka"), exist_ok=True)
    out = a.out or os.path.join(
        ROOT, "benchmarks", "results", "kafka", f"netlab-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    )
    procs: list[subprocess.Popen] = []
    lines: list[str] = []

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

    # the broker's own class path: Kafka's jars without the test resources (which set the log level to WARN)
    kafka_cp = open(os.path.join(target, "test-classpath.txt")).read().strip()

    def on_signal(signum, _f):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    results: dict[str, list[dict]] = {"plain": [], "approx": []}
    try:
        plan = nlab.QueuePlan.build(a.switch, a.rate, a.buffer)
        nlab.up(a.name, 2, plan, quiet=True)
        log(
            f"lab {a.name} up: consumer h1 {ip(CONSUMER)}, broker+relay h2 {ip(BROKER)}, {a.switch} switch, "
            f"bottleneck {a.rate} (buffer {a.buffer}) on the port toward h1; load average "
            f"{os.getloadavg()[0]:.1f} (SHARED 2-core machine)"
        )
        props = os.path.join(tmp, "server.properties")
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
                        f"log.dirs={tmp}/kafka-logs",
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
        spawn(BROKER, java("kafka.Kafka", [props], "768m", kafka_cp), "broker.log")
        wait_log(os.path.join(tmp, "broker.log"), r"Kafka Server started", 120, procs)
        log(f"KRaft broker {ip(BROKER)}:9092 started (kafka.Kafka 4.3.1, own JVM)")
        spawn(
            BROKER,
            [
                "java",
                "-Xmx512m",
                "-jar",
                relay,
                "--bootstrap",
                f"{ip(BROKER)}:9092",
                "--broker-id",
                "1",
                "--listen",
                f"{ip(BROKER)}:7390",
                "--secret-file",
                secret,
                # the lab's broker is PLAINTEXT without ACLs: the relay reads as itself
                "--authorization",
                "none",
                *a.relay_args.split(),
            ],
            "relay.log",
        )
        wait_log(os.path.join(tmp, "relay.log"), r"serves", 60, procs)
        log(f"relay {ip(BROKER)}:7390 started")
        topic = "trips"
        truth = os.path.join(tmp, "truth.csv")
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
        log([x for x in r.stdout.splitlines() if x.startswith("produced")][-1])
        for run in range(a.runs):
            for mode in ("plain", "approx"):
                before = rx_bytes(ns(CONSUMER))
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
                    mode,
                    "--emax",
                    a.emax,
                ]
                if mode == "approx":
                    args += ["--relay", f"{ip(BROKER)}:7390", "--secret-file", secret]
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
                wire = rx_bytes(ns(CONSUMER)) - before
                res = [x for x in r.stdout.splitlines() if x.startswith("result ")]
                if r.returncode != 0 or not res:
                    raise RuntimeError(f"{mode} consumer failed: {r.stdout[-1500:]} {r.stderr[-3000:]}")
                f = res[-1].split()
                d = {f[i]: f[i + 1] for i in range(1, len(f) - 1, 2)}
                done = [int(x.split()[3]) for x in r.stdout.splitlines() if x.startswith("window ")]
                gaps = [b - a_ for a_, b in zip([0] + done, done)]
                d["wire_bytes"] = wire
                d["window_gap_ms"] = statistics.mean(gaps) if gaps else float("nan")
                d["first_window_ms"] = done[0] if done else float("nan")
                results[mode].append(d)
                log(
                    f"run {run + 1} {mode}: {float(d['seconds']):.1f} s, {float(d['records_per_s']):,.0f} records/s "
                    f"covered, {d['records_returned']} returned, {float(d['windows_per_s']):.3f} windows/s "
                    f"(first after {d['first_window_ms']} ms, then every {d['window_gap_ms']:.0f} ms), "
                    f"{wire / 1e6:.1f} MB on h1's link, within e_max {d['within_emax']}/{d['cells']} "
                    f"(worst {float(d['worst_error']) * 100:.2f} %), load {d['load']}"
                )
        p, q = results["plain"], results["approx"]
        wps = lambda rs: statistics.mean(float(x["windows_per_s"]) for x in rs)  # noqa: E731
        mb = lambda rs: statistics.mean(x["wire_bytes"] for x in rs) / 1e6  # noqa: E731
        log(
            f"mean windows/s: plain {wps(p):.3f}, approximate {wps(q):.3f}: approximate/plain = {wps(q) / wps(p):.2f}"
            f" (aim >= 3); MB on the consumer's link: plain {mb(p):.1f}, approximate {mb(q):.1f} "
            f"({mb(p) / mb(q):.2f}x less); approximate windows x strata within e_max: "
            f"{sum(int(x['within_emax']) for x in q)}/{sum(int(x['cells']) for x in q)}; load average "
            f"{os.getloadavg()[0]:.1f} (SHARED machine)"
        )
    except KeyboardInterrupt as e:
        log(f"interrupted ({e})")
        return 130
    finally:
        for p in reversed(procs):
            nlab.stop_group(p, 10)
        nlab.down(a.name, quiet=True)
        with open(out, "w") as f:
            f.write(f"# command: bash benchmarks/kafka/run.sh {' '.join(sys.argv[1:])}\n")
            f.write(
                f"# {time.strftime('%Y-%m-%d %H:%M:%S')} commit "
                f"{subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, cwd=ROOT).stdout.strip()}"
                f"; SHARED 2-core machine (other engineers' jobs running)\n"
            )
            f.write("\n".join(lines) + "\n")
        print(f"results: {out}; logs: {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
