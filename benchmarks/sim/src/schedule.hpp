// The job schedule the simulator replays, written by benchmarks/sim/sim.py from benchmarks/netlab/netlab/workload.py's
// generators (the one source of the FBKV/FBHD distributions). Text, one record per line group:
//
//   # comment
//   job ID START_NS SENDER RECEIVER MSR N KIND TRACE     KIND: approx (the run's scheme) | exact (DCTCP, all bytes)
//   <N message sizes in bytes>
//   <N production times in ns from the job's start>
//   bg ID SENDER RECEIVER RATE_BPS PKT_BYTES START_NS STOP_NS CLASS [AT_NS CLASS]...
//                                                         constant-rate UDP marked with priority CLASS's DSCP,
//                                                         moving to another class at AT_NS (Figs. 10-11)
// Hosts are 1-based. Every value is validated; a bad line is an error naming the line.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace netapprox::sim {

struct JobDesc {
  uint32_t id = 0;
  uint64_t start_ns = 0;
  uint32_t sender = 0, receiver = 0;
  double msr = 1;
  bool exact = false;  // non-approximate traffic: always DCTCP, all messages
  bool trace = false;
  std::vector<uint32_t> sizes;
  std::vector<uint64_t> offsets_ns;
};

struct BackgroundDesc {
  uint32_t id = 0;
  uint32_t sender = 0, receiver = 0;
  double rate_bps = 0;
  uint32_t packet_bytes = 1400;
  uint64_t start_ns = 0, stop_ns = 0;
  int cls = 0;
  std::vector<std::pair<uint64_t, int>> moves;  // (at, class)
};

struct Schedule {
  std::vector<JobDesc> jobs;
  std::vector<BackgroundDesc> background;
};

// Throws std::runtime_error("schedule FILE:LINE: ...") on malformed input.
Schedule read_schedule(const std::string& path, uint32_t hosts);

}  // namespace netapprox::sim
