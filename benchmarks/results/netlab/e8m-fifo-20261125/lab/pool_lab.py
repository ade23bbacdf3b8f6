"""Per-run and pooled p50 per (senders, scheme) of this directory's lab runs with a given prefix, with each run's
load (loads.txt) and position of the scheme in the run's order. usage: python3 pool_lab.py PREFIX"""
import csv, glob, statistics as st, sys
from collections import defaultdict

prefix = sys.argv[1]
loads = {}
for line in open("loads.txt"):
    f = line.split()
    if len(f) > 2 and f[2] == "start":
        loads[f[1]] = (f[3], line.split("load average:")[1].split(",")[0].strip())
per = defaultdict(list)
pooled = defaultdict(list)
for d in sorted(glob.glob(prefix + "*")):
    try:
        rows = list(csv.DictReader(open(d + "/jobs.csv")))
    except OSError:
        continue
    order, load = loads.get(d, ("?", "?"))
    jct = defaultdict(list)
    for x in rows:
        if x["status"] == "ok":
            jct[(x["senders"], x["scheme"])].append(float(x["jct_ms"]))
    for (n, s), v in jct.items():
        if len(v) < 45:      # an interrupted phase
            continue
        pos = order.split(",").index(s) + 1 if s in order else "?"
        per[(n, s)].append(f"{st.median(v):.1f}(#{pos},L{load})")
        pooled[(n, s)].extend(v)
for k in sorted(per):
    print(f"fifo {k[0]} {k[1]:12s} pooled p50 {st.median(pooled[k]):6.1f} ms over {len(per[k])} runs: " + " ".join(per[k]))
