"""Statistics the benchmark summaries share: pooling per-job values over runs, bootstrap intervals (of a median, of a
ratio of pooled medians with jobs resampled within their run), whether a difference is beyond the run-to-run noise,
paired A/B ratios (geometric mean, wins, sign test) and the ablation order's breaks beyond noise.

Every random draw comes from a `random.Random(seed)`: a summary computed twice from the same data is the same.
These replace the one-off pool.py / pooled.py / summ.py / noise.py / fifo_pool.py / split.py / corun.py scripts that
were committed beside lab results (benchmarks/results/netlab/SCRIPTS.md); `benchmarks/run` uses them.
"""

from __future__ import annotations

import csv
import glob
import math
import os
import random
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from netlab.results import percentile

# The verdicts of `compare`: a/b above 1 beyond the interval, below 1 beyond it, or the interval holds 1.
SLOWER = "slower beyond noise"
FASTER = "faster beyond noise"
NOISE = "within noise"


def median(xs: Sequence[float]) -> float:
    """The median by linear interpolation (results.percentile: an infinite neighbour makes it infinite); nan if
    empty."""
    return percentile(list(xs), 0.5)


def nearest_rank(xs: Sequence[float], q: float) -> float:
    """The q-quantile as the ceil(q * n)-th smallest value (the nearest-rank definition; p99 of 45 jobs is the
    largest), nan for an empty list."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def geomean(xs: Sequence[float]) -> float:
    """Geometric mean of positive values (nan if empty)."""
    if not xs:
        return float("nan")
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def sign_test_p(wins: int, n: int) -> float:
    """Two-sided sign-test p-value of `wins` successes in `n` paired trials without ties (H0: p = 1/2)."""
    if n <= 0:
        return 1.0
    k = min(wins, n - wins)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def _interval(values: list[float], level: float) -> tuple[float, float]:
    values.sort()
    n = len(values)
    lo = int(math.floor((1 - level) / 2 * n))
    hi = int(math.ceil((1 + level) / 2 * n)) - 1
    return values[lo], values[min(n - 1, hi)]


def bootstrap_ci(
    xs: Sequence[float],
    stat: Callable[[Sequence[float]], float] = median,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 1,
) -> tuple[float, float]:
    """Percentile bootstrap interval of stat(xs) at `level` (xs resampled with replacement)."""
    if not xs:
        raise ValueError("bootstrap_ci of an empty sample")
    rng = random.Random(seed)
    xs = list(xs)
    return _interval([stat(rng.choices(xs, k=len(xs))) for _ in range(resamples)], level)


def _runs(v: Mapping[str, Sequence[float]] | Sequence[Sequence[float]]) -> list[list[float]]:
    runs = v.values() if isinstance(v, Mapping) else v
    return [list(r) for r in runs if len(r)]


def pooled(v: Mapping[str, Sequence[float]] | Sequence[Sequence[float]]) -> list[float]:
    """Every job of every run in one list."""
    return [x for r in _runs(v) for x in r]


def ratio(a: float, b: float) -> float:
    """a / b with the cases a failed cell (inf) or an empty one (nan) brings: inf/inf = 1, x/inf = 0, x/0 = inf."""
    if math.isnan(a) or math.isnan(b):
        return float("nan")
    if math.isinf(b):
        return 1.0 if math.isinf(a) else 0.0
    if b == 0:
        return math.inf if a > 0 else 1.0
    return a / b


def bootstrap_ratio_ci(
    a: Mapping[str, Sequence[float]] | Sequence[Sequence[float]],
    b: Mapping[str, Sequence[float]] | Sequence[Sequence[float]],
    level: float = 0.90,
    resamples: int = 400,
    seed: int = 1,
    stat: Callable[[Sequence[float]], float] = median,
) -> tuple[float, float]:
    """Bootstrap interval of stat(pooled a) / stat(pooled b) where a and b are per-run lists of per-job values
    (a dict run -> values, or a list of lists): each resample draws every run's jobs with replacement within that
    run, so a run keeps its size and a noisy run cannot be drawn twice in place of a quiet one."""
    ra, rb = _runs(a), _runs(b)
    if not ra or not rb:
        raise ValueError("bootstrap_ratio_ci needs jobs on both sides")
    rng = random.Random(seed)
    out = []
    for _ in range(resamples):
        pa = [x for r in ra for x in rng.choices(r, k=len(r))]
        pb = [x for r in rb for x in rng.choices(r, k=len(r))]
        out.append(ratio(stat(pa), stat(pb)))
    return _interval(out, level)


def compare(lo: float, hi: float) -> str:
    """The verdict of an interval of a/b: SLOWER when it lies above 1, FASTER when below, NOISE when it holds 1."""
    if lo > 1:
        return SLOWER
    if hi < 1:
        return FASTER
    return NOISE


def per_run_ratios(a: Mapping[str, Sequence[float]], b: Mapping[str, Sequence[float]]) -> list[float]:
    """median(a[run]) / median(b[run]) for every run both sides have jobs in, in the runs' sorted order."""
    return [ratio(median(a[r]), median(b[r])) for r in sorted(a) if a.get(r) and b.get(r)]


def ab(
    a: Mapping[str, Sequence[float]],
    b: Mapping[str, Sequence[float]],
    level: float = 0.90,
    resamples: int = 400,
    seed: int = 1,
) -> dict:
    """The A/B summary of one cell: pooled p50 of each side (per-run lists of per-job values, e.g. JCT ms),
    b/a pooled, its bootstrap interval (jobs resampled within runs), the per-run p50 ratios where both sides ran
    in the same run (pairs), how many of those had b slower, and the verdict of the interval."""
    pa, pb = pooled(a), pooled(b)
    lo, hi = bootstrap_ratio_ci(b, a, level=level, resamples=resamples, seed=seed)
    per = per_run_ratios(b, a)
    return dict(
        a_jobs=len(pa),
        b_jobs=len(pb),
        a_runs=len(_runs(a)),
        b_runs=len(_runs(b)),
        a_p50=median(pa),
        b_p50=median(pb),
        a_p99=nearest_rank(pa, 0.99),
        b_p99=nearest_rank(pb, 0.99),
        b_over_a=ratio(median(pb), median(pa)),
        ci=[lo, hi],
        level=level,
        per_run=per,
        b_slower_runs=sum(x > 1 for x in per),
        verdict=compare(lo, hi),
    )


def paired(a: Mapping[object, float], b: Mapping[object, float]) -> dict:
    """Paired A/B over common keys (e.g. seeds of a simulation: the same schedule on both sides): per-key b/a,
    their geometric mean, how many b was smaller (faster), ties left out of the sign test, and its p-value."""
    keys = sorted(k for k in a if k in b)
    r = [ratio(b[k], a[k]) for k in keys]
    finite = [x for x in r if 0 < x < math.inf]
    wins = sum(x < 1 for x in r)
    n = sum(x != 1 for x in r)
    return dict(
        pairs=len(r),
        geomean_b_over_a=geomean(finite),
        b_faster=wins,
        untied=n,
        sign_test_p=sign_test_p(wins, n),
        ratios=r,
    )


def ordered_breaks(
    cell: Mapping[str, Mapping[str, Sequence[float]]],
    order: Sequence[str],
    level: float = 0.90,
    resamples: int = 400,
    seed: int = 1,
) -> list[dict]:
    """The ablation order: each scheme of `order` should be no slower at p50 than the one before it. For each
    adjacent pair (before, step) with jobs on both sides (cell[scheme] = per-run job lists) the pooled ratio
    step/before, its interval (jobs resampled within runs) and the verdict: "holds" (step faster beyond noise),
    "broken" (step slower beyond noise) or NOISE (the interval holds 1: the runs cannot tell the two apart)."""
    words = {FASTER: "holds", SLOWER: "broken", NOISE: NOISE}
    out = []
    for before, step in zip(order, order[1:]):
        a, b = cell.get(before) or {}, cell.get(step) or {}
        if not pooled(a) or not pooled(b):
            continue
        r = ab(a, b, level=level, resamples=resamples, seed=seed)
        out.append(dict(r, before=before, step=step, verdict=words[r["verdict"]]))
    return out


# ---- pooling the lab's jobs.csv files ---------------------------------------------------------------------------

JOB_KEY = ("workload", "pattern", "switch", "senders", "host_rate_ratio", "msr", "scheme")


def read_jobs(run_dir: str) -> list[dict]:
    """The rows of RUN_DIR/jobs.csv ([] without one)."""
    path = os.path.join(run_dir, "jobs.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def jct(row: Mapping[str, str]) -> float:
    """A job's JCT in ms; a failed job counts as infinitely slow."""
    if row.get("status", "ok") not in ("ok", ""):
        return math.inf
    return float(row["jct_ms"])


def pool_jobs(
    runs: Mapping[str, Iterable[Mapping[str, str]]],
    key: Sequence[str] = JOB_KEY,
    value: Callable[[Mapping[str, str]], float] = jct,
    keep: Callable[[Mapping[str, str]], bool] = lambda r: r.get("experiment", "schemes") == "schemes",
    min_jobs: int = 1,
) -> dict[tuple, dict[str, list[float]]]:
    """Per-job values pooled per cell: {cell key tuple: {run name: [values]}} over rows `keep` accepts; a run's
    cell with fewer than `min_jobs` jobs is left out (a cell that did not run there)."""
    out: dict[tuple, dict[str, list[float]]] = defaultdict(dict)
    for run, rows in runs.items():
        per: dict[tuple, list[float]] = defaultdict(list)
        for r in rows:
            if keep(r):
                per[tuple(r[k] for k in key)].append(value(r))
        for k, v in per.items():
            if len(v) >= min_jobs:
                out[k][run] = v
    return dict(out)


SIDES = {"old": "old", "new": "new", "off": "old", "on": "new"}  # run-name side -> A (old) or B (new)


def ab_runs(root: str) -> dict[str, dict[str, list[dict]]]:
    """The run folders of an A/B directory (CELL-SIDE-ROUND/jobs.csv, SIDE old/new or off/on: benchmarks/netlab/ab.sh
    and the alternating lab schedules before it): {"old"|"new": {"CELL-ROUND": rows}}, every row tagged with its
    cell ("ab_cell") and, for co-run jobs, the scheme named with the job's kind (atp_full/exact)."""
    out: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    for d in sorted(glob.glob(os.path.join(root, "*", "jobs.csv"))):
        name = os.path.basename(os.path.dirname(d))
        parts = name.rsplit("-", 2)
        if len(parts) != 3 or parts[1] not in SIDES or not parts[2].isdigit():
            continue
        cell, side, rnd = parts
        rows = read_jobs(os.path.dirname(d))
        for r in rows:
            r["ab_cell"] = cell
            if r.get("experiment") == "corun" and r.get("kind"):
                r["scheme"] = f"{r['scheme']}/{r['kind']}"
        out[SIDES[side]][f"{cell}-{rnd}"] = rows
    return dict(out)


def ab_table(root: str, level: float = 0.90, seed: int = 1, min_jobs: int = 5) -> list[dict]:
    """A/B of an A/B directory (ab_runs): one row per (cell, workload, switch, senders, scheme) with old (a) and new
    (b) pooled p50 / p99 JCT (ms), new/old with its bootstrap interval and verdict, the per-round ratios, new/TCP-ES
    of the new agent's runs and the start (start_to_running) p50 of each side. A run's cell with fewer than
    `min_jobs` jobs (a workload the cell only seeds with one job) is left out."""
    sides = ab_runs(root)
    key = ("ab_cell", "workload", "switch", "senders", "scheme")
    jobs = {
        s: pool_jobs(sides.get(s, {}), key=key, keep=lambda r: True, min_jobs=min_jobs)
        for s in ("old", "new")
    }
    starts = {
        s: pool_jobs(
            sides.get(s, {}),
            key=key,
            keep=lambda r: bool(r.get("start_to_running_ns")),
            value=lambda r: float(r["start_to_running_ns"]) / 1e6,
        )
        for s in ("old", "new")
    }
    rows = []
    for k in sorted(set(jobs["old"]) & set(jobs["new"])):
        cell, wl, switch, senders, scheme = k
        r = ab(jobs["old"][k], jobs["new"][k], level=level, seed=seed)
        es = jobs["new"].get((cell, wl, switch, senders, "tcp_es"))
        so, sn = starts["old"].get(k), starts["new"].get(k)
        rows.append(
            dict(
                cell=cell,
                workload=wl,
                switch=switch,
                senders=senders,
                scheme=scheme,
                new_over_tcp_es=ratio(r["b_p50"], median(pooled(es))) if es and scheme != "tcp_es" else None,
                start_p50_old=median(pooled(so)) if so else None,
                start_p50_new=median(pooled(sn)) if sn else None,
                **r,
            )
        )
    return rows


def ablation_table(run_dirs: Sequence[str], order: Sequence[str] | None = None, seed: int = 1) -> list[dict]:
    """The ablation order over repeated lab runs (each a results directory with jobs.csv): per datacenter cell
    (workload, pattern, switch, senders, MSR) and adjacent pair of `order` (default schemes.ABLATION_ORDER), the
    per-run ratios step/before, the pooled ratio, its bootstrap interval and the verdict (ordered_breaks)."""
    from netlab import schemes

    order = order or schemes.ABLATION_ORDER
    runs = {os.path.basename(os.path.normpath(d)): read_jobs(d) for d in run_dirs}
    key = ("workload", "pattern", "switch", "senders", "msr")
    pool = pool_jobs(
        runs,
        key=key + ("scheme",),
        keep=lambda r: r.get("experiment") == "schemes" and r.get("host_rate_ratio") == "1.0",
    )
    cells: dict[tuple, dict] = defaultdict(dict)
    for k, v in pool.items():
        cells[k[:-1]][k[-1]] = v
    rows = []
    for c in sorted(cells):
        for b in ordered_breaks(cells[c], order, seed=seed):
            rows.append(
                dict(
                    zip(key, c),
                    pair=f"{b['step']}/{b['before']}",
                    per_run=b["per_run"],
                    pooled=b["b_over_a"],
                    ci=b["ci"],
                    verdict=b["verdict"],
                )
            )
    return rows


def _md(rows: list[dict], cols: Sequence[str]) -> str:
    def f(v):
        if isinstance(v, float):
            return f"{v:.2f}"
        if isinstance(v, list):
            return "[" + ", ".join(f(x) for x in v) + "]"
        return "-" if v is None else str(v)

    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(f(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(out)


AB_COLUMNS = (
    "cell",
    "workload",
    "switch",
    "senders",
    "scheme",
    "a_p50",
    "b_p50",
    "b_over_a",
    "ci",
    "verdict",
)
AB_COLUMNS += ("per_run", "a_p99", "b_p99")
AB_COLUMNS += ("new_over_tcp_es", "start_p50_old", "start_p50_new")
ABLATION_COLUMNS = (
    "workload",
    "pattern",
    "switch",
    "senders",
    "msr",
    "pair",
    "per_run",
    "pooled",
    "ci",
    "verdict",
)


def main(argv=None) -> int:
    """python3 -m netlab.stats ab AB_DIR | ablation RUN_DIR...: the markdown table of an A/B directory
    (benchmarks/netlab/ab.sh) or of the ablation order pooled over runs."""
    import argparse

    ap = argparse.ArgumentParser(prog="python3 -m netlab.stats", description=main.__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("ab").add_argument("dir")
    sub.add_parser("ablation").add_argument("runs", nargs="+")
    a = ap.parse_args(argv)
    if a.cmd == "ab":
        print(
            "a = old agent, b = new agent; p50 JCT ms pooled over rounds; ci: bootstrap 90 % interval of b/a\n"
        )
        print(_md(ab_table(a.dir), AB_COLUMNS))
    else:
        print(_md(ablation_table(a.runs), ABLATION_COLUMNS))
    return 0


# ---- the native incast simulator's summary lines (native/bench/incast_sim.cpp) -------------------------------------


def parse_incast_sim(text: str) -> list[dict]:
    """The per-(mode, switch, senders) result lines `incast-sim` prints ("full slack 3 jobs 60/ 60 p50 63.16 ms ...
    p99 194.17 ms ... loss 0.465 ... util 0.96 ... [exact p50 X approx p50 Y]", possibly after a label such as
    "fbkv seed=1 "); other lines (the # configuration line) are skipped."""
    out = []
    pat = re.compile(
        r"(?P<mode>\w+)\s+(?P<switch>\w+)\s+(?P<senders>\d+)\s+jobs\s+(?P<done>\d+)/\s*(?P<total>\d+)\s+"
        r"p50\s+(?P<p50>[\d.]+) ms.*?p99\s+(?P<p99>[\d.]+) ms.*?loss (?P<loss>[\d.]+)"
    )
    for line in text.splitlines():
        m = pat.search(line)
        if not m or line.lstrip().startswith("#"):
            continue
        d = dict(
            mode=m["mode"],
            switch=m["switch"],
            senders=int(m["senders"]),
            done=int(m["done"]),
            total=int(m["total"]),
            p50_ms=float(m["p50"]),
            p99_ms=float(m["p99"]),
            loss=float(m["loss"]),
        )
        u = re.search(r"util ([\d.]+)", line)
        d["util"] = float(u.group(1)) if u else None
        e = re.search(r"exact p50 ([\d.]+)", line)
        d["exact_p50_ms"] = float(e.group(1)) if e else None
        out.append(d)
    return out


def mean_or_none(xs: Iterable[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return statistics.mean(v) if v else None


if __name__ == "__main__":
    import sys

    sys.exit(main())
