#include "common/session_auth.h"

#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(SessionAuth, OnlyTheTokenGivesTheProofAndItIsBoundToRoleAndNonces) {
  const std::string worker_nonce = NewNonce(), controller_nonce = NewNonce();
  EXPECT_EQ(worker_nonce.size(), 32u);
  EXPECT_NE(worker_nonce, controller_nonce);
  const std::string proof = TokenProof("s3cret", "controller", worker_nonce, controller_nonce);
  EXPECT_EQ(proof.size(), 64u);
  EXPECT_TRUE(ProofMatches(proof, TokenProof("s3cret", "controller", worker_nonce, controller_nonce)));
  EXPECT_FALSE(ProofMatches(proof, TokenProof("s3creT", "controller", worker_nonce, controller_nonce)));
  // A worker's proof cannot stand in for the controller's, nor one for another nonce.
  EXPECT_FALSE(ProofMatches(proof, TokenProof("s3cret", "worker", worker_nonce, controller_nonce)));
  EXPECT_FALSE(ProofMatches(proof, TokenProof("s3cret", "controller", NewNonce(), controller_nonce)));
  EXPECT_FALSE(ProofMatches(proof, proof.substr(1)));
  // No token on this side: no proof, and an empty proof never matches.
  EXPECT_EQ(TokenProof("", "worker", worker_nonce, controller_nonce), "");
  EXPECT_FALSE(ProofMatches("", ""));
}

}  // namespace
}  // namespace iofleet
