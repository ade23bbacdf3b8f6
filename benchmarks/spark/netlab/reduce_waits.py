#!/usr/bin/env python3
# Where an approximate reduce task's wall time goes, per task: joins one application's event log (plain or .zstd) with
# the executors' DEBUG lines of ApproxShuffleReader (log4j: io.netapprox.spark.ApproxShuffleReader at debug, see
# docs/spark-netlab.md). Per task: launch (driver) -> read() start (delivery to the executor, deserialization, the
# iterator chain up to the shuffle read), inside read() the map statuses, the plan (broadcast value), the local reads,
# the wait for the remote pulls, asking the sender counters, then read() end -> finish (aggregation of the strata,
# result building/serialization, awaiting the counters where a completion listener does, the status update), next to
# Spark's deserialize/run/CPU. Tasks of a stage are split into first wave (first task per executor) and the rest.
#   python3 benchmarks/spark/netlab/reduce_waits.py EVENTLOG EXEC_LOG [LAST_STAGES]
import collections
import json
import re
import statistics
import subprocess
import sys

ev_path, log_path = sys.argv[1], sys.argv[2]
last = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
lines = (
    subprocess.run(["zstd", "-dc", ev_path], capture_output=True, text=True, check=True).stdout.splitlines()
    if ev_path.endswith(".zstd")
    else open(ev_path)
)
reads, done = {}, {}
# main's line (before spark16l) has no read() start nor map-status/plan times: its start is the line's time stamp
# (HH:MM:SS.mmm, logged at read()'s end; the executors log in UTC) minus its total.
R = re.compile(
    r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) .*reduce task (\d+) partitions \[\d+, \d+\): (?:read\(\) at (\d+) "
    r"\(epoch ms\), map statuses ([\d.]+) ms, plan ([\d.]+) ms; )?(\d+) local blocks read in ([\d.]+) ms, then "
    r"([\d.]+) ms waiting for (\d+) remote blocks, ([\d.]+) ms (?:asking|for) the sender counters; ([\d.]+) ms in all"
)
C = re.compile(r"reduce task (\d+): sender counters awaited ([\d.]+) ms at completion, (\d+) \(epoch ms\)")
raw = []
for line in open(log_path, errors="replace"):
    m = R.search(line)
    if m:
        raw.append(m.groups())
    m = C.search(line)
    if m:
        done[int(m.group(1))] = (float(m.group(2)), int(m.group(3)))
lines = list(lines)
day0 = None
for line in lines:  # midnight (UTC) of the application's day, epoch ms
    e = json.loads(line)
    if e["Event"] == "SparkListenerApplicationStart":
        day0 = e["Timestamp"] - e["Timestamp"] % 86400000
        break
for g in raw:
    total = float(g[13])
    end = day0 + ((int(g[0]) * 60 + int(g[1])) * 60 + int(g[2])) * 1000 + int(g[3])
    start = int(g[5]) if g[5] else round(end - total)
    reads[int(g[4])] = dict(
        start=start,
        statuses=float(g[6] or 0),
        plan=float(g[7] or 0),
        local=float(g[9]),
        remote=float(g[10]),
        ask=float(g[12]),
        read=total,
    )
stages = collections.defaultdict(list)
for line in lines:
    e = json.loads(line)
    if e["Event"] != "SparkListenerTaskEnd":
        continue
    ti, tm = e["Task Info"], e.get("Task Metrics") or {}
    r = reads.get(ti["Task ID"])
    if r is None:
        continue
    stages[e["Stage ID"]].append(
        dict(
            r,
            id=ti["Task ID"],
            ex=ti["Executor ID"],
            launch=ti["Launch Time"],
            dur=ti["Finish Time"] - ti["Launch Time"],
            before=r["start"] - ti["Launch Time"],
            after=ti["Finish Time"] - r["start"] - r["read"],
            deser=tm.get("Executor Deserialize Time", 0),
            run=tm.get("Executor Run Time", 0),
            cpu=tm.get("Executor CPU Time", 0) / 1e6,
            ser=tm.get("Result Serialization Time", 0),
            gc=tm.get("JVM GC Time", 0),
            awaited=done.get(ti["Task ID"], (0.0, 0))[0],
            # branch only: read() end -> the completion listener's end (aggregation,
            # rows, awaiting the counters), then -> finish on the driver (result,
            # status update)
            compute=(done[ti["Task ID"]][1] - r["start"] - r["read"]) if ti["Task ID"] in done else 0,
            report=(ti["Finish Time"] - done[ti["Task ID"]][1]) if ti["Task ID"] in done else 0,
        )
    )
COLS = [
    "dur",
    "before",
    "deser",
    "statuses",
    "plan",
    "local",
    "remote",
    "ask",
    "after",
    "compute",
    "awaited",
    "report",
    "run",
    "cpu",
    "gc",
]


def row(label, ts):
    return f"{label:<22} n={len(ts):<3} " + " ".join(
        f"{c} {statistics.median(t[c] for t in ts):.1f}" for c in COLS
    )


pooled = collections.defaultdict(list)
print(
    "medians per task, ms: dur = launch to finish (driver); before = launch to read() start; after = read() end to "
    "finish; (branch only:) compute = read() end to the completion listener's end, of which awaited = sender "
    "counters awaited there, report = listener's end to finish on the driver"
)
for s in sorted(stages)[-last:]:
    ts = sorted(stages[s], key=lambda t: t["launch"])
    seen, first, rest = set(), [], []
    for t in ts:
        (rest if t["ex"] in seen else first).append(t)
        seen.add(t["ex"])
    pooled["first wave"] += first
    pooled["later waves"] += rest
    print(
        f"stage {s}: sum of durations {sum(t['dur'] for t in ts)} ms, of read() {sum(t['read'] for t in ts):.0f} ms, "
        f"of CPU {sum(t['cpu'] for t in ts):.0f} ms"
    )
    print("  " + row("first wave", first))
    if rest:
        print("  " + row("later waves", rest))
print("pooled over the stages above")
for k, v in pooled.items():
    if v:
        print("  " + row(k, v))
allt = pooled["first wave"] + pooled["later waves"]
if allt:
    tot = {c: sum(t[c] for t in allt) for c in COLS + ["read"]}
    print(
        f"  sums over {len(allt)} tasks: duration {tot['dur']:.0f}, before read {tot['before']:.0f} (deserialize "
        f"{tot['deser']:.0f}), read {tot['read']:.0f} (statuses {tot['statuses']:.0f}, plan {tot['plan']:.0f}, local "
        f"{tot['local']:.0f}, remote wait {tot['remote']:.0f}, asking counters {tot['ask']:.0f}), after read "
        f"{tot['after']:.0f} (counters awaited {tot['awaited']:.0f}), CPU {tot['cpu']:.0f}, GC {tot['gc']:.0f}"
    )
