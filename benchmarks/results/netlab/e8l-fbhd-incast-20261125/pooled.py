"""Pooled over runs: every job of each (switch, senders, scheme), p50 over all jobs and over the MSR-0.75 jobs.
usage: python3 pooled.py DIR..."""
import csv, os, statistics as st, sys
rows = [r for d in sys.argv[1:] for r in csv.DictReader(open(os.path.join(d, "jobs.csv")))]
print("| switch | senders | scheme | jobs | p50 all | p50@.75 | p99 all |")
print("|---|---|---|---|---|---|---|")
for k in sorted({(r["switch"], int(r["senders"]), r["scheme"]) for r in rows}):
    rs = [float(r["jct_ms"]) for r in rows if (r["switch"], int(r["senders"]), r["scheme"]) == k]
    r75 = [float(r["jct_ms"]) for r in rows if (r["switch"], int(r["senders"]), r["scheme"]) == k and r["msr"] == "0.75"]
    s = sorted(rs)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {len(rs)} | {st.median(rs):.0f} | {st.median(r75):.0f} | "
          f"{s[min(len(s) - 1, int(0.99 * len(s)))]:.0f} |")
