package io.netapprox.spark;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.util.LongAccumulator;

/**
 * Spark's own metrics of one approximate shuffle: named accumulators, registered on the driver when
 * the shuffle is, updated by its reduce tasks, and shown by the Spark UI on the stage pages of the
 * stage that reads the shuffle (name prefix {@code "NetApprox shuffle <id>: "}). Like every Spark
 * accumulator they count successful tasks only (a retried task's numbers are not doubled, a failed
 * one's are dropped). {@link ApproxQuery#metrics()} returns the last run's; {@link #values()} reads
 * them on the driver after an action.
 *
 * <ul>
 *   <li>messages: {@code planned} (the targets, {@code ceil(MSR_g N_g)} summed over groups and map
 *       outputs), {@code sent} (submitted to ATP by the serving executors), {@code delivered}
 *       (reached the reducer over ATP, or read from its own executor's disk), {@code used} (taken
 *       into the estimates: the reducer stops at each target), {@code beyond target} (delivered but
 *       not used);
 *   <li>groups: {@code groups}, {@code groups below target} (a group a share of which got fewer
 *       than its target: must be 0 without a time bound), {@code blocks cut at deadline} (remote
 *       blocks a reducer answered without in full when the query's time bound passed: {@code
 *       WITHIN}), {@code groups short of plan} (a group the plan asked more of a map output than it
 *       wrote - {@code spark.approx.mapSampleFactor} times what a group spread alike over the map
 *       outputs asks, at most the pre-sample {@code mapSampleRecords}: its e_max is not promised,
 *       its interval still is; raise the keys if not 0), and the {@code sample fraction} per group
 *       ({@link SampleFractionSummary});
 *   <li>rows: {@code rows sampled} (in the used messages) and {@code rows} (the groups' records);
 *   <li>data planes: {@code blocks pulled over ATP} and {@code blocks pulled over TCP} (the other
 *       executors' map outputs, by the data plane their peer runs: {@code
 *       spark.approx.dataPlane=tcp}, or {@code auto}'s fallback);
 *   <li>ATP: {@code packets sent}, {@code packets retransmitted}, {@code packets lost} (the sending
 *       engines' numbers, of the transfers sent over ATP only), and {@code TCP messages written}
 *       (what the TCP data plane wrote of the transfers sent over TCP: nothing retransmitted or
 *       lost), fetched by each reducer from the executors it pulled from, as is {@code messages
 *       sent}; {@code transfers without sender counters}: the transfers whose sender numbers are
 *       not all in those (a serving executor that did not answer within {@code
 *       spark.approx.fetchTimeoutMs}, or lost them) - 0 means they are exact, more that they are
 *       partial (lower bounds);
 *   <li>bytes: {@code block bytes} (the map outputs' blocks as written: the pre-sample, not every
 *       record), {@code exact bytes} (what an exact shuffle of the same records would move: every
 *       record of every share read, in this encoding - from the census counts, with top-k keys at
 *       their sampled mean length; at least the block bytes), {@code bytes read} (delivered over
 *       ATP plus read from local disk) and {@code bytes saved vs exact} (exact bytes - bytes read).
 * </ul>
 */
public final class ApproxShuffleMetrics implements Serializable {
    private static final long serialVersionUID = 1L;

    final LongAccumulator messagesPlanned = new LongAccumulator();
    final LongAccumulator messagesSent = new LongAccumulator();
    final LongAccumulator messagesDelivered = new LongAccumulator();
    final LongAccumulator messagesLocal = new LongAccumulator();
    final LongAccumulator messagesUsed = new LongAccumulator();
    final LongAccumulator messagesBeyondTarget = new LongAccumulator();
    final LongAccumulator groups = new LongAccumulator();
    final LongAccumulator groupsBelowTarget = new LongAccumulator();
    final LongAccumulator blocksCutAtDeadline = new LongAccumulator();
    final LongAccumulator groupsShortOfPlan = new LongAccumulator();
    final SampleFractionSummary sampleFraction = new SampleFractionSummary();
    final LongAccumulator rowsSampled = new LongAccumulator();
    final LongAccumulator rows = new LongAccumulator();
    final LongAccumulator blocksOverAtp = new LongAccumulator();
    final LongAccumulator blocksOverTcp = new LongAccumulator();
    final LongAccumulator packetsSent = new LongAccumulator();
    final LongAccumulator packetsRetransmitted = new LongAccumulator();
    final LongAccumulator packetsLost = new LongAccumulator();
    final LongAccumulator tcpMessagesWritten = new LongAccumulator();
    final LongAccumulator transfersWithoutSenderCounters = new LongAccumulator();
    final LongAccumulator blockBytes = new LongAccumulator();
    final LongAccumulator exactBytes = new LongAccumulator();
    final LongAccumulator bytesRead = new LongAccumulator();
    final LongAccumulator bytesSaved = new LongAccumulator();
    private final int shuffleId;

    private ApproxShuffleMetrics(int shuffleId) {
        this.shuffleId = shuffleId;
    }

    /** Creates and registers the accumulators of shuffle {@code shuffleId} (driver). */
    static ApproxShuffleMetrics register(SparkContext sc, int shuffleId) {
        ApproxShuffleMetrics m = new ApproxShuffleMetrics(shuffleId);
        String p = "NetApprox shuffle " + shuffleId + ": ";
        sc.register(m.messagesPlanned, p + "messages planned");
        sc.register(m.messagesSent, p + "messages sent");
        sc.register(m.messagesDelivered, p + "messages delivered");
        sc.register(m.messagesLocal, p + "messages read from local disk");
        sc.register(m.messagesUsed, p + "messages used");
        sc.register(m.messagesBeyondTarget, p + "messages beyond target");
        sc.register(m.groups, p + "groups");
        sc.register(m.groupsBelowTarget, p + "groups below target");
        sc.register(m.blocksCutAtDeadline, p + "blocks cut at deadline");
        sc.register(m.groupsShortOfPlan, p + "groups short of plan");
        sc.register(m.sampleFraction, p + "sample fraction per group");
        sc.register(m.rowsSampled, p + "rows sampled");
        sc.register(m.rows, p + "rows");
        sc.register(m.blocksOverAtp, p + "blocks pulled over ATP");
        sc.register(m.blocksOverTcp, p + "blocks pulled over TCP");
        sc.register(m.packetsSent, p + "ATP packets sent");
        sc.register(m.packetsRetransmitted, p + "ATP packets retransmitted");
        sc.register(m.packetsLost, p + "ATP packets lost");
        sc.register(m.tcpMessagesWritten, p + "TCP messages written");
        sc.register(m.transfersWithoutSenderCounters, p + "transfers without sender counters");
        sc.register(m.blockBytes, p + "block bytes");
        sc.register(m.exactBytes, p + "exact bytes");
        sc.register(m.bytesRead, p + "bytes read");
        sc.register(m.bytesSaved, p + "bytes saved vs exact");
        return m;
    }

    public int shuffleId() {
        return shuffleId;
    }

    /** The sample fractions of the groups (driver). */
    public SampleFractionSummary.Summary sampleFraction() {
        return sampleFraction.value();
    }

    /**
     * Every metric by its short name ({@code "messages sent"}, ..., {@code "sample fraction per
     * group"} as its summary), in a fixed order (driver, after an action).
     */
    public Map<String, Object> values() {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("messages planned", messagesPlanned.value());
        v.put("messages sent", messagesSent.value());
        v.put("messages delivered", messagesDelivered.value());
        v.put("messages read from local disk", messagesLocal.value());
        v.put("messages used", messagesUsed.value());
        v.put("messages beyond target", messagesBeyondTarget.value());
        v.put("groups", groups.value());
        v.put("groups below target", groupsBelowTarget.value());
        v.put("blocks cut at deadline", blocksCutAtDeadline.value());
        v.put("groups short of plan", groupsShortOfPlan.value());
        v.put("sample fraction per group", sampleFraction.value());
        v.put("rows sampled", rowsSampled.value());
        v.put("rows", rows.value());
        v.put("blocks pulled over ATP", blocksOverAtp.value());
        v.put("blocks pulled over TCP", blocksOverTcp.value());
        v.put("ATP packets sent", packetsSent.value());
        v.put("ATP packets retransmitted", packetsRetransmitted.value());
        v.put("ATP packets lost", packetsLost.value());
        v.put("TCP messages written", tcpMessagesWritten.value());
        v.put("transfers without sender counters", transfersWithoutSenderCounters.value());
        v.put("block bytes", blockBytes.value());
        v.put("exact bytes", exactBytes.value());
        v.put("bytes read", bytesRead.value());
        v.put("bytes saved vs exact", bytesSaved.value());
        return v;
    }

    @Override
    public String toString() {
        return "ApproxShuffleMetrics{shuffle " + shuffleId + ", " + values() + "}";
    }
}
