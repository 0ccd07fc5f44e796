#include "common/session_auth.h"

#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <random>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/transport_security.h"

namespace iofleet {

std::string NewNonce() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    std::random_device device;  // OpenSSL's generator failing is not expected; still random
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(device());
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

std::string TokenProof(absl::string_view token, absl::string_view role, absl::string_view peer_nonce, absl::string_view own_nonce) {
  if (token.empty()) return "";
  // Lengths first, so no two (role, nonce, nonce) triples give the same message.
  const std::string message = absl::StrCat(role.size(), ":", role, peer_nonce.size(), ":", peer_nonce, own_nonce.size(), ":", own_nonce);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()), reinterpret_cast<const unsigned char*>(message.data()),
           message.size(), digest, &length) == nullptr) {
    return "";
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), length));
}

bool ProofMatches(absl::string_view expected, absl::string_view given) {
  return !expected.empty() && TokensEqual(std::string(expected), std::string(given));
}

}  // namespace iofleet
