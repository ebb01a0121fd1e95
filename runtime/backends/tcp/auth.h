// Challenge-response authentication of the TCP backend's connections (the rendezvous and
// every peer connection). Both ends know the job's key; it never crosses the wire. After
// the TCP connect:
//
//   acceptor  -> "HVDAUTH1 <proto> <ns>\n"            ns: 32 fresh random bytes, hex
//   connector -> "AUTH <nc> <mc> [claim]\n"           nc: its own fresh nonce; claim: e.g. "rank
//   size" acceptor  -> "OK <ms>\n" | "ERR <why>\n"
//
//   mc = HMAC-SHA256(key, "hvd-auth-1 connector <proto> <ns> <nc> <claim>")
//   ms = HMAC-SHA256(key, "hvd-auth-1 acceptor <proto> <ns> <nc> <claim>")
//
// The acceptor's fresh ns makes a recorded AUTH line worthless on another connection (a
// replay is refused); the connector's fresh nc does the same for a recorded OK, so each side
// proves the key to the other. The role words keep one side's proof from being reflected
// as the other's, and <proto> one protocol's proof from being used in the other. The claim
// is bound into both proofs, so it cannot be altered on the way. Lines are at most
// kMaxAuthLine bytes; nothing a connection sends before it passed is read as data.
#pragma once

#include <string>

#include "backends/tcp/socket.h"
#include "hvd/status.h"

namespace hvd::tcp {

/// The longest handshake line either side accepts.
inline constexpr size_t kMaxAuthLine = 512;
/// How long an acceptor waits for a connection's answer before dropping it.
inline constexpr double kAuthTimeoutS = 10;

/// 32 bytes from OpenSSL's RAND_bytes, as 64 hex digits.
std::string fresh_nonce();
/// HMAC-SHA256(key, text) as 64 hex digits.
std::string hmac_sha256_hex(const std::string& key, const std::string& text);
/// Constant-time equality of two proofs.
bool same_proof(const std::string& a, const std::string& b);

/// The acceptor's side of one handshake, driven by its caller's poll loop (AuthGate).
struct AuthChallenge {
  std::string proto, nonce;
  /// The line to send first.
  std::string line() const { return "HVDAUTH1 " + proto + " " + nonce + "\n"; }
  /// Checks the connector's AUTH line: true and *claim, *answer = "OK <ms>\n" when it
  /// proves the key; false and *why otherwise.
  bool check(const std::string& key, const std::string& auth_line, std::string* claim,
             std::string* answer, std::string* why) const;
};

/// The connector's side: reads the challenge on `fd`, answers with `claim` (no newline),
/// checks the acceptor's proof. kPrecondition with the acceptor's reason when it refuses
/// ("wrong key" when the keys differ), or when the acceptor cannot prove the key.
Status authenticate_to(int fd, const std::string& key, const std::string& proto,
                       const std::string& claim, double deadline);

}  // namespace hvd::tcp
