// Per-job outcome, written as one JSON line per job (read by benchmarks/sim/sim.py).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

namespace netapprox::sim {

struct JobResult {
  uint32_t id = 0;
  std::string scheme;   // the transport that carried it (exact jobs: dctcp_exact)
  std::string kind;     // approx | exact
  double msr = 1;
  uint32_t messages = 0;
  uint32_t target = 0;
  uint64_t bytes = 0;
  uint64_t start_ns = 0;
  uint64_t done_ns = 0;     // 0: never finished
  std::string status = "unfinished";  // ok | error name | unfinished
  uint32_t delivered = 0;   // messages the receiver got (ATP/UDP: receiver's count; TCP: at the acknowledgement)
  uint64_t bytes_received = 0;  // message payload bytes the receiving application got
  uint32_t lost = 0;        // messages the receiver knows are lost (ATP) or never completed (UDP)
  bool in_order = true;     // receiver saw message ids in increasing order (checked for ATP)
  bool content_ok = true;   // receiver's message bytes matched what was submitted (ATP, --verify)
  uint64_t bytes_sent = 0, packets_sent = 0, packets_retransmitted = 0;
  double measured_loss = 0; // sender's packet loss (ATP)
  uint64_t epochs = 0;
  std::array<uint64_t, 8> time_in_class_ns{};
  bool receiver_done = false;

  void write_json(FILE* f) const {
    std::fprintf(f,
                 "{\"job\":%u,\"scheme\":\"%s\",\"kind\":\"%s\",\"msr\":%.6g,\"messages\":%u,\"target\":%u,"
                 "\"bytes\":%llu,\"start_ns\":%llu,\"jct_ns\":%lld,\"status\":\"%s\",\"delivered\":%u,\"lost\":%u,"
                 "\"bytes_received\":%llu,\"in_order\":%s,\"content_ok\":%s,\"bytes_sent\":%llu,\"packets_sent\":%llu,"
                 "\"retransmitted\":%llu,\"measured_loss\":%.6g,\"epochs\":%llu,\"time_in_class_ns\":[",
                 id, scheme.c_str(), kind.c_str(), msr, messages, target, (unsigned long long)bytes,
                 (unsigned long long)start_ns, done_ns ? (long long)(done_ns - start_ns) : -1LL, status.c_str(),
                 delivered, lost, (unsigned long long)bytes_received, in_order ? "true" : "false", content_ok ? "true" : "false",
                 (unsigned long long)bytes_sent, (unsigned long long)packets_sent,
                 (unsigned long long)packets_retransmitted, measured_loss, (unsigned long long)epochs);
    for (size_t i = 0; i < time_in_class_ns.size(); ++i)
      std::fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)time_in_class_ns[i]);
    std::fprintf(f, "]}\n");
  }
};

}  // namespace netapprox::sim
