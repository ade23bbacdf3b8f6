#!/bin/bash
# Third schedule, after merging main 69e7989 (new incast sender placement in benchmarks/netlab): runs named hd2-/co2-,
# pooled separately (python3 pool.py hd2; corun.py reads co-*). new = C (c45b9d8 + merge).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
A=${AGENTS:-/tmp/e8i/agents}; O=$A/old-netlab-agent; N=$A/new-netlab-agent
./cell.sh . hd2-new-1 $N fbhd; ./cell.sh . hd2-old-1 $O fbhd
./cell.sh . co2-old-1 $O corun; ./cell.sh . co2-new-1 $N corun
./cell.sh . hd2-old-2 $O fbhd; ./cell.sh . hd2-new-2 $N fbhd
