"""ctypes binding of libnetapprox's C API (native/include/netapprox/netapprox.h).

The structs mirror the header field by field (ctypes lays them out as the C compiler does); `na_config`'s size is
checked against the `struct_size` that `na_config_init` writes, so a library built from another header fails at
open instead of reading garbage. Everything the engine hands out (message data, reports) is copied into Python
objects and released at once, so no native pointer outlives the call that produced it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

NA_OK = 0
NA_ERR_NOT_FOUND = -2
NA_ERR_WOULD_BLOCK = -4
NA_ERR_CLOSED = -6
NA_SUBMIT_BATCH_MAX = 4096

MODE_BASE, MODE_RC, MODE_RC_MRDF, MODE_FIX_TLR, MODE_FIX_PRIO, MODE_FULL, MODE_PAPER = range(7)

EVENT_MESSAGE, EVENT_MESSAGE_LOST, EVENT_JOB_STARTED, EVENT_JOB_DONE, EVENT_SESSION_ERROR, EVENT_EPOCH = (
    range(6)
)

u8, u16, u32, u64, i32 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32


class NaConfig(ctypes.Structure):
    _fields_ = [
        ("struct_size", u32),
        ("line_rate_bps", u64),
        ("max_datagram", u32),
        ("reaction_speed", ctypes.c_double),
        ("tlr_floor", ctypes.c_double),
        ("initial_rtt_ns", u64),
        ("min_epoch_ns", u64),
        ("ack_delay_ns", u64),
        ("ack_every", u32),
        ("idle_timeout_ns", u64),
        ("peer_death_timeout_ns", u64),
        ("recv_buffer_bytes", u64),
        ("send_buffer_bytes", u64),
        ("max_message_bytes", u32),
        ("max_sessions", u32),
        ("max_jobs_per_session", u32),
        ("max_messages_per_job", u32),
        ("max_groups_per_job", u32),
        ("max_pending_events", u32),
        ("dscp_by_class", u8 * 8),
        ("no_priority_dscp", u8),
        ("mode", i32),
        ("fault_drop_outgoing", ctypes.c_double),
        ("fault_drop_incoming", ctypes.c_double),
        ("fault_seed", u64),
        ("bind_address", ctypes.c_char * 64),
        ("bind_port", u16),
        ("enable_gso", i32),
        ("enable_gro", i32),
        ("socket_buffer_bytes", i32),
        ("event_queue_capacity", u32),
        ("max_peers", u32),
        ("trace_epochs", i32),
        ("payload_auth", i32),
        ("prefer_aes_gcm", i32),
        ("coalesce_messages", i32),
        ("wire_overhead_bytes", u32),
        ("max_report_ranges", u32),
        ("needy_class0_fraction", ctypes.c_double),
    ]


class NaGroupSpec(ctypes.Structure):
    _fields_ = [("group_id", u64), ("size", u32), ("msr", ctypes.c_double)]


class NaSubmitEntry(ctypes.Structure):
    _fields_ = [
        ("group_index", u32),
        ("index", u32),
        ("data", ctypes.c_void_p),
        ("len", ctypes.c_size_t),
        ("status", i32),
    ]


class NaEvent(ctypes.Structure):
    _fields_ = [
        ("type", i32),
        ("status", i32),
        ("session", u64),
        ("job", u32),
        ("message", u32),
        ("group_id", u64),
        ("data", ctypes.c_void_p),
        ("len", ctypes.c_size_t),
        ("handle", u64),
        ("report", ctypes.c_void_p),
        ("epoch_at_ns", u64),
        ("epoch_tlr", ctypes.c_double),
        ("epoch_loss", ctypes.c_double),
        ("epoch_rate_bps", ctypes.c_double),
        ("epoch_priority_class", i32),
    ]


SUBMIT_ENTRY = np.dtype(
    NaSubmitEntry
)  # numpy views of the C arrays (same layout: numpy takes ctypes' padding)
EVENT = np.dtype(NaEvent)


def submit_entries(n: int) -> np.ndarray:
    """A zeroed array of n na_submit_entry for `Engine.submit_entries`."""
    return np.zeros(n, dtype=SUBMIT_ENTRY)


class NaReportInfo(ctypes.Structure):
    _fields_ = [
        ("session", u64),
        ("job", u32),
        ("is_sender", i32),
        ("status", i32),
        ("messages", u32),
        ("delivered", u32),
        ("lost", u32),
        ("measured_loss", ctypes.c_double),
        ("packets_sent", u64),
        ("packets_retransmitted", u64),
        ("bytes_sent", u64),
        ("epochs", u64),
        ("started_ns", u64),
        ("finished_ns", u64),
        ("jct_ns", u64),
        ("time_in_class_ns", u64 * 8),
        ("n_groups", u32),
        ("announces_sent", u32),
        ("updates_sent", u32),
        ("dones_sent", u32),
        ("start_to_running_ns", u64),
        ("last_data_to_done_ns", u64),
        ("announce_probes", u32),
        ("acks_while_starting", u32),
        ("announces_received", u32),
        ("announces_duplicate", u32),
        ("announces_acked", u32),
        ("early_data_packets", u64),
    ]


class NaGroupReport(ctypes.Structure):
    _fields_ = [
        ("group_id", u64),
        ("size", u32),
        ("target", u32),
        ("delivered", u32),
        ("lost", u32),
        ("target_unreachable", i32),
        ("n_delivered_ranges", u32),
        ("n_lost_ranges", u32),
        ("delivered_ranges", ctypes.c_void_p),
        ("lost_ranges", ctypes.c_void_p),
    ]


class NaStats(ctypes.Structure):
    _fields_ = [
        (name, u64)
        for name in (
            "datagrams_in datagrams_out bytes_in bytes_out dropped_malformed dropped_unknown_session dropped_auth "
            "dropped_replay_or_old dropped_no_buffer dropped_unknown_job dropped_fault_in dropped_fault_out "
            "events_dropped sessions jobs recv_syscalls send_syscalls udp_datagrams_received udp_datagrams_sent "
            "gro_buffers gso_sends send_errors send_eagain recv_errors recv_truncated peer_evictions "
            "unknown_peer_transmits wakeups loop_iterations"
        ).split()
    ] + [
        ("gso_enabled", i32),
        ("gro_enabled", i32),
        ("auth_policy_mismatches", u64),
        ("farewells_dropped", u64),
    ]


class NativeError(RuntimeError):
    """A libnetapprox call failed: `code` is the NA_ERR_* status, the message names the call and the code."""

    def __init__(self, call: str, code: int, detail: str = ""):
        self.code = code
        name = _LIB.na_strerror(code).decode() if _LIB is not None else str(code)
        super().__init__(f"netapprox: {call} failed: {name} ({code}){': ' + detail if detail else ''}")


_LIB: ctypes.CDLL | None = None
_LIB_LOCK = threading.Lock()


def library_candidates() -> list[Path]:
    """Where the library is looked for, in order: $NETAPPROX_LIBRARY, then the builds of this repository."""
    found = []
    if os.environ.get("NETAPPROX_LIBRARY"):
        found.append(Path(os.environ["NETAPPROX_LIBRARY"]))
    here = Path(__file__).resolve()
    for parent in here.parents:
        for rel in ("approx-core/target/native-build/libnetapprox.so", "native/build/libnetapprox.so"):
            candidate = parent / rel
            if candidate.is_file():
                found.append(candidate)
    return found


def load_library(path: str | os.PathLike | None = None) -> ctypes.CDLL:
    """Loads libnetapprox once per process (`path`, else the first of `library_candidates()`, else the system's)."""
    global _LIB
    with _LIB_LOCK:
        if _LIB is not None:
            return _LIB
        candidates = [Path(path)] if path else library_candidates()
        system = ctypes.util.find_library("netapprox")
        tried = [str(c) for c in candidates] + ([system] if system else [])
        if not tried:
            raise OSError(
                "netapprox: libnetapprox.so not found; set NETAPPROX_LIBRARY or build it "
                "(mvn -pl approx-core install -DskipTests, or cmake -S native -B native/build)"
            )
        errors = []
        for name in tried:
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError as e:
                errors.append(f"{name}: {e}")
        else:
            raise OSError("netapprox: cannot load libnetapprox: " + "; ".join(errors))
        _declare(lib)
        _LIB = lib
        return lib


def _declare(lib: ctypes.CDLL) -> None:
    vp, sz, cp, ci = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int
    sigs = {
        "na_config_init": ([ctypes.POINTER(NaConfig)], ci),
        "na_engine_open": ([ctypes.POINTER(NaConfig), ctypes.POINTER(vp), cp, sz], ci),
        "na_engine_close": ([vp], ci),
        "na_engine_local_port": ([vp], ci),
        "na_session_open": ([vp, u64, ctypes.POINTER(u8), cp, u16, ci], ci),
        "na_session_close": ([vp, u64], ci),
        "na_job_start": ([vp, u64, u32, ctypes.POINTER(NaGroupSpec), sz, ci], ci),
        "na_job_submit_batch": ([vp, u64, u32, vp, sz, ci], ci),
        "na_job_cancel": ([vp, u64, u32], ci),
        "na_poll_events": ([vp, vp, ci, ci], ci),
        "na_message_release_batch": ([vp, vp, sz], ci),
        "na_report_get_info": ([vp, ctypes.POINTER(NaReportInfo)], ci),
        "na_report_get_group": ([vp, u32, ctypes.POINTER(NaGroupReport)], ci),
        "na_report_free": ([vp], ci),
        "na_engine_stats": ([vp, ctypes.POINTER(NaStats)], ci),
        "na_strerror": ([ci], cp),
        "na_version": ([], cp),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res


@dataclass
class GroupReport:
    group_id: int
    size: int
    target: int
    delivered: int
    lost: int
    target_unreachable: bool


@dataclass
class Report:
    """One job's report (sender or receiver), copied out of the native report."""

    session: int
    job: int
    is_sender: bool
    status: int
    messages: int
    delivered: int
    lost: int
    bytes_sent: int
    packets_retransmitted: int
    jct_ns: int
    groups: list[GroupReport] = field(default_factory=list)


@dataclass
class Event:
    type: int
    status: int
    session: int
    job: int
    message: int = 0
    group_id: int = 0
    data: bytes = b""
    report: Report | None = None
    # EVENT_EPOCH (trace_epochs): the sending job's rate, target loss rate, measured loss and class at an epoch end
    epoch: tuple[float, float, float, int] | None = None


def _copy_report(lib: ctypes.CDLL, ptr: int) -> Report:
    info = NaReportInfo()
    rc = lib.na_report_get_info(ptr, ctypes.byref(info))
    if rc != NA_OK:
        raise NativeError("na_report_get_info", rc)
    groups = []
    g = NaGroupReport()
    for i in range(info.n_groups):
        rc = lib.na_report_get_group(ptr, i, ctypes.byref(g))
        if rc != NA_OK:
            raise NativeError("na_report_get_group", rc)
        groups.append(
            GroupReport(g.group_id, g.size, g.target, g.delivered, g.lost, bool(g.target_unreachable))
        )
    return Report(
        info.session,
        info.job,
        bool(info.is_sender),
        info.status,
        info.messages,
        info.delivered,
        info.lost,
        info.bytes_sent,
        info.packets_retransmitted,
        info.jct_ns,
        groups,
    )


class Engine:
    """One ATP engine: a UDP socket and an I/O thread (na_engine). Close it (or use it as a context manager)."""

    def __init__(
        self,
        bind_address: str = "127.0.0.1",
        port: int = 0,
        *,
        mode: int = MODE_FULL,
        library: str | os.PathLike | None = None,
        **settings,
    ):
        self._lib = load_library(library)
        cfg = NaConfig()
        rc = self._lib.na_config_init(ctypes.byref(cfg))
        if rc != NA_OK:
            raise NativeError("na_config_init", rc)
        if cfg.struct_size != ctypes.sizeof(NaConfig):
            raise OSError(
                f"netapprox: the library's na_config is {cfg.struct_size} bytes, this binding's "
                f"{ctypes.sizeof(NaConfig)}: the library was built from another netapprox.h"
            )
        cfg.bind_address = bind_address.encode()
        cfg.bind_port = port
        cfg.mode = mode
        for key, value in settings.items():
            if key not in dict(NaConfig._fields_) or key in (
                "struct_size",
                "bind_address",
                "bind_port",
                "mode",
            ):
                raise ValueError(f"netapprox: unknown engine setting {key!r}")
            setattr(cfg, key, value)
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(256)
        rc = self._lib.na_engine_open(ctypes.byref(cfg), ctypes.byref(handle), err, len(err))
        if rc != NA_OK:
            raise NativeError("na_engine_open", rc, err.value.decode(errors="replace"))
        self._handle = handle
        self._events = (NaEvent * 256)()

    @property
    def port(self) -> int:
        port = self._lib.na_engine_local_port(self._live())
        if port < 0:
            raise NativeError("na_engine_local_port", port)
        return port

    def _live(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise NativeError("engine", NA_ERR_CLOSED, "the engine is closed")
        return self._handle

    def _check(self, call: str, rc: int) -> int:
        if rc < 0:
            raise NativeError(call, rc)
        return rc

    def open_session(self, session_id: int, key: bytes, host: str, port: int, initiator: bool) -> None:
        if len(key) != 32:
            raise ValueError("netapprox: a session key is 32 bytes")
        buf = (u8 * 32).from_buffer_copy(key)
        self._check(
            "na_session_open",
            self._lib.na_session_open(self._live(), session_id, buf, host.encode(), port, int(initiator)),
        )

    def close_session(self, session_id: int) -> None:
        self._check("na_session_close", self._lib.na_session_close(self._live(), session_id))

    def start_job(
        self, session_id: int, job_id: int, groups: list[tuple[int, int, float]], mrdf: bool = True
    ):
        """groups: (group_id, number of messages, MSR) in message-id order."""
        specs = (NaGroupSpec * len(groups))(*[NaGroupSpec(g, n, m) for g, n, m in groups])
        self._check(
            "na_job_start",
            self._lib.na_job_start(self._live(), session_id, job_id, specs, len(groups), int(mrdf)),
        )

    def submit(
        self, session_id: int, job_id: int, messages: list[tuple[int, int, bytes]], timeout_ms: int
    ) -> tuple[int, int]:
        """Submits (group index, index, payload) messages in order, waiting at most `timeout_ms` per batch for
        buffer space (0: never wait). Returns (accepted, status): status NA_OK when all were accepted,
        NA_ERR_WOULD_BLOCK when the send buffer is full (retry the rest later), NA_ERR_NOT_FOUND when the job has
        ended (the receiver already holds every target: the rest is not needed). Raises on any other error."""
        done = 0
        while done < len(messages):
            part = messages[done : done + NA_SUBMIT_BATCH_MAX]
            entries = (NaSubmitEntry * len(part))()
            keep = []
            for e, (g, i, data) in zip(entries, part):
                buf = ctypes.create_string_buffer(data, len(data))
                keep.append(buf)
                e.group_index, e.index, e.data, e.len = g, i, ctypes.cast(buf, ctypes.c_void_p), len(data)
            n = self._check(
                "na_job_submit_batch",
                self._lib.na_job_submit_batch(
                    self._live(), session_id, job_id, ctypes.addressof(entries), len(part), timeout_ms
                ),
            )
            done += n
            if n < len(part):
                status = entries[n].status
                if status in (NA_ERR_WOULD_BLOCK, NA_ERR_NOT_FOUND):
                    return done, status
                raise NativeError("na_job_submit_batch", status)
        return done, NA_OK

    def submit_entries(
        self, session_id: int, job_id: int, entries: np.ndarray, timeout_ms: int
    ) -> tuple[int, int]:
        """`submit` for messages already in memory: `entries` (`submit_entries(n)`, filled: group_index, index,
        data = an address, len) point at buffers the caller keeps alive for the call (the engine copies them before
        it returns). Same return values as `submit`; one native call per NA_SUBMIT_BATCH_MAX entries, no per-message
        Python."""
        if entries.dtype != SUBMIT_ENTRY or not entries.flags.c_contiguous:
            raise ValueError("netapprox: entries must be a contiguous submit_entries() array")
        done = 0
        while done < entries.size:
            part = entries[done : done + NA_SUBMIT_BATCH_MAX]
            n = self._check(
                "na_job_submit_batch",
                self._lib.na_job_submit_batch(
                    self._live(), session_id, job_id, part.ctypes.data, part.size, timeout_ms
                ),
            )
            done += n
            if n < part.size:
                status = int(part["status"][n])
                if status in (NA_ERR_WOULD_BLOCK, NA_ERR_NOT_FOUND):
                    return done, status
                raise NativeError("na_job_submit_batch", status)
        return done, NA_OK

    def cancel_job(self, session_id: int, job_id: int) -> None:
        rc = self._lib.na_job_cancel(self._live(), session_id, job_id)
        if rc not in (NA_OK, NA_ERR_NOT_FOUND):
            raise NativeError("na_job_cancel", rc)

    def poll(self, timeout_ms: int) -> list[Event]:
        """The events that arrived (waiting up to `timeout_ms` for the first): message data copied and released,
        reports copied and freed."""
        n = self._check(
            "na_poll_events",
            self._lib.na_poll_events(self._live(), ctypes.addressof(self._events), 256, timeout_ms),
        )
        out, handles = [], []
        for k in range(n):
            ev = self._events[k]
            e = Event(ev.type, ev.status, ev.session, ev.job, ev.message, ev.group_id)
            if ev.type == EVENT_EPOCH:
                e.epoch = (ev.epoch_rate_bps, ev.epoch_tlr, ev.epoch_loss, ev.epoch_priority_class)
            if ev.type == EVENT_MESSAGE:
                e.data = ctypes.string_at(ev.data, ev.len) if ev.len else b""
                handles.append(ev.handle)
            elif ev.type == EVENT_JOB_DONE and ev.report:
                try:
                    e.report = _copy_report(self._lib, ev.report)
                finally:
                    self._lib.na_report_free(ev.report)
            out.append(e)
        if handles:
            arr = (u64 * len(handles))(*handles)
            self._check(
                "na_message_release_batch",
                self._lib.na_message_release_batch(self._live(), ctypes.addressof(arr), len(arr)),
            )
        return out

    def poll_messages(self, timeout_ms: int, on_messages) -> list[Event]:
        """`poll` without a Python object per message: the messages of this poll go to
        `on_messages(sessions, jobs, group_ids, addresses, lengths)` (lists, one item per message, in arrival order)
        while their data is valid, and are released after it returns (also when it raises); the other events are
        returned as `poll` returns them."""
        n = self._check(
            "na_poll_events",
            self._lib.na_poll_events(self._live(), ctypes.addressof(self._events), 256, timeout_ms),
        )
        if n == 0:
            return []
        ev = np.frombuffer(self._events, dtype=EVENT, count=n)
        is_msg = ev["type"] == EVENT_MESSAGE
        out = []
        for k in np.flatnonzero(~is_msg).tolist():  # first: reports are freed even if on_messages raises
            ev_k = self._events[k]
            e = Event(ev_k.type, ev_k.status, ev_k.session, ev_k.job, ev_k.message, ev_k.group_id)
            if ev_k.type == EVENT_EPOCH:
                e.epoch = (ev_k.epoch_rate_bps, ev_k.epoch_tlr, ev_k.epoch_loss, ev_k.epoch_priority_class)
            if ev_k.type == EVENT_JOB_DONE and ev_k.report:
                try:
                    e.report = _copy_report(self._lib, ev_k.report)
                finally:
                    self._lib.na_report_free(ev_k.report)
            out.append(e)
        if is_msg.any():
            m = ev[is_msg]
            handles = np.ascontiguousarray(m["handle"])
            try:
                on_messages(
                    m["session"].tolist(),
                    m["job"].tolist(),
                    m["group_id"].tolist(),
                    m["data"].tolist(),
                    m["len"].tolist(),
                )
            finally:
                self._check(
                    "na_message_release_batch",
                    self._lib.na_message_release_batch(self._live(), handles.ctypes.data, handles.size),
                )
        return out

    def stats(self) -> dict[str, int]:
        s = NaStats()
        self._check("na_engine_stats", self._lib.na_engine_stats(self._live(), ctypes.byref(s)))
        return {name: getattr(s, name) for name, _ in NaStats._fields_}

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            self._lib.na_engine_close(handle)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def version() -> str:
    return load_library().na_version().decode()
