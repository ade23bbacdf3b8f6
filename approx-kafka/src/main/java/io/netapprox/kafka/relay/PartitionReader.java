package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * One partition of a relay session: the segment being built, at most a few closed segments waiting
 * to be pulled, and the one outstanding pull. Reads ahead by one segment: once a closed segment
 * waits, the partition is not fetched until it is pulled. Not thread-safe; {@link RelaySession}
 * guards it.
 */
final class PartitionReader {
    record Pull(long from, long deadlineNanos, CompletableFuture<Segment> future) {}

    /**
     * One fetch the log reader issues for this reader: records from {@code position} on, for the
     * builder of {@code generation}. A fetch applies only to the reader and generation that issued
     * it, at that position: a reader released and made anew while the log reader polled must not
     * receive the old reader's records or progress (issue 29: the new reader then covered offsets
     * whose records it never counted).
     */
    record Fetch(PartitionReader reader, long generation, long position) {}

    final TopicPartition partition;
    private final StreamSpec spec;
    private final SampleSizer plan;
    private final Stratifier stratifier;
    private final long maxSegmentBytes;
    private final LongSupplier generations;
    private final ArrayDeque<Segment> ready = new ArrayDeque<>();
    private SegmentBuilder building;
    private Pull pending;
    private long seekTo = -1;
    private long generation;
    private long logEnd = -1;

    PartitionReader(
            TopicPartition partition,
            StreamSpec spec,
            SampleSizer plan,
            Stratifier stratifier,
            long maxSegmentBytes,
            LongSupplier generations) {
        this.partition = partition;
        this.spec = spec;
        this.plan = plan;
        this.stratifier = stratifier;
        this.maxSegmentBytes = maxSegmentBytes;
        this.generations = generations;
    }

    /**
     * Registers a pull; returns the pull it replaces (to fail), if any. A pull that does not
     * continue the read-ahead starts a new builder with a new generation, drawn from the session's
     * counter so that no two builders of a session ever share one.
     */
    Pull onPull(Pull pull) {
        Pull old = pending;
        pending = pull;
        boolean continues =
                ready.isEmpty()
                        ? building != null && building.from() == pull.from()
                        : ready.peek().from() == pull.from();
        if (!continues) {
            ready.clear();
            building = new SegmentBuilder(partition, pull.from(), spec, plan, stratifier);
            seekTo = pull.from();
            generation = generations.getAsLong();
        }
        return old;
    }

    Pull pending() {
        return pending;
    }

    /** Offset to seek the log reader to before the next fetch, or -1; clears it. */
    long takeSeek() {
        long s = seekTo;
        seekTo = -1;
        return s;
    }

    /** The fetch the log reader should issue for this partition now, or null if none. */
    Fetch fetch() {
        return building != null && ready.isEmpty()
                ? new Fetch(this, generation, building.position())
                : null;
    }

    /** Whether {@code f} was issued by this reader's current builder, which has not moved since. */
    private boolean issued(Fetch f) {
        return f.reader() == this
                && f.generation() == generation
                && building != null
                && building.position() == f.position();
    }

    boolean isIdle() {
        return building == null;
    }

    /**
     * The outcome of fetch {@code f}: its records (in offset order from the fetch's position; may
     * be empty), then the log reader's position after them (past markers and aborted records), the
     * lag behind the readable end, and the wall clock. Ignored unless this reader's current builder
     * issued {@code f} and has not moved since. Closes the segment when it reached the end of the
     * readable log and either holds no record (coverage only) or its latest window ended {@code
     * graceMs} ago.
     */
    void onFetched(
            Fetch f,
            List<ConsumerRecord<ByteBuffer, ByteBuffer>> records,
            long position,
            OptionalLong lag,
            long nowMs) {
        if (!issued(f)) {
            return; // fetched for another reader, or for a position a newer pull replaced
        }
        for (ConsumerRecord<ByteBuffer, ByteBuffer> r : records) {
            if (r.offset() < building.position()) {
                continue;
            }
            if (building.bytes() >= maxSegmentBytes
                    || building.headerBytes() >= RelayProtocol.MAX_HEADER_BYTES) {
                closeBuilding();
            }
            if (!building.tryAdd(r)) {
                closeBuilding();
                building.add(r);
            }
        }
        building.advanceTo(position);
        if (lag.isPresent()) {
            logEnd = position + lag.getAsLong();
        }
        if (building.bytes() >= maxSegmentBytes) {
            closeBuilding();
            return;
        }
        boolean caughtUp = lag.isPresent() && lag.getAsLong() == 0;
        if (!caughtUp || building.position() == building.from()) {
            return;
        }
        long windowEnd = building.maxWindow() + spec.windowMs();
        if (building.records() == 0 || nowMs >= windowEnd + spec.graceMs()) {
            closeBuilding();
        }
    }

    private void closeBuilding() {
        Segment s = building.close(logEnd);
        ready.add(s);
        building = new SegmentBuilder(partition, s.to(), spec, plan, stratifier);
    }

    /** The segment that answers the pending pull, if ready; clears the pull. */
    Segment takeAnswer() {
        if (pending == null || ready.isEmpty() || ready.peek().from() != pending.from()) {
            return null;
        }
        pending = null;
        return ready.poll();
    }

    /** The pending pull if its deadline passed (answered with an empty segment); clears it. */
    Pull takeExpired(long nowNanos) {
        if (pending == null || nowNanos - pending.deadlineNanos() < 0) {
            return null;
        }
        Pull p = pending;
        pending = null;
        return p;
    }

    long logEnd() {
        return logEnd;
    }

    Pull clearPending() {
        Pull p = pending;
        pending = null;
        return p;
    }
}
