package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operators' metrics (docs/flink.md, "Metrics") agree with the job's answers: one job with 30%
 * of every engine's outgoing datagrams dropped and {@code approx.submit=target} (exactly the
 * planned samples submitted), after which the senders counted every record, the receivers counted
 * every record of the strata and exactly the records the answers say were sampled, exactly the
 * targets arrived, nothing fell below target, and the losses show up as retransmissions and
 * measured loss.
 */
class ApproxMetricsTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    @Test
    void metricsAgreeWithTheAnswers() throws Exception {
        Rides rides = new Rides(31, 60_000, 3, 6);
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "true");
        conf.setString("approx.faultDropOutgoing", "0.3");
        // submit=target: the receivers get exactly the planned sample
        conf.setString("approx.submit", "target");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        DataStream<WindowEstimate> out = FlagOffTest.query(rides.stream(env).rebalance());
        FlinkCluster.Run done = FlinkCluster.collect(env, out, "metrics");
        List<WindowEstimate> result = done.results();
        JobID job = done.job();
        long answeredSample = 0;
        long answeredPopulation = 0;
        for (WindowEstimate e : result) {
            if (e.aggregate.equals("count")) {
                answeredSample += e.sampleRecords;
                answeredPopulation += e.populationRecords;
            }
        }
        long in = FLINK.senderCounter(job, "approxRecordsIn");
        long messages = FLINK.senderCounter(job, "approxMessages");
        long targets = FLINK.senderCounter(job, "approxTargetMessages");
        long received = FLINK.receiverCounter(job, "approxMessagesReceived");
        long local = FLINK.receiverCounter(job, "approxLocalMessages");
        long retransmissions = FLINK.senderCounter(job, "approxRetransmissions");
        double loss = FLINK.gaugeMax(job, "sender", "approxAtpLoss");
        double achieved = FLINK.gaugeMax(job, "receiver", "approxAchievedMsr");
        System.out.printf(
                "[flink-metrics] records in %d, messages %d, targets %d, received over ATP %d,"
                        + " local %d, sampled %d of %d, retransmissions %d, max measured loss %.3f, max"
                        + " achieved MSR %.3f%n",
                in,
                messages,
                targets,
                received,
                local,
                FLINK.receiverCounter(job, "approxRecordsSampled"),
                FLINK.receiverCounter(job, "approxRecordsPopulation"),
                retransmissions,
                loss,
                achieved);
        assertEquals(rides.n, in, "sender approxRecordsIn");
        assertEquals(0, FLINK.senderCounter(job, "approxNonFiniteValues"));
        assertEquals(rides.n, answeredPopulation);
        assertEquals(rides.n, FLINK.receiverCounter(job, "approxRecordsPopulation"));
        assertEquals(answeredSample, FLINK.receiverCounter(job, "approxRecordsSampled"));
        assertTrue(answeredSample < rides.n, "nothing was sampled: " + answeredSample);
        assertTrue(0 < targets && targets < messages, targets + " of " + messages);
        // the default submits only the planned sample, reliably: exactly the targets arrive, over
        // ATP or from the receiver's own TaskManager (with the former default, all, every local
        // message was taken and ATP delivered what the sender had sent before the receiver's
        // completion notice reached it: far more than the targets on loopback)
        assertTrue(received > 0 && received <= targets, received + " of " + targets);
        assertEquals(targets, received + local, "messages over ATP + local vs targets");
        assertEquals(0, FLINK.receiverCounter(job, "approxGroupsBelowTarget"));
        assertEquals(0, FLINK.receiverCounter(job, "approxEpochDeadlines"));
        assertEquals(0, FLINK.receiverCounter(job, "approxEpochsFailed"));
        assertEquals(0, FLINK.receiverCounter(job, "approxMalformedMessages"));
        assertTrue(retransmissions > 0, "30% loss without a retransmission");
        assertTrue(loss > 0 && loss < 1, "measured loss " + loss);
        assertTrue(achieved > 0 && achieved <= 1, "achieved MSR " + achieved);
    }
}
