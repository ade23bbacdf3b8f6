#!/usr/bin/env python3
"""Pack the raw data of benchmark run folders into one size-bounded archive per folder.

A run folder (e.g. benchmarks/results/netlab/<run>) keeps what a reader needs - its summaries (*.md, *.txt,
summary.json, cells.json), plots and annotations - and its raw data (per-job CSVs, traces, logs, the per-round
sub-folders) moves into ``raw.tar.xz`` beside them, restored in place by ``tar -xJf raw.tar.xz``. An archive over
the bound is not kept: the folder's RAW.md then says which commit still holds the files. Files a document cites
(``--cited-by``) stay unpacked.

    python3 benchmarks/pack_raw.py benchmarks/results/netlab/* --cited-by README.md docs
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile

# Top-level names that are raw data; everything inside a sub-folder is raw too.
RAW_SUFFIXES = (".log", ".jsonl", ".sched", ".out", ".done")
RAW_NAMES = {"jobs.csv", "phases.csv", "trace.csv", "trace_bg.json", "run.json"}
ARCHIVE = "raw.tar.xz"
NOTE = "RAW.md"


def is_raw(rel: str) -> bool:
    """Whether a path relative to its run folder is raw data."""
    if os.sep in rel or "/" in rel:
        return True
    return rel in RAW_NAMES or rel.endswith(RAW_SUFFIXES)


def cited_paths(sources: list[str]) -> set[str]:
    """Repository-relative paths under benchmarks/results that the given files or folders' markdown cite."""
    pattern = re.compile(r"benchmarks/results/[A-Za-z0-9_.\-/]+")
    cited: set[str] = set()
    for src in sources:
        files = [src]
        if os.path.isdir(src):
            files = [os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if f.endswith(".md")]
        for f in files:
            with open(f, encoding="utf-8", errors="replace") as fh:
                cited.update(m.rstrip(".,)`") for m in pattern.findall(fh.read()))
    return cited


def cited(path: str, keep: set[str]) -> bool:
    """Whether a repository path is cited: by name, or (inside a run folder) under a cited folder such as
    ``.../<run>/sim/`` or a cited name stem such as ``.../<run>/diag-`` (from ``diag-*``)."""
    for k in keep:
        if path == os.path.normpath(k):
            return True
        if len(k.rstrip("/").split("/")) < 5:
            continue  # a run folder or an area cited as a whole: its raw data may be packed
        if os.path.isdir(k):
            stem = k.rstrip("/") + "/"
        elif k.endswith(("-", "_")):
            stem = k
        else:
            continue
        if path.startswith(stem):
            return True
    return False


def raw_files(run_dir: str, keep: set[str]) -> list[str]:
    """The raw files of a run folder (relative, sorted), without those in ``keep`` (repository paths)."""
    found = []
    for d, _, fs in os.walk(run_dir):
        for f in fs:
            path = os.path.join(d, f)
            rel = os.path.relpath(path, run_dir)
            if rel in (ARCHIVE, NOTE) or not is_raw(rel):
                continue
            if cited(os.path.normpath(path), keep):
                continue
            found.append(rel)
    return sorted(found)


def archive_bytes(run_dir: str, rels: list[str]) -> bytes:
    """A reproducible tar.xz of the files (sorted, owner and times zeroed)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz", preset=9) as tar:
        for rel in rels:
            info = tar.gettarinfo(os.path.join(run_dir, rel), arcname=rel)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(os.path.join(run_dir, rel), "rb") as fh:
                tar.addfile(info, fh)
    return buf.getvalue()


def last_commit(run_dir: str) -> str:
    """The newest commit touching the folder (where removed raw data stays), or 'unknown'."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%h", "--", run_dir], capture_output=True, text=True, check=True
        ).stdout.strip()
        return out or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def pack(run_dir: str, bound_bytes: int, keep: set[str]) -> tuple[int, int, bool]:
    """Pack one folder; returns (raw files, their bytes, archive kept)."""
    rels = raw_files(run_dir, keep)
    if not rels:
        return 0, 0, False
    size = sum(os.path.getsize(os.path.join(run_dir, r)) for r in rels)
    data = archive_bytes(run_dir, rels)
    kept = len(data) <= bound_bytes
    commit = last_commit(run_dir)
    if kept:
        with open(os.path.join(run_dir, ARCHIVE), "wb") as fh:
            fh.write(data)
        line = f"{len(rels)} raw files ({size / 1e6:.1f} MB) are in {ARCHIVE} ({len(data) / 1e6:.2f} MB): `tar -xJf {ARCHIVE}` restores them here."
    else:
        line = (
            f"{len(rels)} raw files ({size / 1e6:.1f} MB; {len(data) / 1e6:.1f} MB packed, over the "
            f"{bound_bytes / 1e6:.0f} MB bound) were removed; commit {commit} still holds them "
            f"(`git checkout {commit} -- {run_dir}`)."
        )
    with open(os.path.join(run_dir, NOTE), "w", encoding="utf-8") as fh:
        fh.write(f"# Raw data of this run\n\n{line}\n")
    for rel in rels:
        os.remove(os.path.join(run_dir, rel))
    for d, subdirs, files in os.walk(run_dir, topdown=False):
        if d != run_dir and not subdirs and not files:
            os.rmdir(d)
    return len(rels), size, kept


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="run folders")
    p.add_argument("--bound-mb", type=float, default=2.0, help="largest archive kept per folder (default 2)")
    p.add_argument(
        "--cited-by", nargs="*", default=[], help="markdown files or folders whose cited paths stay"
    )
    a = p.parse_args(argv)
    keep = cited_paths(a.cited_by)
    for run in a.runs:
        if not os.path.isdir(run):
            continue
        n, size, kept = pack(run, int(a.bound_mb * 1e6), keep)
        if n:
            print(
                f"{run}: {n} raw files, {size / 1e6:.1f} MB -> {'packed' if kept else 'removed (over the bound)'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
