#!/bin/bash
# usage: run-full.sh SIM OUT [EXTRA...] -- run.sh's shape (the lab's FBHD incast, seeds 1-10, 3/8/16/32 senders, slack
# and FIFO) for Full alone (a knob's variants; run.sh's base.txt has RC+MRDF and paper).
SIM=$1; OUT=$2; shift 2
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## fbhdlab seed $seed $*" >> $OUT
  $SIM --workload fbhd --total-jobs 45 --modes full --load 0.8 --rtt-us 100 --senders 3,8,16,32 \
    --queues slack,fifo --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed "$@" >> $OUT
done
