#!/usr/bin/env bash
# Phase-order check on the FIFO switch (e8m): FBKV (90 jobs, MSR 0.75) at 3 and 8 senders, Full / RC+MRDF / FixTLR
# with the same agent, the scheme order rotated per round (Latin square), so each scheme runs first, second and third
# equally often. usage: order.sh AGENT ROUNDS   (from this directory; runs o-R-ORDER/)
set -u
agent=$(realpath "$1") rounds=$2 here=$(pwd)
orders=("atp_full,atp_rc_mrdf,atp_fixtlr" "atp_rc_mrdf,atp_fixtlr,atp_full" "atp_fixtlr,atp_full,atp_rc_mrdf")
cd ../../../../netlab
export PYTHONPATH=.
for r in $(seq 1 "$rounds"); do
  i=$(( (r - 1) % 3 )); o=${orders[$i]}; tag=o-$r-$i
  echo "$(date -u +%T) $tag start $o $(uptime)" >> "$here/loads.txt"
  timeout 900 python3 -m netlab.bench --preset full --agent "$agent" --out "$here/$tag" --name e8m --only schemes \
    --runs incast/fifo/3/1,incast/fifo/8/1 --schemes "$o" --jobs fbkv=90 --msrs 0.75 > "$here/$tag.log" 2>&1 \
    || echo "FAILED $tag" >> "$here/loads.txt"
  echo "$(date -u +%T) $tag end $(uptime)" >> "$here/loads.txt"
done
