package io.netapprox.flink;

import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The bytes of one ATP message: a cluster of records of one stratum, {@code records u16|u32}, then
 * per record its values (f64 each) and, for top-k queries, its key ({@code u16 length + UTF-8}).
 * Decoding validates every length against what remains: message bytes come from the network.
 */
final class MessageCodec {
  /** Longest top-k key, in UTF-8 bytes; longer keys are cut (on a character boundary). */
  static final int MAX_KEY_BYTES = 1024;

  /** Most records in one message ({@code approx.recordsPerMessage} is at most this). */
  static final int MAX_RECORDS = 65536;

  private MessageCodec() {}

  /** Records {@code [from, to)} of {@code buf} as one message. */
  static byte[] encode(StratumBuffer buf, int from, int to) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 + (to - from) * buf.width() * 8);
    DataOutputStream out = new DataOutputStream(bytes);
    try {
      out.writeInt(to - from);
      for (int r = from; r < to; r++) {
        for (int v = 0; v < buf.width(); v++) {
          out.writeDouble(buf.value(r, v));
        }
        if (buf.hasKeys()) {
          byte[] k = keyBytes(buf.key(r));
          out.writeShort(k.length);
          out.write(k);
        }
      }
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
    }
    return bytes.toByteArray();
  }

  private static byte[] keyBytes(String key) {
    String k = key == null ? "" : key;
    byte[] b = k.getBytes(StandardCharsets.UTF_8);
    if (b.length <= MAX_KEY_BYTES) {
      return b;
    }
    int n = MAX_KEY_BYTES;
    while (n > 0 && (b[n] & 0xC0) == 0x80) {
      n--; // do not cut a multi-byte character
    }
    return java.util.Arrays.copyOf(b, n);
  }

  /** Receives the decoded records of one message. */
  interface Sink {
    void record(double[] values, String key);
  }

  /**
   * Decodes one message of a stratum whose records carry {@code width} values (and a key when
   * {@code withKeys}) into {@code sink}; {@code values} is reused between records.
   *
   * @return the number of records
   * @throws IllegalArgumentException the bytes are not a well-formed message of this shape
   */
  static int decode(ByteBuf in, int width, boolean withKeys, Sink sink) {
    int n = validate(in.duplicate(), width, withKeys);
    in.skipBytes(4);
    double[] values = new double[width];
    for (int r = 0; r < n; r++) {
      for (int v = 0; v < width; v++) {
        values[v] = in.readDouble();
      }
      String key = null;
      if (withKeys) {
        int len = in.readUnsignedShort();
        key = in.readCharSequence(len, StandardCharsets.UTF_8).toString();
      }
      sink.record(values, key);
    }
    return n;
  }

  /** Checks the whole message before anything is consumed; returns its record count. */
  private static int validate(ByteBuf in, int width, boolean withKeys) {
    if (in.readableBytes() < 4) {
      throw new IllegalArgumentException("message shorter than its header");
    }
    int n = in.readInt();
    int fixed = width * 8 + (withKeys ? 2 : 0);
    if (n < 1 || n > MAX_RECORDS || (long) n * fixed > in.readableBytes()) {
      throw new IllegalArgumentException("message claims " + n + " records");
    }
    for (int r = 0; r < n; r++) {
      if (in.readableBytes() < fixed) {
        throw new IllegalArgumentException("message truncated at record " + r);
      }
      in.skipBytes(width * 8);
      if (withKeys) {
        int len = in.readUnsignedShort();
        if (len > MAX_KEY_BYTES || len > in.readableBytes()) {
          throw new IllegalArgumentException("bad key length " + len + " at record " + r);
        }
        in.skipBytes(len);
      }
    }
    if (in.isReadable()) {
      throw new IllegalArgumentException(in.readableBytes() + " trailing bytes after the records");
    }
    return n;
  }
}
