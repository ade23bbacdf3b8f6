#!/usr/bin/env bash
# PyTorch lab benchmark of issue 37 (docs/pytorch.md, "Lab benchmark"): 3 DDP ranks in network namespaces behind the
# emulated congested switch (benchmarks/netlab, every port shaped, background TCP toward the ranks); per-step time of
# the gradient all-reduce over gloo/TCP, over ATP exact and over ATP with magnitude groups, with the accuracy beside
# it. Not part of scripts/test.sh. As root:
#   bash benchmarks/torch/run.sh [--switch slack,fifo] [--rate 200mbit] [--bg-load 0.7] [--modes gloo,atp_exact,atp]
#        [--runs 1] [--steps 25] [--thresholds 0.0008,0.0013] [--msrs 0.5,0.8,1.0] [--out DIR]
# Paths from the environment (defaults in brackets):
#   TORCH_SITE         torch + numpy             [build/torch-2.15.0, what scripts/torch-test.sh installs]
#   NETAPPROX_LIBRARY  libnetapprox.so           [native/build/libnetapprox.so; built here if missing (cmake, ninja)]
# Summary: --out (default build/torch-lab/latest; the run of record: --out benchmarks/results/torch/lab); raw logs
# in build/torch-lab/<timestamp>/. The lab (namespaces torchlab-*) is torn down on exit, also on Ctrl-C.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
if [ "$(id -u)" != 0 ]; then echo "needs root (network namespaces, tc): skipped" >&2; exit 2; fi
command -v iperf3 >/dev/null || { echo "iperf3 missing (scripts/setup.sh installs it)" >&2; exit 2; }
TORCH_SITE="${TORCH_SITE:-$ROOT/build/torch-2.15.0}"
[ -d "$TORCH_SITE/torch" ] || { echo "torch missing in $TORCH_SITE: bash scripts/torch-test.sh installs it (or set TORCH_SITE)" >&2; exit 2; }
export NETAPPROX_LIBRARY="${NETAPPROX_LIBRARY:-$ROOT/native/build/libnetapprox.so}"
if [ ! -f "$NETAPPROX_LIBRARY" ]; then
  cmake -S native -B native/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETAPPROX_TESTS=OFF >/dev/null
  ninja -C native/build netapprox >/dev/null
fi
# the netlab package, netapprox-torch's source, torch
export PYTHONPATH="$ROOT/benchmarks/netlab:$ROOT/python/netapprox-torch/src:$TORCH_SITE${PYTHONPATH:+:$PYTHONPATH}"
exec python3 benchmarks/torch/run.py "$@"
