package io.netapprox.kafka.flink;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import io.netapprox.kafka.ApproxConsumers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The thread that owns a reader's approximate consumer (a Kafka consumer is single-threaded; its
 * {@code poll} blocks, which a Flink source reader must not). It applies split changes between
 * polls and hands each poll to the reader through a queue of {@link #HANDOVER} batches, so a slow
 * job slows the consumer (and with it the relay) instead of buffering without bound.
 */
final class PartitionFetcher implements AutoCloseable {
    /** Polls fetched but not yet emitted. */
    static final int HANDOVER = 2;

    private static final Duration POLL = Duration.ofMillis(100);

    private final Properties props;
    private final BlockingQueue<FetchedBatch> handover = new ArrayBlockingQueue<>(HANDOVER);

    /** Split changes, applied by the fetch thread between polls (bounded: few per job). */
    private final BlockingQueue<Map<TopicPartition, Long>> seeks = new ArrayBlockingQueue<>(1024);

    private final BlockingQueue<Set<TopicPartition>> removals = new ArrayBlockingQueue<>(1024);
    private final Object lock = new Object();
    private final Thread thread;
    private CompletableFuture<Void> available = new CompletableFuture<>();
    private volatile Throwable failure;
    private volatile boolean closing;
    private volatile Consumer<byte[], byte[]> consumer;

    PartitionFetcher(Properties props, String name) {
        this.props = props;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Reads these partitions from these offsets (added to the ones already read). */
    void add(Map<TopicPartition, Long> from) throws InterruptedException {
        seeks.put(new HashMap<>(from));
        wakeup();
    }

    /** Stops reading these partitions (their splits finished). */
    void remove(Set<TopicPartition> tps) throws InterruptedException {
        removals.put(new HashSet<>(tps));
        wakeup();
    }

    /** The next batch, or null if none is ready. */
    FetchedBatch next() {
        return handover.poll();
    }

    boolean hasNext() {
        return !handover.isEmpty();
    }

    /** The consumer's failure, if the fetch thread died. */
    Throwable failure() {
        return failure;
    }

    /** Completes when a batch is ready or the fetcher failed. */
    CompletableFuture<Void> available() {
        synchronized (lock) {
            if (!handover.isEmpty() || failure != null) {
                return CompletableFuture.completedFuture(null);
            }
            if (available.isDone()) {
                available = new CompletableFuture<>();
            }
            return available;
        }
    }

    /** Completes the reader's pending {@link #available()} future (its state changed). */
    void wakeReader() {
        signal();
    }

    private void signal() {
        synchronized (lock) {
            available.complete(null);
        }
    }

    private void wakeup() {
        synchronized (lock) {
            lock.notifyAll();
        }
        Consumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }

    private void run() {
        try (Consumer<byte[], byte[]> c =
                ApproxConsumers.create(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer = c;
            Map<TopicPartition, Long> last = new HashMap<>();
            Map<TopicPartition, Long> lastLags = new HashMap<>();
            while (!closing) {
                applyChanges(c);
                if (c.assignment().isEmpty()) {
                    synchronized (lock) {
                        if (seeks.isEmpty() && removals.isEmpty() && !closing) {
                            lock.wait(POLL.toMillis());
                        }
                    }
                    continue;
                }
                List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
                try {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
                        records.add(r);
                    }
                } catch (WakeupException e) {
                    continue; // a split change or close; nothing was returned
                }
                long fetchTime = System.currentTimeMillis();
                Map<TopicPartition, Long> positions = new HashMap<>();
                Map<TopicPartition, Long> lags = new HashMap<>();
                for (TopicPartition tp : c.assignment()) {
                    positions.put(tp, c.position(tp));
                    OptionalLong lag = c.currentLag(tp); // cached: no request to the broker
                    if (lag.isPresent()) {
                        lags.put(tp, lag.getAsLong());
                    }
                }
                if (!records.isEmpty() || !positions.equals(last) || !lags.equals(lastLags)) {
                    FetchedBatch batch = new FetchedBatch(records, positions, lags, fetchTime);
                    while (!closing && !handover.offer(batch, POLL.toMillis(), MILLISECONDS)) {
                        // the reader is behind: wait (backpressure), but notice a close
                    }
                    last = positions;
                    lastLags = lags;
                    signal();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (WakeupException e) {
            if (!closing) {
                fail(e);
            }
        } catch (Throwable t) {
            if (!closing) {
                fail(t);
            }
        }
    }

    private void applyChanges(Consumer<byte[], byte[]> c) {
        Map<TopicPartition, Long> added = new HashMap<>();
        Set<TopicPartition> removed = new HashSet<>();
        for (Map<TopicPartition, Long> m; (m = seeks.poll()) != null; ) {
            added.putAll(m);
        }
        for (Set<TopicPartition> s; (s = removals.poll()) != null; ) {
            removed.addAll(s);
        }
        if (added.isEmpty() && removed.isEmpty()) {
            return;
        }
        Set<TopicPartition> assignment = new HashSet<>(c.assignment());
        assignment.addAll(added.keySet());
        assignment.removeAll(removed);
        c.assign(assignment);
        added.forEach(
                (tp, offset) -> {
                    if (assignment.contains(tp)) {
                        c.seek(tp, offset);
                    }
                });
    }

    private void fail(Throwable t) {
        failure = t;
        signal();
    }

    @Override
    public void close() throws InterruptedException {
        closing = true;
        wakeup();
        thread.join(30_000);
    }
}
