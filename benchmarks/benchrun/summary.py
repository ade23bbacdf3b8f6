"""The summary an entry writes: a header naming the command, the commit, the machine's load and whether it was
idle, one markdown table (summary.md) and the same rows with the header in summary.json, both overwritten by each
rerun. Also the parsers of the harnesses' raw outputs (RESULT lines, JMH JSON, atp-perf JSON lines)."""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Idle: before the harness starts, the 1-minute load average is at most IDLE_LOAD_PER_CORE per core and the CPUs
# were busy at most IDLE_CPU_BUSY of a short sample. A loaded machine's numbers are "not of record".
IDLE_LOAD_PER_CORE = 0.25
IDLE_CPU_BUSY = 0.15
IDLE_SAMPLE_S = 2.0


def loadavg() -> list[float]:
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v), idle


def cpu_busy(seconds: float) -> float:
    """Fraction of all CPUs' time spent busy over `seconds`."""
    t0, i0 = _cpu_times()
    time.sleep(seconds)
    t1, i1 = _cpu_times()
    return 0.0 if t1 == t0 else 1 - (i1 - i0) / (t1 - t0)


def idle_verdict(load1: float, busy: float, cores: int) -> tuple[bool, str]:
    """Whether the machine counts as idle before a run, and why (or why not)."""
    ok_load = load1 <= IDLE_LOAD_PER_CORE * cores
    ok_busy = busy <= IDLE_CPU_BUSY
    why = (
        f"1-min load {load1:.2f} on {cores} cores ({'<=' if ok_load else '>'} {IDLE_LOAD_PER_CORE:g}/core), "
        f"CPUs {100 * busy:.0f} % busy over {IDLE_SAMPLE_S:g} s ({'<=' if ok_busy else '>'} "
        f"{100 * IDLE_CPU_BUSY:.0f} %)"
    )
    return ok_load and ok_busy, why


def commit() -> str:
    """HEAD's short hash, "+dirty" when tracked files differ from it; "unknown" outside a checkout."""
    try:
        h = subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", ROOT, "status", "--porcelain", "-uno"], capture_output=True, text=True
        ).stdout.strip()
        return h + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class LoadWatch:
    """Samples the 1-minute load average every `period` seconds while a harness runs (the largest is reported)."""

    def __init__(self, period: float = 5.0):
        self.period, self.samples = period, [loadavg()[0]]
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(self.period):
            self.samples.append(loadavg()[0])

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(timeout=1)
        self.samples.append(loadavg()[0])


def header(
    command: str, harness: Sequence[str], before: dict, after: dict | None, max_load1: float | None
) -> dict:
    """The header of every summary: the entry's command, the harness command(s) it ran, the commit, the date, the
    machine, the load before / after / at most during the run and the idle verdict taken before it."""
    cores = os.cpu_count() or 1
    idle, why = idle_verdict(before["load"][0], before["cpu_busy"], cores)
    return dict(
        command=command,
        harness=list(harness),
        commit=commit(),
        date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        machine=f"{cores} cores, {platform.system()} {platform.release()} {platform.machine()}",
        load_before=before["load"],
        load_after=after["load"] if after else None,
        max_load1_during=max_load1,
        idle=idle,
        idle_reason=why,
        of_record=idle,
    )


def before_run() -> dict:
    """The load average and how busy the CPUs were over IDLE_SAMPLE_S, taken before the harness starts."""
    return dict(load=loadavg(), cpu_busy=cpu_busy(IDLE_SAMPLE_S))


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf"
        a = abs(v)
        return f"{v:,.0f}" if a >= 1000 else f"{v:.1f}" if a >= 100 else f"{v:.2f}" if a >= 1 else f"{v:.3f}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v).replace("|", "\\|")


def markdown(
    title: str, head: dict, columns: Sequence[str], rows: Iterable[dict], notes: Sequence[str] = ()
) -> str:
    rows = list(rows)
    out = [f"# {title}", ""]
    out.append(f"- command: `{head['command']}`")
    for h in head["harness"]:
        out.append(f"- harness: `{h}`")
    out.append(f"- commit: {head['commit']}, {head['date']}, {head['machine']}")
    load = f"before {fmt(head['load_before'])}"
    if head.get("load_after"):
        load += f", after {fmt(head['load_after'])}"
    if head.get("max_load1_during") is not None:
        load += f", largest 1-min load during the run {head['max_load1_during']:.2f}"
    out.append(f"- load average (1/5/15 min): {load}")
    verdict = "idle" if head["idle"] else "NOT idle (shared or loaded machine): not a run of record"
    out.append(f"- machine before the run: {verdict}; {head['idle_reason']}")
    out.append("")
    if rows:
        out.append("| " + " | ".join(columns) + " |")
        out.append("|" + "---|" * len(columns))
        for r in rows:
            out.append("| " + " | ".join(fmt(r.get(c)) for c in columns) + " |")
    else:
        out.append("(no rows: the harness wrote nothing this summary reads)")
    if notes:
        out.append("")
        out.extend(f"- {n}" for n in notes)
    return "\n".join(out) + "\n"


def _clean(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_clean(x) for x in v]
    return v


def write(out_dir: str, title: str, head: dict, columns: Sequence[str], rows: list[dict], **extra) -> None:
    """summary.md and summary.json in out_dir (replaced atomically). extra: more keys of summary.json; with
    document= (the summary a harness writes itself, e.g. kafka/run.py's cells) summary.json is that document, its
    schema kept for the tools that read or merge it, with this summary's header, title and columns under "entry"."""
    os.makedirs(out_dir, exist_ok=True)
    notes = extra.pop("notes", [])
    document = extra.pop("document", None)
    if document is not None:
        doc = dict(
            document, entry=dict(header=head, title=title, columns=list(columns), notes=notes, **extra)
        )
    else:
        doc = dict(header=head, title=title, columns=list(columns), rows=rows, notes=notes, **extra)
    for name, text in (
        ("summary.md", markdown(title, head, columns, rows, notes)),
        ("summary.json", json.dumps(_clean(doc), indent=2) + "\n"),
    ):
        tmp = os.path.join(out_dir, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out_dir, name))


def rel(path: str) -> str:
    """path relative to the checkout when inside it, else absolute."""
    r = os.path.relpath(path, ROOT)
    return path if r.startswith("..") else r


def shell(argv: Sequence[str], env: dict[str, str] | None = None, cwd: str | None = None) -> str:
    """One harness command as a shell line (what --dry-run prints and the header names)."""
    s = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
    s = (s + " " if s else "") + shlex.join(argv)
    if cwd and os.path.abspath(cwd) != ROOT:
        s = f"(cd {shlex.quote(rel(cwd))} && {s})"
    return s


# ---- parsers of the harnesses' outputs ---------------------------------------------------------------------------

_KV = re.compile(r"(\w+)=(\[[^\]]*\]|\S+)")


def _num(v: str):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def result_lines(text: str) -> list[dict]:
    """The `RESULT key=value ...` lines the Spark, Flink and Kafka harnesses print, as dicts (numbers parsed;
    bracketed lists kept as strings)."""
    out = []
    for line in text.splitlines():
        if line.startswith("RESULT"):
            out.append({k: _num(v) if not v.startswith("[") else v for k, v in _KV.findall(line[6:])})
    return out


def verdict_lines(text: str, limit: int = 40) -> list[str]:
    """The harness's own summary lines: non-RESULT lines naming a ratio, verdict or median (at most `limit`)."""
    keep = re.compile(r"ratio|verdict|median|within|outside|B/A|x faster|slower", re.I)
    out = []
    for line in text.splitlines():
        s = line.strip().lstrip("#").strip()
        if s and not line.startswith("RESULT") and keep.search(s):
            out.append(s)
    return out[-limit:]


def columns_of(rows: Sequence[dict], preferred: Sequence[str], limit: int = 12) -> list[str]:
    """The preferred columns the rows have, then the others in first-seen order, at most `limit`."""
    seen: dict[str, None] = {}
    for r in rows:
        seen.update(dict.fromkeys(r))
    cols = [c for c in preferred if c in seen]
    cols += [c for c in seen if c not in cols]
    return cols[:limit]


def jmh_rows(doc: list[dict]) -> list[dict]:
    """JMH's JSON result (-rf json): one row per benchmark, mode and parameter set; secondary metrics as extra
    columns."""
    rows = []
    for b in doc:
        pm = b["primaryMetric"]
        r = dict(
            benchmark=b["benchmark"].rsplit(".", 2)[-2] + "." + b["benchmark"].rsplit(".", 1)[-1],
            mode=b["mode"],
            params=",".join(f"{k}={v}" for k, v in sorted((b.get("params") or {}).items())) or "-",
            score=pm["score"],
            error=pm.get("scoreError"),
            unit=pm["scoreUnit"],
        )
        for k, m in (b.get("secondaryMetrics") or {}).items():
            r[k] = m.get("score")
        rows.append(r)
    return rows


def json_lines(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out
