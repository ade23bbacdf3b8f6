#!/bin/bash
# Third schedule, after merging main 69e7989 (new incast sender placement in benchmarks/netlab): runs named hd2-/co2-,
# pooled separately (python3 ../e8g-peer-pacer-bbr-shared-20261124/pool.py hd2; ../e8h-mrdf-sessions-shared-20261124/corun.py reads co-* and co2-*). new = C (c45b9d8 + merge).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
A=${AGENTS:-/tmp/e8i/agents}; O=$A/old-netlab-agent; N=$A/new-netlab-agent
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd2-new-1 $N fbhd; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd2-old-1 $O fbhd
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . co2-old-1 $O corun; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . co2-new-1 $N corun
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd2-old-2 $O fbhd; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd2-new-2 $N fbhd
