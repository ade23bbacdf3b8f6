package io.netapprox.benchmarks;

import io.netapprox.core.engine.AtpNative;
import io.netapprox.core.engine.SendBatch;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Java API vs the native perf tool, in the same run and on the same machine (not JMH).
 *
 * <p>For each workload (default: 4096 x 64 KiB and 100,000 x 100 B, one group, MSR 1, no injected
 * loss) it alternates, {@code --runs} times: {@code atp-perf demo --messages N --size S --groups
 * 1.0 --drop-out 0} (both ends in one native process over 127.0.0.1; its JSON goodput and JCT),
 * then the same N x S job through the Java API between two endpoints of this JVM with the same
 * engine configuration, once with {@code send} per message and once with {@link SendBatch}. Each
 * run uses a fresh session (as each atp-perf process does), and the JCT is measured like
 * atp-perf's: from just after {@code startJob} to the sender's outcome (every message
 * acknowledged). It prints every run, the medians and the ratios Java/native for goodput and
 * message rate.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.netapprox.benchmarks.CompareWithNative \
 *     [--atp-perf approx-core/target/native-build/atp-perf] [--runs 3] \
 *     [--large-messages 4096] [--large-size 65536] [--small-messages 100000] [--small-size 100] \
 *     [--large-batch 16] [--small-batch 64]
 * </pre>
 */
public final class CompareWithNative {
    private CompareWithNative() {}

    /**
     * One measurement: goodput (Gbit/s of delivered payload / JCT) and message rate (messages /
     * JCT).
     */
    static final class Sample {
        final double jctMs;
        final double gbps;
        final double msgPerSec;
        final long retransmissions;
        final String note;

        Sample(double jctMs, double gbps, double msgPerSec, long retransmissions, String note) {
            this.jctMs = jctMs;
            this.gbps = gbps;
            this.msgPerSec = msgPerSec;
            this.retransmissions = retransmissions;
            this.note = note;
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "JCT %9.1f ms  %7.3f Gbit/s  %10.0f msg/s  %7.0f ns/msg  retx %d%s",
                    jctMs,
                    gbps,
                    msgPerSec,
                    1e9 / msgPerSec,
                    retransmissions,
                    note.isEmpty() ? "" : "  [" + note + "]");
        }
    }

    static final class Workload {
        final String name;
        final int messages;
        final int size;
        final int batch;

        Workload(String name, int messages, int size, int batch) {
            this.name = name;
            this.messages = messages;
            this.size = size;
            this.batch = batch;
        }
    }

    public static void main(String[] args) throws Exception {
        String atpPerf = null;
        int runs = 3;
        int largeN = 4096;
        int largeS = 64 * 1024;
        int smallN = 100_000;
        int smallS = 100;
        int largeBatch = 16;
        int smallBatch = 64;
        boolean reuse = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--atp-perf":
                    atpPerf = v;
                    i++;
                    break;
                case "--runs":
                    runs = Integer.parseInt(v);
                    i++;
                    break;
                case "--large-messages":
                    largeN = Integer.parseInt(v);
                    i++;
                    break;
                case "--large-size":
                    largeS = Integer.parseInt(v);
                    i++;
                    break;
                case "--small-messages":
                    smallN = Integer.parseInt(v);
                    i++;
                    break;
                case "--small-size":
                    smallS = Integer.parseInt(v);
                    i++;
                    break;
                case "--large-batch":
                    largeBatch = Integer.parseInt(v);
                    i++;
                    break;
                case "--small-batch":
                    smallBatch = Integer.parseInt(v);
                    i++;
                    break;
                case "--reuse-endpoints":
                    reuse = true;
                    break;
                case "-h":
                case "--help":
                    System.out.println(
                            "usage: CompareWithNative [--atp-perf PATH] [--runs R] [--large-messages N]"
                                    + " [--large-size S] [--small-messages N] [--small-size S] [--large-batch B] [--small-batch B]"
                                    + " [--reuse-endpoints]");
                    return;
                default:
                    throw new IllegalArgumentException("unknown argument " + a + " (see --help)");
            }
        }
        Path perf = locateAtpPerf(atpPerf);
        List<Workload> workloads =
                List.of(
                        new Workload("goodput", largeN, largeS, largeBatch),
                        new Workload("message rate", smallN, smallS, smallBatch));

        System.out.printf(
                Locale.ROOT,
                "CompareWithNative: %d cores, %s %s, libnetapprox %s, atp-perf %s, %d runs"
                        + " per workload (alternating native / Java send / Java SendBatch), Java: %s%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name"),
                System.getProperty("java.version"),
                AtpNative.version(),
                perf,
                runs,
                reuse
                        ? "one endpoint pair for all runs, fresh session per run"
                        : "fresh endpoint pair and session per run (like each atp-perf process)");

        List<String> summary = new ArrayList<>();
        for (Workload w : workloads) {
            summary.addAll(compare(perf, w, runs, reuse));
        }
        System.out.println();
        System.out.println("== summary (medians) ==");
        summary.forEach(System.out::println);
    }

    /**
     * Runs one Java job on {@code shared} (fresh session) or on a fresh endpoint pair when it is
     * null.
     */
    private interface JavaJob {
        LoopbackPair.JobTiming run(LoopbackPair pair) throws Exception;
    }

    private static Sample runJava(LoopbackPair shared, JavaJob job) throws Exception {
        if (shared != null) {
            shared.newSession();
            return toSample(job.run(shared));
        }
        try (LoopbackPair fresh = new LoopbackPair(LoopbackPair.perfToolConfig().build())) {
            return toSample(job.run(fresh));
        }
    }

    private static List<String> compare(Path perf, Workload w, int runs, boolean reuse)
            throws Exception {
        System.out.printf(
                Locale.ROOT,
                "%n== %s: %d x %d B, MSR 1, 1 group, no injected loss (SendBatch of %d) ==%n",
                w.name,
                w.messages,
                w.size,
                w.batch);
        ByteBuf message = LoopbackPair.patternMessage(w.size);
        ByteBuffer slab = LoopbackPair.patternSlab(w.batch, w.size);
        SendBatch batch = new SendBatch(w.batch);
        List<Sample> nat = new ArrayList<>();
        List<Sample> single = new ArrayList<>();
        List<Sample> batched = new ArrayList<>();
        LoopbackPair shared =
                reuse ? new LoopbackPair(LoopbackPair.perfToolConfig().build()) : null;
        JavaJob sendJob = p -> p.runJobSingle(w.messages, message);
        JavaJob batchJob = p -> p.runJobBatched(w.messages, w.size, slab, batch);
        try {
            // Warm-up, not reported: the JIT for the Java paths, page cache and allocator for the
            // native tool.
            runNative(perf, w);
            runJava(shared, sendJob);
            runJava(shared, batchJob);
            for (int r = 1; r <= runs; r++) {
                Sample n = runNative(perf, w);
                nat.add(n);
                System.out.printf(Locale.ROOT, "run %d  native atp-perf demo  %s%n", r, n);
                Sample s = runJava(shared, sendJob);
                single.add(s);
                System.out.printf(Locale.ROOT, "run %d  Java send             %s%n", r, s);
                Sample b = runJava(shared, batchJob);
                batched.add(b);
                System.out.printf(Locale.ROOT, "run %d  Java SendBatch        %s%n", r, b);
            }
        } finally {
            message.release();
            if (shared != null) {
                shared.close();
            }
        }
        double ng = median(nat, true);
        double sg = median(single, true);
        double bg = median(batched, true);
        double nr = median(nat, false);
        double sr = median(single, false);
        double br = median(batched, false);
        List<String> out = new ArrayList<>();
        String head = String.format(Locale.ROOT, "%s (%d x %d B):", w.name, w.messages, w.size);
        out.add(head);
        out.add(
                String.format(
                        Locale.ROOT,
                        "  native         %7.3f Gbit/s  %10.0f msg/s  %7.0f ns/msg",
                        ng,
                        nr,
                        1e9 / nr));
        out.add(
                String.format(
                        Locale.ROOT,
                        "  Java send      %7.3f Gbit/s  %10.0f msg/s  %7.0f ns/msg   Java/native = %.2fx (median of per-run"
                                + " ratios %.2fx)",
                        sg,
                        sr,
                        1e9 / sr,
                        sg / ng,
                        pairedRatio(single, nat)));
        out.add(
                String.format(
                        Locale.ROOT,
                        "  Java SendBatch %7.3f Gbit/s  %10.0f msg/s  %7.0f ns/msg   Java/native = %.2fx (median of per-run"
                                + " ratios %.2fx)",
                        bg,
                        br,
                        1e9 / br,
                        bg / ng,
                        pairedRatio(batched, nat)));
        out.forEach(System.out::println);
        return out;
    }

    private static Sample toSample(LoopbackPair.JobTiming t) {
        return new Sample(
                t.senderJctNanos / 1e6,
                t.goodputGbps(),
                t.messagesPerSecond(),
                t.sender.packetsRetransmitted(),
                t.senderReportAnomaly());
    }

    /**
     * Median over runs of java[i] / native[i] (adjacent runs, so slow drifts in machine load
     * cancel).
     */
    private static double pairedRatio(List<Sample> java, List<Sample> nat) {
        double[] v = new double[java.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = java.get(i).gbps / nat.get(i).gbps;
        }
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    private static double median(List<Sample> samples, boolean goodput) {
        double[] v = samples.stream().mapToDouble(s -> goodput ? s.gbps : s.msgPerSec).toArray();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    // ---- the native tool ------------------------------------------------------------------------

    private static final Pattern STATUS = Pattern.compile("\"status\":\\s*\"([^\"]*)\"");

    private static double number(String json, String field) {
        // Top-level fields precede the nested "groups" / "receiver" objects, so the first match is
        // the top-level one.
        Matcher m = Pattern.compile("\"" + field + "\":\\s*(-?[0-9.eE+]+)").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("atp-perf JSON has no " + field + ": " + json);
        }
        return Double.parseDouble(m.group(1));
    }

    static Sample runNative(Path perf, Workload w) throws IOException, InterruptedException {
        ProcessBuilder pb =
                new ProcessBuilder(
                        perf.toString(),
                        "demo",
                        "--messages",
                        Integer.toString(w.messages),
                        "--size",
                        Integer.toString(w.size),
                        "--groups",
                        "1.0",
                        "--drop-out",
                        "0");
        Path err = Files.createTempFile("atp-perf", ".stderr");
        pb.redirectError(err.toFile());
        Process p = pb.start();
        String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean exited = p.waitFor(120, TimeUnit.SECONDS);
        String stderr = Files.readString(err);
        Files.deleteIfExists(err);
        if (!exited) {
            p.destroyForcibly();
            throw new IllegalStateException("atp-perf demo did not finish in 120 s");
        }
        String json = null;
        for (String line : stdout.split("\n")) {
            if (line.startsWith("{")) {
                json = line;
            }
        }
        if (p.exitValue() != 0 || json == null) {
            throw new IllegalStateException(
                    "atp-perf demo failed (exit "
                            + p.exitValue()
                            + ")\nstdout:\n"
                            + stdout
                            + "\nstderr:\n"
                            + stderr);
        }
        Matcher st = STATUS.matcher(json);
        if (!st.find() || !st.group(1).equals("ok")) {
            throw new IllegalStateException("atp-perf demo status is not ok: " + json);
        }
        double jctMs = number(json, "jct_ms");
        double toolGbps = number(json, "goodput_gbps");
        double senderDelivered = number(json, "delivered_bytes") / w.size;
        // The receiver's report (authoritative for what arrived) is the nested "receiver" object.
        int ri = json.indexOf("\"receiver\":");
        if (ri < 0
                || json.startsWith(
                        "null",
                        json.indexOf(':', ri) + 1 + countSpaces(json, json.indexOf(':', ri) + 1))) {
            throw new IllegalStateException("atp-perf demo JSON has no receiver report: " + json);
        }
        String receiver = json.substring(ri);
        Matcher rs = STATUS.matcher(receiver);
        if (!rs.find() || !rs.group(1).equals("ok")) {
            throw new IllegalStateException("atp-perf demo receiver status is not ok: " + json);
        }
        double delivered = number(receiver, "delivered");
        if (delivered != w.messages) {
            throw new IllegalStateException(
                    "atp-perf demo: the receiver got "
                            + delivered
                            + " of "
                            + w.messages
                            + ": "
                            + json);
        }
        // atp-perf's goodput_gbps counts the sender report's delivered messages; use the receiver's
        // (all of them) so
        // both sides are computed alike, and flag a disagreement.
        String note = "";
        if (senderDelivered != w.messages) {
            note =
                    String.format(
                            Locale.ROOT,
                            "sender report: delivered %.0f, lost %.0f; atp-perf goodput_gbps %.3f",
                            senderDelivered,
                            number(json, "lost"),
                            toolGbps);
        }
        return new Sample(
                jctMs,
                delivered * w.size * 8 / (jctMs * 1e6),
                delivered / (jctMs / 1e3),
                (long) number(json, "retransmissions"),
                note);
    }

    private static int countSpaces(String s, int from) {
        int n = 0;
        while (from + n < s.length() && s.charAt(from + n) == ' ') {
            n++;
        }
        return n;
    }

    private static Path locateAtpPerf(String explicit) {
        List<String> candidates = new ArrayList<>();
        if (explicit != null) {
            candidates.add(explicit);
        } else {
            String env = System.getenv("ATP_PERF");
            if (env != null && !env.isEmpty()) {
                candidates.add(env);
            }
            candidates.add("approx-core/target/native-build/atp-perf");
            candidates.add("../approx-core/target/native-build/atp-perf");
        }
        for (String c : candidates) {
            Path p = Path.of(c).toAbsolutePath().normalize();
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new IllegalStateException(
                "atp-perf not found (tried "
                        + candidates
                        + "); build it with"
                        + " `mvn -B -q install -DskipTests` at the repository root or pass --atp-perf PATH");
    }
}
