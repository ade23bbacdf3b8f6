package io.netapprox.core.control;

import io.netapprox.core.control.Messages.DecodeFailure;
import io.netapprox.core.control.Messages.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Length-prefixed frame decoder with strict, exception-free failure handling.
 *
 * <p>It does what {@code LengthFieldBasedFrameDecoder(max, 12, 4)} does, plus: the magic is checked
 * as soon as two bytes are in (so random bytes fail at once instead of waiting for a random
 * length), the version as soon as the third byte is in, the length limit can be raised once the
 * handshake is done, and a failure is emitted as a {@link DecodeFailure} message (after which every
 * further byte is discarded) rather than thrown - one failure per connection, no stack traces, no
 * exception storm.
 */
final class FrameDecoder extends ByteToMessageDecoder {
    private volatile int maxBodyLength;
    private boolean failed;
    private volatile int mismatchedVersion;

    FrameDecoder(int initialMaxBodyLength) {
        this.maxBodyLength = initialMaxBodyLength;
    }

    void setMaxBodyLength(int max) {
        this.maxBodyLength = max;
    }

    /**
     * The header version of a peer refused for its version, else 0: its ERROR is written in that
     * version (the ERROR frame's layout is frozen), so an older peer can read why it was refused.
     */
    int mismatchedVersion() {
        return mismatchedVersion;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        int r = in.readerIndex();
        int readable = in.readableBytes();
        if (readable < 2) {
            return;
        }
        int magic = in.getUnsignedShort(r);
        if (magic != WireFormat.MAGIC) {
            fail(
                    in,
                    out,
                    ErrorCode.MALFORMED_FRAME,
                    String.format(
                            "bad magic 0x%04x (expected 0x%04x): not a NetApprox control peer",
                            magic, WireFormat.MAGIC));
            return;
        }
        if (readable < 3) {
            return;
        }
        int version = in.getUnsignedByte(r + 2);
        if (version < WireFormat.MIN_SUPPORTED_VERSION
                || version > WireFormat.MAX_SUPPORTED_VERSION) {
            mismatchedVersion = version;
            fail(in, out, ErrorCode.VERSION_MISMATCH, versionMismatchMessage(version, version));
            return;
        }
        if (readable < 4) {
            return;
        }
        int typeCode = in.getUnsignedByte(r + 3);
        MessageType type = MessageType.fromCode(typeCode);
        if (type == null) {
            fail(
                    in,
                    out,
                    ErrorCode.UNKNOWN_MESSAGE_TYPE,
                    "unknown message type " + typeCode + " for protocol version " + version);
            return;
        }
        if (readable < WireFormat.HEADER_LENGTH) {
            return;
        }
        long requestId = in.getLong(r + 4);
        long bodyLength = in.getUnsignedInt(r + 12);
        int max = maxBodyLength;
        if (bodyLength > max) {
            fail(
                    in,
                    out,
                    ErrorCode.FRAME_TOO_LARGE,
                    type
                            + " frame body of "
                            + bodyLength
                            + " bytes exceeds the limit of "
                            + max
                            + " bytes");
            return;
        }
        if (readable < WireFormat.HEADER_LENGTH + bodyLength) {
            return;
        }
        ByteBuf body = in.slice(r + WireFormat.HEADER_LENGTH, (int) bodyLength);
        in.skipBytes(WireFormat.HEADER_LENGTH + (int) bodyLength);
        try {
            out.add(new Frame(requestId, WireFormat.decodeBody(type, body)));
        } catch (WireFormat.MalformedException e) {
            fail(in, out, e.code, e.getMessage());
        }
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
            throws Exception {
        decode(ctx, in, out);
        if (!failed && in.isReadable()) {
            fail(
                    in,
                    out,
                    ErrorCode.MALFORMED_FRAME,
                    "truncated frame: the peer stopped sending after "
                            + in.readableBytes()
                            + " bytes of an incomplete frame");
        }
    }

    private void fail(ByteBuf in, List<Object> out, ErrorCode code, String message) {
        failed = true;
        in.skipBytes(in.readableBytes());
        out.add(new DecodeFailure(code, message));
    }

    static String versionMismatchMessage(int peerMin, int peerMax) {
        String peer =
                peerMin == peerMax ? "version " + peerMin : "versions " + peerMin + ".." + peerMax;
        String ours =
                WireFormat.MIN_SUPPORTED_VERSION == WireFormat.MAX_SUPPORTED_VERSION
                        ? "version " + WireFormat.MAX_SUPPORTED_VERSION
                        : "versions "
                                + WireFormat.MIN_SUPPORTED_VERSION
                                + ".."
                                + WireFormat.MAX_SUPPORTED_VERSION;
        return "peer speaks NetApprox control protocol " + peer + ", this endpoint speaks " + ours;
    }
}
