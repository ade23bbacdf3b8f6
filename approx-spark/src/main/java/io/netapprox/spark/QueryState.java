package io.netapprox.spark;

import java.io.Serializable;
import org.apache.spark.broadcast.Broadcast;

/**
 * What the driver attaches to an approximate query's spec once its shuffle exists: the statistics
 * accumulator the map tasks fill ({@code planning=shares}) and the shuffle's metrics, then - after
 * the map stage, before the reduce stage is submitted - the plan. Each is set once, on the driver;
 * tasks see the values as they were when their stage was submitted (the map stage's tasks carry no
 * plan and need none: the reducers apply it).
 */
final class QueryState implements Serializable {
    private static final long serialVersionUID = 1L;

    private ShareStatisticsAccumulator statistics;
    private ApproxShuffleMetrics metrics;
    private Broadcast<SamplingPlan> plan;
    private boolean instrumented;
    private Broadcast<WritePlan> writePlan;
    private boolean wholeGroupSizing;

    synchronized void instrument(ShareStatisticsAccumulator s, ApproxShuffleMetrics m) {
        if (instrumented) {
            throw new IllegalStateException("query state already instrumented");
        }
        instrumented = true;
        this.statistics = s;
        this.metrics = m;
    }

    synchronized void plan(Broadcast<SamplingPlan> p) {
        if (plan != null) {
            throw new IllegalStateException("query already planned");
        }
        this.plan = p;
    }

    /**
     * What each map output writes of each group, when the map stage is re-run sized by a plan (set
     * before that map stage is submitted).
     */
    synchronized void writePlan(Broadcast<WritePlan> w) {
        if (writePlan != null) {
            throw new IllegalStateException("write plan already set");
        }
        this.writePlan = w;
    }

    synchronized WritePlan writePlan() {
        return writePlan == null ? null : writePlan.value();
    }

    /**
     * Size each share as if it were the whole group in this query, whatever {@code mapSampleSpread}
     * says (set before the map stage: the driver saw this input short under the spread sizing).
     */
    synchronized void wholeGroupSizing(boolean on) {
        this.wholeGroupSizing = on;
    }

    synchronized boolean wholeGroupSizing() {
        return wholeGroupSizing;
    }

    synchronized ShareStatisticsAccumulator statistics() {
        return statistics;
    }

    synchronized ApproxShuffleMetrics metrics() {
        return metrics;
    }

    synchronized SamplingPlan plan() {
        return plan == null ? null : plan.value();
    }
}
