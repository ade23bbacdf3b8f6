#!/bin/bash
# variant: the slack law's packet target = the message TLR for jobs that repair (not 1 - (1 - TLR)^(1/k))
SIM=$1; OUT=$2
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## fbhd seed $seed repair 2t"
  $SIM --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --repair-after 2
done > $OUT
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## fbhd seed $seed repair 2t"
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 3,8 --bg-load 0.3 --bg-on-us 2000 --session-per-job 1 --seed $seed --repair-after 2
done > $OUT.bg2ms
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## corun seed $seed repair 2t"
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --exact-every 3 --session-per-job 1 --seed $seed --repair-after 2
done > $OUT.corun
