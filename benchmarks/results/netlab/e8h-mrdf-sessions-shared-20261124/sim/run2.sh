#!/bin/bash
# Session per job only (the lab's layout), seeds 1-30, across 0 / 1: FBKV (as run.sh) and FBHD with the class-0
# background (e8g's FBHD shape), 3 and 8 senders.  Usage: bash run2.sh PATH/TO/incast-sim OUTDIR
SIM=$1; OUT=$2; mkdir -p "$OUT"
KV="--msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3 --bg-load 0.3 --bg-on-us 100"
HD="--msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 3,8 --bg-load 0.3 --bg-on-us 100"
for across in 0 1; do for seed in $(seq 1 30); do
  [ $seed -gt 10 ] && $SIM --modes full,rc_mrdf --queues slack,fifo $KV --seed $seed --session-per-job 1 --mrdf-across $across | sed "s/^/fbkv spj=1 across=$across seed=$seed /"
  $SIM --modes full,rc_mrdf --queues slack,fifo $HD --seed $seed --session-per-job 1 --mrdf-across $across | sed "s/^/fbhdbg spj=1 across=$across seed=$seed /"
done; done > "$OUT/sim2.txt"
