package io.netapprox.kafka.flink.suite;

import io.netapprox.kafka.ApproxHeaders;
import io.netapprox.kafka.flink.ApproxKafkaSource;
import io.netapprox.kafka.flink.KafkaSampleMapper;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.connector.testframe.external.ExternalSystemSplitDataWriter;
import org.apache.flink.connector.testframe.external.source.DataStreamSourceExternalContext;
import org.apache.flink.connector.testframe.external.source.TestingSourceSettings;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The {@code ExternalContext} of Flink's connector test suite for {@link ApproxKafkaSource}: one
 * topic per test case, one partition per split writer (the first writer creates the topic, each
 * further one adds a partition), string values. With {@code approx.enable=true} every record goes
 * through the relay and over ATP; e_max 0.001 plans every (window, partition) cell of a few hundred
 * records whole, so the suite's exact comparison holds while the approximate path is the one
 * tested.
 */
final class ApproxKafkaSourceContext implements DataStreamSourceExternalContext<String> {
    /** Planned sample = the whole cell for cells of up to ~2,900 records (cv 1.5, 95 %). */
    static final String EXACT_EMAX = "0.001";

    private final KafkaWithRelay external;
    private final boolean approx;
    private final String topic = KafkaBroker.unique("suite");
    private final List<PartitionWriter> writers = new ArrayList<>();
    private KafkaProducer<byte[], byte[]> producer;

    ApproxKafkaSourceContext(KafkaWithRelay external, boolean approx) {
        this.external = external;
        this.approx = approx;
    }

    @Override
    public Source<String, ?, ?> createSource(TestingSourceSettings settings) {
        ApproxKafkaSource.Builder<String> b =
                ApproxKafkaSource.<String>builder()
                        .consumerProperties(consumerProps())
                        .topic(topic)
                        .mapper(new CheckedValue(approx))
                        .type(Types.STRING);
        if (settings.getBoundedness() == Boundedness.BOUNDED) {
            b.bounded();
        }
        return b.build();
    }

    private Properties consumerProps() {
        try {
            KafkaBroker broker = external.broker();
            Properties p = broker.bytesConsumerProps(KafkaBroker.unique("suite"));
            p.put("approx.enable", Boolean.toString(approx));
            if (approx) {
                p.put("approx.stratum", "partition");
                // windows close a second after their records (wall clock): the relay hands them on
                p.put("approx.window.ms", "1000");
                p.put("approx.window.grace.ms", "0");
                p.put("approx.emax", EXACT_EMAX);
                p.put("approx.seed", "29");
                p.put("approx.relay.fallback", "error"); // no plain fetch behind the relay's back
                p.put("approx.auth.secret", TestRelays.SECRET);
                for (int id : broker.brokerIds()) {
                    p.put("approx.relay.address." + id, external.relay().address());
                }
            }
            return p;
        } catch (Exception e) {
            throw new IllegalStateException("no broker for the suite", e);
        }
    }

    @Override
    public synchronized ExternalSystemSplitDataWriter<String> createSourceSplitDataWriter(
            TestingSourceSettings settings) {
        int partition = writers.size();
        try {
            KafkaBroker broker = external.broker();
            if (partition == 0) {
                broker.createTopic(topic, 1);
                producer = broker.bytesProducer(new Properties());
            } else {
                try (Admin admin = broker.admin()) {
                    admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partition + 1)))
                            .all()
                            .get(60, TimeUnit.SECONDS);
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("partition " + partition + " of " + topic, e);
        }
        PartitionWriter w = new PartitionWriter(partition);
        writers.add(w);
        return w;
    }

    /** 50-249 records per split, each naming its split and index, 1-64 random letters after. */
    @Override
    public List<String> generateTestData(
            TestingSourceSettings settings, int splitIndex, long seed) {
        Random rnd = new Random(seed);
        int n = 50 + rnd.nextInt(200);
        List<String> records = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            StringBuilder s = new StringBuilder().append(splitIndex).append('-').append(i);
            s.append('-');
            for (int c = 1 + rnd.nextInt(64); c > 0; c--) {
                s.append((char) ('a' + rnd.nextInt(26)));
            }
            records.add(s.toString());
        }
        return records;
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }

    @Override
    public List<URL> getConnectorJarPaths() {
        return List.of(); // the MiniCluster runs in this JVM, with the test class path
    }

    @Override
    public synchronized void close() {
        if (producer != null) {
            producer.close();
            producer = null;
        }
    }

    @Override
    public String toString() {
        return "ApproxKafkaSource, approx.enable=" + approx;
    }

    private final class PartitionWriter implements ExternalSystemSplitDataWriter<String> {
        private final int partition;

        PartitionWriter(int partition) {
            this.partition = partition;
        }

        @Override
        public void writeRecords(List<String> records) {
            List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>(records.size());
            for (String r : records) {
                out.add(
                        new ProducerRecord<>(
                                topic, partition, null, r.getBytes(StandardCharsets.UTF_8)));
            }
            try {
                KafkaBroker.sendAll(producer(), out);
            } catch (Exception e) {
                throw new IllegalStateException(
                        "writing " + records.size() + " records to " + topic + "-" + partition, e);
            }
        }

        @Override
        public void close() {
            // the context's producer is shared by its writers and closed with the context
        }
    }

    /**
     * The record's value; fails the job if a record did not come the way the context says: with the
     * flag on through the relay (a weight header) and whole (weight 1), with it off plainly.
     */
    private static final class CheckedValue implements KafkaSampleMapper<String> {
        private static final long serialVersionUID = 1L;
        private final boolean approx;

        CheckedValue(boolean approx) {
            this.approx = approx;
        }

        @Override
        public String map(ConsumerRecord<byte[], byte[]> r, double weight) {
            boolean relayed = r.headers().lastHeader(ApproxHeaders.WEIGHT) != null;
            if (relayed != approx || weight != 1.0) {
                throw new IllegalStateException(
                        "record "
                                + r.topic()
                                + "-"
                                + r.partition()
                                + "@"
                                + r.offset()
                                + ": weight "
                                + weight
                                + (relayed ? ", relayed" : ", not relayed")
                                + " with approx.enable="
                                + approx);
            }
            return new String(r.value(), StandardCharsets.UTF_8);
        }
    }

    private synchronized KafkaProducer<byte[], byte[]> producer() {
        if (producer == null) {
            throw new IllegalStateException("the context of " + topic + " is closed");
        }
        return producer;
    }
}
