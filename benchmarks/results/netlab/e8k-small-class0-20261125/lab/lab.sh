#!/bin/bash
# usage (as root, from anywhere): lab.sh OUTDIR OLD_AGENT NEW_AGENT FIRST LAST
# Alternating pairs (old first in odd pairs, new first in even ones) of: the e8h FBKV cell (kv-*), the full preset's
# FBKV slack-8 cell (k8-*), the e8h FBHD cell (hd-*, pairs <= HDMAX, default 2), the co-run (co-*, pairs <= COMAX,
# default 2). Lab name e8k. Loads in OUTDIR/loads.txt.
set -u
out=$(realpath -m "$1"); old=$(realpath "$2"); new=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
cell=$here/../../e8h-mrdf-sessions-shared-20261124/cell.sh
k8() {  # OUT TAG AGENT: the full preset's cell named in the engine8k brief
  echo "$(date -u +%T) $2 start $(uptime)" >> "$1/loads.txt"
  (cd "$here/../../../../netlab" && PYTHONPATH=. timeout 900 python3 -m netlab.bench --preset full --agent "$3" \
     --out "$1/$2" --name e8k --only schemes --runs incast/slack/8/1 --schemes atp_full,atp_rc_mrdf,tcp_es \
     --jobs fbkv=90,fbhd=1 > "$1/$2.log" 2>&1) || echo "FAILED $2" >> "$1/loads.txt"
  echo "$(date -u +%T) $2 end $(uptime)" >> "$1/loads.txt"
}
mkdir -p "$out"
for i in $(seq "$4" "$5"); do
  if [ $((i % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for kind in kv k8 hd co; do
    for a in $order; do
      ag=$old; [ $a = new ] && ag=$new
      case $kind in
        kv) LAB=e8k bash "$cell" "$out" kv-$a-$i "$ag" fbkv ;;
        k8) k8 "$out" k8-$a-$i "$ag" ;;
        hd) [ "$i" -le "${HDMAX:-2}" ] && LAB=e8k bash "$cell" "$out" hd-$a-$i "$ag" fbhd ;;
        co) [ "$i" -le "${COMAX:-2}" ] && LAB=e8k bash "$cell" "$out" co-$a-$i "$ag" corun ;;
      esac
    done
  done
done
