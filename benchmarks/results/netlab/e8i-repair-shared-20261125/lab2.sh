#!/bin/bash
# Second alternating schedule (new = branch at the commit with the job-level gate, variant C; see README).
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
A=${AGENTS:-/tmp/e8i/agents}; O=$A/old-netlab-agent; N=$A/new-netlab-agent
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv-new-2 $N fbkv; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv-old-2 $O fbkv
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-old-4 $O fbhd; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . hd-new-4 $N fbhd
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . co-old-2 $O corun; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . co-new-2 $N corun
