#!/usr/bin/env python3
# Per job and stage of one application's event log (zstd -dc'ed): the driver's gap before each job, the stage's wall,
# and per task its executor, duration (launch to finish), deserialize time, run time and CPU - to see whether a
# stage's tasks compute or wait, and how the tasks spread over the executors (docs/spark-netlab.md).
#   python3 benchmarks/spark/netlab/stage_tasks.py APP.json [LAST_JOBS]
import collections
import json
import sys

path, last = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
jobs, stage_job, stages, tasks = {}, {}, {}, collections.defaultdict(list)
for line in open(path):
    e = json.loads(line)
    ev = e["Event"]
    if ev == "SparkListenerJobStart":
        props = e.get("Properties") or {}
        jobs[e["Job ID"]] = [(props.get("spark.job.description") or "")[:40], e["Submission Time"], None]
        for s in e["Stage IDs"]:
            stage_job[s] = e["Job ID"]
    elif ev == "SparkListenerJobEnd":
        jobs[e["Job ID"]][2] = e["Completion Time"]
    elif ev == "SparkListenerStageCompleted":
        si = e["Stage Info"]
        stages[si["Stage ID"]] = (si.get("Submission Time"), si.get("Completion Time"), si["Stage Name"][:40])
    elif ev == "SparkListenerTaskEnd":
        ti, tm = e["Task Info"], e.get("Task Metrics") or {}
        tasks[e["Stage ID"]].append(
            (
                ti["Launch Time"],
                ti["Executor ID"],
                ti["Finish Time"] - ti["Launch Time"],
                tm.get("Executor Deserialize Time", 0),
                tm.get("Executor Run Time", 0),
                round(tm.get("Executor CPU Time", 0) / 1e6),
            )
        )
ids = sorted(jobs)
prev_end = None
for j in ids[-last:]:
    d, start, end = jobs[j]
    i = ids.index(j)
    gap = start - jobs[ids[i - 1]][2] if i > 0 and jobs[ids[i - 1]][2] else None
    print(f"job {j} {d!r}: gap before {gap} ms, wall {end - start if end else None} ms")
    for s in sorted(x for x in stages if stage_job.get(x) == j and tasks.get(x)):
        sa, sb, name = stages[s]
        ts = sorted(tasks[s])
        per_ex = collections.Counter(t[1] for t in ts)
        print(
            f"  stage {s} {name!r}: wall {sb - sa} ms, tasks per executor {dict(per_ex)}, sum of task durations "
            f"{sum(t[2] for t in ts)} ms, run {sum(t[4] for t in ts)} ms, CPU {sum(t[5] for t in ts)} ms"
        )
        print("    (executor, duration, deserialize, run, CPU) " + " ".join(str(t[1:]) for t in ts))
