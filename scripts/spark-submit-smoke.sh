#!/usr/bin/env bash
# A real spark-submit of the Scala 2.12 plugin jar (approx-spark_2.12) on the PySpark 3.5 wheel's Spark (Scala 2.12):
# scripts/spark_submit_smoke.py runs SQL WITH ERROR on local-cluster[2,1,1024] (two executor JVMs) with
# ApproxShuffleManager and ApproxExtensions, checks the answer against Spark SQL's exact one and that the
# approximate shuffle pulled over ATP (its "ATP packets sent" accumulator), and prints one [smoke] line.
#
# pyspark is pinned and installed on first use into build/pyspark-<version> (pip --target: no venv, nothing outside
# the checkout; ~320 MB, a few minutes the first time). Skips with a message, exit 0, where python3 or pip is
# missing; SPARK_SUBMIT_SMOKE_TIMEOUT (seconds, default 900) bounds the run.
# Usage: scripts/spark-submit-smoke.sh [plugin jar]   (default approx-spark_2.12/target/approx-spark_2.12-*.jar)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYSPARK_VERSION="3.5.9"  # the newest 3.5 on PyPI; its Spark is Scala 2.12
PYSPARK_DIR="$ROOT/build/pyspark-$PYSPARK_VERSION"
log() { echo "[spark-submit-smoke] $*"; }

if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
  log "SKIPPED: python3 with pip is not available (needed for the pyspark==$PYSPARK_VERSION wheel)"
  exit 0
fi
JAR="${1:-}"
if [ -z "$JAR" ]; then
  for j in "$ROOT"/approx-spark_2.12/target/approx-spark_2.12-*.jar; do
    case "$j" in *-sources.jar|*-javadoc.jar|*-tests.jar|*/original-*) continue ;; esac
    [ -f "$j" ] && JAR="$j"
  done
fi
if [ -z "$JAR" ] || [ ! -f "$JAR" ]; then
  log "ERROR: no plugin jar (build it: mvn -pl approx-spark_2.12 -am package)" >&2
  exit 1
fi
if [ ! -f "$PYSPARK_DIR/.installed-$PYSPARK_VERSION" ]; then
  log "installing pyspark==$PYSPARK_VERSION into $PYSPARK_DIR"
  rm -rf "$PYSPARK_DIR"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --target "$PYSPARK_DIR" "pyspark==$PYSPARK_VERSION" </dev/null
  touch "$PYSPARK_DIR/.installed-$PYSPARK_VERSION"
fi
export SPARK_HOME="$PYSPARK_DIR/pyspark"
export PYTHONPATH="$PYSPARK_DIR${PYTHONPATH:+:$PYTHONPATH}"
export PYSPARK_PYTHON=python3 PYSPARK_DRIVER_PYTHON=python3
# the wheel's Spark is Scala 2.12: the jar must be the 2.12 build
if ! ls "$SPARK_HOME"/jars/scala-library-2.12.*.jar >/dev/null 2>&1; then
  log "ERROR: $SPARK_HOME/jars has no Scala 2.12 library" >&2
  exit 1
fi
OUT="$ROOT/build/spark-submit-smoke.log"
# the local-cluster workers' directories (else under the wheel's SPARK_HOME), fresh per run
export SPARK_WORKER_DIR="$ROOT/build/spark-submit-smoke-work"
rm -rf "$SPARK_WORKER_DIR"
# a bound, not a timing assertion: about a minute on an idle 2-core machine, several on a loaded one
TIMEOUT="${SPARK_SUBMIT_SMOKE_TIMEOUT:-900}"
# Spark 3.5 creates an executor's ShuffleManager before it fetches --jars: the jar must also be on the executors'
# class path at start (spark.executor.extraClassPath; here the workers share this machine's path). The driver
# (client mode) loads --jars before its SparkContext.
log "spark-submit (pyspark $PYSPARK_VERSION) --master local-cluster[2,1,1024] --jars $(basename "$JAR")"
set +e
timeout "$TIMEOUT" "$SPARK_HOME/bin/spark-submit" \
  --master 'local-cluster[2,1,1024]' \
  --jars "$JAR" \
  --conf spark.executor.extraClassPath="$JAR" \
  --conf spark.shuffle.manager=io.netapprox.spark.ApproxShuffleManager \
  --conf spark.sql.extensions=io.netapprox.spark.ApproxExtensions \
  --conf spark.ui.showConsoleProgress=false \
  "$ROOT/scripts/spark_submit_smoke.py" </dev/null >"$OUT" 2>&1
rc=$?
set -e
if [ "$rc" -ne 0 ] || ! grep -q '^\[smoke\] Spark ' "$OUT"; then
  tail -n 60 "$OUT" >&2
  log "ERROR: spark-submit exited $rc; full log $OUT" >&2
  exit 1
fi
grep '^\[smoke\] Spark ' "$OUT"
