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

import os
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import torch

from . import _capi
from .segments import DEFAULT_SEGMENT_ELEMS, MagnitudeGroups, bounds, decode, encode

_RS, _AG = 0, 1


@dataclass
class StepStats:
    """What one all-reduce sent and received (this rank's view)."""

    step: int
    elements: int
    wall_s: float = 0.0
    # reduce-scatter segments this rank received, per magnitude group: [delivered, size (segments sent to it)]
    received: dict[int, list[int]] = field(default_factory=dict)
    bytes_sent: int = 0

    def delivered_fraction(self, group: int | None = None) -> float:
        items = [v for k, v in self.received.items() if group is None or k == group]
        size = sum(v[1] for v in items)
        return sum(v[0] for v in items) / size if size else 1.0


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
        self.rank, self.world_size = rank, world_size
        self.groups = groups or MagnitudeGroups()
        self.segment_elems = segment_elems
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
        self._want: dict[tuple[int, int], object] = {}  # (session, job) -> receiver of this step's messages
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
        for e in self.engine.poll(timeout_ms):
            if e.type == _capi.EVENT_MESSAGE:
                key = (e.session, e.job)
                sink = self._want.get(key)
                if sink is not None:
                    sink(e.group_id, e.data)
                elif e.session in self._peer_of:
                    self._early_bytes += len(e.data)
                    if self._early_bytes > self.max_buffered_bytes:
                        raise RuntimeError(
                            f"netapprox: more than {self.max_buffered_bytes} bytes arrived for steps not started "
                            f"(peer rank {self._peer_of[e.session]}, job {e.job}): ranks out of step"
                        )
                    self._early.setdefault(key, []).append((e.group_id, e.data))
            elif e.type == _capi.EVENT_JOB_DONE and e.report is not None:
                self._done[(e.session, e.job, e.report.is_sender)] = e.report
            elif e.type == _capi.EVENT_SESSION_ERROR:
                peer = self._peer_of.get(e.session, "?")
                raise RuntimeError(
                    f"netapprox: session with rank {peer} failed: {_capi.NativeError('session', e.status)}"
                )

    def _expect(self, session: int, job: int, sink) -> None:
        self._want[(session, job)] = sink
        for group_id, data in self._early.pop((session, job), []):
            self._early_bytes -= len(data)
            sink(group_id, data)

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
        self, jobs: dict[int, tuple[int, list[tuple[int, float]], list[tuple[int, int, bytes]]]], deadline
    ):
        """Starts and submits one job per peer: {peer: (job id, [(group id, MSR)] with sizes implied, messages)}."""
        pending = {}
        for peer, (job, groups, messages) in jobs.items():
            self.engine.start_job(self._sessions[peer], job, groups)
            pending[peer] = (job, messages, 0)
        while pending:
            for peer in list(pending):
                job, messages, pos = pending[peer]
                n, status = self.engine.submit(self._sessions[peer], job, messages[pos:], 0)
                pos += n
                if pos == len(messages) or status == _capi.NA_ERR_NOT_FOUND:
                    del pending[peer]
                else:
                    pending[peer] = (job, messages, pos)
            if pending:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"netapprox: step {self.step}: send buffers to ranks {sorted(pending)} stay full"
                    )
                self._pump(1)  # receive (and release) while our send buffer drains

    # -- the all-reduce -----------------------------------------------------------------------------------------

    def _segments(self, chunk: np.ndarray, step: int, peer: int):
        """(groups for start_job, messages) of one reduce-scatter job: segments by magnitude, shuffled per group."""
        n = chunk.size
        if n == 0:
            return [(0, 1, 1.0)], [(0, 0, encode(step, 0, 0, chunk))], 0
        offsets = np.arange(0, n, self.segment_elems)
        sums = np.add.reduceat(np.abs(chunk.astype(np.float64)), offsets)
        counts = np.diff(np.append(offsets, n))
        level = self.groups.assign(sums / counts)
        rng = np.random.default_rng([self.seed, step, self.rank, peer])
        groups, messages = [], []
        for g in range(len(self.groups.msrs)):
            members = offsets[level == g]
            if members.size == 0:
                continue
            rng.shuffle(members)
            gi = len(groups)
            groups.append((g, int(members.size), self.groups.msrs[g]))
            for i, off in enumerate(members):
                off = int(off)
                messages.append((gi, i, encode(step, n, off, chunk[off : off + self.segment_elems])))
        return groups, messages, sum(len(m[2]) for m in messages)

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
        rs_job, ag_job = (2 * step + _RS) & 0xFFFFFFFF, (2 * step + _AG) & 0xFFFFFFFF
        lo, hi = bounds(n, w, me)
        mine = hi - lo
        contrib = {me: flat[lo:hi]}

        def rs_sink(peer):
            arr = contrib.setdefault(peer, np.zeros(mine, dtype=np.float32))

            def sink(group_id, data):
                offset, values = decode(data, step, mine)
                arr[offset : offset + values.size] = values
                stats.received.setdefault(int(group_id), [0, 0])[0] += 1

            return sink

        for peer, session in self._sessions.items():
            contrib[peer] = np.zeros(mine, dtype=np.float32)
            self._expect(session, rs_job, rs_sink(peer))
        jobs = {}
        for peer in self._sessions:
            plo, phi = bounds(n, w, peer)
            groups, messages, nbytes = self._segments(flat[plo:phi], step, peer)
            stats.bytes_sent += nbytes
            jobs[peer] = (rs_job, groups, messages)
        self._send_all(jobs, deadline)
        self._wait([(s, rs_job, False) for s in self._sessions.values()], deadline, "reduce-scatter")
        for s in self._sessions.values():
            self._want.pop((s, rs_job), None)
            for g in self._done.pop((s, rs_job, False)).groups:
                if n and mine:
                    stats.received.setdefault(int(g.group_id), [0, 0])[1] += g.size
        reduced = contrib[0].copy()  # rank order, whoever we are: every rank's sum is the same float math
        for r in range(1, w):
            reduced += contrib[r]

        out = np.empty(n, dtype=np.float32)
        out[lo:hi] = reduced
        got = {p: 0 for p in self._sessions}

        def ag_sink(peer):
            plo, phi = bounds(n, w, peer)

            def sink(group_id, data):
                offset, values = decode(data, step, phi - plo)
                out[plo + offset : plo + offset + values.size] = values
                got[peer] += values.size

            return sink

        for peer, session in self._sessions.items():
            self._expect(session, ag_job, ag_sink(peer))
        offsets = range(0, max(mine, 1), self.segment_elems)
        ag_messages = [
            (0, i, encode(step, mine, off, reduced[off : off + self.segment_elems]))
            for i, off in enumerate(offsets)
        ]
        self._send_all(
            {p: (ag_job, [(0, len(ag_messages), 1.0)], ag_messages) for p in self._sessions}, deadline
        )
        self._wait([(s, ag_job, False) for s in self._sessions.values()], deadline, "all-gather")
        for peer, s in self._sessions.items():
            self._want.pop((s, ag_job), None)
            self._done.pop((s, ag_job, False))
            plo, phi = bounds(n, w, peer)
            if got[peer] != phi - plo:
                raise RuntimeError(
                    f"netapprox: step {step}: the exact all-gather from rank {peer} delivered {got[peer]} of "
                    f"{phi - plo} values"
                )
        # our own jobs' reports: a failed send is an error, not a silent zero
        self._wait(
            [(s, j, True) for s in self._sessions.values() for j in (rs_job, ag_job)],
            deadline,
            "sender reports",
        )
        for s in self._sessions.values():
            for j in (rs_job, ag_job):
                report = self._done.pop((s, j, True))
                if report.status != _capi.NA_OK:
                    raise _capi.NativeError(f"job {j} to rank {self._peer_of[s]}", report.status)
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
