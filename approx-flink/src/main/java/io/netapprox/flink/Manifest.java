package io.netapprox.flink;

/**
 * What a sender tells one receiver over the ordinary Flink edge when it ends an epoch: which strata
 * it has for the receiver ({@link StratumTable}: window, group, N messages, M records, MSR) and
 * where to pull them from (the sender TaskManager's control address and engine id). Flink keeps the
 * order of each channel, so the watermark or barrier that ended the epoch follows its manifest. A
 * Flink POJO.
 */
public class Manifest {
    /** Receiver subtask index. */
    public int target;

    /** Sender subtask index and attempt. */
    public int sender;

    public int attempt;

    /** The sender's epoch number (0, 1, ... per attempt). */
    public long epoch;

    /** The sender TaskManager's exchange (engine) id, control host and port. */
    public String engineId;

    public String controlHost;
    public int controlPort;

    /** Number of strata and their table ({@link StratumTable#encode}). */
    public int strataCount;

    public byte[] strata;

    /**
     * The sender pushes this epoch right behind the manifest (a tail epoch, to a receiver it has a
     * session with): the receiver waits for the push instead of requesting it, and pulls only if
     * the push does not come (its exchange refused it, or it failed before it started).
     */
    public boolean pushed;

    public Manifest() {}

    /** The DATA_REQUEST payload that pulls this epoch's messages. */
    OutboxKey outboxKey(long exchangeId) {
        return new OutboxKey(exchangeId, sender, attempt, epoch, target);
    }

    @Override
    public String toString() {
        return "Manifest{sender "
                + sender
                + "#"
                + attempt
                + " epoch "
                + epoch
                + " -> "
                + target
                + ", "
                + strataCount
                + " strata"
                + (pushed ? ", pushed" : "")
                + " at "
                + controlHost
                + ":"
                + controlPort
                + "}";
    }
}
