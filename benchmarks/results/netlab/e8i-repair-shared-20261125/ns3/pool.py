"""ns-3 k4 fig9 A/B: per (workload, msr, scheme) p50 old -> new over seeds; geomean ratio, seeds faster; and ATP/DCTCP-ES.
usage: pool.py DIR OLDTAG NEWTAG SEEDS (dirs DIR/k4fig9-s{seed}-{tag}/summary.json)"""
import json, math, sys
d, old, new, seeds = sys.argv[1], sys.argv[2], sys.argv[3], [int(s) for s in sys.argv[4].split(',')]
def load(tag, s):
    x = json.load(open(f"{d}/k4fig9-s{s}-{tag}/summary.json"))
    return {(c['workload'], c['msr'], c['scheme']): c['p50_ms'] for c in x['cells']}
O = {s: load(old, s) for s in seeds}; N = {s: load(new, s) for s in seeds}
for k in sorted(O[seeds[0]]):
    if not k[2].startswith('atp'): continue
    r = [N[s][k] / O[s][k] for s in seeds]
    es = [(O[s][k] / O[s][(k[0], k[1], 'dctcp_es')], N[s][k] / N[s][(k[0], k[1], 'dctcp_es')]) for s in seeds]
    gm = math.exp(sum(map(math.log, r)) / len(r))
    print(f"{k[0]} msr {k[1]} {k[2]:10s} p50 old {' '.join(f'{O[s][k]:.3f}' for s in seeds)} new {' '.join(f'{N[s][k]:.3f}' for s in seeds)}"
          f"  geomean new/old {gm:.2f} faster {sum(x < 1 for x in r)}/{len(r)}"
          f"  /DCTCP-ES old {' '.join(f'{a:.2f}' for a, _ in es)} new {' '.join(f'{b:.2f}' for _, b in es)}")
