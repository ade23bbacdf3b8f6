package io.netapprox.kafka.flink;

import java.util.List;
import java.util.Set;

/**
 * What the split enumerator checkpoints: whether the topic's partitions were listed already, the
 * partitions it made splits of ({@code known}: a later listing turns only the others into splits),
 * and the splits not yet handed to a reader. {@code known} is null after a restore from the first
 * checkpoint format, which did not record it: then every partition of the next listing counts as
 * known.
 */
public record EnumeratorState(
        boolean discovered, List<PartitionSplit> pending, Set<Integer> known) {
    public EnumeratorState {
        pending = List.copyOf(pending);
        known = known == null ? null : Set.copyOf(known);
    }

    static EnumeratorState initial() {
        return new EnumeratorState(false, List.of(), Set.of());
    }
}
