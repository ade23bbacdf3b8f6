#!/bin/bash
# The alternating schedule that was run (old = main 4fdec22 + the one-line build fix, new = this branch).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
O=agents/old-netlab-agent; N=agents/new-netlab-agent
./cell.sh . kv-old-1 $O fbkv; ./cell.sh . kv-new-1 $N fbkv
./cell.sh . hd-new-1 $N fbhd; ./cell.sh . hd-old-1 $O fbhd
./cell.sh . kv-new-2 $N fbkv; ./cell.sh . kv-old-2 $O fbkv
./cell.sh . co-old-1 $O corun; ./cell.sh . co-new-1 $N corun
./cell.sh . hd-old-2 $O fbhd; ./cell.sh . hd-new-2 $N fbhd
./cell.sh . kv-old-3 $O fbkv; ./cell.sh . kv-new-3 $N fbkv
./cell.sh . co-new-2 $N corun; ./cell.sh . co-old-2 $O corun
