"""Full vs RC+MRDF (FixTLR where it ran) on one switch, MSR 0.75: JCT split into start (job start -> running:
start_to_running_ns) and the rest (running -> done = jct - start), pooled over the runs given (>= 5 jobs of each
scheme in the cell). The start is where the shared machine's CPU starvation shows (engine8l: the receiving agent's
I/O thread waits on the run queue); the rest is what the engine's rate control, scheduling and recovery decide.
usage: python3 split.py SWITCH RUN_DIR..."""
import csv, random, statistics as st, sys
from collections import defaultdict

rng = random.Random(1)
sw = sys.argv[1]
data = defaultdict(lambda: defaultdict(list))
for d in sys.argv[2:]:
    try:
        rows = list(csv.DictReader(open(d + "/jobs.csv")))
    except OSError:
        continue
    for x in rows:
        if (x["experiment"] != "schemes" or x["host_rate_ratio"] != "1.0" or x["msr"] != "0.75" or x["status"] != "ok"
                or x["pattern"] != "incast" or x["switch"] != sw or not x.get("start_to_running_ns")):
            continue
        jct, start = float(x["jct_ms"]), float(x["start_to_running_ns"]) / 1e6
        data[(x["workload"], x["senders"], x["scheme"])][d].append((jct, start, jct - start))


def boot(a, b, runs, i):
    v = sorted(st.median([t[i] for r in runs for t in rng.choices(a[r], k=len(a[r]))])
               / st.median([t[i] for r in runs for t in rng.choices(b[r], k=len(b[r]))]) for _ in range(300))
    return v[15], v[284]


for w in ("fbhd", "fbkv"):
    for n in ("3", "8"):
        for other in ("atp_rc_mrdf", "atp_fixtlr"):
            a, b = data[(w, n, "atp_full")], data[(w, n, other)]
            runs = [r for r in a if len(a[r]) >= 5 and len(b.get(r, [])) >= 5]
            if not runs:
                continue
            out = f"{w} {sw} {n} full/{other[4:]} ({len(runs)} runs):"
            for i, name in ((0, "jct"), (1, "start"), (2, "running->done")):
                pa = st.median([t[i] for r in runs for t in a[r]])
                pb = st.median([t[i] for r in runs for t in b[r]])
                lo, hi = boot(a, b, runs, i)
                out += f"  {name} {pa:.1f}/{pb:.1f} = {pa / pb:.2f} [{lo:.2f}, {hi:.2f}]"
            print(out)
