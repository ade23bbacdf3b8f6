#!/usr/bin/env bash
# usage: quick.sh OUTDIR TAG AGENT [jobs]
set -u
out=$1 tag=$2 agent=$3 jobs=${4:-fbkv=90,fbhd=1}
cd /work/wt-engine8f/benchmarks/netlab
export PYTHONPATH=.
LAB=e8f bash /work/wt-engine8f/benchmarks/results/netlab/e8e-restore-shared-20261124/tc_class_sampler.sh > $out/$tag.tc.txt 2>/dev/null &
sp=$!
echo "$(date -u +%T) $tag load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/loads.txt
timeout 600 python3 -m netlab.bench --preset full --agent $agent --out $out/$tag --name e8f --only schemes \
  --runs incast/slack/3/1,incast/fifo/3/1 --schemes atp_full,atp_rc_mrdf,atp_base,tcp_es --msrs 0.75 --jobs $jobs \
  > $out/$tag.log 2>&1 || echo "FAILED $tag" >> $out/loads.txt
kill $sp
echo "$(date -u +%T) $tag end load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/loads.txt
