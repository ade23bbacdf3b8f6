/**
 * The Java face of the native ATP engine (libnetapprox): {@link
 * io.netapprox.core.engine.AtpEndpoint}, {@link io.netapprox.core.engine.AtpSession}, {@link
 * io.netapprox.core.engine.OutgoingJob} and the receiving side ({@link
 * io.netapprox.core.engine.IncomingJobListener}, {@link
 * io.netapprox.core.engine.AtpChannelForwarder}, {@link
 * io.netapprox.core.engine.AtpMessageHandler}). See docs/java-api.md.
 */
package io.netapprox.core.engine;
