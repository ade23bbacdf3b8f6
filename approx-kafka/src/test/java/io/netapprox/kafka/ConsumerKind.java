package io.netapprox.kafka;

import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/**
 * The consumers the contract tests run against: Kafka's own, ours with the flag off, and ours with
 * the flag on behind a relay (real ATP over loopback), configured so every cell is small enough to
 * be taken whole (then an approximate consumer must return exactly what Kafka's returns).
 */
enum ConsumerKind {
    KAFKA,
    APPROX_OFF,
    APPROX_ON;

    private static KafkaRelay relay;

    /** Properties for this kind on top of the plain consumer properties. */
    Properties props(Properties base) throws Exception {
        Properties p = new Properties();
        p.putAll(base);
        if (this == APPROX_ON) {
            p.put("approx.enable", "true");
            p.put("approx.window.ms", "100");
            p.put("approx.window.grace.ms", "0");
            p.put("approx.seed", "7");
            p.put("approx.emax", "0.001"); // cells of a few hundred records are taken whole
            p.put("approx.auth.secret", TestRelays.SECRET);
            for (int id : KafkaBroker.shared().brokerIds()) {
                p.put("approx.relay.address." + id, relay().address());
            }
        } else if (this == APPROX_OFF) {
            p.put("approx.enable", "false");
            p.put("approx.emax", "0.1");
        }
        return p;
    }

    <K, V> Consumer<K, V> create(Properties base) throws Exception {
        Properties p = props(base);
        return this == KAFKA ? new KafkaConsumer<>(p) : ApproxConsumers.create(p);
    }

    static synchronized KafkaRelay relay() throws Exception {
        if (relay == null) {
            relay = TestRelays.start();
        }
        return relay;
    }
}
