// The TCP baselines over ns-3's own TCP (the simulation sets ns3::TcpDctcp as the socket type): one connection per
// job, set up connect_lead_ns before the job starts (not part of its JCT), messages written when produced,
// length-prefixed. The sender's first bytes tell the receiver the job and after how many messages to answer:
//   EarlySend (dctcp_es):  every message; the receiver answers once ceil(MSR N) arrived; the sender then stops
//                          writing and closes (what is already in its socket buffer still drains);
//   SampleSend (dctcp_ss): a uniform sample of ceil(MSR N) messages (seeded by the job id), each when produced;
//                          the receiver answers after the last one;
//   exact (dctcp_exact, and every "exact" job): every message; the receiver answers after the last.
// JCT = job start -> the answer reaches the sender.
// pFabric-style (pfabric_es, set_size_priority): EarlySend whose connection changes its DSCP, whenever it writes or
// its send buffer drains, to the remaining-size class of the bytes it still needs acknowledged for its answer
// (class k in 1..7 by the size bounds; ns-3's TCP marks each segment with the socket's current TOS), so the switches
// serve the connection closest to its answer first - pFabric's priority over the 8 queues, with DCTCP's rate control
// (per-queue ECN marks) instead of pFabric's minimal one.
#pragma once

#include "context.hpp"
#include "scheme.hpp"

#include "ns3/application.h"
#include "ns3/socket.h"

#include <deque>
#include <map>
#include <vector>

namespace netapprox::sim {

class TcpHost : public ns3::Application {
 public:
  static constexpr uint16_t kPort = 7481;

  TcpHost(SimContext* ctx, uint32_t host) : ctx_(ctx), host_(host) {}
  void add_job(const JobDesc& job, TcpVariant variant);
  // pfabric_es: DSCP per class (the engine's dscp_by_class), the bounds of classes 1..6 in bytes, and the sockets'
  // send buffer (to tell acknowledged bytes from held ones).
  void set_size_priority(const uint8_t dscp_by_class[8], const uint64_t bounds[6], uint32_t send_buffer);

 private:
  struct Sender {
    const JobDesc* desc = nullptr;
    TcpVariant variant = TcpVariant::kExact;
    std::vector<uint32_t> order;  // messages to send, in production order
    size_t produced = 0;          // entries of `order` produced so far
    size_t sent_msg = 0;          // entries fully handed to the socket
    uint32_t sent_bytes_of_current = 0;  // of header (8) + payload
    ns3::Ptr<ns3::Socket> socket;
    bool connected = false, stopped = false, done = false;
    std::vector<uint8_t> head;    // job header, not yet written
    uint64_t written = 0;         // bytes handed to the socket
    uint64_t answer_bytes = 0;    // bytes the receiver needs before it answers (header + first messages)
    int klass = -1;               // size_priority: the class whose DSCP the socket carries
  };
  struct Receiver {
    std::vector<uint8_t> hdr;     // partial header bytes
    bool have_job = false;
    uint32_t job = 0, expect = 0, answer_at = 0, complete = 0;
    uint32_t payload_left = 0;
    uint64_t bytes = 0;  // payload bytes received
    bool in_payload = false, answered = false;
  };

  void StartApplication() override;
  void StopApplication() override;
  void connect(size_t idx);
  void start(size_t idx);
  void produce(size_t idx);
  void pump(size_t idx);
  void update_priority(Sender& s);
  static void on_connected(TcpHost* h, size_t idx, ns3::Ptr<ns3::Socket>);
  static void on_send_space(TcpHost* h, size_t idx, ns3::Ptr<ns3::Socket>, uint32_t);
  void on_sender_recv(ns3::Ptr<ns3::Socket> s);
  void on_accept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
  void on_receiver_recv(ns3::Ptr<ns3::Socket> s);

  SimContext* ctx_;
  uint32_t host_;
  std::vector<JobDesc> jobs_;
  std::vector<TcpVariant> variants_;
  std::vector<Sender> senders_;
  std::map<ns3::Socket*, size_t> sender_of_socket_;
  std::map<ns3::Socket*, Receiver> receivers_;
  ns3::Ptr<ns3::Socket> listener_;
  bool size_priority_ = false;
  uint8_t dscp_[8] = {};
  uint64_t bounds_[6] = {};
  uint32_t tcp_buffer_ = 0;
};

}  // namespace netapprox::sim
