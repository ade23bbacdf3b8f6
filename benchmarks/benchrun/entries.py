"""The registry of `benchmarks/run`: one Entry per benchmark and figure. An entry wraps an existing harness
(benchmarks/netlab, sim, spark, flink, kafka, the veth and JMH scripts): it names the harness command(s) for a full
and a --quick run, where the harness's raw output goes (build/bench/<area>/<name>/ unless --raw), and how its
summary (benchmarks/results/<area>/<name>/summary.md + summary.json) is read from that output."""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from benchrun import summary as S

ROOT = S.ROOT
B = os.path.join(ROOT, "benchmarks")
NETLAB_PY = os.path.join(B, "netlab")


@dataclass
class Ctx:
    """What an entry's commands and summarizer see: --quick, the raw-output and summary directories, the arguments
    after `--` (passed to the harness)."""

    quick: bool
    raw: str
    out: str
    extra: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ROOT
    # result files the harness writes at a fixed place (glob relative to ROOT): moved into the raw directory after
    # the step (the harness is not changed to take an output path)
    produces: str | None = None


@dataclass(frozen=True)
class Entry:
    name: str
    area: str
    dir: str  # the summary goes to benchmarks/results/<area>/<dir>/
    measures: str
    needs: str
    root: bool  # needs root / network namespaces
    minutes: int  # expected duration of a full run on an idle 2-core machine
    quick_minutes: int
    quick: str  # what --quick changes
    steps: Callable[[Ctx], list[Step]]
    summarize: Callable[[Ctx], dict]  # -> dict(title, columns, rows, notes?, extra keys of summary.json)
    args: str = ""  # harness arguments the entry requires after `--` (documented in --list)
    plots: bool = False  # the harness writes plots (into the summary directory, or raw files `copy` names)
    # globs of the raw directory whose files are copied next to the summary (plots, per-figure CSVs; flat: the
    # results' .gitignore files keep sub-folders out of git)
    copy: tuple[str, ...] = ()

    @property
    def summary_dir(self) -> str:
        return os.path.join(B, "results", self.area, self.dir)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _texts(raw: str, pattern: str = "*.txt") -> str:
    return "\n".join(_read(p) for p in sorted(glob.glob(os.path.join(raw, pattern))))


def _json(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        return None


def _need(ctx: Ctx, n: int, usage: str) -> list[str]:
    if len(ctx.extra) < n:
        raise SystemExit(f"benchmarks/run: this entry needs harness arguments after --: {usage}")
    return ctx.extra


# ---- summarizers --------------------------------------------------------------------------------------------------


def results_summary(title: str, preferred: list[str]) -> Callable[[Ctx], dict]:
    """A table of the harness's RESULT lines (Spark, Flink, Kafka harnesses), with its own verdict lines as notes."""

    def f(ctx: Ctx) -> dict:
        text = _texts(ctx.raw)
        rows = S.result_lines(text)
        return dict(
            title=title, columns=S.columns_of(rows, preferred), rows=rows, notes=S.verdict_lines(text)
        )

    return f


def cells_summary(title: str, path: Callable[[Ctx], str], preferred: list[str]) -> Callable[[Ctx], dict]:
    """The cells of a summary.json the harness writes itself (kafka / flink / spark e2e, the simulator): the
    table is its cells; summary.json is the harness's document (summary.write, document=)."""

    def f(ctx: Ctx) -> dict:
        doc = _json(path(ctx)) or {}
        rows = doc.get("cells", [])
        return dict(title=title, columns=S.columns_of(rows, preferred, 14), rows=rows, document=doc)

    return f


def netlab_summary(ctx: Ctx) -> dict:
    doc = _json(os.path.join(ctx.raw, "summary.json")) or {}
    if doc:  # the harness's full report (verdict, per-cell tables, co-run, control frames) beside the summary
        sys.path.insert(0, NETLAB_PY)
        from netlab import report

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            report.main(["--results", ctx.raw])
        with open(os.path.join(ctx.out, "report.md"), "w") as f:
            f.write(buf.getvalue())
    rows = doc.get("cells", [])
    cols = ["workload", "pattern", "switch", "senders", "host_rate_ratio", "msr", "scheme", "jobs", "failed"]
    cols += ["p50_ms", "p99_ms", "ideal_p50_ms", "loss_above_allowance"]
    v = doc.get("verdict") or {}
    notes = [f"{k}: {v[k]}" for k in sorted(v) if not isinstance(v[k], list | dict)]
    return dict(title="Network lab: every scheme per cell", columns=cols, rows=rows, notes=notes, verdict=v)


def netlab_ab_summary(ctx: Ctx) -> dict:
    sys.path.insert(0, NETLAB_PY)
    from netlab import stats

    rows = stats.ab_table(ctx.raw)
    cols = list(stats.AB_COLUMNS)
    notes = [
        "a = OLD agent, b = NEW agent; p50 JCT ms pooled over rounds; ci: bootstrap 90 % interval of b/a (jobs "
        "resampled within each round, seeded); per_run: b/a per round (same window)"
    ]
    return dict(title="Network lab A/B of two netlab-agent builds", columns=cols, rows=rows, notes=notes)


def netlab_ablation_summary(ctx: Ctx) -> dict:
    sys.path.insert(0, NETLAB_PY)
    from netlab import schemes, stats

    runs = sorted(glob.glob(os.path.join(ctx.raw, "run-*")))
    rows = stats.ablation_table(runs)
    n = {v: sum(r["verdict"] == v for r in rows) for v in ("holds", stats.NOISE, "broken")}
    notes = [
        f"{len(runs)} runs pooled; adjacent pairs of {' > '.join(schemes.ABLATION_ORDER)} (each step should be no "
        f"slower at p50): holds {n['holds']}, slower within noise {n[stats.NOISE]}, broken beyond the 90 % "
        f"interval {n['broken']}"
    ]
    return dict(
        title="Network lab: the ablation order against run-to-run noise",
        columns=list(stats.ABLATION_COLUMNS),
        rows=rows,
        notes=notes,
    )


def simab_summary(ctx: Ctx) -> dict:
    sys.path.insert(0, NETLAB_PY)
    from netlab import simab

    rows = simab.summarize(ctx.raw)
    cols = ["shape", "mode", "switch", "senders", "seeds", "a_p50_ms", "b_p50_ms", "a_p99_ms", "b_p99_ms"]
    cols += ["geomean_b_over_a", "b_faster", "sign_test_p", "exact_a_p50_ms", "exact_b_p50_ms", "all_done"]
    return dict(title="incast-sim A/B, paired per seed", columns=cols, rows=rows)


def veth_summary(ctx: Ctx) -> dict:
    d = _json(os.path.join(ctx.raw, "latest.json")) or {}
    row = {k: d.get(k) for k in ("atp_gbps", "tcp_gbps", "ratio", "atp_retransmissions", "packets")}
    return dict(
        title="MSR 1 goodput over a veth pair: ATP vs TCP", columns=list(row), rows=[row] if d else [], raw=d
    )


def veth_profile_summary(ctx: Ctx) -> dict:
    rows, side = [], None
    for line in _read(os.path.join(ctx.raw, "output.log")).splitlines():
        if line.startswith("== "):
            side = line[3:].split(" ")[0]
        elif side and "cyc/dgram" in line:
            p = line.split()
            rows.append(
                dict(side=side, share=p[0], cycles_per_datagram=S._num(p[1]), function=" ".join(p[3:]))
            )
    return dict(
        title="Cycle budget per datagram over veth (perf)",
        columns=["side", "share", "cycles_per_datagram", "function"],
        rows=rows,
    )


def jmh_summary(ctx: Ctx) -> dict:
    rows = []
    for p in sorted(glob.glob(os.path.join(ctx.raw, "jmh-*.json"))):
        rows += S.jmh_rows(_json(p) or [])
    notes = S.verdict_lines(_read(os.path.join(ctx.raw, "compare-with-native.txt")))
    cols = ["benchmark", "mode", "params", "score", "error", "unit", "gbits", "payloadBytes"]
    return dict(title="JMH: Java API (and CompareWithNative's ratios)", columns=cols, rows=rows, notes=notes)


def small_messages_summary(ctx: Ctx) -> dict:
    rows = S.json_lines(_read(os.path.join(ctx.raw, "runs.jsonl")))
    notes = S.verdict_lines(_read(os.path.join(ctx.raw, "output.log")))
    return dict(
        title="100-byte messages through atp-perf over loopback, A/B",
        columns=["label", "msgs_per_s", "jct_ms", "datagrams", "status"],
        rows=rows,
        notes=notes,
    )


def java_small_messages_summary(ctx: Ctx) -> dict:
    text = _read(os.path.join(ctx.raw, "output.log"))
    rows = []
    for line in text.splitlines():
        if line.startswith("Java ") and ":" in line:
            what, rest = line.split(":", 1)
            rows.append(dict(path=what.strip(), result=rest.strip()))
    return dict(
        title="100-byte messages through the Java API over loopback, A/B",
        columns=["path", "result"],
        rows=rows,
        notes=S.verdict_lines(text),
    )


# ---- the entries ------------------------------------------------------------------------------------------------


def _netlab_steps(ctx: Ctx) -> list[Step]:
    preset = "quick" if ctx.quick else "full"
    env = {"OUT": ctx.raw, "IMG": os.path.join(ctx.raw, "plots")}
    return [Step(["bash", "benchmarks/netlab/run.sh", preset, *ctx.extra], env)]


def _ab_steps(ctx: Ctx) -> list[Step]:
    old, new, *rest = _need(ctx, 2, "OLD_AGENT NEW_AGENT")
    rounds = "1" if ctx.quick else "2"
    return [Step(["bash", "benchmarks/netlab/ab.sh", old, new, ctx.raw, rounds, *rest])]


def _ablation_steps(ctx: Ctx) -> list[Step]:
    repeats = 1 if ctx.quick else 3
    preset = "tiny" if ctx.quick else "full"
    return [
        Step(
            ["bash", "benchmarks/netlab/run.sh", preset, "--only", "schemes", *ctx.extra],
            {"OUT": os.path.join(ctx.raw, f"run-{k}"), "IMG": os.path.join(ctx.raw, f"img-{k}")},
        )
        for k in range(1, repeats + 1)
    ]


def _simab_steps(ctx: Ctx) -> list[Step]:
    _need(ctx, 2, "--a-sim A/incast-sim --b-sim B/incast-sim [--a-flags='...'] [--b-flags='...']")
    seeds = ["--seeds", "3", "--shapes", "fbkv"] if ctx.quick else ["--seeds", "10"]
    argv = [sys.executable, "-m", "netlab.simab", "run", "--out", ctx.raw, *seeds, *ctx.extra]
    return [Step(argv, {"PYTHONPATH": NETLAB_PY})]


def _veth_steps(ctx: Ctx) -> list[Step]:
    env = {"OUT": ctx.raw} | ({"MESSAGES": "2048"} if ctx.quick else {})
    return [Step(["bash", "benchmarks/netlab/veth_goodput.sh", *ctx.extra], env)]


def _veth_profile_steps(ctx: Ctx) -> list[Step]:
    env = {"OUT": ctx.raw} | ({"MESSAGES": "1024"} if ctx.quick else {})
    return [Step(["bash", "benchmarks/netlab/veth_profile.sh", *ctx.extra], env)]


def _sim_steps(target: str) -> Callable[[Ctx], list[Step]]:
    def f(ctx: Ctx) -> list[Step]:
        if target == "smoke":
            return [Step(["bash", "benchmarks/sim/run.sh", "smoke"], {"SIM_OUT": ctx.raw})]
        preset = "k4" if ctx.quick else "paper"
        return [Step(["bash", "benchmarks/sim/run.sh", target, preset], {"SIM_OUT": ctx.raw})]

    return f


def _spark_local_steps(ctx: Ctx) -> list[Step]:
    args = ["--rows", "200000", "--runs", "2"] if ctx.quick else ["--rows", "1000000", "--runs", "5"]
    env = {"PASSTHROUGH_ROUNDS": "1" if ctx.quick else "5"}
    return [
        Step(
            ["bash", "benchmarks/spark/run.sh", *args, *ctx.extra],
            env,
            produces="benchmarks/results/spark/spark-*.txt",
        )
    ]


def _spark_scale_steps(ctx: Ctx) -> list[Step]:
    env = {"SIZES": "4000000", "ROUNDS": "1"} if ctx.quick else {}
    return [
        Step(
            ["bash", "benchmarks/spark/scale.sh", *ctx.extra],
            env,
            produces="benchmarks/results/spark/scale-2*.txt",
        )
    ]


def _spark_e2e_steps(ctx: Ctx) -> list[Step]:
    summ = os.path.join(ctx.raw, "summary.json")
    cpu = ["--rows", "2000000", "--runs", "1"] if ctx.quick else ["--rows", "85000000", "--runs", "3"]
    net = ["--rows", "1000000", "--runs", "1"] if ctx.quick else ["--rows", "4000000", "--runs", "1"]
    raw_lines = "benchmarks/results/spark/e2e/raw/scale-*.txt"  # where scale.sh --config writes them
    return [
        Step(
            ["bash", "benchmarks/spark/scale.sh", "--config", cfg, *rows, "--summary", summ, *ctx.extra],
            produces=raw_lines,
        )
        for cfg, rows in (("cpu-bound", cpu), ("network-bound", net))
    ]


def _spark_netlab_steps(ctx: Ctx) -> list[Step]:
    args = ["--rows", "200000", "--runs", "2", "--passthrough-rounds", "1"] if ctx.quick else []
    out = os.path.join(ctx.raw, "netlab.txt")
    return [Step(["bash", "benchmarks/spark/netlab/run.sh", "--out", out, *args, *ctx.extra])]


def _spark_netlab_scale_steps(ctx: Ctx) -> list[Step]:
    args = ["--scale-rows", "5000000", "--switch", "fifo"] if ctx.quick else []
    out = os.path.join(ctx.raw, "netlab-scale.txt")
    return [Step(["bash", "benchmarks/spark/netlab/scale.sh", "--out", out, *args, *ctx.extra])]


def _flink_steps(ctx: Ctx) -> list[Step]:
    # issue 32's cells: both switches, the configuration where exact keeps up with the link and where it does not
    # (measured at 200 Mbit/s, 20k records/s: at 600 B exact still kept up, at 1500 B it falls behind, p50 5.6 s)
    base = ["--switch", "slack,fifo", "--configs", "keeps-up:0,falls-behind:1500", "--runs", "3"]
    args = ["--seconds", "10", "--runs", "1", "--skip-overhead"] if ctx.quick else []
    summ = os.path.join(ctx.raw, "summary.json")
    out = os.path.join(ctx.raw, "netlab.txt")
    return [
        Step(
            [
                "bash",
                "benchmarks/flink/netlab/run.sh",
                *base,
                "--summary",
                summ,
                "--out",
                out,
                *args,
                *ctx.extra,
            ]
        )
    ]


def _kafka_steps(ctx: Ctx) -> list[Step]:
    base = ["--modes", "plain,atp,tcp,tcp_ss", "--bg-load", "0.5"]
    args = ["--records", "200000", "--windows", "4", "--strata", "2", "--runs", "1"] if ctx.quick else []
    summ = os.path.join(ctx.raw, "summary.json")
    out = os.path.join(ctx.raw, "netlab.txt")
    return [
        Step(["bash", "benchmarks/kafka/run.sh", *base, "--summary", summ, "--out", out, *args, *ctx.extra])
    ]


def _torch_steps(ctx: Ctx) -> list[Step]:
    args = ["--switch", "slack", "--steps", "12"] if ctx.quick else []
    return [Step(["bash", "benchmarks/torch/run.sh", "--out", ctx.raw, *args, *ctx.extra])]


def _jmh_steps(ctx: Ctx) -> list[Step]:
    env = {"OUT": ctx.raw} | ({"RUNS": "2"} if ctx.quick else {})
    return [Step(["bash", "benchmarks/run-jmh.sh"], env)]


def _small_steps(ctx: Ctx) -> list[Step]:
    _need(ctx, 1, "A/atp-perf [B/atp-perf]")
    env = {"OUT": os.path.join(ctx.raw, "runs.jsonl")} | (
        {"ROUNDS": "1", "MESSAGES": "100000"} if ctx.quick else {}
    )
    return [Step(["bash", "benchmarks/small_messages_ab.sh", *ctx.extra], env)]


def _java_small_steps(ctx: Ctx) -> list[Step]:
    _need(ctx, 4, "A/benchmarks.jar A/atp-perf B/benchmarks.jar B/atp-perf")
    env = {"OUT": os.path.join(ctx.raw, "raw.log")} | ({"ROUNDS": "2", "RUNS": "1"} if ctx.quick else {})
    return [Step(["bash", "benchmarks/java_small_messages_ab.sh", *ctx.extra], env)]


def E2E(_area: str) -> Callable[[Ctx], str]:
    """The summary.json the harness itself writes into the raw directory."""
    return lambda c: os.path.join(c.raw, "summary.json")


ROOT_NS = "root, network namespaces (ip netns), tc; iperf3"
SIM_FIGS = {
    "fig5": "JCT of every scheme vs MSR, all-to-all (FBKV and FBHD)",
    "fig6": "JCT over load",
    "fig9": "JCT vs MSR under incast",
    "fig10": "JCT CDF, incast",
    "fig11": "tail (p99) JCT under incast",
    "fig12": "bytes sent / needed per scheme (approximation efficiency)",
    "fig13": "exact jobs co-running with approximate ones",
    "fig14": "incast degree sweep",
}
SIM_COLS = ["figure", "workload", "pattern", "traffic", "msr", "scheme", "jobs", "failed", "p50_ms", "p99_ms"]
SIM_COLS += ["mean_message_loss", "bytes_sent_ratio", "loss_above_allowance"]


def _sim_entry(fig: str, what: str) -> Entry:
    return Entry(
        name=f"sim-{fig}",
        area="sim",
        dir=fig,
        measures=f"ns-3 simulation of the paper's {fig}: {what} (atp-sim driving the real ATP core, every scheme)",
        needs="ns-3 wheel (installed on first use into build/sim-ns3), CMake + Ninja; no root",
        root=False,
        minutes=120,
        quick_minutes=15,
        quick="the k=4 fat-tree preset instead of paper scale (k=12, 192 hosts, 40G)",
        steps=_sim_steps(fig),
        summarize=cells_summary(f"Simulation, {fig}: {what}", E2E("sim"), SIM_COLS),
        plots=True,
        copy=("*.png", "*.csv", "cells.json"),
    )


def _results_entry(
    name, area, d, measures, needs, root, minutes, quick_minutes, quick, steps, title, cols, args=""
):
    return Entry(
        name=name,
        area=area,
        dir=d,
        measures=measures,
        needs=needs,
        root=root,
        minutes=minutes,
        quick_minutes=quick_minutes,
        quick=quick,
        steps=steps,
        summarize=results_summary(title, cols),
        args=args,
    )


SPARK_COLS = ["switch", "mode", "manager", "rows", "runs", "median_s", "p50_s", "ratio", "max_rel_error"]
SPARK_COLS += ["group_aggregates_outside_emax", "task_cpu_ms", "load_start", "load_end"]

ENTRIES: list[Entry] = [
    Entry(
        name="netlab",
        area="netlab",
        dir="schemes",
        measures="ATP vs TCP-exact/SampleSend/EarlySend, UDP-blast and the ablations under incast and all-to-all on "
        "the emulated congested network; issue 8's verdict, co-run, plots",
        needs=ROOT_NS + "; builds netlab-agent (CMake)",
        root=True,
        minutes=40,
        quick_minutes=7,
        quick="preset quick (8- and 32-sender incast, the stress configuration, co-run, trace) instead of full",
        steps=_netlab_steps,
        summarize=netlab_summary,
        plots=True,
        copy=("plots/*.png", "report.md"),
    ),
    Entry(
        name="netlab-ab",
        area="netlab",
        dir="ab",
        measures="same-window A/B of two netlab-agent builds: ATP Full, paper mode and TCP-ES at MSR 0.75 in four "
        "cells, pooled p50 new/old with a bootstrap interval and verdict",
        needs=ROOT_NS + "; two built netlab-agent binaries",
        root=True,
        minutes=40,
        quick_minutes=20,
        quick="1 alternating round instead of 2",
        steps=_ab_steps,
        summarize=netlab_ab_summary,
        args="OLD_AGENT NEW_AGENT",
    ),
    Entry(
        name="netlab-ablation",
        area="netlab",
        dir="ablation",
        measures="the ablation order Base >= RC >= RC+MRDF >= Full per datacenter cell and MSR, pooled over "
        "repeated runs, each break read against the bootstrap interval (within noise or beyond)",
        needs=ROOT_NS + "; builds netlab-agent",
        root=True,
        minutes=100,
        quick_minutes=5,
        quick="one run of the tiny preset instead of three of the full preset",
        steps=_ablation_steps,
        summarize=netlab_ablation_summary,
    ),
    Entry(
        name="incast-sim-ab",
        area="netlab",
        dir="incast-sim-ab",
        measures="A/B of the native incast simulator (two builds or two flag sets) on the lab's FBKV, FBHD and "
        "co-run shapes, paired per seed: geometric mean of B/A, wins, sign test",
        needs="built incast-sim binaries (native/, target incast-sim); no root",
        root=False,
        minutes=20,
        quick_minutes=2,
        quick="3 seeds of the FBKV shape instead of 10 seeds of every shape",
        steps=_simab_steps,
        summarize=simab_summary,
        args="--a-sim A/incast-sim --b-sim B/incast-sim [--a-flags='...'] [--b-flags='...']",
    ),
    Entry(
        name="veth-goodput",
        area="veth",
        dir="goodput",
        measures="MSR 1 goodput of ATP (atp-perf) against TCP over one veth pair between two namespaces, same run",
        needs="root, network namespaces; native/build/atp-perf (or its path after --)",
        root=True,
        minutes=2,
        quick_minutes=1,
        quick="2,048 messages of 64 KiB instead of 16,384",
        steps=_veth_steps,
        summarize=veth_summary,
    ),
    Entry(
        name="veth-profile",
        area="veth",
        dir="profile",
        measures="cycles per datagram of each end's top functions (perf record) for one MSR 1 transfer over veth",
        needs="root, network namespaces, linux-perf; native/build/atp-perf",
        root=True,
        minutes=2,
        quick_minutes=1,
        quick="1,024 messages instead of 4,096",
        steps=_veth_profile_steps,
        summarize=veth_profile_summary,
    ),
    Entry(
        name="sim-smoke",
        area="sim",
        dir="smoke",
        measures="ns-3 smoke preset: k=4 fat-tree, a few dozen jobs per scheme (what scripts/test.sh checks)",
        needs="ns-3 wheel (installed on first use into build/sim-ns3), CMake + Ninja; no root",
        root=False,
        minutes=2,
        quick_minutes=2,
        quick="the same (the smoke preset is already the small one)",
        steps=_sim_steps("smoke"),
        summarize=cells_summary("Simulation smoke preset", E2E("sim"), SIM_COLS),
        copy=("*.csv", "cells.json"),
    ),
    *[_sim_entry(f, w) for f, w in SIM_FIGS.items()],
    _results_entry(
        "spark-local",
        "spark",
        "local",
        "Spark local-cluster[2,1,1024] over loopback: exact vs approx vs SampleSend JCT and error, then the "
        "plugin's pass-through cost on a non-approximate job (alternating application pairs)",
        "Maven build (mvn install, run by the harness); no root",
        False,
        30,
        8,
        "200,000 rows, 2 runs, 1 pass-through round instead of 1,000,000 rows, 5 runs, 5 rounds",
        _spark_local_steps,
        "Spark on local-cluster: query JCT and pass-through cost",
        SPARK_COLS,
    ),
    _results_entry(
        "spark-scale",
        "spark",
        "scale",
        "Spark at production scale (85M and 340M generated rows on 512 MB executors): exact vs approx JCT, peak "
        "execution memory, heap and RSS",
        "Maven build; no root; ~4 GB free memory",
        False,
        90,
        10,
        "one size of 4,000,000 rows",
        _spark_scale_steps,
        "Spark at production scale",
        SPARK_COLS + ["peak_exec_mb", "exec_rss_mb"],
    ),
    Entry(
        name="spark-e2e",
        area="spark",
        dir="e2e",
        measures="every baseline of issue 31 in one run: exact, atp, tcp_ss, tcp_es, spark_sampleby, spark_sample "
        "for the cpu-bound and the network-bound configuration (JCT p50/p90, groups outside e_max, bottleneck MB)",
        needs="Maven build; no root",
        root=False,
        minutes=120,
        quick_minutes=20,
        quick="2M / 1M rows and 1 run per mode instead of 85M / 4M rows and 3 runs",
        steps=_spark_e2e_steps,
        summarize=cells_summary(
            "Spark: every baseline in one run",
            E2E("spark"),
            [
                "config",
                "switch",
                "mode",
                "runs",
                "p50_s",
                "p90_s",
                "groups_outside",
                "groups",
                "bottleneck_mb",
            ],
        ),
    ),
    _results_entry(
        "spark-netlab",
        "spark",
        "netlab",
        "Spark standalone cluster in the network lab behind the congested switch: exact vs approx vs SampleSend, "
        "then the pass-through cost",
        ROOT_NS + "; Maven build",
        True,
        45,
        10,
        "200,000 rows, 2 runs, 1 pass-through round",
        _spark_netlab_steps,
        "Spark in the network lab",
        SPARK_COLS,
    ),
    _results_entry(
        "spark-netlab-scale",
        "spark",
        "netlab-scale",
        "Spark at production scale in the network lab (85M and 340M rows, FIFO and slack switch): exact vs approx",
        ROOT_NS + "; Maven build (examples/spark)",
        True,
        120,
        15,
        "5,000,000 rows on the FIFO switch only",
        _spark_netlab_scale_steps,
        "Spark at production scale in the network lab",
        SPARK_COLS,
    ),
    Entry(
        name="flink-e2e",
        area="flink",
        dir="e2e",
        measures="Flink standalone cluster in the network lab: window latency p50/p99, records/s and windows "
        "outside e_max of exact, atp, tcp_ss, tcp_es per configuration and switch, then the flag-off overhead",
        needs=ROOT_NS + ", curl; Maven build",
        root=True,
        minutes=45,
        quick_minutes=8,
        quick="10-s runs, 1 run per cell, no overhead pass",
        steps=_flink_steps,
        summarize=cells_summary(
            "Flink: every baseline in one run",
            E2E("flink"),
            [
                "config",
                "switch",
                "mode",
                "runs",
                "windows",
                "p50_ms",
                "p99_ms",
                "records_per_s",
                "windows_outside",
            ],
        ),
    ),
    Entry(
        name="kafka-e2e",
        area="kafka",
        dir="e2e",
        measures="KRaft broker + relays in the network lab, consumer behind a bottleneck: windows/s, bytes on the "
        "consumer's link and windows outside e_max of plain, atp, tcp and tcp_ss",
        needs=ROOT_NS + "; Maven build (approx-kafka-relay.jar)",
        root=True,
        minutes=30,
        quick_minutes=8,
        quick="200,000 records, 4 windows, 2 strata, 1 run",
        steps=_kafka_steps,
        summarize=cells_summary(
            "Kafka: every baseline in one run",
            E2E("kafka"),
            [
                "switch",
                "mode",
                "runs",
                "windows_per_s",
                "consumer_link_mb",
                "windows_outside",
                "segments_over_tcp",
            ],
        ),
    ),
    Entry(
        name="torch-lab",
        area="torch",
        dir="lab",
        measures="3 PyTorch DDP ranks in the network lab behind the congested switch (issue 37): per-step time "
        "of the gradient all-reduce over gloo/TCP, ATP exact and ATP with magnitude groups, accuracy beside it",
        needs=ROOT_NS + "; torch + numpy (TORCH_SITE, scripts/torch-test.sh installs them), cmake + ninja",
        root=True,
        minutes=20,
        quick_minutes=6,
        quick="the slack switch only, 12 steps",
        steps=_torch_steps,
        summarize=cells_summary(
            "PyTorch: DDP step time, gloo vs ATP",
            E2E("torch"),
            ["switch", "mode", "run", "steps", "step_p50_s", "step_p90_s", "accuracy", "by_group"],
        ),
    ),
    Entry(
        name="jmh",
        area="jmh",
        dir="java-api",
        measures="JMH message rate, goodput and submit cost of the Java API, and CompareWithNative (Java API vs "
        "atp-perf, same run)",
        needs="Maven build of benchmarks.jar (run by the harness when stale); no root",
        root=False,
        minutes=3,
        quick_minutes=2,
        quick="2 CompareWithNative runs per workload instead of 5",
        steps=_jmh_steps,
        summarize=jmh_summary,
    ),
    Entry(
        name="small-messages-ab",
        area="jmh",
        dir="small-messages-ab",
        measures="100-byte messages (MSR 1) through atp-perf over loopback, msg/s of one or two builds alternating",
        needs="built atp-perf binaries; no root",
        root=False,
        minutes=3,
        quick_minutes=1,
        quick="1 round of 100,000 messages instead of 3 of 500,000",
        steps=_small_steps,
        summarize=small_messages_summary,
        args="A/atp-perf [B/atp-perf]",
    ),
    Entry(
        name="java-small-messages-ab",
        area="jmh",
        dir="java-small-messages-ab",
        measures="100-byte messages through the Java API over loopback (send and SendBatch), two builds alternating",
        needs="two builds of benchmarks.jar and atp-perf; no root",
        root=False,
        minutes=5,
        quick_minutes=2,
        quick="2 rounds of 1 run instead of 5 rounds of 2",
        steps=_java_small_steps,
        summarize=java_small_messages_summary,
        args="A/benchmarks.jar A/atp-perf B/benchmarks.jar B/atp-perf",
    ),
]

BY_NAME = {e.name: e for e in ENTRIES}
