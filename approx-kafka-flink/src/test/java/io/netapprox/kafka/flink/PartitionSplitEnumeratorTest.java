package io.netapprox.kafka.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.metrics.groups.SplitEnumeratorMetricGroup;
import org.junit.jupiter.api.Test;

/**
 * The enumerator's bookkeeping without a broker (unit isolation; {@code UnboundedSourceTest} is the
 * integration test): listings are handed to it as the worker thread would, through a recording
 * context.
 */
class PartitionSplitEnumeratorTest {
    private static final String TOPIC = "t";

    @Test
    void laterListingsAddOnlyNewPartitionsFromTheirEarliestOffset() {
        Context ctx = new Context(2);
        started(ctx, StartingOffsets.LATEST, EnumeratorState.initial());
        ctx.list(listing(2));
        assertEquals(
                List.of(new PartitionSplit(TOPIC, 0, 100, PartitionSplit.UNBOUNDED)),
                ctx.assigned.get(0),
                "the first listing starts at the source's starting offsets (LATEST)");
        ctx.list(listing(3)); // the same two and a new one
        assertEquals(
                List.of(new PartitionSplit(TOPIC, 2, 10, PartitionSplit.UNBOUNDED)),
                ctx.assigned.get(0).subList(1, 2),
                "a partition found later starts at its earliest offset");
        assertEquals(1, ctx.assigned.get(1).size(), "nothing assigned twice");
        assertTrue(ctx.settled.get(1) >= 2, "every round tells every reader");
    }

    @Test
    void aRestoredEnumeratorDoesNotAssignKnownPartitionsAgain() {
        Context ctx = new Context(2);
        PartitionSplitEnumerator e =
                started(
                        ctx,
                        StartingOffsets.EARLIEST,
                        new EnumeratorState(true, List.of(), Set.of(0, 1)));
        ctx.list(listing(3));
        assertEquals(
                List.of(new PartitionSplit(TOPIC, 2, 10, PartitionSplit.UNBOUNDED)),
                ctx.assigned.get(0));
        assertEquals(List.of(), ctx.assigned.getOrDefault(1, List.of()));
        assertEquals(Set.of(0, 1, 2), e.snapshotState(1).known());
    }

    @Test
    void aFirstFormatRestoreTreatsTheNextListingAsKnown() {
        Context ctx = new Context(1);
        started(ctx, StartingOffsets.EARLIEST, new EnumeratorState(true, List.of(), null));
        ctx.list(listing(2));
        assertEquals(List.of(), ctx.assigned.getOrDefault(0, List.of()));
        ctx.list(listing(3));
        assertEquals(
                List.of(new PartitionSplit(TOPIC, 2, 10, PartitionSplit.UNBOUNDED)),
                ctx.assigned.get(0));
    }

    /** An enumerator, started, with every one of the context's readers registered. */
    private static PartitionSplitEnumerator started(
            Context ctx, StartingOffsets starting, EnumeratorState state) {
        Properties props = new Properties();
        props.put("bootstrap.servers", "127.0.0.1:9");
        PartitionSplitEnumerator e =
                new PartitionSplitEnumerator(
                        ctx, props, TOPIC, starting, Boundedness.CONTINUOUS_UNBOUNDED, 1000, state);
        e.start();
        for (int reader = 0; reader < ctx.currentParallelism(); reader++) {
            ctx.addReader(e, reader);
        }
        return e;
    }

    /** Partitions 0..n-1, each with offsets 10 (first) to 100 (end). */
    private static PartitionListing listing(int n) {
        List<Integer> partitions = new ArrayList<>();
        Map<Integer, Long> begin = new HashMap<>();
        Map<Integer, Long> end = new HashMap<>();
        for (int p = 0; p < n; p++) {
            partitions.add(p);
            begin.put(p, 10L);
            end.put(p, 100L);
        }
        return new PartitionListing(partitions, begin, end, Map.of());
    }

    /** Records assignments and events; runs the periodic listing's handler when told to. */
    private static final class Context implements SplitEnumeratorContext<PartitionSplit> {
        final int parallelism;
        final Map<Integer, ReaderInfo> readers = new HashMap<>();
        final Map<Integer, List<PartitionSplit>> assigned = new HashMap<>();
        final Map<Integer, Integer> settled = new HashMap<>();
        BiConsumer<Object, Throwable> handler;

        Context(int parallelism) {
            this.parallelism = parallelism;
        }

        void addReader(PartitionSplitEnumerator e, int reader) {
            readers.put(reader, new ReaderInfo(reader, "localhost"));
            e.addReader(reader);
        }

        void list(PartitionListing listing) {
            handler.accept(listing, null);
        }

        @Override
        public SplitEnumeratorMetricGroup metricGroup() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void sendEventToSourceReader(int subtaskId, SourceEvent event) {
            if (event instanceof AssignmentSettled) {
                settled.merge(subtaskId, 1, Integer::sum);
            }
        }

        @Override
        public int currentParallelism() {
            return parallelism;
        }

        @Override
        public Map<Integer, ReaderInfo> registeredReaders() {
            return readers;
        }

        @Override
        public void assignSplits(SplitsAssignment<PartitionSplit> a) {
            a.assignment()
                    .forEach(
                            (r, s) ->
                                    assigned.computeIfAbsent(r, k -> new ArrayList<>()).addAll(s));
        }

        @Override
        public void signalNoMoreSplits(int subtask) {
            throw new AssertionError("an unbounded read never ends its readers");
        }

        @SuppressWarnings("unchecked")
        @Override
        public <T> void callAsync(Callable<T> callable, BiConsumer<T, Throwable> h) {
            handler = (BiConsumer<Object, Throwable>) h;
        }

        @SuppressWarnings("unchecked")
        @Override
        public <T> void callAsync(
                Callable<T> callable, BiConsumer<T, Throwable> h, long initialDelay, long period) {
            handler = (BiConsumer<Object, Throwable>) h;
        }

        @Override
        public void runInCoordinatorThread(Runnable runnable) {
            runnable.run();
        }
    }
}
