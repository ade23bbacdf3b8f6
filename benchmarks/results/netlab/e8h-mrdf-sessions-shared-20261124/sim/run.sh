#!/bin/bash
# Simulator before/after for MRDF across sessions (EngineConfig::mrdf_across_jobs): seeds 1-10, session per job
# (the lab's layout) and session per sender, across 0 (before: round-robin) and 1 (after).
# Usage: bash run.sh PATH/TO/incast-sim OUTDIR
SIM=$1; OUT=$2; mkdir -p "$OUT"
KV="--msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3 --bg-load 0.3 --bg-on-us 100"
HD="--msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4"
for spj in 1 0; do for across in 0 1; do for seed in 1 2 3 4 5 6 7 8 9 10; do
  $SIM --modes full,rc_mrdf --queues slack,fifo $KV --seed $seed --session-per-job $spj --mrdf-across $across | sed "s/^/fbkv spj=$spj across=$across seed=$seed /"
  $SIM --modes full,rc_mrdf --queues slack,fifo $HD --senders 3,8 --seed $seed --session-per-job $spj --mrdf-across $across | sed "s/^/fbhd spj=$spj across=$across seed=$seed /"
done; done; done > "$OUT/sim.txt"
