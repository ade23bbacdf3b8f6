package io.netapprox.spark;

import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.TransferListener;
import io.netapprox.core.transport.TransferReport;
import io.netty.buffer.ByteBufInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reduce task's pulls of other executors' map output over ATP: at most {@link #MAX_IN_FLIGHT}
 * blocks at a time, one ATP job per block with the MSRs of the plan ({@link BlockRequest}), each
 * delivered message aggregated into its stratum ({@link StratumSample}) by the task's thread as it
 * arrives - never collected.
 *
 * <p>Stop at the target: the engine's event thread hands a message over only while its group has
 * fewer than its target ({@code ceil(MSR_g N_g)}, from the job's announcement); later ones are
 * released unread and counted ({@code beyond target}). Handed-over messages stay unreleased until
 * the task has aggregated them, so the queue between the threads is bounded by the session's
 * receive window (the engine's flow control throttles the sender), not by the data.
 *
 * <p>Failures: a pull that fails (peer gone, refused, job failed, bad data) is retried once with a
 * fresh request; a second failure or no outcome within {@code fetchTimeoutMs} of the pull's start
 * throws Spark's {@code FetchFailedException}, so Spark reruns the map stage.
 *
 * <p>Time bound ({@code WITHIN}): at the query's deadline {@link #finish()} stops waiting, on
 * either data plane. Every running pull gives what it delivered so far (its strata, fewer messages
 * than planned: the estimators weight each stratum by what arrived); a pull whose table never came,
 * and a block never requested, is a {@link GroupAggregator.MissingShare} of each group its request
 * planned (of every group, without a plan).
 */
final class RemotePulls implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RemotePulls.class);

    /** Outstanding pulls per reduce task. */
    static final int MAX_IN_FLIGHT = 32;

    /** One block to pull. */
    record Block(BlockManagerId loc, ShuffleBlockId id, int mapIndex, long size) {}

    /** Where finished strata go, and how a failed block becomes Spark's fetch failure. */
    interface Sink {
        void stratum(StratumSample s);

        RuntimeException fetchFailed(Block b, String message, Throwable cause);

        /** A share of {@code group} (null: of any group) that did not arrive by the deadline. */
        void missing(String group);
    }

    private final ApproxSpec spec;
    private final ExecutorTransport transport;
    private final List<Block> blocks;
    private final java.util.function.Function<Block, BlockRequest> requests;
    private final Sink sink;
    private final ReadTally tally;
    private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
    private final List<Pull> running = new ArrayList<>();
    private final Map<ApproxPeer, List<Integer>> succeeded = new IdentityHashMap<>();
    private int next;
    private int finished;

    /** The query's deadline (System.nanoTime), 0 for none. */
    private final long deadline;

    RemotePulls(
            ApproxSpec spec,
            ExecutorTransport transport,
            List<Block> blocks,
            java.util.function.Function<Block, BlockRequest> requests,
            Sink sink,
            ReadTally tally,
            long deadline) {
        this.deadline = deadline;
        this.spec = spec;
        this.transport = transport;
        this.blocks = blocks;
        this.requests = requests;
        this.sink = sink;
        this.tally = tally;
    }

    /** A message handed over, or the end (report or failure) of an attempt. */
    private record Item(
            Attempt attempt, AtpMessage message, TransferReport report, Throwable error) {}

    private final class Pull {
        final Block block;
        final long deadline;
        boolean retried;
        Attempt current;

        Pull(Block block) {
            this.block = block;
            this.deadline =
                    System.nanoTime()
                            + TimeUnit.MILLISECONDS.toNanos(transport.conf().fetchTimeoutMs());
        }
    }

    /** One request of a block (a retry is a new attempt; the old one's leftovers are ignored). */
    private final class Attempt implements TransferListener {
        final Pull pull;
        // timings of the attempt (System.nanoTime), for the DEBUG line of a completed pull
        final long tLaunch = System.nanoTime();
        volatile long tPeer;
        volatile long tAnnounced;
        volatile long tFirst;
        volatile long tLast;
        volatile long tEnd;
        volatile IncomingTransfer transfer;
        volatile ApproxPeer peer;
        // event thread only
        private int[] targets;
        private int[] accepted;
        // read by the task thread after the attempt's end item (the queue orders them)
        volatile long dispatched;
        volatile long beyond;
        volatile long beyondBytes;
        // task thread only
        MapOutputFormat.Table table;
        StratumSample[] strata;
        long bytes;

        Attempt(Pull pull) {
            this.pull = pull;
        }

        @Override
        public void onMessage(IncomingTransfer t, AtpMessage m) {
            transfer = t;
            long now = System.nanoTime();
            if (tFirst == 0) {
                tFirst = now;
            }
            tLast = now;
            dispatched++;
            if (targets == null) {
                List<GroupSpec> groups = t.groups();
                targets = new int[groups == null ? 0 : groups.size()];
                accepted = new int[targets.length];
                for (int g = 0; g < targets.length; g++) {
                    targets[g] = groups.get(g).target();
                }
            }
            long g = m.groupId();
            if (g < 0 || g >= targets.length || accepted[(int) g] >= targets[(int) g]) {
                beyond++;
                beyondBytes += m.content().readableBytes();
                m.release();
                return;
            }
            accepted[(int) g]++;
            queue.add(new Item(this, m, null, null));
        }
    }

    /** Starts pulls up to the in-flight bound. */
    void start() {
        while (next < blocks.size() && running.size() < MAX_IN_FLIGHT) {
            Pull p = new Pull(blocks.get(next++));
            running.add(p);
            launch(p);
        }
    }

    private void launch(Pull p) {
        Attempt a = new Attempt(p);
        p.current = a;
        InetSocketAddress ctl = ExecutorTransport.controlAddressOf(p.block.loc()).orElse(null);
        if (ctl == null) {
            queue.add(
                    new Item(
                            a,
                            null,
                            null,
                            new IOException(
                                    "map output "
                                            + p.block.id()
                                            + " at "
                                            + p.block.loc()
                                            + " carries no NetApprox control address")));
            return;
        }
        byte[] req = requests.apply(p.block).encode();
        transport
                .peer(ctl)
                .thenApply(
                        peer -> {
                            a.tPeer = System.nanoTime();
                            a.peer = peer;
                            IncomingTransfer t = peer.request(req, a);
                            a.transfer = t;
                            t.announced().thenRun(() -> a.tAnnounced = System.nanoTime());
                            return t;
                        })
                .whenComplete(
                        (t, err) -> {
                            if (err != null) {
                                queue.add(new Item(a, null, null, unwrap(err)));
                            } else {
                                t.report()
                                        .whenComplete(
                                                (r, e) -> {
                                                    a.tEnd = System.nanoTime();
                                                    queue.add(
                                                            new Item(
                                                                    a,
                                                                    null,
                                                                    r,
                                                                    e == null ? null : unwrap(e)));
                                                });
                            }
                        });
    }

    /** Milliseconds, one decimal (for log lines). */
    static String ms(long nanos) {
        return String.format("%.1f", nanos / 1e6);
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof java.util.concurrent.CompletionException
                        || t instanceof ExecutionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Processes what has arrived, without waiting. */
    void drainAvailable() {
        Item it;
        while ((it = queue.poll()) != null) {
            process(it);
        }
        start();
    }

    private boolean pastDeadline() {
        return deadline != 0 && System.nanoTime() - deadline >= 0;
    }

    /**
     * Waits for every pull to finish, processing messages as they arrive; at the query's deadline,
     * takes what arrived instead ({@link #cutAtDeadline()}).
     */
    void finish() throws InterruptedException {
        start();
        while (finished < blocks.size()) {
            if (pastDeadline()) {
                cutAtDeadline();
                return;
            }
            long earliest = deadline != 0 ? deadline : Long.MAX_VALUE;
            for (Pull p : running) {
                earliest = Math.min(earliest, p.deadline);
            }
            long wait = Math.max(1, earliest - System.nanoTime());
            Item it = queue.poll(wait, TimeUnit.NANOSECONDS);
            if (it != null) {
                process(it);
                start();
                continue;
            }
            if (pastDeadline()) {
                continue; // cut at the top of the loop
            }
            long now = System.nanoTime();
            for (Pull p : running) {
                if (now >= p.deadline) {
                    throw sink.fetchFailed(
                            p.block,
                            "no answer within " + transport.conf().fetchTimeoutMs() + " ms",
                            new TimeoutException());
                }
            }
        }
    }

    /**
     * The deadline passed: takes what has been handed over, then each running pull's strata as they
     * are (a pull whose table came: its groups with the messages that arrived), and counts every
     * other share as missing. The pulls are given up when this is closed.
     */
    private void cutAtDeadline() {
        Item it;
        while ((it = queue.poll()) != null) {
            process(it);
        }
        for (Pull p : List.copyOf(running)) {
            Attempt a = p.current;
            if (a != null
                    && a.table == null
                    && a.transfer != null
                    && a.transfer.response().isDone()) {
                try {
                    ensureTable(a); // the table came, no message processed yet
                } catch (Exception e) {
                    LOG.debug(
                            "NetApprox: table of {} at the deadline: {}",
                            p.block.id(),
                            e.toString());
                }
            }
            if (a != null && a.table != null) {
                long used = 0;
                for (StratumSample s : a.strata) {
                    sink.stratum(s);
                    tally.planned += s.target;
                    used += s.deliveredMessages();
                }
                tally.used += used;
                tally.delivered += used;
                tally.bytesRead += a.bytes;
                tally.blockBytes += p.block.size();
                tally.remoteBlocks++;
            } else {
                missing(p.block);
            }
            tally.cutAtDeadline++;
        }
        for (int i = next; i < blocks.size(); i++) {
            missing(blocks.get(i));
            tally.cutAtDeadline++;
        }
        next = blocks.size();
    }

    /** A block none of whose messages will be read: a missing share of each group it planned. */
    private void missing(Block b) {
        Map<String, Double> planned = requests.apply(b).msrs();
        if (planned.isEmpty()) {
            sink.missing(null);
        }
        for (String g : planned.keySet()) {
            sink.missing(g);
        }
    }

    private void process(Item it) {
        Attempt a = it.attempt();
        Pull p = a.pull;
        if (p.current != a) { // a given-up attempt
            if (it.message() != null) {
                it.message().release();
            }
            return;
        }
        try {
            if (it.message() != null) {
                try {
                    StratumSample s = stratum(a, (int) it.message().groupId());
                    a.bytes += it.message().content().readableBytes();
                    s.addMessage(
                            new DataInputStream(new ByteBufInputStream(it.message().content())));
                } finally {
                    it.message().release();
                }
                return;
            }
            if (it.error() != null) {
                throw it.error();
            }
            complete(a, it.report());
        } catch (Throwable e) {
            if (pastDeadline() && !(e instanceof InterruptedException)) {
                // past the deadline nothing is retried: the pull is cut with what it has
                LOG.debug("NetApprox: pull of {} at the deadline: {}", p.block.id(), e.toString());
                return;
            }
            failed(p, a, e);
        }
    }

    /** The stratum of group g of an attempt. */
    private StratumSample stratum(Attempt a, int g) throws Exception {
        ensureTable(a);
        return a.strata[g];
    }

    /** Reads the attempt's table (the job's DATA_RESPONSE) and sets up its strata, once. */
    private void ensureTable(Attempt a) throws Exception {
        if (a.table == null) {
            long until = deadline != 0 ? Math.min(a.pull.deadline, deadline) : a.pull.deadline;
            long left = Math.max(1, until - System.nanoTime());
            byte[] response = a.transfer.response().get(left, TimeUnit.NANOSECONDS);
            MapOutputFormat.Table t = MapOutputFormat.readTable(response, -1);
            List<GroupSpec> announced = a.transfer.groups();
            if (announced == null || announced.size() != t.groups().size()) {
                throw new IOException(
                        "the table of "
                                + a.pull.block.id()
                                + " has "
                                + t.groups().size()
                                + " groups, the job "
                                + (announced == null ? "none" : announced.size()));
            }
            a.strata = new StratumSample[t.groups().size()];
            for (int i = 0; i < a.strata.length; i++) {
                a.strata[i] =
                        new StratumSample(
                                spec,
                                t.groups().get(i),
                                a.pull.block.mapIndex(),
                                t.numValues(),
                                t.withKey());
                int announcedTarget = announced.get(i).target();
                if (announcedTarget < a.strata[i].target) {
                    throw new IOException(
                            "group "
                                    + t.groups().get(i).key()
                                    + " of "
                                    + a.pull.block.id()
                                    + ": target "
                                    + a.strata[i].target
                                    + ", announced "
                                    + announcedTarget);
                }
            }
            a.table = t;
        }
    }

    private void complete(Attempt a, TransferReport report) throws Exception {
        if (!report.isSuccess()) {
            throw new IOException("transfer ended with status " + report.status());
        }
        ensureTable(a); // (no message came when every group's target is 0)
        long used = 0;
        for (StratumSample s : a.strata) {
            if (s.deliveredMessages() < s.target) {
                throw new IOException(
                        s + " of " + a.pull.block.id() + ": below its target after the job ended");
            }
            used += s.deliveredMessages();
        }
        for (StratumSample s : a.strata) {
            sink.stratum(s);
            tally.planned += s.target;
        }
        tally.used += used;
        tally.delivered += report.delivered();
        tally.beyond += a.beyond;
        tally.bytesRead += a.bytes + a.beyondBytes;
        tally.blockBytes += a.pull.block.size();
        tally.remoteBlocks++;
        if (a.peer != null && a.peer.dataPlane() == DataPlaneKind.TCP) {
            tally.tcpBlocks++;
        }
        if (a.peer != null) {
            succeeded.computeIfAbsent(a.peer, k -> new ArrayList<>()).add(a.transfer.jobId());
        }
        running.remove(a.pull);
        finished++;
        if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "NetApprox pull of {}: after {} ms connected, {} ms announced, {} ms first message,"
                            + " {} ms last, {} ms report, {} ms processed by the task; used {} delivered {}"
                            + " beyond target {}",
                    a.pull.block.id(),
                    ms(a.tPeer - a.tLaunch),
                    ms(a.tAnnounced - a.tLaunch),
                    ms(a.tFirst - a.tLaunch),
                    ms(a.tLast - a.tLaunch),
                    ms(a.tEnd - a.tLaunch),
                    ms(System.nanoTime() - a.tLaunch),
                    used,
                    report.delivered(),
                    a.beyond);
        }
    }

    private void failed(Pull p, Attempt a, Throwable e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            throw sink.fetchFailed(p.block, "interrupted", e);
        }
        giveUp(a);
        if (p.retried || System.nanoTime() >= p.deadline) {
            throw sink.fetchFailed(p.block, String.valueOf(e), e);
        }
        // One fresh pull (new connection if the old one ended) before giving up: a transient
        // transport failure then costs one block, not a map-stage rerun. A dead executor fails the
        // reconnect fast.
        LOG.warn(
                "NetApprox: pull of {} from {} failed ({}); retrying once",
                p.block.id(),
                p.block.loc(),
                e.toString());
        p.retried = true;
        launch(p);
    }

    private static void giveUp(Attempt a) {
        IncomingTransfer t = a.transfer;
        if (t != null && !t.isDone()) {
            t.report().cancel(false); // later messages are released unseen
        }
    }

    /**
     * Asks every executor this task pulled from for the sender-side numbers of its transfers
     * ({@link ServedTransfers}): one query per peer, all sent at once; {@link
     * PendingCounters#await()} collects the answers (one control round trip in all, not one per
     * peer), so the caller can do other work - aggregate, build its result - while they travel.
     */
    PendingCounters askServedCounters() {
        Map<ApproxPeer, IncomingTransfer> asked = new IdentityHashMap<>();
        Map<ApproxPeer, Integer> jobs = new IdentityHashMap<>();
        long unasked = 0;
        for (Map.Entry<ApproxPeer, List<Integer>> e : succeeded.entrySet()) {
            int[] ids = e.getValue().stream().mapToInt(Integer::intValue).toArray();
            try {
                asked.put(
                        e.getKey(),
                        e.getKey().request(ServedTransfers.query(ids), (tr, m) -> m.release()));
                jobs.put(e.getKey(), ids.length);
            } catch (RuntimeException ex) {
                unasked += ids.length;
                LOG.warn(
                        "NetApprox: no sender counters from {} ({}); counted in 'transfers without"
                                + " sender counters'",
                        e.getKey(),
                        ex.toString());
            }
        }
        return new PendingCounters(
                asked, jobs, unasked, System.nanoTime(), transport.conf().fetchTimeoutMs());
    }

    /**
     * How much longer than the serving side's wait ({@code fetchTimeoutMs}) a reducer waits for the
     * counters' answer: the answer's own trip.
     */
    static final long ANSWER_SLACK_MS = 10_000;

    /** Sender-counters queries in flight (see {@link #askServedCounters()}). */
    static final class PendingCounters {
        private final Map<ApproxPeer, IncomingTransfer> asked;
        private final Map<ApproxPeer, Integer> jobs;
        private final long unasked;
        private final long askedAt;
        private final long waitMs;

        private PendingCounters(
                Map<ApproxPeer, IncomingTransfer> asked,
                Map<ApproxPeer, Integer> jobs,
                long unasked,
                long askedAt,
                long waitMs) {
            this.asked = asked;
            this.jobs = jobs;
            this.unasked = unasked;
            this.askedAt = askedAt;
            this.waitMs = waitMs;
        }

        /** Whether there is anything to count (false: nothing was pulled from a peer). */
        boolean any() {
            return !asked.isEmpty() || unasked > 0;
        }

        /** The counters and how many of the transfers asked for they leave out. */
        record Result(ServedTransfers.Counters counters, long missing) {}

        /**
         * Waits for the answers - each serving side answers once its transfers are final, within
         * {@code fetchTimeoutMs} - at most {@code fetchTimeoutMs} + {@value #ANSWER_SLACK_MS} ms
         * from when they were asked, and sums them; {@link Result#missing()} counts the transfers
         * whose numbers are not all in the sums (a peer that did not answer in time, failed, or did
         * not have them final).
         */
        Result await() {
            ServedTransfers.Counters sum = ServedTransfers.Counters.NONE;
            long missing = unasked;
            long deadline = askedAt + TimeUnit.MILLISECONDS.toNanos(waitMs + ANSWER_SLACK_MS);
            for (Map.Entry<ApproxPeer, IncomingTransfer> e : asked.entrySet()) {
                IncomingTransfer t = e.getValue();
                int named = jobs.get(e.getKey());
                try {
                    byte[] answer =
                            t.response()
                                    .get(
                                            Math.max(1, deadline - System.nanoTime()),
                                            TimeUnit.NANOSECONDS);
                    ServedTransfers.Counters c = ServedTransfers.Counters.decode(answer);
                    sum = sum.plus(c);
                    missing += Math.max(0, named - c.transfers());
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    missing += named;
                    t.report().cancel(false);
                    continue;
                } catch (IOException
                        | ExecutionException
                        | TimeoutException
                        | RuntimeException ex) {
                    missing += named;
                    t.report().cancel(false);
                    LOG.warn(
                            "NetApprox: no sender counters from {} ({}); counted in 'transfers"
                                    + " without sender counters'",
                            e.getKey(),
                            ex.toString());
                }
            }
            return new Result(sum, missing);
        }

        /** Gives the queries up unanswered (a failed task): their answers are released unseen. */
        void cancel() {
            for (IncomingTransfer t : asked.values()) {
                t.report().cancel(false);
            }
        }
    }

    /** Gives up every running pull and releases the messages not yet processed. */
    @Override
    public void close() {
        for (Pull p : running) {
            if (p.current != null) {
                giveUp(p.current);
            }
        }
        Item it;
        while ((it = queue.poll()) != null) {
            if (it.message() != null) {
                it.message().release();
            }
        }
    }

    /** Counts of one reduce task's reading, for Spark's metrics. */
    static final class ReadTally {
        long planned;
        long delivered;
        long used;
        long beyond;
        long bytesRead;
        long blockBytes;
        long remoteBlocks;
        long tcpBlocks; // of the remote blocks, pulled over the TCP data plane
        long localBlocks;
        long localMessages;
        long localBytes;
        long cutAtDeadline; // remote blocks still pulling (or not started) at the deadline
    }
}
