package io.netapprox.kafka;

import io.netapprox.kafka.relay.RelayLink;
import io.netapprox.kafka.relay.RelayStream;
import io.netapprox.kafka.relay.StreamSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
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
 * a restart resumes there. Its parts: {@link SegmentFetcher} (pulls from the relays), {@link
 * CoverageCommits} (coverage marks as committed offsets), {@link ExactFallback} (a failed relay's
 * partition read by plain fetch) and {@link RecordDecoder}; this class keeps membership, positions
 * and the {@link Consumer} interface.
 */
final class RelayedConsumer<K, V> extends ForwardingConsumer<K, V> {
    private static final Logger log = LoggerFactory.getLogger(RelayedConsumer.class);

    private final KafkaConsumer<byte[], byte[]> shadow;
    private final RecordDecoder<K, V> decoder;
    private final ConsumerDataPlaneMetrics dataPlaneMetrics;
    private final Map<TopicPartition, PartitionFeed> feeds = new LinkedHashMap<>();
    private final SegmentFetcher<K, V> fetcher;
    private final ExactFallback<K, V> fallback;
    private final CoverageCommits commits;
    private volatile boolean wakeup;
    private boolean closed;

    RelayedConsumer(
            ApproxConsumerConfig config,
            Deserializer<K> keyDeserializer,
            Deserializer<V> valueDeserializer,
            RelayLink link) {
        this(config, keyDeserializer, valueDeserializer, link, shadowOf(config));
    }

    /**
     * The shadow: the application's properties, byte[] records, no auto-commit (we commit
     * coverage).
     */
    private static KafkaConsumer<byte[], byte[]> shadowOf(ApproxConsumerConfig config) {
        Map<String, Object> shadowProps = withByteDeserializers(config.kafkaProperties());
        shadowProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return new KafkaConsumer<>(shadowProps);
    }

    private RelayedConsumer(
            ApproxConsumerConfig config,
            Deserializer<K> keyDeserializer,
            Deserializer<V> valueDeserializer,
            RelayLink link,
            KafkaConsumer<byte[], byte[]> shadow) {
        super(shadow);
        this.shadow = shadow;
        Map<String, Object> props = config.kafkaProperties();
        ConsumerConfig cc = new ConsumerConfig(withByteDeserializers(props));
        boolean autoCommit =
                cc.getBoolean(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG) && groupId(props);
        long autoCommitIntervalMs = cc.getInt(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG);
        int maxPollRecords = cc.getInt(ConsumerConfig.MAX_POLL_RECORDS_CONFIG);
        String autoOffsetReset = cc.getString(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
        boolean readCommitted =
                "read_committed"
                        .equalsIgnoreCase(cc.getString(ConsumerConfig.ISOLATION_LEVEL_CONFIG));
        StreamSpec spec = config.streamSpec(readCommitted);
        this.decoder =
                new RecordDecoder<>(
                        keyDeserializer != null ? keyDeserializer : configured(props, cc, true),
                        valueDeserializer != null
                                ? valueDeserializer
                                : configured(props, cc, false));
        this.dataPlaneMetrics = new ConsumerDataPlaneMetrics(clientId(), link::dataPlaneMetrics);
        this.fallback = new ExactFallback<>(config.fallback(), shadow, spec, feeds, decoder);
        this.fetcher =
                new SegmentFetcher<>(
                        config,
                        spec,
                        shadow,
                        link,
                        feeds,
                        decoder,
                        fallback,
                        maxPollRecords,
                        autoOffsetReset);
        this.commits = new CoverageCommits(shadow, feeds, autoCommit, autoCommitIntervalMs);
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
            if (commits.autoCommit()) {
                commits.commitCoverage(partitions);
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
            commits.maybeAutoCommit();
            PollBatch<K, V> batch = new PollBatch<>();
            fallback.accept(fetched, batch);
            for (PartitionFeed f : new ArrayList<>(feeds.values())) {
                if (f.userPaused || f.fallback) {
                    continue;
                }
                if (f.position < 0) {
                    f.position = shadow.position(f.partition);
                }
                fetcher.advance(f, batch);
            }
            if (!batch.isEmpty() || System.nanoTime() - deadline >= 0) {
                return batch.build();
            }
            fetcher.waitForData(deadline);
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

    @Override
    public void commitSync() {
        shadow.commitSync(commits.assigned());
    }

    @Override
    public void commitSync(Duration timeout) {
        shadow.commitSync(commits.assigned(), timeout);
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
        shadow.commitAsync(commits.assigned(), null);
    }

    @Override
    public void commitAsync(OffsetCommitCallback callback) {
        shadow.commitAsync(commits.assigned(), callback);
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
            if (commits.autoCommit()) {
                try {
                    commits.commitCoverage(feeds.keySet());
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
            fetcher.close();
            decoder.close();
        }
    }
}
