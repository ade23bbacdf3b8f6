package io.netapprox.flink;

import java.security.SecureRandom;
import org.apache.flink.api.common.functions.Partitioner;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.transformations.PartitionTransformation;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * The approximate topology (flag on), the split-plane exchange:
 *
 * <pre>
 * upstream -> ApproxSender (chained, upstream's parallelism P)
 *          -> partitionCustom(manifest.target)            [manifests, watermarks, barriers: Flink edge]
 *          -> ApproxReceiver (parallelism R)               [records: ATP between TaskManagers]
 *          -> reinterpretAsKeyedStream(group) -> window(CarriedWindowAssigner)
 *          -> aggregate(StrataAggregation, ApproxResults)  [chained to the receiver]
 * </pre>
 *
 * The sender routes a group to the receiver subtask Flink's key groups assign it ({@code
 * assignKeyToParallelOperator(group, maxParallelism, R)}), so the receiver's output is keyed
 * exactly as {@code keyBy(group)} would key it; R and the max parallelism are fixed here for that
 * reason. {@code partitionCustom} disables unaligned checkpoints on the edge (Flink's {@code
 * CustomPartitionerWrapper}), so barriers never overtake manifests even when a job enables them.
 */
final class ApproxTopology {
    private ApproxTopology() {}

    @SuppressWarnings({"unchecked", "rawtypes"})
    static <T, K> DataStream<WindowEstimate> build(
            DataStream<T> stream,
            ApproxConfig config,
            QuerySpec<T, K> spec,
            WindowAssigner<? super T, TimeWindow> assigner,
            TypeInformation<K> keyType,
            String uid) {
        StreamExecutionEnvironment env = stream.getExecutionEnvironment();
        int receivers = env.getParallelism();
        if (receivers < 1) {
            throw new IllegalArgumentException(
                    "NetApprox: the job's default parallelism must be set (parallelism.default or"
                            + " env.setParallelism) so that senders know the receivers' key groups");
        }
        int maxParallelism =
                env.getMaxParallelism() > 0
                        ? env.getMaxParallelism()
                        : KeyGroupRangeAssignment.computeDefaultMaxParallelism(receivers);
        long exchangeId = new SecureRandom().nextLong();

        SingleOutputStreamOperator<Manifest> manifests =
                stream.transform(
                                "NetApprox sender",
                                TypeInformation.of(Manifest.class),
                                new SenderFactory<>(
                                        spec,
                                        config,
                                        assigner,
                                        keyType,
                                        exchangeId,
                                        receivers,
                                        maxParallelism))
                        .name("NetApprox sender");
        if (!(stream.getTransformation() instanceof PartitionTransformation)
                && stream.getParallelism() > 0) {
            // chained after the upstream operator; after a repartitioning (rebalance(), ...) the
            // sender
            // is a new task with the job's default parallelism, like any operator there
            manifests.setParallelism(stream.getParallelism());
        }

        TypeInformation<WindowShare<K>> sampleType =
                (TypeInformation) TypeInformation.of(WindowShare.class);
        SingleOutputStreamOperator<WindowShare<K>> samples =
                manifests
                        .partitionCustom(
                                (Partitioner<Integer>) (target, n) -> target, m -> m.target)
                        .transform(
                                "NetApprox receiver",
                                sampleType,
                                new ReceiverFactory<>(spec, config, keyType, exchangeId))
                        .setParallelism(receivers)
                        .setMaxParallelism(maxParallelism);

        KeyedStream<WindowShare<K>, K> keyed =
                DataStreamUtils.reinterpretAsKeyedStream(samples, s -> s.group, keyType);
        TypeInformation<StrataAccumulator<K>> accType =
                (TypeInformation) TypeInformation.of(StrataAccumulator.class);
        SingleOutputStreamOperator<WindowEstimate> out =
                keyed.window(new CarriedWindowAssigner<K>())
                        .aggregate(
                                new StrataAggregation<K>(),
                                new ApproxResults<>(spec),
                                accType,
                                accType,
                                TypeInformation.of(WindowEstimate.class))
                        .name("NetApprox window estimates")
                        .setParallelism(receivers)
                        .setMaxParallelism(maxParallelism);
        if (uid != null) {
            manifests.uid(uid + "-sender");
            samples.uid(uid + "-receiver");
            out.uid(uid + "-window");
        }
        return out;
    }

    /** Creates {@link ApproxSender}s (chained to their upstream). */
    private static final class SenderFactory<T, K> extends AbstractStreamOperatorFactory<Manifest>
            implements OneInputStreamOperatorFactory<T, Manifest> {
        private static final long serialVersionUID = 1L;
        private final QuerySpec<T, K> spec;
        private final ApproxConfig config;
        private final WindowAssigner<? super T, TimeWindow> assigner;
        private final TypeInformation<K> keyType;
        private final long exchangeId;
        private final int receivers;
        private final int maxParallelism;

        SenderFactory(
                QuerySpec<T, K> spec,
                ApproxConfig config,
                WindowAssigner<? super T, TimeWindow> assigner,
                TypeInformation<K> keyType,
                long exchangeId,
                int receivers,
                int maxParallelism) {
            this.spec = spec;
            this.config = config;
            this.assigner = assigner;
            this.keyType = keyType;
            this.exchangeId = exchangeId;
            this.receivers = receivers;
            this.maxParallelism = maxParallelism;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <O extends StreamOperator<Manifest>> O createStreamOperator(
                StreamOperatorParameters<Manifest> parameters) {
            return (O)
                    new ApproxSender<>(
                            parameters,
                            spec,
                            config,
                            assigner,
                            keyType,
                            exchangeId,
                            receivers,
                            maxParallelism);
        }

        @Override
        @SuppressWarnings("rawtypes")
        public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
            return ApproxSender.class;
        }
    }

    /** Creates {@link ApproxReceiver}s (with the task's mailbox executor). */
    private static final class ReceiverFactory<T, K>
            extends AbstractStreamOperatorFactory<WindowShare<K>>
            implements OneInputStreamOperatorFactory<Manifest, WindowShare<K>> {
        private static final long serialVersionUID = 1L;
        private final QuerySpec<T, K> spec;
        private final ApproxConfig config;
        private final TypeInformation<K> keyType;
        private final long exchangeId;

        ReceiverFactory(
                QuerySpec<T, K> spec,
                ApproxConfig config,
                TypeInformation<K> keyType,
                long exchangeId) {
            this.spec = spec;
            this.config = config;
            this.keyType = keyType;
            this.exchangeId = exchangeId;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <O extends StreamOperator<WindowShare<K>>> O createStreamOperator(
                StreamOperatorParameters<WindowShare<K>> parameters) {
            return (O) new ApproxReceiver<>(parameters, spec, config, keyType, exchangeId);
        }

        @Override
        @SuppressWarnings("rawtypes")
        public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
            return ApproxReceiver.class;
        }
    }
}
