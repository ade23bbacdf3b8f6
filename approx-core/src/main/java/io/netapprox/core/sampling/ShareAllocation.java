package io.netapprox.core.sampling;

import java.util.Arrays;

/**
 * How many messages each share of a group must deliver ({@link SharePlanner}), in the order the
 * shares were given. A share's MSR is {@link #rate(int)}: ATP's guarantee {@code ceil(MSR * N_m)}
 * is then exactly the planned number.
 */
public final class ShareAllocation {

    private final long[] units;
    private final long[] populationUnits;
    private final double criticalValue;

    ShareAllocation(long[] units, long[] populationUnits, double criticalValue) {
        if (units.length != populationUnits.length) {
            throw new IllegalArgumentException("one planned size per share");
        }
        for (int m = 0; m < units.length; m++) {
            if (units[m] < 0 || units[m] > populationUnits[m]) {
                throw new IllegalArgumentException(
                        "share " + m + ": " + units[m] + " of " + populationUnits[m] + " messages");
            }
        }
        this.units = units.clone();
        this.populationUnits = populationUnits.clone();
        this.criticalValue = criticalValue;
    }

    /**
     * @param populationUnits messages per share
     * @return every share delivered whole
     */
    public static ShareAllocation census(long[] populationUnits) {
        return new ShareAllocation(populationUnits, populationUnits, Double.NaN);
    }

    /**
     * @return the number of shares.
     */
    public int shares() {
        return units.length;
    }

    /**
     * @return messages share {@code m} must deliver.
     */
    public long units(int m) {
        return units[m];
    }

    /**
     * @return messages share {@code m} has.
     */
    public long populationUnits(int m) {
        return populationUnits[m];
    }

    /**
     * @return the MSR of share {@code m}: the largest rate {@code r} with {@code ceil(r * N_m)} the
     *     planned size.
     */
    public double rate(int m) {
        if (populationUnits[m] == 0) {
            return 1.0;
        }
        return MsrPlanner.rateFor(Math.max(1, units[m]), populationUnits[m]);
    }

    /**
     * @return messages planned over all shares.
     */
    public long totalUnits() {
        long t = 0;
        for (long u : units) {
            t += u;
        }
        return t;
    }

    /**
     * @return the critical value the plan used (NaN when none was needed, e.g. a census).
     */
    public double criticalValue() {
        return criticalValue;
    }

    /**
     * @param other a plan of the same shares (e.g. for another aggregate of the group)
     * @return per share the larger of the two sizes: meets both plans' requirements (each
     *     aggregate's variance only shrinks when a share delivers more)
     */
    public ShareAllocation max(ShareAllocation other) {
        if (other.units.length != units.length
                || !Arrays.equals(other.populationUnits, populationUnits)) {
            throw new IllegalArgumentException("plans of different shares cannot be combined");
        }
        long[] u = new long[units.length];
        for (int m = 0; m < u.length; m++) {
            u[m] = Math.max(units[m], other.units[m]);
        }
        double c =
                Double.isNaN(criticalValue)
                        ? other.criticalValue
                        : Double.isNaN(other.criticalValue)
                                ? criticalValue
                                : Math.max(criticalValue, other.criticalValue);
        return new ShareAllocation(u, populationUnits, c);
    }

    @Override
    public String toString() {
        return "ShareAllocation{units="
                + Arrays.toString(units)
                + " of "
                + Arrays.toString(populationUnits)
                + "}";
    }
}
