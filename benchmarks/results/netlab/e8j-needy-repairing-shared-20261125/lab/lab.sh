#!/bin/bash
# Alternating A/B of the full preset's FBKV incast slack 3-sender cell (MSR 0.75).
# old = netlab-agent built from main (0fa15c3), new = this branch with needy_repairing_jobs_only = true.
# usage: lab.sh OUTDIR FIRST LAST (rounds FIRST..LAST; runs kv3-old-N, kv3-new-N)
set -u
out=$(realpath -m "$1"); first=$2; rounds=$3
cd "$(dirname "$0")/../../../../netlab"
export PYTHONPATH=.
for r in $(seq $first $rounds); do for tag in old new; do
  echo "$(date -u +%T) $tag-$r start $(uptime)" >> "$out/loads.txt"
  timeout 600 python3 -m netlab.bench --preset full --agent /tmp/e8j-agent-$tag --out "$out/kv3-$tag-$r" --name e8j \
    --only schemes --runs incast/slack/3/1 --schemes atp_full,atp_paper,tcp_es --jobs fbkv=90,fbhd=1 \
    > "$out/kv3-$tag-$r.log" 2>&1 || echo "FAILED $tag-$r" >> "$out/loads.txt"
  echo "$(date -u +%T) $tag-$r end $(uptime)" >> "$out/loads.txt"
done; done
