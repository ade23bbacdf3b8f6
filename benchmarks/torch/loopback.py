#!/usr/bin/env python3
"""Loopback profile of the netapprox-torch all-reduce (issue 37; docs/pytorch.md, "Where the time goes"): W ranks
(processes) on 127.0.0.1, one flat float32 tensor of the lab model's size all-reduced --steps times by gloo and by
AtpAllReduce; per mode the step time p50 (slowest rank per step) and, for ATP, the p50 of each phase of a step
(StepStats.phases) and the engine's counters. No lab, no root; cheap enough for a laptop.

  PYTHONPATH=build/netapprox-torch:build/torch-2.15.0 NETAPPROX_LIBRARY=approx-core/target/native-build/libnetapprox.so \
    python3 benchmarks/torch/loopback.py [--elems 399370] [--steps 30] [--modes gloo,atp_exact,atp] [--profile]

--profile runs rank 0's ATP steps under cProfile and prints its 25 most expensive functions (cumulative).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

MODES = ("gloo", "atp_exact", "atp")


def _rank(rank, world, store_path, out_dir, a):
    torch.set_num_threads(1)
    store = dist.FileStore(store_path, world)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world)
    from netapprox_torch import AtpAllReduce, MagnitudeGroups

    # gradient-like values: most segments below 1e-3, some larger (the lab's thresholds split them)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(a.elems, generator=g) * torch.rand(a.elems, generator=g) * 0.003
    out = {}
    for mode in a.modes.split(","):
        times, cpu, phases, stats = [], [], [], {}
        if mode == "gloo":
            for _ in range(a.steps):
                dist.barrier()
                t0 = time.perf_counter()
                y = x.clone()
                dist.all_reduce(y)
                times.append(time.perf_counter() - t0)
        else:
            groups = (
                MagnitudeGroups.exact()
                if mode == "atp_exact"
                else MagnitudeGroups((0.0008, 0.0013), (0.5, 0.8, 1.0))
            )
            ar = AtpAllReduce(dist.PrefixStore(f"atp-{mode}", store), rank, world, groups=groups, seed=7)
            prof = cProfile.Profile() if a.profile and rank == 0 else None
            for _ in range(a.steps):
                dist.barrier()
                if prof:
                    prof.enable()
                t0, p0, th0 = time.perf_counter(), time.process_time(), time.thread_time()
                ar.allreduce(x)
                times.append(time.perf_counter() - t0)
                # CPU of this step: the Python thread's and the rest of the process's (the engine's I/O thread)
                th = time.thread_time() - th0
                cpu.append([th, time.process_time() - p0 - th])
                if prof:
                    prof.disable()
                h = ar.history[-1]
                phases.append(
                    {"wall": dict(getattr(h, "phases", {})), "cpu": dict(getattr(h, "phases_cpu", {}))}
                )
            stats = ar.engine.stats()
            ar.close()
            if prof:
                s = io.StringIO()
                pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
                print(f"--- rank 0 {mode} cProfile over {a.steps} steps ---\n{s.getvalue()}", flush=True)
        out[mode] = {"times": times, "cpu": cpu, "phases": phases, "stats": stats}
    with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
        json.dump(out, f)
    dist.destroy_process_group()


def _ms(v: float) -> str:
    return f"{v * 1e3:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--world", type=int, default=3)
    ap.add_argument("--elems", type=int, default=399_370, help="tensor size (the lab MLP's parameters)")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args(argv)
    if a.steps <= a.warmup:
        ap.error("need --steps > --warmup")
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_rank, args=(a.world, os.path.join(tmp, "store"), tmp, a), nprocs=a.world, join=True)
        res = []
        for r in range(a.world):
            with open(os.path.join(tmp, f"{r}.json")) as f:
                res.append(json.load(f))
    print(
        f"# {a.world} ranks, {a.elems} float32 ({a.elems * 4 / 1e6:.2f} MB), {a.steps} steps ({a.warmup} warm-up); "
        f"load {os.getloadavg()[0]:.2f}"
    )
    for mode in a.modes.split(","):
        step = [max(r[mode]["times"][s] for r in res) for s in range(a.warmup, a.steps)]
        line = f"{mode:10s} step p50 {_ms(statistics.median(step))} ms (min {_ms(min(step))}, max {_ms(max(step))})"
        names = list(res[0][mode]["phases"][-1]["wall"]) if res[0][mode]["phases"] else []
        for kind in ("wall", "cpu") if names else ():
            # per phase: the p50 over steps of the slowest rank's time in it
            parts = [
                f"{n} {_ms(statistics.median(max(r[mode]['phases'][s][kind].get(n, 0) for r in res) for s in range(a.warmup, a.steps)))}"
                for n in names
            ]
            line += f"\n           phases {kind} p50 (ms, slowest rank): " + ", ".join(parts)
        if res[0][mode]["cpu"]:
            py = statistics.median(
                statistics.mean(r[mode]["cpu"][s][0] for r in res) for s in range(a.warmup, a.steps)
            )
            io = statistics.median(
                statistics.mean(r[mode]["cpu"][s][1] for r in res) for s in range(a.warmup, a.steps)
            )
            line += f"\n           CPU per rank and step p50: Python thread {_ms(py)} ms, engine I/O thread {_ms(io)} ms"
        if res[0][mode]["stats"]:
            st = res[0][mode]["stats"]
            keys = (
                "datagrams_out",
                "datagrams_in",
                "send_syscalls",
                "recv_syscalls",
                "wakeups",
                "loop_iterations",
                "send_eagain",
                "dropped_no_buffer",
                "events_dropped",
            )
            line += "\n           rank 0 engine: " + ", ".join(f"{k} {st[k]}" for k in keys)
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
