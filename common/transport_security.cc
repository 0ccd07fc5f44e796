#include "common/transport_security.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

absl::StatusOr<std::string> ReadWhole(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", what, " ", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

absl::StatusOr<TransportSecurity> LoadTransportSecurity(const std::string& token_file, const std::string& cert_file,
                                                        const std::string& key_file, const std::string& ca_file) {
  TransportSecurity security;
  if (!token_file.empty()) {
    auto token = ReadWhole(token_file, "--token-file");
    if (!token.ok()) return token.status();
    security.token = std::string(absl::StripAsciiWhitespace(*token));
    if (security.token.empty()) return absl::InvalidArgumentError(absl::StrCat("--token-file ", token_file, " is empty"));
  }
  const int tls_parts = !cert_file.empty() + !key_file.empty() + !ca_file.empty();
  if (tls_parts != 0 && tls_parts != 3) {
    return absl::InvalidArgumentError("mutual TLS needs all of --tls-cert, --tls-key and --tls-ca");
  }
  if (tls_parts == 3) {
    auto cert = ReadWhole(cert_file, "--tls-cert");
    auto key = ReadWhole(key_file, "--tls-key");
    auto ca = ReadWhole(ca_file, "--tls-ca");
    if (!cert.ok()) return cert.status();
    if (!key.ok()) return key.status();
    if (!ca.ok()) return ca.status();
    security.tls_cert = *cert;
    security.tls_key = *key;
    security.tls_ca = *ca;
  }
  return security;
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(const TransportSecurity& security) {
  if (!security.tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = security.tls_ca;
  options.pem_key_cert_pairs.push_back({security.tls_key, security.tls_cert});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const TransportSecurity& security) {
  if (!security.tls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = security.tls_ca;
  options.pem_private_key = security.tls_key;
  options.pem_cert_chain = security.tls_cert;
  return grpc::SslCredentials(options);
}

bool IsLoopbackAddress(const std::string& host_port) {
  std::string host = host_port.substr(0, host_port.rfind(':'));
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) host = host.substr(1, host.size() - 2);
  return absl::StartsWith(host, "127.") || host == "::1" || host == "localhost";
}

std::string MetadataValue(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, const char* key) {
  auto it = metadata.find(key);
  return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
}

bool TokensEqual(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    diff |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

}  // namespace iofleet
