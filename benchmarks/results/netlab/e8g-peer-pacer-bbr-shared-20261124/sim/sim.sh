#!/bin/bash
# usage: sim.sh BIN OUT PP   (PP = peer pacing 0|1)
BIN=$1; OUT=$2; PP=$3
: > $OUT
for seed in ${SEEDS:-1 2 3}; do
  echo "## fbkv seed $seed" >> $OUT
  $BIN --modes full --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --peer-pacing $PP --seed $seed | grep -v '^#' >> $OUT
  echo "## fbhd3 seed $seed" >> $OUT
  $BIN --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 3 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --peer-pacing $PP --seed $seed | grep -v '^#' >> $OUT
  echo "## fbhd8 seed $seed" >> $OUT
  $BIN --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --peer-pacing $PP --seed $seed | grep -v '^#' >> $OUT
  echo "## corun seed $seed" >> $OUT
  $BIN --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --queues slack,fifo --exact-every 3 --peer-pacing $PP --seed $seed | grep -v '^#' >> $OUT
done
