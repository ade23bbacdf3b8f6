"""All-reduce of flat float32 gradients over ATP: approximate reduce-scatter, exact all-gather.

Each of the W ranks owns one ATP engine and one authenticated session per peer. A step (one DDP bucket) is:
1. reduce-scatter: rank r sends chunk p of its gradient to rank p as one ATP job whose groups are the chunk's
   segments by magnitude (`MagnitudeGroups`), each group with its MSR; within a group the segments go in a fresh
   random order every step, so the segments ATP gives up (beyond the target once the receiver holds it, or lost)
   are not always the same parameters. Rank p sums the W contributions to its chunk in rank order; a segment that
   did not arrive counts as zeros (the paper's section 6);
2. all-gather: rank p sends its reduced chunk to every peer as one exact job (MSR 1: reliable, in order), so every
   rank ends with the same result.
With `MagnitudeGroups.exact()` every message is delivered and the result is the sum of the W gradients in rank
order (gloo's all-reduce up to float summation order).

Rendezvous uses a `torch.distributed` store (TCPStore, FileStore, ...): each rank publishes its engine's address;
the lower rank of each pair writes a fresh random 32-byte session key. Whoever can read the store can read the keys:
it must be the job's own store, as for gloo.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import torch

from . import _capi
from .segments import DEFAULT_SEGMENT_ELEMS, Collector, MagnitudeGroups, Segments, bounds

# values per message of exact jobs (the all-gather; the reduce-scatter in exact mode): 64 KiB, ~45 datagrams
DEFAULT_EXACT_SEGMENT_ELEMS = 16384

_RS, _AG = 0, 1
_MAX_EPOCHS = 4096  # epoch samples kept per step (StepStats.epochs)


@dataclass
class StepStats:
    """What one all-reduce sent and received (this rank's view)."""

    step: int
    elements: int
    wall_s: float = 0.0
    # reduce-scatter segments this rank received, per magnitude group: [delivered, size (segments sent to it)]
    received: dict[int, list[int]] = field(default_factory=dict)
    bytes_sent: int = 0
    # seconds per phase of the step (segment, rs_submit, rs_wait, rs_place, sum, ag_submit, ag_wait, ag_place,
    # reports; recv_copy = the part of the waits spent copying arrived messages): where a step's time goes; wall
    # time, and this thread's CPU time (without the engine's I/O thread; below the wall time when the CPU is shared)
    phases: dict[str, float] = field(default_factory=dict)
    phases_cpu: dict[str, float] = field(default_factory=dict)
    # engine epoch samples of this rank's sending jobs (engine setting trace_epochs=1), at most `_MAX_EPOCHS`:
    # (rate bit/s, target loss rate, measured loss, priority class)
    epochs: list[tuple[float, float, float, int]] = field(default_factory=list)
    # this rank's sending jobs (reduce-scatter and all-gather to every peer): packets retransmitted, slowest JCT
    retransmitted: int = 0
    max_send_jct_s: float = 0.0

    def delivered_fraction(self, group: int | None = None) -> float:
        items = [v for k, v in self.received.items() if group is None or k == group]
        size = sum(v[1] for v in items)
        return sum(v[0] for v in items) / size if size else 1.0


class _Phases:
    """Accumulates the wall and thread CPU time since the last lap into `wall[name]`, `cpu[name]`."""

    def __init__(self, wall: dict[str, float], cpu: dict[str, float]):
        self.wall, self.cpu = wall, cpu
        self.t, self.c = time.perf_counter(), time.thread_time()

    def lap(self, name: str) -> None:
        now, c = time.perf_counter(), time.thread_time()
        self.wall[name] = self.wall.get(name, 0.0) + now - self.t
        self.cpu[name] = self.cpu.get(name, 0.0) + c - self.c
        self.t, self.c = now, c


class AtpAllReduce:
    """One rank's ATP all-reduce. `allreduce(tensor)` returns the sum over the ranks (a new tensor); every rank calls
    it with tensors of the same size in the same order (as DDP's buckets are). Close it when done."""

    def __init__(
        self,
        store,
        rank: int,
        world_size: int,
        *,
        host: str = "127.0.0.1",
        groups: MagnitudeGroups | None = None,
        segment_elems: int = DEFAULT_SEGMENT_ELEMS,
        exact_segment_elems: int = DEFAULT_EXACT_SEGMENT_ELEMS,
        timeout_s: float = 60.0,
        prefix: str = "netapprox",
        seed: int = 0,
        max_buffered_bytes: int = 256 << 20,
        history: int = 1000,
        **engine_settings,
    ):
        if world_size < 1 or not (0 <= rank < world_size):
            raise ValueError(f"netapprox: rank {rank} of world size {world_size}")
        if not (1 <= segment_elems <= (1 << 20)):
            raise ValueError(f"netapprox: segment_elems must be in [1, 2^20], got {segment_elems}")
        if not (1 <= exact_segment_elems <= (1 << 20)):
            raise ValueError(
                f"netapprox: exact_segment_elems must be in [1, 2^20], got {exact_segment_elems}"
            )
        self.rank, self.world_size = rank, world_size
        self.groups = groups or MagnitudeGroups()
        self.segment_elems, self.exact_segment_elems = segment_elems, exact_segment_elems
        self.timeout_s = timeout_s
        self.seed = seed
        self.max_buffered_bytes = max_buffered_bytes
        self.step = 0
        self.history: deque[StepStats] = deque(maxlen=history)  # the last `history` steps
        self._early: dict[
            tuple[int, int], list[tuple[int, bytes]]
        ] = {}  # jobs of a later step, until it starts
        self._early_bytes = 0
        self._done: dict[tuple[int, int, bool], _capi.Report] = {}
        self._want: dict[
            tuple[int, int], Collector
        ] = {}  # (session, job) -> receiver of this step's messages
        self._copy_s = 0.0
        self._stats: StepStats | None = None  # the running step's, for epoch samples
        self._unreported: list[
            tuple[int, int, StepStats]
        ] = []  # (session, job, its step) sent, report pending
        self.engine = _capi.Engine(host, 0, **engine_settings)
        try:
            self._sessions = self._rendezvous(store, host, prefix)
        except BaseException:
            self.engine.close()
            raise
        self._peer_of = {s: p for p, s in self._sessions.items()}
        self._store, self._prefix = store, prefix

    def _rendezvous(self, store, host: str, prefix: str) -> dict[int, int]:
        store.set(f"{prefix}/addr/{self.rank}", f"{host}:{self.engine.port}")
        if self.rank == 0:
            store.set(f"{prefix}/nonce", str(int.from_bytes(os.urandom(4), "little") >> 1))
        nonce = int(store.get(f"{prefix}/nonce"))
        sessions = {}
        for peer in range(self.world_size):
            if peer == self.rank:
                continue
            lo, hi = min(self.rank, peer), max(self.rank, peer)
            key_name = f"{prefix}/key/{lo}/{hi}"
            if self.rank == lo:
                store.set(key_name, os.urandom(32).hex())
            key = bytes.fromhex(store.get(key_name).decode())
            peer_host, peer_port = store.get(f"{prefix}/addr/{peer}").decode().rsplit(":", 1)
            session = (nonce << 24) | (lo * self.world_size + hi)
            self.engine.open_session(session, key, peer_host, int(peer_port), initiator=self.rank == lo)
            sessions[peer] = session
        return sessions

    # -- event routing ------------------------------------------------------------------------------------------

    def _pump(self, timeout_ms: int) -> None:
        for e in self.engine.poll_messages(timeout_ms, self._on_messages):
            if e.type == _capi.EVENT_JOB_DONE and e.report is not None:
                self._done[(e.session, e.job, e.report.is_sender)] = e.report
            elif e.type == _capi.EVENT_EPOCH and e.epoch is not None:
                if self._stats is not None and len(self._stats.epochs) < _MAX_EPOCHS:
                    self._stats.epochs.append(e.epoch)
            elif e.type == _capi.EVENT_SESSION_ERROR:
                peer = self._peer_of.get(e.session, "?")
                raise RuntimeError(
                    f"netapprox: session with rank {peer} failed: {_capi.NativeError('session', e.status)}"
                )

    def _on_messages(self, sessions, jobs, group_ids, addresses, lengths) -> None:
        t0 = time.perf_counter()
        want = self._want
        for session, job, group_id, address, length in zip(sessions, jobs, group_ids, addresses, lengths):
            collector = want.get((session, job))
            if collector is not None:
                collector.add(group_id, address, length)
            elif session in self._peer_of:
                self._early_bytes += length
                if self._early_bytes > self.max_buffered_bytes:
                    raise RuntimeError(
                        f"netapprox: more than {self.max_buffered_bytes} bytes arrived for steps not started "
                        f"(peer rank {self._peer_of[session]}, job {job}): ranks out of step"
                    )
                self._early.setdefault((session, job), []).append(
                    (group_id, ctypes.string_at(address, length))
                )
        self._copy_s += time.perf_counter() - t0

    def _expect(self, session: int, job: int, collector: Collector) -> None:
        self._want[(session, job)] = collector
        for group_id, data in self._early.pop((session, job), []):
            self._early_bytes -= len(data)
            collector.add(group_id, data, len(data))

    def _wait(self, keys: list[tuple[int, int, bool]], deadline: float, what: str) -> None:
        while True:
            missing = [k for k in keys if k not in self._done]
            if not missing:
                return
            if time.monotonic() > deadline:
                peers = sorted({self._peer_of[k[0]] for k in missing})
                raise TimeoutError(
                    f"netapprox: step {self.step}: {what} from/to ranks {peers} not done in time"
                )
            self._pump(20)

    def _send_all(
        self, jobs: dict[int, tuple[int, list[tuple[int, int, float]], np.ndarray]], deadline
    ) -> None:
        """Starts and submits one job per peer: {peer: (job id, [(group id, size, MSR)], submit entries)}; the
        entries' buffers must stay alive until this returns."""
        pending = {}
        for peer, (job, groups, entries) in jobs.items():
            self.engine.start_job(self._sessions[peer], job, groups)
            pending[peer] = (job, entries, 0)
        while pending:
            for peer in list(pending):
                job, entries, pos = pending[peer]
                n, status = self.engine.submit_entries(self._sessions[peer], job, entries[pos:], 0)
                pos += n
                if pos == entries.size or status == _capi.NA_ERR_NOT_FOUND:
                    del pending[peer]
                else:
                    pending[peer] = (job, entries, pos)
            if pending:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"netapprox: step {self.step}: send buffers to ranks {sorted(pending)} stay full"
                    )
                self._pump(1)  # receive (and release) while our send buffer drains

    # -- the all-reduce -----------------------------------------------------------------------------------------

    def _rs_seg_elems(self) -> int:
        # exact groups lose nothing, so their messages may span datagrams: fewer messages, events and copies
        return self.exact_segment_elems if self.groups.is_exact else self.segment_elems

    def _rs_job(self, chunk: np.ndarray, step: int, peer: int):
        """(groups for start_job, submit entries, encoded segments) of one reduce-scatter job: the chunk's segments
        by magnitude, shuffled within each group."""
        segs = Segments(step, chunk, self._rs_seg_elems())
        entries = _capi.submit_entries(segs.count)
        if chunk.size == 0:
            entries["data"], entries["len"] = segs.addresses, segs.lengths
            return [(0, 1, 1.0)], entries, segs
        offsets = np.arange(segs.count) * self._rs_seg_elems()
        sums = np.add.reduceat(np.abs(chunk.astype(np.float64)), offsets)
        level = self.groups.assign(sums / segs.rows["count"])
        rng = np.random.default_rng([self.seed, step, self.rank, peer])
        groups, pos = [], 0
        for g in range(len(self.groups.msrs)):
            members = np.flatnonzero(level == g)
            if members.size == 0:
                continue
            rng.shuffle(members)
            part = entries[pos : pos + members.size]
            part["group_index"], part["index"] = len(groups), np.arange(members.size)
            part["data"], part["len"] = segs.addresses[members], segs.lengths[members]
            groups.append((g, int(members.size), self.groups.msrs[g]))
            pos += members.size
        return groups, entries, segs

    def _collect_reports(self, deadline: float | None) -> None:
        """Checks the reports of this rank's sending jobs that arrived; with a deadline, waits for all of them."""
        if deadline is not None:
            self._wait([(s, j, True) for s, j, _ in self._unreported], deadline, "sender reports")
        left = []
        for s, j, stats in self._unreported:
            report = self._done.pop((s, j, True), None)
            if report is None:
                left.append((s, j, stats))
            elif report.status != _capi.NA_OK:
                raise _capi.NativeError(
                    f"step {stats.step}: job {j} to rank {self._peer_of[s]}", report.status
                )
            else:
                stats.retransmitted += report.packets_retransmitted
                stats.max_send_jct_s = max(stats.max_send_jct_s, report.jct_ns / 1e9)
        self._unreported = left

    def allreduce(self, tensor: torch.Tensor) -> torch.Tensor:
        """The sum over the ranks of `tensor` (float32 math; returned in `tensor`'s dtype and shape)."""
        t0 = time.monotonic()
        deadline = t0 + self.timeout_s
        flat = tensor.detach().reshape(-1).to(torch.float32).cpu().numpy().copy()
        n, w, me = flat.size, self.world_size, self.rank
        step = self.step
        stats = StepStats(step, n)
        if w == 1:
            self.step += 1
            self.history.append(stats)
            return tensor.detach().clone()
        clock = _Phases(stats.phases, stats.phases_cpu)
        self._collect_reports(deadline)  # the last step's
        clock.lap("reports")
        self._stats = stats
        self._copy_s = 0.0
        rs_job, ag_job = (2 * step + _RS) & 0xFFFFFFFF, (2 * step + _AG) & 0xFFFFFFFF
        lo, hi = bounds(n, w, me)
        mine = hi - lo
        ag_elems = self.exact_segment_elems
        # both rounds' receivers from the start: a peer's all-gather may come before our reduce-scatter is done
        rs_in = {p: Collector(step, mine, self._rs_seg_elems()) for p in self._sessions}
        ag_in = {
            p: Collector(step, bounds(n, w, p)[1] - bounds(n, w, p)[0], ag_elems) for p in self._sessions
        }
        for peer, session in self._sessions.items():
            self._expect(session, rs_job, rs_in[peer])
            self._expect(session, ag_job, ag_in[peer])
        jobs, keep = {}, []
        for peer in self._sessions:
            plo, phi = bounds(n, w, peer)
            groups, entries, segs = self._rs_job(flat[plo:phi], step, peer)
            stats.bytes_sent += int(entries["len"].sum())
            jobs[peer] = (rs_job, groups, entries)
            keep.append(segs)
        clock.lap("segment")
        self._send_all(jobs, deadline)
        clock.lap("rs_submit")
        self._wait([(s, rs_job, False) for s in self._sessions.values()], deadline, "reduce-scatter")
        clock.lap("rs_wait")
        contrib = {me: flat[lo:hi]}
        for peer, s in self._sessions.items():
            self._want.pop((s, rs_job), None)
            contrib[peer] = np.zeros(mine, dtype=np.float32)  # a segment that did not arrive counts as zeros
            for g, c in rs_in[peer].place(contrib[peer]).items():
                stats.received.setdefault(g, [0, 0])[0] += c
            for g in self._done.pop((s, rs_job, False)).groups:
                if n and mine:
                    stats.received.setdefault(int(g.group_id), [0, 0])[1] += g.size
        clock.lap("rs_place")
        reduced = contrib[0].copy()  # rank order, whoever we are: every rank's sum is the same float math
        for r in range(1, w):
            reduced += contrib[r]
        clock.lap("sum")

        ag_segs = Segments(step, reduced, ag_elems)
        ag_entries = _capi.submit_entries(ag_segs.count)
        ag_entries["index"] = np.arange(ag_segs.count)
        ag_entries["data"], ag_entries["len"] = ag_segs.addresses, ag_segs.lengths
        self._send_all({p: (ag_job, [(0, ag_segs.count, 1.0)], ag_entries) for p in self._sessions}, deadline)
        clock.lap("ag_submit")
        self._wait([(s, ag_job, False) for s in self._sessions.values()], deadline, "all-gather")
        clock.lap("ag_wait")
        out = np.empty(n, dtype=np.float32)
        out[lo:hi] = reduced
        for peer, s in self._sessions.items():
            self._want.pop((s, ag_job), None)
            self._done.pop((s, ag_job, False))
            plo, phi = bounds(n, w, peer)
            ag_in[peer].place(out[plo:phi])
            if not ag_in[peer].complete():
                raise RuntimeError(
                    f"netapprox: step {step}: the exact all-gather from rank {peer} delivered "
                    f"{ag_in[peer].n} of {ag_in[peer].lengths.size} segments"
                )
        clock.lap("ag_place")
        # Our own jobs' reports (a failed send is an error, not a silent zero) arrive about a round trip after the
        # peers' data did; the step does not wait for them: the next step (or close) does, and raises for this one.
        self._unreported += [(s, j, stats) for s in self._sessions.values() for j in (rs_job, ag_job)]
        self._collect_reports(None)
        clock.lap("reports")
        stats.phases["recv_copy"] = self._copy_s
        self.step += 1
        stats.wall_s = time.monotonic() - t0
        self.history.append(stats)
        return torch.from_numpy(out).reshape(tensor.shape).to(tensor.dtype)

    def close(self) -> None:
        """Waits (bounded by `timeout_s`) until every rank is closing, then closes: a rank that left at once could
        take with it the DONE a peer's last job still waits for."""
        if self.engine._handle is None:
            return
        try:
            if self._unreported:
                self._collect_reports(time.monotonic() + self.timeout_s)
            if self.world_size > 1 and hasattr(self, "_sessions"):
                key = f"{self._prefix}/closing"
                self._store.add(key, 1)
                deadline = time.monotonic() + self.timeout_s
                while int(self._store.add(key, 0)) < self.world_size and time.monotonic() < deadline:
                    try:
                        self._pump(10)
                    except RuntimeError:  # a peer already failed: nothing left to wait for
                        break
        finally:
            for session in getattr(self, "_sessions", {}).values():
                try:
                    self.engine.close_session(session)
                except _capi.NativeError:
                    pass
            self.engine.close()

    def __enter__(self) -> AtpAllReduce:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def atp_allreduce_hook(state: AtpAllReduce, bucket) -> torch.futures.Future:
    """A DDP communication hook (`model.register_comm_hook(state, atp_allreduce_hook)`): averages the bucket's
    gradients over the ranks through `state`'s ATP all-reduce."""
    result = state.allreduce(bucket.buffer()).div_(state.world_size)
    fut = torch.futures.Future()
    fut.set_result(result)
    return fut


# DDP checks the hook's annotations as objects (this module's are strings: `from __future__ import annotations`)
atp_allreduce_hook.__annotations__ = {
    "state": AtpAllReduce,
    "bucket": torch.distributed.GradBucket,
    "return": torch.futures.Future[torch.Tensor],
}
