#!/usr/bin/env python3
"""Where the time of `SparkBench query` goes, per mode, from its Spark event log (docs/spark-netlab.md).

  python3 benchmarks/spark/netlab/query_split.py EVENTLOG.json   (zstd -dc the events_* file first)

A timed run of SparkBench query is 4 jobs: exact (map + reduce stage), approximate (the 'NetApprox: map stage' job,
then the reduce job), SampleSend (map + reduce stage); the warm-up before them has no SampleSend job. Per mode:
wall time of its jobs, and per stage the summed executor run time and executor CPU time of the tasks (run time
above CPU time is time a task waited: for a CPU, for the network, for a pull). Medians over the timed runs.
"""

import collections
import json
import statistics
import sys

jobs = {}
st = collections.defaultdict(list)
for line in open(sys.argv[1]):
    e = json.loads(line)
    ev = e["Event"]
    if ev == "SparkListenerJobStart":
        jobs[e["Job ID"]] = dict(
            start=e["Submission Time"],
            stages=e["Stage IDs"],
            desc=(e.get("Properties") or {}).get("spark.job.description", "") or "",
        )
    elif ev == "SparkListenerJobEnd":
        jobs[e["Job ID"]]["end"] = e["Completion Time"]
    elif ev == "SparkListenerTaskEnd":
        tm = e.get("Task Metrics") or {}
        st[e["Stage ID"]].append((tm.get("Executor Run Time", 0), tm.get("Executor CPU Time", 0) / 1e6))


def stages(j):
    return [(sum(t[0] for t in st[s]), sum(t[1] for t in st[s])) for s in jobs[j]["stages"] if st.get(s)]


ids = sorted(jobs)
approx_maps = [j for j in ids if jobs[j]["desc"].startswith("NetApprox: map stage")]
rows = collections.defaultdict(list)
for am in approx_maps[1:]:  # the first is the warm-up's
    ex, ar, ss = am - 1, am + 1, am + 2
    if ss not in jobs or len(stages(ex)) != 2 or len(stages(ss)) != 2:
        continue
    (em, ec), (er, erc) = stages(ex)
    ((amr, amc),) = stages(am)
    ((arr, arc),) = stages(ar)
    (sm, smc), (sr, src) = stages(ss)
    rows["exact: wall"].append(jobs[ex]["end"] - jobs[ex]["start"])
    rows["exact: map stage run / cpu"].append((em, ec))
    rows["exact: reduce stage run / cpu"].append((er, erc))
    rows["approx: wall (map job start to reduce job end)"].append(jobs[ar]["end"] - jobs[am]["start"])
    rows["approx: gap between its jobs (driver plans)"].append(jobs[ar]["start"] - jobs[am]["end"])
    rows["approx: map stage run / cpu"].append((amr, amc))
    rows["approx: reduce stage run / cpu"].append((arr, arc))
    rows["samplesend: wall"].append(jobs[ss]["end"] - jobs[ss]["start"])
    rows["samplesend: map stage run / cpu"].append((sm, smc))
    rows["samplesend: reduce stage run / cpu"].append((sr, src))
for k, v in rows.items():
    if isinstance(v[0], tuple):
        print(
            f"{k:48s} median {statistics.median(x[0] for x in v):6.0f} / {statistics.median(x[1] for x in v):5.0f} ms"
            f"   runs {[(round(a), round(b)) for a, b in v]}"
        )
    else:
        print(f"{k:48s} median {statistics.median(v):6.0f} ms   runs {[round(x) for x in v]}")
