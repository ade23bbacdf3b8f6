import time, sys
dev = sys.argv[1]; dur = float(sys.argv[2])
f = f"/sys/class/net/{dev}/statistics/tx_bytes"
out = []
t0 = time.perf_counter(); last = None
while time.perf_counter() - t0 < dur:
    b = int(open(f).read()); t = time.perf_counter() - t0
    out.append((t, b))
    time.sleep(0.0002)
# per 1 ms bins: Mbit/s
bins = {}
for (t, b), (t2, b2) in zip(out, out[1:]):
    bins.setdefault(int(t2 * 1000), 0); bins[int(t2 * 1000)] += b2 - b
v = [bins.get(i, 0) * 8 / 1e3 for i in range(int(dur * 1000))]  # Mbit/s per 1 ms bin
on = [x for x in v if x > 20]
print(f"samples {len(out)} bins {len(v)} mean {sum(v)/len(v):.1f} Mbit/s; bins >20 Mbit/s: {len(on)} ({len(on)/len(v):.2f}), their mean {sum(on)/max(1,len(on)):.0f}")
runs, cur = [], 0
for x in v:
    if x > 20: cur += 1
    elif cur: runs.append(cur); cur = 0
runs.sort()
print("burst lengths (ms, consecutive 1 ms bins > 20 Mbit/s): n", len(runs), "p50", runs[len(runs)//2] if runs else 0, "p90", runs[int(len(runs)*.9)] if runs else 0, "max", runs[-1] if runs else 0)
print("first 60 bins:", " ".join(f"{x:.0f}" for x in v[:60]))
