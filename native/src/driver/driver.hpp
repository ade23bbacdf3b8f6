// Linux UDP driver for the ATP core.
//
// One Driver owns one atp::Engine, one non-blocking UDP socket (IPv4, or IPv6 dual-stack when bound to an IPv6
// address), an epoll instance, an eventfd for wake-ups and exactly one I/O thread. The I/O thread is the only
// thread that does datagram I/O; application threads call the job API below, which takes the engine mutex for
// a short time and wakes the I/O thread through the eventfd when it is asleep.
//
// I/O loop (see docs/driver.md):
//   recvmmsg (batches of up to 64 buffers; with UDP_GRO a buffer may hold many datagrams, split by the
//   gso_size control message) -> engine.on_datagram for each datagram
//   -> engine.on_timeout when due -> engine.poll_transmit until it returns false (batches of up to 64)
//   -> sendmmsg, consecutive datagrams with the same peer, DSCP and size coalesced into one UDP GSO send
//      (UDP_SEGMENT control message) when the kernel supports it; DSCP per packet via IP_TOS / IPV6_TCLASS
//   -> engine events moved into the bounded application queue
//   -> sleep in epoll_pwait2 (ns timeout; timerfd when epoll_pwait2 is missing) until next_timeout(), or spin
//      when the deadline is closer than spin_threshold_ns.
//
// Errors are status codes; nothing here aborts on bad input or misuse.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/engine.hpp"
#include "core/ring.hpp"

namespace netapprox::driver {

using atp::Status;

struct DriverConfig {
  atp::EngineConfig engine;
  // Numeric address to bind. "0.0.0.0" (default) gives an IPv4 socket; an IPv6 address (e.g. "::") gives an
  // IPv6 socket that also reaches IPv4 peers through v4-mapped addresses (IPV6_V6ONLY off).
  std::string bind_address = "0.0.0.0";
  uint16_t bind_port = 0;                 // 0 = ephemeral, see local_port()
  bool enable_gso = true;                 // use UDP_SEGMENT when the kernel offers it
  bool enable_gro = true;                 // use UDP_GRO when the kernel offers it
  int socket_buffer_bytes = 8 << 20;      // SO_SNDBUF/SO_RCVBUF (FORCE variants tried first)
  uint32_t event_queue_capacity = 16384;  // application event queue bound
  uint32_t max_peers = 4096;              // PeerId table bound (addresses seen or configured)
  uint64_t spin_threshold_ns = 50'000;    // busy-poll instead of sleeping when a deadline is this close
  bool trace_epochs = false;
};

struct DriverStats {
  uint64_t loop_iterations = 0;
  uint64_t wakeups = 0;  // eventfd wake-ups consumed
  uint64_t recv_syscalls = 0;
  uint64_t send_syscalls = 0;
  uint64_t datagrams_received = 0;  // after GRO splitting
  uint64_t datagrams_sent = 0;      // after GSO segmentation (counted as handed to the kernel)
  uint64_t gro_buffers = 0;         // received buffers that carried more than one datagram
  uint64_t gso_sends = 0;           // messages sent with UDP_SEGMENT carrying more than one datagram
  uint64_t send_errors = 0;         // datagrams dropped because the kernel refused them
  uint64_t send_eagain = 0;         // times the socket send buffer was full
  uint64_t recv_errors = 0;
  uint64_t recv_truncated = 0;          // datagrams larger than the receive buffer (dropped)
  uint64_t peer_evictions = 0;          // unpinned peer-table entries recycled
  uint64_t unknown_peer_transmits = 0;  // engine asked to send to a PeerId the table no longer knows
  uint64_t events_moved = 0;
  bool gso_enabled = false;
  bool gro_enabled = false;
  bool epoll_pwait2 = false;
};

// Bounded PeerId <-> socket address table. PeerId = (generation << 32) | slot; a recycled slot gets a new
// generation, so a stale PeerId never reaches the wrong address. Entries configured by the application
// (open_session / set_peer) are pinned; addresses only seen on the wire are recycled (clock algorithm) when the
// table is full. Not thread-safe: the Driver protects it with its mutex.
class PeerTable {
 public:
  explicit PeerTable(uint32_t capacity);
  // Returns the id for addr, adding it when new; false only when the table is full of pinned entries.
  bool lookup_or_add(const sockaddr_storage& addr, socklen_t len, atp::PeerId* out);
  // Resolves an id; false when unknown or stale. Marks the entry as recently used.
  bool resolve(atp::PeerId id, sockaddr_storage* addr, socklen_t* len);
  void pin(atp::PeerId id);
  void unpin(atp::PeerId id);
  size_t size() const { return index_.size(); }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Entry {
    sockaddr_storage addr{};
    socklen_t len = 0;
    uint32_t gen = 0;
    uint32_t pins = 0;
    bool used = false;
    bool valid = false;
  };
  static std::string key_of(const sockaddr_storage& addr, socklen_t len);
  bool slot_of(atp::PeerId id, uint32_t* slot) const;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, uint32_t> index_;
  uint32_t hand_ = 0;
  uint64_t evictions_ = 0;
};

class Driver {
 public:
  // Creates the socket, the engine and starts the I/O thread. On failure returns an error and a message.
  static Status create(const DriverConfig& cfg, std::unique_ptr<Driver>* out, std::string* err);
  ~Driver();  // stops and joins the I/O thread, closes every fd, wakes every waiter
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  uint16_t local_port() const { return local_port_; }
  int address_family() const { return family_; }
  const DriverConfig& config() const { return cfg_; }

  // Resolves host (numeric or name) for this socket's family. kInvalidArgument when it does not resolve.
  Status resolve(const std::string& host, uint16_t port, sockaddr_storage* addr, socklen_t* len) const;

  Status open_session(atp::SessionId id, const uint8_t key[atp::kKeyBytes], const std::string& host, uint16_t port,
                      bool initiator);
  Status open_session(atp::SessionId id, const uint8_t key[atp::kKeyBytes], const sockaddr* addr, socklen_t len,
                      bool initiator);
  Status close_session(atp::SessionId id);
  Status set_peer(atp::SessionId id, const std::string& host, uint16_t port);

  Status start_job(atp::SessionId s, const atp::JobSpec& spec);
  Status submit(atp::SessionId s, atp::JobId j, uint32_t group_index, uint32_t index, const uint8_t* data, size_t len);
  // Like submit, but waits (up to timeout_ms; < 0 = forever) while the send buffer is full. kWouldBlock when
  // still full at the deadline; kClosed when the driver shuts down while waiting.
  Status submit_wait(atp::SessionId s, atp::JobId j, uint32_t group_index, uint32_t index, const uint8_t* data,
                     size_t len, int timeout_ms);
  // One message of submit_batch.
  struct SubmitItem {
    uint32_t group_index = 0;
    uint32_t index = 0;
    const uint8_t* data = nullptr;
    size_t len = 0;
  };
  // Submits items[0..n) of one job in order, as submit_wait would one by one, but under one lock and with one
  // clock read and one wake-up of the I/O thread per run of accepted items (the per-call cost of many small
  // submits). While the send buffer is full it wakes the I/O thread and waits for space until one deadline
  // shared by the batch (timeout_ms: 0 = never wait, < 0 = forever). The lock is dropped after every
  // kBatchLockBytes copied so that large batches do not keep the I/O thread from transmitting. Returns how many
  // items (a prefix) were accepted; *refused is the status of the first item not accepted (kOk when all were).
  size_t submit_batch(atp::SessionId s, atp::JobId j, const SubmitItem* items, size_t n, int timeout_ms,
                      Status* refused);
  static constexpr size_t kBatchLockBytes = 256 * 1024;
  Status update_msr(atp::SessionId s, atp::JobId j, const std::vector<std::pair<uint32_t, double>>& msrs);
  Status cancel_job(atp::SessionId s, atp::JobId j);
  Status release(uint64_t handle);
  // Releases n messages under one lock and with at most one wake-up of the I/O thread (the JNI binding hands back
  // a whole event batch at once). Returns how many were released (handles not known - already released, or of a
  // closed session - are skipped); kClosed (as a negative count) once the driver stopped.
  int64_t release_batch(const uint64_t* handles, size_t n);

  // Moves up to max events into out (returns how many). Waits up to timeout_ms (< 0 = forever, 0 = no wait)
  // for the first one. kMessage data stays valid until release(handle) or the driver is destroyed.
  int poll_events(atp::Event* out, int max, int timeout_ms);
  // The same, but hands each event to visit(atp::Event&) where it lies in the queue instead of moving it out (the
  // C API and JNI binding convert it straight into their own record: one copy per event). visit runs under the
  // driver's lock: it must be short and must not call into the driver.
  template <class Visit>
  int visit_events(int max, int timeout_ms, Visit&& visit) {
    std::unique_lock<std::mutex> lk(mu_);
    const int ready = wait_events_locked(lk, timeout_ms);
    if (ready <= 0) return ready;
    int n = 0;
    while (n < max && !events_.empty()) {
      visit(events_.front());
      events_.pop_front();
      ++n;
    }
    after_events_taken_locked();
    return n;
  }

  // Makes blocked poll_events / submit_wait callers return (used by close paths).
  void interrupt_waiters();
  // Stops the I/O thread, wakes every waiter, frees the engine and closes every fd. Idempotent; afterwards
  // every call returns kClosed. The destructor calls it. Must not be called from the I/O thread.
  void stop();

  atp::EngineStats engine_stats();
  DriverStats driver_stats();
  static atp::TimeNs now_ns();

 private:
  explicit Driver(const DriverConfig& cfg);
  Status init(std::string* err);
  void run();
  void wake_locked();         // caller holds mu_
  void move_events_locked();  // caller holds mu_
  // poll_events/visit_events: waits up to timeout_ms for an event; 1 when there is one, 0 on timeout or
  // interruption, kClosed once stopping.
  int wait_events_locked(std::unique_lock<std::mutex>& lk, int timeout_ms);
  void after_events_taken_locked();        // refills from the engine and wakes the I/O thread
  size_t receive_batch(atp::TimeNs* now);  // returns datagrams fed
  size_t transmit_batch(atp::TimeNs now, bool* blocked);
  bool flush_pending(bool* blocked);  // sends tx_ entries; false when the socket is full
  void sleep_until(atp::TimeNs deadline);
  void unpin_session_peer_locked(atp::SessionId id);

  DriverConfig cfg_;
  int family_ = AF_INET;
  int fd_ = -1, epfd_ = -1, evfd_ = -1, tfd_ = -1;
  uint16_t local_port_ = 0;
  bool gso_ = false, gro_ = false, have_pwait2_ = true;

  std::mutex stop_mu_;  // serialises stop()
  std::mutex mu_;       // protects engine_, peers_, events_, session_peers_, sleeping_, stats_
  std::condition_variable events_cv_;
  std::condition_variable space_cv_;
  std::unique_ptr<atp::Engine> engine_;
  PeerTable peers_;
  std::unordered_map<atp::SessionId, atp::PeerId> session_peers_;
  atp::Ring<atp::Event> events_;  // bounded by cfg_.event_queue_capacity
  bool sleeping_ = false;
  bool stopping_ = false;
  uint64_t space_gen_ = 0;  // bumped after every loop iteration that processed input (acks may free space)
  uint64_t interrupt_gen_ = 0;
  DriverStats stats_;  // snapshot published by the I/O thread under mu_
  uint64_t io_events_moved_ = 0;
  std::thread thread_;

  // I/O-thread-only state.
  struct TxSlot {
    sockaddr_storage addr;
    socklen_t addrlen;
    uint8_t dscp;
    uint32_t len;
    size_t off;  // where its bytes start in tx_buf_ (datagrams are packed back to back)
  };
  std::vector<uint8_t> rx_buf_, tx_buf_;
  size_t rx_slot_ = 0, tx_slot_ = 0;
  std::vector<TxSlot> tx_;  // polled from the engine, not yet accepted by the kernel
  size_t tx_head_ = 0;      // first unsent entry
  size_t tx_used_ = 0;      // bytes of tx_buf_ taken by tx_ entries
  bool want_out_ = false;   // EPOLLOUT registered
  DriverStats io_;          // counters owned by the I/O thread, copied into stats_ every iteration
};

}  // namespace netapprox::driver
