#!/usr/bin/env bash
# Spark at production scale (a benchmark, not a test): local-cluster[2,1,512] (driver + 2 executor JVMs of 512 MB,
# Spark's production 300 MB memory reserve), rows generated inside the job (never stored), hourly avg/sum/count:
#   exact  - Spark SQL groupBy(hour).agg(avg, sum, count) over sort shuffle (map-side partial aggregation),
#   approx - the same aggregates as an ApproxQuery (e_max 5%) over ApproxShuffleManager,
# one application per mode and size (so each executor's peak RSS belongs to one mode), alternating exact/approx for
# ROUNDS rounds at each size of SIZES (rows; a row is 32 bytes in Spark's UnsafeRow form, so 340M rows = 10.9 GB =
# 20x an executor's 512 MB). Reports JCT ratio, peak task execution memory, executor peak heap and RSS, bytes
# spilled, and the group-aggregates outside e_max (against the exact answer of the same round).
# QUERY=median runs median(distance), avg(distance), count instead (exact: Spark's median): the median is sampled,
# where the default query's avg/sum/count are exact from the map tasks' partials and sample nothing (the approximate
# query is then Spark's own partial aggregation). Spark's exact median holds every value of a group in memory: keep
# SIZES small with QUERY=median on 512 MB executors.
#
#   bash benchmarks/spark/scale.sh                       # SIZES="85000000 340000000" ROUNDS=1 RUNS=1
#   QUERY=median SIZES=4250000 ROUNDS=1 bash benchmarks/spark/scale.sh
# Environment: SIZES, ROUNDS, RUNS (queries per application), QUERY (avg | median), SKIP_BUILD=1, EXTRA (more
# --key value arguments).
# Results: benchmarks/results/spark/scale-<timestamp>.txt (load averages, raw RESULT lines, summary).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  mvn -B -q -ntp install -DskipTests
fi
mkdir -p benchmarks/results/spark
OUT="benchmarks/results/spark/scale-$(date +%Y%m%d-%H%M%S).txt"
RUN="$ROOT/examples/spark/run-example.sh"
TRUTH="$(mktemp)"
trap 'rm -f "$TRUTH"' EXIT
{
  echo "# $(date -u) $(nproc) cores, shared machine; SIZES=${SIZES:-85000000 340000000} ROUNDS=${ROUNDS:-1} RUNS=${RUNS:-1} QUERY=${QUERY:-avg} EXTRA=${EXTRA:-}"
  for rows in ${SIZES:-85000000 340000000}; do
    for round in $(seq 1 "${ROUNDS:-1}"); do
      for mode in exact approx; do
        echo "# load before $mode rows=$rows round=$round: $(cut -d' ' -f1-3 /proc/loadavg)"
        # shellcheck disable=SC2086
        bash "$RUN" io.netapprox.examples.spark.SparkScaleBench --mode "$mode" --rows "$rows" \
          --runs "${RUNS:-1}" --query "${QUERY:-avg}" --truth "$TRUTH" ${EXTRA:-} 2>/dev/null | grep '^RESULT' | sed "s/^RESULT /RESULT round=$round /"
      done
    done
  done
  echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT"
python3 "$ROOT/benchmarks/spark/scale_summary.py" "$OUT" | tee -a "$OUT"
echo "results: $OUT"
