// ATP as an ns-3 application: one netapprox::atp::Engine per host, driven by an ns-3 UDP socket and ns-3 time.
// The adapter only moves bytes and time: datagrams in (on_datagram), datagrams out (poll_transmit, with the
// DSCP the engine chose per datagram), timers (next_timeout/on_timeout), the job API, and the engine's events
// turned into per-job results. It holds no protocol logic.
#pragma once

#include "context.hpp"
#include "core/engine.hpp"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/socket.h"

#include <deque>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

namespace netapprox::sim {

class AtpHost : public ns3::Application {
 public:
  static constexpr uint16_t kPort = 7480;

  AtpHost(SimContext* ctx, uint32_t host, const atp::EngineConfig& cfg, std::vector<AtpHost*>* all);
  void add_job(const JobDesc& job);  // before the simulation runs; this host is the job's sender
  atp::EngineStats engine_stats() const { return engine_->stats(); }

 private:
  struct SendingJob {
    const JobDesc* desc;
    atp::SessionId session;
    uint32_t next = 0;  // next message to produce
    bool blocked = false;
  };
  struct ReceivingJob {
    int64_t last_msg = -1;
  };

  void StartApplication() override;
  void StopApplication() override;
  void open_session_to(uint32_t receiver);
  void accept_session(atp::SessionId id, const uint8_t* key, uint32_t sender);
  void start_job(size_t idx);
  void produce(size_t idx);
  void submit_due(size_t idx);
  bool submit(SendingJob& j);
  void on_recv(ns3::Ptr<ns3::Socket> socket);
  void pump();
  void arm();
  void on_event(const atp::Event& ev);

  SimContext* ctx_;
  uint32_t host_;
  std::vector<AtpHost*>* all_;
  std::unique_ptr<atp::Engine> engine_;
  ns3::Ptr<ns3::Socket> socket_;
  int tos_ = -1;
  std::vector<uint8_t> buf_, msg_;
  std::vector<JobDesc> jobs_;
  std::vector<SendingJob> sending_;
  std::deque<size_t> blocked_;  // jobs whose next message met a full send buffer
  std::unordered_map<uint64_t, ReceivingJob> receiving_;  // by job id
  std::set<uint32_t> sessions_to_;
  ns3::EventId wake_;
  uint64_t wake_at_ = UINT64_MAX;
  bool in_pump_ = false;
};

}  // namespace netapprox::sim
