L=${LAB:-e8e}  # the lab name given to bench --name
while true; do
  if ip netns list 2>/dev/null | grep -q "^$L-sw"; then
    t=$(date +%s.%N)
    ip netns exec $L-sw tc -s class show dev p1 2>/dev/null | awk -v t=$t '/^class/{c=$3} /Sent/{print t, c, $2, $4, $7}'
  fi
  sleep 0.02
done
