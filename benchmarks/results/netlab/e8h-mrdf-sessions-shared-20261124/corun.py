"""Co-run per run: exact ATP jobs' p50 on the slack and FIFO switch and their ratio (target <= 0.5), old vs new.
usage: python3 corun.py   (runs co-{old,new}-N and co2-{old,new}-N in the current folder)"""
import glob, json, os
for agent in ('old', 'new'):
    for r in sorted(glob.glob(f'co-{agent}-[0-9]*') + glob.glob(f'co2-{agent}-[0-9]*')):
        if not os.path.isdir(r):
            continue
        try:
            c = json.load(open(os.path.join(r, 'summary.json')))['corun']
        except (OSError, KeyError):
            continue
        print(f"{r}: exact p50 slack {c['exact_slack']['p50_ms']:.0f} fifo {c['exact_fifo']['p50_ms']:.0f} "
              f"ratio {c['exact_slack_over_fifo']:.2f}; approx p50 slack {c['approx_slack']['p50_ms']:.0f} "
              f"fifo {c['approx_fifo']['p50_ms']:.0f}")
