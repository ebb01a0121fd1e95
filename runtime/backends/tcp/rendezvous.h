// The rendezvous client: the ranks' side of the key-value server (RendezvousServer,
// hvd/tcp.h). Protocol and server in rendezvous.cc.
#pragma once

#include <memory>
#include <string>

#include "backends/tcp/socket.h"
#include "hvd/status.h"

namespace hvd::tcp {

class RendezvousClient {
 public:
  /// Connects to addr:port and presents `key` before `deadline`; a server that answers
  /// with another key is a clear kPrecondition error.
  static Status connect(const std::string& addr, int port, const std::string& key, double deadline,
                        std::unique_ptr<RendezvousClient>* out);
  /// Stores `value` under `name` (replacing what was there).
  Status set(const std::string& name, const std::string& value);
  /// Reads `name`, polling until it is set or `deadline` passes (kTimeout).
  Status get(const std::string& name, double deadline, std::string* value);
  /// Every later request must be answered by `deadline` (connect's deadline until then).
  void set_deadline(double deadline) { deadline_ = deadline; }
  /// "addr:port" for messages.
  const std::string& where() const { return where_; }

 private:
  // One request line (+ body) and its answer: "OK", "VAL n" + n bytes, "NONE", "ERR why".
  Status call(const std::string& line, const std::string& body, std::string* answer, std::string* value);
  Fd fd_;
  std::string where_;
  double deadline_ = 0;  // of the connection's requests
};

}  // namespace hvd::tcp
