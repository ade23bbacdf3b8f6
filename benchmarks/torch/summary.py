"""The PyTorch lab benchmark's summary (benchmarks/torch/run.py; tested by test_summary.py without a lab).

A run is one training of the W ranks in one (switch, mode): every rank's RESULT (train.py). Its step time is,
per step, the slowest rank's wall time (DDP steps are synchronous: the slowest rank is the step), over the
steps after the warm-up; its accuracy is rank 0's (every replica holds the same model); its segments per group
are summed over the ranks (reduce-scatter segments received: [delivered, sent]).
"""

from __future__ import annotations

import json
import os
import statistics

# issue 37's target: approximate step time at most this x gloo's, at most this many points of accuracy lost
TARGET_RATIO, TARGET_POINTS = 0.7, 1.0


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank below) of values, NaN if empty."""
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def run_cell(switch: str, mode: str, run: int, ranks: list[dict], warmup: int) -> dict:
    """One (switch, mode, run) from its ranks' RESULT dicts."""
    if not ranks:
        raise ValueError(f"{switch}/{mode} run {run}: no rank results")
    steps = {len(r["step_s"]) for r in ranks}
    if len(steps) != 1:
        raise ValueError(f"{switch}/{mode} run {run}: ranks ran different step counts {sorted(steps)}")
    n = steps.pop()
    if n <= warmup:
        raise ValueError(f"{switch}/{mode} run {run}: {n} steps, none after the {warmup} warm-up steps")
    per_step = [max(r["step_s"][i] for r in ranks) for i in range(warmup, n)]
    by_group: dict[str, list[int]] = {}
    for r in ranks:
        for g, (d, s) in r.get("by_group", {}).items():
            acc = by_group.setdefault(g, [0, 0])
            acc[0] += d
            acc[1] += s
    rank0 = min(ranks, key=lambda r: r["rank"])
    return dict(
        switch=switch,
        mode=mode,
        run=run,
        steps=len(per_step),
        step_p50_s=round(pct(per_step, 0.5), 4),
        step_p90_s=round(pct(per_step, 0.9), 4),
        step_mean_s=round(statistics.mean(per_step), 4),
        accuracy=round(rank0["accuracy"], 4),
        params=rank0.get("params"),
        by_group=dict(sorted(by_group.items())),
    )


def checks(cells: list[dict]) -> list[dict]:
    """Per switch: each ATP mode's step time p50 over gloo's (medians over runs) and its accuracy minus gloo's (in
    points, mean over runs), and whether approximate atp meets the issue's target."""
    out = []
    for sw in dict.fromkeys(c["switch"] for c in cells):
        by: dict[str, list[dict]] = {}
        for c in cells:
            if c["switch"] == sw:
                by.setdefault(c["mode"], []).append(c)
        chk: dict = dict(switch=sw)
        if "gloo" in by:
            g50 = statistics.median(c["step_p50_s"] for c in by["gloo"])
            gacc = statistics.mean(c["accuracy"] for c in by["gloo"])
            chk["gloo_step_p50_s"] = g50
            chk["gloo_accuracy"] = round(gacc, 4)
            for m in ("atp_exact", "atp"):
                if m in by:
                    chk[f"{m}_over_gloo"] = round(statistics.median(c["step_p50_s"] for c in by[m]) / g50, 3)
                    chk[f"{m}_accuracy_delta_points"] = round(
                        100 * (statistics.mean(c["accuracy"] for c in by[m]) - gacc), 2
                    )
            if "atp" in by:
                chk["target_met"] = (
                    chk["atp_over_gloo"] <= TARGET_RATIO
                    and chk["atp_accuracy_delta_points"] >= -TARGET_POINTS
                )
        out.append(chk)
    return out


def cell_line(c: dict) -> str:
    groups = " ".join(f"g{g}={d}/{s}" for g, (d, s) in c["by_group"].items())
    return (
        f"[{c['switch']}] {c['mode']} run {c['run']}: step p50 {c['step_p50_s'] * 1000:.0f} ms "
        f"(p90 {c['step_p90_s'] * 1000:.0f}, {c['steps']} steps) accuracy {c['accuracy']:.4f}"
        + (f" segments delivered/sent {groups}" if groups else "")
    )


def markdown(doc: dict) -> str:
    h = doc["header"]
    lines = ["# PyTorch lab benchmark (issue 37)", ""]
    lines += [f"- {k}: {v}" for k, v in h.items()]
    lines += [
        "",
        "| switch | mode | run | step p50 ms | p90 ms | accuracy | segments delivered/sent per group |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in doc["cells"]:
        groups = ", ".join(f"g{g} {d}/{s}" for g, (d, s) in c["by_group"].items()) or "-"
        lines.append(
            f"| {c['switch']} | {c['mode']} | {c['run']} | {c['step_p50_s'] * 1000:.0f} | "
            f"{c['step_p90_s'] * 1000:.0f} | {c['accuracy']:.4f} | {groups} |"
        )
    lines += [
        "",
        f"| switch | atp / gloo step p50 | accuracy delta (points) | atp_exact / gloo | target (<= {TARGET_RATIO}x, "
        f">= -{TARGET_POINTS} point) |",
        "|---|---|---|---|---|",
    ]
    for k in doc["checks"]:
        lines.append(
            f"| {k['switch']} | {k.get('atp_over_gloo', '-')} | {k.get('atp_accuracy_delta_points', '-')} | "
            f"{k.get('atp_exact_over_gloo', '-')} | "
            f"{'met' if k.get('target_met') else 'missed' if 'target_met' in k else '-'} |"
        )
    return "\n".join(lines) + "\n"


def summarize(cells: list[dict], header: dict) -> dict:
    return {"header": header, "cells": cells, "checks": checks(cells)}


def write(out_dir: str, doc: dict) -> None:
    """summary.json and summary.md in out_dir (each written whole, then renamed)."""
    os.makedirs(out_dir, exist_ok=True)
    for name, text in (("summary.json", json.dumps(doc, indent=2) + "\n"), ("summary.md", markdown(doc))):
        path = os.path.join(out_dir, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
