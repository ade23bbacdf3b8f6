package io.netapprox.kafka.flink;

import java.util.List;

/**
 * What the split enumerator checkpoints: whether the topic's partitions were listed already and the
 * splits not yet handed to a reader.
 */
public record EnumeratorState(boolean discovered, List<PartitionSplit> pending) {
    public EnumeratorState {
        pending = List.copyOf(pending);
    }
}
