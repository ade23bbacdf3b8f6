#!/usr/bin/env bash
# Flink benchmark of issue 14 in the network lab (docs/flink.md, "Network-lab benchmark"): a standalone Flink
# cluster (JobManager + 2 TaskManagers, separate JVMs in separate network namespaces) behind the emulated congested
# switch (benchmarks/netlab, every port shaped, background TCP toward the TaskManagers); exact vs approximate
# window result latency at the same input rate, then the flag-off overhead. As root:
#   bash benchmarks/flink/netlab/run.sh [--switch slack,fifo] [--rate 200mbit] [--bg-load 0.7]
#        [--input-rate 20000] [--seconds 30] [--payload-bytes 0] [--runs 5] [--overhead-runs 5]
#        [--conf approx.key=value ...]
# SKIP_BUILD=1 uses the built jars. Results: benchmarks/results/flink/netlab-<timestamp>.txt.
# The lab (namespaces flinkbench-*) and every process are torn down on exit, also on Ctrl-C.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$ROOT"
if [ "$(id -u)" != 0 ]; then echo "needs root (network namespaces, tc)" >&2; exit 1; fi
command -v iperf3 >/dev/null || { echo "iperf3 missing (scripts/setup.sh installs it)" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl missing" >&2; exit 1; }
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  # shellcheck disable=SC2086
  mvn -B -q -ntp ${MAVEN_ARGS:-} install -DskipTests
fi
export PYTHONPATH="$ROOT/benchmarks/netlab${PYTHONPATH:+:$PYTHONPATH}"   # the netlab package
exec python3 benchmarks/flink/netlab/run.py "$@"
