"""Per-thread CPU of the lab's receiving agent (`netlab-agent serve` whose path contains AGENT) while it runs: run
time and run-queue wait (/proc/PID/task/TID/schedstat) sampled every 50 ms; at the end (SIGTERM or SECONDS) per
thread the totals and the largest run / wait share of any 200 ms window. usage: python3 servecpu.py AGENT SECONDS"""
import os, signal, sys, time
agent, secs = sys.argv[1], float(sys.argv[2])
stop = [False]
signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
hist = {}  # (pid, tid, comm) -> [(t, run_ns, wait_ns)]
t_end = time.time() + secs
while not stop[0] and time.time() < t_end:
    now = time.time()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            args = open(f"/proc/{pid}/cmdline").read().split("\0")
            if len(args) < 2 or agent not in args[0] or args[1] != "serve":
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                run, wait, _ = (int(x) for x in open(f"/proc/{pid}/task/{tid}/schedstat").read().split())
                comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
                hist.setdefault((pid, tid, comm), []).append((now, run, wait))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    time.sleep(0.05)
for (pid, tid, comm), h in sorted(hist.items(), key=lambda kv: -(kv[1][-1][1] - kv[1][0][1])):
    if len(h) < 2:
        continue
    run = (h[-1][1] - h[0][1]) / 1e6
    wait = (h[-1][2] - h[0][2]) / 1e6
    span = h[-1][0] - h[0][0]
    best_run = best_wait = 0.0
    j = 0
    for i in range(len(h)):
        while h[i][0] - h[j][0] > 0.2:
            j += 1
        if h[i][0] - h[j][0] >= 0.15:
            dt = (h[i][0] - h[j][0]) * 1e9
            best_run = max(best_run, (h[i][1] - h[j][1]) / dt)
            best_wait = max(best_wait, (h[i][2] - h[j][2]) / dt)
    if run + wait < 1:
        continue
    print(f"pid {pid} tid {tid} {comm:<16} span {span:.1f} s run {run:.0f} ms wait {wait:.0f} ms; "
          f"max 200 ms window: run {best_run:.2f} wait {best_wait:.2f}")
