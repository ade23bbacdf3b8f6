package io.netapprox.kafka.flink;

/** Where a split starts when the job starts without a checkpoint. */
public enum StartingOffsets {
    /** The partition's first offset. */
    EARLIEST,
    /** The partition's end when the job starts: only records produced later. */
    LATEST,
    /** The group's committed offset ({@code group.id} required), else the first offset. */
    COMMITTED
}
