#!/usr/bin/env bash
# e8m: is the size-aware class (small jobs' DATA in class 0, Full only) what makes Full slower than RC+MRDF on the
# FIFO switch at FBKV 3 senders? Alternating rounds: the main agent (s-on) and the same agent with
# --small-job-class0-bytes 0 (s-off, /tmp/e8m-agent-nosmall), FBKV 90 jobs MSR 0.75, FIFO 3 and 8 senders, Full and
# RC+MRDF with the scheme order swapped every other round pair. usage: small.sh ROUNDS (from this directory)
set -u
here=$(pwd) rounds=$1
cd ../../../../netlab
export PYTHONPATH=.
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then o=atp_full,atp_rc_mrdf; else o=atp_rc_mrdf,atp_full; fi
  for side in on off; do
    if [ $side = on ]; then agent=/tmp/e8m-agent-main; else agent=/tmp/e8m-agent-nosmall; fi
    tag=s-$side-$r
    echo "$(date -u +%T) $tag start $o $(uptime)" >> "$here/loads.txt"
    timeout 900 python3 -m netlab.bench --preset full --agent "$agent" --out "$here/$tag" --name e8m --only schemes \
      --runs incast/fifo/3/1,incast/fifo/8/1 --schemes "$o" --jobs fbkv=90 --msrs 0.75 > "$here/$tag.log" 2>&1 \
      || echo "FAILED $tag" >> "$here/loads.txt"
    echo "$(date -u +%T) $tag end $(uptime)" >> "$here/loads.txt"
  done
done
