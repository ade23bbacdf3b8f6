"""A framework cluster in the network lab: the part the Spark and Flink lab runners share.

benchmarks/spark/netlab/run.py and benchmarks/flink/netlab/run.py both bring a lab up (every switch port shaped),
start a cluster's JVMs one per namespace, start background TCP (iperf3, cubic, DSCP 0) toward the worker hosts,
run a client application, collect its result lines and tear everything down. `LabCluster` is that life cycle;
the runners subclass it with how their cluster starts (`start_cluster`) and how their client is called.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import time

from netlab import lab as nlab

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def ip(h: int) -> str:
    """The lab address of host h (1-based)."""
    return f"{nlab.SUBNET}.{h}"


def find_jar(module: str, name: str, root: str = ROOT) -> str:
    """The built jar <module>/target/<name>-*.jar (not -sources, -tests or the shade plugin's -original)."""
    target = os.path.join(root, module, "target")
    found = (
        sorted(
            j
            for j in os.listdir(target)
            if re.fullmatch(re.escape(name) + r"-.*\.jar", j) and not re.search(r"original|sources|tests", j)
        )
        if os.path.isdir(target)
        else []
    )
    if not found:
        raise FileNotFoundError(
            f"{name} jar missing in {target}: mvn -B -ntp -q install -DskipTests at the repository root"
        )
    return os.path.join(target, found[0])


def snapshot_jars(tmp: str, modules: list[tuple[str, str]], root: str = ROOT) -> list[str]:
    """Copies of the modules' jars in tmp: a concurrent rebuild must not change the classes under running JVMs."""
    return [shutil.copy(find_jar(m, n, root), os.path.join(tmp, n + ".jar")) for m, n in modules]


def read_text(path: str) -> str:
    with open(path, errors="replace") as f:
        return f.read()


def iperf_goodput(log_path: str) -> tuple[int, float, float, float] | None:
    """(intervals, mean, min, max) Mbit/s of an iperf3 client log's 1-s intervals, None if it has none."""
    if not os.path.exists(log_path):
        return None
    rates = [float(m) for m in re.findall(r"([0-9.]+) Mbits/sec", read_text(log_path))]
    if not rates:
        return None
    return len(rates), statistics.mean(rates), min(rates), max(rates)


def load_note(load_start: float, load_end: float, cores: int | None = None) -> str:
    """A summary header's machine-load line, from the 1-minute load averages measured at a run's start and end:
    "idle" only when nothing else ran at the start (below 0.5; the run's own processes raise the end value)."""
    cores = cores or os.cpu_count() or 1
    state = (
        "idle at the start" if load_start < 0.5 else "SHARED (other work running at the start): not of record"
    )
    return f"{cores}-core machine, {state}; load average {load_start:.1f} at the start, {load_end:.1f} at the end"


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank below) of values, NaN if empty."""
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def interrupt_on_signals() -> None:
    """SIGTERM and SIGHUP raise KeyboardInterrupt, so the runner's `finally` tears the lab down."""

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)


class LabCluster:
    """One lab of `hosts` namespaces named <name>-h<i>, with the processes started in it."""

    def __init__(self, name: str, hosts: int, rate: str, buffer: str, tmp: str):
        self.name, self.hosts, self.rate, self.buffer, self.tmp = name, hosts, rate, buffer, tmp
        self.rate_bps = nlab.parse_rate(rate)
        self.procs: list[subprocess.Popen] = []

    @staticmethod
    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

    def ns(self, h: int) -> str:
        return f"{self.name}-h{h}"

    def up(self, mode: str) -> None:
        plan = nlab.QueuePlan.build(mode, self.rate, self.buffer)
        nlab.up(self.name, self.hosts, plan, quiet=True, shape_all=True)
        self.log(
            f"lab {self.name} up: {self.hosts} hosts, {mode} switch, every port {self.rate}, "
            f"buffer {self.buffer}"
        )

    def spawn(self, h: int, args: list[str], log_name: str, env: dict | None = None) -> subprocess.Popen:
        p = nlab.spawn_in(self.ns(h), args, os.path.join(self.tmp, log_name), env or {})
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, timeout: float = 5) -> None:
        nlab.stop_group(p, timeout)
        if p in self.procs:
            self.procs.remove(p)

    def down(self) -> None:
        for p in reversed(list(self.procs)):
            self.stop(p)
        nlab.down(self.name, quiet=True)

    def check_alive(self) -> None:
        """Raises if a process of the cluster exited (it should run until `down`)."""
        for p in self.procs:
            if p.poll() is not None:
                raise RuntimeError(f"a lab process exited ({' '.join(p.args[-4:])}); see {self.tmp}")

    def wait_log(self, name: str, pattern: str, count: int, timeout: float) -> None:
        path = os.path.join(self.tmp, name)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if os.path.exists(path) and len(re.findall(pattern, read_text(path))) >= count:
                return
            self.check_alive()
            time.sleep(0.5)
        raise RuntimeError(f"timeout waiting for {pattern!r} x{count} in {path}")

    def start_background(self, src: int, dsts: tuple[int, ...], load: float) -> None:
        """iperf3 TCP (cubic, DSCP 0) from host src to each of dsts at load x the port rate."""
        if load <= 0:
            return
        per = int(load * self.rate_bps)
        for i, h in enumerate(dsts):
            port = 5201 + i
            self.spawn(h, ["iperf3", "-s", "-p", str(port), "-1"], f"iperf3-s-h{h}.log")
            time.sleep(0.3)
            self.spawn(
                src,
                ["iperf3", "-c", ip(h), "-p", str(port), "-t", "3600", "-b", str(per), "-C", "cubic"],
                f"iperf3-c-h{h}.log",
            )
        time.sleep(1.0)
        self.log(
            f"background TCP: iperf3 h{src} -> {', '.join(f'h{h}' for h in dsts)} at {per / 1e6:.0f} Mbit/s "
            f"each ({load:.2f} x port rate)"
        )

    def background_lines(self, sw: str, src: int, dsts: tuple[int, ...]) -> list[str]:
        """Result-file comments with the background's goodput: a check that the ports were congested."""
        out = []
        for h in dsts:
            g = iperf_goodput(os.path.join(self.tmp, f"iperf3-c-h{h}.log"))
            if g:
                out.append(
                    f"# [{sw}] iperf3 h{src}->h{h}: mean of {g[0]} 1-s intervals {g[1]:.1f} Mbit/s "
                    f"(min {g[2]:.1f}, max {g[3]:.1f})"
                )
        return out

    def run_client(
        self, h: int, cmd: list[str], log_name: str, timeout: float, env: dict | None = None
    ) -> tuple[int | str, str, float]:
        """Runs a client to its end (or timeout) in host h: (exit code or "timeout", its log, seconds)."""
        t0 = time.time()
        p = self.spawn(h, cmd, log_name, env)
        try:
            rc: int | str = p.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = "timeout"
        self.stop(p)
        return rc, read_text(os.path.join(self.tmp, log_name)), time.time() - t0

    def tc_classes(self, port: int) -> str:
        """Per-class counters of the switch port toward host `port` (bytes, packets, drops)."""
        out = subprocess.run(
            ["ip", "netns", "exec", f"{self.name}-sw", "tc", "-s", "class", "show", "dev", f"p{port}"],
            capture_output=True,
            text=True,
        ).stdout
        parts = []
        for m in re.finditer(
            r"class htb (\S+) parent 1:1 leaf \S+ prio (\d+).*?\n Sent (\d+) bytes (\d+) pkt "
            r"\(dropped (\d+)",
            out,
        ):
            parts.append(
                f"{m.group(1)}(prio {m.group(2)}): {int(m.group(3)) / 1e6:.2f} MB {m.group(4)} pkt "
                f"{m.group(5)} dropped"
            )
        return "; ".join(sorted(parts)) or "(no leaf classes parsed)"
