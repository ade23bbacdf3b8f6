#!/bin/bash
# Co-run in the simulator (exact jobs next to approximate ones), session per job, seeds 1-10, across 0 / 1.
SIM=$1; OUT=$2
for across in 0 1; do for seed in $(seq 1 10); do
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --exact-every 3 --seed $seed --session-per-job 1 --mrdf-across $across | sed "s/^/corun across=$across seed=$seed /"
done; done > "$OUT/corun.txt"
