package io.netapprox.core.transport;

/**
 * Counters of a transport's data planes ({@link ApproxTransport#dataPlaneMetrics()}); the values
 * only grow, except {@code atpAvailable}.
 *
 * @param atpAvailable this transport runs the ATP engine (false with {@code dataPlane=tcp}, and
 *     with {@code auto} when the native library cannot load)
 * @param nativeFallbacks 1 when {@code dataPlane=auto} fell back to TCP for the whole transport
 *     because the native library cannot load here (see {@link #atpUnavailableReason()}), else 0
 * @param atpUnavailableReason why the engine cannot run here, or null
 * @param udpProbeFallbacks peers this side connected to that went to TCP because they were not
 *     reachable over UDP within {@link ApproxTransportConfig#udpProbeTimeout()}
 * @param atpPeers peers (either side) whose session chose ATP
 * @param tcpPeers peers (either side) whose session chose TCP
 * @param tcpMessagesSent messages the TCP data plane handed to its connections
 * @param tcpBytesSent their payload bytes
 * @param tcpMessagesReceived messages it delivered to listeners
 * @param tcpBytesReceived their payload bytes
 * @param tcpMessagesDiscarded messages that arrived for a job no longer receiving (in flight when
 *     the receiver completed it, or cancelled): never delivered, not in any report
 * @param tcpSendStalls sends that waited for the connection to drain (backpressure)
 * @param tcpReadPauses times a connection stopped reading because the application held more than
 *     the receive buffer
 */
public record DataPlaneMetrics(
        boolean atpAvailable,
        long nativeFallbacks,
        String atpUnavailableReason,
        long udpProbeFallbacks,
        long atpPeers,
        long tcpPeers,
        long tcpMessagesSent,
        long tcpBytesSent,
        long tcpMessagesReceived,
        long tcpBytesReceived,
        long tcpMessagesDiscarded,
        long tcpSendStalls,
        long tcpReadPauses) {}
