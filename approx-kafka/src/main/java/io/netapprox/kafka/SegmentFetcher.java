package io.netapprox.kafka;

import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.relay.RelayException;
import io.netapprox.kafka.relay.RelayLink;
import io.netapprox.kafka.relay.RelayStream;
import io.netapprox.kafka.relay.Segment;
import io.netapprox.kafka.relay.StreamSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetching from the relays: each assigned partition's feed keeps one pull in flight on the stream
 * of the relay beside its leader (one stream per relay, opened on first use), hands out the
 * completed segment's records (at most {@code max.poll.records} per poll) and moves the coverage
 * position at each segment's end; a leader move re-routes, an out-of-range offset resets by {@code
 * auto.offset.reset}, any other relay failure goes to the {@link ExactFallback}.
 */
final class SegmentFetcher<K, V> {
    private static final Logger log = LoggerFactory.getLogger(RelayedConsumer.class);
    private static final long WAIT_SLICE_MS = 20;
    private static final long NOT_LEADER_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long THROTTLED_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final ApproxConsumerConfig config;
    private final StreamSpec spec;
    private final KafkaConsumer<byte[], byte[]> shadow;
    private final RelayLink link;
    private final Map<TopicPartition, PartitionFeed> feeds;
    private final RecordDecoder<K, V> decoder;
    private final ExactFallback<K, V> fallback;
    private final int maxPollRecords;
    private final String autoOffsetReset;
    private final Map<String, RelayStream> streams = new HashMap<>();

    SegmentFetcher(
            ApproxConsumerConfig config,
            StreamSpec spec,
            KafkaConsumer<byte[], byte[]> shadow,
            RelayLink link,
            Map<TopicPartition, PartitionFeed> feeds,
            RecordDecoder<K, V> decoder,
            ExactFallback<K, V> fallback,
            int maxPollRecords,
            String autoOffsetReset) {
        this.config = config;
        this.spec = spec;
        this.shadow = shadow;
        this.link = link;
        this.feeds = feeds;
        this.decoder = decoder;
        this.fallback = fallback;
        this.maxPollRecords = maxPollRecords;
        this.autoOffsetReset = autoOffsetReset;
    }

    /** Hands out what the feed has ready and keeps one pull in flight. */
    void advance(PartitionFeed f, PollBatch<K, V> batch) {
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
                batch.add(f.partition, decoder.record(s, s.records().get(f.next++)));
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
                fallback.onRelayFailed(f, e);
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

    /** Waits until a pull completes, at most a slice of the time left. */
    void waitForData(long deadlineNanos) {
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

    /** Closes every relay stream and the link. */
    void close() {
        streams.values().forEach(RelayStream::close);
        streams.clear();
        link.close();
    }
}
