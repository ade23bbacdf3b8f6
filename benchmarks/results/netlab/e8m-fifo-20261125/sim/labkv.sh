#!/bin/bash
# usage: labkv.sh SIM OUT [EXTRA...] -- the lab's FBKV cell in incast-sim (--workload fbkv: the lab's generator, 90
# jobs, MSRs 0.5/0.75/0.9 round-robin, load 0.8, the class-0 background 0.3 in 6 ms bursts), seeds 1-40, 3 and 8
# senders, FIFO and slack, the ablation modes. EXTRA: further options (e.g. --msrs 0.75, or the knob under test).
SIM=$1; OUT=$2; shift 2
for seed in $(seq 1 40); do
  echo "## labkv seed $seed $*" >> $OUT
  $SIM --workload fbkv --total-jobs 90 --modes base,rc,rc_mrdf,fixtlr,fixprio,full --load 0.8 --rtt-us 100 \
    --senders 3,8 --queues fifo,slack --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed "$@" >> $OUT
done
