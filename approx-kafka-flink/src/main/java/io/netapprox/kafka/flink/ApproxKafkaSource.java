package io.netapprox.kafka.flink;

import io.netapprox.kafka.ApproxConsumerConfig;
import java.util.Objects;
import java.util.Properties;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A Flink (FLIP-27) source over NetApprox's approximate Kafka consumer: each reader runs one {@code
 * ApproxKafkaConsumer} in assign mode for its partitions, so with {@code approx.enable=true} the
 * relays beside the brokers sample every (window, stratum) cell to its planned size and ship the
 * sample over ATP; every element carries its record's weight through the {@link KafkaSampleMapper}.
 * Feed it to {@code io.netapprox.flink.Approx.of(stream)} for the windowed aggregation:
 *
 * <pre>{@code
 * ApproxKafkaSource<Trip> source = ApproxKafkaSource.<Trip>builder()
 *     .consumerProperties(props)            // bootstrap.servers, approx.enable=true, approx.emax, relays ...
 *     .topic("taxi-trips")
 *     .mapper((record, weight) -> Trip.parse(record.value(), weight))
 *     .type(TypeInformation.of(Trip.class))
 *     .bounded()                            // stop at the end offsets of the job's start
 *     .build();
 * DataStream<Trip> trips = env.fromSource(source, WatermarkStrategy.forBoundedOutOfOrderness(window), "trips");
 * }</pre>
 *
 * <p>Offsets live in Flink's checkpoints (the consumer's coverage positions), not in the group; the
 * consumer properties are validated (unknown {@code approx.} keys, bad values) when the source is
 * built, on the client.
 *
 * <p>An unbounded source looks for partitions added to the topic every {@link
 * #PARTITION_DISCOVERY_INTERVAL_MS} (Flink KafkaSource's key and meaning: default 5 minutes, a
 * non-positive value turns discovery off; a bounded source never looks again) and reads a new
 * partition from its earliest offset. A reader that holds no partition marks itself idle, so it
 * does not hold back the job's watermarks.
 */
public final class ApproxKafkaSource<T>
        implements Source<T, PartitionSplit, EnumeratorState>, ResultTypeQueryable<T> {
    private static final long serialVersionUID = 1L;

    /**
     * Consumer property: milliseconds between two listings of the topic's partitions in an
     * unbounded read (default {@link #DEFAULT_DISCOVERY_INTERVAL_MS}; 0 or negative: list once, at
     * the start). Taken out of the properties before they reach the consumer.
     */
    public static final String PARTITION_DISCOVERY_INTERVAL_MS = "partition.discovery.interval.ms";

    /** Five minutes, as Flink's KafkaSource. */
    public static final long DEFAULT_DISCOVERY_INTERVAL_MS = 300_000;

    private final Properties consumerProps;
    private final String topic;
    private final StartingOffsets starting;
    private final Boundedness boundedness;
    private final KafkaSampleMapper<T> mapper;
    private final TypeInformation<T> type;
    private final long discoveryIntervalMs;

    private ApproxKafkaSource(Builder<T> b, Properties consumerProps, long discoveryIntervalMs) {
        this.consumerProps = consumerProps;
        this.discoveryIntervalMs = discoveryIntervalMs;
        this.topic = b.topic;
        this.starting = b.starting;
        this.boundedness = b.boundedness;
        this.mapper = b.mapper;
        this.type = b.type;
    }

    public static <T> Builder<T> builder() {
        return new Builder<>();
    }

    @Override
    public Boundedness getBoundedness() {
        return boundedness;
    }

    @Override
    public SourceReader<T, PartitionSplit> createReader(SourceReaderContext context) {
        return new ApproxKafkaSourceReader<>(context, consumerProps, mapper);
    }

    @Override
    public SplitEnumerator<PartitionSplit, EnumeratorState> createEnumerator(
            SplitEnumeratorContext<PartitionSplit> context) {
        return restoreEnumerator(context, EnumeratorState.initial());
    }

    @Override
    public SplitEnumerator<PartitionSplit, EnumeratorState> restoreEnumerator(
            SplitEnumeratorContext<PartitionSplit> context, EnumeratorState checkpoint) {
        return new PartitionSplitEnumerator(
                context,
                consumerProps,
                topic,
                starting,
                boundedness,
                discoveryIntervalMs,
                checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<PartitionSplit> getSplitSerializer() {
        return new PartitionSplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<EnumeratorState> getEnumeratorCheckpointSerializer() {
        return new EnumeratorStateSerializer();
    }

    @Override
    public TypeInformation<T> getProducedType() {
        return type;
    }

    /** Builds an {@link ApproxKafkaSource}; topic, properties, mapper and type are required. */
    public static final class Builder<T> {
        private Properties props;
        private String topic;
        private StartingOffsets starting = StartingOffsets.EARLIEST;
        private Boundedness boundedness = Boundedness.CONTINUOUS_UNBOUNDED;
        private KafkaSampleMapper<T> mapper;
        private TypeInformation<T> type;

        private Builder() {}

        /**
         * The consumer's properties: Kafka's keys and the {@code approx.*} keys of approx-kafka.
         */
        public Builder<T> consumerProperties(Properties props) {
            Properties copy = new Properties();
            copy.putAll(Objects.requireNonNull(props, "props"));
            this.props = copy;
            return this;
        }

        public Builder<T> topic(String topic) {
            this.topic = Objects.requireNonNull(topic, "topic");
            return this;
        }

        public Builder<T> startingOffsets(StartingOffsets starting) {
            this.starting = Objects.requireNonNull(starting, "starting");
            return this;
        }

        /** Stop at each partition's end offset at the job's start (default: never stop). */
        public Builder<T> bounded() {
            this.boundedness = Boundedness.BOUNDED;
            return this;
        }

        public Builder<T> mapper(KafkaSampleMapper<T> mapper) {
            this.mapper = Objects.requireNonNull(mapper, "mapper");
            return this;
        }

        public Builder<T> type(TypeInformation<T> type) {
            this.type = Objects.requireNonNull(type, "type");
            return this;
        }

        /**
         * @throws IllegalArgumentException a required setting is missing
         * @throws org.apache.kafka.common.config.ConfigException an {@code approx.*} key is unknown
         *     or its value is bad (the message names it)
         */
        public ApproxKafkaSource<T> build() {
            require(props, "consumerProperties");
            require(topic, "topic");
            require(mapper, "mapper");
            require(type, "type");
            if (props.getProperty("bootstrap.servers") == null) {
                throw new IllegalArgumentException(
                        "ApproxKafkaSource: consumerProperties need bootstrap.servers");
            }
            if (starting == StartingOffsets.COMMITTED && props.getProperty("group.id") == null) {
                throw new IllegalArgumentException(
                        "ApproxKafkaSource: startingOffsets(COMMITTED) needs group.id");
            }
            Properties consumer = new Properties();
            consumer.putAll(props);
            long discovery = discoveryInterval(consumer.remove(PARTITION_DISCOVERY_INTERVAL_MS));
            ApproxConsumerConfig.parse(consumer); // fails here, on the client, naming a bad key
            return new ApproxKafkaSource<>(
                    this, consumer, boundedness == Boundedness.BOUNDED ? 0 : discovery);
        }

        private static long discoveryInterval(Object value) {
            if (value == null) {
                return DEFAULT_DISCOVERY_INTERVAL_MS;
            }
            try {
                return Long.parseLong(value.toString().trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "ApproxKafkaSource: "
                                + PARTITION_DISCOVERY_INTERVAL_MS
                                + " must be a number of milliseconds, got '"
                                + value
                                + "'",
                        e);
            }
        }

        private static void require(Object value, String what) {
            if (value == null) {
                throw new IllegalArgumentException("ApproxKafkaSource: " + what + " is required");
            }
        }
    }
}
