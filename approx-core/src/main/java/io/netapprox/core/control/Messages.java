package io.netapprox.core.control;

import io.netapprox.core.job.JobReport;
import java.net.InetAddress;

/** The decoded bodies of control frames (internal; the public API uses the job types directly). */
final class Messages {
    private Messages() {}

    sealed interface Msg
            permits HelloMsg,
                    HelloAckMsg,
                    AuthResponseMsg,
                    AuthOkMsg,
                    SessionSetupMsg,
                    SessionSetupAckMsg,
                    JobAnnounceMsg,
                    JobAcceptMsg,
                    JobRejectMsg,
                    DataRequestMsg,
                    DataResponseMsg,
                    MsrUpdateMsg,
                    JobReportMsg,
                    AckMsg,
                    ErrorMsg,
                    PingMsg,
                    PongMsg,
                    DataAttachMsg,
                    DataAttachAckMsg,
                    DataAttachProofMsg,
                    DataPlaneSelectMsg {
        MessageType type();
    }

    /**
     * HELLO: the client's supported version range, the data planes it offers ({@link DataPlaneKind}
     * bits; ATP only with a UDP address), identity, UDP address and frame limit, its fresh nonce
     * and ephemeral X25519 share ({@link KeySchedule}).
     */
    record HelloMsg(
            int minVersion,
            int maxVersion,
            int maxFrameLength,
            String endpointId,
            InetAddress udpAddress,
            int udpPort,
            byte[] clientNonce,
            byte[] clientShare,
            int dataPlanes)
            implements Msg {
        /** Offering ATP alone when there is a UDP address (what a version-3 HELLO meant). */
        HelloMsg(
                int minVersion,
                int maxVersion,
                int maxFrameLength,
                String endpointId,
                InetAddress udpAddress,
                int udpPort,
                byte[] clientNonce,
                byte[] clientShare) {
            this(
                    minVersion,
                    maxVersion,
                    maxFrameLength,
                    endpointId,
                    udpAddress,
                    udpPort,
                    clientNonce,
                    clientShare,
                    udpAddress != null ? DataPlaneKind.ATP.bit() : DataPlaneKind.TCP.bit());
        }

        public MessageType type() {
            return MessageType.HELLO;
        }
    }

    /**
     * HELLO_ACK: the chosen version, whether the server authenticates, the data planes both ends
     * can run (the intersection of the client's offer and the server's), its identity, UDP address
     * and frame limit, its fresh nonce and ephemeral X25519 share.
     */
    record HelloAckMsg(
            int version,
            boolean authRequired,
            int maxFrameLength,
            String endpointId,
            InetAddress udpAddress,
            int udpPort,
            byte[] serverNonce,
            byte[] serverShare,
            int dataPlanes)
            implements Msg {
        /** Agreeing on ATP alone when there is a UDP address. */
        HelloAckMsg(
                int version,
                boolean authRequired,
                int maxFrameLength,
                String endpointId,
                InetAddress udpAddress,
                int udpPort,
                byte[] serverNonce,
                byte[] serverShare) {
            this(
                    version,
                    authRequired,
                    maxFrameLength,
                    endpointId,
                    udpAddress,
                    udpPort,
                    serverNonce,
                    serverShare,
                    udpAddress != null ? DataPlaneKind.ATP.bit() : DataPlaneKind.TCP.bit());
        }

        public MessageType type() {
            return MessageType.HELLO_ACK;
        }
    }

    /**
     * DATA_ATTACH: the first frame of a TCP data connection (instead of HELLO): the session it
     * belongs to and the client's fresh nonce.
     */
    record DataAttachMsg(long sessionId, byte[] clientNonce) implements Msg {
        public MessageType type() {
            return MessageType.DATA_ATTACH;
        }
    }

    /**
     * DATA_ATTACH_ACK: the server's fresh nonce and its proof of the session's data-connection key
     * ({@link KeySchedule#dataConnectionProof}).
     */
    record DataAttachAckMsg(byte[] serverNonce, byte[] serverProof) implements Msg {
        public MessageType type() {
            return MessageType.DATA_ATTACH_ACK;
        }
    }

    /** DATA_ATTACH_PROOF: the client's proof; the connection then carries data frames only. */
    record DataAttachProofMsg(byte[] clientProof) implements Msg {
        public MessageType type() {
            return MessageType.DATA_ATTACH_PROOF;
        }
    }

    /**
     * DATA_PLANE_SELECT (client to server, once per session): the plane the session's jobs run on,
     * one of the agreed planes, and why (e.g. the UDP probe that failed); answered with ACK.
     */
    record DataPlaneSelectMsg(DataPlaneKind plane, String reason) implements Msg {
        public MessageType type() {
            return MessageType.DATA_PLANE_SELECT;
        }
    }

    /** AUTH_RESPONSE: the client's proof ({@link KeySchedule#clientProof()}). */
    record AuthResponseMsg(byte[] mac) implements Msg {
        public MessageType type() {
            return MessageType.AUTH_RESPONSE;
        }
    }

    /** AUTH_OK: the server's proof ({@link KeySchedule#serverProof()}). */
    record AuthOkMsg(byte[] mac) implements Msg {
        public MessageType type() {
            return MessageType.AUTH_OK;
        }
    }

    record SessionSetupMsg() implements Msg {
        public MessageType type() {
            return MessageType.SESSION_SETUP;
        }
    }

    /**
     * SESSION_SETUP_ACK: the session id the server chose and its key confirmation ({@link
     * KeySchedule#sessionConfirm}); the key itself never travels.
     */
    record SessionSetupAckMsg(long sessionId, byte[] confirm) implements Msg {
        public MessageType type() {
            return MessageType.SESSION_SETUP_ACK;
        }
    }

    record JobAnnounceMsg(JobAnnouncement job) implements Msg {
        public MessageType type() {
            return MessageType.JOB_ANNOUNCE;
        }
    }

    record JobAcceptMsg(int jobId) implements Msg {
        public MessageType type() {
            return MessageType.JOB_ACCEPT;
        }
    }

    record JobRejectMsg(int jobId, String reason) implements Msg {
        public MessageType type() {
            return MessageType.JOB_REJECT;
        }
    }

    record DataRequestMsg(int jobId, byte[] payload) implements Msg {
        public MessageType type() {
            return MessageType.DATA_REQUEST;
        }
    }

    record DataResponseMsg(byte[] payload) implements Msg {
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

    record AckMsg() implements Msg {
        public MessageType type() {
            return MessageType.ACK;
        }
    }

    /**
     * ERROR: {@code code} is the raw wire value (a newer peer may send codes this version does not
     * know).
     */
    record ErrorMsg(int code, String message) implements Msg {
        public MessageType type() {
            return MessageType.ERROR;
        }

        ErrorCode errorCode() {
            ErrorCode c = ErrorCode.fromCode(code);
            return c == null ? ErrorCode.INTERNAL_ERROR : c;
        }
    }

    record PingMsg() implements Msg {
        public MessageType type() {
            return MessageType.PING;
        }
    }

    record PongMsg() implements Msg {
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

    /**
     * What the decoder emits instead of throwing: the first (and only) failure of the connection.
     */
    record DecodeFailure(ErrorCode code, String message) {}
}
