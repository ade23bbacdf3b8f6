package io.netapprox.spark;

import io.netapprox.core.sampling.ShareSample;
import java.io.DataInput;
import java.io.IOException;
import java.io.Serializable;

/**
 * What a reducer of an approximate shuffle took from one map output for one group - a stratum: the
 * map output's group-table entry (group, map index, the messages it wrote, the plan's MSR and error
 * bound) and approx-core's {@link ShareSample} of the delivered messages, which are a simple random
 * sample (without replacement) of the stratum's {@code population} (N_g) messages: the map side
 * wrote a uniform pre-sample of the share's records (all of them for a small share; then {@code
 * messages == population}), permuted, in {@code messages} messages; ATP's losses do not depend on
 * content, and a simple random sample of a simple random sample is one of the whole. The reducer
 * stops at {@code target = min(messages, ceil(msr * population))} of them. {@code records}, the
 * non-finite counts and the exact partials are the stratum's exact numbers from the map side's
 * group table.
 */
public final class StratumSample implements Serializable {
    private static final long serialVersionUID = 5L;

    public final String group;
    public final int mapIndex;
    public final int messages;

    /** N_g: the share's messages, were every record written (the estimators' population). */
    public final long population;

    public final long records;
    public final double msr;
    public final double errorBound;

    /** Messages the reducer takes: {@code min(messages, ceil(msr * population))}. */
    public final int target;

    /** True when the plan asked more messages than the map output's pre-sample holds. */
    public final boolean shortOfPlan;

    /** The delivered messages, accumulated. */
    final ShareSample share;

    private final int numValues;
    private final boolean withKey;
    private long keyBytes; // the delivered records' keys as encoded (top-k)

    StratumSample(
            ApproxSpec spec,
            MapOutputFormat.Group g,
            int mapIndex,
            int numValues,
            boolean withKey) {
        this.group = g.key();
        this.mapIndex = mapIndex;
        this.messages = g.messages();
        this.population = g.population();
        this.records = g.records();
        this.msr = g.msr();
        this.errorBound = g.errorBound();
        this.target = g.target();
        this.shortOfPlan = g.shortOfPlan();
        this.numValues = numValues;
        this.withKey = withKey;
        this.share =
                new ShareSample(
                        population,
                        records,
                        msr,
                        target,
                        g.nonFinite(),
                        g.partials(),
                        columns(spec, numValues, withKey),
                        spec.seed() ^ (31L * mapIndex + group.hashCode()));
    }

    /** What the query's aggregates need of a map output's {@code numValues} value columns. */
    private static ShareSample.Columns columns(ApproxSpec spec, int numValues, boolean withKey) {
        boolean[] totals = new boolean[numValues];
        boolean[] quantiles = new boolean[numValues];
        boolean topK = false;
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            int v = a.valueIndex();
            switch (a.kind()) {
                case AVG, SUM -> {
                    if (v < numValues) {
                        totals[v] = true;
                    }
                }
                case QUANTILE -> {
                    if (v < numValues) {
                        quantiles[v] = true;
                    }
                }
                case TOPK -> topK = withKey;
                default -> {}
            }
        }
        return new ShareSample.Columns(totals, quantiles, topK);
    }

    /** Adds one delivered message (read from {@code in}: {@code int records}, then the records). */
    void addMessage(DataInput in) throws IOException {
        share.startMessage();
        MapOutputFormat.readMessage(
                in,
                numValues,
                withKey,
                row -> {
                    share.addRecord(row.values);
                    if (withKey) {
                        share.addKey(row.key == null ? "" : row.key, 1);
                        keyBytes += encodedLength(row.key);
                    }
                });
        share.finishMessage();
    }

    /** Messages taken (delivered and used). */
    public int deliveredMessages() {
        return share.deliveredMessages();
    }

    /** Records in the messages taken. */
    public long sampledRecords() {
        return share.deliveredRecords();
    }

    /**
     * Bytes an exact shuffle would write of this share in this encoding: every one of its {@code
     * records} (the census), framed as {@code population} messages; with top-k keys, each key at
     * the delivered records' mean encoded length (2 bytes, an empty key's, when none arrived).
     */
    public long exactBytes() {
        double perKey = 0;
        if (withKey) {
            long sampled = sampledRecords();
            perKey = sampled > 0 ? (double) keyBytes / sampled : 2;
        }
        return Integer.BYTES * population
                + records * (long) Double.BYTES * numValues
                + Math.round(records * perKey);
    }

    /** {@link java.io.DataOutputStream#writeUTF}'s length of a key (null is written as ""). */
    static int encodedLength(String key) {
        int n = 2;
        if (key != null) {
            for (int i = 0; i < key.length(); i++) {
                char c = key.charAt(i);
                n += c >= 0x0001 && c <= 0x007F ? 1 : c <= 0x07FF ? 2 : 3;
            }
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
                + deliveredMessages()
                + "/"
                + messages
                + " messages of "
                + population
                + " (target "
                + target
                + "), msr "
                + msr
                + "}";
    }
}
