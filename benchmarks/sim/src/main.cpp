// atp-sim: replays a job schedule over a simulated fabric (ns-3) with one scheme: ATP (the real sans-I/O core,
// in any engine mode), ns-3's DCTCP with EarlySend / SampleSend / exact, or plain UDP. Writes one JSON line per
// job (--out) and run statistics (--stats). Deterministic for a seed. See docs/simulation.md.
#include "atp_host.hpp"
#include "context.hpp"
#include "scheme.hpp"
#include "switch_queue.hpp"
#include "tcp_host.hpp"
#include "topology.hpp"
#include "udp_host.hpp"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstring>
#include <getopt.h>
#include <set>
#include <utility>
#include <vector>

using namespace ns3;
using namespace netapprox::sim;
namespace atp = netapprox::atp;

namespace netapprox::sim {
void SimContext::finished(uint32_t job, uint64_t now_ns) {
  if (!finished_jobs.insert(job).second) return;
  last_finish_ns = std::max(last_finish_ns, now_ns);
  if (--unfinished == 0) Simulator::Stop(MilliSeconds(1));  // let late reports (receiver side) arrive
}
}  // namespace netapprox::sim

namespace {

struct Options {
  std::string schedule, out, stats, trace, scheme = "atp_full";
  FabricSpec fabric;
  uint64_t seed = 1;
  double stop_ms = 10'000;
  bool verify = false;
  double initial_rtt_us = 100, min_epoch_us = 20, ack_delay_us = 10;
  double tcp_min_rto_us = 1000;
  uint32_t tcp_buffer = 1 << 20;
  double connect_lead_us = 1000;
  uint32_t repair_after = atp::EngineConfig{}.repair_after_segments;
  std::vector<std::pair<std::string, std::string>> atp_set;  // --atp KEY=VALUE, applied in order
};

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: atp-sim --schedule FILE --scheme NAME --out FILE.jsonl [options]\n"
               "  --scheme atp_full|atp_full_tlr|atp_paper|atp_base|atp_rc|atp_rc_mrdf|atp_fixtlr|atp_fixprio|dctcp_es|dctcp_ss|"
               "dctcp_exact|pfabric_es|udp\n"
               "  --topology star|fattree (star)   --hosts N   --k 4   --rate-gbps 40   --delay-us 1\n"
               "  --switch slack|fifo (slack)   --buffer-bytes 1500000   --ecn-k 65   --mtu 1500\n"
               "  --buffer-model shared|port (shared: --buffer-bytes per switch, dynamic thresholds; port: per port)\n"
               "  --alpha 1 (shared: class 0 / fifo threshold x free bytes)   --approx-alpha 0 (0: static k MTU)\n"
               "  --bottleneck-loss P (random loss into host 1; tests)   --seed 1   --stop-ms 10000\n"
               "  --stats FILE.json   --trace FILE.csv (epoch samples of TRACE jobs)   --verify (check ATP bytes)\n"
               "  --initial-rtt-us 100 --min-epoch-us 20 --ack-delay-us 10 (engine timers for a DC fabric)\n"
               "  --tcp-min-rto-us 1000 --tcp-buffer 1048576 --connect-lead-us 1000\n"
               "  --repair-after N (EngineConfig::repair_after_segments; 0 = the paper's give-up rule)\n"
               "  --atp KEY=VALUE (repeatable; EngineConfig fields: size_classes 0|1, size_class_bytes B1,..,B6,\n"
               "                  small_job_class0_bytes B, needy_class0_fraction F)\n");
  std::exit(rc);
}

Options parse(int argc, char** argv) {
  Options o;
  enum {
    kSchedule = 1000, kOut, kStats, kTrace, kScheme, kTopology, kHosts, kK, kRate, kDelay, kSwitch, kBuffer, kEcn,
    kMtu, kBufModel, kAlpha, kApproxAlpha, kLoss, kSeed, kStop, kVerify, kIrtt, kEpoch, kAckDelay, kRto, kTcpBuf, kLead, kRepair, kAtpSet, kHelp
  };
  static const option opts[] = {
      {"schedule", 1, 0, kSchedule}, {"out", 1, 0, kOut}, {"stats", 1, 0, kStats}, {"trace", 1, 0, kTrace},
      {"scheme", 1, 0, kScheme}, {"topology", 1, 0, kTopology}, {"hosts", 1, 0, kHosts}, {"k", 1, 0, kK},
      {"rate-gbps", 1, 0, kRate}, {"delay-us", 1, 0, kDelay}, {"switch", 1, 0, kSwitch},
      {"buffer-bytes", 1, 0, kBuffer}, {"ecn-k", 1, 0, kEcn}, {"mtu", 1, 0, kMtu}, {"bottleneck-loss", 1, 0, kLoss},
      {"buffer-model", 1, 0, kBufModel}, {"alpha", 1, 0, kAlpha}, {"approx-alpha", 1, 0, kApproxAlpha},
      {"seed", 1, 0, kSeed}, {"stop-ms", 1, 0, kStop}, {"verify", 0, 0, kVerify}, {"initial-rtt-us", 1, 0, kIrtt},
      {"min-epoch-us", 1, 0, kEpoch}, {"ack-delay-us", 1, 0, kAckDelay}, {"tcp-min-rto-us", 1, 0, kRto},
      {"tcp-buffer", 1, 0, kTcpBuf}, {"connect-lead-us", 1, 0, kLead}, {"repair-after", 1, 0, kRepair}, {"atp", 1, 0, kAtpSet},
      {"help", 0, 0, kHelp},         {0, 0, 0, 0}};
  int c;
  auto num = [](const char* name, const char* v, double lo, double hi) {
    char* end = nullptr;
    double x = std::strtod(v, &end);
    if (!end || *end || !(x >= lo && x <= hi)) {
      std::fprintf(stderr, "atp-sim: --%s must be a number in [%g, %g], got '%s'\n", name, lo, hi, v);
      std::exit(2);
    }
    return x;
  };
  while ((c = getopt_long(argc, argv, "", opts, nullptr)) != -1) {
    switch (c) {
      case kSchedule: o.schedule = optarg; break;
      case kOut: o.out = optarg; break;
      case kStats: o.stats = optarg; break;
      case kTrace: o.trace = optarg; break;
      case kScheme: o.scheme = optarg; break;
      case kTopology: o.fabric.kind = optarg; break;
      case kHosts: o.fabric.hosts = static_cast<int>(num("hosts", optarg, 2, 100000)); break;
      case kK: o.fabric.k = static_cast<int>(num("k", optarg, 2, 64)); break;
      case kRate: o.fabric.rate_gbps = num("rate-gbps", optarg, 0.001, 1000); break;
      case kDelay: o.fabric.delay_us = num("delay-us", optarg, 0, 1e6); break;
      case kSwitch:
        if (std::strcmp(optarg, "slack") && std::strcmp(optarg, "fifo")) usage(2);
        o.fabric.slack = !std::strcmp(optarg, "slack");
        break;
      case kBuffer: o.fabric.buffer_bytes = static_cast<uint32_t>(num("buffer-bytes", optarg, 1500, 1e9)); break;
      case kEcn: o.fabric.ecn_threshold = static_cast<uint32_t>(num("ecn-k", optarg, 0, 1e6)); break;
      case kBufModel:
        if (std::strcmp(optarg, "shared") && std::strcmp(optarg, "port")) usage(2);
        o.fabric.buffer_model = optarg;
        break;
      case kAlpha: o.fabric.alpha = num("alpha", optarg, 0.001, 1000); break;
      case kApproxAlpha: o.fabric.approx_alpha = num("approx-alpha", optarg, 0, 1000); break;
      case kMtu: o.fabric.mtu = static_cast<uint32_t>(num("mtu", optarg, 576, 9000)); break;
      case kLoss: o.fabric.bottleneck_loss = num("bottleneck-loss", optarg, 0, 0.99); break;
      case kSeed: o.seed = static_cast<uint64_t>(num("seed", optarg, 0, 1e18)); break;
      case kStop: o.stop_ms = num("stop-ms", optarg, 0.001, 1e9); break;
      case kVerify: o.verify = true; break;
      case kIrtt: o.initial_rtt_us = num("initial-rtt-us", optarg, 1, 1e7); break;
      case kEpoch: o.min_epoch_us = num("min-epoch-us", optarg, 1, 1e7); break;
      case kAckDelay: o.ack_delay_us = num("ack-delay-us", optarg, 0, 1e7); break;
      case kRto: o.tcp_min_rto_us = num("tcp-min-rto-us", optarg, 1, 1e7); break;
      case kTcpBuf: o.tcp_buffer = static_cast<uint32_t>(num("tcp-buffer", optarg, 4096, 1e9)); break;
      case kLead: o.connect_lead_us = num("connect-lead-us", optarg, 0, 1e7); break;
      case kRepair: o.repair_after = static_cast<uint32_t>(num("repair-after", optarg, 0, 1e6)); break;
      case kAtpSet: {
        const char* eq = std::strchr(optarg, '=');
        if (!eq) usage(2);
        o.atp_set.emplace_back(std::string(optarg, static_cast<size_t>(eq - optarg)), std::string(eq + 1));
        break;
      }
      case kHelp: usage(0);
      default: usage(2);
    }
  }
  if (o.schedule.empty() || o.out.empty()) usage(2);
  if (!find_scheme(o.scheme)) {
    std::fprintf(stderr, "atp-sim: unknown --scheme '%s'\n", o.scheme.c_str());
    std::exit(2);
  }
  o.fabric.seed = o.seed;
  return o;
}

atp::EngineConfig engine_config(const Options& o, const Scheme& s) {
  atp::EngineConfig cfg;
  cfg.line_rate_bps = static_cast<uint64_t>(o.fabric.rate_gbps * 1e9);
  cfg.max_datagram = o.fabric.mtu - 28;
  cfg.initial_rtt = static_cast<atp::TimeNs>(o.initial_rtt_us * 1000);
  cfg.min_epoch = static_cast<atp::TimeNs>(o.min_epoch_us * 1000);
  cfg.ack_delay = static_cast<atp::TimeNs>(o.ack_delay_us * 1000);
  cfg.repair_after_segments = o.repair_after;
  cfg.payload_auth = false;  // headers stay authenticated; skips MACing payload bytes the simulator never alters
  std::vector<std::pair<std::string, std::string>> settings;
  for (const char* p = s.atp_settings; *p;) {
    while (*p == ' ') ++p;
    const char* end = p;
    while (*end && *end != ' ') ++end;
    const char* eq = std::find(p, end, '=');
    if (eq != end) settings.emplace_back(std::string(p, eq), std::string(eq + 1, end));
    p = end;
  }
  settings.insert(settings.end(), o.atp_set.begin(), o.atp_set.end());
  for (const auto& [key, value] : settings) {
    auto fail = [&] {
      std::fprintf(stderr, "atp-sim: --atp %s=%s: unknown key or bad value\n", key.c_str(), value.c_str());
      std::exit(2);
    };
    char* end = nullptr;
    const double x = std::strtod(value.c_str(), &end);
    const bool number = end && *end == 0 && x >= 0;
    if (key == "size_classes" && number) {
      cfg.size_classes = x != 0;
    } else if (key == "small_job_class0_bytes" && number) {
      cfg.small_job_class0_bytes = static_cast<uint64_t>(x);
    } else if (key == "needy_class0_fraction" && number) {
      cfg.needy_class0_fraction = x;
    } else if (key == "size_class_bytes") {
      const char* p = value.c_str();
      for (int i = 0; i < 6; ++i) {
        char* e = nullptr;
        const double b = std::strtod(p, &e);
        if (e == p || b <= 0 || (i < 5 && *e != ',') || (i == 5 && *e != 0)) fail();
        cfg.size_class_bytes[i] = static_cast<uint64_t>(b);
        p = e + 1;
      }
    } else {
      fail();
    }
  }
  auto mode = atp::parse_mode(s.atp_mode);
  if (!mode && s.atp_fallback) mode = atp::parse_mode(s.atp_fallback);
  if (!mode) {
    std::fprintf(stderr, "atp-sim: the engine has no mode '%s'\n", s.atp_mode);
    std::exit(2);
  }
  cfg.mode = *mode;
  std::string err = cfg.validate();
  if (!err.empty()) {
    std::fprintf(stderr, "atp-sim: engine config: %s\n", err.c_str());
    std::exit(2);
  }
  return cfg;
}

uint32_t target_of(const JobDesc& j) {
  const double t = std::ceil(j.msr * static_cast<double>(j.sizes.size()) - 1e-9);
  return static_cast<uint32_t>(std::clamp(t, 0.0, static_cast<double>(j.sizes.size())));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const Scheme scheme = *find_scheme(o.scheme);
  const auto wall0 = std::chrono::steady_clock::now();
  RngSeedManager::SetSeed(1);
  RngSeedManager::SetRun(o.seed);

  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(o.fabric.mtu - 52));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(o.tcp_buffer));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(o.tcp_buffer));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(static_cast<int64_t>(o.tcp_min_rto_us))));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(10)));

  atp::EngineConfig cfg = engine_config(o, scheme.transport == Transport::kAtp ? scheme : *find_scheme("atp_full"));
  set_dscp_classes(cfg.dscp_by_class);

  std::unique_ptr<Fabric> fabric;
  Schedule sched;
  try {
    fabric = build_fabric(o.fabric);
    sched = read_schedule(o.schedule, fabric->hosts.GetN());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "atp-sim: %s\n", e.what());
    return 2;
  }
  const uint32_t H = fabric->hosts.GetN();

  SimContext ctx;
  ctx.seed = o.seed;
  ctx.verify = o.verify;
  ctx.rate_bps = o.fabric.rate_gbps * 1e9;
  ctx.connect_lead_ns = static_cast<uint64_t>(o.connect_lead_us * 1000);
  ctx.host_addr = fabric->host_addr;
  for (uint32_t h = 0; h < H; ++h) ctx.host_of_addr[fabric->host_addr[h].Get()] = h + 1;
  FILE* trace = nullptr;
  if (!o.trace.empty()) {
    trace = std::fopen(o.trace.c_str(), "w");
    if (!trace) {
      std::fprintf(stderr, "atp-sim: cannot write %s\n", o.trace.c_str());
      return 2;
    }
    std::fprintf(trace, "job,at_ns,tlr,loss,rate_bps,class\n");
    ctx.trace = trace;
  }
  for (const JobDesc& j : sched.jobs)
    if (j.trace) ctx.traced.insert(j.id);

  std::vector<AtpHost*> atp_hosts(H, nullptr);
  std::vector<Ptr<TcpHost>> tcp_hosts(H);
  std::vector<Ptr<UdpHost>> udp_hosts(H);
  std::vector<Ptr<AtpHost>> atp_owned(H);
  for (uint32_t h = 0; h < H; ++h) {
    Ptr<Node> node = fabric->hosts.Get(h);
    tcp_hosts[h] = CreateObject<TcpHost>(&ctx, h + 1);
    if (scheme.size_priority) tcp_hosts[h]->set_size_priority(cfg.dscp_by_class, cfg.size_class_bytes, o.tcp_buffer);
    udp_hosts[h] = CreateObject<UdpHost>(&ctx, h + 1, cfg.dscp_by_class);
    node->AddApplication(tcp_hosts[h]);
    node->AddApplication(udp_hosts[h]);
    if (scheme.transport == Transport::kAtp) {
      atp_owned[h] = CreateObject<AtpHost>(&ctx, h + 1, cfg, &atp_hosts);
      atp_hosts[h] = PeekPointer(atp_owned[h]);
      node->AddApplication(atp_owned[h]);
    }
  }
  std::set<uint32_t> ids;
  for (const JobDesc& j : sched.jobs) {
    if (!ids.insert(j.id).second) {
      std::fprintf(stderr, "atp-sim: duplicate job id %u\n", j.id);
      return 2;
    }
    JobResult& r = ctx.results[j.id];
    r.id = j.id;
    r.kind = j.exact ? "exact" : "approx";
    r.scheme = j.exact ? "dctcp_exact" : o.scheme;
    r.msr = j.exact ? 1.0 : j.msr;
    r.messages = static_cast<uint32_t>(j.sizes.size());
    r.target = j.exact ? r.messages : target_of(j);
    for (uint32_t s : j.sizes) r.bytes += s;
    r.start_ns = j.start_ns;
    if (j.exact) {
      tcp_hosts[j.sender - 1]->add_job(j, TcpVariant::kExact);
    } else if (scheme.transport == Transport::kAtp) {
      atp_hosts[j.sender - 1]->add_job(j);
    } else if (scheme.transport == Transport::kDctcp) {
      tcp_hosts[j.sender - 1]->add_job(j, scheme.tcp);
    } else {
      udp_hosts[j.sender - 1]->add_job(j);
      udp_hosts[j.receiver - 1]->expected()[j.id] = &j;
    }
  }
  for (const BackgroundDesc& b : sched.background) udp_hosts[b.sender - 1]->add_background(b);
  ctx.unfinished = sched.jobs.size();

  Simulator::Stop(MicroSeconds(static_cast<int64_t>(o.stop_ms * 1000)));
  Simulator::Run();
  for (auto& u : udp_hosts) u->collect();
  const double sim_s = Simulator::Now().GetSeconds();

  FILE* out = std::fopen(o.out.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "atp-sim: cannot write %s\n", o.out.c_str());
    return 2;
  }
  for (const auto& [id, r] : ctx.results) r.write_json(out);
  std::fclose(out);
  if (trace) std::fclose(trace);

  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cpu_s = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;  // this process only: the shared
                                                                           // machine's load does not inflate it
  atp::EngineStats es{};
  for (AtpHost* a : atp_hosts) {
    if (!a) continue;
    atp::EngineStats s = a->engine_stats();
    es.datagrams_out += s.datagrams_out;
    es.datagrams_in += s.datagrams_in;
    es.dropped_malformed += s.dropped_malformed;
    es.dropped_auth += s.dropped_auth;
    es.dropped_no_buffer += s.dropped_no_buffer;
    es.dropped_unknown_session += s.dropped_unknown_session;
    es.dropped_unknown_job += s.dropped_unknown_job;
  }
  if (!o.stats.empty()) {
    FILE* f = std::fopen(o.stats.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "atp-sim: cannot write %s\n", o.stats.c_str());
      return 2;
    }
    const SwitchQueueStats& q = switch_queue_stats();
    auto arr = [&](const std::array<uint64_t, 8>& a) {
      std::string s = "[";
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) s.push_back(',');
        s.append(std::to_string(a[i]));
      }
      s.push_back(']');
      return s;
    };
    uint64_t pool_max = 0;
    for (const auto& [node, pool] : fabric->pools) pool_max = std::max(pool_max, pool->max_used);
    std::fprintf(f,
                 "{\"scheme\":\"%s\",\"fabric\":\"%s\",\"jobs\":%zu,\"unfinished\":%zu,\"sim_seconds\":%.6f,"
                 "\"wall_seconds\":%.3f,\"cpu_seconds\":%.3f,\"switch_enqueued\":%s,\"switch_dropped\":%s,\"switch_marked\":%s,"
                 "\"switch_max_bytes\":%s,\"switch_pool_max_bytes\":%llu,\"engine_datagrams_out\":%llu,\"engine_datagrams_in\":%llu,"
                 "\"engine_dropped\":{\"malformed\":%llu,\"auth\":%llu,\"no_buffer\":%llu,\"unknown_session\":%llu,"
                 "\"unknown_job\":%llu}}\n",
                 o.scheme.c_str(), fabric->describe.c_str(), sched.jobs.size(), ctx.unfinished, sim_s, wall_s, cpu_s,
                 arr(q.enqueued).c_str(), arr(q.dropped).c_str(), arr(q.marked).c_str(), arr(q.max_bytes).c_str(),
                 (unsigned long long)pool_max, (unsigned long long)es.datagrams_out, (unsigned long long)es.datagrams_in,
                 (unsigned long long)es.dropped_malformed, (unsigned long long)es.dropped_auth,
                 (unsigned long long)es.dropped_no_buffer, (unsigned long long)es.dropped_unknown_session,
                 (unsigned long long)es.dropped_unknown_job);
    std::fclose(f);
  }
  std::fprintf(stderr, "atp-sim: %s, %s: %zu jobs, %zu unfinished, %.4f s simulated in %.1f s\n", o.scheme.c_str(),
               fabric->describe.c_str(), sched.jobs.size(), ctx.unfinished, sim_s, wall_s);
  Simulator::Destroy();
  return 0;
}
