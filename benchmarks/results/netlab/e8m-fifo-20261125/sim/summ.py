"""Summary of run.sh output: per (shape, queue, senders, mode) mean over seeds of p50 (all jobs) and p50@.75, and each
mode over RC+MRDF (geomean of per-seed p50 ratios, seeds slower), plus mean loss and gaveup.
usage: python3 summ.py FILE [FILE2: the same modes from a second build; adds FILE2/FILE per mode]"""
import math, re, sys
from collections import defaultdict


def load(path):
    d, seed = {}, None
    for line in open(path):
        if line.startswith("## "):
            seed = int(re.search(r"seed (\d+)", line).group(1))
            continue
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        g = lambda pat: float(re.search(pat, line).group(1))  # noqa: E731
        d[(f[1], int(f[2]), f[0], seed)] = dict(p50=g(r" p50 +([0-9.]+) ms"), p75=g(r"p50@\.75 ([0-9.]+)"),
                                                 p99=g(r" p99 +([0-9.]+) ms"), loss=g(r"loss ([0-9.]+)"))
    return d


gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
a = load(sys.argv[1])
b = load(sys.argv[2]) if len(sys.argv) > 2 else None
keys = sorted({k[:3] for k in a})
seeds = sorted({k[3] for k in a})
print(f"| queue | senders | mode | p50 | p50@.75 | p99 | loss | p50 / rc_mrdf (seeds slower) |" + (" other p50 | other/this (seeds faster) |" if b else ""))
print("|---|---|---|---|---|---|---|---|" + ("---|---|" if b else ""))
for q, n, m in keys:
    v = [a[(q, n, m, s)] for s in seeds if (q, n, m, s) in a]
    r = [a[(q, n, m, s)]["p50"] / a[(q, n, "rc_mrdf", s)]["p50"] for s in seeds if (q, n, "rc_mrdf", s) in a]
    mean = lambda k: sum(x[k] for x in v) / len(v)  # noqa: E731
    line = (f"| {q} | {n} | {m} | {mean('p50'):.1f} | {mean('p75'):.1f} | {mean('p99'):.1f} | {mean('loss'):.3f} | "
            f"{gm(r):.2f} ({sum(x > 1 for x in r)}/{len(r)}) |")
    if b:
        w = [(b[(q, n, m, s)]["p50"], a[(q, n, m, s)]["p50"]) for s in seeds if (q, n, m, s) in b]
        if w:
            line += f" {sum(x[0] for x in w) / len(w):.1f} | {gm([x[0] / x[1] for x in w]):.3f} ({sum(x[0] < x[1] for x in w)}/{len(w)}) |"
    print(line)
