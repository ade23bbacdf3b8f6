package io.netapprox.spark;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpMode;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TcpSendPolicy;
import java.io.Serializable;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code spark.approx.*} configuration of {@link ApproxShuffleManager}, parsed and validated
 * once (on the driver when the SparkContext starts, on executors when the shuffle manager is
 * created). Every bad value fails with an {@link IllegalArgumentException} naming the key, the
 * value and what is accepted.
 */
public final class ApproxConf implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String PREFIX = "spark.approx.";

    /** Key, default, description (the README's table is generated from the same text). */
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
                "bindAddress",
                new String[] {
                    "(executor host)", "numeric address the ATP engine and control server bind to"
                });
        k.put(
                "controlPort",
                new String[] {
                    "0",
                    "TCP control port per executor; 0 = ephemeral (needed when several executors share a host)"
                });
        k.put(
                "dataPlane",
                new String[] {
                    "auto",
                    "how executors exchange map output: auto (ATP, falling back to TCP with one WARN when the native library cannot load here or a peer does not answer over UDP within udpProbeTimeoutMs), atp (ATP only: fails naming the cause instead), tcp (one TCP connection per peer: the network-oblivious baseline, no native library)"
                });
        k.put(
                "tcpSendPolicy",
                new String[] {
                    "earlySend",
                    "what the TCP data plane sends of a pull: earlySend (in send order until the reducer has every group's target) or sampleSend (only each group's target)"
                });
        k.put(
                "udpProbeTimeoutMs",
                new String[] {
                    "2000",
                    "dataPlane=auto: a peer that does not answer a UDP probe within this long uses TCP; 0 = no probe; at most 60000"
                });
        k.put(
                "lineRateBps",
                new String[] {"10000000000", "R_max of ATP rate control, bits/s (ATP only)"});
        k.put(
                "mode",
                new String[] {
                    "FULL",
                    "ATP variant: FULL, BASE, RC, RC_MRDF, FIX_TLR, FIX_PRIO (ablations; ATP only)"
                });
        k.put(
                "dscp",
                new String[] {
                    "(engine default)",
                    "8 comma-separated DSCP values for priority classes 0..7 (class 0 = exact; ATP only)"
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
        k.put("peerDeathTimeoutMs", new String[] {"5000", "ATP peer-death timeout (ATP only)"});
        k.put("connectTimeoutMs", new String[] {"10000", "control-plane connect timeout"});
        k.put(
                "authSecret",
                new String[] {
                    "(none)",
                    "shared secret (>= 16 bytes) for control-plane authentication between executors"
                });
        k.put(
                "serveThreads",
                new String[] {"4", "threads per executor serving map output over ATP"});
        k.put(
                "startBeforeAccept",
                new String[] {
                    "true",
                    "true: an executor serving a pull starts the ATP job as soon as it has announced it, without waiting for the requester's acceptance (one control round trip less per pull; a refusal cancels the job); false: waits for the acceptance"
                });
        k.put(
                "faultDropOutgoing",
                new String[] {
                    "0",
                    "testing/benchmarks: engine fault injection, fraction of outgoing datagrams dropped (ATP only)"
                });
        k.put("faultSeed", new String[] {"1", "seed of the fault injection"});
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
    private final String bindAddress;
    private final int controlPort;
    private final DataPlaneMode dataPlane;
    private final TcpSendPolicy tcpSendPolicy;
    private final long udpProbeTimeoutMs;
    private final long lineRateBps;
    private final AtpMode mode;
    private final int[] dscp;
    private final double confidence;
    private final int recordsPerMessage;
    private final long mapSampleRecords;
    private final double mapSampleFactor;
    private final boolean mapSampleSpread;
    private final boolean mapSampleRepair;
    private final Submit submit;
    private final Planning planning;
    private final long fetchTimeoutMs;
    private final long peerDeathTimeoutMs;
    private final long connectTimeoutMs;
    private final String authSecret;
    private final int serveThreads;
    private final boolean startBeforeAccept;
    private final double faultDropOutgoing;
    private final long faultSeed;

    private ApproxConf(Map<String, String> all) {
        Map<String, String> c = new LinkedHashMap<>();
        Set<String> unknown = new TreeSet<>();
        for (Map.Entry<String, String> e : all.entrySet()) {
            if (e.getKey().startsWith(PREFIX)) {
                String k = e.getKey().substring(PREFIX.length());
                if (!KEYS.containsKey(k)) {
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
                            + "}");
        }
        enabled = bool(c, "enabled", true);
        exactPartials = bool(c, "exactPartials", true);
        bindAddress = c.get("bindAddress");
        if (bindAddress != null) {
            if (bindAddress.isEmpty()
                    || !(bindAddress.matches("[0-9.]+") || bindAddress.contains(":"))) {
                throw bad("bindAddress", bindAddress, "a numeric IPv4 or IPv6 address");
            }
        }
        controlPort = (int) range(c, "controlPort", 0, 0, 65535);
        // approx-core's parsers: the same values in every integration
        String dp = c.getOrDefault("dataPlane", DataPlaneMode.AUTO.label());
        try {
            dataPlane = DataPlaneMode.parse(dp);
        } catch (IllegalArgumentException e) {
            throw bad(
                    "dataPlane",
                    dp,
                    "one of " + labels(DataPlaneMode.values(), DataPlaneMode::label));
        }
        String sp = c.getOrDefault("tcpSendPolicy", TcpSendPolicy.EARLY_SEND.label());
        try {
            tcpSendPolicy = TcpSendPolicy.parse(sp);
        } catch (IllegalArgumentException e) {
            throw bad(
                    "tcpSendPolicy",
                    sp,
                    "one of " + labels(TcpSendPolicy.values(), TcpSendPolicy::label));
        }
        // ApproxTransportConfig's bound, checked here so that the driver fails, not the executors
        udpProbeTimeoutMs =
                range(
                        c,
                        "udpProbeTimeoutMs",
                        ApproxTransportConfig.DEFAULT_UDP_PROBE_TIMEOUT.toMillis(),
                        0,
                        60_000);
        lineRateBps = range(c, "lineRateBps", 10_000_000_000L, 1_000_000L, 1_000_000_000_000L);
        String m = c.getOrDefault("mode", "FULL");
        try {
            mode = AtpMode.valueOf(m.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw bad("mode", m, "one of " + java.util.Arrays.toString(AtpMode.values()));
        }
        String d = c.get("dscp");
        if (d != null) {
            String[] parts = d.split(",");
            if (parts.length != 8) {
                throw bad("dscp", d, "8 comma-separated integers in [0, 63]");
            }
            dscp = new int[8];
            for (int i = 0; i < 8; i++) {
                try {
                    dscp[i] = Integer.parseInt(parts[i].trim());
                } catch (NumberFormatException e) {
                    throw bad("dscp", d, "8 comma-separated integers in [0, 63]");
                }
                if (dscp[i] < 0 || dscp[i] > 63) {
                    throw bad("dscp", d, "8 comma-separated integers in [0, 63]");
                }
            }
        } else {
            dscp = null;
        }
        confidence = dbl(c, "confidence", 0.95);
        if (!(confidence > 0 && confidence < 1)) {
            throw bad("confidence", c.get("confidence"), "a number in (0, 1), e.g. 0.95");
        }
        recordsPerMessage = (int) range(c, "recordsPerMessage", 32, 1, 1 << 16);
        mapSampleRecords = range(c, "mapSampleRecords", 8192, 0, 1L << 40);
        mapSampleFactor = dbl(c, "mapSampleFactor", 2.0);
        mapSampleSpread = bool(c, "mapSampleSpread", true);
        mapSampleRepair = bool(c, "mapSampleRepair", true);
        if (!(mapSampleFactor == 0 || (mapSampleFactor >= 1 && mapSampleFactor <= 1e6))) {
            throw bad(
                    "mapSampleFactor",
                    c.get("mapSampleFactor"),
                    "0 (write the whole pre-sample) or a number in [1, 1e6], e.g. 2");
        }
        String s = c.getOrDefault("submit", "all");
        try {
            submit = Submit.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw bad("submit", s, "all or target");
        }
        String pl = c.getOrDefault("planning", "shares");
        try {
            planning = Planning.valueOf(pl.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw bad(
                    "planning",
                    pl,
                    "shares or local (balanced was removed: it missed e_max when a group sits in few "
                            + "map outputs; conservative is now local)");
        }
        fetchTimeoutMs = range(c, "fetchTimeoutMs", 120_000, 100, 24L * 3600 * 1000);
        peerDeathTimeoutMs = range(c, "peerDeathTimeoutMs", 5_000, 50, 3600_000);
        connectTimeoutMs = range(c, "connectTimeoutMs", 10_000, 50, 3600_000);
        authSecret = c.get("authSecret");
        if (authSecret != null
                && authSecret.getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                        < ControlConfig.MIN_SECRET_BYTES) {
            throw bad(
                    "authSecret",
                    "(hidden)",
                    "at least " + ControlConfig.MIN_SECRET_BYTES + " bytes");
        }
        serveThreads = (int) range(c, "serveThreads", 4, 1, 256);
        startBeforeAccept = bool(c, "startBeforeAccept", true);
        faultDropOutgoing = dbl(c, "faultDropOutgoing", 0.0);
        if (!(faultDropOutgoing >= 0 && faultDropOutgoing < 1)) {
            throw bad("faultDropOutgoing", c.get("faultDropOutgoing"), "a fraction in [0, 1)");
        }
        faultSeed = range(c, "faultSeed", 1, Long.MIN_VALUE, Long.MAX_VALUE);
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

    private static IllegalArgumentException bad(String key, String value, String expected) {
        return new IllegalArgumentException(
                "invalid NetApprox configuration "
                        + PREFIX
                        + key
                        + "="
                        + value
                        + ": expected "
                        + expected);
    }

    /** "a, b, c": the configuration values of an enum, from its own labels. */
    private static <E> String labels(E[] values, java.util.function.Function<E, String> label) {
        return java.util.Arrays.stream(values)
                .map(label)
                .collect(java.util.stream.Collectors.joining(", "));
    }

    private static boolean bool(Map<String, String> c, String k, boolean def) {
        String v = c.get(k);
        if (v == null) {
            return def;
        }
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw bad(k, v, "true or false");
    }

    private static long range(Map<String, String> c, String k, long def, long lo, long hi) {
        String v = c.get(k);
        if (v == null) {
            return def;
        }
        long x;
        try {
            x = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw bad(k, v, "an integer in [" + lo + ", " + hi + "]");
        }
        if (x < lo || x > hi) {
            throw bad(k, v, "an integer in [" + lo + ", " + hi + "]");
        }
        return x;
    }

    private static double dbl(Map<String, String> c, String k, double def) {
        String v = c.get(k);
        if (v == null) {
            return def;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw bad(k, v, "a number");
        }
    }

    /**
     * The transport configuration of one executor's engine, bound to {@code host} unless
     * bindAddress is set.
     */
    public ApproxTransportConfig transportConfig(String host) {
        String bind = bindAddress;
        if (bind == null) {
            try {
                bind = InetAddress.getByName(host).getHostAddress();
            } catch (UnknownHostException e) {
                throw new IllegalStateException(
                        "NetApprox: cannot resolve the executor host "
                                + host
                                + " (set "
                                + PREFIX
                                + "bindAddress)",
                        e);
            }
        }
        InetAddress bindAddr;
        try {
            bindAddr = InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("NetApprox: bad bind address " + bind, e);
        }
        AtpConfig.Builder atp =
                ApproxTransportConfig.defaultAtp()
                        .bindAddress(bind)
                        .bindPort(0)
                        .lineRateBps(lineRateBps)
                        .mode(mode)
                        .peerDeathTimeout(Duration.ofMillis(peerDeathTimeoutMs));
        if (dscp != null) {
            atp.dscpByClass(dscp);
        }
        if (faultDropOutgoing > 0) {
            atp.faultInjection(faultDropOutgoing, 0.0, faultSeed);
        }
        ControlConfig.Builder ctl =
                ControlConfig.builder()
                        .bindAddress(bindAddr)
                        .port(controlPort)
                        .connectTimeout(Duration.ofMillis(connectTimeoutMs))
                        .requestTimeout(Duration.ofMillis(Math.max(10_000, fetchTimeoutMs)));
        if (authSecret != null) {
            ctl.authSecret(authSecret);
        }
        return ApproxTransportConfig.builder()
                .atp(atp.build())
                .control(ctl.build())
                .dataPlane(dataPlane)
                .tcpSendPolicy(tcpSendPolicy)
                .udpProbeTimeout(Duration.ofMillis(udpProbeTimeoutMs))
                .serveThreads(serveThreads)
                .startBeforeAccept(startBeforeAccept)
                .reportTimeout(Duration.ofMillis(Math.max(10_000, fetchTimeoutMs)))
                .build();
    }

    public boolean enabled() {
        return enabled;
    }

    /** The data plane between executors ({@code spark.approx.dataPlane}). */
    public DataPlaneMode dataPlane() {
        return dataPlane;
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

    public double faultDropOutgoing() {
        return faultDropOutgoing;
    }
}
