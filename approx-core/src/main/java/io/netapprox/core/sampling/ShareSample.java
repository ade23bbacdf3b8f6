package io.netapprox.core.sampling;

import java.io.Serializable;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * What a receiver took of one sender's share of a group - one stratum - as accumulators, never the
 * records. The share is {@code population} messages ({@code N}, the estimators' population) of
 * {@code records} records ({@code M}, known exactly from the sender); the delivered messages are a
 * simple random sample without replacement of the {@code N} (the sender permuted its records into
 * messages, and which messages the network loses does not depend on their content). The receiver
 * stops at {@code target} of them ({@code ceil(msr N)}, or fewer when the sender wrote fewer).
 *
 * <p>Per value column, as the query's aggregates need ({@link Columns}): a {@link
 * StratumAccumulator} of the messages' totals (averages, sums), an {@link ExactSum} of the
 * delivered values when the share is taken whole ({@code target >= population}), the sampled values
 * of a quantile column - at most {@link #QUANTILE_VALUES} of them, a uniform subsample (reservoir)
 * beyond, so that the interval, computed from what is kept, accounts for it - and one {@link
 * TopKAccumulator} of the messages' per-key record counts. The sender's counts of NaN and infinite
 * values over all the share's records ({@link #nan}, {@link #positiveInfinities}, {@link
 * #negativeInfinities}) and, optionally, its exact sums over all records ({@link #partial}) come
 * with the share's size.
 *
 * <p>{@link GroupEstimator} turns a group's shares into its answers. Framework-neutral: the
 * integrations decode their own message formats and feed each delivered message as {@link
 * #startMessage}, {@link #addRecord} per record, {@link #addKey} per key, {@link #finishMessage}.
 * Not thread-safe.
 */
public final class ShareSample implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Sampled values kept per quantile column and share (8 bytes each). */
    public static final int QUANTILE_VALUES = 1 << 18;

    /**
     * Stands for the null top-k key in {@link #topK} (which takes no null): a lone surrogate, which
     * no decoded string can be (UTF-8 decoding never yields one, and encoding turns one into '?').
     */
    static final String NULL_KEY = "\uD800";

    /**
     * Which accumulators a query's shares keep, per value column: message totals (avg, sum),
     * sampled values (quantile), and whether the per-key counts (top-k) are kept. One per query,
     * shared by its shares.
     *
     * @param totals per value column: keep the message totals
     * @param quantiles per value column: keep the sampled values
     * @param topK keep the per-key record counts
     */
    public record Columns(boolean[] totals, boolean[] quantiles, boolean topK)
            implements Serializable {
        public Columns {
            if (totals.length != quantiles.length) {
                throw new IllegalArgumentException(
                        totals.length + " total columns but " + quantiles.length + " quantile");
            }
        }

        /** The value columns a message's records carry. */
        public int width() {
            return totals.length;
        }
    }

    private long population;
    private long records;
    private double msr;
    private int target;
    private long[] nonFinite; // per value column: NaN, +Inf, -Inf over every record of the share
    private ExactSum[] partials; // per value column: exact sum over every record, or null

    private int deliveredMessages;
    private long deliveredRecords;
    private StratumAccumulator[] totals;
    private ExactSum[] exact;
    private double[][] quantileValues;
    private int[] quantileKept;
    private long[] quantileSeen;
    private long quantileDropped;
    private TopKAccumulator<String> topK;
    private long random; // the reservoir's generator state (SplitMix64)

    private transient double[] messageTotals;
    private transient Map<String, Long> messageKeys;
    private transient int messageRecords;
    private transient boolean inMessage;

    private ShareSample() {} // Kryo

    /**
     * @param population the share's messages {@code N} ({@code >= target})
     * @param records the share's records {@code M}
     * @param msr the sampling rate the plan gave the share (reported, not used)
     * @param target the messages the receiver takes, {@code <= population}
     * @param nonFinite per value column the NaN, +Infinity and -Infinity counts over every record
     *     of the share (3 per column), or null when every value is finite
     * @param partials per value column the exact sum over every record of the share (null entries,
     *     or null, where the sender sent none)
     * @param columns what the query's aggregates need
     * @param seed the reservoir's seed
     */
    public ShareSample(
            long population,
            long records,
            double msr,
            int target,
            long[] nonFinite,
            ExactSum[] partials,
            Columns columns,
            long seed) {
        if (population < 0 || records < 0 || target < 0 || target > population) {
            throw new IllegalArgumentException(
                    "share of "
                            + population
                            + " messages, "
                            + records
                            + " records, target "
                            + target);
        }
        this.population = population;
        this.records = records;
        this.msr = msr;
        this.target = target;
        this.nonFinite = nonFinite;
        this.partials = partials;
        int width = columns.width();
        this.totals = new StratumAccumulator[width];
        this.exact = new ExactSum[width];
        this.quantileValues = new double[width][];
        this.quantileKept = new int[width];
        this.quantileSeen = new long[width];
        for (int v = 0; v < width; v++) {
            if (columns.totals()[v]) {
                totals[v] = new StratumAccumulator();
                if (target == population) {
                    exact[v] = new ExactSum();
                }
            }
            if (columns.quantiles()[v]) {
                quantileValues[v] = new double[16];
            }
        }
        this.topK = columns.topK() ? new TopKAccumulator<>() : null;
        this.random = seed;
    }

    /** Starts a delivered message; its records follow ({@link #addRecord}, {@link #addKey}). */
    public void startMessage() {
        if (inMessage) {
            throw new IllegalStateException("a message is already started");
        }
        if (messageTotals == null || messageTotals.length != totals.length) {
            messageTotals = new double[totals.length];
        } else {
            Arrays.fill(messageTotals, 0.0);
        }
        if (topK != null) {
            messageKeys = new HashMap<>();
        }
        messageRecords = 0;
        inMessage = true;
    }

    /**
     * Adds one record of the started message: its value columns (read, not kept).
     *
     * @param values at least {@link Columns#width()} values
     */
    public void addRecord(double[] values) {
        checkInMessage();
        for (int v = 0; v < totals.length; v++) {
            double x = values[v];
            if (totals[v] != null) {
                if (Double.isFinite(x)) {
                    // a column with a non-finite value has its answer from the counts; its
                    // message totals are then not used
                    messageTotals[v] += x;
                }
                if (exact[v] != null) {
                    exact[v].add(x);
                }
            }
            if (quantileValues[v] != null && !Double.isNaN(x)) {
                // the NaN values are known by count; the numbers among a random sample of the
                // records are a random sample of the share's numbers
                keep(v, x);
            }
        }
        messageRecords++;
    }

    /**
     * Adds {@code count} records with top-k key {@code key} (null is a key of its own) to the
     * started message; ignored when the query has no top-k.
     */
    public void addKey(String key, long count) {
        checkInMessage();
        if (messageKeys != null) {
            messageKeys.merge(key == null ? NULL_KEY : key, count, Long::sum);
        }
    }

    /** Ends the started message: its totals and keys go into the accumulators. */
    public void finishMessage() {
        checkInMessage();
        for (int v = 0; v < totals.length; v++) {
            if (totals[v] != null) {
                totals[v].add(messageTotals[v], messageRecords);
            }
        }
        if (topK != null) {
            topK.addMessage(messageKeys);
            messageKeys = null;
        }
        deliveredMessages++;
        deliveredRecords += messageRecords;
        inMessage = false;
    }

    /**
     * Forgets the started message (one found malformed before any of its records was added): it
     * counts for nothing.
     */
    public void discardMessage() {
        checkInMessage();
        messageKeys = null;
        inMessage = false;
    }

    private void checkInMessage() {
        if (!inMessage) {
            throw new IllegalStateException("no message started");
        }
    }

    private void keep(int v, double x) {
        long seen = ++quantileSeen[v];
        if (quantileKept[v] < QUANTILE_VALUES) {
            if (quantileKept[v] == quantileValues[v].length) {
                quantileValues[v] =
                        Arrays.copyOf(
                                quantileValues[v],
                                Math.min(QUANTILE_VALUES, 2 * quantileValues[v].length));
            }
            quantileValues[v][quantileKept[v]++] = x;
            return;
        }
        // reservoir: every value seen so far is kept with probability QUANTILE_VALUES / seen
        quantileDropped++;
        long j = Long.remainderUnsigned(nextRandom(), seen);
        if (j < QUANTILE_VALUES) {
            quantileValues[v][(int) j] = x;
        }
    }

    /** SplitMix64 (a plain long, so that Kryo and Java serialization carry it as it is). */
    private long nextRandom() {
        long z = (random += 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The value columns a record carries. */
    public int width() {
        return totals.length;
    }

    /** True when the query has a top-k (the messages carry keys). */
    public boolean keepsTopK() {
        return topK != null;
    }

    /** The share's messages {@code N}. */
    public long population() {
        return population;
    }

    /** The share's records {@code M}. */
    public long records() {
        return records;
    }

    public double msr() {
        return msr;
    }

    /** Messages the receiver takes. */
    public int target() {
        return target;
    }

    public int deliveredMessages() {
        return deliveredMessages;
    }

    /** Records in the delivered messages. */
    public long deliveredRecords() {
        return deliveredRecords;
    }

    /** True while fewer than {@link #target} messages were delivered. */
    public boolean belowTarget() {
        return deliveredMessages < target;
    }

    /** True when every message of the share was delivered (the share is known whole). */
    public boolean isWhole() {
        return deliveredMessages == population;
    }

    /** NaN values of column v among all the share's records. */
    public long nan(int v) {
        return nonFinite(v, 0);
    }

    /** +Infinity values of column v among all the share's records. */
    public long positiveInfinities(int v) {
        return nonFinite(v, 1);
    }

    /** -Infinity values of column v among all the share's records. */
    public long negativeInfinities(int v) {
        return nonFinite(v, 2);
    }

    private long nonFinite(int v, int which) {
        return nonFinite == null || nonFinite.length < 3 * (v + 1) ? 0 : nonFinite[3 * v + which];
    }

    /** The sender's exact sum of column v over every record of the share, or null. */
    public ExactSum partial(int v) {
        return partials == null || v >= partials.length ? null : partials[v];
    }

    /** Column v's message totals (null when no aggregate needs them). */
    StratumAccumulator totals(int v) {
        return totals[v];
    }

    /** The exact sum of column v's delivered values when the share is whole, else null. */
    ExactSum wholeSum(int v) {
        return isWhole() ? exact[v] : null;
    }

    /** The kept sampled values of quantile column v (a uniform subsample beyond the cap). */
    public QuantileAccumulator quantileSample(int v) {
        QuantileAccumulator acc = new QuantileAccumulator();
        for (int i = 0; i < quantileKept[v]; i++) {
            acc.add(quantileValues[v][i]);
        }
        return acc;
    }

    /** Sampled quantile values not kept (beyond {@link #QUANTILE_VALUES}), over every column. */
    public long quantileValuesDropped() {
        return quantileDropped;
    }

    /** The per-key record counts of the delivered messages (the null key as {@link #NULL_KEY}). */
    TopKAccumulator<String> topK() {
        return topK;
    }

    @Override
    public String toString() {
        return "ShareSample{"
                + deliveredMessages
                + "/"
                + population
                + " messages (target "
                + target
                + "), "
                + deliveredRecords
                + "/"
                + records
                + " records, msr "
                + msr
                + "}";
    }
}
