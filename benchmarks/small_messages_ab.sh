#!/usr/bin/env bash
# Benchmark (not a test): 100-byte messages (MSR 1) through atp-perf over loopback, messages per second end to end
# (submit of the first message to the receiver's report), for one or two atp-perf binaries run alternately in
# one invocation (A/B), so that a shared machine's load hits both alike. Prints each run and the median ratio B/A.
#
#   benchmarks/small_messages_ab.sh A/atp-perf [B/atp-perf]
#   env: MESSAGES (default 500000), SIZE (default 100), ROUNDS (default 3), OUT (JSON lines file, optional)
set -euo pipefail
a="${1:?usage: $0 A/atp-perf [B/atp-perf]}"
b="${2:-}"
MESSAGES="${MESSAGES:-500000}"
SIZE="${SIZE:-100}"
ROUNDS="${ROUNDS:-3}"
OUT="${OUT:-}"
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT INT TERM

run_one() {  # binary label
  local bin="$1" label="$2" port
  "$bin" server --bind 127.0.0.1 --port 0 2> "$work/server.log" &
  local spid=$!
  pids+=("$spid")
  for _ in $(seq 50); do
    port="$(grep -o 'port [0-9]*' "$work/server.log" | head -1 | cut -d' ' -f2 || true)"
    [ -n "$port" ] && break
    sleep 0.1
  done
  "$bin" client --connect 127.0.0.1 --port "$port" --messages "$MESSAGES" --size "$SIZE" --groups 1.0 \
    --json "$work/$label.json" > /dev/null 2> "$work/client.log" || { cat "$work/client.log" >&2; exit 1; }
  kill "$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
  python3 - "$work/$label.json" "$label" "$MESSAGES" "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); label, n, out = sys.argv[2], int(sys.argv[3]), sys.argv[4]
rate = n / (j["jct_ms"] / 1000.0)
d = j.get("driver", {})
print(f"{label}: {rate:,.0f} msg/s (JCT {j['jct_ms']:.0f} ms, {j['packets_sent']} datagrams, "
      f"{d.get('send_syscalls', '?')} send syscalls, status {j['status']})")
if out:
    with open(out, "a") as f:
        f.write(json.dumps({"label": label, "msgs_per_s": rate, "jct_ms": j["jct_ms"],
                            "datagrams": j["packets_sent"], "status": j["status"]}) + "\n")
open(sys.argv[1] + ".rate", "w").write(str(rate))
PY
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores shared with other work: absolute numbers are noisy)"
ra=(); rb=()
for r in $(seq "$ROUNDS"); do
  run_one "$a" "A$r"; ra+=("$(cat "$work/A$r.json.rate")")
  if [ -n "$b" ]; then run_one "$b" "B$r"; rb+=("$(cat "$work/B$r.json.rate")"); fi
done
if [ -n "$b" ]; then
  python3 -c "
import statistics,sys
a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]
print(f'median A {statistics.median(a):,.0f} msg/s, median B {statistics.median(b):,.0f} msg/s, '
      f'B/A {statistics.median(b)/statistics.median(a):.2f}x (per round: ' + ', '.join(f'{y/x:.2f}' for x,y in zip(a,b)) + ')')
" "${ra[*]}" "${rb[*]}"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
