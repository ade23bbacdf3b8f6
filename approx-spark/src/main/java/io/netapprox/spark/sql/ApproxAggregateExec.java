package io.netapprox.spark.sql;

import io.netapprox.spark.ApproxQuery;
import io.netapprox.spark.ScalaInterop;
import java.util.Iterator;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

/**
 * Runs a {@code ... WITH ERROR} statement: builds the {@link ApproxQuery} (its statistics pass runs
 * here, when the statement's result is first computed) and returns its rows as Spark SQL rows.
 */
public final class ApproxAggregateExec extends SparkPlan {
    private static final long serialVersionUID = 1L;

    private final transient ApproxSqlQuery query;
    private final Seq<Attribute> output;

    public ApproxAggregateExec(ApproxSqlQuery query, Seq<Attribute> output) {
        this.query = query;
        this.output = output;
    }

    @Override
    public RDD<InternalRow> doExecute() {
        SparkSession session = SparkSession.active();
        return query.approxQuery(session)
                .run()
                .javaRDD()
                .mapPartitions(ApproxAggregateExec::unsafeRows)
                .rdd();
    }

    /** Result rows in Spark's internal format (what SQL operators above this one read). */
    private static Iterator<InternalRow> unsafeRows(Iterator<Row> rows) {
        UnsafeProjection project = UnsafeProjection$.MODULE$.create(ApproxQuery.SCHEMA);
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return rows.hasNext();
            }

            @Override
            public InternalRow next() {
                return project.apply(internal(rows.next()));
            }
        };
    }

    private static InternalRow internal(Row r) {
        Object[] v = new Object[r.length()];
        for (int i = 0; i < v.length; i++) {
            Object x = r.get(i);
            v[i] = x instanceof String s ? UTF8String.fromString(s) : x;
        }
        return new GenericInternalRow(v);
    }

    @Override
    public Seq<Attribute> output() {
        return output;
    }

    @Override
    public Seq<SparkPlan> children() {
        return ScalaInterop.<SparkPlan>emptyList();
    }

    // A leaf: nothing to replace. Two overloads, no @Override: Spark's parameter is Scala's
    // IndexedSeq, scala.collection.IndexedSeq on 2.12 and scala.collection.immutable.IndexedSeq on
    // 2.13; each build implements its own with one of these (the other is an unused overload).
    public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> newChildren) {
        return this;
    }

    public SparkPlan withNewChildrenInternal(scala.collection.IndexedSeq<SparkPlan> newChildren) {
        return this;
    }

    /** The output is made here, not read from children (else Spark sees dangling references). */
    @Override
    public AttributeSet producedAttributes() {
        return outputSet();
    }

    @Override
    public int productArity() {
        return 2;
    }

    @Override
    public Object productElement(int n) {
        return switch (n) {
            case 0 -> query;
            case 1 -> output;
            default -> throw new IndexOutOfBoundsException(n);
        };
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof ApproxAggregateExec;
    }
}
