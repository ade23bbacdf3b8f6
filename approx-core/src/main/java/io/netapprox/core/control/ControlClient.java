package io.netapprox.core.control;

import io.netapprox.core.job.JobReport;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The client side of one control connection with its data-plane session, obtained from {@link
 * ControlClientFactory#connect}. Thread-safe. {@link #close()} closes the connection and the
 * data-plane session, and fails pending requests with {@link ControlClosedException}; so does a
 * peer disconnect.
 */
public final class ControlClient implements ControlSession {
    private final ControlConnection connection;

    ControlClient(ControlConnection connection) {
        this.connection = connection;
    }

    @Override
    public long sessionId() {
        return connection.sessionId();
    }

    @Override
    public String localEndpointId() {
        return connection.localEndpointId();
    }

    @Override
    public String peerEndpointId() {
        return connection.peerEndpointId();
    }

    @Override
    public InetSocketAddress peerDataAddress() {
        return connection.peerDataAddress();
    }

    @Override
    public SocketAddress remoteAddress() {
        return connection.remoteAddress();
    }

    @Override
    public int protocolVersion() {
        return connection.protocolVersion();
    }

    @Override
    public Set<DataPlaneKind> dataPlanes() {
        return connection.dataPlanes();
    }

    @Override
    public CompletableFuture<Void> selectDataPlane(DataPlaneKind plane, String reason) {
        return connection.selectDataPlane(plane, reason);
    }

    @Override
    public CompletableFuture<Channel> openDataConnection(Consumer<Channel> install) {
        return connection.openDataConnection(install);
    }

    @Override
    public boolean isActive() {
        return connection.isActive();
    }

    @Override
    public CompletableFuture<JobDecision> announceJob(JobAnnouncement job) {
        return connection.announceJob(job);
    }

    @Override
    public CompletableFuture<JobDecision> announceJob(JobAnnouncement job, Duration timeout) {
        return connection.announceJob(job, timeout);
    }

    @Override
    public CompletableFuture<byte[]> requestData(int jobId, byte[] request) {
        return connection.requestData(jobId, request);
    }

    @Override
    public CompletableFuture<byte[]> requestData(int jobId, byte[] request, Duration timeout) {
        return connection.requestData(jobId, request, timeout);
    }

    @Override
    public CompletableFuture<Void> updateMsr(MsrUpdate update) {
        return connection.updateMsr(update);
    }

    @Override
    public CompletableFuture<Void> updateMsr(MsrUpdate update, Duration timeout) {
        return connection.updateMsr(update, timeout);
    }

    @Override
    public CompletableFuture<Void> sendReport(JobReport report) {
        return connection.sendReport(report);
    }

    @Override
    public CompletableFuture<Void> sendReport(JobReport report, Duration timeout) {
        return connection.sendReport(report, timeout);
    }

    @Override
    public CompletableFuture<Duration> ping() {
        return connection.ping();
    }

    @Override
    public CompletableFuture<Void> closeFuture() {
        return connection.closeFuture();
    }

    @Override
    public void close() {
        connection.close();
    }

    @Override
    public String toString() {
        return connection.toString();
    }
}
