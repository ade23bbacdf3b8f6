package io.netapprox.kafka.flink;

import org.apache.flink.api.connector.source.SourceEvent;

/**
 * Enumerator -> reader: every split the enumerator owes this reader so far has been sent (Flink
 * delivers it after them). A reader that still holds no split then marks itself idle; before this
 * event it cannot tell "no partition for me" from "splits not here yet", and going idle too early
 * would let the other readers' watermarks run ahead of records it is about to read.
 */
final class AssignmentSettled implements SourceEvent {
    private static final long serialVersionUID = 1L;
}
