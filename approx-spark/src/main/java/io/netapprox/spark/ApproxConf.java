package io.netapprox.spark;

import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.OptionValues;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.io.Serializable;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The {@code spark.approx.*} configuration of {@link ApproxShuffleManager}, parsed and validated
 * once (on the driver when the SparkContext starts, on executors when the shuffle manager is
 * created). Every bad value fails with approx-core's {@link
 * io.netapprox.core.transport.InvalidOptionException} naming the key, the value and what is
 * accepted.
 */
public final class ApproxConf implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String PREFIX = "spark.approx.";

    /**
     * Spark's own keys: key, default, description (the README's rows of these keys say the same).
     * The transport keys ({@code bindAddress}, {@code dataPlane}, {@code lineRateBps}, ...) are
     * approx-core's {@link TransportOptions} in {@link Style#SPARK}; their rows are generated.
     */
    public static final Map<String, String[]> KEYS;

    static {
        Map<String, String[]> k = new LinkedHashMap<>();
        k.put(
                "enabled",
                new String[] {
                    "true",
                    "false: every shuffle, also approximate queries, goes to sort shuffle (exact answers)"
                });
        k.put(
                "confidence",
                new String[] {"0.95", "default confidence of approximate queries, in (0,1)"});
        k.put(
                "recordsPerMessage",
                new String[] {"32", "records framed into one ATP message (the sampling unit)"});
        k.put(
                "mapSampleRecords",
                new String[] {
                    "8192",
                    "map-side pre-sample cap: each map output keeps a uniform sample of between this many and about twice this many records of every group (all of a smaller group) and writes at most that (what it writes is sized by mapSampleFactor); 0 = no cap (every record kept, mapSampleFactor still applies)"
                });
        k.put(
                "mapSampleFactor",
                new String[] {
                    "2",
                    "map-side pre-sample size: each map output writes this many times the records the plan could ask of its share of a group - as if the share were the whole group (an upper bound for any split of alike-distributed data), or with mapSampleSpread as if the group were spread alike over every map output - at least 2 messages, at most the pre-sample (mapSampleRecords); 0 = write the whole pre-sample"
                });
        k.put(
                "mapSampleSpread",
                new String[] {
                    "true",
                    "true: size the map-side pre-sample for groups spread alike over every map output: about M (map tasks) times less written than false (each share sized as if it were the whole group); a group held by fewer map outputs (input partitioned or sorted by the group key) is then short of plan after the map stage, which mapSampleRepair re-runs sized by the plan (without the repair such groups are counted short of plan); planning=local ignores it"
                });
        k.put(
                "mapSampleRepair",
                new String[] {
                    "true",
                    "true (planning=shares): when the plan asks a map output for more of a group than it wrote (a group held by fewer map outputs than mapSampleSpread assumed, shares of different distributions, a skewness floor), the map stage runs again once, each map output writing what the plan now asks of it (with a margin), so no group is short of plan; false: keep the first map output and count such groups as short of plan"
                });
        k.put(
                "exactPartials",
                new String[] {
                    "true",
                    "true: every map output sends each avg/sum column's exact partial (its exact sum over every record) with its group table, so avg, sum and count are exact and only quantiles and top-k are sampled; false: avg and sum are estimated from the sample (ApproxQuery.exactPartials overrides per query)"
                });
        k.put(
                "planning",
                new String[] {
                    "shares",
                    "shares: a statistics pass over the input gives every map output's share of every group, and each group's sample is allocated over its map outputs so that e_max holds for any split; local: no pass, each map output plans its share as if it held the whole group (any split for sums/averages of same-sign data, more samples)"
                });
        k.put(
                "submit",
                new String[] {
                    "all",
                    "all: map side submits every message, ATP stops when each group has its target; target: submit only ceil(MSR*N) messages per group"
                });
        k.put(
                "fetchTimeoutMs",
                new String[] {
                    "120000",
                    "a reducer's pull from one map output fails (FetchFailedException) after this long"
                });
        k.put(
                "within",
                new String[] {
                    "(none)",
                    "default time bound of approximate queries (SQL WITHIN, ApproxQuery.within), e.g. 2s or 500ms: each reduce task answers from what arrived this long after it starts fetching; settable per session (SET spark.approx.within=2s)"
                });
        k.put(
                "behavior",
                new String[] {
                    "answer",
                    "default for groups that miss their error bound (SQL BEHAVIOR, ApproxQuery.behavior): answer (answer and flag them in bound_met) or fail (the query fails naming them); settable per session"
                });
        KEYS = Collections.unmodifiableMap(k);
    }

    public enum Submit {
        ALL,
        TARGET
    }

    public enum Planning {
        SHARES,
        LOCAL
    }

    private final boolean enabled;
    private final boolean exactPartials;
    private final TransportOptions transport;
    private final double confidence;
    private final int recordsPerMessage;
    private final long mapSampleRecords;
    private final double mapSampleFactor;
    private final boolean mapSampleSpread;
    private final boolean mapSampleRepair;
    private final Submit submit;
    private final Planning planning;
    private final long fetchTimeoutMs;

    private ApproxConf(Map<String, String> all) {
        Map<String, String> c = new LinkedHashMap<>();
        Set<String> unknown = new TreeSet<>();
        for (Map.Entry<String, String> e : all.entrySet()) {
            if (e.getKey().startsWith(PREFIX)) {
                String k = e.getKey().substring(PREFIX.length());
                if (!KEYS.containsKey(k) && !TransportOptions.isKey(Style.SPARK, e.getKey())) {
                    unknown.add(e.getKey());
                }
                c.put(k, e.getValue().trim());
            }
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(
                    "unknown NetApprox configuration key(s) "
                            + unknown
                            + "; known keys: "
                            + PREFIX
                            + "{"
                            + String.join(", ", KEYS.keySet())
                            + ", "
                            + TransportOptions.keys(Style.SPARK).stream()
                                    .map(t -> t.substring(PREFIX.length()))
                                    .collect(Collectors.joining(", "))
                            + "}");
        }
        enabled = bool(c, "enabled", true);
        exactPartials = bool(c, "exactPartials", true);
        // every transport key: approx-core's one definition (values trimmed there)
        transport = TransportOptions.parse(Style.SPARK, all);
        confidence = number(c, "confidence", "0.95", 0, true, 1, true);
        recordsPerMessage = (int) integer(c, "recordsPerMessage", 32, 1, 1 << 16);
        mapSampleRecords = integer(c, "mapSampleRecords", 8192, 0, 1L << 40);
        mapSampleFactor = number(c, "mapSampleFactor", "2", 0, false, 1e6, false);
        OptionValues.check(
                mapSampleFactor == 0 || mapSampleFactor >= 1,
                PREFIX + "mapSampleFactor",
                c.get("mapSampleFactor"),
                "0 (write the whole pre-sample) or a number in [1, 1e6], e.g. 2");
        mapSampleSpread = bool(c, "mapSampleSpread", true);
        mapSampleRepair = bool(c, "mapSampleRepair", true);
        submit = choice(c, "submit", "all", Submit.class, "all or target");
        planning =
                choice(
                        c,
                        "planning",
                        "shares",
                        Planning.class,
                        "shares or local (balanced was removed: it missed e_max when a group sits in"
                                + " few map outputs; conservative is now local)");
        fetchTimeoutMs = integer(c, "fetchTimeoutMs", 120_000, 100, 24L * 3600 * 1000);
        within(c.get("within"));
        behavior(c.get("behavior"));
    }

    /**
     * Parses and validates {@code spark.approx.*} entries of {@code conf} (other keys are ignored).
     */
    public static ApproxConf parse(Map<String, String> conf) {
        return new ApproxConf(conf);
    }

    public static ApproxConf fromSpark(org.apache.spark.SparkConf conf) {
        Map<String, String> m = new LinkedHashMap<>();
        for (scala.Tuple2<String, String> t : conf.getAllWithPrefix(PREFIX)) {
            m.put(PREFIX + t._1(), t._2());
        }
        return parse(m);
    }

    // Spark's own keys, parsed by approx-core's one value parser (the same messages as the
    // transport keys')

    private static boolean bool(Map<String, String> c, String k, boolean def) {
        String v = c.get(k);
        return v == null ? def : OptionValues.bool(PREFIX + k, v);
    }

    private static long integer(Map<String, String> c, String k, long def, long lo, long hi) {
        String v = c.get(k);
        return v == null ? def : OptionValues.integer(PREFIX + k, v, lo, hi);
    }

    private static double number(
            Map<String, String> c,
            String k,
            String def,
            double lo,
            boolean loOpen,
            double hi,
            boolean hiOpen) {
        return OptionValues.number(PREFIX + k, c.getOrDefault(k, def), lo, loOpen, hi, hiOpen);
    }

    private static <E extends Enum<E>> E choice(
            Map<String, String> c, String k, String def, Class<E> type, String expected) {
        return OptionValues.choice(PREFIX + k, c.getOrDefault(k, def), type, expected);
    }

    /**
     * The transport configuration of one executor's engine, bound to {@code host} unless
     * bindAddress is set. A pull's control requests and its transfer report wait as long as the
     * pull may take ({@code fetchTimeoutMs}, at least 10 s).
     */
    public ApproxTransportConfig transportConfig(String host) {
        Duration request = Duration.ofMillis(Math.max(10_000, fetchTimeoutMs));
        return transport.toConfig(
                new TransportOptions.Context()
                        .defaultHost(host)
                        .requestTimeout(request)
                        .reportTimeout(request));
    }

    /** The transport options ({@code spark.approx.dataPlane}, {@code lineRateBps}, ...). */
    public TransportOptions transport() {
        return transport;
    }

    public boolean enabled() {
        return enabled;
    }

    /** Default of {@link ApproxQuery#exactPartials(boolean)}. */
    public boolean exactPartials() {
        return exactPartials;
    }

    public double confidence() {
        return confidence;
    }

    public int recordsPerMessage() {
        return recordsPerMessage;
    }

    /**
     * Records of each group a map output keeps at least (a uniform sample of between this and about
     * twice this many; every record of a smaller group) and writes at most; 0: every record.
     */
    public long mapSampleRecords() {
        return mapSampleRecords;
    }

    /**
     * How many times what the plan can ask of a share a map output writes (see {@link
     * ApproxShuffleWriter}); 0: the whole pre-sample.
     */
    public double mapSampleFactor() {
        return mapSampleFactor;
    }

    /**
     * True: the pre-sample is sized for groups spread alike over every map output; false: as if
     * each share were its whole group.
     */
    public boolean mapSampleSpread() {
        return mapSampleSpread;
    }

    /** Whether a map stage whose output is short of the plan runs again, sized by the plan. */
    public boolean mapSampleRepair() {
        return mapSampleRepair;
    }

    public Submit submit() {
        return submit;
    }

    public Planning planning() {
        return planning;
    }

    public long fetchTimeoutMs() {
        return fetchTimeoutMs;
    }

    /** Longest time bound: the SQL clause's limit. */
    static final Duration MAX_WITHIN = Duration.ofDays(1);

    /**
     * {@code spark.approx.within} (read per query from the session's conf): null when unset or
     * empty, else a duration with its unit in [1 ms, 1 day].
     */
    public static Duration within(String raw) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        return OptionValues.duration(PREFIX + "within", raw, Duration.ofMillis(1), MAX_WITHIN);
    }

    /** {@code spark.approx.behavior} (read per query from the session's conf): answer or fail. */
    public static io.netapprox.core.sql.ApproxClause.Behavior behavior(String raw) {
        if (raw == null || raw.isBlank()) {
            return io.netapprox.core.sql.ApproxClause.Behavior.ANSWER;
        }
        return OptionValues.choice(
                PREFIX + "behavior",
                raw,
                io.netapprox.core.sql.ApproxClause.Behavior.class,
                "answer or fail");
    }
}
