#!/usr/bin/env python3
"""Per-application breakdown of the pass-through applications' Spark event logs (docs/spark-netlab.md).

  python3 benchmarks/spark/netlab/passthrough_breakdown.py EVENTLOG_DIR [--run-marker STAGE_NAME_PREFIX]

EVENTLOG_DIR is the `spark.eventLog.dir` of a `run.sh --skip-query --conf spark.eventLog.enabled=true
--conf spark.eventLog.dir=DIR` run (plain, rolling `eventlog_v2_*` directories and zstd files are read).
Per application (in start order; the manager from spark.shuffle.manager): the time from application start to
the second executor's registration and to the first job, and then per timed run (the jobs of one SparkBench
passthrough iteration; the first iteration is the untimed warm-up) the wall time from its first job's submission
to its last job's end, summed over its tasks: executor run time, executor CPU time, GC, deserialize time,
scheduler delay (task duration - run - deserialize - result serialization - getting result), fetch wait, and
the number of tasks per executor host and per locality level. The last lines compare the managers (medians over
the applications' timed runs) field by field, so a gap shows up in the field that carries it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys


def events(path: str):
    files = []
    if os.path.isdir(path):
        files = sorted(
            (os.path.join(path, n) for n in os.listdir(path) if n.startswith("events_")),
            key=lambda p: int(os.path.basename(p).split("_")[1]),
        )
    else:
        files = [path]
    for f in files:
        if f.endswith(".zstd") or f.endswith(".zst"):
            text = subprocess.run(["zstd", "-dc", f], check=True, capture_output=True, text=True).stdout
        else:
            text = open(f).read()
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)


def app_summary(path: str, run_marker: str):
    app = dict(
        path=path,
        manager="?",
        start=None,
        end=None,
        executors=[],
        jobs={},
        stages=collections.defaultdict(list),
    )
    for e in events(path):
        ev = e["Event"]
        if ev == "SparkListenerApplicationStart":
            app["start"] = e["Timestamp"]
            app["id"] = e.get("App ID")
        elif ev == "SparkListenerApplicationEnd":
            app["end"] = e["Timestamp"]
        elif ev == "SparkListenerEnvironmentUpdate":
            sp = dict(e.get("Spark Properties") or {})  # a JSON object (or a list of pairs)
            m = sp.get("spark.shuffle.manager", "sort")
            app["manager"] = "approx" if "Approx" in m else m
        elif ev == "SparkListenerExecutorAdded":
            app["executors"].append((e["Timestamp"], e["Executor Info"]["Host"]))
        elif ev == "SparkListenerJobStart":
            app["jobs"][e["Job ID"]] = dict(
                start=e["Submission Time"],
                stages=e["Stage IDs"],
                names=[s.get("Stage Name", "") for s in e.get("Stage Infos", [])],
            )
        elif ev == "SparkListenerJobEnd":
            app["jobs"][e["Job ID"]]["end"] = e["Completion Time"]
        elif ev == "SparkListenerTaskEnd":
            ti = e["Task Info"]
            tm = e.get("Task Metrics") or {}
            sr = tm.get("Shuffle Read Metrics") or {}
            dur = ti["Finish Time"] - ti["Launch Time"]
            run = tm.get("Executor Run Time", 0)
            des = tm.get("Executor Deserialize Time", 0)
            rs = tm.get("Result Serialization Time", 0)
            gr = ti.get("Getting Result Time", 0)
            app["stages"][e["Stage ID"]].append(
                dict(
                    host=ti["Host"],
                    loc=ti.get("Locality", "?"),
                    dur=dur,
                    run=run,
                    des=des,
                    cpu=tm.get("Executor CPU Time", 0) / 1e6,
                    gc=tm.get("JVM GC Time", 0),
                    sched=max(0, dur - run - des - rs - gr),
                    fw=sr.get("Fetch Wait Time", 0),
                    rb=sr.get("Remote Bytes Read", 0) + sr.get("Local Bytes Read", 0),
                    wb=(tm.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0),
                    launch=ti["Launch Time"],
                )
            )
    # runs: a SparkBench passthrough iteration starts with the RDD job (stage "mapToPair at SparkBench..."); the
    # jobs before the first one cache the input (TaxiExample.trips: count); the first iteration is the warm-up
    ids = sorted(app["jobs"])
    starts = [k for k, j in enumerate(ids) if any(n.startswith(run_marker) for n in app["jobs"][j]["names"])]
    n_pre = starts[0] if starts else len(ids)
    runs = []
    bounds = list(zip(starts, starts[1:] + [len(ids)]))
    for k0, k1 in bounds:
        js = ids[k0:k1]
        tasks = [t for j in js for s in app["jobs"][j]["stages"] for t in app["stages"].get(s, [])]
        r = dict(wall=app["jobs"][js[-1]].get("end", 0) - app["jobs"][js[0]]["start"], tasks=len(tasks))
        # per stage that ran tasks, in stage-id order: (name, tasks, run, cpu, fetch wait, shuffle read / write KB)
        r["stages"] = []
        for st in sorted({s for j in js for s in app["jobs"][j]["stages"] if app["stages"].get(s)}):
            T = app["stages"][st]
            r["stages"].append(
                dict(
                    tasks=len(T),
                    run=sum(t["run"] for t in T),
                    cpu=sum(t["cpu"] for t in T),
                    fw=sum(t["fw"] for t in T),
                    rkb=sum(t["rb"] for t in T) // 1024,
                    wkb=sum(t["wb"] for t in T) // 1024,
                )
            )
        for f in ("run", "cpu", "gc", "des", "sched", "fw"):
            r[f] = sum(t[f] for t in tasks)
        r["hosts"] = dict(collections.Counter(t["host"] for t in tasks))
        # share of the run's executor run time spent on the busier executor (0.5 = balanced; 1-core executors)
        per_host = collections.Counter()
        for t in tasks:
            per_host[t["host"]] += t["run"]
        r["skew"] = max(per_host.values()) / max(1, sum(per_host.values())) if per_host else 0.0
        r["loc"] = dict(collections.Counter(t["loc"] for t in tasks))
        # time in which no task of the run was running (driver-side planning, scheduling, job gaps)
        spans = sorted((t["launch"], t["launch"] + t["dur"]) for t in tasks)
        busy, cur = 0, None
        for a, b in spans:
            if cur is None or a > cur[1]:
                if cur:
                    busy += cur[1] - cur[0]
                cur = [a, b]
            else:
                cur[1] = max(cur[1], b)
        if cur:
            busy += cur[1] - cur[0]
        r["idle"] = r["wall"] - busy
        runs.append(r)
    app["pre"] = ids[:n_pre]
    # where the cached input landed: tasks of the first (caching) job per executor host
    app["cache"] = dict(
        collections.Counter(
            t["host"]
            for s in (app["jobs"][ids[0]]["stages"] if ids else [])
            for t in app["stages"].get(s, [])
        )
    )
    app["runs"] = runs
    return app


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument(
        "--run-marker",
        default="mapToPair at SparkBench",
        help="stage name (prefix) of the first job of each iteration",
    )
    a = ap.parse_args()
    paths = [
        os.path.join(a.dir, n) for n in os.listdir(a.dir) if n.startswith(("app-", "eventlog_v2_", "local-"))
    ]
    apps = [app_summary(p, a.run_marker) for p in paths]
    apps.sort(key=lambda x: x["start"] or 0)
    fields = ("wall", "idle", "run", "cpu", "gc", "des", "sched", "fw", "skew")
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for x in apps:
        ex = sorted(t for t, _h in x["executors"])
        reg = (ex[-1] - x["start"]) if ex else -1
        first_job = min((j["start"] for j in x["jobs"].values()), default=x["start"]) - x["start"]
        print(
            f"{x['manager']:6s} {x.get('id', '?')}: start->executors {reg} ms, start->first job {first_job} ms, "
            f"app {(x['end'] or 0) - x['start']} ms, {len(x['jobs'])} jobs ({len(x['pre'])} before the runs), "
            f"executors {[h for _t, h in sorted(x['executors'])]}, caching job's tasks per host {x['cache']}"
        )
        timed = x["runs"][1:]
        if timed:
            print(
                f"   timed runs: median wall {statistics.median(r['wall'] for r in timed):.0f} ms, median executor "
                f"CPU {statistics.median(r['cpu'] for r in timed):.0f} ms, median run time "
                f"{statistics.median(r['run'] for r in timed):.0f} ms, busier executor's share of run time "
                f"{statistics.median(r['skew'] for r in timed):.2f}"
            )
        for i, r in enumerate(x["runs"]):
            tag = "warm-up" if i == 0 else f"run {i}"
            print(
                f"   {tag:7s} "
                + " ".join(f"{f} {r[f]:5.0f}" if f != "skew" else f"{f} {r[f]:.2f}" for f in fields)
                + f" tasks {r['tasks']} hosts {r['hosts']} locality {r['loc']}"
            )
            if i > 0:
                for f in fields:
                    per[x["manager"]][f].append(r[f])
    # per stage position within a timed run (the same plan in every application): medians per manager
    pos = collections.defaultdict(lambda: collections.defaultdict(list))
    for x in apps:
        for r in x["runs"][1:]:
            for k, st in enumerate(r["stages"]):
                pos[k][x["manager"]].append(st)
    if len(per) == 2:
        print("\nper stage of a timed run (stage position; medians over all timed runs per manager; ms, KB):")
        for k in sorted(pos):
            line = f"  stage #{k}:"
            for m in sorted(pos[k]):
                L = pos[k][m]
                line += (
                    f"  {m}: tasks {statistics.median(t['tasks'] for t in L):.0f} run "
                    f"{statistics.median(t['run'] for t in L):5.0f} cpu {statistics.median(t['cpu'] for t in L):5.0f}"
                    f" fw {statistics.median(t['fw'] for t in L):4.0f} readKB {statistics.median(t['rkb'] for t in L):5.0f}"
                    f" writeKB {statistics.median(t['wkb'] for t in L):5.0f}"
                )
            print(line)
    if len(per) == 2:
        print(
            "\nmedians over the timed runs of all applications (ms; sums over the run's tasks except wall/idle):"
        )
        ms = sorted(per)
        for f in fields:
            vals = {m: statistics.median(per[m][f]) for m in ms}
            base = vals.get("sort") or 0
            other = [m for m in ms if m != "sort"]
            d = "" if not base or not other else f"  {other[0]}/sort {vals[other[0]] / base:.3f}"
            print(
                f"  {f:6s} "
                + "  ".join(f"{m} {vals[m]:7.2f}" if f == "skew" else f"{m} {vals[m]:7.0f}" for m in ms)
                + d
            )
    # the timed runs split by the placement of the work (busier executor's share of run time < or >= 0.7)
    allr = [(x["manager"], r) for x in apps for r in x["runs"][1:]]
    if len(allr) >= 3:
        print(
            f"\ncorrelation over {len(allr)} timed runs: wall vs skew "
            f"{statistics.correlation([r['skew'] for _m, r in allr], [r['wall'] for _m, r in allr]):.2f}, "
            f"wall vs executor CPU {statistics.correlation([r['cpu'] for _m, r in allr], [r['wall'] for _m, r in allr]):.2f}"
        )
        for m in sorted({m for m, _r in allr}):
            for lab, lo, hi in (("skew < 0.7", 0, 0.7), ("skew >= 0.7", 0.7, 1.01)):
                w = [r["wall"] for mm, r in allr if mm == m and lo <= r["skew"] < hi]
                if w:
                    print(f"  {m:6s} {lab:11s}: {len(w):2d} runs, median wall {statistics.median(w):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
