#!/usr/bin/env python3
"""Where a window's latency goes: summarizes the per-epoch DEBUG lines of the TaskManager logs of a lab run
with --epoch-log (ApproxSender: the watermark's lag behind the window's end and the time to encode and register
the tail epoch; ApproxReceiver: per remote epoch, the manifest's lag behind its windows' end, the wait until its
transfer started and until it was resolved). Usage: epoch_timeline.py TASKMANAGER_LOG... (prints EPOCHS lines).
Only tail epochs count (a receiver's epoch whose manifest came after its window's end)."""

from __future__ import annotations

import re
import sys

SENDER = re.compile(
    r"tail epoch \d+ of subtask \d+: watermark (-?\d+) ms after the window's end .*"
    r"registered in (\d+) ms"
)
RECEIVER = re.compile(
    r"epoch (pushed|pulled) .*: manifest (-?\d+) ms after its window's end .*transfer started "
    r"(-?\d+) ms and resolved (\d+) ms after the manifest; (\d+) of (\d+) messages"
)


def pct(values: list[int], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def stats(name: str, values: list[int]) -> str:
    return (
        f"{name}_p50={pct(values, 0.5):.0f} {name}_p99={pct(values, 0.99):.0f} "
        f"{name}_max={max(values) if values else float('nan'):.0f}"
    )


def summarize(paths: list[str]) -> list[str]:
    wm, reg = [], []
    by_path: dict[str, tuple[list[int], list[int], list[int]]] = {
        "pushed": ([], [], []),
        "pulled": ([], [], []),
    }
    for p in paths:
        with open(p, errors="replace") as f:
            for line in f:
                m = SENDER.search(line)
                if m:
                    wm.append(int(m.group(1)))
                    reg.append(int(m.group(2)))
                    continue
                m = RECEIVER.search(line)
                if m and int(m.group(2)) >= 0:  # a tail epoch: its manifest came after the window's end
                    lag, started, resolved = by_path[m.group(1)]
                    lag.append(int(m.group(2)))
                    if int(m.group(3)) >= 0:  # -1: resolved before its transfer's start was recorded
                        started.append(int(m.group(3)))
                    resolved.append(int(m.group(4)))
    out = [
        f"EPOCHS side=sender tail_epochs={len(wm)} {stats('watermark_lag_ms', wm)} {stats('register_ms', reg)}"
    ]
    for path, (lag, started, resolved) in by_path.items():
        out.append(
            f"EPOCHS side=receiver path={path} tail_epochs={len(lag)} "
            f"resolved_before_transfer_recorded={len(lag) - len(started)} {stats('manifest_lag_ms', lag)} "
            f"{stats('transfer_start_ms', started)} {stats('resolve_ms', resolved)}"
        )
    return out


if __name__ == "__main__":
    print("\n".join(summarize(sys.argv[1:])))
