"""Summary of run.sh output: per (mode, queue, senders) the mean over seeds of the MSR-0.75 jobs' p50 (the lab's
verdict cell) and of all jobs' p50, and Full / RC+MRDF as the geomean of per-seed ratios with the seeds where Full
was slower. usage: python3 summ.py FILE [FILE2: a second run to compare, per-seed ratios FILE2/FILE]"""
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
        mode, q, n = f[0], f[1], int(f[2])
        p50 = float(re.search(r" p50 +([0-9.]+) ms", line).group(1))
        p75 = float(re.search(r"p50@\.75 ([0-9.]+)", line).group(1))
        p99 = float(re.search(r"p99@\.75 ([0-9.]+)", line).group(1))
        d[(mode, q, n, seed)] = (p75, p50, p99)
    return d


def gm(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


a = load(sys.argv[1])
b = load(sys.argv[2]) if len(sys.argv) > 2 else None
keys = sorted({k[:3] for k in a})
seeds = sorted({k[3] for k in a})
print("| mode | queue | senders | p50@.75 mean | p99@.75 mean | p50 all mean | vs RC+MRDF (geomean p50@.75, seeds slower) | vs RC+MRDF all jobs (geomean p50, seeds slower) |"
      + (" other p50@.75 | other/this geomean | other faster |" if b else ""))
print("|---|---|---|---|---|---|---|---|" + ("---|---|---|" if b else ""))
for m, q, n in sorted(keys, key=lambda k: (k[0], k[1], k[2])):
    v = [a[(m, q, n, s)] for s in seeds if (m, q, n, s) in a]
    r = [a[(m, q, n, s)][0] / a[("rc_mrdf", q, n, s)][0] for s in seeds if ("rc_mrdf", q, n, s) in a]
    ra = [a[(m, q, n, s)][1] / a[("rc_mrdf", q, n, s)][1] for s in seeds if ("rc_mrdf", q, n, s) in a]
    line = (f"| {m} | {q} | {n} | {sum(x[0] for x in v) / len(v):.1f} | {sum(x[2] for x in v) / len(v):.1f} | "
            f"{sum(x[1] for x in v) / len(v):.1f} | {gm(r):.2f} ({sum(x > 1 for x in r)}/{len(r)}) | "
            f"{gm(ra):.2f} ({sum(x > 1 for x in ra)}/{len(ra)}) |")
    if b:
        w = [(b[(m, q, n, s)][0], a[(m, q, n, s)][0]) for s in seeds if (m, q, n, s) in b]
        if w:
            line += (f" {sum(x[0] for x in w) / len(w):.1f} | {gm([x[0] / x[1] for x in w]):.3f} | "
                     f"{sum(x[0] < x[1] for x in w)}/{len(w)} |")
    print(line)
