"""NetApprox for PyTorch: DDP gradient all-reduce over ATP with magnitude groups (docs/pytorch.md)."""

from ._capi import Engine, NativeError, load_library, version
from .allreduce import AtpAllReduce, StepStats, atp_allreduce_hook
from .segments import MagnitudeGroups, SegmentError

__all__ = [
    "AtpAllReduce",
    "Engine",
    "MagnitudeGroups",
    "NativeError",
    "SegmentError",
    "StepStats",
    "atp_allreduce_hook",
    "load_library",
    "version",
]
