#!/usr/bin/env python3
"""PyTorch lab benchmark of issue 37 (docs/pytorch.md, "Lab benchmark"). Needs root, iperf3, torch + numpy,
netapprox-torch's source and a built libnetapprox.so (run.sh passes them).

Topology (benchmarks/netlab, module netlab.lab; every switch port shaped, slack-priority or FIFO switch):
  h1 10.77.0.1  rank 0 (and the TCPStore)
  h2 10.77.0.2  rank 1
  h3 10.77.0.3  rank 2
  h4 10.77.0.4  background TCP (iperf3, cubic, DSCP 0) toward h1, h2 and h3 (the ranks' downlinks)

Per switch mode: lab up, background TCP, then per run every mode (--modes, in order: gloo = DDP's default
all-reduce over TCP, atp_exact = the netapprox-torch hook with MagnitudeGroups.exact(), atp = the hook with
magnitude groups --thresholds / --msrs) trains the same seeded MLP for --steps steps (train.py, one process per
rank in its namespace). One line per (switch, mode, run); the lab is torn down in `finally`.
Summary (summary.md + summary.json, module summary): --out (default build/torch-lab/latest; for the record
benchmarks/results/torch/lab). Raw logs: build/torch-lab/<timestamp>/ (not in git).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from netlab import lab as nlab  # the network lab (benchmarks/netlab; run.sh puts it on PYTHONPATH)
from netlab.labcluster import LabCluster, interrupt_on_signals, ip, load_note

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summary  # noqa: E402  (this directory)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RANK_HOSTS, BG = (1, 2, 3), 4
MODES = ("gloo", "atp_exact", "atp")


def rank_results(text: str) -> dict | None:
    """The RESULT line of a rank's log, None if it has none."""
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return None


def train_one(lab: LabCluster, a, sw: str, mode: str, run: int, port: int, env: dict) -> dict:
    """One training of every rank in its namespace; the run's summary cell."""
    procs = []
    tag = f"{sw}-{mode}-{run}"
    for r, h in enumerate(RANK_HOSTS):
        cmd = [
            sys.executable,
            os.path.join(HERE, "train.py"),
            "--rank", str(r),
            "--world", str(len(RANK_HOSTS)),
            "--master", f"{ip(RANK_HOSTS[0])}:{port}",
            "--host", ip(h),
            "--mode", mode,
            "--steps", str(a.steps),
            "--batch", str(a.batch),
            "--features", str(a.features),
            "--hidden", str(a.hidden),
            "--spread", str(a.spread),
            "--lr", str(a.lr),
            "--thresholds", a.thresholds,
            "--msrs", a.msrs,
            "--line-rate-bps", str(lab.rate_bps if a.atp_line_rate else 0),
            "--timeout", str(a.step_timeout),
        ]  # fmt: skip
        procs.append(lab.spawn(h, cmd, f"rank{r}-{tag}.log", env))
    deadline = time.time() + a.run_timeout
    for p in procs:
        try:
            p.wait(max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            pass
    results, failed = [], []
    for r, p in enumerate(procs):
        rc = p.poll()
        lab.stop(p)
        with open(os.path.join(lab.tmp, f"rank{r}-{tag}.log"), errors="replace") as f:
            text = f.read()
        res = rank_results(text)
        if rc != 0 or res is None:
            failed.append(f"rank {r} (exit {rc if rc is not None else 'timeout'}): ...{text[-1500:]}")
        else:
            results.append(res)
    if failed:
        raise RuntimeError(f"{tag} failed; logs in {lab.tmp}:\n" + "\n".join(failed))
    return summary.run_cell(sw, mode, run, results, a.warmup)


def commit() -> str:
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    )
    return (r.stdout.strip() or "unknown") + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--switch", default="slack,fifo", help="comma-separated switch modes: slack,fifo")
    ap.add_argument("--rate", default="200mbit", help="every switch port (tc syntax)")
    ap.add_argument("--buffer", default="150kb", help="every switch port's buffer")
    ap.add_argument("--bg-load", type=float, default=0.7, help="background TCP toward each rank, x rate")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    ap.add_argument("--runs", type=int, default=1, help="runs per (switch, mode), modes alternating")
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--warmup", type=int, default=3, help="first steps left out of the step times")
    ap.add_argument("--batch", type=int, default=16, help="per rank")
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--spread", type=float, default=0.35)
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument(
        "--thresholds",
        default="0.0008,0.0013",
        help="atp's group bounds on a segment's mean |g| (this model's segments' mean |g|: 10-90 % quantiles ~5e-4 to 2e-3)",
    )
    ap.add_argument(
        "--msrs", default="0.5,0.8,1.0", help="atp's MSR per group (the last: the largest gradients)"
    )
    ap.add_argument(
        "--atp-line-rate",
        type=int,
        default=1,
        help="1: the ATP engines' line_rate_bps = the port rate; 0: the library's default",
    )
    ap.add_argument(
        "--step-timeout", type=float, default=120.0, help="bound of one all-reduce / rendezvous, s"
    )
    ap.add_argument("--run-timeout", type=float, default=600.0, help="bound of one training, s")
    ap.add_argument(
        "--out", default=os.path.join(ROOT, "build", "torch-lab", "latest"), help="summary directory"
    )
    ap.add_argument("--name", default="torchlab", help="lab name (namespaces <name>-h1..h4, <name>-sw)")
    a = ap.parse_args(argv)
    switches = [s for s in a.switch.split(",") if s]
    modes = [m for m in a.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES] + [s for s in switches if s not in ("slack", "fifo")]
    if bad or not modes or not switches:
        ap.error(f"unknown or missing modes/switches {bad}; modes: {', '.join(MODES)}; switches: slack, fifo")
    if a.runs < 1 or a.steps <= a.warmup or a.warmup < 0:
        ap.error("need --runs >= 1 and --steps > --warmup >= 0")
    try:
        nlab.require_root()
    except nlab.LabError as e:
        print(f"torch lab benchmark: {e}", file=sys.stderr)
        return 2
    for var in ("NETAPPROX_LIBRARY",):
        if not os.path.isfile(os.environ.get(var, "")):
            print(
                f"torch lab benchmark: {var} must name the built libnetapprox.so (run.sh sets it)",
                file=sys.stderr,
            )
            return 2
    interrupt_on_signals()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    tmp = os.path.join(ROOT, "build", "torch-lab", stamp)
    os.makedirs(tmp, exist_ok=True)
    env = {
        "GLOO_SOCKET_IFNAME": nlab.HOST_IF,  # gloo's TCP pairs on the lab interface, not loopback
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "NETAPPROX_LIBRARY": os.environ["NETAPPROX_LIBRARY"],
        "OMP_NUM_THREADS": "1",
    }
    load_start, at_commit = os.getloadavg()[0], commit()  # before the run: the code that ran
    cells, bg_lines = [], []
    port = 29500
    lab = LabCluster(a.name, 4, a.rate, a.buffer, tmp)
    for sw in switches:
        try:
            lab.up(sw)
            lab.start_background(BG, RANK_HOSTS, a.bg_load)
            for run in range(a.runs):
                for mode in modes:
                    port += 1  # a fresh store port per training: no TIME_WAIT clash with the last one
                    c = train_one(lab, a, sw, mode, run, port, env)
                    cells.append(c)
                    print(summary.cell_line(c), flush=True)
            bg_lines += lab.background_lines(sw, BG, RANK_HOSTS)
            # where the drops were (per switch class, every mode of this switch together): the diagnosis
            bg_lines.append(f"# [{sw}] switch port p1 (toward rank 0): {lab.tc_classes(1)}")
        finally:
            lab.down()
    header = {
        "command": "bash benchmarks/torch/run.sh "
        + " ".join(shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:])),
        "commit": at_commit,
        "load": load_note(load_start, os.getloadavg()[0]),
        "lab": f"3 ranks h1-h3 + background h4 -> h1..h3 at {a.bg_load} x {a.rate}, buffer {a.buffer}",
        "model": f"MLP {a.features}-{a.hidden}-{a.hidden}-10 ({cells[0]['params'] if cells else '?'} parameters), "
        f"batch {a.batch} per rank, lr {a.lr}, {a.steps} steps ({a.warmup} warm-up)",
        "atp groups": f"thresholds {a.thresholds}, MSRs {a.msrs}",
        "background": " ".join(bg_lines) or "none",
        "raw logs": os.path.relpath(tmp, ROOT),
    }
    doc = summary.summarize(cells, header)
    for k in doc["checks"]:
        print(f"[{k['switch']}] {json.dumps({x: v for x, v in k.items() if x != 'switch'})}")
    summary.write(a.out, doc)
    print(f"summary: {os.path.join(a.out, 'summary.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
