package io.netapprox.spark;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.util.AccumulatorV2;
import scala.Tuple3;

/**
 * Carries the map tasks' share statistics to the driver ({@code planning=shares}): each map task
 * adds, per group of its output, the {@link ShareStatistics} its writer computed while writing the
 * share; the driver reads them after the map stage and plans every group over its map outputs
 * ({@link SamplingPlan}). Keyed by map index: a retried or speculative attempt of the same map
 * output replaces the earlier one's entries. Not shown in the UI (unnamed) and not sent with
 * heartbeats (only with finished tasks).
 */
final class ShareStatisticsAccumulator
        extends AccumulatorV2<
                Tuple3<Integer, String, ShareStatistics>,
                Map<Integer, Map<String, ShareStatistics>>> {
    private static final long serialVersionUID = 1L;

    private Map<Integer, Map<String, ShareStatistics>> byMap = new HashMap<>();

    /** Adds one share's statistics (map task). */
    void add(int mapIndex, String group, ShareStatistics stats) {
        add(new Tuple3<>(mapIndex, group, stats));
    }

    @Override
    public synchronized boolean isZero() {
        return byMap.isEmpty();
    }

    @Override
    public synchronized ShareStatisticsAccumulator copy() {
        ShareStatisticsAccumulator c = new ShareStatisticsAccumulator();
        for (Map.Entry<Integer, Map<String, ShareStatistics>> e : byMap.entrySet()) {
            c.byMap.put(e.getKey(), new HashMap<>(e.getValue()));
        }
        return c;
    }

    @Override
    public synchronized void reset() {
        byMap = new HashMap<>();
    }

    @Override
    public synchronized void add(Tuple3<Integer, String, ShareStatistics> v) {
        byMap.computeIfAbsent(v._1(), k -> new HashMap<>()).put(v._2(), v._3());
    }

    @Override
    public void merge(
            AccumulatorV2<
                            Tuple3<Integer, String, ShareStatistics>,
                            Map<Integer, Map<String, ShareStatistics>>>
                    other) {
        Map<Integer, Map<String, ShareStatistics>> o = other.value();
        synchronized (this) {
            // one map output's statistics come whole from one task attempt: the latest replaces
            byMap.putAll(o);
        }
    }

    @Override
    public synchronized Map<Integer, Map<String, ShareStatistics>> value() {
        return byMap;
    }

    // AccumulatorV2's since Spark 4.0 (absent in 3.5): no @Override, so the Scala 2.12 build
    // against
    // Spark 3.5 compiles; on Spark 4 this still overrides it.
    public boolean excludeFromHeartbeat() {
        return true;
    }

    /** Per group, per map index, its statistics (driver, after the map stage). */
    synchronized Map<String, Map<Integer, ShareStatistics>> byGroup() {
        Map<String, Map<Integer, ShareStatistics>> g = new HashMap<>();
        for (Map.Entry<Integer, Map<String, ShareStatistics>> m : byMap.entrySet()) {
            for (Map.Entry<String, ShareStatistics> s : m.getValue().entrySet()) {
                g.computeIfAbsent(s.getKey(), k -> new HashMap<>()).put(m.getKey(), s.getValue());
            }
        }
        return g;
    }
}
