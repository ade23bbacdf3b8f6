package io.netapprox.kafka;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.GroupEstimator;
import io.netapprox.core.sampling.ShareSample;
import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.relay.Cell;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;

/**
 * Turns what an approximate consumer polls into per-window, per-stratum estimates with confidence
 * intervals (approx-core's {@link GroupEstimator}), so applications do not re-derive weights. Feed
 * every poll result to {@link #add}; each (partition, covered range, window, stratum) cell is a
 * share of its own (a simple random sample of its exact count, one record per message: a {@link
 * ShareSample}), and a window's stratum combines its cells. Not thread-safe.
 *
 * <pre>{@code
 * ApproxEstimates<String, Trip> est = new ApproxEstimates<>(r -> r.value().fare(), 0.95);
 * while (running) { est.add(consumer.poll(Duration.ofMillis(500))); }
 * ApproxResult fares = est.sum(windowStart, "zone-17");   // estimate, low, high
 * }</pre>
 */
public final class ApproxEstimates<K, V> {
    /** A window and a stratum. */
    public record Key(long windowStart, String stratum) {}

    private final ToDoubleFunction<ConsumerRecord<K, V>> value;
    private final double confidence;
    private final Map<TopicPartition, TreeMap<Long, CoveredRange>> ranges = new HashMap<>();

    /** (window, stratum) -> cells, each with its exact count and the accumulated sample. */
    private final Map<Key, Map<CellId, ShareSample>> cells = new HashMap<>();

    private record CellId(TopicPartition partition, long rangeFrom) {}

    /** One value column, its records' totals kept (for sums and means). */
    private static final ShareSample.Columns VALUE =
            new ShareSample.Columns(new boolean[] {true}, new boolean[] {false}, false);

    private static ShareSample cell(long count) {
        // every record a message of its own; whatever arrives of the cell is used
        int target = (int) Math.min(count, Integer.MAX_VALUE);
        return new ShareSample(count, count, 1.0, target, null, null, VALUE, 0);
    }

    public ApproxEstimates(ToDoubleFunction<ConsumerRecord<K, V>> value, double confidence) {
        if (!(confidence > 0 && confidence < 1)) {
            throw new IllegalArgumentException("confidence must be in (0, 1): " + confidence);
        }
        this.value = value;
        this.confidence = confidence;
    }

    /** Adds one poll's records and covered ranges. */
    public void add(ConsumerRecords<K, V> polled) {
        for (CoveredRange r : ApproxConsumerRecords.rangesOf(polled)) {
            ranges.computeIfAbsent(r.partition(), p -> new TreeMap<>()).put(r.from(), r);
            for (Cell c : r.cells()) {
                cells.computeIfAbsent(new Key(c.windowStart(), c.stratum()), k -> new HashMap<>())
                        .put(new CellId(r.partition(), r.from()), cell(c.count()));
            }
        }
        for (ConsumerRecord<K, V> rec : polled) {
            TopicPartition tp = new TopicPartition(rec.topic(), rec.partition());
            TreeMap<Long, CoveredRange> byFrom = ranges.get(tp);
            Map.Entry<Long, CoveredRange> e =
                    byFrom == null ? null : byFrom.floorEntry(rec.offset());
            if (e == null || rec.offset() >= e.getValue().to()) {
                throw new IllegalStateException(
                        tp
                                + "@"
                                + rec.offset()
                                + " is in no covered range: feed every poll result to add()");
            }
            Key key = new Key(ApproxHeaders.window(rec), ApproxHeaders.stratum(rec));
            ShareSample cell = cells.get(key).get(new CellId(tp, e.getKey()));
            double x = value.applyAsDouble(rec);
            if (!Double.isFinite(x)) {
                throw new IllegalArgumentException(
                        tp + "@" + rec.offset() + ": the value must be finite, got " + x);
            }
            cell.startMessage();
            cell.addRecord(new double[] {x});
            cell.finishMessage();
        }
    }

    /** Windows and strata seen so far. */
    public List<Key> keys() {
        return new ArrayList<>(cells.keySet());
    }

    /** Exact number of records of the stratum in the window (over the ranges seen). */
    public long count(long windowStart, String stratum) {
        long n = 0;
        for (ShareSample c : cellsOf(windowStart, stratum)) {
            n += c.records();
        }
        return n;
    }

    /** Records of the stratum in the window that arrived (the sample size). */
    public long sampled(long windowStart, String stratum) {
        long n = 0;
        for (ShareSample c : cellsOf(windowStart, stratum)) {
            n += c.deliveredRecords();
        }
        return n;
    }

    /** Estimated total of the value over the stratum's records in the window, with its interval. */
    public ApproxResult sum(long windowStart, String stratum) {
        return estimator(windowStart, stratum).sum(0);
    }

    /** Estimated mean of the value per record, with its interval. */
    public ApproxResult mean(long windowStart, String stratum) {
        return estimator(windowStart, stratum).mean(0);
    }

    private List<ShareSample> cellsOf(long windowStart, String stratum) {
        Map<CellId, ShareSample> m = cells.get(new Key(windowStart, stratum));
        return m == null ? List.of() : new ArrayList<>(m.values());
    }

    private GroupEstimator estimator(long windowStart, String stratum) {
        List<ShareSample> shares = new ArrayList<>();
        for (ShareSample c : cellsOf(windowStart, stratum)) {
            if (c.records() > 0 && c.deliveredRecords() == 0) {
                throw new IllegalStateException(
                        "window "
                                + windowStart
                                + ", stratum "
                                + stratum
                                + ": a cell of "
                                + c.records()
                                + " records has no sampled record yet (its records are still to be polled)");
            }
            if (c.records() > 0) {
                shares.add(c);
            }
        }
        if (shares.isEmpty()) {
            throw new IllegalArgumentException(
                    "no records of stratum " + stratum + " in window " + windowStart);
        }
        return new GroupEstimator(shares, confidence, false);
    }
}
