#!/usr/bin/env bash
# Spark benchmark of issue 5 in the network lab (docs/spark-netlab.md): Spark standalone master + 2 workers in
# separate network namespaces behind the emulated congested switch (benchmarks/netlab, every port shaped,
# background TCP toward the executors); exact (sort shuffle) vs approximate (e_max 5%) vs SampleSend, then the
# pass-through cost of ApproxShuffleManager on a non-approximate job. As root:
#   bash benchmarks/spark/netlab/run.sh [--switch slack,fifo] [--rate 200mbit] [--bg-load 0.5] [--rows 1000000]
#                                       [--runs 5] [--passthrough-rounds 3] [--conf spark.approx.key=value ...]
# SKIP_BUILD=1 uses the built jars. Results: benchmarks/results/spark/netlab-<timestamp>.txt.
# The lab (namespaces nlspark-*) and every process are torn down on exit, also on Ctrl-C.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$ROOT"
if [ "$(id -u)" != 0 ]; then echo "needs root (network namespaces, tc)" >&2; exit 1; fi
command -v iperf3 >/dev/null || { echo "iperf3 missing (scripts/setup.sh installs it)" >&2; exit 1; }
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  # shellcheck disable=SC2086
  mvn -B -q -ntp ${MAVEN_ARGS:-} install -DskipTests
fi
export PYTHONPATH="$ROOT/benchmarks/netlab${PYTHONPATH:+:$PYTHONPATH}"   # the netlab package
exec python3 benchmarks/spark/netlab/run.py "$@"
