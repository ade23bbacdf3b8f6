#!/bin/bash
# usage: corun.sh SIM OUT [EXTRA...] -- the lab's co-run in incast-sim: 60 FBHD jobs (--workload fbhd), every third
# exact (MSR 1, class 0; --msrs 1.0,0.5,0.75 with --exact-every 3 puts the exact ones where the lab does), 8 senders,
# load 0.8, the class-0 background 0.3 in 6 ms bursts, slack and FIFO, seeds 1-10.
SIM=$1; OUT=$2; shift 2
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## corunlab seed $seed $*" >> $OUT
  $SIM --workload fbhd --total-jobs 60 --msrs 1.0,0.5,0.75 --exact-every 3 --modes full --load 0.8 --rtt-us 100 \
    --senders 8 --queues slack,fifo --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed "$@" >> $OUT
done
