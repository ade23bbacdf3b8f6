package io.netapprox.spark;

import org.apache.spark.HashPartitioner;

/**
 * A hash partitioner that carries an {@link ApproxSpec}: a shuffle whose dependency uses it is
 * registered as an approximate shuffle by {@link ApproxShuffleManager} (everything else goes to
 * sort shuffle). Under any other shuffle manager it is just a {@link HashPartitioner} and the query
 * is answered exactly.
 */
public final class ApproxPartitioner extends HashPartitioner {
    private static final long serialVersionUID = 1L;
    private final ApproxSpec spec;

    public ApproxPartitioner(int partitions, ApproxSpec spec) {
        super(partitions);
        this.spec = spec;
    }

    public ApproxSpec spec() {
        return spec;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ApproxPartitioner p
                && p.numPartitions() == numPartitions()
                && p.spec == spec;
    }

    @Override
    public int hashCode() {
        return 31 * numPartitions() + System.identityHashCode(spec);
    }
}
