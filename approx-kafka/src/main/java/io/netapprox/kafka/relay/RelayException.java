package io.netapprox.kafka.relay;

import org.apache.kafka.common.KafkaException;

/**
 * A relay cannot serve a pull: it is closed or unreachable ({@link Reason#UNAVAILABLE}), it does
 * not lead the partition ({@link Reason#NOT_LEADER}, {@link #leaderId()} names the leader), the
 * offset is out of the log's range ({@link Reason#OFFSET_OUT_OF_RANGE}), the read failed ({@link
 * Reason#READ_FAILED}), a newer request of the same stream replaced the pull ({@link
 * Reason#SUPERSEDED}: the consumer had already given the pull up; not a failure of the relay), the
 * consumer's Kafka principal may not read the topic or delegated no identity ({@link
 * Reason#NOT_AUTHORIZED}), the topic or partition does not exist or its name is invalid ({@link
 * Reason#UNKNOWN_TOPIC}), or the consumer's client holds its share of the relay already ({@link
 * Reason#THROTTLED}: retry after a pause; not a failure).
 */
public class RelayException extends KafkaException {
    private static final long serialVersionUID = 1L;

    public enum Reason {
        UNAVAILABLE,
        NOT_LEADER,
        OFFSET_OUT_OF_RANGE,
        READ_FAILED,
        SUPERSEDED,
        // appended: the wire carries the ordinal (RelayProtocol)
        NOT_AUTHORIZED,
        UNKNOWN_TOPIC,
        THROTTLED
    }

    private final Reason reason;
    private final int leaderId;

    public RelayException(Reason reason, String message) {
        this(reason, message, -1, null);
    }

    public RelayException(Reason reason, String message, int leaderId, Throwable cause) {
        super(message, cause);
        this.reason = reason;
        this.leaderId = leaderId;
    }

    public Reason reason() {
        return reason;
    }

    /** The partition's leader when the reason is NOT_LEADER, else -1. */
    public int leaderId() {
        return leaderId;
    }
}
