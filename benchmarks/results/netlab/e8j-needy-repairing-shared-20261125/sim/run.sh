#!/bin/bash
# usage: run.sh SIM OUTDIR -- seeds 1-10, needy_repairing_jobs_only 0 (old = main's rule) and 1 (new)
SIM=$1; O=$2
for seed in 1 2 3 4 5 6 7 8 9 10; do for r in 0 1; do
  echo "## fbkv seed $seed repair $r" >> $O/fbkv.txt
  $SIM --modes full,rc_mrdf --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --needy-repairing-only $r >> $O/fbkv.txt
  echo "## fbhd seed $seed repair $r" >> $O/fbhd.txt
  $SIM --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --needy-repairing-only $r >> $O/fbhd.txt
  echo "## bg2ms seed $seed repair $r" >> $O/bg2ms.txt
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 3,8 --bg-load 0.3 --bg-on-us 2000 --session-per-job 1 --seed $seed --needy-repairing-only $r >> $O/bg2ms.txt
  echo "## corun seed $seed repair $r" >> $O/corun.txt
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --exact-every 3 --session-per-job 1 --seed $seed --needy-repairing-only $r >> $O/corun.txt
  echo "## kvcorun seed $seed repair $r" >> $O/kvcorun.txt
  $SIM --modes full --queues slack,fifo --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3,8 --exact-every 3 --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --needy-repairing-only $r >> $O/kvcorun.txt
done; done
