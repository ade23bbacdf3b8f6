#!/usr/bin/env python3
"""Polls a Flink cluster's REST API for one operator metric of the running jobs, summed over every vertex and
subtask, until killed; prints `job=<name> jid=<id> metric=<metric> value=<sum>` whenever a job's sum changes. The lab runner
(benchmarks/flink/netlab/run.py) starts it inside the JobManager's namespace (`ip netns exec`) to read the
receivers' approxEpochsOverTcp and approxGroupWaitsBeyondDeadline while each benchmark job runs (a finished job's
metrics leave the REST API).

  metrics_poll.py http://HOST:PORT METRIC[,METRIC...] [--interval 1]
"""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
import urllib.request


def get(base: str, path: str):
    with urllib.request.urlopen(base + path, timeout=5) as r:
        return json.load(r)


def job_sum(base: str, jid: str, metric: str) -> float:
    """The metric summed over the job's vertices and subtasks (ids `<subtask>.<operator>.<metric>`)."""
    total = 0.0
    for v in get(base, f"/jobs/{jid}").get("vertices", []):
        path = f"/jobs/{jid}/vertices/{v['id']}/metrics"
        ids = [m["id"] for m in get(base, path) if m["id"] == metric or m["id"].endswith("." + metric)]
        if ids:
            q = urllib.parse.quote(",".join(ids), safe=",")
            total += sum(float(m.get("value", 0)) for m in get(base, f"{path}?get={q}"))
    return total


def main(argv: list[str]) -> int:
    base, metrics = argv[0].rstrip("/"), argv[1].split(",")
    interval = float(argv[argv.index("--interval") + 1]) if "--interval" in argv else 1.0
    last: dict[tuple[str, str], float] = {}
    while True:
        try:
            for j in get(base, "/jobs/overview").get("jobs", []):
                if j.get("state") != "RUNNING":
                    continue
                for metric in metrics:
                    value = job_sum(base, j["jid"], metric)
                    if last.get((j["jid"], metric)) != value:
                        last[(j["jid"], metric)] = value
                        name = j["name"].replace(" ", "_")
                        print(f"job={name} jid={j['jid']} metric={metric} value={value:.0f}", flush=True)
        except (OSError, ValueError, KeyError):
            pass  # the cluster is starting or a job just ended: the next round asks again
        time.sleep(interval)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
