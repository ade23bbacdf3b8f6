#!/bin/bash
# usage: run.sh SIM OUT [EXTRA...] -- the lab's FBHD incast schedule in incast-sim (--workload fbhd: 45 jobs, MSRs
# 0.5/0.75/0.9 round-robin, messages produced over time, load 0.8, the class-0 background 0.3 in 6 ms bursts as the
# lab's iperf3 -b delivers it), seeds 1-10, 3/8/16/32 senders, slack and FIFO, Full / RC+MRDF / paper.
# EXTRA: further incast-sim options (the engine knob under test).
SIM=$1; OUT=$2; shift 2
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## fbhdlab seed $seed $*" >> $OUT
  $SIM --workload fbhd --total-jobs 45 --modes full,rc_mrdf,paper --load 0.8 --rtt-us 100 --senders 3,8,16,32 \
    --queues slack,fifo --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed "$@" >> $OUT
done
