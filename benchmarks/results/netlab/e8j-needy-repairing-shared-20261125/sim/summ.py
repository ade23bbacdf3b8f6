import sys, re, collections, math
# per (mode, queue, senders, repair): list of (seed, p50, p99, loss, sent/needed, gaveup, sat)
d = collections.defaultdict(dict)
seed = rep = None
for line in open(sys.argv[1]):
    m = re.match(r'## (\S+) seed (\d+) repair (\S+)', line)
    if m: seed, rep = int(m.group(2)), m.group(3); continue
    m = re.match(r'(\S+)\s+(\S+)\s+(\d+)\s+jobs.*p50\s+([\d.]+) ms.*p99\s+([\d.]+) ms.*loss ([\d.]+)\s+sent/needed ([\d.]+).*gaveup ([\d.]+) sat ([\d.]+) repairs/job ([\d.]+)', line)
    if m:
        k = (m.group(1), m.group(2), int(m.group(3)))
        d[(k, rep)][seed] = tuple(float(x) for x in m.group(4, 5, 6, 7, 8, 9, 10))
reps = sorted({r for (_, r) in d})
base = reps[0]
for k in sorted({k for (k, _) in d}):
    b = d[(k, base)]
    for r in reps:
        x = d.get((k, r), {})
        seeds = sorted(set(x) & set(b))
        if not seeds: continue
        mean = lambda i: sum(x[s][i] for s in seeds) / len(seeds)
        wins = sum(x[s][0] < b[s][0] for s in seeds)
        gm = math.exp(sum(math.log(x[s][0] / b[s][0]) for s in seeds) / len(seeds))
        print(f"{k[0]:8s} {k[1]:5s} {k[2]:2d} repair {r}: n={len(seeds):2d} p50 {mean(0):7.1f} p99 {mean(1):7.1f} loss {mean(2):.3f} sent/needed {mean(3):.2f} gaveup {mean(4):.3f} sat {mean(5):.3f} repairs/job {mean(6):6.1f}  p50 vs {base}: geomean {gm:.3f} faster {wins}/{len(seeds)}")
