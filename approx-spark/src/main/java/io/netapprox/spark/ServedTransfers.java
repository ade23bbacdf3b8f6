package io.netapprox.spark;

import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.transport.OutgoingTransfer;
import io.netapprox.core.transport.TransportException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The sender-side numbers of the transfers an executor served (messages it submitted; packets the
 * ATP engine sent and retransmitted, and lost; messages the TCP data plane wrote), kept until the
 * reducer that requested them asks: only the sender's engine knows them, and the reducer's task is
 * where Spark's metrics are counted. After its pulls a reducer sends one query per peer session
 * listing its job ids ({@link #query}); the answer, a DATA_RESPONSE without a job ({@link
 * OutgoingTransfer#answerWithoutJob}: one control round trip), sums them ({@link Counters}).
 *
 * <p>Exact or said to be partial: the answer waits until each named transfer is final - its serving
 * thread has counted what it submitted and the transfer's report (with the sender's engine report)
 * has completed - for as long as a pull may take ({@code spark.approx.fetchTimeoutMs}); {@link
 * Counters#transfers()} counts only the transfers whose numbers are all in the sum, so the reducer
 * knows how many it asked for are missing (not served here, forgotten, or not final in time) and
 * says so in its metrics ({@code transfers without sender counters}). Before, the answer waited 2 s
 * and the reducer 4 s, left slow peers out silently, and could read a transfer's submitted count
 * before its serving thread had set it: {@code messages sent} then undercounted. Bounded: at most
 * {@value #MAX_ENTRIES} transfers are kept (the oldest are dropped, e.g. those of reducers that
 * died before asking).
 */
final class ServedTransfers {
    static final int QUERY_MAGIC = 0x4E415131;
    static final int MAX_ENTRIES = 16_384;

    /**
     * Sums over transfers; {@code transfers} counts those whose every number is in the sums (a
     * transfer not final in time adds what is known of it, and is not counted).
     */
    record Counters(
            long transfers,
            long messagesSubmitted,
            long packetsSent,
            long packetsRetransmitted,
            long packetsLost,
            long bytesSent,
            long tcpMessagesWritten) {
        static final int ENCODED_LENGTH = 7 * 8;
        static final Counters NONE = new Counters(0, 0, 0, 0, 0, 0, 0);

        Counters plus(Counters o) {
            return new Counters(
                    transfers + o.transfers,
                    messagesSubmitted + o.messagesSubmitted,
                    packetsSent + o.packetsSent,
                    packetsRetransmitted + o.packetsRetransmitted,
                    packetsLost + o.packetsLost,
                    bytesSent + o.bytesSent,
                    tcpMessagesWritten + o.tcpMessagesWritten);
        }

        byte[] encode() {
            try {
                ByteArrayOutputStream b = new ByteArrayOutputStream(ENCODED_LENGTH);
                DataOutputStream out = new DataOutputStream(b);
                for (long v :
                        new long[] {
                            transfers,
                            messagesSubmitted,
                            packetsSent,
                            packetsRetransmitted,
                            packetsLost,
                            bytesSent,
                            tcpMessagesWritten
                        }) {
                    out.writeLong(v);
                }
                out.flush();
                return b.toByteArray();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        static Counters decode(byte[] bytes) throws IOException {
            if (bytes.length != ENCODED_LENGTH) {
                throw new IOException("NetApprox served-transfer counters of " + bytes.length);
            }
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
            long[] v = new long[ENCODED_LENGTH / 8];
            for (int i = 0; i < v.length; i++) {
                v[i] = in.readLong();
                if (v[i] < 0) {
                    throw new IOException("negative NetApprox served-transfer counter");
                }
            }
            return new Counters(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        }
    }

    /** One served transfer. */
    static final class Entry {
        /**
         * Sent over the TCP data plane: its report's packets are the messages written to the
         * connection, counted as such and not as ATP packets.
         */
        private final boolean tcp;

        /** What the serving thread submitted; -1: it ended without knowing (an exception). */
        private final CompletableFuture<Long> submitted = new CompletableFuture<>();

        /** The sender's engine report; null when the transfer ended without one. */
        private final CompletableFuture<JobReport> senderReport = new CompletableFuture<>();

        Entry(DataPlaneKind plane) {
            this.tcp = plane == DataPlaneKind.TCP;
        }

        /** The serving thread is done with the transfer: it submitted {@code n} messages. */
        void submitted(long n) {
            submitted.complete(n);
        }

        /** The serving thread ended without a count (it failed while sending). */
        void unknown() {
            submitted.complete(-1L);
        }

        /** The transfer ended: the sender's engine report, or null without one. */
        void reported(JobReport senderEngineReport) {
            senderReport.complete(senderEngineReport);
        }

        /** Completes when the serving thread and the transfer's report are both done. */
        CompletableFuture<Void> done() {
            return CompletableFuture.allOf(submitted, senderReport);
        }

        /** What is known now; counted as a transfer only when every number is. */
        Counters counters() {
            long n = submitted.getNow(-1L);
            JobReport r = senderReport.getNow(null);
            long transfers = n >= 0 && r != null ? 1 : 0;
            if (r == null) {
                return new Counters(transfers, Math.max(0, n), 0, 0, 0, 0, 0);
            }
            if (tcp) {
                // reliable and in order: nothing retransmitted by us or lost
                return new Counters(
                        transfers, Math.max(0, n), 0, 0, 0, r.bytesSent(), r.packetsSent());
            }
            return new Counters(
                    transfers,
                    Math.max(0, n),
                    r.packetsSent(),
                    r.packetsRetransmitted(),
                    Math.round(r.measuredLoss() * r.packetsSent()),
                    r.bytesSent(),
                    0);
        }
    }

    private record Key(long session, int job) {}

    private final Map<Key, Entry> entries =
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Key, Entry> eldest) {
                    return size() > MAX_ENTRIES;
                }
            };

    /**
     * Records a transfer this executor serves, before its job starts (a job whose targets are all 0
     * can complete, and be asked about, as soon as it starts); the serving thread then calls {@link
     * Entry#submitted} or {@link Entry#unknown} once.
     */
    Entry started(OutgoingTransfer t) {
        Entry e = new Entry(t.peer().dataPlane());
        synchronized (entries) {
            entries.put(new Key(t.peer().sessionId(), t.jobId()), e);
        }
        t.report()
                .whenComplete(
                        (r, err) -> {
                            JobReport local = r != null ? r.localReport() : null;
                            if (local == null
                                    && err != null
                                    && unwrap(err) instanceof TransportException te
                                    && te.report() != null) {
                                local = te.report().localReport();
                            }
                            e.reported(local);
                        });
        return e;
    }

    private static Throwable unwrap(Throwable t) {
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static boolean isQuery(byte[] payload) {
        return payload.length >= 4
                && ((payload[0] & 0xff) << 24
                                | (payload[1] & 0xff) << 16
                                | (payload[2] & 0xff) << 8
                                | (payload[3] & 0xff))
                        == QUERY_MAGIC;
    }

    /** The query for the counters of {@code jobIds} (transfers on one peer session). */
    static byte[] query(int[] jobIds) {
        try {
            ByteArrayOutputStream b = new ByteArrayOutputStream(8 + 4 * jobIds.length);
            DataOutputStream out = new DataOutputStream(b);
            out.writeInt(QUERY_MAGIC);
            out.writeInt(jobIds.length);
            for (int j : jobIds) {
                out.writeInt(j);
            }
            out.flush();
            return b.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Answers a query (serving thread): waits until each named transfer is final ({@link
     * Entry#done}), at most {@code waitMs} in all, sums and forgets them, and replies with the sum
     * as the request's DATA_RESPONSE, without a job. A transfer unknown here, or not final in time,
     * is not counted in {@link Counters#transfers()}.
     */
    void answer(OutgoingTransfer request, byte[] payload, long waitMs) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
        in.readInt();
        int n = in.readInt();
        if (n < 0 || n != (payload.length - 8) / 4 || payload.length != 8 + 4L * n) {
            throw new IOException("corrupt NetApprox counters query: " + n + " jobs");
        }
        long session = request.peer().sessionId();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        Counters sum = Counters.NONE;
        for (int i = 0; i < n; i++) {
            Key k = new Key(session, in.readInt());
            Entry e;
            synchronized (entries) {
                e = entries.remove(k);
            }
            if (e == null) {
                continue; // not counted: the reducer sees it missing
            }
            try {
                e.done().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException ignored) {
                // what is known is added; the transfer is not counted as complete
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", ie);
            }
            sum = sum.plus(e.counters());
        }
        // the sum is the DATA_RESPONSE; no job (no announcement round trip, no data message, no
        // job report): the requester's transfer completes as the answer arrives
        request.answerWithoutJob(sum.encode());
    }
}
