"""How many of the 18 ablation cells (datacenter, MSR 0.5/0.75/0.9, Base >= RC >= RC+MRDF >= Full by p50) differ by
less than the run-to-run spread. Pools every run dir given (jobs.csv) per (workload, pattern, switch, senders, msr,
scheme); per adjacent pair (Base/RC, RC/RC+MRDF, RC+MRDF/Full) it prints the per-run p50 ratios, the pooled ratio and a
bootstrap 90 % interval of the pooled p50 ratio (jobs resampled within each run, seeded).
usage: python3 noise.py RUN_DIR...   (only runs with the same engine behaviour should be pooled)"""
import csv, random, statistics as st, sys
from collections import defaultdict

ORDER = ["atp_base", "atp_rc", "atp_rc_mrdf", "atp_full"]
CELLS = [("fbhd", "all-to-all", "slack", "4"), ("fbhd", "incast", "fifo", "8"), ("fbhd", "incast", "slack", "8"),
         ("fbkv", "all-to-all", "slack", "4"), ("fbkv", "incast", "fifo", "8"), ("fbkv", "incast", "slack", "8")]
jobs = defaultdict(lambda: defaultdict(list))  # (cell, msr, scheme) -> run -> jcts
for run in sys.argv[1:]:
    for x in csv.DictReader(open(f"{run}/jobs.csv")):
        if x["experiment"] != "schemes" or x["host_rate_ratio"] != "1.0" or x["scheme"] not in ORDER + ["atp_fixtlr"]:
            continue
        c = (x["workload"], x["pattern"], x["switch"], x["senders"])
        if c not in CELLS or x["status"] != "ok":
            continue
        jobs[(c, x["msr"], x["scheme"])][run].append(float(x["jct_ms"]))

rng = random.Random(1)


def boot(a, b, n=400):
    """90 % interval of median(pooled a) / median(pooled b), resampling jobs within each run."""
    out = []
    for _ in range(n):
        pa = [v for r in a.values() for v in rng.choices(r, k=len(r))]
        pb = [v for r in b.values() for v in rng.choices(r, k=len(r))]
        out.append(st.median(pa) / st.median(pb))
    out.sort()
    return out[int(0.05 * n)], out[int(0.95 * n) - 1]


runs = sys.argv[1:]
short = [r.rstrip("/").split("/")[-1] for r in runs]
print("runs:", " ".join(short))
noise = real = 0
for c in CELLS:
    for msr in ("0.5", "0.75", "0.9"):
        print(f"\n{'/'.join(c)} msr {msr}: pooled p50 " + " / ".join(
            f"{st.median([v for r in jobs[(c, msr, s)].values() for v in r]):.1f}" for s in ORDER + ["atp_fixtlr"]
            if jobs[(c, msr, s)]) + "  (base / rc / rc_mrdf / full / fixtlr)")
        for hi, lo in zip(ORDER, ORDER[1:]):
            a, b = jobs[(c, msr, hi)], jobs[(c, msr, lo)]
            per = [st.median(a[r]) / st.median(b[r]) for r in runs if a.get(r) and b.get(r)]
            pooled = st.median([v for r in a.values() for v in r]) / st.median([v for r in b.values() for v in r])
            lo_ci, hi_ci = boot(a, b)
            verdict = "holds" if lo_ci >= 1 else ("BROKEN (real)" if hi_ci < 1 else "within noise")
            noise += verdict == "within noise"
            real += verdict.startswith("BROKEN")
            print(f"  {hi:>11s}/{lo:<11s} per run {' '.join(f'{x:.2f}' for x in per)}  pooled {pooled:.2f} "
                  f"[{lo_ci:.2f}, {hi_ci:.2f}] {verdict}")
print(f"\npairs (3 per cell x 18 cells): within noise {noise}, broken beyond the 90 % interval {real}")
