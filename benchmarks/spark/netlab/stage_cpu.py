#!/usr/bin/env python3
# Per application of SparkBench query (its event log, zstd -dc'ed), medians over the timed runs of: each mode's map-stage
# executor CPU (ms, summed over its tasks), the approximate and exact reduce stages' run / CPU time, and the bytes the map
# stages wrote; then pooled per label (the name of the file's parent directory up to its first '-', e.g. base-1/, new-2/).
#   python3 benchmarks/spark/netlab/stage_cpu.py DIR/events.json ...   (docs/spark-netlab.md)
import collections
import json
import statistics
import sys


def load(path):
    jobs = {}
    st = collections.defaultdict(list)
    for line in open(path):
        e = json.loads(line)
        ev = e["Event"]
        if ev == "SparkListenerJobStart":
            jobs[e["Job ID"]] = dict(
                stages=e["Stage IDs"], desc=(e.get("Properties") or {}).get("spark.job.description", "") or ""
            )
        elif ev == "SparkListenerTaskEnd":
            tm = e.get("Task Metrics") or {}
            st[e["Stage ID"]].append(
                (
                    tm.get("Executor Run Time", 0),
                    tm.get("Executor CPU Time", 0) / 1e6,
                    (tm.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0),
                )
            )

    def stages(j):
        return [
            (sum(t[0] for t in st[s]), sum(t[1] for t in st[s]), sum(t[2] for t in st[s]))
            for s in jobs[j]["stages"]
            if st.get(s)
        ]

    ids = sorted(jobs)
    am = [j for j in ids if jobs[j]["desc"].startswith("NetApprox: map stage")]
    out = []
    for a in am[1:]:
        ex, ar, ss = a - 1, a + 1, a + 2
        if ss not in jobs:
            continue
        out.append(
            dict(
                exact_map=stages(ex)[0][1],
                approx_map=stages(a)[0][1],
                ss_map=stages(ss)[0][1],
                approx_red_run=stages(ar)[-1][0],
                approx_red_cpu=stages(ar)[-1][1],
                exact_red_cpu=stages(ex)[-1][1],
                approx_written=stages(a)[0][2],
                exact_written=stages(ex)[0][2],
            )
        )
    return out


groups = collections.defaultdict(list)
for p in sys.argv[1:]:
    label = p.split("/")[-2].split("-")[0] if "/" in p else p
    rs = load(p)
    groups[label] += rs
    print(p, " ".join(f"{k}={statistics.median(r[k] for r in rs):.0f}" for k in rs[0]))
for label, rs in groups.items():
    print(
        f"ALL {label} ({len(rs)} timed runs): "
        + " ".join(f"{k} median {statistics.median(r[k] for r in rs):.0f}" for k in rs[0])
    )
