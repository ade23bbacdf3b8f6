#!/usr/bin/env bash
# Issue 16's benchmark at production scale in the network lab (docs/spark-netlab.md "At production scale"):
# standalone Master + 2 Workers (1 core, --executor-memory 512m) in namespaces behind the congested switch,
# background TCP 0.5 x the port rate toward the executors, rows generated inside the job (SparkScaleBench), one
# application per size and mode: exact (ApproxQuery.exact() over sort shuffle, every row shipped) then approx.
# As root:
#   SKIP_BUILD=1 bash benchmarks/spark/netlab/scale.sh [--scale-rows 85000000,340000000] [--switch fifo,slack]
#        [--query sampled] [--executor-memory 512m] [--rate 200mbit] [--bg-load 0.5] [--name nlscale]
#   python3 benchmarks/spark/netlab/scale.py --summarize RESULT_FILE     # the summary again
# Results: benchmarks/results/spark/netlab-scale-<timestamp>.txt. Tests of the summary: test_scale.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$ROOT"
if [ "$(id -u)" != 0 ]; then echo "needs root (network namespaces, tc)" >&2; exit 1; fi
command -v iperf3 >/dev/null || { echo "iperf3 missing (scripts/setup.sh installs it)" >&2; exit 1; }
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  mvn -B -q -ntp -pl examples/spark -am install -DskipTests
fi
export PYTHONPATH="$ROOT/benchmarks/netlab${PYTHONPATH:+:$PYTHONPATH}"
exec python3 benchmarks/spark/netlab/scale.py "$@"
