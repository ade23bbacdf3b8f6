"""The ctypes binding against the real library: layout, errors, open/close cycles, jobs both ways under loss."""

import os
import time
import unittest

import numpy as np
from netapprox_torch import NativeError, _capi
from netapprox_torch.segments import Collector, Segments


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _threads():
    return len(os.listdir("/proc/self/task"))


def _run_until(engines, want, timeout_s=20):
    """Polls every engine until `want(events)` holds; returns the events seen per engine."""
    seen = [[] for _ in engines]
    deadline = time.monotonic() + timeout_s
    while not want(seen) and time.monotonic() < deadline:
        for k, e in enumerate(engines):
            seen[k].extend(e.poll(5))
    return seen


def _pair(**settings):
    a, b = _capi.Engine(**settings), _capi.Engine(**settings)
    key = os.urandom(32)
    a.open_session(7, key, "127.0.0.1", b.port, True)
    b.open_session(7, key, "127.0.0.1", a.port, False)
    return a, b


class CapiTest(unittest.TestCase):
    def test_config_layout_matches_the_library(self):
        with _capi.Engine() as e:  # the constructor checks na_config's struct_size against the binding
            self.assertGreater(e.port, 0)
        self.assertRegex(_capi.version(), r"^\d+\.\d+\.\d+$")

    def test_errors_name_the_call_and_the_code(self):
        with _capi.Engine() as e:
            with self.assertRaises(NativeError) as ctx:
                e.start_job(12345, 1, [(0, 1, 1.0)])
            self.assertEqual(_capi.NA_ERR_NOT_FOUND, ctx.exception.code)
            self.assertIn("na_job_start", str(ctx.exception))
            with self.assertRaises(ValueError):
                e.open_session(1, b"short", "127.0.0.1", 1, True)
        with self.assertRaises(ValueError):
            _capi.Engine(no_such_setting=1)
        with self.assertRaises(NativeError):
            _capi.Engine("not-an-address")
        closed = _capi.Engine()
        closed.close()
        closed.close()  # twice: a no-op
        with self.assertRaises(NativeError):
            closed.poll(0)

    def test_open_close_cycles_leak_no_fds_or_threads(self):
        for _ in range(3):  # warm up (lazy library state)
            a, b = _pair()
            a.close(), b.close()
        fds, threads = _fds(), _threads()
        for _ in range(150):
            a, b = _pair()
            a.close(), b.close()
        self.assertLessEqual(_fds(), fds)
        self.assertLessEqual(_threads(), threads)

    def test_jobs_with_one_id_in_both_directions_finish_under_loss(self):
        a, b = _pair(fault_drop_outgoing=0.2)
        try:
            for job in range(1, 61):
                n = 1 + job % 5
                groups = [(0, n, 0.5), (1, n, 1.0)]
                for e in (a, b):
                    e.start_job(7, job, groups)
                    msgs = [(0, i, b"x" * 1400) for i in range(n)] + [(1, i, b"y" * 1400) for i in range(n)]
                    self.assertEqual(2 * n, e.submit(7, job, msgs, 1000)[0])

                def done(seen, job=job):
                    ends = {
                        (k, ev.report.is_sender)
                        for k in (0, 1)
                        for ev in seen[k]
                        if ev.report and ev.job == job
                    }
                    return len(ends) == 4

                seen = _run_until([a, b], done)
                self.assertTrue(
                    done(seen), f"job {job}: {[(k, ev.type, ev.job) for k in (0, 1) for ev in seen[k]]}"
                )
                received = [ev.report for ev in seen[1] if ev.report and not ev.report.is_sender][0]
                self.assertGreaterEqual(received.groups[0].delivered, (n + 1) // 2)
                self.assertEqual(n, received.groups[1].delivered)
        finally:
            a.close(), b.close()

    def test_rows_submitted_and_collected_arrive_whole(self):
        # Engine.submit_entries (entries pointing into numpy rows) -> Engine.poll_messages -> Collector, the path
        # AtpAllReduce takes: every value arrives, in 64 KiB messages and in datagram-sized ones, at 20 % loss
        a, b = _pair(fault_drop_outgoing=0.2)
        try:
            chunk = np.random.default_rng(3).standard_normal(50_001).astype(np.float32)
            for job, seg in ((1, 16384), (2, 344)):
                rows = Segments(9, chunk, seg)
                entries = _capi.submit_entries(rows.count)
                entries["index"] = np.arange(rows.count)
                entries["data"], entries["len"] = rows.addresses, rows.lengths
                a.start_job(7, job, [(0, rows.count, 1.0)])
                self.assertEqual((rows.count, _capi.NA_OK), a.submit_entries(7, job, entries, 1000))
                got = Collector(9, chunk.size, seg)

                def take(sessions, jobs, groups, addresses, lengths, got=got, job=job):
                    for s, j, g, addr, n in zip(sessions, jobs, groups, addresses, lengths):
                        self.assertEqual((7, job), (s, j))
                        got.add(g, addr, n)

                deadline, done = time.monotonic() + 20, False
                while not done and time.monotonic() < deadline:
                    for ev in b.poll_messages(5, take):
                        done = done or (ev.type == _capi.EVENT_JOB_DONE and ev.job == job)
                    a.poll(0)
                self.assertTrue(done, f"job {job} not done")
                out = np.zeros(chunk.size, dtype=np.float32)
                self.assertEqual({0: rows.count}, got.place(out))
                self.assertTrue(got.complete())
                np.testing.assert_array_equal(chunk, out)
        finally:
            a.close(), b.close()

    def test_submit_entries_refuses_another_array(self):
        with _capi.Engine() as e, self.assertRaises(ValueError):
            e.submit_entries(7, 1, np.zeros(4, dtype=np.uint64), 0)


if __name__ == "__main__":
    unittest.main()
