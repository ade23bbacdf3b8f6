package io.netapprox.flink;

import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Entry point of NetApprox's approximate windowed aggregation for Flink:
 *
 * <pre>{@code
 * DataStream<WindowEstimate> r = Approx.of(trips)
 *     .stratifyBy(Trip::zone)                                       // the groups (strata)
 *     .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))   // event-time windows
 *     .errorBound(0.05).errorBound(132, 0.01).confidence(0.95)     // e_max per group
 *     .aggregate(Aggregate.avg("fare", Trip::fare), Aggregate.count());
 * }</pre>
 *
 * <p>With {@code approx.enabled=true} in the job's configuration the records travel over ATP and
 * every answer carries its confidence interval; otherwise the same program runs the exact {@code
 * keyBy().window().aggregate()} topology and every answer has {@code approximate=false}. The {@code
 * approx.*} options are read and validated here, when the query is built.
 */
public final class Approx<T> {
    /** One generated secret per environment, so all queries of a job share one engine per TM. */
    private static final Map<StreamExecutionEnvironment, String> SECRETS = new WeakHashMap<>();

    private final DataStream<T> stream;
    private final ApproxConfig config;

    private Approx(DataStream<T> stream, ApproxConfig config) {
        this.stream = stream;
        this.config = config;
    }

    /**
     * Starts a query on {@code stream}; the {@code approx.*} options come from the stream's
     * environment configuration.
     *
     * @throws IllegalArgumentException an {@code approx.*} option is invalid or unknown (the
     *     message names the key)
     */
    public static <T> Approx<T> of(DataStream<T> stream) {
        Objects.requireNonNull(stream, "stream");
        StreamExecutionEnvironment env = stream.getExecutionEnvironment();
        return of(stream, env.getConfiguration());
    }

    /** Starts a query whose {@code approx.*} options come from {@code config}. */
    public static <T> Approx<T> of(DataStream<T> stream, ReadableConfig config) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(config, "config");
        return new Approx<>(
                stream, ApproxConfig.parse(config, secretOf(stream.getExecutionEnvironment())));
    }

    private static String secretOf(StreamExecutionEnvironment env) {
        synchronized (SECRETS) {
            return SECRETS.computeIfAbsent(env, e -> ApproxConfig.randomSecret());
        }
    }

    /** The groups (strata): every group gets its own error bound and its own answers. */
    public <K> StratifiedStream<T, K> stratifyBy(KeySelector<T, K> groupSelector) {
        return new StratifiedStream<>(stream, config, Objects.requireNonNull(groupSelector));
    }

    /** The validated configuration this query runs with. */
    public ApproxConfig config() {
        return config;
    }
}
