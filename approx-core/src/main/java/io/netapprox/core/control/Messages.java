package io.netapprox.core.control;

import java.net.InetAddress;

/** The decoded bodies of control frames (internal; the public API uses the job types directly). */
final class Messages {
    private Messages() {
    }

    sealed interface Msg permits Hello, HelloAck, AuthResponse, AuthOk, SessionSetup, SessionSetupAck, JobAnnounce,
            JobAccept, JobReject, DataRequest, DataResponse, MsrUpdateMsg, JobReportMsg, Ack, ErrorMsg, Ping, Pong {
        MessageType type();
    }

    /** HELLO: the client's supported version range, identity, data-plane address and frame limit. */
    record Hello(int minVersion, int maxVersion, int maxFrameLength, String endpointId, InetAddress udpAddress,
                 int udpPort) implements Msg {
        public MessageType type() {
            return MessageType.HELLO;
        }
    }

    /** HELLO_ACK: the chosen version, the server's identity, data-plane address, frame limit and auth challenge. */
    record HelloAck(int version, boolean authRequired, int maxFrameLength, String endpointId,
                    InetAddress udpAddress, int udpPort, byte[] serverNonce) implements Msg {
        public MessageType type() {
            return MessageType.HELLO_ACK;
        }
    }

    record AuthResponse(byte[] clientNonce, byte[] mac) implements Msg {
        public MessageType type() {
            return MessageType.AUTH_RESPONSE;
        }
    }

    record AuthOk(byte[] mac) implements Msg {
        public MessageType type() {
            return MessageType.AUTH_OK;
        }
    }

    record SessionSetup() implements Msg {
        public MessageType type() {
            return MessageType.SESSION_SETUP;
        }
    }

    record SessionSetupAck(long sessionId, byte[] key) implements Msg {
        public MessageType type() {
            return MessageType.SESSION_SETUP_ACK;
        }

        @Override
        public String toString() {
            return "SessionSetupAck{session=" + Long.toHexString(sessionId) + ", key=<redacted>}";
        }
    }

    record JobAnnounce(JobAnnouncement job) implements Msg {
        public MessageType type() {
            return MessageType.JOB_ANNOUNCE;
        }
    }

    record JobAccept(int jobId) implements Msg {
        public MessageType type() {
            return MessageType.JOB_ACCEPT;
        }
    }

    record JobReject(int jobId, String reason) implements Msg {
        public MessageType type() {
            return MessageType.JOB_REJECT;
        }
    }

    record DataRequest(int jobId, byte[] payload) implements Msg {
        public MessageType type() {
            return MessageType.DATA_REQUEST;
        }
    }

    record DataResponse(byte[] payload) implements Msg {
        public MessageType type() {
            return MessageType.DATA_RESPONSE;
        }
    }

    record MsrUpdateMsg(MsrUpdate update) implements Msg {
        public MessageType type() {
            return MessageType.MSR_UPDATE;
        }
    }

    record JobReportMsg(JobReport report) implements Msg {
        public MessageType type() {
            return MessageType.JOB_REPORT;
        }
    }

    record Ack() implements Msg {
        public MessageType type() {
            return MessageType.ACK;
        }
    }

    /** ERROR: {@code code} is the raw wire value (a newer peer may send codes this version does not know). */
    record ErrorMsg(int code, String message) implements Msg {
        public MessageType type() {
            return MessageType.ERROR;
        }

        ErrorCode errorCode() {
            ErrorCode c = ErrorCode.fromCode(code);
            return c == null ? ErrorCode.INTERNAL_ERROR : c;
        }
    }

    record Ping() implements Msg {
        public MessageType type() {
            return MessageType.PING;
        }
    }

    record Pong() implements Msg {
        public MessageType type() {
            return MessageType.PONG;
        }
    }

    /** One frame: header fields plus the decoded body. */
    record Frame(long requestId, Msg msg) {
        MessageType type() {
            return msg.type();
        }
    }

    /** What the decoder emits instead of throwing: the first (and only) failure of the connection. */
    record DecodeFailure(ErrorCode code, String message) {
    }
}
