#!/usr/bin/env python3
"""End-to-end tests of atp-perf over real loopback sockets (registered with ctest; see native/CMakeLists.txt).

  atp_perf_test.py verify --atp-perf PATH
      A server with --verify checks every delivered message (bytes, id, group, duplicates, exact-group order, the
      report): transfers with injected loss and several MSRs pass it, and a client that damages every 50th message
      is caught (so the check can fail).

  atp_perf_test.py soak --atp-perf PATH [--churn N] [--aborts K] [--max-connections M]
      Connection churn (N connections: hang-ups, junk, hellos abandoned at once, truncated TCP transfers) and K
      clients killed in the middle of a large job, then a real transfer. The server must keep at most M connection
      threads, keep no finished thread's stack (address-space mappings stay flat), free every aborted job's
      report (RSS stays flat, no session left tracked), and still serve. Quick by default (2000 connections,
      6 aborts, about 20 s); the long soak is
          python3 native/tests/tools/atp_perf_test.py soak --atp-perf native/build/atp-perf --churn 80000 --aborts 40
      (80000 connections: about 33k of them get a thread, past the ~32k at which the old server died with
      std::system_error; the rest are answered busy).

  atp_perf_test.py replay --atp-perf PATH
      An eavesdropper between a client and the server (a relay on the client's path that records the TCP hello and
      every UDP datagram the client sends) replays the whole session afterwards without knowing the secret: the
      server must not run the replayed job (its fresh nonce gives the new session another key and id), and the
      client's own transfer through the relay passes --verify.

Exit status 0 when every check holds; each failed check is printed.
"""

import argparse
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

FAILURES = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


class Server:
    """atp-perf server on 127.0.0.1, ephemeral port; stderr goes to a file we read."""

    def __init__(self, perf, *args, env=None):
        self.err = tempfile.NamedTemporaryFile(prefix="atp-perf-server-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [perf, "server", "--bind", "127.0.0.1", "--port", "0", *args],
            stdout=subprocess.DEVNULL,
            stderr=self.err,
            env=env,
        )
        deadline = time.time() + 30
        self.port = None
        while self.port is None:
            m = re.search(r"listening on \S+ port (\d+)", self.log())
            if m:
                self.port = int(m.group(1))
            elif self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("atp-perf server did not start:\n" + self.log())
            else:
                time.sleep(0.05)

    def log(self):
        with open(self.err.name, errors="replace") as f:
            return f.read()

    def status(self):
        """VmSize, VmRSS (kB) and Threads of the server process, and its number of address-space mappings."""
        out = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmSize", "VmRSS", "Threads"):
                    out[k] = int(v.split()[0])
        with open(f"/proc/{self.proc.pid}/maps") as f:
            out["maps"] = sum(1 for _ in f)
        return out

    def stop(self):
        """SIGTERM; returns the exit summary line."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            check(False, "server stops within 60 s of SIGTERM")
        check(self.proc.returncode == 0, f"server exits with 0 (got {self.proc.returncode})")
        lines = [l for l in self.log().splitlines() if l.startswith("[server] exit:")]
        os.unlink(self.err.name)
        return lines[-1] if lines else ""


def client(perf, port, *args, timeout=120):
    p = subprocess.run(
        [perf, "client", "--connect", "127.0.0.1", "--port", str(port), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
    return p.returncode, result, p.stderr


def summary_field(line, pattern):
    m = re.search(pattern, line)
    return int(m.group(1)) if m else None


# ---- verify -------------------------------------------------------------------------------------------------------

EARLY_END_RUNS = 12


def test_verify(perf):
    srv = Server(perf, "--verify", "--max-connections", "8")
    try:
        rc, r, err = client(
            perf,
            srv.port,
            "--messages",
            "4000",
            "--size",
            "1500",
            "--groups",
            "1.0,0.8,0.5",
            "--drop-out",
            "0.1",
            "--drop-in",
            "0.05",
            "--seed",
            "7",
        )
        check(
            rc == 0 and r is not None and r["status"] == "ok",
            f"lossy transfer passes --verify (rc {rc}, "
            f"status {r and r['status']}){'' if rc == 0 else chr(10) + err[-2000:]}",
        )
        if r:
            v, rep = r["verify"], r["receiver"]
            check(v is not None and v["errors"] == 0 and v["report_checked"], f"verdict: no error ({v})")
            check(
                v is not None and rep is not None and v["messages_checked"] == rep["delivered"],
                "every delivered message was checked",
            )
            check(all(g["delivered"] >= g["target"] for g in rep["groups"]), "every group met its target")
            check(rep["groups"][0]["delivered"] == rep["groups"][0]["size"], "the exact group arrived whole")

        rc, r, _ = client(
            perf,
            srv.port,
            "--messages",
            "800",
            "--size",
            "3000",
            "--groups",
            "1.0,0.6",
            "--test-corrupt-every",
            "50",
        )
        check(
            rc != 0 and r is not None and r["status"] == "verify failed",
            f"damaged messages fail the client (rc {rc}, status {r and r['status']})",
        )
        if r and r["verify"]:
            v = r["verify"]
            # ids 49, 99, ... are damaged: every delivered one must be caught, and nothing else flagged.
            check(
                v["bad_bytes"] >= 1 and v["errors"] == v["bad_bytes"],
                f"the damage is found as bad bytes ({v})",
            )
            check(
                "byte 2999" in v["first_error"],
                f"the first error names the damaged byte ({v['first_error']})",
            )

        rc, r, _ = client(perf, srv.port, "--messages", "3000", "--size", "1", "--groups", "1.0")
        check(
            rc == 0 and r and r["verify"]["errors"] == 0 and r["verify"]["messages_checked"] == 3000,
            "3000 one-byte messages, one exact group: all checked, in order",
        )

        # The receiver holds the 1% it needs long before the sender submitted the rest, so it ends the job
        # early and a later submit can find no job: success, not an error (CI once failed the soak on it;
        # before the fix about one run in three here failed with "submit: not found").
        early = [
            client(perf, srv.port, "--messages", "20000", "--size", "100", "--groups", "0.01")
            for _ in range(EARLY_END_RUNS)
        ]
        bad = [
            (rc, r and r["status"])
            for rc, r, _ in early
            if not (rc == 0 and r is not None and r["status"] == "ok" and r["verify"]["errors"] == 0)
        ]
        check(
            not bad,
            f"jobs the receiver ends early are successes ({len(bad)} of {EARLY_END_RUNS} not: {bad[:3]})",
        )
    finally:
        line = srv.stop()
    check(
        summary_field(line, r"(\d+) verified \((\d+) failed") == 3 + EARLY_END_RUNS and "(1 failed)" in line,
        f"server counted {3 + EARLY_END_RUNS} verified sessions, 1 failed: {line}",
    )
    check(summary_field(line, r"(\d+) sessions still tracked") == 0, "no session left tracked")


# ---- soak ---------------------------------------------------------------------------------------------------------


def hello(udp_port, messages, size, msrs, nonce):
    b = b"ATP3" + struct.pack(">QQHIIH", 0, nonce, udp_port, messages, size, len(msrs))
    return b + b"".join(struct.pack(">d", m) for m in msrs)


def churn_one(port, kind, i):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        if kind == 1:
            s.sendall(b"XXXX")  # not a protocol we speak
        elif kind == 2:
            s.sendall(hello(9, 1000, 100, [0.5], i))  # a session, abandoned at once
        elif kind == 3:
            s.sendall(b"TCP1" + struct.pack(">II", 10, 1000) + b"\0\0")  # a TCP transfer cut short
        # kind 0: connect and hang up


def closed_sessions(srv):
    return len(re.findall(r"\[server\] session [0-9a-f]+ closed", srv.log()))


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    while not pred():
        if time.time() > deadline:
            check(False, what)
            return False
        time.sleep(0.05)
    return True


def test_soak(perf, churn, aborts, max_conn):
    env = dict(os.environ)
    # One malloc arena: RSS then measures what is live, not glibc's per-thread arena caches (a connection thread
    # that frees a report in an arena not used before would read as growth).
    env["MALLOC_ARENA_MAX"] = "1"
    # Under AddressSanitizer freed memory sits in a quarantine (256 MB by default) and would read as a leak here.
    if "ASAN_OPTIONS" in env or "asan" in perf:
        env["ASAN_OPTIONS"] = (
            env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=1:thread_local_quarantine_size_kb=64"
        )
    srv = Server(perf, "--max-connections", str(max_conn), env=env)
    try:
        rc, r, err = client(perf, srv.port, "--messages", "200", "--size", "1000", "--groups", "1.0,0.5")
        check(rc == 0, "warm-up transfer" + ("" if rc == 0 else "\n" + err[-2000:]))
        base = srv.status()
        peak_threads = base["Threads"]
        t0 = time.time()
        for i in range(churn):
            try:
                churn_one(srv.port, i % 4, i)
            except OSError as e:
                check(False, f"connection {i} failed: {e}")
                break
            if i % 50 == 0:
                peak_threads = max(peak_threads, srv.status()["Threads"])
        churn_s = time.time() - t0
        # Let the abandoned sessions notice their clients are gone (each checks every 100 ms).
        wait_for(
            lambda: srv.status()["Threads"] <= base["Threads"], 30, "connection threads end after the churn"
        )
        after_churn = srv.status()

        # Clients killed in the middle of a 2M-message job: the receiver report of each closed job lists every id
        # (8 MB); before the fix each one was kept forever.
        rss_after = []
        for k in range(aborts):
            started = srv.log().count("started on session")
            p = subprocess.Popen(
                [
                    perf,
                    "client",
                    "--connect",
                    "127.0.0.1",
                    "--port",
                    str(srv.port),
                    "--messages",
                    "2000000",
                    "--size",
                    "1",
                    "--groups",
                    "0.5",
                    "--rate-gbps",
                    "0.05",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wait_for(
                lambda: srv.log().count("started on session") > started, 30, f"aborted client {k} started"
            )
            closed = closed_sessions(srv)
            p.kill()
            p.wait()
            wait_for(
                lambda: closed_sessions(srv) > closed, 30, f"server closed the session of aborted client {k}"
            )
            time.sleep(0.3)  # the pump drops the closed session's last events (its report) asynchronously
            rss_after.append(srv.status()["VmRSS"])
        wait_for(lambda: srv.status()["Threads"] <= base["Threads"], 30, "threads end after the aborts")
        after_aborts = srv.status()

        rc, r, err = client(perf, srv.port, "--messages", "2000", "--size", "1000", "--groups", "1.0,0.5")
        check(
            rc == 0 and r["status"] == "ok",
            "the server still serves a transfer after the soak" + ("" if rc == 0 else "\n" + err[-2000:]),
        )
    finally:
        line = srv.stop()
    print(
        f"soak: {churn} connections in {churn_s:.1f} s, {aborts} aborted jobs; server at start {base}, after churn "
        f"{after_churn}, after aborts {after_aborts}, peak threads {peak_threads}"
    )
    print(line)
    # Counted by the server's own thread set: the whole process's thread count also holds threads that are not
    # connection threads (its baseline, sampled once, varied 3-4 and made this check flaky).
    peak_slots = summary_field(line, r"\(peak (\d+) at once\)")
    check(
        peak_slots is not None and peak_slots <= max_conn,
        f"at most {max_conn} connection threads at once "
        f"(peak {peak_slots}; whole process {peak_threads}, base {base['Threads']})",
    )
    check(
        peak_threads <= base["Threads"] + max_conn + 4,
        f"no thread besides the connection threads piles up "
        f"(process peak {peak_threads}, base {base['Threads']}, {max_conn} connection slots)",
    )
    check(
        after_churn["maps"] - base["maps"] < 200,
        f"no stack of a finished thread is kept (mappings "
        f"{base['maps']} -> {after_churn['maps']}; each unjoined thread keeps 2)",
    )
    # The first two aborts warm the allocator up (a report is built and freed: ~16 MB transient); after that RSS
    # must stay flat. A kept report is 8 MB (2M ids), so keeping them grows RSS by >= 8 MB per abort.
    measured = len(rss_after) - 2
    growth_mb = (rss_after[-1] - rss_after[1]) / 1024 if measured > 0 else 0.0
    check(
        measured > 0 and growth_mb < 4 * measured,
        f"aborted jobs' reports are freed: RSS after each abort "
        f"{[round(x / 1024, 1) for x in rss_after]} MB, grew {growth_mb:.1f} MB over the last {measured}",
    )
    check(summary_field(line, r"(\d+) sessions still tracked") == 0, "no session left tracked")
    started, joined = (summary_field(line, r"(\d+) threads started"), summary_field(line, r"/ (\d+) joined"))
    check(
        started is not None and started == joined, f"every connection thread was joined ({started}/{joined})"
    )


# ---- replay -------------------------------------------------------------------------------------------------------


class RecordingRelay:
    """A man in the middle on 127.0.0.1: one TCP connection and the UDP flow of one client, relayed to the server
    on the same port numbers' convention (TCP and UDP share the listening port) and recorded."""

    def __init__(self, server_port):
        self.server = ("127.0.0.1", server_port)
        for _ in range(50):
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind(("127.0.0.1", 0))
            self.port = self.udp.getsockname()[1]
            self.lst = socket.socket()
            try:
                self.lst.bind(("127.0.0.1", self.port))
                break
            except OSError:
                self.lst.close()
                self.udp.close()
        self.lst.listen(1)
        self.udp.settimeout(0.1)
        self.tcp_from_client = bytearray()
        self.datagrams = []
        self.client_udp = None
        self.forwarding = True
        self.stop = False
        self.threads = [
            threading.Thread(target=self._udp, daemon=True),
            threading.Thread(target=self._tcp, daemon=True),
        ]
        for t in self.threads:
            t.start()

    def _udp(self):
        while not self.stop:
            try:
                data, src = self.udp.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not self.forwarding:
                continue
            if src == self.server:
                if self.client_udp:
                    self.udp.sendto(data, self.client_udp)
            else:
                self.client_udp = src
                self.datagrams.append(data)
                self.udp.sendto(data, self.server)

    def _tcp(self):
        c, _ = self.lst.accept()
        s = socket.create_connection(self.server)

        def pump(a, b, record):
            while True:
                try:
                    data = a.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    try:
                        b.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    return
                if record is not None:
                    record.extend(data)
                b.sendall(data)

        back = threading.Thread(target=pump, args=(s, c, None), daemon=True)
        back.start()
        pump(c, s, self.tcp_from_client)
        back.join(30)
        c.close()
        s.close()

    def close(self):
        self.stop = True
        self.udp.close()
        self.lst.close()


def test_replay(perf):
    srv = Server(perf, "--verify", "--timeout", "5")
    relay = RecordingRelay(srv.port)
    try:
        rc, r, err = client(perf, relay.port, "--messages", "300", "--size", "1000", "--groups", "1.0,0.5")
        check(
            rc == 0 and r is not None and r["verify"]["errors"] == 0,
            "a transfer through the recording relay passes --verify"
            + ("" if rc == 0 else "\n" + err[-2000:]),
        )
        relay.forwarding = False
        check(
            len(relay.tcp_from_client) > 0 and len(relay.datagrams) >= 100,
            f"the relay recorded the hello ({len(relay.tcp_from_client)} bytes) and the client's datagrams "
            f"({len(relay.datagrams)})",
        )
        # The replay: the recorded hello on a new connection, then every recorded datagram except CLOSE (type 8,
        # which would end the session early), from the relay's UDP socket.
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(bytes(relay.tcp_from_client))
            reply = s.recv(1)
            check(reply == b"K", f"the server opens a session for the replayed hello ({reply!r})")
            for i, d in enumerate(relay.datagrams):
                if len(d) > 3 and d[3] != 8:
                    relay.udp.sendto(d, ("127.0.0.1", srv.port))
                if i % 20 == 0:
                    time.sleep(0.002)
            s.settimeout(20)
            got = b""
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    got += chunk
            except TimeoutError:
                pass
            # after the reply byte: the server's 16-byte nonce, and no report (a 12-byte header and its JSON)
            check(len(got) <= 16, f"no report for the replayed session ({len(got)} bytes came back)")
        wait_for(
            lambda: "ended without a report" in srv.log(), 30, "the replayed session ends without a report"
        )
    finally:
        relay.close()
        line = srv.stop()
    check(summary_field(line, r"(\d+) verified \(") == 1, f"only the real session was verified: {line}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("test", choices=["verify", "soak", "replay"])
    ap.add_argument("--atp-perf", required=True)
    ap.add_argument("--churn", type=int, default=2000)
    ap.add_argument("--aborts", type=int, default=6)
    ap.add_argument("--max-connections", type=int, default=16)
    a = ap.parse_args()
    if a.test == "verify":
        test_verify(a.atp_perf)
    elif a.test == "replay":
        test_replay(a.atp_perf)
    else:
        test_soak(a.atp_perf, a.churn, a.aborts, a.max_connections)
    print(f"{'PASSED' if not FAILURES else 'FAILED'}: atp-perf {a.test}, {len(FAILURES)} failed checks")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
