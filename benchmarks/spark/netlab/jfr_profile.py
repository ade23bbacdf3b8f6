#!/usr/bin/env python3
# Inclusive / self shares of JFR execution samples (jdk.ExecutionSample) whose stack contains a frame matching ROOT,
# counting only the frames above it (its callees):  python3 jfr_profile.py ApproxShuffleWriter.write FILE.jfr ...
# (executors recorded with --spark.executor.extraJavaOptions "-XX:StartFlightRecording=filename=DIR/,settings=profile,
# dumponexit=true"; docs/spark-netlab.md)
import collections
import json
import subprocess
import sys

root = sys.argv[1]
incl = collections.Counter()
self_ = collections.Counter()
total = 0
allsamples = 0
for f in sys.argv[2:]:
    out = subprocess.run(
        ["jfr", "print", "--json", "--stack-depth", "200", "--events", "jdk.ExecutionSample", f],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for e in json.loads(out)["recording"]["events"]:
        allsamples += 1
        frames = e["values"]["stackTrace"]["frames"] if e["values"].get("stackTrace") else []
        names = [fr["method"]["type"]["name"].split(".")[-1] + "." + fr["method"]["name"] for fr in frames]
        if not any(root in n for n in names):
            continue
        total += 1
        # frames above (callees of) the root only
        idx = max(i for i, n in enumerate(names) if root in n)
        sub = names[: idx + 1]
        self_[sub[0]] += 1
        for n in set(sub):
            incl[n] += 1
print(f"samples {allsamples}, under {root}: {total}")
print("-- inclusive")
for n, c in incl.most_common(45):
    print(f"{100 * c / total:6.1f}% {c:5d} {n}")
print("-- self")
for n, c in self_.most_common(30):
    print(f"{100 * c / total:6.1f}% {c:5d} {n}")
