// Driver tests over loopback with real UDP sockets: two engines (two Drivers) in one process.
// These tests assert on correctness only, never on timing or performance; the deadlines below are liveness
// bounds (a hung transfer fails instead of hanging ctest).
#include "driver/driver.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sodium.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

namespace atp = netapprox::atp;
namespace drv = netapprox::driver;
using atp::Status;

namespace {

int count_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (readdir(d)) ++n;
  closedir(d);
  return n;
}

drv::DriverConfig loopback_config() {
  drv::DriverConfig c;
  c.bind_address = "127.0.0.1";
  c.engine.line_rate_bps = 4'000'000'000ULL;
  c.engine.peer_death_timeout = 3'000'000'000ULL;
  c.engine.idle_timeout = 30'000'000'000ULL;
  return c;
}

std::unique_ptr<drv::Driver> make_driver(const drv::DriverConfig& c) {
  std::unique_ptr<drv::Driver> d;
  std::string err;
  Status st = drv::Driver::create(c, &d, &err);
  EXPECT_EQ(st, Status::kOk) << err;
  return d;
}

// Deterministic payload of message `id`.
std::vector<uint8_t> payload(uint32_t id, size_t len) {
  std::vector<uint8_t> v(len);
  uint64_t x = 0x9E3779B97F4A7C15ULL * (id + 1);
  for (size_t i = 0; i < len; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[i] = static_cast<uint8_t>(x);
  }
  return v;
}

struct Pair {
  std::unique_ptr<drv::Driver> tx, rx;
  atp::SessionId sid = 0x5e55'1000'0000'0001ULL;
  uint8_t key[32];

  void open(const drv::DriverConfig& txc, const drv::DriverConfig& rxc) {
    tx = make_driver(txc);
    rx = make_driver(rxc);
    ASSERT_TRUE(tx && rx);
    randombytes_buf(key, sizeof key);
    ASSERT_EQ(tx->open_session(sid, key, "127.0.0.1", rx->local_port(), true), Status::kOk);
    ASSERT_EQ(rx->open_session(sid, key, "127.0.0.1", tx->local_port(), false), Status::kOk);
  }
};

// Receiver loop: collects messages (copying and checking them), releases them, returns the receiver report.
struct Receiver {
  drv::Driver* d = nullptr;
  std::vector<uint32_t> order;  // message ids in arrival order
  std::map<uint64_t, std::vector<uint32_t>> by_group;
  size_t bad_payloads = 0;
  size_t message_len = 0;
  std::shared_ptr<const atp::JobReport> report;
  bool check_payload = true;

  bool run(std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    atp::Event evs[64];
    while (std::chrono::steady_clock::now() < deadline) {
      int n = d->poll_events(evs, 64, 100);
      if (n < 0) return false;
      for (int i = 0; i < n; ++i) {
        atp::Event& e = evs[i];
        if (e.type == atp::EventType::kMessage) {
          order.push_back(e.message);
          by_group[e.group_id].push_back(e.message);
          if (check_payload) {
            auto want = payload(e.message, message_len);
            if (e.len != want.size() || memcmp(e.data, want.data(), e.len) != 0) ++bad_payloads;
          }
          EXPECT_EQ(d->release(e.handle), Status::kOk);
        } else if (e.type == atp::EventType::kJobDone) {
          report = e.report;
          return true;
        }
        e = atp::Event{};
      }
    }
    return false;
  }
};

std::shared_ptr<const atp::JobReport> wait_job_done(drv::Driver* d, std::chrono::seconds limit,
                                                    std::vector<atp::Event>* others = nullptr) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  atp::Event evs[16];
  while (std::chrono::steady_clock::now() < deadline) {
    int n = d->poll_events(evs, 16, 100);
    if (n < 0) return nullptr;
    for (int i = 0; i < n; ++i) {
      if (evs[i].type == atp::EventType::kJobDone) return evs[i].report;
      if (others) others->push_back(evs[i]);
    }
  }
  return nullptr;
}

Status submit_all(drv::Driver* d, atp::SessionId sid, atp::JobId job, const std::vector<atp::GroupSpec>& groups,
                  size_t len) {
  uint32_t id = 0;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    for (uint32_t i = 0; i < groups[g].size; ++i, ++id) {
      auto p = payload(id, len);
      Status st = d->submit_wait(sid, job, g, i, p.data(), p.size(), 20'000);
      if (st != Status::kOk) return st;
    }
  }
  return Status::kOk;
}

}  // namespace

TEST(Driver, CreatesSocketAndReportsPort) {
  ASSERT_GE(sodium_init(), 0);
  auto d = make_driver(loopback_config());
  ASSERT_TRUE(d);
  EXPECT_NE(d->local_port(), 0);
  drv::DriverStats s = d->driver_stats();
  (void)s;
  atp::Event ev;
  EXPECT_EQ(d->poll_events(&ev, 1, 0), 0);
  EXPECT_EQ(d->poll_events(nullptr, 1, 0), static_cast<int>(Status::kInvalidArgument));
}

TEST(Driver, RejectsBadConfig) {
  drv::DriverConfig c = loopback_config();
  c.bind_address = "not-an-address";
  std::unique_ptr<drv::Driver> d;
  std::string err;
  EXPECT_EQ(drv::Driver::create(c, &d, &err), Status::kInvalidArgument);
  EXPECT_FALSE(d);
  EXPECT_FALSE(err.empty());
  c = loopback_config();
  c.engine.max_datagram = 10;
  EXPECT_NE(drv::Driver::create(c, &d, &err), Status::kOk);
  EXPECT_EQ(drv::Driver::create(c, nullptr, nullptr), Status::kInvalidArgument);
}

TEST(Driver, ExactTransfer32MiBArrivesExactAndInOrder) {
  Pair p;
  drv::DriverConfig c = loopback_config();
  ASSERT_NO_FATAL_FAILURE(p.open(c, c));
  const uint32_t n = 512;
  const size_t len = 64 * 1024;  // 512 x 64 KiB = 32 MiB
  std::vector<atp::GroupSpec> groups = {{7, n, 1.0}};
  ASSERT_EQ(p.tx->start_job(p.sid, atp::JobSpec{1, groups, true}), Status::kOk);

  Receiver r;
  r.d = p.rx.get();
  r.message_len = len;
  std::thread rt([&] { EXPECT_TRUE(r.run(std::chrono::seconds(120))); });
  EXPECT_EQ(submit_all(p.tx.get(), p.sid, 1, groups, len), Status::kOk);
  auto srep = wait_job_done(p.tx.get(), std::chrono::seconds(120));
  rt.join();

  ASSERT_TRUE(srep);
  EXPECT_EQ(srep->status, Status::kOk);
  ASSERT_TRUE(r.report);
  EXPECT_EQ(r.report->status, Status::kOk);
  EXPECT_EQ(r.report->delivered, n);
  ASSERT_EQ(r.order.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(r.order[i], i) << "out of order at " << i;
  }
  EXPECT_EQ(r.bad_payloads, 0u);
  EXPECT_EQ(p.rx->engine_stats().dropped_auth, 0u);
}

TEST(Driver, LossyApproximateGroupsReachTheirTargets) {
  Pair p;
  drv::DriverConfig txc = loopback_config();
  drv::DriverConfig rxc = loopback_config();
  txc.engine.faults.drop_outgoing = 0.3;  // 30% of data packets lost
  txc.engine.faults.seed = 42;
  rxc.engine.faults.drop_outgoing = 0.3;  // and 30% of acks
  rxc.engine.faults.seed = 43;
  ASSERT_NO_FATAL_FAILURE(p.open(txc, rxc));
  const size_t len = 3000;  // 3 packets per message
  std::vector<atp::GroupSpec> groups = {{100, 300, 0.5}, {200, 300, 0.8}, {300, 100, 1.0}};
  ASSERT_EQ(p.tx->start_job(p.sid, atp::JobSpec{9, groups, true}), Status::kOk);

  Receiver r;
  r.d = p.rx.get();
  r.message_len = 0;
  r.check_payload = false;
  std::thread rt([&] { EXPECT_TRUE(r.run(std::chrono::seconds(60))); });
  EXPECT_EQ(submit_all(p.tx.get(), p.sid, 9, groups, len), Status::kOk);
  auto srep = wait_job_done(p.tx.get(), std::chrono::seconds(60));
  rt.join();

  ASSERT_TRUE(r.report);
  EXPECT_EQ(r.report->status, Status::kOk);
  ASSERT_EQ(r.report->groups.size(), groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const atp::GroupReport& gr = r.report->groups[g];
    EXPECT_EQ(gr.group_id, groups[g].group_id);
    EXPECT_GE(gr.delivered, gr.target) << "group " << gr.group_id;
    EXPECT_EQ(atp::id_count(gr.delivered_ranges), gr.delivered);
    EXPECT_GE(r.by_group[gr.group_id].size(), gr.target) << "group " << gr.group_id;
  }
  // The exact group arrived complete and in order.
  const auto& exact = r.by_group[300];
  ASSERT_EQ(exact.size(), 100u);
  for (size_t i = 1; i < exact.size(); ++i) EXPECT_LT(exact[i - 1], exact[i]);
  ASSERT_TRUE(srep);
  EXPECT_EQ(srep->status, Status::kOk);
  EXPECT_GT(p.tx->engine_stats().dropped_fault_out, 0u);
}

TEST(Driver, PeerDeathIsSurfacedAsAnError) {
  Pair p;
  drv::DriverConfig c = loopback_config();
  // 1.5 s, not shorter: a receiver kept off the CPU that long on a loaded machine before the first message
  // arrived would be declared dead while alive, and no message would be seen before the kill.
  c.engine.peer_death_timeout = 1'500'000'000ULL;
  ASSERT_NO_FATAL_FAILURE(p.open(c, c));
  const size_t len = 16 * 1024;
  std::vector<atp::GroupSpec> groups = {{1, 100000, 1.0}};
  ASSERT_EQ(p.tx->start_job(p.sid, atp::JobSpec{3, groups, true}), Status::kOk);
  // Push some data, let a few messages arrive, then kill the receiver without a CLOSE.
  std::atomic<bool> stop{false};
  std::thread feeder([&] {
    auto data = payload(0, len);
    for (uint32_t i = 0; i < 100000 && !stop; ++i) {
      Status st = p.tx->submit_wait(p.sid, 3, 0, i, data.data(), data.size(), 50);
      if (st == Status::kWouldBlock) {
        --i;
        continue;
      }
      if (st != Status::kOk) break;
    }
  });
  atp::Event evs[16];
  int got = 0;
  for (int k = 0; k < 200 && got < 5; ++k) {
    int n = p.rx->poll_events(evs, 16, 50);
    for (int i = 0; i < n; ++i) {
      if (evs[i].type == atp::EventType::kMessage) {
        ++got;
        p.rx->release(evs[i].handle);
      }
    }
  }
  EXPECT_GT(got, 0);
  p.rx.reset();  // the peer vanishes

  // Liveness bound: 40x the configured timeout.
  bool session_error = false, job_failed = false;
  Status seen = Status::kOk;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !(session_error && job_failed)) {
    int n = p.tx->poll_events(evs, 16, 100);
    for (int i = 0; i < n; ++i) {
      if (evs[i].type == atp::EventType::kSessionError) {
        session_error = true;
        seen = evs[i].status;
      }
      if (evs[i].type == atp::EventType::kJobDone) {
        job_failed = evs[i].report && evs[i].report->status != Status::kOk;
        if (job_failed) {
          EXPECT_EQ(evs[i].report->status, Status::kPeerDead);
        }
      }
    }
  }
  stop = true;
  feeder.join();
  EXPECT_TRUE(session_error);
  EXPECT_EQ(seen, Status::kPeerDead);
  EXPECT_TRUE(job_failed);
}

TEST(Driver, OpenCloseCyclesDoNotLeakFds) {
  // Warm up once (libsodium, glibc lazily open things).
  { auto d = make_driver(loopback_config()); }
  const int before = count_fds();
  ASSERT_GT(before, 0);
  uint8_t key[32] = {1};
  for (int i = 0; i < 200; ++i) {
    auto d = make_driver(loopback_config());
    ASSERT_TRUE(d);
    ASSERT_EQ(d->open_session(1000 + i, key, "127.0.0.1", 9, true), Status::kOk);
    if (i % 2) {
      ASSERT_EQ(d->close_session(1000 + i), Status::kOk);
    }
  }
  EXPECT_EQ(count_fds(), before);
}

TEST(Driver, MisuseReturnsErrors) {
  auto d = make_driver(loopback_config());
  ASSERT_TRUE(d);
  uint8_t key[32] = {0};
  EXPECT_EQ(d->open_session(1, nullptr, "127.0.0.1", 1, true), Status::kInvalidArgument);
  EXPECT_EQ(d->open_session(1, key, "no.such.host.invalid", 1, true), Status::kInvalidArgument);
  EXPECT_EQ(d->open_session(1, key, "::1", 1, true), Status::kInvalidArgument);  // IPv4 socket
  EXPECT_EQ(d->open_session(1, key, "127.0.0.1", 5, true), Status::kOk);
  EXPECT_EQ(d->open_session(1, key, "127.0.0.1", 5, true), Status::kAlreadyExists);
  EXPECT_NE(d->start_job(2, atp::JobSpec{1, {{1, 10, 1.0}}, true}), Status::kOk);
  EXPECT_NE(d->submit(1, 99, 0, 0, key, sizeof key), Status::kOk);
  EXPECT_EQ(d->submit(1, 99, 0, 0, nullptr, 10), Status::kInvalidArgument);
  EXPECT_NE(d->release(12345), Status::kOk);
  EXPECT_NE(d->cancel_job(1, 77), Status::kOk);
  EXPECT_NE(d->update_msr(1, 77, {{0, 0.5}}), Status::kOk);
  EXPECT_EQ(d->submit_wait(1, 99, 0, 0, key, sizeof key, 10) == Status::kOk, false);
  EXPECT_EQ(d->close_session(1), Status::kOk);
  EXPECT_NE(d->close_session(1), Status::kOk);
  EXPECT_NE(d->set_peer(1, "127.0.0.1", 5), Status::kOk);
  d->stop();
  EXPECT_EQ(d->submit(1, 1, 0, 0, key, 1), Status::kClosed);
  atp::Event ev;
  EXPECT_EQ(d->poll_events(&ev, 1, 10), static_cast<int>(Status::kClosed));
}

TEST(PeerTable, BoundedWithGenerationsAndPins) {
  drv::PeerTable t(2);
  auto mk = [](uint16_t port) {
    sockaddr_storage s{};
    auto* a = reinterpret_cast<sockaddr_in*>(&s);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    a->sin_addr.s_addr = htonl(0x7f000001);
    return s;
  };
  atp::PeerId a, b, c, a2;
  ASSERT_TRUE(t.lookup_or_add(mk(1), sizeof(sockaddr_in), &a));
  ASSERT_TRUE(t.lookup_or_add(mk(1), sizeof(sockaddr_in), &a2));
  EXPECT_EQ(a, a2);
  t.pin(a);
  ASSERT_TRUE(t.lookup_or_add(mk(2), sizeof(sockaddr_in), &b));
  ASSERT_TRUE(t.lookup_or_add(mk(3), sizeof(sockaddr_in), &c));  // evicts b, never the pinned a
  sockaddr_storage out;
  socklen_t len;
  EXPECT_FALSE(t.resolve(b, &out, &len));  // stale generation
  EXPECT_TRUE(t.resolve(a, &out, &len));
  EXPECT_TRUE(t.resolve(c, &out, &len));
  EXPECT_EQ(t.size(), 2u);
  t.pin(c);
  atp::PeerId d;
  EXPECT_FALSE(t.lookup_or_add(mk(4), sizeof(sockaddr_in), &d));  // all pinned: refused, not grown
  EXPECT_FALSE(t.resolve(0xdeadbeefULL, &out, &len));
}
