#!/usr/bin/env bash
# One lab cell with the bottleneck's tc class counters sampled throughout (lab name e8f).
# usage: cell.sh OUTDIR TAG AGENT quick|fe|fullonly [jobs]
#   quick    --runs incast/slack/3/1,incast/fifo/3/1 --schemes atp_full,atp_rc_mrdf,atp_base,tcp_es (runs old-N, new-N)
#   fe       --runs incast/slack/3/1 --schemes atp_full,tcp_es                      (runs fe-{old,new,var}-N)
#   fullonly --runs incast/slack/3/1 --schemes atp_full --trace-schemes             (runs tc-*, tr-on-1)
set -u
out=$(realpath "$1") tag=$2 agent=$(realpath "$3") kind=$4 jobs=${5:-fbkv=90,fbhd=1}
here=$(cd "$(dirname "$0")" && pwd)
case $kind in
  quick) cell=(--runs incast/slack/3/1,incast/fifo/3/1 --schemes atp_full,atp_rc_mrdf,atp_base,tcp_es) ;;
  fe) cell=(--runs incast/slack/3/1 --schemes atp_full,tcp_es) ;;
  fullonly) cell=(--runs incast/slack/3/1 --schemes atp_full --trace-schemes) ;;
  *) echo "unknown cell kind: $kind (quick, fe or fullonly)" >&2; exit 2 ;;
esac
cd "$here/../../../netlab"
export PYTHONPATH=.
LAB=e8f bash "$here/../e8e-restore-shared-20261124/tc_class_sampler.sh" > "$out/$tag.tc.txt" 2>/dev/null &
sp=$!
echo "$(date -u +%T) $tag load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
timeout 600 python3 -m netlab.bench --preset full --agent "$agent" --out "$out/$tag" --name e8f --only schemes \
  "${cell[@]}" --msrs 0.75 --jobs "$jobs" > "$out/$tag.log" 2>&1 || echo "FAILED $tag" >> "$out/loads.txt"
kill $sp
echo "$(date -u +%T) $tag end load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
