#!/usr/bin/env python3
# Map-stage CPU per mode from SparkBench event logs (docs/spark-netlab.md): python3 map_cpu.py EVENTLOG...
import collections
import json
import sys

# sum of tasks' Executor CPU Time (ns) per map stage, classified: approx map stage (job 'NetApprox: map stage'),
# exact map stage (flatMap writing > 5 MB), samplesend map stage (flatMap writing < 2 MB)
for path in sys.argv[1:]:
    jobs = {}
    stage_job = {}
    cpu = collections.Counter()
    wr = collections.Counter()
    name = {}
    for line in open(path):
        e = json.loads(line)
        ev = e["Event"]
        if ev == "SparkListenerJobStart":
            d = (e.get("Properties") or {}).get("spark.job.description", "") or ""
            for s in e["Stage IDs"]:
                stage_job[s] = d
        elif ev == "SparkListenerStageCompleted":
            name[e["Stage Info"]["Stage ID"]] = e["Stage Info"]["Stage Name"]
        elif ev == "SparkListenerTaskEnd":
            tm = e.get("Task Metrics") or {}
            cpu[e["Stage ID"]] += tm.get("Executor CPU Time", 0)
            wr[e["Stage ID"]] += (tm.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
    cat = collections.defaultdict(list)
    for s in sorted(cpu):
        if not name.get(s, "").startswith("flatMap"):
            continue
        if stage_job.get(s, "").startswith("NetApprox: map stage"):
            cat["approx-map"].append(cpu[s] / 1e9)
        elif wr[s] > 5e6:
            cat["exact-map"].append(cpu[s] / 1e9)
        elif wr[s] < 2e6:
            cat["samplesend-map"].append(cpu[s] / 1e9)
    print(path)
    for k in ("exact-map", "approx-map", "samplesend-map"):
        v = cat[k][-5:]
        print(
            f"  {k:15s} timed runs CPU s: {' '.join(f'{x:.2f}' for x in v)}  median {sorted(v)[len(v) // 2]:.2f}"
        )
