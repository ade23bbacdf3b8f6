package io.netapprox.kafka;

import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.RelayException;
import io.netapprox.kafka.relay.RelayLink;
import io.netapprox.kafka.relay.RelayStream;
import io.netapprox.kafka.relay.SampledRecord;
import io.netapprox.kafka.relay.Segment;
import io.netapprox.kafka.relay.Stratifier;
import io.netapprox.kafka.relay.StreamSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The approximate consumer ({@code approx.enable=true}). A <b>shadow</b> {@link KafkaConsumer}
 * keeps group membership, rebalances, commits and metadata exactly as Kafka does, with every
 * partition paused so it never fetches; records come from the relay beside each partition's leader
 * as sampled segments. The position of a partition is its <b>coverage mark</b>: every record below
 * it was returned or deliberately dropped by sampling, so committing positions commits coverage and
 * a restart resumes there.
 */
final class RelayedConsumer<K, V> implements Consumer<K, V> {
    private static final Logger log = LoggerFactory.getLogger(RelayedConsumer.class);
    private static final long WAIT_SLICE_MS = 20;
    private static final long NOT_LEADER_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long THROTTLED_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final ApproxConsumerConfig config;
    private final StreamSpec spec;
    private final KafkaConsumer<byte[], byte[]> shadow;
    private final Deserializer<K> keyDeserializer;
    private final Deserializer<V> valueDeserializer;
    private final RelayLink link;
    private final ConsumerDataPlaneMetrics dataPlaneMetrics;
    private final Stratifier stratifier;
    private final int maxPollRecords;
    private final boolean autoCommit;
    private final long autoCommitIntervalMs;
    private final String autoOffsetReset;
    private final Map<TopicPartition, PartitionFeed> feeds = new LinkedHashMap<>();
    private final Map<String, RelayStream> streams = new HashMap<>();
    private long nextAutoCommit;
    private volatile boolean wakeup;
    private boolean closed;

    RelayedConsumer(
            ApproxConsumerConfig config,
            Deserializer<K> keyDeserializer,
            Deserializer<V> valueDeserializer,
            RelayLink link) {
        this.config = config;
        Map<String, Object> props = config.kafkaProperties();
        ConsumerConfig cc = new ConsumerConfig(withByteDeserializers(props));
        this.autoCommit = cc.getBoolean(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG) && groupId(props);
        this.autoCommitIntervalMs = cc.getInt(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG);
        this.maxPollRecords = cc.getInt(ConsumerConfig.MAX_POLL_RECORDS_CONFIG);
        this.autoOffsetReset = cc.getString(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
        boolean readCommitted =
                "read_committed"
                        .equalsIgnoreCase(cc.getString(ConsumerConfig.ISOLATION_LEVEL_CONFIG));
        this.spec = config.streamSpec(readCommitted);
        this.stratifier = new Stratifier(spec.stratification());
        this.keyDeserializer =
                keyDeserializer != null ? keyDeserializer : configured(props, cc, true);
        this.valueDeserializer =
                valueDeserializer != null ? valueDeserializer : configured(props, cc, false);
        Map<String, Object> shadowProps = withByteDeserializers(props);
        shadowProps.put(
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false); // we commit coverage ourselves
        this.shadow = new KafkaConsumer<>(shadowProps);
        this.link = link;
        this.dataPlaneMetrics = new ConsumerDataPlaneMetrics(clientId(), link::dataPlaneMetrics);
        this.nextAutoCommit = System.currentTimeMillis() + autoCommitIntervalMs;
    }

    private static boolean groupId(Map<String, Object> props) {
        Object g = props.get(ConsumerConfig.GROUP_ID_CONFIG);
        return g != null && !String.valueOf(g).isEmpty();
    }

    private static Map<String, Object> withByteDeserializers(Map<String, Object> props) {
        Map<String, Object> p = new HashMap<>(props);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        return p;
    }

    @SuppressWarnings("unchecked")
    private static <T> Deserializer<T> configured(
            Map<String, Object> props, ConsumerConfig cc, boolean isKey) {
        String key =
                isKey
                        ? ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG
                        : ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG;
        if (props.get(key) == null) {
            throw new org.apache.kafka.common.config.ConfigException(
                    key, null, "a deserializer is required (property or factory argument)");
        }
        ConsumerConfig real = new ConsumerConfig(props);
        Deserializer<T> d = real.getConfiguredInstance(key, Deserializer.class);
        d.configure(real.originals(), isKey);
        return d;
    }

    // ---------------------------------------------------------------- membership and assignment

    /** Pauses what the group assigns (the shadow never fetches), then tells the application. */
    private final class ShadowListener implements ConsumerRebalanceListener {
        private final ConsumerRebalanceListener user;

        ShadowListener(ConsumerRebalanceListener user) {
            this.user = user;
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            shadow.pause(partitions);
            for (TopicPartition tp : partitions) {
                feeds.computeIfAbsent(tp, PartitionFeed::new);
            }
            if (user != null) {
                user.onPartitionsAssigned(partitions);
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (autoCommit) {
                commitCoverage(partitions);
            }
            if (user != null) {
                user.onPartitionsRevoked(partitions);
            }
            drop(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            if (user != null) {
                user.onPartitionsLost(partitions);
            }
            drop(partitions);
        }
    }

    private void drop(Collection<TopicPartition> partitions) {
        Map<RelayStream, List<TopicPartition>> byStream = new HashMap<>();
        for (TopicPartition tp : partitions) {
            PartitionFeed f = feeds.remove(tp);
            if (f != null) {
                f.reset();
                if (f.stream != null) {
                    byStream.computeIfAbsent(f.stream, s -> new ArrayList<>()).add(tp);
                }
            }
        }
        byStream.forEach(RelayStream::release);
    }

    @Override
    public Set<TopicPartition> assignment() {
        return shadow.assignment();
    }

    @Override
    public Set<String> subscription() {
        return shadow.subscription();
    }

    @Override
    public void subscribe(Collection<String> topics) {
        subscribe(topics, null);
    }

    @Override
    public void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
        shadow.subscribe(topics, new ShadowListener(listener));
    }

    @Override
    public void subscribe(Pattern pattern, ConsumerRebalanceListener listener) {
        shadow.subscribe(pattern, new ShadowListener(listener));
    }

    @Override
    public void subscribe(Pattern pattern) {
        subscribe(pattern, null);
    }

    @Override
    public void subscribe(SubscriptionPattern pattern, ConsumerRebalanceListener listener) {
        shadow.subscribe(pattern, new ShadowListener(listener));
    }

    @Override
    public void subscribe(SubscriptionPattern pattern) {
        subscribe(pattern, null);
    }

    @Override
    public void assign(Collection<TopicPartition> partitions) {
        Set<TopicPartition> gone = new HashSet<>(feeds.keySet());
        gone.removeAll(partitions);
        drop(gone);
        shadow.assign(partitions);
        shadow.pause(partitions);
        for (TopicPartition tp : partitions) {
            feeds.computeIfAbsent(tp, PartitionFeed::new);
        }
    }

    @Override
    public void unsubscribe() {
        drop(new ArrayList<>(feeds.keySet()));
        shadow.unsubscribe();
    }

    // ---------------------------------------------------------------- poll

    @Override
    public ConsumerRecords<K, V> poll(Duration timeout) {
        ensureOpen();
        if (shadow.subscription().isEmpty() && shadow.assignment().isEmpty()) {
            throw new IllegalStateException(
                    "Consumer is not subscribed to any topics or assigned any partitions");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            checkWakeup();
            ConsumerRecords<byte[], byte[]> fetched =
                    shadow.poll(Duration.ZERO); // membership, fallback
            maybeAutoCommit();
            Batch batch = new Batch();
            acceptFallback(fetched, batch);
            for (PartitionFeed f : new ArrayList<>(feeds.values())) {
                if (f.userPaused || f.fallback) {
                    continue;
                }
                if (f.position < 0) {
                    f.position = shadow.position(f.partition);
                }
                advance(f, batch);
            }
            if (!batch.isEmpty() || System.nanoTime() - deadline >= 0) {
                return batch.build();
            }
            waitForData(deadline);
        }
    }

    /** Hands out what the feed has ready and keeps one pull in flight. */
    private void advance(PartitionFeed f, Batch batch) {
        if (f.current == null && f.inflight != null && f.inflight.isDone()) {
            Segment s = take(f);
            if (s != null) {
                if (s.from() != f.position) {
                    f.reset(); // answers a pull from before a seek
                } else {
                    f.current = s;
                    f.next = 0;
                    if (!s.isEmpty()) {
                        batch.ranges.add(
                                new CoveredRange(f.partition, s.from(), s.to(), s.cells(), false));
                    }
                }
            }
        }
        if (f.fallback) {
            return;
        }
        if (f.current != null) {
            Segment s = f.current;
            while (f.next < s.records().size() && batch.count < maxPollRecords) {
                batch.add(f.partition, record(s, s.records().get(f.next++)));
            }
            if (f.next == s.records().size()) {
                if (s.to() != f.position) {
                    batch.moved(f.partition, s.to());
                }
                f.position = s.to();
                f.logEnd = s.logEnd();
                f.current = null;
            }
            // Mid-range the position stays at the range's start: a commit covers whole ranges only,
            // so a
            // restart re-reads the range (same seed and offsets: the same sample) and its counts
            // stay
            // consistent (at-least-once for the records of a partly returned range).
        }
        if (f.inflight == null && System.nanoTime() - f.retryAtNanos >= 0) {
            startPull(f);
        }
    }

    private void startPull(PartitionFeed f) {
        long from = f.pullFrom();
        try {
            if (f.stream == null || f.stream.isClosed()) {
                f.stream = route(f.partition, f.leaderHint);
            }
            f.inflight = f.stream.pull(f.partition, from, Duration.ofMillis(config.pullWaitMs()));
            f.inflightFrom = from;
        } catch (RelayException e) {
            f.inflight = CompletableFuture.failedFuture(e);
            f.inflightFrom = from;
        }
    }

    /** The completed pull's segment, or null after handling its failure. */
    private Segment take(PartitionFeed f) {
        CompletableFuture<Segment> done = f.inflight;
        f.inflight = null;
        try {
            return done.getNow(null);
        } catch (CancellationException e) {
            return null;
        } catch (java.util.concurrent.CompletionException e) {
            Throwable cause = e.getCause();
            if (!(cause instanceof RelayException re)) {
                throw new RelayException(
                        RelayException.Reason.READ_FAILED,
                        f.partition + ": relay pull failed",
                        -1,
                        cause);
            }
            if (re.reason() == RelayException.Reason.SUPERSEDED) {
                // the relay took a newer request of this stream first; pulls are numbered, so
                // this only answers a pull already given up - pull again rather than fail
                log.debug("{}: {}", f.partition, re.getMessage());
                return null;
            }
            if (re.reason() == RelayException.Reason.THROTTLED) {
                // this consumer's host holds its share of the relay's serving threads: not a
                // failure, pull again after a pause
                log.debug("{}: {}", f.partition, re.getMessage());
                f.retryAtNanos = System.nanoTime() + THROTTLED_BACKOFF_NANOS;
                return null;
            }
            onRelayFailure(f, re);
            return null;
        }
    }

    private void onRelayFailure(PartitionFeed f, RelayException e) {
        switch (e.reason()) {
            case NOT_LEADER -> {
                log.info("{}: leader moved ({}), re-routing", f.partition, e.getMessage());
                f.reset();
                f.stream = null;
                // the shadow never fetches, so its metadata may still name the old leader: go by
                // the
                // relay's word, and pause briefly when it knows no leader either
                f.leaderHint = e.leaderId();
                f.retryAtNanos = System.nanoTime() + NOT_LEADER_BACKOFF_NANOS;
            }
            case OFFSET_OUT_OF_RANGE -> resetOutOfRange(f, e);
            default -> {
                f.reset();
                f.stream = null;
                if (config.fallback() == ApproxConsumerConfig.Fallback.FETCH) {
                    log.warn(
                            "{}: relay failed ({}); reading it by plain fetch",
                            f.partition,
                            e.getMessage());
                    f.fallback = true;
                    shadow.seek(f.partition, f.position);
                    shadow.resume(List.of(f.partition));
                } else {
                    throw new RelayException(
                            e.reason(),
                            f.partition
                                    + ": the relay failed at coverage position "
                                    + f.position
                                    + " ("
                                    + e.getMessage()
                                    + "); nothing past it was returned. Set approx.relay.fallback=fetch to read exactly"
                                    + " instead",
                            e.leaderId(),
                            e);
                }
            }
        }
    }

    private void resetOutOfRange(PartitionFeed f, RelayException e) {
        f.reset();
        switch (autoOffsetReset) {
            case "earliest" ->
                    f.position = shadow.beginningOffsets(List.of(f.partition)).get(f.partition);
            case "latest" -> f.position = shadow.endOffsets(List.of(f.partition)).get(f.partition);
            default -> throw new NoOffsetForPartitionException(f.partition);
        }
        log.info("{}: {}; reset to {}", f.partition, e.getMessage(), f.position);
    }

    /**
     * The stream of the relay beside the partition's leader: the leader a relay named in its last
     * NOT_LEADER answer, else the shadow's metadata.
     */
    private RelayStream route(TopicPartition tp, int leaderHint) {
        Node leader = null;
        for (PartitionInfo pi : shadow.partitionsFor(tp.topic())) {
            if (pi.partition() == tp.partition()) {
                leader = pi.leader();
                for (Node n : pi.replicas()) {
                    if (n.id() == leaderHint) {
                        leader = n;
                    }
                }
            }
        }
        if (leader == null || leader.isEmpty()) {
            throw new RelayException(RelayException.Reason.UNAVAILABLE, tp + " has no leader now");
        }
        String address = config.relayAddress(leader.id(), leader.host());
        RelayStream s = streams.get(address);
        if (s == null || s.isClosed()) {
            s = link.open(address, spec);
            streams.put(address, s);
        }
        return s;
    }

    /** Records of fallback partitions, read exactly by the shadow. */
    private void acceptFallback(ConsumerRecords<byte[], byte[]> fetched, Batch batch) {
        for (TopicPartition tp : fetched.partitions()) {
            PartitionFeed f = feeds.get(tp);
            if (f == null || !f.fallback) {
                continue;
            }
            List<ConsumerRecord<byte[], byte[]>> rs = fetched.records(tp);
            Map<List<Object>, long[]> counts = new LinkedHashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : rs) {
                long window = spec.windowStart(r.timestamp());
                String stratum = stratifier.stratumOf(r);
                counts.computeIfAbsent(List.of(window, stratum), k -> new long[1])[0]++;
                batch.add(tp, exactRecord(r, window, stratum));
            }
            List<Cell> cells = new ArrayList<>();
            counts.forEach(
                    (k, c) ->
                            cells.add(
                                    new Cell(
                                            (Long) k.get(0),
                                            (String) k.get(1),
                                            c[0],
                                            (int) c[0],
                                            (int) c[0])));
            long to = shadow.position(tp);
            batch.ranges.add(new CoveredRange(tp, f.position, to, cells, true));
            f.position = to;
            batch.moved(tp, to);
        }
    }

    private void waitForData(long deadlineNanos) {
        List<CompletableFuture<Segment>> pending = new ArrayList<>();
        for (PartitionFeed f : feeds.values()) {
            if (!f.userPaused && f.inflight != null && f.current == null) {
                pending.add(f.inflight);
            }
        }
        long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        long slice = Math.max(1, Math.min(WAIT_SLICE_MS, left));
        try {
            if (pending.isEmpty()) {
                Thread.sleep(slice);
            } else {
                CompletableFuture.anyOf(pending.toArray(CompletableFuture[]::new))
                        .get(slice, TimeUnit.MILLISECONDS);
            }
        } catch (TimeoutException | ExecutionException | CancellationException e) {
            // handled by the next round
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new org.apache.kafka.common.errors.InterruptException(e);
        }
    }

    private ConsumerRecord<K, V> record(Segment s, SampledRecord r) {
        Cell c = s.cells().get(r.cell());
        RecordHeaders headers = new RecordHeaders(r.headers());
        headers.add(header(ApproxHeaders.WEIGHT, Double.toString(c.weight())));
        headers.add(header(ApproxHeaders.WINDOW, Long.toString(c.windowStart())));
        headers.add(header(ApproxHeaders.STRATUM, c.stratum()));
        return build(
                s.partition(),
                r.offset(),
                r.timestamp(),
                r.timestampType(),
                r.key(),
                r.value(),
                headers);
    }

    private ConsumerRecord<K, V> exactRecord(
            ConsumerRecord<byte[], byte[]> r, long window, String stratum) {
        RecordHeaders headers = new RecordHeaders(r.headers().toArray());
        headers.add(header(ApproxHeaders.WEIGHT, "1.0"));
        headers.add(header(ApproxHeaders.WINDOW, Long.toString(window)));
        headers.add(header(ApproxHeaders.STRATUM, stratum));
        return build(
                new TopicPartition(r.topic(), r.partition()),
                r.offset(),
                r.timestamp(),
                r.timestampType(),
                r.key(),
                r.value(),
                headers);
    }

    private ConsumerRecord<K, V> build(
            TopicPartition tp,
            long offset,
            long timestamp,
            org.apache.kafka.common.record.TimestampType type,
            byte[] key,
            byte[] value,
            RecordHeaders headers) {
        K k = keyDeserializer.deserialize(tp.topic(), headers, key);
        V v = valueDeserializer.deserialize(tp.topic(), headers, value);
        return new ConsumerRecord<>(
                tp.topic(),
                tp.partition(),
                offset,
                timestamp,
                type,
                key == null ? -1 : key.length,
                value == null ? -1 : value.length,
                k,
                v,
                headers,
                Optional.empty());
    }

    private static Header header(String k, String v) {
        return new RecordHeader(k, v.getBytes(StandardCharsets.UTF_8));
    }

    /** One poll's result under construction. */
    private final class Batch {
        final Map<TopicPartition, List<ConsumerRecord<K, V>>> records = new LinkedHashMap<>();
        final Map<TopicPartition, OffsetAndMetadata> next = new LinkedHashMap<>();
        final List<CoveredRange> ranges = new ArrayList<>();
        int count;

        void add(TopicPartition tp, ConsumerRecord<K, V> r) {
            records.computeIfAbsent(tp, x -> new ArrayList<>()).add(r);
            count++;
        }

        void moved(TopicPartition tp, long position) {
            next.put(tp, new OffsetAndMetadata(position));
        }

        boolean isEmpty() {
            return count == 0 && next.isEmpty() && ranges.isEmpty();
        }

        ApproxConsumerRecords<K, V> build() {
            return new ApproxConsumerRecords<>(records, next, ranges);
        }
    }

    // ---------------------------------------------------------------- positions and commits

    private PartitionFeed feed(TopicPartition tp) {
        PartitionFeed f = feeds.get(tp);
        if (f == null) {
            throw new IllegalStateException("No current assignment for partition " + tp);
        }
        return f;
    }

    @Override
    public long position(TopicPartition partition) {
        return position(partition, Duration.ofMillis(Long.MAX_VALUE));
    }

    @Override
    public long position(TopicPartition partition, Duration timeout) {
        PartitionFeed f = feed(partition);
        if (f.position < 0) {
            f.position = shadow.position(partition, timeout);
        }
        return f.position;
    }

    /** Coverage positions of the given (or all assigned) partitions. */
    private Map<TopicPartition, OffsetAndMetadata> coverage(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
        for (TopicPartition tp : partitions) {
            PartitionFeed f = feeds.get(tp);
            if (f != null && f.position >= 0) {
                m.put(tp, new OffsetAndMetadata(f.position));
            }
        }
        return m;
    }

    private void commitCoverage(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> m = coverage(partitions);
        if (!m.isEmpty()) {
            shadow.commitSync(m);
        }
    }

    private void maybeAutoCommit() {
        if (autoCommit && System.currentTimeMillis() >= nextAutoCommit) {
            nextAutoCommit = System.currentTimeMillis() + autoCommitIntervalMs;
            Map<TopicPartition, OffsetAndMetadata> m = coverage(feeds.keySet());
            if (!m.isEmpty()) {
                shadow.commitAsync(m, null);
            }
        }
    }

    @Override
    public void commitSync() {
        shadow.commitSync(coverage(feeds.keySet()));
    }

    @Override
    public void commitSync(Duration timeout) {
        shadow.commitSync(coverage(feeds.keySet()), timeout);
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        shadow.commitSync(offsets);
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout) {
        shadow.commitSync(offsets, timeout);
    }

    @Override
    public void commitAsync() {
        shadow.commitAsync(coverage(feeds.keySet()), null);
    }

    @Override
    public void commitAsync(OffsetCommitCallback callback) {
        shadow.commitAsync(coverage(feeds.keySet()), callback);
    }

    @Override
    public void commitAsync(
            Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
        shadow.commitAsync(offsets, callback);
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("seek offset must not be a negative number");
        }
        PartitionFeed f = feed(partition);
        f.reset();
        f.position = offset;
        if (f.fallback) {
            shadow.seek(partition, offset);
        }
    }

    @Override
    public void seek(TopicPartition partition, OffsetAndMetadata offsetAndMetadata) {
        seek(partition, offsetAndMetadata.offset());
    }

    @Override
    public void seekToBeginning(Collection<TopicPartition> partitions) {
        Collection<TopicPartition> tps = partitions.isEmpty() ? feeds.keySet() : partitions;
        shadow.beginningOffsets(tps).forEach(this::seek);
    }

    @Override
    public void seekToEnd(Collection<TopicPartition> partitions) {
        Collection<TopicPartition> tps = partitions.isEmpty() ? feeds.keySet() : partitions;
        shadow.endOffsets(tps).forEach(this::seek);
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
        return shadow.committed(partitions);
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(
            Set<TopicPartition> partitions, Duration timeout) {
        return shadow.committed(partitions, timeout);
    }

    @Override
    public Set<TopicPartition> paused() {
        Set<TopicPartition> s = new HashSet<>();
        feeds.values()
                .forEach(
                        f -> {
                            if (f.userPaused) {
                                s.add(f.partition);
                            }
                        });
        return s;
    }

    @Override
    public void pause(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            PartitionFeed f = feed(tp);
            f.userPaused = true;
            if (f.fallback) {
                shadow.pause(List.of(tp));
            }
        }
    }

    @Override
    public void resume(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            PartitionFeed f = feed(tp);
            f.userPaused = false;
            if (f.fallback) {
                shadow.resume(List.of(tp));
            }
        }
    }

    @Override
    public OptionalLong currentLag(TopicPartition partition) {
        PartitionFeed f = feed(partition);
        if (f.fallback) {
            return shadow.currentLag(partition);
        }
        return f.logEnd < 0 || f.position < 0
                ? OptionalLong.empty()
                : OptionalLong.of(Math.max(0, f.logEnd - f.position));
    }

    // ---------------------------------------------------------------- plain delegation

    @Override
    public Uuid clientInstanceId(Duration timeout) {
        return shadow.clientInstanceId(timeout);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        Map<MetricName, Metric> all = new LinkedHashMap<>(shadow.metrics());
        all.putAll(dataPlaneMetrics.metrics());
        return Collections.unmodifiableMap(all);
    }

    /** The shadow's client id (Kafka's own, or the one it generated), as its metrics tag it. */
    private String clientId() {
        for (MetricName n : shadow.metrics().keySet()) {
            String id = n.tags().get("client-id");
            if (id != null) {
                return id;
            }
        }
        return "";
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
        shadow.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
        shadow.unregisterMetricFromSubscription(metric);
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        return shadow.partitionsFor(topic);
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic, Duration timeout) {
        return shadow.partitionsFor(topic, timeout);
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics() {
        return shadow.listTopics();
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics(Duration timeout) {
        return shadow.listTopics(timeout);
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
            Map<TopicPartition, Long> timestamps) {
        return shadow.offsetsForTimes(timestamps);
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
            Map<TopicPartition, Long> timestamps, Duration timeout) {
        return shadow.offsetsForTimes(timestamps, timeout);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
        return shadow.beginningOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(
            Collection<TopicPartition> partitions, Duration timeout) {
        return shadow.beginningOffsets(partitions, timeout);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
        return shadow.endOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(
            Collection<TopicPartition> partitions, Duration timeout) {
        return shadow.endOffsets(partitions, timeout);
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
        return shadow.groupMetadata();
    }

    @Override
    public void enforceRebalance() {
        shadow.enforceRebalance();
    }

    @Override
    public void enforceRebalance(String reason) {
        shadow.enforceRebalance(reason);
    }

    @Override
    public void wakeup() {
        wakeup = true;
        shadow.wakeup();
    }

    private void checkWakeup() {
        if (wakeup) {
            wakeup = false;
            throw new WakeupException();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("This consumer has already been closed.");
        }
    }

    // ---------------------------------------------------------------- close

    // Each close delegates to the shadow's close of the same shape: CloseOptions exists only from
    // kafka-clients 4.1 (KIP-1092), and close() / close(Duration) must not touch it on 4.0.
    @Override
    public void close() {
        closeThen(shadow::close);
    }

    @SuppressWarnings("deprecation") // close(Duration) is the only timed close on kafka-clients 4.0
    @Override
    public void close(Duration timeout) {
        closeThen(() -> shadow.close(timeout));
    }

    @Override
    public void close(CloseOptions options) {
        closeThen(() -> shadow.close(options));
    }

    private void closeThen(Runnable closeShadow) {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (autoCommit) {
                try {
                    commitCoverage(feeds.keySet());
                } catch (RuntimeException e) {
                    log.warn("final commit of coverage failed", e);
                }
            }
            // Leaving the group runs the application's revocation callback, which may still ask for
            // positions or commit: the feeds live until the shadow is closed.
            closeShadow.run();
        } finally {
            feeds.values().forEach(PartitionFeed::reset);
            feeds.clear();
            streams.values().forEach(RelayStream::close);
            streams.clear();
            link.close();
            keyDeserializer.close();
            valueDeserializer.close();
        }
    }
}
