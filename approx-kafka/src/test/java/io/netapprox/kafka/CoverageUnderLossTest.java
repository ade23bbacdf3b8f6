package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.Records.Polled;
import io.netapprox.kafka.Records.Produced;
import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The statistical promise end to end, under loss: seeded runs, each a fresh relay whose ATP engine
 * drops 30 % of its outgoing datagrams and a fresh consumer with its own sampling seed, over one
 * topic (2 partitions, 2 windows, 8 header strata, 600 records per partition, window and stratum;
 * values exp(N(0,1))). Per window and stratum the estimated total must have a confidence interval
 * that covers the truth in at least {@link #MIN_COVERAGE} of the (run, window, stratum) cases
 * (nominal 95 %), be within e_max of the truth as often, and every cell must have delivered at
 * least its planned sample with exact counts.
 *
 * <p>The acceptance bound is a binomial one, not the nominal rate: t intervals on a skewed total
 * cover about 94.5-95.5 % here, and with 640 cases the coverage of a sound run has a standard
 * deviation of 0.009, so a bound of 93 % failed about one CI run in thirty (0.930 in one CI run;
 * eight reruns gave 0.934-0.958). The lossy runs therefore use 1280 cases (sd 0.006) and 92.5 %:
 * more than three standard deviations below a sound run, still failing an interval that covers 90
 * %.
 */
class CoverageUnderLossTest {
    /** headroom 1 is deterministic (every run the same), so fewer runs say as much */
    private static final int RUNS_EXACT_TARGET = 40;

    /** headroom above 1 depends on which datagrams are lost: more runs for a tighter coverage */
    private static final int RUNS_LOSSY = 80;

    private static final double MIN_COVERAGE = 0.925;
    private static final double EMAX = 0.1;

    private static final List<String> ZONES = List.of("a", "b", "c", "d", "e", "f", "g", "h");
    private static String topic;
    private static List<Produced> produced;

    @BeforeAll
    static void produce() throws Exception {
        // a fixed name: the relay's sampling seed mixes in the topic, so the runs are the same in
        // every JVM (with headroom 1 the outcome is deterministic)
        topic = "coverage-under-loss";
        KafkaBroker.shared().createTopic(topic, 2);
        produced = Records.produce(topic, 2, 2, ZONES, 600, 2024);
    }

    /** approx.headroom 1 (the default): each cell's planned sample, sent reliably (MSR 1). */
    @Test
    void intervalsCoverTheTruthAndNoCellFallsBelowItsTargetWith30PercentLoss() throws Exception {
        runTrials("1.0", RUNS_EXACT_TARGET);
    }

    /**
     * The same trials with approx.headroom 1.25: the relay sends 25 % extra candidates per cell and
     * each ATP group has MSR = target / candidates below 1 (MRDF off), so lost records may be given
     * up. Disabled until 3 Dec 2026 for an engine livelock (about one job in a few hundred never
     * completed under 30 % loss); on today's engine the 40-run test passed 10 times in a row
     * (docs/kafka.md section 3.1); it runs 80 since its coverage varies between CI runs.
     */
    @Test
    void headroomAboveOneCompletesEveryRunWith30PercentLoss() throws Exception {
        runTrials("1.25", RUNS_LOSSY);
    }

    private static void runTrials(String headroom, int runs) throws Exception {
        Map<String, Double> truth = new HashMap<>();
        for (Produced p : produced) {
            truth.merge(p.window() + "/" + p.zone(), p.value(), Double::sum);
        }
        List<TopicPartition> tps =
                List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        int estimates = 0;
        int covered = 0;
        int withinEmax = 0;
        long dropped = 0;
        for (int run = 0; run < runs; run++) {
            long seed = 1000 + run;
            Polled got;
            try (KafkaRelay relay =
                    TestRelays.start(
                            b ->
                                    b.atp(
                                            ApproxTransportConfig.defaultAtp()
                                                    .faultInjection(0.3, 0.0, seed)
                                                    .build()))) {
                Properties p = Records.approxProps(KafkaBroker.unique("g"), relay.address());
                p.put("approx.seed", Long.toString(seed));
                p.put("approx.emax", Double.toString(EMAX));
                p.put("approx.headroom", headroom);
                try (Consumer<String, String> c = ApproxConsumers.create(p)) {
                    c.assign(tps);
                    got = Records.pollToEnd(c, tps, 2 * ZONES.size() * 600, new Polled());
                    for (TopicPartition tp : tps) {
                        assertEquals(2 * ZONES.size() * 600, c.position(tp), "run " + run);
                    }
                }
                dropped += relay.engineStats().get("dropped_fault_out");
            }
            for (CoveredRange r : got.ranges) {
                for (Cell cell : r.cells()) {
                    assertTrue(cell.sampled() >= cell.target(), "run " + run + ": " + cell);
                }
            }
            ApproxEstimates<String, String> est =
                    new ApproxEstimates<>(r -> Double.parseDouble(r.value()), 0.95);
            got.polls.forEach(est::add);
            for (long w : List.of(Records.T0, Records.T0 + 60_000)) {
                for (String z : ZONES) {
                    assertEquals(
                            2 * 600, est.count(w, z), "exact count, run " + run + ", " + w + z);
                    double exact = truth.get(w + "/" + z);
                    ApproxResult sum = est.sum(w, z);
                    estimates++;
                    if (sum.low() <= exact && exact <= sum.high()) {
                        covered++;
                    }
                    if (Math.abs(sum.mean() - exact) <= EMAX * exact) {
                        withinEmax++;
                    }
                }
            }
        }
        double coverage = (double) covered / estimates;
        double within = (double) withinEmax / estimates;
        System.out.printf(
                "coverage under 30%% loss: %d runs, %d estimates, CI coverage %.3f, within e_max %.3f,"
                        + " %d datagrams dropped by the relays' engines, headroom %s%n",
                runs, estimates, coverage, within, dropped, headroom);
        assertEquals(runs * 2 * ZONES.size(), estimates);
        assertTrue(coverage >= MIN_COVERAGE, "CI coverage " + coverage);
        assertTrue(within >= MIN_COVERAGE, "estimates within e_max: " + within);
        assertTrue(dropped > 0, "the loss was injected");
    }
}
