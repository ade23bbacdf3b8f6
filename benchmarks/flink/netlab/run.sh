#!/usr/bin/env bash
# Flink benchmark of issues 14 and 32 in the network lab (docs/flink.md, "Network-lab benchmark" and "Every baseline
# in one run"): a standalone Flink cluster (JobManager + 2 TaskManagers, separate JVMs in separate network namespaces)
# behind the emulated congested switch (benchmarks/netlab, every port shaped, background TCP toward the TaskManagers);
# window result latency of exact and the approximate modes (atp, tcp_ss, tcp_es) at the same input rate, per
# configuration, then the flag-off overhead. As root:
#   bash benchmarks/flink/netlab/run.sh [--switch slack,fifo] [--rate 200mbit] [--bg-load 0.7]
#        [--configs keeps-up:0,falls-behind:1500] [--modes exact,atp,tcp_ss,tcp_es]
#        [--input-rate 20000] [--seconds 30] [--payload-bytes 0] [--runs 5] [--overhead-runs 5]
#        [--conf approx.key=value ...] [--variants 'NAME:approx.K=V,...;...'] [--skip-overhead]
# SKIP_BUILD=1 uses the built jars. Results: benchmarks/results/flink/e2e/summary.json (per config, switch and mode)
# and the raw lines in benchmarks/results/flink/e2e/netlab-<timestamp>.txt.
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
