package io.netapprox.core.engine;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.channels.ScatteringByteChannel;
import java.nio.charset.Charset;

/**
 * A delivered message's payload: a read-only, reference-counted {@link ByteBuf} over the engine's own memory (zero
 * copy: a JNI {@code NewDirectByteBuffer} view, no cleaner). The memory stays valid until the last
 * {@link #release()}, whose {@link #deallocate()} calls {@code na_message_release} - which also frees space in the
 * session's receive window (flow control). Reads after release fail with Netty's IllegalReferenceCountException,
 * never touch freed memory; writes throw {@link ReadOnlyBufferException}.
 */
final class NativeMessageBuf extends UnpooledUnsafeDirectByteBuf {
  private final EndpointCore core;
  private final long handle;

  NativeMessageBuf(EndpointCore core, long handle, ByteBuffer view) {
    super(UnpooledByteBufAllocator.DEFAULT, view, view.capacity());
    this.core = core;
    this.handle = handle;
  }

  @Override
  protected void deallocate() {
    try {
      super.deallocate();  // the ByteBuffer is not freed (doNotFree): the memory belongs to the engine
    } finally {
      core.releaseMessage(handle);
    }
  }

  @Override
  protected void freeDirect(ByteBuffer buffer) {
    // never: engine memory
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

  @Override
  public ByteBuf capacity(int newCapacity) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public ByteBuffer nioBuffer(int index, int length) {
    return super.nioBuffer(index, length).asReadOnlyBuffer();
  }

  @Override
  public ByteBuffer internalNioBuffer(int index, int length) {
    return super.nioBuffer(index, length).asReadOnlyBuffer();
  }

  @Override
  public ByteBuffer[] nioBuffers(int index, int length) {
    return new ByteBuffer[] {nioBuffer(index, length)};
  }

  // ---- every write path throws --------------------------------------------------------------------------------
  @Override protected void _setByte(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setShort(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setShortLE(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setMedium(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setMediumLE(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setInt(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setIntLE(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setLong(int index, long value) { throw new ReadOnlyBufferException(); }
  @Override protected void _setLongLE(int index, long value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setByte(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setShort(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setShortLE(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setMedium(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setMediumLE(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setInt(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setIntLE(int index, int value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setLong(int index, long value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setLongLE(int index, long value) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setZero(int index, int length) { throw new ReadOnlyBufferException(); }
  @Override public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
    throw new ReadOnlyBufferException();
  }
  @Override public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
    throw new ReadOnlyBufferException();
  }
  @Override public ByteBuf setBytes(int index, ByteBuffer src) { throw new ReadOnlyBufferException(); }
  @Override public int setBytes(int index, InputStream in, int length) { throw new ReadOnlyBufferException(); }
  @Override public int setBytes(int index, ScatteringByteChannel in, int length) {
    throw new ReadOnlyBufferException();
  }
  @Override public int setBytes(int index, FileChannel in, long position, int length) {
    throw new ReadOnlyBufferException();
  }
  @Override public int setCharSequence(int index, CharSequence sequence, Charset charset) {
    throw new ReadOnlyBufferException();
  }
  @Override public int writeCharSequence(CharSequence sequence, Charset charset) {
    throw new ReadOnlyBufferException();
  }
}
