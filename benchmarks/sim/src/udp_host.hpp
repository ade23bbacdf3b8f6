// Plain UDP at line rate (scheme udp) and constant-rate background flows. A job's messages are cut into
// datagrams of at most 1400 payload bytes, each carrying a 16-byte header (job, message, fragment, count), and
// sent when produced through one pacer per host at the line rate; nothing is retransmitted. The receiver counts
// messages whose fragments all arrived. JCT = job start -> the later of its last datagram sent and its last
// datagram received; whether the MSR was met is reported, not guaranteed. Background flows send 'bg' datagrams
// at their rate marked with their class's DSCP (the engine's dscp_by_class), which may change over time.
#pragma once

#include "context.hpp"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/socket.h"

#include <deque>
#include <unordered_map>
#include <vector>

namespace netapprox::sim {

class UdpHost : public ns3::Application {
 public:
  static constexpr uint16_t kPort = 7482;
  static constexpr uint32_t kChunk = 1400;

  UdpHost(SimContext* ctx, uint32_t host, const uint8_t dscp_by_class[8]);
  void add_job(const JobDesc& job);
  void add_background(const BackgroundDesc& bg);
  // After the run: fills delivered/lost/JCT of the jobs this host received.
  void collect();

 private:
  struct Datagram {
    uint32_t job_idx, msg, frag, nfrags, bytes;
  };
  struct Incoming {
    std::unordered_map<uint32_t, uint32_t> frags;  // message -> fragments received
    uint32_t complete = 0;
    uint64_t last_ns = 0;
    uint64_t bytes = 0;
  };

  void StartApplication() override;
  void StopApplication() override;
  void produce(size_t idx);
  void send_next();
  void bg_tick(size_t idx);
  void on_recv(ns3::Ptr<ns3::Socket> s);

  SimContext* ctx_;
  uint32_t host_;
  uint8_t dscp_[8];
  ns3::Ptr<ns3::Socket> socket_;
  std::vector<JobDesc> jobs_;
  std::vector<size_t> produced_;
  std::vector<uint64_t> last_sent_;
  std::vector<size_t> remaining_;  // datagrams not yet sent per job
  std::deque<Datagram> queue_;     // produced, waiting for the pacer (bounded by the jobs' sizes)
  bool sending_ = false;
  std::vector<BackgroundDesc> bgs_;
  std::vector<ns3::Ptr<ns3::Socket>> bg_sockets_;
  std::unordered_map<uint32_t, Incoming> incoming_;  // by job id
  std::unordered_map<uint32_t, const JobDesc*> job_desc_;  // every job received here (set by main)
 public:
  std::unordered_map<uint32_t, const JobDesc*>& expected() { return job_desc_; }
};

}  // namespace netapprox::sim
