package io.netapprox.examples.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkEnv;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.RDDBlockId;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Where the blocks of a cached input live: per executor, how many of its partitions the driver's
 * block manager master knows on that executor. Tasks over a cached input prefer the executor
 * holding their partition (process-local, {@code spark.locality.wait}), so the layout decides where
 * every map task of a benchmark runs; an input cached 7:1 runs almost every task on one executor
 * (docs/spark-netlab.md). {@link #cacheEvenly} re-caches an uneven input a bounded number of times.
 * The API used ({@code BlockManagerMaster.getLocations(BlockId[])}, {@code
 * SparkContext.getPersistentRDDs}, {@code getExecutorIds}) is the same in Spark 3.5.8 and 4.1.3.
 */
final class InputLayout {
    /** Cached partitions per executor, by executor id (every registered executor, 0 included). */
    final Map<String, Integer> perExecutor;

    /** Partitions of the cached RDD that no executor holds (not cached or evicted). */
    final int uncached;

    /** How many times the input was unpersisted and cached again to even it out. */
    final int recached;

    /** yes / no (still uneven after the retries) / unchecked (balancing turned off). */
    final String balanced;

    /** The layout of the first caching (before any re-caching). */
    final String first;

    InputLayout(
            Map<String, Integer> perExecutor,
            int uncached,
            int recached,
            String balanced,
            String first) {
        this.perExecutor = perExecutor;
        this.uncached = uncached;
        this.recached = recached;
        this.balanced = balanced;
        this.first = first == null ? layout() : first;
    }

    /**
     * True when every partition is cached and the executors' counts differ by at most one (any
     * layout is even with a single executor).
     */
    static boolean isEven(Map<String, Integer> perExecutor, int uncached) {
        if (uncached > 0) {
            return false;
        }
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        for (int n : perExecutor.values()) {
            min = Math.min(min, n);
            max = Math.max(max, n);
        }
        return perExecutor.size() <= 1 || max - min <= 1;
    }

    /** "4:4" (executors in id order), with "+2uncached" when partitions are not cached anywhere. */
    String layout() {
        List<String> v = new ArrayList<>();
        perExecutor.values().forEach(n -> v.add(Integer.toString(n)));
        return String.join(":", v) + (uncached > 0 ? "+" + uncached + "uncached" : "");
    }

    /** {@code key=value} fields for a RESULT line. */
    String fields() {
        return "input_layout="
                + layout()
                + " input_executors="
                + String.join(",", perExecutor.keySet())
                + " input_recached="
                + recached
                + " input_first_layout="
                + first
                + " input_balanced="
                + balanced;
    }

    /** The newest persisted RDD of the application (the last {@code cache()} + action). */
    static RDD<?> newestCached(SparkSession spark) {
        RDD<?> newest = null;
        for (Map.Entry<Object, RDD<?>> e :
                CollectionConverters.asJava(spark.sparkContext().getPersistentRDDs()).entrySet()) {
            if (newest == null || e.getValue().id() > newest.id()) {
                newest = e.getValue();
            }
        }
        if (newest == null) {
            throw new IllegalStateException("no cached RDD");
        }
        return newest;
    }

    /** Counts of the cached partitions of {@code rdd} per registered executor. */
    static InputLayout of(SparkSession spark, RDD<?> rdd, int recached, String balanced) {
        Map<String, Integer> per =
                new TreeMap<>(
                        (x, y) -> {
                            try {
                                return Long.compare(Long.parseLong(x), Long.parseLong(y));
                            } catch (NumberFormatException e) {
                                return x.compareTo(y);
                            }
                        });
        for (String id : CollectionConverters.asJava(spark.sparkContext().getExecutorIds())) {
            per.put(id, 0);
        }
        int n = rdd.getNumPartitions();
        BlockId[] ids = new BlockId[n];
        for (int p = 0; p < n; p++) {
            ids[p] = new RDDBlockId(rdd.id(), p);
        }
        int uncached = 0;
        List<scala.collection.immutable.Seq<BlockManagerId>> locs =
                CollectionConverters.asJava(
                        SparkEnv.get().blockManager().master().getLocations(ids));
        for (scala.collection.immutable.Seq<BlockManagerId> l : locs) {
            if (l.isEmpty()) {
                uncached++;
            } else {
                // one copy per block at the default storage level; a replicated block counts once,
                // at
                // its first holder
                per.merge(l.head().executorId(), 1, Integer::sum);
            }
        }
        return new InputLayout(per, uncached, recached, balanced, null);
    }

    /**
     * Caches {@code d} (if not already) and, when {@code retries} > 0, unpersists and caches it
     * again while its partitions are not spread evenly (beyond +-1) across the executors, at most
     * {@code retries} times; an input still uneven after that is used anyway (balanced=no).
     */
    static InputLayout cacheEvenly(SparkSession spark, Dataset<Row> d, int retries) {
        d.cache();
        d.count();
        InputLayout l = of(spark, newestCached(spark), 0, retries > 0 ? "yes" : "unchecked");
        String first = l.layout();
        for (int i = 1; retries > 0 && !isEven(l.perExecutor, l.uncached); i++) {
            if (i > retries) {
                return new InputLayout(l.perExecutor, l.uncached, retries, "no", first);
            }
            System.err.printf(
                    "input layout %s uneven: caching again (%d of %d)%n", l.layout(), i, retries);
            d.unpersist(true);
            d.cache();
            d.count();
            InputLayout n = of(spark, newestCached(spark), i, "yes");
            l = new InputLayout(n.perExecutor, n.uncached, i, "yes", first);
        }
        return l;
    }
}
