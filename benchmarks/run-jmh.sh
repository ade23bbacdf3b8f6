#!/usr/bin/env bash
# JMH benchmarks of the Java API (two AtpEndpoints in one JVM over 127.0.0.1) and the same-run comparison with the
# native perf tool (atp-perf demo). Short but meaningful settings; about 3 minutes on 2 cores. See docs/benchmarks.md.
#
#   benchmarks/run-jmh.sh              build if needed, run everything
#   BUILD=1 benchmarks/run-jmh.sh      force a rebuild first
#   SKIP_JMH=1 / SKIP_COMPARE=1        run only one part
#   JMH_ARGS="-p batchSize=256"        extra JMH options (appended to every JMH pass)
#   RUNS=5                             CompareWithNative runs per workload (default 5)
#   OUT=/some/dir                      where logs and JSON go (default benchmarks/results/jmh)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
JAR="$HERE/target/benchmarks.jar"
ATP_PERF="$ROOT/approx-core/target/native-build/atp-perf"
OUT="${OUT:-$HERE/results/jmh}"
RUNS="${RUNS:-5}"
JMH_ARGS="${JMH_ARGS:-}"
JAVA="${JAVA:-java}"

# ---- build if needed: no jar / no atp-perf, or any source newer than the jar ----------------------------------------
need_build=0
if [[ "${BUILD:-0}" == 1 || ! -f "$JAR" || ! -x "$ATP_PERF" ]]; then
  need_build=1
elif [[ -n "$(find "$HERE/src" "$HERE/pom.xml" "$ROOT/pom.xml" "$ROOT/approx-core/src/main" "$ROOT/approx-core/pom.xml" \
              "$ROOT/native/src" "$ROOT/native/include" "$ROOT/native/tools" -newer "$JAR" -type f -print -quit 2>/dev/null)" ]]; then
  need_build=1
fi
if [[ $need_build == 1 ]]; then
  echo "== building approx-core (with libnetapprox and atp-perf) and benchmarks (mvn package -DskipTests) =="
  (cd "$ROOT" && mvn -B -q package -DskipTests -pl benchmarks -am)
fi

mkdir -p "$OUT"
echo "== machine: $(nproc) cores, $(uname -srm), $("$JAVA" -version 2>&1 | head -1), load average$(uptime | sed 's/.*load average//') =="
echo "== output: $OUT =="

# Short settings: 1 fork, 2 warm-up + 3 measured iterations of 2 s (each iteration runs several whole jobs).
JMH_COMMON=(-f 1 -wi 2 -i 3 -w 2s -r 2s)

if [[ "${SKIP_JMH:-0}" != 1 ]]; then
  echo
  echo "== JMH 1/3: message rate (100 B) and goodput (64 KiB), ops/s = messages/s; goodput :gbits = Gbit/s =="
  # shellcheck disable=SC2086
  "$JAVA" -jar "$JAR" 'io.netapprox.benchmarks.(MessageRate|Goodput)Benchmark' "${JMH_COMMON[@]}" \
      -bm thrpt -tu s -rf json -rff "$OUT/jmh-thrpt.json" $JMH_ARGS 2>&1 | tee "$OUT/jmh-thrpt.txt"

  echo
  echo "== JMH 2/3: message rate (100 B) as ns per message (send + receive, end to end) =="
  # shellcheck disable=SC2086
  "$JAVA" -jar "$JAR" 'io.netapprox.benchmarks.MessageRateBenchmark' "${JMH_COMMON[@]}" \
      -bm avgt -tu ns -rf json -rff "$OUT/jmh-avgt.json" $JMH_ARGS 2>&1 | tee "$OUT/jmh-avgt.txt"

  echo
  echo "== JMH 3/3: submit cost alone (100 B), ns per message on the calling thread =="
  # shellcheck disable=SC2086
  "$JAVA" -jar "$JAR" 'io.netapprox.benchmarks.SubmitCostBenchmark' -f 1 -wi 20 -i 20 \
      -rf json -rff "$OUT/jmh-submit.json" $JMH_ARGS 2>&1 | tee "$OUT/jmh-submit.txt"
fi

if [[ "${SKIP_COMPARE:-0}" != 1 ]]; then
  echo
  echo "== CompareWithNative: atp-perf demo vs the Java API, same N x S, alternating, $RUNS runs each =="
  "$JAVA" -Xmx1g -cp "$JAR" io.netapprox.benchmarks.CompareWithNative --atp-perf "$ATP_PERF" --runs "$RUNS" \
      2>&1 | tee "$OUT/compare-with-native.txt"
fi
echo "== done, load average$(uptime | sed 's/.*load average//') =="
