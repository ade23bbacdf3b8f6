package io.netapprox.spark;

import java.io.Serializable;
import java.util.List;

/**
 * What a reducer of an approximate shuffle received for one group from one map output: a stratum.
 * The delivered messages are a simple random sample (without replacement) of the stratum's {@code
 * messages} messages (the map side permuted the records randomly before framing them); {@code
 * records} is the stratum's exact record count from the map side's group table.
 */
public final class StratumSample implements Serializable {
    private static final long serialVersionUID = 1L;

    public final String group;
    public final int mapIndex;
    public final int messages;
    public final long records;
    public final double msr;
    public final double errorBound;
    public final List<ApproxRow[]> delivered;

    StratumSample(
            String group,
            int mapIndex,
            int messages,
            long records,
            double msr,
            double errorBound,
            List<ApproxRow[]> delivered) {
        this.group = group;
        this.mapIndex = mapIndex;
        this.messages = messages;
        this.records = records;
        this.msr = msr;
        this.errorBound = errorBound;
        this.delivered = delivered;
    }

    public long sampledRecords() {
        long n = 0;
        for (ApproxRow[] m : delivered) {
            n += m.length;
        }
        return n;
    }

    @Override
    public String toString() {
        return "StratumSample{"
                + group
                + ", map "
                + mapIndex
                + ", "
                + delivered.size()
                + "/"
                + messages
                + " messages, msr "
                + msr
                + "}";
    }
}
