"""Samples the sender hosts' uplink queues (tbf on eth0) of lab NAME every ~20 ms while it runs: per host the largest
backlog seen (bytes) and the tbf drop counter, printed at the end (SIGINT/SIGTERM or after SECONDS).
usage: python3 hostq.py NAME FIRST_HOST LAST_HOST SECONDS"""
import re, signal, subprocess, sys, time
name, h0, h1, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
best, drops, samples = {}, {}, 0
stop = [False]
signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
t_end = time.time() + secs
while not stop[0] and time.time() < t_end:
    for h in range(h0, h1 + 1):
        p = subprocess.run(["ip", "netns", "exec", f"{name}-h{h}", "tc", "-s", "qdisc", "show", "dev", "eth0"],
                           capture_output=True, text=True)
        m = re.search(r"dropped (\d+).*?backlog (\d+)b", p.stdout, re.S)
        if m:
            drops[h] = int(m.group(1))
            b = int(m.group(2))
            if b > best.get(h, (0, 0))[0]:
                best[h] = (b, time.time())
    samples += 1
    time.sleep(0.01)
print(f"samples {samples}")
for h in sorted(best):
    print(f"h{h} max_backlog_bytes {best[h][0]} ({best[h][0] * 8 / 200e6 * 1e3:.1f} ms at 200 Mbit/s) tbf_drops {drops.get(h)}")
