package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

/** Kafka Streams reads a topic approximately through {@code default.client.supplier}. */
class StreamsSupplierTest {
    @Test
    void aStreamsTopologySeesSampledRecordsWhoseWeightsAddUpToTheRecordCount() throws Exception {
        String topic = KafkaBroker.unique("streams");
        KafkaBroker.shared().createTopic(topic, 2);
        int produced = Records.produce(topic, 2, 1, List.of("a", "b"), 1500, 9).size();
        AtomicLong seen = new AtomicLong();
        DoubleAdder weights = new DoubleAdder();
        StreamsBuilder b = new StreamsBuilder();
        b.stream(topic, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .process(
                        () ->
                                new Processor<byte[], byte[], Void, Void>() {
                                    @Override
                                    public void process(Record<byte[], byte[]> r) {
                                        Header w = r.headers().lastHeader(ApproxHeaders.WEIGHT);
                                        seen.incrementAndGet();
                                        weights.add(
                                                w == null
                                                        ? 1.0
                                                        : Double.parseDouble(
                                                                new String(
                                                                        w.value(),
                                                                        StandardCharsets.UTF_8)));
                                    }
                                });
        try (KafkaRelay relay = TestRelays.start()) {
            Properties p = new Properties();
            p.put(StreamsConfig.APPLICATION_ID_CONFIG, KafkaBroker.unique("app"));
            p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaBroker.shared().bootstrapServers());
            p.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams").toString());
            p.put(
                    StreamsConfig.DEFAULT_CLIENT_SUPPLIER_CONFIG,
                    ApproxClientSupplier.class.getName());
            p.put("main.consumer.auto.offset.reset", "earliest");
            p.put("main.consumer.approx.enable", "true");
            p.put("main.consumer.approx.emax", "0.1");
            p.put("main.consumer.approx.stratum", "header:zone");
            p.put("main.consumer.approx.auth.secret", TestRelays.SECRET);
            for (int id : KafkaBroker.shared().brokerIds()) {
                p.put("main.consumer.approx.relay.address." + id, relay.address());
            }
            try (KafkaStreams streams = new KafkaStreams(b.build(), p)) {
                streams.start();
                long deadline = System.nanoTime() + Records.LIVENESS.toNanos();
                while (Math.abs(weights.sum() - produced) > 1e-6 && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
            }
        }
        assertTrue(seen.get() < produced, "sampled: " + seen.get() + " of " + produced);
        assertEquals(produced, weights.sum(), 1e-6, "weights add up to the records produced");
    }
}
