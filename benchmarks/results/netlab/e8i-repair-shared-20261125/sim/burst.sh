#!/bin/bash
SIM=$1; OUT=$2
for seed in 1 2 3 4 5 6 7 8 9 10; do for r in 0 2; do
  echo "## bg2ms seed $seed repair $r"
  $SIM --modes full,rc_mrdf --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 3,8 --bg-load 0.3 --bg-on-us 2000 --session-per-job 1 --seed $seed --repair-after $r
done; done > $OUT
