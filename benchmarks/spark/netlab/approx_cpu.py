#!/usr/bin/env python3
# Per timed run of SparkBench query (its event log, zstd -dc'ed): the approximate query's executor CPU summed over ALL
# its jobs - its map stage(s) (two when the map stage was repaired: spark.approx.mapSampleRepair) and its reduce stage -
# plus how many map-stage jobs it ran, the bytes its map stage(s) wrote, and the approximate query's wall time from its
# first job's submission to its last job's end. Medians per file and pooled per label (parent directory up to '-').
#   python3 benchmarks/spark/netlab/approx_cpu.py DIR/events.json ...   (docs/spark-netlab.md)
import collections
import json
import statistics
import sys


def load(path):
    jobs = []
    stage_job = {}
    st = collections.defaultdict(lambda: [0.0, 0])
    for line in open(path):
        e = json.loads(line)
        ev = e["Event"]
        if ev == "SparkListenerJobStart":
            d = (e.get("Properties") or {}).get("spark.job.description", "") or ""
            jobs.append(
                dict(
                    id=e["Job ID"],
                    map=d.startswith("NetApprox: map stage"),
                    t0=e["Submission Time"],
                    t1=None,
                    stages=e["Stage IDs"],
                )
            )
            for s in e["Stage IDs"]:
                stage_job[s] = e["Job ID"]
        elif ev == "SparkListenerJobEnd":
            for j in jobs:
                if j["id"] == e["Job ID"]:
                    j["t1"] = e["Completion Time"]
        elif ev == "SparkListenerTaskEnd":
            tm = e.get("Task Metrics") or {}
            st[e["Stage ID"]][0] += tm.get("Executor CPU Time", 0) / 1e6
            st[e["Stage ID"]][1] += (tm.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
    # an approximate query = its consecutive map-stage jobs + the next job (its reduce)
    out = []
    i = 0
    while i < len(jobs):
        if not jobs[i]["map"]:
            i += 1
            continue
        k = i
        while k < len(jobs) and jobs[k]["map"]:
            k += 1
        q = jobs[i : k + 1]
        i = k + 1
        cpu = sum(st[s][0] for j in q for s in j["stages"])
        mapcpu = sum(st[s][0] for j in q[:-1] for s in j["stages"])
        written = sum(st[s][1] for j in q[:-1] for s in j["stages"])
        out.append(
            dict(
                map_jobs=len(q) - 1,
                approx_cpu=cpu,
                map_cpu=mapcpu,
                written=written,
                wall=(q[-1]["t1"] or q[-1]["t0"]) - q[0]["t0"],
            )
        )
    return out[1:]  # the first approximate query is the warm-up


groups = collections.defaultdict(list)
for p in sys.argv[1:]:
    label = p.split("/")[-2].split("-")[0] if "/" in p else p
    runs = load(p)
    groups[label] += runs
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(p, " ".join(f"{k}={v:.0f}" for k, v in med.items()))
for label, runs in groups.items():
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"ALL {label} ({len(runs)} timed runs):", " ".join(f"{k} median {v:.0f}" for k, v in med.items()))
