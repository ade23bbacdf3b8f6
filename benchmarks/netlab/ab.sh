#!/usr/bin/env bash
# Benchmark (not a test): same-window lab A/B of two netlab-agent builds. Each cell runs the old agent, then the
# new one a few seconds later (ATP Full, ATP paper mode and TCP-EarlySend at MSR 0.75, 30 FBKV-like + 15 FBHD-like
# jobs), ROUNDS times; then `python3 -m netlab.stats ab` prints pooled p50 per (cell, workload, scheme) with new/old, its
# bootstrap interval and verdict, and new/TCP-ES. `benchmarks/run netlab-ab -- OLD NEW` runs this and writes the
# summary to benchmarks/results/netlab/ab/.
# Needs root (network namespaces). Run it on an otherwise idle machine: user-space agents starve under load.
#
#   bash benchmarks/netlab/ab.sh OLD_AGENT NEW_AGENT OUT [ROUNDS=2] [BENCH_ARGS...]
#   BENCH_ARGS are appended to every cell's `python3 -m netlab.bench` (e.g. --runs incast/slack/3/1 runs that cell
#   in every slot, --jobs fbkv=90,fbhd=1 changes the job counts)
#   build an agent: cmake -S native -B B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETAPPROX_TESTS=OFF &&
#                   cmake --build B --target netlab-agent        (B/netlab-agent; for the old one, from a git worktree)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
old=$(realpath "$1") new=$(realpath "$2") out=$(realpath -m "$3") rounds=${4:-2}
extra=("${@:5}")
if [ "$(id -u)" != 0 ]; then echo "[ab] SKIP: needs root for network namespaces" >&2; exit 0; fi
cd "$here"
export PYTHONPATH="$here"
mkdir -p "$out"
cell() { # name runs [extra bench flags...]
  local name=$1 runs=$2; shift 2
  for agent in old new; do
    local bin=$old; [ "$agent" = new ] && bin=$new
    echo "$(date -u +%T) $agent $name $r load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
    python3 -m netlab.bench --preset full --agent "$bin" --out "$out/$name-$agent-$r" --name "${LAB:-abidle}" \
      --only schemes --schemes atp_full,atp_paper,tcp_es --msrs 0.75 --jobs fbkv=30,fbhd=15 --runs "$runs" "$@" "${extra[@]}" \
      > "$out/$name-$agent-$r.log" 2>&1 || echo "FAILED $name $agent $r" >> "$out/loads.txt"
  done
}
for r in $(seq 1 "$rounds"); do
  cell slack-bg incast/slack/3/1                 # strict-priority switch, class-0 cubic background at 0.3
  cell slack-nobg incast/slack/3/1 --bg-load 0   # the same without background
  cell fifo-bg incast/fifo/3/1                   # one FIFO queue, background
  cell a2a-slack all-to-all/slack/3/1            # all-to-all on the slack switch, background
done
echo done >> "$out/loads.txt"
python3 -m netlab.stats ab "$out" | tee "$out/summary.md"
