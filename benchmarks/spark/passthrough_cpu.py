#!/usr/bin/env python3
"""Pass-through cost of ApproxShuffleManager from SparkBench's `passthrough` RESULT lines, on CPU time and
on allocated bytes (docs/spark.md, "Pass-through"):

  python3 benchmarks/spark/passthrough_cpu.py RESULTS.txt [--tolerance 0.02] [--boot 10000] [--seed 1]

Each RESULT line is one application (one manager, `runs` timed runs after a warm-up). Applications are paired by
their `round=` field (benchmarks/spark/run.sh: one sort and one approx application per round, the order
alternating), else two consecutive lines (per `switch=`) are a pair. Per pair the ratio approx/sort of

  task_cpu_ms      the executors' summed task CPU (executor CPU + deserialize CPU of every task of the timed runs;
                   what Spark's event log has as Executor CPU Time + Executor Deserialize CPU Time) - the CPU criterion
                   (an idle machine only: its own A/A under load was 1.17, docs/spark.md)
  +driver          task_cpu_ms + driver_cpu_ms (the driver JVM's CPU over the same runs)
  run_median       the median over r of approx run r / sort run r (task_cpu_runs; adjacent in time in lock step)
  min_run          the task CPU of the application's cheapest timed run (task_cpu_runs; the least disturbed one)
  driver_cpu_ms, exec_proc_cpu_ms (the executor processes' whole CPU: + JIT, GC, heartbeats), median_s (wall)

and the allocation criterion (SparkBench's AllocPlugin; bytes do not depend on the CPU's speed):

  alloc            task_alloc_bytes + driver_alloc_bytes: what the task threads allocated (onTaskStart to
                   onTaskSucceeded, summed over the timed runs' tasks) plus the driver JVM's threads during the runs
  task_alloc_bytes, driver_alloc_bytes, alloc_run_median (median over r of the per-run task + driver ratio)

with the geometric mean of the pairs and a percentile bootstrap 95 % interval (pairs resampled, seeded). Verdict:
"within 2 %" when the interval lies inside [1 - tol, 1 + tol], "above 2 %" / "below -2 %" when it lies wholly
beyond, else "not resolved"; beside it the one-sided verdict that answers the issue's aim (noninferiority():
"overhead <= 2 %" when the interval's upper bound is <= 1 + tol); no verdict with fewer than 5 pairs. Pairs are
matched by `slot=` (else `manager=`): an A/A run (run.sh PASSTHROUGH_AA=sort: the same manager in both slots) prints
the same lines as a null comparison, whose interval must lie inside [1 - tol, 1 + tol] for the measure to be able to
decide tol at all; the allocated bytes' spread between the timed runs of one application is printed too. In lock step (run.sh's default, sync=lockstep) the
two applications of a pair ran at the same time, taking turns run by run, so both saw the same load. The work itself (tasks, stages, jobs, failed tasks, shuffle records and bytes) must be
identical within each pair, else the ratio compares different work and the line says MISMATCH.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys

WORK = (
    "tasks",
    "stages",
    "jobs",
    "failed_tasks",
    "shuffle_write_records",
    "shuffle_read_records",
    "shuffle_write_bytes",
    "shuffle_read_bytes",
)


def parse(lines) -> list[dict]:
    """The passthrough RESULT lines as dicts of strings (bracketed lists kept whole)."""
    rows = []
    for l in lines:
        if l.startswith("RESULT"):
            r = dict(re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", l))
            if r.get("mode") == "passthrough":
                rows.append(r)
    return rows


def slot(r: dict) -> str:
    """The application's side of the pairing: `slot=` (an A/A run has the same manager in both), else its manager."""
    return r.get("slot", r["manager"])


def pairs(rows: list[dict]) -> list[tuple[dict, dict]]:
    """(sort, approx) per round; rounds without both managers are dropped."""
    out = []
    if rows and all("round" in r for r in rows):
        by: dict[tuple, dict] = {}
        order = []
        for r in rows:
            k = (r.get("switch"), r["round"])
            if k not in by:
                by[k] = {}
                order.append(k)
            by[k][slot(r)] = r
        for k in order:
            if {"sort", "approx"} <= set(by[k]):
                out.append((by[k]["sort"], by[k]["approx"]))
        return out
    by_switch: dict = {}
    for r in rows:
        by_switch.setdefault(r.get("switch"), []).append(r)
    for rs in by_switch.values():
        for i in range(0, len(rs) - 1, 2):
            d = {slot(rs[i]): rs[i], slot(rs[i + 1]): rs[i + 1]}
            if set(d) == {"sort", "approx"}:
                out.append((d["sort"], d["approx"]))
    return out


def value(r: dict, metric: str) -> float:
    if metric == "+driver":
        return float(r["task_cpu_ms"]) + float(r["driver_cpu_ms"])
    if metric == "alloc":
        return float(r["task_alloc_bytes"]) + float(r["driver_alloc_bytes"])
    if metric == "min_run":  # the application's least disturbed timed run
        return min(runs(r))
    return float(r[metric])


def runs(r: dict, key: str = "task_cpu_runs") -> list[float]:
    return [float(x) for x in r[key].strip("[]").split(",")]


def alloc_runs(r: dict) -> list[float]:
    """Task + driver allocated bytes per timed run."""
    return [t + d for t, d in zip(runs(r, "task_alloc_runs"), runs(r, "driver_alloc_runs"))]


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def pair_ratio(s: dict, a: dict, metric: str) -> float:
    if metric == "run_median":  # lock step: run r of one manager next to run r of the other
        return median([x / y for x, y in zip(runs(a), runs(s))])
    if metric == "alloc_run_median":
        return median([x / y for x, y in zip(alloc_runs(a), alloc_runs(s))])
    return value(a, metric) / value(s, metric)


def geomean_ci(ratios: list[float], boot: int = 10000, seed: int = 1, level: float = 0.95):
    """Geometric mean of the ratios and its percentile bootstrap interval (resampling the ratios)."""
    logs = [math.log(x) for x in ratios]
    n = len(logs)
    g = math.exp(sum(logs) / n)
    rng = random.Random(seed)
    means = sorted(sum(logs[rng.randrange(n)] for _ in range(n)) / n for _ in range(boot))
    lo = means[int(math.floor((1 - level) / 2 * (boot - 1)))]
    hi = means[int(math.ceil((1 + level) / 2 * (boot - 1)))]
    return g, math.exp(lo), math.exp(hi)


def verdict(lo: float, hi: float, tol: float) -> str:
    pct = f"{100 * tol:g} %"
    if lo >= 1 - tol and hi <= 1 + tol:
        return f"within {pct}"
    if lo > 1 + tol:
        return f"above {pct}"
    if hi < 1 - tol:
        return f"below -{pct}"
    return "not resolved"


def noninferiority(lo: float, hi: float, tol: float) -> str:
    """The issue's aim is one-sided ("pass-through overhead within 2 %"): a non-inferiority verdict on the upper
    bound of the SAME two-sided 95 % interval as verdict() (a one-sided 97.5 % bound nominally; the percentile
    bootstrap under-covers with few pairs - 0.875 two-sided at 6 pairs, test_coverage - so in effect about the
    conventional one-sided 95 %, see test_one_sided_error_rate_at_the_margin)."""
    pct = f"{100 * tol:g} %"
    if hi <= 1 + tol:
        return f"overhead <= {pct}"
    if lo > 1 + tol:
        return f"overhead > {pct}"
    return "not resolved"


def mismatches(ps: list[tuple[dict, dict]]) -> list[str]:
    out = []
    for i, (s, a) in enumerate(ps):
        for k in WORK:
            if k not in s or k not in a:
                out.append(f"pair {i + 1}: {k} missing")
            elif s[k] != a[k]:
                out.append(f"pair {i + 1}: {k} sort {s[k]} approx {a[k]}")
    return out


MIN_PAIRS = (
    5  # the ">= 5 alternating runs"; a bootstrap of fewer pairs is little more than their range
)


ALLOC_CHECKS = (
    ("alloc_complete", "yes"),
    ("alloc_failed_tasks", "0"),
    ("alloc_unmarked_tasks", "0"),
    ("alloc_other_thread_tasks", "0"),
)


def alloc_problems(ps: list[tuple[dict, dict]]) -> list[str]:
    """Why the allocated bytes of a pair cannot be trusted: a task message missing at the driver, a failed task, a
    task whose start was not marked or which ended on another thread than it started."""
    out = []
    for i, p in enumerate(ps):
        for r in p:
            for k, want in ALLOC_CHECKS:
                if r.get(k, want) != want:
                    out.append(f"pair {i + 1} {slot(r)}: {k}={r[k]}")
    return out


def spread(xs: list[float]) -> float:
    """(max - min) / median of one application's timed runs."""
    return (max(xs) - min(xs)) / median(xs)


def line_for(ps, metric, name, bad, tol, boot, seed):
    ratios = [pair_ratio(s, a, metric) for s, a in ps]
    g, lo, hi = geomean_ci(ratios, boot, seed)
    enough = not bad and len(ps) >= MIN_PAIRS
    v = (
        "MISMATCH (different work)"
        if bad == "work"
        else f"INCOMPLETE ({bad})"
        if bad
        else f"too few pairs (< {MIN_PAIRS}), no verdict"
        if len(ps) < MIN_PAIRS
        else verdict(lo, hi, tol)
    )
    one = f"; one-sided (95 % upper bound): {noninferiority(lo, hi, tol)}" if enough else ""
    text = (
        f"{name} = {g:.3f} [{lo:.3f}, {hi:.3f}] over {len(ps)} pairs: {v}{one}"
        f"  (pairs {[round(x, 3) for x in ratios]})"
    )
    return text, (verdict(lo, hi, tol), noninferiority(lo, hi, tol), lo, hi) if enough else None


def summarize(lines, tol: float = 0.02, boot: int = 10000, seed: int = 1) -> list[str]:
    ps = pairs(parse(lines))
    if not ps:
        return ["passthrough: no sort/approx pair"]
    bad = mismatches(ps)
    managers = sorted({r["manager"] for p in ps for r in p})
    aa = all(s["manager"] == a["manager"] for s, a in ps)
    out = []
    if aa:
        out.append(
            f"A/A: manager {'/'.join(managers)} in both slots (a null comparison: slot 'approx' / slot 'sort')"
        )
    verdicts = {}
    has = lambda *ks: all(k in r for p in ps for r in p for k in ks)  # noqa: E731
    for metric, name, need, key in (
        ("task_cpu_ms", "passthrough cpu ratio approx/sort", ("task_cpu_ms",), "cpu"),
        (
            "run_median",
            "  task cpu, median of the per-run ratios (run r vs run r), ratio",
            ("task_cpu_runs",),
            None,
        ),
        ("min_run", "  task cpu of the cheapest timed run, ratio", ("task_cpu_runs",), None),
        ("+driver", "  task + driver cpu ratio", ("task_cpu_ms", "driver_cpu_ms"), None),
        ("driver_cpu_ms", "  driver cpu ratio", ("driver_cpu_ms",), None),
        ("exec_proc_cpu_ms", "  executor process cpu ratio", ("exec_proc_cpu_ms",), None),
        ("median_s", "  wall (median per application) ratio", ("median_s",), None),
        (
            "alloc",
            "passthrough alloc ratio approx/sort (task + driver allocated bytes)",
            ("task_alloc_bytes", "driver_alloc_bytes"),
            "alloc",
        ),
        ("task_alloc_bytes", "  task threads' allocated bytes ratio", ("task_alloc_bytes",), None),
        ("driver_alloc_bytes", "  driver JVM's allocated bytes ratio", ("driver_alloc_bytes",), None),
        (
            "alloc_run_median",
            "  task + driver allocated bytes, median of the per-run ratios, ratio",
            ("task_alloc_runs", "driver_alloc_runs"),
            None,
        ),
    ):
        if not has(*need):
            continue
        why = "work" if bad else ""
        if not why and "alloc" in metric:
            ap = alloc_problems(ps)
            why = "; ".join(ap[:3]) if ap else ""
        text, v = line_for(ps, metric, name, why, tol, boot, seed)
        out.append(text)
        if key:
            verdicts[key] = v
    if has("task_alloc_runs", "driver_alloc_runs"):
        within = [spread(alloc_runs(r)) for p in ps for r in p]
        tw = [spread(runs(r, "task_alloc_runs")) for p in ps for r in p]
        dw = [spread(runs(r, "driver_alloc_runs")) for p in ps for r in p]
        out.append(
            f"  allocated bytes between the timed runs of one application, (max - min) / median: task + driver "
            f"median {100 * median(within):.2f} % (max {100 * max(within):.2f} %); task "
            f"{100 * median(tw):.2f} % (max {100 * max(tw):.2f} %); driver {100 * median(dw):.2f} % "
            f"(max {100 * max(dw):.2f} %)"
        )
    if aa and verdicts.get("alloc"):
        _, _, lo, hi = verdicts["alloc"]
        ok = lo >= 1 - tol and hi <= 1 + tol
        out.append(
            f"A/A spread of the allocation criterion: [{lo:.3f}, {hi:.3f}] "
            + (
                f"inside [{1 - tol:g}, {1 + tol:g}]: the measure can decide {100 * tol:g} %"
                if ok
                else f"NOT inside [{1 - tol:g}, {1 + tol:g}]: the measure cannot decide {100 * tol:g} %"
            )
        )
    elif not aa and verdicts.get("cpu") and verdicts.get("alloc"):
        c, a = verdicts["cpu"], verdicts["alloc"]
        out.append(
            f"verdicts: cpu {c[0]} / one-sided {c[1]}; alloc {a[0]} / one-sided {a[1]}"
            + ("" if c[1] == a[1] else "  (the two criteria DISAGREE on the aim)")
        )
    loads = [float(r[k]) for p in ps for r in p for k in ("load_start", "load_end") if k in r]
    if loads:
        out.append(f"  load average (1 min) during the timed runs: {min(loads):.1f}-{max(loads):.1f}")
    layouts = sorted({r.get("input_layout", "?") for p in ps for r in p})
    out.append(
        f"  work identical in every pair ({', '.join(WORK)}): "
        + ("yes" if not bad else "NO: " + "; ".join(bad[:6]))
        + f"; input layouts {layouts}"
    )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--boot", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    with open(a.results) as f:
        print("\n".join(summarize(f, a.tolerance, a.boot, a.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
