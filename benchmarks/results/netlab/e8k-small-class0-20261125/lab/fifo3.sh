#!/bin/bash
# usage (as root): fifo3.sh OUTDIR OLD_AGENT NEW_AGENT FIRST LAST -- alternating pairs of the FBKV FIFO-3 cell alone
# (f3-*), to check whether the FIFO-3 difference of the kv-* runs is the agent or the slot.
set -u
out=$(realpath -m "$1"); old=$(realpath "$2"); new=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
for i in $(seq "$4" "$5"); do
  if [ $((i % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for a in $order; do
    ag=$old; [ $a = new ] && ag=$new
    echo "$(date -u +%T) f3-$a-$i start $(uptime)" >> "$out/loads.txt"
    (cd "$here/../../../../netlab" && PYTHONPATH=. timeout 900 python3 -m netlab.bench --preset full --agent "$ag" \
       --out "$out/f3-$a-$i" --name e8k --only schemes --runs incast/fifo/3/1 --schemes atp_full,atp_rc_mrdf,tcp_es \
       --jobs fbkv=90,fbhd=1 --msrs 0.75 > "$out/f3-$a-$i.log" 2>&1) || echo "FAILED f3-$a-$i" >> "$out/loads.txt"
    echo "$(date -u +%T) f3-$a-$i end $(uptime)" >> "$out/loads.txt"
  done
done
