"""benchmarks/run: one command per benchmark and figure.

  benchmarks/run --list                       every entry: what it measures, what it needs, its summary file
  benchmarks/run NAME [--quick] [-- ARGS]     run the harness (ARGS go to it), then write
                                              benchmarks/results/<area>/<name>/summary.md + summary.json
  benchmarks/run NAME --dry-run [--quick]     print the harness command(s) and the paths, run nothing
  benchmarks/run NAME --summarize-only        summarize the raw output already in --raw (no harness run)

Raw output goes to build/bench/<area>/<name>/ (--raw DIR to choose), never into git. The summary's header names
the command, the commit, the load average before / after / at most during the run, and whether the machine was
idle before it (if not, the summary says it is not a run of record).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from benchrun import entries as E
from benchrun import summary as S


def list_entries(as_json: bool) -> int:
    if as_json:
        doc = [
            dict(
                name=e.name,
                area=e.area,
                measures=e.measures,
                needs=e.needs,
                root=e.root,
                minutes=e.minutes,
                quick_minutes=e.quick_minutes,
                quick=e.quick,
                args=e.args,
                summary=os.path.relpath(os.path.join(e.summary_dir, "summary.md"), S.ROOT),
                plots=e.plots,
            )
            for e in E.ENTRIES
        ]
        print(json.dumps(doc, indent=2))
        return 0
    for e in E.ENTRIES:
        print(f"{e.name}{' ' + e.args if e.args else ''}")
        print(f"    measures: {e.measures}")
        print(f"    needs:    {e.needs}; ~{e.minutes} min (--quick ~{e.quick_minutes} min: {e.quick})")
        plots = " + plots" if e.plots else ""
        print(f"    summary:  {os.path.relpath(e.summary_dir, S.ROOT)}/summary.md, summary.json{plots}")
    return 0


def _tee(step: E.Step, log_path: str) -> int:
    env = dict(os.environ, **step.env)
    with open(log_path, "a") as log:
        log.write(f"$ {S.shell(step.argv, step.env, step.cwd)}\n")
        log.flush()
        p = subprocess.Popen(
            step.argv, cwd=step.cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert p.stdout is not None
        for line in p.stdout:
            sys.stdout.write(line)
            log.write(line)
        return p.wait()


def _collect(pattern: str, since: float, raw: str) -> list[str]:
    moved = []
    for p in sorted(glob.glob(os.path.join(S.ROOT, pattern))):
        if os.path.getmtime(p) >= since:
            dst = os.path.join(raw, os.path.basename(p))
            shutil.move(p, dst)
            moved.append(dst)
    return moved


def _clear_summary(e: E.Entry, d: str) -> None:
    """What a previous run of the entry wrote next to its summary in d (a rerun overwrites it)."""
    for name in ("summary.md", "summary.json"):
        if os.path.exists(os.path.join(d, name)):
            os.remove(os.path.join(d, name))
    for pattern in e.copy:
        for p in glob.glob(os.path.join(d, os.path.basename(pattern))):
            if os.path.isfile(p):
                os.remove(p)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    ap = argparse.ArgumentParser(
        prog="benchmarks/run",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawTextHelpFormatter,
    )
    ap.add_argument("name", nargs="?", help="the entry (benchmarks/run --list)")
    ap.add_argument("--list", action="store_true", help="list every entry and exit")
    ap.add_argument("--json", action="store_true", help="with --list: as JSON")
    ap.add_argument("--quick", action="store_true", help="the entry's short variant (see --list)")
    ap.add_argument(
        "--dry-run", action="store_true", help="print the harness command(s) and paths; run nothing"
    )
    ap.add_argument("--raw", help="directory of the harness's raw output (default build/bench/<area>/<name>)")
    ap.add_argument("--summarize-only", action="store_true", help="summarize the raw output already in --raw")
    ap.add_argument(
        "--out", help="write the summary here instead of benchmarks/results/<area>/<name> (e.g. a trial)"
    )
    a = ap.parse_args(argv)
    if a.list:
        return list_entries(a.json)
    if not a.name:
        ap.error("name an entry (benchmarks/run --list)")
    e = E.BY_NAME.get(a.name)
    if e is None:
        print(f"benchmarks/run: unknown entry {a.name!r}; entries: {', '.join(E.BY_NAME)}", file=sys.stderr)
        return 2
    raw = os.path.abspath(a.raw or os.path.join(S.ROOT, "build", "bench", e.area, e.dir))
    out = os.path.abspath(a.out or e.summary_dir)
    ctx = E.Ctx(quick=a.quick, raw=raw, out=out, extra=extra)
    command = "benchmarks/run " + shlex.join(argv + (["--", *extra] if extra else []))
    if a.summarize_only:
        steps: list[E.Step] = []
    else:
        try:
            steps = e.steps(ctx)
        except SystemExit as x:
            print(x, file=sys.stderr)
            return 2
    lines = [S.shell(s.argv, s.env, s.cwd) for s in steps]
    if a.dry_run:
        print(
            f"entry:   {e.name} ({'quick' if a.quick else 'full'}; ~{e.quick_minutes if a.quick else e.minutes} min)"
        )
        print(f"raw:     {raw}")
        print(f"summary: {S.rel(out)}/summary.md, summary.json")
        for line in lines:
            print(f"run:     {line}")
        for s in steps:
            if s.produces:
                print(f"collect: {s.produces} (written during the run) -> {raw}/")
        return 0
    if steps and e.root and os.geteuid() != 0:
        print(f"benchmarks/run: {e.name} needs root ({e.needs})", file=sys.stderr)
        return 2
    before = S.before_run()
    with S.LoadWatch() as watch:
        if steps:
            shutil.rmtree(raw, ignore_errors=True)
            os.makedirs(raw)
        for s in steps:
            t0 = time.time() - 1
            rc = _tee(s, os.path.join(raw, "output.log"))
            if s.produces:
                _collect(s.produces, t0, raw)
            if rc != 0:
                print(
                    f"benchmarks/run: {e.name}: harness exited {rc}: {S.shell(s.argv, s.env, s.cwd)}; the previous "
                    f"summary is kept; raw output in {raw}",
                    file=sys.stderr,
                )
                return rc
    after = dict(load=S.loadavg())
    if os.path.realpath(raw) != os.path.realpath(out):
        _clear_summary(e, out)
    os.makedirs(out, exist_ok=True)
    for pattern in e.copy if os.path.realpath(raw) != os.path.realpath(out) else ():
        for p in glob.glob(os.path.join(raw, pattern)):
            if os.path.isfile(p):
                shutil.copy2(p, out)
    doc = e.summarize(ctx)
    harness = lines or [f"(summarized from the raw output in {S.rel(raw)})"]
    head = S.header(command, harness, before, after, max(watch.samples))
    head["raw"] = S.rel(raw)
    head["quick"] = a.quick
    title, columns, rows = doc.pop("title"), doc.pop("columns"), doc.pop("rows")
    S.write(out, title, head, columns, rows, **doc)
    print(f"benchmarks/run: {S.rel(out)}/summary.md ({len(rows)} rows)")
    return 0
