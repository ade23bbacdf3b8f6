package io.netapprox.flink;

/** A test record routed to a chosen sender subtask ({@link #sender}). A Flink POJO. */
public class SplitRide {
    public long ts;
    public int group;
    public int sender;
    public double value;
    public String key;

    public SplitRide() {}

    SplitRide(long ts, int group, int sender, double value, String key) {
        this.ts = ts;
        this.group = group;
        this.sender = sender;
        this.value = value;
        this.key = key;
    }

    public long getTs() {
        return ts;
    }

    public int getGroup() {
        return group;
    }

    public int getSender() {
        return sender;
    }

    public double getValue() {
        return value;
    }

    public String getKey() {
        return key;
    }
}
