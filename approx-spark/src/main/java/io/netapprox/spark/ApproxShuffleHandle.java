package io.netapprox.spark;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * The handle of an approximate shuffle: Spark's base handle plus the frozen {@link ApproxSpec} and
 * the number of map tasks (the dependency's RDD does not travel to the executors).
 */
public final class ApproxShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
    private static final long serialVersionUID = 1L;
    private final ApproxSpec spec;
    private final int mapTasks;

    /** Created on the driver. */
    public ApproxShuffleHandle(
            int shuffleId, ShuffleDependency<K, V, C> dependency, ApproxSpec spec) {
        super(shuffleId, dependency);
        this.spec = spec;
        this.mapTasks = dependency.rdd().getNumPartitions();
    }

    /** The map tasks (map outputs) of the shuffle. */
    public int mapTasks() {
        return mapTasks;
    }

    public ApproxSpec spec() {
        return spec;
    }
}
