#!/usr/bin/env python3
"""Drives atp-sim (benchmarks/sim): writes job schedules from benchmarks/netlab/netlab/workload.py's generators (the one
source of the FBKV/FBHD distributions), runs every (figure, scheme) of a preset, and aggregates the per-job
results into summary.json (one cell per figure, workload, pattern, MSR, scheme), one CSV per figure and, with
matplotlib, one PNG per figure. Python stdlib only, except the plots. See docs/simulation.md.

  sim.py run --preset smoke|k4|paper --sim build/sim/atp-sim --out DIR [--only fig5,fig9] [--jobs 2]
  sim.py plot --results DIR
  sim.py report --results DIR      (markdown tables for docs/simulation.md)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import dataclasses
import hashlib
import importlib.util
import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SCHEMES = [
    "atp_full",
    "atp_full_tlr",
    "atp_paper",
    "atp_base",
    "atp_rc",
    "atp_rc_mrdf",
    "atp_fixtlr",
    "atp_fixprio",
    "dctcp_es",
    "dctcp_ss",
    "dctcp_exact",
    "pfabric_es",
    "udp",
]


def load_workload():
    """benchmarks/netlab/netlab/workload.py, imported by path (read-only: the netlab owns it)."""
    for rel in (
        "benchmarks/netlab/netlab/workload.py",
        "benchmarks/netlab/workload.py",
    ):  # package, older layout
        path = os.path.join(ROOT, rel)
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("netlab_workload", path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules["netlab_workload"] = mod  # dataclasses need the module registered
            spec.loader.exec_module(mod)
            return mod
    raise SystemExit("sim.py: benchmarks/netlab/netlab/workload.py not found")


workload = load_workload()

# ---------------------------------------------------------------------------------------------------------------
# Schedules


@dataclasses.dataclass
class SimJob:
    id: int
    start_ns: int
    sender: int
    receiver: int
    msr: float
    sizes: list
    offsets_ns: list
    kind: str = "approx"
    trace: bool = False


@dataclasses.dataclass
class Background:
    id: int
    sender: int
    receiver: int
    rate_bps: float
    start_ns: int
    stop_ns: int
    cls: int
    moves: list  # [(at_ns, cls)]
    packet_bytes: int = 1400


def write_schedule(path: str, jobs: list[SimJob], bgs: list[Background] = ()) -> None:
    with open(path, "w") as f:
        f.write("# atp-sim schedule (benchmarks/sim/sim.py); format in benchmarks/sim/src/schedule.hpp\n")
        for j in jobs:
            f.write(
                f"job {j.id} {j.start_ns} {j.sender} {j.receiver} {j.msr} {len(j.sizes)} {j.kind} "
                f"{1 if j.trace else 0}\n"
            )
            f.write(" ".join(map(str, j.sizes)) + "\n")
            f.write(" ".join(map(str, j.offsets_ns)) + "\n")
        for b in bgs:
            mv = " ".join(f"{a} {c}" for a, c in b.moves)
            f.write(
                f"bg {b.id} {b.sender} {b.receiver} {b.rate_bps:.0f} {b.packet_bytes} {b.start_ns} {b.stop_ns} "
                f"{b.cls} {mv}\n".rstrip()
                + "\n"
            )


def to_sim_jobs(jobs, prod_scale: float, warmup_ns: int, kind_of=None) -> list[SimJob]:
    """netlab Jobs (us) -> SimJobs (ns). Production gaps are multiplied by prod_scale (see docs/simulation.md)."""
    out = []
    for j in jobs:
        out.append(
            SimJob(
                j.id,
                warmup_ns + j.start_us * 1000,
                j.sender,
                j.receiver,
                j.msr,
                list(j.sizes),
                [int(o * 1000 * prod_scale) for o in j.offsets_us],
                kind_of(j) if kind_of else "approx",
            )
        )
    return out


def one_job(wl: str, r: random.Random):
    """One job's sizes and production offsets (us) from the netlab generator."""
    return workload.WORKLOADS[wl](r)


def tlr_class(tlr: float) -> int:
    """The engine's slack class of a TLR (docs/protocol.md section 11): k with (k-1)/8 < TLR <= k/8, 1..7."""
    return min(7, max(1, math.ceil(tlr * 8 - 1e-9)))


# ---------------------------------------------------------------------------------------------------------------
# Presets and figures

PRESETS = {
    # Tests: a handful of incast jobs on the k=4 fat-tree.
    "tiny": dict(
        k=4,
        hosts=0,
        rate_gbps=40,
        jobs={"fbkv": 8, "fbhd": 4},
        incast_jobs=9,
        msrs=[0.5, 0.75, 0.9],
        load=0.8,
        figures=["fig9"],
        trials=2,
        fig11_jobs=4,
        fig9_schemes=["atp_full", "dctcp_es"],
    ),
    # CI: k=4 fat-tree, a few dozen jobs per scheme, every scheme once.
    "smoke": dict(
        k=4,
        hosts=0,
        rate_gbps=40,
        jobs={"fbkv": 24, "fbhd": 12},
        incast_jobs=24,
        msrs=[0.5, 0.75, 0.9],
        load=0.6,
        figures=["fig5", "fig9"],
        fig5_schemes=SCHEMES,
        trials=4,
        fig11_jobs=8,
        fig9_schemes=["atp_full", "atp_paper", "dctcp_es", "dctcp_ss"],
    ),
    # The k=4 figure set (docs/simulation.md): every figure, ~10 min on 2 cores.
    "k4": dict(
        k=4,
        hosts=0,
        rate_gbps=40,
        jobs={"fbkv": 96, "fbhd": 32},
        incast_jobs=60,
        msrs=[0.5, 0.75, 0.9],
        load=0.8,
        figures=["fig5", "fig6", "fig9", "fig10", "fig11", "fig12", "fig13", "fig14"],
        trials=10,
        fig11_jobs=30,
    ),
    # Paper scale: k=12 fat-tree with 192 hosts at 40 Gbit/s.
    "paper": dict(
        k=12,
        hosts=192,
        rate_gbps=40,
        jobs={"fbkv": 384, "fbhd": 96},
        incast_jobs=192,
        msrs=[0.5, 0.75, 0.9],
        load=0.8,
        figures=["fig5", "fig6", "fig9", "fig10", "fig11", "fig12", "fig13", "fig14"],
        trials=20,
        fig11_jobs=40,
    ),
}

MAIN_SCHEMES = ["atp_full", "atp_full_tlr", "atp_paper", "dctcp_es", "dctcp_ss", "pfabric_es", "udp"]
INCAST_SCHEMES = ["atp_full", "atp_full_tlr", "atp_paper", "dctcp_es", "dctcp_ss", "pfabric_es"]
# The switch of every figure (docs/simulation.md, "Switches"): the paper's 1.5 MB per switch, shared by its ports with
# dynamic thresholds, class 0 at alpha 1, approximate class k at APPROX_ALPHA x (8 - k) / 7. A preset may set
# "switch" to override (e.g. {"buffer_model": "port", "approx_alpha": 0} for the first, per-port model).
SWITCH = {"buffer_model": "shared", "alpha": 1.0, "approx_alpha": 1.0}
REF_RATE_BPS = 1e9  # the netlab's lab rate its production gaps were sized for
WARMUP_NS = 2_000_000


@dataclasses.dataclass
class Run:
    figure: str
    workload: str
    pattern: str
    scheme: str
    schedule: str
    args: list
    extra: dict = dataclasses.field(default_factory=dict)  # added to every cell of the run
    trace: bool = False

    def key(self) -> str:
        h = hashlib.sha1(
            (self.schedule + "|" + self.scheme + "|" + " ".join(self.args)).encode()
        ).hexdigest()[:12]
        return f"{self.figure}-{self.workload}-{self.pattern}-{self.scheme}-{h}"


def fabric_args(p: dict, kind: str = "fattree", hosts: int = 0, switch: str = "slack") -> list[str]:
    sw = {**SWITCH, **p.get("switch", {})}
    a = ["--rate-gbps", str(p["rate_gbps"]), "--switch", switch, "--buffer-model", sw["buffer_model"]]
    a += ["--alpha", str(sw["alpha"]), "--approx-alpha", str(sw["approx_alpha"])]
    if kind == "fattree":
        a += ["--topology", "fattree", "--k", str(p["k"])]
        if p["hosts"]:
            a += ["--hosts", str(p["hosts"])]
    else:
        a += ["--topology", "star", "--hosts", str(hosts)]
    return a


def n_hosts(p: dict) -> int:
    return p["hosts"] or p["k"] ** 3 // 4


def plan(preset: str, out: str, seed: int, only: set[str] | None) -> list[Run]:
    p = PRESETS[preset]
    rate = p["rate_gbps"] * 1e9
    scale = REF_RATE_BPS / rate
    sched_dir = os.path.join(out, "schedules")
    os.makedirs(sched_dir, exist_ok=True)
    runs: list[Run] = []
    H = n_hosts(p)
    hosts = list(range(1, H + 1))

    def sched(name, jobs, bgs=()):
        path = os.path.join(sched_dir, name + ".txt")
        write_schedule(path, jobs, bgs)
        return path

    want = lambda f: f in p["figures"] and (only is None or f in only)

    # Figs. 5/6 (+12): all-to-all over the fat-tree, ATP vs DCTCP-ES/SS and UDP; ablations on the same jobs.
    for fig, wl in (("fig5", "fbkv"), ("fig6", "fbhd")):
        if not (want(fig) or (wl == "fbkv" and want("fig12"))):
            continue
        jobs = workload.generate(
            wl, p["jobs"][wl], hosts, hosts, p["msrs"], int(rate * H), p["load"], seed, pattern="all-to-all"
        )
        path = sched(f"{wl}-all-to-all", to_sim_jobs(jobs, scale, WARMUP_NS))
        schemes = []
        if want(fig):
            schemes += p.get("fig5_schemes", MAIN_SCHEMES) if fig == "fig5" else MAIN_SCHEMES
        for s in schemes:
            runs.append(Run(fig, wl, "all-to-all", s, path, fabric_args(p)))
        if fig == "fig5" and want("fig12"):
            for s in ["atp_base", "atp_rc", "atp_rc_mrdf", "atp_full", "atp_full_tlr", "atp_paper"]:
                runs.append(Run("fig12", wl, "all-to-all", s, path, fabric_args(p)))

    # Fig. 9: incast (every other host -> host 1), FBKV and FBHD.
    if want("fig9"):
        for wl in ["fbkv"] if preset in ("smoke", "tiny") else ["fbkv", "fbhd"]:
            n = p["incast_jobs"] if wl == "fbkv" else max(12, p["incast_jobs"] // 3)
            jobs = workload.generate(
                wl, n, hosts[1:], [1], p["msrs"], int(rate), p["load"], seed + 1, pattern="incast"
            )
            path = sched(f"{wl}-incast", to_sim_jobs(jobs, scale, WARMUP_NS))
            for s in p.get("fig9_schemes", INCAST_SCHEMES):
                runs.append(Run("fig9", wl, "incast", s, path, fabric_args(p)))

    # Figs. 10/11: one foreground FBKV sender (h2 -> h1) against constant-rate UDP background (h3 -> h1, 0.6 of the
    # line rate) that starts in the foreground's initial class (from TLR_0 = 1 - MSR) and moves one class up
    # halfway (Fig. 10: at 1/3 and 2/3). The foreground produces 10x faster than in the other figures so that
    # it is bound by the network, not by its production: the dynamics are about sharing a queue.
    if want("fig10") or want("fig11"):
        r = random.Random(seed + 2)
        fscale = scale / 10
        bg_rate = 0.6 * rate

        def network_time(
            msr, sizes, offs
        ):  # production span, or the MSR share at the rate left by the background
            return max(offs[-1] * 1000 * fscale, msr * sum(sizes) * 8 / (rate - bg_rate) * 1e9)

        for fig in ("fig10", "fig11"):
            if not want(fig):
                continue
            msrs = [0.5] if fig == "fig10" else [0.25, 0.5, 0.75]
            for msr in msrs:
                if fig == "fig10":  # one long job: consecutive FBKV jobs' messages as one
                    sizes, offs, t = [], [], 0
                    while len(sizes) < 6000:
                        s_, o_ = one_job("fbkv", r)
                        sizes += s_
                        offs += [t + o for o in o_]
                        t = offs[-1] + 20
                    fg = [
                        SimJob(
                            1, WARMUP_NS, 2, 1, msr, sizes, [int(o * 1000 * fscale) for o in offs], trace=True
                        )
                    ]
                    span = int(network_time(msr, sizes, offs))
                    moves = [(WARMUP_NS + span // 3, max(1, c0 - 1)) for c0 in [tlr_class(1 - msr)]]
                    moves.append((WARMUP_NS + 2 * span // 3, max(1, tlr_class(1 - msr) - 2)))
                else:
                    fg, t0 = [], WARMUP_NS
                    for i in range(p["fig11_jobs"]):
                        s_, o_ = one_job("fbkv", r)
                        fg.append(SimJob(i + 1, t0, 2, 1, msr, s_, [int(o * 1000 * fscale) for o in o_]))
                        t0 += int(1.5 * network_time(msr, s_, o_))  # mostly one after the other
                    span = t0 - WARMUP_NS
                    moves = [(WARMUP_NS + span // 2, max(1, tlr_class(1 - msr) - 1))]
                c0 = tlr_class(1 - msr)
                bg = [Background(1, 3, 1, bg_rate, WARMUP_NS - 100_000, WARMUP_NS + 20 * span, c0, moves)]
                path = sched(f"{fig}-msr{msr}", fg, bg)
                schemes = (
                    ["atp_full", "atp_full_tlr", "atp_paper"]
                    if fig == "fig10"
                    else ["atp_fixtlr", "atp_fixprio", "atp_full", "atp_full_tlr", "dctcp_es"]
                )
                for s in schemes:
                    # DCTCP traffic has no slack class: it meets the background in one FIFO queue (fifo switch).
                    sw = "fifo" if s.startswith("dctcp") else "slack"
                    runs.append(
                        Run(
                            fig,
                            "fbkv",
                            "one-to-one+bg",
                            s,
                            path,
                            fabric_args(p, "star", 3, sw),
                            {"bg_class": c0, "bg_moves": [[(a - WARMUP_NS) / 1e6, c] for a, c in moves]},
                            trace=fig == "fig10",
                        )
                    )

    # Paper Fig. 13: exact (non-approximate) jobs co-running with approximate FBKV, ATP vs DCTCP-ES; ATP also on
    # a FIFO switch (slack vs FIFO).
    if want("fig13"):
        for ratio in (0.25, 0.5):
            for msr in (0.5, 0.9):
                jobs = workload.generate(
                    "fbkv",
                    p["jobs"]["fbkv"],
                    hosts,
                    hosts,
                    [msr],
                    int(rate * H),
                    p["load"],
                    seed + 3,
                    pattern="all-to-all",
                )
                rr = random.Random(seed + 4)
                exact = {j.id for j in jobs if rr.random() < ratio}
                sj = to_sim_jobs(jobs, scale, WARMUP_NS, lambda j: "exact" if j.id in exact else "approx")
                path = sched(f"corun-r{ratio}-msr{msr}", sj)
                for s, sw in (
                    ("atp_full", "slack"),
                    ("atp_full", "fifo"),
                    ("atp_full_tlr", "slack"),
                    ("dctcp_es", "slack"),
                ):
                    runs.append(
                        Run(
                            "fig13",
                            "fbkv",
                            "all-to-all",
                            s,
                            path,
                            fabric_args(p, switch=sw),
                            {"switch": sw, "exact_ratio": ratio},
                        )
                    )

    # Paper Fig. 14 (the "three jobs"): an FBKV job (MSR 0.875) starting after two FBHD jobs (MSR 0.75,
    # 0.5), all into host 1; its JCT against running alone. Trials are spaced so they do not overlap.
    if want("fig14"):
        r = random.Random(seed + 5)
        together, alone, t0 = [], [], WARMUP_NS
        for trial in range(p["trials"]):
            a_s, a_o = one_job("fbhd", r)
            b_s, b_o = one_job("fbhd", r)
            k_s, k_o = one_job("fbkv", r)
            delay = int(200 * 1000 * scale)
            mk = lambda i, snd, m, s_, o_, st: SimJob(
                i, st, snd, 1, m, s_, [int(o * 1000 * scale) for o in o_]
            )
            together += [
                mk(3 * trial + 1, 2, 0.75, a_s, a_o, t0),
                mk(3 * trial + 2, 3, 0.5, b_s, b_o, t0),
                mk(3 * trial + 3, 4, 0.875, k_s, k_o, t0 + delay),
            ]
            alone.append(mk(3 * trial + 3, 4, 0.875, k_s, k_o, t0 + delay))
            t0 += int((max(a_o[-1], b_o[-1]) * 4 + 1000) * 1000 * scale)
        pt = sched("fairness-together", together)
        pa = sched("fairness-alone", alone)
        for s in ["atp_full", "atp_full_tlr", "atp_fixprio", "dctcp_es"]:
            runs.append(Run("fig14", "fbkv+2fbhd", "incast", s, pt, fabric_args(p, "star", 4)))
            runs.append(Run("fig14", "fbkv-alone", "incast", s, pa, fabric_args(p, "star", 4)))
    return runs


# ---------------------------------------------------------------------------------------------------------------
# Running and aggregating


def run_one(sim: str, run: Run, out: str, seed: int) -> dict:
    base = os.path.join(out, "runs", run.key())
    os.makedirs(os.path.dirname(base), exist_ok=True)
    cmd = [
        sim,
        "--schedule",
        run.schedule,
        "--scheme",
        run.scheme,
        "--out",
        base + ".jsonl",
        "--stats",
        base + ".stats.json",
        "--seed",
        str(seed),
    ] + run.args
    if run.trace:
        cmd += ["--trace", base + ".trace.csv"]
    t = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t
    if res.returncode != 0:
        raise RuntimeError(f"atp-sim failed ({res.returncode}): {' '.join(cmd)}\n{res.stderr}")
    jobs = [json.loads(l) for l in open(base + ".jsonl")]
    stats = json.load(open(base + ".stats.json"))
    return {"run": run, "jobs": jobs, "stats": stats, "wall": wall, "base": base, "log": res.stderr.strip()}


def percentile(xs: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in [0, 100]); None for no data."""
    if not xs:
        return None
    s = sorted(xs)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


_BOUNDS: dict[str, dict[int, int]] = {}


def production_bounds(schedule: str) -> dict[int, int]:
    """Per job of a schedule file: ns from its start until the message that completes its target is produced
    (approximate: the ceil(MSR N)-th; exact: the last). No transport can finish a job earlier, so the p50 of these
    is a floor under any scheme's p50 (every JCT is at least its own job's bound)."""
    if schedule not in _BOUNDS:
        out, lines = {}, open(schedule).read().split("\n")
        for i, line in enumerate(lines):
            f = line.split()
            if not f or f[0] != "job":
                continue
            msr, n, kind = float(f[5]), int(f[6]), f[7]
            offs = [int(x) for x in lines[i + 2].split()]
            target = n if kind == "exact" else max(1, math.ceil(msr * n - 1e-9))
            out[int(f[1])] = offs[target - 1] if offs else 0
        _BOUNDS[schedule] = out
    return _BOUNDS[schedule]


def cells_of(result: dict) -> list[dict]:
    run: Run = result["run"]
    bounds = production_bounds(run.schedule)
    groups: dict[tuple, list] = {}
    for j in result["jobs"]:
        traffic = j["kind"]
        if traffic == "exact" and run.figure != "fig13":
            continue
        if run.figure == "fig14" and j["msr"] != 0.875:
            continue  # the FBHD competitors are context, the FBKV job is the measurement
        groups.setdefault((traffic, j["msr"] if traffic == "approx" else -1.0), []).append(j)
    out = []
    for (traffic, msr), js in sorted(groups.items()):
        jct = [j["jct_ns"] / 1e6 for j in js if j["jct_ns"] >= 0]
        failed = sum(1 for j in js if j["status"] != "ok" or j["delivered"] < j["target"])
        above = sum(1 for j in js if j["lost"] > j["messages"] - j["target"])
        sent = sum(j["bytes_sent"] for j in js)
        size = sum(j["bytes"] for j in js)
        cell = {
            "figure": run.figure,
            "workload": run.workload,
            "pattern": run.pattern,
            "msr": msr if traffic == "approx" else None,
            "scheme": run.scheme,
            "traffic": traffic,
            "jobs": len(js),
            "failed": failed,
            "p50_ms": round(percentile(jct, 50), 4) if jct else None,
            "p99_ms": round(percentile(jct, 99), 4) if jct else None,
            "production_bound_p50_ms": round(percentile([bounds[j["job"]] / 1e6 for j in js], 50), 4),
            "mean_ms": round(sum(jct) / len(jct), 4) if jct else None,
            "loss_above_allowance": above,
            "mean_message_loss": round(sum(j["lost"] / j["messages"] for j in js) / len(js), 4),
            "bytes_sent_ratio": round(sent / size, 3) if size else None,
        }
        cell.update(run.extra)
        out.append(cell)
    if run.figure == "fig13":  # exact jobs' cells carry the MSR of the approximate jobs they ran with
        m = next((c["msr"] for c in out if c["traffic"] == "approx"), None)
        for c in out:
            if c["traffic"] == "exact":
                c["msr"] = m
    return out


def engine_commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", ROOT, "log", "-1", "--format=%h %s", "--", "native/src/core"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cmd_run(a) -> int:
    if a.preset not in PRESETS:
        raise SystemExit(f"sim.py: unknown preset {a.preset} ({', '.join(PRESETS)})")
    if not os.access(a.sim, os.X_OK):
        raise SystemExit(f"sim.py: {a.sim} is not an executable (build it with benchmarks/sim/run.sh build)")
    only = set(a.only.split(",")) if a.only else None
    os.makedirs(a.out, exist_ok=True)
    runs = plan(a.preset, a.out, a.seed, only)
    t0 = time.monotonic()
    results = []
    # A (schedule, scheme, fabric) shared by two figures (Fig. 5's ATP Full is also Fig. 12's) runs once.
    ident = lambda r: (r.schedule, r.scheme, tuple(r.args), r.trace)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {}
        for r in runs:
            if ident(r) not in futs:
                futs[ident(r)] = ex.submit(run_one, a.sim, r, a.out, a.seed)
        for r in runs:
            res = dict(futs[ident(r)].result(), run=r)
            print(
                f"[sim] {r.figure} {r.workload} {r.pattern} {r.scheme} {r.extra or ''}: "
                f"{len(res['jobs'])} jobs, {res['stats']['unfinished']} unfinished, {res['wall']:.1f}s",
                flush=True,
            )
            results.append(res)
    cells = [c for res in results for c in cells_of(res)]
    walls: dict[str, float] = {}
    cpus: dict[str, float] = {}
    for res in results:
        walls[res["run"].figure] = walls.get(res["run"].figure, 0) + res["wall"]
        cpus[res["run"].figure] = cpus.get(res["run"].figure, 0) + res["stats"].get("cpu_seconds", 0)
    p = PRESETS[a.preset]
    summary = {
        "preset": a.preset,
        "seed": a.seed,
        "fabric": {
            "k": p["k"],
            "hosts": n_hosts(p),
            "rate_gbps": p["rate_gbps"],
            "load": p["load"],
            "production_scale": REF_RATE_BPS / (p["rate_gbps"] * 1e9),
        },
        "engine_commit": engine_commit(),
        "note": "measured on a shared 2-core machine; wall times are indicative only",
        "wall_seconds": round(time.monotonic() - t0, 1),
        "wall_seconds_per_figure": {k: round(v, 1) for k, v in sorted(walls.items())},
        "cpu_seconds_per_figure": {k: round(v, 1) for k, v in sorted(cpus.items())},
        "runs": [
            {
                "figure": res["run"].figure,
                "workload": res["run"].workload,
                "pattern": res["run"].pattern,
                "scheme": res["run"].scheme,
                **res["run"].extra,
                "jobs": len(res["jobs"]),
                "unfinished": res["stats"]["unfinished"],
                "sim_seconds": res["stats"]["sim_seconds"],
                "wall_seconds": round(res["wall"], 1),
                "cpu_seconds": res["stats"].get("cpu_seconds"),
                "switch_dropped": res["stats"]["switch_dropped"],
                "switch_marked": res["stats"]["switch_marked"],
                "trace": os.path.relpath(res["base"] + ".trace.csv", a.out) if res["run"].trace else None,
            }
            for res in results
        ],
        "cells": cells,
    }
    # Deterministic content first (cells), so two runs with one seed can be compared byte for byte without the
    # wall times: summary.json holds everything, cells.json only what the seed determines.
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    with open(os.path.join(a.out, "cells.json"), "w") as f:
        json.dump(cells, f, indent=1, sort_keys=True)
    figs = sorted({c["figure"] for c in cells})
    for fig in figs:
        rows = [c for c in cells if c["figure"] == fig]
        keys = sorted({k for c in rows for k in c})
        with open(os.path.join(a.out, f"{fig}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    print(
        f"[sim] {len(cells)} cells from {len(results)} runs in {summary['wall_seconds']}s -> "
        f"{os.path.join(a.out, 'summary.json')}"
    )
    if a.plot:
        return cmd_plot(argparse.Namespace(results=a.out))
    return 0


def cmd_report(a) -> int:
    """Markdown tables from summary.json: p50 (p99) JCT per figure, and the issue's targets at MSR 0.75."""
    with open(os.path.join(a.results, "summary.json")) as f:
        s = json.load(f)
    cells = s["cells"]
    fab = s["fabric"]
    print(
        f"preset {s['preset']}, seed {s['seed']}, {fab['hosts']} hosts, k={fab['k']}, {fab['rate_gbps']} Gbit/s, "
        f"load {fab['load']}, engine {s['engine_commit']}; wall {s['wall_seconds']} s on a shared machine\n"
    )
    fmt = lambda c: "-" if c is None or c["p50_ms"] is None else f"{c['p50_ms']:.3f} ({c['p99_ms']:.3f})"
    for fig in sorted({c["figure"] for c in cells}, key=lambda f: int(f[3:])):
        fc = [c for c in cells if c["figure"] == fig]
        rows = sorted(
            {
                (
                    c["workload"],
                    c["pattern"],
                    c.get("switch", ""),
                    str(c.get("exact_ratio", "")),
                    c["traffic"],
                )
                for c in fc
            }
        )
        msrs = sorted({c["msr"] for c in fc if c["msr"] is not None})
        print(f"### {fig}: p50 (p99) JCT, ms\n")
        print(
            "| workload | pattern | switch | exact share | traffic | scheme | "
            + " | ".join(f"MSR {m}" for m in msrs)
            + " | failed | loss > 1-MSR |"
        )
        print("|---" * (8 + len(msrs)) + "|")
        for wl, pat, sw, ratio, traffic in rows:
            rc = [
                c
                for c in fc
                if (
                    c["workload"],
                    c["pattern"],
                    c.get("switch", ""),
                    str(c.get("exact_ratio", "")),
                    c["traffic"],
                )
                == (wl, pat, sw, ratio, traffic)
            ]
            for sch in dict.fromkeys(c["scheme"] for c in rc):
                sc = [c for c in rc if c["scheme"] == sch]
                vals = [fmt(next((c for c in sc if c["msr"] == m), None)) for m in msrs]
                print(
                    f"| {wl} | {pat} | {sw} | {ratio} | {traffic} | {sch} | "
                    + " | ".join(vals)
                    + f" | {sum(c['failed'] for c in sc)} | {sum(c['loss_above_allowance'] for c in sc)} |"
                )
        print()
    print("### targets at MSR 0.75 (ratio of p50 JCT)\n")
    print(
        "Targets (issue 33): ATP Full <= 0.7x DCTCP-ES and DCTCP-SS in incast, <= 0.9x all-to-all. *bound*: the p50 "
        "of the jobs' production bounds (when the message completing a job's target is produced) over DCTCP-ES's "
        "p50 - no transport can go below it. *tlr*: Full with the engine's default (TLR) classes.\n"
    )
    print(
        "| figure | workload | pattern | target | Full / ES | Full / SS | bound / ES | bound / SS | Full (tlr) / ES "
        "| pFabric-ES / ES |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        if c["scheme"] == "atp_full" and c["msr"] == 0.75 and c["figure"] in ("fig5", "fig6", "fig9"):
            key = lambda x, sch: (
                (x["figure"], x["workload"], x["pattern"], x["msr"], x["scheme"])
                == (c["figure"], c["workload"], c["pattern"], 0.75, sch)
            )
            get = lambda sch: next((x for x in cells if key(x, sch)), None)
            es, ss, tlr, pf = get("dctcp_es"), get("dctcp_ss"), get("atp_full_tlr"), get("pfabric_es")
            r = lambda a, b: "-" if not a or not b or not b["p50_ms"] else f"{a['p50_ms'] / b['p50_ms']:.2f}"
            bd = lambda b: (
                "-" if not b or not b["p50_ms"] else f"{c['production_bound_p50_ms'] / b['p50_ms']:.2f}"
            )
            tgt = "0.7" if c["pattern"] == "incast" else "0.9"
            print(
                f"| {c['figure']} | {c['workload']} | {c['pattern']} | {tgt} | {r(c, es)} | {r(c, ss)} | {bd(es)} | "
                f"{bd(ss)} | {r(tlr, es)} | {r(pf, es)} |"
            )
    abl = [c for c in cells if c["figure"] == "fig12"]
    if abl:
        print("\n### ablation order (Fig. 12, p50 JCT, ms)\n")
        for m in sorted({c["msr"] for c in abl}):
            v = {c["scheme"]: c["p50_ms"] for c in abl if c["msr"] == m}
            order = ["atp_base", "atp_rc", "atp_rc_mrdf", "atp_full"]
            mono = all(
                v[order[i]] >= v[order[i + 1]]
                for i in range(len(order) - 1)
                if order[i] in v and order[i + 1] in v
            )
            print(
                f"- MSR {m}: "
                + " >= ".join(f"{k[4:]} {v.get(k)}" for k in order)
                + f" -> {'monotone' if mono else 'NOT monotone'}"
                + (f" (full_tlr {v['atp_full_tlr']})" if "atp_full_tlr" in v else "")
            )
    return 0


def cmd_plot(a) -> int:
    import plots  # benchmarks/sim/plots.py (matplotlib)

    plots.plot_all(a.results)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--preset", default="smoke")
    r.add_argument("--sim", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--only", help="comma-separated figures (fig5,fig6,fig9,fig10,fig11,fig12,fig13,fig14)")
    r.add_argument("--jobs", type=int, default=1, help="simulations run in parallel")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--plot", action="store_true", help="also draw the PNGs (needs matplotlib)")
    p = sub.add_parser("plot")
    p.add_argument("--results", required=True)
    rp = sub.add_parser("report")
    rp.add_argument("--results", required=True)
    a = ap.parse_args(argv)
    sys.path.insert(0, HERE)
    return {"run": cmd_run, "plot": cmd_plot, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
