"""Co-run summary: mean over seeds of exact / approximate jobs' p50 per switch. usage: corun_summ.py FILE..."""
import re, sys, collections
d = collections.defaultdict(dict)
for f in sys.argv[1:]:
    for line in open(f):
        m = re.match(r'## corun seed (\d+) repair (\S+)', line)
        if m: seed, rep = int(m.group(1)), m.group(2); continue
        m = re.match(r'full\s+(\S+)\s+8 .*p50\s+([\d.]+) ms.*exact p50 ([\d.]+) approx p50 ([\d.]+)', line)
        if m: d[(rep, m.group(1))][seed] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
for rep in sorted({r for r, _ in d}):
    s, f = d[(rep, 'slack')], d[(rep, 'fifo')]
    seeds = sorted(set(s) & set(f))
    mean = lambda x, i: sum(x[k][i] for k in seeds) / len(seeds)
    print(f"repair {rep}: n={len(seeds)} exact p50 slack {mean(s,1):.1f} fifo {mean(f,1):.1f} ratio {mean(s,1)/mean(f,1):.2f}"
          f"  approx p50 slack {mean(s,2):.1f} fifo {mean(f,2):.1f}")
