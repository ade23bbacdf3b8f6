package io.netapprox.spark;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/** The handle of an approximate shuffle: Spark's base handle plus the frozen {@link ApproxSpec}. */
public final class ApproxShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
    private static final long serialVersionUID = 1L;
    private final ApproxSpec spec;

    /** Created on the driver. */
    public ApproxShuffleHandle(
            int shuffleId, ShuffleDependency<K, V, C> dependency, ApproxSpec spec) {
        super(shuffleId, dependency);
        this.spec = spec;
    }

    public ApproxSpec spec() {
        return spec;
    }
}
