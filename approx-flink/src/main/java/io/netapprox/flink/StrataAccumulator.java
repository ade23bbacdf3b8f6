package io.netapprox.flink;

import java.util.ArrayList;
import java.util.List;

/** Window state of the approximate topology: the strata of one (window, group) so far. */
final class StrataAccumulator<K> {
    List<WindowShare<K>> strata = new ArrayList<>();

    StrataAccumulator() {}
}
