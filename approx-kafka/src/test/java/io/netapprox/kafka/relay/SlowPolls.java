package io.netapprox.kafka.relay;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * Test seam over {@link KafkaRelay.PullHook}: a relay whose log readers, when a partition they were
 * fetching was given up (RELEASE) during the poll, finish that poll only once the partition was
 * pulled again (or a bound passed) - the poll a loaded relay machine takes while a consumer gives a
 * partition up and takes it back. Nothing else changes: the relay, its Kafka consumers and the
 * consumers' requests are the real ones.
 */
public final class SlowPolls {
    private final Object lock = new Object();
    private final Set<TopicPartition> released = new HashSet<>();
    private final long boundNanos;
    private long held;

    private SlowPolls(Duration bound) {
        this.boundNanos = bound.toNanos();
    }

    /** Installs the seam on {@code relay} (replacing any other hook). */
    public static SlowPolls install(KafkaRelay relay, Duration bound) {
        SlowPolls s = new SlowPolls(bound);
        relay.pullHook(
                new KafkaRelay.PullHook() {
                    @Override
                    public void registered(RelayProtocol.Request request) {
                        s.registered(request);
                    }

                    @Override
                    public void polled(Set<TopicPartition> fetched) throws InterruptedException {
                        s.polled(fetched);
                    }
                });
        return s;
    }

    /** Polls held until a partition they fetched was pulled again (or the bound passed). */
    public long held() {
        synchronized (lock) {
            return held;
        }
    }

    private void registered(RelayProtocol.Request request) {
        synchronized (lock) {
            if (request instanceof RelayProtocol.Release r) {
                released.addAll(r.partitions());
            } else if (request instanceof RelayProtocol.Pull p) {
                released.remove(p.partition());
            }
            lock.notifyAll();
        }
    }

    private void polled(Set<TopicPartition> fetched) throws InterruptedException {
        long deadline = System.nanoTime() + boundNanos;
        synchronized (lock) {
            if (!anyReleased(fetched)) {
                return;
            }
            held++;
            while (anyReleased(fetched)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                lock.wait(Math.max(1, left / 1_000_000));
            }
        }
    }

    private boolean anyReleased(Set<TopicPartition> fetched) {
        for (TopicPartition tp : fetched) {
            if (released.contains(tp)) {
                return true;
            }
        }
        return false;
    }
}
