#!/bin/bash
# usage: run.sh SIM OUT  -- FBHD shape of the brief, seeds 1-10, repair_after 0 (old rule) and 2 (new)
SIM=$1; OUT=$2
for seed in 1 2 3 4 5 6 7 8 9 10; do
  for r in 0 2; do
    echo "## fbhd seed $seed repair $r"
    $SIM --modes full,rc_mrdf --msgs 40 --size 39536 --rtt-us 100 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --repair-after $r
  done
done > $OUT
