// Message byte buffers and the bitmaps that track message and segment state.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace netapprox::atp {

// Byte buffers for message payloads are filled right after allocation: skip std::vector's zero-fill.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Buffer = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

inline std::vector<uint64_t> bitmap(uint64_t bits) { return std::vector<uint64_t>((bits + 63) / 64, 0); }
inline bool bit_get(const std::vector<uint64_t>& b, uint32_t i) { return b[i / 64] >> (i % 64) & 1; }
inline void bit_set(std::vector<uint64_t>& b, uint32_t i) { b[i / 64] |= uint64_t{1} << (i % 64); }

}  // namespace netapprox::atp
