// Remaining-size classes (docs/protocol.md section 11, "size classes"): pFabric's insight - serve first the job that
// is closest to done - mapped onto the switch's strict-priority queues the way PIAS and Homa do, with a few fixed
// byte bounds instead of a priority per packet. A job's approximate DATA goes to class k in 1..7, the first whose
// bound holds for the bytes it still needs for its targets (SendJob::remaining_bytes); class 0 stays exact traffic.
// Used by Full with EngineConfig::size_classes instead of the paper's TLR classes (section 5.2). Pure functions, so
// the tests check the map directly.
#pragma once

#include <cstdint>

namespace netapprox::atp::size_class {

// Bounds of classes 1..6 in bytes (class 7: above the last bound, or the size is not known yet).
constexpr int kBounds = 6;

// The class of a job that still needs `remaining_bytes` (~0: unknown, nothing submitted yet -> 7).
int class_of(uint64_t remaining_bytes, const uint64_t bounds[kBounds]);

// Bounds are valid when positive and strictly increasing.
bool bounds_valid(const uint64_t bounds[kBounds]);

}  // namespace netapprox::atp::size_class
