#!/usr/bin/env python3
# Per-thread CPU of every atp-perf* process while a benchmark runs (docs/history.md, "what limits 64 KiB goodput"):
# /proc/PID/task/TID/schedstat run time and run-queue wait, voluntary/involuntary context switches, first and last
# sample per thread (every 100 ms), until the ATP client has been gone 0.5 s or SECONDS passed; plus /proc/stat.
#   python3 benchmarks/netlab/thread_cpu_sampler.py 40 & OUT=/tmp/x bash benchmarks/netlab/veth_goodput.sh ATP_PERF
import os
import sys
import time


# per-thread schedstat (run ns, runqueue-wait ns, timeslices) + voluntary/involuntary switches of atp-perf* threads,
# first and last sample per thread (sampled every 100 ms); plus /proc/stat cpu split over the same span.
def cpu():
    f = open("/proc/stat").readline().split()[1:8]
    return [int(x) for x in f]  # user nice system idle iowait irq softirq


first, last = {}, {}
c0 = cpu()
t0 = time.time()
t_end = t0 + float(sys.argv[1])
busy = None
seen_client = None
while time.time() < t_end:
    seen = False
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if not open(f"/proc/{pid}/comm").read().startswith("atp-perf"):
                continue
            args = open(f"/proc/{pid}/cmdline").read().split("\0")
            role = args[1] + ("-tcp" if "--tcp" in args else "")
            for tid in os.listdir(f"/proc/{pid}/task"):
                ss = [int(x) for x in open(f"/proc/{pid}/task/{tid}/schedstat").read().split()]
                st = open(f"/proc/{pid}/task/{tid}/status").read().split("\n")
                vol = int([l for l in st if l.startswith("voluntary_ctxt")][0].split()[1])
                inv = int([l for l in st if l.startswith("nonvoluntary_ctxt")][0].split()[1])
                comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
                k = (role, pid, tid, comm)
                if role == "client":
                    seen = True
                v = (time.time(), ss[0], ss[1], ss[2], vol, inv)
                first.setdefault(k, v)
                last[k] = v
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            pass
    if seen:
        seen_client = time.time()
    elif seen_client and time.time() - seen_client > 0.5:
        break
    time.sleep(0.1)
c1 = cpu()
t1 = time.time()
d = [b - a for a, b in zip(c0, c1)]
tot = sum(d)
print(
    f"cpu split over {t1 - t0:.1f}s: user {100 * d[0] / tot:.1f}% sys {100 * d[2] / tot:.1f}% softirq {100 * d[6] / tot:.1f}% idle {100 * (d[3] + d[4]) / tot:.1f}%"
)
for k in sorted(first):
    a, b = first[k], last[k]
    dt = b[0] - a[0]
    if dt < 0.15 or b[1] - a[1] < 1e6:
        continue
    print(
        f"{k[0]:10s} {k[3]:14s} span {dt:5.2f}s run {(b[1] - a[1]) / 1e6:7.1f} ms ({(b[1] - a[1]) / 1e9 / dt * 100:5.1f}%) rq-wait {(b[2] - a[2]) / 1e6:7.1f} ms slices {b[3] - a[3]:6d} vol {b[4] - a[4]:6d} invol {b[5] - a[5]:5d}"
    )
