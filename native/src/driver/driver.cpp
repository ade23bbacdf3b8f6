// Linux UDP driver: see driver.hpp for the contract and docs/driver.md for the design.
#include "driver/driver.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
// epoll_pwait2 (Linux 5.11) is called through syscall(2): glibc wraps it only from 2.35 on, and the shipped
// library targets glibc 2.17 (docs/architecture.md, "The shipped native library"). 441 on every architecture
// (numbers after 403 are shared by all). Kernels without it return ENOSYS; the driver then uses a timerfd.
#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

namespace netapprox::driver {

namespace {

constexpr int kBatch = 64;           // recvmmsg / sendmmsg batch (buffers / messages)
constexpr int kMaxGsoSegments = 64;  // UDP_MAX_SEGMENTS on every kernel that has UDP GSO
constexpr size_t kMaxUdpPayload = 65507;
constexpr size_t kGroSlot = 65536;
constexpr int kRecvBatchesPerIteration = 64;
constexpr int kGroBuffersPerRecv = 1;
constexpr int kSendBatchesPerIteration = 8;

std::string errno_text(const char* what) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s: %s", what, strerror(errno));
  return buf;
}

bool is_v4_mapped(const sockaddr_storage& a) {
  if (a.ss_family != AF_INET6) return false;
  auto* s6 = reinterpret_cast<const sockaddr_in6*>(&a);
  return IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr);
}

// The kernel takes a struct __kernel_timespec (two 64-bit fields): struct timespec on the 64-bit targets built.
static_assert(sizeof(timespec) == 16, "epoll_pwait2 through syscall(2) assumes a 64-bit time_t");
int sys_epoll_pwait2(int epfd, epoll_event* events, int maxevents, const timespec* timeout) {
  return static_cast<int>(syscall(SYS_epoll_pwait2, epfd, events, maxevents, timeout, nullptr, 0));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// PeerTable

PeerTable::PeerTable(uint32_t capacity) : entries_(std::max<uint32_t>(capacity, 1)) {}

std::string PeerTable::key_of(const sockaddr_storage& addr, socklen_t len) {
  std::string k;
  if (addr.ss_family == AF_INET) {
    auto* s = reinterpret_cast<const sockaddr_in*>(&addr);
    k.push_back('4');
    k.append(reinterpret_cast<const char*>(&s->sin_addr), 4);
    k.append(reinterpret_cast<const char*>(&s->sin_port), 2);
  } else if (addr.ss_family == AF_INET6) {
    auto* s = reinterpret_cast<const sockaddr_in6*>(&addr);
    k.push_back('6');
    k.append(reinterpret_cast<const char*>(&s->sin6_addr), 16);
    k.append(reinterpret_cast<const char*>(&s->sin6_port), 2);
    k.append(reinterpret_cast<const char*>(&s->sin6_scope_id), sizeof s->sin6_scope_id);
  }
  return k;
}

bool PeerTable::slot_of(atp::PeerId id, uint32_t* slot) const {
  uint32_t s = static_cast<uint32_t>(id & 0xffffffffu);
  uint32_t gen = static_cast<uint32_t>(id >> 32);
  if (s >= entries_.size()) return false;
  const Entry& e = entries_[s];
  if (!e.valid || e.gen != gen) return false;
  *slot = s;
  return true;
}

bool PeerTable::lookup_or_add(const sockaddr_storage& addr, socklen_t len, atp::PeerId* out) {
  if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) return false;
  std::string key = key_of(addr, len);
  auto it = index_.find(key);
  if (it != index_.end()) {
    Entry& e = entries_[it->second];
    e.used = true;
    *out = (static_cast<uint64_t>(e.gen) << 32) | it->second;
    return true;
  }
  // Find a free slot, else recycle an unpinned one with the clock algorithm (two sweeps at most).
  const uint32_t n = static_cast<uint32_t>(entries_.size());
  uint32_t chosen = n;
  for (uint32_t step = 0; step < 2 * n; ++step) {
    uint32_t s = hand_;
    hand_ = (hand_ + 1) % n;
    Entry& e = entries_[s];
    if (!e.valid) {
      chosen = s;
      break;
    }
    if (e.pins > 0) continue;
    if (e.used) {
      e.used = false;
      continue;
    }
    chosen = s;
    break;
  }
  if (chosen == n) return false;
  Entry& e = entries_[chosen];
  if (e.valid) {
    index_.erase(key_of(e.addr, e.len));
    ++evictions_;
  }
  e.addr = addr;
  e.len = len;
  e.gen += 1;
  e.pins = 0;
  e.used = true;
  e.valid = true;
  index_[key] = chosen;
  *out = (static_cast<uint64_t>(e.gen) << 32) | chosen;
  return true;
}

bool PeerTable::resolve(atp::PeerId id, sockaddr_storage* addr, socklen_t* len) {
  uint32_t s;
  if (!slot_of(id, &s)) return false;
  Entry& e = entries_[s];
  e.used = true;
  *addr = e.addr;
  *len = e.len;
  return true;
}

void PeerTable::pin(atp::PeerId id) {
  uint32_t s;
  if (slot_of(id, &s)) entries_[s].pins++;
}

void PeerTable::unpin(atp::PeerId id) {
  uint32_t s;
  if (slot_of(id, &s) && entries_[s].pins > 0) entries_[s].pins--;
}

// ---------------------------------------------------------------------------------------------------------------
// Driver: construction and teardown

atp::TimeNs Driver::now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<atp::TimeNs>(ts.tv_sec) * 1'000'000'000ULL + static_cast<atp::TimeNs>(ts.tv_nsec);
}

Driver::Driver(const DriverConfig& cfg) : cfg_(cfg), peers_(cfg.max_peers) {}

Status Driver::create(const DriverConfig& cfg, std::unique_ptr<Driver>* out, std::string* err) {
  std::string dummy;
  if (!err) err = &dummy;
  if (!out) {
    *err = "out is null";
    return Status::kInvalidArgument;
  }
  out->reset();
  std::unique_ptr<Driver> d;
  try {
    d.reset(new Driver(cfg));
    Status st = d->init(err);
    if (st != Status::kOk) return st;  // d's destructor closes whatever init opened
  } catch (const std::bad_alloc&) {
    *err = "out of memory";
    return Status::kInternal;
  } catch (const std::exception& e) {
    *err = e.what();
    return Status::kInternal;
  }
  *out = std::move(d);
  return Status::kOk;
}

Status Driver::init(std::string* err) {
  if (cfg_.max_peers == 0 || cfg_.event_queue_capacity == 0) {
    *err = "max_peers and event_queue_capacity must be > 0";
    return Status::kInvalidArgument;
  }
  std::string bad = cfg_.engine.validate();
  if (!bad.empty()) {
    *err = "engine config: " + bad;
    return Status::kInvalidArgument;
  }
  if (cfg_.engine.max_datagram < 64 || cfg_.engine.max_datagram > kMaxUdpPayload) {
    *err = "engine config: max_datagram must be in [64, 65507] for UDP";
    return Status::kInvalidArgument;
  }

  // Bind address.
  sockaddr_storage bind_addr{};
  socklen_t bind_len = 0;
  {
    sockaddr_in s4{};
    sockaddr_in6 s6{};
    const std::string& a = cfg_.bind_address.empty() ? std::string("0.0.0.0") : cfg_.bind_address;
    if (inet_pton(AF_INET, a.c_str(), &s4.sin_addr) == 1) {
      s4.sin_family = AF_INET;
      s4.sin_port = htons(cfg_.bind_port);
      memcpy(&bind_addr, &s4, sizeof s4);
      bind_len = sizeof s4;
      family_ = AF_INET;
    } else if (inet_pton(AF_INET6, a.c_str(), &s6.sin6_addr) == 1) {
      s6.sin6_family = AF_INET6;
      s6.sin6_port = htons(cfg_.bind_port);
      memcpy(&bind_addr, &s6, sizeof s6);
      bind_len = sizeof s6;
      family_ = AF_INET6;
    } else {
      *err = "bind address is not a numeric IPv4/IPv6 address: " + a;
      return Status::kInvalidArgument;
    }
  }

  fd_ = socket(family_, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd_ < 0) {
    *err = errno_text("socket");
    return Status::kInternal;
  }
  if (family_ == AF_INET6) {
    int off = 0;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  }
  if (cfg_.socket_buffer_bytes > 0) {
    int b = cfg_.socket_buffer_bytes;
    if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &b, sizeof b) != 0)
      setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &b, sizeof b) != 0)
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &b, sizeof b);
  }
  if (bind(fd_, reinterpret_cast<sockaddr*>(&bind_addr), bind_len) != 0) {
    *err = errno_text("bind");
    return Status::kInvalidArgument;
  }
  sockaddr_storage local{};
  socklen_t llen = sizeof local;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &llen) == 0) {
    local_port_ = ntohs(local.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&local)->sin_port
                                                   : reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
  }

  // Offloads: probe by setting the options (UDP_SEGMENT 0 = no default segmentation, only per-send cmsgs).
  if (cfg_.enable_gso) {
    int zero = 0;
    gso_ = setsockopt(fd_, SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0;
  }
  if (cfg_.enable_gro) {
    int one = 1;
    gro_ = setsockopt(fd_, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
  }

  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) {
    *err = errno_text("epoll_create1");
    return Status::kInternal;
  }
  evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (evfd_ < 0) {
    *err = errno_text("eventfd");
    return Status::kInternal;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd_;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd_, &ev) != 0) {
    *err = errno_text("epoll_ctl(socket)");
    return Status::kInternal;
  }
  ev.data.fd = evfd_;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, evfd_, &ev) != 0) {
    *err = errno_text("epoll_ctl(eventfd)");
    return Status::kInternal;
  }
  // epoll_pwait2 (Linux 5.11) gives ns timeouts; otherwise a timerfd carries the precise deadline.
  {
    epoll_event tmp;
    timespec zero{0, 0};
    if (sys_epoll_pwait2(epfd_, &tmp, 1, &zero) < 0 && errno == ENOSYS) have_pwait2_ = false;
  }
  if (!have_pwait2_) {
    tfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (tfd_ < 0) {
      *err = errno_text("timerfd_create");
      return Status::kInternal;
    }
    ev.data.fd = tfd_;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, tfd_, &ev) != 0) {
      *err = errno_text("epoll_ctl(timerfd)");
      return Status::kInternal;
    }
  }

  rx_slot_ = gro_ ? kGroSlot : static_cast<size_t>(cfg_.engine.max_datagram) + 64;
  tx_slot_ = cfg_.engine.max_datagram;
  rx_buf_.assign(rx_slot_ * kBatch, 0);
  tx_buf_.assign(tx_slot_ * kBatch, 0);
  tx_.reserve(kBatch);

  engine_ = std::make_unique<atp::Engine>(cfg_.engine);
  if (cfg_.trace_epochs) engine_->set_trace_epochs(true);
  stats_.gso_enabled = gso_;
  stats_.gro_enabled = gro_;
  stats_.epoll_pwait2 = have_pwait2_;

  thread_ = std::thread([this] { run(); });
  return Status::kOk;
}

Driver::~Driver() { stop(); }

void Driver::stop() {
  std::lock_guard<std::mutex> stop_lk(stop_mu_);
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
    if (evfd_ >= 0) {
      uint64_t one = 1;
      (void)!write(evfd_, &one, sizeof one);
    }
  }
  events_cv_.notify_all();
  space_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lk(mu_);
  events_.clear();  // points into the engine
  engine_.reset();
  if (tfd_ >= 0) close(tfd_);
  if (evfd_ >= 0) close(evfd_);
  if (epfd_ >= 0) close(epfd_);
  if (fd_ >= 0) close(fd_);
  tfd_ = evfd_ = epfd_ = fd_ = -1;
}

void Driver::interrupt_waiters() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    ++interrupt_gen_;
  }
  events_cv_.notify_all();
  space_cv_.notify_all();
}

// ---------------------------------------------------------------------------------------------------------------
// Application API

void Driver::wake_locked() {
  if (sleeping_ && evfd_ >= 0) {
    sleeping_ = false;
    uint64_t one = 1;
    (void)!write(evfd_, &one, sizeof one);
  }
}

Status Driver::resolve(const std::string& host, uint16_t port, sockaddr_storage* addr, socklen_t* len) const {
  if (host.empty() || !addr || !len) return Status::kInvalidArgument;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  char portbuf[8];
  std::snprintf(portbuf, sizeof portbuf, "%u", static_cast<unsigned>(port));
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), portbuf, &hints, &res) != 0 || !res) return Status::kInvalidArgument;
  Status st = Status::kInvalidArgument;
  // Prefer an address of the socket's own family; on an IPv6 socket an IPv4 address becomes v4-mapped.
  for (int pass = 0; pass < 2 && st != Status::kOk; ++pass) {
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      if (pass == 0 && ai->ai_family != family_) continue;
      sockaddr_storage a{};
      if (family_ == AF_INET && ai->ai_family == AF_INET) {
        memcpy(&a, ai->ai_addr, sizeof(sockaddr_in));
        *len = sizeof(sockaddr_in);
      } else if (family_ == AF_INET6 && ai->ai_family == AF_INET6) {
        memcpy(&a, ai->ai_addr, sizeof(sockaddr_in6));
        *len = sizeof(sockaddr_in6);
      } else if (family_ == AF_INET6 && ai->ai_family == AF_INET) {
        auto* s4 = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
        sockaddr_in6 s6{};
        s6.sin6_family = AF_INET6;
        s6.sin6_port = s4->sin_port;
        s6.sin6_addr.s6_addr[10] = 0xff;
        s6.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&s6.sin6_addr.s6_addr[12], &s4->sin_addr, 4);
        memcpy(&a, &s6, sizeof s6);
        *len = sizeof s6;
      } else if (family_ == AF_INET && ai->ai_family == AF_INET6) {
        auto* s6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
        if (!IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) continue;
        sockaddr_in s4{};
        s4.sin_family = AF_INET;
        s4.sin_port = s6->sin6_port;
        memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
        memcpy(&a, &s4, sizeof s4);
        *len = sizeof s4;
      } else {
        continue;
      }
      *addr = a;
      st = Status::kOk;
      break;
    }
  }
  freeaddrinfo(res);
  return st;
}

Status Driver::open_session(atp::SessionId id, const uint8_t key[atp::kKeyBytes], const std::string& host,
                            uint16_t port, bool initiator) {
  sockaddr_storage a;
  socklen_t len;
  Status st = resolve(host, port, &a, &len);
  if (st != Status::kOk) return st;
  return open_session(id, key, reinterpret_cast<const sockaddr*>(&a), len, initiator);
}

Status Driver::open_session(atp::SessionId id, const uint8_t key[atp::kKeyBytes], const sockaddr* addr, socklen_t len,
                            bool initiator) {
  if (!key || !addr || len == 0 || len > sizeof(sockaddr_storage)) return Status::kInvalidArgument;
  if (addr->sa_family != family_) return Status::kInvalidArgument;
  sockaddr_storage a{};
  memcpy(&a, addr, len);
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  atp::PeerId peer;
  if (!peers_.lookup_or_add(a, len, &peer)) return Status::kLimitExceeded;
  Status st = engine_->open_session(id, key, peer, initiator, now_ns());
  if (st == Status::kOk) {
    unpin_session_peer_locked(id);  // a stale entry from a session the engine already dropped
    peers_.pin(peer);
    session_peers_[id] = peer;
    wake_locked();
  }
  return st;
}

void Driver::unpin_session_peer_locked(atp::SessionId id) {
  auto it = session_peers_.find(id);
  if (it != session_peers_.end()) {
    peers_.unpin(it->second);
    session_peers_.erase(it);
  }
}

Status Driver::close_session(atp::SessionId id) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  Status st = engine_->close_session(id, now_ns());
  unpin_session_peer_locked(id);
  wake_locked();
  return st;
}

Status Driver::set_peer(atp::SessionId id, const std::string& host, uint16_t port) {
  sockaddr_storage a;
  socklen_t len;
  Status st = resolve(host, port, &a, &len);
  if (st != Status::kOk) return st;
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  atp::PeerId peer;
  if (!peers_.lookup_or_add(a, len, &peer)) return Status::kLimitExceeded;
  st = engine_->set_peer(id, peer);
  if (st == Status::kOk) {
    unpin_session_peer_locked(id);
    peers_.pin(peer);
    session_peers_[id] = peer;
    wake_locked();
  }
  return st;
}

Status Driver::start_job(atp::SessionId s, const atp::JobSpec& spec) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  Status st = engine_->start_job(s, spec, now_ns());
  if (st == Status::kOk) wake_locked();
  return st;
}

Status Driver::submit(atp::SessionId s, atp::JobId j, uint32_t group_index, uint32_t index, const uint8_t* data,
                      size_t len) {
  if (!data && len > 0) return Status::kInvalidArgument;
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  Status st = engine_->submit(s, j, group_index, index, data, len, now_ns());
  if (st == Status::kOk) wake_locked();
  return st;
}

Status Driver::submit_wait(atp::SessionId s, atp::JobId j, uint32_t group_index, uint32_t index, const uint8_t* data,
                           size_t len, int timeout_ms) {
  if (!data && len > 0) return Status::kInvalidArgument;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t igen = interrupt_gen_;
  for (;;) {
    if (stopping_) return Status::kClosed;
    Status st = engine_->submit(s, j, group_index, index, data, len, now_ns());
    if (st != Status::kWouldBlock) {
      if (st == Status::kOk) wake_locked();
      return st;
    }
    if (timeout_ms == 0 || interrupt_gen_ != igen) return Status::kWouldBlock;
    const uint64_t gen = space_gen_;
    auto pred = [&] { return stopping_ || space_gen_ != gen || interrupt_gen_ != igen; };
    if (timeout_ms < 0) {
      space_cv_.wait(lk, pred);
    } else if (!space_cv_.wait_until(lk, deadline, pred)) {
      // One last try at the deadline.
      if (stopping_) return Status::kClosed;
      st = engine_->submit(s, j, group_index, index, data, len, now_ns());
      if (st == Status::kOk) wake_locked();
      return st;
    }
  }
}

size_t Driver::submit_batch(atp::SessionId s, atp::JobId j, const SubmitItem* items, size_t n, int timeout_ms,
                            Status* refused) {
  Status st = Status::kOk;
  size_t done = 0;
  if (n > 0 && !items) {
    st = Status::kInvalidArgument;
  } else {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    std::unique_lock<std::mutex> lk(mu_);
    const uint64_t igen = interrupt_gen_;
    atp::TimeNs now = now_ns();
    size_t unwoken = 0;       // accepted since the I/O thread was last woken
    size_t bytes_locked = 0;  // copied since the lock was last dropped
    bool last_try = false;    // the deadline passed: one more attempt, then give up
    while (done < n) {
      if (stopping_) {
        st = Status::kClosed;
        break;
      }
      const SubmitItem& it = items[done];
      st = (!it.data && it.len > 0) ? Status::kInvalidArgument
                                    : engine_->submit(s, j, it.group_index, it.index, it.data, it.len, now);
      if (st == Status::kOk) {
        ++done;
        ++unwoken;
        last_try = false;
        bytes_locked += it.len;
        if (bytes_locked >= kBatchLockBytes && done < n) {
          wake_locked();
          unwoken = 0;
          bytes_locked = 0;
          lk.unlock();
          lk.lock();
          now = now_ns();
        }
        continue;
      }
      if (st != Status::kWouldBlock || timeout_ms == 0 || last_try || interrupt_gen_ != igen) break;
      // Full: let the I/O thread send what this batch queued, then wait for space as submit_wait does.
      if (unwoken) wake_locked();
      unwoken = 0;
      bytes_locked = 0;
      const uint64_t gen = space_gen_;
      auto pred = [&] { return stopping_ || space_gen_ != gen || interrupt_gen_ != igen; };
      if (timeout_ms < 0) {
        space_cv_.wait(lk, pred);
      } else if (!space_cv_.wait_until(lk, deadline, pred)) {
        last_try = true;
      }
      now = now_ns();
    }
    if (unwoken) wake_locked();
  }
  if (done == n) st = Status::kOk;
  if (refused) *refused = st;
  return done;
}

Status Driver::update_msr(atp::SessionId s, atp::JobId j, const std::vector<std::pair<uint32_t, double>>& msrs) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  Status st = engine_->update_msr(s, j, msrs, now_ns());
  if (st == Status::kOk) wake_locked();
  return st;
}

Status Driver::cancel_job(atp::SessionId s, atp::JobId j) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  Status st = engine_->cancel_job(s, j, now_ns());
  wake_locked();
  return st;
}

Status Driver::release(uint64_t handle) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return Status::kClosed;
  Status st = engine_->release(handle);
  if (st == Status::kOk) wake_locked();  // freed receive buffer may open the advertised window
  return st;
}

int64_t Driver::release_batch(const uint64_t* handles, size_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return static_cast<int64_t>(Status::kClosed);
  int64_t released = 0;
  for (size_t i = 0; i < n; ++i)
    if (engine_->release(handles[i]) == Status::kOk) ++released;
  if (released > 0) wake_locked();
  return released;
}

void Driver::move_events_locked() {
  bool moved = false;
  // Each event is moved from the engine straight into its slot here (no temporary, no allocation per event).
  while (events_.size() < cfg_.event_queue_capacity && engine_->poll_event(&events_.prepare_back())) {
    events_.commit_back();
    moved = true;
    ++io_events_moved_;
  }
  if (moved) {
    events_cv_.notify_all();
    // A job or session that ended shows up as an event: wake producers blocked in submit_wait so they see
    // kNotFound/kClosed at once instead of waiting out their timeout.
    ++space_gen_;
    space_cv_.notify_all();
  }
}

int Driver::wait_events_locked(std::unique_lock<std::mutex>& lk, int timeout_ms) {
  const uint64_t igen = interrupt_gen_;
  if (!stopping_) move_events_locked();
  if (events_.empty() && timeout_ms != 0 && !stopping_) {
    auto pred = [&] { return stopping_ || !events_.empty() || interrupt_gen_ != igen; };
    if (timeout_ms < 0) {
      events_cv_.wait(lk, pred);
    } else {
      events_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), pred);
    }
  }
  if (stopping_) return static_cast<int>(Status::kClosed);
  return events_.empty() ? 0 : 1;
}

void Driver::after_events_taken_locked() {
  move_events_locked();  // refill from the engine now that there is room
  wake_locked();         // the engine may be waiting for queue room
}

int Driver::poll_events(atp::Event* out, int max, int timeout_ms) {
  if (!out || max <= 0) return static_cast<int>(Status::kInvalidArgument);
  int i = 0;
  return visit_events(max, timeout_ms, [&](atp::Event& ev) { out[i++] = std::move(ev); });
}

atp::EngineStats Driver::engine_stats() {
  std::lock_guard<std::mutex> lk(mu_);
  if (!engine_) return atp::EngineStats{};
  return engine_->stats();
}

DriverStats Driver::driver_stats() {
  std::lock_guard<std::mutex> lk(mu_);
  DriverStats s = stats_;
  s.peer_evictions = peers_.evictions();
  s.events_moved = io_events_moved_;
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// I/O thread

size_t Driver::receive_batch(atp::TimeNs* now) {
  mmsghdr msgs[kBatch];
  iovec iov[kBatch];
  sockaddr_storage addrs[kBatch];
  alignas(cmsghdr) char ctrl[kBatch][CMSG_SPACE(sizeof(int)) * 2];
  for (int i = 0; i < kBatch; ++i) {
    iov[i].iov_base = rx_buf_.data() + i * rx_slot_;
    iov[i].iov_len = rx_slot_;
    msgs[i].msg_hdr.msg_name = &addrs[i];
    msgs[i].msg_hdr.msg_namelen = sizeof addrs[i];
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
    msgs[i].msg_hdr.msg_control = gro_ ? ctrl[i] : nullptr;
    msgs[i].msg_hdr.msg_controllen = gro_ ? sizeof ctrl[i] : 0;
    msgs[i].msg_hdr.msg_flags = 0;
    msgs[i].msg_len = 0;
  }
  // With GRO one buffer can hold up to 64 datagrams: take few buffers per call so that the transmit phase
  // (which is where the engine's ACKs leave) runs often enough - sparse ACKs look like loss to the sender.
  const int want = gro_ ? kGroBuffersPerRecv : kBatch;
  int n = recvmmsg(fd_, msgs, want, MSG_DONTWAIT, nullptr);
  io_.recv_syscalls++;
  if (n <= 0) {
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) io_.recv_errors++;
    return 0;
  }
  *now = now_ns();
  size_t fed = 0;
  for (int i = 0; i < n; ++i) {
    msghdr& h = msgs[i].msg_hdr;
    size_t len = msgs[i].msg_len;
    if (h.msg_flags & MSG_TRUNC) {
      io_.recv_truncated++;
      continue;
    }
    size_t seg = 0;
    if (gro_) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
          int v;
          memcpy(&v, CMSG_DATA(c), sizeof v);
          if (v > 0) seg = static_cast<size_t>(v);
        }
      }
    }
    if (seg == 0 || seg >= len) seg = len;
    if (seg < len) io_.gro_buffers++;
    const uint8_t* base = rx_buf_.data() + i * rx_slot_;
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_) return fed;
    atp::PeerId peer;
    if (!peers_.lookup_or_add(addrs[i], h.msg_namelen, &peer)) continue;
    for (size_t off = 0; off < len; off += seg) {
      size_t l = std::min(seg, len - off);
      engine_->on_datagram(base + off, l, peer, *now);
      io_.datagrams_received++;
      ++fed;
    }
  }
  return fed;
}

bool Driver::flush_pending(bool* blocked) {
  while (tx_head_ < tx_.size()) {
    mmsghdr msgs[kBatch];
    iovec iov[kBatch];
    uint32_t count[kBatch];  // datagrams per message
    alignas(cmsghdr) char ctrl[kBatch][CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint16_t))];
    int m = 0;
    size_t i = tx_head_;
    while (i < tx_.size() && m < kBatch) {
      const TxSlot& first = tx_[i];
      uint8_t* base = tx_buf_.data() + first.off;
      // Datagrams lie back to back in tx_buf_, so a run of equal-sized ones (full data packets, or bundles of
      // equal small messages), possibly ended by a shorter one, is one contiguous GSO message.
      uint32_t segs = 1;
      size_t total = first.len;
      if (gso_) {
        while (i + segs < tx_.size() && segs < static_cast<uint32_t>(kMaxGsoSegments)) {
          const TxSlot& nx = tx_[i + segs];
          const TxSlot& prev = tx_[i + segs - 1];
          if (prev.len != first.len) break;  // only the last segment may be shorter
          if (nx.len > first.len || nx.dscp != first.dscp || nx.addrlen != first.addrlen ||
              memcmp(&nx.addr, &first.addr, first.addrlen) != 0)
            break;
          if (total + nx.len > kMaxUdpPayload) break;
          total += nx.len;
          ++segs;
        }
      }
      iov[m].iov_base = base;
      iov[m].iov_len = total;
      msghdr& h = msgs[m].msg_hdr;
      h = msghdr{};
      h.msg_name = const_cast<sockaddr_storage*>(&first.addr);
      h.msg_namelen = first.addrlen;
      h.msg_iov = &iov[m];
      h.msg_iovlen = 1;
      size_t clen = 0;
      char* cb = ctrl[m];
      memset(cb, 0, sizeof ctrl[m]);
      h.msg_control = cb;
      h.msg_controllen = sizeof ctrl[m];
      cmsghdr* c = CMSG_FIRSTHDR(&h);
      if (first.dscp != 0) {
        int tos = static_cast<int>(first.dscp) << 2;
        bool v4 = family_ == AF_INET || is_v4_mapped(first.addr);
        c->cmsg_level = v4 ? IPPROTO_IP : IPPROTO_IPV6;
        c->cmsg_type = v4 ? IP_TOS : IPV6_TCLASS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &tos, sizeof tos);
        clen += CMSG_SPACE(sizeof(int));
        c = CMSG_NXTHDR(&h, c);
      }
      if (segs > 1) {
        uint16_t gs = static_cast<uint16_t>(first.len);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        memcpy(CMSG_DATA(c), &gs, sizeof gs);
        clen += CMSG_SPACE(sizeof(uint16_t));
      }
      h.msg_controllen = clen;
      if (clen == 0) h.msg_control = nullptr;
      count[m] = segs;
      ++m;
      i += segs;
    }
    int r = sendmmsg(fd_, msgs, m, MSG_DONTWAIT);
    io_.send_syscalls++;
    if (r > 0) {
      for (int k = 0; k < r; ++k) {
        tx_head_ += count[k];
        io_.datagrams_sent += count[k];
        if (count[k] > 1) io_.gso_sends++;
      }
      continue;
    }
    int e = errno;
    if (r < 0 && (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS)) {
      io_.send_eagain++;
      *blocked = true;
      return false;
    }
    if (r < 0 && e == EINTR) continue;
    if (count[0] > 1 && (e == EIO || e == EINVAL || e == EMSGSIZE || e == EOPNOTSUPP)) {
      // The device or path cannot take UDP GSO (no checksum offload, segment too big): stop using it.
      gso_ = false;
      continue;
    }
    // The kernel refused this message for good (e.g. unreachable destination): drop it, keep going.
    io_.send_errors += count[0];
    tx_head_ += count[0];
  }
  tx_.clear();
  tx_head_ = 0;
  tx_used_ = 0;
  return true;
}

size_t Driver::transmit_batch(atp::TimeNs now, bool* blocked) {
  size_t polled = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_) return 0;
    if (engine_->next_timeout() <= now) engine_->on_timeout(now);
    // tx_buf_ holds kBatch full datagrams, so there is always room for one more while tx_ has fewer entries.
    while (tx_.size() < static_cast<size_t>(kBatch)) {
      uint8_t* buf = tx_buf_.data() + tx_used_;
      atp::Transmit t{};
      if (!engine_->poll_transmit(now, buf, tx_slot_, &t)) break;
      ++polled;
      if (t.len == 0 || t.len > tx_slot_) continue;
      TxSlot s;
      if (!peers_.resolve(t.peer, &s.addr, &s.addrlen)) {
        io_.unknown_peer_transmits++;
        continue;
      }
      s.dscp = t.dscp & 0x3f;
      s.len = static_cast<uint32_t>(t.len);
      s.off = tx_used_;
      tx_used_ += t.len;
      tx_.push_back(s);
    }
    move_events_locked();
  }
  if (!tx_.empty()) flush_pending(blocked);
  return polled;
}

void Driver::sleep_until(atp::TimeNs deadline) {
  epoll_event evs[4];
  int n;
  atp::TimeNs now = now_ns();
  if (have_pwait2_) {
    timespec ts;
    timespec* tsp = nullptr;
    if (deadline != atp::kNever) {
      atp::TimeNs d = deadline > now ? deadline - now : 0;
      ts.tv_sec = static_cast<time_t>(d / 1'000'000'000ULL);
      ts.tv_nsec = static_cast<long>(d % 1'000'000'000ULL);
      tsp = &ts;
    }
    n = sys_epoll_pwait2(epfd_, evs, 4, tsp);
  } else {
    itimerspec its{};
    if (deadline != atp::kNever) {
      atp::TimeNs d = deadline > now ? deadline : now + 1;
      its.it_value.tv_sec = static_cast<time_t>(d / 1'000'000'000ULL);
      its.it_value.tv_nsec = static_cast<long>(d % 1'000'000'000ULL);
    }
    timerfd_settime(tfd_, TFD_TIMER_ABSTIME, &its, nullptr);
    n = epoll_wait(epfd_, evs, 4, -1);
  }
  for (int i = 0; i < n; ++i) {
    if (evs[i].data.fd == evfd_) {
      uint64_t v;
      while (read(evfd_, &v, sizeof v) > 0) {
      }
      io_.wakeups++;
    } else if (evs[i].data.fd == tfd_ && tfd_ >= 0) {
      uint64_t v;
      while (read(tfd_, &v, sizeof v) > 0) {
      }
    }
  }
}

void Driver::run() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // precise wake-ups for pacing
  prctl(PR_SET_NAME, "atp-io", 0, 0, 0);
  bool blocked = false;
  for (;;) {
    io_.loop_iterations++;
    atp::TimeNs now = now_ns();
    bool did_work = false;

    // 1. Receive, letting the engine answer (ACKs) after every batch.
    for (int b = 0; b < kRecvBatchesPerIteration; ++b) {
      size_t fed = receive_batch(&now);
      if (fed == 0) break;
      did_work = true;
      if (!blocked && b + 1 < kRecvBatchesPerIteration) transmit_batch(now_ns(), &blocked);
    }

    // 2. Retry output the kernel refused earlier.
    if (blocked) {
      blocked = false;
      if (!flush_pending(&blocked)) {
        // still full: wait for EPOLLOUT below
      } else {
        did_work = true;
      }
    }

    // 3. Timers and transmit.
    if (!blocked) {
      for (int b = 0; b < kSendBatchesPerIteration && !blocked; ++b) {
        now = now_ns();
        size_t polled = transmit_batch(now, &blocked);
        if (polled > 0) did_work = true;
        if (polled < static_cast<size_t>(kBatch)) break;
      }
    }
    if (blocked != want_out_) {
      epoll_event ev{};
      ev.events = EPOLLIN | (blocked ? static_cast<uint32_t>(EPOLLOUT) : 0u);
      ev.data.fd = fd_;
      epoll_ctl(epfd_, EPOLL_CTL_MOD, fd_, &ev);
      want_out_ = blocked;
    }

    // 4. Publish, decide how long to sleep.
    atp::TimeNs deadline;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stopping_) break;
      move_events_locked();
      stats_ = io_;
      stats_.gso_enabled = gso_;
      stats_.gro_enabled = gro_;
      stats_.epoll_pwait2 = have_pwait2_;
      if (did_work) {
        ++space_gen_;
        space_cv_.notify_all();
      }
      deadline = engine_->next_timeout();
      now = now_ns();
      if (blocked) deadline = std::max(deadline == atp::kNever ? 0 : deadline, now + 1'000'000);
      if (did_work || (!blocked && deadline != atp::kNever && deadline <= now + cfg_.spin_threshold_ns)) {
        continue;  // more to do now, or a deadline too close to sleep for: spin
      }
      sleeping_ = true;
    }
    sleep_until(deadline);
    {
      std::lock_guard<std::mutex> lk(mu_);
      sleeping_ = false;
    }
  }
}

}  // namespace netapprox::driver
