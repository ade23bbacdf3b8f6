#!/usr/bin/env bash
# Kafka lab benchmark (issues 15 and 32, docs/kafka.md section 12): a real KRaft broker (kafka.Kafka, subprocess)
# and one relay per approximate mode (approx-kafka-relay.jar: atp = --data-plane atp, tcp / tcp_ss / tcp_es =
# --data-plane tcp and its send policy) in one namespace of the network lab, the consumer in another, background TCP
# from a third toward the consumer, a bottleneck between them (the switch port toward the consumer host); the plain
# KafkaConsumer vs the approximate consumer over each relay at e_max 5%, alternating. As root:
#   bash benchmarks/kafka/run.sh [--switch fifo,slack] [--modes plain,atp,tcp,tcp_ss,tcp_es] [--bg-load 0.5]
#        [--rate 100mbit] [--records 1000000] [--value-bytes 400] [--runs 2] [--warmup 1] ...
# SKIP_BUILD=1 uses the built jars. Results: benchmarks/results/kafka/e2e/summary.json (per switch and mode) and the
# raw lines in benchmarks/results/kafka/e2e/netlab-<timestamp>.txt. The lab (namespaces kafkabench-*) and every
# process are torn down on exit, also on Ctrl-C.
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
