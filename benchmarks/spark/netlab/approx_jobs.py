#!/usr/bin/env python3
# Per application of SparkBench query (its event log, zstd -dc'ed): the approximate queries' jobs - the map-stage job's
# wall, the driver's gap from its end to the reduce job's submission, the reduce job's wall (medians over the timed
# runs, the warm-up included) - and the approximate reduce tasks' run time (median, p90) and CPU (median).
#   python3 benchmarks/spark/netlab/approx_jobs.py DIR/app.json ...   (docs/spark-netlab.md)
import json
import statistics
import sys

for path in sys.argv[1:]:
    jobs = {}
    order = []
    tasks = {}
    for line in open(path):
        e = json.loads(line)
        ev = e["Event"]
        if ev == "SparkListenerJobStart":
            d = (e.get("Properties") or {}).get("spark.job.description", "") or ""
            jobs[e["Job ID"]] = [
                d.startswith("NetApprox: map stage"),
                e["Submission Time"],
                None,
                e["Stage IDs"],
            ]
            order.append(e["Job ID"])
        elif ev == "SparkListenerJobEnd":
            jobs[e["Job ID"]][2] = e["Completion Time"]
        elif ev == "SparkListenerTaskEnd":
            tm = e.get("Task Metrics") or {}
            tasks.setdefault(e["Stage ID"], []).append(
                (tm.get("Executor Run Time", 0), tm.get("Executor CPU Time", 0) / 1e6)
            )
    gaps, maps, reds, run, cpu = [], [], [], [], []
    for i, j in enumerate(order[:-1]):
        n = order[i + 1]
        if jobs[j][0] and not jobs[n][0]:
            gaps.append(jobs[n][1] - jobs[j][2])
            maps.append(jobs[j][2] - jobs[j][1])
            reds.append(jobs[n][2] - jobs[n][1])
            for s in jobs[n][3]:
                for r, c in tasks.get(s, []):
                    run.append(r)
                    cpu.append(c)
    run.sort()
    print(
        f"{path}: queries {len(gaps)} map job {statistics.median(maps):.0f} ms, gap {statistics.median(gaps):.0f} ms "
        f"(all {gaps}), reduce job {statistics.median(reds):.0f} ms; reduce tasks {len(run)}: run median "
        f"{statistics.median(run):.0f} p90 {run[int(0.9 * len(run))]} ms, CPU median {statistics.median(cpu):.1f} ms"
    )
