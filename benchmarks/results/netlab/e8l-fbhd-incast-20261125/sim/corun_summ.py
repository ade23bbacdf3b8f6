"""corun.sh output: mean over seeds of the exact and approximate jobs' p50 per switch, slack/FIFO of the exact
ones. usage: python3 corun_summ.py FILE..."""
import re, sys
for path in sys.argv[1:]:
    v = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        q = line.split()[1]
        m = re.search(r"exact p50 ([0-9.]+) approx p50 ([0-9.]+)", line)
        v.setdefault(q, []).append((float(m.group(1)), float(m.group(2))))
    e = {q: sum(x[0] for x in xs) / len(xs) for q, xs in v.items()}
    a = {q: sum(x[1] for x in xs) / len(xs) for q, xs in v.items()}
    print(f"{path}: exact p50 slack {e['slack']:.1f} FIFO {e['fifo']:.1f} (slack/FIFO {e['slack'] / e['fifo']:.2f}); "
          f"approx p50 slack {a['slack']:.1f} FIFO {a['fifo']:.1f}; seeds {len(v['slack'])}")
