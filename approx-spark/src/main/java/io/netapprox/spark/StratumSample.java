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

    /**
     * Per value column of the stratum (all its records, not only the delivered ones): NaN, +Inf,
     * -Inf counts.
     */
    final long[] nonFinite;

    StratumSample(
            String group,
            int mapIndex,
            int messages,
            long records,
            double msr,
            double errorBound,
            List<ApproxRow[]> delivered,
            long[] nonFinite) {
        this.group = group;
        this.mapIndex = mapIndex;
        this.messages = messages;
        this.records = records;
        this.msr = msr;
        this.errorBound = errorBound;
        this.delivered = delivered;
        this.nonFinite = nonFinite;
    }

    /**
     * @return how many of the stratum's values of column v are NaN, +Infinity, -Infinity
     */
    long[] nonFinite(int v) {
        if (nonFinite == null || nonFinite.length < 3 * (v + 1)) {
            return new long[3];
        }
        return new long[] {nonFinite[3 * v], nonFinite[3 * v + 1], nonFinite[3 * v + 2]};
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
