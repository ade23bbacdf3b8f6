#!/bin/bash
# Alternating A/B, FBKV incast at 8 and 16 senders on the slack switch and 3 / 8 senders on FIFO (MSR 0.75).
# old = netlab-agent built from main (0fa15c3), new = this branch with needy_repairing_jobs_only = true.
# usage: lab2.sh OUTDIR FIRST LAST (runs kvw-old-N, kvw-new-N)
set -u
out=$(realpath -m "$1"); first=$2; rounds=$3
cd "$(dirname "$0")/../../../../netlab"
export PYTHONPATH=.
for r in $(seq $first $rounds); do for tag in old new; do
  echo "$(date -u +%T) kvw-$tag-$r start $(uptime)" >> "$out/loads.txt"
  timeout 600 python3 -m netlab.bench --preset full --agent /tmp/e8j-agent-$tag --out "$out/kvw-$tag-$r" --name e8j \
    --only schemes --runs incast/slack/8/1,incast/slack/16/1,incast/fifo/3/1,incast/fifo/8/1 \
    --schemes atp_full,tcp_es --msrs 0.75 --jobs fbkv=90,fbhd=1 \
    > "$out/kvw-$tag-$r.log" 2>&1 || echo "FAILED kvw-$tag-$r" >> "$out/loads.txt"
  echo "$(date -u +%T) kvw-$tag-$r end $(uptime)" >> "$out/loads.txt"
done; done
