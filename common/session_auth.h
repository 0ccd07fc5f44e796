// Proof of a shared token without sending it, for workers that dial their controller
// (iofleet-worker --controller). Whoever dials cannot know who answers; a controller tells a
// worker what to write, so the worker must know it is its own before obeying, and the
// controller must know the worker is one of its own before counting its results. Each side
// sends a fresh random nonce and proves it holds the token with
// HMAC-SHA256(token, role || the other side's nonce || its own nonce): the token never crosses
// the network (not even to an impostor), and a proof seen once cannot be replayed against a new
// nonce. Mutual TLS, when configured, authenticates both ends as well (gRPC's SSL credentials).
#ifndef IOFLEET_COMMON_SESSION_AUTH_H_
#define IOFLEET_COMMON_SESSION_AUTH_H_

#include <string>
#include "absl/strings/string_view.h"

namespace iofleet {

// Where the dialling worker's nonce travels (request metadata) and where the controller's nonce
// and proof come back (its initial metadata). The worker's proof is in its first message.
inline constexpr char kDialNonceKey[] = "x-iofleet-nonce";
inline constexpr char kDialProofKey[] = "x-iofleet-proof";

// 128 random bits, hex.
std::string NewNonce();

// The proof `role` ("controller" or "worker") gives: HMAC-SHA256(token, role, peer_nonce,
// own_nonce), hex. Empty token: empty proof (no token configured on this side).
std::string TokenProof(absl::string_view token, absl::string_view role, absl::string_view peer_nonce, absl::string_view own_nonce);

// Whether `given` is the proof expected, compared in constant time.
bool ProofMatches(absl::string_view expected, absl::string_view given);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_SESSION_AUTH_H_
