#!/usr/bin/env bash
# One alternating lab round of the e8h A/B (lab name from LAB, default e8h): the FBKV cell, the FBHD cell or the co-run.
# usage: cell.sh OUTDIR TAG AGENT fbkv|fbhd|corun
#   fbkv  --runs incast/slack/3/1,incast/fifo/3/1,incast/fifo/8/1 --schemes atp_full,atp_rc_mrdf,tcp_es --jobs fbkv=90,fbhd=1
#   fbhd  the same runs and schemes, --jobs fbkv=1,fbhd=45
#   corun --only corun (exact ATP jobs beside approximate ones, slack and FIFO switch)
set -u
out=$(realpath -m "$1") tag=$2 agent=$(realpath "$3") kind=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
runs=incast/slack/3/1,incast/fifo/3/1,incast/fifo/8/1
case $kind in
  fbkv) cell=(--only schemes --runs $runs --schemes atp_full,atp_rc_mrdf,tcp_es --jobs fbkv=90,fbhd=1) ;;
  fbhd) cell=(--only schemes --runs $runs --schemes atp_full,atp_rc_mrdf,tcp_es --jobs fbkv=1,fbhd=45) ;;
  corun) cell=(--only corun) ;;
  *) echo "unknown cell kind: $kind" >&2; exit 2 ;;
esac
cd "$here/../../../netlab"
export PYTHONPATH=.
echo "$(date -u +%T) $tag start $(uptime)" >> "$out/loads.txt"
timeout 900 python3 -m netlab.bench --preset full --agent "$agent" --out "$out/$tag" --name "${LAB:-e8h}" "${cell[@]}" \
  --msrs 0.75 > "$out/$tag.log" 2>&1 || echo "FAILED $tag" >> "$out/loads.txt"
echo "$(date -u +%T) $tag end $(uptime)" >> "$out/loads.txt"
