package io.netapprox.core.engine;

import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;
import java.nio.charset.Charset;

/**
 * A delivered message's payload: a read-only, reference-counted {@link ByteBuf} over the engine's
 * own memory (zero copy: reads go straight to the native address with {@link PlatformDependent}'s
 * Unsafe accessors; no {@code java.nio.ByteBuffer} is created unless the application asks for
 * {@link #nioBuffer}). The memory stays valid until the last {@link #release()}, whose {@link
 * #deallocate()} calls {@code na_message_release} - which also frees space in the session's receive
 * window (flow control) - and then returns this buffer, together with its {@link AtpMessage}, to a
 * {@link io.netty.util.Recycler} (no allocation per delivered message in steady state).
 *
 * <p>Reads after release fail with Netty's IllegalReferenceCountException and never touch freed
 * memory; writes throw {@link ReadOnlyBufferException}. As with Netty's pooled buffers, a reference
 * kept <em>after</em> release may, once the object has been reused for a later message, observe
 * that message instead (a use-after-release bug in the application, but never a JVM crash: the
 * address it reads is then a live message's).
 */
final class NativeMessageBuf extends AbstractReferenceCountedByteBuf {
    private static final boolean NATIVE_BE = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;
    private static final boolean UNALIGNED = PlatformDependent.isUnaligned();

    private final AtpMessage owner;
    // set by init (event thread) before the buffer is published to the listener; the happens-before
    // edge to any
    // other thread is the listener's own hand-off
    private EndpointCore core;
    private long handle;
    private long address;
    private int length;

    NativeMessageBuf(AtpMessage owner) {
        super(0);
        this.owner = owner;
    }

    /**
     * Points this (recycled or new) buffer at a delivered message: refCnt 1, readerIndex 0,
     * writerIndex length.
     */
    void init(EndpointCore core, long handle, long address, int length) {
        this.core = core;
        this.handle = handle;
        this.address = address;
        this.length = length;
        maxCapacity(length);
        setIndex(0, 0);
        markReaderIndex();
        markWriterIndex();
        setIndex(0, length);
        resetRefCnt();
    }

    @Override
    protected void deallocate() {
        EndpointCore c = core;
        long h = handle;
        core = null;
        handle = 0;
        // address is kept (never zeroed): a racy read by a stale reference must not dereference
        // address 0
        try {
            if (c != null) {
                c.releaseMessage(h);
            }
        } finally {
            owner.recycle();
        }
    }

    static boolean supported() {
        return PlatformDependent.hasUnsafe();
    }

    // ---- reads ----------------------------------------------------------------------------------
    @Override
    protected byte _getByte(int index) {
        return PlatformDependent.getByte(address + index);
    }

    @Override
    protected short _getShort(int index) {
        if (UNALIGNED) {
            short v = PlatformDependent.getShort(address + index);
            return NATIVE_BE ? v : Short.reverseBytes(v);
        }
        long a = address + index;
        return (short)
                (PlatformDependent.getByte(a) << 8 | PlatformDependent.getByte(a + 1) & 0xff);
    }

    @Override
    protected short _getShortLE(int index) {
        return Short.reverseBytes(_getShort(index));
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        long a = address + index;
        return (PlatformDependent.getByte(a) & 0xff) << 16
                | (PlatformDependent.getByte(a + 1) & 0xff) << 8
                | PlatformDependent.getByte(a + 2) & 0xff;
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        long a = address + index;
        return PlatformDependent.getByte(a) & 0xff
                | (PlatformDependent.getByte(a + 1) & 0xff) << 8
                | (PlatformDependent.getByte(a + 2) & 0xff) << 16;
    }

    @Override
    protected int _getInt(int index) {
        if (UNALIGNED) {
            int v = PlatformDependent.getInt(address + index);
            return NATIVE_BE ? v : Integer.reverseBytes(v);
        }
        return _getShort(index) << 16 | _getShort(index + 2) & 0xffff;
    }

    @Override
    protected int _getIntLE(int index) {
        return Integer.reverseBytes(_getInt(index));
    }

    @Override
    protected long _getLong(int index) {
        if (UNALIGNED) {
            long v = PlatformDependent.getLong(address + index);
            return NATIVE_BE ? v : Long.reverseBytes(v);
        }
        return (long) _getInt(index) << 32 | _getInt(index + 4) & 0xffffffffL;
    }

    @Override
    protected long _getLongLE(int index) {
        return Long.reverseBytes(_getLong(index));
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkIndex(index, length);
        checkDstIndex(index, length, dstIndex, dst.capacity());
        if (length == 0) {
            return this;
        }
        if (dst.hasMemoryAddress()) {
            PlatformDependent.copyMemory(address + index, dst.memoryAddress() + dstIndex, length);
        } else if (dst.hasArray()) {
            PlatformDependent.copyMemory(
                    address + index, dst.array(), dst.arrayOffset() + dstIndex, length);
        } else {
            dst.setBytes(dstIndex, this, index, length);
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkIndex(index, length);
        checkDstIndex(index, length, dstIndex, dst.length);
        if (length != 0) {
            PlatformDependent.copyMemory(address + index, dst, dstIndex, length);
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        int length = dst.remaining();
        checkIndex(index, length);
        if (length == 0) {
            return this;
        }
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        if (dst.hasArray()) {
            PlatformDependent.copyMemory(
                    address + index, dst.array(), dst.arrayOffset() + dst.position(), length);
        } else if (dst.isDirect()) {
            PlatformDependent.copyMemory(
                    address + index,
                    PlatformDependent.directBufferAddress(dst) + dst.position(),
                    length);
        } else {
            for (int i = 0; i < length; i++) {
                dst.put(dst.position() + i, _getByte(index + i));
            }
        }
        dst.position(dst.position() + length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        if (length == 0) {
            return this;
        }
        byte[] tmp = new byte[Math.min(length, 8192)];
        while (length > 0) {
            int n = Math.min(length, tmp.length);
            PlatformDependent.copyMemory(address + index, tmp, 0, n);
            out.write(tmp, 0, n);
            index += n;
            length -= n;
        }
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        checkIndex(index, length);
        return length == 0 ? 0 : out.write(nioBuffer(index, length));
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        checkIndex(index, length);
        return length == 0 ? 0 : out.write(nioBuffer(index, length), position);
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        ByteBuf copy = alloc().directBuffer(length, maxCapacity());
        try {
            copy.writeBytes(this, index, length);
        } catch (Throwable t) {
            copy.release();
            throw t;
        }
        return copy;
    }

    // ---- NIO views (allocate: a JNI NewDirectByteBuffer over the message, read-only) ------------
    @Override
    public int nioBufferCount() {
        return 1;
    }

    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        ByteBuffer b =
                length == 0
                        ? ByteBuffer.allocateDirect(0)
                        : NativeEngine.wrapAddress(address + index, length);
        if (b == null) {
            throw new OutOfMemoryError("NewDirectByteBuffer failed");
        }
        return b.asReadOnlyBuffer();
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        return nioBuffer(index, length);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        return new ByteBuffer[] {nioBuffer(index, length)};
    }

    // ---- properties -----------------------------------------------------------------------------
    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBufAllocator alloc() {
        return UnpooledByteBufAllocator.DEFAULT;
    }

    @Override
    @SuppressWarnings("deprecation")
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return true;
    }

    @Override
    public boolean hasArray() {
        return false;
    }

    @Override
    public byte[] array() {
        throw new UnsupportedOperationException("direct buffer");
    }

    @Override
    public int arrayOffset() {
        throw new UnsupportedOperationException("direct buffer");
    }

    @Override
    public boolean hasMemoryAddress() {
        return true;
    }

    @Override
    public long memoryAddress() {
        ensureAccessible();
        return address;
    }

    @Override
    public boolean isReadOnly() {
        return true;
    }

    @Override
    public boolean isWritable() {
        return false;
    }

    @Override
    public boolean isWritable(int n) {
        return false;
    }

    // ---- every write path throws ----------------------------------------------------------------
    @Override
    protected void _setByte(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShort(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShortLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMedium(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setInt(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setIntLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLong(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLongLE(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setByte(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setShort(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setShortLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setMedium(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setMediumLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setInt(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setIntLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setLong(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setLongLE(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setZero(int index, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, InputStream in, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setCharSequence(int index, CharSequence sequence, Charset charset) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int writeCharSequence(CharSequence sequence, Charset charset) {
        throw new ReadOnlyBufferException();
    }
}
