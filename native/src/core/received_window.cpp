#include "core/received_window.hpp"

namespace netapprox::atp {

ReceivedWindow::Check ReceivedWindow::check(uint64_t pn) const {
  if (!any_ || pn > largest_) return Check::kNew;
  if (largest_ - pn >= kBits) return Check::kTooOld;
  return test(pn) ? Check::kDuplicate : Check::kNew;
}

void ReceivedWindow::mark(uint64_t pn) {
  if (!any_ || pn > largest_) {
    const uint64_t from = any_ ? largest_ + 1 : pn;
    if (pn - from >= kBits - 1) {
      bits_.fill(0);
    } else {
      for (uint64_t k = 0, n = pn - from + 1; k < n; ++k) {  // by count: pn may be 2^64 - 1
        const uint64_t q = from + k;
        bits_[(q % kBits) / 64] &= ~(uint64_t{1} << (q % 64));
      }
    }
    largest_ = pn;
    any_ = true;
  }
  bits_[(pn % kBits) / 64] |= uint64_t{1} << (pn % 64);
}

std::vector<wire::AckRange> ReceivedWindow::ranges(size_t max_ranges) const {
  std::vector<wire::AckRange> out;
  if (!any_) return out;
  const uint64_t floor = largest_ >= kBits - 1 ? largest_ - (kBits - 1) : 0;
  uint64_t pn = largest_;
  while (out.size() < max_ranges) {
    const uint64_t high = pn;
    while (pn > floor && test(pn - 1)) {
      // Whole words of received packets are skipped at once (the common case: everything arrived).
      if (pn % 64 == 0 && pn >= floor + 64 && bits_[((pn - 64) % kBits) / 64] == ~uint64_t{0}) {
        pn -= 64;
      } else {
        --pn;
      }
    }
    out.push_back({pn, high});
    // skip the gap
    if (pn <= floor) break;
    --pn;
    while (pn > floor && !test(pn)) --pn;
    if (!test(pn)) break;
  }
  return out;
}

}  // namespace netapprox::atp
