#include "backends/tcp/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace hvd::tcp {

namespace {

std::string hex(const unsigned char* b, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) s += {digits[b[i] >> 4], digits[b[i] & 15]};
  return s;
}

// A hex nonce or proof of 64 digits: what both sides send.
bool is_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string proof(const std::string& key, const char* role, const std::string& proto,
                  const std::string& ns, const std::string& nc, const std::string& claim) {
  return hmac_sha256_hex(
      key, std::string("hvd-auth-1 ") + role + " " + proto + " " + ns + " " + nc + " " + claim);
}

}  // namespace

std::string fresh_nonce() {
  unsigned char b[32];
  if (RAND_bytes(b, sizeof b) != 1) {  // no entropy: refuse rather than send a guessable nonce
    std::fprintf(stderr, "hvd: OpenSSL RAND_bytes failed: no random nonce for the TCP handshake\n");
    std::abort();
  }
  return hex(b, sizeof b);
}

std::string hmac_sha256_hex(const std::string& key, const std::string& text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), md, &n);
  return hex(md, n);
}

bool same_proof(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool AuthChallenge::check(const std::string& key, const std::string& auth_line, std::string* claim,
                          std::string* answer, std::string* why) const {
  std::istringstream in(auth_line);
  std::string verb, nc, mc;
  in >> verb >> nc >> mc;
  if (verb != "AUTH" || !is_hex64(nc) || !is_hex64(mc)) {
    *why = "not an hvd handshake";
    return false;
  }
  std::getline(in >> std::ws, *claim);
  if (nc == nonce) {  // our own challenge sent back: a reflection
    *why = "not an hvd handshake";
    return false;
  }
  if (!same_proof(mc, proof(key, "connector", proto, nonce, nc, *claim))) {
    *why = "wrong key";
    return false;
  }
  *answer = "OK " + proof(key, "acceptor", proto, nonce, nc, *claim) + "\n";
  return true;
}

Status authenticate_to(int fd, const std::string& key, const std::string& proto,
                       const std::string& claim, double deadline) {
  std::string line;
  HVD_RETURN_IF_ERROR(read_line(fd, &line, deadline, kMaxAuthLine));
  std::istringstream in(line);
  std::string magic, their_proto, ns;
  in >> magic >> their_proto >> ns;
  if (magic != "HVDAUTH1" || their_proto != proto || !is_hex64(ns))
    return Status::Precondition("it is not an hvd " + proto + " endpoint (challenge '" +
                                line.substr(0, 60) + "')");
  const std::string nc = fresh_nonce();
  const std::string mine =
      "AUTH " + nc + " " + proof(key, "connector", proto, ns, nc, claim) + " " + claim + "\n";
  HVD_RETURN_IF_ERROR(write_all(fd, mine.data(), mine.size()));
  HVD_RETURN_IF_ERROR(read_line(fd, &line, deadline, kMaxAuthLine));
  if (line.rfind("ERR ", 0) == 0) return Status::Precondition(line.substr(4));
  if (line.rfind("OK ", 0) != 0 ||
      !same_proof(line.substr(3), proof(key, "acceptor", proto, ns, nc, claim)))
    return Status::Precondition("it did not prove the job's key (answer '" + line.substr(0, 60) +
                                "')");
  return Status::OK();
}

}  // namespace hvd::tcp
