"""Summary of a benchmarks/spark/scale.sh result file: per size, exact vs approximate JCT (medians over rounds),
peak memory, bound check; then approximate peak memory at the largest vs the smallest size."""

import re
import statistics
import sys

rows = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in open(sys.argv[1]) if l.startswith("RESULT")]


def mx(v):
    return max((float(x) for x in v.strip("[]").split(",") if x not in ("", "?")), default=float("nan"))


out = ["# SUMMARY (shared machine: see the load lines above)"]
by = {}
for r in rows:
    by.setdefault((int(r["rows"]), r["mode"]), []).append(r)
sizes = sorted({k[0] for k in by})
for n in sizes:
    ex, ap = by.get((n, "exact"), []), by.get((n, "approx"), [])
    if not ex or not ap:
        continue
    te = statistics.median(float(r["median_s"]) for r in ex)
    ta = statistics.median(float(r["median_s"]) for r in ap)
    out.append(
        f"# query {ap[0].get('query', 'avg')}, rows {n} ({float(ap[0]['generated_gb']):.1f} GB generated, {float(ap[0]['generated_gb']) / 0.512:.0f}x an executor's 512 MB): "
        f"JCT exact {te:.1f} s, approx {ta:.1f} s, ratio {ta / te:.2f} ({len(ap)} round(s))"
    )
    pairs = {r["round"]: float(r["median_s"]) for r in ex}
    paired = [float(r["median_s"]) / pairs[r["round"]] for r in ap if r["round"] in pairs]
    if paired:
        out.append("#   paired approx/exact JCT per round: " + ", ".join(f"{x:.2f}" for x in paired))
    if all("driver_cpu_s" in r for r in ex + ap):
        for key, what in (("driver_cpu_s", "driver"), ("executor_cpu_s", "executors")):
            ce = statistics.median(float(r[key]) for r in ex)
            ca = statistics.median(float(r[key]) for r in ap)
            out.append(
                f"#   CPU seconds per query, {what}: exact {ce:.2f}, approx {ca:.2f}, ratio {ca / ce:.2f} "
                f"(medians over rounds; less load-sensitive than the JCT)"
            )
    for m, rs in (("exact", ex), ("approx", ap)):
        out.append(
            f"#   {m:6s} peak task execution memory {max(float(r['peak_task_exec_mb']) for r in rs):.1f} MB, "
            f"executor peak heap {max(mx(r['executor_peak_heap_mb']) for r in rs):.0f} MB, "
            f"peak RSS {max(mx(r['executor_peak_rss_mb']) for r in rs):.0f} MB, "
            f"spilled {max(float(r['spilled_mb']) for r in rs):.0f} MB, shuffle written {max(float(r['shuffle_write_mb']) for r in rs):.0f} MB"
        )
    for r in ap:
        out.append(
            f"#   approx round {r['round']}: outside e_max {r.get('group_aggregates_outside_emax', '?')} "
            f"(max rel error {float(r.get('max_rel_error', 'nan')) * 100:.2f}%), sample fraction {r.get('sample_fraction', '?')}, "
            f"groups below target {r.get('groups_below_target', '?')}, short of plan {r.get('groups_short_of_plan', '?')}"
        )
ap = [n for n in sizes if by.get((n, "approx"))]
if len(ap) >= 2:
    lo, hi = ap[0], ap[-1]

    def peak(n, key):
        return max(mx(r[key]) if key.startswith("executor") else float(r[key]) for r in by[(n, "approx")])

    out.append(
        f"# approx, input x{hi / lo:.1f} ({lo} -> {hi} rows): peak task execution memory "
        f"{peak(lo, 'peak_task_exec_mb'):.1f} -> {peak(hi, 'peak_task_exec_mb'):.1f} MB, "
        f"executor peak heap {peak(lo, 'executor_peak_heap_mb'):.0f} -> {peak(hi, 'executor_peak_heap_mb'):.0f} MB, "
        f"peak RSS {peak(lo, 'executor_peak_rss_mb'):.0f} -> {peak(hi, 'executor_peak_rss_mb'):.0f} MB"
    )
print("\n".join(out))
