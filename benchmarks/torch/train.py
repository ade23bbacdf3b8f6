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
    for step in range(a.steps):
        xb, yb = x[step * a.batch : (step + 1) * a.batch], y[step * a.batch : (step + 1) * a.batch]
        t0 = time.monotonic()
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(xb), yb).backward()
        opt.step()
        step_s.append(time.monotonic() - t0)
        print(f"step {step} {step_s[-1]:.3f} s", flush=True)
    tx, ty = data(1000, 4000, a.features, a.spread)
    with torch.no_grad():
        accuracy = float((net(tx).argmax(1) == ty).float().mean())
    by_group: dict[str, list[int]] = {}
    if atp is not None:
        for s in atp.history:
            for g, (d, n) in s.received.items():
                acc = by_group.setdefault(str(g), [0, 0])
                acc[0] += d
                acc[1] += n
        atp.close()
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
            }
        ),
        flush=True,
    )
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
