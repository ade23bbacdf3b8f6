package io.netapprox.core.control;

import io.netapprox.core.control.Messages.AuthOkMsg;
import io.netapprox.core.control.Messages.AuthResponseMsg;
import io.netapprox.core.control.Messages.DataAttachAckMsg;
import io.netapprox.core.control.Messages.DataAttachMsg;
import io.netapprox.core.control.Messages.DataAttachProofMsg;
import io.netapprox.core.control.Messages.HelloAckMsg;
import io.netapprox.core.control.Messages.HelloMsg;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.control.Messages.SessionSetupMsg;
import java.net.SocketAddress;
import java.util.Arrays;
import java.util.Set;

/**
 * The server side of the control handshake: HELLO (the version and data planes are chosen, the
 * X25519 shares agreed), AUTH_RESPONSE (the client's proof of the shared secret), SESSION_SETUP (a
 * fresh session id, keys derived on both ends, never sent). And the handshake of a session's TCP
 * data connection, whose first frame is DATA_ATTACH instead of HELLO: nonces and proofs with the
 * session's data-connection key. Decides each step ({@link HandshakeStep}); its connection sends,
 * opens the session and hands a data connection over. Event loop only.
 */
final class ServerHandshake {
    private final ControlConfig config;
    private final DataPlane dataPlane;
    private final ControlMetrics metrics;
    private final PeerParameters peer;

    /** The live session ids of the server (to never hand out a duplicate). */
    private final Set<Long> liveSessionIds;

    /** Keys of the sessions that may attach a TCP data connection. */
    private final DataConnectionKeys dataConnectionKeys;

    private KeySchedule keys; // from HELLO until the session is set up

    // A data connection's attach.
    private long attachSessionId;
    private byte[] attachClientNonce;
    private byte[] attachServerNonce;
    private byte[] attachKey;

    ServerHandshake(
            ControlConfig config,
            DataPlane dataPlane,
            ControlMetrics metrics,
            PeerParameters peer,
            Set<Long> liveSessionIds,
            DataConnectionKeys dataConnectionKeys) {
        this.config = config;
        this.dataPlane = dataPlane;
        this.metrics = metrics;
        this.peer = peer;
        this.liveSessionIds = liveSessionIds;
        this.dataConnectionKeys = dataConnectionKeys;
    }

    /** HELLO: the client's versions, planes and share; {@code remote} is the client's address. */
    /**
     * The step a handshake frame from the client takes in {@code state}; null: the frame is not
     * allowed there (the connection answers UNEXPECTED_MESSAGE).
     */
    HandshakeStep onFrame(ConnectionState state, Msg msg, SocketAddress remote) {
        if (state == ConnectionState.HELLO && msg instanceof HelloMsg h) {
            return onHello(h, remote);
        } else if (state == ConnectionState.HELLO && msg instanceof DataAttachMsg a) {
            return onDataAttach(a);
        } else if (state == ConnectionState.ATTACH && msg instanceof DataAttachProofMsg p) {
            return onDataAttachProof(p);
        } else if (state == ConnectionState.AUTH && msg instanceof AuthResponseMsg r) {
            return onAuth(r);
        } else if (state == ConnectionState.SESSION && msg instanceof SessionSetupMsg) {
            return onSessionSetup();
        }
        return null;
    }

    HandshakeStep onHello(HelloMsg h, SocketAddress remote) {
        int chosen = Math.min(h.maxVersion(), WireFormat.MAX_SUPPORTED_VERSION);
        if (chosen < Math.max(h.minVersion(), WireFormat.MIN_SUPPORTED_VERSION)) {
            metrics.versionMismatches.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.VERSION_MISMATCH,
                    FrameDecoder.versionMismatchMessage(h.minVersion(), h.maxVersion()));
        }
        peer.version = chosen;
        peer.endpointId = h.endpointId();
        peer.maxFrame = h.maxFrameLength();
        Set<DataPlaneKind> offered = dataPlane.offeredPlanes();
        Set<DataPlaneKind> agreed = DataPlaneKind.fromBits(h.dataPlanes());
        agreed.retainAll(offered);
        if (agreed.isEmpty()) {
            metrics.sessionFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.SESSION_FAILED,
                    "no common data plane: the client runs "
                            + DataPlaneKind.describe(DataPlaneKind.fromBits(h.dataPlanes()))
                            + ", this endpoint "
                            + DataPlaneKind.describe(offered));
        }
        peer.agreedPlanes = agreed;
        boolean atp = agreed.contains(DataPlaneKind.ATP);
        peer.dataAddress =
                atp ? PeerParameters.resolveDataAddress(h.udpAddress(), h.udpPort(), remote) : null;
        byte[] helloBody = Auth.bodyBytes(h);
        boolean auth = config.authEnabled();
        KeySchedule.Ephemeral eph = KeySchedule.Ephemeral.generate();
        byte[] serverNonce = Auth.randomBytes(WireFormat.NONCE_LENGTH);
        HelloAckMsg ack =
                new HelloAckMsg(
                        chosen,
                        auth,
                        config.maxFrameLength(),
                        config.endpointId(),
                        atp ? dataPlane.udpAddress() : null,
                        atp ? dataPlane.localUdpPort() : 0,
                        serverNonce,
                        eph.share(),
                        DataPlaneKind.bits(agreed));
        byte[] helloAckBody = Auth.bodyBytes(ack);
        byte[] dh;
        try {
            dh = eph.agree(h.clientShare());
        } catch (java.security.InvalidKeyException e) {
            metrics.malformedFrames.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.MALFORMED_FRAME,
                    "HELLO carries an unusable X25519 share: " + e.getMessage());
        }
        keys =
                KeySchedule.derive(
                        dh,
                        config.authSecret(),
                        h.clientNonce(),
                        serverNonce,
                        helloBody,
                        helloAckBody);
        return new HandshakeStep.Reply(ack, auth ? ConnectionState.AUTH : ConnectionState.SESSION);
    }

    /** AUTH_RESPONSE: the client's proof of the shared secret. */
    HandshakeStep onAuth(AuthResponseMsg r) {
        if (!KeySchedule.verify(keys.clientProof(), r.mac())) {
            metrics.authFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.AUTH_FAILED,
                    "authentication failed: the client's proof does not match the shared "
                            + "secret");
        }
        metrics.authSuccesses.incrementAndGet();
        return new HandshakeStep.Reply(new AuthOkMsg(keys.serverProof()), ConnectionState.SESSION);
    }

    /**
     * SESSION_SETUP: a fresh session id (added to the live ids), its key and confirmation; with TCP
     * agreed the session's data-connection key is registered for its attach. The keys are
     * forgotten. If the data plane then refuses the session, {@link #sessionRefused} undoes this.
     */
    HandshakeStep onSessionSetup() {
        if (peer.dataAddress == null && peer.agreedPlanes.contains(DataPlaneKind.ATP)) {
            metrics.sessionFailures.incrementAndGet();
            return new HandshakeStep.Fail(
                    ErrorCode.SESSION_FAILED,
                    "the client advertised no data-plane address in HELLO");
        }
        long id;
        do {
            id = Auth.RANDOM.nextLong();
        } while (id == 0 || !liveSessionIds.add(id));
        byte[] key = keys.sessionKey(id); // derived on both ends, never sent
        byte[] confirm = keys.sessionConfirm(id);
        if (peer.agreedPlanes.contains(DataPlaneKind.TCP)) {
            dataConnectionKeys.put(id, keys.dataConnectionKey(id));
        }
        forgetKeys();
        return new HandshakeStep.Session(id, key, confirm, null);
    }

    /** The data plane refused session {@code id}: its id and data-connection key are released. */
    void sessionRefused(long id) {
        liveSessionIds.remove(id);
        dataConnectionKeys.forget(id);
    }

    /**
     * DATA_ATTACH as the first frame: a session's TCP data connection. Answered with the server's
     * nonce and proof when the session expects one; the same refusal otherwise (whether a session
     * id is live is not told to an unauthenticated peer).
     */
    HandshakeStep onDataAttach(DataAttachMsg a) {
        byte[] key = dataConnectionKeys != null ? dataConnectionKeys.copyOf(a.sessionId()) : null;
        if (key == null) {
            return refuseDataConnection("no session expects a data connection with this id");
        }
        attachSessionId = a.sessionId();
        attachClientNonce = a.clientNonce();
        attachServerNonce = Auth.randomBytes(WireFormat.NONCE_LENGTH);
        attachKey = key;
        return new HandshakeStep.Reply(
                new DataAttachAckMsg(
                        attachServerNonce,
                        KeySchedule.dataConnectionProof(
                                key, true, attachSessionId, attachClientNonce, attachServerNonce)),
                ConnectionState.ATTACH);
    }

    /**
     * DATA_ATTACH_PROOF: with the session's key, the connection is the session's one data
     * connection (taken from the keys: a second attach is refused) and goes to the data plane; else
     * refused.
     */
    HandshakeStep onDataAttachProof(DataAttachProofMsg p) {
        byte[] expected =
                KeySchedule.dataConnectionProof(
                        attachKey, false, attachSessionId, attachClientNonce, attachServerNonce);
        Arrays.fill(attachKey, (byte) 0);
        if (!KeySchedule.verify(expected, p.clientProof())) {
            metrics.authFailures.incrementAndGet();
            return refuseDataConnection("the proof does not match the session's key");
        }
        if (!dataConnectionKeys.take(attachSessionId)) { // another connection attached first
            return refuseDataConnection("the session has its data connection or has ended");
        }
        return new HandshakeStep.Attach(attachSessionId);
    }

    /** A refused data connection: counted, and the same AUTH_FAILED whatever the reason. */
    HandshakeStep.Fail refuseDataConnection(String why) {
        metrics.dataConnectionsRefused.incrementAndGet();
        return new HandshakeStep.Fail(ErrorCode.AUTH_FAILED, "data connection refused: " + why);
    }

    /** Wipes the handshake's key material (the session is set up, or the connection ended). */
    void forgetKeys() {
        if (keys != null) {
            keys.wipe();
            keys = null;
        }
        if (attachKey != null) {
            Arrays.fill(attachKey, (byte) 0);
            attachKey = null;
        }
    }
}
