"""Co-run summary: mean over seeds of all / exact / approximate jobs' p50 per (switch, senders, rule).
usage: corun_summ.py FILE (sections '## NAME seed S repair R', R = needy_repairing_jobs_only)"""
import re, sys, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    m = re.match(r'## \S+ seed (\d+) repair (\S+)', line)
    if m: seed, rep = int(m.group(1)), m.group(2); continue
    m = re.match(r'full\s+(\S+)\s+(\d+) .*p50\s+([\d.]+) ms.*exact p50 ([\d.]+) approx p50 ([\d.]+)', line)
    if m: d[(m.group(1), int(m.group(2)), rep)][seed] = tuple(float(x) for x in m.group(3, 4, 5))
for k in sorted(d):
    x = d[k]; n = len(x); mean = lambda i: sum(v[i] for v in x.values()) / n
    print(f"{k[0]:5s} {k[1]:2d} needy_repairing_only {k[2]}: n={n} p50 {mean(0):7.1f} exact p50 {mean(1):7.1f} approx p50 {mean(2):7.1f}")
