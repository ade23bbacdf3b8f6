"""The verdict on issue 8's benchmark targets and the detail tables of one netlab run, as markdown
(docs/netlab-results.md):

  python3 -m netlab.report [--results DIR]      # default: the run named by benchmarks/results/netlab/latest

Recomputes DIR/summary.json from DIR/jobs.csv and DIR/run.json (netlab.results) and prints it as tables.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys

from netlab import results as R
from netlab import schemes


def f(x, nd=1) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if x != x:
            return "-"
        return f"{x:.{nd}f}"
    return str(x)


def ms(x) -> str:
    return "inf" if x is None else f(x)


def met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def cell_name(c: dict) -> str:
    return f"{c['workload']} {c['pattern']} {c['switch']} {c['senders']}s"


def verdict_table(v: dict, skipped: list[dict]) -> list[str]:
    dc = [c for c in v["per_cell"] if c["host_rate_ratio"] == R.DATACENTER]

    def worst(key):
        xs = [c for c in dc if c[key] is not None]
        if not xs:
            return "no ratio"
        w = max(xs, key=lambda c: c[key])
        return f"worst {f(w[key], 2)}x ({cell_name(w)})"

    out = ["| target (datacenter configuration, MSR 0.75) | measured | |", "|---|---|---|"]
    n = v["datacenter_cells"]
    out.append(
        f"| ATP Full p50 <= {R.TARGET_P50_VS_ES}x TCP-EarlySend, every (workload, pattern, switch, senders) "
        f"cell | {v['p50_vs_es_met']} of {n} cells; {worst('p50_vs_es')} | "
        f"{met(n > 0 and v['p50_vs_es_met'] == n)} |"
    )
    out.append(
        f"| ATP Full p50 <= {R.TARGET_P50_VS_SS}x TCP-SampleSend | {v['p50_vs_ss_met']} of {n}; "
        f"{worst('p50_vs_ss')} | {met(n > 0 and v['p50_vs_ss_met'] == n)} |"
    )
    out.append(
        f"| ATP Full p99 <= {R.TARGET_P99_VS_ES}x TCP-EarlySend, incast with >= {R.TARGET_P99_MIN_SENDERS} "
        f"senders | {v['p99_vs_es_met']} of {v['p99_cells']} cells | "
        f"{met(v['p99_cells'] > 0 and v['p99_vs_es_met'] == v['p99_cells']) if v['p99_cells'] else 'no cell'} |"
    )
    out.append(
        f"| ATP Full p50 <= {R.TARGET_P50_VS_IDEAL}x ideal_p50 | {v['p50_vs_ideal_met']} of {n}; "
        f"{worst('p50_vs_ideal')} | {met(n > 0 and v['p50_vs_ideal_met'] == n)} |"
    )
    by = ", ".join(f"{s} {k}" for s, k in v["atp_failed_by_scheme"].items() if k)
    out.append(
        f"| 0 failed ATP jobs (every variant, Base included; all configurations) | {v['atp_failed']} of "
        f"{v['atp_jobs']}{f' ({by})' if by else ''} | {met(v['atp_failed'] == 0)} |"
    )
    out.append(
        f"| 0 ATP jobs with measured loss above 1 - MSR | {v['atp_loss_above_allowance']} | "
        f"{met(v['atp_loss_above_allowance'] == 0)} |"
    )
    if v["start_waits_reported"]:
        out.append(
            f"| no job start waited more than {R.TARGET_START_WAIT_RTTS} loaded RTTs | "
            f"{v['start_waits_over_target']} of {v['start_waits_reported']} ATP jobs waited longer | "
            f"{met(v['start_waits_over_target'] == 0)} |"
        )
    else:
        out.append(
            f"| no job start waited more than {R.TARGET_START_WAIT_RTTS} loaded RTTs | not measurable: this "
            f"agent does not report start_to_running_ns | - |"
        )
    out.append(
        f"| ablations Base >= RC >= RC+MRDF >= Full (p50) in >= {R.TARGET_MONOTONE_CELLS} of 18 cells | "
        f"{v['monotone_cells']} of {v['ablation_cells']} cells | "
        f"{met(v['monotone_cells'] >= R.TARGET_MONOTONE_CELLS) if v['ablation_cells'] else 'not run'} |"
    )
    co, alone = v["corun_exact_slack_over_fifo"], v.get("corun_exact_slack_over_alone")
    out.append(
        f"| co-running exact jobs: slack / FIFO p50 <= {R.TARGET_CORUN} | "
        f"{f(co, 2) if co is not None else 'not run'}"
        f"{f' (slack / exact jobs alone on slack: {f(alone, 2)})' if alone is not None else ''} | "
        f"{met(co <= R.TARGET_CORUN) if co is not None else '-'} |"
    )
    for s in sorted({s["scheme"] for s in skipped}):
        reason = next(x["reason"] for x in skipped if x["scheme"] == s)
        out.append(f"| {s} reported beside the default | not run: {reason} | - |")
    return out


def per_cell_table(v: dict) -> list[str]:
    out = [
        "| workload | pattern | switch | senders | host ratio | ATP Full p50 | p99 | paper p50 | ES p50 | ES p99 | "
        "SS p50 | ideal p50 | ready p50 | bg Mbit/s | ideal_bg p50 | Full/ES | Full/SS | Full/ideal | Full/ideal_bg | "
        "p99 Full/ES |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in v["per_cell"]:
        g = lambda k: ms(c[k]) if k in c else "not run"  # noqa: E731  (null = inf: half the jobs failed)
        out.append(
            f"| {c['workload']} | {c['pattern']} | {c['switch']} | {c['senders']} | {c['host_rate_ratio']:g} | "
            f"{g('atp_full_p50_ms')} | {g('atp_full_p99_ms')} | {g('atp_paper_p50_ms')} | "
            f"{g('tcp_es_p50_ms')} | {g('tcp_es_p99_ms')} | {g('tcp_ss_p50_ms')} | "
            f"{ms(c['ideal_p50_ms'])} | {f(c.get('target_ready_p50_ms'))} | {f(c.get('bg_mbps'))} | "
            f"{f(c.get('ideal_bg_p50_ms'))} | {f(c['p50_vs_es'], 2)} | {f(c['p50_vs_ss'], 2)} | "
            f"{f(c['p50_vs_ideal'], 2)} | {f(c.get('p50_vs_ideal_bg'), 2)} | {f(c['p99_vs_es'], 2)} |"
        )
    return out


def cells_table(cs: list[dict], scheme_cols: tuple[str, ...], key: str) -> list[str]:
    """One row per (workload, pattern, switch, senders, ratio, msr), one column per scheme (key: p50_ms...)."""
    groups: dict[tuple, dict] = {}
    for c in cs:
        groups.setdefault(
            (c["workload"], c["pattern"], c["switch"], c["senders"], c["host_rate_ratio"], c["msr"]), {}
        )[c["scheme"]] = c
    cols = [s for s in scheme_cols if any(s in g for g in groups.values())]
    out = [
        "| workload | pattern | switch | senders | host ratio | MSR | " + " | ".join(cols) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(cols),
    ]
    for k, g in sorted(groups.items(), key=lambda kv: R.order(kv[0])):
        vals = []
        for s in cols:
            c = g.get(s)
            vals.append("" if c is None else (ms(c[key]) if key.endswith("_ms") else f(c[key])))
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]:g} | {k[5]} | " + " | ".join(vals) + " |")
    return out


def control_table(rows: list[dict]) -> list[str]:
    """Per ATP scheme: control frames per job and start / end waits, when the agent reports them."""
    atp = [r for r in rows if schemes.is_atp(r["scheme"]) and r.get("announces_sent") is not None]
    if not atp:
        return [
            "The agent of this run does not report announces_sent / updates_sent / dones_sent / "
            "start_to_running_ns / last_data_to_done_ns (the engine's job report adds them)."
        ]
    out = [
        "| scheme | jobs | ANNOUNCEs/job (median, max) | UPDATEs/job (median) | DONEs/job (median, max) | "
        "start to running ms (median, max) | start wait RTTs (max) | last data to DONE ms (median, max) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in sorted({r["scheme"] for r in atp}):
        rs = [r for r in atp if r["scheme"] == s]

        def col(k, scale=1.0):
            xs = [r[k] / scale for r in rs if r.get(k) is not None]
            return (statistics.median(xs), max(xs)) if xs else (None, None)

        a, u, d = col("announces_sent"), col("updates_sent"), col("dones_sent")
        st, ld = col("start_to_running_ns", 1e6), col("last_data_to_done_ns", 1e6)
        wt = col("start_wait_rtts")
        out.append(
            f"| {s} | {len(rs)} | {f(a[0])}, {f(a[1])} | {f(u[0])} | {f(d[0])}, {f(d[1])} | "
            f"{f(st[0], 2)}, {f(st[1], 2)} | {f(wt[1])} | {f(ld[0], 2)}, {f(ld[1], 2)} |"
        )
    return out


def machine_load(path: str) -> list[str]:
    if not os.path.exists(path):
        return []
    ps = list(csv.DictReader(open(path)))
    if not ps:
        return []
    busy = [float(p["cpu_busy"]) for p in ps]
    load = [float(p["load1"]) for p in ps]
    return [
        f"{len(ps)} phases; CPU busy (whole machine, 2 cores) median {statistics.median(busy):.2f}, min "
        f"{min(busy):.2f}; 1-min load average median {statistics.median(load):.1f}, max {max(load):.1f}. "
        f"Phases with other CPU-heavy processes (not part of the lab): "
        f"{sum(1 for p in ps if p['other_cpu'])} of {len(ps)}."
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m netlab.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", help="results directory (default: benchmarks/results/netlab/latest's run)")
    a = ap.parse_args(argv)
    d = R.resolve(a.results)
    res = R.summarize(d)
    rows = R.load_rows(os.path.join(d, "jobs.csv"))
    run, v = res["run"], res["verdict"]
    p = print
    p(f"## Run {run['name']}\n")
    expected = run.get("expected_seconds")
    p(
        f"preset {run.get('preset', '-')}, {run.get('date', '-')}, {f((run.get('seconds') or 0) / 60)} min"
        f"{f' (expected ~{expected / 60:.0f})' if expected else ''}, commit {run.get('commit', '-')}; "
        f"{len(res['cells'])} cells, {len(rows)} job rows. Base RTTs (ms, idle lab): "
        f"{', '.join(sorted({f(x['base_rtt_ms'], 3) for x in run.get('labs', [])})) or '-'}."
    )
    for line in machine_load(os.path.join(d, "phases.csv")):
        p("\n" + line)
    p("\n### Verdict against issue 8's targets\n")
    p("\n".join(verdict_table(v, res["skipped"])))
    p("\n### ATP Full against the baselines and the ideal, MSR 0.75 (JCT ms; failed jobs count as inf)\n")
    p("\n".join(per_cell_table(v)))
    p("\n### p50 JCT per cell (ms; inf: at least half of the cell's jobs failed)\n")
    p("\n".join(cells_table(res["cells"], schemes.ALL, "p50_ms")))
    p("\n### p99 JCT per cell (ms)\n")
    p("\n".join(cells_table(res["cells"], schemes.ALL, "p99_ms")))
    p("\n### Failed jobs per cell\n")
    p("\n".join(cells_table(res["cells"], schemes.ALL, "failed")))
    p("\n### Jobs with measured loss above 1 - MSR per cell (UDP-blast has no guarantee)\n")
    p("\n".join(cells_table(res["cells"], schemes.ALL, "loss_above_allowance")))
    if v["ablation"]:
        p(
            f"\n### Ablation order (datacenter configuration): monotone in {v['monotone_cells']} of "
            f"{v['ablation_cells']} cells; no break beyond the cell's per-job noise in "
            f"{v.get('ablation_cells_no_real_break', '-')}\n"
        )
        p(
            "| workload | pattern | switch | senders | MSR | "
            + " | ".join(schemes.ABLATION_ORDER)
            + " | monotone | breaks beyond noise |"
        )
        p("|---|---|---|---|---|" + "---|" * (len(schemes.ABLATION_ORDER) + 2))
        for c in v["ablation"]:
            vals = " | ".join(ms(c["p50_ms"][s]) for s in schemes.ABLATION_ORDER)
            real = ", ".join(c.get("breaks_beyond_noise", [])) or "-"
            p(
                f"| {c['workload']} | {c['pattern']} | {c['switch']} | {c['senders']} | {c['msr']} | {vals} | "
                f"{'yes' if c['monotone'] else 'no'} | {real} |"
            )
    co = res["corun"]
    if co:
        p("\n### Co-running exact jobs (ATP MSR 1 next to ATP Full approximate jobs, FBHD-like, incast)\n")
        p("| jobs | one FIFO p50 (p99) | slack queues p50 (p99) |")
        p("|---|---|---|")
        for kind in ("exact", "approx", "exact_alone"):
            a_, b_ = co.get(f"{kind}_fifo"), co.get(f"{kind}_slack")
            if a_ and b_:
                p(
                    f"| {kind} ({a_['jobs']}, failed {a_['failed']} / {b_['failed']}) | {ms(a_['p50_ms'])} "
                    f"({ms(a_['p99_ms'])}) | {ms(b_['p50_ms'])} ({ms(b_['p99_ms'])}) |"
                )
        p(
            f"\nexact slack / FIFO (p50): **{f(co.get('exact_slack_over_fifo'), 2)}** (target <= {R.TARGET_CORUN}); "
            f"exact slack / exact alone on slack: {f(co.get('exact_slack_over_alone'), 2)}, FIFO / alone on FIFO: "
            f"{f(co.get('exact_fifo_over_alone'), 2)} (references: the exact jobs with no approximate traffic)"
        )
    p("\n### ATP control frames and waits (all ATP jobs of the schemes experiment)\n")
    p("\n".join(control_table(rows)))
    if res["skipped"]:
        p("\n### Skipped\n")
        for s in res["skipped"]:
            p(
                f"- {s['scheme']} in {s['workload']} {s['pattern']}/{s['switch']}/{s['senders']}/"
                f"{s['host_rate_ratio']:g}: {s['reason']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
