package io.netapprox.flink;

import io.netapprox.core.sampling.AggregateKind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.GenericTypeInfo;
import org.apache.flink.api.java.typeutils.TypeExtractor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * A stratified, windowed approximate query: set the error bounds and the confidence, then {@link
 * #aggregate}. Every group's answers are within {@code e_max} of the truth (relative) with the
 * stated confidence.
 */
public final class ApproxWindowedStream<T, K> {
    private final DataStream<T> stream;
    private final ApproxConfig config;
    private final KeySelector<T, K> groupSelector;
    private final WindowAssigner<? super T, TimeWindow> assigner;
    private final Map<K, Double> errorBounds = new HashMap<>();
    private double errorBound;
    private double confidence;
    private TypeInformation<K> keyType;
    private String uidPrefix;

    ApproxWindowedStream(
            DataStream<T> stream,
            ApproxConfig config,
            KeySelector<T, K> groupSelector,
            WindowAssigner<? super T, TimeWindow> assigner) {
        this.stream = stream;
        this.config = config;
        this.groupSelector = groupSelector;
        this.assigner = assigner;
        this.errorBound = config.errorBound();
        this.confidence = config.confidence();
    }

    /** The relative error bound e_max of every group without its own, in (0, 1). */
    public ApproxWindowedStream<T, K> errorBound(double eMax) {
        this.errorBound = checkBound(eMax);
        return this;
    }

    /** The relative error bound of one group, in (0, 1). */
    public ApproxWindowedStream<T, K> errorBound(K group, double eMax) {
        errorBounds.put(Objects.requireNonNull(group, "group"), checkBound(eMax));
        return this;
    }

    /** The confidence of every answer's interval and bound, in (0, 1). */
    public ApproxWindowedStream<T, K> confidence(double confidence) {
        if (!(confidence > 0 && confidence < 1)) {
            throw new IllegalArgumentException("confidence must be in (0, 1), got " + confidence);
        }
        this.confidence = confidence;
        return this;
    }

    /** The group key's type, when Flink cannot extract it from the key selector (lambdas). */
    public ApproxWindowedStream<T, K> groupType(TypeInformation<K> type) {
        this.keyType = Objects.requireNonNull(type);
        return this;
    }

    /**
     * Stable operator ids ({@code prefix + "-sender"}, {@code -receiver}, {@code -window}) so that
     * savepoints map back after a change of the program.
     */
    public ApproxWindowedStream<T, K> uid(String prefix) {
        this.uidPrefix = Objects.requireNonNull(prefix);
        return this;
    }

    private static double checkBound(double eMax) {
        if (!(eMax > 0 && eMax < 1)) {
            throw new IllegalArgumentException("errorBound must be in (0, 1), got " + eMax);
        }
        return eMax;
    }

    /**
     * The answers: per window, group and aggregate one {@link WindowEstimate} (top-k: one per
     * rank).
     */
    @SafeVarargs
    public final DataStream<WindowEstimate> aggregate(Aggregate<T>... aggregates) {
        List<Aggregate<T>> aggs = new ArrayList<>(List.of(aggregates));
        if (aggs.isEmpty()) {
            throw new IllegalArgumentException(
                    "NetApprox: aggregate() needs at least one aggregate");
        }
        Set<String> labels = new HashSet<>();
        int topK = 0;
        for (Aggregate<T> a : aggs) {
            if (!labels.add(a.label())) {
                throw new IllegalArgumentException(
                        "NetApprox: aggregate " + a.label() + " given twice");
            }
            if (a.kind() == AggregateKind.TOPK) {
                topK++;
            }
        }
        if (topK > 1) {
            throw new IllegalArgumentException("NetApprox: at most one topK aggregate per query");
        }
        QuerySpec<T, K> spec =
                new QuerySpec<>(groupSelector, aggs, errorBound, errorBounds, confidence);
        TypeInformation<K> kt =
                keyType != null
                        ? keyType
                        : TypeExtractor.getKeySelectorTypes(groupSelector, stream.getType());
        checkSerializable(kt);
        if (config.enabled()) {
            return ApproxTopology.build(stream, config, spec, assigner, kt, uidPrefix);
        }
        return exact(spec, kt);
    }

    /**
     * Fails the build, naming the type, when a type this query keeps in state or sends (the group
     * key; with the flag on also the window state) needs Flink's Kryo fallback and the job forbids
     * it ({@code pipeline.generic-types: false}); Flink itself would only fail on submission or in
     * a task. With generic types allowed, a generic group key goes through Flink's Kryo serializer
     * in the manifests and the window state like any other key.
     */
    private void checkSerializable(TypeInformation<K> kt) {
        SerializerConfig serializers =
                stream.getExecutionEnvironment().getConfig().getSerializerConfig();
        if (!serializers.hasGenericTypesDisabled()) {
            return;
        }
        if (kt instanceof GenericTypeInfo) {
            throw new IllegalArgumentException(
                    "NetApprox: the group key type "
                            + kt.getTypeClass().getName()
                            + " is a generic type (Flink serializes it with Kryo), but the job sets"
                            + " pipeline.generic-types: false; make it a POJO, a tuple or a basic"
                            + " type, register a serializer, or allow generic types");
        }
        if (config.enabled()) {
            throw new IllegalArgumentException(
                    "NetApprox: the approximate topology keeps its window state ("
                            + StrataAccumulator.class.getName()
                            + ", "
                            + WindowShare.class.getName()
                            + ") in Flink's Kryo serializer, but the job sets"
                            + " pipeline.generic-types: false; allow generic types or set"
                            + " approx.enabled=false");
        }
    }

    /** Flag off: exactly {@code keyBy(group).window(assigner).aggregate(..)}. */
    private DataStream<WindowEstimate> exact(QuerySpec<T, K> spec, TypeInformation<K> kt) {
        TypeInformation<ExactAccumulator> acc = TypeInformation.of(ExactAccumulator.class);
        SingleOutputStreamOperator<WindowEstimate> out =
                stream.keyBy(groupSelector, kt)
                        .window(assigner)
                        .aggregate(
                                new ExactAggregation<>(spec),
                                new ExactResults<>(spec),
                                acc,
                                acc,
                                TypeInformation.of(WindowEstimate.class))
                        .name("NetApprox exact window aggregation");
        if (uidPrefix != null) {
            out.uid(uidPrefix + "-window");
        }
        return out;
    }
}
