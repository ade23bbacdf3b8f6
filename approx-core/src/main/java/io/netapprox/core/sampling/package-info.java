/**
 * Sampling mathematics for NetApprox: translating a relative error bound {@code e_max} into a
 * minimal sampling rate (MSR) per group, and turning the messages that ATP delivered into estimates
 * with confidence intervals.
 *
 * <h2>Unit of sampling</h2>
 *
 * ATP delivers or loses whole <em>messages</em>; a message carries one or more records. The
 * sampling unit is therefore the message (a <em>cluster</em> of records). Every variance in this
 * package is the variance of a per-message quantity: the per-message total of the aggregated value
 * ({@code y_i}) and the per-message record count ({@code m_i}). When each message carries exactly
 * one record the two views coincide with ordinary record-level sampling.
 *
 * <h2>Sampling design assumed</h2>
 *
 * Within a group (stratum) {@code g} of {@code N_g} messages, the delivered messages are treated as
 * a simple random sample without replacement of size {@code n_g}; groups are sampled independently
 * (stratified sampling). Estimators use the Horvitz-Thompson inclusion weights {@code N_g / n_g}
 * and the finite population correction {@code 1 - n_g / N_g}. This assumption holds only if which
 * messages are lost is independent of their content; see {@code docs/sampling.md}.
 *
 * <h2>Main entry points</h2>
 *
 * <ul>
 *   <li>{@link io.netapprox.core.sampling.MsrPlanner}: e_max to MSR (heuristic and sample-size
 *       formula);
 *   <li>{@link io.netapprox.core.sampling.SharePlanner}: e_max to per-share sample sizes for a
 *       group held by several senders (Neyman allocation with finite-population corrections; means,
 *       quantiles, top-k counts), from {@link io.netapprox.core.sampling.ShareMoments} and {@link
 *       io.netapprox.core.sampling.ValueSketch};
 *   <li>{@link io.netapprox.core.sampling.OnlineMsrUpdater}: refines MSRs as data arrives;
 *   <li>{@link io.netapprox.core.sampling.StratumAccumulator} and {@link
 *       io.netapprox.core.sampling.StratifiedEstimator}: mean, sum, count, proportion;
 *   <li>{@link io.netapprox.core.sampling.QuantileAccumulator}: quantiles with distribution-free
 *       intervals;
 *   <li>{@link io.netapprox.core.sampling.TopKAccumulator}: top-k keys with per-key count
 *       intervals;
 *   <li>{@link io.netapprox.core.sampling.StratifiedQuantile} and {@link
 *       io.netapprox.core.sampling.StratifiedTopK}: the same over shares sampled at different
 *       fractions;
 *   <li>{@link io.netapprox.core.sampling.ExactSum}: exact, order-independent sums for complete
 *       groups;
 *   <li>{@link io.netapprox.core.sampling.ShareSample} and {@link
 *       io.netapprox.core.sampling.GroupEstimator}: one sender's share of a group as the receiver
 *       accumulates it, and a group's answers from its shares (every aggregate of {@link
 *       io.netapprox.core.sampling.AggregateKind}), for every integration;
 *   <li>{@link io.netapprox.core.sampling.ApproxResult}: the result type, shaped like Spark's
 *       {@code BoundedDouble}.
 * </ul>
 */
package io.netapprox.core.sampling;
