#!/bin/bash
# Fourth schedule (after merging main): FBKV cell, alternating, new = C.
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
A=${AGENTS:-/tmp/e8i/agents}; O=$A/old-netlab-agent; N=$A/new-netlab-agent
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv2-old-1 $O fbkv; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv2-new-1 $N fbkv
LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv2-new-2 $N fbkv; LAB=e8i ../e8h-mrdf-sessions-shared-20261124/cell.sh . kv2-old-2 $O fbkv
