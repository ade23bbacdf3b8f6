#!/bin/bash
# Second alternating schedule (new = branch at the commit with the job-level gate, variant C; see README).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
A=${AGENTS:-/tmp/e8i/agents}; O=$A/old-netlab-agent; N=$A/new-netlab-agent
./cell.sh . kv-new-2 $N fbkv; ./cell.sh . kv-old-2 $O fbkv
./cell.sh . hd-old-4 $O fbhd; ./cell.sh . hd-new-4 $N fbhd
./cell.sh . co-old-2 $O corun; ./cell.sh . co-new-2 $N corun
