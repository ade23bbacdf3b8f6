package io.netapprox.examples.spark;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.status.api.v1.ExecutorSummary;

/**
 * Peak memory of the executors of a local-cluster application, for the benchmarks: the JVM heap
 * peaks Spark's executor metrics recorded, and each executor process's peak resident set ({@code
 * VmHWM} in /proc; the executors are child processes of this driver JVM).
 */
final class ExecutorPeaks {
    private ExecutorPeaks() {}

    /**
     * Each executor's peak JVM heap use in MB, as Spark's status store has it, e.g. "[180,175]".
     */
    static String heapMb(SparkSession spark) {
        List<String> out = new ArrayList<>();
        for (ExecutorSummary e :
                scala.jdk.javaapi.CollectionConverters.asJava(
                        spark.sparkContext().statusStore().executorList(true))) {
            if (!e.id().equals("driver") && e.peakMemoryMetrics().isDefined()) {
                out.add(
                        Long.toString(
                                e.peakMemoryMetrics().get().getMetricValue("JVMHeapMemory") >> 20));
            }
        }
        return "[" + String.join(",", out) + "]";
    }

    /**
     * Each executor process of application {@code appId} (its command line names it), peak resident
     * set in MB, e.g. "[610,598]".
     */
    static String rssMb(String appId) {
        List<String> out = new ArrayList<>();
        for (Path p : executorProcesses(appId)) {
            try {
                for (String line : Files.readAllLines(p.resolve("status"))) {
                    if (line.startsWith("VmHWM:")) {
                        out.add(Long.toString(Long.parseLong(line.replaceAll("[^0-9]", "")) >> 10));
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the process ended meanwhile
            }
        }
        return "[" + String.join(",", out) + "]";
    }

    /** The /proc directories of the executor processes of application {@code appId}. */
    private static List<Path> executorProcesses(String appId) {
        List<Path> out = new ArrayList<>();
        File[] procs = new File("/proc").listFiles(f -> f.getName().matches("[0-9]+"));
        for (File p : procs == null ? new File[0] : procs) {
            try {
                String cmd =
                        new String(Files.readAllBytes(p.toPath().resolve("cmdline")))
                                .replace('\0', ' ');
                if (cmd.contains("CoarseGrainedExecutorBackend") && cmd.contains(appId)) {
                    out.add(p.toPath());
                }
            } catch (IOException | RuntimeException e) {
                // the process ended or is not readable: not one of ours
            }
        }
        return out;
    }

    /**
     * CPU seconds (user + system) the executor processes of application {@code appId} have used so
     * far, summed ({@code /proc/<pid>/stat}; clock ticks of 10 ms). Less sensitive to a shared
     * machine's load than wall time.
     */
    static double executorCpuSeconds(String appId) {
        double ticks = 0;
        for (Path p : executorProcesses(appId)) {
            try {
                String stat = Files.readString(p.resolve("stat"));
                // fields after the command name (in parentheses): state is field 3, utime 14
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
            } catch (IOException | RuntimeException e) {
                // the process ended meanwhile
            }
        }
        return ticks / 100.0;
    }

    /** CPU seconds this (driver) JVM has used so far. */
    static double driverCpuSeconds() {
        java.lang.management.OperatingSystemMXBean os =
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun
                ? sun.getProcessCpuTime() / 1e9
                : Double.NaN;
    }
}
