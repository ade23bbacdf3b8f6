#!/usr/bin/env python3
"""Pooled per-job JCT of a benchmarks/netlab/ab.sh directory (cell-agent-round/jobs.csv): p50/p90 per (cell, workload, scheme, agent) and new/old ratios."""

import csv
import glob
import os
import statistics
import sys
from collections import defaultdict

root = sys.argv[1]
rows = defaultdict(list)
starts = defaultdict(list)
repeats = defaultdict(list)
for f in glob.glob(os.path.join(root, "*", "jobs.csv")):
    parts = os.path.basename(os.path.dirname(f)).rsplit("-", 2)
    if len(parts) != 3 or parts[1] not in ("old", "new"):
        continue  # not an ab.sh cell (e.g. a co-run run)
    cell, agent, _ = parts
    for r in csv.DictReader(open(f)):
        if r.get("status") not in ("ok", ""):
            continue
        k = (cell, r["workload"], r["scheme"], agent)
        rows[k].append(float(r["jct_ms"]))
        if r.get("start_to_running_ns"):
            starts[k].append(float(r["start_to_running_ns"]) / 1e6)
        if r.get("announces_sent"):
            repeats[k].append(float(r["announces_sent"]) > 1)  # ANNOUNCE sent more than once


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]


print(
    "| cell | workload | scheme | old p50 ms | new p50 ms | new/old | new/TCP-ES (same agent run) | start p50 ms old/new "
    "| repeated ANNOUNCE % old/new |"
)
print("|---|---|---|---|---|---|---|---|---|")
for cell, wl, sch in sorted({k[:3] for k in rows}):
    o, n = rows.get((cell, wl, sch, "old"), []), rows.get((cell, wl, sch, "new"), [])
    if not o or not n:
        continue
    t = rows.get((cell, wl, "tcp_es", "new"), [])
    so, sn = starts.get((cell, wl, sch, "old"), []), starts.get((cell, wl, sch, "new"), [])
    ratio_t = f"{statistics.median(n) / statistics.median(t):.2f}" if t else "-"
    st = f"{statistics.median(so):.2f} / {statistics.median(sn):.2f}" if so and sn else "-"
    ro, rn = repeats.get((cell, wl, sch, "old"), []), repeats.get((cell, wl, sch, "new"), [])
    rep = f"{100 * sum(ro) / len(ro):.0f} / {100 * sum(rn) / len(rn):.0f}" if ro and rn else "-"
    print(
        f"| {cell} | {wl} | {sch} | {statistics.median(o):.1f} | {statistics.median(n):.1f} | "
        f"{statistics.median(n) / statistics.median(o):.2f} | {ratio_t} | {st} | {rep} |"
    )
