// Copies of small submitted messages packed into 64 KiB slabs: one allocation per slab (~600 messages of 100
// bytes) instead of one per message. A sender that runs ahead of the network holds every submitted message until
// it is acknowledged, so its copies are mostly fresh memory, which a pool of released buffers cannot supply
// (docs/driver.md "Issue 11, step 3": one malloc and one free per 100-byte message were left on the sender).
//
// A slab counts its live copies; when the last one is released and the slab is not the one being filled, it is
// kept for reuse (at most kMaxSpareSlabs, the rest go back to the allocator). Not thread-safe (a job's, used under
// its engine's lock).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace netapprox::atp {

class SlabArena {
 public:
  static constexpr uint32_t kSlabBytes = 64 << 10;
  static constexpr uint32_t kMaxCopy = 2048;  // larger messages are not packed (they get a buffer of their own)
  static constexpr size_t kMaxSpareSlabs = 16;
  static constexpr uint32_t kNone = UINT32_MAX;

  // Copies [data, data + len) (len <= kMaxCopy) and returns where; *slab names the slab for release().
  const uint8_t* copy(const uint8_t* data, uint32_t len, uint32_t* slab) {
    if (current_ == kNone || slabs_[current_].used + len > kSlabBytes) next_slab();
    Slab& s = slabs_[current_];
    uint8_t* p = s.bytes.get() + s.used;
    if (len > 0) std::memcpy(p, data, len);
    s.used += (len + 7) & ~uint32_t{7};  // keep copies 8-byte aligned
    s.live++;
    *slab = current_;
    return p;
  }

  // A copy in `slab` is no longer needed.
  void release(uint32_t slab) {
    Slab& s = slabs_[slab];
    if (--s.live == 0 && slab != current_) recycle(slab);
  }

  size_t slabs_allocated() const { return allocated_; }  // slabs holding memory (in use or spare)
  size_t spare_slabs() const { return spare_.size(); }

 private:
  struct Slab {
    std::unique_ptr<uint8_t[]> bytes;
    uint32_t used = 0;
    uint32_t live = 0;
  };

  void next_slab() {
    if (current_ != kNone && slabs_[current_].live == 0) {  // nothing left in it: start it over
      slabs_[current_].used = 0;
      return;
    }
    if (!spare_.empty()) {
      current_ = spare_.back();
      spare_.pop_back();
    } else {
      if (!unused_.empty()) {
        current_ = unused_.back();
        unused_.pop_back();
      } else {
        current_ = static_cast<uint32_t>(slabs_.size());
        slabs_.emplace_back();
      }
      slabs_[current_].bytes.reset(new uint8_t[kSlabBytes]);
      allocated_++;
    }
    slabs_[current_].used = 0;  // the previous slab is recycled by the release of its last copy
  }

  void recycle(uint32_t slab) {
    slabs_[slab].used = 0;
    if (spare_.size() < kMaxSpareSlabs) {
      spare_.push_back(slab);
      return;
    }
    slabs_[slab].bytes.reset();
    allocated_--;
    unused_.push_back(slab);
  }

  std::vector<Slab> slabs_;
  std::vector<uint32_t> spare_;   // empty slabs with memory, reused first
  std::vector<uint32_t> unused_;  // entries whose memory went back to the allocator
  uint32_t current_ = kNone;      // the slab being filled
  size_t allocated_ = 0;
};

}  // namespace netapprox::atp
