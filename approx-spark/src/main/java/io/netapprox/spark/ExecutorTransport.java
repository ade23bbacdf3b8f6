package io.netapprox.spark;

import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ExchangeRegistry;
import io.netapprox.core.transport.OutgoingTransfer;
import io.netapprox.core.transport.PeerCache;
import io.netapprox.core.transport.SendScheduler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import org.apache.spark.storage.ShuffleBlockId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;

/**
 * The executor's NetApprox transport (one per executor JVM, or the driver's in local mode): one
 * {@link ApproxTransport} - one ATP engine and one control server - that serves this executor's
 * approximate map output to other executors' reducers and requests theirs for its own reducers. A
 * reducer reads its own executor's map output from local disk ({@link ApproxShuffleReader}), as
 * Spark does for local blocks, so the transport never needs a session to itself. Started lazily on
 * the first approximate shuffle task (never in a constructor: SparkEnv may not exist yet) and held
 * by the {@link ApproxShuffleManager} until it stops, as a lease of approx-core's {@link
 * ExchangeRegistry}; its connections to other executors are a {@link PeerCache}. Its control
 * address travels to reducers inside the map output's {@link BlockManagerId} ({@code topologyInfo =
 * "netapprox=host:port"}), so no registry is needed and Spark's own map-output bookkeeping
 * (executor loss, retries) stays authoritative.
 */
final class ExecutorTransport implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ExecutorTransport.class);
    static final String TOPOLOGY_PREFIX = "netapprox=";

    /**
     * After a job's targets are submitted, how long the server waits (at least, and at most) for
     * the receiver's completion notice before it sends more messages (which only help when messages
     * were lost). See {@link #serve}.
     */
    static final long HOLD_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    static final long HOLD_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    /**
     * The transports of this JVM, one per shuffle manager (its block resolver: the executor's, or
     * the driver's in local mode), held by the manager from its first approximate task to its
     * {@code stop()}.
     */
    private static final ExchangeRegistry<IndexShuffleBlockResolver, ExecutorTransport> TRANSPORTS =
            new ExchangeRegistry<>("NetApprox executor transport");

    private final ApproxConf conf;
    private final IndexShuffleBlockResolver resolver;
    private final ApproxTransport transport;
    private final BlockManagerId own;
    private final BlockManagerId location;
    private final PeerCache<InetSocketAddress> peers = new PeerCache<>();
    private final ServedTransfers served = new ServedTransfers();

    private ExecutorTransport(ApproxConf conf, IndexShuffleBlockResolver resolver) {
        this.conf = conf;
        this.resolver = resolver;
        this.own = SparkEnv.get().blockManager().shuffleServerId();
        this.transport = ApproxTransport.start(conf.transportConfig(own.host()), this::serve);
        InetSocketAddress ctl = transport.controlAddress();
        String topo = TOPOLOGY_PREFIX + own.host() + ":" + ctl.getPort();
        this.location =
                BlockManagerId$.MODULE$.apply(
                        own.executorId(), own.host(), own.port(), Option.apply(topo));
        LOG.info(
                "NetApprox transport started for executor {}: control {}, dataPlane={}, ATP data"
                        + " port {} (0: no ATP engine)",
                own.executorId(),
                ctl,
                conf.transport().dataPlane().label(),
                transport.dataPort());
    }

    /** A lease on the transport of {@code resolver}'s shuffle manager, started if none runs. */
    static ExchangeRegistry.Lease<ExecutorTransport> acquire(
            ApproxConf conf, IndexShuffleBlockResolver resolver) {
        return TRANSPORTS.acquire(resolver, r -> new ExecutorTransport(conf, r));
    }

    /** How many transports this JVM has started (never decreases; a restart after stop counts). */
    static long starts() {
        return TRANSPORTS.opened();
    }

    @Override
    public void close() {
        peers.close();
        transport.close();
    }

    BlockManagerId advertisedLocation() {
        return location;
    }

    ApproxConf conf() {
        return conf;
    }

    IndexShuffleBlockResolver resolver() {
        return resolver;
    }

    ServedTransfers served() {
        return served;
    }

    /** True when a map output at {@code loc} was written by this executor (read it from disk). */
    boolean isLocal(BlockManagerId loc) {
        return loc.executorId().equals(own.executorId()) && loc.host().equals(own.host());
    }

    /**
     * The control address a map output's location advertises, if it was written by an approximate
     * writer.
     */
    static Optional<InetSocketAddress> controlAddressOf(BlockManagerId loc) {
        Option<String> t = loc.topologyInfo();
        if (t.isEmpty() || !t.get().startsWith(TOPOLOGY_PREFIX)) {
            return Optional.empty();
        }
        String hp = t.get().substring(TOPOLOGY_PREFIX.length());
        int c = hp.lastIndexOf(':');
        return Optional.of(
                new InetSocketAddress(hp.substring(0, c), Integer.parseInt(hp.substring(c + 1))));
    }

    /** A connected peer for {@code addr}, reconnecting when the cached one ended. */
    CompletableFuture<ApproxPeer> peer(InetSocketAddress addr) {
        return peers.get(addr, transport::connect);
    }

    /**
     * Serves one DATA_REQUEST: a {@link BlockRequest} for one (map output, reduce partition) block
     * as an ATP job, one ATP group per group, with the MSRs the request carries; or a {@link
     * ServedTransfers} query (the sender-side counters of earlier transfers). The segment is read
     * from the data file message by message, in {@link SendScheduler} order (the groups interleaved
     * so that they all reach their targets together); nothing is loaded whole.
     *
     * <p>Stop at the target: under {@code submit=all} the job announces every message of every
     * group and the engine may deliver any {@code ceil(MSR_g N_g)} of them, so the messages beyond
     * the targets only make up for lost ones. Once every group's target is submitted the server
     * holds the rest until the receiver's completion notice or a hold time (the time the targets
     * took, within [{@value #HOLD_MIN_NANOS} ns, {@value #HOLD_MAX_NANOS} ns]) has passed: on an
     * idle network the job completes within the hold and nothing beyond the targets is sent; under
     * loss the rest follows the targets as before (the engine stops it once every target is met).
     */
    private void serve(OutgoingTransfer request) throws IOException {
        byte[] payload = request.payload();
        if (ServedTransfers.isQuery(payload)) {
            served.answer(request, payload, conf.fetchTimeoutMs());
            return;
        }
        long tServe = System.nanoTime();
        BlockRequest req = BlockRequest.decode(payload);
        try (SegmentFile seg =
                SegmentFile.open(
                        resolver.getBlockData(
                                new ShuffleBlockId(req.shuffleId(), req.mapId(), req.reduceId()),
                                Option.empty()))) {
            MapOutputFormat.Table table = seg.table();
            if (table.groups().isEmpty()) {
                throw new IOException(
                        "empty NetApprox segment for shuffle "
                                + req.shuffleId()
                                + " map "
                                + req.mapId()
                                + " reduce "
                                + req.reduceId());
            }
            // MRDF stays on (messages of a group have similar sizes, and their order is random, so
            // it does not bias the sample).
            List<MapOutputFormat.Group> applied = new ArrayList<>();
            JobSpec.Builder js = JobSpec.builder();
            int[] targets = new int[table.groups().size()];
            for (int g = 0; g < table.groups().size(); g++) {
                MapOutputFormat.Group gr = table.groups().get(g);
                double msr = req.msrOf(gr);
                applied.add(gr.withMsr(msr));
                targets[g] = applied.get(g).target();
                // submit=target: only the first ceil(MSR_g N_g) messages of each group (a random
                // sample, as the records are permuted) are announced, reliably (MSR 1): the engine
                // has no "end of submissions", so a group of N_g with fewer submitted messages
                // could otherwise give up losses it can never make good.
                if (conf.submit() == ApproxConf.Submit.TARGET) {
                    js.addGroup(g, Math.max(1, targets[g]), 1.0);
                } else {
                    js.addGroup(g, gr.messages(), applied.get(g).writtenMsr());
                }
            }
            if (req.deadlineNanos() > 0) {
                // the query's time bound: ATP sends the groups furthest behind their targets first
                js.deadline(java.time.Duration.ofNanos(req.deadlineNanos()));
            }
            JobSpec spec = js.build();
            byte[] response =
                    MapOutputFormat.tableBytes(
                            new MapOutputFormat.Table(table.numValues(), table.withKey(), applied));
            long tRead = System.nanoTime();
            // known before the job starts: the reducer may ask as soon as the job completes, and
            // it counts "messages sent" only once this thread has said how many it submitted
            ServedTransfers.Entry entry = served.started(request);
            long sent = -1;
            long tStarted;
            try {
                OutgoingJob job = request.reply(response).startJob(spec);
                tStarted = System.nanoTime();
                sent = sendTargetsFirst(job, spec, seg);
            } finally {
                if (sent >= 0) {
                    entry.submitted(sent);
                } else {
                    entry.unknown();
                }
            }
            if (LOG.isDebugEnabled()) {
                long t0 = request.receivedNanos();
                LOG.debug(
                        "NetApprox serve of job {} ({}): after the request {} ms serve thread, {} ms"
                                + " block read, {} ms job started, {} ms sent ({} messages)",
                        Integer.toUnsignedString(request.jobId()),
                        new ShuffleBlockId(req.shuffleId(), req.mapId(), req.reduceId()),
                        RemotePulls.ms(tServe - t0),
                        RemotePulls.ms(tRead - t0),
                        RemotePulls.ms(tStarted - t0),
                        RemotePulls.ms(System.nanoTime() - t0),
                        sent);
            }
        }
    }

    /**
     * Sends the targets (each group's messages below {@code max(1, target_g)}, in {@link
     * SendScheduler} order), holds, then the rest in the same order unless the job completed. Both
     * parts go through {@link SendScheduler#sendAll}: small messages in batches, one JNI crossing
     * per batch (issue 11). NOT_FOUND after an early end of the job (the receiver holds every
     * target) is a success there, as for single sends.
     */
    private long sendTargetsFirst(OutgoingJob job, JobSpec spec, SegmentFile seg)
            throws IOException {
        int groups = spec.groups().size();
        int[] targets = new int[groups];
        int[] firstPart = new int[groups];
        long firstTotal = 0;
        long total = 0;
        for (int g = 0; g < groups; g++) {
            targets[g] = spec.groups().get(g).target();
            firstPart[g] = Math.min(spec.groups().get(g).size(), Math.max(1, targets[g]));
            firstTotal += firstPart[g];
            total += spec.groups().get(g).size();
        }
        SendScheduler.MessageWriter writer = (g, i, out) -> seg.readNext(g, out);
        long timeoutMs = conf.fetchTimeoutMs();
        long started = System.nanoTime();
        long sent =
                new SendScheduler(firstPart, targets)
                        .sendAll(job, writer, timeoutMs, TimeUnit.MILLISECONDS);
        if (firstTotal == total || job.outcome().isDone()) {
            return sent;
        }
        long hold = Math.min(HOLD_MAX_NANOS, Math.max(HOLD_MIN_NANOS, System.nanoTime() - started));
        try {
            job.outcome().get(hold, TimeUnit.NANOSECONDS);
            return sent; // complete: nothing beyond the targets is sent
        } catch (TimeoutException e) {
            // not complete yet (messages were lost): send the rest
        } catch (ExecutionException e) {
            return sent; // the job failed; the transfer reports it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while serving", e);
        }
        SendScheduler rest = new SendScheduler(spec);
        // Every target message is due before (i + 0.5) / target_g = 1 and every other one after:
        // the whole job's schedule starts with exactly the messages sent above.
        for (long i = 0; i < firstTotal; i++) {
            SendScheduler.Message m = rest.next();
            if (m.index() >= firstPart[m.group()]) {
                throw new IllegalStateException("schedule out of order at " + m);
            }
            rest.sent(m);
        }
        return sent + rest.sendAll(job, writer, timeoutMs, TimeUnit.MILLISECONDS);
    }
}
