package io.netapprox.flink;

import java.io.Serializable;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A bounded test source whose every subtask plays its own script: emit a record, pause (processing
 * time, without blocking the task thread, so watermarks and idleness timers run meanwhile), wait
 * for a gate another subtask opens, open a gate. Gates are in-JVM (the MiniCluster runs in the test
 * JVM), named per run. No splits, no state (not for checkpointed jobs).
 */
final class ScriptedSource<T> implements Source<T, ScriptedSource.NoSplit, Void> {
    private static final long serialVersionUID = 1L;

    /** One step of a subtask's script. */
    sealed interface Step<T> extends Serializable {}

    record Emit<T>(T record) implements Step<T> {}

    record Pause<T>(long millis) implements Step<T> {}

    record Await<T>(String gate) implements Step<T> {}

    record Open<T>(String gate) implements Step<T> {}

    /** The script of each subtask. */
    interface Script<T> extends Serializable {
        List<Step<T>> steps(int subtask);
    }

    private static final ConcurrentHashMap<String, CompletableFuture<Void>> GATES =
            new ConcurrentHashMap<>();

    static CompletableFuture<Void> gate(String name) {
        return GATES.computeIfAbsent(name, n -> new CompletableFuture<>());
    }

    private final Script<T> script;

    ScriptedSource(Script<T> script) {
        this.script = script;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<T, NoSplit> createReader(SourceReaderContext context) {
        return new Reader<>(script.steps(context.getIndexOfSubtask()));
    }

    @Override
    public SplitEnumerator<NoSplit, Void> createEnumerator(SplitEnumeratorContext<NoSplit> ctx) {
        return new NoSplits();
    }

    @Override
    public SplitEnumerator<NoSplit, Void> restoreEnumerator(
            SplitEnumeratorContext<NoSplit> ctx, Void checkpoint) {
        return new NoSplits();
    }

    @Override
    public SimpleVersionedSerializer<NoSplit> getSplitSerializer() {
        return new NoSplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<Void> getEnumeratorCheckpointSerializer() {
        return new VoidSerializer();
    }

    /** Never assigned: each reader plays its subtask's script. */
    static final class NoSplit implements SourceSplit {
        @Override
        public String splitId() {
            return "none";
        }
    }

    private static final class Reader<T> implements SourceReader<T, NoSplit> {
        private final List<Step<T>> steps;
        private int next;
        private CompletableFuture<Void> waiting = CompletableFuture.completedFuture(null);

        Reader(List<Step<T>> steps) {
            this.steps = steps;
        }

        @Override
        public void start() {}

        @Override
        public InputStatus pollNext(ReaderOutput<T> output) {
            while (waiting.isDone()) {
                if (next == steps.size()) {
                    return InputStatus.END_OF_INPUT;
                }
                Step<T> s = steps.get(next++);
                if (s instanceof Emit<T> e) {
                    output.collect(e.record());
                    return InputStatus.MORE_AVAILABLE;
                } else if (s instanceof Pause<T> p) {
                    CompletableFuture<Void> f = new CompletableFuture<>();
                    CompletableFuture.delayedExecutor(p.millis(), TimeUnit.MILLISECONDS)
                            .execute(() -> f.complete(null));
                    waiting = f;
                } else if (s instanceof Await<T> a) {
                    waiting = gate(a.gate());
                } else if (s instanceof Open<T> o) {
                    gate(o.gate()).complete(null);
                }
            }
            return InputStatus.NOTHING_AVAILABLE;
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            return waiting;
        }

        @Override
        public List<NoSplit> snapshotState(long checkpointId) {
            return List.of();
        }

        @Override
        public void addSplits(List<NoSplit> splits) {}

        @Override
        public void notifyNoMoreSplits() {}

        @Override
        public void close() {}
    }

    private static final class NoSplits implements SplitEnumerator<NoSplit, Void> {
        @Override
        public void start() {}

        @Override
        public void handleSplitRequest(int subtask, String host) {}

        @Override
        public void addSplitsBack(List<NoSplit> splits, int subtask) {}

        @Override
        public void addReader(int subtask) {}

        @Override
        public Void snapshotState(long checkpointId) {
            return null;
        }

        @Override
        public void close() {}
    }

    private static final class NoSplitSerializer implements SimpleVersionedSerializer<NoSplit> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(NoSplit split) {
            return new byte[0];
        }

        @Override
        public NoSplit deserialize(int version, byte[] serialized) {
            return new NoSplit();
        }
    }

    private static final class VoidSerializer implements SimpleVersionedSerializer<Void> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Void v) {
            return new byte[0];
        }

        @Override
        public Void deserialize(int version, byte[] serialized) {
            return null;
        }
    }
}
