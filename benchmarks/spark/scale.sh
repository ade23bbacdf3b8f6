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
#
# Every baseline of issue 31 (docs/spark-netlab.md, "Every baseline in one run"): with --config the query is the
# configuration's (cpu-bound: SparkBench's q, avg/sum from the sample; network-bound: median + top-k of a payload
# column, exact = every row shipped with its payload) and the modes run in this order, one application each:
#   exact           ApproxQuery.exact() over sort shuffle (writes the truth)
#   atp             the approximate query, spark.approx.dataPlane=atp (writes the per-group sample fractions)
#   tcp_ss, tcp_es  the same query, dataPlane=tcp with tcpSendPolicy=sampleSend / earlySend
#   spark_sampleby  stat().sampleBy(hour, the fractions atp used per group), exact query over sort shuffle
#   spark_sample    Dataset.sample at the largest of those fractions (the smallest uniform one meeting every group)
# (old names: approx = the approximate query with the default data plane, samplesend = spark_sample.) The cells
# (per config, switch "local", mode: runs, p50_s, p90_s, groups_outside, groups, bottleneck_mb = the executors'
# remote shuffle reads per query, executor_cpu_s) go to benchmarks/results/spark/e2e/summary.json
# (benchmarks/spark/e2e_summary.py, --merge: a run of the other config keeps its cells; delete the file to start a
# new record; NOTE="..." goes into its header); the raw lines to benchmarks/results/spark/e2e/raw/ (not committed).
#   bash benchmarks/spark/scale.sh --config cpu-bound [--rows 85000000] [--runs 3] [--rounds 1] [--modes a,b,...]
#        [--payload 200] [--summary PATH]
#   bash benchmarks/spark/scale.sh --config network-bound --rows 4000000 --runs 1     # a small validation run
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
CMDLINE="bash benchmarks/spark/scale.sh $*"
CONFIG=""
MODES="${MODES:-}"
PAYLOAD="${PAYLOAD:-200}"
SUMMARY="${SUMMARY:-$ROOT/benchmarks/results/spark/e2e/summary.json}"
while [ $# -gt 0 ]; do
  case "$1" in
    --config) CONFIG="$2"; shift 2 ;;
    --modes) MODES="${2//,/ }"; shift 2 ;;
    --rows) SIZES="${2//,/ }"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --payload) PAYLOAD="$2"; shift 2 ;;
    --summary) SUMMARY="$2"; shift 2 ;;
    *) echo "unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
  esac
done
case "$CONFIG" in
  "" | cpu-bound | network-bound) ;;
  *) echo "--config must be cpu-bound or network-bound, got $CONFIG" >&2; exit 2 ;;
esac
if [ -n "$CONFIG" ]; then
  MODES="${MODES:-exact atp tcp_ss tcp_es spark_sampleby spark_sample}"
else
  MODES="${MODES:-exact approx}"
fi
ORDER="exact approx atp tcp_ss tcp_es samplesend spark_sampleby spark_sample"
for m in $MODES; do
  case " $ORDER " in *" $m "*) ;; *) echo "unknown mode $m (one of: $ORDER)" >&2; exit 2 ;; esac
done
# the order the modes depend on: the truth first, the approximate modes' fractions before the sampling baselines
RUN_MODES=""
for m in $ORDER; do
  case " $MODES " in *" $m "*) RUN_MODES="$RUN_MODES $m" ;; esac
done
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  mvn -B -q -ntp install -DskipTests
fi
TS="$(date +%Y%m%d-%H%M%S)"
if [ -n "$CONFIG" ]; then
  mkdir -p benchmarks/results/spark/e2e/raw
  OUT="benchmarks/results/spark/e2e/raw/scale-$CONFIG-$TS.txt"
  ARGS="--config $CONFIG --payload $PAYLOAD"
  SIZES="${SIZES:-85000000}"
else
  mkdir -p benchmarks/results/spark
  OUT="benchmarks/results/spark/scale-$TS.txt"
  ARGS="--query ${QUERY:-avg}"
fi
RUN="$ROOT/examples/spark/run-example.sh"
TRUTH="$(mktemp)"
FRACTIONS="$(mktemp)"
trap 'rm -f "$TRUTH" "$FRACTIONS"' EXIT
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"
# the tree the jars were built from (at the start: a commit during the run does not change what ran)
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +dirty)"
{
  echo "# $(date -u) $(nproc) cores, shared machine; SIZES=${SIZES:-85000000 340000000} ROUNDS=${ROUNDS:-1} RUNS=${RUNS:-1} QUERY=${QUERY:-avg} CONFIG=$CONFIG MODES=$RUN_MODES EXTRA=${EXTRA:-}"
  for rows in ${SIZES:-85000000 340000000}; do
    for round in $(seq 1 "${ROUNDS:-1}"); do
      : >"$FRACTIONS"
      for mode in $RUN_MODES; do
        echo "# load before $mode rows=$rows round=$round: $(cut -d' ' -f1-3 /proc/loadavg)"
        more=""
        case "$mode" in
          atp | tcp_ss | tcp_es | approx) [ -s "$FRACTIONS" ] || more="--fractions $FRACTIONS" ;;
          spark_sampleby | spark_sample | samplesend)
            if [ ! -s "$FRACTIONS" ]; then
              echo "# $mode skipped: no approximate mode ran before it (its per-group fractions)" >&2
              continue
            fi
            more="--fractions $FRACTIONS" ;;
        esac
        # shellcheck disable=SC2086
        bash "$RUN" io.netapprox.examples.spark.SparkScaleBench --mode "$mode" --rows "$rows" \
          --runs "${RUNS:-1}" $ARGS --truth "$TRUTH" $more ${EXTRA:-} 2>/dev/null | grep '^RESULT' | sed "s/^RESULT /RESULT round=$round /"
      done
    done
  done
  echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT"
if [ -n "$CONFIG" ]; then
  mkdir -p "$(dirname "$SUMMARY")"
  python3 "$ROOT/benchmarks/spark/e2e_summary.py" "$OUT" --out "$SUMMARY" --command "$CMDLINE" \
    --commit "$COMMIT" \
    --load-start "$LOAD_START" --load-end "$(cut -d' ' -f1-3 /proc/loadavg)" --merge \
    --note "${NOTE:-$(nproc) cores, local-cluster[2,1,512]; shared machine unless said otherwise}"
  echo "summary: $SUMMARY"
else
  python3 "$ROOT/benchmarks/spark/scale_summary.py" "$OUT" | tee -a "$OUT"
fi
echo "results: $OUT"
