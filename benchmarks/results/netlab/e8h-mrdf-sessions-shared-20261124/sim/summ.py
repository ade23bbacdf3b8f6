"""Mean over seeds of p50 / p99 JCT (ms) and loss per (workload, layout, mode, switch, senders), across 0 vs 1, and
how many seeds across=1 was faster at p50.  usage: python3 summ.py sim.txt"""
import re, sys
from collections import defaultdict
d = defaultdict(dict)
for line in open(sys.argv[1]):
    m = re.match(r'(\w+) spj=(\d) across=(\d) seed=(\d+) (\S+)\s+(\S+)\s+(\d+)\s+jobs\s+(\d+)/\s*(\d+)\s+p50\s+(\S+) ms.*?p99\s+(\S+) ms.*?loss (\S+)', line)
    if not m: continue
    wl, spj, ac, seed, mode, q, n, done, total, p50, p99, loss = m.groups()
    d[(wl, 'job' if spj == '1' else 'sender', mode, q, int(n))][(int(ac), int(seed))] = (float(p50), float(p99), float(loss), int(done) == int(total))
print(f"{'workload':8s} {'session':7s} {'mode':8s} {'switch':6s} {'n':>2s} | {'before p50/p99 loss':>22s} | {'after p50/p99 loss':>22s} | after faster p50 | all done")
for k in sorted(d):
    v = d[k]
    seeds = sorted({s for (_, s) in v})
    def mean(a, i): return sum(v[(a, s)][i] for s in seeds) / len(seeds)
    wins = sum(v[(1, s)][0] < v[(0, s)][0] for s in seeds)
    done = all(x[3] for x in v.values())
    print(f"{k[0]:8s} {k[1]:7s} {k[2]:8s} {k[3]:6s} {k[4]:2d} | {mean(0,0):8.1f} / {mean(0,1):6.0f} {mean(0,2):.2f} | {mean(1,0):8.1f} / {mean(1,1):6.0f} {mean(1,2):.2f} | {wins:2d}/{len(seeds)} | {done}")
