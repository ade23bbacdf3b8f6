/**
 * The NetApprox control plane: a small versioned binary protocol over TCP (Netty) for what must be
 * reliable - session setup with data-plane ids and keys, optional shared-secret authentication, job
 * announce / accept, data requests, MSR updates, final per-group reports and errors. Start with
 * {@link io.netapprox.core.control.ControlServer} and {@link
 * io.netapprox.core.control.ControlClientFactory}; the wire format, authentication protocol,
 * bounds, timeouts and error codes are specified in docs/control-plane.md.
 */
package io.netapprox.core.control;
