package io.netapprox.flink;

/** A test record: event time, group, a skewed value and a key. A Flink POJO. */
public class Ride {
    public long ts;
    public int group;
    public double value;
    public String key;

    public Ride() {}

    Ride(long ts, int group, double value, String key) {
        this.ts = ts;
        this.group = group;
        this.value = value;
        this.key = key;
    }

    public long getTs() {
        return ts;
    }

    public int getGroup() {
        return group;
    }

    public double getValue() {
        return value;
    }

    public String getKey() {
        return key;
    }
}
