import json,sys,os
for d in sys.argv[1:]:
    try: s=json.load(open(os.path.join(d,'summary.json')))
    except Exception as e: print(d, e); continue
    rows={}
    for c in s['cells']:
        if c['jobs']<5: continue
        rows.setdefault((c['workload'],c['switch']),{})[c['scheme']]=(c['p50_ms'],c['p99_ms'])
    for k,v in sorted(rows.items()):
        print(os.path.basename(d), k[0], k[1], ' '.join(f"{sc}={p50:.0f}/{p99:.0f}" for sc,(p50,p99) in sorted(v.items())))
