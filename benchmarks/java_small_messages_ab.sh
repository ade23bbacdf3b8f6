#!/usr/bin/env bash
# Benchmark (not a test): 100-byte messages (MSR 1) end to end through the Java API over loopback (two
# AtpEndpoints in one JVM, CompareWithNative's "Java send" and "Java SendBatch" jobs), for two builds of
# benchmarks.jar run alternately in one invocation (A/B), so that a shared machine's load hits both alike.
# Prints every run, then the median msg/s of each side and the median of the per-round ratios B/A.
#
#   benchmarks/java_small_messages_ab.sh A/benchmarks.jar A/atp-perf B/benchmarks.jar B/atp-perf
#   env: ROUNDS (default 5), RUNS (CompareWithNative runs per invocation, default 2), MESSAGES (default 200000),
#        SIZE (default 100), OUT (raw log, optional)
set -euo pipefail
jar_a="${1:?usage: $0 A.jar A/atp-perf B.jar B/atp-perf}"
perf_a="${2:?}"
jar_b="${3:?}"
perf_b="${4:?}"
ROUNDS="${ROUNDS:-5}"
RUNS="${RUNS:-2}"
MESSAGES="${MESSAGES:-200000}"
SIZE="${SIZE:-100}"
OUT="${OUT:-/dev/null}"
JAVA="${JAVA:-java}"

# "Java send" and "Java SendBatch" msg/s of the message-rate workload, one "kind rate" line per run.
run_one() {  # jar atp-perf
  "$JAVA" -Xmx1g -cp "$1" io.netapprox.benchmarks.CompareWithNative --atp-perf "$2" --runs "$RUNS" \
      --large-messages 64 --small-messages "$MESSAGES" --small-size "$SIZE" 2>&1 | tee -a "$OUT" |
    awk '/^== message rate/ {on = 1} /^== summary/ {on = 0}
         on && /^run [0-9]+ +Java send / {for (i = 1; i <= NF; i++) if ($i == "msg/s") print "send", $(i - 1)}
         on && /^run [0-9]+ +Java SendBatch / {for (i = 1; i <= NF; i++) if ($i == "msg/s") print "batch", $(i - 1)}'
}

echo "== $(nproc) cores, load average$(uptime | sed 's/.*load average//'); A=$jar_a B=$jar_b; $ROUNDS rounds x $RUNS runs =="
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
for r in $(seq "$ROUNDS"); do
  run_one "$jar_a" "$perf_a" | sed "s/^/A $r /" | tee -a "$tmp"
  run_one "$jar_b" "$perf_b" | sed "s/^/B $r /" | tee -a "$tmp"
done
python3 - "$tmp" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for kind in ("send", "batch"):
    a = [float(x[3]) for x in rows if x[0] == "A" and x[2] == kind]
    b = [float(x[3]) for x in rows if x[0] == "B" and x[2] == kind]
    if not a or not b:
        continue
    per_round = []
    for r in sorted({x[1] for x in rows}):
        ra = [float(x[3]) for x in rows if x[0] == "A" and x[1] == r and x[2] == kind]
        rb = [float(x[3]) for x in rows if x[0] == "B" and x[1] == r and x[2] == kind]
        if ra and rb:
            per_round.append(statistics.median(rb) / statistics.median(ra))
    print(f"Java {kind:5s}: A median {statistics.median(a):,.0f} msg/s ({len(a)} runs, {min(a):,.0f}-{max(a):,.0f}); "
          f"B median {statistics.median(b):,.0f} msg/s ({len(b)} runs, {min(b):,.0f}-{max(b):,.0f}); "
          f"B/A median of per-round ratios {statistics.median(per_round):.2f}x")
PY
echo "== done, load average$(uptime | sed 's/.*load average//') =="
