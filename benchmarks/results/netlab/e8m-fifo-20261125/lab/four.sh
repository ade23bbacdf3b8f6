#!/usr/bin/env bash
# e8m: FBKV (90 jobs, MSR 0.75) on the FIFO switch at 3 senders, Full / RC+MRDF / FixTLR / FixPrio with the main agent,
# the scheme order rotated every round (each scheme in each position equally often). On a FIFO the four differ only in
# the DSCPs they mark (no queue reads them) and in the TLR the rate law sees: FixPrio = dynamic TLR, FixTLR = static.
# usage: four.sh AGENT ROUNDS   (from this directory; runs f-R-I/)
set -u
agent=$(realpath "$1") rounds=$2 here=$(pwd)
orders=("atp_full,atp_rc_mrdf,atp_fixtlr,atp_fixprio" "atp_rc_mrdf,atp_fixtlr,atp_fixprio,atp_full"
        "atp_fixtlr,atp_fixprio,atp_full,atp_rc_mrdf" "atp_fixprio,atp_full,atp_rc_mrdf,atp_fixtlr")
cd ../../../../netlab
export PYTHONPATH=.
for r in $(seq 1 "$rounds"); do
  i=$(( (r - 1) % 4 )); o=${orders[$i]}; tag=f-$r-$i
  echo "$(date -u +%T) $tag start $o $(uptime)" >> "$here/loads.txt"
  timeout 900 python3 -m netlab.bench --preset full --agent "$agent" --out "$here/$tag" --name e8m --only schemes \
    --runs incast/fifo/3/1 --schemes "$o" --jobs fbkv=90 --msrs 0.75 > "$here/$tag.log" 2>&1 \
    || echo "FAILED $tag" >> "$here/loads.txt"
  echo "$(date -u +%T) $tag end $(uptime)" >> "$here/loads.txt"
done
