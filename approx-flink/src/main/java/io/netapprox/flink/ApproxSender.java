package io.netapprox.flink;

import io.netapprox.core.job.JobReport;
import io.netapprox.core.transport.ExchangeRegistry;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.ThreadSafeSimpleCounter;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.taskmanager.TaskManagerRuntimeInfo;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sender side of the approximate exchange, chained after the upstream operator. Assigns each record
 * to its windows and its receiver (the subtask Flink's key groups give its group), buffers the
 * values the query reads per stratum (receiver, window, group), and ends an epoch:
 *
 * <ul>
 *   <li>when a watermark reaches the end of a buffered window (before forwarding the watermark),
 *   <li>when its input goes idle (before forwarding the IDLE status, which lets the receivers'
 *       watermark pass this sender's windows),
 *   <li>before a checkpoint barrier ({@link #prepareSnapshotPreBarrier}), so snapshots hold no open
 *       epoch,
 *   <li>at the end of the input, and when it holds {@code approx.epochMaxRecords} records,
 *   <li>every {@code approx.flushInterval} of processing time when that is set, so a window's
 *       records are shipped (and pulled) while the window is still open and its close only has to
 *       wait for the tail. Each such epoch is a stratum of its own, sampled and weighted on its own
 *       (weights {@code N_s/n_s} stay exact) and planned as if it held the sender's whole share, so
 *       the per-group bound holds a fortiori, at the price of larger samples.
 * </ul>
 *
 * <p>At the end of an epoch each stratum's records are permuted, framed into messages of {@code
 * approx.recordsPerMessage} and given an MSR from its e_max ({@link StratumPlanner}); per receiver
 * the epoch becomes an {@link EpochOutbox} in the TaskManager's {@link TaskManagerExchange} and a
 * {@link Manifest} on the Flink edge, ahead of the watermark or barrier that ended the epoch.
 */
final class ApproxSender<T, K> extends AbstractStreamOperator<Manifest>
        implements OneInputStreamOperator<T, Manifest>, BoundedOneInput {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ApproxSender.class);

    private final QuerySpec<T, K> spec;
    private final ApproxConfig config;
    private final WindowAssigner<? super T, TimeWindow> assigner;
    private final TypeInformation<K> keyType;
    private final long exchangeId;
    private final int receivers;
    private final int maxParallelism;
    private final KeySelector<T, String> topKey;

    private transient ExchangeRegistry.Lease<TaskManagerExchange> exchangeLease;
    private transient TaskManagerExchange exchange;
    private transient TypeSerializer<K> keySerializer;
    private transient WindowAssigner.WindowAssignerContext assignerContext;
    private transient Map<Integer, Map<StratumId<K>, StratumBuffer>> epoch;
    private transient long epochNumber;
    private transient int epochRecords;
    private transient long minWindowMaxTimestamp;
    private transient SplittableRandom random;
    private transient boolean finished;
    private transient Counter recordsIn;
    private transient Counter nonFiniteValues;
    private transient Counter epochs;
    private transient Counter messages;
    private transient Counter targetMessages;
    private transient Counter outboxesDropped;
    private transient Counter flushEpochs;
    private transient Counter epochsPushed;
    private transient Counter manifests;
    private transient volatile double plannedMsr;
    private transient Counter retransmissions;
    private transient volatile double atpLoss;
    private transient volatile int priorityClass;

    /** A stratum at this sender: (window, group). */
    private record StratumId<K>(long start, long end, K group) {}

    ApproxSender(
            StreamOperatorParameters<Manifest> parameters,
            QuerySpec<T, K> spec,
            ApproxConfig config,
            WindowAssigner<? super T, TimeWindow> assigner,
            TypeInformation<K> keyType,
            long exchangeId,
            int receivers,
            int maxParallelism) {
        super(parameters);
        this.spec = spec;
        this.config = config;
        this.assigner = assigner;
        this.keyType = keyType;
        this.exchangeId = exchangeId;
        this.receivers = receivers;
        this.maxParallelism = maxParallelism;
        this.topKey = spec.topKeySelector();
    }

    @Override
    public void open() throws Exception {
        super.open();
        TaskManagerRuntimeInfo tm = getContainingTask().getEnvironment().getTaskManagerInfo();
        exchangeLease =
                TaskManagerExchange.acquire(
                        config,
                        tm.getTmpWorkingDirectory().getAbsolutePath(),
                        tm.getTaskManagerExternalAddress());
        exchange = exchangeLease.get();
        keySerializer = keyType.createSerializer(getExecutionConfig().getSerializerConfig());
        assignerContext =
                new WindowAssigner.WindowAssignerContext() {
                    @Override
                    public long getCurrentProcessingTime() {
                        return getProcessingTimeService().getCurrentProcessingTime();
                    }
                };
        epoch = new HashMap<>();
        minWindowMaxTimestamp = Long.MAX_VALUE;
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        random = new SplittableRandom(exchangeId ^ ((long) subtask << 32) ^ ((long) attempt << 48));
        recordsIn = getMetricGroup().counter("approxRecordsIn");
        nonFiniteValues = getMetricGroup().counter("approxNonFiniteValues");
        epochs = getMetricGroup().counter("approxEpochs");
        messages = getMetricGroup().counter("approxMessages");
        targetMessages = getMetricGroup().counter("approxTargetMessages");
        outboxesDropped = getMetricGroup().counter("approxOutboxesDropped");
        flushEpochs = getMetricGroup().counter("approxFlushEpochs");
        epochsPushed = getMetricGroup().counter("approxEpochsPushed");
        manifests = getMetricGroup().counter("approxManifests");
        getMetricGroup().gauge("approxPlannedMsr", () -> plannedMsr);
        getMetricGroup().gauge("approxOutboxBytes", () -> exchange.outboxes().bytes());
        // the sending engine's numbers, from the reports of pulls over ATP (transport threads)
        retransmissions =
                getMetricGroup().counter("approxRetransmissions", new ThreadSafeSimpleCounter());
        getMetricGroup().gauge("approxAtpLoss", () -> atpLoss);
        getMetricGroup().gauge("approxPriorityClass", () -> priorityClass);
        scheduleFlush();
    }

    /** Arms the next {@code approx.flushInterval} timer (on the task thread, like records). */
    private void scheduleFlush() {
        long interval = config.flushInterval().toMillis();
        if (interval <= 0) {
            return;
        }
        long now = getProcessingTimeService().getCurrentProcessingTime();
        getProcessingTimeService()
                .registerTimer(
                        now + interval,
                        t -> {
                            if (finished) {
                                return;
                            }
                            if (!epoch.isEmpty()) {
                                endEpoch(false);
                                flushEpochs.inc();
                            }
                            scheduleFlush();
                        });
    }

    @Override
    public void processElement(StreamRecord<T> element) throws Exception {
        if (!element.hasTimestamp()) {
            throw new IllegalStateException(
                    "NetApprox: a record has no event-time timestamp; assign timestamps and watermarks"
                            + " (DataStream.assignTimestampsAndWatermarks) before an approximate query");
        }
        T record = element.getValue();
        recordsIn.inc();
        double[] values = spec.values(record);
        for (double v : values) {
            if (!Double.isFinite(v)) {
                // kept and counted per stratum: the answers are what Java's double arithmetic
                // gives over every record (NonFinite), as in the exact topology
                nonFiniteValues.inc();
            }
        }
        K group = spec.groupSelector().getKey(record);
        String key = topKey == null ? null : topKey.getKey(record);
        Collection<TimeWindow> windows =
                assigner.assignWindows(record, element.getTimestamp(), assignerContext);
        int receiver =
                KeyGroupRangeAssignment.assignKeyToParallelOperator(
                        group, maxParallelism, receivers);
        Map<StratumId<K>, StratumBuffer> strata =
                epoch.computeIfAbsent(receiver, r -> new LinkedHashMap<>());
        for (TimeWindow w : windows) {
            strata.computeIfAbsent(
                            new StratumId<>(w.getStart(), w.getEnd(), group),
                            s -> new StratumBuffer(values.length, topKey != null))
                    .add(values, key);
            minWindowMaxTimestamp = Math.min(minWindowMaxTimestamp, w.maxTimestamp());
            epochRecords++;
        }
        if (epochRecords >= config.epochMaxRecords()) {
            endEpoch(false);
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        if (mark.getTimestamp() >= minWindowMaxTimestamp) {
            // its manifests go ahead of the watermark that closes a window; the window's receivers
            // wait for this (tail) epoch, so it is pushed behind its manifests when it can be
            long started = System.nanoTime();
            long closed = minWindowMaxTimestamp;
            long epochNo = epochNumber;
            endEpoch(true);
            if (LOG.isDebugEnabled()) {
                // where a window's latency goes (docs/flink.md, lab diagnosis): the watermark's own
                // lag behind the window's end, then encoding and waiting for outbox space
                LOG.debug(
                        "tail epoch {} of subtask {}: watermark {} ms after the window's end"
                                + " (wall clock), encoded and registered in {} ms",
                        epochNo,
                        getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                        System.currentTimeMillis() - closed - 1,
                        (System.nanoTime() - started) / 1_000_000);
            }
        }
        super.processWatermark(mark);
    }

    /**
     * An input that goes idle must not leave its records behind: downstream, Flink's watermark
     * valve leaves an idle channel out of the watermark, so the other senders' watermarks may close
     * the windows this sender still holds records of. Plain Flink sent those records before the
     * IDLE status; so does this sender: the epoch ends (its manifests go out) before the status is
     * forwarded, and the receivers resolve it before any later watermark. An input that becomes
     * active again starts a new epoch with its next record.
     */
    @Override
    public void processWatermarkStatus(WatermarkStatus status) throws Exception {
        if (status.isIdle()) {
            endEpoch(true); // the receivers may soon wait for it: push it like a window's tail
        }
        super.processWatermarkStatus(status);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        endEpoch(false); // the barrier follows the manifests: snapshots never hold an open epoch
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void endInput() throws Exception {
        endEpoch(false);
    }

    @Override
    public void finish() throws Exception {
        endEpoch(false);
        finished = true;
        super.finish();
    }

    @Override
    public void close() throws Exception {
        try {
            if (exchange != null) {
                if (!finished) {
                    // failed or cancelled: no live receiver will pull this attempt's epochs
                    outboxesDropped.inc(
                            exchange.outboxes()
                                    .dropSender(
                                            exchangeId,
                                            getRuntimeContext()
                                                    .getTaskInfo()
                                                    .getIndexOfThisSubtask(),
                                            getRuntimeContext().getTaskInfo().getAttemptNumber()));
                }
                exchangeLease.close();
                exchangeLease = null;
                exchange = null;
            }
        } finally {
            super.close();
        }
    }

    /**
     * Ends the current epoch: one outbox and one manifest per receiver with data. {@code tail}: a
     * watermark passed a window's end, so the receivers wait for this epoch; it is pushed to every
     * receiver whose TaskManager this one has a session with (see {@link OutboxServer#push}), the
     * others pull it.
     */
    private void endEpoch(boolean tail) throws Exception {
        if (epoch.isEmpty()) {
            return;
        }
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        double scale =
                config.planning() == ApproxConfig.Planning.BALANCED
                        ? Math.sqrt(getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks())
                        : 1.0;
        long epochMessages = 0;
        long epochTargets = 0;
        for (Map.Entry<Integer, Map<StratumId<K>, StratumBuffer>> e : epoch.entrySet()) {
            int receiver = e.getKey();
            List<StratumInfo<K>> table = new ArrayList<>(e.getValue().size());
            byte[][][] msgs = new byte[e.getValue().size()][][];
            double[] msr = new double[msgs.length];
            int i = 0;
            for (Map.Entry<StratumId<K>, StratumBuffer> s : e.getValue().entrySet()) {
                StratumId<K> id = s.getKey();
                StratumBuffer buf = s.getValue();
                buf.permute(random.split());
                int n = buf.records();
                int k = (n + config.recordsPerMessage() - 1) / config.recordsPerMessage();
                msr[i] =
                        StratumPlanner.msr(
                                buf,
                                k,
                                spec,
                                spec.errorBound(id.group()),
                                spec.confidence(),
                                scale);
                msgs[i] = new byte[k][];
                for (int m = 0; m < k; m++) {
                    msgs[i][m] =
                            MessageCodec.encode(
                                    buf,
                                    StratumBuffer.start(m, n, k),
                                    StratumBuffer.start(m + 1, n, k));
                }
                StratumInfo<K> info =
                        new StratumInfo<>(
                                id.start(), id.end(), id.group(), k, n, msr[i], buf.nonFinite());
                table.add(info);
                epochMessages += k;
                epochTargets += info.target();
                i++;
            }
            OutboxKey key = new OutboxKey(exchangeId, subtask, attempt, epochNumber, receiver);
            exchange.outboxes().register(new EpochOutbox(key, msgs, msr, this::served));
            Manifest m = new Manifest();
            m.target = receiver;
            m.sender = subtask;
            m.attempt = attempt;
            m.epoch = epochNumber;
            m.engineId = exchange.engineId();
            m.controlHost = exchange.controlHost();
            m.controlPort = exchange.controlPort();
            m.strataCount = table.size();
            m.strata = StratumTable.encode(table, keySerializer);
            m.pushed = tail && config.pushTail() && exchange.server().push(key);
            manifests.inc();
            if (m.pushed) {
                epochsPushed.inc();
            }
            output.collect(new StreamRecord<>(m));
        }
        epochs.inc();
        messages.inc(epochMessages);
        targetMessages.inc(epochTargets);
        plannedMsr = epochMessages == 0 ? 0 : (double) epochTargets / epochMessages;
        epoch.clear();
        epochRecords = 0;
        minWindowMaxTimestamp = Long.MAX_VALUE;
        epochNumber++;
    }

    /** A pull of one of this sender's outboxes over ATP ended: the sending engine's report. */
    private void served(JobReport r) {
        retransmissions.inc(r.packetsRetransmitted());
        atpLoss = r.measuredLoss();
        long[] prio = r.timeInClassNanos();
        int longest = 0;
        for (int c = 1; c < prio.length; c++) {
            if (prio[c] > prio[longest]) {
                longest = c;
            }
        }
        priorityClass = longest;
    }
}
