package io.netapprox.kafka;

import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.RelayException;
import io.netapprox.kafka.relay.Stratifier;
import io.netapprox.kafka.relay.StreamSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exact fallback ({@code approx.relay.fallback}): when a partition's relay fails, either the
 * poll fails naming the coverage position ({@code error}), or the shadow consumer resumes the
 * partition and reads it by plain fetch from that position, every record with weight 1 and its
 * range counted exactly ({@code fetch}), until the partition is reassigned.
 */
final class ExactFallback<K, V> {
    private static final Logger log = LoggerFactory.getLogger(RelayedConsumer.class);

    private final ApproxConsumerConfig.Fallback mode;
    private final KafkaConsumer<byte[], byte[]> shadow;
    private final StreamSpec spec;
    private final Stratifier stratifier;
    private final Map<TopicPartition, PartitionFeed> feeds;
    private final RecordDecoder<K, V> decoder;

    ExactFallback(
            ApproxConsumerConfig.Fallback mode,
            KafkaConsumer<byte[], byte[]> shadow,
            StreamSpec spec,
            Map<TopicPartition, PartitionFeed> feeds,
            RecordDecoder<K, V> decoder) {
        this.mode = mode;
        this.shadow = shadow;
        this.spec = spec;
        this.stratifier = new Stratifier(spec.stratification());
        this.feeds = feeds;
        this.decoder = decoder;
    }

    /**
     * The relay of {@code f} failed for good (the feed is reset): read the partition by plain
     * fetch, or throw.
     */
    void onRelayFailed(PartitionFeed f, RelayException e) {
        if (mode == ApproxConsumerConfig.Fallback.FETCH) {
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

    /** Records of fallback partitions, read exactly by the shadow. */
    void accept(ConsumerRecords<byte[], byte[]> fetched, PollBatch<K, V> batch) {
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
                batch.add(tp, decoder.exactRecord(r, window, stratum));
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
}
