package io.netapprox.core.control;

import io.netapprox.core.control.Messages.AuthOkMsg;
import io.netapprox.core.control.Messages.AuthResponseMsg;
import io.netapprox.core.control.Messages.HelloAckMsg;
import io.netapprox.core.control.Messages.HelloMsg;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.control.Messages.SessionSetupAckMsg;
import io.netapprox.core.control.Messages.SessionSetupMsg;
import java.net.SocketAddress;
import java.util.Set;

/**
 * The client side of the control handshake: HELLO -> HELLO_ACK (version, data planes, X25519
 * shares), AUTH_RESPONSE -> AUTH_OK when the server authenticates (proofs over the shared secret
 * and both HELLOs), SESSION_SETUP -> SESSION_SETUP_ACK (the server's session id and its key
 * confirmation). Decides each step ({@link HandshakeStep}); its connection sends and opens the
 * session. Event loop only; the key material lives from HELLO until the session is set up (or
 * {@link #forgetKeys}).
 */
final class ClientHandshake {
    private final ControlConfig config;
    private final DataPlane dataPlane;
    private final ControlMetrics metrics;
    private final PeerParameters peer;

    private long requestId;
    private byte[] helloBody;
    private byte[] clientNonce;
    private KeySchedule.Ephemeral ephemeral; // from HELLO until HELLO_ACK
    private KeySchedule keys; // from HELLO_ACK until the session is set up

    ClientHandshake(
            ControlConfig config,
            DataPlane dataPlane,
            ControlMetrics metrics,
            PeerParameters peer) {
        this.config = config;
        this.dataPlane = dataPlane;
        this.metrics = metrics;
        this.peer = peer;
    }

    /** The HELLO that starts the handshake; every client frame of the handshake uses requestId. */
    HelloMsg hello(long requestId) {
        this.requestId = requestId;
        ephemeral = KeySchedule.Ephemeral.generate();
        clientNonce = Auth.randomBytes(WireFormat.NONCE_LENGTH);
        Set<DataPlaneKind> offered = dataPlane.offeredPlanes();
        boolean atp = offered.contains(DataPlaneKind.ATP);
        HelloMsg hello =
                new HelloMsg(
                        WireFormat.MIN_SUPPORTED_VERSION,
                        WireFormat.MAX_SUPPORTED_VERSION,
                        config.maxFrameLength(),
                        config.endpointId(),
                        atp ? dataPlane.udpAddress() : null,
                        atp ? dataPlane.localUdpPort() : 0,
                        clientNonce,
                        ephemeral.share(),
                        DataPlaneKind.bits(offered));
        helloBody = Auth.bodyBytes(hello);
        return hello;
    }

    /** The request id of the handshake's frames (the server answers with it). */
    long requestId() {
        return requestId;
    }

    /**
     * HELLO_ACK: the server's version, planes and share; {@code remote} is the server's address.
     */
    /**
     * The step a handshake frame from the server takes in {@code state}; null: the frame is not
     * allowed there, or does not carry the HELLO's request id (every server handshake frame does).
     */
    HandshakeStep onFrame(ConnectionState state, long frameId, Msg msg, SocketAddress remote) {
        if (frameId != requestId()) {
            return null;
        } else if (state == ConnectionState.HELLO && msg instanceof HelloAckMsg a) {
            return onHelloAck(a, remote);
        } else if (state == ConnectionState.AUTH && msg instanceof AuthOkMsg ok) {
            return onAuthOk(ok);
        } else if (state == ConnectionState.SESSION && msg instanceof SessionSetupAckMsg a) {
            return onSessionSetupAck(a);
        }
        return null;
    }

    HandshakeStep onHelloAck(HelloAckMsg a, SocketAddress remote) {
        if (a.version() < WireFormat.MIN_SUPPORTED_VERSION
                || a.version() > WireFormat.MAX_SUPPORTED_VERSION) {
            metrics.versionMismatches.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.VERSION_MISMATCH,
                    "server chose protocol version "
                            + a.version()
                            + " which this endpoint (versions "
                            + WireFormat.MIN_SUPPORTED_VERSION
                            + ".."
                            + WireFormat.MAX_SUPPORTED_VERSION
                            + ") does not speak");
        }
        peer.version = a.version();
        peer.endpointId = a.endpointId();
        peer.maxFrame = a.maxFrameLength();
        Set<DataPlaneKind> agreed = DataPlaneKind.fromBits(a.dataPlanes());
        Set<DataPlaneKind> offered = dataPlane.offeredPlanes();
        if (!offered.containsAll(agreed)) {
            metrics.sessionFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.SESSION_FAILED,
                    "the server agreed on data planes "
                            + DataPlaneKind.describe(agreed)
                            + " but this endpoint offered "
                            + DataPlaneKind.describe(offered));
        }
        peer.agreedPlanes = agreed;
        peer.dataAddress =
                agreed.contains(DataPlaneKind.ATP)
                        ? PeerParameters.resolveDataAddress(a.udpAddress(), a.udpPort(), remote)
                        : null;
        byte[] helloAckBody = Auth.bodyBytes(a);
        if (a.authRequired() && !config.authEnabled()) {
            metrics.authFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.AUTH_FAILED,
                    "the server requires authentication but no shared secret is configured");
        }
        if (!a.authRequired() && config.authEnabled()) {
            metrics.authFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.AUTH_FAILED,
                    "a shared secret is configured but the server does not authenticate; "
                            + "refusing to continue unauthenticated");
        }
        byte[] dh;
        try {
            dh = ephemeral.agree(a.serverShare());
        } catch (java.security.InvalidKeyException e) {
            metrics.malformedFrames.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.MALFORMED_FRAME,
                    "HELLO_ACK carries an unusable X25519 share: " + e.getMessage());
        }
        ephemeral = null; // nothing but this derivation may use it
        keys =
                KeySchedule.derive(
                        dh,
                        config.authSecret(),
                        clientNonce,
                        a.serverNonce(),
                        helloBody,
                        helloAckBody);
        if (a.authRequired()) {
            return new HandshakeStep.Reply(
                    new AuthResponseMsg(keys.clientProof()), ConnectionState.AUTH);
        }
        return new HandshakeStep.Reply(new SessionSetupMsg(), ConnectionState.SESSION);
    }

    /** AUTH_OK: the server's proof of the shared secret. */
    HandshakeStep onAuthOk(AuthOkMsg ok) {
        if (!KeySchedule.verify(keys.serverProof(), ok.mac())) {
            metrics.authFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.AUTH_FAILED,
                    "authentication failed: the server's proof does not match the shared secret");
        }
        metrics.authSuccesses.incrementAndGet();
        return new HandshakeStep.Reply(new SessionSetupMsg(), ConnectionState.SESSION);
    }

    /**
     * SESSION_SETUP_ACK: the session id and the server's key confirmation. On success the keys are
     * forgotten and the step carries the session key (and the data-connection key with TCP).
     */
    HandshakeStep onSessionSetupAck(SessionSetupAckMsg a) {
        if (peer.dataAddress == null && peer.agreedPlanes.contains(DataPlaneKind.ATP)) {
            metrics.sessionFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.SESSION_FAILED,
                    "the server advertised no data-plane address in HELLO_ACK");
        }
        if (!KeySchedule.verify(keys.sessionConfirm(a.sessionId()), a.confirm())) {
            // The server derived another key (or the id was altered on the way): no session.
            metrics.authFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.AUTH_FAILED,
                    "SESSION_SETUP_ACK key confirmation does not match: the server derived another"
                            + " session key");
        }
        byte[] key = keys.sessionKey(a.sessionId()); // derived on both ends, never sent
        byte[] dataConnectionKey =
                peer.agreedPlanes.contains(DataPlaneKind.TCP)
                        ? keys.dataConnectionKey(a.sessionId())
                        : null;
        forgetKeys();
        return new HandshakeStep.Session(a.sessionId(), key, null, dataConnectionKey);
    }

    /** Wipes the handshake's key material (the session is set up, or the connection ended). */
    void forgetKeys() {
        ephemeral = null;
        if (keys != null) {
            keys.wipe();
            keys = null;
        }
    }
}
