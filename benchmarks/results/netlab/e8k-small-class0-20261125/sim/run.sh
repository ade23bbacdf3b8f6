#!/bin/bash
# usage: run.sh SIM OUTDIR "T1 T2 ..." -- seeds 1-10, EngineConfig::small_job_class0_bytes = each T (0 = off = main).
# Headers read "## SHAPE seed N repair T" so that e8i's summ.py / corun_summ.py read them (their "repair" column is T).
# Shapes: the FBKV shape of docs/protocol.md section 17 item 1 with the class-0 background in 100 us bursts (fbkv) and
# in 6 ms bursts every 20 ms (fbkv6ms: what the lab's iperf3 -b background does, ../lab/bg-burst-sample.txt), FBHD
# (fbhd), FBHD behind 2 ms bursts (bg2ms), FBHD behind 6 ms bursts (fbhd6ms), the FBHD co-run without background
# (corun, as before) and with the lab's 6 ms bursts (corun6ms), the FBKV co-run (kvcorun, 8 senders; kvcorun6ms).
SIM=$1; O=$2; TS=$3
for seed in 1 2 3 4 5 6 7 8 9 10; do for t in $TS; do
  echo "## fbkv seed $seed repair $t" >> $O/fbkv.txt
  $SIM --modes full,rc_mrdf --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/fbkv.txt
  echo "## fbkv6ms seed $seed repair $t" >> $O/fbkv6ms.txt
  $SIM --modes full,rc_mrdf --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/fbkv6ms.txt
  echo "## fbhd6ms seed $seed repair $t" >> $O/fbhd6ms.txt
  $SIM --modes full,rc_mrdf --msgs 40 --size 39536 --rtt-us 100 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/fbhd6ms.txt
  echo "## corun seed $seed repair $t" >> $O/corun6ms.txt
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --exact-every 3 --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/corun6ms.txt
  echo "## corun seed $seed repair $t" >> $O/kvcorun6ms.txt
  $SIM --modes full --queues slack,fifo --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 8 --exact-every 3 --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/kvcorun6ms.txt
  echo "## fbhd seed $seed repair $t" >> $O/fbhd.txt
  $SIM --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.8 --jobs 20 --senders 3,8 --queues slack,fifo --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/fbhd.txt
  echo "## bg2ms seed $seed repair $t" >> $O/bg2ms.txt
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 3,8 --bg-load 0.3 --bg-on-us 2000 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/bg2ms.txt
  echo "## corun seed $seed repair $t" >> $O/corun.txt
  $SIM --modes full --queues slack,fifo --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --exact-every 3 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/corun.txt
  echo "## corun seed $seed repair $t" >> $O/kvcorun.txt
  $SIM --modes full --queues slack,fifo --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 8 --exact-every 3 --bg-load 0.3 --bg-on-us 100 --session-per-job 1 --seed $seed --small-class0-bytes $t >> $O/kvcorun.txt
done; done
