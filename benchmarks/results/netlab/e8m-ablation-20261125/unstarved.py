"""Full vs RC+MRDF per FBKV FIFO phase pair, leaving out CPU-starved phases: a phase is starved when its jobs' median
start_to_running_ns is above 1.5x the smaller of the two schemes' medians in the same run and cell (the receiving
agent waited for a CPU before the job could run; engine8l). Prints pooled p50 and per-run ratios of the pairs where
neither phase was starved. usage: python3 unstarved.py RUN_DIR..."""
import csv, statistics as st, sys
from collections import defaultdict

for n in ("3", "8"):
    pa, pb, per, dropped = [], [], [], 0
    for d in sys.argv[1:]:
        try:
            rows = list(csv.DictReader(open(d + "/jobs.csv")))
        except OSError:
            continue
        g = defaultdict(list)
        for x in rows:
            if (x["experiment"] == "schemes" and x["workload"] == "fbkv" and x["switch"] == "fifo" and x["senders"] == n
                    and x["msr"] == "0.75" and x["status"] == "ok" and x.get("start_to_running_ns")):
                g[x["scheme"]].append((float(x["jct_ms"]), float(x["start_to_running_ns"]) / 1e6))
        a, b = g.get("atp_full", []), g.get("atp_rc_mrdf", [])
        if len(a) < 20 or len(b) < 20:
            continue
        sa, sb = st.median(t[1] for t in a), st.median(t[1] for t in b)
        if max(sa, sb) > 1.5 * min(sa, sb):
            dropped += 1
            continue
        pa += [t[0] for t in a]
        pb += [t[0] for t in b]
        per.append(st.median(t[0] for t in a) / st.median(t[0] for t in b))
    print(f"fbkv fifo {n}: {len(per)} run pairs kept ({dropped} with a starved phase left out); Full slower in "
          f"{sum(p > 1 for p in per)}; median per-run ratio {st.median(per):.2f}; pooled p50 Full {st.median(pa):.1f} / "
          f"RC+MRDF {st.median(pb):.1f} = {st.median(pa) / st.median(pb):.2f}")
