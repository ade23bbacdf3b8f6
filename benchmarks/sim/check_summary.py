#!/usr/bin/env python3
"""Checks a smoke summary.json (benchmarks/sim/run.sh ci): every scheme has cells, every job finished, ATP and
DCTCP jobs all met their targets, no ATP job lost more than its allowance. Exits 1 naming what is wrong."""

import json
import sys

from sim import SCHEMES

REQUIRED = (
    "figure",
    "workload",
    "pattern",
    "msr",
    "scheme",
    "jobs",
    "failed",
    "p50_ms",
    "p99_ms",
    "loss_above_allowance",
)


def check(path: str) -> list[str]:
    s = json.load(open(path))
    errors = []
    cells = s.get("cells", [])
    for c in cells:
        missing = [k for k in REQUIRED if k not in c]
        if missing:
            errors.append(f"cell {c} lacks {missing}")
    seen = {c["scheme"] for c in cells}
    for sch in SCHEMES:
        if sch not in seen:
            errors.append(f"no cell for scheme {sch}")
    for r in s.get("runs", []):
        if r["unfinished"]:
            errors.append(f"{r['figure']} {r['scheme']}: {r['unfinished']} jobs unfinished")
    for c in cells:
        tag = f"{c['figure']} {c['workload']} {c['pattern']} msr={c['msr']} {c['scheme']}"
        if c["jobs"] <= 0:
            errors.append(f"{tag}: no jobs")
        if c["scheme"] != "udp" and c["failed"]:
            errors.append(f"{tag}: {c['failed']} jobs failed")
        if c["scheme"].startswith("atp_") and c["loss_above_allowance"]:
            errors.append(f"{tag}: {c['loss_above_allowance']} jobs lost more than 1 - MSR")
    return errors


if __name__ == "__main__":
    errs = check(sys.argv[1])
    for e in errs:
        print(f"[sim] check: {e}", file=sys.stderr)
    n = len(json.load(open(sys.argv[1]))["cells"])
    print(f"[sim] check {sys.argv[1]}: {n} cells, {'FAILED' if errs else 'ok'}")
    sys.exit(1 if errs else 0)
