#!/usr/bin/env python3
"""Markdown tables of a netlab run (for docs/netlab-results.md): report.py --results DIR

Recomputes summary.json from DIR/jobs.csv (bench.summarize) and prints the issue's targets (ratios of medians),
the worst measured loss vs 1 - MSR, the ablation medians, UDP-blast misses, the co-run result, ATP stall
statistics and the machine's CPU load per phase.
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402


def f(x, nd=1):
    if isinstance(x, float):
        if x != x:
            return "-"
        if x == float("inf"):
            return "inf"
        return f"{x:.{nd}f}"
    return str(x)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    a = ap.parse_args(argv)
    res = bench.summarize(a.results)
    rows = bench.load_rows(os.path.join(a.results, "jobs.csv"))
    print("### Targets at MSR 0.75 (median JCT, ms; ratio = ATP Full / baseline; failed jobs count as inf)\n")
    print("| workload | pattern | switch | jobs | ATP Full | TCP-EarlySend | TCP-SampleSend | TCP-exact | "
          "Full/ES (target <= 0.5) | Full/SS (target <= 0.7) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t in res["targets"]:
        print(f"| {t['workload']} | {t['pattern']} | {t['switch']} | {t['jobs']} | {f(t['atp_full_ms'])} | "
              f"{f(t['tcp_es_ms'])} | {f(t['tcp_ss_ms'])} | {f(t['tcp_exact_ms'])} | "
              f"**{f(t['ratio_full_es'], 2)}** {'met' if t['met_es'] else 'missed'} | "
              f"**{f(t['ratio_full_ss'], 2)}** {'met' if t['met_ss'] else 'missed'} |")
    lo = res.get("loss") or {}
    if lo:
        w = lo["worst_job"]
        print(f"\n### Measured loss vs 1 - MSR (every ATP job with MSR < 1, all variants)\n")
        print(f"{lo['atp_jobs']} ATP jobs; loss above 1 - MSR: **{lo['violations']}**; jobs not ok (timeout/error): "
              f"{lo['not_ok']}; jobs below target: {lo['missed_target']}. Worst margin (measured loss - (1 - MSR)): "
              f"**{lo['worst_margin']:+.4f}** ({w['scheme']}, {w['workload']}, MSR {w['msr']}, measured loss "
              f"{w['measured_loss']:.4f}, status {w['status']}).")
    print("\n### Ablations (median JCT, ms; failed jobs count as inf)\n")
    cols = ["atp_base", "atp_rc", "atp_rc_mrdf", "atp_fixtlr", "atp_fixprio", "atp_full", "tcp_es", "tcp_ss",
            "tcp_exact"]
    print("| workload | pattern | switch | MSR | " + " | ".join(cols) + " |")
    print("|---|---|---|---|" + "---|" * len(cols))
    for r in res["ablation"]:
        print(f"| {r['workload']} | {r['pattern']} | {r['switch']} | {r['msr']} | " +
              " | ".join(f(r[c]) for c in cols) + " |")
    print("\n### UDP-blast (no guarantee)\n")
    print("| workload | pattern | switch | jobs | missed MSR | median measured loss |")
    print("|---|---|---|---|---|---|")
    for u in res["udp"]:
        print(f"| {u['workload']} | {u['pattern']} | {u['switch']} | {u['jobs']} | {u['missed_msr']} | "
              f"{f(u['median_loss'], 3)} |")
    c = res.get("corun") or {}
    if c:
        print("\n### Co-running exact jobs (ATP MSR 1 next to ATP Full approximate jobs, FBHD-like, incast)\n")
        print("| | one FIFO | slack queues | slack / FIFO |")
        print("|---|---|---|---|")
        print(f"| exact jobs, median JCT (ms) | {f(c['exact_fifo_ms'])} | {f(c['exact_slack_ms'])} | "
              f"**{f(c['ratio'], 2)}** ({'met' if c['met'] else 'missed'}, target <= 0.7) |")
        ra = c['approx_slack_ms'] / c['approx_fifo_ms'] if c['approx_fifo_ms'] else float('nan')
        print(f"| approximate jobs, median JCT (ms) | {f(c['approx_fifo_ms'])} | {f(c['approx_slack_ms'])} | "
              f"{f(ra, 2)} |")
    print("\n### ATP stalls (jobs of the schemes experiment)\n")
    print("| workload | pattern | switch | scheme | jobs | failed | JCT > 1 s | median bytes sent / job bytes |")
    print("|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["workload"], r["pattern"], r["switch"], r["scheme"]) for r in rows
                   if r["experiment"] == "schemes" and r["scheme"].startswith("atp")})
    for k in keys:
        rs = [r for r in rows if r["experiment"] == "schemes" and (r["workload"], r["pattern"], r["switch"],
                                                                      r["scheme"]) == k]
        ratio = [float(r["bytes_sent"]) / r["job_bytes"] for r in rs if r["job_bytes"]]
        print(f"| {' | '.join(k)} | {len(rs)} | {sum(r['status'] != 'ok' for r in rs)} | "
              f"{sum(r['jct_ms'] > 1000 for r in rs)} | "
              f"{f(statistics.median(ratio), 2) if ratio else '-'} |")
    ph = os.path.join(a.results, "phases.csv")
    if os.path.exists(ph):
        ps = list(csv.DictReader(open(ph)))
        busy = [float(p["cpu_busy"]) for p in ps]
        load = [float(p["load1"]) for p in ps]
        print(f"\n### Machine load during the run\n\n{len(ps)} phases; CPU busy (whole machine, 2 cores) median "
              f"{statistics.median(busy):.2f}, min {min(busy):.2f}; 1-min load average median "
              f"{statistics.median(load):.1f}, max {max(load):.1f}. Phases with other CPU-heavy processes "
              f"(not part of the lab) listed: {sum(1 for p in ps if p['other_cpu'])} of {len(ps)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
