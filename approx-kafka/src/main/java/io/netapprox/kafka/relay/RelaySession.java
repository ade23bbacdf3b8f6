package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteBufferDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer's stream through a relay: {@link RelayConfig#readThreads()} log readers, each a
 * {@link KafkaConsumer} of its own (assign mode, byte buffers, the consumer's isolation level, over
 * the relay's bootstrap address - loopback beside the broker) and the one thread that uses it,
 * which fetches its share of the partitions with demand, samples them into segments ({@link
 * PartitionReader}) and answers their pulls. Partitions are spread over the readers by topic and
 * number, so a stream of several partitions is read and sampled in parallel.
 */
public final class RelaySession {
    private static final Logger log = LoggerFactory.getLogger(RelaySession.class);
    private static final long LEADER_CHECK_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final KafkaRelay relay;
    private final StreamSpec spec;
    private final Lane[] lanes;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Map<TopicPartition, PartitionReader> readers = new HashMap<>();
    private final Set<TopicPartition> unchecked = new HashSet<>();
    private long generations;

    /**
     * Per partition, the sequence number of the newest PULL or RELEASE taken. A release forgets its
     * partitions (the stream's memory stays bounded by the partitions it reads now) and raises
     * {@link #releasedUpTo} instead, so a pull sent before the release is still recognised as
     * stale.
     */
    private final Map<TopicPartition, Long> newestRequest = new HashMap<>();

    /**
     * The newest RELEASE taken: a partition without an entry in {@link #newestRequest} takes only
     * requests above it (a first pull that arrives after a later release of another partition is
     * answered SUPERSEDED and pulled again by the consumer, which is safe).
     */
    private long releasedUpTo = -1;

    private volatile boolean closed;

    /**
     * @param readerProps the log readers' Kafka properties beyond the relay's own (security
     *     settings and, with authorization=kafka, the login of the consumer's delegation token)
     */
    RelaySession(KafkaRelay relay, StreamSpec spec, Map<String, Object> readerProps, String name) {
        this.relay = relay;
        this.spec = spec;
        Map<String, Object> p = new HashMap<>(readerProps);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, relay.config().bootstrap());
        // views of the fetched batches, no copy per record: a record is copied out only when a
        // cell's reservoir keeps it (SegmentBuilder), so records dropped by sampling cost no copy
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteBufferDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteBufferDeserializer.class);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        // a pull of an unknown topic is answered UNKNOWN_TOPIC (checkPartitions); never created
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        p.put(
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                spec.readCommitted() ? "read_committed" : "read_uncommitted");
        p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        p.putIfAbsent(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 5000);
        this.lanes = new Lane[relay.config().readThreads()];
        for (int i = 0; i < lanes.length; i++) {
            Map<String, Object> lp = new HashMap<>(p);
            lp.put(ConsumerConfig.CLIENT_ID_CONFIG, name + "-" + i);
            lanes[i] = new Lane(new KafkaConsumer<>(lp), name + "-" + i);
        }
        for (Lane l : lanes) {
            l.reader.start();
        }
    }

    /**
     * One log reader: a Kafka consumer and the thread that alone uses it, reading and sampling the
     * stream's partitions that fall to it ({@link #laneOf}); sampling state of its own (the plan
     * and stratifier cache maps are not shared between threads).
     */
    private final class Lane {
        final KafkaConsumer<ByteBuffer, ByteBuffer> consumer;
        final Thread reader;
        final SampleSizer plan = new SampleSizer(spec);
        final Stratifier stratifier = new Stratifier(spec.stratification());
        long lastLeaderCheck = System.nanoTime();

        Lane(KafkaConsumer<ByteBuffer, ByteBuffer> consumer, String name) {
            this.consumer = consumer;
            this.reader = new Thread(this::run, name);
            this.reader.setDaemon(true);
        }

        boolean owns(TopicPartition tp) {
            return laneOf(tp) == this;
        }

        private void run() {
            try {
                while (!closed) {
                    step();
                }
            } catch (AuthenticationException e) {
                // the broker no longer accepts the stream's credentials (token expired or deleted)
                failAll(
                        new RelayException(
                                RelayException.Reason.NOT_AUTHORIZED,
                                "the broker refused the stream's Kafka credentials: "
                                        + e.getMessage(),
                                -1,
                                e));
            } catch (WakeupException e) {
                if (!closed) {
                    failAll(
                            new RelayException(
                                    RelayException.Reason.READ_FAILED,
                                    "relay reader woken",
                                    -1,
                                    e));
                }
            } catch (Throwable t) {
                log.warn("relay reader {} failed", reader.getName(), t);
                failAll(
                        new RelayException(
                                RelayException.Reason.READ_FAILED,
                                "relay read failed: " + t,
                                -1,
                                t));
            } finally {
                closed = true; // one reader failing ends the stream: its other readers stop too
                consumer.close(Duration.ZERO);
                relay.sessionClosed(RelaySession.this);
            }
        }

        private void step() throws InterruptedException {
            Set<TopicPartition> assigned;
            Map<TopicPartition, PartitionReader.Fetch> fetch = new HashMap<>();
            Map<TopicPartition, Long> seeks = new HashMap<>();
            Set<TopicPartition> toCheck;
            List<Runnable> expired;
            lock.lock();
            try {
                expired = expirePulls(this);
                expired.addAll(answers(this)); // read-ahead segments answering a pull need no fetch
                assigned = new HashSet<>();
                for (PartitionReader r : readers.values()) {
                    if (!owns(r.partition)) {
                        continue;
                    }
                    assigned.add(r.partition);
                    long s = r.takeSeek();
                    if (s >= 0) {
                        seeks.put(r.partition, s);
                    }
                    PartitionReader.Fetch f = r.fetch();
                    if (f != null) {
                        fetch.put(r.partition, f);
                    }
                }
                boolean periodic =
                        relay.config().brokerId() >= 0
                                && System.nanoTime() - lastLeaderCheck > LEADER_CHECK_NANOS;
                toCheck = new HashSet<>(assigned);
                if (!periodic) {
                    toCheck.retainAll(unchecked);
                } else {
                    lastLeaderCheck = System.nanoTime();
                }
                unchecked.removeAll(toCheck);
                if (fetch.isEmpty() && toCheck.isEmpty() && seeks.isEmpty() && expired.isEmpty()) {
                    changed.await(100, TimeUnit.MILLISECONDS);
                    return;
                }
            } finally {
                lock.unlock();
            }
            expired.forEach(Runnable::run);
            Set<TopicPartition> refused = checkPartitions(toCheck);
            assigned.removeAll(refused);
            fetch.keySet().removeAll(refused);
            seeks.keySet().removeAll(refused);
            if (!consumer.assignment().equals(assigned)) {
                consumer.assign(assigned);
            }
            seeks.forEach(consumer::seek);
            for (PartitionReader.Fetch f : fetch.values()) {
                TopicPartition tp = f.reader().partition;
                if (consumer.position(tp) != f.position()) {
                    // the log is read where the builder stands, never elsewhere (not expected)
                    log.info(
                            "{}: log reader at {}, builder at {}; seeking",
                            tp,
                            consumer.position(tp),
                            f.position());
                    consumer.seek(tp, f.position());
                }
            }
            Set<TopicPartition> idle = new HashSet<>(assigned);
            idle.removeAll(fetch.keySet());
            consumer.pause(idle);
            consumer.resume(fetch.keySet());
            if (fetch.isEmpty()) {
                return;
            }
            ConsumerRecords<ByteBuffer, ByteBuffer> records;
            try {
                records = consumer.poll(Duration.ofMillis(100));
            } catch (TopicAuthorizationException e) {
                // the consumer's principal may describe the topic but not read it
                Set<TopicPartition> denied = new HashSet<>();
                for (TopicPartition tp : fetch.keySet()) {
                    if (e.unauthorizedTopics().contains(tp.topic())) {
                        denied.add(tp);
                    }
                }
                failPartitions(denied, tp -> notAuthorized(tp, e), true);
                return;
            } catch (OffsetOutOfRangeException e) {
                failFetched(
                        fetch,
                        e.offsetOutOfRangePartitions().keySet(),
                        tp ->
                                new RelayException(
                                        RelayException.Reason.OFFSET_OUT_OF_RANGE,
                                        tp
                                                + ": offset "
                                                + e.offsetOutOfRangePartitions().get(tp)
                                                + " is out of range",
                                        -1,
                                        e));
                return;
            }
            Map<TopicPartition, Long> positions = new HashMap<>();
            Map<TopicPartition, OptionalLong> lags = new HashMap<>();
            for (TopicPartition tp : fetch.keySet()) {
                positions.put(tp, consumer.position(tp));
                lags.put(tp, consumer.currentLag(tp));
            }
            relay.pullHook().polled(fetch.keySet());
            long now = System.currentTimeMillis();
            List<Runnable> answers = new ArrayList<>();
            lock.lock();
            try {
                // Only to the reader that issued the fetch: a RELEASE and a new PULL of the
                // partition during the poll made a new reader, which reads from its own position.
                for (PartitionReader.Fetch f : fetch.values()) {
                    TopicPartition tp = f.reader().partition;
                    if (readers.get(tp) == f.reader()) {
                        f.reader()
                                .onFetched(
                                        f,
                                        records.records(tp),
                                        positions.get(tp),
                                        lags.get(tp),
                                        now);
                    }
                }
                answers.addAll(answers(this));
            } finally {
                lock.unlock();
            }
            answers.forEach(Runnable::run);
        }

        /**
         * Fails the pulls of partitions that do not exist or whose topic the stream's Kafka
         * identity may not describe (the relay's consumers never create topics), and of partitions
         * this relay's broker no longer leads (the consumer re-routes); returns the partitions
         * failed so, which the step neither assigns nor fetches. A partition is checked at its
         * first pull, and every {@link #LEADER_CHECK_NANOS} when the relay checks leadership.
         */
        private Set<TopicPartition> checkPartitions(Set<TopicPartition> partitions) {
            int brokerId = relay.config().brokerId();
            Set<TopicPartition> refused = new HashSet<>();
            if (partitions.isEmpty()) {
                return refused;
            }
            Map<String, List<PartitionInfo>> byTopic = new HashMap<>();
            for (TopicPartition tp : partitions) {
                List<PartitionInfo> infos;
                try {
                    infos =
                            byTopic.computeIfAbsent(
                                    tp.topic(),
                                    t -> consumer.partitionsFor(t, Duration.ofSeconds(5)));
                } catch (TopicAuthorizationException e) {
                    refused.add(tp);
                    failPartitions(Set.of(tp), p -> notAuthorized(p, e), true);
                    continue;
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    // metadata slow (a loaded broker): not a read failure - check again next step
                    log.info("{}: leadership not checked ({}); retrying", tp, e.getMessage());
                    lock.lock();
                    try {
                        unchecked.add(tp);
                    } finally {
                        lock.unlock();
                    }
                    continue;
                }
                int leader = -1;
                boolean exists = false;
                for (PartitionInfo pi : infos == null ? List.<PartitionInfo>of() : infos) {
                    if (pi.partition() == tp.partition()) {
                        exists = true;
                        Node n = pi.leader();
                        leader = n == null ? -1 : n.id();
                    }
                }
                if (!exists) {
                    refused.add(tp);
                    failPartitions(
                            Set.of(tp),
                            p ->
                                    new RelayException(
                                            RelayException.Reason.UNKNOWN_TOPIC,
                                            p
                                                    + " does not exist (the relay does not create"
                                                    + " topics)"),
                            true);
                } else if (brokerId >= 0 && leader != brokerId) {
                    refused.add(tp);
                    int l = leader;
                    failPartitions(
                            Set.of(tp),
                            p ->
                                    new RelayException(
                                            RelayException.Reason.NOT_LEADER,
                                            "relay of broker "
                                                    + brokerId
                                                    + " does not lead "
                                                    + p
                                                    + " (leader: "
                                                    + l
                                                    + ")",
                                            l,
                                            null));
                }
            }
            return refused;
        }
    }

    private static RelayException notAuthorized(TopicPartition tp, Exception e) {
        return new RelayException(
                RelayException.Reason.NOT_AUTHORIZED,
                tp + ": the consumer's Kafka principal may not read it (" + e.getMessage() + ")",
                -1,
                null);
    }

    private Lane laneOf(TopicPartition tp) {
        return lanes[Math.floorMod(tp.topic().hashCode() + tp.partition(), lanes.length)];
    }

    public StreamSpec spec() {
        return spec;
    }

    /**
     * The next segment of {@code partition} starting at offset {@code from}. Completes when the
     * segment closes (see {@link PartitionReader#onProgress}), or after {@code maxWait} with an
     * empty segment. A pull at the offset where the previous answer ended continues the read-ahead;
     * any other offset is a seek. A newer pull of the same partition replaces an outstanding one,
     * which fails with {@link RelayException.Reason#SUPERSEDED}; so does, at once, a pull whose
     * {@code seq} is not above the newest request of the partition taken so far (it reached the
     * session after a request the consumer sent later: the consumer has given it up).
     */
    CompletableFuture<Segment> pull(
            TopicPartition partition, long from, Duration maxWait, long seq) {
        CompletableFuture<Segment> f = new CompletableFuture<>();
        if (from < 0) {
            f.completeExceptionally(new IllegalArgumentException("offset must be >= 0: " + from));
            return f;
        }
        PartitionReader.Pull replaced;
        lock.lock();
        try {
            if (closed) {
                f.completeExceptionally(
                        new RelayException(
                                RelayException.Reason.UNAVAILABLE, "relay session closed"));
                return f;
            }
            if (!takeRequest(partition, seq)) {
                f.completeExceptionally(stale(partition, seq));
                return f;
            }
            PartitionReader r =
                    readers.computeIfAbsent(
                            partition,
                            tp -> {
                                unchecked.add(tp);
                                Lane lane = laneOf(tp);
                                return new PartitionReader(
                                        tp,
                                        spec,
                                        lane.plan,
                                        lane.stratifier,
                                        relay.config().maxSegmentBytes(),
                                        this::nextGeneration);
                            });
            replaced =
                    r.onPull(
                            new PartitionReader.Pull(
                                    from, System.nanoTime() + maxWait.toNanos(), f));
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (replaced != null) {
            replaced.future().completeExceptionally(superseded(partition));
        }
        // No consumer.wakeup() here: a wakeup can surface in position() after a poll returned
        // records, and those records would be lost to the segment. A new pull waits at most one
        // poll (100 ms).
        return f;
    }

    /**
     * The consumer no longer reads these partitions (revoked); their outstanding pulls fail as
     * superseded. A partition whose newest request is newer than {@code seq} (the consumer took it
     * back and pulled before this release arrived) is kept.
     */
    void release(Collection<TopicPartition> partitions, long seq) {
        List<Runnable> cancelled = new ArrayList<>();
        lock.lock();
        try {
            for (TopicPartition tp : partitions) {
                if (!takeRequest(tp, seq)) {
                    continue;
                }
                PartitionReader r = readers.remove(tp);
                if (r != null && r.pending() != null) {
                    PartitionReader.Pull p = r.clearPending();
                    cancelled.add(() -> p.future().completeExceptionally(superseded(tp)));
                }
                newestRequest.remove(tp); // releasedUpTo still makes older requests stale
                unchecked.remove(tp);
                releasedUpTo = Math.max(releasedUpTo, seq);
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        cancelled.forEach(Runnable::run);
    }

    /** Whether {@code seq} is the partition's newest request so far (then it is recorded). */
    private boolean takeRequest(TopicPartition tp, long seq) {
        Long newest = newestRequest.get(tp);
        if (seq <= (newest != null ? newest : releasedUpTo)) {
            return false;
        }
        newestRequest.put(tp, seq);
        return true;
    }

    private static RelayException superseded(TopicPartition tp) {
        return new RelayException(
                RelayException.Reason.SUPERSEDED, tp + ": the pull was superseded by a newer one");
    }

    private RelayException stale(TopicPartition tp, long seq) {
        return new RelayException(
                RelayException.Reason.SUPERSEDED,
                tp
                        + ": pull "
                        + seq
                        + " arrived after request "
                        + newestRequest.getOrDefault(tp, releasedUpTo)
                        + " of the same stream");
    }

    /** Builder generations, unique within the session (guarded by {@link #lock}). */
    private long nextGeneration() {
        return ++generations;
    }

    /**
     * As {@link #failPartitions}, for the partitions of a fetch that failed: only the readers that
     * issued it (a reader made anew meanwhile reads from a position of its own).
     */
    private void failFetched(
            Map<TopicPartition, PartitionReader.Fetch> fetch,
            Collection<TopicPartition> partitions,
            java.util.function.Function<TopicPartition, RelayException> error) {
        List<Runnable> failures;
        lock.lock();
        try {
            List<TopicPartition> issued = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                PartitionReader.Fetch f = fetch.get(tp);
                if (f != null && readers.get(tp) == f.reader()) {
                    issued.add(tp);
                }
            }
            failures = removeReaders(issued, error, false);
        } finally {
            lock.unlock();
        }
        failures.forEach(Runnable::run);
    }

    private void failPartitions(
            Collection<TopicPartition> partitions,
            java.util.function.Function<TopicPartition, RelayException> error) {
        failPartitions(partitions, error, false);
    }

    /**
     * Fails the partitions' pulls and drops their readers; {@code forget}: also everything the
     * stream keeps about them (a refused partition - unknown, not readable - is never read, so a
     * stream pulling many such names keeps nothing for them).
     */
    private void failPartitions(
            Collection<TopicPartition> partitions,
            java.util.function.Function<TopicPartition, RelayException> error,
            boolean forget) {
        List<Runnable> failures;
        lock.lock();
        try {
            failures = removeReaders(partitions, error, forget);
        } finally {
            lock.unlock();
        }
        failures.forEach(Runnable::run);
    }

    private List<Runnable> removeReaders(
            Collection<TopicPartition> partitions,
            java.util.function.Function<TopicPartition, RelayException> error,
            boolean forget) {
        List<Runnable> failures = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            if (forget) {
                newestRequest.remove(tp);
                unchecked.remove(tp);
            }
            PartitionReader r = readers.remove(tp);
            if (r != null && r.pending() != null) {
                PartitionReader.Pull p = r.clearPending();
                RelayException e = error.apply(tp);
                failures.add(() -> p.future().completeExceptionally(e));
            }
        }
        return failures;
    }

    /** Completions of pending pulls that a ready segment answers (run them outside the lock). */
    private List<Runnable> answers(Lane lane) {
        List<Runnable> out = new ArrayList<>();
        for (PartitionReader r : readers.values()) {
            if (!lane.owns(r.partition)) {
                continue;
            }
            PartitionReader.Pull p = r.pending();
            Segment s = r.takeAnswer();
            if (s != null) {
                out.add(() -> p.future().complete(s));
            }
        }
        return out;
    }

    private List<Runnable> expirePulls(Lane lane) {
        long now = System.nanoTime();
        List<Runnable> out = new ArrayList<>();
        for (PartitionReader r : readers.values()) {
            // a partition not checked yet is answered after its check (an unknown or unreadable
            // one with its refusal, never with an empty segment)
            if (!lane.owns(r.partition) || unchecked.contains(r.partition)) {
                continue;
            }
            PartitionReader.Pull p = r.takeExpired(now);
            if (p != null) {
                Segment empty = Segment.empty(r.partition, p.from(), r.logEnd());
                out.add(() -> p.future().complete(empty));
            }
        }
        return out;
    }

    private void failAll(RelayException e) {
        List<PartitionReader.Pull> pulls = new ArrayList<>();
        lock.lock();
        try {
            for (PartitionReader r : readers.values()) {
                if (r.pending() != null) {
                    pulls.add(r.clearPending());
                }
            }
            readers.clear();
        } finally {
            lock.unlock();
        }
        pulls.forEach(p -> p.future().completeExceptionally(e));
    }

    public boolean isClosed() {
        return closed;
    }

    /** Partitions the stream keeps any state for (readers, request numbers, pending checks). */
    int trackedPartitions() {
        lock.lock();
        try {
            Set<TopicPartition> all = new HashSet<>(readers.keySet());
            all.addAll(newestRequest.keySet());
            all.addAll(unchecked);
            return all.size();
        } finally {
            lock.unlock();
        }
    }

    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Lane l : lanes) {
            l.consumer.wakeup();
        }
        failAll(new RelayException(RelayException.Reason.UNAVAILABLE, "relay session closed"));
        try {
            for (Lane l : lanes) {
                l.reader.join(TimeUnit.SECONDS.toMillis(10));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
