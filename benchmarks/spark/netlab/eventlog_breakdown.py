#!/usr/bin/env python3
"""Per-job and per-stage breakdown of a Spark event log (a diagnostic of docs/spark-netlab.md).

  python3 benchmarks/spark/netlab/eventlog_breakdown.py EVENTLOG.json   (zstd -dc the events_* file first)

Per job: start offset, duration, gap since the previous job, description; per stage: tasks, wall duration,
longest task, summed executor run time and executor CPU time, fetch wait, deserialize and GC time, shuffle KB read remote/local and written.
"""

import collections
import json
import sys

jobs = {}
stages = {}
st_tasks = collections.defaultdict(list)
t_first = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    ev = e["Event"]
    if ev == "SparkListenerApplicationStart":
        t_first = e["Timestamp"]
    elif ev == "SparkListenerJobStart":
        jobs[e["Job ID"]] = dict(
            start=e["Submission Time"],
            stages=e["Stage IDs"],
            desc=(e.get("Properties") or {}).get("spark.job.description", "") or "",
        )
    elif ev == "SparkListenerJobEnd":
        jobs[e["Job ID"]]["end"] = e["Completion Time"]
    elif ev == "SparkListenerStageCompleted":
        s = e["Stage Info"]
        stages[s["Stage ID"]] = s
    elif ev == "SparkListenerTaskEnd":
        ti = e["Task Info"]
        tm = e.get("Task Metrics") or {}
        sr = tm.get("Shuffle Read Metrics") or {}
        sw = tm.get("Shuffle Write Metrics") or {}
        st_tasks[e["Stage ID"]].append(
            dict(
                host=ti["Host"],
                dur=ti["Finish Time"] - ti["Launch Time"],
                run=tm.get("Executor Run Time", 0),
                cpu=tm.get("Executor CPU Time", 0) // 1_000_000,
                fw=sr.get("Fetch Wait Time", 0),
                rrb=sr.get("Remote Bytes Read", 0),
                lrb=sr.get("Local Bytes Read", 0),
                swb=sw.get("Shuffle Bytes Written", 0),
                gc=tm.get("JVM GC Time", 0),
                des=tm.get("Executor Deserialize Time", 0),
                failed=e.get("Task End Reason", {}).get("Reason") != "Success",
            )
        )
prev_end = None
for j in sorted(jobs):
    J = jobs[j]
    gap = "" if prev_end is None else f" gap {J['start'] - prev_end:5d} ms"
    print(
        f"job {j:3d} +{(J['start'] - t_first) / 1000:7.2f}s {J.get('end', J['start']) - J['start']:6d} ms{gap}  {J['desc'][:60]}"
    )
    prev_end = J.get("end", J["start"])
    for s in J["stages"]:
        if s not in stages:
            continue
        S = stages[s]
        T = st_tasks[s]
        if not T:
            continue
        print(
            f"    stage {s:3d} {S.get('Stage Name', '')[:28]:28s} tasks {len(T):2d} dur {S['Completion Time'] - S['Submission Time']:5d} ms"
            f" maxtask {max(t['dur'] for t in T):5d} run {sum(t['run'] for t in T):6d} ms cpu {sum(t['cpu'] for t in T):6d} ms fetchwait {sum(t['fw'] for t in T):6d} (max {max(t['fw'] for t in T)})"
            f" des {sum(t['des'] for t in T)} gc {sum(t['gc'] for t in T)} remoteKB {sum(t['rrb'] for t in T) // 1024} localKB {sum(t['lrb'] for t in T) // 1024}"
            f" writeKB {sum(t['swb'] for t in T) // 1024} failed {sum(t['failed'] for t in T)}"
        )
