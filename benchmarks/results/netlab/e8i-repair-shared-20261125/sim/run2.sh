#!/bin/bash
# usage: run2.sh SIM OUT REPAIR [extra incast-sim args] -- FBHD shape, Full only, seeds 1-10
SIM=$1; OUT=$2; R=$3; shift 3
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## fbhd seed $seed repair $R"
  $SIM --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --repair-after $R "$@"
done > $OUT
