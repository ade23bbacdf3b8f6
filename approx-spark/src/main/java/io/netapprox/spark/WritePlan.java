package io.netapprox.spark;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

/**
 * Records each map output writes of each of its groups when an approximate shuffle's map stage is
 * re-run because its first output was short of the plan ({@code spark.approx.mapSampleRepair}): the
 * driver knows every share's census statistics after the first map stage, so it knows what the plan
 * asks of each share and sizes the second write by it, with a margin for the re-plan of the second
 * output (the same census, messages cut again). Which records are written is drawn afresh by the
 * map task (a random prefix of its pre-sample); how many depends on census statistics only, so the
 * written records are still a simple random sample of the share given their number.
 */
final class WritePlan implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * Margin over the planned fraction of a share's records: the re-plan sees the same census but
     * messages cut from a different number of written records (their average size, so the share's
     * N_g, may differ by a record per message); with one message more on top.
     */
    static final double MARGIN = 1.25;

    /** Per group, per map index: records to write (at most the pre-sample). */
    private final Map<String, Map<Integer, Long>> records = new HashMap<>();

    /**
     * @return the records to write of the group's share in map output {@code mapIndex}, or -1 when
     *     the first map stage did not see that share (non-deterministic input: the writer sizes it
     *     as it would without a plan)
     */
    long records(String group, int mapIndex) {
        Map<Integer, Long> g = records.get(group);
        if (g == null) {
            return -1;
        }
        Long r = g.get(mapIndex);
        return r == null ? -1 : r;
    }

    /**
     * What the plan asks of every share, with the margin: {@code ceil(MARGIN * planned / units *
     * records) + recordsPerMessage} records; every kept record where that is about half the share
     * or more ({@code 2 (ceil(MARGIN * planned) + 1) >= units}).
     */
    static WritePlan of(
            Map<String, Map<Integer, ShareStatistics>> shares,
            SamplingPlan plan,
            int recordsPerMessage) {
        WritePlan w = new WritePlan();
        for (Map.Entry<String, Map<Integer, ShareStatistics>> g : shares.entrySet()) {
            Map<Integer, Long> m = new HashMap<>();
            for (Map.Entry<Integer, ShareStatistics> e : g.getValue().entrySet()) {
                ShareStatistics s = e.getValue();
                long planned = planned(plan, g.getKey(), e.getKey(), s);
                long r;
                if (planned < 0 || 2 * ((long) Math.ceil(MARGIN * planned) + 1) >= s.units) {
                    // not planned, or at least about half the share: everything kept. A share of
                    // few messages is re-planned from messages cut differently (their average
                    // size sets N_g), and at a handful of messages the plan (Student t at few
                    // degrees of freedom, the 2-message minimum) moves by more than the margin
                    r = Long.MAX_VALUE;
                } else {
                    double frac = (double) planned / Math.max(1, s.units);
                    r = (long) Math.ceil(MARGIN * frac * s.records) + recordsPerMessage;
                }
                m.put(e.getKey(), r);
            }
            w.records.put(g.getKey(), m);
        }
        return w;
    }

    /** Messages the plan asks of a share, or -1 when the plan has no rate for it. */
    static long planned(SamplingPlan plan, String group, int mapIndex, ShareStatistics s) {
        double rate = plan.rate(group, mapIndex);
        if (Double.isNaN(rate)) {
            return -1;
        }
        return io.netapprox.core.job.Target.of(rate, s.units);
    }

    /** True when the plan asks a written share for more messages than its map output wrote. */
    static boolean isShort(SamplingPlan plan, String group, int mapIndex, ShareStatistics s) {
        return s.written >= 0 && planned(plan, group, mapIndex, s) > s.written;
    }

    /**
     * Up to {@code max} short shares, described (group, map index, planned, written, N_g, records).
     */
    static java.util.List<String> describeShort(
            Map<String, Map<Integer, ShareStatistics>> shares, SamplingPlan plan, int max) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (Map.Entry<String, Map<Integer, ShareStatistics>> g : shares.entrySet()) {
            for (Map.Entry<Integer, ShareStatistics> e : g.getValue().entrySet()) {
                ShareStatistics s = e.getValue();
                if (isShort(plan, g.getKey(), e.getKey(), s) && out.size() < max) {
                    long p = planned(plan, g.getKey(), e.getKey(), s);
                    out.add(
                            g.getKey()
                                    + "@map"
                                    + e.getKey()
                                    + ": planned "
                                    + p
                                    + " written "
                                    + s.written
                                    + " of N_g "
                                    + s.units
                                    + " ("
                                    + s.records
                                    + " records)");
                }
            }
        }
        return out;
    }

    /**
     * Shares whose planned messages exceed what their map output wrote (the reducers would be short
     * of plan there).
     */
    static int shortShares(Map<String, Map<Integer, ShareStatistics>> shares, SamplingPlan plan) {
        int n = 0;
        for (Map.Entry<String, Map<Integer, ShareStatistics>> g : shares.entrySet()) {
            for (Map.Entry<Integer, ShareStatistics> e : g.getValue().entrySet()) {
                if (isShort(plan, g.getKey(), e.getKey(), e.getValue())) {
                    n++;
                }
            }
        }
        return n;
    }
}
