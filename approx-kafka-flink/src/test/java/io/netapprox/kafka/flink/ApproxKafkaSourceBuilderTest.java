package io.netapprox.kafka.flink;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Properties;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.junit.jupiter.api.Test;

/** The builder's validation of the discovery interval. */
class ApproxKafkaSourceBuilderTest {
    @Test
    void aDiscoveryIntervalThatIsNoNumberFailsNamingTheKey() {
        Properties p = new Properties();
        p.put("bootstrap.servers", "127.0.0.1:9");
        p.put(ApproxKafkaSource.PARTITION_DISCOVERY_INTERVAL_MS, "5s");
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                ApproxKafkaSource.<Fare>builder()
                                        .consumerProperties(p)
                                        .topic("t")
                                        .mapper(Fare::of)
                                        .type(TypeInformation.of(Fare.class))
                                        .build());
        assertTrue(
                e.getMessage().contains(ApproxKafkaSource.PARTITION_DISCOVERY_INTERVAL_MS),
                e.getMessage());
    }
}
