package io.netapprox.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeHeapByteBuf;

/**
 * A delivered message's bytes on the TCP data plane: a heap copy whose last release (through the
 * message, its content or any buffer derived from it) returns its charge to the session's receive
 * budget, so a consumer that holds messages stops the connection from reading (the TCP counterpart
 * of ATP's receive window).
 */
final class TcpMessageBuf extends UnpooledUnsafeHeapByteBuf {
    /** Where the charge goes back. */
    interface Budget {
        void released(int charge);
    }

    private final Budget budget;
    private final int charge;

    private TcpMessageBuf(int length, Budget budget, int charge) {
        super(UnpooledByteBufAllocator.DEFAULT, length, length);
        this.budget = budget;
        this.charge = charge;
    }

    /** A copy of {@code src}'s readable bytes, read-only to the consumer. */
    static ByteBuf copyOf(ByteBuf src, Budget budget, int charge) {
        int n = src.readableBytes();
        TcpMessageBuf b = new TcpMessageBuf(n, budget, charge);
        b.writeBytes(src, src.readerIndex(), n);
        return b.asReadOnly();
    }

    @Override
    protected void deallocate() {
        super.deallocate();
        budget.released(charge);
    }
}
