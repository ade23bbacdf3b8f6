/**
 * The glue between the ATP engine ({@code io.netapprox.core.engine}) and the control plane ({@code
 * io.netapprox.core.control}): {@link io.netapprox.core.transport.AtpDataPlane} adapts an endpoint
 * to the control plane's {@code DataPlane}; {@link io.netapprox.core.transport.ApproxTransport} is
 * the one-per-process facade integrations use (connect to peers, request data, serve data requests,
 * MSR updates, final reports agreed by both sides); {@link io.netapprox.core.transport.Converters}
 * maps between the two packages' same-named types. See docs/java-api.md, "Putting it together:
 * ApproxTransport".
 */
package io.netapprox.core.transport;
