#!/usr/bin/env bash
# netlab benchmark: ATP vs TCP-based approximation on an emulated congested network (docs/netlab.md).
#
#   sudo benchmarks/netlab/run.sh quick    # ~7 min: datacenter incast at 8 senders (every scheme), 32 senders,
#                                          #   the stress configuration, co-run, trace
#   sudo benchmarks/netlab/run.sh full     # ~40 min: + all-to-all, the incast sweep 3/8/16/32, more jobs
#   sudo benchmarks/netlab/run.sh full --runs incast/slack/16/1 --schemes atp_full,tcp_es   # extra args: bench
#
# Environment: NAME (run name; default <preset>-<UTC date-time>), OUT (results directory; default
# benchmarks/results/netlab/$NAME), LATEST=1 (make benchmarks/results/netlab/latest name this run - for the run the
# docs report), IMG (plots; default build/netlab/$NAME/img), LAB (lab name, i.e. namespace prefix; default
# nlbench - pick your own on a shared machine), NATIVE_BUILD (default build/netlab-native).
# Builds netlab-agent (Release), installs matplotlib if missing (pinned), runs `python3 -m netlab.bench` (which
# prints the expected duration first), then the plots and the verdict table. Needs root, iperf3
# (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
preset="${1:-quick}"
case "$preset" in quick|full|tiny) ;; *) echo "usage: $0 quick|full|tiny [bench args...]" >&2; exit 2;; esac
name="${NAME:-$preset-$(date -u +%Y%m%d-%H%M)}"
out="${OUT:-benchmarks/results/netlab/$name}"
img="${IMG:-build/netlab/$name/img}"
bdir="${NATIVE_BUILD:-build/netlab-native}"
export PYTHONPATH="$PWD/benchmarks/netlab${PYTHONPATH:+:$PYTHONPATH}"
cmake -S native -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETAPPROX_TESTS=OFF >/dev/null
cmake --build "$bdir" --target netlab-agent >/dev/null
if ! python3 -c "import matplotlib" 2>/dev/null; then
  echo "[netlab] installing matplotlib==3.9.2 (pip --user)"
  python3 -m pip install --user -q matplotlib==3.9.2
fi
rm -rf "$out"
mkdir -p "$out" "$img"
python3 -m netlab.bench --preset "$preset" --agent "$bdir/netlab-agent" --out "$out" --name "${LAB:-nlbench}" "${@:2}"
[ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$out/tmp"   # schedules and agent logs (KEEP_TMP=1 keeps them)
python3 -m netlab.plots --results "$out" --out "$img"
if [ "${LATEST:-0}" = 1 ]; then
  basename "$out" > benchmarks/results/netlab/latest
  echo "[netlab] benchmarks/results/netlab/latest -> $(basename "$out")"
fi
python3 -m netlab.report --results "$out"
echo "[netlab] results: $out (jobs.csv, summary.json, phases.csv, run.json, trace.csv); plots: $img"
