package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netapprox.core.sampling.AggregateKind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * The exact (sort shuffle) reducer of {@link ApproxQuery#exact()} folds each record into its
 * group's aggregates as it arrives and keeps no record: at production scale a reducer's input is
 * many times an executor's memory (benchmarks/spark/netlab/scale.sh). The records here share one
 * values array that the iterator overwrites for every record, so a reducer that held the records
 * would answer every aggregate from the last record's values.
 */
class ExactReducerTest {
    private static final int RECORDS = 10_000;

    private static ApproxSpec spec() {
        return new ApproxSpec(
                List.of("hour"),
                List.of(
                        new ApproxSpec.Aggregate(AggregateKind.AVG, "distance", 0, 0, 0),
                        new ApproxSpec.Aggregate(AggregateKind.SUM, "fare", 1, 0, 0),
                        new ApproxSpec.Aggregate(AggregateKind.COUNT, null, -1, 0, 0),
                        new ApproxSpec.Aggregate(
                                AggregateKind.QUANTILE,
                                "distance",
                                0,
                                0.5,
                                0,
                                ApproxSpec.QuantileMethod.INTERPOLATED,
                                false),
                        new ApproxSpec.Aggregate(AggregateKind.TOPK, "zone", -1, 0, 2)),
                2,
                0.05,
                Map.of(),
                0.95,
                1,
                false);
    }

    /** Record i of group i % 2: distance i, fare 2i, zone "z" + (i % 5); one reused array. */
    private static Iterator<Object> reusingRecords() {
        double[] shared = new double[2];
        return new Iterator<>() {
            private int i;

            @Override
            public boolean hasNext() {
                return i < RECORDS;
            }

            @Override
            public Object next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                shared[0] = i;
                shared[1] = 2.0 * i;
                Tuple2<String, ApproxRow> t =
                        new Tuple2<>("hour=" + (i % 2), new ApproxRow(shared, "z" + (i % 5)));
                i++;
                return t;
            }
        };
    }

    @Test
    void foldsEachRecordAsItArrives() {
        Map<String, Double> got = new HashMap<>();
        for (Row r : GroupAggregator.aggregate(spec(), reusingRecords())) {
            String rank = r.isNullAt(3) ? "" : "#" + r.getInt(3) + "=" + r.getString(2);
            got.put(r.getString(0) + " " + r.getString(1) + rank, r.getDouble(4));
        }
        for (int g = 0; g < 2; g++) {
            List<Double> d = new ArrayList<>();
            double sum = 0;
            for (int i = g; i < RECORDS; i += 2) {
                d.add((double) i);
                sum += i;
            }
            String k = "hour=" + g + " ";
            assertEquals(sum / d.size(), got.get(k + "avg(distance)"), 1e-9);
            assertEquals(2 * sum, got.get(k + "sum(fare)"), 1e-9);
            assertEquals(d.size(), got.get(k + "count"), 0);
            // Spark's median: the two middle values (5,000 of them) interpolated
            assertEquals(
                    0.5 * d.get(d.size() / 2 - 1) + 0.5 * d.get(d.size() / 2),
                    got.get(k + "median(distance)"),
                    0);
        }
        // hour=0 holds even i: zones z0, z2, z4, z1, z3 in turn, each 1 000 times; ties by name
        assertEquals(1000.0, got.get("hour=0 top2(zone)#1=z0"), 0);
        assertEquals(1000.0, got.get("hour=0 top2(zone)#2=z1"), 0);
    }
}
