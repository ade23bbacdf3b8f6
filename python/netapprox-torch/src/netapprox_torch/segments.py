"""Gradient segments on the wire and their magnitude groups.

A chunk of a flat float32 gradient travels as segments of at most `segment_elems` values, each one ATP message:
a 24-byte header then the values (little-endian float32). Every field of a received header is checked against what
the receiver expects before a value is used: a segment from the network is untrusted even on an authenticated
session (a peer with another build, a bug), and a bad one raises `SegmentError` instead of corrupting the sum.

Header (little-endian): magic u32 'NAT1' | version u8 | dtype u8 (0 = float32) | reserved u16 (0) | step u32 |
chunk_elems u32 (values in the whole chunk) | offset u32 (first value's index in the chunk) | count u32.
"""

from __future__ import annotations

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
