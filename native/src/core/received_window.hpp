// The receiving side of packet numbers: replay protection and the ranges an ACK reports.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/wire.hpp"

namespace netapprox::atp {

// Sliding window of received packet numbers: replay protection and the source of ACK ranges.
class ReceivedWindow {
 public:
  static constexpr uint64_t kBits = 4096;
  enum class Check { kNew, kDuplicate, kTooOld };
  Check check(uint64_t pn) const;
  void mark(uint64_t pn);
  bool any() const { return any_; }
  uint64_t largest() const { return largest_; }
  // Descending disjoint ranges (at most max_ranges) of received numbers within the window.
  std::vector<wire::AckRange> ranges(size_t max_ranges) const;

 private:
  bool test(uint64_t pn) const { return bits_[(pn % kBits) / 64] >> (pn % 64) & 1; }
  std::array<uint64_t, kBits / 64> bits_{};
  uint64_t largest_ = 0;
  bool any_ = false;
};

}  // namespace netapprox::atp
