// atp-perf: an iperf-like tool for ATP, with a plain-TCP mode over the same path for comparisons in one run.
//
//   atp-perf server --bind ADDR --port P [--tcp] [--verify] [--max-connections N]
//   atp-perf client --connect ADDR --port P --messages N --size S --groups "1.0,0.8,0.5" [--mode full|paper|base|rc|
//                   rc_mrdf|fixtlr|fixprio] [--rate-gbps R] [--drop-out F --drop-in F --seed X] [--tcp]
//                   [--json FILE]
//   atp-perf demo   (both endpoints in one process over 127.0.0.1)
//
// There is no control plane: a master key is derived from --secret with BLAKE2b (crypto_generichash). The
// client picks a random nonce per run and sends it, its UDP port and the job's layout to the server over a tiny
// TCP rendezvous on the same port (perf_rendezvous.hpp); the server answers with a random nonce of its own, both
// sides derive the session's key and id from the master key and both nonces (crypto::derive_session: no two
// sessions share a key, a recorded session cannot be replayed), the server opens the session toward the client's
// address, and at the end it sends the receiver's report (and
// with --verify the verdict of perf_verify.hpp) back over that TCP connection. The server serves at most
// --max-connections connections at once (connection_slots.hpp). The TCP mode (magic "TCP1") streams the same
// N x S messages length-prefixed over one TCP connection and times first byte -> receiver's final acknowledgement.
#include <arpa/inet.h>
#include <getopt.h>
#include <linux/tcp.h>
#include <netdb.h>
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
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "connection_slots.hpp"
#include "control_path_json.hpp"
#include "driver/driver.hpp"
#include "perf_json.hpp"
#include "perf_rendezvous.hpp"
#include "perf_verify.hpp"
#include "socket_io.hpp"

namespace atp = netapprox::atp;
namespace drv = netapprox::driver;
namespace perf = netapprox::perf;
namespace tools = netapprox::tools;
using atp::Status;
using netapprox::perf::Json;

namespace {

using netapprox::tools::read_full;
using netapprox::tools::write_full;

constexpr const char* kDevSecret = "netapprox-dev-secret-CHANGE-ME";
constexpr uint16_t kDefaultPort = 7470;

std::atomic<bool> g_stop{false};

struct Options {
  std::string cmd;
  std::string bind = "0.0.0.0";
  std::string connect;
  uint16_t port = kDefaultPort;
  uint32_t messages = 0;
  uint32_t size = 0;
  std::vector<double> groups;
  std::string mode = "full";
  double rate_gbps = 10.0;
  double drop_out = 0, drop_in = 0;
  uint64_t seed = 1;
  bool tcp = false;
  bool mrdf = true;
  bool payload_auth = true;
  std::string json_file;
  std::string secret = kDevSecret;
  int timeout_s = 300;
  uint32_t max_datagram = 1472;
  uint64_t send_buffer_bytes = 0;  // 0: the engine's default
  bool verify = false;             // server: check every message (perf_verify.hpp)
  uint32_t max_connections = 64;   // server: connection threads at once
  uint32_t corrupt_every = 0;      // client, tests only: damage every n-th message so --verify must object
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void usage(FILE* f) {
  std::fprintf(f,
               "atp-perf: ATP throughput tool (iperf-like), with a plain-TCP mode for same-run comparisons\n"
               "\n"
               "  atp-perf server [--bind ADDR] [--port P] [--tcp] [--verify] [--max-connections N]\n"
               "      serves ATP (UDP port P) and TCP (TCP port P: rendezvous + --tcp transfers) until killed;\n"
               "      --tcp serves only TCP transfers. --port 0 picks a free port (printed on stderr).\n"
               "      --verify checks every delivered message: its id, group, length and bytes, no duplicate, no\n"
               "      message after its loss notice, exact groups in order, and the report against what arrived;\n"
               "      the verdict goes to the client (which fails on any error) and to stderr.\n"
               "      --max-connections N (default 64): TCP connections served at once; more are answered busy.\n"
               "      SIGINT/SIGTERM: stops and prints one summary line (connections, sessions, threads).\n"
               "  atp-perf client --connect ADDR [--port P] --messages N --size S [--groups \"1.0,0.8,...\"]\n"
               "      [--mode full|paper|base|rc|rc_mrdf|fixtlr|fixprio] [--rate-gbps R] [--no-mrdf]\n"
               "      [--drop-out F] [--drop-in F] [--seed X] [--tcp] [--json FILE] [--timeout SEC]\n"
               "      N messages of S bytes split evenly over the groups (one MSR each; default one group, MSR 1).\n"
               "      --drop-out/--drop-in inject loss on the client engine's outgoing/incoming datagrams.\n"
               "      --tcp sends the same messages length-prefixed over one TCP connection instead.\n"
               "      --test-corrupt-every K (tests only): damage the last byte of every K-th message before\n"
               "      submitting it, to show that a --verify server notices.\n"
               "  atp-perf demo [--messages N] [--size S] [--groups ...] [--drop-out F] [--json FILE]\n"
               "      both endpoints in this process over 127.0.0.1 (default: 2000 x 16 KiB, groups 1.0,0.8,0.5,\n"
               "      20%% injected loss on data packets). The demo always verifies what the receiver gets.\n"
               "\n"
               "Common: --secret STR (master key = BLAKE2b(STR), session keys = BLAKE2b(master; both ends' nonces);\n"
               "both ends must agree). The default secret is a fixed, PUBLIC development value (\"%s\"): anyone\n"
               "can forge packets for sessions keyed with it.\n"
               "Use --secret on untrusted networks. --max-datagram B (default 1472 = 1500-byte IPv4 MTU).\n"
               "--send-buffer-mb M: the sender's send buffer (default: the engine's, 64 MiB).\n"
               "--no-payload-auth: data tags cover headers only (sessions stay authenticated, payload integrity\n"
               "is not checked; both ends must say it, a receiver with payload auth on drops such packets).\n"
               "Progress goes to stderr every second; the JSON result goes to stdout (and --json FILE).\n",
               kDevSecret);
}

bool parse_groups(const std::string& s, std::vector<double>* out) {
  out->clear();
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    char* end = nullptr;
    double v = std::strtod(tok.c_str(), &end);
    if (tok.empty() || *end != '\0' || !(v >= 0 && v <= 1)) return false;
    out->push_back(v);
  }
  return !out->empty();
}

// ---- keys --------------------------------------------------------------------------------------------------------

// The long-term master key; every session's key comes from it and both ends' nonces (crypto::derive_session).
void derive_master_key(const std::string& secret, uint8_t key[32]) {
  const std::string in = "atp-perf/key/v1|" + secret;
  crypto_generichash(key, 32, reinterpret_cast<const uint8_t*>(in.data()), in.size(), nullptr, 0);
}

// ---- small socket helpers --------------------------------------------------------------------------------------

int tcp_connect(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

std::string peer_ip(int fd) {
  sockaddr_storage a{};
  socklen_t l = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &l) != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&a)->sin_addr, buf, sizeof buf);
  else
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr, buf, sizeof buf);
  std::string s = buf;
  if (s.rfind("::ffff:", 0) == 0 && s.find('.') != std::string::npos) s = s.substr(7);
  return s;
}

// ---- results -----------------------------------------------------------------------------------------------------

struct GroupResult {
  uint64_t group_id = 0;
  uint32_t size = 0;
  double msr = 1;
  uint32_t target = 0, delivered = 0, lost = 0;
};

struct Result {
  std::string transport = "atp";
  std::string mode;
  std::string status = "ok";
  uint32_t messages = 0, size = 0;
  double jct_ms = 0;
  uint64_t delivered_bytes = 0;
  double measured_loss = 0;
  uint64_t retransmissions = 0, packets_sent = 0;
  netapprox::perf::ControlPath control;  // ATP sender report: control-path counters
  std::vector<GroupResult> groups;
  std::string receiver_json;  // the server's receiver report, if any
  std::string verify_json;    // the receiver's --verify verdict, if it verified
  std::string driver_json;
};

std::vector<atp::GroupSpec> split_groups(uint32_t n, const std::vector<double>& msrs) {
  std::vector<atp::GroupSpec> g;
  const std::vector<uint32_t> sizes = perf::split_sizes(n, msrs.size());
  for (uint32_t i = 0; i < sizes.size(); ++i) g.push_back(atp::GroupSpec{i, sizes[i], msrs[i]});
  return g;
}

using perf::target_of;

std::string result_json(const Result& r) {
  Json j;
  j.begin_object();
  j.str("transport", r.transport).str("mode", r.mode).str("status", r.status);
  j.uinteger("messages", r.messages).uinteger("message_bytes", r.size);
  j.num("jct_ms", r.jct_ms);
  j.num("goodput_gbps", r.jct_ms > 0 ? double(r.delivered_bytes) * 8.0 / (r.jct_ms * 1e-3) / 1e9 : 0.0);
  j.uinteger("delivered_bytes", r.delivered_bytes);
  j.num("measured_loss", r.measured_loss);
  j.uinteger("retransmissions", r.retransmissions).uinteger("packets_sent", r.packets_sent);
  r.control.write(j);
  j.begin_array("groups");
  for (const auto& g : r.groups) {
    j.begin_object()
        .uinteger("group_id", g.group_id)
        .uinteger("size", g.size)
        .num("msr", g.msr)
        .uinteger("target", g.target)
        .uinteger("delivered", g.delivered)
        .uinteger("lost", g.lost)
        .end_object();
  }
  j.end_array();
  if (!r.receiver_json.empty())
    j.raw("receiver", r.receiver_json);
  else
    j.null("receiver");
  if (!r.verify_json.empty())
    j.raw("verify", r.verify_json);
  else
    j.null("verify");
  if (!r.driver_json.empty()) j.raw("driver", r.driver_json);
  j.end_object();
  return j.text();
}

void emit(const Result& r, const Options& o) {
  std::string s = result_json(r);
  std::printf("%s\n", s.c_str());
  std::fflush(stdout);
  if (!o.json_file.empty()) {
    std::ofstream f(o.json_file);
    f << s << "\n";
    if (!f) std::fprintf(stderr, "atp-perf: cannot write %s\n", o.json_file.c_str());
  }
}

std::string report_json(const atp::JobReport& rep) {
  Json j;
  j.begin_object();
  j.str("status", atp::status_name(rep.status)).uinteger("messages", rep.messages);
  j.uinteger("delivered", rep.delivered).uinteger("lost", rep.lost).num("measured_loss", rep.measured_loss);
  j.num("jct_ms", double(rep.finished - rep.started) / 1e6);
  netapprox::perf::ControlPath::of(rep).write(j);
  j.begin_array("groups");
  for (const auto& g : rep.groups)
    j.begin_object()
        .uinteger("group_id", g.group_id)
        .uinteger("size", g.size)
        .uinteger("target", g.target)
        .uinteger("delivered", g.delivered)
        .uinteger("lost", g.lost)
        .boolean("target_unreachable", g.target_unreachable)
        .end_object();
  j.end_array();
  j.end_object();
  return j.text();
}

std::string driver_json(drv::Driver& d) {
  drv::DriverStats s = d.driver_stats();
  atp::EngineStats e = d.engine_stats();
  Json j;
  j.begin_object();
  j.boolean("gso", s.gso_enabled).boolean("gro", s.gro_enabled);
  j.uinteger("send_syscalls", s.send_syscalls).uinteger("recv_syscalls", s.recv_syscalls);
  j.uinteger("udp_datagrams_sent", s.datagrams_sent).uinteger("udp_datagrams_received", s.datagrams_received);
  j.uinteger("gso_sends", s.gso_sends).uinteger("gro_buffers", s.gro_buffers);
  j.uinteger("send_eagain", s.send_eagain).uinteger("send_errors", s.send_errors);
  j.uinteger("dropped_fault_out", e.dropped_fault_out).uinteger("dropped_fault_in", e.dropped_fault_in);
  j.uinteger("dropped_auth", e.dropped_auth).uinteger("dropped_malformed", e.dropped_malformed);
  j.uinteger("dropped_replay_or_old", e.dropped_replay_or_old).uinteger("dropped_no_buffer", e.dropped_no_buffer);
  j.uinteger("dropped_unknown_job", e.dropped_unknown_job)
      .uinteger("dropped_unknown_session", e.dropped_unknown_session);
  j.uinteger("engine_datagrams_in", e.datagrams_in).uinteger("engine_datagrams_out", e.datagrams_out);
  j.end_object();
  return j.text();
}

drv::DriverConfig make_config(const Options& o, const std::string& bind, uint16_t port) {
  drv::DriverConfig c;
  c.bind_address = bind;
  c.bind_port = port;
  c.engine.line_rate_bps = static_cast<uint64_t>(o.rate_gbps * 1e9);
  c.engine.max_datagram = o.max_datagram;
  if (o.send_buffer_bytes) c.engine.send_buffer_bytes = o.send_buffer_bytes;
  c.engine.mode = atp::parse_mode(o.mode).value_or(atp::Mode::kFull);
  c.engine.faults.drop_outgoing = o.drop_out;
  c.engine.faults.drop_incoming = o.drop_in;
  c.engine.faults.seed = o.seed;
  c.engine.payload_auth = o.payload_auth;
  c.engine.peer_death_timeout = 10'000'000'000ULL;
  c.engine.max_messages_per_job = std::max<uint32_t>(c.engine.max_messages_per_job, o.messages);
  c.socket_buffer_bytes = 16 << 20;
  return c;
}

// ---- receiver side: drains a driver's events (server and demo) ---------------------------------------------------

// What a receiving session ended with: the receiver's report (or the error that ended it) and, when the session
// was verified, the verifier's verdict.
struct Outcome {
  std::shared_ptr<const atp::JobReport> report;
  Status error = Status::kOk;
  bool verified = false;
  uint64_t verify_errors = 0, verify_checked = 0;
  std::string verify_json, verify_first_error;
};

// Drains the driver's events on its own thread. Only sessions registered with expect() are tracked: events of
// any other session (one the server already gave up and forgot) are released and dropped, so an aborted job's
// report is never stored.
class ReceiverPump {
 public:
  explicit ReceiverPump(drv::Driver* d, bool verbose) : d_(d), verbose_(verbose) {
    thread_ = std::thread([this] { run(); });
  }
  ~ReceiverPump() {
    stop_ = true;
    thread_.join();
  }
  // Registers a session before it is opened; `verifier` (may be null) checks its messages and report.
  void expect(atp::SessionId sid, std::unique_ptr<perf::MessageVerifier> verifier) {
    auto st = std::make_shared<State>();
    st->verifier = std::move(verifier);
    std::lock_guard<std::mutex> lk(mu_);
    sessions_[sid] = std::move(st);
  }
  // Waits for the receiver report of session sid (or a session error, a timeout, or abort()).
  Outcome wait_report(atp::SessionId sid, double timeout_s, const std::function<bool()>& abort) {
    std::unique_lock<std::mutex> lk(mu_);
    Outcome out;
    double deadline = now_s() + timeout_s;
    for (;;) {
      auto it = sessions_.find(sid);
      if (it == sessions_.end()) {
        out.error = Status::kNotFound;
        return out;
      }
      State& st = *it->second;
      if (st.report || st.error != Status::kOk) {
        out.report = st.report;
        out.error = st.report ? Status::kOk : st.error;
        if (st.verifier) {  // the pump finished with the verifier before it stored the report (under mu_)
          out.verified = true;
          out.verify_errors = st.verifier->errors();
          out.verify_checked = st.verifier->checked();
          out.verify_first_error = st.verifier->first_error();
          out.verify_json = st.verifier->json();
        }
        return out;
      }
      if (now_s() >= deadline || g_stop || (abort && abort())) {
        out.error = Status::kClosed;
        return out;
      }
      cv_.wait_for(lk, std::chrono::milliseconds(100));
    }
  }
  void forget(atp::SessionId sid) {
    std::lock_guard<std::mutex> lk(mu_);
    sessions_.erase(sid);
  }
  size_t tracked() {
    std::lock_guard<std::mutex> lk(mu_);
    return sessions_.size();
  }
  uint64_t bytes() const { return bytes_; }
  uint64_t messages() const { return messages_; }

 private:
  struct State {
    std::shared_ptr<const atp::JobReport> report;
    Status error = Status::kOk;
    std::unique_ptr<perf::MessageVerifier> verifier;  // used by the pump thread only
  };
  std::shared_ptr<State> find(atp::SessionId sid) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = sessions_.find(sid);
    return it == sessions_.end() ? nullptr : it->second;
  }
  void run() {
    atp::Event evs[128];
    double last = now_s();
    uint64_t last_bytes = 0;
    while (!stop_) {
      int n = d_->poll_events(evs, 128, 100);
      if (n < 0) break;
      for (int i = 0; i < n; ++i) {
        atp::Event& e = evs[i];
        switch (e.type) {
          case atp::EventType::kMessage: {
            bytes_ += e.len;
            messages_++;
            auto st = find(e.session);
            if (st && st->verifier) st->verifier->on_message(e.job, e.message, e.group_id, e.data, e.len);
            d_->release(e.handle);
            break;
          }
          case atp::EventType::kMessageLost: {
            auto st = find(e.session);
            if (st && st->verifier) st->verifier->on_lost(e.job, e.message);
            break;
          }
          case atp::EventType::kJobStarted:
            if (verbose_)
              std::fprintf(stderr, "[server] job %u started on session %016llx\n", e.job,
                           static_cast<unsigned long long>(e.session));
            break;
          case atp::EventType::kJobDone: {
            if (!e.report || e.report->is_sender) break;
            auto st = find(e.session);
            if (!st) break;  // a session already given up: drop its report
            if (st->verifier) st->verifier->on_report(*e.report);
            std::lock_guard<std::mutex> lk(mu_);
            st->report = e.report;
            cv_.notify_all();
            break;
          }
          case atp::EventType::kSessionError: {
            std::lock_guard<std::mutex> lk(mu_);
            auto it = sessions_.find(e.session);
            if (it != sessions_.end()) it->second->error = e.status;
            cv_.notify_all();
            break;
          }
          default: break;
        }
        e = atp::Event{};
      }
      double t = now_s();
      if (verbose_ && t - last >= 1.0) {
        uint64_t b = bytes_;
        if (b != last_bytes)
          std::fprintf(stderr, "[server] received %.1f MiB total, %.2f Gbit/s\n", double(b) / 1048576.0,
                       double(b - last_bytes) * 8 / (t - last) / 1e9);
        last = t;
        last_bytes = b;
      }
    }
  }
  drv::Driver* d_;
  bool verbose_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> bytes_{0}, messages_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<atp::SessionId, std::shared_ptr<State>> sessions_;
  std::thread thread_;
};

// ---- sender side: one job over an open session -------------------------------------------------------------------

Result run_atp_sender(drv::Driver& d, atp::SessionId sid, const Options& o) {
  Result r;
  r.mode = o.mode;
  r.messages = o.messages;
  r.size = o.size;
  auto specs = split_groups(o.messages, o.groups);
  for (const auto& g : specs) {
    GroupResult gr;
    gr.group_id = g.group_id;
    gr.size = g.size;
    gr.msr = g.msr;
    gr.target = target_of(g.msr, g.size);
    r.groups.push_back(gr);
  }
  const atp::JobId job = 1;
  Status st = d.start_job(sid, atp::JobSpec{job, specs, o.mrdf});
  if (st != Status::kOk) {
    r.status = std::string("start_job: ") + atp::status_name(st);
    return r;
  }
  const double t0 = now_s();
  std::atomic<bool> done{false};
  std::atomic<double> t1{0};
  std::shared_ptr<const atp::JobReport> report;
  Status session_error = Status::kOk;
  std::atomic<uint32_t> submitted{0};

  std::thread events([&] {
    atp::Event evs[64];
    double last = now_s();
    uint64_t last_out = d.engine_stats().bytes_out;
    while (!done && !g_stop) {
      int n = d.poll_events(evs, 64, 50);
      if (n < 0) break;
      for (int i = 0; i < n; ++i) {
        atp::Event& e = evs[i];
        if (e.type == atp::EventType::kJobDone && e.session == sid && e.job == job && e.report && e.report->is_sender) {
          t1 = now_s();
          report = e.report;
          done = true;
        } else if (e.type == atp::EventType::kSessionError && e.session == sid) {
          session_error = e.status;
        } else if (e.type == atp::EventType::kMessage) {
          d.release(e.handle);
        }
        e = atp::Event{};
      }
      double t = now_s();
      if (t - last >= 1.0) {
        uint64_t out = d.engine_stats().bytes_out;
        std::fprintf(stderr, "[client] t=%.0fs submitted %u/%u messages, sending %.2f Gbit/s\n", t - t0,
                     submitted.load(), o.messages, double(out - last_out) * 8 / (t - last) / 1e9);
        last = t;
        last_out = out;
      }
      if (t - t0 > o.timeout_s) break;
    }
    if (!done) t1 = now_s();
    done = true;
  });

  std::vector<uint8_t> buf(o.size);
  perf::fill_message(buf.data(), buf.size(), 0);  // the pattern once; each message then only changes its id
  uint32_t id = 0;
  bool job_gone = false;  // the receiver ended the job early: it already holds every target
  for (uint32_t g = 0; g < specs.size() && !done && !job_gone; ++g) {
    for (uint32_t i = 0; i < specs[g].size && !done; ++i, ++id) {
      if (buf.size() >= 4) memcpy(buf.data(), &id, 4);
      const bool corrupt = o.corrupt_every && id % o.corrupt_every == o.corrupt_every - 1;
      if (corrupt) buf.back() ^= 0x5a;
      for (;;) {
        st = d.submit_wait(sid, job, g, i, buf.data(), buf.size(), 200);
        if (st != Status::kWouldBlock || done || g_stop) break;
      }
      if (corrupt) buf.back() ^= 0x5a;  // submit copied the damaged message; restore the pattern
      if (st == Status::kNotFound) {
        // Not an error: with MSR < 1 the receiver may end the job before the rest was submitted
        // (netapprox.h, na_job_submit_wait). Its report still comes; the event thread waits for it.
        job_gone = true;
        break;
      }
      if (st != Status::kOk) {
        if (!done) r.status = std::string("submit: ") + atp::status_name(st);
        done = true;
        break;
      }
      submitted = id + 1;
    }
  }
  events.join();
  r.jct_ms = (t1 - t0) * 1e3;
  if (!report) {
    if (r.status == "ok")
      r.status = session_error != Status::kOk ? std::string("session: ") + atp::status_name(session_error) : "timeout";
    return r;
  }
  if (report->status != Status::kOk) r.status = atp::status_name(report->status);
  for (size_t g = 0; g < report->groups.size() && g < r.groups.size(); ++g) {
    r.groups[g].target = report->groups[g].target;
    r.groups[g].delivered = report->groups[g].delivered;
    r.groups[g].lost = report->groups[g].lost;
    r.delivered_bytes += uint64_t(report->groups[g].delivered) * o.size;
  }
  r.measured_loss = report->measured_loss;
  r.retransmissions = report->packets_retransmitted;
  r.packets_sent = report->packets_sent;
  r.control = netapprox::perf::ControlPath::of(*report);
  return r;
}

void print_summary(const Result& r, FILE* f) {
  std::fprintf(f,
               "%s/%s: %s, JCT %.1f ms, goodput %.3f Gbit/s, measured loss %.2f%%, %llu packets, %llu "
               "retransmitted\n",
               r.transport.c_str(), r.mode.c_str(), r.status.c_str(), r.jct_ms,
               r.jct_ms > 0 ? double(r.delivered_bytes) * 8 / (r.jct_ms * 1e-3) / 1e9 : 0.0, r.measured_loss * 100,
               static_cast<unsigned long long>(r.packets_sent), static_cast<unsigned long long>(r.retransmissions));
  for (const auto& g : r.groups)
    std::fprintf(f, "  group %llu: MSR %.2f, %u messages, target %u, delivered %u, lost %u%s\n",
                 static_cast<unsigned long long>(g.group_id), g.msr, g.size, g.target, g.delivered, g.lost,
                 g.delivered >= g.target ? "" : "  << BELOW TARGET");
}

// ---- TCP mode ----------------------------------------------------------------------------------------------------

Result run_tcp_client(const Options& o) {
  Result r;
  r.transport = "tcp";
  r.mode = "tcp";
  r.messages = o.messages;
  r.size = o.size;
  auto specs = split_groups(o.messages, o.groups);
  int fd = tcp_connect(o.connect, o.port);
  if (fd < 0) {
    r.status = "connect failed";
    return r;
  }
  std::vector<uint8_t> msg(4 + size_t(o.size));
  uint32_t len_be = htonl(o.size);
  memcpy(msg.data(), &len_be, 4);
  for (size_t i = 4; i < msg.size(); ++i) msg[i] = static_cast<uint8_t>(i * 131 + 7);
  uint8_t hdr[12] = {'T', 'C', 'P', '1'};
  uint32_t n_be = htonl(o.messages), s_be = htonl(o.size);
  memcpy(hdr + 4, &n_be, 4);
  memcpy(hdr + 8, &s_be, 4);
  std::atomic<uint32_t> sent{0};
  std::atomic<bool> fin{false};
  const double t0 = now_s();
  std::thread progress([&] {
    double last = t0;
    uint32_t last_sent = 0;
    while (!fin) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      double t = now_s();
      if (t - last >= 1.0) {
        uint32_t s = sent;
        std::fprintf(stderr, "[client/tcp] t=%.0fs sent %u/%u messages, %.2f Gbit/s\n", t - t0, s, o.messages,
                     double(s - last_sent) * o.size * 8 / (t - last) / 1e9);
        last = t;
        last_sent = s;
      }
    }
  });
  bool ok = write_full(fd, hdr, sizeof hdr);
  for (uint32_t i = 0; ok && i < o.messages && !g_stop; ++i) {
    if (o.size >= 4) memcpy(msg.data() + 4, &i, 4);
    ok = write_full(fd, msg.data(), msg.size());
    sent = i + 1;
  }
  uint8_t ack = 0;
  ok = ok && read_full(fd, &ack, 1, o.timeout_s * 1000) && ack == 'A';
  const double t1 = now_s();
  fin = true;
  progress.join();
  tcp_info ti{};
  socklen_t tl = sizeof ti;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0) {
    r.retransmissions = ti.tcpi_total_retrans;
    r.packets_sent = ti.tcpi_segs_out;
  }
  close(fd);
  r.jct_ms = (t1 - t0) * 1e3;
  if (!ok) r.status = "tcp transfer failed";
  for (const auto& g : specs) {
    GroupResult gr;
    gr.group_id = g.group_id;
    gr.size = g.size;
    gr.msr = g.msr;
    gr.target = target_of(g.msr, g.size);
    gr.delivered = ok ? g.size : 0;
    r.groups.push_back(gr);
    r.delivered_bytes += uint64_t(gr.delivered) * o.size;
  }
  return r;
}

void serve_tcp_transfer(int fd) {
  uint8_t hdr[8];
  if (!read_full(fd, hdr, 8, 30'000)) return;
  uint32_t n, s;
  memcpy(&n, hdr, 4);
  memcpy(&s, hdr + 4, 4);
  n = ntohl(n);
  s = ntohl(s);
  std::vector<uint8_t> buf(1 << 20);
  const double t0 = now_s();
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len;
    if (!read_full(fd, &len, 4, 30'000)) return;
    len = ntohl(len);
    if (len > (256u << 20)) return;
    while (len > 0) {
      size_t want = std::min<size_t>(len, buf.size());
      ssize_t rd = recv(fd, buf.data(), want, 0);
      if (rd < 0 && errno == EINTR) continue;
      if (rd <= 0) return;
      len -= static_cast<uint32_t>(rd);
      bytes += static_cast<uint64_t>(rd);
    }
  }
  uint8_t ack = 'A';
  write_full(fd, &ack, 1);
  double t = now_s() - t0;
  std::fprintf(stderr, "[server/tcp] received %u messages, %.1f MiB in %.3f s (%.2f Gbit/s)\n", n,
               double(bytes) / 1048576.0, t, t > 0 ? double(bytes) * 8 / t / 1e9 : 0.0);
}

// ---- server ------------------------------------------------------------------------------------------------------

void on_signal(int) { g_stop = true; }

// A TCP listener on addr:port (port 0: ephemeral); -1 on failure with errno set.
int tcp_listen(const std::string& addr, uint16_t port, uint16_t* bound) {
  sockaddr_storage sa{};
  socklen_t salen;
  sockaddr_in s4{};
  sockaddr_in6 s6{};
  if (inet_pton(AF_INET, addr.c_str(), &s4.sin_addr) == 1) {
    s4.sin_family = AF_INET;
    s4.sin_port = htons(port);
    memcpy(&sa, &s4, sizeof s4);
    salen = sizeof s4;
  } else if (inet_pton(AF_INET6, addr.c_str(), &s6.sin6_addr) == 1) {
    s6.sin6_family = AF_INET6;
    s6.sin6_port = htons(port);
    memcpy(&sa, &s6, sizeof s6);
    salen = sizeof s6;
  } else {
    errno = EINVAL;
    return -1;
  }
  int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), salen) != 0 || listen(fd, 128) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  socklen_t l = sizeof sa;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &l);
  *bound = ntohs(sa.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&sa)->sin_port
                                         : reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port);
  return fd;
}

struct ServerCounters {
  std::atomic<uint64_t> accepted{0}, refused_busy{0}, sessions{0}, tcp_transfers{0}, bad_hellos{0};
  std::atomic<uint64_t> verified{0}, verify_failures{0};
};

// One ATP rendezvous: opens the session the client asks for, waits for the job's receiver report (or the
// client's hang-up) and returns it; the session is closed and forgotten whatever happens.
void serve_atp_session(int cfd, const Options& o, drv::Driver& d, ReceiverPump& pump, const uint8_t master[32],
                       ServerCounters& counters) {
  perf::SessionHello hello;
  std::string why;
  if (!perf::read_hello(cfd, &hello, &why, 10'000)) {
    counters.bad_hellos++;
    uint8_t reply = perf::kReplyRefused;
    write_full(cfd, &reply, 1);
    return;
  }
  uint8_t responder_nonce[perf::kNonceBytes];
  randombytes_buf(responder_nonce, sizeof responder_nonce);
  atp::crypto::SessionSecrets secrets;
  atp::crypto::derive_session(master, hello.nonce, responder_nonce, &secrets);
  const atp::SessionId sid = secrets.session_id;
  std::string ip = peer_ip(cfd);
  pump.expect(sid, o.verify ? std::make_unique<perf::MessageVerifier>(hello.messages, hello.message_bytes, hello.msrs)
                            : nullptr);
  Status st = d.open_session(sid, secrets.key, ip, hello.udp_port, false);
  sodium_memzero(secrets.key, sizeof secrets.key);
  uint8_t reply[1 + perf::kNonceBytes];
  reply[0] = st == Status::kOk ? perf::kReplyOk : perf::kReplyRefused;
  std::memcpy(reply + 1, responder_nonce, perf::kNonceBytes);
  write_full(cfd, reply, st == Status::kOk ? sizeof reply : 1);
  if (st != Status::kOk) {
    std::fprintf(stderr, "[server] open_session for %s:%u: %s\n", ip.c_str(), hello.udp_port, atp::status_name(st));
    pump.forget(sid);
    return;
  }
  counters.sessions++;
  std::fprintf(stderr, "[server] session %016llx with %s:%u\n", static_cast<unsigned long long>(sid), ip.c_str(),
               hello.udp_port);
  auto client_gone = [cfd] {
    pollfd p{cfd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;  // client hung up (or sent something unexpected)
  };
  Outcome out = pump.wait_report(sid, o.timeout_s, client_gone);
  if (out.report) {
    const std::string rep = report_json(*out.report);
    const std::string ver = out.verified ? out.verify_json : std::string();
    uint32_t hdr[3] = {htonl(out.verified ? static_cast<uint32_t>(std::min<uint64_t>(out.verify_errors, 0xFFFFFFFEu))
                                          : perf::kNotVerified),
                       htonl(static_cast<uint32_t>(rep.size())), htonl(static_cast<uint32_t>(ver.size()))};
    write_full(cfd, hdr, sizeof hdr);
    write_full(cfd, rep.data(), rep.size());
    write_full(cfd, ver.data(), ver.size());
    std::fprintf(stderr, "[server] job done: delivered %u/%u, loss %.3f\n", out.report->delivered, out.report->messages,
                 out.report->measured_loss);
    if (out.verified) {
      counters.verified++;
      if (out.verify_errors) counters.verify_failures++;
      std::fprintf(stderr, "[server] verify: %s\n", out.verify_json.c_str());
    }
    std::fprintf(stderr, "[server] driver: %s\n", driver_json(d).c_str());
    char c;
    pollfd p{cfd, POLLIN, 0};
    poll(&p, 1, 5'000);  // wait for the client to hang up (it closes its session first)
    (void)!recv(cfd, &c, 1, 0);
  } else {
    std::fprintf(stderr, "[server] session %016llx ended without a report: %s\n", static_cast<unsigned long long>(sid),
                 atp::status_name(out.error));
  }
  d.close_session(sid);
  pump.forget(sid);  // any event of the session still on its way is dropped by the pump
  std::fprintf(stderr, "[server] session %016llx closed\n", static_cast<unsigned long long>(sid));
}

int run_server(const Options& o) {
  std::unique_ptr<drv::Driver> d;
  std::unique_ptr<ReceiverPump> pump;
  uint8_t key[32];
  derive_master_key(o.secret, key);
  // The UDP port and the TCP port have the same number; with --port 0 the driver picks it and the TCP listener
  // follows (retried if that number is taken for TCP).
  int lfd = -1;
  uint16_t port = o.port;
  for (int attempt = 0; attempt < 20 && lfd < 0; ++attempt) {
    if (!o.tcp) {
      std::string err;
      d.reset();
      Status st = drv::Driver::create(make_config(o, o.bind, o.port), &d, &err);
      if (st != Status::kOk) {
        std::fprintf(stderr, "atp-perf server: %s\n", err.c_str());
        return 1;
      }
      port = d->local_port();
    }
    lfd = tcp_listen(o.bind, port, &port);
    if (lfd < 0 && (o.port != 0 || errno != EADDRINUSE)) break;
  }
  if (lfd < 0) {
    std::fprintf(stderr, "atp-perf server: tcp listen on %s:%u: %s\n", o.bind.c_str(), port, strerror(errno));
    return 1;
  }
  if (d) pump = std::make_unique<ReceiverPump>(d.get(), true);
  std::fprintf(stderr, "[server] listening on %s port %u (%s%s, at most %u connections)\n", o.bind.c_str(), port,
               o.tcp ? "TCP only" : "ATP/UDP + TCP", o.verify ? ", verifying every message" : "", o.max_connections);
  ServerCounters counters;
  tools::ConnectionSlots slots(o.max_connections);
  while (!g_stop) {
    pollfd pf{lfd, POLLIN, 0};
    if (poll(&pf, 1, 200) <= 0) {
      slots.reap();
      continue;
    }
    int cfd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (cfd < 0) continue;
    counters.accepted++;
    bool started = slots.try_start([&, cfd] {
      char magic[4];
      if (read_full(cfd, magic, 4, 10'000)) {
        if (memcmp(magic, perf::kTcpMagic, 4) == 0) {
          counters.tcp_transfers++;
          serve_tcp_transfer(cfd);
        } else if (memcmp(magic, perf::kAtpMagic, 4) == 0 && d) {
          serve_atp_session(cfd, o, *d, *pump, key, counters);
        } else {
          counters.bad_hellos++;
        }
      }
      close(cfd);
    });
    if (!started) {  // every slot busy: tell the client and hang up
      counters.refused_busy++;
      uint8_t busy = perf::kReplyBusy;
      (void)!send(cfd, &busy, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      close(cfd);
    }
  }
  close(lfd);
  slots.join_all();
  std::fprintf(stderr,
               "[server] exit: accepted %llu connections (%llu refused busy, %llu bad hellos), %llu ATP sessions, %llu "
               "TCP transfers, %llu verified (%llu failed), %llu threads started / %llu joined (peak %zu at once), %zu "
               "sessions still tracked\n",
               static_cast<unsigned long long>(counters.accepted.load()),
               static_cast<unsigned long long>(counters.refused_busy.load()),
               static_cast<unsigned long long>(counters.bad_hellos.load()),
               static_cast<unsigned long long>(counters.sessions.load()),
               static_cast<unsigned long long>(counters.tcp_transfers.load()),
               static_cast<unsigned long long>(counters.verified.load()),
               static_cast<unsigned long long>(counters.verify_failures.load()),
               static_cast<unsigned long long>(slots.started()), static_cast<unsigned long long>(slots.joined()),
               slots.peak(), pump ? pump->tracked() : size_t(0));
  return 0;
}

// ---- client ------------------------------------------------------------------------------------------------------

int run_client(const Options& o) {
  if (o.tcp) {
    Result r = run_tcp_client(o);
    print_summary(r, stderr);
    emit(r, o);
    return r.status == "ok" ? 0 : 1;
  }
  int cfd = tcp_connect(o.connect, o.port);
  if (cfd < 0) {
    std::fprintf(stderr, "atp-perf client: cannot reach the server's TCP port %s:%u\n", o.connect.c_str(), o.port);
    return 1;
  }
  sockaddr_storage la{};
  socklen_t ll = sizeof la;
  getsockname(cfd, reinterpret_cast<sockaddr*>(&la), &ll);
  std::string bind = la.ss_family == AF_INET6 ? "::" : "0.0.0.0";
  std::unique_ptr<drv::Driver> d;
  std::string err;
  if (drv::Driver::create(make_config(o, bind, 0), &d, &err) != Status::kOk) {
    std::fprintf(stderr, "atp-perf client: %s\n", err.c_str());
    return 1;
  }
  uint8_t master[32];
  derive_master_key(o.secret, master);
  perf::SessionHello hello;
  randombytes_buf(hello.nonce, sizeof hello.nonce);
  hello.udp_port = d->local_port();
  hello.messages = o.messages;
  hello.message_bytes = o.size;
  hello.msrs = o.groups;
  const std::vector<uint8_t> hello_bytes = perf::encode_hello(hello);
  uint8_t reply = 0;
  uint8_t responder_nonce[perf::kNonceBytes];
  if (!write_full(cfd, hello_bytes.data(), hello_bytes.size()) || !read_full(cfd, &reply, 1, 10'000) ||
      reply != perf::kReplyOk || !read_full(cfd, responder_nonce, sizeof responder_nonce, 10'000)) {
    std::fprintf(stderr, "atp-perf client: %s\n",
                 reply == perf::kReplyBusy ? "server busy (all its connection slots are taken); try again later"
                                           : "server refused the session (is it running without --tcp?)");
    return 1;
  }
  atp::crypto::SessionSecrets secrets;
  atp::crypto::derive_session(master, hello.nonce, responder_nonce, &secrets);
  sodium_memzero(master, sizeof master);
  const atp::SessionId sid = secrets.session_id;
  Status st = d->open_session(sid, secrets.key, o.connect, o.port, true);
  sodium_memzero(secrets.key, sizeof secrets.key);
  if (st != Status::kOk) {
    std::fprintf(stderr, "atp-perf client: open_session: %s\n", atp::status_name(st));
    return 1;
  }
  Result r = run_atp_sender(*d, sid, o);
  // The receiver's report (authoritative deliveries) and the server's verdict, sent over the TCP rendezvous.
  uint32_t hdr[3];
  if (read_full(cfd, hdr, sizeof hdr, 3'000)) {
    const uint32_t verify_errors = ntohl(hdr[0]), rep_len = ntohl(hdr[1]), ver_len = ntohl(hdr[2]);
    if (rep_len <= perf::kMaxReportBytes && ver_len <= perf::kMaxReportBytes) {
      std::string rep(rep_len, '\0'), ver(ver_len, '\0');
      if (read_full(cfd, rep.data(), rep_len, 3'000) && read_full(cfd, ver.data(), ver_len, 3'000)) {
        r.receiver_json = rep;
        if (verify_errors != perf::kNotVerified) {
          r.verify_json = ver;
          if (verify_errors > 0 && r.status == "ok") r.status = "verify failed";
        }
      }
    }
  }
  r.driver_json = driver_json(*d);
  d->close_session(sid);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the CLOSE go out
  close(cfd);
  print_summary(r, stderr);
  emit(r, o);
  return r.status == "ok" ? 0 : 1;
}

// ---- demo --------------------------------------------------------------------------------------------------------

int run_demo(const Options& o) {
  std::unique_ptr<drv::Driver> tx, rx;
  std::string err;
  Options txo = o, rxo = o;
  rxo.drop_out = rxo.drop_in = 0;
  if (drv::Driver::create(make_config(txo, "127.0.0.1", 0), &tx, &err) != Status::kOk ||
      drv::Driver::create(make_config(rxo, "127.0.0.1", 0), &rx, &err) != Status::kOk) {
    std::fprintf(stderr, "atp-perf demo: %s\n", err.c_str());
    return 1;
  }
  uint8_t master[32], nonces[2][perf::kNonceBytes];
  derive_master_key(o.secret, master);
  randombytes_buf(nonces, sizeof nonces);
  atp::crypto::SessionSecrets secrets;
  atp::crypto::derive_session(master, nonces[0], nonces[1], &secrets);
  const uint8_t* key = secrets.key;
  const atp::SessionId sid = secrets.session_id;
  ReceiverPump pump(rx.get(), false);
  pump.expect(sid, std::make_unique<perf::MessageVerifier>(o.messages, o.size, o.groups));  // the demo always verifies
  if (tx->open_session(sid, key, "127.0.0.1", rx->local_port(), true) != Status::kOk ||
      rx->open_session(sid, key, "127.0.0.1", tx->local_port(), false) != Status::kOk) {
    std::fprintf(stderr, "atp-perf demo: cannot open sessions\n");
    return 1;
  }
  std::fprintf(stderr,
               "demo: %u messages x %u bytes over 127.0.0.1, %zu groups, mode %s, %.0f%% injected loss on "
               "data packets\n",
               o.messages, o.size, o.groups.size(), o.mode.c_str(), o.drop_out * 100);
  Result r = run_atp_sender(*tx, sid, o);
  Outcome out = pump.wait_report(sid, 10, nullptr);
  const auto& rep = out.report;
  if (rep) r.receiver_json = report_json(*rep);
  if (out.verified) {
    r.verify_json = out.verify_json;
    if (out.verify_errors > 0 && r.status == "ok") r.status = "verify failed";
  }
  r.driver_json = driver_json(*tx);
  std::printf(
      "ATP demo (%s): JCT %.1f ms, goodput %.3f Gbit/s, measured packet loss %.1f%%, %llu packets sent, "
      "%llu retransmitted\n",
      r.status.c_str(), r.jct_ms, r.jct_ms > 0 ? double(r.delivered_bytes) * 8 / (r.jct_ms * 1e-3) / 1e9 : 0.0,
      r.measured_loss * 100, static_cast<unsigned long long>(r.packets_sent),
      static_cast<unsigned long long>(r.retransmissions));
  if (rep) {
    for (const auto& g : rep->groups)
      std::printf("  group %llu: MSR %.2f -> target %u of %u, delivered %u (%.1f%%), lost %u%s\n",
                  static_cast<unsigned long long>(g.group_id),
                  g.group_id < o.groups.size() ? o.groups[g.group_id] : 0.0, g.target, g.size, g.delivered,
                  g.size ? 100.0 * g.delivered / g.size : 0.0, g.lost,
                  g.delivered >= g.target ? "  [target met]" : "  [BELOW TARGET]");
    std::printf("  receiver: %u of %u messages delivered, measured message loss %.1f%%\n", rep->delivered,
                rep->messages, rep->measured_loss * 100);
  } else {
    std::printf("  receiver report missing: %s\n", atp::status_name(out.error));
  }
  if (out.verified)
    std::printf("  verify: %llu messages checked, %llu errors%s%s\n",
                static_cast<unsigned long long>(out.verify_checked), static_cast<unsigned long long>(out.verify_errors),
                out.verify_errors ? ", first: " : "", out.verify_first_error.c_str());
  std::fprintf(stderr, "receiver driver: %s\n", driver_json(*rx).c_str());
  std::printf("JSON result:\n");
  emit(r, o);
  tx->close_session(sid);
  bool ok = r.status == "ok" && rep;
  if (rep)
    for (const auto& g : rep->groups) ok = ok && g.delivered >= g.target;
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (sodium_init() < 0) {
    std::fprintf(stderr, "atp-perf: libsodium init failed\n");
    return 1;
  }
  Options o;
  o.cmd = argv[1];
  if (o.cmd == "demo") {
    o.messages = 2000;
    o.size = 16 * 1024;
    o.groups = {1.0, 0.8, 0.5};
    o.drop_out = 0.2;
  }
  enum {
    kBind = 256,
    kConnect,
    kPort,
    kMessages,
    kSize,
    kGroups,
    kMode,
    kRate,
    kDropOut,
    kDropIn,
    kSeed,
    kTcp,
    kJson,
    kSecret,
    kTimeout,
    kNoMrdf,
    kMaxDatagram,
    kSendBufferMb,
    kNoPayloadAuth,
    kVerify,
    kMaxConnections,
    kCorruptEvery,
    kHelp
  };
  static const option longopts[] = {{"bind", required_argument, nullptr, kBind},
                                    {"connect", required_argument, nullptr, kConnect},
                                    {"port", required_argument, nullptr, kPort},
                                    {"messages", required_argument, nullptr, kMessages},
                                    {"size", required_argument, nullptr, kSize},
                                    {"groups", required_argument, nullptr, kGroups},
                                    {"mode", required_argument, nullptr, kMode},
                                    {"rate-gbps", required_argument, nullptr, kRate},
                                    {"drop-out", required_argument, nullptr, kDropOut},
                                    {"drop-in", required_argument, nullptr, kDropIn},
                                    {"seed", required_argument, nullptr, kSeed},
                                    {"tcp", no_argument, nullptr, kTcp},
                                    {"json", required_argument, nullptr, kJson},
                                    {"secret", required_argument, nullptr, kSecret},
                                    {"timeout", required_argument, nullptr, kTimeout},
                                    {"no-mrdf", no_argument, nullptr, kNoMrdf},
                                    {"max-datagram", required_argument, nullptr, kMaxDatagram},
                                    {"send-buffer-mb", required_argument, nullptr, kSendBufferMb},
                                    {"help", no_argument, nullptr, kHelp},
                                    {"no-payload-auth", no_argument, nullptr, kNoPayloadAuth},
                                    {"verify", no_argument, nullptr, kVerify},
                                    {"max-connections", required_argument, nullptr, kMaxConnections},
                                    {"test-corrupt-every", required_argument, nullptr, kCorruptEvery},
                                    {nullptr, 0, nullptr, 0}};
  optind = 2;
  int c;
  auto bad = [](const char* what) {
    std::fprintf(stderr, "atp-perf: bad value for %s (see --help)\n", what);
    std::exit(2);
  };
  while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
    char* end = nullptr;
    switch (c) {
      case kBind: o.bind = optarg; break;
      case kConnect: o.connect = optarg; break;
      case kPort: {
        long v = std::strtol(optarg, &end, 10);
        if (*end || v < 0 || v > 65535) bad("--port");  // 0: ephemeral (server only)
        o.port = static_cast<uint16_t>(v);
        break;
      }
      case kMessages: {
        unsigned long v = std::strtoul(optarg, &end, 10);
        if (*end || v == 0 || v > (1u << 26)) bad("--messages");
        o.messages = static_cast<uint32_t>(v);
        break;
      }
      case kSize: {
        unsigned long v = std::strtoul(optarg, &end, 10);
        if (*end || v == 0 || v > (64u << 20)) bad("--size");
        o.size = static_cast<uint32_t>(v);
        break;
      }
      case kGroups:
        if (!parse_groups(optarg, &o.groups)) bad("--groups");
        break;
      case kMode:
        if (!atp::parse_mode(optarg)) bad("--mode");
        o.mode = optarg;
        break;
      case kRate:
        o.rate_gbps = std::strtod(optarg, &end);
        if (*end || !(o.rate_gbps > 0)) bad("--rate-gbps");
        break;
      case kDropOut:
        o.drop_out = std::strtod(optarg, &end);
        if (*end || !(o.drop_out >= 0 && o.drop_out < 1)) bad("--drop-out");
        break;
      case kDropIn:
        o.drop_in = std::strtod(optarg, &end);
        if (*end || !(o.drop_in >= 0 && o.drop_in < 1)) bad("--drop-in");
        break;
      case kSeed:
        o.seed = std::strtoull(optarg, &end, 10);
        if (*end) bad("--seed");
        break;
      case kTcp: o.tcp = true; break;
      case kNoPayloadAuth: o.payload_auth = false; break;
      case kVerify: o.verify = true; break;
      case kMaxConnections: {
        unsigned long v = std::strtoul(optarg, &end, 10);
        if (*end || v == 0 || v > 4096) bad("--max-connections");
        o.max_connections = static_cast<uint32_t>(v);
        break;
      }
      case kCorruptEvery: {
        unsigned long v = std::strtoul(optarg, &end, 10);
        if (*end || v == 0 || v > UINT32_MAX) bad("--test-corrupt-every");
        o.corrupt_every = static_cast<uint32_t>(v);
        break;
      }
      case kJson: o.json_file = optarg; break;
      case kSecret: o.secret = optarg; break;
      case kTimeout:
        o.timeout_s = std::atoi(optarg);
        if (o.timeout_s <= 0) bad("--timeout");
        break;
      case kNoMrdf: o.mrdf = false; break;
      case kMaxDatagram: {
        unsigned long v = std::strtoul(optarg, &end, 10);
        if (*end || v < 256 || v > 65507) bad("--max-datagram");
        o.max_datagram = static_cast<uint32_t>(v);
        break;
      }
      case kSendBufferMb: {
        unsigned long v = std::strtoul(optarg, &end, 10);
        if (*end || v == 0 || v > 4096) bad("--send-buffer-mb");
        o.send_buffer_bytes = uint64_t{v} << 20;
        break;
      }
      case kHelp: usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (o.groups.empty()) o.groups = {1.0};
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  if (o.cmd == "server") return run_server(o);
  if (o.cmd == "client") {
    if (o.port == 0) bad("--port (the client needs the server's port)");
    if (o.connect.empty() || o.messages == 0 || o.size == 0) {
      std::fprintf(stderr, "atp-perf client: --connect, --messages and --size are required\n");
      return 2;
    }
    if (o.groups.size() > o.messages) bad("--groups (more groups than messages)");
    return run_client(o);
  }
  if (o.cmd == "demo") return run_demo(o);
  usage(stderr);
  return 2;
}
