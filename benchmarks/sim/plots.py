"""PNG figures from a sim.py results directory (summary.json + run traces). matplotlib (pinned 3.9.2 by
scripts/setup.sh). One PNG per figure, named like the CSVs: fig5.png, fig6.png, ..."""

from __future__ import annotations

import csv
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {
    "fig5": "Fig. 5: JCT, FBKV-like, all-to-all",
    "fig6": "Fig. 6: JCT, FBHD-like, all-to-all",
    "fig9": "Fig. 9: JCT, incast (all-to-one)",
    "fig11": "Fig. 11: dynamic TLR / priority vs background",
    "fig12": "Fig. 12: ATP techniques (FBKV, all-to-all)",
    "fig13": "Fig. 13: exact jobs co-running with approximate FBKV",
    "fig14": "Fig. 14: FBKV job (MSR 0.875) vs two FBHD jobs",
}


def _bars(ax, cells, schemes, msrs, title):
    width = 0.8 / max(1, len(schemes))
    for i, s in enumerate(schemes):
        xs, p50, p99 = [], [], []
        for k, m in enumerate(msrs):
            c = next((c for c in cells if c["scheme"] == s and c["msr"] == m), None)
            if c and c["p50_ms"] is not None:
                xs.append(k + (i - (len(schemes) - 1) / 2) * width)
                p50.append(c["p50_ms"])
                p99.append(c["p99_ms"])
        ax.bar(xs, p50, width, label=s)
        ax.scatter(xs, p99, marker="_", color="black", s=60, zorder=3)
    ax.set_xticks(range(len(msrs)), [str(m) for m in msrs])
    ax.set_xlabel("MSR")
    ax.set_ylabel("JCT p50 (bar) / p99 (tick), ms")
    ax.set_title(title, fontsize=9)


def plot_all(results: str) -> list[str]:
    with open(os.path.join(results, "summary.json")) as f:
        summary = json.load(f)
    cells = summary["cells"]
    written = []
    note = (
        f"atp-sim, {summary['fabric']['hosts']} hosts, {summary['fabric']['rate_gbps']} Gbit/s, "
        f"preset {summary['preset']}, seed {summary['seed']}"
    )
    for fig in ("fig5", "fig6", "fig9", "fig11", "fig12"):
        fc = [c for c in cells if c["figure"] == fig and c["traffic"] == "approx"]
        if not fc:
            continue
        wls = sorted({c["workload"] for c in fc})
        fig_, axes = plt.subplots(1, len(wls), figsize=(6 * len(wls), 4), squeeze=False)
        for ax, wl in zip(axes[0], wls):
            wc = [c for c in fc if c["workload"] == wl]
            schemes = list(
                dict.fromkeys(c["scheme"] + ("" if c.get("switch", "slack") == "slack" else "") for c in wc)
            )
            _bars(ax, wc, schemes, sorted({c["msr"] for c in wc}), f"{wl}")
        axes[0][0].legend(fontsize=7)
        fig_.suptitle(TITLES[fig] + "\n" + note, fontsize=9)
        fig_.tight_layout()
        path = os.path.join(results, f"{fig}.png")
        fig_.savefig(path, dpi=110)
        plt.close(fig_)
        written.append(path)

    fc = [c for c in cells if c["figure"] == "fig13" and c["traffic"] == "exact"]
    if fc:
        groups = sorted({(c["exact_ratio"], c["msr"]) for c in fc})
        confs = sorted({(c["scheme"], c["switch"]) for c in fc})
        fig_, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(confs)
        for i, (s, sw) in enumerate(confs):
            xs, ys, p99 = [], [], []
            for k, g in enumerate(groups):
                c = next(
                    (
                        c
                        for c in fc
                        if (c["exact_ratio"], c["msr"]) == g and (c["scheme"], c["switch"]) == (s, sw)
                    ),
                    None,
                )
                if c and c["p50_ms"] is not None:
                    xs.append(k + (i - (len(confs) - 1) / 2) * width)
                    ys.append(c["p50_ms"])
                    p99.append(c["p99_ms"])
            ax.bar(xs, ys, width, label=f"approx via {s}, {sw} switch")
            ax.scatter(xs, p99, marker="_", color="black", s=60, zorder=3)
        ax.set_xticks(range(len(groups)), [f"exact {r:.0%}\nMSR {m}" for r, m in groups])
        ax.set_ylabel("exact jobs' JCT p50 (bar) / p99 (tick), ms")
        ax.legend(fontsize=7)
        fig_.suptitle(TITLES["fig13"] + "\n" + note, fontsize=9)
        fig_.tight_layout()
        path = os.path.join(results, "fig13.png")
        fig_.savefig(path, dpi=110)
        plt.close(fig_)
        written.append(path)

    fc = [c for c in cells if c["figure"] == "fig14"]
    if fc:
        schemes = list(dict.fromkeys(c["scheme"] for c in fc))
        fig_, ax = plt.subplots(figsize=(7, 4))
        for i, wl in enumerate(("fbkv-alone", "fbkv+2fbhd")):
            xs, ys, p99 = [], [], []
            for k, s in enumerate(schemes):
                c = next((c for c in fc if c["scheme"] == s and c["workload"] == wl), None)
                if c and c["p50_ms"] is not None:
                    xs.append(k + (i - 0.5) * 0.4)
                    ys.append(c["p50_ms"])
                    p99.append(c["p99_ms"])
            ax.bar(xs, ys, 0.4, label=wl)
            ax.scatter(xs, p99, marker="_", color="black", s=60, zorder=3)
        ax.set_xticks(range(len(schemes)), schemes)
        ax.set_ylabel("FBKV JCT p50 (bar) / p99 (tick), ms")
        ax.legend(fontsize=7)
        fig_.suptitle(TITLES["fig14"] + "\n" + note, fontsize=9)
        fig_.tight_layout()
        path = os.path.join(results, "fig14.png")
        fig_.savefig(path, dpi=110)
        plt.close(fig_)
        written.append(path)

    traces = [r for r in summary["runs"] if r["figure"] == "fig10" and r.get("trace")]
    if traces:
        fig_, axes = plt.subplots(4, len(traces), figsize=(6 * len(traces), 8), squeeze=False, sharex="col")
        for col, r in enumerate(traces):
            with open(os.path.join(results, r["trace"])) as f:
                rows = list(csv.DictReader(f))
            t0 = 2.0  # ms: sim.py's warm-up before the first job
            t = [int(x["at_ns"]) / 1e6 - t0 for x in rows]
            for row, (key, label) in enumerate(
                (
                    ("loss", "measured loss"),
                    ("tlr", "TLR"),
                    ("rate_bps", "rate, Gbit/s"),
                    ("class", "priority class"),
                )
            ):
                ys = [float(x[key]) / (1e9 if key == "rate_bps" else 1) for x in rows]
                axes[row][col].step(t, ys, where="post")
                axes[row][col].set_ylabel(label, fontsize=8)
            bt, bc = [0.0], [r.get("bg_class")]
            for at, c in r.get("bg_moves", []):
                bt.append(at)
                bc.append(c)
            bt.append(t[-1] if t else 1)
            bc.append(bc[-1])
            axes[3][col].step(bt, bc, where="post", linestyle="--", color="red", label="background")
            axes[3][col].legend(fontsize=7)
            axes[3][col].yaxis.get_major_locator().set_params(integer=True)
            axes[0][col].set_title(
                f"{r['scheme']}: background (0.6 x line rate) in class {r.get('bg_class')}, "
                f"then one class up twice",
                fontsize=8,
            )
            axes[3][col].set_xlabel("time since the job started, ms")
            axes[3][col].invert_yaxis()
        fig_.suptitle("Fig. 10: timeline of one FBKV job (MSR 0.5)\n" + note, fontsize=9)
        fig_.tight_layout()
        path = os.path.join(results, "fig10.png")
        fig_.savefig(path, dpi=110)
        plt.close(fig_)
        written.append(path)
    for p in written:
        print(f"[sim] wrote {p}")
    return written
