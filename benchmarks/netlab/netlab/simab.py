"""A/B of the native incast simulator (native/bench/incast_sim.cpp, target incast-sim): the same seeded schedules
through side A and side B (two builds, or one build with different flags), paired per seed. Replaces the one-off
sim.sh / run.sh / run2.sh / corun.sh and summ.py / pooled.py of the e8g and e8h result folders.

  python3 -m netlab.simab run --a-sim A/incast-sim [--a-flags="--mrdf-across 0"] --b-sim B/incast-sim
      [--b-flags="--mrdf-across 1"] --out DIR [--seeds 10] [--shapes fbkv,fbhd,corun]
  (the flags as one argument with "=": they start with "--")
  python3 -m netlab.simab summarize DIR

Raw output: DIR/<side>-<shape>-<seed>.txt (incast-sim's stdout). `benchmarks/run incast-sim-ab` runs and
summarizes it (per shape, mode, switch and senders: mean p50/p99 of each side over the seeds, the paired per-seed
p50 ratios' geometric mean, how many seeds B was faster and the sign test).
"""

from __future__ import annotations

import argparse
import glob
import os
import shlex
import subprocess
import sys
from collections import defaultdict

from netlab import stats

COMMON = ["--modes", "full,rc_mrdf", "--queues", "slack,fifo"]
# The lab's cells in the simulator (docs/protocol.md): FBKV-like 500 x 300 B jobs with class-0 bursts, FBHD-like
# 40 x 39,536 B jobs at 3 and 8 senders, and the co-run (every third job exact, MSR 1).
SHAPES = {
    "fbkv": "--msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3 --bg-load 0.3 --bg-on-us 100",
    "fbhd": "--msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 3,8 --bg-load 0.3 --bg-on-us 100",
    "corun": "--msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --exact-every 3",
}


def commands(a_sim, a_flags, b_sim, b_flags, seeds, shapes) -> list[tuple[str, str, int, list[str]]]:
    """(side, shape, seed, argv) of every simulation, alternating A and B per seed."""
    out = []
    for seed in range(1, seeds + 1):
        for shape in shapes:
            if shape not in SHAPES:
                raise ValueError(f"--shapes: unknown shape {shape!r} (known: {', '.join(SHAPES)})")
            for side, sim, flags in (("a", a_sim, a_flags), ("b", b_sim, b_flags)):
                argv = [sim, *COMMON, *SHAPES[shape].split(), "--seed", str(seed), *shlex.split(flags or "")]
                out.append((side, shape, seed, argv))
    return out


def run(args) -> int:
    os.makedirs(args.out, exist_ok=True)
    shapes = [s for s in args.shapes.split(",") if s]
    for side, shape, seed, argv in commands(
        args.a_sim, args.a_flags, args.b_sim, args.b_flags, args.seeds, shapes
    ):
        print(f"[simab] {side} {shape} seed {seed}: {shlex.join(argv)}", flush=True)
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stderr)
            print(f"[simab] ERROR: exit {p.returncode}: {shlex.join(argv)}", file=sys.stderr)
            return p.returncode
        with open(os.path.join(args.out, f"{side}-{shape}-{seed}.txt"), "w") as f:
            f.write(p.stdout)
    return 0


def load(raw: str) -> dict:
    """{(shape, mode, switch, senders): {side: {seed: parsed line}}} from DIR/<side>-<shape>-<seed>.txt."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for path in sorted(glob.glob(os.path.join(raw, "*-*-*.txt"))):
        side, shape, seed = os.path.basename(path)[:-4].split("-", 2)
        if side not in ("a", "b") or not seed.isdigit():
            continue
        with open(path) as f:
            for r in stats.parse_incast_sim(f.read()):
                out[(shape, r["mode"], r["switch"], r["senders"])][side][int(seed)] = r
    return out


def summarize(raw: str) -> list[dict]:
    rows = []
    for key, sides in sorted(load(raw).items()):
        a, b = sides.get("a", {}), sides.get("b", {})
        if not a or not b:
            continue
        shape, mode, switch, senders = key
        p = stats.paired({s: r["p50_ms"] for s, r in a.items()}, {s: r["p50_ms"] for s, r in b.items()})
        row = dict(
            shape=shape,
            mode=mode,
            switch=switch,
            senders=senders,
            seeds=p["pairs"],
            a_p50_ms=stats.mean_or_none(r["p50_ms"] for r in a.values()),
            b_p50_ms=stats.mean_or_none(r["p50_ms"] for r in b.values()),
            a_p99_ms=stats.mean_or_none(r["p99_ms"] for r in a.values()),
            b_p99_ms=stats.mean_or_none(r["p99_ms"] for r in b.values()),
            geomean_b_over_a=p["geomean_b_over_a"],
            b_faster=f"{p['b_faster']}/{p['untied']}",
            sign_test_p=p["sign_test_p"],
            all_done=all(r["done"] == r["total"] for r in (*a.values(), *b.values())),
        )
        ea = {s: r["exact_p50_ms"] for s, r in a.items() if r["exact_p50_ms"] is not None}
        eb = {s: r["exact_p50_ms"] for s, r in b.items() if r["exact_p50_ms"] is not None}
        if ea and eb:
            row["exact_a_p50_ms"] = stats.mean_or_none(ea.values())
            row["exact_b_p50_ms"] = stats.mean_or_none(eb.values())
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m netlab.simab", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--a-sim", required=True)
    r.add_argument("--a-flags", default="", help='extra incast-sim flags of side A: --a-flags="--restore 0"')
    r.add_argument("--b-sim", required=True)
    r.add_argument("--b-flags", default="", help="the same for side B")
    r.add_argument("--out", required=True)
    r.add_argument("--seeds", type=int, default=10)
    r.add_argument("--shapes", default=",".join(SHAPES))
    s = sub.add_parser("summarize")
    s.add_argument("raw")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        return run(a)
    for row in summarize(a.raw):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
