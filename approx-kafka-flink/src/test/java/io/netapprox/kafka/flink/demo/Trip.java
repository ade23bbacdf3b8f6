package io.netapprox.kafka.flink.demo;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** A taxi trip as the demo's Flink job sees it (a Flink POJO): key = borough, value = fare. */
public class Trip {
    public String borough;
    public double fare;
    public double weight;

    public Trip() {}

    static Trip of(ConsumerRecord<byte[], byte[]> r, double weight) {
        Trip t = new Trip();
        t.borough = new String(r.key(), StandardCharsets.UTF_8);
        t.fare = Double.parseDouble(new String(r.value(), StandardCharsets.UTF_8));
        t.weight = weight;
        return t;
    }
}
