#!/bin/bash
# usage: run.sh SIM OUT_PREFIX [EXTRA...] -- the ablation modes (base, rc, rc_mrdf, fixtlr, fixprio, full) on the lab's
# two shapes, seeds 1-10, FIFO and slack: FBKV (500 x 300 B, 20 jobs per sender, load 0.8; e8k's fbkv6ms shape) at 3
# and 8 senders, and the lab's FBHD workload (--workload fbhd, 45 jobs; e8l's shape) at 8 senders; the class-0
# background 0.3 in 6 ms bursts (the lab's iperf3 -b). EXTRA: further incast-sim options (the knob under test).
SIM=$1; O=$2; shift 2
M=base,rc,rc_mrdf,fixtlr,fixprio,full
for seed in 1 2 3 4 5 6 7 8 9 10; do
  echo "## fbkv seed $seed $*" >> $O-fbkv.txt
  $SIM --modes $M --msgs 500 --size 300 --load 0.8 --jobs 20 --senders 3,8 --queues fifo,slack --bg-load 0.3 \
    --bg-on-us 6000 --session-per-job 1 --seed $seed "$@" >> $O-fbkv.txt
  echo "## fbhd seed $seed $*" >> $O-fbhd.txt
  $SIM --workload fbhd --total-jobs 45 --modes $M --load 0.8 --rtt-us 100 --senders 8 --queues fifo,slack \
    --bg-load 0.3 --bg-on-us 6000 --session-per-job 1 --seed $seed "$@" >> $O-fbhd.txt
done
