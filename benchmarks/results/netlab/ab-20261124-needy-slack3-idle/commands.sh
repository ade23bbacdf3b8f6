cd /work/main/benchmarks/netlab
for i in 1 2; do
 for a in f075 f0; do
  if [ $a = f0 ]; then A=/tmp/f0/B/netlab-agent; else A=/tmp/e8c-newB/netlab-agent; fi
  PYTHONPATH=. python3 -m netlab.bench --preset full --agent $A --out /tmp/labout3/$a-$i --name abidle --only schemes --runs incast/slack/3/1,incast/slack/3/5 --schemes atp_full,atp_paper,tcp_es --msrs 0.75
 done
done
echo LABDONE
