// A hostile but AUTHENTICATED peer (it holds the session key) cannot make the receiver allocate beyond its
// configured receive buffer: ANNOUNCEs with huge message counts whose reports would list every id, out-of-order
// one-byte messages held for ordering, and many jobs of early data. The heap is measured directly (glibc's
// mallinfo2, or the sanitizer allocator's count under ASan), with the application never draining its events.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <vector>

#include "core/crypto.hpp"
#include "core/engine.hpp"
#include "core/recv_job.hpp"
#include "core/wire.hpp"

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer allocator's count (libasan exports it; GCC does not ship the header that declares it).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

using namespace netapprox::atp;

namespace {

int64_t live_heap_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#endif
}

constexpr SessionId kSid = 0x5E55;
constexpr PeerId kPeer = 3;
constexpr uint64_t kBuffer = 1 << 20;

struct Body {
  std::vector<uint8_t> v;
  Body& u(uint64_t x, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
    return *this;
  }
};

// The hostile initiator: seals whatever it likes with the real key.
class Hostile {
 public:
  Hostile() {
    for (size_t i = 0; i < kKeyBytes; ++i) key_[i] = static_cast<uint8_t>(i * 7 + 1);
    EngineConfig c;
    c.recv_buffer_bytes = kBuffer;
    rx_ = std::make_unique<Engine>(c);
    EXPECT_EQ(rx_->open_session(kSid, key_, kPeer, false, now_), Status::kOk);
  }
  Engine& rx() { return *rx_; }

  void send(wire::PacketType type, const std::vector<uint8_t>& body) {
    std::vector<uint8_t> p(wire::kOverheadBytes + body.size());
    wire::write_header(p.data(), type, true, kSid, pn_, 0);
    wire::set_body_len(p.data(), static_cast<uint16_t>(body.size()));
    std::memcpy(p.data() + wire::kHeaderBytes, body.data(), body.size());
    crypto::seal(key_, true, pn_, p.data(), wire::kHeaderBytes + body.size(),
                 p.data() + wire::kHeaderBytes + body.size());
    ++pn_;
    rx_->on_datagram(p.data(), p.size(), kPeer, now_ += 1000);
    // The receiver's own datagrams (acks) are taken so its control queue does not count; events stay queued.
    uint8_t out[2048];
    Transmit t;
    while (rx_->poll_transmit(now_, out, sizeof out, &t)) {
    }
  }
  void announce(uint32_t job, uint32_t n, uint32_t target) {
    Body b;
    b.u(job, 4).u(n, 4).u(1, 4).u(0, 4).u(1, 2).u(0, 2).u(77, 8).u(n, 4).u(target, 4);
    send(wire::PacketType::kAnnounce, b.v);
  }
  void data(uint32_t job, uint32_t msg, uint32_t len, uint16_t seg) {
    Body b;
    b.u(job, 4).u(msg, 4).u(len, 4).u(0, 4).u(seg, 2).u(0, 2);
    b.v.insert(b.v.end(), std::min<uint32_t>(len, seg), 0x5A);
    send(wire::PacketType::kData, b.v);
  }
  void cancel(uint32_t job) { send(wire::PacketType::kCancel, Body().u(job, 4).v); }

 private:
  uint8_t key_[kKeyBytes];
  std::unique_ptr<Engine> rx_;
  uint64_t pn_ = 0;
  TimeNs now_ = 1'000'000'000;
};

// What the receiver may hold for one session: its buffer, the head-of-line allowance (one more buffer,
// docs/protocol.md section 8), and a fixed allowance for the session, its queues and the reports' fixed part.
constexpr int64_t kAllowed = 2 * kBuffer + (1 << 20);

}  // namespace

// Each ANNOUNCE names a job of 2M messages (its bitmaps fit the 1 MiB buffer) and is cancelled at once: the
// report of each must not list 2M ids (8 MiB each; 20 of them took 160 MiB before reports became ranges).
TEST(HostileMemoryTest, AnnouncesWithHugeCountsDoNotInflateReports) {
  Hostile h;
  const int64_t before = live_heap_bytes();
  for (uint32_t job = 1; job <= 20; ++job) {
    h.announce(job, 1u << 21, 1u << 20);
    h.cancel(job);
  }
  const int64_t grown = live_heap_bytes() - before;
  EXPECT_LE(grown, kAllowed) << "20 hostile ANNOUNCEs grew the heap by " << grown / 1024 << " KiB";
  EXPECT_GE(h.rx().stats().jobs, 20u);
}

// One exact group whose first message never comes: every later one-byte message is held for ordering. Each costs
// far more than its one byte of payload, and all of it must stay within the buffer.
TEST(HostileMemoryTest, MessagesHeldForOrderingAreChargedInFull) {
  Hostile h;
  const int64_t before = live_heap_bytes();
  h.announce(1, 1u << 20, 1u << 20);
  for (uint32_t m = 1; m <= 100'000; ++m) h.data(1, m, 1, 1);
  const int64_t grown = live_heap_bytes() - before;
  EXPECT_LE(grown, kAllowed) << "100k held one-byte messages grew the heap by " << grown / 1024 << " KiB";
  EXPECT_GT(h.rx().stats().dropped_no_buffer, 0u) << "the buffer never filled";
}

// Many jobs known only from early data (no ANNOUNCE), each with many one-byte messages and a multi-segment message
// whose segment bitmap is large: all of it within the buffer.
TEST(HostileMemoryTest, EarlyDataOfManyJobsStaysWithinTheBuffer) {
  Hostile h;
  const int64_t before = live_heap_bytes();
  for (uint32_t job = 1; job <= 256; ++job) {
    for (uint32_t m = 0; m < 200; ++m) h.data(job, m, 1, 1);
    h.data(job, 1000, 60'000, 1);  // 60 000 one-byte segments: a 7.5 KB segment bitmap
  }
  const int64_t grown = live_heap_bytes() - before;
  EXPECT_LE(grown, kAllowed) << "early data of 256 jobs grew the heap by " << grown / 1024 << " KiB";
  EXPECT_GT(h.rx().stats().dropped_no_buffer, 0u) << "the buffer never filled";
}

// The sender's side of the same bound: the application fills a 1 MiB send buffer with 1-byte messages (nothing is
// ever acknowledged). Charged by payload only, 1 MiB held a million live messages - ~250 bytes of bookkeeping
// each, about 250 MiB of heap; each message is now charged SendJob::kMessageOverheadBytes on top of its length.
TEST(HostileMemoryTest, SendBufferOfTinyMessagesChargesTheirBookkeeping) {
  uint8_t key[kKeyBytes];
  for (size_t i = 0; i < kKeyBytes; ++i) key[i] = static_cast<uint8_t>(i + 3);
  EngineConfig c;
  c.send_buffer_bytes = kBuffer;
  Engine tx(c);
  TimeNs now = 1'000'000'000;
  ASSERT_EQ(tx.open_session(kSid, key, kPeer, true, now), Status::kOk);
  constexpr uint32_t kMessages = 1u << 20;
  JobSpec spec{1, {{1, kMessages, 1.0}}, true};
  ASSERT_EQ(tx.start_job(kSid, spec, now), Status::kOk);
  const int64_t before = live_heap_bytes();
  const uint8_t one = 0x42;
  uint32_t accepted = 0;
  while (accepted < kMessages && tx.submit(kSid, 1, 0, accepted, &one, 1, now) == Status::kOk) ++accepted;
  const int64_t grown = live_heap_bytes() - before;
  EXPECT_LT(accepted, kMessages) << "the buffer never filled";
  EXPECT_LE(tx.stats().send_buffered, kBuffer);
  EXPECT_LE(grown, 2 * static_cast<int64_t>(kBuffer)) << accepted << " one-byte messages in a " << kBuffer / 1024
                                                      << " KiB send buffer grew the heap by " << grown / 1024 << " KiB";
}
