#!/usr/bin/env bash
# netlab benchmark: ATP vs TCP-based approximation on an emulated congested network (docs/netlab.md).
#
#   sudo benchmarks/netlab/run.sh quick   # ~5 min: small sizes, incast, results in build/netlab/quick
#   sudo benchmarks/netlab/run.sh full    # ~25 min: incast + all-to-all, more jobs, results in build/netlab/full
#   OUT=DIR IMG=DIR benchmarks/netlab/run.sh full   # choose where results / PNGs go
#
# Builds native/ (Release, netlab-agent) into build/netlab-native, installs matplotlib if missing (pinned),
# runs benchmarks/netlab/bench.py, then plots.py. Needs root, iperf3 (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
preset="${1:-quick}"
case "$preset" in quick|full|tiny) ;; *) echo "usage: $0 quick|full" >&2; exit 2;; esac
out="${OUT:-build/netlab/$preset}"
img="${IMG:-$out/img}"
bdir="${NATIVE_BUILD:-build/netlab-native}"
cmake -S native -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETAPPROX_TESTS=OFF >/dev/null
cmake --build "$bdir" --target netlab-agent >/dev/null
if ! python3 -c "import matplotlib" 2>/dev/null; then
  echo "[netlab] installing matplotlib==3.9.2 (pip --user)"
  python3 -m pip install --user -q matplotlib==3.9.2
fi
rm -rf "$out"
mkdir -p "$out" "$img"
python3 benchmarks/netlab/bench.py --preset "$preset" --agent "$bdir/netlab-agent" --out "$out" "${@:2}"
python3 benchmarks/netlab/plots.py --results "$out" --out "$img"
echo "[netlab] results: $out (jobs.csv, summary.csv, summary.json, trace.csv); plots: $img"
