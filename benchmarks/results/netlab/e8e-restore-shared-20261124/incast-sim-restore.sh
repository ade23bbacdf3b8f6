S=${S:-native/build/incast-sim}  # run from the repository root
for seed in 1 2 3; do for rtt in 100 2000; do for r in 0 1; do
 echo "fbkv rtt $rtt seed $seed restore $r: $($S --modes full --msgs 500 --size 300 --rtt-us $rtt --load 0.8 --jobs 20 --senders 3 --queues slack --bg-load 0.3 --bg-on-us 100 --seed $seed --restore $r | tail -1 | cut -c1-140)"
done; done; done
for seed in 1 2; do for r in 0 1; do
 echo "fbhd8 2ms-bursts seed $seed restore $r: $($S --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.6 --jobs 4 --senders 8 --queues slack --bg-load 0.3 --bg-on-us 2000 --seed $seed --restore $r | tail -1 | cut -c1-140)"
 echo "corun seed $seed restore $r: $($S --modes full --msgs 40 --size 39536 --rtt-us 100 --load 0.9 --jobs 4 --senders 8 --queues slack,fifo --exact-every 3 --seed $seed --restore $r | tail -2 | sed 's/failed.*//' | cut -c1-60,200-400 | tr '\n' '|')"
done; done
