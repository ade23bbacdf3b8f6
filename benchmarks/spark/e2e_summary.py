#!/usr/bin/env python3
"""Issue 31's end-to-end summary: SparkScaleBench RESULT lines (benchmarks/spark/scale.sh --config, or the network
lab's scale runs) -> benchmarks/results/spark/e2e/summary.json:

  python3 benchmarks/spark/e2e_summary.py RAW.txt [RAW2.txt ...] --out summary.json --command CMD --commit ID
          [--load-start "a b c"] [--load-end "a b c"] [--note TEXT] [--merge]

One cell per (config, switch, mode), pooled over every line (round, size) of it:
  config          network-bound | cpu-bound (the line's config=, else from query=: wide | sampled)
  switch          the lab's switch= (slack, fifo), "local" for a local-cluster run
  mode            exact, atp, tcp_ss, tcp_es, spark_sampleby, spark_sample (old names: approx -> atp,
                  samplesend -> spark_sample)
  runs            timed queries pooled (every all_s entry)
  p50_s, p90_s    JCT percentiles over them (nearest rank)
  groups_outside  groups with an aggregate outside e_max, the worst line (0 for exact)
  groups          groups checked
  bottleneck_mb   MB per query over the bottleneck: the lab's (exec_rx_mb - bg_tx_mb)/runs when present (the
                  executors' downlinks less the background's bytes; exec_rx_mb alone from older lines), else the shuffle bytes the executors fetched from each other
                  (remote_read_mb for sort shuffle, approx_read_mb = what the reducers read, local disk included,
                  for the approximate modes); the source is in bottleneck_source
  executor_cpu_s  the executors' process CPU seconds per query (median over lines of their per-query medians)
With --merge the cells of an existing --out are kept unless the new lines replace their (config, switch, mode); the
header is this run's, with the headers of the runs whose cells were kept in header.earlier.
Rows with different sizes (rows=) in one cell are reported in rows (a list): compare cells of one size.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys

MODES = ("exact", "atp", "tcp_ss", "tcp_es", "spark_sampleby", "spark_sample")
ALIASES = {"approx": "atp", "samplesend": "spark_sample"}
CONFIGS = {"wide": "network-bound", "sampled": "cpu-bound"}


def parse(line: str) -> dict[str, str]:
    """key=value fields of a RESULT line (values may be [a,b] lists)."""
    return dict(re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", line))


def nums(v: str) -> list[float]:
    """[a,b] -> [a, b]; a plain number -> [x]; '' or [] -> []."""
    return [float(x) for x in v.strip("[]").split(",") if x.strip() and x.strip() != "?"]


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile (q in (0, 1]) of a non-empty list."""
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def config_of(r: dict[str, str]) -> str:
    c = r.get("config", "-")
    if c in ("network-bound", "cpu-bound"):
        return c
    q = r.get("query", "")
    if q in CONFIGS:
        return CONFIGS[q]
    raise ValueError(f"RESULT line of query={q!r} belongs to neither configuration (wide, sampled)")


def mode_of(r: dict[str, str]) -> str:
    m = ALIASES.get(r["mode"], r["mode"])
    if m not in MODES:
        raise ValueError(f"unknown mode {r['mode']!r}")
    return m


def bottleneck(r: dict[str, str]) -> tuple[float, str]:
    runs = max(1, int(r.get("runs", "1")))
    if "exec_rx_mb" in r and "bg_tx_mb" in r:
        # the lab's executor downlinks less what the background sent them: the shuffle's bytes on the bottleneck
        return (float(r["exec_rx_mb"]) - float(r["bg_tx_mb"])) / runs, "exec_rx_mb-bg_tx_mb"
    if "exec_rx_mb" in r:
        return float(r["exec_rx_mb"]) / runs, "exec_rx_mb"
    if "approx_read_mb" in r:
        return float(r["approx_read_mb"]), "approx_read_mb"
    if "remote_read_mb" in r:
        return float(r["remote_read_mb"]), "remote_read_mb"
    return float("nan"), "none"


def cells(rows: list[dict[str, str]]) -> list[dict]:
    by: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in rows:
        by.setdefault((config_of(r), r.get("switch", "local"), mode_of(r)), []).append(r)
    out = []
    for (config, switch, mode), rs in sorted(
        by.items(), key=lambda kv: (kv[0][0], kv[0][1], MODES.index(kv[0][2]))
    ):
        times = [t for r in rs for t in (nums(r.get("all_s", "")) or nums(r["median_s"]))]
        mb = [bottleneck(r) for r in rs]
        outside = [int(r["groups_outside"]) for r in rs if "groups_outside" in r]
        groups = [int(r["groups"]) for r in rs if "groups" in r]
        cpu = [float(r["executor_cpu_s"]) for r in rs if "executor_cpu_s" in r]
        if not groups and mode == "exact":
            # the exact mode writes the truth, it is not checked: its groups are those the others checked
            groups = [int(x["groups"]) for x in rows if "groups" in x and config_of(x) == config]
        out.append(
            dict(
                config=config,
                switch=switch,
                mode=mode,
                runs=len(times),
                p50_s=round(statistics.median(times), 3),
                p90_s=round(percentile(times, 0.9), 3),
                groups_outside=max(outside) if outside else (0 if mode == "exact" else None),
                groups=max(groups) if groups else None,
                bottleneck_mb=round(statistics.median(m for m, _ in mb), 2),
                bottleneck_source=sorted({s for _, s in mb}),
                executor_cpu_s=round(statistics.median(cpu), 2) if cpu else None,
                rows=sorted({int(r["rows"]) for r in rs if "rows" in r}),
                sample_fraction=max(
                    (float(r["sample_fraction"]) for r in rs if "sample_fraction" in r), default=None
                ),
            )
        )
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--load-start", default="")
    ap.add_argument("--load-end", default="")
    ap.add_argument("--note", default="")
    ap.add_argument("--merge", action="store_true")
    a = ap.parse_args(argv)
    rows = []
    for p in a.raw:
        with open(p) as f:
            rows += [parse(l) for l in f if l.startswith("RESULT")]
    if not rows:
        print(f"no RESULT lines in {a.raw}", file=sys.stderr)
        return 1
    new = cells(rows)
    earlier = []
    if a.merge and os.path.exists(a.out):
        with open(a.out) as f:
            old = json.load(f)
        keys = {(c["config"], c["switch"], c["mode"]) for c in new}
        kept = [c for c in old.get("cells", []) if (c["config"], c["switch"], c["mode"]) not in keys]
        if kept:
            # the runs whose cells stay (their own header, without their own earlier list)
            h = {k: v for k, v in old.get("header", {}).items() if k != "earlier"}
            earlier = old.get("header", {}).get("earlier", []) + [h]
        new = kept + new
    header = dict(
        command=a.command,
        commit=a.commit,
        load=dict(start=a.load_start, end=a.load_end),
        note=a.note,
        raw=[os.path.basename(p) for p in a.raw],
    )
    if earlier:
        header["earlier"] = earlier
    doc = dict(header=header, cells=new)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)
    for c in new:
        print(
            f"[{c['config']} {c['switch']}] {c['mode']:14s} runs {c['runs']} p50 {c['p50_s']:.2f} s p90 "
            f"{c['p90_s']:.2f} s outside {c['groups_outside']}/{c['groups']} bottleneck {c['bottleneck_mb']:.1f} MB "
            f"executor CPU {c['executor_cpu_s']} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
