"""Full vs RC+MRDF (and FixTLR where it ran) on the FIFO switch, MSR 0.75, pooled over every lab run given that has
>= 5 jobs of both schemes in the cell: runs where Full was slower, pooled p50 ratio with a bootstrap 90 % interval
(jobs resampled within runs, seeded), and per-job means of the jobs.csv counters (packets, retransmissions, lost,
epochs, time in class 0) per scheme.
usage: python3 fifo_pool.py RUN_DIR..."""
import csv, random, statistics as st, sys
from collections import defaultdict

rng = random.Random(1)
data = defaultdict(lambda: defaultdict(list))
for d in sys.argv[1:]:
    try:
        rows = list(csv.DictReader(open(d + "/jobs.csv")))
    except OSError:
        continue
    for x in rows:
        if (x["experiment"] != "schemes" or x["host_rate_ratio"] != "1.0" or x["msr"] != "0.75"
                or x["status"] != "ok" or x["pattern"] != "incast"):
            continue
        data[(x["workload"], x["switch"], x["senders"], x["scheme"])][d].append(x)
for w in ("fbhd", "fbkv"):
    for sw in ("fifo", "slack"):
        for n in ("3", "8"):
            a, b = data[(w, sw, n, "atp_full")], data[(w, sw, n, "atp_rc_mrdf")]
            runs = [r for r in a if len(a[r]) >= 5 and len(b.get(r, [])) >= 5]
            if not runs:
                continue
            j = lambda s, r: [float(x["jct_ms"]) for x in s[r]]  # noqa: E731
            per = [st.median(j(a, r)) / st.median(j(b, r)) for r in runs]
            pa = [v for r in runs for v in j(a, r)]
            pb = [v for r in runs for v in j(b, r)]
            bs = sorted(st.median([v for r in runs for v in rng.choices(j(a, r), k=len(a[r]))])
                        / st.median([v for r in runs for v in rng.choices(j(b, r), k=len(b[r]))]) for _ in range(400))
            print(f"{w} {sw} {n}: {len(runs)} runs, Full slower in {sum(p > 1 for p in per)}; pooled p50 Full "
                  f"{st.median(pa):.1f} / RC+MRDF {st.median(pb):.1f} = {st.median(pa) / st.median(pb):.2f} "
                  f"[{bs[20]:.2f}, {bs[379]:.2f}]")
            for name, s in (("full", a), ("rc_mrdf", b)):
                xs = [x for r in runs for x in s[r]]
                m = lambda k: sum(float(x[k] or 0) for x in xs) / len(xs)  # noqa: E731
                c0 = sum(float(x["time_in_class_ms"].split()[0]) for x in xs) / len(xs)
                print(f"    {name:8s} per job: packets {m('packets'):.0f} retx {m('retransmissions'):.1f} lost "
                      f"{m('lost'):.1f} sent {m('sent'):.0f} target {m('target'):.0f} epochs {m('epochs'):.1f} "
                      f"given_up_for_loss {m('given_up_for_loss'):.1f} class0 ms {c0:.1f} jct mean {m('jct_ms'):.1f}")
