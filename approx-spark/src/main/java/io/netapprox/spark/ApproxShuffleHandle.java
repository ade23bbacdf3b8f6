package io.netapprox.spark;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/** The handle of an approximate shuffle: Spark's base handle plus the frozen {@link ApproxSpec}. */
public final class ApproxShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
    private static final long serialVersionUID = 1L;
    private final ApproxSpec spec;
    private final int numMaps;

    /**
     * Created on the driver: the dependency's RDD (transient on executors) gives the number of map
     * outputs.
     */
    public ApproxShuffleHandle(
            int shuffleId, ShuffleDependency<K, V, C> dependency, ApproxSpec spec) {
        super(shuffleId, dependency);
        this.spec = spec;
        this.numMaps = dependency.rdd().getNumPartitions();
    }

    /** Map outputs of the shuffle (M of the balanced planning). */
    public int numMaps() {
        return numMaps;
    }

    public ApproxSpec spec() {
        return spec;
    }
}
