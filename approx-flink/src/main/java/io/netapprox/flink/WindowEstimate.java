package io.netapprox.flink;

import java.util.Objects;

/**
 * One answer of an approximate query: the estimate of one aggregate of one group in one window,
 * with its confidence interval. A Flink POJO (public fields, no-argument constructor). With the
 * flag off ({@code approx.enabled=false}) every answer is exact: {@code approximate=false} and
 * {@code low = estimate = high}. Top-k answers come one per rank with the {@code key} and its
 * {@code rank} (else {@code key} is null and {@code rank} 0).
 */
public class WindowEstimate {
    /** Window start (inclusive) and end (exclusive), epoch milliseconds of event time. */
    public long windowStart;

    public long windowEnd;

    /** The group (stratum) key, as {@code String.valueOf(key)}. */
    public String group;

    /** The aggregate's label, e.g. {@code avg(fare)}. */
    public String aggregate;

    /** Top-k only: the key at this rank, else null. */
    public String key;

    /** Top-k only: the rank (1 = most frequent), else 0. */
    public int rank;

    public double estimate;
    public double low;
    public double high;
    public double confidence;

    /** The relative error bound requested for this group ({@code e_max}). */
    public double eMax;

    /** Records the answer is computed from. */
    public long sampleRecords;

    /** Records the group has in this window. */
    public long populationRecords;

    /** False when computed exactly (flag off). */
    public boolean approximate;

    public WindowEstimate() {}

    /** The relative error of {@code estimate} against {@code truth} (absolute when truth is 0). */
    public double relativeError(double truth) {
        return truth == 0 ? Math.abs(estimate) : Math.abs(estimate - truth) / Math.abs(truth);
    }

    /**
     * True when {@code truth} lies in {@code [low, high]}, up to a relative 1e-9: a complete
     * group's interval has zero width, and its estimate can differ from a value summed in another
     * order in the last bits.
     */
    public boolean covers(double truth) {
        double slack = 1e-9 * Math.abs(truth);
        return low - slack <= truth && truth <= high + slack;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof WindowEstimate w)) {
            return false;
        }
        return windowStart == w.windowStart
                && windowEnd == w.windowEnd
                && rank == w.rank
                && Double.compare(estimate, w.estimate) == 0
                && Double.compare(low, w.low) == 0
                && Double.compare(high, w.high) == 0
                && Double.compare(confidence, w.confidence) == 0
                && Double.compare(eMax, w.eMax) == 0
                && sampleRecords == w.sampleRecords
                && populationRecords == w.populationRecords
                && approximate == w.approximate
                && Objects.equals(group, w.group)
                && Objects.equals(aggregate, w.aggregate)
                && Objects.equals(key, w.key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(windowStart, windowEnd, group, aggregate, key, rank, estimate);
    }

    @Override
    public String toString() {
        return "WindowEstimate{["
                + windowStart
                + ","
                + windowEnd
                + ") "
                + group
                + " "
                + aggregate
                + (rank == 0 ? "" : " #" + rank + " " + key)
                + " = "
                + estimate
                + " ["
                + low
                + ", "
                + high
                + "] @"
                + confidence
                + " e_max="
                + eMax
                + " sample="
                + sampleRecords
                + "/"
                + populationRecords
                + (approximate ? " approximate" : " exact")
                + "}";
    }
}
