"""Workloads for the netlab benchmarks: jobs with message-size and production (inter-arrival) distributions in
the spirit of the NetApprox paper's FBKV and FBHD traces, placed on hosts by a traffic pattern. Python stdlib only.

A *job* is N messages from one sender to one receiver with one MSR. Its messages are *produced* over time (the
application makes them ready one by one: inter-arrival gaps), which is what separates SampleSend (bound by the
production of the last sampled message) from EarlySend and ATP (which can finish as soon as enough arrived).

Distributions (documented in docs/netlab.md, "Workloads"):

FBKV - Facebook key-value store, Atikoglu et al., SIGMETRICS'12 ("Workload Analysis of a Large-scale Key-value
  Store", ETC pool, the paper's [11]):
    value size  ~ Generalized Pareto(mu=0, sigma=214.476, xi=0.348238) bytes   (paper's Table/Fig. fit for ETC)
    key size    ~ GEV(mu=30.7984, sigma=8.20449, xi=0.078688) bytes
    message     = key + value, clamped to [16 B, 64 KiB]
    inter-arrival between messages of a job ~ Generalized Pareto(mu=0, sigma=16.0292 us, xi=0.154971)
    messages per job: uniform integer in [200, 800] ("small jobs of small messages"; the trace has no job
    notion, so this is our choice)
FBHD - Facebook Hadoop cluster, Roy et al., SIGCOMM'15 ("Inside the Social Network's (Datacenter) Network", the
  paper's [53]): Hadoop flows are mostly small with a heavy tail up to tens of MB; we model a shuffle job's
  messages as
    message size ~ lognormal(median 24 KiB, sigma 1.0), clamped to [1 KiB, 1 MiB]
    inter-arrival between messages ~ exponential(mean 500 us) (a map task emitting output partitions at
    ~650 Mbit/s on average, a few times the emulated bottleneck)
    messages per job: uniform integer in [40, 160]
  These parameters are ours (the paper does not publish its fit); they only need to give "larger jobs" than
  FBKV, as the paper's section 7 says.
Job arrivals: Poisson, rate chosen so that the offered load (sum of job bytes per second) is `load` x the
bottleneck rate.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random


def gpd(r: random.Random, mu: float, sigma: float, xi: float) -> float:
    u = r.random()
    return mu + sigma * ((1 - u) ** (-xi) - 1) / xi


def gev(r: random.Random, mu: float, sigma: float, xi: float) -> float:
    u = min(max(r.random(), 1e-12), 1 - 1e-12)
    return mu + sigma * ((-math.log(u)) ** (-xi) - 1) / xi


@dataclasses.dataclass
class Job:
    id: int
    start_us: int
    sender: int  # host index (1-based)
    receiver: int
    msr: float
    sizes: list[int]
    offsets_us: list[int]  # production time of each message, from the job's start
    scheme: str = "atp"  # filled in per phase
    trace: bool = False
    kind: str = "approx"  # approx | exact

    @property
    def bytes(self) -> int:
        return sum(self.sizes)


def _fbkv_job(r: random.Random) -> tuple[list[int], list[int]]:
    n = r.randint(200, 800)
    sizes, offs, t = [], [], 0.0
    for _ in range(n):
        v = gpd(r, 0, 214.476, 0.348238) + gev(r, 30.7984, 8.20449, 0.078688)
        sizes.append(int(min(max(v, 16), 65536)))
        offs.append(int(t))
        t += gpd(r, 0, 16.0292, 0.154971)
    return sizes, offs


def _fbhd_job(r: random.Random) -> tuple[list[int], list[int]]:
    n = r.randint(40, 160)
    sizes, offs, t = [], [], 0.0
    for _ in range(n):
        sizes.append(int(min(max(r.lognormvariate(math.log(24 * 1024), 1.0), 1024), 1 << 20)))
        offs.append(int(t))
        t += r.expovariate(1 / 500.0)
    return sizes, offs


WORKLOADS = {"fbkv": _fbkv_job, "fbhd": _fbhd_job}


@functools.cache
def mean_job_bytes(workload: str, samples: int = 400, seed: int = 99) -> float:
    r = random.Random(seed)
    return sum(sum(WORKLOADS[workload](r)[0]) for _ in range(samples)) / samples


def generate(
    workload: str,
    n_jobs: int,
    senders: list[int],
    receivers: list[int],
    msrs: list[float],
    rate_bps: int,
    load: float,
    seed: int,
    pattern: str = "incast",
    first_id: int = 1,
) -> list[Job]:
    """n_jobs jobs with Poisson arrivals at `load` x rate_bps offered load. pattern: incast (every sender ->
    receivers[0]) or all-to-all (each job: a random sender, a random other host as receiver)."""
    r = random.Random(seed)
    # Incast senders come from their own stream, so the sizes and arrivals of a seed stay what they were.
    placement = random.Random(seed * 7919 + 17)
    mean_b = mean_job_bytes(workload)
    lam = load * rate_bps / 8 / mean_b  # jobs per second
    t, jobs = 0.0, []
    hosts = sorted(set(senders) | set(receivers))
    order: list[int] = []
    for i in range(n_jobs):
        sizes, offs = WORKLOADS[workload](r)
        if pattern == "incast":
            # Every sender once per block of len(senders) consecutive jobs (balanced, arrivals spread over the
            # hosts), in a fresh random order per block: a fixed round robin aliases with the MSR's round robin
            # below (3 senders and 3 MSRs put every job of one MSR on one host).
            if not order:
                order = list(senders)
                placement.shuffle(order)
            s, d = order.pop(), receivers[0]
        else:
            s = r.choice(hosts)
            d = r.choice([h for h in hosts if h != s])
        jobs.append(Job(first_id + i, int(t * 1e6), s, d, msrs[i % len(msrs)], sizes, offs))
        t += r.expovariate(lam)
    return jobs


def write_schedule(path: str, jobs: list[Job], port: int, subnet: str = "10.77.0") -> None:
    with open(path, "w") as f:
        for j in jobs:
            f.write(
                f"job {j.id} {j.start_us} {j.scheme} {subnet}.{j.receiver} {port} {j.msr} {len(j.sizes)} "
                f"{1 if j.trace else 0}\n"
            )
            f.write(" ".join(map(str, j.sizes)) + "\n")
            f.write(" ".join(map(str, j.offsets_us)) + "\n")
