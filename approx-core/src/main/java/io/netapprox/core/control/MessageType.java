package io.netapprox.core.control;

/**
 * Control message types (u8 on the wire). Values never change meaning; new types get new values.
 */
enum MessageType {
    HELLO(1, Kind.REQUEST),
    HELLO_ACK(2, Kind.RESPONSE),
    AUTH_RESPONSE(3, Kind.REQUEST),
    AUTH_OK(4, Kind.RESPONSE),
    SESSION_SETUP(5, Kind.REQUEST),
    SESSION_SETUP_ACK(6, Kind.RESPONSE),
    JOB_ANNOUNCE(7, Kind.REQUEST),
    JOB_ACCEPT(8, Kind.RESPONSE),
    JOB_REJECT(9, Kind.RESPONSE),
    DATA_REQUEST(10, Kind.REQUEST),
    DATA_RESPONSE(11, Kind.RESPONSE),
    MSR_UPDATE(12, Kind.REQUEST),
    JOB_REPORT(13, Kind.REQUEST),
    ACK(14, Kind.RESPONSE),
    ERROR(15, Kind.RESPONSE),
    PING(16, Kind.REQUEST),
    PONG(17, Kind.RESPONSE),
    // version 4: the TCP data plane (docs/control-plane.md section 3.3)
    DATA_ATTACH(18, Kind.REQUEST),
    DATA_ATTACH_ACK(19, Kind.RESPONSE),
    DATA_ATTACH_PROOF(20, Kind.REQUEST),
    DATA_PLANE_SELECT(21, Kind.REQUEST);

    enum Kind {
        REQUEST,
        RESPONSE
    }

    private static final MessageType[] BY_CODE = new MessageType[256];

    static {
        for (MessageType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    final int code;
    final Kind kind;

    MessageType(int code, Kind kind) {
        this.code = code;
        this.kind = kind;
    }

    static MessageType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
