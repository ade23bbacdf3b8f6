"""Per run directory (hd32-1, rep-*): for each (switch, senders), ATP Full and RC+MRDF p50 of the MSR-0.75 jobs (the
verdict cell) and of all 45 jobs, Full/RC+MRDF, Full's median time in class 1, and from phases.csv the background's
delivered rate, the port's Mbit/s and per-class drops (class 0 / 1 / 2-7) for Full. usage: python3 pool.py DIR..."""
import csv, os, statistics as st, sys

print("| run | switch | senders | Full p50@.75 | RC+MRDF p50@.75 | ratio | Full p50 all | RC+MRDF p50 all | ratio all | "
      "Full class-1 ms p50 | bg Mbit/s (Full phase) | port Mbit/s Full / RC+MRDF | Full drops c0 / c1 / c2-7 (c1 drop share) | load1 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    rows = list(csv.DictReader(open(os.path.join(d, "jobs.csv"))))
    ph = {(r["switch"], r["senders"], r["scheme"]): r for r in csv.DictReader(open(os.path.join(d, "phases.csv")))}
    for sw, n in sorted({(r["switch"], r["senders"]) for r in rows}, key=lambda k: (k[0], int(k[1]))):
        def sel(s, msr=None):
            return [r for r in rows if r["switch"] == sw and r["senders"] == n and r["scheme"] == s
                    and (msr is None or r["msr"] == msr)]
        f75, r75 = st.median(float(r["jct_ms"]) for r in sel("atp_full", "0.75")), \
            st.median(float(r["jct_ms"]) for r in sel("atp_rc_mrdf", "0.75"))
        fa, ra = st.median(float(r["jct_ms"]) for r in sel("atp_full")), \
            st.median(float(r["jct_ms"]) for r in sel("atp_rc_mrdf"))
        c1 = st.median(float(r["time_in_class_ms"].split()[1]) for r in sel("atp_full"))
        p, q = ph[(sw, n, "atp_full")], ph[(sw, n, "atp_rc_mrdf")]
        port = lambda x: sum(float(v) for v in x["port_mbps"].split())     # noqa: E731
        dr = [int(v) for v in p["port_drops"].split()]
        pk = [int(v) for v in p["port_pkts"].split()]
        c1share = f"{dr[1] / (dr[1] + pk[1]):.2f}" if len(dr) > 1 and dr[1] + pk[1] else "-"
        drops = f"{dr[0]} / {dr[1]} / {sum(dr[2:])} ({c1share})" if len(dr) > 1 else f"{dr[0]}"
        print(f"| {os.path.basename(d)} | {sw} | {n} | {f75:.0f} | {r75:.0f} | {f75 / r75:.2f} | {fa:.0f} | {ra:.0f} | "
              f"{fa / ra:.2f} | {c1:.0f} | {p['bg_mbps']} | {port(p):.1f} / {port(q):.1f} | {drops} | "
              f"{float(p['load1']):.1f} |")
