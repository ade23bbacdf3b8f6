package io.netapprox.spark;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.storage.BlockManagerId;

/**
 * The calls whose signature differs between Spark 3.5 and 4.x, resolved once by reflection so that
 * one jar runs on both (checked with javap against spark-core/spark-sql 3.5.8 and 4.1.3; everything
 * else the plugin calls has the same descriptor in both):
 *
 * <ul>
 *   <li>{@code MapStatus.apply}: {@code (loc, sizes, mapTaskId)} in 3.5, {@code (loc, sizes,
 *       mapTaskId, checksumVal)} in 4.1+ (SPARK-51756).
 *   <li>{@code Dataset.ofRows(session, plan)}: {@code org.apache.spark.sql.Dataset$} in 3.5, {@code
 *       org.apache.spark.sql.classic.Dataset$} (taking the classic session) in 4.x.
 *   <li>{@code UnresolvedFunction.ignoreNulls()}: {@code boolean} up to 4.1, {@code Option<Object>}
 *       (an {@code Option[Boolean]}: empty unless {@code IGNORE NULLS} or {@code RESPECT NULLS} was
 *       written) in 4.2 (checked with javap against spark-catalyst 4.2.0; found by
 *       approx-spark-compat-42: NoSuchMethodError on every WITH ERROR query).
 * </ul>
 *
 * Netty (4.1 in Spark 3.5, 4.2 in 4.1) is handled in approx-core ({@code NioEventLoops}). Public
 * for the SQL extension's package only; not an API.
 */
public final class SparkCompat {
    private static final MethodHandle MAP_STATUS = mapStatusFactory();
    private static final boolean MAP_STATUS_HAS_CHECKSUM =
            MAP_STATUS.type().parameterCount() == 5; // receiver + 4

    private SparkCompat() {}

    /** The Spark version this JVM runs, e.g. "3.5.8". */
    public static String sparkVersion() {
        return org.apache.spark.package$.MODULE$.SPARK_VERSION();
    }

    /**
     * A map task's status (no checksum: 0 where 4.x takes one, as sort shuffle without checksums).
     */
    static MapStatus mapStatus(BlockManagerId loc, long[] sizes, long mapTaskId) {
        try {
            return (MapStatus)
                    (MAP_STATUS_HAS_CHECKSUM
                            ? MAP_STATUS.invoke(MapStatus$.MODULE$, loc, sizes, mapTaskId, 0L)
                            : MAP_STATUS.invoke(MapStatus$.MODULE$, loc, sizes, mapTaskId));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static MethodHandle mapStatusFactory() {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        try {
            return lookup.findVirtual(
                    MapStatus$.class,
                    "apply",
                    MethodType.methodType(
                            MapStatus.class,
                            BlockManagerId.class,
                            long[].class,
                            long.class,
                            long.class));
        } catch (NoSuchMethodException | IllegalAccessException e4) {
            try {
                return lookup.findVirtual(
                        MapStatus$.class,
                        "apply",
                        MethodType.methodType(
                                MapStatus.class, BlockManagerId.class, long[].class, long.class));
            } catch (NoSuchMethodException | IllegalAccessException e3) {
                e3.addSuppressed(e4);
                throw new IllegalStateException(
                        "unsupported Spark " + sparkVersion() + ": no MapStatus.apply found", e3);
            }
        }
    }

    /**
     * Whether a function call was written with {@code IGNORE NULLS} ({@code RESPECT NULLS} and no
     * clause: false), on every Spark line.
     */
    public static boolean ignoreNulls(UnresolvedFunction f) {
        Object v;
        try {
            v = IGNORE_NULLS.invoke(f);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (v instanceof Boolean b) {
            return b; // Spark <= 4.1
        }
        if (v instanceof scala.Option<?> o) {
            return o.isDefined() && Boolean.TRUE.equals(o.get()); // Spark 4.2+
        }
        throw new IllegalStateException(
                "unsupported Spark "
                        + sparkVersion()
                        + ": UnresolvedFunction.ignoreNulls() returned "
                        + (v == null ? "null" : v.getClass().getName()));
    }

    private static final MethodHandle IGNORE_NULLS = ignoreNullsAccessor();

    private static MethodHandle ignoreNullsAccessor() {
        try {
            java.lang.reflect.Method m = UnresolvedFunction.class.getMethod("ignoreNulls");
            return MethodHandles.publicLookup()
                    .unreflect(m)
                    .asType(MethodType.methodType(Object.class, UnresolvedFunction.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new IllegalStateException(
                    "unsupported Spark " + sparkVersion() + ": no UnresolvedFunction.ignoreNulls()",
                    e);
        }
    }

    /** A DataFrame over a logical plan (analysed when created, as {@code spark.sql} does). */
    @SuppressWarnings("unchecked")
    public static Dataset<Row> dataFrame(SparkSession session, LogicalPlan plan) {
        try {
            return (Dataset<Row>) OfRows.HANDLE.invoke(OfRows.MODULE, session, plan);
        } catch (Throwable t) {
            throw SparkCompat.<RuntimeException>sneaky(
                    t); // e.g. AnalysisException, as Spark throws it
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /** {@code Dataset.ofRows}, looked up when first used (SQL only). */
    private static final class OfRows {
        static final Object MODULE;
        static final MethodHandle HANDLE;

        static {
            Object module = null;
            MethodHandle handle = null;
            for (String name :
                    new String[] {
                        "org.apache.spark.sql.classic.Dataset$", "org.apache.spark.sql.Dataset$"
                    }) {
                try {
                    Class<?> c = Class.forName(name, true, SparkCompat.class.getClassLoader());
                    for (java.lang.reflect.Method m : c.getMethods()) {
                        if (m.getName().equals("ofRows")
                                && m.getParameterCount() == 2
                                && m.getParameterTypes()[1] == LogicalPlan.class
                                && SparkSession.class.isAssignableFrom(m.getParameterTypes()[0])) {
                            module = c.getField("MODULE$").get(null);
                            handle = MethodHandles.publicLookup().unreflect(m);
                            break;
                        }
                    }
                } catch (ReflectiveOperationException e) {
                    // not this Spark version's layout
                }
                if (handle != null) {
                    break;
                }
            }
            if (handle == null) {
                throw new IllegalStateException(
                        "unsupported Spark " + sparkVersion() + ": no Dataset.ofRows found");
            }
            MODULE = module;
            HANDLE = handle;
        }
    }
}
