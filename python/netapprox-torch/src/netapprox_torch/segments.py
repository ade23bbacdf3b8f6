"""Gradient segments on the wire and their magnitude groups.

A chunk of a flat float32 gradient travels as segments of at most `segment_elems` values, each one ATP message:
a 24-byte header then the values (little-endian float32). Every field of a received header is checked against what
the receiver expects before a value is used: a segment from the network is untrusted even on an authenticated
session (a peer with another build, a bug), and a bad one raises `SegmentError` instead of corrupting the sum.

Header (little-endian): magic u32 'NAT1' | version u8 | dtype u8 (0 = float32) | reserved u16 (0) | step u32 |
chunk_elems u32 (values in the whole chunk) | offset u32 (first value's index in the chunk) | count u32.

`encode`/`decode` handle one segment; `Segments` (send) and `Collector` (receive) handle a job's segments as numpy
rows at once: per segment only a pointer (send) or one memmove (receive) is left in Python, which is what made a
1.6 MB exchange cost tens of milliseconds of interpreter time per step (docs/pytorch.md, "Where the time goes").
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

import numpy as np

MAGIC = 0x3154414E  # b"NAT1" read as a little-endian u32
VERSION = 1
DTYPE_FLOAT32 = 0
HEADER = struct.Struct("<IBBHIIII")
HEADER_BYTES = HEADER.size  # 24
# 344 float32 + the header = 1,400 bytes: one segment per datagram on a 1500-byte MTU with ATP's own headers
DEFAULT_SEGMENT_ELEMS = 344


class SegmentError(ValueError):
    """A received segment does not fit the chunk the receiver expects."""


def encode(step: int, chunk_elems: int, offset: int, values: np.ndarray) -> bytes:
    values = np.ascontiguousarray(values, dtype="<f4")
    if offset < 0 or offset + values.size > chunk_elems:
        raise ValueError(f"segment [{offset}, {offset + values.size}) outside a chunk of {chunk_elems}")
    return (
        HEADER.pack(MAGIC, VERSION, DTYPE_FLOAT32, 0, step & 0xFFFFFFFF, chunk_elems, offset, values.size)
        + values.tobytes()
    )


def decode(data: bytes, step: int, chunk_elems: int) -> tuple[int, np.ndarray]:
    """(offset, values) of a segment of chunk `chunk_elems` at `step`; SegmentError when anything does not fit."""
    if len(data) < HEADER_BYTES:
        raise SegmentError(f"segment of {len(data)} bytes is shorter than its {HEADER_BYTES}-byte header")
    magic, version, dtype, reserved, seg_step, seg_chunk, offset, count = HEADER.unpack_from(data)
    if magic != MAGIC or version != VERSION or dtype != DTYPE_FLOAT32 or reserved != 0:
        raise SegmentError(
            f"not a NetApprox gradient segment (magic {magic:#x}, version {version}, dtype {dtype})"
        )
    if seg_step != step & 0xFFFFFFFF:
        raise SegmentError(f"segment of step {seg_step} received in step {step & 0xFFFFFFFF}")
    if seg_chunk != chunk_elems:
        raise SegmentError(f"segment of a {seg_chunk}-value chunk, expected {chunk_elems}")
    if len(data) != HEADER_BYTES + 4 * count:
        raise SegmentError(f"segment says {count} values but carries {len(data) - HEADER_BYTES} bytes")
    if offset + count > chunk_elems or count == 0 and chunk_elems != 0:
        raise SegmentError(f"segment [{offset}, {offset + count}) outside a chunk of {chunk_elems}")
    return offset, np.frombuffer(data, dtype="<f4", count=count, offset=HEADER_BYTES)


def _row_dtype(seg_elems: int) -> np.dtype:
    """One segment as a numpy row: the header's fields then room for `seg_elems` values (a shorter segment uses a
    prefix of the row: its length is the header + 4 x count, not the row's size)."""
    return np.dtype(
        [
            ("magic", "<u4"),
            ("version", "u1"),
            ("dtype", "u1"),
            ("reserved", "<u2"),
            ("step", "<u4"),
            ("chunk", "<u4"),
            ("offset", "<u4"),
            ("count", "<u4"),
            ("values", "<f4", (seg_elems,)),
        ]
    )


class Segments:
    """A chunk encoded as its segments of at most `seg_elems` values, segment k (values [k x seg_elems, ...)) in row
    k of one buffer; `address(k)` and `length(k)` are what an ATP submit entry points at. A chunk of 0 values is one
    segment of count 0 (the receiver still learns the step is done)."""

    def __init__(self, step: int, chunk: np.ndarray, seg_elems: int):
        n = chunk.size
        self.count = max(1, -(-n // seg_elems))
        self.rows = np.zeros(self.count, dtype=_row_dtype(seg_elems))
        self.rows["magic"], self.rows["version"], self.rows["dtype"] = MAGIC, VERSION, DTYPE_FLOAT32
        self.rows["step"], self.rows["chunk"] = step & 0xFFFFFFFF, n
        self.rows["offset"] = np.arange(self.count, dtype=np.int64) * seg_elems
        counts = np.full(self.count, seg_elems, dtype=np.int64)
        counts[-1] = n - (self.count - 1) * seg_elems
        self.rows["count"] = counts
        full = n // seg_elems
        self.rows["values"][:full] = chunk[: full * seg_elems].reshape(full, seg_elems)
        if full < self.count and n:
            self.rows["values"][full, : n - full * seg_elems] = chunk[full * seg_elems :]
        self.lengths = HEADER_BYTES + 4 * counts
        self.addresses = self.rows.ctypes.data + np.arange(self.count, dtype=np.uint64) * self.rows.itemsize

    def tobytes(self, k: int) -> bytes:
        """Segment k as `encode` makes it (tests)."""
        return self.rows[k : k + 1].tobytes()[: int(self.lengths[k])]


class Collector:
    """The segments one job brings for a chunk of `chunk_elems` values at `step`, gathered as they arrive (`add`:
    one copy into a row) and checked and placed all at once (`place`). At most `max_segments` segments (what the
    sender's chunk has), each at most `seg_elems` values: anything beyond is a SegmentError, not a larger buffer."""

    def __init__(self, step: int, chunk_elems: int, seg_elems: int):
        self.step, self.chunk_elems, self.seg_elems = step, chunk_elems, seg_elems
        cap = max(1, -(-chunk_elems // seg_elems))
        self.rows = np.zeros(cap, dtype=_row_dtype(seg_elems))
        self.lengths = np.zeros(cap, dtype=np.int64)
        self.groups = np.zeros(cap, dtype=np.int64)
        self.n = 0
        self._base, self._row = self.rows.ctypes.data, self.rows.itemsize

    def add(self, group_id: int, data, length: int) -> None:
        """One arrived segment: `data` is an address (int) or a bytes object of `length` bytes."""
        if self.n == self.lengths.size:
            raise SegmentError(
                f"more than the {self.lengths.size} segments a chunk of {self.chunk_elems} has"
            )
        if length > self._row:
            raise SegmentError(
                f"segment of {length} bytes: this rank's segments hold at most {self.seg_elems} values "
                f"(the ranks must use the same segment sizes)"
            )
        ctypes.memmove(self._base + self.n * self._row, data, length)
        self.lengths[self.n], self.groups[self.n] = length, group_id
        self.n += 1

    def place(self, out: np.ndarray) -> dict[int, int]:
        """Checks every segment's header as `decode` does (SegmentError on the first bad one) and writes the values
        into `out` (`chunk_elems` values; what did not arrive is left as it is). Returns segments per group id."""
        rows, lengths, n = self.rows[: self.n], self.lengths[: self.n], self.n
        counts, offsets = rows["count"].astype(np.int64), rows["offset"].astype(np.int64)
        ok = (
            (lengths >= HEADER_BYTES)
            & (rows["magic"] == MAGIC)
            & (rows["version"] == VERSION)
            & (rows["dtype"] == DTYPE_FLOAT32)
            & (rows["reserved"] == 0)
            & (rows["step"] == self.step & 0xFFFFFFFF)
            & (rows["chunk"] == self.chunk_elems)
            & (lengths == HEADER_BYTES + 4 * counts)
            & (offsets + counts <= self.chunk_elems)
            & ((counts > 0) | (self.chunk_elems == 0))
        )
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            decode(
                rows[k : k + 1].tobytes()[: int(lengths[k])], self.step, self.chunk_elems
            )  # raises, with why
            raise SegmentError(f"segment {k} does not fit a chunk of {self.chunk_elems}")  # unreachable
        whole = counts == self.seg_elems
        if whole.any():
            idx = offsets[whole, None] + np.arange(self.seg_elems)
            out[idx] = rows["values"][whole]
        for k in np.flatnonzero(~whole):
            c, o = int(counts[k]), int(offsets[k])
            out[o : o + c] = rows["values"][k, :c]
        ids, per = np.unique(self.groups[:n], return_counts=True)
        return {int(g): int(c) for g, c in zip(ids, per)}

    def complete(self) -> bool:
        """Every segment of the chunk arrived, each once (for an exact job, after `place` checked them)."""
        if self.n != self.lengths.size:
            return False
        offsets = np.sort(self.rows["offset"].astype(np.int64))
        return bool((offsets == np.arange(self.n) * self.seg_elems).all())


def bounds(length: int, parts: int, index: int) -> tuple[int, int]:
    """[start, end) of chunk `index` when `length` values are split into `parts` near-equal chunks."""
    base, extra = divmod(length, parts)
    start = index * base + min(index, extra)
    return start, start + base + (1 if index < extra else 0)


@dataclass(frozen=True)
class MagnitudeGroups:
    """Segments grouped by their mean absolute value: group k holds the segments whose mean |g| lies in
    [thresholds[k-1], thresholds[k]) and is sent with MSR msrs[k] (the paper's section 6: small gradients tolerate
    loss; the largest ones are exact by default). `exact()` is one group at MSR 1 (the exact all-reduce)."""

    thresholds: tuple[float, ...] = (0.001, 0.0025)
    msrs: tuple[float, ...] = (0.5, 0.8, 1.0)

    def __post_init__(self):
        if len(self.msrs) != len(self.thresholds) + 1:
            raise ValueError(
                f"{len(self.thresholds)} thresholds need {len(self.thresholds) + 1} MSRs, got {self.msrs}"
            )
        if any(not (t > 0) for t in self.thresholds) or list(self.thresholds) != sorted(set(self.thresholds)):
            raise ValueError(f"thresholds must be positive and strictly increasing, got {self.thresholds}")
        if any(not (0 < m <= 1) for m in self.msrs):
            raise ValueError(f"every MSR must be in (0, 1], got {self.msrs}")

    @staticmethod
    def exact() -> MagnitudeGroups:
        return MagnitudeGroups((), (1.0,))

    @property
    def is_exact(self) -> bool:
        return all(m == 1.0 for m in self.msrs)

    def assign(self, means: np.ndarray) -> np.ndarray:
        """The group of each segment given its mean |g| (NaN and inf go to the last group: never dropped)."""
        means = np.where(np.isfinite(means), means, np.inf)
        return np.searchsorted(np.asarray(self.thresholds, dtype=np.float64), means, side="right")
