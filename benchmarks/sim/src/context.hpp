// State shared by the transports of one simulation run: host addresses, per-job results, the finish check.
#pragma once

#include "results.hpp"
#include "schedule.hpp"

#include "ns3/ipv4-address.h"

#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace netapprox::sim {

struct SimContext {
  std::vector<ns3::Ipv4Address> host_addr;           // host i at index i - 1
  std::unordered_map<uint32_t, uint32_t> host_of_addr;  // address -> 1-based host
  std::map<uint32_t, JobResult> results;             // by job id
  uint64_t seed = 1;
  bool verify = false;      // ATP: fill messages with a checked byte pattern
  FILE* trace = nullptr;    // epoch trace CSV
  std::set<uint32_t> traced;  // jobs with TRACE set
  double rate_bps = 40e9;
  uint64_t connect_lead_ns = 1'000'000;  // TCP connections / ATP sessions exist this long before a job starts
  size_t unfinished = 0;    // jobs not yet finished (both ends where the transport reports both)
  std::set<uint32_t> finished_jobs;
  uint64_t last_finish_ns = 0;

  // A transport calls this once per job when the job has nothing left to report.
  void finished(uint32_t job, uint64_t now_ns);
};

// The byte pattern of message `msg` of job `job` (ATP --verify); cheap: one byte value per message otherwise.
inline uint8_t pattern_byte(uint32_t job, uint32_t msg, size_t i, bool full) {
  const uint32_t base = job * 131u + msg * 31u;
  return static_cast<uint8_t>(full ? base + i * 7u : base);
}

}  // namespace netapprox::sim
