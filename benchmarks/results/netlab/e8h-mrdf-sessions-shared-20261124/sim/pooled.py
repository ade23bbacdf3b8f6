"""Paired per-seed p50 ratios after/before (session per job), pooled per workload: geometric mean, wins, and a
two-sided sign-test p-value.  usage: python3 pooled.py spj30.txt sim.txt"""
import math, re, sys
from collections import defaultdict
d = defaultdict(dict)
for fn in sys.argv[1:]:
    for line in open(fn):
        m = re.match(r'(\w+) spj=1 across=(\d) seed=(\d+) (\S+)\s+(\S+)\s+(\d+)\s+jobs.*?p50\s+(\S+) ms', line)
        if m:
            wl, a, seed, mode, q, n, p50 = m.groups()
            d[(wl, mode, q, n, seed)][a] = float(p50)
groups = defaultdict(list)
for (wl, mode, q, n, seed), v in d.items():
    if '0' in v and '1' in v:
        groups[wl].append(v['1'] / v['0'])
        groups['all'].append(v['1'] / v['0'])
def sign_p(w, n):
    k = min(w, n - w)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)
for g, r in sorted(groups.items()):
    w = sum(x < 1 for x in r); n = sum(x != 1 for x in r)
    gm = math.exp(sum(math.log(x) for x in r) / len(r))
    print(f"{g:8s} pairs {len(r):3d}  geomean after/before {gm:.3f}  after faster {w}/{n}  sign-test p {sign_p(w, n):.3f}")
