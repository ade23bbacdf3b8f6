// Memory reused on the per-message hot paths, so that submitting, acknowledging, reassembling, delivering and
// releasing a small message costs no malloc/free in steady state (malloc/free were ~30 % of the CPU per 100-byte
// message, docs/driver.md "Per-datagram CPU budget").
//
//  * NodePool + PoolAllocator: the nodes of the per-message maps and sets (one node per live message) come from
//    free lists owned by the container's owner (a job, the engine). Not thread-safe: like the rest of the core, a
//    pool is used under its engine's lock only.
//  * BufferPool: a bounded stack of spare message buffers (send copies, receive buffers), reused by size.
//
// Both are bounded: what is beyond their bound goes back to the allocator, so a burst does not pin memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "core/buffer.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define NETAPPROX_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define NETAPPROX_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define NETAPPROX_POISON(p, n) ((void)(p), (void)(n))
#define NETAPPROX_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace netapprox::atp {

// Free lists of small fixed-size blocks (16-byte size classes up to kMaxBlock bytes), at most kMaxFreePerClass
// blocks kept per class. Blocks are handed back to operator delete when the pool is destroyed, so a pool must
// outlive every container that uses it (declare it before them).
class NodePool {
 public:
  static constexpr size_t kAlign = 16;
  static constexpr size_t kMaxBlock = 256;
  static constexpr size_t kMaxFreePerClass = 1 << 16;

  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;
  ~NodePool() {
    for (FreeList& f : free_) {
      while (f.head) {
        Block* b = f.head;
        f.head = b->next;
        ::operator delete(b);
      }
    }
  }

  static bool pooled(size_t bytes) { return bytes <= kMaxBlock; }

  void* get(size_t bytes) {
    FreeList& f = free_[size_class(bytes)];
    if (f.head == nullptr) return ::operator new((size_class(bytes) + 1) * kAlign);
    Block* b = f.head;
    f.head = b->next;
    f.count--;
    return b;
  }

  void put(void* p, size_t bytes) {
    FreeList& f = free_[size_class(bytes)];
    if (f.count >= kMaxFreePerClass) {
      ::operator delete(p);
      return;
    }
    Block* b = static_cast<Block*>(p);
    b->next = f.head;
    f.head = b;
    f.count++;
  }

  size_t free_blocks() const {
    size_t n = 0;
    for (const FreeList& f : free_) n += f.count;
    return n;
  }

 private:
  struct Block {
    Block* next;
  };
  struct FreeList {
    Block* head = nullptr;
    size_t count = 0;
  };
  static size_t size_class(size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kAlign; }
  FreeList free_[kMaxBlock / kAlign];
};

// A standard allocator over a NodePool: single small objects (map, set and hash nodes) come from the pool;
// arrays (hash bucket tables) and large objects go to operator new.
template <class T>
class PoolAllocator {
 public:
  using value_type = T;
  explicit PoolAllocator(NodePool* pool) noexcept : pool_(pool) {}
  template <class U>
  PoolAllocator(const PoolAllocator<U>& o) noexcept : pool_(o.pool()) {}

  T* allocate(size_t n) {
    static_assert(alignof(T) <= NodePool::kAlign, "NodePool blocks are 16-byte aligned");
    if (n == 1 && NodePool::pooled(sizeof(T))) return static_cast<T*>(pool_->get(sizeof(T)));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1 && NodePool::pooled(sizeof(T))) {
      pool_->put(p, sizeof(T));
    } else {
      ::operator delete(p);
    }
  }
  NodePool* pool() const noexcept { return pool_; }
  template <class U>
  bool operator==(const PoolAllocator<U>& o) const noexcept {
    return pool_ == o.pool();
  }
  template <class U>
  bool operator!=(const PoolAllocator<U>& o) const noexcept {
    return pool_ != o.pool();
  }

 private:
  NodePool* pool_;
};

// Spare message buffers, reused by later messages. take(len) returns a buffer with capacity >= len when the most
// recently returned one is large enough (messages of one job are usually alike), else a fresh one; put() keeps a
// buffer while the spares' capacities stay within max_bytes. Under AddressSanitizer a spare's bytes are poisoned
// while it waits, so reading a released message (use after release) is caught as if its memory had been freed.
class BufferPool {
 public:
  explicit BufferPool(uint64_t max_bytes) : max_bytes_(max_bytes) {}
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool() {
    for (Buffer& b : spare_) NETAPPROX_UNPOISON(b.data(), b.capacity());
  }

  // A buffer holding a copy of [data, data + len).
  Buffer copy(const uint8_t* data, size_t len) {
    Buffer b = take(len);
    b.assign(data, data + len);
    return b;
  }

  Buffer take(size_t len) {
    if (spare_.empty() || spare_.back().capacity() < len) return Buffer();
    Buffer b = std::move(spare_.back());
    spare_.pop_back();
    bytes_ -= b.capacity();
    NETAPPROX_UNPOISON(b.data(), b.capacity());
    b.clear();
    return b;
  }

  void put(Buffer&& b) {
    const size_t cap = b.capacity();
    if (cap == 0 || bytes_ + cap > max_bytes_) {
      Buffer().swap(b);  // over the bound: back to the allocator now
      return;
    }
    bytes_ += cap;
    spare_.push_back(std::move(b));
    NETAPPROX_POISON(spare_.back().data(), cap);
  }

  uint64_t bytes() const { return bytes_; }
  size_t buffers() const { return spare_.size(); }

 private:
  uint64_t max_bytes_;
  uint64_t bytes_ = 0;
  std::vector<Buffer> spare_;
};

}  // namespace netapprox::atp
