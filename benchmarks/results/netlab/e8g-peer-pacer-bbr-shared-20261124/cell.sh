#!/usr/bin/env bash
# One alternating lab round of the e8g A/B (lab name e8g): the brief's FBKV cell, or the FBHD cell.
# usage: cell.sh OUTDIR TAG AGENT fbkv|fbhd
#   fbkv  --runs incast/slack/3/1,incast/fifo/3/1 --schemes atp_full,atp_rc_mrdf,tcp_es --jobs fbkv=90,fbhd=1
#   fbhd  --runs incast/slack/3/1,incast/slack/8/1 --schemes atp_full,atp_rc_mrdf,tcp_es --jobs fbkv=1,fbhd=30
#   corun --only corun (exact ATP jobs beside approximate ones, slack and FIFO switch)
#   trace --runs incast/slack/3/1 --schemes atp_full --jobs fbkv=90,fbhd=1 --trace-schemes (epoch traces in TAG/traces)
set -u
out=$(realpath -m "$1") tag=$2 agent=$(realpath "$3") kind=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
case $kind in
  fbkv) cell=(--only schemes --runs incast/slack/3/1,incast/fifo/3/1 --schemes atp_full,atp_rc_mrdf,tcp_es --jobs fbkv=90,fbhd=1) ;;
  fbhd) cell=(--only schemes --runs incast/slack/3/1,incast/slack/8/1 --schemes atp_full,atp_rc_mrdf,tcp_es --jobs fbkv=1,fbhd=30) ;;
  corun) cell=(--only corun) ;;
  trace) cell=(--only schemes --runs incast/slack/3/1 --schemes atp_full --jobs fbkv=90,fbhd=1 --trace-schemes) ;;
  *) echo "unknown cell kind: $kind" >&2; exit 2 ;;
esac
cd "$here/../../../netlab"
export PYTHONPATH=.
echo "$(date -u +%T) $tag start load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
timeout 900 python3 -m netlab.bench --preset full --agent "$agent" --out "$out/$tag" --name e8g "${cell[@]}" \
  --msrs 0.75 > "$out/$tag.log" 2>&1 || echo "FAILED $tag" >> "$out/loads.txt"
echo "$(date -u +%T) $tag end load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
