/**
 * The one job model, shared unchanged by the engine binding, the control plane and the transport:
 * what a job is ({@link io.netapprox.core.job.GroupSpec}, {@link io.netapprox.core.job.JobSpec}),
 * what happened to it ({@link io.netapprox.core.job.GroupReport}, {@link
 * io.netapprox.core.job.JobReport}, with message ids as {@link io.netapprox.core.job.IdSet}s and
 * the engine's {@link io.netapprox.core.job.AtpStatus}), and the one formula for a group's target,
 * {@code ceil(MSR * N)} ({@link io.netapprox.core.job.Target}). Plain Java: no I/O, no native code,
 * no wire format (the control plane's codec owns the encodings). See docs/architecture.md.
 */
package io.netapprox.core.job;
