package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.lab.Shell;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fallback in a real network: two network namespaces joined by a veth pair, each side a JVM of
 * its own ({@link LabPeer}). First the path carries UDP and {@code auto} runs on ATP; then a tc u32
 * filter on both veth ends sends every UDP packet to an HTB class whose queue holds nothing (this
 * kernel has no tc actions), so UDP is dropped both ways while TCP passes: {@code auto} probes,
 * falls back to TCP with one WARN and completes the job; {@code atp} fails the connection naming
 * the cause. Needs root, {@code ip netns} and {@code tc}; skipped with a message otherwise. The
 * namespaces are named {@code na30-<random>-a/b} and deleted afterwards.
 */
class UdpBlockedLabTest {
    private final String tag = Integer.toHexString(new Random().nextInt(1 << 20) | (1 << 20));
    private final String nsA = "na30-" + tag + "-a";
    private final String nsB = "na30-" + tag + "-b";
    private final String vethA = "na30a" + tag;
    private final String vethB = "na30b" + tag;
    private final int subnet = 1 + new Random().nextInt(250);
    private final String ipA = "10.230." + subnet + ".1";
    private final String ipB = "10.230." + subnet + ".2";

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void udpDroppedBetweenTwoNamespacesRunsAutoOnTcpAndFailsAtp() throws Exception {
        Assumptions.assumeTrue(
                new File("/proc/self/ns/net").exists()
                        && run(List.of("id", "-u")).out().trim().equals("0"),
                "skipped: the namespace lab needs root (ip netns, tc)");
        Assumptions.assumeTrue(
                run(List.of("ip", "netns", "list")).rc() == 0 && run(List.of("tc", "-V")).rc() == 0,
                "skipped: ip netns or tc is not available");
        Process server = null;
        try {
            Assumptions.assumeTrue(
                    sh("ip netns add " + nsA) == 0 && sh("ip netns add " + nsB) == 0,
                    "skipped: cannot create network namespaces here");
            must("ip link add " + vethA + " type veth peer name " + vethB);
            must("ip link set " + vethA + " netns " + nsA);
            must("ip link set " + vethB + " netns " + nsB);
            must("ip -n " + nsA + " addr add " + ipA + "/24 dev " + vethA);
            must("ip -n " + nsB + " addr add " + ipB + "/24 dev " + vethB);
            for (String[] nd : new String[][] {{nsA, vethA}, {nsB, vethB}}) {
                must("ip -n " + nd[0] + " link set " + nd[1] + " up");
                must("ip -n " + nd[0] + " link set lo up");
            }

            server = javaIn(nsA, true, "server", ipA, "auto");
            BufferedReader out =
                    new BufferedReader(
                            new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertTrue(first != null && first.startsWith("CONTROL "), "server said " + first);
            String control = ipA + ":" + first.substring("CONTROL ".length()).trim();

            // The path carries UDP: ATP.
            Shell.Result ok = client("auto", control);
            System.out.println("lab, UDP open: " + ok.out());
            assertEquals(0, ok.rc(), ok.err());
            assertTrue(ok.out().contains("PLANE ATP"), ok.out());
            assertTrue(ok.out().contains("TARGETS_MET true"), ok.out());

            // Drop UDP both ways.
            for (String[] nd : new String[][] {{nsA, vethA}, {nsB, vethB}}) {
                String tc = "ip netns exec " + nd[0] + " tc ";
                must(tc + "qdisc add dev " + nd[1] + " root handle 1: htb default 1");
                must(tc + "class add dev " + nd[1] + " parent 1: classid 1:1 htb rate 10gbit");
                must(
                        tc
                                + "class add dev "
                                + nd[1]
                                + " parent 1: classid 1:2 htb rate 8bit ceil 8bit");
                must(tc + "qdisc add dev " + nd[1] + " parent 1:2 handle 20: pfifo limit 0");
                must(
                        tc
                                + "filter add dev "
                                + nd[1]
                                + " parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff"
                                + " flowid 1:2");
            }
            Shell.Result auto = client("auto", control);
            System.out.println("lab, UDP dropped, auto: " + auto.out());
            assertEquals(0, auto.rc(), auto.err());
            assertTrue(auto.out().contains("PLANE TCP"), auto.out());
            assertTrue(auto.out().contains("TARGETS_MET true"), auto.out());
            assertTrue(auto.out().contains("UDP_PROBE_FALLBACKS 1"), auto.out());
            long warns =
                    auto.err()
                            .lines()
                            .filter(
                                    l ->
                                            l.contains(" WARN ")
                                                    && l.contains("not reachable over UDP"))
                            .count();
            assertEquals(1, warns, auto.err());

            Shell.Result atp = client("atp", control);
            System.out.println("lab, UDP dropped, atp: " + atp.out());
            assertEquals(3, atp.rc(), atp.out() + atp.err());
            assertTrue(atp.out().contains("CONNECT_FAILED"), atp.out());
            assertTrue(atp.out().contains("not reachable over UDP"), atp.out());
            assertTrue(atp.out().contains("no fallback"), atp.out());
            String drops =
                    run(List.of(
                                    "ip", "netns", "exec", nsA, "tc", "-s", "qdisc", "show", "dev",
                                    vethA))
                            .out();
            assertTrue(drops.contains("dropped"), drops);
        } finally {
            if (server != null) {
                server.getOutputStream().close();
                if (!server.waitFor(20, TimeUnit.SECONDS)) {
                    server.destroyForcibly();
                }
            }
            sh("ip netns del " + nsA);
            sh("ip netns del " + nsB);
        }
        assertTrue(
                !run(List.of("ip", "netns", "list")).out().contains("na30-" + tag),
                "the namespaces are gone");
    }

    private Shell.Result client(String mode, String control) throws Exception {
        Process p = javaIn(nsB, false, "client", ipB, control, mode, "1000");
        return Shell.finish(p, 120);
    }

    /**
     * A {@link LabPeer} JVM in namespace {@code ns}; its stderr to ours when {@code inheritErr}.
     */
    private static Process javaIn(String ns, boolean inheritErr, String... args)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp =
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"));
        Path cpFile = Files.createTempFile("na30-cp", ".txt");
        Files.writeString(cpFile, "-cp \"" + cp.replace("\\", "\\\\") + "\"");
        cpFile.toFile().deleteOnExit();
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns, java, "-Xmx256m"));
        cmd.add("@" + cpFile);
        cmd.add(LabPeer.class.getName());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (inheritErr) {
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        }
        return pb.start();
    }

    private static Shell.Result run(List<String> cmd) {
        return Shell.run(cmd, 30);
    }

    private static int sh(String cmd) {
        return Shell.sh(cmd);
    }

    private static void must(String cmd) {
        Shell.must(cmd);
    }
}
