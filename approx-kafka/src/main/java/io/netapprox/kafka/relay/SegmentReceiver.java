package io.netapprox.kafka.relay;

import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.TransferListener;
import io.netapprox.core.transport.TransferReport;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.kafka.common.TopicPartition;

/**
 * Collects the records of one pulled segment as ATP delivers them (endpoint event thread) and
 * assembles the segment once both the header (DATA_RESPONSE) and the receiver's report are in: each
 * cell's {@code sampled} becomes what arrived, so a record's weight is {@code count / delivered}.
 * The report is authoritative: a segment whose records do not match it (a group missing, a count
 * that differs, an offset outside the range or twice) is refused, never returned.
 */
final class SegmentReceiver implements TransferListener {
    private final TopicPartition partition;
    private final long from;
    private final List<SampledRecord> records = new ArrayList<>(); // guarded by this
    private String malformed; // guarded by this

    SegmentReceiver(TopicPartition partition, long from) {
        this.partition = partition;
        this.from = from;
    }

    @Override
    public void onMessage(IncomingTransfer transfer, AtpMessage message) {
        try {
            long group = message.groupId();
            ByteBuf c = message.content();
            ByteBuffer b = ByteBuffer.allocate(c.readableBytes());
            c.getBytes(c.readerIndex(), b);
            b.flip();
            SampledRecord r = RelayProtocol.readRecord(b, (int) Math.min(group, Integer.MAX_VALUE));
            synchronized (this) {
                records.add(r);
            }
        } catch (IllegalArgumentException e) {
            synchronized (this) {
                if (malformed == null) {
                    malformed = e.getMessage();
                }
            }
        } finally {
            message.release();
        }
    }

    /** The segment, or a {@link RelayException} (the relay's failure, or records that disagree). */
    synchronized Segment assemble(byte[] answer, TransferReport report) {
        RelayProtocol.SegmentHeader h = RelayProtocol.decodeHeader(answer);
        if (h.from() != from) {
            throw bad("answered offset " + h.from() + " to a pull from " + from);
        }
        if (malformed != null) {
            throw bad(malformed);
        }
        List<Cell> cells = h.cells();
        if (!report.hasJob()) {
            if (h.records() != 0) {
                throw bad("the header lists " + h.records() + " records but no job followed");
            }
            return new Segment(partition, h.from(), h.to(), h.logEnd(), cells, List.of());
        }
        int[] delivered = new int[cells.size()];
        boolean[] sent = new boolean[cells.size()];
        for (GroupReport g : report.groups()) {
            long id = g.groupId();
            if (id < 0 || id >= cells.size() || sent[(int) id]) {
                throw bad("the job has an unknown or repeated group " + id);
            }
            Cell c = cells.get((int) id);
            if (g.size() != c.sampled() || g.delivered() < c.target()) {
                throw bad(
                        "group "
                                + id
                                + " of "
                                + g.size()
                                + " messages delivered "
                                + g.delivered()
                                + ", the header says "
                                + c.sampled()
                                + " candidates for a target of "
                                + c.target());
            }
            sent[(int) id] = true;
            delivered[(int) id] = g.delivered();
        }
        int[] arrived = new int[cells.size()];
        for (SampledRecord r : records) {
            if (r.cell() < 0 || r.cell() >= cells.size() || !sent[r.cell()]) {
                throw bad("a record of unknown cell " + r.cell());
            }
            if (r.offset() < h.from() || r.offset() >= h.to()) {
                throw bad(
                        "record offset "
                                + r.offset()
                                + " outside ["
                                + h.from()
                                + ", "
                                + h.to()
                                + ")");
            }
            arrived[r.cell()]++;
        }
        List<Cell> out = new ArrayList<>(cells.size());
        for (int i = 0; i < cells.size(); i++) {
            Cell c = cells.get(i);
            if (c.sampled() > 0 && !sent[i]) {
                throw bad(
                        "cell "
                                + i
                                + " lists "
                                + c.sampled()
                                + " records but the job has no group for it");
            }
            if (arrived[i] != delivered[i]) {
                throw bad(
                        "cell "
                                + i
                                + ": "
                                + arrived[i]
                                + " records arrived, the report says "
                                + delivered[i]);
            }
            out.add(new Cell(c.windowStart(), c.stratum(), c.count(), c.target(), delivered[i]));
        }
        List<SampledRecord> sorted = new ArrayList<>(records);
        sorted.sort(Comparator.comparingLong(SampledRecord::offset));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).offset() == sorted.get(i - 1).offset()) {
                throw bad("record offset " + sorted.get(i).offset() + " arrived twice");
            }
        }
        return new Segment(partition, h.from(), h.to(), h.logEnd(), out, sorted);
    }

    private RelayException bad(String what) {
        return new RelayException(
                RelayException.Reason.READ_FAILED,
                partition + ": the relay's segment from " + from + " is inconsistent: " + what);
    }
}
