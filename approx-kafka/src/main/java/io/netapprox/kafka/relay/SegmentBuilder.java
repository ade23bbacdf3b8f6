package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Builds one {@link Segment} of a partition: records are offered in offset order, each goes to the
 * reservoir of its (window, stratum) cell, and {@link #close} draws each cell's candidates.
 *
 * <p>A segment holds records of at most one "current" window plus late records of earlier windows:
 * a record of a later window than any seen is a boundary ({@link #tryAdd} refuses it) and starts
 * the next segment; so is a record whose value its cell's reservoir could not plan for. Memory is
 * bounded by the reservoirs (at most {@link SampleSizer#capacity} records per cell) and by {@code
 * maxBytes}, past which the owner closes the segment early.
 */
final class SegmentBuilder {
    private final TopicPartition partition;
    private final long from;
    private final StreamSpec spec;
    private final SampleSizer plan;
    private final Stratifier stratifier;
    private final Map<CellKey, CellReservoir> cells = new LinkedHashMap<>();
    private long position;
    private long maxWindow = Long.MIN_VALUE;
    private long bytes;
    private long records;
    private long headerBytes;

    private record CellKey(long windowStart, String stratum) {}

    SegmentBuilder(
            TopicPartition partition,
            long from,
            StreamSpec spec,
            SampleSizer plan,
            Stratifier stratifier) {
        this.partition = partition;
        this.from = from;
        this.position = from;
        this.spec = spec;
        this.plan = plan;
        this.stratifier = stratifier;
    }

    long from() {
        return from;
    }

    /** Every offset below this is in the builder (offered, or skipped by the log reader). */
    long position() {
        return position;
    }

    long bytes() {
        return bytes;
    }

    /** Bytes of this segment's header (its cells) on the wire. */
    long headerBytes() {
        return headerBytes;
    }

    long records() {
        return records;
    }

    /** Start of the latest window seen, or {@code Long.MIN_VALUE} if none. */
    long maxWindow() {
        return maxWindow;
    }

    /**
     * Adds the record unless it must open the next segment: a record of a window later than every
     * window of this segment, or one whose value its cell's reservoir could not plan for ({@link
     * CellReservoir#admits}). Returns whether it was added.
     */
    boolean tryAdd(ConsumerRecord<ByteBuffer, ByteBuffer> r) {
        if (r.offset() < position) {
            throw new IllegalStateException(
                    partition
                            + ": record at offset "
                            + r.offset()
                            + " below the position "
                            + position);
        }
        long window = spec.windowStart(r.timestamp());
        if (records > 0 && window > maxWindow) {
            return false;
        }
        double value = spec.value().of(r);
        String stratum = stratifier.stratumOf(r);
        CellKey key = new CellKey(window, stratum);
        CellReservoir cell = cells.get(key);
        if (cell == null) {
            headerBytes += RelayProtocol.headerBytes(stratum);
            cell =
                    new CellReservoir(
                            window,
                            stratum,
                            plan,
                            spec.value().measures(),
                            random(window, stratum));
            cells.put(key, cell);
        } else if (!cell.admits(value)) {
            return false;
        }
        // key and value are views of the fetched batch: copied only for a record the cell keeps
        bytes +=
                cell.offer(
                        value,
                        () ->
                                new SampledRecord(
                                        r.offset(),
                                        r.timestamp(),
                                        r.timestampType(),
                                        copy(r.key()),
                                        copy(r.value()),
                                        r.headers().toArray(),
                                        -1));
        records++;
        maxWindow = Math.max(maxWindow, window);
        position = r.offset() + 1;
        return true;
    }

    /** Adds a record that must fit (the first of a segment always does). */
    void add(ConsumerRecord<ByteBuffer, ByteBuffer> r) {
        if (!tryAdd(r)) {
            throw new IllegalStateException(
                    partition + ": record at offset " + r.offset() + " does not fit the segment");
        }
    }

    static byte[] copy(ByteBuffer view) {
        if (view == null) {
            return null;
        }
        byte[] b = new byte[view.remaining()];
        view.duplicate().get(b);
        return b;
    }

    /** The log reader moved past offsets that hold no record for us (markers, aborted records). */
    void advanceTo(long offset) {
        position = Math.max(position, offset);
    }

    /**
     * Draws each cell's candidates (its target times the headroom, at most what the reservoir
     * holds) and returns the segment {@code [from, position)}.
     */
    Segment close(long logEnd) {
        List<Cell> out = new ArrayList<>(cells.size());
        List<SampledRecord> sampled = new ArrayList<>();
        int index = 0;
        for (CellReservoir c : cells.values()) {
            int n = plan.sampleSize(c.stratum, c.count(), c.values());
            int held = Math.min(c.size(), plan.held(n, c.count()));
            out.add(new Cell(c.windowStart, c.stratum, c.count(), n, held));
            for (SampledRecord r : c.sample(held)) {
                sampled.add(r.withCell(index));
            }
            index++;
        }
        sampled.sort(Comparator.comparingLong(SampledRecord::offset));
        return new Segment(partition, from, position, logEnd, out, sampled);
    }

    /** The same seed, partition, start offset and cell always sample the same records. */
    private SplittableRandom random(long window, String stratum) {
        long h = spec.seed();
        h = h * 0x9E3779B97F4A7C15L + Objects.hash(partition.topic(), partition.partition());
        h = h * 0x9E3779B97F4A7C15L + from;
        h = h * 0x9E3779B97F4A7C15L + window;
        h = h * 0x9E3779B97F4A7C15L + stratum.hashCode();
        return new SplittableRandom(h);
    }
}
