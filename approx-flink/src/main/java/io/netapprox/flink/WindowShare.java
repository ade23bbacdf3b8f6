package io.netapprox.flink;

import io.netapprox.core.sampling.ShareSample;
import io.netty.buffer.ByteBuf;
import java.util.Objects;

/**
 * What a receiver hands the window operator for one stratum: one sender's share of a (window,
 * group) in one epoch, its size from the manifest (N messages, M records, MSR, non-finite counts)
 * and what arrived of it, accumulated as the query's aggregates need ({@link ShareSample}). The
 * window's answers come from its shares ({@link ApproxResults}).
 */
final class WindowShare<K> {
    K group;
    long windowStart;
    long windowEnd;
    ShareSample share;

    WindowShare() {} // Kryo

    WindowShare(StratumInfo<K> info, ShareSample.Columns columns) {
        this.group = info.group();
        this.windowStart = info.windowStart();
        this.windowEnd = info.windowEnd();
        this.share =
                new ShareSample(
                        info.messages(),
                        info.records(),
                        info.msr(),
                        info.target(),
                        info.nonFinite().counts(),
                        null,
                        columns,
                        31L * info.windowStart() + Objects.hashCode(info.group()));
    }

    /**
     * Adds one delivered message.
     *
     * @throws IllegalArgumentException the bytes are not a well-formed message of this query
     */
    void addMessage(ByteBuf content) {
        MessageCodec.KeySink keys = share.keepsTopK() ? share::addKey : null;
        share.startMessage();
        try {
            // decode checks the whole message before it hands over a record
            MessageCodec.decode(content, share.width(), share::addRecord, keys);
        } catch (IllegalArgumentException malformed) {
            share.discardMessage();
            throw malformed;
        }
        share.finishMessage();
    }
}
