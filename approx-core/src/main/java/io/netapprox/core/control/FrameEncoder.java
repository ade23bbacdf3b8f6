package io.netapprox.core.control;

import io.netapprox.core.control.Messages.Frame;
import io.netty.buffer.ByteBuf;

/**
 * Writes a {@link Frame}: 16-byte header (magic, version, type, request id, body length) and body.
 * Frames are encoded by the connection itself (not by a pipeline encoder) so that an outbound
 * request can be checked against the peer's frame limit and failed locally before anything is
 * written.
 */
final class FrameEncoder {
    private FrameEncoder() {}

    static void encode(Frame frame, ByteBuf out) {
        encode(frame, out, WireFormat.VERSION);
    }

    /**
     * With another header version: only for the ERROR that refuses a peer of that version (the
     * header and ERROR body layouts are the same in every version).
     */
    static void encode(Frame frame, ByteBuf out, int headerVersion) {
        int start = out.writerIndex();
        out.writeShort(WireFormat.MAGIC);
        out.writeByte(headerVersion);
        out.writeByte(frame.type().code);
        out.writeLong(frame.requestId());
        out.writeInt(0); // body length, patched below
        WireFormat.encodeBody(frame.msg(), out);
        out.setInt(start + 12, out.writerIndex() - start - WireFormat.HEADER_LENGTH);
    }
}
