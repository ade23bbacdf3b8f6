#!/usr/bin/env bash
# A real spark-submit of a plugin jar on a PySpark wheel's Spark: scripts/spark_submit_smoke.py runs SQL WITH ERROR
# on local-cluster[2,1,1024] (two executor JVMs) with ApproxShuffleManager and ApproxExtensions, checks the answer
# against Spark SQL's exact one and that the approximate shuffle pulled over ATP (its "ATP packets sent"
# accumulator), and prints one [smoke] line. scripts/test.sh runs it twice: pyspark 3.5.9 (Spark 3.5, Scala 2.12)
# with the approx-spark_2.12 jar, and pyspark 4.x (Scala 2.13) with the approx-spark jar.
#
# The wheel is installed on first use into build/pyspark-<version> (pip --target: no venv, nothing outside the
# checkout; 320-450 MB, a few minutes the first time). The jar's Scala (approx-spark_2.12: 2.12, approx-spark_2.13:
# 2.13) must be the wheel's. On success it writes target/platforms/spark-submit-<version>.json for the README's
# "Supported platforms and versions" table (scripts/platforms.py). Skips with a message, exit 0, where python3 or
# pip is missing; SPARK_SUBMIT_SMOKE_TIMEOUT (seconds, default 900) bounds the run.
# Usage: scripts/spark-submit-smoke.sh [pyspark version] [plugin jar]
#   defaults: 3.5.9; the jar of the wheel's Scala: approx-spark_2.12/target/... (pyspark 3.x),
#   approx-spark/target/approx-spark_2.13-... (pyspark 4)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYSPARK_VERSION="${1:-3.5.9}"  # 3.5.9: the newest 3.5 on PyPI; its Spark is Scala 2.12
if ! [[ "$PYSPARK_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "[spark-submit-smoke] ERROR: pyspark version must be X.Y.Z, got '$PYSPARK_VERSION'" >&2
  exit 2
fi
PYSPARK_DIR="$ROOT/build/pyspark-$PYSPARK_VERSION"
log() { echo "[spark-submit-smoke] $*"; }

if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
  log "SKIPPED: python3 with pip is not available (needed for the pyspark==$PYSPARK_VERSION wheel)"
  exit 0
fi
JAR="${2:-}"
if [ -z "$JAR" ]; then
  # the build for the wheel's Scala: pyspark 3.5 is 2.12, pyspark 4 is 2.13
  case "$PYSPARK_VERSION" in 3.*) MODULE=approx-spark_2.12 ARTIFACT=approx-spark_2.12 ;; *) MODULE=approx-spark ARTIFACT=approx-spark_2.13 ;; esac
  for j in "$ROOT/$MODULE/target/$ARTIFACT"-*.jar; do
    case "$j" in *-sources.jar|*-javadoc.jar|*-tests.jar|*/original-*) continue ;; esac
    [ -f "$j" ] && JAR="$j"
  done
fi
if [ -z "$JAR" ] || [ ! -f "$JAR" ]; then
  log "ERROR: no plugin jar ${JAR:+at $JAR }(build it: mvn -pl ${MODULE:-approx-spark_2.12} -am package)" >&2
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
# the jar's Scala must be the wheel's (approx-spark_2.12-*.jar: 2.12; approx-spark_2.13-*.jar: 2.13)
case "$(basename "$JAR")" in approx-spark_2.12-*) SCALA=2.12 ;; *) SCALA=2.13 ;; esac
if ! ls "$SPARK_HOME"/jars/scala-library-"$SCALA".*.jar >/dev/null 2>&1; then
  log "ERROR: $(basename "$JAR") is the Scala $SCALA build, but $SPARK_HOME/jars has $(cd "$SPARK_HOME/jars" && ls scala-library-*.jar)" >&2
  exit 1
fi
RECORD="$ROOT/target/platforms/spark-submit-$PYSPARK_VERSION.json"
rm -f "$RECORD"
OUT="$ROOT/build/spark-submit-smoke-$PYSPARK_VERSION.log"
# the local-cluster workers' directories (else under the wheel's SPARK_HOME), fresh per run
export SPARK_WORKER_DIR="$ROOT/build/spark-submit-smoke-work-$PYSPARK_VERSION"
rm -rf "$SPARK_WORKER_DIR"
# a bound, not a timing assertion: about a minute on an idle 2-core machine, several on a loaded one
TIMEOUT="${SPARK_SUBMIT_SMOKE_TIMEOUT:-900}"
# Spark 3.5 creates an executor's ShuffleManager before it fetches --jars: the jar must also be on the executors'
# class path at start (spark.executor.extraClassPath; here the workers share this machine's path). Spark 4.x
# fetches --jars first: --jars alone (as README says), so that is what runs there. The driver (client mode) loads
# --jars before its SparkContext.
EXTRA=()
case "$PYSPARK_VERSION" in 3.*) EXTRA=(--conf spark.executor.extraClassPath="$JAR") ;; esac
log "spark-submit (pyspark $PYSPARK_VERSION) --master local-cluster[2,1,1024] --jars $(basename "$JAR") ${EXTRA[*]:+(+ spark.executor.extraClassPath)}"
set +e
timeout "$TIMEOUT" "$SPARK_HOME/bin/spark-submit" \
  --master 'local-cluster[2,1,1024]' \
  --jars "$JAR" \
  "${EXTRA[@]}" \
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
LINE="$(grep '^\[smoke\] Spark ' "$OUT")"
echo "$LINE"
python3 "$ROOT/scripts/platforms.py" record-smoke --pyspark "$PYSPARK_VERSION" --jar "$JAR" --line "$LINE" --out "$RECORD"
