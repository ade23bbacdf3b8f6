package io.netapprox.examples.flink;

import io.netapprox.flink.Aggregate;
import io.netapprox.flink.Approx;
import io.netapprox.flink.WindowEstimate;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/**
 * The streaming taxi query: per pickup zone and 1-minute event-time window, the average fare and
 * the trip count, with e_max. Runs the same program twice on a local Flink cluster of 2
 * TaskManagers x 2 slots (ATP between them over loopback): once exact ({@code
 * approx.enabled=false}), once approximate ({@code approx.enabled=true}), and prints per window the
 * approximate vs exact answers, the error achieved and the bound.
 *
 * <pre>
 * bash scripts/demo.sh flink [--rows 600000] [--minutes 5] [--emax 0.05] [--zone 237 --zone-emax 0.01]
 *                            [--confidence 0.95] [--loss 0] [--show 5] [--seed 42] [--approx.KEY VALUE]
 * </pre>
 */
public final class TaxiStreamExample {
    private static final DateTimeFormatter HHMM =
            DateTimeFormatter.ofPattern("HH:mm").withZone(ZoneOffset.UTC);

    private TaxiStreamExample() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = parse(args);
        long rows = Long.parseLong(opt.getOrDefault("rows", "600000"));
        int minutes = Integer.parseInt(opt.getOrDefault("minutes", "5"));
        double eMax = Double.parseDouble(opt.getOrDefault("emax", "0.05"));
        int zone = Integer.parseInt(opt.getOrDefault("zone", "237"));
        double zoneEMax = Double.parseDouble(opt.getOrDefault("zone-emax", "0.01"));
        double confidence = Double.parseDouble(opt.getOrDefault("confidence", "0.95"));
        double loss = Double.parseDouble(opt.getOrDefault("loss", "0"));
        int show = Integer.parseInt(opt.getOrDefault("show", "5"));
        long seed = Long.parseLong(opt.getOrDefault("seed", "42"));
        // The demo sends exactly the planned samples (approx.submit=target), so the answers show
        // the
        // sampling; with the default (all) an idle loopback delivers nearly everything before ATP's
        // completion notice. An epoch is given up after 5 s. --approx.<key> <value> overrides any
        // option.
        Map<String, String> extra = new TreeMap<>();
        extra.put("approx.submit", "target");
        extra.put("approx.epochTimeout", "5 s");
        opt.forEach(
                (k, v) -> {
                    if (k.startsWith("approx.")) {
                        extra.put(k, v);
                    }
                });

        System.out.printf(
                "NetApprox Flink demo: %,d synthetic taxi trips over %d minutes of event time,"
                        + " per pickup zone and 1-minute window: avg(fare) and count; e_max %.0f%%"
                        + " (zone %d: %.0f%%), confidence %.2f; local cluster of 2 TaskManagers x 2"
                        + " slots%s; %s%n",
                rows,
                minutes,
                100 * eMax,
                zone,
                100 * zoneEMax,
                confidence,
                loss > 0 ? String.format(", %.0f%% of ATP datagrams dropped", 100 * loss) : "",
                extra);
        long t0 = System.nanoTime();
        Map<String, WindowEstimate> exact =
                run(false, rows, minutes, eMax, zone, zoneEMax, confidence, loss, seed, extra);
        long t1 = System.nanoTime();
        Map<String, WindowEstimate> approx =
                run(true, rows, minutes, eMax, zone, zoneEMax, confidence, loss, seed, extra);
        long t2 = System.nanoTime();
        report(exact, approx, zone, show);
        System.out.printf(
                "job times (submission to last answer, this machine, not a benchmark): exact %.1f s,"
                        + " approximate %.1f s%n",
                (t1 - t0) / 1e9, (t2 - t1) / 1e9);
    }

    private static Map<String, WindowEstimate> run(
            boolean approximate,
            long rows,
            int minutes,
            double eMax,
            int zone,
            double zoneEMax,
            double confidence,
            double loss,
            long seed,
            Map<String, String> extra)
            throws Exception {
        Configuration conf = new Configuration();
        extra.forEach(conf::setString);
        conf.setString("minicluster.number-of-taskmanagers", "2");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        conf.setString("parallelism.default", "4");
        conf.setString("pipeline.auto-watermark-interval", "50 ms");
        conf.setString("approx.enabled", String.valueOf(approximate));
        if (loss > 0) {
            conf.setString("approx.faultDropOutgoing", String.valueOf(loss));
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        DataStream<WindowEstimate> answers =
                Approx.of(TaxiRides.stream(env, rows, minutes, seed).rebalance())
                        .stratifyBy(TaxiRide::getZone)
                        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                        .errorBound(eMax)
                        .errorBound(zone, zoneEMax)
                        .confidence(confidence)
                        .aggregate(Aggregate.avg("fare", TaxiRide::getFare), Aggregate.count());
        Map<String, WindowEstimate> out = new TreeMap<>();
        answers.executeAndCollect(approximate ? "taxi, approximate" : "taxi, exact")
                .forEachRemaining(e -> out.put(key(e), e));
        return out;
    }

    private static String key(WindowEstimate e) {
        return e.windowStart + "|" + e.group + "|" + e.aggregate;
    }

    private static void report(
            Map<String, WindowEstimate> exact,
            Map<String, WindowEstimate> approx,
            int zone,
            int show) {
        Map<Long, List<WindowEstimate>> avgByWindow = new TreeMap<>();
        for (WindowEstimate e : approx.values()) {
            if (e.aggregate.startsWith("avg")) {
                avgByWindow.computeIfAbsent(e.windowStart, w -> new ArrayList<>()).add(e);
            }
        }
        int answers = 0;
        int within = 0;
        int covered = 0;
        int unbounded = 0;
        int countsExact = 0;
        int counts = 0;
        long sampled = 0;
        long population = 0;
        for (Map.Entry<Long, List<WindowEstimate>> w : avgByWindow.entrySet()) {
            List<WindowEstimate> zones = w.getValue();
            zones.sort(Comparator.comparingLong((WindowEstimate e) -> -e.populationRecords));
            int wWithin = 0;
            int wCovered = 0;
            int wUnbounded = 0;
            int wSampled = 0;
            long wRecords = 0;
            long wArrived = 0;
            double maxErr = 0;
            for (WindowEstimate e : zones) {
                WindowEstimate x = exact.get(key(e));
                double err = e.relativeError(x.estimate);
                maxErr = Math.max(maxErr, err);
                wWithin += err <= e.eMax ? 1 : 0;
                // an answer whose stratum lacked data at the epoch deadline has no bound: its
                // interval covers everything, so it is counted apart, not as covered
                boolean bounded = Double.isFinite(e.low) && Double.isFinite(e.high);
                wUnbounded += bounded ? 0 : 1;
                wCovered += bounded && e.covers(x.estimate) ? 1 : 0;
                wSampled += e.sampleRecords < e.populationRecords ? 1 : 0;
                wRecords += e.populationRecords;
                wArrived += e.sampleRecords;
                WindowEstimate c = approx.get(e.windowStart + "|" + e.group + "|count");
                WindowEstimate cx = exact.get(e.windowStart + "|" + e.group + "|count");
                counts++;
                countsExact += c != null && cx != null && c.estimate == cx.estimate ? 1 : 0;
            }
            answers += zones.size();
            within += wWithin;
            covered += wCovered;
            unbounded += wUnbounded;
            sampled += wArrived;
            population += wRecords;
            System.out.printf(
                    "%nwindow %s-%s  %d zones (%d sampled, the rest complete)  %,d trips, %.1f%%"
                            + " arrived  avg(fare): max error %.2f%%, within bound %d/%d, interval"
                            + " covers exact %d/%d%s%n",
                    HHMM.format(Instant.ofEpochMilli(w.getKey())),
                    HHMM.format(Instant.ofEpochMilli(w.getKey() + 60_000)),
                    zones.size(),
                    wSampled,
                    wRecords,
                    100.0 * wArrived / wRecords,
                    100 * maxErr,
                    wWithin,
                    zones.size(),
                    wCovered,
                    zones.size() - wUnbounded,
                    wUnbounded > 0
                            ? String.format(
                                    ", %d without a bound (data missing at the epoch deadline)",
                                    wUnbounded)
                            : "");
            List<WindowEstimate> detail =
                    new ArrayList<>(zones.subList(0, Math.min(show, zones.size())));
            for (WindowEstimate e : zones) {
                if (e.group.equals(String.valueOf(zone)) && !detail.contains(e)) {
                    detail.add(e);
                }
            }
            for (WindowEstimate e : detail) {
                WindowEstimate x = exact.get(key(e));
                System.out.printf(
                        "  zone %3s  avg fare exact %7.3f  approx %7.3f [%7.3f, %7.3f]  error %5.2f%%"
                                + "  bound %4.1f%%  trips %,6d (sample %,6d)%n",
                        e.group,
                        x.estimate,
                        e.estimate,
                        e.low,
                        e.high,
                        100 * e.relativeError(x.estimate),
                        100 * e.eMax,
                        e.populationRecords,
                        e.sampleRecords);
            }
        }
        System.out.printf(
                "%nall windows: %d (window, zone) averages, within their bound %d (%.1f%%), interval"
                        + " covers the exact value %d of %d with a bound (%.1f%%); trip counts exact"
                        + " %d/%d; %.1f%% of the trips are in the samples (pulled over ATP, or from"
                        + " the own TaskManager)%n",
                answers,
                within,
                100.0 * within / Math.max(1, answers),
                covered,
                answers - unbounded,
                100.0 * covered / Math.max(1, answers - unbounded),
                countsExact,
                counts,
                100.0 * sampled / Math.max(1, population));
        if (unbounded > 0) {
            System.out.printf(
                    "%d averages have no bound: some epochs hit approx.epochTimeout before their"
                            + " strata reached the target (a loaded machine, or ATP losses); their"
                            + " error is not promised%n",
                    unbounded);
        }
        if (exact.size() != approx.size()) {
            System.out.printf(
                    "WARNING: %d exact answers, %d approximate answers%n",
                    exact.size(), approx.size());
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> m = new TreeMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException(
                        "usage: [--rows N] [--minutes M] [--emax E] [--zone Z --zone-emax E]"
                                + " [--confidence C] [--loss L] [--show K] [--seed S]"
                                + " [--approx.KEY VALUE]; got "
                                + args[i]);
            }
            m.put(args[i].substring(2), args[++i]);
        }
        return m;
    }
}
