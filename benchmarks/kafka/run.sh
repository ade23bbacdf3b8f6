#!/usr/bin/env bash
# Kafka lab benchmark (issue 15, docs/kafka.md section 8): a real KRaft broker (kafka.Kafka, subprocess) and the
# relay (approx-kafka-relay.jar) in one namespace of the network lab, the consumer in another, a bottleneck
# between them (the switch port toward the consumer host); plain KafkaConsumer vs approximate consumer at e_max 5%.
# As root:
#   bash benchmarks/kafka/run.sh [--rate 100mbit] [--records 1000000] [--value-bytes 400] [--runs 2] ...
# SKIP_BUILD=1 uses the built jars. Results: benchmarks/results/kafka/netlab-<timestamp>.txt. The lab (namespaces
# kafkabench-*) and every process are torn down on exit, also on Ctrl-C.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
if [ "$(id -u)" != 0 ]; then echo "needs root (network namespaces, tc)" >&2; exit 1; fi
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  # shellcheck disable=SC2086
  mvn -B -q -ntp ${MAVEN_ARGS:-} install -DskipTests
fi
export PYTHONPATH="$ROOT/benchmarks/netlab${PYTHONPATH:+:$PYTHONPATH}"   # the netlab package
exec python3 benchmarks/kafka/run.py "$@"
