"""Runs a function on W ranks (processes) with a shared FileStore and a gloo process group; collects results."""

import json
import os
import tempfile
import traceback

import torch.distributed as dist
import torch.multiprocessing as mp


def _entry(rank, world, fn, store_path, out_dir, args):
    store = dist.FileStore(store_path, world)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world)
    try:
        result = fn(rank, world, dist.PrefixStore("atp", store), *args)
        with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
            json.dump(result, f)
    except BaseException:
        with open(os.path.join(out_dir, f"{rank}.err"), "w") as f:
            f.write(traceback.format_exc())
        raise
    finally:
        dist.destroy_process_group()


def run_ranks(fn, world=3, args=()):
    """fn(rank, world, store, *args) -> JSON-able result, on every rank; returns the results in rank order."""
    with tempfile.TemporaryDirectory() as tmp:
        store_path = os.path.join(tmp, "store")
        mp.spawn(_entry, args=(world, fn, store_path, tmp, args), nprocs=world, join=True)
        out = []
        for r in range(world):
            with open(os.path.join(tmp, f"{r}.json")) as f:
                out.append(json.load(f))
        return out
