#!/bin/bash
# usage (from benchmarks/netlab, as root): bash ../results/netlab/e8l-fbhd-incast-20261125/lab-repeat.sh AGENT OUT K1 K2
# FBHD incast cells of the full preset (45 jobs, seed 2026) on the slack switch at 8/16/32 senders and FIFO 32, Full vs
# RC+MRDF, repeats K1..K2; uptime before and after each.
A=$1; O=$2
for k in $(seq $3 $4); do
  { echo "# $(date -u +%H:%M:%S) uptime: $(uptime)"; python3 -m netlab.bench --preset full --agent $A --out $O/rep-$k --name e8l \
    --only schemes --runs incast/slack/8/1,incast/slack/16/1,incast/slack/32/1,incast/fifo/32/1 \
    --schemes atp_full,atp_rc_mrdf --jobs fbhd=45; echo "# $(date -u +%H:%M:%S) uptime: $(uptime)"; } > $O/rep-$k.log 2>&1
done
