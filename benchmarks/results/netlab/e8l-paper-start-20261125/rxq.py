"""Samples the receiving host's UDP sockets (lab NAME, host H) every ~5 ms while it runs: the largest Recv-Q seen
(bytes waiting for the receiving agent) and how many samples had any; printed at the end (SIGTERM or SECONDS).
usage: python3 rxq.py NAME H SECONDS"""
import signal, subprocess, sys, time
name, h, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
stop = [False]
signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
t_end, samples, nonzero, best, hist = time.time() + secs, 0, 0, 0, []
while not stop[0] and time.time() < t_end:
    p = subprocess.run(["ip", "netns", "exec", f"{name}-h{h}", "ss", "-uanH"], capture_output=True, text=True)
    q = max([int(l.split()[1]) for l in p.stdout.splitlines() if len(l.split()) > 2] or [0])
    samples += 1
    nonzero += q > 0
    best = max(best, q)
    hist.append(q)
    time.sleep(0.005)
big = sorted(hist)[-10:]
print(f"samples {samples} nonzero {nonzero} max_recvq_bytes {best} largest {big}")
