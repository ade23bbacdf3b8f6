#!/bin/bash
# The alternating schedule that was run (old = main 87a0d12, new = branch engine8i: repair_after_segments 2).
# Agents: cmake -S native -B B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETAPPROX_TESTS=OFF && cmake --build B --target
# netlab-agent, from `git archive main native` (old) and this branch (new); copied to AGENTS (not committed).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
A=${AGENTS:-/tmp/e8i/agents}; O=$A/old-netlab-agent; N=$A/new-netlab-agent
./cell.sh . hd-old-1 $O fbhd; ./cell.sh . hd-new-1 $N fbhd
./cell.sh . hd-new-2 $N fbhd; ./cell.sh . hd-old-2 $O fbhd
./cell.sh . kv-old-1 $O fbkv; ./cell.sh . kv-new-1 $N fbkv
./cell.sh . co-new-1 $N corun; ./cell.sh . co-old-1 $O corun
./cell.sh . hd-old-3 $O fbhd; ./cell.sh . hd-new-3 $N fbhd
