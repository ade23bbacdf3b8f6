/**
 * The transport: the ATP engine ({@code io.netapprox.core.engine}) and the control plane ({@code
 * io.netapprox.core.control}) glued into one facade per process. {@link
 * io.netapprox.core.transport.ApproxTransport} connects to peers ({@link
 * io.netapprox.core.transport.ApproxPeer}: one control connection and its data-plane session),
 * requests data ({@link io.netapprox.core.transport.IncomingTransfer}) and serves it ({@link
 * io.netapprox.core.transport.OutgoingTransfer}, in the order of a {@link
 * io.netapprox.core.transport.SendScheduler}); both sides end with the same {@link
 * io.netapprox.core.transport.TransferReport}. {@link io.netapprox.core.transport.AtpDataPlane}
 * adapts an endpoint to the control plane's {@code DataPlane}. Engine, control plane and transport
 * share the job model of {@code io.netapprox.core.job}. See docs/java-api.md, "Putting it together:
 * ApproxTransport".
 */
package io.netapprox.core.transport;
