#!/bin/bash
SIM=$1; OUT=$2
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## corun seed $seed repair 2w"
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --exact-every 3 --session-per-job 1 --seed $seed --repair-after 2
done > $OUT
