"""The lab itself: H host namespaces around one switch namespace, with a bottleneck on the switch's egress port
toward host 1 (the receiver), optionally every host's uplink shaped to a line rate. Python 3.11 stdlib only;
`up`, `down` and `exec` need root. Command line (from benchmarks/netlab, or PYTHONPATH=benchmarks/netlab):

  python3 -m netlab up    --hosts H --rate 1gbit --buffer 200kb --mode fifo|slack [--host-rate 1gbit]
                          [--mtu 1500] [--name NAME] [--shape-all]
  python3 -m netlab down  [--name NAME]
  python3 -m netlab plan  --rate 1gbit --buffer 200kb --mode fifo|slack [--mtu 1500] [--dev DEV] [--json]
  python3 -m netlab exec  HOST -- cmd...          (HOST: h1, h2, ..., 1, 2, ..., or sw)
  python3 -m netlab status [--name NAME]          (prints tc -s of the bottleneck)
  python3 -m netlab ping  SRC DST_HOST [--count N] (ICMP echo from a namespace; there is no ping binary here)

Topology (see docs/netlab.md): host i is namespace NAME-h<i> with interface eth0 = 10.77.0.<i>/24; the switch
is namespace NAME-sw with a Linux bridge br0 enslaving ports p1..pH (p<i> is the peer of host i's eth0). The
bottleneck qdisc sits on p1's egress (traffic toward h1). The switch queues come from one QueuePlan, the host
uplinks from one HostLink.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

SUBNET = "10.77.0"  # hosts are 10.77.0.<i>/24, i = 1..H
BRIDGE = "br0"
HOST_IF = "eth0"
ETH_HEADER = 14  # qdiscs account skb->len = IP packet + Ethernet header (no FCS, no VLAN)
# Same map as native/src/core/engine.hpp `dscp_by_class`: class 0 = exact traffic, class 7 = most loss-tolerant.
DEFAULT_DSCP_BY_CLASS = (46, 40, 32, 24, 18, 16, 10, 8)
NUM_CLASSES = 8
MAX_HOSTS = 200
LINUX_TXQUEUELEN = 1000  # a Linux NIC's default transmit queue, in packets: the host uplink's queue
# The directory that holds the `netlab` package: child processes that run `python3 -m netlab` get it as PYTHONPATH.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class LabError(Exception):
    """A failure with a message meant for the user (no traceback)."""


# ----------------------------------------------------------------------------------------------------------------
# Units (same conventions as tc: sizes "kb"/"k" = 1024 bytes, "mb" = 1024^2; rates "kbit" = 1000 bit/s, SI)

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "kbit": 1024 // 8,
    "mbit": 1024**2 // 8,
}
_RATE_UNITS = {
    "bit": 1,
    "kbit": 10**3,
    "mbit": 10**6,
    "gbit": 10**9,
    "tbit": 10**12,
    "bps": 8,
    "kbps": 8 * 10**3,
    "mbps": 8 * 10**6,
    "gbps": 8 * 10**9,
}


def parse_size(text: str) -> int:
    """Bytes from a tc-style size ("200kb" = 204800, "1500", "1mb")."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise LabError(f"bad size {text!r} (examples: 200kb, 1mb, 150000)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def parse_rate(text: str) -> int:
    """Bits per second from a tc-style rate ("1gbit" = 10^9, "100mbit"); a bare number is bit/s."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    unit = m.group(2).lower() if m else None
    if unit == "":
        unit = "bit"
    if not m or unit not in _RATE_UNITS:
        raise LabError(f"bad rate {text!r} (examples: 1gbit, 100mbit, 10000000bit)")
    bps = int(float(m.group(1)) * _RATE_UNITS[unit])
    if bps < 8000:
        raise LabError(f"rate {text!r} is below 8kbit")
    return bps


# ----------------------------------------------------------------------------------------------------------------
# The one description of the switch queues


@dataclasses.dataclass(frozen=True)
class QueueClass:
    index: int  # slack-priority class; 0 = exact (highest priority), 7 = lowest
    dscp: int | None  # None: the single FIFO takes everything
    buffer_bytes: int  # leaf bfifo limit (bytes, Ethernet frames as the qdisc counts them)
    frames: float  # buffer in full-size frames (mtu + 14 bytes)
    htb_prio: int  # HTB prio (0 = served first)
    minor: int  # HTB class id 1:<minor>; leaf qdisc handle <minor>:

    @property
    def tos(self) -> int | None:
        return None if self.dscp is None else self.dscp << 2


@dataclasses.dataclass(frozen=True)
class QueuePlan:
    mode: str  # "fifo" or "slack"
    rate_bps: int  # bottleneck rate
    buffer_bytes: int  # total buffer of the egress port
    mtu: int = 1500
    dscp_by_class: tuple[int, ...] = DEFAULT_DSCP_BY_CLASS
    default_class: int = 0  # where traffic with an unmapped DSCP (e.g. plain TCP, ARP) goes in slack mode
    floor_permille: int = 1  # HTB guaranteed rate per slack class, in 1/1000 of the link (near-strict prio)
    burst_us: int = 100  # HTB token bucket depth in microseconds of link rate (at least 2 frames)

    @property
    def frame_bytes(self) -> int:
        return self.mtu + ETH_HEADER

    @property
    def burst_bytes(self) -> int:
        return max(2 * self.frame_bytes, self.rate_bps * self.burst_us // 8_000_000)

    @classmethod
    def build(
        cls,
        mode: str,
        rate: str | int,
        buffer: str | int,
        mtu: int = 1500,
        dscp_by_class: tuple[int, ...] = DEFAULT_DSCP_BY_CLASS,
    ) -> QueuePlan:
        plan = cls(
            mode=mode,
            rate_bps=rate if isinstance(rate, int) else parse_rate(rate),
            buffer_bytes=buffer if isinstance(buffer, int) else parse_size(buffer),
            mtu=int(mtu),
            dscp_by_class=tuple(dscp_by_class),
        )
        plan.validate()
        return plan

    def validate(self) -> None:
        if self.mode not in ("fifo", "slack"):
            raise LabError(f"mode must be fifo or slack, not {self.mode!r}")
        if not 576 <= self.mtu <= 9000:
            raise LabError(f"mtu {self.mtu} outside 576..9000")
        if (
            len(self.dscp_by_class) != NUM_CLASSES
            or len(set(self.dscp_by_class)) != NUM_CLASSES
            or not all(0 <= d <= 63 for d in self.dscp_by_class)
        ):
            raise LabError("dscp_by_class needs 8 distinct DSCP values in 0..63")
        need = self.frame_bytes * (
            sum(range(1, NUM_CLASSES)) + 1
        )  # 28 frames for classes 1..7 + 1 for class 0
        if self.mode == "slack" and self.buffer_bytes < need:
            raise LabError(
                f"slack mode needs a buffer of at least {need} bytes (28 frames for classes 1..7 "
                f"plus one for class 0, frame = {self.frame_bytes} B); got {self.buffer_bytes}"
            )
        if self.buffer_bytes < self.frame_bytes:
            raise LabError(f"buffer {self.buffer_bytes} B is smaller than one frame ({self.frame_bytes} B)")

    def classes(self) -> list[QueueClass]:
        """fifo: one queue with the whole buffer. slack (paper section 5 / brief section 3): the lowest-priority
        class 7 holds 1 frame, each higher class one more (class k holds 8-k frames), class 0 (exact) the rest."""
        f = self.frame_bytes
        if self.mode == "fifo":
            return [QueueClass(0, None, self.buffer_bytes, self.buffer_bytes / f, 0, 10)]
        out = []
        for k in range(1, NUM_CLASSES):
            out.append(
                QueueClass(k, self.dscp_by_class[k], (NUM_CLASSES - k) * f, NUM_CLASSES - k, k, 10 + k)
            )
        rest = self.buffer_bytes - sum(c.buffer_bytes for c in out)
        out.insert(0, QueueClass(0, self.dscp_by_class[0], rest, rest / f, 0, 10))
        return out

    # -- Linux tc ------------------------------------------------------------------------------------------------

    def tc_commands(self, dev: str) -> list[list[str]]:
        """tc argument lists (without the leading `tc`) that install the plan on `dev`'s egress."""
        rate = f"{self.rate_bps}bit"
        burst = str(self.burst_bytes)
        q = str(self.frame_bytes)
        classes = self.classes()
        default_minor = 10 if self.mode == "fifo" else classes[self.default_class].minor
        cmds = [
            ["qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", f"{default_minor:x}"],
            [
                "class",
                "add",
                "dev",
                dev,
                "parent",
                "1:",
                "classid",
                "1:1",
                "htb",
                "rate",
                rate,
                "ceil",
                rate,
                "burst",
                burst,
                "cburst",
                burst,
                "quantum",
                q,
            ],
        ]
        floor = max(8000, self.rate_bps * self.floor_permille // 1000)
        for c in classes:
            crate = rate if self.mode == "fifo" else f"{floor}bit"
            cmds.append(
                [
                    "class",
                    "add",
                    "dev",
                    dev,
                    "parent",
                    "1:1",
                    "classid",
                    f"1:{c.minor:x}",
                    "htb",
                    "rate",
                    crate,
                    "ceil",
                    rate,
                    "burst",
                    burst,
                    "cburst",
                    burst,
                    "prio",
                    str(c.htb_prio),
                    "quantum",
                    q,
                ]
            )
            cmds.append(
                [
                    "qdisc",
                    "add",
                    "dev",
                    dev,
                    "parent",
                    f"1:{c.minor:x}",
                    "handle",
                    f"{c.minor:x}:",
                    "bfifo",
                    "limit",
                    str(c.buffer_bytes),
                ]
            )
        for c in classes:
            if c.dscp is None:
                continue
            cmds.append(
                [
                    "filter",
                    "add",
                    "dev",
                    dev,
                    "parent",
                    "1:",
                    "protocol",
                    "ip",
                    "prio",
                    "1",
                    "u32",
                    "match",
                    "ip",
                    "tos",
                    f"0x{c.tos:02x}",
                    "0xfc",
                    "flowid",
                    f"1:{c.minor:x}",
                ]
            )
        return cmds

    def to_dict(self) -> dict:
        return {
            "mode": self.mode,
            "rate_bps": self.rate_bps,
            "buffer_bytes": self.buffer_bytes,
            "mtu": self.mtu,
            "frame_bytes": self.frame_bytes,
            "default_class": self.default_class,
            "classes": [dataclasses.asdict(c) | {"tos": c.tos} for c in self.classes()],
        }

    def table(self) -> str:
        lines = [
            f"mode {self.mode}, rate {self.rate_bps} bit/s, buffer {self.buffer_bytes} B, mtu {self.mtu} "
            f"(frame {self.frame_bytes} B as the qdisc counts it), shaper burst {self.burst_bytes} B",
            f"{'class':>5} {'role':<11} {'DSCP':>4} {'TOS':>5} {'strict prio':>11} {'buffer B':>9} "
            f"{'frames':>7}  tc class",
        ]
        for c in self.classes():
            role = "all" if c.dscp is None else ("exact" if c.index == 0 else "approx")
            if self.mode == "slack" and c.index == self.default_class:
                role += "+other"
            dscp = "any" if c.dscp is None else str(c.dscp)
            tos = "-" if c.tos is None else f"0x{c.tos:02x}"
            lines.append(
                f"{c.index:>5} {role:<11} {dscp:>4} {tos:>5} {c.htb_prio:>11} {c.buffer_bytes:>9} "
                f"{c.frames:>7.1f}  1:{c.minor:x}"
            )
        return "\n".join(lines)

    def switch_doc(self) -> str:
        if self.mode == "fifo":
            return (
                "Real switch: one egress queue for all traffic (no DSCP trust / QoS off), with a static buffer "
                f"limit of {self.buffer_bytes} bytes on the port toward the receiver; shaping to "
                f"{self.rate_bps} bit/s only if the port is faster than the emulated bottleneck."
            )
        cls = self.classes()
        m = ", ".join(f"DSCP {c.dscp}->queue {7 - c.index}" for c in cls)
        b = ", ".join(f"queue {7 - c.index}: {c.buffer_bytes} B" for c in cls)
        return "\n".join(
            [
                "Linux router (the switch namespace is one): apply the tc commands above to every egress port that can "
                "congest; forwarding does not touch DSCP, so hosts' marks survive. Use the same plan on each port.",
                "Commodity switch (SONiC / Arista / Cisco style), 8 egress queues per port:",
                "  1. Trust DSCP on ingress and map DSCP to traffic class / egress queue (queue 7 = highest here, "
                "so NetApprox class c -> queue 7-c):",
                f"     {m}; every other DSCP -> the queue of class {self.default_class}.",
                "  2. Scheduler: strict priority across all 8 queues (no DWRR), port shaper = link rate.",
                "  3. Per-queue static buffer limits (disable dynamic/shared-buffer alpha for these queues, or set "
                "static thresholds): " + b + ".",
                "  4. Tail drop (no WRED/ECN) on queues 0..6 (NetApprox classes 7..1); PFC off for them.",
                "  Example SONiC-style: DSCP_TO_TC_MAP + TC_TO_QUEUE_MAP, SCHEDULER type STRICT, BUFFER_PROFILE "
                "static_th per queue. Cisco MQC: class-map match dscp X -> policy-map priority level + queue-limit "
                "bytes.",
            ]
        )


@dataclasses.dataclass(frozen=True)
class HostLink:
    """A host's uplink (its NIC): a token bucket on the egress of the host's eth0 at the host line rate, with
    a Linux NIC's default queue of 1000 frames behind it. With the line rate equal to the switch port's rate
    (the datacenter configuration) one sender alone cannot congest the switch port; the bottleneck there comes
    from fan-in. Without a HostLink the host side is an unshaped veth (tens of Gbit/s)."""

    rate_bps: int
    mtu: int = 1500
    queue_frames: int = LINUX_TXQUEUELEN
    burst_us: int = 100  # token bucket depth in microseconds of line rate (at least 2 frames), as the switch

    @property
    def frame_bytes(self) -> int:
        return self.mtu + ETH_HEADER

    @property
    def burst_bytes(self) -> int:
        return max(2 * self.frame_bytes, self.rate_bps * self.burst_us // 8_000_000)

    @property
    def limit_bytes(self) -> int:
        return self.queue_frames * self.frame_bytes

    def tc_commands(self, dev: str = "eth0") -> list[list[str]]:
        return [
            [
                "qdisc",
                "replace",
                "dev",
                dev,
                "root",
                "tbf",
                "rate",
                f"{self.rate_bps}bit",
                "burst",
                str(self.burst_bytes),
                "limit",
                str(self.limit_bytes),
            ]
        ]


# ----------------------------------------------------------------------------------------------------------------
# Running commands


def run(args: list[str], check: bool = True, capture: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(args, text=True, capture_output=capture)
    if check and p.returncode != 0:
        raise LabError(f"command failed ({p.returncode}): {' '.join(args)}\n{(p.stderr or '').strip()}")
    return p


def ns_names(name: str, hosts: int) -> tuple[str, list[str]]:
    return f"{name}-sw", [f"{name}-h{i}" for i in range(1, hosts + 1)]


def existing_namespaces() -> list[str]:
    p = run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def lab_namespaces(name: str) -> list[str]:
    pat = re.compile(rf"^{re.escape(name)}-(sw|h\d+)$")
    return [n for n in existing_namespaces() if pat.match(n)]


def spawn_in(ns: str, args: list[str], log_path: str, env: dict | None = None) -> subprocess.Popen:
    """Starts args inside namespace ns, in its own process group, output to log_path."""
    with open(log_path, "w") as f:
        return subprocess.Popen(
            ["ip", "netns", "exec", ns, *args],
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=None if env is None else {**os.environ, **env},
        )


def stop_group(p: subprocess.Popen, timeout: float) -> None:
    """SIGTERM to the process group of p (started by spawn_in), SIGKILL after timeout seconds."""
    if p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def require_root() -> None:
    if os.geteuid() != 0:
        raise LabError("netlab needs root (network namespaces, veth, tc); run it as root / with sudo")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise LabError(f"netlab needs `{tool}` (iproute2), which is not installed here")


def check_name(name: str) -> None:
    if not re.fullmatch(r"[a-zA-Z][a-zA-Z0-9_]{0,19}", name):
        raise LabError(f"lab name {name!r}: use 1-20 letters/digits/_ starting with a letter")


def down(name: str, quiet: bool = False) -> list[str]:
    """Delete the lab's namespaces (their veths and qdiscs go with them). Processes still running inside a lab
    namespace (started with `exec`) are terminated first, since they would keep the namespace alive."""
    gone = []
    for ns in lab_namespaces(name):
        pids = run(["ip", "netns", "pids", ns], check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGTERM)
            except (ProcessLookupError, ValueError):
                pass
        run(["ip", "netns", "del", ns], check=False)
        gone.append(ns)
    left = lab_namespaces(name)
    if left:
        raise LabError(f"could not delete namespaces: {' '.join(left)}")
    if not quiet:
        print(
            f"netlab: down {name}: removed {len(gone)} namespaces" + (f" ({' '.join(gone)})" if gone else "")
        )
    return gone


class _Interrupted(Exception):
    pass


def up(
    name: str,
    hosts: int,
    plan: QueuePlan,
    quiet: bool = False,
    shape_all: bool = False,
    host_link: HostLink | None = None,
) -> None:
    """shape_all: install the plan on every switch port (each host's downlink is a bottleneck, for all-to-all
    patterns), not only on p1. host_link: shape every host's uplink (eth0 egress) to its line rate."""
    require_root()
    check_name(name)
    if not 2 <= hosts <= MAX_HOSTS:
        raise LabError(f"--hosts must be in 2..{MAX_HOSTS}")
    stale = lab_namespaces(name)
    if stale:
        if not quiet:
            print(f"netlab: removing stale lab {name} ({' '.join(stale)})")
        down(name, quiet=True)
    sw, hs = ns_names(name, hosts)

    def on_signal(signum, _frame):
        raise _Interrupted(signal.Signals(signum).name)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        p = run(["ip", "netns", "add", sw], check=False)
        if p.returncode != 0:
            raise LabError(f"cannot create network namespaces here: {p.stderr.strip()}")
        ipn = lambda ns, *a: run(["ip", "-n", ns, *a])  # noqa: E731
        ipn(sw, "link", "set", "lo", "up")
        ipn(sw, "link", "add", BRIDGE, "type", "bridge", "stp_state", "0", "forward_delay", "0")
        ipn(sw, "link", "set", BRIDGE, "mtu", str(plan.mtu), "up")
        for i, h in enumerate(hs, start=1):
            port = f"p{i}"
            run(["ip", "netns", "add", h])
            ipn(h, "link", "set", "lo", "up")
            run(["ip", "link", "add", HOST_IF, "netns", h, "type", "veth", "peer", "name", port, "netns", sw])
            # gso_max_segs 1: the sender's stack segments TSO/GSO/UDP_SEGMENT skbs before they enter the veth, so
            # the bottleneck qdisc only ever sees wire-size frames (a 64 KB GSO skb would never fit a 1-frame bfifo).
            for ns, dev in ((h, HOST_IF), (sw, port)):
                ipn(
                    ns,
                    "link",
                    "set",
                    dev,
                    "mtu",
                    str(plan.mtu),
                    "gso_max_size",
                    str(plan.frame_bytes),
                    "gso_max_segs",
                    "1",
                )
            ipn(sw, "link", "set", port, "master", BRIDGE)
            ipn(sw, "link", "set", port, "up")
            ipn(h, "addr", "add", f"{SUBNET}.{i}/24", "dev", HOST_IF)
            ipn(h, "link", "set", HOST_IF, "up")
            if host_link is not None:
                for cmd in host_link.tc_commands(HOST_IF):
                    run(["ip", "netns", "exec", h, "tc", *cmd])
        for port in [f"p{i}" for i in range(1, hosts + 1)] if shape_all else ["p1"]:
            for cmd in plan.tc_commands(port):
                run(["ip", "netns", "exec", sw, "tc", *cmd])
    except BaseException as e:
        try:
            down(name, quiet=True)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        if isinstance(e, _Interrupted):
            raise LabError(f"interrupted by {e}; lab {name} torn down") from None
        if isinstance(e, LabError):
            raise LabError(f"{e}\n(lab {name} torn down)") from None
        raise
    for s, h in old.items():
        signal.signal(s, h)
    if not quiet:
        print(
            f"netlab: up {name}: {hosts} hosts {SUBNET}.1-{hosts}/24 ({hs[0]}..{hs[-1]}), switch {sw} "
            f"(bridge {BRIDGE}), bottleneck on {sw}:"
            + ("every port" if shape_all else "p1 -> h1")
            + (f", host uplinks {host_link.rate_bps} bit/s" if host_link else ", host uplinks unshaped")
        )
        print(plan.table())


def resolve_host(name: str, host: str) -> str:
    if host in ("sw", "switch"):
        return f"{name}-sw"
    m = re.fullmatch(r"h?(\d+)", host)
    if not m:
        raise LabError(f"host {host!r}: use h1, h2, ... or sw")
    ns = f"{name}-h{int(m.group(1))}"
    if ns not in existing_namespaces():
        raise LabError(f"namespace {ns} does not exist (is lab {name} up?)")
    return ns


# ----------------------------------------------------------------------------------------------------------------
# ICMP echo (no ping binary on this machine); runs inside a namespace via `ip netns exec`


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def icmp_ping(dst: str, count: int = 3, timeout: float = 1.0, interval: float = 0.0) -> list[float]:
    """Sends `count` echo requests; returns the round-trip times (ms) of the replies. Prints one line per reply."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.settimeout(timeout)
    ident, rtts = os.getpid() & 0xFFFF, []
    for seq in range(1, count + 1):
        if seq > 1 and interval:
            time.sleep(interval)
        body = struct.pack("!d", time.monotonic()) + b"netlab"
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        sock.sendto(struct.pack("!BBHHH", 8, 0, _checksum(hdr + body), ident, seq) + body, (dst, 0))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                pkt, addr = sock.recvfrom(2048)
            except TimeoutError:
                break
            ihl = (pkt[0] & 0x0F) * 4
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", pkt[ihl : ihl + 8])
            if typ == 0 and rid == ident and rseq == seq:
                rtt = (time.monotonic() - struct.unpack("!d", pkt[ihl + 8 : ihl + 16])[0]) * 1000
                print(f"reply from {addr[0]}: seq={seq} time={rtt:.3f} ms")
                rtts.append(rtt)
                break
    print(f"{count} sent, {len(rtts)} received" + (f", min {min(rtts):.3f} ms" if rtts else ""))
    return rtts


def module_command(*args: str) -> list[str]:
    """argv that runs `python3 -m netlab <args>` (in a namespace via `ip netns exec ... env PYTHONPATH=...`)."""
    return ["env", f"PYTHONPATH={PACKAGE_PARENT}", sys.executable, "-m", "netlab", *args]


def base_rtt_ms(name: str, src: int, dst: int, count: int = 20) -> float:
    """The idle path's round-trip time from host src to host dst: the minimum of `count` ICMP echoes 10 ms apart
    (measured from Python, so it includes a few tens of microseconds of interpreter time)."""
    p = run(
        [
            "ip",
            "netns",
            "exec",
            f"{name}-h{src}",
            *module_command("_icmp", f"{SUBNET}.{dst}", "--count", str(count), "--interval", "0.01"),
        ],
        check=False,
    )
    m = re.search(r"min ([0-9.]+) ms", p.stdout)
    if not m:
        raise LabError(
            f"no ICMP reply from h{dst} to h{src} in lab {name}: {p.stdout.strip()} {p.stderr.strip()}"
        )
    return float(m.group(1))


def parse_qdisc_counters(text: str) -> dict[int, dict]:
    """`tc -s -j qdisc show` output -> {leaf handle major (the HTB class minor, e.g. 0xa): {bytes, packets, drops}}
    for the leaf bfifo qdiscs under the HTB root (the root's own counters are left out)."""
    out = {}
    for q in json.loads(text or "[]"):
        if q.get("root") or q.get("kind") != "bfifo":
            continue
        major = int(q["handle"].split(":")[0], 16)
        out[major] = dict(
            bytes=int(q.get("bytes", 0)), packets=int(q.get("packets", 0)), drops=int(q.get("drops", 0))
        )
    return out


def port_counters(name: str, dev: str = "p1") -> dict[int, dict]:
    """Per-leaf counters of the bottleneck port's queues (switch namespace, device `dev`), see parse_qdisc_counters.
    Empty if tc fails (the lab is being torn down)."""
    p = run(["ip", "netns", "exec", f"{name}-sw", "tc", "-s", "-j", "qdisc", "show", "dev", dev], check=False)
    return parse_qdisc_counters(p.stdout) if p.returncode == 0 else {}


def parse_bytes_acked(text: str) -> int:
    """Sum of `bytes_acked` over the TCP connections of `ss -ti` output (what the peers acknowledged: delivered
    payload bytes)."""
    return sum(int(m) for m in re.findall(r"bytes_acked:(\d+)", text))


def tcp_bytes_acked(name: str, host: int) -> int:
    """Payload bytes the TCP connections of host `host` had delivered (acknowledged) so far: the background
    iperf3 clients' progress when `host` is the background host."""
    p = run(["ip", "netns", "exec", f"{name}-h{host}", "ss", "-tinH"], check=False)
    return parse_bytes_acked(p.stdout) if p.returncode == 0 else 0


# ----------------------------------------------------------------------------------------------------------------
# CLI


def _plan_from_args(a) -> QueuePlan:
    return QueuePlan.build(a.mode, a.rate, a.buffer, a.mtu)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m netlab", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def plan_args(p):
        p.add_argument("--rate", required=True, help="bottleneck rate, tc syntax (1gbit, 100mbit)")
        p.add_argument("--buffer", required=True, help="total egress buffer, tc syntax (200kb = 204800 B)")
        p.add_argument("--mode", required=True, choices=("fifo", "slack"))
        p.add_argument("--mtu", type=int, default=1500)

    p_up = sub.add_parser("up", help="create the lab (removes a stale lab of the same name first)")
    p_up.add_argument("--hosts", type=int, required=True)
    plan_args(p_up)
    p_up.add_argument("--name", default="netlab")
    p_up.add_argument("--shape-all", action="store_true", help="bottleneck on every switch port, not only p1")
    p_up.add_argument(
        "--host-rate",
        help="shape every host's uplink to this line rate (tc syntax, e.g. 200mbit); default: unshaped veth",
    )
    p_down = sub.add_parser("down", help="tear the lab down")
    p_down.add_argument("--name", default="netlab")
    p_plan = sub.add_parser("plan", help="print the queue plan (no root needed)")
    plan_args(p_plan)
    p_plan.add_argument("--dev", default="p1", help="device name used in the printed tc commands")
    p_plan.add_argument("--json", action="store_true", help="print the plan as JSON only")
    p_exec = sub.add_parser("exec", help="run a command in a lab namespace: exec HOST -- cmd...")
    p_exec.add_argument("host")
    p_exec.add_argument("command", nargs=argparse.REMAINDER)
    p_exec.add_argument("--name", default="netlab")
    p_status = sub.add_parser("status", help="show tc -s of the bottleneck port")
    p_status.add_argument("--name", default="netlab")
    p_ping = sub.add_parser("ping", help="ICMP echo from a lab host to another: ping h2 h1")
    p_ping.add_argument("src")
    p_ping.add_argument("dst", help="lab host (h1) or an IPv4 address")
    p_ping.add_argument("--count", type=int, default=3)
    p_ping.add_argument("--name", default="netlab")
    p_icmp = sub.add_parser("_icmp", help=argparse.SUPPRESS)  # internal: runs inside a namespace
    p_icmp.add_argument("dst")
    p_icmp.add_argument("--count", type=int, default=3)
    p_icmp.add_argument("--interval", type=float, default=0.0)

    a = ap.parse_args(argv)
    try:
        if a.cmd == "plan":
            plan = _plan_from_args(a)
            if a.json:
                print(json.dumps(plan.to_dict(), indent=2))
                return 0
            print("# queue plan\n" + plan.table())
            print(f"\n# tc commands (egress of {a.dev})")
            for c in plan.tc_commands(a.dev):
                print("tc " + " ".join(c))
            print("\n# on a real switch / router\n" + plan.switch_doc())
            return 0
        if a.cmd == "_icmp":
            return 0 if len(icmp_ping(a.dst, a.count, interval=a.interval)) == a.count else 1
        require_root()
        if a.cmd == "up":
            link = HostLink(parse_rate(a.host_rate), mtu=a.mtu) if a.host_rate else None
            up(a.name, a.hosts, _plan_from_args(a), shape_all=a.shape_all, host_link=link)
        elif a.cmd == "down":
            down(a.name)
        elif a.cmd == "exec":
            cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
            if not cmd:
                raise LabError("exec needs a command: exec HOST -- cmd...")
            os.execvp("ip", ["ip", "netns", "exec", resolve_host(a.name, a.host), *cmd])
        elif a.cmd == "status":
            sw = resolve_host(a.name, "sw") if f"{a.name}-sw" in existing_namespaces() else None
            if sw is None:
                raise LabError(f"lab {a.name} is not up")
            for what in ("qdisc", "class", "filter"):
                print(f"## tc -s {what} show dev p1")
                print(run(["ip", "netns", "exec", sw, "tc", "-s", what, "show", "dev", "p1"]).stdout)
        elif a.cmd == "ping":
            src = resolve_host(a.name, a.src)
            m = re.fullmatch(r"h?(\d+)", a.dst)
            dst = f"{SUBNET}.{int(m.group(1))}" if m else a.dst
            return subprocess.call(
                ["ip", "netns", "exec", src, *module_command("_icmp", dst, "--count", str(a.count))]
            )
        return 0
    except LabError as e:
        print(f"netlab: {e}", file=sys.stderr)
        return 2
