package io.netapprox.core.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where the ATP data plane cannot run, and how a framework's fallback case is run there: a case
 * class (one per integration, not run by surefire) runs its job with {@code dataPlane=auto} (it
 * must complete over TCP) and {@code atp} (it must fail naming the cause) in a JVM of its own,
 * started either inside a {@link UdpBlockedNamespace} (UDP between the framework's processes
 * dropped) or with the native library blocked ({@link #runWithoutNative}).
 */
public final class FallbackLab {
    /** The native loader's switch: loading fails as on a platform without a build. */
    public static final String NATIVE_DISABLE = "io.netapprox.native.disable";

    private FallbackLab() {}

    /** Why ATP cannot run in a case JVM, and what a job that insists on ATP must say. */
    public enum Cause {
        /** Inside a {@link UdpBlockedNamespace}: the peers cannot reach each other over UDP. */
        UDP_BLOCKED("not reachable over UDP"),
        /** {@code -Dio.netapprox.native.disable=true}: the engine cannot load. */
        NATIVE_UNAVAILABLE("disabled by -D" + NATIVE_DISABLE + "=true");

        /** Text the failure of a {@code dataPlane=atp} job contains. */
        public final String atpFailure;

        Cause(String atpFailure) {
            this.atpFailure = atpFailure;
        }

        /** The JVM option a case passes on to the framework's own child JVMs (Spark executors). */
        public String jvmOption() {
            return this == NATIVE_UNAVAILABLE ? "-D" + NATIVE_DISABLE + "=true" : "";
        }
    }

    /**
     * The cause this case JVM was started for; fails unless it was started by {@link
     * UdpBlockedNamespace#runCase} or {@link #runWithoutNative} (a case class's guard).
     */
    public static Cause current() {
        if (Boolean.getBoolean(UdpBlockedNamespace.PROPERTY)) {
            return Cause.UDP_BLOCKED;
        }
        if (Boolean.getBoolean(NATIVE_DISABLE)) {
            return Cause.NATIVE_UNAVAILABLE;
        }
        throw new IllegalStateException(
                "this case runs only in a JVM without an ATP path (UdpBlockedNamespace.runCase or"
                        + " FallbackLab.runWithoutNative)");
    }

    /**
     * Runs the case class in a JVM of its own with the native library blocked ({@code
     * -Dio.netapprox.native.disable=true} and {@code properties}); needs no root, so it runs
     * everywhere. Fails unless its {@code tests} tests all passed; returns its stdout and stderr
     * (for the WARNs it logged).
     */
    public static String runWithoutNative(
            String caseClass, Map<String, String> properties, int tests, long seconds)
            throws IOException {
        Map<String, String> props = new LinkedHashMap<>(properties);
        props.put(NATIVE_DISABLE, "true");
        List<String> cmd = childJvm(List.of(), caseClass, props);
        return passed(Shell.finish(new ProcessBuilder(cmd).start(), seconds), tests);
    }

    /**
     * The command of a JVM that runs the JUnit test class {@code className} ({@link RunTestClass})
     * on this JVM's class path and options (so a module's surefire set-up - heap, {@code
     * --add-opens} - applies), with {@code properties}, after {@code prefix} (e.g. {@code ip netns
     * exec NAME}).
     */
    static List<String> childJvm(
            List<String> prefix, String className, Map<String, String> properties)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp =
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"));
        Path args = Files.createTempFile("nalab-args", ".txt");
        args.toFile().deleteOnExit();
        Files.writeString(args, "-cp \"" + cp.replace("\\", "\\\\") + "\"");
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(java);
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            // surefire's own agent/debug options stay with this JVM
            if (!a.startsWith("-javaagent") && !a.startsWith("-agentlib")) {
                cmd.add(a);
            }
        }
        properties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.add("@" + args);
        cmd.add(RunTestClass.class.getName());
        cmd.add(className);
        return cmd;
    }

    /** The case JVM's output, after checking it exited 0 with all {@code tests} tests passed. */
    static String passed(Shell.Result r, int tests) {
        System.out.println(r.out());
        String log = r.out() + r.err();
        assertEquals(0, r.rc(), log);
        String passed = "[lab] tests " + tests + " passed " + tests + " failed 0 skipped 0";
        assertTrue(r.out().contains(passed), log);
        return log;
    }
}
