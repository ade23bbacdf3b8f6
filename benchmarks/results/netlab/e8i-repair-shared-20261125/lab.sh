#!/bin/bash
# The alternating schedule that was run (old = main 87a0d12, new = branch engine8i: repair_after_segments 2).
# Agents: cmake -S native -B B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETAPPROX_TESTS=OFF && cmake --build B --target
# netlab-agent, from `git archive main native` (old) and this branch (new); copied to AGENTS (not committed).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
A=${AGENTS:-/tmp/e8i/agents}; O=$A/old-netlab-agent; N=$A/new-netlab-agent
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-old-1 $O fbhd; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-new-1 $N fbhd
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-new-2 $N fbhd; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-old-2 $O fbhd
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv-old-1 $O fbkv; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv-new-1 $N fbkv
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . co-new-1 $N corun; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . co-old-1 $O corun
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-old-3 $O fbhd; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-new-3 $N fbhd
