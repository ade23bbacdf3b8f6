package io.netapprox.kafka.relay;

import java.util.concurrent.atomic.LongAdder;

/** Counters of a {@link KafkaRelay} since it started. */
public final class RelayMetrics {
    final LongAdder sessionsOpened = new LongAdder();
    final LongAdder pulls = new LongAdder();
    final LongAdder emptyAnswers = new LongAdder();
    final LongAdder segmentsSent = new LongAdder();
    final LongAdder recordsSent = new LongAdder();
    final LongAdder recordsDelivered = new LongAdder();
    final LongAdder failedPulls = new LongAdder();
    final LongAdder badRequests = new LongAdder();

    /** Consumer streams opened. */
    public long sessionsOpened() {
        return sessionsOpened.sum();
    }

    /** PULL requests received. */
    public long pulls() {
        return pulls.sum();
    }

    /** Pulls answered by a header alone (no record to send: coverage only, or nothing new). */
    public long emptyAnswers() {
        return emptyAnswers.sum();
    }

    /** Segments sent as ATP jobs. */
    public long segmentsSent() {
        return segmentsSent.sum();
    }

    /** Candidate records of those jobs (the messages the jobs could send). */
    public long recordsSent() {
        return recordsSent.sum();
    }

    /** Records the consumers' reports say arrived. */
    public long recordsDelivered() {
        return recordsDelivered.sum();
    }

    /** Requests answered with a failure (not leader, out of range, read failed, no stream). */
    public long failedPulls() {
        return failedPulls.sum();
    }

    /** Requests that could not be decoded. */
    public long badRequests() {
        return badRequests.sum();
    }

    @Override
    public String toString() {
        return "RelayMetrics{sessions="
                + sessionsOpened()
                + ", pulls="
                + pulls()
                + ", empty="
                + emptyAnswers()
                + ", segments="
                + segmentsSent()
                + ", recordsSent="
                + recordsSent()
                + ", recordsDelivered="
                + recordsDelivered()
                + ", failed="
                + failedPulls()
                + ", bad="
                + badRequests()
                + "}";
    }
}
