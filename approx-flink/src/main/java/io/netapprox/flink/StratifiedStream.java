package io.netapprox.flink;

import java.util.Objects;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.MergingWindowAssigner;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/** A stream whose records are stratified into groups; next: {@link #window}. */
public final class StratifiedStream<T, K> {
    private final DataStream<T> stream;
    private final ApproxConfig config;
    private final KeySelector<T, K> groupSelector;

    StratifiedStream(DataStream<T> stream, ApproxConfig config, KeySelector<T, K> groupSelector) {
        this.stream = stream;
        this.config = config;
        this.groupSelector = groupSelector;
    }

    /**
     * Event-time windows, e.g. {@code TumblingEventTimeWindows.of(Duration.ofMinutes(1))} or {@code
     * SlidingEventTimeWindows}. Senders assign records to windows themselves (a window is part of
     * the stratum), so merging (session) windows and processing-time windows are refused, with the
     * flag on or off, so that the flag never changes which programs run.
     */
    public ApproxWindowedStream<T, K> window(WindowAssigner<? super T, TimeWindow> assigner) {
        Objects.requireNonNull(assigner, "assigner");
        if (assigner instanceof MergingWindowAssigner) {
            throw new IllegalArgumentException(
                    "NetApprox: merging window assigners ("
                            + assigner
                            + ") are not supported: a sender cannot know a session window's extent");
        }
        if (!assigner.isEventTime()) {
            throw new IllegalArgumentException(
                    "NetApprox: only event-time window assigners are supported (got "
                            + assigner
                            + ")");
        }
        return new ApproxWindowedStream<>(stream, config, groupSelector, assigner);
    }
}
