"""Plots of a netlab benchmark run (matplotlib; scripts/setup.sh or `pip install matplotlib==3.9.2`).

  python3 -m netlab.plots [--results DIR] --out IMGDIR     # default DIR: benchmarks/results/netlab/latest's run

Reads DIR/jobs.csv, DIR/trace.csv, DIR/trace_bg.json and writes (CONF = <workload>_<pattern>_<switch>_
<senders>s_x<host_rate_ratio>):
  jct_vs_msr_CONF.png         median JCT vs MSR per scheme (error bars: 25th-75th percentile)
  ablation_CONF.png           median JCT per ATP variant at each MSR
  incast_sweep_<workload>_<switch>.png   p50 and p99 JCT vs incast degree at MSR 0.75 (datacenter configuration)
  loss_vs_msr.png             measured message loss of every ATP job vs its allowance 1 - MSR
  fig10_trace.png             TLR, measured loss, rate and priority class over time for one job
  corun_exact_jct.png         JCT of exact jobs next to approximate ones: FIFO vs slack queues
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys

import matplotlib

from netlab import results, schemes
from netlab.results import load_rows

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

_LOOK = {
    "tcp_exact": ("#7f7f7f", "s"),
    "tcp_ss": ("#1f77b4", "v"),
    "tcp_es": ("#ff7f0e", "^"),
    "udp_blast": ("#bcbd22", "x"),
    "atp_base": ("#c5b0d5", "o"),
    "atp_rc": ("#9467bd", "o"),
    "atp_rc_mrdf": ("#8c564b", "o"),
    "atp_fixtlr": ("#e377c2", "D"),
    "atp_fixprio": ("#17becf", "D"),
    "atp_paper": ("#2ca02c", "P"),
    "atp_full": ("#d62728", "*"),
}
STYLE = {s: (schemes.LABELS[s], *_LOOK[s]) for s in schemes.ALL}


def configs(rows):
    return sorted(
        {
            (r["workload"], r["pattern"], r["switch"], r["senders"], r["host_rate_ratio"])
            for r in rows
            if r["experiment"] == "schemes"
        },
        key=results.order,
    )


def conf_rows(rows, conf):
    return [
        r
        for r in rows
        if r["experiment"] == "schemes"
        and (r["workload"], r["pattern"], r["switch"], r["senders"], r["host_rate_ratio"]) == conf
    ]


def conf_name(conf):
    w, p, sw, n, ratio = conf
    return f"{w}_{p}_{sw}_{n}s_x{ratio:g}"


def conf_title(conf):
    w, p, sw, n, ratio = conf
    swname = "slack-based switch" if sw == "slack" else "one FIFO"
    return f"{w.upper()}-like, {p} ({n} senders), {swname}, hosts at {ratio:g}x the port"


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))]


def jct_vs_msr(rows, out):
    for conf in configs(rows):
        rs = conf_rows(rows, conf)
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        for s, (label, color, marker) in STYLE.items():
            xs, ys, lo, hi = [], [], [], []
            for msr in sorted({r["msr"] for r in rs}):
                j = [r["jct_ms"] for r in rs if r["scheme"] == s and r["msr"] == msr and r["status"] == "ok"]
                if not j:
                    continue
                m = statistics.median(j)
                xs.append(msr)
                ys.append(m)
                lo.append(m - pct(j, 0.25))
                hi.append(pct(j, 0.75) - m)
            if xs:
                ax.errorbar(
                    xs,
                    ys,
                    yerr=[lo, hi],
                    label=label,
                    color=color,
                    marker=marker,
                    capsize=3,
                    lw=2.2 if s == "atp_full" else 1.2,
                    ms=9 if s == "atp_full" else 5,
                )
        ax.set_xlabel("MSR (minimal sampling rate)")
        ax.set_ylabel("job completion time (ms), median, IQR bars")
        ax.set_yscale("log")
        ax.set_title(f"JCT vs MSR - {conf_title(conf)}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"jct_vs_msr_{conf_name(conf)}.png"), dpi=110)
        plt.close(fig)


def ablation(rows, out):
    for conf in configs(rows):
        rs = conf_rows(rows, conf)
        variants = [
            v
            for v in (
                "atp_base",
                "atp_rc",
                "atp_rc_mrdf",
                "atp_fixtlr",
                "atp_fixprio",
                "atp_paper",
                "atp_full",
            )
            if any(r["scheme"] == v for r in rs)
        ]
        if len(variants) < 3:
            continue
        msrs = sorted({r["msr"] for r in rs})
        fig, ax = plt.subplots(figsize=(7.5, 4))
        width = 0.8 / len(variants)
        for i, v in enumerate(variants):
            ys = []
            for msr in msrs:
                j = [r["jct_ms"] for r in rs if r["scheme"] == v and r["msr"] == msr and r["status"] == "ok"]
                ys.append(statistics.median(j) if j else 0)
            ax.bar([k + i * width for k in range(len(msrs))], ys, width, label=STYLE[v][0], color=STYLE[v][1])
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(msrs))], [f"MSR {m}" for m in msrs])
        ax.set_ylabel("median JCT (ms)")
        ax.set_title(f"ATP ablations - {conf_title(conf)}", fontsize=9)
        ax.legend(fontsize=7, ncol=3)
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"ablation_{conf_name(conf)}.png"), dpi=110)
        plt.close(fig)


def incast_sweep(rows, out):
    """p50 (solid) and p99 (dashed) JCT vs the number of senders, MSR 0.75, datacenter configuration; failed
    jobs count as infinitely slow, so a missing point means at least half (p50) / 1 % (p99) failed."""
    rs = [
        r
        for r in rows
        if r["experiment"] == "schemes"
        and r["pattern"] == "incast"
        and r["host_rate_ratio"] == results.DATACENTER
        and r["msr"] == results.TARGET_MSR
    ]
    for wname, sw in sorted({(r["workload"], r["switch"]) for r in rs}):
        sub = [r for r in rs if r["workload"] == wname and r["switch"] == sw]
        degrees = sorted({r["senders"] for r in sub})
        if len(degrees) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        for s, (label, color, marker) in STYLE.items():
            pts = {
                n: [results.jct_or_inf(r) for r in sub if r["scheme"] == s and r["senders"] == n]
                for n in degrees
            }
            pts = {n: v for n, v in pts.items() if v}
            if not pts:
                continue
            xs = sorted(pts)
            for q, ls in ((0.5, "-"), (0.99, "--")):
                ys = [results.percentile(pts[n], q) for n in xs]
                keep = [(x, y) for x, y in zip(xs, ys) if y != float("inf")]
                if keep:
                    ax.plot(
                        [x for x, _ in keep],
                        [y for _, y in keep],
                        ls=ls,
                        color=color,
                        marker=marker,
                        label=label if q == 0.5 else None,
                        lw=2 if s == "atp_full" else 1,
                    )
        ax.set_xscale("log", base=2)
        ax.set_xticks(degrees, [str(d) for d in degrees])
        ax.set_yscale("log")
        ax.set_xlabel("incast degree (sending hosts)")
        ax.set_ylabel("JCT (ms): p50 solid, p99 dashed")
        ax.set_title(
            f"Incast sweep - {wname.upper()}-like, {sw} switch, MSR 0.75, host rate = port rate", fontsize=9
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"incast_sweep_{wname}_{sw}.png"), dpi=110)
        plt.close(fig)


def loss_vs_msr(rows, out):
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    atp = [r for r in rows if schemes.is_atp(r["scheme"]) and r["msr"] < 1 and r["measured_loss"] is not None]
    udp = [r for r in rows if r["scheme"] == "udp_blast" and r["measured_loss"] is not None]
    ax.scatter(
        [r["msr"] - 0.01 for r in udp],
        [r["measured_loss"] for r in udp],
        s=10,
        color=STYLE["udp_blast"][1],
        label="UDP-blast jobs (no guarantee)",
        alpha=0.6,
    )
    ax.scatter(
        [r["msr"] + 0.01 for r in atp],
        [r["measured_loss"] for r in atp],
        s=10,
        color="#d62728",
        label="ATP jobs (all variants)",
        alpha=0.6,
    )
    xs = [0.4, 1.0]
    ax.plot(xs, [1 - x for x in xs], "k--", label="allowance 1 - MSR")
    ax.set_xlabel("MSR")
    ax.set_ylabel("measured message loss (receiver)")
    ax.set_title("Measured loss vs 1 - MSR (every job of the run)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "loss_vs_msr.png"), dpi=110)
    plt.close(fig)


def fig10(results, out):
    path = os.path.join(results, "trace.csv")
    if not os.path.exists(path):
        return
    with open(path) as f:
        tr = [
            dict(
                t=float(r["t_s"]),
                tlr=float(r["tlr"]),
                loss=float(r["loss"]),
                rate=float(r["rate_bps"]),
                cls=int(r["priority_class"]),
            )
            for r in csv.DictReader(f)
        ]
    if not tr:
        return
    bg = {}
    if os.path.exists(os.path.join(results, "trace_bg.json")):
        bg = json.load(open(os.path.join(results, "trace_bg.json")))
    # smooth the per-epoch loss over a few epochs for readability (raw values are in trace.csv)
    k = 8
    sm = [
        sum(x["loss"] for x in tr[max(0, i - k + 1) : i + 1]) / len(tr[max(0, i - k + 1) : i + 1])
        for i in range(len(tr))
    ]
    t = [x["t"] for x in tr]
    fig, axs = plt.subplots(3, 1, figsize=(7.5, 7), sharex=True)
    axs[0].plot(t, sm, color="#ff7f0e", lw=1, label=f"measured loss rho_i (mean of {k} epochs)")
    axs[0].plot(t, [x["tlr"] for x in tr], color="#1f77b4", lw=2, label="TLR_i")
    axs[0].set_ylabel("rate")
    axs[0].set_ylim(0, 1)
    axs[0].legend(fontsize=8)
    axs[1].plot(t, [x["rate"] / 1e6 for x in tr], color="#2ca02c", lw=1)
    axs[1].set_ylabel("sending rate (Mbit/s)")
    axs[1].set_yscale("log")
    axs[2].step(t, [x["cls"] for x in tr], where="post", color="#d62728", lw=2, label="job's priority class")
    if bg:
        pts = [(0.0, bg.get("bg_start_class", 4))] + [(float(a), int(c)) for a, c in bg["bg_class_changes_s"]]
        bx = [p[0] for p in pts] + [t[-1]]
        by = [p[1] for p in pts] + [pts[-1][1]]
        axs[2].step(bx, by, where="post", color="#7f7f7f", ls="--", label="background UDP's class")
    axs[2].set_ylabel("class (0 = exact, 7 = lowest)")
    axs[2].invert_yaxis()
    axs[2].set_xlabel("time since job start (s)")
    axs[2].legend(fontsize=8)
    for a in axs:
        a.grid(True, alpha=0.3)
    fig.suptitle(
        "One ATP Full job (MSR 0.5) vs background UDP moving to higher classes (cf. paper Fig. 10)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig10_trace.png"), dpi=110)
    plt.close(fig)


def corun(rows, out):
    rs = [r for r in rows if r["experiment"] == "corun" and r["status"] == "ok"]
    if not rs:
        return
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    data, labels = [], []
    for kind in ("exact", "approx"):
        for sw in ("fifo", "slack"):
            data.append([r["jct_ms"] for r in rs if r["kind"] == kind and r["switch"] == sw])
            labels.append(f"{kind}\n{'one FIFO' if sw == 'fifo' else 'slack queues'}")
    ax.boxplot(data, tick_labels=labels, showfliers=True)
    for i, d in enumerate(data, start=1):
        if d:
            ax.annotate(
                f"median {statistics.median(d):.0f} ms",
                (i, statistics.median(d)),
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=7,
            )
    ax.set_yscale("log")
    ax.set_ylabel("JCT (ms)")
    ax.set_title("Exact (MSR 1) jobs co-running with approximate ATP jobs")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "corun_exact_jct.png"), dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m netlab.plots", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", help="results directory (default: benchmarks/results/netlab/latest's run)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    d = results.resolve(a.results)
    os.makedirs(a.out, exist_ok=True)
    rows = load_rows(os.path.join(d, "jobs.csv"))
    jct_vs_msr(rows, a.out)
    ablation(rows, a.out)
    incast_sweep(rows, a.out)
    loss_vs_msr(rows, a.out)
    fig10(d, a.out)
    corun(rows, a.out)
    print(f"plots written to {a.out}: {' '.join(sorted(os.listdir(a.out)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
