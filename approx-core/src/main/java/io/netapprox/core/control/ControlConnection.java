package io.netapprox.core.control;

import io.netapprox.core.control.Messages.AuthResponseMsg;
import io.netapprox.core.control.Messages.DataAttachMsg;
import io.netapprox.core.control.Messages.DataAttachProofMsg;
import io.netapprox.core.control.Messages.DataPlaneSelectMsg;
import io.netapprox.core.control.Messages.DecodeFailure;
import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.HelloMsg;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.control.Messages.PingMsg;
import io.netapprox.core.control.Messages.PongMsg;
import io.netapprox.core.control.Messages.SessionSetupAckMsg;
import io.netapprox.core.control.Messages.SessionSetupMsg;
import io.netapprox.core.job.JobReport;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One control connection, client or server side: its channel's lifecycle, inbound dispatch (the
 * handshake's frames to {@link ClientHandshake} or {@link ServerHandshake}, the peer's requests to
 * {@link InboundRequests}, responses to {@link PendingRequests}), opening the session on the data
 * plane, keepalive and error handling; its own requests go out through {@link OutboundRequests}.
 * All state transitions happen on the channel's event loop; outbound requests may come from any
 * thread.
 */
final class ControlConnection extends ChannelInboundHandlerAdapter implements ControlSession {
    private static final Logger LOG = LoggerFactory.getLogger(ControlConnection.class);

    enum Role {
        CLIENT,
        SERVER
    }

    private final Role role;
    private final ControlConfig config;
    private final DataPlane dataPlane;
    private final ControlHandler handler;
    private final ControlMetrics metrics;
    private final FrameDecoder decoder;
    private final FlowControl flow;

    /** Server: the live session ids of the server (to never hand out a duplicate). Client: null. */
    private final Set<Long> liveSessionIds;

    /** Server: keys of the sessions that may attach a TCP data connection. Client: null. */
    private final DataConnectionKeys dataConnectionKeys;

    /** Client: the server's address (where the data connection goes). Server: null. */
    private final InetSocketAddress serverAddress;

    /** What the handshake learned of the peer. */
    private final PeerParameters peer = new PeerParameters();

    /** Client: the handshake. Server: null. */
    private final ClientHandshake client;

    /** Server: the handshake. Client: null. */
    private final ServerHandshake server;

    private final PendingRequests requests;
    private final OutboundRequests outbound;
    private final InboundRequests inbound;
    private final CompletableFuture<ControlSession> established = new CompletableFuture<>();
    private final CompletableFuture<Void> closeFuture = new CompletableFuture<>();

    private volatile Channel channel;
    private volatile ConnectionState state = ConnectionState.HELLO;
    private volatile boolean closed;
    private volatile Throwable closeCause;
    private volatile long sessionId;
    private volatile boolean sessionOpen;
    // Client: the data-connection key until openDataConnection takes it (guarded by this).
    private byte[] dataConnectionKey;
    // Client: DATA_PLANE_SELECT sent (guarded by this). Server: received (event loop).
    private boolean planeSelected;

    private ScheduledFuture<?> handshakeTimer; // event loop only
    private boolean warned;

    ControlConnection(
            Role role,
            ControlConfig config,
            DataPlane dataPlane,
            ControlHandler handler,
            ControlMetrics metrics,
            FrameDecoder decoder,
            FlowControl flow,
            Set<Long> liveSessionIds,
            DataConnectionKeys dataConnectionKeys,
            InetSocketAddress serverAddress) {
        this.role = role;
        this.config = config;
        this.dataPlane = dataPlane;
        this.handler = handler;
        this.metrics = metrics;
        this.decoder = decoder;
        this.flow = flow;
        this.liveSessionIds = liveSessionIds;
        this.dataConnectionKeys = dataConnectionKeys;
        this.serverAddress = serverAddress;
        this.client =
                role == Role.CLIENT ? new ClientHandshake(config, dataPlane, metrics, peer) : null;
        this.server =
                role == Role.SERVER
                        ? new ServerHandshake(
                                config,
                                dataPlane,
                                metrics,
                                peer,
                                liveSessionIds,
                                dataConnectionKeys)
                        : null;
        this.outbound = new OutboundRequests(this, config, metrics);
        this.requests = outbound.pending();
        this.inbound = new InboundRequests(this, handler, metrics, config.maxPendingRequests());
    }

    /**
     * Completes when the session is set up; fails if the handshake fails or the connection ends
     * first.
     */
    CompletableFuture<ControlSession> established() {
        return established;
    }

    // ---- channel lifecycle ----------------------------------------------------------------------

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        metrics.connectionsOpened.incrementAndGet();
        long ms = config.handshakeTimeout().toMillis();
        handshakeTimer =
                ctx.executor()
                        .schedule(
                                () -> {
                                    if (state != ConnectionState.ESTABLISHED
                                            && state != ConnectionState.CLOSING
                                            && state != ConnectionState.HANDED_OVER) {
                                        metrics.handshakeTimeouts.incrementAndGet();
                                        fatal(
                                                ErrorCode.HANDSHAKE_TIMEOUT,
                                                "handshake not completed within " + ms + " ms",
                                                0);
                                    }
                                },
                                ms,
                                TimeUnit.MILLISECONDS);
        if (role == Role.CLIENT) {
            HelloMsg hello = client.hello(requests.nextId());
            send(client.requestId(), hello);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        state = ConnectionState.CLOSING;
        metrics.connectionsClosed.incrementAndGet();
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        forgetHandshakeKeys();
        Throwable cause = closeCause;
        ControlClosedException closedEx =
                new ControlClosedException(
                        "control connection to "
                                + describePeer()
                                + " closed"
                                + (cause != null ? ": " + cause.getMessage() : ""),
                        cause);
        requests.failAll(closedEx);
        if (!established.isDone()) {
            established.completeExceptionally(cause != null ? cause : closedEx);
        }
        forgetDataConnectionKey();
        if (sessionOpen) {
            sessionOpen = false;
            if (dataConnectionKeys != null) {
                dataConnectionKeys.forget(sessionId);
            }
            try {
                dataPlane.closeSession(sessionId);
            } catch (RuntimeException e) {
                LOG.warn("data plane failed to close session {}", Long.toHexString(sessionId), e);
            }
            if (liveSessionIds != null) {
                liveSessionIds.remove(sessionId);
            }
            metrics.sessionsClosed.incrementAndGet();
            try {
                handler.onSessionClosed(this);
            } catch (RuntimeException e) {
                LOG.warn(
                        "onSessionClosed handler failed for session {}",
                        Long.toHexString(sessionId),
                        e);
            }
        }
        closeFuture.complete(null);
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent idle) {
            if (idle.state() == IdleState.READER_IDLE) {
                metrics.idleTimeouts.incrementAndGet();
                fatal(
                        ErrorCode.IDLE_TIMEOUT,
                        "nothing received for " + config.idleTimeout().toMillis() + " ms",
                        0);
            } else if (idle.state() == IdleState.WRITER_IDLE
                    && state == ConnectionState.ESTABLISHED
                    && flow.queuedBytes()
                            == 0) { // a backlog is not idle: a PING would queue behind it
                send(0, new PingMsg());
            }
            return;
        }
        if (evt instanceof FlowControl.Overflow o) {
            closeNow(
                    new ControlException(
                            ErrorCode.OVERLOADED,
                            "the peer does not read: "
                                    + o.queuedBytes()
                                    + " bytes queued, another "
                                    + o.frameBytes()
                                    + " would exceed maxQueuedBytes "
                                    + o.limit()));
            return;
        }
        if (evt instanceof ChannelInputShutdownEvent) {
            // The peer half-closed. The decoder has already reported a truncated frame, if any; we
            // are done too.
            if (state != ConnectionState.CLOSING) {
                state = ConnectionState.CLOSING;
                closeCause =
                        new ControlClosedException(
                                "the peer closed its side of the connection", null);
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (state == ConnectionState.CLOSING) {
            LOG.debug("control connection {}: further error while closing", describePeer(), cause);
            return;
        }
        if (cause instanceof IOException || isSslFailure(cause)) {
            metrics.ioErrors.incrementAndGet();
            if (closeCause == null) {
                closeCause = cause;
            }
            if (isSslFailure(cause)) {
                warnOnce(
                        "control connection {}: TLS failure: {}", describePeer(), cause.toString());
            } else {
                LOG.debug("control connection {}: I/O error", describePeer(), cause);
            }
            state = ConnectionState.CLOSING;
            ctx.close();
            return;
        }
        warnOnce("control connection {}: unexpected error: {}", describePeer(), cause.toString());
        LOG.debug("control connection {}: unexpected error", describePeer(), cause);
        fatal(ErrorCode.INTERNAL_ERROR, "internal error", 0);
    }

    private static boolean isSslFailure(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof javax.net.ssl.SSLException) {
                return true;
            }
        }
        return false;
    }

    // ---- inbound --------------------------------------------------------------------------------

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object obj) {
        try {
            if (state == ConnectionState.CLOSING) {
                return;
            }
            if (obj instanceof DecodeFailure f) {
                countDecodeFailure(f.code());
                fatal(f.code(), f.message(), 0);
                return;
            }
            if (!(obj instanceof Frame frame)) {
                fatal(ErrorCode.INTERNAL_ERROR, "unexpected pipeline object", 0);
                return;
            }
            metrics.framesReceived.incrementAndGet();
            Msg msg = frame.msg();
            if (msg instanceof ErrorMsg err) {
                onError(frame.requestId(), err);
            } else if (state != ConnectionState.ESTABLISHED) {
                onHandshake(frame); // nothing but the handshake before the session: no PONG either
            } else if (msg instanceof PingMsg) {
                send(frame.requestId(), new PongMsg());
            } else if (msg instanceof PongMsg && frame.requestId() == 0) {
                return; // answer to a keepalive PING
            } else if (msg.type().kind == MessageType.Kind.RESPONSE) {
                onResponse(frame);
            } else {
                onRequest(frame);
            }
        } finally {
            ReferenceCountUtil.release(obj);
        }
    }

    private void countDecodeFailure(ErrorCode code) {
        switch (code) {
            case VERSION_MISMATCH -> metrics.versionMismatches.incrementAndGet();
            case FRAME_TOO_LARGE -> metrics.oversizedFrames.incrementAndGet();
            case UNKNOWN_MESSAGE_TYPE -> metrics.unknownMessageTypes.incrementAndGet();
            default -> metrics.malformedFrames.incrementAndGet();
        }
    }

    private void unexpected(Frame frame) {
        metrics.unexpectedMessages.incrementAndGet();
        fatal(
                ErrorCode.UNEXPECTED_MESSAGE,
                frame.type()
                        + " is not allowed "
                        + (state == ConnectionState.ESTABLISHED
                                ? "after the session is set up"
                                : "in handshake state " + state)
                        + " on the "
                        + role
                        + " side",
                frame.requestId());
    }

    private void onError(long requestId, ErrorMsg err) {
        metrics.errorsReceived.incrementAndGet();
        ErrorCode code = err.errorCode();
        ControlException ex = new ControlException(code, printable(err.message()), true, null);
        boolean failed = requestId != 0 && requests.fail(requestId, ex);
        if (code.isFatal() || requestId == 0 || state != ConnectionState.ESTABLISHED) {
            // The peer is closing the connection (or we cannot continue a failed handshake).
            warnOnce(
                    "control connection {}: peer reported {}: {}",
                    describePeer(),
                    code,
                    printable(err.message()));
            state = ConnectionState.CLOSING;
            closeCause = ex;
            channel.close();
        } else if (!failed) {
            metrics.lateResponses.incrementAndGet();
            LOG.debug(
                    "control connection {}: ERROR for unknown request {}: {}",
                    describePeer(),
                    requestId,
                    ex);
        }
    }

    private void onResponse(Frame frame) {
        MessageType t = frame.type();
        if (t == MessageType.HELLO_ACK
                || t == MessageType.AUTH_OK
                || t == MessageType.SESSION_SETUP_ACK
                || t == MessageType.DATA_ATTACH_ACK) {
            unexpected(frame);
            return;
        }
        switch (requests.complete(frame.requestId(), t, frame.msg())) {
            case LATE ->
                    LOG.debug(
                            "control connection {}: {} for request {} which is no longer pending"
                                    + " (timed out?)",
                            describePeer(),
                            frame.type(),
                            frame.requestId());
            case MISMATCH -> unexpected(frame);
            case COMPLETED -> {}
        }
    }

    private void onHandshake(Frame frame) {
        if (role == Role.SERVER) {
            HandshakeStep step = server.onFrame(state, frame.msg(), channel.remoteAddress());
            if (step == null) {
                unexpected(frame);
            } else {
                apply(step, frame.requestId(), frame.requestId());
            }
        } else {
            // The client's handshake frames all carry its HELLO's request id; its failures are
            // reported as connection-level ERRORs (id 0).
            HandshakeStep step =
                    client.onFrame(state, frame.requestId(), frame.msg(), channel.remoteAddress());
            if (step == null) {
                unexpected(frame);
            } else {
                apply(step, client.requestId(), 0);
            }
        }
    }

    /** Does what a handshake step asks: reply, fail, open the session or hand over. */
    private void apply(HandshakeStep step, long replyId, long failId) {
        if (step instanceof HandshakeStep.Reply r) {
            state = r.next();
            send(replyId, r.msg());
        } else if (step instanceof HandshakeStep.Fail f) {
            fatal(f.code(), f.message(), failId, f.localDetail());
        } else if (step instanceof HandshakeStep.Session s) {
            if (role == Role.SERVER) {
                serverOpenSession(replyId, s);
            } else {
                clientOpenSession(s);
            }
        } else if (step instanceof HandshakeStep.Attach a) {
            handOverDataConnection(replyId, a.sessionId());
        }
    }

    // ---- the session on the data plane ----------------------------------------------------------

    private void serverOpenSession(long requestId, HandshakeStep.Session s) {
        long id = s.sessionId();
        byte[] key = s.sessionKey();
        try {
            dataPlane.openSession(id, key.clone(), peer.dataAddress, false, peer.agreedPlanes);
        } catch (Exception e) {
            server.sessionRefused(id);
            Arrays.fill(key, (byte) 0);
            metrics.sessionFailures.incrementAndGet();
            LOG.debug("data plane refused session for {}", describePeer(), e);
            fatal(
                    ErrorCode.SESSION_FAILED,
                    "the server's data plane could not open the session",
                    requestId,
                    e);
            return;
        }
        sessionId = id;
        sessionOpen = true;
        metrics.sessionsOpened.incrementAndGet();
        // The ACK goes out before the handler runs, so requests the handler sends follow it on the
        // wire.
        send(requestId, new SessionSetupAckMsg(id, s.confirm()));
        Arrays.fill(key, (byte) 0);
        becomeEstablished();
    }

    private void clientOpenSession(HandshakeStep.Session s) {
        byte[] key = s.sessionKey();
        if (s.dataConnectionKey() != null) {
            synchronized (this) {
                dataConnectionKey = s.dataConnectionKey();
            }
        }
        try {
            dataPlane.openSession(s.sessionId(), key, peer.dataAddress, true, peer.agreedPlanes);
        } catch (Exception e) {
            forgetDataConnectionKey();
            metrics.sessionFailures.incrementAndGet();
            LOG.debug("data plane refused session {}", Long.toHexString(s.sessionId()), e);
            fatal(
                    ErrorCode.SESSION_FAILED,
                    "the client's data plane could not open the session",
                    0,
                    e);
            return;
        } finally {
            Arrays.fill(key, (byte) 0);
        }
        sessionId = s.sessionId();
        sessionOpen = true;
        metrics.sessionsOpened.incrementAndGet();
        becomeEstablished();
    }

    /** Server: the data connection of session {@code attachSessionId} goes to the data plane. */
    private void handOverDataConnection(long requestId, long attachSessionId) {
        Channel ch = channel;
        ChannelPipeline pipeline = ch.pipeline();
        try {
            dataPlane.attachDataConnection(attachSessionId, ch);
        } catch (Exception e) {
            LOG.debug("data plane refused the data connection of {}", describePeer(), e);
            apply(server.refuseDataConnection("the data plane refused it"), requestId, requestId);
            return;
        }
        state = ConnectionState.HANDED_OVER;
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        metrics.dataConnectionsAttached.incrementAndGet();
        metrics.connectionsClosed.incrementAndGet(); // no longer a control connection
        // The decoder goes last: removing it hands what it holds after the proof to the data
        // plane's first handler.
        pipeline.remove("idle");
        pipeline.remove("flow");
        pipeline.remove(this);
        pipeline.remove("frameDecoder");
        closeFuture.complete(null);
    }

    private void forgetHandshakeKeys() {
        if (client != null) {
            client.forgetKeys();
        }
        if (server != null) {
            server.forgetKeys();
        }
    }

    private synchronized void forgetDataConnectionKey() {
        if (dataConnectionKey != null) {
            Arrays.fill(dataConnectionKey, (byte) 0);
            dataConnectionKey = null;
        }
    }

    private void becomeEstablished() {
        state = ConnectionState.ESTABLISHED;
        decoder.setMaxBodyLength(config.maxFrameLength());
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        try {
            handler.onSessionSetup(this);
        } catch (RuntimeException e) {
            metrics.sessionFailures.incrementAndGet();
            String why =
                    e instanceof ControlException ce
                            ? ce.getMessage()
                            : "refused by the application";
            LOG.debug("onSessionSetup failed for {}", describePeer(), e);
            fatal(ErrorCode.SESSION_FAILED, "session refused: " + why, 0);
            return;
        }
        established.complete(this);
    }

    // ---- inbound requests (established) ---------------------------------------------------------

    private void onRequest(Frame frame) {
        long id = frame.requestId();
        Msg msg = frame.msg();
        if (msg instanceof HelloMsg
                || msg instanceof AuthResponseMsg
                || msg instanceof SessionSetupMsg
                || msg instanceof DataAttachMsg
                || msg instanceof DataAttachProofMsg) {
            unexpected(frame);
            return;
        }
        if (msg instanceof DataPlaneSelectMsg sel
                && (role != Role.SERVER
                        || planeSelected
                        || !peer.agreedPlanes.contains(sel.plane()))) {
            unexpected(frame); // only the client chooses, once, among the agreed planes
            return;
        }
        inbound.dispatch(frame);
    }

    // ---- what the request handling sees of the connection ------------------------------------

    Channel channel() {
        return channel;
    }

    ConnectionState state() {
        return state;
    }

    /** The channel is inactive (set on the event loop, read from any thread). */
    boolean isClosed() {
        return closed;
    }

    Throwable closeCause() {
        return closeCause;
    }

    /** The largest body the peer accepts. */
    int peerMaxFrame() {
        return peer.maxFrame;
    }

    /** Server: the client's DATA_PLANE_SELECT was dispatched (event loop). */
    void peerSelectedPlane() {
        planeSelected = true;
    }

    // ---- outbound -------------------------------------------------------------------------------

    void send(long requestId, Msg msg) {
        Channel ch = channel;
        ByteBuf buf = ch.alloc().buffer();
        FrameEncoder.encode(new Frame(requestId, msg), buf);
        metrics.framesSent.incrementAndGet();
        ch.writeAndFlush(buf, ch.voidPromise());
    }

    /** Sends unless the body exceeds the peer's limit; returns false (nothing sent) if it does. */
    boolean sendChecked(long requestId, Msg msg) {
        Channel ch = channel;
        ByteBuf buf = ch.alloc().buffer();
        FrameEncoder.encode(new Frame(requestId, msg), buf);
        if (buf.readableBytes() - WireFormat.HEADER_LENGTH > peer.maxFrame) {
            buf.release();
            return false;
        }
        metrics.framesSent.incrementAndGet();
        ch.writeAndFlush(buf, ch.voidPromise());
        return true;
    }

    /** Sends an ERROR and closes; logs once per connection. */
    private void fatal(ErrorCode code, String message, long requestId) {
        fatal(code, message, requestId, null);
    }

    /**
     * As above; {@code localDetail} (e.g. an exception) is logged here but never sent to the peer.
     */
    private void fatal(ErrorCode code, String message, long requestId, Object localDetail) {
        if (state == ConnectionState.CLOSING) {
            return;
        }
        state = ConnectionState.CLOSING;
        ControlException ex =
                new ControlException(
                        code, message + (localDetail != null ? " (" + localDetail + ")" : ""));
        closeCause = ex;
        warnOnce(
                "control connection {}: {}: {}; closing",
                describePeer(),
                code,
                message + (localDetail != null ? " (" + localDetail + ")" : ""));
        Channel ch = channel;
        flow.stopReading(ch);
        if (!ch.isActive() || flow.queuedBytes() > 0) {
            ch.close(); // a backlog: the peer is not reading, the ERROR would wait behind it
            // and the close with it
            return;
        }
        ByteBuf buf = ch.alloc().buffer();
        int peerVersion = decoder.mismatchedVersion();
        FrameEncoder.encode(
                new Frame(requestId, new ErrorMsg(code.code(), message)),
                buf,
                code == ErrorCode.VERSION_MISMATCH && peerVersion > 0
                        ? peerVersion
                        : WireFormat.VERSION);
        metrics.framesSent.incrementAndGet();
        ch.writeAndFlush(buf, ch.voidPromise());
        ch.close(); // at once: if the socket did not take the ERROR now, the peer is not
        // reading it anyway
    }

    /**
     * Closes without telling the peer (it does not read); fails pending futures with {@code cause}.
     */
    private void closeNow(ControlException cause) {
        if (state == ConnectionState.CLOSING) {
            return;
        }
        state = ConnectionState.CLOSING;
        closeCause = cause;
        warnOnce("control connection {}: {}; closing", describePeer(), cause.getMessage());
        flow.stopReading(channel);
        channel.close();
    }

    void warnOnce(String format, Object... args) {
        if (!warned) {
            warned = true;
            metrics.warningsLogged.incrementAndGet();
            LOG.warn(format, args);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug(format, args);
        }
    }

    String describePeer() {
        Channel ch = channel;
        return (ch != null ? String.valueOf(ch.remoteAddress()) : "?")
                + " ["
                + printable(peer.endpointId)
                + "]";
    }

    /**
     * A peer's string as it may appear in our logs and exception messages: control characters
     * (newlines included) become '?', so a hostile peer cannot forge log lines.
     */
    static String printable(String peerText) {
        StringBuilder b = null;
        for (int i = 0; i < peerText.length(); i++) {
            char c = peerText.charAt(i);
            int type = Character.getType(c);
            if (Character.isISOControl(c)
                    || type == Character.LINE_SEPARATOR
                    || type == Character.PARAGRAPH_SEPARATOR) {
                if (b == null) {
                    b = new StringBuilder(peerText);
                }
                b.setCharAt(i, '?');
            }
        }
        return b == null ? peerText : b.toString();
    }

    // ---- ControlSession -------------------------------------------------------------------------

    @Override
    public long sessionId() {
        return sessionId;
    }

    @Override
    public String localEndpointId() {
        return config.endpointId();
    }

    @Override
    public String peerEndpointId() {
        return peer.endpointId;
    }

    @Override
    public InetSocketAddress peerDataAddress() {
        return peer.dataAddress;
    }

    @Override
    public SocketAddress remoteAddress() {
        Channel ch = channel;
        return ch == null ? null : ch.remoteAddress();
    }

    @Override
    public int protocolVersion() {
        return peer.version;
    }

    @Override
    public Set<DataPlaneKind> dataPlanes() {
        Set<DataPlaneKind> planes = peer.agreedPlanes;
        return EnumSet.copyOf(planes.isEmpty() ? EnumSet.of(DataPlaneKind.ATP) : planes);
    }

    @Override
    public CompletableFuture<Void> selectDataPlane(DataPlaneKind plane, String reason) {
        if (plane == null) {
            return CompletableFuture.failedFuture(new NullPointerException("plane"));
        }
        if (role != Role.CLIENT) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException("only the client side selects the data plane"));
        }
        if (!peer.agreedPlanes.contains(plane)) {
            return CompletableFuture.failedFuture(
                    new IllegalArgumentException(
                            plane.label()
                                    + " is not among the agreed data planes ("
                                    + DataPlaneKind.describe(peer.agreedPlanes)
                                    + ")"));
        }
        synchronized (this) {
            if (planeSelected) {
                return CompletableFuture.failedFuture(
                        new IllegalStateException("the data plane was already selected"));
            }
            planeSelected = true;
        }
        return outbound.request(
                new DataPlaneSelectMsg(plane, reason == null ? "" : reason),
                config.requestTimeout(),
                m -> null);
    }

    @Override
    public CompletableFuture<Channel> openDataConnection(Consumer<Channel> install) {
        if (install == null) {
            return CompletableFuture.failedFuture(new NullPointerException("install"));
        }
        if (role != Role.CLIENT) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException("only the client side opens the data connection"));
        }
        if (!peer.agreedPlanes.contains(DataPlaneKind.TCP)) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException(
                            "TCP is not among the agreed data planes ("
                                    + DataPlaneKind.describe(peer.agreedPlanes)
                                    + ")"));
        }
        if (!isActive()) {
            return CompletableFuture.failedFuture(
                    new ControlClosedException(
                            "control connection to " + describePeer() + " is closed", closeCause));
        }
        byte[] key;
        synchronized (this) {
            key = dataConnectionKey;
            dataConnectionKey = null;
        }
        if (key == null) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException(
                            "session "
                                    + Long.toHexString(sessionId)
                                    + " already opened its data connection (one per session)"));
        }
        return DataConnectionClient.open(
                channel.eventLoop(), config, serverAddress, sessionId, key, install, metrics);
    }

    @Override
    public boolean isActive() {
        return !closed && state == ConnectionState.ESTABLISHED;
    }

    @Override
    public CompletableFuture<JobDecision> announceJob(JobAnnouncement job) {
        return outbound.announceJob(job);
    }

    @Override
    public CompletableFuture<JobDecision> announceJob(JobAnnouncement job, Duration timeout) {
        return outbound.announceJob(job, timeout);
    }

    @Override
    public CompletableFuture<byte[]> requestData(int jobId, byte[] request) {
        return outbound.requestData(jobId, request);
    }

    @Override
    public CompletableFuture<byte[]> requestData(int jobId, byte[] request, Duration timeout) {
        return outbound.requestData(jobId, request, timeout);
    }

    @Override
    public CompletableFuture<Void> updateMsr(MsrUpdate update) {
        return outbound.updateMsr(update);
    }

    @Override
    public CompletableFuture<Void> updateMsr(MsrUpdate update, Duration timeout) {
        return outbound.updateMsr(update, timeout);
    }

    @Override
    public CompletableFuture<Void> sendReport(JobReport report) {
        return outbound.sendReport(report);
    }

    @Override
    public CompletableFuture<Void> sendReport(JobReport report, Duration timeout) {
        return outbound.sendReport(report, timeout);
    }

    @Override
    public CompletableFuture<Duration> ping() {
        return outbound.ping();
    }

    @Override
    public CompletableFuture<Void> closeFuture() {
        return closeFuture;
    }

    @Override
    public void close() {
        Channel ch = channel;
        if (ch == null) {
            return;
        }
        if (closeCause == null) {
            closeCause = new ControlClosedException("closed locally", null);
        }
        ch.close();
        if (!ch.eventLoop().inEventLoop()) {
            try { // channelInactive (pending requests failed, data-plane session closed) has run
                // when this returns
                closeFuture.get(config.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException
                    | java.util.concurrent.TimeoutException e) {
                LOG.debug("control connection {} did not close in time", describePeer(), e);
            }
        }
    }

    @Override
    public String toString() {
        return "ControlSession{"
                + role
                + ", peer="
                + describePeer()
                + ", session="
                + Long.toHexString(sessionId)
                + ", state="
                + state
                + "}";
    }
}
