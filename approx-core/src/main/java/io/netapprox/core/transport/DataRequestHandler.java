package io.netapprox.core.transport;

/**
 * Serves DATA_REQUESTs ("send me data X as job J") on the serving side of an {@link
 * ApproxTransport}.
 *
 * <p>{@link #serve} runs on one of the transport's serving threads ("netapprox-serve-*", at most
 * {@link ApproxTransportConfig#serveThreads()} at once), so it may block - e.g. in {@code
 * OutgoingJob.send}, which applies the receiver's backpressure. Typical implementation:
 *
 * <pre>{@code
 * request -> {
 *     Partition p = lookup(request.payload());               // integration-defined "X"
 *     OutgoingJob job = request.startJob(p.jobSpec());        // JOB_ANNOUNCE, then the ATP job with id J
 *     for (...) { if (job.send(g, i, buf) == SendResult.NOT_NEEDED) break; }
 * }
 * }</pre>
 *
 * To refuse, throw a {@code ControlException(ErrorCode.REQUEST_REJECTED, message)} before starting
 * the job: the requester's transfer fails with {@link TransportException.Reason#REJECTED} and that
 * message. Any other exception before the job starts is reported to the requester as HANDLER_ERROR
 * without details. An exception after the job started cancels the job. Returning without starting a
 * job rejects the request.
 */
@FunctionalInterface
public interface DataRequestHandler {
    void serve(OutgoingTransfer request) throws Exception;
}
