#!/usr/bin/env bash
# Profile (not a test): runs one atp-perf MSR=1 transfer over a veth pair between two namespaces with both ends
# under `perf record`, and prints each end's top functions with their share of cycles and the cycles per
# datagram they stand for (docs/history.md, "Per-datagram CPU budget"). Needs root and perf.
#
#   benchmarks/netlab/veth_profile.sh [path/to/atp-perf]
#   env: MESSAGES (default 4096), SIZE (default 65536), RATE_GBPS (default 40), TOP (default 25),
#        OUT (directory for perf.data and the reports, default a temporary directory, kept),
#        LOOPBACK=1 profiles over loopback in one namespace instead of veth.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
perf_bin="${1:-$repo/native/build/atp-perf}"
MESSAGES="${MESSAGES:-4096}"
SIZE="${SIZE:-65536}"
RATE_GBPS="${RATE_GBPS:-40}"
TOP="${TOP:-25}"
OUT="${OUT:-$(mktemp -d)}"
LOOPBACK="${LOOPBACK:-0}"
PORT=7471
NS_A="na_prof_a_$$"
NS_B="na_prof_b_$$"
IP_A=10.232.0.1
IP_B=10.232.0.2

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 0; }
command -v perf >/dev/null || { echo "SKIP: perf not installed (scripts/setup.sh installs linux-perf)" >&2; exit 0; }
[ -x "$perf_bin" ] || { echo "atp-perf not found at $perf_bin" >&2; exit 1; }
mkdir -p "$OUT"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -INT "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add "$NS_A"
ip netns add "$NS_B"
ip -n "$NS_A" link set lo up
ip -n "$NS_B" link set lo up
if [ "$LOOPBACK" = 1 ]; then
  NS_B="$NS_A"; IP_A=127.0.0.1; IP_B=127.0.0.1
else
  ip link add pa_$$ type veth peer name pb_$$
  ip link set pa_$$ netns "$NS_A"
  ip link set pb_$$ netns "$NS_B"
  ip -n "$NS_A" addr add "$IP_A/24" dev pa_$$
  ip -n "$NS_B" addr add "$IP_B/24" dev pb_$$
  ip -n "$NS_A" link set pa_$$ mtu 1500 up
  ip -n "$NS_B" link set pb_$$ mtu 1500 up
fi

ip netns exec "$NS_B" perf record -q -F 2999 -o "$OUT/server.data" -- \
  "$perf_bin" server --bind "$IP_B" --port "$PORT" --rate-gbps "$RATE_GBPS" 2> "$OUT/server.log" &
server_pid=$!
sleep 1
ip netns exec "$NS_A" perf record -q -F 2999 -o "$OUT/client.data" -- \
  "$perf_bin" client --connect "$IP_B" --port "$PORT" --messages "$MESSAGES" --size "$SIZE" --groups 1.0 \
  --rate-gbps "$RATE_GBPS" --json "$OUT/atp.json" > /dev/null 2> "$OUT/client.log"
sleep 0.5
kill -INT "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""

python3 - "$OUT" "$TOP" <<'PY'
import json, subprocess, sys
out, top = sys.argv[1], int(sys.argv[2])
j = json.load(open(f"{out}/atp.json"))
packets = j["packets_sent"]
print(f"transfer: {j['goodput_gbps']:.2f} Gbit/s, {packets} datagrams sent, {j['retransmissions']} retransmissions")
for side in ("client", "server"):
    cyc = subprocess.run(["perf", "report", "-i", f"{out}/{side}.data", "--stdio", "-q", "--sort", "sym",
                          "--show-total-period"], capture_output=True, text=True).stdout
    rows = []
    total = 0
    for line in cyc.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[0].endswith("%"):
            continue
        pct, period = float(parts[0][:-1]), int(parts[1])
        sym = " ".join(parts[3:])
        total += period
        rows.append((pct, period, sym))
    print(f"\n== {side} ({'sender' if side == 'client' else 'receiver'}): {total / 1e9:.2f} G cycles, "
          f"{total / max(packets, 1):.0f} cycles per datagram")
    for pct, period, sym in rows[:top]:
        print(f"  {pct:6.2f}%  {period / max(packets, 1):8.0f} cyc/dgram  {sym}")
PY
echo "perf data and logs kept in $OUT" >&2
