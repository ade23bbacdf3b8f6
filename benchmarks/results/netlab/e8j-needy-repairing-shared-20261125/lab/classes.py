"""Mean time per class (ms) of ATP Full / paper FBKV jobs per run. usage: python3 classes.py RUN..."""
import csv, sys
for r in sys.argv[1:]:
    for scheme in ('atp_full', 'atp_paper'):
        rows = [x for x in csv.DictReader(open(f'{r}/jobs.csv')) if x['scheme'] == scheme and x['workload'] == 'fbkv']
        if not rows: continue
        t = [[float(v) for v in x['time_in_class_ms'].split()] if x['time_in_class_ms'] else [] for x in rows]
        n = max(len(v) for v in t)
        mean = [sum(v[i] if i < len(v) else 0 for v in t) / len(t) for i in range(n)]
        print(f"{r:14s} {scheme:9s} jobs {len(rows)} mean ms in class 0..: " + ' '.join(f'{m:.0f}' for m in mean))
