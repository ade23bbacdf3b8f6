#!/usr/bin/env python3
# Pools netlab Spark result files per side and switch: the geometric mean of the per-run paired ratios approx/exact and
# approx/samplesend with a bootstrap 95 % interval, the medians, and each application's outside-e_max counts.
#   python3 benchmarks/spark/netlab/pool_pairs.py before=A.txt,B.txt,C.txt after=D.txt,E.txt,F.txt   (docs/spark-netlab.md)
import math
import random
import re
import statistics
import sys


def runs(path):
    out = {}
    for l in open(path):
        if l.startswith("RESULT"):
            r = dict(re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", l))
            out[(r["switch"], r["mode"])] = (
                [float(x) for x in r["all_s"].strip("[]").split(",")],
                r["group_aggregates_outside_emax"],
                r["max_rel_error"],
            )
    return out


def gm(x):
    return math.exp(sum(map(math.log, x)) / len(x))


def boot(x, n=4000):
    rnd = random.Random(1)
    v = sorted(gm([rnd.choice(x) for _ in x]) for _ in range(n))
    return v[int(0.025 * n)], v[int(0.975 * n)]


sides = dict(a.split("=", 1) for a in sys.argv[1:])
for sw in ["fifo", "slack"]:
    for side, files in sides.items():
        ae, as_, outside, ex, ap, ss = [], [], [], [], [], []
        for f in files.split(","):
            R = runs(f)
            if (sw, "samplesend") not in R:
                continue
            e, a, s = R[(sw, "exact")][0], R[(sw, "approx")][0], R[(sw, "samplesend")][0]
            ae += [x / y for x, y in zip(a, e)]
            as_ += [x / y for x, y in zip(a, s)]
            outside.append(
                R[(sw, "approx")][1] + " max " + R[(sw, "approx")][2] + " / ss " + R[(sw, "samplesend")][1]
            )
            ex += e
            ap += a
            ss += s
        if not ae:
            continue
        lo, hi = boot(ae)
        lo2, hi2 = boot(as_)
        print(
            f"{sw:5s} {side:6s} n={len(ae)} approx/exact {gm(ae):.2f} [{lo:.2f}, {hi:.2f}]  approx/samplesend {gm(as_):.2f} "
            f"[{lo2:.2f}, {hi2:.2f}]  medians exact {statistics.median(ex):.2f} approx {statistics.median(ap):.2f} "
            f"ss {statistics.median(ss):.2f} s; outside e_max {outside}"
        )
