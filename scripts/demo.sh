#!/usr/bin/env bash
# The NetApprox demo ("run the main job"): builds the project (no tests) and runs the Spark taxi example on a
# local multi-JVM cluster (local-cluster[2,1,1024]: a driver + two executor JVMs, real ATP between them):
# hourly average trip distance and top-15 pickup zones per hour over 1M synthetic NYC-taxi trips, approximate
# (ApproxShuffleManager, e_max 5%, hour 17 at 1%) vs exact (sort shuffle), with the error achieved per group and
# the job completion times.
#
#   bash scripts/demo.sh [--rows 1000000] [--emax 0.05] [--runs 3] [--input trips.parquet|csv] [--master ...]
#   bash scripts/demo.sh atp [atp-perf demo args]     # the transport-only demo (two endpoints, one process)
#   bash scripts/demo.sh kafka [--rows 1000000] [--partitions 2] [--emax 0.05] [--seed 42]
#                                                     # Kafka -> Flink: a KRaft broker + relay, the taxi trips
#                                                     # produced, the Flink job (ApproxKafkaSource -> Approx.of)
#                                                     # run exactly and approximately (docs/kafka.md, "The demo")
#   bash scripts/demo.sh flink [--rows 600000] [--minutes 5] [--emax 0.05] [--approx.KEY VALUE]
#        # the Flink streaming taxi query: per pickup zone and 1-minute event-time window, average fare and trip
#        # count, approximate (approx.enabled=true) vs exact, on a local Flink cluster of 2 TaskManagers x 2 slots
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [ "${SKIP_SETUP:-0}" != "1" ]; then
  bash "$ROOT/scripts/setup.sh"
fi

if [ "${SKIP_BUILD:-0}" != "1" ]; then
  echo "[demo] building: mvn -B -q install -DskipTests"
  # shellcheck disable=SC2086
  mvn -B -q -ntp ${MAVEN_ARGS:-} install -DskipTests
fi

if [ "${1:-}" = "atp" ]; then
  shift
  PERF=""
  for candidate in "$ROOT/approx-core/target/native-build/atp-perf" "$ROOT/native/build/atp-perf"; do
    if [ -x "$candidate" ]; then PERF="$candidate"; break; fi
  done
  if [ -z "$PERF" ]; then
    echo "[demo] ERROR: atp-perf was not built (expected approx-core/target/native-build/atp-perf)" >&2
    exit 1
  fi
  echo "[demo] running: ${PERF#"$ROOT"/} demo $*"
  exec "$PERF" demo "$@"
fi

if [ "${1:-}" = "kafka" ]; then
  shift
  KAFKA_DIR="$ROOT/approx-kafka-flink/target"
  if [ ! -s "$KAFKA_DIR/test-classpath.txt" ] || [ ! -d "$KAFKA_DIR/test-classes" ]; then
    echo "[demo] ERROR: approx-kafka-flink is not built (run without SKIP_BUILD=1)" >&2
    exit 1
  fi
  echo "[demo] running io.netapprox.kafka.flink.demo.KafkaFlinkTaxiDemo $*"
  # shellcheck disable=SC2086
  exec java ${JAVA_OPTS:--Xmx2g} -cp "$KAFKA_DIR/test-classes:$KAFKA_DIR/classes:$(cat "$KAFKA_DIR/test-classpath.txt")" \
    io.netapprox.kafka.flink.demo.KafkaFlinkTaxiDemo "$@"
fi

if [ "${1:-}" = "flink" ]; then
  shift
  echo "[demo] running the Flink streaming taxi example on a local Flink cluster (2 TaskManagers x 2 slots)"
  exec bash "$ROOT/examples/flink/run-example.sh" io.netapprox.examples.flink.TaxiStreamExample "$@"
fi

echo "[demo] running the Spark taxi example on local-cluster[2,1,1024] (driver + 2 executor JVMs)"
exec bash "$ROOT/examples/spark/run-example.sh" io.netapprox.examples.spark.TaxiExample "$@"
