#!/usr/bin/env python3
"""One rank of the PyTorch lab benchmark (benchmarks/torch/run.py starts one per lab namespace; docs/pytorch.md,
"Lab benchmark").

DDP training of a seeded MLP on seeded synthetic blobs (no downloads) with the gradient all-reduce done by
  gloo       DDP's default all-reduce (gloo's ring over TCP),
  atp_exact  the netapprox-torch hook with MagnitudeGroups.exact() (every segment, MSR 1),
  atp        the hook with magnitude groups (--thresholds, --msrs).
Rendezvous: a TCPStore on rank 0's address; gloo binds the interface GLOO_SOCKET_IFNAME (the caller sets it to
the namespace's lab interface). Prints one `RESULT {json}` line: per-step wall times (forward + backward with the
exchange + optimizer step), final test accuracy (identical on every rank: DDP keeps the replicas equal) and, for
the ATP modes, the reduce-scatter segments this rank received per magnitude group ([delivered, sent]).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

CLASSES = 10


def data(seed: int, n: int, features: int, spread: float) -> tuple[torch.Tensor, torch.Tensor]:
    """n points of CLASSES Gaussian blobs (the centres are the same for every seed; the points depend on it)."""
    centers = torch.randn(CLASSES, features, generator=torch.Generator().manual_seed(99)) * spread
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    return centers[y] + torch.randn(n, features, generator=g), y


def model(features: int, hidden: int) -> nn.Module:
    torch.manual_seed(0)  # the same initial weights on every rank and in every mode
    return nn.Sequential(
        nn.Linear(features, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, CLASSES),
    )


def sched_times() -> tuple[float, float]:
    """(on-CPU s, waiting-for-a-CPU s) summed over this process's threads (/proc/self/task/*/schedstat): with the
    wait far above the run time the ranks are starved of CPU, and the network is not what a step measures."""
    run = wait = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/schedstat") as f:
                r, w, _ = f.read().split()
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile; no schedstat in this kernel
        run, wait = run + int(r), wait + int(w)
    return run / 1e9, wait / 1e9


def step_diagnosis(s) -> dict:
    """One all-reduce's phases (ms) and its sending jobs' engine samples: where the step's time went (empty fields
    for a netapprox-torch without them: the runner also measures older versions)."""
    epochs = getattr(s, "epochs", [])
    rates = sorted(e[0] for e in epochs)
    classes: dict[str, int] = {}
    for e in epochs:
        classes[str(e[3])] = classes.get(str(e[3]), 0) + 1
    return {
        "wall_ms": round(s.wall_s * 1e3, 1),
        "phases_ms": {k: round(v * 1e3, 1) for k, v in getattr(s, "phases", {}).items()},
        "epochs": len(epochs),
        "rate_mbps_p10_p50_p90": [round(rates[int(q * (len(rates) - 1))] / 1e6, 1) for q in (0.1, 0.5, 0.9)]
        if rates
        else [],
        "tlr_mean": round(sum(e[1] for e in epochs) / len(epochs), 4) if epochs else None,
        "loss_mean": round(sum(e[2] for e in epochs) / len(epochs), 4) if epochs else None,
        "loss_max": round(max(e[2] for e in epochs), 4) if epochs else None,
        "classes": classes,
        "retransmitted": getattr(s, "retransmitted", None),
        "max_send_jct_ms": round(getattr(s, "max_send_jct_s", 0.0) * 1e3, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="host:port of the TCPStore (rank 0 serves it)")
    ap.add_argument("--host", required=True, help="this rank's lab address (the ATP engine binds it)")
    ap.add_argument("--mode", choices=("gloo", "atp_exact", "atp"), required=True)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--features", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--spread", type=float, default=0.15, help="blob centres' scale (the task's difficulty)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--thresholds", default="0.0002,0.0006")
    ap.add_argument("--msrs", default="0.5,0.8,1.0")
    ap.add_argument(
        "--line-rate-bps", type=int, default=0, help="ATP engine line rate (0: the library default)"
    )
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="DDP bucket_cap_mb")
    ap.add_argument(
        "--trace-epochs", type=int, default=1, help="1: the engine's epoch samples (rate, TLR, loss) per step"
    )
    a = ap.parse_args(argv)

    torch.set_num_threads(1)  # 3 ranks on a small machine: no oversubscription
    mhost, _, mport = a.master.rpartition(":")
    store = dist.TCPStore(
        mhost,
        int(mport),
        a.world,
        is_master=a.rank == 0,
        timeout=datetime.timedelta(seconds=a.timeout),
    )
    dist.init_process_group(
        "gloo", store=store, rank=a.rank, world_size=a.world, timeout=datetime.timedelta(seconds=a.timeout)
    )
    net = model(a.features, a.hidden)
    ddp = DDP(net, bucket_cap_mb=a.bucket_mb)
    atp = None
    if a.mode != "gloo":
        from netapprox_torch import AtpAllReduce, MagnitudeGroups, atp_allreduce_hook

        if a.mode == "atp_exact":
            groups = MagnitudeGroups.exact()
        else:
            groups = MagnitudeGroups(
                tuple(float(t) for t in a.thresholds.split(",")), tuple(float(m) for m in a.msrs.split(","))
            )
        settings = {"line_rate_bps": a.line_rate_bps} if a.line_rate_bps else {}
        settings["trace_epochs"] = a.trace_epochs
        atp = AtpAllReduce(
            dist.PrefixStore("atp", store),
            a.rank,
            a.world,
            host=a.host,
            groups=groups,
            timeout_s=a.timeout,
            seed=7,
            history=a.steps * 8,
            **settings,
        )
        ddp.register_comm_hook(atp, atp_allreduce_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr)
    x, y = data(a.rank + 1, a.steps * a.batch, a.features, a.spread)
    step_s = []
    sched0 = sched_times()
    for step in range(a.steps):
        xb, yb = x[step * a.batch : (step + 1) * a.batch], y[step * a.batch : (step + 1) * a.batch]
        t0 = time.monotonic()
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(xb), yb).backward()
        opt.step()
        step_s.append(time.monotonic() - t0)
        print(f"step {step} {step_s[-1]:.3f} s", flush=True)
    sched = [round(b - a_, 3) for a_, b in zip(sched0, sched_times())]
    tx, ty = data(1000, 4000, a.features, a.spread)
    with torch.no_grad():
        accuracy = float((net(tx).argmax(1) == ty).float().mean())
    by_group: dict[str, list[int]] = {}
    atp_steps, engine_stats = [], {}
    if atp is not None:
        for s in atp.history:
            for g, (d, n) in s.received.items():
                acc = by_group.setdefault(str(g), [0, 0])
                acc[0] += d
                acc[1] += n
        engine_stats = atp.engine.stats()
        atp.close()  # also collects the last step's sender reports
        atp_steps = [step_diagnosis(s) for s in atp.history]
    params = sum(p.numel() for p in net.parameters())
    print(
        "RESULT "
        + json.dumps(
            {
                "rank": a.rank,
                "mode": a.mode,
                "params": params,
                "step_s": [round(s, 4) for s in step_s],
                "accuracy": accuracy,
                "by_group": by_group,
                "atp_steps": atp_steps,
                "engine_stats": engine_stats,
                "sched_run_wait_s": sched,  # the training loop's CPU time and run-queue wait, all threads
            }
        ),
        flush=True,
    )
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
