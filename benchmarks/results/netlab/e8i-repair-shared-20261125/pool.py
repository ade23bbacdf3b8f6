"""Per-run p50 (and ratio to TCP-ES in the same run) and pooled per-job p50/p99 per agent, for the e8g and e8h A/Bs.
usage: python3 pool.py PREFIX   (runs named PREFIX-AGENT-N, AGENT off/on (e8g) or old/new (e8h); every such directory)"""
import csv, glob, os, sys, statistics as st
from collections import defaultdict

def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(round(p * len(v) + 0.5)) - 1))] if v else float('nan')

ORDER = {'off': 0, 'old': 0, 'on': 1, 'new': 1}  # baseline first
prefix = sys.argv[1]
runs = sorted(glob.glob(f'{prefix}-*-[0-9]*'))
runs = [r for r in runs if os.path.isdir(r)]
per_run = defaultdict(dict)   # (agent, N) -> {(cell, scheme): p50}
pooled = defaultdict(list)    # (agent, cell, scheme) -> jcts
for r in runs:
    agent, n = r.split('-')[-2], r.split('-')[-1]
    try:
        rows = list(csv.DictReader(open(os.path.join(r, 'jobs.csv'))))
    except OSError:
        continue
    jct = defaultdict(list)
    for x in rows:
        if x['experiment'] not in ('schemes', 'corun') or x['status'] != 'ok':
            continue
        cell = f"{x['workload']}/{x['switch']}/{x['senders']}" + (f"/{x['kind']}" if x['experiment'] == 'corun' else '')
        jct[(cell, x['scheme'])].append(float(x['jct_ms']))
    for k, v in jct.items():
        if len(v) < 5:
            continue
        per_run[(agent, n)][k] = st.median(v)
        pooled[(agent,) + k].extend(v)
cells = sorted({k for d in per_run.values() for k in d})
for cell, scheme in cells:
    line = f'{cell:22s} {scheme:12s}'
    for agent in sorted({a for a, _ in per_run}, key=lambda a: ORDER.get(a, 9)):
        vals = []
        for (a, n), d in sorted(per_run.items(), key=lambda t: int(t[0][1])):
            if a != agent or (cell, scheme) not in d:
                continue
            es = d.get((cell, 'tcp_es'))
            vals.append(f"{d[(cell, scheme)]:.0f}" + (f"({d[(cell, scheme)] / es:.2f})" if es and scheme != 'tcp_es' else ''))
        v = pooled.get((agent, cell, scheme), [])
        line += f' | {agent}: ' + ' '.join(vals) + (f'  pooled p50/p99 {q(v, .5):.0f}/{q(v, .99):.0f}' if v else '')
    print(line)
