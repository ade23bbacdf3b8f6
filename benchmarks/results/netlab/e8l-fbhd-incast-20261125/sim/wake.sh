#!/bin/bash
# usage: wake.sh SIM OUT W -- run.sh's shape (Full and RC+MRDF, 8 and 32 senders, slack and FIFO, seeds 1-10) with
# the senders' drivers waking late (--wake-us W, exponential mean): does pacing imprecision make Full's slack gap grow
# with the number of senders, as in the lab?
SIM=$1; OUT=$2; W=$3
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## fbhdlab seed $seed wake $W" >> $OUT
  $SIM --workload fbhd --total-jobs 45 --modes full,rc_mrdf --load 0.8 --rtt-us 100 --senders 8,32 \
    --queues slack,fifo --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed --wake-us $W >> $OUT
done
