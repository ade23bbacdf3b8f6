package io.netapprox.core.transport;

import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendBatch;
import io.netapprox.core.engine.SendResult;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The serving side's send order for one job: interleaves the groups so that they all reach their
 * targets together. Message {@code i} of group {@code g} is due at {@code (i + 0.5) / target_g} (a
 * target of 0 counts as 1), the earliest first, ties to the lower group index; within a group
 * messages go in index order. So a group with a small MSR is not dragged along by one with a large
 * MSR in the same job, and after the targets the rest follows in the same proportion until the job
 * completes (the receiver's completion notice stops it). Put each group's messages in random order
 * (e.g. permute its records) and whatever prefix arrives is a simple random sample.
 *
 * <pre>{@code
 * OutgoingJob job = transfer.startJob(spec);
 * new SendScheduler(spec).sendAll(job, (group, index, out) -> out.writeBytes(bytesOf(group, index)), 2, MINUTES);
 * }</pre>
 *
 * Not thread-safe: one serving thread drives one schedule.
 */
public final class SendScheduler {
    /**
     * Message {@code index} (0-based within its group) of the group at position {@code group} of
     * the job.
     */
    public record Message(int group, int index) {}

    /**
     * Writes the bytes of one message into {@code out} (a cleared buffer, reused for every
     * message).
     */
    @FunctionalInterface
    public interface MessageWriter {
        void write(int group, int index, ByteBuf out) throws IOException;
    }

    /** Sends one message; NOT_NEEDED ends its group (or, with the job done, the schedule). */
    @FunctionalInterface
    public interface Sender {
        SendResult send(Message m) throws IOException;
    }

    private final int[] limits;
    private final double[] pace;
    private final PriorityQueue<Message> due;

    /** Every message of every group of {@code spec}, paced by the groups' targets. */
    public SendScheduler(JobSpec spec) {
        this(sizes(spec.groups()), targets(spec.groups()));
    }

    /**
     * @param limits per group, how many messages to send at most (indices {@code [0, limits[g])})
     * @param targets per group, the target that sets its pace ({@code ceil(MSR_g * N_g)})
     */
    public SendScheduler(int[] limits, int[] targets) {
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(targets, "targets");
        if (limits.length != targets.length) {
            throw new IllegalArgumentException(
                    limits.length + " limits for " + targets.length + " targets");
        }
        this.limits = limits.clone();
        this.pace = new double[targets.length];
        for (int g = 0; g < targets.length; g++) {
            if (limits[g] < 0 || targets[g] < 0) {
                throw new IllegalArgumentException("group " + g + ": negative limit or target");
            }
            pace[g] = Math.max(1, targets[g]);
        }
        Comparator<Message> byDue =
                Comparator.<Message>comparingDouble(m -> dueAt(m)).thenComparingInt(Message::group);
        this.due = new PriorityQueue<>(Math.max(1, limits.length), byDue);
        for (int g = 0; g < limits.length; g++) {
            if (limits[g] > 0) {
                due.add(new Message(g, 0));
            }
        }
    }

    private static int[] sizes(List<GroupSpec> groups) {
        return groups.stream().mapToInt(GroupSpec::size).toArray();
    }

    private static int[] targets(List<GroupSpec> groups) {
        return groups.stream().mapToInt(GroupSpec::target).toArray();
    }

    /** When {@code m} is due, in units of "fraction of its group's target". */
    double dueAt(Message m) {
        return (m.index() + 0.5) / pace[m.group()];
    }

    /** True while some group has a message to send. */
    public boolean hasNext() {
        return !due.isEmpty();
    }

    /**
     * Removes and returns the message due first. Its group's next message becomes due only after
     * {@link #sent(Message)}: a group whose message was not needed is done.
     */
    public Message next() {
        Message m = due.poll();
        if (m == null) {
            throw new java.util.NoSuchElementException("no message left");
        }
        return m;
    }

    /**
     * {@code m} (from {@link #next()}) was sent: the next message of its group becomes due, if
     * within the limit.
     */
    public void sent(Message m) {
        if (m.index() + 1 < limits[m.group()]) {
            due.add(new Message(m.group(), m.index() + 1));
        }
    }

    /**
     * Sends in schedule order until no message is left or {@code done} says the job ended. A
     * message the sender reports {@link SendResult#NOT_NEEDED} ends its group.
     *
     * @return the number of messages sent (not counting NOT_NEEDED ones)
     */
    public long drive(BooleanSupplier done, Sender sender) throws IOException {
        long sent = 0;
        while (hasNext() && !done.getAsBoolean()) {
            Message m = next();
            if (sender.send(m) == SendResult.NOT_NEEDED) {
                continue; // this group (or the whole job) reached its target
            }
            sent(m);
            sent++;
        }
        return sent;
    }

    /**
     * Messages up to this size go in batches; larger ones one by one (a batch gains them nothing).
     */
    static final int BATCH_MESSAGE_MAX = 4096;

    /** Messages per batch: one JNI crossing and one engine lock each (issue 11). */
    static final int BATCH_ENTRIES = 64;

    /** Bytes of small messages a batch holds (its copies live in one direct buffer this size). */
    static final int BATCH_BYTES = 64 * 1024;

    /**
     * Sends {@code job}'s messages in schedule order until the job ends or every group is done,
     * each written by {@code writer} into a pooled direct buffer. On a data plane that {@link
     * OutgoingJob#batchesSends() batches sends} (ATP), small messages (up to {@value
     * #BATCH_MESSAGE_MAX} bytes) are gathered, up to {@value #BATCH_ENTRIES} at a time, and sent
     * with {@link OutgoingJob#send(SendBatch, long, TimeUnit)}: one JNI crossing and one engine
     * lock per batch instead of per message. Larger ones (and every message on TCP, which coalesces
     * frames itself) go one by one with {@link OutgoingJob#send(int, int, ByteBuf, long,
     * TimeUnit)}. Either blocks while the send buffer is full, at most {@code timeout} per call (a
     * batch shares one).
     *
     * @return the number of messages sent
     * @throws IOException from the writer
     */
    public long sendAll(OutgoingJob job, MessageWriter writer, long timeout, TimeUnit unit)
            throws IOException {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(writer, "writer");
        if (!job.batchesSends()) {
            return sendOneByOne(job, writer, timeout, unit);
        }
        ByteBuf scratch = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        ByteBuf held = PooledByteBufAllocator.DEFAULT.directBuffer(BATCH_BYTES, BATCH_BYTES);
        SendBatch batch = new SendBatch(BATCH_ENTRIES);
        long sent = 0;
        try {
            while (hasNext() && !job.outcome().isDone()) {
                Message m = next();
                scratch.clear();
                writer.write(m.group(), m.index(), scratch);
                int len = scratch.readableBytes();
                if (len > BATCH_MESSAGE_MAX) {
                    if (!flush(job, batch, held, timeout, unit)) {
                        return sent + batch.lastAccepted();
                    }
                    sent += batch.lastAccepted();
                    if (job.send(m.group(), m.index(), scratch, timeout, unit)
                            == SendResult.NOT_NEEDED) {
                        return sent;
                    }
                    sent(m);
                    sent++;
                    continue;
                }
                if (batch.isFull() || held.writableBytes() < len) {
                    if (!flush(job, batch, held, timeout, unit)) {
                        return sent + batch.lastAccepted();
                    }
                    sent += batch.lastAccepted();
                }
                // The batch records addresses: each message keeps its own bytes in `held` (which
                // never grows, so they do not move) until the batch is sent.
                int start = held.writerIndex();
                held.writeBytes(scratch);
                held.readerIndex(start);
                batch.add(m.group(), m.index(), held);
                sent(m); // NOT_NEEDED only comes when the whole job is done: nothing is due then
            }
            flush(job, batch, held, timeout, unit);
            return sent + batch.lastAccepted();
        } finally {
            batch.clear();
            held.release();
            scratch.release();
        }
    }

    /**
     * {@link #sendAll} for a data plane whose single sends cost no crossing (TCP): every message
     * with {@link OutgoingJob#send(int, int, ByteBuf, long, TimeUnit)}, in schedule order.
     */
    private long sendOneByOne(OutgoingJob job, MessageWriter writer, long timeout, TimeUnit unit)
            throws IOException {
        ByteBuf scratch = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        try {
            return drive(
                    () -> job.outcome().isDone(),
                    m -> {
                        scratch.clear();
                        writer.write(m.group(), m.index(), scratch);
                        return job.send(m.group(), m.index(), scratch, timeout, unit);
                    });
        } finally {
            scratch.release();
        }
    }

    /**
     * Sends what {@code batch} holds and empties {@code held}; false when the job needs no more
     * messages. {@link SendBatch#lastAccepted()} says how many went.
     */
    private static boolean flush(
            OutgoingJob job, SendBatch batch, ByteBuf held, long timeout, TimeUnit unit) {
        SendResult r = job.send(batch, timeout, unit);
        held.clear();
        return r != SendResult.NOT_NEEDED;
    }
}
