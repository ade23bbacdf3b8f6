package io.netapprox.kafka.relay;

import java.util.concurrent.atomic.LongAdder;

/** Counters of a {@link KafkaRelay} since it started. */
public final class RelayMetrics {
    final LongAdder sessionsOpened = new LongAdder();
    final LongAdder pulls = new LongAdder();
    final LongAdder emptyAnswers = new LongAdder();
    final LongAdder segmentsSent = new LongAdder();
    final LongAdder segmentsSentOverTcp = new LongAdder();
    final LongAdder recordsSent = new LongAdder();
    final LongAdder recordsDelivered = new LongAdder();
    final LongAdder failedPulls = new LongAdder();
    final LongAdder badRequests = new LongAdder();
    final LongAdder throttled = new LongAdder();
    final LongAdder streamsRefused = new LongAdder();
    final LongAdder clampedWaits = new LongAdder();
    final LongAdder notAuthorized = new LongAdder();
    final LongAdder unknownTopics = new LongAdder();

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

    /** Segments sent as jobs (over ATP or TCP). */
    public long segmentsSent() {
        return segmentsSent.sum();
    }

    /**
     * Of those, segments sent over the TCP data plane (the relay runs {@code --data-plane tcp}, the
     * consumer {@code approx.data.plane=tcp}, or {@code auto} fell back).
     */
    public long segmentsSentOverTcp() {
        return segmentsSentOverTcp.sum();
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

    /**
     * Requests answered {@code THROTTLED} at once: their client already held {@link
     * RelayConfig#maxPullsPerClient()} serving threads.
     */
    public long throttled() {
        return throttled.sum();
    }

    /**
     * OPENs refused: the client had {@link RelayConfig#maxStreamsPerClient()} streams, or the relay
     * {@link RelayConfig#maxSessions()}.
     */
    public long streamsRefused() {
        return streamsRefused.sum();
    }

    /**
     * Pulls that asked to wait longer than {@link RelayConfig#maxPullWaitMs()} (held that long).
     */
    public long clampedWaits() {
        return clampedWaits.sum();
    }

    /**
     * OPENs and pulls answered {@code NOT_AUTHORIZED} (no token, token refused, topic not readable
     * by the consumer's principal).
     */
    public long notAuthorized() {
        return notAuthorized.sum();
    }

    /** Pulls answered {@code UNKNOWN_TOPIC} (no such topic or partition, or an invalid name). */
    public long unknownTopics() {
        return unknownTopics.sum();
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
                + ", segmentsOverTcp="
                + segmentsSentOverTcp()
                + ", recordsSent="
                + recordsSent()
                + ", recordsDelivered="
                + recordsDelivered()
                + ", failed="
                + failedPulls()
                + ", bad="
                + badRequests()
                + ", throttled="
                + throttled()
                + ", streamsRefused="
                + streamsRefused()
                + ", clampedWaits="
                + clampedWaits()
                + ", notAuthorized="
                + notAuthorized()
                + ", unknownTopics="
                + unknownTopics()
                + "}";
    }
}
