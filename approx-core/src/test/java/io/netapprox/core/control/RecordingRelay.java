package io.netapprox.core.control;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP relay between a client and a server that records every byte of every connection in both
 * directions: the passive observer of the control connection. Blocking sockets, two threads per
 * connection; tests only.
 */
final class RecordingRelay implements AutoCloseable {
    /** What one relayed connection carried, each direction in order. */
    static final class Capture {
        final ByteArrayOutputStream toServer = new ByteArrayOutputStream();
        final ByteArrayOutputStream toClient = new ByteArrayOutputStream();

        synchronized byte[] clientBytes() {
            return toServer.toByteArray();
        }

        synchronized byte[] serverBytes() {
            return toClient.toByteArray();
        }
    }

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Capture> captures = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final Thread acceptor;

    RecordingRelay(InetSocketAddress target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, TestSupport.LOOPBACK);
        this.acceptor = new Thread(this::acceptLoop, "recording-relay");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    InetSocketAddress address() {
        return new InetSocketAddress(TestSupport.LOOPBACK, listener.getLocalPort());
    }

    synchronized List<Capture> captures() {
        return List.copyOf(captures);
    }

    private void acceptLoop() {
        try {
            while (true) {
                Socket client = listener.accept();
                Socket server = new Socket(target.getAddress(), target.getPort());
                Capture c = new Capture();
                synchronized (this) {
                    captures.add(c);
                    sockets.add(client);
                    sockets.add(server);
                }
                pump(client, server, c, true);
                pump(server, client, c, false);
            }
        } catch (IOException closed) {
            // the relay was closed
        }
    }

    private static void pump(Socket from, Socket to, Capture c, boolean toServer) {
        Thread t =
                new Thread(
                        () -> {
                            byte[] buf = new byte[8192];
                            try (InputStream in = from.getInputStream()) {
                                OutputStream out = to.getOutputStream();
                                int n;
                                while ((n = in.read(buf)) > 0) {
                                    synchronized (c) {
                                        (toServer ? c.toServer : c.toClient).write(buf, 0, n);
                                    }
                                    out.write(buf, 0, n);
                                }
                                to.shutdownOutput();
                            } catch (IOException e) {
                                // one side went away
                            }
                        },
                        "recording-relay-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public synchronized void close() throws IOException {
        listener.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
