package io.netapprox.spark.sql;

import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/** Plans {@link ApproxAggregate} (and nothing else). */
public final class ApproxStrategy extends SparkStrategy {
    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
        if (plan instanceof ApproxAggregate a) {
            return CollectionConverters.asScala(
                            List.<SparkPlan>of(new ApproxAggregateExec(a.query(), a.output())))
                    .toList();
        }
        return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
    }
}
