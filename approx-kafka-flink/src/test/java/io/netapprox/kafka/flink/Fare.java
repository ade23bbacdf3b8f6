package io.netapprox.kafka.flink;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** A test record as the Flink job sees it (a Flink POJO): key = district, value = fare. */
public class Fare {
    public String district;
    public double fare;
    public double weight;

    public Fare() {}

    static Fare of(ConsumerRecord<byte[], byte[]> r, double weight) {
        Fare f = new Fare();
        f.district = new String(r.key(), StandardCharsets.UTF_8);
        f.fare = Double.parseDouble(new String(r.value(), StandardCharsets.UTF_8));
        f.weight = weight;
        return f;
    }
}
