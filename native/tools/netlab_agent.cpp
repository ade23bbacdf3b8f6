// netlab-agent: the per-host workload agent of benchmarks/netlab (docs/netlab.md).
//
//   netlab-agent serve --bind ADDR [--port P] [--no-payload-auth]
//       Receiver of every scheme: ATP sessions (UDP port P, rendezvous on TCP port P), TCP transfers (TCP port P)
//       and UDP-blast datagrams (UDP port P+1). Runs until SIGINT/SIGTERM.
//   netlab-agent run --schedule FILE --out FILE.jsonl [--mode full|paper|base|rc|rc_mrdf|fixtlr|fixprio]
//       [--rate-gbps R] [--trace FILE.csv] [--no-payload-auth] [--timeout SEC] [--start-at UNIX_S]
//       [--small-job-class0-bytes B]   (EngineConfig::small_job_class0_bytes, docs/protocol.md section 11)
//       Replays a schedule of jobs (several concurrent jobs, each with its own messages' sizes and production
//       times, to any peer) with one scheme per job; writes one JSON line per job. --start-at puts the
//       schedule's time 0 at that wall-clock time (seconds since the epoch), so that the agents of many hosts
//       replay one schedule in step; default: 1.2 s after the agent starts.
//
// Schedule format (text; written by benchmarks/netlab/workload.py):
//   job ID START_US SCHEME DST_IP PORT MSR N TRACE
//   <N message sizes in bytes>
//   <N production offsets in microseconds from the job's start, non-decreasing>
// SCHEME: atp | tcp_exact | tcp_ss | tcp_es | udp.
//   atp        one ATP job (one group, MSR), messages submitted when produced; JCT = start -> sender's report.
//   tcp_exact  every message over one TCP connection as produced; JCT = start -> receiver's ack of the last.
//   tcp_ss     SampleSend: a uniform sample of ceil(MSR*N) messages (seeded by the job id), sent as produced.
//   tcp_es     EarlySend: every message as produced; the receiver acks once ceil(MSR*N) arrived, the sender
//              stops (closes the connection) at the ack. JCT = start -> ack.
//   udp        UDP-blast: every message as produced, datagrams paced at --rate-gbps, no retransmission; the
//              receiver counts complete messages. JCT = start -> end marker after the last datagram.
// Every job's connection / ATP session is set up 1 s before the job starts, outside its JCT (control-plane
// sessions and TCP connection pools exist before a job in the product). Data-path timing is C++ so that Python never
// sits on it (2 cores).
#include <arpa/inet.h>
#include <getopt.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "control_path_json.hpp"
#include "core/crypto.hpp"
#include "driver/driver.hpp"
#include "perf_json.hpp"
#include "socket_io.hpp"

namespace atp = netapprox::atp;
namespace drv = netapprox::driver;
using atp::Status;
using netapprox::perf::Json;

namespace {

using netapprox::tools::read_full;
using netapprox::tools::write_full;

constexpr const char* kSecret = "netlab-agent-secret";
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
void sleep_until_s(double t) {
  double d = t - now_s();
  if (d > 0) std::this_thread::sleep_for(std::chrono::duration<double>(d));
}

bool put_u32(int fd, uint32_t v) {
  v = htonl(v);
  return write_full(fd, &v, 4);
}
bool get_u32(int fd, uint32_t* v, int timeout_ms) {
  if (!read_full(fd, v, 4, timeout_ms)) return false;
  *v = ntohl(*v);
  return true;
}
int tcp_connect(const std::string& host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) return -1;
  for (int attempt = 0; attempt < 50; ++attempt) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // SYN lost under congestion / server starting
  }
  return -1;
}
std::string peer_ip(int fd) {
  sockaddr_in a{};
  socklen_t l = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &l) != 0) return "";
  char buf[INET_ADDRSTRLEN] = {0};
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return buf;
}
// The master key; each session's key and id come from it and both ends' nonces (crypto::derive_session), so no
// two sessions share a key (docs/security.md).
void derive_key(uint8_t key[32]) {
  const std::string in = std::string("netlab-agent/key|") + kSecret;
  crypto_generichash(key, 32, reinterpret_cast<const uint8_t*>(in.data()), in.size(), nullptr, 0);
}
constexpr size_t kNonceBytes = atp::crypto::kSessionNonceBytes;
uint32_t target_of(double msr, uint32_t n) {
  double t = std::ceil(msr * double(n) - 1e-9);
  return static_cast<uint32_t>(std::clamp(t, 0.0, double(n)));
}

struct Options {
  std::string cmd, bind = "0.0.0.0", schedule, out, trace, mode = "full";
  uint16_t port = 7480;
  double rate_gbps = 1.0;
  double reaction_speed = 0;  // m of eq. 2; 0 = the engine default
  bool payload_auth = true;
  int timeout_s = 120;
  double start_at = 0;  // wall-clock time (s since the epoch) of the schedule's time 0; 0 = 1.2 s from now
  uint32_t udp_payload = 1400;
  int64_t small_job_class0_bytes = -1;  // EngineConfig::small_job_class0_bytes; -1 = the engine default
};

drv::DriverConfig make_config(const Options& o, const std::string& bind, uint16_t port, bool trace) {
  drv::DriverConfig c;
  c.bind_address = bind;
  c.bind_port = port;
  c.engine.line_rate_bps = static_cast<uint64_t>(o.rate_gbps * 1e9);
  if (o.reaction_speed > 0) c.engine.reaction_speed = o.reaction_speed;
  c.engine.mode = atp::parse_mode(o.mode).value_or(atp::Mode::kFull);
  c.engine.payload_auth = o.payload_auth;
  if (o.small_job_class0_bytes >= 0) c.engine.small_job_class0_bytes = uint64_t(o.small_job_class0_bytes);
  c.engine.peer_death_timeout = 10'000'000'000ULL;
  c.socket_buffer_bytes = 8 << 20;
  c.trace_epochs = trace;
  return c;
}

std::string stats_line(drv::Driver& d) {
  drv::DriverStats s = d.driver_stats();
  atp::EngineStats e = d.engine_stats();
  char b[768];
  std::snprintf(b, sizeof b,
                "udp_sent=%llu udp_received=%llu send_eagain=%llu send_errors=%llu gso=%d gro=%d | engine in=%llu "
                "out=%llu dropped: auth=%llu malformed=%llu replay_or_old=%llu no_buffer=%llu unknown_job=%llu "
                "unknown_session=%llu events_dropped=%llu",
                (unsigned long long)s.datagrams_sent, (unsigned long long)s.datagrams_received,
                (unsigned long long)s.send_eagain, (unsigned long long)s.send_errors, int(s.gso_enabled),
                int(s.gro_enabled), (unsigned long long)e.datagrams_in, (unsigned long long)e.datagrams_out,
                (unsigned long long)e.dropped_auth, (unsigned long long)e.dropped_malformed,
                (unsigned long long)e.dropped_replay_or_old, (unsigned long long)e.dropped_no_buffer,
                (unsigned long long)e.dropped_unknown_job, (unsigned long long)e.dropped_unknown_session,
                (unsigned long long)e.events_dropped);
  return b;
}

// =================================================================================================================
// server

struct UdpJob {
  uint32_t n = 0;
  std::vector<uint16_t> frags;   // fragments received per message
  std::vector<uint16_t> nfrags;  // expected (from the datagrams)
  uint64_t datagrams = 0;
};

class Server {
 public:
  explicit Server(const Options& o) : o_(o) {}

  int run() {
    std::string err;
    if (drv::Driver::create(make_config(o_, o_.bind, o_.port, false), &d_, &err) != Status::kOk) {
      std::fprintf(stderr, "netlab-agent serve: %s\n", err.c_str());
      return 1;
    }
    derive_key(key_);
    std::thread pump([this] { pump_events(); });
    std::thread udp([this] { udp_loop(); });
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(o_.port);
    inet_pton(AF_INET, o_.bind.c_str(), &a.sin_addr);
    if (bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(lfd, 256) != 0) {
      std::fprintf(stderr, "netlab-agent serve: listen %s:%u: %s\n", o_.bind.c_str(), o_.port, strerror(errno));
      g_stop = true;
    } else {
      std::fprintf(stderr, "[serve] %s port %u: ATP (udp %u), TCP (tcp %u), UDP-blast (udp %u)\n", o_.bind.c_str(),
                   o_.port, o_.port, o_.port, o_.port + 1);
    }
    std::vector<std::thread> conns;
    while (!g_stop) {
      pollfd pf{lfd, POLLIN, 0};
      if (poll(&pf, 1, 200) <= 0) continue;
      int cfd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (cfd < 0) continue;
      int one2 = 1;
      setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one2, sizeof one2);
      conns.emplace_back([this, cfd] {
        handle(cfd);
        close(cfd);
      });
    }
    for (auto& t : conns) t.join();
    stop_ = true;
    pump.join();
    udp.join();
    close(lfd);
    std::fprintf(stderr, "[serve] stats: %s\n", stats_line(*d_).c_str());
    return 0;
  }

 private:
  struct State {
    std::shared_ptr<const atp::JobReport> report;
    Status error = Status::kOk;
  };

  void pump_events() {
    atp::Event evs[256];
    while (!stop_) {
      int n = d_->poll_events(evs, 256, 100);
      if (n < 0) break;
      for (int i = 0; i < n; ++i) {
        atp::Event& e = evs[i];
        if (e.type == atp::EventType::kMessage) {
          d_->release(e.handle);
        } else if (e.type == atp::EventType::kJobDone && e.report && !e.report->is_sender) {
          std::lock_guard<std::mutex> lk(mu_);
          sessions_[e.session].report = e.report;
          cv_.notify_all();
        } else if (e.type == atp::EventType::kSessionError) {
          std::lock_guard<std::mutex> lk(mu_);
          sessions_[e.session].error = e.status;
          cv_.notify_all();
        }
        e = atp::Event{};
      }
    }
  }

  void udp_loop() {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int buf = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(o_.port + 1);
    inet_pton(AF_INET, o_.bind.c_str(), &a.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      std::fprintf(stderr, "[serve] udp bind: %s\n", strerror(errno));
      return;
    }
    std::vector<uint8_t> b(65536);
    while (!stop_) {
      pollfd pf{fd, POLLIN, 0};
      if (poll(&pf, 1, 100) <= 0) continue;
      for (;;) {
        ssize_t r = recv(fd, b.data(), b.size(), MSG_DONTWAIT);
        if (r < 12) break;
        uint32_t token, msg;
        uint16_t frag, nfrag;
        memcpy(&token, b.data(), 4);
        memcpy(&msg, b.data() + 4, 4);
        memcpy(&frag, b.data() + 8, 2);
        memcpy(&nfrag, b.data() + 10, 2);
        std::lock_guard<std::mutex> lk(mu_);
        auto it = udp_jobs_.find(token);
        if (it == udp_jobs_.end() || msg >= it->second.n) continue;
        it->second.frags[msg]++;
        it->second.nfrags[msg] = nfrag;
        it->second.datagrams++;
      }
    }
    close(fd);
  }

  void handle(int cfd) {
    char magic[4];
    if (!read_full(cfd, magic, 4, 10'000)) return;
    if (!memcmp(magic, "ATP2", 4)) {  // initiator nonce, client UDP port; answered 'K' + responder nonce
      uint8_t b[kNonceBytes + 2];
      if (!read_full(cfd, b, sizeof b, 10'000)) return;
      uint16_t uport;
      memcpy(&uport, b + kNonceBytes, 2);
      uint8_t reply[1 + kNonceBytes];
      randombytes_buf(reply + 1, kNonceBytes);
      atp::crypto::SessionSecrets secrets;
      atp::crypto::derive_session(key_, b, reply + 1, &secrets);
      const atp::SessionId sid = secrets.session_id;
      Status st = d_->open_session(sid, secrets.key, peer_ip(cfd), ntohs(uport), false);
      reply[0] = st == Status::kOk ? 'K' : 'E';
      write_full(cfd, reply, st == Status::kOk ? sizeof reply : 1);
      if (st != Status::kOk) return;
      std::shared_ptr<const atp::JobReport> rep;
      Status err = Status::kOk;
      {
        std::unique_lock<std::mutex> lk(mu_);
        double deadline = now_s() + o_.timeout_s;
        while (!g_stop && now_s() < deadline) {
          auto& s = sessions_[sid];
          if (s.report) {
            rep = s.report;
            break;
          }
          if (s.error != Status::kOk) {
            err = s.error;
            break;
          }
          lk.unlock();
          pollfd p{cfd, POLLIN, 0};
          bool hung = poll(&p, 1, 0) > 0;
          lk.lock();
          if (hung) break;
          cv_.wait_for(lk, std::chrono::milliseconds(20));
        }
      }
      std::string js = "{}";
      if (rep) {
        Json j;
        j.begin_object();
        j.str("status", atp::status_name(rep->status)).uinteger("messages", rep->messages);
        j.uinteger("delivered", rep->delivered).uinteger("lost", rep->lost).num("measured_loss", rep->measured_loss);
        j.num("jct_ms", double(rep->finished - rep->started) / 1e6);
        uint32_t target = 0;
        for (const auto& g : rep->groups) target += g.target;
        j.uinteger("target", target);
        netapprox::perf::ControlPath::write_receiver(j, *rep);
        j.end_object();
        js = j.text();
      } else {
        js = std::string("{\"status\":\"") + atp::status_name(err) + "\"}";
      }
      put_u32(cfd, static_cast<uint32_t>(js.size()));
      write_full(cfd, js.data(), js.size());
      char c;
      pollfd p{cfd, POLLIN, 0};
      poll(&p, 1, 5'000);
      (void)!recv(cfd, &c, 1, 0);
      d_->close_session(sid);
      std::lock_guard<std::mutex> lk(mu_);
      sessions_.erase(sid);
    } else if (!memcmp(magic, "TCP2", 4)) {
      uint32_t job, n, k;
      if (!get_u32(cfd, &job, 10'000) || !get_u32(cfd, &n, 10'000) || !get_u32(cfd, &k, 10'000)) return;
      std::vector<uint8_t> buf(1 << 18);
      uint32_t got = 0;
      bool acked = false;
      if (k == 0) {
        uint8_t a = 'A';
        write_full(cfd, &a, 1);
        acked = true;
      }
      while (got < n && !g_stop) {
        uint32_t len;
        if (!get_u32(cfd, &len, o_.timeout_s * 1000)) break;
        while (len > 0) {
          ssize_t rd = recv(cfd, buf.data(), std::min<size_t>(len, buf.size()), 0);
          if (rd < 0 && errno == EINTR) continue;
          if (rd <= 0) return;
          len -= static_cast<uint32_t>(rd);
        }
        ++got;
        if (!acked && got >= k) {
          uint8_t a = 'A';
          write_full(cfd, &a, 1);
          acked = true;
        }
      }
      // EarlySend: drain until the sender hangs up.
      while (!g_stop && recv(cfd, buf.data(), buf.size(), 0) > 0) {
      }
    } else if (!memcmp(magic, "UDP2", 4)) {
      uint32_t token, n;
      if (!get_u32(cfd, &token, 10'000) || !get_u32(cfd, &n, 10'000)) return;
      {
        std::lock_guard<std::mutex> lk(mu_);
        UdpJob j;
        j.n = n;
        j.frags.assign(n, 0);
        j.nfrags.assign(n, 0);
        udp_jobs_[token] = std::move(j);
      }
      uint8_t r = 'K';
      write_full(cfd, &r, 1);
      uint8_t e;
      bool ok = read_full(cfd, &e, 1, o_.timeout_s * 1000);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // stragglers still in the switch queue
      uint32_t delivered = 0;
      {
        std::lock_guard<std::mutex> lk(mu_);
        auto& j = udp_jobs_[token];
        for (uint32_t i = 0; i < j.n; ++i)
          if (j.nfrags[i] > 0 && j.frags[i] >= j.nfrags[i]) ++delivered;
        udp_jobs_.erase(token);
      }
      if (ok) put_u32(cfd, delivered);
    }
  }

  const Options& o_;
  std::unique_ptr<drv::Driver> d_;
  uint8_t key_[32];
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<atp::SessionId, State> sessions_;
  std::unordered_map<uint32_t, UdpJob> udp_jobs_;
};

// =================================================================================================================
// client: replays a schedule

struct JobSpecLine {
  uint32_t id = 0;
  double start_s = 0;
  std::string scheme, dst;
  uint16_t port = 0;
  double msr = 1;
  uint32_t n = 0;
  bool trace = false;
  std::vector<uint32_t> sizes;
  std::vector<double> offsets_s;
};

struct AtpWaitT {
  std::shared_ptr<const atp::JobReport> report;
  Status error = Status::kOk;
  double t_done = 0, t0 = 0, t0_engine = 0;
  uint32_t job_id = 0;
  bool trace = false;
};

struct JobResult {
  std::string status = "ok";
  double jct_ms = 0;
  uint32_t sent = 0, target = 0, delivered = 0, lost = 0;
  uint64_t bytes_sent = 0, retrans = 0, packets = 0, epochs = 0;
  double rx_loss = 0, tx_loss = 0;
  std::vector<double> time_in_class;
  netapprox::perf::ControlPath control;  // ATP: the sender report's control-path counters (0 for other schemes)
  // set-up done before the schedule (see Client::run)
  int cfd = -1, fd = -1;
  atp::SessionId sid = 0;
  std::shared_ptr<AtpWaitT> wait;
  std::vector<char> send_it;
  uint32_t k = 0, token = 0;
};

bool load_schedule(const std::string& path, std::vector<JobSpecLine>* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string kw;
    ss >> kw;
    if (kw != "job") return false;
    JobSpecLine j;
    double start_us;
    int tr;
    ss >> j.id >> start_us >> j.scheme >> j.dst >> j.port >> j.msr >> j.n >> tr;
    if (!ss || j.n == 0) return false;
    j.start_s = start_us / 1e6;
    j.trace = tr != 0;
    std::string l2, l3;
    if (!std::getline(f, l2) || !std::getline(f, l3)) return false;
    std::istringstream s2(l2), s3(l3);
    j.sizes.resize(j.n);
    j.offsets_s.resize(j.n);
    for (uint32_t i = 0; i < j.n; ++i) {
      double us;
      s2 >> j.sizes[i];
      s3 >> us;
      j.offsets_s[i] = us / 1e6;
    }
    if (!s2 || !s3) return false;
    out->push_back(std::move(j));
  }
  return true;
}

class Client {
 public:
  explicit Client(const Options& o) : o_(o) {}

  int run() {
    std::vector<JobSpecLine> jobs;
    if (!load_schedule(o_.schedule, &jobs)) {
      std::fprintf(stderr, "netlab-agent run: cannot parse schedule %s\n", o_.schedule.c_str());
      return 2;
    }
    bool need_atp = false, trace = false;
    for (auto& j : jobs) {
      need_atp |= j.scheme == "atp";
      trace |= j.trace;
    }
    if (need_atp) {
      std::string err;
      if (drv::Driver::create(make_config(o_, "0.0.0.0", 0, trace), &d_, &err) != Status::kOk) {
        std::fprintf(stderr, "netlab-agent run: %s\n", err.c_str());
        return 1;
      }
      derive_key(key_);
      events_ = std::thread([this] { pump_events(); });
    }
    if (!o_.trace.empty()) {
      trace_f_ = std::fopen(o_.trace.c_str(), "w");
      if (trace_f_)
        std::fprintf(trace_f_,
                     "job,t_s,tlr,loss,rate_bps,priority_class,delivered_bps,acked,lost,srtt_ms,app_limited\n");
    }
    out_f_ = std::fopen(o_.out.c_str(), "w");
    if (!out_f_) {
      std::fprintf(stderr, "netlab-agent run: cannot write %s\n", o_.out.c_str());
      return 1;
    }
    // Each job's connection / ATP session is set up kPrepareS before the job starts and is not part of its JCT:
    // in the product the control plane's sessions (and a TCP baseline's connection pool) exist before a job, so
    // a job never waits for a handshake - which, through a congested bottleneck, can cost a 1 s SYN timeout.
    // Not earlier than that: an ATP session that stays idle for more than the engine's peer-death timeout
    // (10 s here) before its job starts is declared dead as soon as the job starts (see docs/netlab-results.md).
    constexpr double kPrepareS = 1.0;
    std::vector<std::unique_ptr<JobResult>> pre(jobs.size());
    for (auto& p : pre) p = std::make_unique<JobResult>();
    t_base_ = now_s() + kPrepareS + 0.2;
    if (o_.start_at > 0) {
      const double wall = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      t_base_ = now_s() + (o_.start_at - wall);
      if (o_.start_at - wall < kPrepareS)
        std::fprintf(stderr,
                     "netlab-agent run: --start-at is %.3f s away, less than the %.1f s set-up lead; the "
                     "first jobs start late\n",
                     o_.start_at - wall, kPrepareS);
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < jobs.size(); ++i) {
      threads.emplace_back([this, &jobs, &pre, i] {
        const JobSpecLine& j = jobs[i];
        JobResult& r = *pre[i];
        sleep_until_s(t_base_ + j.start_s - kPrepareS);
        prepare(j, &r);
        sleep_until_s(t_base_ + j.start_s);
        double t0 = now_s();
        if (r.status != "ok") {
          // set-up failed: reported as such
        } else if (j.scheme == "atp")
          run_atp(j, t0, r);
        else if (j.scheme == "tcp_exact" || j.scheme == "tcp_ss" || j.scheme == "tcp_es")
          run_tcp(j, t0, r);
        else if (j.scheme == "udp")
          run_udp(j, t0, r);
        else
          r.status = "unknown scheme";
        write_result(j, r, t0);
      });
    }
    for (auto& t : threads) t.join();
    if (d_) {
      stop_events_ = true;
      events_.join();
      std::fprintf(stderr, "[run] stats: %s\n", stats_line(*d_).c_str());
    }
    std::fclose(out_f_);
    if (trace_f_) std::fclose(trace_f_);
    return 0;
  }

 private:
  void pump_events() {
    atp::Event evs[256];
    while (!stop_events_) {
      int n = d_->poll_events(evs, 256, 50);
      if (n < 0) break;
      for (int i = 0; i < n; ++i) {
        atp::Event& e = evs[i];
        std::lock_guard<std::mutex> lk(mu_);
        auto it = waits_.find(e.session);
        if (e.type == atp::EventType::kJobDone && e.report && e.report->is_sender && it != waits_.end()) {
          it->second->report = e.report;
          it->second->t_done = now_s();
          cv_.notify_all();
        } else if (e.type == atp::EventType::kSessionError && it != waits_.end()) {
          it->second->error = e.status;
          cv_.notify_all();
        } else if (e.type == atp::EventType::kEpoch && it != waits_.end() && it->second->trace && trace_f_) {
          double t = double(e.epoch.at) / 1e9 - it->second->t0_engine;
          std::fprintf(trace_f_, "%u,%.6f,%.5f,%.5f,%.0f,%d,%.0f,%llu,%llu,%.3f,%d\n", it->second->job_id, t,
                       e.epoch.tlr, e.epoch.loss, e.epoch.rate_bps, e.epoch.priority_class, e.epoch.delivered_bps,
                       (unsigned long long)e.epoch.acked, (unsigned long long)e.epoch.lost, double(e.epoch.srtt) / 1e6,
                       e.epoch.app_limited ? 1 : 0);
        } else if (e.type == atp::EventType::kMessage) {
          d_->release(e.handle);
        }
        e = atp::Event{};
      }
    }
  }

  void prepare(const JobSpecLine& j, JobResult* r) {
    r->target = target_of(j.msr, j.n);
    if (j.scheme == "atp")
      prepare_atp(j, *r);
    else if (j.scheme == "tcp_exact" || j.scheme == "tcp_ss" || j.scheme == "tcp_es")
      prepare_tcp(j, *r);
    else if (j.scheme == "udp")
      prepare_udp(j, *r);
  }

  void prepare_atp(const JobSpecLine& j, JobResult& r) {
    int cfd = tcp_connect(j.dst, j.port);
    if (cfd < 0) {
      r.status = "connect failed";
      return;
    }
    uint8_t hello[4 + kNonceBytes + 2] = {'A', 'T', 'P', '2'};
    randombytes_buf(hello + 4, kNonceBytes);
    uint16_t pbe = htons(d_->local_port());
    memcpy(hello + 4 + kNonceBytes, &pbe, 2);
    uint8_t reply[1 + kNonceBytes] = {0};
    if (!write_full(cfd, hello, sizeof hello) || !read_full(cfd, reply, sizeof reply, 10'000) || reply[0] != 'K') {
      close(cfd);
      r.status = "rendezvous failed";
      return;
    }
    atp::crypto::SessionSecrets secrets;
    atp::crypto::derive_session(key_, hello + 4, reply + 1, &secrets);
    const atp::SessionId sid = secrets.session_id;
    auto w = std::make_shared<AtpWaitT>();
    w->job_id = j.id;
    w->trace = j.trace;
    {
      std::lock_guard<std::mutex> lk(mu_);
      waits_[sid] = w;
    }
    Status st = d_->open_session(sid, secrets.key, j.dst, j.port, true);
    if (st != Status::kOk) {
      r.status = std::string("open_session: ") + atp::status_name(st);
      close(cfd);
      return;
    }
    r.cfd = cfd;
    r.sid = sid;
    r.wait = w;
  }

  void run_atp(const JobSpecLine& j, double t0, JobResult& r) {
    int cfd = r.cfd;
    atp::SessionId sid = r.sid;
    auto w = r.wait;
    {
      std::lock_guard<std::mutex> lk(mu_);
      w->t0 = t0;
      w->t0_engine = double(drv::Driver::now_ns()) / 1e9;
    }
    const atp::JobId job = 1;
    Status st = d_->start_job(sid, atp::JobSpec{job, {atp::GroupSpec{0, j.n, j.msr}}, true});
    if (st != Status::kOk) {
      r.status = std::string("start: ") + atp::status_name(st);
      close(cfd);
      return;
    }
    uint32_t maxsz = *std::max_element(j.sizes.begin(), j.sizes.end());
    std::vector<uint8_t> buf(std::max<uint32_t>(maxsz, 4));
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 131 + 7);
    auto finished = [&] {
      std::lock_guard<std::mutex> lk(mu_);
      return w->report != nullptr || w->error != Status::kOk;
    };
    for (uint32_t i = 0; i < j.n && !g_stop; ++i) {
      sleep_until_s(t0 + j.offsets_s[i]);
      if (finished()) break;
      memcpy(buf.data(), &i, 4);
      for (;;) {
        st = d_->submit_wait(sid, job, 0, i, buf.data(), j.sizes[i], 100);
        if (st != Status::kWouldBlock || finished() || g_stop) break;
      }
      if (st != Status::kOk) break;
      r.sent++;
      r.bytes_sent += j.sizes[i];
    }
    {
      std::unique_lock<std::mutex> lk(mu_);
      double deadline = t0 + o_.timeout_s;
      while (!w->report && w->error == Status::kOk && !g_stop && now_s() < deadline)
        cv_.wait_for(lk, std::chrono::milliseconds(50));
    }
    if (w->report) {
      r.jct_ms = (w->t_done - t0) * 1e3;
      const auto& rep = *w->report;
      if (rep.status != Status::kOk) r.status = atp::status_name(rep.status);
      r.retrans = rep.packets_retransmitted;
      r.packets = rep.packets_sent;
      r.epochs = rep.epochs;
      r.tx_loss = rep.measured_loss;
      r.bytes_sent = rep.bytes_sent;
      for (int k = 0; k < atp::kNumPriorityClasses; ++k) r.time_in_class.push_back(double(rep.time_in_class[k]) / 1e6);
      r.delivered = rep.delivered;
      r.lost = rep.lost;
      r.control = netapprox::perf::ControlPath::of(rep);
    } else {
      r.status = w->error != Status::kOk ? std::string("session: ") + atp::status_name(w->error) : "timeout";
      r.jct_ms = (now_s() - t0) * 1e3;
    }
    // The receiver's report (authoritative deliveries).
    uint32_t l;
    if (get_u32(cfd, &l, 3'000) && l < (1u << 20)) {
      std::string js(l, '\0');
      if (read_full(cfd, js.data(), l, 3'000)) {
        auto num = [&](const char* key, double* v) {
          auto p = js.find(std::string("\"") + key + "\"");
          if (p == std::string::npos) return false;
          p = js.find(':', p);
          if (p == std::string::npos) return false;
          *v = std::strtod(js.c_str() + p + 1, nullptr);
          return true;
        };
        double v;
        if (num("delivered", &v)) r.delivered = static_cast<uint32_t>(v);
        if (num("lost", &v)) r.lost = static_cast<uint32_t>(v);
        if (num("measured_loss", &v)) r.rx_loss = v;
        if (num("announces_received", &v)) {
          r.control.has_rx = true;
          r.control.rx_announces_received = static_cast<uint64_t>(v);
          if (num("announces_duplicate", &v)) r.control.rx_announces_duplicate = static_cast<uint64_t>(v);
          if (num("announces_acked", &v)) r.control.rx_announces_acked = static_cast<uint64_t>(v);
          if (num("early_data_packets", &v)) r.control.rx_early_data_packets = static_cast<uint64_t>(v);
          if (num("start_to_running_ns", &v)) r.control.rx_start_to_running_ns = static_cast<uint64_t>(v);
          if (num("started_ns", &v) && r.control.started_ns)
            r.control.rx_first_packet_delay_ns = int64_t(v) - int64_t(r.control.started_ns);
        }
        rx_report_ok_ = true;
      }
    }
    d_->close_session(sid);
    {
      std::lock_guard<std::mutex> lk(mu_);
      waits_.erase(sid);
    }
    close(cfd);
  }

  void prepare_tcp(const JobSpecLine& j, JobResult& r) {
    std::vector<char>& send_it = r.send_it;
    send_it.assign(j.n, 1);
    uint32_t k = j.n;  // receiver acks after k messages
    if (j.scheme == "tcp_ss") {
      std::vector<uint32_t> idx(j.n);
      for (uint32_t i = 0; i < j.n; ++i) idx[i] = i;
      std::mt19937_64 rng(0x5eed0000ULL + j.id);
      std::shuffle(idx.begin(), idx.end(), rng);
      std::fill(send_it.begin(), send_it.end(), 0);
      for (uint32_t i = 0; i < r.target; ++i) send_it[idx[i]] = 1;
      k = r.target;
    } else if (j.scheme == "tcp_es") {
      k = r.target;
    }
    uint32_t n_send = static_cast<uint32_t>(std::count(send_it.begin(), send_it.end(), 1));
    int fd = tcp_connect(j.dst, j.port);
    if (fd < 0) {
      r.status = "connect failed";
      return;
    }
    write_full(fd, "TCP2", 4);
    put_u32(fd, j.id);
    put_u32(fd, n_send);
    put_u32(fd, k);
    r.fd = fd;
    r.k = k;
  }

  void run_tcp(const JobSpecLine& j, double t0, JobResult& r) {
    const int fd = r.fd;
    const uint32_t k = r.k;
    const std::vector<char>& send_it = r.send_it;
    std::atomic<bool> acked{false};
    std::atomic<double> t_ack{0};
    std::thread reader([&] {
      uint8_t a = 0;
      if (read_full(fd, &a, 1, o_.timeout_s * 1000) && a == 'A') {
        t_ack = now_s();
        acked = true;
      }
      shutdown(fd, SHUT_RDWR);  // unblocks the writer (EarlySend stops here)
    });
    uint32_t maxsz = *std::max_element(j.sizes.begin(), j.sizes.end());
    std::vector<uint8_t> buf(4 + size_t(maxsz));
    for (size_t i = 4; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 131 + 7);
    for (uint32_t i = 0; i < j.n && !acked && !g_stop; ++i) {
      if (!send_it[i]) continue;
      sleep_until_s(t0 + j.offsets_s[i]);
      if (acked) break;
      uint32_t be = htonl(j.sizes[i]);
      memcpy(buf.data(), &be, 4);
      if (!write_full(fd, buf.data(), 4 + size_t(j.sizes[i]))) break;
      r.sent++;
      r.bytes_sent += j.sizes[i];
    }
    reader.join();
    tcp_info ti{};
    socklen_t tl = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0) {
      r.retrans = ti.tcpi_total_retrans;
      r.packets = ti.tcpi_segs_out;
    }
    close(fd);
    if (acked) {
      r.jct_ms = (t_ack - t0) * 1e3;
      r.delivered = k;  // at least k arrived (in order) when the receiver acked
    } else {
      r.status = "tcp transfer failed";
      r.jct_ms = (now_s() - t0) * 1e3;
    }
    r.lost = j.n - r.delivered;
    r.rx_loss = double(r.lost) / j.n;
  }

  void prepare_udp(const JobSpecLine& j, JobResult& r) {
    int cfd = tcp_connect(j.dst, j.port);
    if (cfd < 0) {
      r.status = "connect failed";
      return;
    }
    uint32_t token = (static_cast<uint32_t>(getpid()) << 16) ^ j.id;
    write_full(cfd, "UDP2", 4);
    put_u32(cfd, token);
    put_u32(cfd, j.n);
    uint8_t k;
    if (!read_full(cfd, &k, 1, 10'000)) {
      close(cfd);
      r.status = "rendezvous failed";
      return;
    }
    r.cfd = cfd;
    r.token = token;
  }

  void run_udp(const JobSpecLine& j, double t0, JobResult& r) {
    const int cfd = r.cfd;
    const uint32_t token = r.token;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int sb = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof sb);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(j.port + 1);
    inet_pton(AF_INET, j.dst.c_str(), &a.sin_addr);
    connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    std::vector<uint8_t> dg(12 + o_.udp_payload, 0xab);
    const double bps = o_.rate_gbps * 1e9;
    double next = now_s();
    for (uint32_t i = 0; i < j.n && !g_stop; ++i) {
      sleep_until_s(t0 + j.offsets_s[i]);
      uint32_t sz = j.sizes[i];
      uint16_t nfrag = static_cast<uint16_t>(std::max<uint32_t>(1, (sz + o_.udp_payload - 1) / o_.udp_payload));
      next = std::max(next, now_s());
      for (uint16_t f = 0; f < nfrag; ++f) {
        uint32_t len = std::min<uint32_t>(o_.udp_payload, sz - uint32_t(f) * o_.udp_payload);
        if (sz == 0) len = 0;
        memcpy(dg.data(), &token, 4);
        memcpy(dg.data() + 4, &i, 4);
        memcpy(dg.data() + 8, &f, 2);
        memcpy(dg.data() + 10, &nfrag, 2);
        sleep_until_s(next);  // pace at the host's line rate
        if (send(fd, dg.data(), 12 + len, 0) > 0) r.packets++;
        next += double(12 + len + 28 + 14) * 8 / bps;
        r.bytes_sent += len;
      }
      r.sent++;
    }
    sleep_until_s(next);
    double t_end = now_s();
    uint8_t e = 'E';
    write_full(cfd, &e, 1);
    uint32_t delivered = 0;
    if (!get_u32(cfd, &delivered, 10'000)) r.status = "no udp report";
    close(cfd);
    close(fd);
    r.jct_ms = (t_end - t0) * 1e3;
    r.delivered = delivered;
    r.lost = j.n - delivered;
    r.rx_loss = double(r.lost) / j.n;
  }

  void write_result(const JobSpecLine& j, const JobResult& r, double t0) {
    uint64_t total = 0;
    for (auto s : j.sizes) total += s;
    Json js;
    js.begin_object();
    js.uinteger("job", j.id).str("scheme", j.scheme).str("atp_mode", j.scheme == "atp" ? o_.mode : "");
    js.str("status", r.status).num("msr", j.msr).uinteger("messages", j.n).uinteger("job_bytes", total);
    js.num("start_s", t0 - t_base_).num("production_ms", j.offsets_s.back() * 1e3);
    js.num("jct_ms", r.jct_ms).uinteger("target", r.target).uinteger("sent", r.sent);
    js.uinteger("delivered", r.delivered).uinteger("lost", r.lost);
    js.num("measured_loss", r.rx_loss).num("sender_packet_loss", r.tx_loss);
    js.boolean("met_msr", r.status == "ok" && r.delivered >= r.target);
    js.uinteger("bytes_sent", r.bytes_sent).uinteger("packets", r.packets).uinteger("retransmissions", r.retrans);
    js.uinteger("epochs", r.epochs);
    r.control.write(js);
    js.begin_array("time_in_class_ms");
    for (double v : r.time_in_class) js.num(nullptr, v);
    js.end_array();
    js.end_object();
    std::lock_guard<std::mutex> lk(out_mu_);
    std::fprintf(out_f_, "%s\n", js.text().c_str());
    std::fflush(out_f_);
  }

  const Options& o_;
  std::unique_ptr<drv::Driver> d_;
  uint8_t key_[32];
  std::thread events_;
  std::atomic<bool> stop_events_{false};
  std::mutex mu_, out_mu_;
  std::condition_variable cv_;
  std::map<atp::SessionId, std::shared_ptr<AtpWaitT>> waits_;
  FILE* out_f_ = nullptr;
  FILE* trace_f_ = nullptr;
  double t_base_ = 0;
  std::atomic<bool> rx_report_ok_{false};
};

void usage(FILE* f) {
  std::fprintf(
      f,
      "netlab-agent serve --bind ADDR [--port P] [--no-payload-auth]\n"
      "netlab-agent run --schedule FILE --out FILE.jsonl [--mode full|paper|base|rc|rc_mrdf|fixtlr|fixprio]\n"
      "                 [--rate-gbps R] [--reaction-speed M] [--trace FILE.csv] [--no-payload-auth] [--timeout SEC]\n"
      "                 [--start-at UNIX_S] [--small-job-class0-bytes B]\n"
      "See the header of native/tools/netlab_agent.cpp and docs/netlab.md.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (sodium_init() < 0) return 1;
  Options o;
  o.cmd = argv[1];
  enum { kBind = 256, kPort, kSchedule, kOut, kTrace, kMode, kRate, kNoAuth, kTimeout, kReaction, kStartAt, kSmallJob };
  static const option longopts[] = {{"bind", required_argument, nullptr, kBind},
                                    {"port", required_argument, nullptr, kPort},
                                    {"schedule", required_argument, nullptr, kSchedule},
                                    {"out", required_argument, nullptr, kOut},
                                    {"trace", required_argument, nullptr, kTrace},
                                    {"mode", required_argument, nullptr, kMode},
                                    {"rate-gbps", required_argument, nullptr, kRate},
                                    {"reaction-speed", required_argument, nullptr, kReaction},
                                    {"no-payload-auth", no_argument, nullptr, kNoAuth},
                                    {"timeout", required_argument, nullptr, kTimeout},
                                    {"start-at", required_argument, nullptr, kStartAt},
                                    {"small-job-class0-bytes", required_argument, nullptr, kSmallJob},
                                    {nullptr, 0, nullptr, 0}};
  optind = 2;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
    switch (c) {
      case kBind: o.bind = optarg; break;
      case kPort: o.port = static_cast<uint16_t>(std::atoi(optarg)); break;
      case kSchedule: o.schedule = optarg; break;
      case kOut: o.out = optarg; break;
      case kTrace: o.trace = optarg; break;
      case kMode:
        if (!atp::parse_mode(optarg)) {
          std::fprintf(stderr, "netlab-agent: bad --mode\n");
          return 2;
        }
        o.mode = optarg;
        break;
      case kRate: o.rate_gbps = std::atof(optarg); break;
      case kReaction: o.reaction_speed = std::atof(optarg); break;
      case kNoAuth: o.payload_auth = false; break;
      case kTimeout: o.timeout_s = std::atoi(optarg); break;
      case kStartAt: o.start_at = std::atof(optarg); break;
      case kSmallJob: o.small_job_class0_bytes = std::atoll(optarg); break;
      default: usage(stderr); return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (o.cmd == "serve") return Server(o).run();
  if (o.cmd == "run") {
    if (o.schedule.empty() || o.out.empty() || !(o.rate_gbps > 0)) {
      usage(stderr);
      return 2;
    }
    return Client(o).run();
  }
  usage(stderr);
  return 2;
}
