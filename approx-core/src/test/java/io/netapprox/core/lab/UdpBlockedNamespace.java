package io.netapprox.core.lab;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * A network namespace whose loopback drops every UDP packet and passes TCP: a host where UDP is
 * blocked. A tc u32 filter sends IP protocol 17 to an HTB class whose queue holds nothing (this
 * kernel has no tc drop action). A JVM started in it ({@link #runTestClass}) runs a framework's
 * processes - Spark's executors, Flink's TaskManagers, a Kafka relay and its consumer - which can
 * reach each other over TCP only. Needs root, {@code ip netns} and {@code tc}: {@link
 * #unavailable()} says why not. Named {@code naudp-<random>}; {@link #close()} deletes it.
 */
public final class UdpBlockedNamespace implements AutoCloseable {
    /** The system property a case class checks: it runs only inside such a namespace. */
    public static final String PROPERTY = "netapprox.lab.udpBlocked";

    private static final Pattern DROPPED =
            Pattern.compile("qdisc pfifo 20:.*?dropped (\\d+)", Pattern.DOTALL);

    private final String name;

    private UdpBlockedNamespace(String name) {
        this.name = name;
    }

    /** Why this machine cannot run the lab (a skip message), or null when it can. */
    public static String unavailable() {
        if (!new File("/proc/self/ns/net").exists()) {
            return "skipped: no network namespaces (/proc/self/ns/net)";
        }
        if (!Shell.run(List.of("id", "-u"), 10).out().trim().equals("0")) {
            return "skipped: the namespace lab needs root (ip netns, tc)";
        }
        if (Shell.run(List.of("ip", "netns", "list"), 10).rc() != 0
                || Shell.run(List.of("tc", "-V"), 10).rc() != 0) {
            return "skipped: ip netns or tc is not available";
        }
        String probe = "naudp-probe-" + Integer.toHexString(new Random().nextInt(1 << 24));
        if (Shell.sh("ip netns add " + probe) != 0) {
            return "skipped: cannot create network namespaces here";
        }
        Shell.sh("ip netns del " + probe);
        return null;
    }

    /** Creates the namespace: loopback up, UDP on it dropped. */
    public static UdpBlockedNamespace open() {
        UdpBlockedNamespace ns =
                new UdpBlockedNamespace(
                        "naudp-" + Integer.toHexString(new Random().nextInt(1 << 24) | (1 << 24)));
        Shell.must("ip netns add " + ns.name);
        try {
            String tc = "ip netns exec " + ns.name + " tc ";
            Shell.must("ip -n " + ns.name + " link set lo up");
            Shell.must(tc + "qdisc add dev lo root handle 1: htb default 1");
            Shell.must(tc + "class add dev lo parent 1: classid 1:1 htb rate 10gbit");
            Shell.must(tc + "class add dev lo parent 1: classid 1:2 htb rate 8bit ceil 8bit");
            Shell.must(tc + "qdisc add dev lo parent 1:2 handle 20: pfifo limit 0");
            Shell.must(
                    tc
                            + "filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol"
                            + " 17 0xff flowid 1:2");
        } catch (RuntimeException e) {
            ns.close();
            throw e;
        }
        return ns;
    }

    public String name() {
        return name;
    }

    /** UDP packets the filter dropped so far (the qdisc's counter). */
    public long udpDropped() {
        String s =
                Shell.run(
                                List.of(
                                        "ip", "netns", "exec", name, "tc", "-s", "qdisc", "show",
                                        "dev", "lo"),
                                30)
                        .out();
        Matcher m = DROPPED.matcher(s);
        if (!m.find()) {
            throw new IllegalStateException("no drop counter of the UDP queue in: " + s);
        }
        return Long.parseLong(m.group(1));
    }

    /**
     * Runs the JUnit test class {@code className} in a JVM inside the namespace ({@link
     * RunTestClass}), on this JVM's class path and JVM options (so a module's surefire set-up -
     * heap, {@code --add-opens} - applies), with {@link #PROPERTY}{@code =true} and {@code
     * properties}; killed after {@code seconds}. Its output says which tests passed.
     */
    public Shell.Result runTestClass(String className, Map<String, String> properties, long seconds)
            throws IOException {
        Map<String, String> props = new java.util.LinkedHashMap<>(properties);
        props.put(PROPERTY, "true");
        return Shell.finish(
                new ProcessBuilder(
                                FallbackLab.childJvm(
                                        List.of("ip", "netns", "exec", name), className, props))
                        .start(),
                seconds);
    }

    /**
     * The whole lab run of one case class: skipped (a JUnit assumption naming the reason) where the
     * lab cannot run; otherwise a fresh namespace, {@code caseClass} run in it ({@link
     * #runTestClass}, {@code properties}, killed after {@code seconds}), and a failure unless its
     * {@code tests} tests all passed and the namespace really dropped UDP. Returns the case JVM's
     * stdout and stderr (for the WARNs it logged).
     */
    public static String runCase(
            String caseClass, Map<String, String> properties, int tests, long seconds)
            throws IOException {
        String why = unavailable();
        Assumptions.assumeTrue(why == null, why);
        try (UdpBlockedNamespace ns = open()) {
            String log = FallbackLab.passed(ns.runTestClass(caseClass, properties, seconds), tests);
            assertTrue(ns.udpDropped() > 0, "the namespace dropped UDP");
            return log;
        }
    }

    /** Lines of {@code log} that are WARNs containing {@code text}. */
    public static long warnings(String log, String text) {
        return log.lines().filter(l -> l.contains("WARN") && l.contains(text)).count();
    }

    /** Fails unless this JVM was started by {@link #runTestClass} (a case class's guard). */
    public static void requireInside() {
        if (!Boolean.getBoolean(PROPERTY)) {
            throw new IllegalStateException(
                    "this case runs only inside a UDP-blocked namespace (UdpBlockedNamespace)");
        }
    }

    @Override
    public void close() {
        Shell.sh("ip netns del " + name);
    }
}
