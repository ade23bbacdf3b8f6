package io.netapprox.flink;

import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.sampling.ShareSample;
import io.netapprox.core.transport.ExchangeRegistry;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.TransferReport;
import io.netapprox.core.transport.TransportException;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.taskmanager.TaskManagerRuntimeInfo;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receiver side of the approximate exchange. For each {@link Manifest} it pulls the sender's epoch
 * (over ATP from another TaskManager, directly from its own), accumulates the delivered messages
 * per stratum on the task thread (ATP hands them over through the {@link MailboxExecutor}; a
 * message occupies the ATP receive window until then, which is the sender's credit), and when the
 * epoch's ATP job completes - every stratum at its target - or {@code approx.epochTimeout} passes,
 * emits one {@link WindowShare} per stratum to the window operator.
 *
 * <p>Watermarks, checkpoint barriers and the end of input wait until every epoch whose manifest
 * arrived before them is resolved ({@link #processWatermark}, {@link #prepareSnapshotPreBarrier},
 * {@link #endInput}): windows fire and snapshots are taken on resolved epochs only, and the
 * deadline bounds how long a watermark can be held.
 */
final class ApproxReceiver<T, K> extends AbstractStreamOperator<WindowShare<K>>
        implements OneInputStreamOperator<Manifest, WindowShare<K>>, BoundedOneInput {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ApproxReceiver.class);

    private final QuerySpec<T, K> spec;
    private final ApproxConfig config;
    private final TypeInformation<K> keyType;
    private final long exchangeId;
    private final transient MailboxExecutor mailbox;
    private final ShareSample.Columns columns;

    private transient ExchangeRegistry.Lease<TaskManagerExchange> exchangeLease;
    private transient TaskManagerExchange exchange;
    private transient TypeSerializer<K> keySerializer;

    /** Epochs whose transfer is running (task thread only). */
    private transient Map<OutboxKey, IncomingEpoch<K>> pending;

    /** Epochs whose samples are not emitted yet: watermarks and barriers wait for them. */
    private transient int unresolved;

    private transient Counter messagesReceived;
    private transient Counter malformedMessages;
    private transient Counter recordsSampled;
    private transient Counter recordsPopulation;
    private transient Counter groupsBelowTarget;
    private transient Counter epochDeadlines;
    private transient Counter epochsFailed;
    private transient Counter localEpochs;
    private transient Counter localMessages;
    private transient Counter epochsPulled;
    private transient Counter epochsPushed;
    private transient Counter epochsOverTcp;
    private transient Counter groupWaitsBeyondDeadline;
    private transient Counter pushesExpired;
    private transient volatile double achievedMsr;

    ApproxReceiver(
            StreamOperatorParameters<WindowShare<K>> parameters,
            QuerySpec<T, K> spec,
            ApproxConfig config,
            TypeInformation<K> keyType,
            long exchangeId) {
        super(parameters);
        this.spec = spec;
        this.config = config;
        this.keyType = keyType;
        this.exchangeId = exchangeId;
        this.mailbox = parameters.getMailboxExecutor();
        this.columns = spec.shareColumns();
    }

    /** One epoch being pulled: its strata and what arrived so far (task thread only). */
    private static final class IncomingEpoch<K> {
        final Manifest manifest;
        final WindowShare<K>[] samples;
        ScheduledFuture<?> deadline;
        volatile IncomingTransfer transfer;

        /** Strata still below their target. */
        int belowTarget;

        /** The samples went to the window operator. */
        boolean emitted;

        /** Counted in {@code unresolved} (pulled over ATP, not taken locally). */
        boolean counted;

        /** The transfer is no longer wanted (finished, expired, or the task closes). */
        volatile boolean closed;

        /** When the manifest arrived and when the pull started (after connecting and queueing). */
        long arrivedNanos;

        long manifestWallMillis;

        volatile long pullStartedNanos;

        IncomingEpoch(Manifest m, WindowShare<K>[] samples) {
            this.manifest = m;
            this.samples = samples;
            this.belowTarget = samples.length;
        }
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
        pending = new HashMap<>();
        messagesReceived = getMetricGroup().counter("approxMessagesReceived");
        malformedMessages = getMetricGroup().counter("approxMalformedMessages");
        recordsSampled = getMetricGroup().counter("approxRecordsSampled");
        recordsPopulation = getMetricGroup().counter("approxRecordsPopulation");
        groupsBelowTarget = getMetricGroup().counter("approxGroupsBelowTarget");
        epochDeadlines = getMetricGroup().counter("approxEpochDeadlines");
        epochsFailed = getMetricGroup().counter("approxEpochsFailed");
        localEpochs = getMetricGroup().counter("approxLocalEpochs");
        localMessages = getMetricGroup().counter("approxLocalMessages");
        epochsPulled = getMetricGroup().counter("approxEpochsPulled");
        epochsPushed = getMetricGroup().counter("approxEpochsPushed");
        epochsOverTcp = getMetricGroup().counter("approxEpochsOverTcp");
        groupWaitsBeyondDeadline = getMetricGroup().counter("approxGroupWaitsBeyondDeadline");
        pushesExpired = getMetricGroup().counter("approxPushesExpired");
        getMetricGroup().gauge("approxAchievedMsr", () -> achievedMsr);
        getMetricGroup().gauge("approxPendingEpochs", () -> pending.size());
    }

    @Override
    @SuppressWarnings("unchecked")
    public void processElement(StreamRecord<Manifest> element) throws Exception {
        Manifest m = element.getValue();
        List<StratumInfo<K>> strata =
                StratumTable.decode(m.strata, m.strataCount, spec.valueCount(), keySerializer);
        WindowShare<K>[] samples = new WindowShare[strata.size()];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = new WindowShare<>(strata.get(i), columns);
        }
        IncomingEpoch<K> e = new IncomingEpoch<>(m, samples);
        OutboxKey key = m.outboxKey(exchangeId);
        if (m.engineId.equals(exchange.engineId())) {
            // same TaskManager, no network: everything submitted arrives (submit=slack / all:
            // every message, the strata are a census; submit=target: the first ceil(MSR*N), as
            // over ATP)
            EpochOutbox o = exchange.outboxes().takeLocal(key);
            if (o != null) {
                boolean all = config.submit() != ApproxConfig.Submit.TARGET;
                for (int g = 0; g < o.messages.length && g < samples.length; g++) {
                    int n = all ? o.messages[g].length : strata.get(g).target();
                    for (int i = 0; i < n; i++) {
                        samples[g].addMessage(Unpooled.wrappedBuffer(o.messages[g][i]));
                    }
                    localMessages.inc(n);
                }
            }
            localEpochs.inc();
            resolve(e);
            return;
        }
        pending.put(key, e);
        e.counted = true;
        e.arrivedNanos = System.nanoTime();
        e.manifestWallMillis = System.currentTimeMillis();
        unresolved++;
        if (m.pushed) {
            // the sender pushes this (tail) epoch right behind its manifest: no request
            exchange.pushes()
                    .claimPush(key, (tr, msg) -> onMessage(key, msg))
                    .whenComplete(
                            (t, err) -> {
                                if (err != null) {
                                    // the push came but its deadline passed before this
                                    // manifest: its data is gone (a pull would find no outbox)
                                    toMailbox(
                                            () -> {
                                                pushesExpired.inc();
                                                finish(key, null, err);
                                            });
                                    return;
                                }
                                if (t == null) { // the push did not come: pull it
                                    pull(key, e, m, strata);
                                    return;
                                }
                                toMailbox(
                                        () -> {
                                            epochsPushed.inc();
                                            armDeadline(key, e);
                                        });
                                attach(key, e, t);
                            });
            return;
        }
        pull(key, e, m, strata);
    }

    /** Pulls the epoch (DATA_REQUEST, over the peer's pull gate). */
    private void pull(OutboxKey key, IncomingEpoch<K> e, Manifest m, List<StratumInfo<K>> strata) {
        exchange.peer(m.engineId, new InetSocketAddress(m.controlHost, m.controlPort))
                .whenComplete(
                        (peer, err) -> {
                            if (err != null) {
                                toMailbox(() -> finish(key, null, err));
                                return;
                            }
                            toMailbox(() -> armDeadline(key, e));
                            int[] targets = new int[strata.size()];
                            for (int g = 0; g < targets.length; g++) {
                                targets[g] = strata.get(g).target();
                            }
                            exchange.pull(
                                            m.engineId,
                                            peer,
                                            key,
                                            targets,
                                            (tr, msg) -> onMessage(key, msg),
                                            () -> e.closed)
                                    .whenComplete(
                                            (t, err2) -> {
                                                if (t == null) {
                                                    if (err2 != null) {
                                                        toMailbox(() -> finish(key, null, err2));
                                                    }
                                                    return;
                                                }
                                                toMailbox(epochsPulled::inc);
                                                attach(key, e, t);
                                            });
                        });
    }

    /** The epoch's transfer (pulled or pushed) started: its end resolves the epoch. */
    private void attach(OutboxKey key, IncomingEpoch<K> e, IncomingTransfer t) {
        e.pullStartedNanos = System.nanoTime();
        e.transfer = t;
        if (t.peer().dataPlane() == DataPlaneKind.TCP) { // approx.dataPlane=tcp, or auto's fallback
            toMailbox(epochsOverTcp::inc);
        }
        if (e.closed) {
            t.report().cancel(true);
        }
        t.report().whenComplete((r, err3) -> toMailbox(() -> finish(key, r, err3)));
    }

    /**
     * The epoch's deadline runs from the moment its peer is connected, not from its manifest: the
     * first epochs from a peer wait for the connection (up to the rendezvous and the connect
     * timeout, seconds on a loaded machine), which left the first windows of the demo too little
     * time to transfer. Queueing behind earlier pulls from the same peer does count, so a watermark
     * is held at most the connection time plus {@code approx.epochTimeout} however many epochs
     * queue (with the deadline from the start of each pull, a stalled peer held it for every queued
     * epoch in turn). Task thread.
     */
    private void armDeadline(OutboxKey key, IncomingEpoch<K> e) {
        if (e.closed || e.emitted || pending.get(key) != e) {
            return;
        }
        long now = getProcessingTimeService().getCurrentProcessingTime();
        e.deadline =
                getProcessingTimeService()
                        .registerTimer(now + config.epochTimeout().toMillis(), t -> expire(key));
    }

    /** ATP event thread: hand the message to the task thread, which releases it. */
    private void onMessage(OutboxKey key, AtpMessage msg) {
        try {
            mailbox.execute(
                    () -> {
                        try {
                            IncomingEpoch<K> e = pending.get(key);
                            long g = msg.groupId();
                            if (e != null && !e.emitted && g >= 0 && g < e.samples.length) {
                                accept(e, e.samples[(int) g], msg);
                            }
                        } finally {
                            msg.release();
                        }
                    },
                    "NetApprox message");
        } catch (RejectedExecutionException closed) {
            msg.release();
        }
    }

    /**
     * Accumulates one message. Once every stratum has its target the epoch is resolved right away -
     * ATP's own completion criterion - without waiting for the job's report (which follows).
     */
    private void accept(IncomingEpoch<K> e, WindowShare<K> s, AtpMessage msg) {
        try {
            s.addMessage(msg.content());
            messagesReceived.inc();
        } catch (IllegalArgumentException bad) {
            malformedMessages.inc();
            return;
        }
        if (s.share.deliveredMessages() == s.share.target() && --e.belowTarget == 0) {
            resolve(e);
        }
    }

    private void toMailbox(Runnable r) {
        try {
            mailbox.execute(r::run, "NetApprox epoch done");
        } catch (RejectedExecutionException closed) {
            // the task is closing; its epochs do not matter any more
        }
    }

    /** The epoch's transfer ended (report, or failure): emit what arrived. Task thread. */
    private void finish(OutboxKey key, TransferReport report, Throwable err) {
        IncomingEpoch<K> e = pending.remove(key);
        if (e == null) {
            return; // expired before
        }
        e.closed = true;
        if (e.deadline != null) {
            e.deadline.cancel(false);
        }
        if (err != null) {
            Throwable cause =
                    err instanceof CompletionException && err.getCause() != null
                            ? err.getCause()
                            : err;
            if (cause instanceof TransportException te && te.noDataPlane()) {
                // not a lost epoch but a path no epoch can take (ATP only, UDP blocked): every
                // later window would be answered without this sender's data, so fail the task
                epochsFailed.inc();
                throw new IllegalStateException(
                        "NetApprox: cannot receive "
                                + e.manifest
                                + ": "
                                + te.getMessage()
                                + " (approx.dataPlane=auto falls back to TCP)",
                        te);
            }
            if (!(cause instanceof CancellationException) && !e.emitted) {
                epochsFailed.inc();
                LOG.warn(
                        "NetApprox: {} {} failed, answered without its data: {}",
                        e.manifest.pushed ? "receiving pushed" : "pulling",
                        e.manifest,
                        cause.getMessage() != null ? cause.getMessage() : cause.toString());
            }
        }
        if (report != null) {
            // a group short of its target that went longer than the epoch deadline without data:
            // starved (behind class 0 on a strict-priority switch, or a stalled path)
            groupWaitsBeyondDeadline.inc(
                    report.groupsWaitingLongerThan(config.epochDeadline().toNanos()));
        }
        if (!e.emitted) {
            resolve(e);
        }
    }

    /**
     * The epoch's deadline passed: give the transfer up and, unless its targets were met, go on
     * with what arrived.
     */
    private void expire(OutboxKey key) {
        IncomingEpoch<K> e = pending.remove(key);
        if (e == null) {
            return;
        }
        e.closed = true;
        IncomingTransfer t = e.transfer;
        if (t != null) {
            t.report().cancel(true); // later messages are released unseen
        }
        if (!e.emitted) {
            epochDeadlines.inc();
            for (WindowShare<K> s : e.samples) {
                if (s.share.belowTarget()) {
                    groupWaitsBeyondDeadline.inc(); // waited the whole epoch timeout
                }
            }
            long started = e.pullStartedNanos;
            int delivered = 0;
            int messages = 0;
            for (WindowShare<K> s : e.samples) {
                delivered += s.share.deliveredMessages();
                messages += s.share.population();
            }
            LOG.warn(
                    "NetApprox: {} not complete after {} ms ({}; {} of {} messages arrived);"
                            + " going on with what arrived",
                    e.manifest,
                    config.epochTimeout().toMillis(),
                    started == 0
                            ? "its pull never started: connecting or queued behind earlier pulls"
                            : "pull started after "
                                    + (started - e.arrivedNanos) / 1_000_000
                                    + " ms of connecting and queueing",
                    delivered,
                    messages);
            resolve(e);
        }
    }

    /** Hands the epoch's samples to the window operator (once). */
    private void resolve(IncomingEpoch<K> e) {
        e.emitted = true;
        if (e.counted) {
            unresolved--;
            if (LOG.isDebugEnabled()) {
                logTimeline(e);
            }
        }
        long n = 0;
        long delivered = 0;
        for (WindowShare<K> s : e.samples) {
            if (s.share.belowTarget()) {
                groupsBelowTarget.inc();
            }
            recordsSampled.inc(s.share.deliveredRecords());
            recordsPopulation.inc(s.share.records());
            n += s.share.population();
            delivered += s.share.deliveredMessages();
            output.collect(new StreamRecord<>(s, s.windowEnd - 1));
        }
        achievedMsr = n == 0 ? 0 : (double) delivered / n;
    }

    /**
     * Where a remote epoch's time went (docs/flink.md, lab diagnosis): the manifest's lag behind
     * its windows' end, the wait until its transfer started (connecting, pull queue, or the claimed
     * push) and until it was resolved.
     */
    private void logTimeline(IncomingEpoch<K> e) {
        long now = System.nanoTime();
        long lastEnd = Long.MIN_VALUE;
        int delivered = 0;
        int messages = 0;
        for (WindowShare<K> s : e.samples) {
            lastEnd = Math.max(lastEnd, s.windowEnd);
            delivered += s.share.deliveredMessages();
            messages += s.share.population();
        }
        long started = e.pullStartedNanos;
        LOG.debug(
                "epoch {} {}: manifest {} ms after its window's end (wall clock), transfer started"
                        + " {} ms and resolved {} ms after the manifest; {} of {} messages",
                e.manifest.pushed ? "pushed" : "pulled",
                e.manifest,
                e.manifestWallMillis - lastEnd,
                started == 0 ? -1 : (started - e.arrivedNanos) / 1_000_000,
                (now - e.arrivedNanos) / 1_000_000,
                delivered,
                messages);
    }

    /** Resolves every epoch whose manifest came before this point (deadlines bound the wait). */
    private void awaitPending() throws InterruptedException {
        while (unresolved > 0) {
            mailbox.yield();
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        awaitPending(); // windows fire on resolved epochs only
        super.processWatermark(mark);
    }

    /**
     * Idle downstream only with every epoch resolved: the samples of the manifests that came before
     * are this operator's records in flight, and plain Flink's records in flight precede the IDLE
     * status too (downstream of the window operator, an idle input is left out of the watermark).
     */
    @Override
    public void processWatermarkStatus(WatermarkStatus status) throws Exception {
        if (status.isIdle()) {
            awaitPending();
        }
        super.processWatermarkStatus(status);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        awaitPending(); // snapshots hold resolved epochs only
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void endInput() throws Exception {
        awaitPending();
    }

    @Override
    public void finish() throws Exception {
        awaitPending();
        super.finish();
    }

    @Override
    public void close() throws Exception {
        try {
            if (pending != null) {
                for (IncomingEpoch<K> e : pending.values()) {
                    e.closed = true;
                    IncomingTransfer t = e.transfer;
                    if (t != null) {
                        t.report().cancel(true);
                    }
                }
                pending.clear();
            }
            if (exchange != null) {
                exchangeLease.close();
                exchangeLease = null;
                exchange = null;
            }
        } finally {
            super.close();
        }
    }
}
