"""Results of a netlab run, in one format (docs/netlab.md, "Outputs"): `jobs.csv` (one row per job and scheme) and
`summary.json` (one cell per (workload, pattern, switch, senders, host_rate_ratio, msr, scheme), the co-run
comparison and the verdict on issue 8's benchmark targets). Runs live in benchmarks/results/netlab/<run-name>/;
the file benchmarks/results/netlab/latest names the run the docs report.

Conventions:
- ideal_ms of a job = MSR x job bytes x 8 / bottleneck rate + one base RTT: the job alone on the path, sending
  only the share it must deliver (issue 8). Job bytes are the messages' payload; the base RTT is measured on the
  idle lab (lab.base_rtt_ms).
- p50/p99 are percentiles over every job of a cell (linear interpolation between ranks, so p50 is the median and
  p99 of a small cell lies between its two slowest jobs); a job that failed (timeout, peer dead, set-up
  failure) counts as infinitely slow, so failures never improve a percentile. summary.json writes an infinite
  percentile as null (the cell's `failed` says how many jobs failed).
- loss_above_allowance: jobs whose measured message loss (at the receiver) exceeds 1 - MSR.
- target_ready_ms: when the job's ceil(MSR x N)-th message is produced (from the job's start). The ideal ignores
  production; this is the floor for any scheme that sends messages in production order (ATP, EarlySend), so a
  job whose production is slower than its ideal cannot reach it (FBKV-like jobs).
- start_wait_rtts = start_to_running_ns / loaded_rtt_ms, when the agent reports start_to_running_ns. loaded_rtt_ms
  = the idle base RTT + the drain time of the bottleneck queue that control frames use (class 0 on the slack
  switch, the FIFO's whole buffer), i.e. the round trip of a path whose queue is full: a job whose ANNOUNCE waits
  one pass through that queue waited 1 RTT, not the ~150 "RTTs" of 6 ms over the idle 0.04 ms (the definition until
  2026-11-24). start_to_running_ns itself is the absolute wait.
- bg_mbps: the class-0 background TCP's delivered rate in the job's phase (bytes its receivers acknowledged between
  the phase's time 0 and the end of its last agent, scaled from payload to frames by FRAME_OVER_MSS; bench.py's
  phase counters, also in phases.csv). ideal_bg_ms = the job alone with that background: MSR x job bytes x 8 /
  (bottleneck - background) + one base RTT, never below target_ready_ms + one base RTT (a job cannot finish before
  its target is produced). A reference beside ideal_ms, not a target: the verdict keeps ideal_ms (issue 8).
- corun_alone: the co-run's exact jobs replayed with no approximate traffic (same schedule, same background) on each
  switch: summary.json's corun gains exact_alone_fifo / exact_alone_slack and exact_slack_over_alone, what the
  exact jobs' slack-switch time is over their floor there.
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import statistics

from netlab import schemes

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RESULTS_ROOT = os.path.join(REPO, "benchmarks", "results", "netlab")
LATEST = "latest"

# Per-job keys the engine's job report adds (issue 8, item 2); read when the agent writes them, else empty.
AGENT_OPTIONAL = (
    "announces_sent",
    "updates_sent",
    "dones_sent",
    "start_to_running_ns",
    "last_data_to_done_ns",
    # why a start waited (sender: ANNOUNCE copies sent by the probe timeout; rx_: the receiver's report)
    "announce_probes",
    "acks_while_starting",
    "start_to_announce_sent_ns",
    "rx_announces_received",
    "rx_announces_duplicate",
    "rx_announces_acked",
    "rx_early_data_packets",
    "rx_start_to_running_ns",
    "rx_first_packet_delay_ns",
    # what losses cost (docs/protocol.md section 5, "Repair instead of give-up")
    "given_up_for_loss",
    "segments_given_up_for_loss",
    "segments_given_up_satisfied",
    "repairs_within_allowance",
)

ROW_FIELDS = [
    "experiment",
    "workload",
    "pattern",
    "switch",
    "senders",
    "host_rate_ratio",
    "scheme",
    "kind",
    "job",
    "sender",
    "receiver",
    "msr",
    "messages",
    "job_bytes",
    "production_ms",
    "start_s",
    "jct_ms",
    "ideal_ms",
    "target_ready_ms",
    "target",
    "sent",
    "delivered",
    "lost",
    "measured_loss",
    "met_msr",
    "status",
    "bytes_sent",
    "packets",
    "retransmissions",
    "epochs",
    "time_in_class_ms",
    *AGENT_OPTIONAL,
    "start_wait_rtts",
    "bottleneck_bps",
    "base_rtt_ms",
    "loaded_rtt_ms",
    "bg_mbps",
    "ideal_bg_ms",
]
FLOAT_FIELDS = (
    "msr",
    "jct_ms",
    "ideal_ms",
    "target_ready_ms",
    "measured_loss",
    "job_bytes",
    "production_ms",
    "start_s",
    "host_rate_ratio",
    "bottleneck_bps",
    "base_rtt_ms",
    "loaded_rtt_ms",
    "start_wait_rtts",
    "bg_mbps",
    "ideal_bg_ms",
    *AGENT_OPTIONAL,
)
INT_FIELDS = (
    "messages",
    "target",
    "delivered",
    "lost",
    "retransmissions",
    "sent",
    "senders",
    "bytes_sent",
    "packets",
    "epochs",
)

CELL_KEY = ("workload", "pattern", "switch", "senders", "host_rate_ratio", "msr", "scheme")
CELL_FIELDS = (
    *CELL_KEY,
    "jobs",
    "failed",
    "p50_ms",
    "p99_ms",
    "ideal_p50_ms",
    "loss_above_allowance",
    "target_ready_p50_ms",
    "median_loss",
    "max_start_wait_rtts",
    "ideal_bg_p50_ms",
    "bg_mbps",
)

# Issue 8's benchmark targets (datacenter configuration, MSR 0.75).
TARGET_MSR = 0.75
TARGET_P50_VS_ES = 1.0
TARGET_P50_VS_SS = 1.0
TARGET_P50_VS_IDEAL = 1.5
TARGET_P99_VS_ES = 0.7
TARGET_P99_MIN_SENDERS = 16
TARGET_START_WAIT_RTTS = 10
TARGET_MONOTONE_CELLS = 14
# A break of the ablation order (a step slower than the one before it) counts as beyond per-job noise when the
# ABLATION_NOISE_CONF interval of p50(step) / p50(previous), from ABLATION_NOISE_RESAMPLES bootstrap resamples of
# each cell's jobs (seeded, so a summary is reproducible), lies above 1 (docs/netlab.md, "Verdict").
ABLATION_NOISE_RESAMPLES = 400
ABLATION_NOISE_CONF = 0.90
TARGET_CORUN = 0.5
DATACENTER = 1.0  # host_rate_ratio of the datacenter configuration
FRAME_OVER_MSS = 1514 / 1448  # the background's wire share per payload byte (1500-byte MTU, TCP timestamps)


def loaded_rtt_ms(base_rtt_ms: float, queue_bytes: int, rate_bps: int) -> float:
    """The round trip of a path whose bottleneck queue (`queue_bytes`, drained at `rate_bps`) is full."""
    return base_rtt_ms + queue_bytes * 8 / rate_bps * 1e3


def order(key: tuple) -> tuple:
    """Sort key for cell keys: numbers numerically (senders 3 < 8 < 16 < 32), everything else as text."""
    return tuple((0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x)) for x in key)


def ideal_ms(msr: float, job_bytes: float, bottleneck_bps: float, base_rtt_ms: float) -> float:
    """The JCT of the job alone on the path: its MSR share of the bytes at the bottleneck rate plus one RTT."""
    return msr * job_bytes * 8 / bottleneck_bps * 1e3 + base_rtt_ms


def ideal_bg_ms(
    msr: float,
    job_bytes: float,
    bottleneck_bps: float,
    bg_bps: float | None,
    base_rtt_ms: float,
    target_ready_ms: float | None = None,
) -> float | None:
    """The JCT of the job alone on the path next to the measured background: its MSR share of the bytes at what the
    background leaves of the bottleneck, plus one RTT, and never before its target is produced (target_ready_ms,
    plus the RTT). None without a background measurement; inf when the background took the whole bottleneck."""
    if bg_bps is None or msr is None or job_bytes is None:
        return None
    left = bottleneck_bps - max(0.0, bg_bps)
    t = msr * job_bytes * 8 / left * 1e3 + base_rtt_ms if left > 0 else math.inf
    if target_ready_ms is not None:
        t = max(t, target_ready_ms + base_rtt_ms)
    return t


def bg_rate_bps(bytes_acked_delta: int, seconds: float) -> float | None:
    """The background's delivered rate on the wire (frames) from its acknowledged payload bytes over an interval."""
    if seconds <= 0 or bytes_acked_delta < 0:
        return None
    return bytes_acked_delta * 8 * FRAME_OVER_MSS / seconds


def percentile(xs: list[float], q: float) -> float:
    """Percentile q (0..1) of xs by linear interpolation between the two nearest ranks (numpy's default, so p50
    is the usual median); an infinite neighbour makes it infinite. nan for an empty list."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    frac = pos - lo
    if frac == 0 or lo + 1 >= len(s):
        return s[lo]
    if math.isinf(s[lo + 1]):
        return math.inf
    return s[lo] + (s[lo + 1] - s[lo]) * frac


def jct_or_inf(r: dict) -> float:
    return r["jct_ms"] if r["status"] == "ok" else float("inf")


def _num(x, kind=float):
    if x in ("", None):
        return None
    return kind(float(x))


def load_rows(path: str) -> list[dict]:
    """jobs.csv with numbers parsed (missing optional values become None, a missing column too)."""
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k in FLOAT_FIELDS:
                r[k] = _num(r.get(k))
            for k in INT_FIELDS:
                r[k] = _num(r.get(k), int)
            r["met_msr"] = r.get("met_msr") in ("True", "true", "1")
            rows.append(r)
    return rows


def write_rows(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=ROW_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in ROW_FIELDS})


def finite_or_none(x: float) -> float | None:
    return None if x is None or math.isinf(x) or math.isnan(x) else round(x, 3)


def over_allowance(r: dict) -> bool:
    return (
        r["measured_loss"] is not None and r["msr"] is not None and r["measured_loss"] > 1 - r["msr"] + 1e-9
    )


def cells(rows: list[dict]) -> list[dict]:
    """One cell per (workload, pattern, switch, senders, host_rate_ratio, msr, scheme) of the schemes experiment."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["experiment"] == "schemes":
            groups.setdefault(tuple(r[k] for k in CELL_KEY), []).append(r)
    out = []
    for key, rs in sorted(groups.items(), key=lambda kv: order(kv[0])):
        jct = [jct_or_inf(r) for r in rs]
        waits = [r["start_wait_rtts"] for r in rs if r.get("start_wait_rtts") is not None]
        losses = [r["measured_loss"] for r in rs if r["measured_loss"] is not None]
        ready = [r["target_ready_ms"] for r in rs if r.get("target_ready_ms") is not None]
        ideal_bg = [r["ideal_bg_ms"] for r in rs if r.get("ideal_bg_ms") is not None]
        bg = [r["bg_mbps"] for r in rs if r.get("bg_mbps") is not None]
        out.append(
            dict(
                zip(CELL_KEY, key),
                jobs=len(rs),
                failed=sum(r["status"] != "ok" for r in rs),
                p50_ms=finite_or_none(percentile(jct, 0.5)),
                p99_ms=finite_or_none(percentile(jct, 0.99)),
                ideal_p50_ms=finite_or_none(statistics.median(r["ideal_ms"] for r in rs)),
                loss_above_allowance=sum(over_allowance(r) for r in rs),
                target_ready_p50_ms=finite_or_none(statistics.median(ready)) if ready else None,
                median_loss=finite_or_none(statistics.median(losses)) if losses else None,
                max_start_wait_rtts=finite_or_none(max(waits)) if waits else None,
                ideal_bg_p50_ms=finite_or_none(statistics.median(ideal_bg)) if ideal_bg else None,
                bg_mbps=finite_or_none(statistics.median(bg)) if bg else None,
            )
        )
    return out


def corun(rows: list[dict]) -> dict:
    """Exact (MSR 1) and approximate jobs of the co-run experiment, one FIFO vs slack queues; the exact jobs alone
    (experiment corun_alone) as exact_alone_<switch>."""
    res = {}
    for exp, kind, name in (
        ("corun", "exact", "exact"),
        ("corun", "approx", "approx"),
        ("corun_alone", "exact", "exact_alone"),
    ):
        for sw in ("fifo", "slack"):
            jct = [
                jct_or_inf(r)
                for r in rows
                if r["experiment"] == exp and r["kind"] == kind and r["switch"] == sw
            ]
            if jct:
                res[f"{name}_{sw}"] = dict(
                    jobs=len(jct),
                    failed=sum(math.isinf(x) for x in jct),
                    p50_ms=finite_or_none(percentile(jct, 0.5)),
                    p99_ms=finite_or_none(percentile(jct, 0.99)),
                )
    if "exact_fifo" in res and "exact_slack" in res:
        f, s = res["exact_fifo"]["p50_ms"], res["exact_slack"]["p50_ms"]
        res["exact_slack_over_fifo"] = finite_or_none(s / f) if f and s else None
    for sw in ("fifo", "slack"):
        if f"exact_{sw}" in res and f"exact_alone_{sw}" in res:
            a, b = res[f"exact_{sw}"]["p50_ms"], res[f"exact_alone_{sw}"]["p50_ms"]
            res[f"exact_{sw}_over_alone"] = finite_or_none(a / b) if a and b else None
    return res


def break_beyond_noise(before: list[float], step: list[float], seed: int = 1) -> bool:
    """True when `step`'s jobs (JCTs, failed = inf) are slower at p50 than `before`'s by more than resampling the
    jobs explains: the lower end of the ABLATION_NOISE_CONF bootstrap interval of p50(step) / p50(before) is above 1.
    A cell of 15-30 jobs per scheme swings 1.0-2.6x between runs of the same engine (docs/history.md, netlab), so
    the order's verdict reads each break against its own cell's spread. Deterministic for a given seed."""
    if not before or not step:
        return False
    rng = random.Random(seed)
    ratios = []
    for _ in range(ABLATION_NOISE_RESAMPLES):
        a = percentile(rng.choices(step, k=len(step)), 0.5)
        b = percentile(rng.choices(before, k=len(before)), 0.5)
        if math.isinf(b):  # the step before failed at p50: the step cannot be slower than it
            ratios.append(1.0 if math.isinf(a) else 0.0)
        else:
            ratios.append(a / b if b > 0 else (math.inf if a > 0 else 1.0))
    ratios.sort()
    return ratios[int((1 - ABLATION_NOISE_CONF) / 2 * len(ratios))] > 1.0


def _ratio(a, b):
    return finite_or_none(a / b) if a is not None and b else None


def verdict(cs: list[dict], rows: list[dict], co: dict) -> dict:
    """Issue 8's benchmark targets, computed from the cells (see docs/netlab.md, "Verdict")."""
    by = {tuple(c[k] for k in CELL_KEY): c for c in cs}
    configs = sorted(
        {(c["workload"], c["pattern"], c["switch"], c["senders"], c["host_rate_ratio"]) for c in cs},
        key=order,
    )
    per_cell = []
    for w, p, sw, n, ratio in configs:
        get = lambda s: by.get((w, p, sw, n, ratio, TARGET_MSR, s))  # noqa: E731
        full, es, ss = get("atp_full"), get("tcp_es"), get("tcp_ss")
        if not full:
            continue
        item = dict(
            workload=w,
            pattern=p,
            switch=sw,
            senders=n,
            host_rate_ratio=ratio,
            msr=TARGET_MSR,
            ideal_p50_ms=full["ideal_p50_ms"],
            target_ready_p50_ms=full["target_ready_p50_ms"],
            ideal_bg_p50_ms=full.get("ideal_bg_p50_ms"),
            bg_mbps=full.get("bg_mbps"),
            p50_vs_ideal_bg=_ratio(full["p50_ms"], full.get("ideal_bg_p50_ms")),
            p50_vs_es=_ratio(full["p50_ms"], es and es["p50_ms"]),
            p50_vs_ss=_ratio(full["p50_ms"], ss and ss["p50_ms"]),
            p50_vs_ideal=_ratio(full["p50_ms"], full["ideal_p50_ms"]),
            p99_vs_es=_ratio(full["p99_ms"], es and es["p99_ms"]),
        )
        for s in ("atp_full", "atp_paper", "tcp_es", "tcp_ss"):  # absent key: the scheme did not run here
            if get(s):
                item[f"{s}_p50_ms"], item[f"{s}_p99_ms"] = get(s)["p50_ms"], get(s)["p99_ms"]
        if full["p50_ms"] is None:  # more than half of the jobs failed: every ratio target is missed
            item.update(met_p50_vs_es=False, met_p50_vs_ss=False, met_p50_vs_ideal=False)
        else:
            item.update(
                met_p50_vs_es=item["p50_vs_es"] is not None and item["p50_vs_es"] <= TARGET_P50_VS_ES,
                met_p50_vs_ss=item["p50_vs_ss"] is not None and item["p50_vs_ss"] <= TARGET_P50_VS_SS,
                met_p50_vs_ideal=item["p50_vs_ideal"] is not None
                and item["p50_vs_ideal"] <= TARGET_P50_VS_IDEAL,
            )
        if p == "incast" and n >= TARGET_P99_MIN_SENDERS:
            item["met_p99_vs_es"] = (
                full["p99_ms"] is not None
                and item["p99_vs_es"] is not None
                and item["p99_vs_es"] <= TARGET_P99_VS_ES
            )
        per_cell.append(item)

    atp_rows = [r for r in rows if schemes.is_atp(r["scheme"]) and r["experiment"] == "schemes"]
    waits = [r for r in atp_rows if r.get("start_wait_rtts") is not None]
    mono_cells = []
    jcts: dict[tuple, list[float]] = {}
    for r in rows:
        if r["experiment"] == "schemes":
            jcts.setdefault(tuple(r[k] for k in CELL_KEY), []).append(jct_or_inf(r))
    for w, p, sw, n, ratio in configs:
        if ratio != DATACENTER:
            continue
        for msr in sorted({c["msr"] for c in cs}):
            vals = [by.get((w, p, sw, n, ratio, msr, s)) for s in schemes.ABLATION_ORDER]
            if any(v is None for v in vals):
                continue
            p50 = [math.inf if v["p50_ms"] is None else v["p50_ms"] for v in vals]
            order_ = schemes.ABLATION_ORDER
            real = [
                f"{order_[i + 1]}>{order_[i]}"
                for i in range(len(order_) - 1)
                if p50[i + 1] > p50[i]
                and break_beyond_noise(
                    jcts.get((w, p, sw, n, ratio, msr, order_[i]), []),
                    jcts.get((w, p, sw, n, ratio, msr, order_[i + 1]), []),
                )
            ]
            mono_cells.append(
                dict(
                    workload=w,
                    pattern=p,
                    switch=sw,
                    senders=n,
                    msr=msr,
                    p50_ms=dict(zip(schemes.ABLATION_ORDER, [finite_or_none(x) for x in p50])),
                    monotone=all(a >= b for a, b in zip(p50, p50[1:])),
                    breaks_beyond_noise=real,
                )
            )
    dc = [c for c in per_cell if c["host_rate_ratio"] == DATACENTER]
    return dict(
        datacenter_cells=len(dc),
        p50_vs_es_met=sum(c["met_p50_vs_es"] for c in dc),
        p50_vs_ss_met=sum(c["met_p50_vs_ss"] for c in dc),
        p50_vs_ideal_met=sum(c["met_p50_vs_ideal"] for c in dc),
        p99_cells=sum("met_p99_vs_es" in c for c in dc),
        p99_vs_es_met=sum(c.get("met_p99_vs_es", False) for c in dc),
        atp_jobs=len(atp_rows),
        atp_failed=sum(r["status"] != "ok" for r in atp_rows),
        atp_failed_by_scheme={
            s: sum(r["status"] != "ok" for r in atp_rows if r["scheme"] == s)
            for s in sorted({r["scheme"] for r in atp_rows})
        },
        atp_loss_above_allowance=sum(over_allowance(r) for r in atp_rows),
        start_waits_reported=len(waits),
        start_waits_over_target=sum(r["start_wait_rtts"] > TARGET_START_WAIT_RTTS for r in waits),
        monotone_cells=sum(c["monotone"] for c in mono_cells),
        # cells whose every break of the order is within the cell's per-job noise (break_beyond_noise); a reading
        # beside the target, not the target
        ablation_cells_no_real_break=sum(not c["breaks_beyond_noise"] for c in mono_cells),
        ablation_cells=len(mono_cells),
        corun_exact_slack_over_fifo=co.get("exact_slack_over_fifo"),
        corun_exact_slack_over_alone=co.get("exact_slack_over_alone"),
        per_cell=per_cell,
        ablation=mono_cells,
    )


def summarize(out: str, run: dict | None = None) -> dict:
    """Writes out/summary.json from out/jobs.csv (and out/run.json's metadata) and returns it."""
    rows = load_rows(os.path.join(out, "jobs.csv"))
    if run is None and os.path.exists(os.path.join(out, "run.json")):
        with open(os.path.join(out, "run.json")) as f:
            run = json.load(f)
    run = run or {}
    cs = cells(rows)
    co = corun(rows)
    res = dict(
        run=dict(
            name=os.path.basename(os.path.abspath(out)),
            **{k: v for k, v in run.items() if k not in ("params",)},
        ),
        cells=cs,
        corun=co,
        verdict=verdict(cs, rows, co),
        skipped=run.get("skipped", []),
    )
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(res, f, indent=1, allow_nan=False)
        f.write("\n")
    return res


def resolve(path: str | None) -> str:
    """A results directory: the given one, or the run named by benchmarks/results/netlab/latest."""
    if path:
        return path
    with open(os.path.join(RESULTS_ROOT, LATEST)) as f:
        return os.path.join(RESULTS_ROOT, f.read().strip())
