#!/usr/bin/env bash
# Benchmark (not a test): MSR=1 goodput of ATP (atp-perf) against plain TCP (atp-perf --tcp) over one veth pair
# between two network namespaces (MTU 1500), measured in the same run. Prints the raw JSON of both runs and
# the ratio ATP/TCP, and writes $OUT/latest.json: {date, command, commit, atp_gbps, tcp_gbps, ratio,
# atp_retransmissions, packets (ATP packets sent), atp: <raw>, tcp: <raw>} (docs/driver.md reports it).
# Needs root (network namespaces); skips with a message otherwise.
#
#   benchmarks/netlab/veth_goodput.sh [path/to/atp-perf]
#   env: MESSAGES (default 16384), SIZE (default 65536 = 64 KiB), RATE_GBPS (ATP R_max, default 40),
#        MODE (default full), OUT (results directory, default benchmarks/results/veth),
#        ATP_ARGS (extra atp-perf flags for both ATP ends, e.g. "--no-payload-auth")
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
perf="${1:-$repo/native/build/atp-perf}"
MESSAGES="${MESSAGES:-16384}"
SIZE="${SIZE:-65536}"
RATE_GBPS="${RATE_GBPS:-40}"
MODE="${MODE:-full}"
OUT="${OUT:-$repo/benchmarks/results/veth}"
PORT=7470
NS_A="na_bench_a_$$"
NS_B="na_bench_b_$$"
IP_A=10.231.0.1
IP_B=10.231.0.2

skip() { echo "SKIP: $*" >&2; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null || skip "iproute2 (ip) not installed"
[ -x "$perf" ] || { echo "atp-perf not found at $perf (build native/ first)" >&2; exit 1; }
ip netns add "$NS_A" 2>/dev/null || skip "cannot create network namespaces here"

server_pid=""
work="$(mktemp -d)"   # raw per-run JSON and the server log
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  rm -rf "$work"
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add "$NS_B"
ip link add va_$$ type veth peer name vb_$$
ip link set va_$$ netns "$NS_A"
ip link set vb_$$ netns "$NS_B"
ip -n "$NS_A" addr add "$IP_A/24" dev va_$$
ip -n "$NS_B" addr add "$IP_B/24" dev vb_$$
ip -n "$NS_A" link set va_$$ mtu 1500 up
ip -n "$NS_B" link set vb_$$ mtu 1500 up
ip -n "$NS_A" link set lo up
ip -n "$NS_B" link set lo up

mkdir -p "$OUT"
ATP_ARGS="${ATP_ARGS:-}"
# shellcheck disable=SC2086  # ATP_ARGS is a list of flags
ip netns exec "$NS_B" "$perf" server --bind "$IP_B" --port "$PORT" --rate-gbps "$RATE_GBPS" $ATP_ARGS \
  2> "$work/server.log" &
server_pid=$!
sleep 0.5

echo "== ATP ($MODE, MSR=1): $MESSAGES x $SIZE bytes over veth (MTU 1500), R_max $RATE_GBPS Gbit/s" >&2
ip netns exec "$NS_A" "$perf" client --connect "$IP_B" --port "$PORT" --messages "$MESSAGES" --size "$SIZE" \
  --groups 1.0 --mode "$MODE" --rate-gbps "$RATE_GBPS" $ATP_ARGS --json "$work/atp.json" > /dev/null
echo "== TCP: same messages, one connection, same path" >&2
ip netns exec "$NS_A" "$perf" client --connect "$IP_B" --port "$PORT" --messages "$MESSAGES" --size "$SIZE" \
  --tcp --json "$work/tcp.json" > /dev/null

commit="$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
python3 - "$work/atp.json" "$work/tcp.json" "$OUT/latest.json" "$commit" \
  "MESSAGES=$MESSAGES SIZE=$SIZE RATE_GBPS=$RATE_GBPS MODE=$MODE benchmarks/netlab/veth_goodput.sh" <<'PY'
import json, sys, time
atp = json.load(open(sys.argv[1])); tcp = json.load(open(sys.argv[2]))
print("ATP raw:", json.dumps(atp))
print("TCP raw:", json.dumps(tcp))
print(f"ATP: {atp['goodput_gbps']:.3f} Gbit/s goodput, JCT {atp['jct_ms']:.1f} ms, status {atp['status']}, "
      f"loss {atp['measured_loss']:.4f}, {atp['retransmissions']} retransmissions, {atp['packets_sent']} packets")
print(f"TCP: {tcp['goodput_gbps']:.3f} Gbit/s goodput, JCT {tcp['jct_ms']:.1f} ms, status {tcp['status']}, "
      f"{tcp['retransmissions']} retransmissions, {tcp['packets_sent']} segments")
ratio = atp['goodput_gbps'] / tcp['goodput_gbps'] if tcp['goodput_gbps'] else None
print(f"RATIO ATP/TCP goodput = {ratio:.3f}" if ratio is not None else "RATIO ATP/TCP goodput = n/a (TCP 0)")
summary = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), command=sys.argv[5], commit=sys.argv[4],
               atp_gbps=atp['goodput_gbps'], tcp_gbps=tcp['goodput_gbps'],
               ratio=round(ratio, 4) if ratio is not None else None,
               atp_retransmissions=atp['retransmissions'], packets=atp['packets_sent'], atp=atp, tcp=tcp)
with open(sys.argv[3], "w") as f:
    json.dump(summary, f, indent=1)
    f.write("\n")
print(f"written {sys.argv[3]}")
PY
