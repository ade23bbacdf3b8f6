package io.netapprox.kafka.flink;

import java.util.List;
import java.util.Map;

/**
 * One listing of a topic on the JobManager: its partitions with their first and end offsets and,
 * for {@link StartingOffsets#COMMITTED}, the group's committed offsets (absent: none committed).
 */
record PartitionListing(
        List<Integer> partitions,
        Map<Integer, Long> begin,
        Map<Integer, Long> end,
        Map<Integer, Long> committed) {}
