#!/bin/bash
# Extra alternating rounds after lab.sh (same cells).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
O=agents/old-netlab-agent; N=agents/new-netlab-agent
./cell.sh . kv-new-4 $N fbkv; ./cell.sh . kv-old-4 $O fbkv
./cell.sh . hd-new-3 $N fbhd; ./cell.sh . hd-old-3 $O fbhd
./cell.sh . co-old-3 $O corun; ./cell.sh . co-new-3 $N corun
./cell.sh . kv-old-5 $O fbkv; ./cell.sh . kv-new-5 $N fbkv
