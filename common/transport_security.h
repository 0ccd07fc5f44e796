// How controller and workers trust each other: a shared token sent as gRPC metadata and
// compared in constant time, and/or mutual TLS with gRPC's SSL credentials. A worker that
// listens beyond loopback must have one of them.
#ifndef IOFLEET_COMMON_TRANSPORT_SECURITY_H_
#define IOFLEET_COMMON_TRANSPORT_SECURITY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace iofleet {

struct TransportSecurity {
  std::string token;     // empty: no token
  std::string tls_cert;  // PEM contents (not paths) once loaded
  std::string tls_key;
  std::string tls_ca;
  bool tls() const { return !tls_cert.empty(); }
};

// The metadata key the token travels under.
inline constexpr char kTokenMetadataKey[] = "x-iofleet-token";

// Reads --token-file / --tls-cert / --tls-key / --tls-ca (paths; empty = unused). TLS needs
// all three (mutual TLS); the token file must not be empty.
absl::StatusOr<TransportSecurity> LoadTransportSecurity(const std::string& token_file, const std::string& cert_file,
                                                        const std::string& key_file, const std::string& ca_file);

std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(const TransportSecurity& security);
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const TransportSecurity& security);

// True for 127.0.0.0/8, ::1 and localhost listen addresses ("127.0.0.1:7420").
bool IsLoopbackAddress(const std::string& host_port);

// Constant-time comparison (no early exit on the first differing byte).
bool TokensEqual(const std::string& a, const std::string& b);

// The value of gRPC metadata `key` (client, or a server's initial metadata); empty if absent.
std::string MetadataValue(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, const char* key);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_TRANSPORT_SECURITY_H_
