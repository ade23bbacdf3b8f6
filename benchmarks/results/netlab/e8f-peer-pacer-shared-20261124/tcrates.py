# Per-class Mbit/s and drops between tc samples; summary over the intervals in which the port sent anything.
import sys, collections
for path in sys.argv[1:]:
    prev = {}
    tot_bytes = collections.Counter(); tot_drops = collections.Counter(); busy_t = 0.0; rates = []
    by_t = collections.OrderedDict()
    for line in open(path):
        p = line.split()
        if len(p) < 5: continue
        t = float(p[0]); c = p[1]; b = int(p[2]); d = int(p[4].rstrip(','))
        by_t.setdefault(t, {})[c] = (b, d)
    last = None
    for t, cl in by_t.items():
        if last is not None and len(cl) >= 9 and len(by_t[last]) >= 9:
            dt = t - last
            db = {c: cl[c][0] - by_t[last].get(c, (0, 0))[0] for c in cl}
            dd = {c: cl[c][1] - by_t[last].get(c, (0, 0))[1] for c in cl}
            if any(v < 0 for v in db.values()) or dt <= 0 or dt > 1: last = t; continue
            total = sum(v for c, v in db.items() if c != '1:1')
            if total > 0:
                busy_t += dt
                rates.append(total * 8 / dt / 1e6)
                for c, v in db.items(): tot_bytes[c] += v
                for c, v in dd.items(): tot_drops[c] += v
        last = t
    if not rates: print(path, 'no samples'); continue
    rates.sort()
    approx = [c for c in tot_bytes if c not in ('1:1', '1:a')]
    print(f"{path}: busy {busy_t:.2f} s, port Mbit/s mean {sum(rates)/len(rates):.0f} p10 {rates[len(rates)//10]:.0f} p50 {rates[len(rates)//2]:.0f}; "
          f"class0 {tot_bytes['1:a']*8/busy_t/1e6:.0f} Mbit/s drops {tot_drops['1:a']}; approx {sum(tot_bytes[c] for c in approx)*8/busy_t/1e6:.0f} Mbit/s "
          f"drops {sum(tot_drops[c] for c in approx)} ({' '.join(f'{c}:{tot_drops[c]}' for c in sorted(approx))})")
