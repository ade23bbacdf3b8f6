package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.addressOf;
import static io.netapprox.core.control.TestSupport.await;
import static io.netapprox.core.control.TestSupport.clientConfig;
import static io.netapprox.core.control.TestSupport.eventually;
import static io.netapprox.core.control.TestSupport.failure;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.ErrorMsg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Version 4's data-plane negotiation and the TCP data connection: HELLO / HELLO_ACK agree on the
 * planes both ends run, DATA_PLANE_SELECT picks one, and a session's data connection proves with
 * the session's data-connection key (derived in the handshake, never sent) that it belongs to the
 * session before the data plane gets it.
 */
class DataConnectionTest {

    /** A data plane that runs the given planes and collects what an attached connection reads. */
    static final class TcpPlane implements DataPlane {
        final Set<DataPlaneKind> planes;
        final List<Long> opened = new CopyOnWriteArrayList<>();
        final List<Set<DataPlaneKind>> agreed = new CopyOnWriteArrayList<>();
        final CompletableFuture<Channel> attached = new CompletableFuture<>();
        final ByteArrayOutputStream received = new ByteArrayOutputStream();

        TcpPlane(Set<DataPlaneKind> planes) {
            this.planes = planes;
        }

        @Override
        public Set<DataPlaneKind> offeredPlanes() {
            return planes;
        }

        @Override
        public int localUdpPort() {
            return 9;
        }

        @Override
        public InetAddress udpAddress() {
            return TestSupport.LOOPBACK;
        }

        @Override
        public void openSession(long id, byte[] key, InetSocketAddress peer, boolean initiator) {
            throw new AssertionError("the plane-aware openSession is used");
        }

        @Override
        public void openSession(
                long id,
                byte[] key,
                InetSocketAddress peer,
                boolean initiator,
                Set<DataPlaneKind> agreedPlanes) {
            opened.add(id);
            agreed.add(agreedPlanes);
        }

        @Override
        public void attachDataConnection(long sessionId, Channel channel) {
            install(channel);
            attached.complete(channel);
        }

        /** Adds the collector at the end of the pipeline (what a data plane does). */
        void install(Channel channel) {
            channel.pipeline()
                    .addLast(
                            new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ByteBuf b = (ByteBuf) msg;
                                    synchronized (received) {
                                        byte[] bytes = new byte[b.readableBytes()];
                                        b.readBytes(bytes);
                                        received.writeBytes(bytes);
                                    }
                                    b.release();
                                }
                            });
        }

        byte[] received() {
            synchronized (received) {
                return received.toByteArray();
            }
        }

        @Override
        public void closeSession(long sessionId) {}
    }

    static final class SelectRecorder implements ControlHandler {
        final List<String> selected = new CopyOnWriteArrayList<>();

        @Override
        public java.util.concurrent.CompletionStage<Void> onDataPlaneSelect(
                ControlSession session, DataPlaneKind plane, String reason) {
            selected.add(plane + ":" + reason);
            return CompletableFuture.completedFuture(null);
        }
    }

    private static final Set<DataPlaneKind> BOTH = EnumSet.allOf(DataPlaneKind.class);

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theDataConnectionAttachesToItsSessionAndCarriesBytesBothWays() throws Exception {
        TcpPlane serverDp = new TcpPlane(BOTH);
        TcpPlane clientDp = new TcpPlane(EnumSet.of(DataPlaneKind.TCP));
        SelectRecorder h = new SelectRecorder();
        try (ControlServer server = ControlServer.start(serverConfig().build(), serverDp, h);
                ControlClientFactory clients =
                        new ControlClientFactory(clientConfig().build(), clientDp, null)) {
            ControlClient c = await(clients.connect(addressOf(server)));
            assertEquals(EnumSet.of(DataPlaneKind.TCP), c.dataPlanes(), "the intersection");
            assertEquals(List.of(EnumSet.of(DataPlaneKind.TCP)), serverDp.agreed);
            assertEquals(List.of(EnumSet.of(DataPlaneKind.TCP)), clientDp.agreed);
            assertInstanceOf(
                    IllegalArgumentException.class,
                    failure(c.selectDataPlane(DataPlaneKind.ATP, "")),
                    "ATP is not agreed");

            Channel ch = await(c.openDataConnection(clientDp::install));
            Channel srv = serverDp.attached.get(30, TimeUnit.SECONDS);
            assertEquals(1, server.metrics().dataConnectionsAttached());
            assertEquals(1, clients.metrics().dataConnectionsAttached());
            // The attach's handlers are gone: raw bytes reach the data plane's handler each way.
            byte[] up = "client to server, not a control frame".getBytes();
            byte[] down = "server to client".getBytes();
            ch.writeAndFlush(Unpooled.wrappedBuffer(up));
            srv.writeAndFlush(Unpooled.wrappedBuffer(down));
            eventually(
                    "bytes both ways",
                    () ->
                            serverDp.received().length == up.length
                                    && clientDp.received().length == down.length);
            assertArrayEquals(up, serverDp.received());
            assertArrayEquals(down, clientDp.received());
            assertTrue(c.isActive(), "the control connection is unaffected");

            // One data connection per session.
            assertInstanceOf(
                    IllegalStateException.class, failure(c.openDataConnection(clientDp::install)));
            // The choice, once, with its reason.
            await(c.selectDataPlane(DataPlaneKind.TCP, "this endpoint runs TCP only"));
            assertEquals(List.of("TCP:this endpoint runs TCP only"), h.selected);
            assertInstanceOf(
                    IllegalStateException.class, failure(c.selectDataPlane(DataPlaneKind.TCP, "")));
            c.close();
            ch.close();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aDataConnectionWithoutTheSessionsKeyIsRefusedAndLocksNobodyOut() throws Exception {
        TcpPlane serverDp = new TcpPlane(BOTH);
        TcpPlane clientDp = new TcpPlane(BOTH);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), serverDp, new ControlHandler() {});
                ControlClientFactory clients =
                        new ControlClientFactory(clientConfig().build(), clientDp, null)) {
            ControlClient c = await(clients.connect(addressOf(server)));
            assertEquals(BOTH, c.dataPlanes());
            long sid = c.sessionId(); // an observer of the control connection sees it

            // Unknown session: the same refusal as a wrong key (whether an id is live is not told).
            ErrorMsg unknown = rawAttach(server, sid ^ 1, new byte[32]);
            assertEquals(ErrorCode.AUTH_FAILED.code(), unknown.code());
            assertTrue(unknown.message().contains("data connection refused"), unknown.message());
            // The right session, a proof made without its key.
            ErrorMsg forged = rawAttach(server, sid, new byte[32]);
            assertEquals(ErrorCode.AUTH_FAILED.code(), forged.code());
            assertTrue(forged.message().contains("proof does not match"), forged.message());
            assertEquals(2, server.metrics().dataConnectionsRefused());
            assertTrue(!serverDp.attached.isDone(), "nothing reached the data plane");

            // The genuine connection still attaches: the attempts took nothing.
            await(c.openDataConnection(clientDp::install));
            serverDp.attached.get(30, TimeUnit.SECONDS);
            // ... and after it, nobody else can, even with the session id.
            ErrorMsg late = rawAttach(server, sid, new byte[32]);
            assertEquals(ErrorCode.AUTH_FAILED.code(), late.code());
            assertEquals(3, server.metrics().dataConnectionsRefused());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void endpointsWithoutACommonDataPlaneFailTheSessionNamingThePlanes() throws Exception {
        TcpPlane serverDp = new TcpPlane(EnumSet.of(DataPlaneKind.ATP));
        TcpPlane clientDp = new TcpPlane(EnumSet.of(DataPlaneKind.TCP));
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), serverDp, new ControlHandler() {});
                ControlClientFactory clients =
                        new ControlClientFactory(clientConfig().build(), clientDp, null)) {
            ControlException e =
                    assertInstanceOf(
                            ControlException.class, failure(clients.connect(addressOf(server))));
            assertEquals(ErrorCode.SESSION_FAILED, e.code());
            assertTrue(
                    e.getMessage()
                            .contains(
                                    "no common data plane: the client runs tcp, this"
                                            + " endpoint atp"),
                    e.getMessage());
            assertTrue(serverDp.opened.isEmpty() && clientDp.opened.isEmpty());
        }
    }

    /**
     * A raw client that names session {@code sid}, reads the server's DATA_ATTACH_ACK and answers
     * {@code proof}; returns the ERROR it gets (or the one refusing the attach at once).
     */
    private static ErrorMsg rawAttach(ControlServer server, long sid, byte[] proof)
            throws Exception {
        try (Socket s = new Socket(TestSupport.LOOPBACK, server.port())) {
            s.setSoTimeout(TestSupport.LIVENESS_MS);
            s.getOutputStream()
                    .write(TestSupport.encode(1, new Messages.DataAttachMsg(sid, new byte[32])));
            Messages.Frame f = TestSupport.readFrame(s);
            if (f.msg() instanceof ErrorMsg e) {
                return e;
            }
            assertInstanceOf(Messages.DataAttachAckMsg.class, f.msg());
            s.getOutputStream()
                    .write(TestSupport.encode(1, new Messages.DataAttachProofMsg(proof)));
            return TestSupport.readError(s);
        }
    }
}
