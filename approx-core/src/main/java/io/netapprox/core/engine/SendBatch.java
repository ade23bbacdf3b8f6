package io.netapprox.core.engine;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A reusable batch of messages for {@link OutgoingJob#send(SendBatch, long,
 * java.util.concurrent.TimeUnit)}: one JNI crossing submits all of them. Entries are fixed-layout
 * descriptors (group index, index, address, length) in a preallocated direct buffer, so adding and
 * sending allocates nothing for direct buffers.
 *
 * <p>The batch records <em>addresses</em>: the caller must keep every added direct buffer alive and
 * unmodified until the send returns. Heap / composite buffers are copied into pooled direct buffers
 * that the batch owns and frees on {@link #clear()}. Not thread-safe.
 */
public final class SendBatch {
    private final int capacity;
    private final ByteBuffer desc;
    private final long descAddress;
    private final List<ByteBuf> copies = new ArrayList<>();
    private int start;
    private int end;
    private int accepted;

    public SendBatch(int capacity) {
        if (capacity <= 0 || capacity > 1 << 20) {
            throw new IllegalArgumentException("capacity must be in [1, 1048576], got " + capacity);
        }
        AtpNative.ensureAvailability();
        this.capacity = capacity;
        this.desc =
                ByteBuffer.allocateDirect(capacity * NativeEngine.SUBMIT_RECORD_BYTES)
                        .order(ByteOrder.nativeOrder());
        this.descAddress = NativeEngine.directAddress(desc);
    }

    public int capacity() {
        return capacity;
    }

    /**
     * How many entries the last {@link OutgoingJob#send(SendBatch, long,
     * java.util.concurrent.TimeUnit)} of this batch accepted, also when it then returned {@link
     * SendResult#NOT_NEEDED} (the rest dropped) or threw (the rest left in the batch).
     */
    public int lastAccepted() {
        return accepted;
    }

    /** Entries not yet accepted. */
    public int size() {
        return end - start;
    }

    public boolean isFull() {
        return end == capacity;
    }

    /**
     * Adds the readable bytes of {@code msg} as message {@code index} of group {@code groupIndex}.
     */
    public SendBatch add(int groupIndex, int index, ByteBuf msg) {
        int len = msg.readableBytes();
        check(groupIndex, index, len);
        long address;
        if (msg.hasMemoryAddress()) {
            address = msg.memoryAddress() + msg.readerIndex();
        } else if (msg.isDirect() && msg.nioBufferCount() == 1) {
            ByteBuffer nb = msg.nioBuffer(msg.readerIndex(), len);
            address = address(nb) + nb.position();
        } else {
            ByteBuf copy = PooledByteBufAllocator.DEFAULT.directBuffer(len, len);
            copy.writeBytes(msg, msg.readerIndex(), len);
            copies.add(copy);
            return add(groupIndex, index, copy);
        }
        put(groupIndex, index, address, len);
        return this;
    }

    /** Adds the remaining bytes of {@code msg} (position and limit are not changed). */
    public SendBatch add(int groupIndex, int index, ByteBuffer msg) {
        int len = msg.remaining();
        check(groupIndex, index, len);
        if (!msg.isDirect()) {
            ByteBuf copy = PooledByteBufAllocator.DEFAULT.directBuffer(len, len);
            copy.writeBytes(msg.duplicate());
            copies.add(copy);
            return add(groupIndex, index, copy);
        }
        put(groupIndex, index, address(msg) + msg.position(), len);
        return this;
    }

    private static long address(ByteBuffer direct) {
        return PlatformDependent.hasUnsafe()
                ? PlatformDependent.directBufferAddress(direct)
                : NativeEngine.directAddress(direct);
    }

    private void check(int groupIndex, int index, int len) {
        if (end == capacity) {
            throw new IllegalStateException("SendBatch is full (" + capacity + " entries)");
        }
        if (groupIndex < 0 || index < 0) {
            throw new IllegalArgumentException("negative group index or index");
        }
        if (len <= 0) {
            throw new IllegalArgumentException("a message must not be empty");
        }
    }

    private void put(int groupIndex, int index, long address, int len) {
        int b = end * NativeEngine.SUBMIT_RECORD_BYTES;
        desc.putInt(b + NativeEngine.SUB_GROUP, groupIndex);
        desc.putInt(b + NativeEngine.SUB_INDEX, index);
        desc.putLong(b + NativeEngine.SUB_ADDRESS, address);
        desc.putInt(b + NativeEngine.SUB_LENGTH, len);
        desc.putInt(b + NativeEngine.SUB_STATUS, 0);
        end++;
    }

    long descriptorAddress() {
        return descAddress + (long) start * NativeEngine.SUBMIT_RECORD_BYTES;
    }

    /** Status of the i-th pending entry after a send. */
    int statusAt(int i) {
        return desc.getInt(
                (start + i) * NativeEngine.SUBMIT_RECORD_BYTES + NativeEngine.SUB_STATUS);
    }

    void startSend() {
        accepted = 0;
    }

    void consume(int n) {
        accepted += n;
        start += n;
        if (start == end) {
            clear();
        }
    }

    /** Sends one entry of a batch ({@link #sendEach}). */
    @FunctionalInterface
    public interface EntrySender {
        SendResult send(int groupIndex, int index, ByteBuf msg);
    }

    /**
     * Sends the pending entries one by one through {@code sender}, with the semantics of {@link
     * OutgoingJob#send(SendBatch, long, java.util.concurrent.TimeUnit)}: for a data plane without a
     * batched submit (the TCP data plane). Each entry is handed over as a buffer over the recorded
     * bytes (valid during the call only). Accepted entries leave the batch; {@link
     * SendResult#NOT_NEEDED} drops the rest and is returned; an exception leaves the rest in the
     * batch ({@link #lastAccepted()} counts what went).
     */
    public SendResult sendEach(EntrySender sender) {
        startSend();
        while (size() > 0) {
            int b = start * NativeEngine.SUBMIT_RECORD_BYTES;
            int len = desc.getInt(b + NativeEngine.SUB_LENGTH);
            ByteBuf view =
                    Unpooled.wrappedBuffer(desc.getLong(b + NativeEngine.SUB_ADDRESS), len, false);
            SendResult r =
                    sender.send(
                            desc.getInt(b + NativeEngine.SUB_GROUP),
                            desc.getInt(b + NativeEngine.SUB_INDEX),
                            view);
            if (r == SendResult.NOT_NEEDED) {
                clear();
                return r;
            }
            if (r != SendResult.ACCEPTED) {
                return r; // FULL (trySend-like senders): the rest stays
            }
            consume(1);
        }
        return SendResult.ACCEPTED;
    }

    /** Drops every entry and frees the batch's own copies. */
    public void clear() {
        start = 0;
        end = 0;
        for (int i = 0; i < copies.size(); i++) {
            copies.get(i).release();
        }
        copies.clear();
    }
}
